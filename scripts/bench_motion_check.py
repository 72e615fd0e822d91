"""The motion checks' cost against loading (issue 44's target: checking a 4,000-frame capture's
motion takes at most 2x the time to load it; a benchmark, not a test: it prints the figures).

    python scripts/bench_motion_check.py [--rounds 5]

The capture is scripts/bench_bvh.py's (4,000 frames, 31 joints, every joint turning). Load and
check are timed in interleaved rounds; the figures are the least time of each (a busy shared
machine only adds to them), and the median of the rounds' ratios is printed too.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_bvh import body, write_bvh  # noqa: E402
from viewer.bvh import load_bvh  # noqa: E402
from viewer.checks.motion import motion_findings  # noqa: E402


def best_of(function, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def measure(rounds: int, frames: int = 4000) -> dict:
    """{"load", "check", "ratio", "median_ratio", "frames", "findings"}: the least time of each
    over ``rounds`` interleaved rounds (what the work costs when the machine lets it run; a busy
    shared machine only adds to it), their ratio, and the median of the rounds' ratios."""
    with tempfile.TemporaryDirectory() as folder:
        capture = Path(folder) / "capture.bvh"
        write_bvh(capture, body(fingers=False), frames)
        scene = load_bvh(capture)
        found, _ = motion_findings(scene)  # imports and first-call costs out of the figure
        loads, checks = [], []
        for _ in range(rounds):
            loads.append(best_of(lambda: load_bvh(capture)))
            checks.append(best_of(lambda: motion_findings(scene)))
    return {"load": min(loads), "check": min(checks), "frames": frames, "ratio": min(checks) / min(loads),
            "median_ratio": statistics.median(c / l for c, l in zip(checks, loads)), "findings": len(found)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    figures = measure(args.rounds)
    print(f"a {figures['frames']}-frame, 31-joint capture, the least of {args.rounds} interleaved rounds (3 runs each):")
    print(f"  load (viewer.load_bvh)       {figures['load'] * 1000:8.1f} ms")
    print(f"  motion checks                {figures['check'] * 1000:8.1f} ms   ({figures['findings']} findings)")
    print(f"  check / load                 {figures['ratio']:8.2f} x    (target at most 2x; the median of the "
          f"rounds' ratios: {figures['median_ratio']:.2f} x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
