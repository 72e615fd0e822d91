"""The panel's actions, without a window: each calls the model's public API."""

import json

import numpy as np
import pytest

from viewer import ViewerError
from viewer.character import build_character
from viewer.editing.editor import Editor
from viewer.gltf import load_gltf
from viewer.editing.pose import pose_of

from samples import FOX, SAMPLES_DIR


def turn(degrees):
    half = np.radians(degrees) / 2
    return [0.0, 0.0, np.sin(half), np.cos(half)]


@pytest.fixture
def editor():
    return Editor(build_character())


def test_selection_and_bone_list(editor):
    assert [b.name for b in editor.bones()] == ["body", "leftArm", "rightArm"]
    assert editor.selected.name == "body"
    editor.select_by_name("leftArm")
    assert editor.selected.name == "leftArm"
    with pytest.raises(ViewerError):
        editor.select_by_name("tail")


def test_rotation_quaternion_is_renormalized_and_euler_degrees(editor):
    arm = editor.scene.find_bone("leftArm")
    editor.set_rotation_quaternion(arm, np.array(turn(75)) * 3.0)
    np.testing.assert_allclose(arm.rotation_quaternion, turn(75), atol=1e-12)
    yaw, pitch, roll = editor.yaw_pitch_roll_degrees(arm)
    assert (yaw, pitch) == pytest.approx((0.0, 0.0), abs=1e-9) and roll == pytest.approx(75.0)
    editor.set_yaw_pitch_roll_degrees(arm, 10.0, 20.0, 30.0)
    assert editor.yaw_pitch_roll_degrees(arm) == pytest.approx((10.0, 20.0, 30.0))
    with pytest.raises(ViewerError, match="not a rotation"):
        editor.set_rotation_quaternion(arm, [0, 0, 0, 0])


def test_position_scaling_and_the_seven_matrices(editor):
    arm = editor.scene.find_bone("leftArm")
    editor.set_position(arm, [0.6, 1.4, 0.1])
    editor.set_scaling(arm, [1.0, 1.5, 1.0])
    matrices = editor.matrices(arm)
    assert list(matrices) == ["local", "absolute", "final", "bind", "absolute bind", "absolute inverse bind", "rest"]
    np.testing.assert_allclose(matrices["local"][3, :3], [0.6, 1.4, 0.1])
    np.testing.assert_allclose(matrices["final"], matrices["absolute inverse bind"] @ matrices["absolute"], atol=1e-12)
    body = editor.matrices(editor.scene.find_bone("body"))
    np.testing.assert_allclose(matrices["absolute"], matrices["local"] @ body["absolute"], atol=1e-12)
    np.testing.assert_allclose(matrices["absolute bind"], matrices["bind"] @ body["absolute bind"], atol=1e-12)
    np.testing.assert_allclose(matrices["absolute inverse bind"] @ matrices["absolute bind"], np.eye(4), atol=1e-12)
    assert not np.allclose(matrices["local"], matrices["rest"])  # the edit left the rest pose
    editor.return_bone_to_rest(arm)
    np.testing.assert_allclose(editor.matrices(arm)["local"], matrices["rest"], atol=1e-12)


def test_return_to_rest_for_one_bone_and_all(editor):
    rest = pose_of(editor.scene)
    left, right = editor.scene.find_bone("leftArm"), editor.scene.find_bone("rightArm")
    editor.set_rotation_quaternion(left, turn(80))
    editor.set_rotation_quaternion(right, turn(-80))
    editor.return_bone_to_rest(left)
    np.testing.assert_allclose(left.rotation_quaternion, turn(30), atol=1e-12)
    np.testing.assert_allclose(right.rotation_quaternion, turn(-80), atol=1e-12)
    editor.return_all_to_rest()
    assert json.dumps(pose_of(editor.scene)) == json.dumps(rest)


