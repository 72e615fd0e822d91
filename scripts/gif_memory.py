"""Peak memory of `boneviewer render --turntable N --gif` at 800x600, for 20 and 200 frames.

Each run is a fresh process (python -m viewer.cli); its peak resident set size is read from
getrusage after it exits. Streaming frames to the encoder keeps the peak flat in the number
of frames. Prints one line per run:

    python scripts/gif_memory.py [FRAMES ...]
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = """
import resource, sys
from viewer.cli import main
code = main(sys.argv[1:])
print("peak_kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


def peak_mb(frames: int, folder: Path) -> tuple[float, float, int]:
    out = folder / f"turntable-{frames}.gif"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DISPLAY", None)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", RUN, "render", "tests/data/gltf-samples/Fox/Fox.glb",
                             "--turntable", str(frames), "--gif", str(out), "--size", "800x600"],
                            cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(result.stderr)
    kb = int(next(line.split()[1] for line in result.stderr.splitlines() if line.startswith("peak_kb")))
    return kb / 1024.0, elapsed, out.stat().st_size


def main() -> None:
    counts = [int(v) for v in sys.argv[1:]] or [20, 200]
    print(f"boneviewer render Fox.glb --turntable N --gif, 800x600; peak RSS of the process "
          f"(ru_maxrss), Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as folder:
        for frames in counts:
            mb, seconds, size = peak_mb(frames, Path(folder))
            print(f"{frames:4d} frames: peak {mb:6.1f} MB, {seconds:5.1f} s, GIF {size / 2**20:.1f} MB")


if __name__ == "__main__":
    main()
