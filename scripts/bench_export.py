#!/usr/bin/env python3
"""Export timings: boneviewer's save_gltf beside Babylon.js's GLTF2Export.GLBAsync, same run.

    .venv/bin/python scripts/bench_export.py [--repeats N] [--rounds R] [--before DIR]

Models: CesiumMan (22 nodes, one 3,273-vertex skinned mesh, a JPEG, one clip), 41 RiggedFigures
side by side (902 nodes, 41 skins and meshes, one clip over all of them) and
tests/test_gltf_scale.py's RecursiveSkeletons-like model (924 nodes, 28 skins nested in each
other's hierarchy, 1,568 channels), each written once with save_gltf. Each export is timed
after loading the file (median of N after a warm-up run; the .glb written to a temporary
folder, Babylon's kept in memory), in interleaved rounds with Babylon's, and the ratio printed.
Babylon's figure comes from tests/babylon/bench_export.mjs in Node (needs node, and `npm
install` in tests/babylon; it is left out with a note when missing).
With ``--before DIR`` (an older tree, e.g. ``git archive <commit> | tar -x -C DIR``), that
tree's exports of the same files and this tree's are also timed in the same rounds, each tree
in a fresh process of its own (the benchmark's long-lived process is slower for the same code).
Then what recording a script costs: 60 steps of `export --script --record` keying every bone,
against the same 60 script updates without keys.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from viewer import load_gltf, save_gltf  # noqa: E402
from viewer.gltf.writer import glb_bytes  # noqa: E402
from viewer.model import Scene  # noqa: E402
from viewer.model.animation import AnimationClip  # noqa: E402
from test_gltf_scale import recursive_skeletons  # noqa: E402

SAMPLES = ROOT / "tests" / "data" / "gltf-samples"
CESIUM_MAN = SAMPLES / "CesiumMan" / "CesiumMan.glb"
FIGURE = SAMPLES / "RiggedFigure" / "RiggedFigure.gltf"
SCRIPT = """import math


def update(app, t, dt):
    for k, bone in enumerate(app.scene.skeletons[0].bones):
        angle = 0.3 * math.sin(2 * t + k)
        bone.get_pose_target().rotation_quaternion = [math.sin(angle / 2), 0, 0, math.cos(angle / 2)]
"""


def many_figures(copies: int = 41) -> Scene:
    """``copies`` RiggedFigures in one scene, each moved aside, one clip driving them all."""
    scenes = [load_gltf(FIGURE) for _ in range(copies)]
    for k, scene in enumerate(scenes):
        root = next(node for node in scene.nodes if node.parent is None)
        root.position = [1.2 * (k % 7), 0.0, 1.2 * (k // 7)]
    channels = [channel for scene in scenes for channel in scene.animations[0].channels]
    return Scene("RiggedFigure x41", [m for s in scenes for m in s.skinned_meshes],
                 nodes=[n for s in scenes for n in s.nodes], animations=[AnimationClip("All", channels)])


def median_ms(action, repeats: int) -> float:
    action()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


TREE_ROUND = """
import json, logging, statistics, sys, tempfile, time
from pathlib import Path
logging.disable(logging.WARNING)
from viewer import load_gltf, save_gltf
from viewer.gltf.writer import glb_bytes
spec, result = json.loads(sys.argv[1]), {}
def median_ms(action, repeats):
    action()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)
with tempfile.TemporaryDirectory() as folder:
    out = Path(folder) / "out.glb"
    for path in spec["files"]:
        scene = load_gltf(path)
        result[path] = (median_ms(lambda: glb_bytes(scene), spec["repeats"]),
                        median_ms(lambda: save_gltf(scene, out), spec["repeats"]))