def test_set_current_as_rest(editor):
    arm = editor.scene.find_bone("leftArm")
    editor.set_rotation_quaternion(arm, turn(60))
    editor.set_current_as_rest()
    editor.set_rotation_quaternion(arm, turn(10))
    editor.return_bone_to_rest(arm)
    np.testing.assert_allclose(arm.rotation_quaternion, turn(60), atol=1e-9)


def test_undo_redo_and_a_drag_is_one_step(editor):
    arm = editor.scene.find_bone("leftArm")
    start = pose_of(editor.scene)
    editor.set_rotation_quaternion(arm, turn(50))
    after_first = pose_of(editor.scene)
    editor.begin_edit()            # a drag: many changes, one undo step
    for degrees in range(51, 70):
        editor.set_rotation_quaternion(arm, turn(degrees))
    editor.end_edit()
    editor.undo()
    assert pose_of(editor.scene) == after_first
    editor.undo()
    assert pose_of(editor.scene) == start
    assert not editor.can_undo
    editor.redo()
    editor.redo()
    np.testing.assert_allclose(arm.rotation_quaternion, turn(69), atol=1e-12)
    assert not editor.can_redo


def test_linked_bones_are_edited_through_their_node():
    editor = Editor(load_gltf(SAMPLES_DIR / "RiggedSimple/RiggedSimple.gltf"))
    bone = editor.bones()[-1]
    node = bone.get_transform_node()
    mesh = editor.scene.skinned_meshes[0]
    before = mesh.skinned_positions()
    editor.set_rotation_quaternion(bone, [0.0, 0.0, np.sin(0.3), np.cos(0.3)])
    np.testing.assert_allclose(node.rotation_quaternion, [0.0, 0.0, np.sin(0.3), np.cos(0.3)], atol=1e-12)
    assert np.abs(mesh.skinned_positions() - before).max() > 0.1  # the edit is not undone by prepare()
    editor.undo()
    np.testing.assert_allclose(mesh.skinned_positions(), before, atol=1e-6)


def test_playback_advances_loops_and_editing_keeps_it_playing():
    editor = Editor(load_gltf(FOX))
    assert editor.clip.name == "Survey"
    editor.choose_clip(1)
    assert editor.clip.name == "Walk" and editor.playback.time == 0
    editor.play()
    editor.playback.speed = 2.0
    editor.advance(0.3)
    assert editor.playback.time == pytest.approx(0.6)
    editor.advance(0.3)  # 1.2 s into a 0.708 s clip: loops
    assert editor.playback.time == pytest.approx(1.2 % editor.clip.duration)
    editor.playback.loop = False
    editor.advance(1.0)
    assert editor.playback.time == pytest.approx(editor.clip.duration) and not editor.playback.playing
    editor.play()
    editor.set_rotation_quaternion(editor.bones()[3], [0, 0, 0, 1])
    assert editor.playback.playing   # the edit went into the mixer's layer: the clip plays on with it
    editor.mixer.active_layer.mute = True   # a muted layer holds nothing: an edit pauses, as it used to
    editor.set_rotation_quaternion(editor.bones()[3], [0, 0, 0, 1])
    assert not editor.playback.playing
    editor.seek(0.25)
    assert editor.playback.time == 0.25
    with pytest.raises(ViewerError):
        editor.choose_clip(7)


def test_pose_files_from_the_panel(editor, tmp_path):
    arm = editor.scene.find_bone("rightArm")
    editor.set_rotation_quaternion(arm, turn(-70))
    editor.save_pose(tmp_path / "p.json")
    editor.return_all_to_rest()
    editor.load_pose(tmp_path / "p.json")
    np.testing.assert_allclose(arm.rotation_quaternion, turn(-70), atol=1e-12)
    (tmp_path / "bad.json").write_text('{"bones": {"tail": {}}}')
    before = pose_of(editor.scene)
    editor.load_pose(tmp_path / "bad.json")
    assert editor.status.is_error and "unknown bone 'tail'" in editor.status.text
    assert pose_of(editor.scene) == before
    editor.undo()  # undoes the good load
    np.testing.assert_allclose(arm.rotation_quaternion, turn(-30), atol=1e-12)


