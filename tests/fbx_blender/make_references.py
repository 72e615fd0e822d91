"""Blender script: FBX files and Blender's own posed vertex positions for boneviewer's FBX tests.

Run it with scripts/record_fbx_references.sh (it needs Debian's blender package, 3.4.1 when this
was written, and python3-numpy), or by hand:

    PYTHONHASHSEED=0 blender -b --factory-startup --python-exit-code 1 \
        --python tests/fbx_blender/make_references.py -- [--out DIR] [--cases a,b]

For each case it imports a glTF sample from tests/data/gltf-samples/, changes the Blender scene
where the case says so, exports tests/data/fbx/<case>.fbx (binary FBX 7400), then for three
frames per animation stack sets the frame (with that stack's action active, as the exporter had
it while baking), exports the posed, skinned mesh with Blender's OBJ exporter (default axes:
forward -Z, up Y, so obj = (x, z, -y) of Blender's world, in Blender units = metres) into a temp
dir, parses its `v` lines and keeps them as float32 arrays in tests/data/fbx/<case>.posed.npz.
tests/data/fbx/references.json gets one record per case (hashes, options, stacks, frames).
A case with several meshes stores them concatenated in the OBJ file's object order (the record's
"posed_layout" gives each mesh's name, offset and vertex count); a case with shape keys records
their values at each frame ("shape_keys"). Textures larger than MAX_TEXTURE_SIDE are downscaled
before export where a case writes or embeds them ("textures" in the record).

Determinism: Blender's FBX exporter writes the wall-clock time into the header
(FBXHeaderExtension/CreationTimeStamp and CreationTime) and derives object UIDs from Python's
hash() of strings, which is salted per process. This script pins the header time to
PINNED_TIME (by wrapping io_scene_fbx.export_fbx_bin.fbx_header_elements) and the shell script
sets PYTHONHASHSEED=0, so re-running gives byte-identical FBX files. The JSON says which of the
two held for the run that made it.
"""
import numpy

numpy.bool = bool  # Blender 3.4's glTF importer still calls numpy.bool (removed in numpy 1.24)

import argparse
import datetime
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile

import bpy
from mathutils import Matrix

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SAMPLES = os.path.join(ROOT, "tests", "data", "gltf-samples")
PINNED_TIME = datetime.datetime(2000, 1, 1, 0, 0, 0)
# The FBX exporter writes each texture's absolute path in the export folder (Video/Texture
# "Filename"). Exporting into this fixed folder and copying the file into place keeps the bytes
# the same whatever the checkout's path.
STAGE = "/tmp/boneviewer-fbx-references"
# Textures a case writes beside the FBX or embeds in it are downscaled to this longest side first.
MAX_TEXTURE_SIDE = 256

# Blender world -> OBJ file coordinates for the OBJ exporter's defaults (forward -Z, up Y).
BLENDER_TO_OBJ = Matrix(((1, 0, 0, 0), (0, 0, 1, 0), (0, -1, 0, 0), (0, 0, 0, 1)))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def rel(path):
    return os.path.relpath(path, ROOT).replace(os.sep, "/")


def mat_rows(m):
    return [[float(v) for v in row] for row in m]


# ---------------------------------------------------------------------------------------------
# FBX header time pinning


def pin_fbx_header_time():
    try:
        from io_scene_fbx import export_fbx_bin
    except ImportError:
        import addon_utils
        addon_utils.enable("io_scene_fbx")
        from io_scene_fbx import export_fbx_bin
    orig = export_fbx_bin.fbx_header_elements
    if getattr(orig, "_pinned", False):
        return True
    import inspect
    if "time" not in inspect.signature(orig).parameters:
        return False

    def pinned(root, scene_data, time=None):
        return orig(root, scene_data, PINNED_TIME)

    pinned._pinned = True
    export_fbx_bin.fbx_header_elements = pinned
    return True


# ---------------------------------------------------------------------------------------------
# Reading back what the FBX file says (Blender's own parser, io_scene_fbx.parse_fbx)

KTIME = 46186158000  # FBX ticks per second


def _props70(elem):
    out = {}
    for sub in elem.elems:
        if sub.id == b"Properties70":
            for p in sub.elems:
                if p.id == b"P":
                    name = p.props[0].decode()
                    vals = p.props[4:]
                    out[name] = vals[0] if len(vals) == 1 else list(vals)
    return out


def _fbx_name(raw):
    return raw.split(b"\x00\x01")[0].decode()


