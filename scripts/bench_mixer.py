"""The mixer's cost, as ratios measured in one run (issue 43):

- ``mixer.update`` for RobotExpressive with three actions (Walking 0.4 and Running 0.6 blended, Wave
  additive at 0.5) and one keyed layer (three bones, two keys each), against three.js 0.187's
  ``AnimationMixer.update`` for the same clips and weights in Node (tests/threejs_render/bench_mixer.mjs;
  three.js has no layers, so its side has none: the layer is ours on top);
- one clip played through the mixer (``mixer.update``) against today's ``clip.apply`` at the same times.

    python scripts/bench_mixer.py [--updates N]

Each figure is the best of several rounds of N calls (microseconds per call), the two sides of a
comparison taking turns round by round (three.js's side in one Node process kept running, so a busy
moment of the machine costs both sides alike); the ratio is ours over theirs. Node and tests/threejs_render/node_modules (``npm install`` there) are needed for the
three.js side; without them that line says what is missing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODEL = ROOT / "tests" / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"


def best_of(functions, count: int, rounds: int = 7) -> list[float]:
    """Per function, the fastest of ``rounds`` runs of ``count`` calls, in microseconds per call;
    the functions take turns round by round, so a busy moment of the machine costs them alike."""
    for function in functions:
        function(count // 10 or 1)  # warm up
    times = [[] for _ in functions]
    for _ in range(rounds):
        for function, spent in zip(functions, times):
            start = time.perf_counter()
            function(count)
            spent.append((time.perf_counter() - start) / count * 1e6)
    return [min(spent) for spent in times]


class ThreeJs:
    """tests/threejs_render/bench_mixer.mjs kept running (``--serve``): ``round(n)`` runs n updates of
    three.js's AnimationMixer there and gives the microseconds per update; ``problem`` says why it
    cannot run (Node or three.js missing, the script failing), else None."""

    def __init__(self):
        self.process, self.problem, self.revision = None, None, None
        folder = ROOT / "tests" / "threejs_render"
        node = shutil.which("node")
        if node is None:
            self.problem = "node is not installed"
            return
        if not (folder / "node_modules" / "three").is_dir():
            self.problem = "three.js is not installed (cd tests/threejs_render && npm install)"
            return
        self.process = subprocess.Popen([node, "bench_mixer.mjs", str(MODEL), "--serve"], cwd=folder, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = self.process.stdout.readline()
        if not first.strip():
            self.problem = f"the three.js benchmark failed: {self.process.stderr.read().strip().splitlines()[-1:]}"
            self.close()
            return
        self.revision = json.loads(first)["three"]

    def round(self, n: int) -> float:
        self.process.stdin.write(f"{n}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line.strip():
            self.problem = f"the three.js benchmark failed: {self.process.stderr.read().strip().splitlines()[-1:]}"
            return float("inf")
        return float(line)

    def close(self) -> None:
        if self.process is not None:
            self.process.stdin.close()
            self.process.wait(timeout=60)
            self.process = None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9, help="rounds each side runs, taking turns (default 9)")
    args = parser.parse_args()

    import numpy as np

    from viewer.loaders import load_model
    from viewer.model import native
    from viewer.model.animation import clip_time
    from viewer.motion import quat

    dt = 1 / 60
    # one clip: the mixer against clip.apply, the same times
    scene = load_model(str(MODEL))
    clip = scene.find_animation("Walking")
    mixer = scene.mixer
    mixer.action(clip).play()

    def through_mixer(n):
        for _ in range(n):
            mixer.update(dt)

    state = {"t": 0.0}

    def apply_alone(n):
        t = state["t"]
        for _ in range(n):
            t += dt
            clip.apply(clip_time(t, clip.duration))
        state["t"] = t

    single_mixer, single_apply = best_of([through_mixer, apply_alone], args.updates, args.rounds)

    # three actions and one keyed layer
    scene = load_model(str(MODEL))
    mixer = scene.mixer
    walk, run, wave = mixer.action("Walking"), mixer.action("Running"), mixer.action("Wave")
    walk.weight, run.weight = 0.4, 0.6
    wave.additive, wave.weight = True, 0.5
    for action in (walk, run, wave):
        action.play()
    turn = quat.normalize(np.array([0.1, 0.2, 0.0, 0.97]))
    for key_time in (0.1, 0.6):
        mixer.time = key_time
        for bone in ("Head", "Neck", "Hand.L"):
            now = np.array(mixer.target(bone).rotation_quaternion)
            mixer.key(bone, rotation_quaternion=quat.multiply(now, turn))
    mixer.time = 0.0

    def mixed(n):
        for _ in range(n):
            mixer.update(dt)

    # ours and three.js's take turns round by round (three.js in one Node process kept running)
    three = ThreeJs()
    ours, theirs = float("inf"), float("inf")
    try:
        mixed(args.updates // 10 or 1)  # warm up
        for _ in range(args.rounds):
            start = time.perf_counter()
            mixed(args.updates)
            ours = min(ours, (time.perf_counter() - start) / args.updates * 1e6)
            if three.problem is None:
                theirs = min(theirs, three.round(args.updates))
    finally:
        three.close()

    print(f"kernel: {native.describe()}")
    print(f"one clip (Walking): mixer.update {single_mixer:.1f} us, clip.apply {single_apply:.1f} us: "
          f"{single_mixer / single_apply:.2f}x (target <= 1.2x)")
    print(f"three actions + one keyed layer: mixer.update {ours:.1f} us")
    if three.problem is None:
        print(f"three.js r{three.revision} AnimationMixer.update, three actions: {theirs:.1f} us: "
              f"ours {ours / theirs:.2f}x (target <= 1x)")
    else:
        print(f"three.js: not measured ({three.problem})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
