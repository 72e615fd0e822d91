"""Benchmark of `boneviewer check` and `boneviewer batch` against the issue's targets; prints
the figures (not a test).

    .venv/bin/python scripts/bench_batch.py [--copies 10] [--size 256x256] [--gif-seconds 4]

The library: one model from each folder of the shared samples (the .glb where there is one),
copied --copies times (8 x 10 = 80 models). Runs `boneviewer batch` with 1 and 2 workers, with
--ray on a local Ray runtime, and again with nothing changed; then times `check` of CesiumMan
in this process (the median of 20, after one warm-up).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = Path("/work/shared/gltf-samples")
if not SAMPLES.is_dir():
    SAMPLES = ROOT / "tests" / "data" / "gltf-samples"


def library(folder: Path, copies: int) -> int:
    count = 0
    for sample in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        models = sorted(sample.glob("*.glb")) or sorted(sample.glob("*.gltf"))
        if not models:
            continue
        for copy in range(copies):
            target = folder / f"copy{copy:02d}" / sample.name
            shutil.copytree(sample, target)  # the model with its .bin and images
            for other in target.iterdir():
                if other.suffix.lower() in (".gltf", ".glb") and other.name != models[0].name:
                    other.unlink()
            count += 1
    return count


def batch(lib: Path, out: Path, *options: str) -> float:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "viewer.cli", "batch", str(lib), "--out", str(out), *options],
                            capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    if result.returncode not in (0, 1):
        sys.exit(f"batch failed: {result.stderr}")
    print(f"    {result.stdout.strip().splitlines()[0]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--size", default="256x256")
    parser.add_argument("--gif-seconds", default="4")
    args = parser.parse_args()
    common = ["--size", args.size, "--gif-seconds", args.gif_seconds]
    with tempfile.TemporaryDirectory() as temp:
        temp = Path(temp)
        count = library(temp / "lib", args.copies)
        print(f"library: {count} models ({args.copies} copies of the samples in {SAMPLES}), {args.size}, "
              f"GIFs of at most {args.gif_seconds} s")
        one = batch(temp / "lib", temp / "one", "--workers", "1", *common)
        print(f"  1 worker:  {one:6.1f} s")
        two = batch(temp / "lib", temp / "two", "--workers", "2", *common)
        print(f"  2 workers: {two:6.1f} s   speed-up {one / two:.2f}x (target: at least 1.7x)")
        again = batch(temp / "lib", temp / "two", "--workers", "2", *common)
        print(f"  second run, nothing changed: {again:.2f} s (target: under 2 s)")
        ray = batch(temp / "lib", temp / "ray", "--ray", *common)
        print(f"  --ray (local runtime, its start included): {ray:6.1f} s   {ray / two:.2f}x the 2-worker pool "
              f"(target: within 1.25x)")
        same = all((temp / "ray" / p.relative_to(temp / "two")).read_bytes() == p.read_bytes()
                   for p in (temp / "two").rglob("*") if p.is_file())
        print(f"  --ray wrote the same bytes as the pool: {same}")

    sys.path.insert(0, str(ROOT))
    from viewer.checks import check_file

    cesium = SAMPLES / "CesiumMan" / "CesiumMan.glb"
    check_file(cesium)
    times = []
    for _ in range(20):
        start = time.perf_counter()
        check_file(cesium)
        times.append(time.perf_counter() - start)
    print(f"  check of {cesium.name} ({check_file(cesium).vertices} vertices): median {statistics.median(times) * 1000:.1f} ms, "
          f"best {min(times) * 1000:.1f} ms (target: under 50 ms)")


if __name__ == "__main__":
    main()