def read_fbx_summary(path):
    from io_scene_fbx import parse_fbx
    root, version = parse_fbx.parse(path)
    out = {"fbx_version": version, "binary": True}
    gs = {}
    stacks = []
    takes = []
    videos = []
    textures = []
    blend = {"blend_shape_deformers": [], "blend_shape_channels": [], "shape_geometries": []}
    for e in root.elems:
        if e.id == b"GlobalSettings":
            p = _props70(e)
            for k in ("UpAxis", "UpAxisSign", "FrontAxis", "FrontAxisSign", "CoordAxis",
                      "CoordAxisSign", "UnitScaleFactor", "OriginalUnitScaleFactor", "TimeMode",
                      "CustomFrameRate"):
                if k in p:
                    v = p[k]
                    gs[k] = v.decode() if isinstance(v, bytes) else v
        elif e.id == b"Creator":
            out["creator"] = e.props[0].decode()
        elif e.id == b"Objects":
            for o in e.elems:
                if o.id == b"Video":
                    sub = {s.id: s for s in o.elems}
                    videos.append({
                        "name": _fbx_name(o.props[1]),
                        "filename": sub[b"Filename"].props[0].decode() if b"Filename" in sub else None,
                        "relative_filename": (sub[b"RelativeFilename"].props[0].decode()
                                              if b"RelativeFilename" in sub else None),
                        "content_bytes": len(sub[b"Content"].props[0]) if b"Content" in sub else None,
                    })
                elif o.id == b"Texture":
                    sub = {s.id: s for s in o.elems}
                    textures.append({
                        "name": _fbx_name(o.props[1]),
                        "filename": sub[b"FileName"].props[0].decode() if b"FileName" in sub else None,
                        "relative_filename": (sub[b"RelativeFilename"].props[0].decode()
                                              if b"RelativeFilename" in sub else None),
                    })
                elif o.id == b"Deformer" and o.props[2] == b"BlendShape":
                    blend["blend_shape_deformers"].append(_fbx_name(o.props[1]))
                elif o.id == b"Deformer" and o.props[2] == b"BlendShapeChannel":
                    sub = {s.id: s for s in o.elems}
                    blend["blend_shape_channels"].append({
                        "name": _fbx_name(o.props[1]),
                        "deform_percent": (float(sub[b"DeformPercent"].props[0])
                                           if b"DeformPercent" in sub else None),
                    })
                elif o.id == b"Geometry" and o.props[2] == b"Shape":
                    sub = {s.id: s for s in o.elems}
                    blend["shape_geometries"].append({
                        "name": _fbx_name(o.props[1]),
                        "indexes": len(sub[b"Indexes"].props[0]) if b"Indexes" in sub else 0,
                    })
                elif o.id == b"AnimationStack":
                    p = _props70(o)
                    stacks.append({
                        "name": _fbx_name(o.props[1]),
                        "local_start_ktime": int(p.get("LocalStart", 0)),
                        "local_stop_ktime": int(p.get("LocalStop", 0)),
                        "reference_start_ktime": int(p.get("ReferenceStart", 0)),
                        "reference_stop_ktime": int(p.get("ReferenceStop", 0)),
                        "local_start_s": int(p.get("LocalStart", 0)) / KTIME,
                        "local_stop_s": int(p.get("LocalStop", 0)) / KTIME,
                    })
        elif e.id == b"Takes":
            for t in e.elems:
                if t.id == b"Take":
                    rec = {"name": t.props[0].decode()}
                    for s in t.elems:
                        if s.id in (b"LocalTime", b"ReferenceTime"):
                            rec[s.id.decode() + "_ktime"] = [int(v) for v in s.props]
                    takes.append(rec)
    out["global_settings"] = gs
    out["anim_stacks"] = stacks
    out["takes"] = takes
    if videos or textures:
        out["videos"] = videos
        out["textures"] = textures
    if blend["blend_shape_deformers"]:
        out["blend_shapes"] = blend
    return out


# ---------------------------------------------------------------------------------------------
# Scene helpers


def reset_scene(fps=24):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = fps
    scene.render.fps_base = 1.0
    return scene


def import_gltf(relpath):
    path = os.path.join(SAMPLES, relpath)
    bpy.ops.import_scene.gltf(filepath=path)
    return path


def armature():
    arms = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    assert len(arms) == 1, arms
    return arms[0]


def skinned_meshes():
    return sorted((o for o in bpy.context.scene.objects if o.type == "MESH"), key=lambda o: o.name)


def downscale_and_save_images(case, folder, fmt):
    """Give each image a file of its own: downscaled with Blender's Image.scale to at most
    MAX_TEXTURE_SIDE on its longest side, saved as `<case>_texture<i>.<ext>` in folder (PNG, or
    JPEG at quality 90), unpacked and reloaded from that file, so that the exporter references,
    copies or embeds those bytes. Returns one record per image."""
    ext = {"PNG": ".png", "JPEG": ".jpg"}[fmt]
    records = []
    for i, img in enumerate(sorted(bpy.data.images, key=lambda im: im.name)):
        w, h = img.size
        side = max(w, h)
        if side > MAX_TEXTURE_SIDE:
            nw = max(1, round(w * MAX_TEXTURE_SIDE / side))
            nh = max(1, round(h * MAX_TEXTURE_SIDE / side))
            img.scale(nw, nh)
        else:
            nw, nh = w, h
        path = os.path.join(folder, "%s_texture%d%s" % (case, i, ext))
        if os.path.exists(path):
            os.remove(path)
        img.filepath_raw = path
        img.file_format = fmt
        if fmt == "JPEG":
            img.save(filepath=path, quality=90)
        else:
            img.save(filepath=path)
        if img.packed_file is not None:
            img.unpack(method="REMOVE")
        img.filepath = path
        img.reload()
        assert tuple(img.size) == (nw, nh), (tuple(img.size), nw, nh)
        records.append({
            "image": img.name,
            "source_size": [w, h],
            "size": [nw, nh],
            "downscaled": (nw, nh) != (w, h),
            "format": fmt,
            "file_name": os.path.basename(path),
            "bytes": os.path.getsize(path),
            "sha256": sha256(path),
            "_path": path,
        })
    return records