def test_load_pose_undo_and_redo_keep_a_playing_clip_playing_with_the_pose_on_it(tmp_path):
    """A loaded pose goes into the mixer's layer: the clip plays on with it; undo and redo take
    the layer back and forth. With the layer muted they pose the bones and pause, as before
    (else the next frame of the clip would overwrite the pose they set)."""
    editor = Editor(load_gltf(FOX))
    bone = editor.bones()[5]
    target = bone.get_pose_target()
    layer = editor.mixer.active_layer
    editor.set_rotation_quaternion(bone, turn(40))
    editor.save_pose(tmp_path / "posed.json")
    editor.return_all_to_rest()
    assert not layer.tracks
    steps = {"load pose": lambda: editor.load_pose(tmp_path / "posed.json"), "undo": editor.undo, "redo": editor.redo}
    for name, step in steps.items():
        editor.play()
        step()
        assert editor.playback.playing, name
        assert (id(target) in layer.tracks) == (name != "undo"), name
        if name == "load pose":   # the pose as loaded, now; later, the clip turned as the pose turned it
            assert same_rotation(target.rotation_quaternion, turn(40), atol=1e-9), name
        editor.advance(0.25)   # a frame goes by: the clip moves on, the layer with it
    editor.load_pose(tmp_path / "missing.json")  # a failed load changes nothing, playback included
    assert editor.playback.playing and editor.status.is_error
    layer.mute = True
    for name, step in steps.items():
        editor.play()
        step()
        assert not editor.playback.playing, name
        shown = pose_of(editor.scene)
        editor.advance(0.25)  # a frame goes by: a paused clip leaves the pose alone
        assert pose_of(editor.scene) == shown, name


def test_toggle_playback(editor):
    fox = Editor(load_gltf(FOX))
    assert not fox.playback.playing
    fox.toggle_playback()
    assert fox.playback.playing
    fox.toggle_playback()
    assert not fox.playback.playing
    editor.toggle_playback()  # no animations: nothing to play
    assert not editor.playback.playing


# --- world space and controllers (issue 12's panel) ------------------------------------------------
import math  # noqa: E402

from viewer.model.space import Space  # noqa: E402
from viewer.options import MarkerKind  # noqa: E402

from samples import ROBOT  # noqa: E402


@pytest.fixture(scope="module")
def robot_scene():
    return load_gltf(ROBOT)


@pytest.fixture
def robot(robot_scene):
    """An editor on RobotExpressive in its loaded pose (the module's scene, put back after)."""
    pose = pose_of(robot_scene)
    yield Editor(robot_scene)
    from viewer.editing.pose import apply_pose
    apply_pose(robot_scene, pose)
    robot_scene.__dict__.pop("_mixer", None)  # and its mixer: the next test's edits start with an empty layer


def unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def poses_close(a, b, atol=1e-9):
    """Undo restores a pose through apply_pose, which renormalizes quaternions: equal to rounding."""
    a, b = a["bones"], b["bones"]
    return a.keys() == b.keys() and all(np.allclose(a[n][part], b[n][part], atol=atol) for n in a for part in a[n])


def same_rotation(a, b, atol=1e-6):
    return min(np.abs(np.asarray(a) - b).max(), np.abs(np.asarray(a) + b).max()) < atol


