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


def test_set_pose_into_shared_nodes_leaves_what_one_bone_after_another_would():
    """Nodes written in one copy per table: a node two bones share gets the later row's pose (as
    the per-bone writes did), and a node two skins share drives both (RobotExpressive)."""
    skeleton = Skeleton("s")
    root = Bone("root", skeleton)
    child = Bone("child", skeleton, root)
    node = TransformNode("joint")
    root.link_transform_node(node)
    child.link_transform_node(node)
    skeleton.prepare()
    rotations = np.array([quaternion_from_yaw_pitch_roll([0.3, 0.0, 0.0]), quaternion_from_yaw_pitch_roll([0.0, 0.5, 0.0])])
    version = node.version
    skeleton.set_pose(rotation_quaternions=rotations, positions=[[1.0, 0, 0], [0, 2.0, 0]])
    assert node.version > version
    np.testing.assert_allclose(node.rotation_quaternion, rotations[1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(node.position, [0, 2.0, 0], rtol=0, atol=1e-15)

    scene = load_gltf(SAMPLES_DIR / "RobotExpressive" / "RobotExpressive.glb")
    first, second = scene.skeletons
    n = len(first.bones)
    rng = np.random.default_rng(4)
    poses = rng.normal(size=(2, n, 4))
    poses /= np.linalg.norm(poses, axis=2, keepdims=True)
    first.set_pose(rotation_quaternions=poses[0])
    second.set_pose(rotation_quaternions=poses[1])
    scene.prepare()
    for skeleton in (first, second):  # the same nodes: the second skin's pose (rows in bone index order), in both
        np.testing.assert_allclose([bone.rotation_quaternion for bone in skeleton.bones],
                                   [poses[1][bone.get_index()] for bone in second.bones], rtol=0, atol=1e-12)
    np.testing.assert_allclose(first.get_transform_matrices(), second.get_transform_matrices(), rtol=0, atol=1e-6)


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
