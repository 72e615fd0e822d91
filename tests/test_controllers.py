"""BoneIKController and BoneLookController, directly: what they achieve, their limits, their
errors and their cost. (tests/test_controllers_babylon.py holds them to Babylon's numbers.)"""

import math

import numpy as np
import pytest

from samples import ROBOT, SAMPLES_DIR
from viewer import Bone, BoneIKController, BoneLookController, Skeleton, Space, TransformNode, ViewerError, load_gltf
from viewer.model import batch as batch_module
from viewer.model.transforms import compose, quaternion_from_yaw_pitch_roll

RNG = np.random.default_rng(12)


def local(euler=(0.0, 0.0, 0.0), position=(0.0, 0.0, 0.0), scaling=(1.0, 1.0, 1.0)):
    return compose(scaling, quaternion_from_yaw_pitch_roll(euler), position)


def arm(axis="y", lengths=(1.0, 2.0, 1.5), scale=1.0):
    """root -> upper -> lower -> hand, each bone offset along its parent's +Y (or +X)."""
    offset = (lambda l: (l, 0.0, 0.0)) if axis == "x" else (lambda l: (0.0, l, 0.0))
    skeleton = Skeleton("arm")
    root = Bone("root", skeleton, local_matrix=local(RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3), [scale] * 3))
    upper = Bone("upper", skeleton, root, local_matrix=local(RNG.uniform(-1, 1, 3), offset(lengths[0])))
    lower = Bone("lower", skeleton, upper, local_matrix=local(RNG.uniform(-1, 1, 3), offset(lengths[1])))
    hand = Bone("hand", skeleton, lower, local_matrix=local((0.0, 0.0, 0.0), offset(lengths[2])))
    return skeleton, root, upper, lower, hand


def mesh_node(scale=1.3):
    node = TransformNode("mesh")
    node.set_trs([0.5, -1.0, 2.0], quaternion_from_yaw_pitch_roll([0.4, -0.3, 1.1]), [scale] * 3)
    return node


def locals_of(skeleton):
    return [bone.get_local_matrix().copy() for bone in skeleton.bones]


def unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def off_line(point, origin, direction):
    """The part of point - origin perpendicular to the line through origin along direction."""
    p = np.asarray(point) - origin
    return p - np.dot(p, direction) * direction


# --- IK: reaching -------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", ["x", "y"])
@pytest.mark.parametrize("tnode_kind", ["none", "node", "matrix"])
def test_ik_end_reaches_a_reachable_target(axis, tnode_kind):
    node = mesh_node()
    tnode = {"none": None, "node": node, "matrix": node.get_world_matrix()}[tnode_kind]
    scale = 1.0 if tnode is None else 1.3
    for trial in range(6):
        skeleton, _, upper, lower, hand = arm(axis)
        reach = (2.0 + 1.5) * scale
        origin = upper.get_absolute_position(tnode)
        target = origin + unit(RNG.normal(size=3)) * reach * RNG.uniform(0.2, 0.95)
        controller = BoneIKController(tnode, lower, target_position=target)
        controller.update()
        error = np.linalg.norm(hand.get_absolute_position(tnode) - target)
        assert error < 1e-4 * reach, (trial, error)


def test_ik_unreachable_target_straightens_the_chain_toward_it():
    skeleton, _, upper, lower, hand = arm()
    origin = upper.get_absolute_position()
    direction = unit([1.0, -2.0, 0.5])
    controller = BoneIKController(None, lower, target_position=origin + direction * 10.0)
    controller.update()
    assert controller.max_reach == pytest.approx(3.5)
    np.testing.assert_allclose(lower.get_absolute_position(), origin + direction * 2.0, atol=1e-6)
    np.testing.assert_allclose(hand.get_absolute_position(), origin + direction * 3.5, atol=1e-6)


def test_ik_max_angle_limits_the_reach():
    skeleton, _, upper, lower, hand = arm()
    origin = upper.get_absolute_position()
    direction = unit([0.3, 1.0, -0.2])
    controller = BoneIKController(None, lower, target_position=origin + direction * 10.0, max_angle=math.pi / 2)
    controller.update()
    assert controller.max_reach == pytest.approx(math.hypot(2.0, 1.5))
    np.testing.assert_allclose(hand.get_absolute_position(), origin + direction * math.hypot(2.0, 1.5), atol=1e-6)
    controller.max_angle = 7.0
    assert controller.max_angle == math.pi  # clamped, as Babylon's setter


