"""Blender script: tests/data/fbx/riggedfigure_bound_lying.fbx, a character bound lying down and
posed standing, as a Maya-written game character can be (its skin's bind pose, the clusters'
TransformLink, is not the pose its joints are in when the file is saved), with Maya's axes and
units (Y up, centimetres) and bones whose local rest rotations are not the identity.

    PYTHONHASHSEED=0 blender -b --factory-startup --python-exit-code 1 \
        --python tests/fbx_blender/make_bound_lying.py

RiggedFigure.gltf is imported (importer defaults); in edit mode every bone and every vertex is
turned -90 degrees about Blender's X (the figure lies on its back, bound so: the armature's rest
is the skin's bind); in pose mode the root bone is turned back +90 degrees about X, so the figure
stands as RiggedFigure does and is drawn standing, and its upper arms are lowered 40 degrees
from the bind's T-pose; its action is removed (no animation). Exported
as binary FBX with Y up, forward -Z, centimetres (UnitScaleFactor 1 and x100 on the roots, the
exporter's default), primary bone axis X (Maya's joints point along X), no leaf bones, no
animation baked.
"""
import math
import os

import numpy

numpy.bool = bool  # Blender 3.4's glTF importer still calls numpy.bool (removed in numpy 1.24)

import bpy
from mathutils import Matrix

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(ROOT, "tests", "data", "gltf-samples", "RiggedFigure", "RiggedFigure.gltf")
OUT = os.path.join(ROOT, "tests", "data", "fbx", "riggedfigure_bound_lying.fbx")

bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=SOURCE)
arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
if arm.animation_data:
    arm.animation_data_clear()
for o in bpy.context.scene.objects:
    if o.animation_data:
        o.animation_data_clear()
lie = Matrix.Rotation(math.radians(-90.0), 4, "X")
# The armature's rest (the skin's bind) lying on its back, in the armature's space.
bpy.context.view_layer.objects.active = arm
bpy.ops.object.mode_set(mode="EDIT")
for bone in arm.data.edit_bones:
    bone.transform(lie)
bpy.ops.object.mode_set(mode="OBJECT")
# The meshes' vertices lying the same way, in the armature's space (so the skin binds them lying).
for mesh in meshes:
    to_arm = arm.matrix_world.inverted() @ mesh.matrix_world
    mesh.data.transform(to_arm.inverted() @ lie @ to_arm)
    mesh.data.update()
# Posed standing: the root bone (the one without a parent) turned back about the armature's origin.
bpy.ops.object.mode_set(mode="POSE")
roots = [b for b in arm.pose.bones if b.parent is None]
for pose_bone in roots:
    rest = pose_bone.bone.matrix_local  # armature space
    stand = lie.inverted() @ rest
    pose_bone.matrix_basis = rest.inverted() @ stand
# The arms lowered from the bind's T-pose, about their own joints (a Maya character saved in
# another pose than it was bound in).
for side, angle in (("L", -40.0), ("R", 40.0)):
    pose_bone = arm.pose.bones[f"arm_joint_{side}_1"]
    pose_bone.rotation_mode = "XYZ"
    pose_bone.rotation_euler = (0.0, 0.0, math.radians(angle))
bpy.ops.object.mode_set(mode="OBJECT")
bpy.context.view_layer.update()

bpy.ops.export_scene.fbx(filepath=OUT, axis_forward="-Z", axis_up="Y", primary_bone_axis="X",
                         secondary_bone_axis="Y", add_leaf_bones=False, bake_anim=False, path_mode="STRIP")
print("wrote", OUT)
