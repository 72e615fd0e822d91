#!/usr/bin/env bash
# Re-records the FBX reference data in tests/data/fbx: for each case in
# tests/fbx_blender/make_references.py, Blender imports a glTF sample from tests/data/gltf-samples,
# exports <case>.fbx, and saves the posed, skinned world-space vertex positions it evaluates at a
# few frames per anim stack (<case>.posed.npz) and a record of it all (references.json).
#
# Needs Debian's blender package (3.4.1 made the committed files) and python3-numpy, which that
# blender uses; this script installs nothing. Pass case names (comma-separated) to redo only some:
#   scripts/record_fbx_references.sh fox_zup_cm,cesiumman
#
# Determinism: Blender's FBX exporter writes the wall-clock time into the FBX header
# (CreationTimeStamp, CreationTime), and makes object UIDs from Python's hash() of strings, which is
# salted per process. make_references.py pins the header time to 2000-01-01 and this script sets
# PYTHONHASHSEED=0, so a re-run with the same Blender gives byte-identical .fbx files (and the same
# posed arrays); references.json's "determinism" block says whether both held for the run.
#
# If a python with the ufbx package is given as UFBX_PYTHON (e.g. a venv made with
# `python3 -m venv /tmp/ufbx && /tmp/ufbx/bin/pip install ufbx numpy`), the FBX files are then
# loaded with ufbx and checked against references.json (stack names and times, blend-shape
# weights, textures), and ufbx's skinning at each frame is printed against Blender's positions.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v blender >/dev/null || { echo "blender not found (apt-get install blender python3-numpy)" >&2; exit 1; }
cases=${1:-}
PYTHONHASHSEED=0 blender -b --factory-startup --python-exit-code 1 \
    --python tests/fbx_blender/make_references.py -- ${cases:+--cases "$cases"}
ls -l tests/data/fbx
if [ -n "${UFBX_PYTHON:-}" ]; then
    # ufbx's own reading of the files: stack names and time ranges must match references.json,
    # blend-shape channel weights must match the recorded shape key values, texture files beside
    # the FBX must resolve and embedded textures must carry the recorded bytes, and a keyed shape
    # must be baked as a DeformPercent curve. Its skinning (which applies blend shapes) at each
    # frame's fbx_time_s is printed against Blender's positions, all meshes in posed_layout's order
    # (it differs where the exporter's key simplification or Euler interpolation differs from
    # Blender's curves).
    "$UFBX_PYTHON" - <<'PY'
import gc, hashlib, json, os, sys
import numpy as np
import ufbx
gc.disable()  # the ufbx 0.0.5 bindings segfault now and then when the cyclic GC runs mid-loop
DIR = "tests/data/fbx/"
doc = json.load(open(DIR + "references.json"))
keep, bad = [], 0   # keep every wrapper alive: the ufbx bindings are fragile about lifetimes


def lst(x):
    out = list(x)
    keep.append(out)
    return out


def vec3s(x):
    keep.append(x)
    return np.array([[p.x, p.y, p.z] for p in lst(x)], dtype=np.float64).reshape(-1, 3)


def affine(m):
    keep.append(m)
    return np.array([[c.x, c.y, c.z] for c in (m.c0, m.c1, m.c2, m.c3)]).T  # 3x4, column vectors