@pytest.mark.parametrize("axis, pole_angle", [("y", math.pi), ("x", 0.0)])
def test_ik_elbow_bends_toward_the_pole(axis, pole_angle):
    """Babylon's convention: for +X arms the elbow points at the pole; for +Y chains it points
    away unless pole_angle is pi (as Babylon's own IK example sets it)."""
    for trial in range(6):
        skeleton, _, upper, lower, hand = arm(axis)
        origin = upper.get_absolute_position()
        target = origin + unit(RNG.normal(size=3)) * 2.5
        pole = origin + RNG.normal(size=3) * 3.0
        controller = BoneIKController(None, lower, target_position=target, pole_target_position=pole,
                                      pole_angle=pole_angle)
        controller.update()
        direction = unit(target - origin)
        elbow = off_line(lower.get_absolute_position(), origin, direction)
        side = off_line(pole, origin, direction)
        assert np.dot(unit(elbow), unit(side)) > 1 - 1e-9
        assert np.linalg.norm(hand.get_absolute_position() - target) < 1e-9


def test_ik_default_pole_is_the_upper_bones_parent():
    skeleton, root, upper, lower, hand = arm()
    assert BoneIKController(None, lower).pole_target_bone is root
    assert BoneIKController(None, lower, pole_target_position=(1, 2, 3)).pole_target_bone is None
    hand.length = 1.0
    assert BoneIKController(None, hand).pole_target_bone is upper


def test_ik_slerp_eases_toward_the_target():
    skeleton, _, upper, lower, hand = arm()
    origin = upper.get_absolute_position()
    target = origin + unit([1.0, 0.2, 0.3]) * 2.5
    controller = BoneIKController(None, lower, target_position=target, slerp_amount=0.5)
    distances = []
    for _ in range(30):
        controller.update()
        distances.append(np.linalg.norm(hand.get_absolute_position() - target))
    assert distances[0] > 1e-2 and distances[-1] < 1e-6
    assert all(b <= a + 1e-12 for a, b in zip(distances[3:], distances[4:]))


def test_ik_on_a_gltf_character_moves_linked_nodes():
    """RobotExpressive's bones point along +Y, as Babylon's IK expects: the hand reaches."""
    scene = load_gltf(ROBOT)
    mesh = scene.skinned_meshes[0]
    skeleton = mesh.skeleton
    lower = skeleton.get_bone("LowerArm.L")
    upper, end = lower.get_parent(), lower.children[0]
    assert lower.get_transform_node() is not None
    origin = upper.get_absolute_position(mesh)
    controller = BoneIKController(mesh, lower, pole_target_bone=skeleton.get_bone("PoleTarget.L"),
                                  pole_angle=math.pi)
    reach = sum(controller.lengths)
    node_before = lower.get_pose_target().rotation_quaternion.copy()
    for direction in ([0.2, 1.0, 0.5], [1.0, -0.3, 0.6], [0.4, 0.1, 1.0]):
        controller.target_position = origin + unit(direction) * 0.8 * reach
        controller.update()
        skeleton.prepare()
        assert np.linalg.norm(end.get_absolute_position(mesh) - controller.target_position) < 1e-4 * reach
    assert not np.allclose(lower.get_pose_target().rotation_quaternion, node_before)


# --- look-at -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("tnode_kind", ["none", "node", "matrix"])
def test_look_at_points_the_bone_at_the_target(tnode_kind):
    node = mesh_node()
    tnode = {"none": None, "node": node, "matrix": node.get_world_matrix()}[tnode_kind]
    skeleton, _, upper, lower, hand = arm()
    for bone in (upper, lower, hand):
        for trial in range(4):
            target = bone.get_absolute_position(tnode) + RNG.normal(size=3) * 2.0
            controller = BoneLookController(tnode, bone, target, up_axis_space=Space.WORLD)
            scaling = bone.get_scale().copy()
            controller.update()
            forward = bone.get_direction((0, 0, 1), tnode)
            np.testing.assert_allclose(forward, unit(target - bone.get_absolute_position(tnode)), atol=1e-9)
            assert bone.get_direction((0, 1, 0), tnode)[1] > 0  # up stays up
            np.testing.assert_allclose(bone.get_scale(), scaling, atol=1e-12)


def test_look_at_custom_axes_point_the_yaw_and_pitch_axes():
    skeleton, _, upper, lower, hand = arm()
    target = lower.get_absolute_position() + np.array([0.5, 0.3, -2.0])
    controller = BoneLookController(None, lower, target, yaw_axis=(0, 0, 1), pitch_axis=(1, 0, 0),
                                    up_axis=(0, 0, 1), up_axis_space=Space.WORLD)
    controller.update()
    # yaw about the bone's Z, pitch about its X: the remaining axis, -Y, faces the target
    np.testing.assert_allclose(lower.get_direction((0, -1, 0)), unit(target - lower.get_absolute_position()),
                               atol=1e-9)


