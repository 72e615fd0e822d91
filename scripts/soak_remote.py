"""Soak of the remote connection: a `boneviewer serve` takes 100,000 streamed poses and 1,000
renders; its memory (RSS) after a warm-up must grow by under 5 MB.

    .venv/bin/python scripts/soak_remote.py [--poses N] [--renders N] [--size WxH]

(The test suite runs a short one: tests/test_remote.py::test_soak_...)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ROBOT = ROOT / "tests" / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
TOKEN = "soak-remote"
LIMIT_MB = 5.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def main() -> int:
    from viewer.remote import connect

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROBOT)
    parser.add_argument("--poses", type=int, default=100_000)
    parser.add_argument("--renders", type=int, default=1_000)
    parser.add_argument("--size", default="256x256")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.split("x"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DISPLAY", None)
    server = subprocess.Popen([sys.executable, "-m", "viewer.cli", "serve", str(args.model), "--listen", "0",
                               "--token", TOKEN], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    address = server.stdout.readline().split()[2]
    try:
        with connect(address, token=TOKEN) as client:
            names = client.bones()
            poses = np.random.default_rng(22).normal(size=(256, len(names), 4)).astype(np.float32)
            every = max(1, args.poses // max(args.renders, 1))

            def soak(count, renders):
                done = 0
                for k in range(count):
                    client.set_pose(rotations=poses[k % len(poses)], wait=False)
                    if k % every == 0 and done < renders:
                        client.render(size)
                        done += 1
                while done < renders:
                    client.render(size)
                    done += 1
                client.bones()

            soak(5_000, 50)  # warm-up: caches, the GL objects, the allocator's arenas
            before = rss_mb(server.pid)
            started = time.perf_counter()
            soak(args.poses, args.renders)
            elapsed = time.perf_counter() - started
            after = rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait()
    growth = after - before
    verdict = "PASS" if growth < LIMIT_MB else "FAIL"
    print(f"{args.poses:,} streamed poses ({len(names)} bones) and {args.renders:,} renders of {args.size} in "
          f"{elapsed:.1f} s: server RSS {before:.1f} MB -> {after:.1f} MB ({growth:+.2f} MB; limit {LIMIT_MB:g} MB) "
          f"{verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
