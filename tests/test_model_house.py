"""The model's house rules: one rule for where a linked bone's pose lives, and no object
reaching into another's private fields (the batch engine is the bones' only storage)."""

import ast
from pathlib import Path

import numpy as np

from samples import SAMPLES_DIR
from viewer import Bone, Skeleton, TransformNode, load_gltf
from viewer.model.transforms import quaternion_from_yaw_pitch_roll

VIEWER = Path(__file__).resolve().parents[1] / "viewer"


def test_pose_target_is_the_linked_node_or_the_bone():
    skeleton = Skeleton("s")
    free = Bone("free", skeleton)
    linked = Bone("linked", skeleton, free)
    node = TransformNode("joint")
    linked.link_transform_node(node)
    assert free.get_pose_target() is free
    assert linked.get_pose_target() is node


def test_a_pose_written_to_a_gltf_bones_target_survives_prepare():
    scene = load_gltf(SAMPLES_DIR / "CesiumMan" / "CesiumMan.glb")
    skeleton = scene.skeletons[0]
    bone = skeleton.bones[3]
    before = bone.get_final_matrix().copy()
    quaternion = quaternion_from_yaw_pitch_roll([0.0, 0.0, 0.7])
    bone.get_pose_target().rotation_quaternion = quaternion
    skeleton.prepare()
    np.testing.assert_allclose(bone.rotation_quaternion, quaternion, atol=1e-12)
    assert not np.allclose(bone.get_final_matrix(), before, atol=1e-3)
    # Written to the bone itself, a linked bone's pose is its node's again after prepare (Babylon).
    bone.rotation_quaternion = [0.0, 0.0, 0.0, 1.0]
    skeleton.prepare()
    np.testing.assert_allclose(bone.rotation_quaternion, quaternion, atol=1e-12)


def test_set_pose_writes_linked_bones_into_their_nodes():
    scene = load_gltf(SAMPLES_DIR / "Fox" / "Fox.glb")
    skeleton = scene.skeletons[0]
    n = len(skeleton.bones)
    rotations = np.tile(quaternion_from_yaw_pitch_roll([0.3, 0.0, 0.0]), (n, 1))
    skeleton.set_pose(rotation_quaternions=rotations)
    skeleton.prepare()
    for bone in skeleton.bones:
        if bone.get_index() >= 0:
            np.testing.assert_allclose(bone.get_pose_target().rotation_quaternion, rotations[0], atol=1e-12)


def private_accesses(root: Path) -> list[str]:
    """``x._name`` where x is not self or cls, in every module under root."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_model_touches_no_other_objects_private_fields():
    assert private_accesses(VIEWER / "model") == []
