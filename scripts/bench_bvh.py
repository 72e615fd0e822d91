"""BVH and retargeting figures (issue 21's targets; a benchmark, not a test: it prints them).

    python scripts/bench_bvh.py [--rounds 5]

- load: a generated 4,000-frame, 31-joint BVH through ``viewer.load_bvh`` (target: under 0.1 s),
  and three.js's ``BVHLoader.parse`` on the same file under node in the same run, when ``node``
  and tests/threejs/node_modules are there (``npm install`` in tests/threejs), in interleaved
  rounds, with their ratio (issue 30's target: at most 0.33x);
- retarget: that clip onto a generated 65-bone rig (Mixamo's: fingers included), 4,000 frames
  (target: under 0.3 s);
- playback: one frame (clip.apply + skeleton.prepare) of the retargeted clip against one of the
  rig's own loaded clip (target: no more).
Each figure is the median of ``--rounds`` runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viewer.bvh import load_bvh  # noqa: E402
from viewer.model.retarget import Retargeting  # noqa: E402

THREE = ROOT / "tests" / "threejs"


def body(fingers: bool) -> list[tuple[str, str | None, tuple[float, float, float]]]:
    """(joint, parent, offset): CMU's 31-joint layout without fingers, Mixamo's 65 with them."""
    joints = [("Hips", None, (0, 95, 0)), ("Spine", "Hips", (0, 10, 0)), ("Spine1", "Spine", (0, 12, 0)),
              ("Spine2", "Spine1", (0, 12, 0)), ("Neck", "Spine2", (0, 14, 0)), ("Head", "Neck", (0, 9, 0)),
              ("HeadTop_End", "Head", (0, 18, 0))]
    for side, s in (("Left", 1), ("Right", -1)):
        joints += [(f"{side}Shoulder", "Spine2", (6 * s, 10, 0)), (f"{side}Arm", f"{side}Shoulder", (12 * s, 0, 0)),
                   (f"{side}ForeArm", f"{side}Arm", (27 * s, 0, 0)), (f"{side}Hand", f"{side}ForeArm", (25 * s, 0, 0))]
        if fingers:
            for k, finger in enumerate(("Thumb", "Index", "Middle", "Ring", "Pinky")):
                parent = f"{side}Hand"
                for n in range(1, 5):
                    name = f"{side}Hand{finger}{n}"
                    joints.append((name, parent, ((4 if n == 1 else 3) * s, 0, 2.0 * (k - 2) if n == 1 else 0)))
                    parent = name
        else:
            joints += [(f"{side}HandThumb", f"{side}Hand", (3 * s, 0, 3)), (f"{side}HandEnd", f"{side}Hand", (8 * s, 0, 0))]
        joints += [(f"{side}UpLeg", "Hips", (9 * s, -5, 0)), (f"{side}Leg", f"{side}UpLeg", (0, -42, 0)),
                   (f"{side}Foot", f"{side}Leg", (0, -42, 0)), (f"{side}ToeBase", f"{side}Foot", (0, -5, 12)),
                   (f"{side}Toe_End", f"{side}ToeBase", (0, 0, 5))]
    if not fingers:
        joints += [("LowerBack", "Hips", (0, 0, -3)), ("HeadEnd", "Head", (0, 0, 8))]
    return joints


def write_bvh(path: Path, joints, frames: int, seed: int = 0, end_sites: bool = True) -> int:
    """A BVH with every joint rotating smoothly (6 channels on the root, 3 elsewhere)."""
    children: dict = {}
    for name, parent, _ in joints:
        children.setdefault(parent, []).append(name)
    offsets = {name: offset for name, _, offset in joints}
    lines = ["HIERARCHY"]

    def emit(name, depth):
        pad = "\t" * depth
        keyword = "ROOT" if depth == 0 else "JOINT"
        lines.append(f"{pad}{keyword} {name}")
        lines.append(f"{pad}{{")
        lines.append(f"{pad}\tOFFSET {' '.join(f'{v:g}' for v in offsets[name])}")
        channels = "6 Xposition Yposition Zposition Zrotation Xrotation Yrotation" if depth == 0 \
            else "3 Zrotation Xrotation Yrotation"
        lines.append(f"{pad}\tCHANNELS {channels}")
        for child in children.get(name, []):
            emit(child, depth + 1)
        if name not in children and end_sites:
            lines.extend([f"{pad}\tEnd Site", f"{pad}\t{{", f"{pad}\t\tOFFSET 0 2 0", f"{pad}\t}}"])
        lines.append(f"{pad}}}")

    emit(joints[0][0], 0)
    count = 6 + 3 * (len(joints) - 1)
    rng = np.random.default_rng(seed)
    t = np.arange(frames)[:, None] / 120.0
    values = rng.uniform(5, 30, count) * np.sin(2 * np.pi * rng.uniform(0.2, 1.0, count) * t + rng.uniform(0, 6, count))
    values[:, :3] = [0, 95, 0] + values[:, :3] * 0.1
    lines += ["MOTION", f"Frames: {frames}", "Frame Time: 0.008333"]
    lines += [" ".join(f"{v:.4f}" for v in row) for row in values]
    path.write_text("\n".join(lines) + "\n")
    return len(joints)


def median_time(function, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def three_parse(path: Path, rounds: int) -> float | None:
    node = shutil.which("node")
    if node is None or not (THREE / "node_modules" / "three").is_dir():
        return None
    result = subprocess.run([node, str(THREE / "bench_bvh.mjs"), str(path), str(rounds)], capture_output=True,
                            text=True, cwd=THREE, timeout=600)
    if result.returncode != 0:
        print(f"three.js run failed: {result.stderr.strip()[:200]}")
        return None
    return json.loads(result.stdout)["median_s"]


def playback_cost(scene, clip, frames: int = 200) -> float:
    """Seconds per frame: apply the clip at successive times and bring the skeleton up to date."""
    skeleton = scene.skeletons[0]
    times = np.linspace(0, clip.duration, frames)
    clip.apply(times[0])
    skeleton.prepare()
    started = time.perf_counter()
    for t in times:
        clip.apply(t)
        skeleton.prepare()
    return (time.perf_counter() - started) / frames


def playback_costs(scene, clips, rounds: int) -> list[float]:
    """Each clip's median per-frame cost over ``rounds`` rounds, the clips interleaved in each
    round so that a busy machine weighs on them alike."""
    costs = [[] for _ in clips]
    for _ in range(rounds):
        for k, clip in enumerate(clips):
            costs[k].append(playback_cost(scene, clip))
    return [statistics.median(c) for c in costs]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        capture, rig_file = Path(folder) / "capture.bvh", Path(folder) / "rig65.bvh"
        joints = write_bvh(capture, body(fingers=False), 4000)
        bones = write_bvh(rig_file, body(fingers=True), 400, seed=1, end_sites=False)
        load_bvh(capture)  # imports and first-call costs out of the figure
        # Interleaved rounds (ours, the median of 3 loads, then three.js's, of 7 parses): a busy shared
        # machine weighs on both alike, and the ratio is taken within each round.
        loads, threes = [], []
        for _ in range(args.rounds):
            loads.append(median_time(lambda: load_bvh(capture), 3))
            threes.append(three_parse(capture, 7))  # node warms its JIT over a few parses
        load = statistics.median(loads)
        three = None if None in threes else statistics.median(threes)
        ratio = None if three is None else statistics.median(a / b for a, b in zip(loads, threes))
        source, rig = load_bvh(capture), load_bvh(rig_file)
        retarget = median_time(lambda: Retargeting(source, rig), args.rounds)
        result = Retargeting(source, rig)
        own, retargeted = playback_costs(rig, [rig.animations[0], result.clip], args.rounds)
    size = capture.stat().st_size if capture.exists() else 0
    print(f"BVH load, 4000 frames x {joints} joints ({len(result.source.bones)} bones with End Sites), "
          f"median of {args.rounds}:")
    print(f"  viewer.load_bvh              {load * 1000:8.1f} ms   (target < 100 ms)")
    if three is None:
        print("  three.js BVHLoader.parse     (not run: needs node and `npm install` in tests/threejs)")
    else:
        print(f"  three.js BVHLoader.parse     {three * 1000:8.1f} ms   (node {subprocess.run(['node', '--version'], capture_output=True, text=True).stdout.strip()}, same machine, same run)")
        print(f"  load_bvh / three.js          {ratio:8.2f} x    (median of the {args.rounds} rounds' ratios; "
              "target at most 0.33x)")
    print(f"retarget 4000 frames onto a {bones}-bone rig ({len(result.bone_map)} bones mapped):")
    print(f"  Retargeting                  {retarget * 1000:8.1f} ms   (target < 300 ms)")
    print("playback, one frame (clip.apply + skeleton.prepare) on the rig:")
    print(f"  its own loaded clip          {own * 1e6:8.1f} us")
    print(f"  the retargeted clip          {retargeted * 1e6:8.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
