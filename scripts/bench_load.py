#!/usr/bin/env python3
"""glTF load times: boneviewer's load_gltf beside Babylon.js's glTF loader, in the same run.

    python scripts/bench_load.py [--rounds 5] [--runs 5] [--warmup 1] [--before DIR]

Models: CesiumMan, Fox and RobotExpressive (tests/data/gltf-samples) and a generated 924-node
model of 28 nested skins (tests/test_gltf_scale.py's recursive_skeletons(), packed here as a
.glb so both loaders read the same binary file). A load is the whole load: read the file,
parse, validate, build the Scene (boneviewer: nodes, skeletons, meshes, clips, the rest bounds;
Babylon: LoadAssetContainerAsync with materials skipped and animations not started, in Node,
scripts/bench_load_babylon.mjs). Each round runs each loader in a fresh process (Python, Node),
which loads each file ``--warmup`` times (V8's optimizing compiler keeps speeding Babylon up
over the first dozens of loads; one, the default, is the issue's protocol) and then ``--runs``
times; the best of those counts. The rounds alternate boneviewer and Babylon so a busy machine
weighs on both; the table gives the median over the rounds of each round's best and the ratio
of those medians. boneviewer reads and checks the images while loading (bytes, header,
declared size) but decodes their pixels only when first drawn (or written, or checked); Babylon
skips them (materials skipped), so any time boneviewer spent decoding pixels during a load is
shown too (none since issue 30: "-"), and the ratio without it. Babylon is left out with a note
when node or tests/babylon/node_modules is missing. With ``--before DIR`` (an older tree, e.g.
``git archive <commit> | tar -x -C DIR``) that tree's load_gltf is timed in the same rounds,
and so is process start to first PNG (``boneviewer render CesiumMan.glb``) of both trees,
interleaved. A benchmark, not a test: it prints what it measured.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from viewer.gltf import load_gltf  # noqa: E402

SAMPLES = ROOT / "tests" / "data" / "gltf-samples"
NODE_MODULES = ROOT / "tests" / "babylon" / "node_modules"
MODELS = [("CesiumMan", SAMPLES / "CesiumMan" / "CesiumMan.glb"), ("Fox", SAMPLES / "Fox" / "Fox.glb"),
          ("RobotExpressive", SAMPLES / "RobotExpressive" / "RobotExpressive.glb")]


def as_glb(gltf_path: Path, glb_path: Path) -> Path:
    """A .gltf whose one buffer is a base64 data: URI, written as a .glb (its BIN chunk)."""
    import base64

    document = json.loads(gltf_path.read_text())
    (buffer,) = document["buffers"]
    data = base64.b64decode(buffer.pop("uri").partition(",")[2])
    data += b"\0" * (-len(data) % 4)
    text = json.dumps(document, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 4)
    total = 12 + 8 + len(text) + 8 + len(data)
    glb_path.write_bytes(struct.pack("<III", 0x46546C67, 2, total) + struct.pack("<II", len(text), 0x4E4F534A)
                        + text + struct.pack("<II", len(data), 0x004E4942) + data)
    return glb_path


def babylon_round(paths: list[Path], runs: int, warmup: int) -> dict | None:
    """path -> Babylon's best of ``runs`` (ms) in a fresh Node process, each file loaded ``warmup`` times first."""
    if shutil.which("node") is None or not (NODE_MODULES / "@babylonjs" / "loaders").is_dir():
        return None
    spec = {"files": [str(p) for p in paths], "runs": runs, "rounds": 1, "warmup": warmup}
    out = subprocess.run(["node", str(ROOT / "scripts" / "bench_load_babylon.mjs"), str(NODE_MODULES),
                          json.dumps(spec)], capture_output=True, text=True, check=True, timeout=600)
    return {Path(key): values[0] for key, values in json.loads(out.stdout).items()}


TREE_ROUND = """
import json, logging, sys, time
logging.disable(logging.WARNING)
from viewer.gltf import container, load_gltf
spec, best = json.loads(sys.argv[1]), {}
decode, spent = getattr(container, "decode_pixels", None), [0.0]
if decode is not None:  # time any image decoding done while loading (none since issue 30)
    def timed(data):
        start = time.perf_counter()
        try:
            return decode(data)
        finally:
            spent[0] += time.perf_counter() - start
    container.decode_pixels = timed
for path in spec["files"]:
    for _ in range(spec["warmup"]):
        load_gltf(path)
    times = []
    for _ in range(spec["runs"]):
        spent[0] = 0.0
        start = time.perf_counter()
        load_gltf(path)
        times.append((time.perf_counter() - start, spent[0]))
    seconds, images = min(times)
    best[path] = (1000 * seconds, 1000 * images)
print(json.dumps(best))
"""