def _size_note(tex):
    return ("downscaled to %dx%d" % tuple(tex["size"])) if tex["downscaled"] else "kept at its size"


def set_frame(scene, frame):
    whole = math.floor(frame)
    scene.frame_set(int(whole), subframe=frame - whole)


def pick_frames(f_start, f_end):
    """Clip start, a whole frame about 40% in, and a half frame about 70% in."""
    span = f_end - f_start
    mid = float(round(f_start + 0.4 * span))
    half = math.floor(f_start + 0.7 * span) + 0.5
    return [f_start, mid, half]


def frame_label(frame):
    return ("%.6f" % frame).rstrip("0").rstrip(".")


def shape_key_values(meshes):
    """{object name: {shape key: value}} for the meshes with shape keys (Basis left out)."""
    out = {}
    for ob in meshes:
        keys = ob.data.shape_keys
        if keys:
            out[ob.name] = {kb.name: float(kb.value) for kb in keys.key_blocks[1:]}
    return out


def posed_obj_positions(tmpdir, tag):
    """Blender's OBJ exporter at the current frame; returns (positions (N,3) float64, objects)."""
    path = os.path.join(tmpdir, tag + ".obj")
    bpy.ops.wm.obj_export(filepath=path, apply_modifiers=True, export_selected_objects=False,
                          export_uv=False, export_normals=False, export_materials=False,
                          export_triangulated_mesh=False, export_eval_mode="DAG_EVAL_VIEWPORT")
    verts = []
    objects = []
    with open(path) as f:
        for line in f:
            if line.startswith("v "):
                verts.append([float(x) for x in line.split()[1:4]])
            elif line.startswith("o "):
                objects.append(line[2:].strip())
    os.remove(path)
    return numpy.array(verts, dtype=numpy.float64), objects


def depsgraph_positions(objects):
    """The same positions straight from the evaluated depsgraph, for a cross-check, the objects
    concatenated in the OBJ file's order (names from its `o` lines)."""
    dg = bpy.context.evaluated_depsgraph_get()
    out = []
    for name in objects:
        ob = bpy.data.objects[name]
        ob_eval = ob.evaluated_get(dg)
        me = ob_eval.to_mesh()
        m = BLENDER_TO_OBJ @ ob_eval.matrix_world
        co = numpy.empty(len(me.vertices) * 3)
        me.vertices.foreach_get("co", co)
        co = co.reshape(-1, 3)
        mm = numpy.array(m)
        out.append(co @ mm[:3, :3].T + mm[:3, 3])
        ob_eval.to_mesh_clear()
    return numpy.concatenate(out)


def export_options_full(opts):
    """All export_scene.fbx options: the operator defaults with ours on top."""
    rna = bpy.ops.export_scene.fbx.get_rna_type()
    full = {}
    skip = {"rna_type", "filepath", "check_existing", "filter_glob"}
    for p in rna.properties:
        if p.identifier in skip:
            continue
        if p.type == "ENUM":
            d = sorted(p.default_flag) if p.is_enum_flag else p.default
        elif getattr(p, "is_array", False) and p.array_length > 0:
            d = list(p.default_array)
        else:
            d = p.default
        full[p.identifier] = d
    for k, v in opts.items():
        full[k] = sorted(v) if isinstance(v, set) else v
    return full


# ---------------------------------------------------------------------------------------------
# Cases. Each setup() returns (export options, description, extra record fields); the frame
# plan comes from the stacks the options make (see stacks_for()).

def case_cesiumman(scene, ctx):
    src = import_gltf("CesiumMan/CesiumMan.glb")
    textures = downscale_and_save_images("cesiumman", ctx["tmpdir"], "JPEG")
    opts = {"path_mode": "COPY", "embed_textures": True}
    (tex,) = textures
    return [src], opts, ("CesiumMan.glb, exported with the operator's default options except "
                         "path_mode COPY + embed_textures: its texture (%dx%d JPEG, %s and "
                         "re-encoded as JPEG quality 90 first) is embedded in the FBX (Video "
                         "Content), which names it cesiumman.fbm/%s; no image file is written."
                         % (tuple(tex["source_size"]) + (_size_note(tex), tex["file_name"]))), \
        {"textures": textures, "texture_handling": "embedded"}


