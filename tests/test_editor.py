"""The panel's actions, without a window: each calls the model's public API."""

import json

import numpy as np
import pytest

from viewer import ViewerError
from viewer.character import build_character
from viewer.editor import Editor
from viewer.gltf import load_gltf
from viewer.pose import pose_of

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
    np.testing.assert_allclose(node.rotation_quaternion, [0.0, 0.0, np.sin(0.3), np.cos(0.3)])
    assert np.abs(mesh.skinned_positions() - before).max() > 0.1  # the edit is not undone by prepare()
    editor.undo()
    np.testing.assert_allclose(mesh.skinned_positions(), before, atol=1e-6)


def test_playback_advances_loops_and_editing_pauses():
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


def test_load_pose_undo_and_redo_pause_a_playing_clip(tmp_path):
    """Else the next frame of the clip overwrites the pose they set."""
    editor = Editor(load_gltf(FOX))
    bone = editor.bones()[5]
    editor.set_rotation_quaternion(bone, turn(40))
    posed = pose_of(editor.scene)
    editor.save_pose(tmp_path / "posed.json")
    editor.return_all_to_rest()
    steps = {"load pose": lambda: editor.load_pose(tmp_path / "posed.json"), "undo": editor.undo, "redo": editor.redo}
    for name, step in steps.items():
        editor.play()
        step()
        assert not editor.playback.playing, name
        shown = pose_of(editor.scene)
        editor.advance(0.25)  # a frame goes by: a paused clip leaves the pose alone
        assert pose_of(editor.scene) == shown, name
    assert shown == posed  # load, undo (back to rest), redo (the loaded pose again)
    editor.play()
    editor.load_pose(tmp_path / "missing.json")  # a failed load changes nothing, playback included
    assert editor.playback.playing and editor.status.is_error


def test_toggle_playback(editor):
    fox = Editor(load_gltf(FOX))
    assert not fox.playback.playing
    fox.toggle_playback()
    assert fox.playback.playing
    fox.toggle_playback()
    assert not fox.playback.playing
    editor.toggle_playback()  # no animations: nothing to play
    assert not editor.playback.playing