def yaw_pitch_in_parent(bone, target_forward=(0, 0, 1)):
    parent_rotation = bone.get_parent().get_rotation_matrix(Space.WORLD)[:3, :3]
    forward = bone.get_direction(target_forward) @ parent_rotation.T
    return math.atan2(forward[0], forward[2]), math.atan2(forward[1], math.hypot(forward[0], forward[2]))


def test_look_at_limits_hold():
    skeleton, _, upper, lower, hand = arm()
    limits = dict(min_yaw=-0.5, max_yaw=0.7, min_pitch=-0.3, max_pitch=0.4)
    controller = BoneLookController(None, lower, (0, 0, 0), up_axis_space=Space.BONE, **limits)
    inside = clamped = 0
    for trial in range(40):
        controller.target = lower.get_absolute_position() + RNG.normal(size=3) * 3.0
        controller.update()
        yaw, pitch = yaw_pitch_in_parent(lower)
        assert limits["min_yaw"] - 1e-9 <= yaw <= limits["max_yaw"] + 1e-9
        assert limits["min_pitch"] - 1e-9 <= pitch <= limits["max_pitch"] + 1e-9
        at_limit = min(abs(yaw - limits["min_yaw"]), abs(yaw - limits["max_yaw"]),
                       abs(pitch - limits["min_pitch"]), abs(pitch - limits["max_pitch"])) < 1e-9
        clamped += at_limit
        inside += not at_limit
    assert clamped and inside


def test_look_at_slerp_skips_the_first_frame_then_eases():
    skeleton, _, upper, lower, hand = arm()
    target = lower.get_absolute_position() + np.array([1.0, 0.5, 2.0])
    controller = BoneLookController(None, lower, target, slerp_amount=0.5, up_axis_space=Space.WORLD)
    before = lower.get_local_matrix().copy()
    controller.update()
    np.testing.assert_array_equal(lower.get_local_matrix(), before)  # Babylon skips the first frame
    want = unit(target - lower.get_absolute_position())
    angles = []
    for _ in range(40):
        controller.update()
        angles.append(math.acos(min(1.0, float(np.dot(lower.get_direction((0, 0, 1)), want)))))
    assert angles[0] > 1e-3 and angles[-1] < 1e-6


def test_look_at_a_gltf_head():
    scene = load_gltf(SAMPLES_DIR / "CesiumMan" / "CesiumMan.glb")
    mesh = scene.skinned_meshes[0]
    skeleton = mesh.skeleton
    head = skeleton.get_bone("Skeleton_neck_joint_2")
    skeleton.prepare()
    target = head.get_absolute_position(mesh) + np.array([1.0, 0.2, 0.3])
    BoneLookController(mesh, head, target, up_axis_space=Space.WORLD).update()
    skeleton.prepare()
    np.testing.assert_allclose(head.get_direction((0, 0, 1), mesh), unit(target - head.get_absolute_position(mesh)),
                               atol=1e-6)


# --- cost --------------------------------------------------------------------------------------------
@pytest.fixture
def kernel_runs(monkeypatch):
    runs = []
    original = batch_module.UpdateKernel.run

    def counting(self):
        runs.append(self)
        original(self)

    monkeypatch.setattr(batch_module.UpdateKernel, "run", counting)
    return runs


def test_each_update_costs_at_most_one_skeleton_update(kernel_runs):
    skeleton, root, upper, lower, hand = arm()
    node = mesh_node()
    ik = BoneIKController(node, lower, target_position=upper.get_absolute_position(node) + (1.0, 1.5, 0.5),
                          pole_target_bone=root, pole_target_local_offset=(0.0, 0.0, 2.0), slerp_amount=0.7)
    look = BoneLookController(node, hand, (5.0, 5.0, 5.0), min_yaw=-0.5, max_yaw=0.5, max_pitch=0.3,
                              up_axis_space=Space.BONE, slerp_amount=0.6)
    for controller in (ik, look, ik, look, ik, look):
        root.rotation_quaternion = quaternion_from_yaw_pitch_roll(RNG.uniform(-1, 1, 3))  # a new frame
        kernel_runs.clear()
        controller.update()
        assert len(kernel_runs) <= 1


def test_each_update_on_gltf_bones_costs_at_most_one_skeleton_update(kernel_runs):
    scene = load_gltf(SAMPLES_DIR / "CesiumMan" / "CesiumMan.glb")
    mesh = scene.skinned_meshes[0]
    skeleton = mesh.skeleton
    lower = skeleton.get_bone("Skeleton_arm_joint_R__2_")
    head = skeleton.get_bone("Skeleton_neck_joint_2")
    skeleton.prepare()
    ik = BoneIKController(mesh, lower, target_position=lower.get_absolute_position(mesh) + (0.1, 0.2, 0.1))
    look = BoneLookController(mesh, head, head.get_absolute_position(mesh) + (1.0, 0.0, 0.0), max_yaw=0.5)
    for controller in (ik, look, ik, look):
        kernel_runs.clear()
        controller.update()
        assert len(kernel_runs) <= 1


