"""Bone's Space API, directly: a worked example, Babylon's quirks one by one, bad input, linked
bones, the one-update rule and the getters' cost. (The numbers against Babylon.js itself are
in test_space_babylon.py.)"""

import math
import timeit

import numpy as np
import pytest

from viewer import Bone, Skeleton, SkinnedMesh, Space, TransformNode, ViewerError
from viewer.model import transforms
from viewer.model.batch import BoneBatch

DEG = math.pi / 180


def axis_quaternion(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return np.append(axis * math.sin(angle / 2), math.cos(angle / 2))


def trs(position=(0, 0, 0), quaternion=(0, 0, 0, 1), scaling=(1, 1, 1)):
    return transforms.compose(scaling, quaternion, position)


def rz(angle):
    return trs(quaternion=axis_quaternion([0, 0, 1], angle))[:3, :3]


def docs_character(linked=False):
    """The seed's character: a body, and arms bound at the shoulders turned +-30 degrees about Z."""
    skeleton = Skeleton("character")
    body = Bone("body", skeleton)
    left = Bone("leftArm", skeleton, body, local_matrix=trs((0.5, 1.5, 0), axis_quaternion([0, 0, 1], 30 * DEG)))
    right = Bone("rightArm", skeleton, body, local_matrix=trs((-0.5, 1.5, 0), axis_quaternion([0, 0, 1], -30 * DEG)))
    if linked:
        for bone in skeleton.bones:
            node = TransformNode(bone.name + "_joint")
            node.set_local_matrix(bone.get_local_matrix())
            bone.link_transform_node(node)
    skeleton.prepare()
    return skeleton, body, left, right


def mesh_node():
    """A mesh moved up by 1 and turned 90 degrees about Y (which takes +X to -Z)."""
    node = TransformNode("mesh")
    node.set_trs((0, 1, 0), axis_quaternion([0, 1, 0], 90 * DEG), (1, 1, 1))
    return node


# --- a worked example ------------------------------------------------------------------------------
@pytest.mark.parametrize("linked", [False, True], ids=["bones", "linked-nodes"])
def test_worked_example_the_docs_character_in_the_world(linked):
    skeleton, body, left, right = docs_character(linked)
    mesh = mesh_node()
    np.testing.assert_allclose(left.get_position(Space.WORLD), [0.5, 1.5, 0], atol=1e-12)
    # the shoulder, placed by the mesh: (0.5, 1.5, 0) turned to (0, 1.5, -0.5), moved up by 1
    np.testing.assert_allclose(left.get_absolute_position(mesh), [0, 2.5, -0.5], atol=1e-12)
    np.testing.assert_allclose(left.get_position(Space.BONE, mesh), [0, 2.5, -0.5], atol=1e-12)
    # the seed's numbers: bound at 30 degrees, posed at 75, so the final matrix turns by 45
    left.set_axis_angle([0, 0, 2], 75 * DEG)
    np.testing.assert_allclose(left.get_direction([1, 0, 0]), [math.cos(75 * DEG), math.sin(75 * DEG), 0], atol=1e-12)
    np.testing.assert_allclose(left.get_final_matrix()[:3, :3], rz(45 * DEG), atol=1e-12)
    np.testing.assert_allclose(left.get_rotation(), [0, 0, 75 * DEG], atol=1e-12)
    # the hand, one unit along the arm, and back
    hand = left.get_absolute_position_from_local([1, 0, 0], mesh)
    np.testing.assert_allclose(left.get_local_position_from_absolute(hand, mesh), [1, 0, 0], atol=1e-12)
    # put the right shoulder at a world point, and turn the whole body a quarter about world Y
    right.set_absolute_position([0, 3, 0], mesh)
    np.testing.assert_allclose(right.get_absolute_position(mesh), [0, 3, 0], atol=1e-12)
    # the arm's Z: +Z in the skeleton, turned to +X by the mesh, then to -Z by the body's turn
    np.testing.assert_allclose(left.get_direction([0, 0, 1], mesh), [1, 0, 0], atol=1e-12)
    body.rotate([0, 1, 0], 90 * DEG, Space.WORLD, mesh)
    np.testing.assert_allclose(left.get_direction([0, 0, 1], mesh), [0, 0, -1], atol=1e-12)
    skeleton.prepare()
    np.testing.assert_allclose(left.get_direction([0, 0, 1], mesh), [0, 0, -1], atol=1e-12)


# --- Babylon's quirks, kept -----------------------------------------------------------------------
def test_rotate_in_local_space_turns_about_an_axis_of_the_parents_frame():
    skeleton, body, left, _ = docs_character()
    before = left.get_local_matrix()[:3, :3].copy()
    turn = trs(quaternion=axis_quaternion([1, 0, 0], 0.4))[:3, :3]
    left.rotate([1, 0, 0], 0.4)                      # Space.LOCAL: local @ R, R about the parent's X
    np.testing.assert_allclose(left.get_local_matrix()[:3, :3], before @ turn, atol=1e-12)
    assert not np.allclose(before @ turn, turn @ before, atol=1e-3)
    left.rotate([1, 0, 0], -0.4, Space.BONE)         # BONE is LOCAL for rotate
    np.testing.assert_allclose(left.get_local_matrix()[:3, :3], before, atol=1e-12)
    np.testing.assert_allclose(left.get_position(), [0.5, 1.5, 0], atol=1e-12)


def test_getters_treat_bone_space_as_world():
    _, _, left, _ = docs_character()
    mesh = mesh_node()
    for getter in (left.get_position, left.get_rotation, left.get_rotation_quaternion, left.get_rotation_matrix):
        np.testing.assert_allclose(getter(Space.BONE, mesh), getter(Space.WORLD, mesh), atol=1e-15)


def test_world_rotation_setters_drop_the_bones_scale_and_keep_its_position():
    skeleton = Skeleton("s")
    root = Bone("root", skeleton, local_matrix=trs((1, 2, 3), axis_quaternion([0, 1, 0], 0.3), (2, 2, 2)))
    child = Bone("child", skeleton, root, local_matrix=trs((0, 1, 0), scaling=(1.5, 1.5, 1.5)))
    q = axis_quaternion([1, 1, 0], 0.7)
    child.set_rotation_quaternion(q, Space.WORLD)
    np.testing.assert_allclose(child.get_absolute_matrix()[:3, :3], trs(quaternion=q)[:3, :3], atol=1e-12)
    np.testing.assert_allclose(child.get_scale(), [0.5, 0.5, 0.5], atol=1e-12)  # the parent's 2 undone
    np.testing.assert_allclose(child.get_position(), [0, 1, 0], atol=1e-12)
    # a tnode's own scaling stays in the world rotation (Babylon reads tNode.scaling)
    node = TransformNode("mesh")
    node.scaling = (3, 3, 3)
    root.set_rotation_quaternion(q, Space.WORLD, node)
    np.testing.assert_allclose(root.get_absolute_matrix()[:3, :3] @ node.get_world_matrix()[:3, :3],
                               3 * trs(quaternion=q)[:3, :3], atol=1e-12)
    np.testing.assert_allclose(root.get_scale(), [1, 1, 1], atol=1e-12)


def test_rotation_setters_treat_bone_space_as_world():
    mesh = mesh_node()
    results = []
    for space in (Space.WORLD, Space.BONE):
        _, _, left, _ = docs_character()
        left.set_yaw_pitch_roll(0.3, -0.2, 0.9, space, mesh)
        results.append(left.get_local_matrix().copy())
    np.testing.assert_allclose(results[0], results[1], atol=1e-15)


def test_set_position_in_world_space_ignores_the_tnode_for_a_root():
    _, body, _, _ = docs_character()
    body.set_position([1, 2, 3], Space.WORLD, mesh_node())
    np.testing.assert_allclose(body.get_position(), [1, 2, 3], atol=1e-15)


def test_translate_in_world_space_moves_by_a_world_vector():
    _, body, left, _ = docs_character()
    mesh = mesh_node()
    body.set_scale([2, 2, 2])
    before = left.get_absolute_position(mesh)
    left.translate([0, 0, -1], Space.WORLD, mesh)
    np.testing.assert_allclose(left.get_absolute_position(mesh), before + [0, 0, -1], atol=1e-12)


def test_scale_keeps_the_children_in_place():
    _, body, left, right = docs_character()
    before = [left.get_absolute_position(), right.get_absolute_position()]
    body.scale(2, 2, 2)
    np.testing.assert_allclose(body.get_scale(), [2, 2, 2], atol=1e-12)
    np.testing.assert_allclose(left.get_scale(), [0.5, 0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose([left.get_absolute_position(), right.get_absolute_position()],
                               [2 * before[0], 2 * before[1]], atol=1e-12)
    body.scale(0.5, 0.5, 0.5, scale_children=True)
    np.testing.assert_allclose(left.get_scale(), [0.5, 0.5, 0.5], atol=1e-12)


def test_tnode_forms_agree():
    node = mesh_node()
    placed = TransformNode("placement")
    placed.set_trs(node.position, node.rotation_quaternion, node.scaling)
    mesh = SkinnedMesh("m", np.zeros((3, 3)), [0, 1, 2], None, world_node=placed)
    _, _, left, _ = docs_character()
    world = node.get_world_matrix()
    expected = left.get_absolute_position(node)
    for tnode in (world, world.tolist(), mesh):
        np.testing.assert_allclose(left.get_absolute_position(tnode), expected, atol=1e-12)
    np.testing.assert_allclose(left.get_absolute_position(None), left.get_absolute_position(np.eye(4)), atol=0)


# --- bad input ------------------------------------------------------------------------------------
BAD_CALLS = {
    "zero axis (rotate)": lambda b: b.rotate([0, 0, 0], 1.0),
    "zero axis (set_axis_angle)": lambda b: b.set_axis_angle([0, 0, 0], 1.0, Space.WORLD),
    "zero axis (get_direction)": lambda b: b.get_direction([0, 0, 0]),
    "NaN position": lambda b: b.set_position([math.nan, 0, 0], Space.WORLD),
    "NaN angle": lambda b: b.rotate([0, 1, 0], math.nan, Space.WORLD),
    "NaN yaw": lambda b: b.set_yaw_pitch_roll(math.nan, 0, 0),
    "infinite scale": lambda b: b.scale(math.inf, 1, 1),
    "zero scale factor": lambda b: b.scale(0, 1, 1),
    "wrong shape position": lambda b: b.translate([1, 2]),
    "wrong shape matrix": lambda b: b.set_rotation_matrix(np.eye(2), Space.WORLD),
    "zero quaternion": lambda b: b.set_rotation_quaternion([0, 0, 0, 0], Space.WORLD),
    "unknown space": lambda b: b.set_position([1, 2, 3], 7),
    "space as a string": lambda b: b.get_position("world"),
    "bad tnode": lambda b: b.set_absolute_position([1, 2, 3], tnode="mesh"),
    "NaN tnode": lambda b: b.set_rotation([0, 1, 0], Space.WORLD, np.full((4, 4), math.nan)),
    "text angle": lambda b: b.set_axis_angle([0, 1, 0], "a lot"),
    "NaN scale": lambda b: b.set_scale([1, math.nan, 1]),
}


def pose_of(skeleton):
    skeleton.prepare()
    state = [bone.get_local_matrix().copy() for bone in skeleton.bones]
    nodes = [bone.get_transform_node() for bone in skeleton.bones]
    state += [np.concatenate([n.position, n.rotation_quaternion, n.scaling]) for n in nodes if n is not None]
    return state


@pytest.mark.parametrize("linked", [False, True], ids=["bones", "linked-nodes"])
@pytest.mark.parametrize("label", list(BAD_CALLS))
def test_bad_input_names_the_bone_and_leaves_the_pose(label, linked):
    skeleton, _, left, _ = docs_character(linked)
    before = pose_of(skeleton)
    with pytest.raises(ViewerError, match="leftArm"):
        BAD_CALLS[label](left)
    for a, b in zip(before, pose_of(skeleton)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("linked", [False, True], ids=["bones", "linked-nodes"])
def test_a_singular_parent_is_an_error_not_a_silent_no_op(linked):
    skeleton, body, left, _ = docs_character(linked)
    body.set_scale([0, 0, 0])
    before = pose_of(skeleton)
    for call in (lambda: left.set_position([1, 2, 3], Space.WORLD),
                 lambda: left.set_rotation_quaternion([0, 0, 0, 1], Space.WORLD),
                 lambda: left.rotate([0, 0, 1], 1.0, Space.WORLD),
                 lambda: left.get_local_position_from_absolute([0, 0, 0])):
        with pytest.raises(ViewerError, match="leftArm.*singular"):
            call()
    for a, b in zip(before, pose_of(skeleton)):
        np.testing.assert_array_equal(a, b)


# --- linked bones ---------------------------------------------------------------------------------
def test_a_linked_bone_is_posed_through_its_node_and_getters_see_it_at_once():
    skeleton, body, left, _ = docs_character(linked=True)
    node = left.get_transform_node()
    left.set_absolute_position([0, 3, 0])
    np.testing.assert_allclose(node.position, left.get_position(), atol=1e-12)
    np.testing.assert_allclose(left.get_absolute_position(), [0, 3, 0], atol=1e-12)  # no prepare() needed
    np.testing.assert_allclose(left.get_absolute_matrix()[3, :3], [0, 3, 0], atol=1e-12)
    skeleton.prepare()                                       # and prepare() keeps it (the node holds it)
    np.testing.assert_allclose(left.get_absolute_position(), [0, 3, 0], atol=1e-12)
    node.position = (0.5, 1.5, 0)                            # an edit of the node itself is seen too
    np.testing.assert_allclose(left.get_position(), [0.5, 1.5, 0], atol=1e-12)
    body.get_pose_target().position = (0, 1, 0)
    np.testing.assert_allclose(left.get_absolute_position(), [0.5, 2.5, 0], atol=1e-12)


# --- the one-update rule, and the cost of a getter ---------------------------------------------------
CALLS = {
    "get_position": lambda b, t: b.get_position(Space.WORLD, t),
    "get_absolute_position": lambda b, t: b.get_absolute_position(t),
    "get_rotation": lambda b, t: b.get_rotation(Space.WORLD, t),
    "get_rotation_quaternion": lambda b, t: b.get_rotation_quaternion(Space.WORLD, t),
    "get_rotation_matrix": lambda b, t: b.get_rotation_matrix(Space.WORLD, t),
    "get_direction": lambda b, t: b.get_direction([0, 1, 0], t),
    "get_absolute_position_from_local": lambda b, t: b.get_absolute_position_from_local([1, 0, 0], t),
    "get_local_position_from_absolute": lambda b, t: b.get_local_position_from_absolute([1, 0, 0], t),
    "get_scale": lambda b, t: b.get_scale(),
    "set_position": lambda b, t: b.set_position([1, 0, 0], Space.WORLD, t),
    "set_absolute_position": lambda b, t: b.set_absolute_position([1, 0, 0], t),
    "translate": lambda b, t: b.translate([1, 0, 0], Space.WORLD, t),
    "set_rotation": lambda b, t: b.set_rotation([0.1, 0.2, 0.3], Space.WORLD, t),
    "set_rotation_quaternion": lambda b, t: b.set_rotation_quaternion([0, 0, 0, 1], Space.WORLD, t),
    "set_rotation_matrix": lambda b, t: b.set_rotation_matrix(np.eye(4), Space.WORLD, t),
    "set_yaw_pitch_roll": lambda b, t: b.set_yaw_pitch_roll(0.1, 0.2, 0.3, Space.WORLD, t),
    "rotate": lambda b, t: b.rotate([0, 0, 1], 0.5, Space.WORLD, t),
    "set_axis_angle": lambda b, t: b.set_axis_angle([0, 0, 1], 0.5, Space.WORLD, t),
    "scale": lambda b, t: b.scale(2, 1, 1, True),
    "set_scale": lambda b, t: b.set_scale([2, 2, 2]),
    "get_position (local)": lambda b, t: b.get_position(Space.LOCAL, t),
    "set_position (local)": lambda b, t: b.set_position([1, 0, 0], Space.LOCAL, t),
}


@pytest.mark.parametrize("linked", [False, True], ids=["bones", "linked-nodes"])
@pytest.mark.parametrize("name", list(CALLS))
def test_one_skeleton_update_per_call_at_most(name, linked, monkeypatch):
    skeleton, body, left, _ = docs_character(linked)
    body.get_pose_target().position = (0, 0.5, 0)    # the skeleton is dirty
    updates = []
    original = BoneBatch.update
    monkeypatch.setattr(BoneBatch, "update", lambda batch: (updates.append(1), original(batch))[1])
    CALLS[name](left, mesh_node())
    assert len(updates) <= 1, f"{name} ran {len(updates)} skeleton updates"


def test_a_world_getter_on_a_clean_skeleton_costs_microseconds():
    skeleton = Skeleton("chain")
    bones = [Bone("b0", skeleton)]
    for i in range(1, 40):
        bones.append(Bone(f"b{i}", skeleton, bones[-1], local_matrix=trs((0, 1, 0))))
    skeleton.prepare()
    bone = bones[20]
    number = 500
    best = min(timeit.repeat(lambda: bone.get_position(Space.WORLD), number=number, repeat=5)) / number
    # A guard against recomputing the skeleton on a clean read (that costs milliseconds): about 4 us here.
    assert best < 100e-6, f"get_position(Space.WORLD) took {best * 1e6:.1f} us"