@pytest.mark.parametrize("name", ["Bone", "LowerArm.L", "Head"])  # a root, an arm, the head
def test_world_space_edits_round_trip_and_are_one_undo_step_each(robot, name):
    bone = robot.scene.find_bone(name)
    mesh = robot.mesh_of(bone)
    start = pose_of(robot.scene)
    position, quaternion, scaling = robot.pose_values(bone, Space.WORLD)
    np.testing.assert_allclose(position, bone.get_position(Space.WORLD, mesh))
    np.testing.assert_allclose(quaternion, bone.get_rotation_quaternion(Space.WORLD, mesh))
    moved = position + [0.1, 0.2, -0.15]
    robot.set_position(bone, moved, space=Space.WORLD)
    np.testing.assert_allclose(robot.pose_values(bone, Space.WORLD)[0], moved, atol=1e-9)
    q = unit([0.2, 0.3, 0.1, 0.9])
    robot.set_rotation_quaternion(bone, q * 2.0, space=Space.WORLD)  # renormalized
    assert same_rotation(robot.pose_values(bone, Space.WORLD)[1], q)
    np.testing.assert_allclose(robot.pose_values(bone, Space.WORLD)[0], moved, atol=1e-9)  # turning keeps it there
    np.testing.assert_allclose(bone.get_scale(), scaling, atol=1e-12)                    # and keeps its scale
    robot.set_yaw_pitch_roll_degrees(bone, 10.0, 20.0, 30.0, space=Space.WORLD)
    assert robot.yaw_pitch_roll_degrees(bone, Space.WORLD) == pytest.approx((10.0, 20.0, 30.0), abs=1e-5)
    after_three = pose_of(robot.scene)
    robot.begin_edit()  # a drag of the world position: many values, one step
    for step in range(1, 8):
        robot.set_position(bone, moved + [0.02 * step, 0, 0], space=Space.WORLD)
    robot.end_edit()
    robot.undo()
    assert poses_close(pose_of(robot.scene), after_three)
    for _ in range(3):
        robot.undo()
    assert not robot.can_undo and poses_close(pose_of(robot.scene), start)


def test_world_and_local_fields_agree_where_the_mesh_is_the_identity(editor):
    arm = editor.scene.find_bone("leftArm")
    editor.set_rotation_quaternion(arm, turn(75))
    np.testing.assert_allclose(editor.pose_values(arm, Space.WORLD)[0], arm.get_absolute_position(), atol=1e-12)
    assert same_rotation(editor.pose_values(arm, Space.WORLD)[1], turn(75))  # body sits unturned at the origin
    with pytest.raises(ViewerError):
        editor.set_position(arm, [0, float("nan"), 0], space=Space.WORLD)
    editor.undo()
    assert not editor.can_undo  # the refused edit left no empty undo step behind the good one
    editor.set_space(Space.WORLD)
    assert editor.space is Space.WORLD
    with pytest.raises(ViewerError):
        editor.set_space("sideways")


def chain(robot):
    lower = robot.scene.find_bone("LowerArm.L")
    mesh = robot.mesh_of(lower)
    return lower, lower.get_parent(), mesh


def test_ik_target_is_reached_and_the_elbow_bends_toward_the_pole(robot):
    lower, upper, mesh = chain(robot)
    robot.play()
    shoulder = upper.get_absolute_position(mesh)
    for direction, pole in (([0.4, 0.3, 1.0], (2.4, 1.3, -0.6)), ([1.0, -0.2, 0.3], None),
                            ([0.2, 1.0, 0.4], robot.scene.find_bone("PoleTarget.L"))):
        robot.set_ik_target(lower, (1.0, 1.0, 1.0), pole=pole)     # then moved: the controller is kept
        reach = sum(robot.controller_of(lower).controller.lengths)
        target = shoulder + unit(direction) * 0.7 * reach
        assert robot.set_ik_target(lower, target, pole=pole), robot.status
        assert robot.playback.playing              # the edit went into the mixer's layer: the clip plays on
        robot.update_controllers()
        assert np.linalg.norm(robot.chain_end(lower) - target) < 1e-3 * reach
        entry = robot.controller_of(lower)
        assert entry.kind == "ik" and entry.bend_axis.shape == (3,)
        # The elbow sits on the pole's side of the shoulder-to-target line.
        line = unit(target - shoulder)
        elbow = lower.get_absolute_position(mesh) - shoulder
        pole_offset = robot.pole_point(entry) - shoulder
        assert (elbow - line * (elbow @ line)) @ (pole_offset - line * (pole_offset @ line)) > 0
    assert "IK" in robot.status.text and not robot.status.is_error