def tree_round(tree: Path, paths: list[Path], runs: int, warmup: int) -> dict:
    """path -> (the best of ``runs`` loads, the image decoding in it) in ms, with ``tree``'s
    load_gltf in a fresh process (as Babylon's round is a fresh Node process), each file loaded
    ``warmup`` times first."""
    spec = {"files": [str(p) for p in paths], "runs": runs, "warmup": warmup}
    out = subprocess.run([sys.executable, "-c", TREE_ROUND, json.dumps(spec)], capture_output=True, text=True,
                         check=True, timeout=600, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    return {Path(key): tuple(value) for key, value in json.loads(out.stdout).items()}


def first_png(tree: Path, folder: Path) -> float:
    """Seconds from process start to the PNG of `boneviewer render CesiumMan.glb` with ``tree``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "viewer.cli", "render", str(MODELS[0][1]), "--out", str(folder / "x.png")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder,
                   env={**os.environ, "PYTHONPATH": str(tree)})
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--runs", type=int, default=5, help="loads per round, the best counts (default 5)")
    parser.add_argument("--warmup", type=int, default=1,
                        help="warm-up loads per file and round, each loader's (default 1)")
    parser.add_argument("--before", type=Path, help="an older tree to time beside this one")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the samples' tolerated flaws, once per load
    from test_gltf_scale import recursive_skeletons

    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        generated = as_glb(recursive_skeletons(folder), folder / "recursive_skeletons.glb")
        models = [*MODELS, ("924 nodes, 28 skins", generated)]
        paths = [path for _, path in models]
        for path in paths:
            load_gltf(path)  # a file this tree cannot load stops the benchmark here, with its error
        ours = {path: [] for path in paths}
        theirs = {path: [] for path in paths}
        before = {path: [] for path in paths}
        for _ in range(args.rounds):
            if args.before:
                for path, (best, _) in tree_round(args.before.resolve(), paths, args.runs, args.warmup).items():
                    before[path].append(best)
            for path, best in tree_round(ROOT, paths, args.runs, args.warmup).items():
                ours[path].append(best)
            babylon = babylon_round(paths, args.runs, args.warmup)
            if babylon is not None:
                for path in paths:
                    theirs[path].append(babylon[path])
        pngs = {"before": [], "after": []}
        if args.before:
            for _ in range(7):
                pngs["before"].append(first_png(args.before.resolve(), folder))
                pngs["after"].append(first_png(ROOT, folder))
    print(f"glTF load, best of {args.runs} per round, medians of {args.rounds} alternating rounds (ms), each loader "
          f"in a fresh process per round after {args.warmup} warm-up load{'s' if args.warmup != 1 else ''} of each "
          f"file; load average {os.getloadavg()[0]:.1f}")
    header = ["model", "boneviewer", "of which images", "Babylon.js", "ratio", "ratio without images"]
    if args.before:
        header[1:1] = ["before", "before/Babylon"]
    lines = [header]
    for name, path in models:
        total = statistics.median(t for t, _ in ours[path])
        images = statistics.median(i for _, i in ours[path])
        row = [name, f"{total:.1f}", f"{images:.1f}" if images else "-"]
        if args.before:
            old = statistics.median(before[path])
            row[1:1] = [f"{old:.1f}", f"{old / statistics.median(theirs[path]):.2f}x" if theirs[path] else "-"]
        if theirs[path]:
            babylon = statistics.median(theirs[path])
            row += [f"{babylon:.1f}", f"{total / babylon:.2f}x",
                    f"{(total - images) / babylon:.2f}x" if images else "-"]
        else:
            row += ["-", "-", "-"]
        lines.append(row)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for k, line in enumerate(lines):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))
        if k == 0:
            print("  ".join("-" * w for w in widths))
    if any(theirs.values()):  # the quietest round of each: what a busy machine's medians hide
        print("minimum over the rounds (ms), ratio of minimums: " + "; ".join(
            f"{name} " + (f"before {min(before[path]):.1f}, " if args.before else "")
            + f"boneviewer {min(t for t, _ in ours[path]):.1f}, Babylon {min(theirs[path]):.1f}, "
            f"{min(t for t, _ in ours[path]) / min(theirs[path]):.2f}x"
            + (f" (before {min(before[path]) / min(theirs[path]):.2f}x)" if args.before else "")
            for name, path in models))
    else:
        print("(Babylon.js left out: needs node and `cd tests/babylon && npm install`)")
    if args.before:
        print("process start to first PNG (boneviewer render CesiumMan.glb), 7 interleaved runs: "
              + ", ".join(f"{label} median {statistics.median(v):.3f} s (min {min(v):.3f} s)" for label, v in pngs.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
