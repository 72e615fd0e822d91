#!/usr/bin/env python3
"""glTF load and export in CPU time, this tree beside an older one, for a busy shared machine.

    python scripts/bench_gltf_cpu.py --before DIR [--rounds 7] [--runs 7] [FILE ...]

Each round runs each tree in a fresh process (alternating), which loads each file once to warm
up, then ``--runs`` times, then exports the scene (``glb_bytes``) once to warm up and ``--runs``
times; a round's figure is the least CPU time (``time.process_time``) of its runs, which other
processes on the machine hardly change, where wall-clock time doubles when they take the cores.
Prints the minimum and median over the rounds per tree, and after/before. Default file:
tests/test_gltf_scale.py's 924-node RecursiveSkeletons-like model as a .glb (as
scripts/bench_load.py packs it). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ROUND = """
import json, logging, sys, time
logging.disable(logging.WARNING)
from viewer.gltf import load_gltf
from viewer.gltf.writer import glb_bytes
spec, result = json.loads(sys.argv[1]), {}
def best(action):
    action()
    times = []
    for _ in range(spec["runs"]):
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return 1000 * min(times)
for path in spec["files"]:
    scene = load_gltf(path)
    result[path] = (best(lambda: load_gltf(path)), best(lambda: glb_bytes(scene)))
print(json.dumps(result))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--before", type=Path, required=True, help="the older tree")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        files = args.files
        if not files:
            sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests")]
            from bench_load import as_glb
            from test_gltf_scale import recursive_skeletons

            files = [as_glb(recursive_skeletons(Path(temporary)), Path(temporary) / "recursive_skeletons.glb")]
        spec = json.dumps({"files": [str(f.resolve()) for f in files], "runs": args.runs})
        trees = {"before": args.before.resolve(), "after": ROOT}
        figures = {label: [] for label in trees}
        for _ in range(args.rounds):
            for label, tree in trees.items():
                out = subprocess.run([sys.executable, "-c", ROUND, spec], capture_output=True, text=True, check=True,
                                     timeout=600, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
                figures[label].append(json.loads(out.stdout))
    print(f"CPU time (ms), least of {args.runs} runs per round, {args.rounds} alternating rounds, each tree in a "
          f"fresh process; load average {os.getloadavg()[0]:.1f}")
    for path in json.loads(spec)["files"]:
        for k, what in enumerate(("load", "export")):
            values = {label: [round_[path][k] for round_ in figures[label]] for label in trees}
            line = "  ".join(f"{label} min {min(v):6.1f} median {statistics.median(v):6.1f}" for label, v in values.items())
            ratio = min(values["after"]) / min(values["before"]), statistics.median(values["after"]) / statistics.median(
                values["before"])
            print(f"{Path(path).name} {what:6}  {line}  after/before {ratio[0]:.2f} (min), {ratio[1]:.2f} (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
