"""The mixer's cost, as ratios measured in one run (issue 43):

- ``mixer.update`` for RobotExpressive with three actions (Walking 0.4 and Running 0.6 blended, Wave
  additive at 0.5) and one keyed layer (three bones, two keys each), against three.js 0.187's
  ``AnimationMixer.update`` for the same clips and weights in Node (tests/threejs_render/bench_mixer.mjs;
  three.js has no layers, so its side has none: the layer is ours on top);
- one clip played through the mixer (``mixer.update``) against today's ``clip.apply`` at the same times.

    python scripts/bench_mixer.py [--updates N]

Each figure is the best of seven rounds (the single clip's two sides taking turns) of N calls (microseconds per call); the ratio is ours over
theirs. Node and tests/threejs_render/node_modules (``npm install`` there) are needed for the
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


def three_js(updates: int) -> dict | str:
    folder = ROOT / "tests" / "threejs_render"
    node = shutil.which("node")
    if node is None:
        return "node is not installed"
    if not (folder / "node_modules" / "three").is_dir():
        return "three.js is not installed (cd tests/threejs_render && npm install)"
    result = subprocess.run([node, "bench_mixer.mjs", str(MODEL), str(updates)], cwd=folder, capture_output=True,
                            text=True, timeout=600)
    if result.returncode:
        return f"the three.js benchmark failed: {result.stderr.strip().splitlines()[-1:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=5000)
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

    single_mixer, single_apply = best_of([through_mixer, apply_alone], args.updates)

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

    # ours and three.js's take turns too (three rounds each, the fastest kept): the machine may be shared
    ours, theirs = float("inf"), None
    for _ in range(3):
        ours = min(ours, best_of([mixed], args.updates, rounds=3)[0])
        result = three_js(args.updates * 4)
        if not isinstance(result, dict):
            theirs = result
            break
        if theirs is None or result["update_us"] < theirs["update_us"]:
            theirs = result

    print(f"kernel: {native.describe()}")
    print(f"one clip (Walking): mixer.update {single_mixer:.1f} us, clip.apply {single_apply:.1f} us: "
          f"{single_mixer / single_apply:.2f}x (target <= 1.2x)")
    print(f"three actions + one keyed layer: mixer.update {ours:.1f} us")
    if isinstance(theirs, dict):
        print(f"three.js r{theirs['three']} AnimationMixer.update, three actions: {theirs['update_us']:.1f} us: "
              f"ours {ours / theirs['update_us']:.2f}x (target <= 1x)")
    else:
        print(f"three.js: not measured ({theirs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