# --- errors ------------------------------------------------------------------------------------------
def test_ik_refuses_a_bone_without_parent_or_length():
    skeleton, root, upper, lower, hand = arm()
    with pytest.raises(ViewerError, match="'root'.*no parent"):
        BoneIKController(None, root)
    with pytest.raises(ViewerError, match="'hand'.*leaf without a length"):
        BoneIKController(None, hand)
    hand.length = 0.5
    BoneIKController(None, hand)  # a leaf with a length is fine
    with pytest.raises(ViewerError, match="Bone"):
        BoneIKController(None, "lower")
    with pytest.raises(ViewerError, match="tnode"):
        BoneIKController("mesh", lower)


@pytest.mark.parametrize("change, match", [
    (lambda c, upper: setattr(c, "target_position", upper.get_absolute_position()), "at the upper bone"),
    (lambda c, upper: setattr(c, "target_position", (np.nan, 0, 0)), "NaN"),
    (lambda c, upper: setattr(c, "pole_target_position", (0, np.inf, 0)), "NaN or infinity"),
    (lambda c, upper: setattr(c, "bend_axis", (0, 0, 0)), "zero vector"),
    (lambda c, upper: setattr(c, "slerp_amount", float("nan")), "finite"),
    (lambda c, upper: setattr(c, "target_position", None), "no target_position"),
    (lambda c, upper: (setattr(c, "pole_target_bone", None),
                       setattr(c, "pole_target_position", upper.get_absolute_position() + (0, 2, 0)),
                       setattr(c, "target_position", upper.get_absolute_position() + (0, 1, 0))), "in line"),
])
def test_ik_bad_input_names_the_bone_and_leaves_the_pose(change, match):
    skeleton, root, upper, lower, hand = arm()
    controller = BoneIKController(None, lower, target_position=upper.get_absolute_position() + (1, 1, 1))
    before = locals_of(skeleton)
    with pytest.raises(ViewerError, match=match) as error:
        change(controller, upper)
        controller.update()
    assert "'lower'" in str(error.value)
    for matrix, after in zip(before, locals_of(skeleton)):
        np.testing.assert_array_equal(matrix, after)


@pytest.mark.parametrize("change, match", [
    (lambda c, bone: setattr(c, "target", bone.get_absolute_position()), "at the bone's position"),
    (lambda c, bone: setattr(c, "target", (0, np.nan, 0)), "NaN"),
    (lambda c, bone: setattr(c, "up_axis", (0, 0, 0)), "zero vector"),
    (lambda c, bone: setattr(c, "yaw_axis", (0, 0, 0)), "zero vector"),
    (lambda c, bone: setattr(c, "pitch_axis", (0, 1, 0)), "parallel"),
    (lambda c, bone: setattr(c, "max_yaw", float("inf")), "finite"),
    (lambda c, bone: setattr(c, "up_axis_space", "sideways"), "space"),
])
def test_look_bad_input_names_the_bone_and_leaves_the_pose(change, match):
    skeleton, root, upper, lower, hand = arm()
    controller = BoneLookController(None, lower, lower.get_absolute_position() + (1, 1, 1))
    before = locals_of(skeleton)
    with pytest.raises(ViewerError, match=match) as error:
        change(controller, lower)
        controller.update()
    assert "'lower'" in str(error.value)
    for matrix, after in zip(before, locals_of(skeleton)):
        np.testing.assert_array_equal(matrix, after)


def test_attributes_round_trip():
    skeleton, root, upper, lower, hand = arm()
    ik = BoneIKController(None, lower, target_position=(1, 2, 3), pole_angle=0.5, bend_axis=(1, 0, 0))
    assert ik.bone is lower and ik.upper_bone is upper and ik.tnode is None
    np.testing.assert_array_equal(ik.target_position, (1, 2, 3))
    np.testing.assert_array_equal(ik.bend_axis, (1, 0, 0))
    ik.pole_target_local_offset = (0, 1, 0)
    ik.tnode = mesh_node()
    assert ik.pole_angle == 0.5 and ik.slerp_amount == 1.0 and ik.max_angle == math.pi
    look = BoneLookController(None, lower, (1, 2, 3), up_axis_space="bone")
    assert look.up_axis_space is Space.BONE and look.min_yaw == -math.pi and look.max_pitch == math.pi
    np.testing.assert_array_equal(look.up_axis, (0, 1, 0))
    look.min_yaw, look.adjust_roll = -1, 0.25
    assert look.min_yaw == -1.0 and look.adjust_roll == 0.25 and look.yaw_axis is None
    assert "lower" in repr(ik) and "lower" in repr(look)