def case_riggedfigure(scene, ctx):
    src = import_gltf("RiggedFigure/RiggedFigure.gltf")
    opts = {"apply_scale_options": "FBX_SCALE_ALL", "add_leaf_bones": False}
    return [src], opts, ("RiggedFigure.gltf; apply_scale_options FBX_SCALE_ALL, so the file stays in "
                         "metres with UnitScaleFactor 100 and no x100 scale on the root nodes; no "
                         "leaf bones."), {}


def case_fox_zup_cm(scene, ctx):
    src = import_gltf("Fox/Fox.glb")
    # Saved straight into the export folder, so the FBX's RelativeFilename is the bare file name
    # (path_mode COPY would copy it into a "fox_zup_cm.fbm" subfolder and name that instead).
    textures = downscale_and_save_images("fox_zup_cm", STAGE, "PNG")
    paths = None
    for act in bpy.data.actions:
        p = sorted((fc.data_path, fc.array_index) for fc in act.fcurves)
        assert paths is None or p == paths, "Fox's actions animate different channels"
        paths = p
    opts = {"axis_up": "Z", "axis_forward": "Y", "apply_unit_scale": True, "global_scale": 1.0,
            "apply_scale_options": "FBX_SCALE_NONE", "bake_anim_use_all_actions": True,
            "bake_anim_use_nla_strips": False, "bake_anim_simplify_factor": 0.0,
            "path_mode": "RELATIVE", "embed_textures": False}
    return [src], opts, ("Fox.glb; Z up, Y forward (Blender's own axes, so no axis change), "
                         "centimetres: UnitScaleFactor 1 with the x100 on the root nodes' "
                         "Lcl Scaling; every action as its own anim stack, no NLA stacks; "
                         "bake_anim_simplify_factor 0, so every baked key is kept; its texture "
                         "(%dx%d PNG) %s and written as %s beside the FBX, which references it "
                         "by that name (RelativeFilename), not embedded."
                         % (tuple(textures[0]["source_size"]) + (_size_note(textures[0]),
                                                                 textures[0]["file_name"]))), \
        {"textures": textures, "texture_handling": "file beside the FBX"}


def case_riggedsimple_transformed(scene, ctx):
    # The frame rate must be set before the import: the glTF importer turns key times into frames
    # with the scene's fps (keys at 1/24 s steps land on 1.25-frame steps at 30 fps).
    src = import_gltf("RiggedSimple/RiggedSimple.gltf")
    arm = armature()
    act = arm.animation_data.action
    for track in list(arm.animation_data.nla_tracks):
        arm.animation_data.nla_tracks.remove(track)
    first = act.frame_range[0]
    shift = 10.0 - first
    for fc in act.fcurves:
        for kp in fc.keyframe_points:
            kp.co.x += shift
            kp.handle_left.x += shift
            kp.handle_right.x += shift
        fc.update()
    f0, f1 = act.frame_range
    scene.frame_start = 10
    scene.frame_end = int(math.ceil(f1 - 1e-6))
    bpy.context.view_layer.update()
    T = (Matrix.Translation((0.5, -1.0, 0.25))
         @ Matrix.Rotation(math.radians(40.0), 4, "Z")
         @ Matrix.Rotation(math.radians(25.0), 4, "X")
         @ Matrix.Scale(2.0, 4))
    arm.matrix_world = T @ arm.matrix_world
    bpy.context.view_layer.update()
    opts = {"bake_anim_use_nla_strips": False, "bake_anim_use_all_actions": False}
    extra = {
        "object_transform": {
            "object": arm.name,
            "note": ("the armature object's world matrix was pre-multiplied by T (Blender world "
                     "axes) before export; its mesh is its child, so every posed vertex moved by "
                     "T. In OBJ axes the same map is T_obj = B @ T @ B^-1 with "
                     "B = blender_to_obj."),
            "translation": [0.5, -1.0, 0.25],
            "rotation": "40 deg about Z after 25 deg about X",
            "uniform_scale": 2.0,
            "T_blender_world": mat_rows(T),
            "T_obj": mat_rows(BLENDER_TO_OBJ @ T @ BLENDER_TO_OBJ.inverted()),
        },
        "action_shift_frames": shift,
        "action_frame_range": [f0, f1],
    }
    return [src], opts, ("RiggedSimple.gltf imported at 30 fps, its action moved to start at frame "
                         "10, the armature object given translation + rotation about two axes + "
                         "uniform scale 2; exported as one scene-wide take (no NLA or per-action "
                         "stacks), which keeps Blender's frame numbers: it starts at 10/30 s."), extra


ROBOT_CLIP = "Wave_RobotArmature"
ROBOT_STATIC_KEYS = {"Angry": 0.3}
ROBOT_KEYED = ("Surprised", [(0.0, 0.0), (21.0, 1.0)])  # (frame, value), LINEAR, held after
ROBOT_FRAMES = [0.0, 10.5, 33.0]


