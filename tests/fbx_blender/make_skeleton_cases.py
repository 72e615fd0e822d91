"""Blender script: two small FBX cases built in code, with Blender's own positions as reference.

    PYTHONHASHSEED=0 blender -b --factory-startup --python-exit-code 1 \
        --python tests/fbx_blender/make_skeleton_cases.py -- [--out DIR]

- ``half_skinned.fbx`` (as Blender's ``half_skinned`` in ufbx's corpus): an 8x8 grid whose vertices
  with x > 0 are weighted to the bone ``Bone`` and the rest to nothing. The mesh object has a
  transform of its own and is the child of the armature object, which is moved and turned; the
  bone is keyed. ``half_skinned.posed.npz`` holds
  Blender's posed, skinned vertices (OBJ exporter, default axes: obj = Blender world (x, z, -y),
  metres, the mesh's vertex order) at frames 1, 8 and 15, named ``Scene@<frame>``.
- ``humanik_motion.fbx``: an armature and nothing else, its bones named as HumanIK names them
  (``Character1_Hips``, ``Character1_LeftUpLeg``...), with one keyed action (the legs walk, the arms
  swing, the hips rise 0.4 m). ``humanik_motion.joints.npz`` holds each bone's head at frames 1, 10
  and 20 in the same axes (``<bone>@<frame>``).

Both are exported with the FBX operator's defaults (centimetres, x100 on the root nodes) but
``bake_anim_use_all_actions=False``, ``add_leaf_bones=False`` and ``bake_anim_simplify_factor=0``.
"""
import argparse
import math
import os
import sys
import tempfile

import bpy
import numpy as np
from mathutils import Euler, Matrix, Vector

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BLENDER_TO_OBJ = Matrix(((1, 0, 0, 0), (0, 0, 1, 0), (0, -1, 0, 0), (0, 0, 0, 1)))
FBX_OPTIONS = dict(bake_anim=True, bake_anim_use_all_actions=False, bake_anim_use_nla_strips=False,
                   add_leaf_bones=False, bake_anim_simplify_factor=0.0, path_mode="STRIP")


def empty_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = 1, 20
    return scene


def armature(name, bones):
    """An armature object with ``bones``: [(name, parent or None, head, tail)] in its space."""
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    made = {}
    for bone, parent, head, tail in bones:
        edit = data.edit_bones.new(bone)
        edit.head, edit.tail = Vector(head), Vector(tail)
        if parent is not None:
            edit.parent = made[parent]
            edit.use_connect = False
        made[bone] = edit
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def key_rotation(obj, bone, frame, euler):
    pose = obj.pose.bones[bone]
    pose.rotation_mode = "XYZ"
    pose.rotation_euler = Euler([math.radians(a) for a in euler])
    pose.keyframe_insert("rotation_euler", frame=frame)


def obj_vertices(scene, frame):
    scene.frame_set(frame)
    bpy.context.view_layer.update()
    path = os.path.join(tempfile.mkdtemp(), "posed.obj")
    bpy.ops.wm.obj_export(filepath=path, apply_modifiers=True, export_selected_objects=False, export_uv=False,
                          export_normals=False, export_materials=False, export_triangulated_mesh=False,
                          export_eval_mode="DAG_EVAL_VIEWPORT")
    with open(path) as f:
        return np.array([[float(x) for x in line.split()[1:4]] for line in f if line.startswith("v ")],
                        dtype=np.float32)