print(json.dumps(result))
"""


def tree_round(tree: Path, files, repeats: int) -> dict:
    """file -> (in memory, to a file) medians (ms) of ``tree``'s exports, in a fresh process of its own."""
    import os

    spec = json.dumps({"files": [str(f) for f in files], "repeats": repeats})
    out = subprocess.run([sys.executable, "-c", TREE_ROUND, spec], capture_output=True, text=True, check=True,
                         timeout=600, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    return {key: tuple(value) for key, value in json.loads(out.stdout).items()}


def babylon(files, repeats: int) -> dict:
    """file -> Babylon's result, or {} with a note on stderr when Node or the packages are missing."""
    folder = ROOT / "tests" / "babylon"
    if shutil.which("node") is None or not (folder / "node_modules" / "@babylonjs" / "serializers").is_dir():
        print("(Babylon.js left out: needs node and `cd tests/babylon && npm install`)", file=sys.stderr)
        return {}
    result = subprocess.run(["node", "bench_export.mjs", str(repeats), *map(str, files)], cwd=folder,
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        print(f"(Babylon.js failed: {result.stderr.strip()[-300:]})", file=sys.stderr)
        return {}
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return {line["file"]: line for line in lines}


def recording_cost(path: Path, folder: Path, steps: int = 60) -> tuple[float, float]:
    """(seconds of `steps` script updates alone, seconds of the same with every bone keyed)."""
    from viewer.camera import OrbitCamera
    from viewer.editing.script import ScriptRunner
    from viewer.editing.script_app import HeadlessApp

    script = folder / "motion.py"
    script.write_text(SCRIPT)
    results = {False: [], True: []}
    for keyed in (False, True) * 5:  # alternated, medians of 5: the machine may be busy
        scene = load_gltf(path)
        app = HeadlessApp(scene, (800, 600), camera=OrbitCamera())
        runner = ScriptRunner(script)
        runner.start(app)
        start = time.perf_counter()
        recorder = scene.record_keyframes("Recorded") if keyed else None  # as `export --record` does
        for number in range(steps):
            t = 2.0 * number / (steps - 1)
            app.begin_frame(t, number)
            runner.update(app, t, 2.0 / (steps - 1))
            if recorder is not None:
                recorder.capture(t)
        if recorder is not None:
            recorder.finish()
        results[keyed].append(time.perf_counter() - start)
    return statistics.median(results[False]), statistics.median(results[True])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10, help="timed runs per export and round (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds, Babylon's then ours (default 3)")
    parser.add_argument("--before", type=Path, help="an older tree whose exports are timed in the same rounds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        big = save_gltf(many_figures(), folder / "RiggedFigure-x41.glb")
        (folder / "recursive").mkdir()
        recursive = save_gltf(load_gltf(recursive_skeletons(folder / "recursive")), folder / "RecursiveSkeletons.glb")
        models = [("CesiumMan", CESIUM_MAN), ("RiggedFigure x41", big), ("RecursiveSkeletons-like", recursive)]
        scenes = {name: load_gltf(path) for name, path in models}
        out = folder / "out.glb"
        mine = {name: ([], []) for name, _ in models}  # (in memory, to a file) per round
        theirs = {name: [] for name, _ in models}
        trees = {"before": args.before.resolve(), "this tree": ROOT} if args.before else {}
        fresh = {label: {name: ([], []) for name, _ in models} for label in trees}
        for _ in range(args.rounds):  # interleaved: a busy shared machine weighs on both alike
            references = babylon([path for _, path in models], args.repeats)
            for label, tree in trees.items():
                times = tree_round(tree, [path for _, path in models], args.repeats)
                for name, path in models:
                    fresh[label][name][0].append(times[str(path)][0])
                    fresh[label][name][1].append(times[str(path)][1])
            for name, path in models:
                scene = scenes[name]
                mine[name][0].append(median_ms(lambda: glb_bytes(scene), args.repeats))
                mine[name][1].append(median_ms(lambda: save_gltf(scene, out), args.repeats))
                if str(path) in references:
                    theirs[name].append(references[str(path)])
        print(f"{'model':<23} {'nodes':>5}  {'in memory':>9}  {'to a file':>9}  {'Babylon GLBAsync':>16}  "
              f"{'ours/Babylon (memory, file)':>27}")
        for name, path in models:
            memory, to_file = (statistics.median(times) for times in mine[name])
            size = len(glb_bytes(scenes[name]))
            line = f"{name:<23} {len(scenes[name].nodes):>5}  {memory:>6.1f} ms  {to_file:>6.1f} ms"
            if len(theirs[name]) == args.rounds:
                their = [result["median_ms"] for result in theirs[name]]
                ratios = [statistics.median(a / b for a, b in zip(ours, their)) for ours in mine[name]]
                line += f"  {statistics.median(their):>13.1f} ms  {ratios[0]:>15.2f}x, {ratios[1]:.2f}x"
            print(line + f"   ({size:,} bytes)")
            for label in trees:
                memory, to_file = (statistics.median(times) for times in fresh[label][name])
                line = f"{'  ' + label + ', fresh':<23} {'':>5}  {memory:>6.1f} ms  {to_file:>6.1f} ms"
                if len(theirs[name]) == args.rounds:
                    their = [result["median_ms"] for result in theirs[name]]
                    ratios = [statistics.median(a / b for a, b in zip(times, their)) for times in fresh[label][name]]
                    line += f"  {'':>16}  {ratios[0]:>15.2f}x, {ratios[1]:.2f}x"
                print(line)
        if all(len(theirs[name]) == args.rounds for name, _ in models):  # the quietest rounds
            their_min = {name: min(result["median_ms"] for result in theirs[name]) for name, _ in models}
            rows = [(name, "", mine[name]) for name, _ in models]
            rows += [(name, f" {label}, fresh", fresh[label][name]) for label in trees for name, _ in models]
            print("minimum over the rounds, ratio of minimums (memory, file) against Babylon's minimum: " + "; ".join(
                f"{name}{label} {min(times[0]):.1f} / {min(times[1]):.1f} ms {min(times[0]) / their_min[name]:.2f}x, "
                f"{min(times[1]) / their_min[name]:.2f}x" for name, label, times in rows)
                + "; Babylon " + ", ".join(f"{name} {value:.1f} ms" for name, value in their_min.items()))
        print(f"(each figure the median over {args.rounds} rounds of the median of {args.repeats} runs after a "
              "warm-up; Babylon's in memory, as GLBAsync makes them; ours in memory: the .glb's bytes, to a file: "
              "save_gltf, written to a temporary name and renamed; the ratios taken within each round, issue 30's "
              "target at most 1.0x on the ~900-node models)")
        for name, path in models[:2]:
            alone, keyed = recording_cost(path, folder)
            print(f"record 60 steps, {name}: script {alone * 1000:.0f} ms, with every bone keyed {keyed * 1000:.0f} ms "
                  f"(+{(keyed - alone) * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