def case_robot_morphs(scene, ctx):
    src = import_gltf("RobotExpressive/RobotExpressive.glb")
    arm = armature()
    for track in list(arm.animation_data.nla_tracks):
        arm.animation_data.nla_tracks.remove(track)
    act = bpy.data.actions[ROBOT_CLIP]
    arm.animation_data.action = act
    keyed_meshes = [o for o in skinned_meshes() if o.data.shape_keys]
    assert [o.name for o in keyed_meshes] == ["Head"], keyed_meshes
    head = keyed_meshes[0]
    key = head.data.shape_keys
    imported_key_action = key.animation_data.action.name if key.animation_data and key.animation_data.action else None
    if key.animation_data:
        for track in list(key.animation_data.nla_tracks):
            key.animation_data.nla_tracks.remove(track)
        key.animation_data.action = None
    for kb in key.key_blocks[1:]:
        kb.value = 0.0
    for kname, v in ROBOT_STATIC_KEYS.items():
        key.key_blocks[kname].value = v
    kname, keys = ROBOT_KEYED
    kb = key.key_blocks[kname]
    for frame, v in keys:
        kb.value = v
        kb.keyframe_insert("value", frame=frame)
    shape_action = key.animation_data.action
    shape_action.name = "robot_morphs_%s" % kname
    for fc in shape_action.fcurves:
        for kp in fc.keyframe_points:
            kp.interpolation = "LINEAR"
        fc.extrapolation = "CONSTANT"
        fc.update()
    f0, f1 = act.frame_range
    scene.frame_start = int(f0)
    scene.frame_end = int(f1)
    # Exported at the first frame, so the static DeformPercent (and Lcl values) are its values.
    scene.frame_set(scene.frame_start)
    bpy.context.view_layer.update()
    opts = {"bake_anim_use_all_actions": False, "bake_anim_use_nla_strips": False,
            "bake_anim_simplify_factor": 0.0, "path_mode": "STRIP", "embed_textures": False}
    layout = []
    extra = {
        "shape_key_setup": {
            "object": head.name,
            "mesh": head.data.name,
            "shape_keys": [kb.name for kb in key.key_blocks[1:]],
            "basis": key.key_blocks[0].name,
            "imported_key_action": imported_key_action,
            "static_values": dict(ROBOT_STATIC_KEYS),
            "keyed": {"shape_key": kname, "action": shape_action.name, "interpolation": "LINEAR",
                      "extrapolation": "CONSTANT",
                      "keys_frame_value": [[float(f), float(v)] for f, v in keys]},
            "note": ("the other shape keys stay 0; the importer's NLA tracks (one per glTF "
                     "animation, on the armature and on the Head's shape keys) were removed, and "
                     "the Head's shape-key action replaced by one that keys only the keyed shape. "
                     "The exporter bakes every shape key of the mesh as a BlendShapeChannel "
                     "DeformPercent curve (value x 100) at every frame of the stack."),
        },
        "armature_action": act.name,
        "_frames": list(ROBOT_FRAMES),
    }
    meshes = skinned_meshes()
    skinned = [o.name for o in meshes if any(m.type == "ARMATURE" for m in o.modifiers)]
    on_bones = [o.name for o in meshes if o.parent_type == "BONE"]
    assert len(skinned) + len(on_bones) == len(meshes), (skinned, on_bones)
    static = ", ".join("%s at %g" % kv for kv in ROBOT_STATIC_KEYS.items())
    return [src], opts, (
        "RobotExpressive.glb: %d meshes, %d rigidly parented to bones and %d (%s) skinned by an "
        "armature modifier; the %s mesh has shape keys %s. Armature action %s only (NLA tracks "
        "removed); %s, %s keyed %g at frame %g to %g at frame %g (linear, held after), the "
        "others 0; one scene-wide stack `%s`, frames %d..%d, bake_anim_simplify_factor 0; no "
        "textures (the model has no images; path_mode STRIP). Positions of all meshes are stored "
        "concatenated in the OBJ's object order (posed_layout)."
        % (len(meshes), len(on_bones), len(skinned), ", ".join(skinned), head.name,
           ", ".join(kb.name for kb in key.key_blocks[1:]), act.name, static, kname,
           keys[0][1], keys[0][0], keys[1][1], keys[1][0], scene.name, scene.frame_start,
           scene.frame_end)), extra


CASES = {
    "cesiumman": (24, case_cesiumman),
    "riggedfigure": (24, case_riggedfigure),
    "fox_zup_cm": (24, case_fox_zup_cm),
    "riggedsimple_transformed": (30, case_riggedsimple_transformed),
    "robot_morphs": (24, case_robot_morphs),
}