def half_skinned(out):
    scene = empty_scene()
    rig = armature("Armature", [("Bone", None, (0, 0, 0), (0, 0, 1))])
    rig.location = (1.0, 0.5, 0.25)
    rig.rotation_euler = Euler((0, 0, math.radians(30)))
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=8, y_subdivisions=8, size=2.0)
    plane = bpy.context.active_object
    plane.name = "Plane"
    plane.parent = rig  # identity parent inverse: its transform is relative to the armature's
    plane.location = (0.4, -0.3, 0.6)
    plane.rotation_euler = Euler((math.radians(25), math.radians(-10), math.radians(15)))
    plane.scale = (1.5, 1.5, 1.5)
    group = plane.vertex_groups.new(name="Bone")
    group.add([v.index for v in plane.data.vertices if v.co.x > 1e-6], 1.0, "REPLACE")
    plane.modifiers.new("Armature", "ARMATURE").object = rig
    # The bone bends. (Blender's exporter writes a mesh parented to an armature as a top-level node
    # at its world, unkeyed: keying the armature object would move the mesh in Blender, not in the FBX.)
    for frame, euler in ((1, (0, 0, 0)), (10, (50, 20, 0)), (20, (-30, 0, 40))):
        key_rotation(rig, "Bone", frame, euler)
    scene.frame_set(1)
    bpy.ops.export_scene.fbx(filepath=os.path.join(out, "half_skinned.fbx"), **FBX_OPTIONS)
    posed = {f"Scene@{frame}": obj_vertices(scene, frame) for frame in (1, 8, 15)}
    np.savez(os.path.join(out, "half_skinned.posed.npz"), **posed)


HUMANIK = [  # (name without the prefix, parent, head, tail) in metres, +Z up, facing -Y
    ("Hips", None, (0, 0, 1.0), (0, 0, 1.1)),
    ("Spine", "Hips", (0, 0, 1.1), (0, 0, 1.25)),
    ("Spine1", "Spine", (0, 0, 1.25), (0, 0, 1.45)),
    ("Neck", "Spine1", (0, 0, 1.45), (0, 0, 1.55)),
    ("Head", "Neck", (0, 0, 1.55), (0, 0, 1.75)),
]
for side, x in (("Left", 1), ("Right", -1)):
    HUMANIK += [
        (f"{side}Shoulder", "Spine1", (0.05 * x, 0, 1.42), (0.18 * x, 0, 1.42)),
        (f"{side}Arm", f"{side}Shoulder", (0.18 * x, 0, 1.42), (0.45 * x, 0, 1.42)),
        (f"{side}ForeArm", f"{side}Arm", (0.45 * x, 0, 1.42), (0.7 * x, 0, 1.42)),
        (f"{side}Hand", f"{side}ForeArm", (0.7 * x, 0, 1.42), (0.8 * x, 0, 1.42)),
        (f"{side}UpLeg", "Hips", (0.1 * x, 0, 0.95), (0.1 * x, 0, 0.5)),
        (f"{side}Leg", f"{side}UpLeg", (0.1 * x, 0, 0.5), (0.1 * x, 0, 0.08)),
        (f"{side}Foot", f"{side}Leg", (0.1 * x, 0, 0.08), (0.1 * x, -0.15, 0.0)),
    ]


def humanik_motion(out):
    scene = empty_scene()
    bones = [(f"Character1_{n}", None if p is None else f"Character1_{p}", h, t) for n, p, h, t in HUMANIK]
    rig = armature("Character1_Reference", bones)
    for frame, swing in ((1, 0), (10, 35), (20, -35)):
        for side, sign in (("Left", 1), ("Right", -1)):
            key_rotation(rig, f"Character1_{side}UpLeg", frame, (swing * sign, 0, 0))
            key_rotation(rig, f"Character1_{side}Leg", frame, (max(0, -swing * sign), 0, 0))
            key_rotation(rig, f"Character1_{side}Arm", frame, (-swing * sign, 0, -60 * sign))
        hips = rig.pose.bones["Character1_Hips"]
        hips.location = (0, 0.4 * (frame - 1) / 19, 0)  # the bone's own axes: its Y runs up (+Z)
        hips.keyframe_insert("location", frame=frame)
    scene.frame_set(1)
    bpy.ops.export_scene.fbx(filepath=os.path.join(out, "humanik_motion.fbx"), **FBX_OPTIONS)
    heads = {}
    for frame in (1, 10, 20):
        scene.frame_set(frame)
        bpy.context.view_layer.update()
        for pose in rig.pose.bones:
            world = BLENDER_TO_OBJ @ rig.matrix_world @ pose.head.to_4d()
            heads[f"{pose.name}@{frame}"] = np.array(world[:3], dtype=np.float32)
    np.savez(os.path.join(out, "humanik_motion.joints.npz"), **heads)


def main():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "fbx"))
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    half_skinned(args.out)
    humanik_motion(args.out)


main()