for case in doc["cases"]:
    scene = ufbx.load_file(DIR + case["fbx"], target_axes=ufbx.axes_right_handed_y_up,
                           target_unit_meters=1.0)
    keep.append(scene)
    stack_list = lst(scene.anim_stacks)
    stacks = {s.name: s for s in stack_list}
    got = [(s.name, s.time_begin, s.time_end) for s in stack_list]
    want = [(s["name"], s["fbx_time_begin_s"], s["fbx_time_end_s"]) for s in case["stacks"]]
    if len(got) != len(want):
        bad += 1
        print(case["case"], "stack count: ufbx", len(got), "json", len(want))
    for g, w in zip(got, want):
        ok = g[0] == w[0] and abs(g[1] - w[1]) < 1e-6 and abs(g[2] - w[2]) < 1e-6
        bad += not ok
        print("%-25s %-26s ufbx %.6f..%.6f s  json %.6f..%.6f s  %s"
              % (case["case"], g[0], g[1], g[2], w[1], w[2], "ok" if ok else "MISMATCH"))
    for tex in case.get("textures", []):
        found = [t for t in lst(scene.textures)
                 if os.path.basename(t.relative_filename) == tex["file_name"]]
        if not found:
            bad += 1
            print("   texture %s: not in the FBX" % tex["file_name"])
            continue
        t = found[0]
        if tex["file"]:
            path = t.filename  # ufbx resolves RelativeFilename against the FBX's folder
            ok = os.path.isfile(path) and hashlib.sha256(open(path, "rb").read()).hexdigest() == tex["sha256"]
            print("   texture %s: RelativeFilename %r -> %s %s"
                  % (tex["file_name"], t.relative_filename, path, "ok" if ok else "MISSING/DIFFERENT"))
        else:
            content = t.content
            ok = len(content) == tex["bytes"] and hashlib.sha256(content).hexdigest() == tex["sha256"]
            print("   texture %s: embedded, %d bytes %s" % (tex["file_name"], len(content), "ok" if ok else "DIFFERENT"))
        bad += not ok
    setup = case.get("shape_key_setup")
    if setup:
        blend_channels = lst(scene.blend_channels)
        chan = [c for c in blend_channels if c.name == setup["keyed"]["shape_key"]]
        anim = stacks[case["frames"][0]["stack"]].anim
        baked = ufbx.bake_anim(scene, anim)
        keep.extend([anim, baked])
        ok = False
        if chan:
            for el in lst(baked.elements):
                if el.element_id == chan[0].element_id:
                    ok = any(pr.name == "DeformPercent" and len(lst(pr.keys)) > 1 for pr in lst(el.props))
        bad += not ok
        print("   blend channels %s; keyed %s baked as DeformPercent: %s"
              % ([c.name for c in blend_channels], setup["keyed"]["shape_key"], "ok" if ok else "MISSING"))
    layout = case.get("posed_layout") or [
        {"object": None, "vertex_start": 0, "vertex_count": case["frames"][0]["vertex_count"]}]
    posed = np.load(DIR + case["posed"])
    for fr in case["frames"]:
        anim = stacks[fr["stack"]].anim
        ev = ufbx.evaluate_scene(scene, anim, fr["fbx_time_s"], evaluate_skinning=True)
        keep.extend([anim, ev])
        meshes = lst(ev.meshes)
        by_node = {lst(m.instances)[0].name: m for m in meshes}
        parts = []
        for ent in layout:
            mesh = by_node[ent["object"]] if ent["object"] else meshes[0]
            pos = vec3s(mesh.skinned_position.values)
            if mesh.skinned_is_local:
                a = affine(lst(mesh.instances)[0].geometry_to_world)
                pos = pos @ a[:, :3].T + a[:, 3]
            parts.append(pos)
            for bd in lst(mesh.blend_deformers):
                for ch in lst(bd.channels):
                    want_w = (fr.get("shape_keys") or {}).get(ent["object"], {}).get(ch.name)
                    if want_w is None or abs(ch.weight - want_w) > 1e-5:
                        bad += 1
                        print("   %s %s: ufbx weight %r, blender %r" % (ent["object"], ch.name, ch.weight, want_w))
        pos = np.concatenate(parts)
        ref = posed[fr["array"]]
        if pos.shape != ref.shape:
            bad += 1
            print("   %-34s vertex count: ufbx %d, blender %d" % (fr["array"], len(pos), len(ref)))
            continue
        err = np.abs(pos - ref).max()
        print("   %-34s t=%.6f s  max |ufbx - blender| %.2e (%.1e of the model's size)"
              % (fr["array"], fr["fbx_time_s"], err, err / np.ptp(ref, axis=0).max()))
sys.stdout.flush()
os._exit(1 if bad else 0)
PY
fi
