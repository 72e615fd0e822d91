"""Side by side in one run: the numpy kernel, the compiled kernel and Babylon.js (live, in Node),
for the skeleton update of ``boneviewer bench`` and one animation frame of Fox and CesiumMan.

    python scripts/bench_compare.py [--rounds 5] [--before DIR]

Rounds are interleaved (numpy, C, Babylon, numpy, C, Babylon, ...) and each figure is the median
of the rounds' medians, so a noisy shared machine weighs on all three alike. Babylon runs only
when ``node`` and tests/babylon/node_modules are there; the animation rows only when the glTF
samples of tests/data are (a checkout). With ``--before DIR`` (a copy of an older tree, e.g.
``git archive <commit> | tar -x -C DIR``) the process start to first PNG of both trees is
timed too, interleaved. A benchmark, not a test: it prints what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viewer.bench import (CROWD, REPETITIONS as REPS, SIZES, _median_us, animation_rows, crowd_frame,  # noqa: E402
                          skeleton_frame)
from viewer.model import native  # noqa: E402

CROWD_REPS = 40
BABYLON = ROOT / "tests" / "babylon" / "node_modules" / "@babylonjs" / "core"
SAMPLES = ROOT / "tests" / "data" / "gltf-samples"
MODELS = [SAMPLES / "Fox" / "Fox.glb", SAMPLES / "CesiumMan" / "CesiumMan.glb"]


def ours_round(which: str) -> dict:
    """One round of our skeleton rows with the given kernel (built fresh under it)."""
    saved = native.ckernel
    native.ckernel = saved if which == "C" else None
    try:
        result = {}
        for n in SIZES:
            result[str(n)] = _median_us(skeleton_frame(n)[0], REPS[n], warmup=20)
        result["crowd"] = _median_us(crowd_frame()[0], CROWD_REPS, warmup=3)
        for label, us, _, _ in animation_rows([m for m in MODELS if m.exists()], quick=False):
            result[label] = us
        return result
    finally:
        native.ckernel = saved


def babylon_round() -> dict | None:
    if shutil.which("node") is None or not BABYLON.exists():
        return None
    spec = {"sizes": list(SIZES), "reps": {str(n): r for n, r in REPS.items()}, "crowd": list(CROWD),
            "crowd_reps": CROWD_REPS, "rounds": 1}
    out = subprocess.run(["node", str(ROOT / "scripts" / "bench_babylon.mjs"), str(BABYLON), json.dumps(spec)],
                         capture_output=True, text=True, check=True, timeout=600)
    return {key: values[0] for key, values in json.loads(out.stdout).items()}


def first_png(tree: Path, env_extra: dict, folder: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), **env_extra}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "viewer.cli", "render", "--out", str(folder / "x.png")], check=True,
                   stdout=subprocess.DEVNULL, cwd=folder, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="an older tree to time the first PNG against")
    args = parser.parse_args()
    if native.ckernel is None:
        print(f"the compiled kernel is not available: {native.describe()}")
        return 1
    rounds = {"numpy": [], "C": [], "Babylon": []}
    for _ in range(args.rounds):
        rounds["numpy"].append(ours_round("numpy"))
        rounds["C"].append(ours_round("C"))
        babylon = babylon_round()
        if babylon is not None:
            rounds["Babylon"].append(babylon)
    median = {which: {key: float(np.median([r[key] for r in results])) for key in results[0]}
              for which, results in rounds.items() if results}
    print(f"Side by side, {args.rounds} interleaved rounds, medians (us per frame); numpy {np.__version__}, "
          f"Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")
    header = ["case", "numpy kernel", "C kernel", "numpy/C"]
    if "Babylon" in median:
        header += ["Babylon.js", "C/Babylon", "numpy/Babylon"]
    lines = [header]
    for key in median["C"]:
        label = f"{int(key):,} bones" if key.isdigit() else ("crowd 100 x 100" if key == "crowd" else key)
        a, b = median["numpy"][key], median["C"][key]
        row = [label, f"{a:.1f}", f"{b:.1f}", f"{a / b:.1f}x"]
        if "Babylon" in median:
            c = median["Babylon"].get(key)
            row += ["-", "-", "-"] if c is None else [f"{c:.1f}", f"{b / c:.2f}x", f"{a / c:.2f}x"]
        lines.append(row)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for k, line in enumerate(lines):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
        if k == 0:
            print("  ".join("-" * w for w in widths))
    if args.before:
        times = {"before": [], "after (C kernel)": [], "after (BONEVIEWER_KERNEL=numpy)": []}
        with tempfile.TemporaryDirectory() as folder:
            for _ in range(7):
                times["before"].append(first_png(args.before, {}, Path(folder)))
                times["after (C kernel)"].append(first_png(ROOT, {}, Path(folder)))
                times["after (BONEVIEWER_KERNEL=numpy)"].append(first_png(ROOT, {"BONEVIEWER_KERNEL": "numpy"},
                                                                         Path(folder)))
        print()
        print("process start to first PNG (boneviewer render --out x.png), 7 interleaved runs, median:")
        for label, values in times.items():
            print(f"  {label:32s} {np.median(values):.3f} s  (min {min(values):.3f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