def test_look_at_points_the_heads_axis_at_the_target(robot):
    head = robot.scene.find_bone("Head")
    mesh = robot.mesh_of(head)
    origin = head.get_absolute_position(mesh)
    for offset in ([-2.5, 1.5, 1.6], [1.0, 0.5, 2.0], [0.3, -0.4, 1.5]):
        target = origin + offset
        assert robot.set_look_target(head, target), robot.status
        robot.update_controllers()
        np.testing.assert_allclose(unit(head.get_direction((0, 0, 1), mesh)), unit(offset), atol=1e-6)
        assert head.get_direction((0, 1, 0), mesh)[1] > 0  # the head stays upright


def test_a_target_bone_that_moves_is_followed(robot):
    lower, upper, mesh = chain(robot)
    head = robot.scene.find_bone("Head")
    followed = robot.scene.find_bone("PoleTarget.R")
    assert robot.set_ik_target(lower, followed) and robot.set_look_target(head, followed)
    shoulder = upper.get_absolute_position(mesh)
    reach = sum(robot.controller_of(lower).controller.lengths)
    for direction in ([0.5, 0.2, 1.0], [1.0, 0.5, 0.2]):
        where = shoulder + unit(direction) * 0.6 * reach
        robot.set_position(followed, where, space=Space.WORLD)   # the target bone moves
        robot.update_controllers()                                # one frame later: followed
        np.testing.assert_allclose(followed.get_absolute_position(mesh), where, atol=1e-9)
        assert np.linalg.norm(robot.chain_end(lower) - where) < 1e-3 * reach
        np.testing.assert_allclose(unit(head.get_direction((0, 0, 1), mesh)),
                                   unit(where - head.get_absolute_position(mesh)), atol=1e-6)
        cross = [m for m in robot.display.markers if m.kind is MarkerKind.CROSS]
        np.testing.assert_allclose(cross[0].points[0], where, atol=1e-9)


def test_bad_controllers_give_a_status_error_and_change_nothing(robot):
    root = robot.scene.find_bone("Bone")
    lower, upper, _ = chain(robot)
    before = pose_of(robot.scene)
    assert not robot.set_ik_target(root, (1.0, 2.0, 3.0))
    assert robot.status.is_error and "'Bone'" in robot.status.text and "no parent" in robot.status.text
    assert not robot.set_ik_target(lower, lower.children[0])        # its own hand: it would chase itself
    assert robot.status.is_error and "chase itself" in robot.status.text
    assert not robot.set_look_target(lower, lower.get_absolute_position(robot.mesh_of(lower)))  # at the bone
    assert robot.status.is_error and "LowerArm.L" in robot.status.text
    assert not robot.set_look_target(lower, (0.0, float("nan"), 0.0))
    assert robot.status.is_error
    assert not robot.controllers and not robot.can_undo and pose_of(robot.scene) == before


def test_an_error_while_running_goes_to_the_status_line(robot):
    head = robot.scene.find_bone("Head")
    mesh = robot.mesh_of(head)
    followed = robot.scene.find_bone("PoleTarget.R")
    assert robot.set_look_target(head, followed)
    robot.set_position(followed, head.get_absolute_position(mesh), space=Space.WORLD)  # onto the head
    robot.update_controllers()  # does not raise
    assert robot.status.is_error and "Head" in robot.status.text