def stacks_for(scene, opts_full):
    """The anim stacks the FBX exporter makes, in its own order, with how to re-create each one's
    state: (fbx name, kind, object, action or strip, f_start, f_end, start_zero)."""
    stacks = []
    if not opts_full["bake_anim"]:
        return stacks
    objs = [o for o in scene.objects]
    if opts_full["bake_anim_use_nla_strips"]:
        for ob in objs:
            if not ob.animation_data:
                continue
            for track in ob.animation_data.nla_tracks:
                if track.mute:
                    continue
                for strip in track.strips:
                    if not strip.mute:
                        stacks.append((strip.name, "nla_strip", ob, strip, strip.frame_start,
                                       strip.frame_end, True))
    if opts_full["bake_anim_use_all_actions"]:
        for ob in objs:
            if not ob.animation_data:
                continue
            for act in bpy.data.actions:
                ok = act == ob.animation_data.action
                if not ok:
                    ok = True
                    for fc in act.fcurves:
                        dp = fc.data_path + ("[%d]" % fc.array_index if fc.array_index else "")
                        try:
                            ob.path_resolve(dp)
                        except ValueError:
                            ok = False
                            break
                if ok:
                    f0, f1 = act.frame_range
                    stacks.append(("%s|%s" % (ob.name, act.name), "action", ob, act, f0, f1, True))
    if not opts_full["bake_anim_use_nla_strips"] and not opts_full["bake_anim_use_all_actions"]:
        stacks.append((scene.name, "scene", None, None, float(scene.frame_start),
                       float(scene.frame_end), False))
    return stacks


def apply_stack_state(kind, ob, what, org_actions):
    """Put the scene in the state the exporter baked that stack in."""
    for o, act in org_actions.items():
        o.animation_data.action = act
    if kind == "action":
        ob.animation_data.action = what
    elif kind == "nla_strip":
        ob.animation_data.action = None
        for track in ob.animation_data.nla_tracks:
            for strip in track.strips:
                strip.mute = strip != what