def test_controllers_undo_redo_and_clear(robot):
    lower, upper, mesh = chain(robot)
    start = pose_of(robot.scene)
    target = upper.get_absolute_position(mesh) + [0.5, 0.3, 0.9]
    assert robot.set_ik_target(lower, target)
    posed = pose_of(robot.scene)
    assert posed != start            # the pose changed at once, not only at the next frame
    robot.clear_controller(lower)
    assert robot.controller_of(lower) is None and poses_close(pose_of(robot.scene), posed)  # the pose stays
    robot.undo()                     # the controller is back
    assert robot.controller_of(lower).kind == "ik"
    robot.undo()                     # and gone, with the pose it made
    assert robot.controller_of(lower) is None and poses_close(pose_of(robot.scene), start)
    assert not robot.display.markers
    robot.redo()
    robot.update_controllers()
    assert robot.controller_of(lower) is not None and np.linalg.norm(robot.chain_end(lower) - target) < 1e-6


def test_ik_markers_show_target_chain_pole_and_bend_axis(robot):
    lower, upper, mesh = chain(robot)
    target = upper.get_absolute_position(mesh) + [0.5, 0.3, 0.9]
    robot.set_ik_target(lower, target, pole=(2.4, 1.3, -0.6))
    robot.update_controllers()
    markers = {m.kind: m for m in robot.display.markers}
    np.testing.assert_allclose(markers[MarkerKind.CROSS].points[0], target)
    shoulder, elbow, end = np.array(markers[MarkerKind.PATH].points)
    np.testing.assert_allclose(shoulder, upper.get_absolute_position(mesh), atol=1e-12)
    np.testing.assert_allclose(elbow, lower.get_absolute_position(mesh), atol=1e-12)
    np.testing.assert_allclose(end, robot.chain_end(lower), atol=1e-12)
    np.testing.assert_allclose(markers[MarkerKind.POINT].points[0], (2.4, 1.3, -0.6))
    origin, axis = np.array(markers[MarkerKind.RAY].points)
    np.testing.assert_allclose(origin, elbow)
    # The bend axis is perpendicular to both bones (the elbow turns about it).
    assert abs(axis @ unit(elbow - shoulder)) < 1e-6 and abs(axis @ unit(end - elbow)) < 1e-6
    assert all(len(m.color) == 4 for m in robot.display.markers)


def qmul(a, b):
    """The Hamilton product a * b of (x, y, z, w) quaternions (b first, then a)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def qinv(q):
    q = np.asarray(q, dtype=np.float64)
    return np.array([-q[0], -q[1], -q[2], q[3]]) / (q @ q)


def test_a_posed_bone_rides_on_the_clip_until_keyed_into_it():
    """With a clip, an edit goes into the mixer's active layer ("Tweaks", additive): a bone
    posed at 0.5 s shows, at another time, the clip's rotation turned as it was turned at 0.5 s;
    keyed (I), the pose is the clip's at 0.5 s and the layer lets go of the bone."""
    editor = Editor(load_gltf(FOX))
    editor.seek(0.1)
    rotated = {id(c.node) for c in editor.clip.channels if c.path == "rotation"}
    bone = next(b for b in editor.bones() if id(b.get_pose_target()) in rotated)
    animated = np.array(bone.rotation_quaternion)
    editor.seek(0.5)
    at_05 = np.array(bone.rotation_quaternion)
    editor.set_rotation_quaternion(bone, turn(50))
    editor.seek(0.1)
    assert not np.allclose(animated, turn(50), atol=1e-3)
    expected = qmul(animated, qmul(qinv(at_05), turn(50)))   # the clip at 0.1 s, turned as the edit turned it
    assert same_rotation(bone.get_pose_target().rotation_quaternion, expected / np.linalg.norm(expected))
    editor.seek(0.5)
    editor.set_rotation_quaternion(bone, turn(50))
    editor.key_bones([bone])
    assert not editor.mixer.active_layer.tracks
    np.testing.assert_allclose(bone.get_pose_target().rotation_quaternion, turn(50), atol=1e-6)
    editor.seek(0.1)   # keyed at 0.5 only: at 0.1 the clip's own keys, as before
    np.testing.assert_allclose(bone.get_pose_target().rotation_quaternion, animated, atol=1e-5)  # float32 keys