def run_case(name, out_dir, tmpdir, script_sha, header_pinned):
    fps, setup = CASES[name]
    scene = reset_scene(fps)
    os.makedirs(STAGE, exist_ok=True)
    for f in os.listdir(out_dir):  # texture files an earlier run wrote for this case
        if f.startswith(name + "_texture"):
            os.remove(os.path.join(out_dir, f))
    # Importer options are left at their defaults.
    sources, opts, description, extra = setup(scene, {"tmpdir": tmpdir})
    frame_plan = extra.pop("_frames", None)
    scene = bpy.context.scene
    assert scene.render.fps == fps and scene.render.fps_base == 1.0
    opts_full = export_options_full(dict(opts, bake_anim=True))
    stacks = stacks_for(scene, opts_full)
    org_actions = {o: o.animation_data.action for o in scene.objects if o.animation_data}
    org_mutes = {s: s.mute for o in scene.objects if o.animation_data
                 for t in o.animation_data.nla_tracks for s in t.strips}

    fbx_path = os.path.join(out_dir, name + ".fbx")
    staged = os.path.join(STAGE, name + ".fbx")
    for p in (fbx_path, staged):
        if os.path.exists(p):
            os.remove(p)
    bpy.ops.export_scene.fbx(filepath=staged, bake_anim=True, **opts)
    shutil.move(staged, fbx_path)
    summary = read_fbx_summary(fbx_path)
    for tex in extra.get("textures", []):
        path = tex.pop("_path")
        if os.path.dirname(path) == STAGE:
            # written beside the FBX: it moves along with it
            shutil.move(path, os.path.join(out_dir, tex["file_name"]))
            tex["file"] = tex["file_name"]
        else:
            tex["file"] = None
        vids = [v for v in summary.get("videos", [])
                if os.path.basename(v["relative_filename"] or "") == tex["file_name"]]
        assert len(vids) == 1, (tex["file_name"], summary.get("videos"))
        tex["fbx_relative_filename"] = vids[0]["relative_filename"]
        tex["fbx_filename"] = vids[0]["filename"]
        tex["embedded_bytes"] = vids[0]["content_bytes"]
        if tex["file"] is not None:
            assert tex["fbx_relative_filename"] == tex["file"], tex
            assert vids[0]["content_bytes"] is None, tex
        else:
            assert vids[0]["content_bytes"] == tex["bytes"], tex
    written_names = [s["name"] for s in summary["anim_stacks"]]
    expected_names = [s[0] for s in stacks]
    assert written_names == expected_names, (written_names, expected_names)

    meshes = skinned_meshes()
    arrays = {}
    frames = []
    stack_records = []
    layout = None
    for (sname, kind, ob, what, f_start, f_end, start_zero), written in zip(stacks, summary["anim_stacks"]):
        time_origin = f_start if start_zero else 0.0
        stack_records.append({
            "name": sname,
            "kind": kind,
            "object": ob.name if ob else None,
            "action": (what.name if kind == "action" else
                       what.action.name if kind == "nla_strip" else
                       ", ".join(sorted({o.animation_data.action.name for o in scene.objects
                                         if o.animation_data and o.animation_data.action}))),
            "blender_frame_start": f_start,
            "blender_frame_end": f_end,
            "fbx_time_origin_frame": time_origin,
            "fbx_time_begin_s": (f_start - time_origin) / fps,
            "fbx_time_end_s": (f_end - time_origin) / fps,
            "fbx_local_start_s": written["local_start_s"],
            "fbx_local_stop_s": written["local_stop_s"],
            "baked_sample_frames": ("blender_frame_start + k * bake_anim_step (k = 0, 1, ...) "
                                    "while <= blender_frame_end; the exporter then drops keys "
                                    "that its simplification (bake_anim_simplify_factor) finds "
                                    "redundant"),
        })
        for frame in (frame_plan or pick_frames(f_start, f_end)):
            apply_stack_state(kind, ob, what, org_actions)
            set_frame(scene, frame)
            pos, objects = posed_obj_positions(tmpdir, "%s_%d" % (name, len(frames)))
            if layout is None:
                layout, start = [], 0
                for oname in objects:
                    o = bpy.data.objects[oname]
                    n = len(o.data.vertices)
                    layout.append({
                        "object": oname, "mesh": o.data.name, "vertex_start": start,
                        "vertex_count": n,
                        "parent": o.parent.name if o.parent else None,
                        "parent_type": o.parent_type,
                        "parent_bone": o.parent_bone or None,
                        "armature_modifier": any(m.type == "ARMATURE" for m in o.modifiers),
                        "shape_keys": ([kb.name for kb in o.data.shape_keys.key_blocks[1:]]
                                       if o.data.shape_keys else []),
                    })
                    start += n
            assert objects == [m["object"] for m in layout], (objects, layout)
            check = depsgraph_positions(objects)
            assert pos.shape == check.shape, (pos.shape, check.shape)
            diff = float(numpy.abs(pos - check).max())
            assert diff < 1e-5 * max(1.0, float(numpy.abs(check).max())), diff
            key = "%s@%s" % (sname, frame_label(frame))
            assert key not in arrays
            arrays[key] = pos.astype(numpy.float32)
            k = (frame - f_start) / opts_full["bake_anim_step"]
            src_frame = frame - extra.get("action_shift_frames", 0.0)
            frames.append({
                "array": key,
                "stack": sname,
                "action": stack_records[-1]["action"],
                "blender_frame": frame,
                "fps": float(fps),
                "fbx_time_s": (frame - time_origin) / fps,
                "on_baked_sample": abs(k - round(k)) < 1e-4,
                "source_gltf_time_s": src_frame / fps,
                "vertex_count": int(pos.shape[0]),
                "obj_objects": objects,
                "bbox_min": [float(v) for v in pos.min(axis=0)],
                "bbox_max": [float(v) for v in pos.max(axis=0)],
                "obj_vs_depsgraph_max_abs_diff": diff,
            })
            if len(layout) > 1:
                frames[-1]["mesh_vertex_counts"] = [m["vertex_count"] for m in layout]
            keys_now = shape_key_values(meshes)
            if keys_now:
                frames[-1]["shape_keys"] = keys_now
        # back to the imported state
        for o, act in org_actions.items():
            o.animation_data.action = act
        for s, m in org_mutes.items():
            s.mute = m

    npz_path = os.path.join(out_dir, name + ".posed.npz")
    numpy.savez_compressed(npz_path, **arrays)

    src_records = []
    for s in sources:
        src_records.append({"path": rel(s), "sha256": sha256(s), "external_files": []})
    units = scene.unit_settings
    record = {
        "case": name,
        "description": description,
        "fbx": os.path.basename(fbx_path),
        "fbx_sha256": sha256(fbx_path),
        "fbx_bytes": os.path.getsize(fbx_path),
        "posed": os.path.basename(npz_path),
        "posed_sha256": sha256(npz_path),
        "source": src_records,
        "make_references_sha256": script_sha,
        "blender_version": bpy.app.version_string,
        "blender_build_hash": bpy.app.build_hash.decode(),
        "fbx_addon_version": list(_addon_version("io_scene_fbx")),
        "gltf_addon_version": list(_addon_version("io_scene_gltf2")),
        "importer": "bpy.ops.import_scene.gltf with default options",
        "export_options": opts_full,
        "export_options_given": {k: (sorted(v) if isinstance(v, set) else v)
                                 for k, v in dict(opts, bake_anim=True).items()},
        "fbx_file": summary,
        "determinism": {
            "header_time_pinned": header_pinned,
            "pinned_time": PINNED_TIME.isoformat() if header_pinned else None,
            "python_hash_randomization": bool(sys.flags.hash_randomization),
            "export_folder": STAGE,
            "pythonhashseed": os.environ.get("PYTHONHASHSEED"),
            "note": ("Blender's FBX exporter writes the current time into CreationTimeStamp and "
                     "CreationTime, and makes object UIDs from Python's salted str hash. With the "
                     "time pinned and PYTHONHASHSEED=0 re-runs are byte-identical; otherwise "
                     "fbx_sha256 is only the file the posed data was made from. Texture Filename "
                     "paths name export_folder, where the file was written before being moved "
                     "here."),
        },
        "scene": {
            "name": scene.name,
            "fps": scene.render.fps,
            "fps_base": scene.render.fps_base,
            "frame_start": scene.frame_start,
            "frame_end": scene.frame_end,
            "unit_system": units.system,
            "unit_scale_length": units.scale_length,
            "length_unit": units.length_unit,
        },
        "meshes": [{"name": m.name, "vertices": len(m.data.vertices)} for m in meshes],
        "posed_layout": layout,
        "obj_axes": {
            "exporter": "bpy.ops.wm.obj_export defaults: forward_axis NEGATIVE_Z, up_axis Y, global_scale 1",
            "forward_axis": "NEGATIVE_Z",
            "up_axis": "Y",
            "units": "Blender units (metres), world space, Y up",
            "blender_to_obj": mat_rows(BLENDER_TO_OBJ),
            "meaning": "obj (x, y, z) = blender world (x, z, -y)",
            "precision": "the OBJ exporter writes 6 decimals; stored as float32",
            "vertex_order": ("the mesh's vertex order in Blender, which is the order of the FBX "
                             "Geometry's Vertices (control points)"),
        },
        "stacks": stack_records,
        "frames": frames,
    }
    record.update(extra)
    return record


def _addon_version(mod_name):
    import addon_utils
    for mod in addon_utils.modules():
        if mod.__name__ == mod_name:
            return addon_utils.module_bl_info(mod).get("version", ())
    return ()


def main():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    ap = argparse.ArgumentParser(prog="make_references.py")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "fbx"))
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args(argv)
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    script_sha = sha256(os.path.abspath(__file__))
    header_pinned = pin_fbx_header_time()
    if sys.flags.hash_randomization:
        print("warning: Python's hash randomization is on (PYTHONHASHSEED unset), so the FBX "
              "object UIDs, and the .fbx bytes, will differ from run to run", flush=True)
    if not header_pinned:
        print("warning: could not pin the FBX header time; the .fbx bytes will differ from run "
              "to run", flush=True)
    names = [c for c in args.cases.split(",") if c]
    records = []
    with tempfile.TemporaryDirectory(prefix="fbxref") as tmpdir:
        for name in names:
            print("case", name, flush=True)
            records.append(run_case(name, out_dir, tmpdir, script_sha, header_pinned))
    try:
        os.rmdir(STAGE)
    except OSError:
        pass
    json_path = os.path.join(out_dir, "references.json")
    existing = {}
    if os.path.exists(json_path) and set(names) != set(CASES):
        with open(json_path) as f:
            existing = {r["case"]: r for r in json.load(f)["cases"]}
    for r in records:
        existing[r["case"]] = r
    doc = {
        "about": ("Posed, skinned world-space vertex positions that Blender evaluates for the FBX "
                  "files beside this file; made by tests/fbx_blender/make_references.py (see "
                  "README.md)."),
        "fields": {
            "frames[].array": "name of the float32 (vertex_count, 3) array in the case's .posed.npz",
            "frames[].stack": "the FBX AnimationStack (and AnimLayer and Take) name, as in the file",
            "frames[].action": "the Blender action that stack was baked from",
            "frames[].blender_frame": "Blender scene frame (may be fractional: frame + subframe)",
            "frames[].fbx_time_s": ("time in the FBX file's own timeline: (blender_frame - "
                                    "stack.fbx_time_origin_frame) / fps. Per-action and NLA "
                                    "stacks are shifted to start at 0; the scene-wide stack "
                                    "keeps Blender's frame numbers"),
            "frames[].source_gltf_time_s": ("the glTF animation time the importer put at that "
                                            "frame (before any shift the case made)"),
            "frames[].on_baked_sample": ("the exporter sampled this frame (before simplifying); "
                                         "other frames are interpolated between FBX keys, whose "
                                         "rotations are Euler angles, so a reader differs a little "
                                         "from Blender there"),
            "frames[].obj_vs_depsgraph_max_abs_diff": ("largest difference between the OBJ's "
                                                       "6-decimal positions and Blender's "
                                                       "evaluated mesh in double precision"),
            "frames[].mesh_vertex_counts": ("cases with several meshes: each mesh's vertex count, "
                                            "in the array's (the OBJ's) order; see posed_layout"),
            "frames[].shape_keys": ("cases with shape keys: {object: {shape key: value}} at that "
                                    "frame (Blender's value; the FBX's DeformPercent is 100x)"),
            "posed_layout": ("the meshes in the posed arrays, in order: object and mesh name, "
                             "first row (vertex_start), vertex_count, how it is attached to the "
                             "armature, its shape keys"),
            "textures": ("images the case wrote beside the FBX (file) or embedded in it "
                         "(embedded_bytes): source and written size, format, sha256, and the "
                         "FBX's Filename and RelativeFilename for it"),
        },
        "cases": [existing[c] for c in CASES if c in existing],
    }
    with open(json_path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    print("wrote", json_path, flush=True)


if __name__ == "__main__":
    main()
