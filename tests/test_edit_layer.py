"""Tweaking a pose while its clip plays (issue 43, item 3), through the editing session every
front end calls (viewer/editing/editor.py): the panel's fields, a gizmo's own turn, the remote
set_pose and a script's app.pose go into the mixer's active layer, and the clip plays on with
them. The reference numbers are the clip's own (``clip.apply`` on a second copy of the model)
and quaternion products written out here, not the mixer's code."""

from __future__ import annotations

import numpy as np
import pytest

from samples import ROBOT
from viewer.editing.editor import Editor
from viewer.editing.script_app import HeadlessApp
from viewer.errors import ViewerError
from viewer.loaders import load_model
from viewer.remote import protocol
from viewer.remote.server import _read_request
from viewer.remote.target import RemoteTarget

CLIP = "Walking"
BONE, OTHER = "Head", "UpperArm.L"
STEP = 0.137   # seconds between the instants checked: ten of them cover more than one loop of the walk


def qmul(a, b):
    """The Hamilton product a * b of (x, y, z, w) quaternions (b first, then a)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def axis_angle(axis, degrees):
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    half = np.radians(degrees) / 2
    return np.append(axis * np.sin(half), np.cos(half))


def slerp(a, b, u):
    a, b = np.asarray(a, float) / np.linalg.norm(a), np.asarray(b, float) / np.linalg.norm(b)
    if a @ b < 0:
        b = -b
    angle = np.arccos(np.clip(a @ b, -1.0, 1.0))
    return a if angle < 1e-12 else (np.sin((1 - u) * angle) * a + np.sin(u * angle) * b) / np.sin(angle)


def close(a, b, atol=1e-6) -> bool:
    """The same rotation (q and -q are one)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return min(np.abs(a - b).max(), np.abs(a + b).max()) < atol


R = axis_angle([0.3, 1.0, 0.2], 30.0)       # the turn the user gives
R2 = axis_angle([1.0, 0.0, 0.4], -25.0)


@pytest.fixture(scope="module")
def reference():
    """rotation(bone, t): the clip's own rotation of the bone at t, as clip.apply writes it."""
    scene = load_model(ROBOT)
    clip = scene.find_animation(CLIP)

    def rotation(name, t):
        clip.apply(t)
        return np.array(scene.find_bone(name).get_pose_target().rotation_quaternion)
    return rotation


def playing_editor():
    editor = Editor(load_model(ROBOT))
    editor.choose_clip([c.name for c in editor.scene.animations].index(CLIP))
    editor.play()
    editor.advance(0.3)
    return editor


def rotation(editor, name):
    return np.array(editor.scene.find_bone(name).get_pose_target().rotation_quaternion)


def assert_turned(editor, reference, turns, instants=10):
    """At ``instants`` more instants of playback, each bone shows the clip's rotation times its turn."""
    for _ in range(instants):
        editor.advance(STEP)
        assert editor.playback.playing
        t = editor.playback.time
        for name, turn in turns.items():
            assert close(rotation(editor, name), qmul(reference(name, t), turn)), (name, t)


def assert_the_clips_own(editor, reference, names=(BONE, OTHER)):
    """The clip's numbers exactly, at ten instants of the timeline."""
    for k in range(10):
        t = 0.05 + k * 0.09
        editor.seek(t)
        for name in names:
            assert np.array_equal(rotation(editor, name), reference(name, editor.playback.time)), (name, t)


def test_a_bone_turned_while_its_clip_plays_keeps_the_turn_and_undo_gives_the_clip_back(reference):
    editor = playing_editor()
    head = editor.scene.find_bone(BONE)
    editor.set_rotation_quaternion(head, qmul(rotation(editor, BONE), R))   # the panel's rotation field
    assert editor.playback.playing                                          # no pause
    assert_turned(editor, reference, {BONE: R})
    # A gizmo turns its bone itself (begin_edit names it); at the end the turn goes into the layer.
    arm = editor.scene.find_bone(OTHER)
    editor.begin_edit([arm])
    for degrees in (10.0, 20.0, 30.0):   # a drag: frames of the turn, one undo step
        arm.get_pose_target().rotation_quaternion = qmul(reference(OTHER, editor.playback.time),
                                                         axis_angle([1.0, 0.2, 0.0], degrees))
    editor.end_edit()
    assert_turned(editor, reference, {BONE: R, OTHER: axis_angle([1.0, 0.2, 0.0], 30.0)})
    editor.undo()
    assert_turned(editor, reference, {BONE: R, OTHER: np.array([0.0, 0.0, 0.0, 1.0])})
    editor.undo()
    assert not editor.mixer.active_layer.tracks and editor.playback.playing
    assert_the_clips_own(editor, reference)
    editor.redo()
    assert_turned(editor, reference, {BONE: R}, instants=3)


def test_an_override_layer_at_half_weight_shows_the_slerp_half_way(reference):
    editor = playing_editor()
    mixer = editor.mixer
    mixer.active_layer = mixer.add_layer("Fix", mode="override", weight=0.5)
    now = rotation(editor, BONE)
    wanted = qmul(now, R)
    editor.set_rotation_quaternion(editor.scene.find_bone(BONE), wanted)
    assert close(rotation(editor, BONE), wanted / np.linalg.norm(wanted))   # what the user set shows now
    # The layer holds the pose whose half-way slerp from the clip is the rotation set: now * R * R.
    held = qmul(now, qmul(R, R))
    for _ in range(10):
        editor.advance(STEP)
        t = editor.playback.time
        assert close(rotation(editor, BONE), slerp(reference(BONE, t), held, 0.5)), t
    editor.undo()
    assert_the_clips_own(editor, reference)


def test_return_to_rest_clears_the_bone_and_return_all_clears_the_layer(reference):
    editor = playing_editor()
    for name, turn in ((BONE, R), (OTHER, R2)):
        editor.set_rotation_quaternion(editor.scene.find_bone(name), qmul(rotation(editor, name), turn))
    layer = editor.mixer.active_layer
    editor.return_bone_to_rest(editor.scene.find_bone(BONE))
    assert layer.bones() == [OTHER] and editor.playback.playing
    assert_turned(editor, reference, {BONE: np.array([0.0, 0.0, 0.0, 1.0]), OTHER: R2})   # the head follows its clip
    editor.undo()
    assert sorted(layer.bones()) == sorted([BONE, OTHER])
    editor.return_all_to_rest()
    assert not layer.tracks
    assert_the_clips_own(editor, reference)


def test_keys_in_the_layer_interpolate_and_an_edit_of_a_keyed_bone_keys_it(reference):
    editor = playing_editor()
    editor.pause()
    head = editor.scene.find_bone(BONE)
    editor.select(head)
    editor.seek(0.2)
    editor.set_rotation_quaternion(head, qmul(rotation(editor, BONE), R))
    editor.key_layer_selected()                       # K: the held turn becomes a key at 0.2 s
    editor.seek(0.6)
    assert close(rotation(editor, BONE), qmul(reference(BONE, 0.6), R))   # one key: held either side
    editor.set_rotation_quaternion(head, qmul(rotation(editor, BONE), qmul(np.array([R[0], R[1], R[2], -R[3]]), R2)))
    layer = editor.mixer.active_layer
    np.testing.assert_allclose(layer.key_times(), [0.2, 0.6])   # a keyed bone's edit keys it where it is made
    editor.seek(0.4)
    assert close(rotation(editor, BONE), qmul(reference(BONE, 0.4), slerp(R, R2, 0.5)))
    editor.undo()
    editor.undo()
    assert layer.tracks[id(head.get_pose_target())][1]["rotation"][0] is None   # held again, as before K
    editor.key_layer()                                 # K for every bone the layer holds
    np.testing.assert_allclose(layer.key_times(), [0.4])
    editor.mixer.active_layer.mute = True
    editor.key_layer()
    assert editor.status.is_error and "Key (I)" in editor.status.text


def test_the_remote_set_pose_goes_into_the_layer(reference):
    editor = playing_editor()
    target = RemoteTarget(editor)
    wanted = qmul(rotation(editor, BONE), R)
    request = _read_request(protocol.decode(protocol.set_pose(1, wanted[None], None, None, [BONE])))
    target.set_pose(request)
    assert editor.playback.playing and editor.mixer.active_layer.bones() == [BONE]
    assert close(rotation(editor, BONE), wanted / np.linalg.norm(wanted), 1e-9)
    assert_turned(editor, reference, {BONE: R})
    target.set_pose_dict({"bones": {OTHER: {"rotation_quaternion": qmul(rotation(editor, OTHER), R2).tolist()}}})
    assert editor.playback.playing
    assert_turned(editor, reference, {BONE: R, OTHER: R2}, instants=3)
    editor.mixer.active_layer.mute = True   # no layer: written as before, and a playing clip pauses
    target.set_pose(request)
    assert not editor.playback.playing and close(rotation(editor, BONE), wanted / np.linalg.norm(wanted), 1e-9)


def test_a_script_pose_goes_into_the_layer(reference):
    scene = load_model(ROBOT)
    app = HeadlessApp(scene, (64, 48), clip_index=[c.name for c in scene.animations].index(CLIP))
    app.begin_frame(0.3, 0)
    app.pose({BONE: {"rotation_quaternion": qmul(rotation(app.editor, BONE), R).tolist()}})
    assert app.playing and app.editor.mixer.active_layer.bones() == [BONE]
    for k in range(1, 11):
        app.begin_frame(0.3 + k * STEP, k)
        t = app.editor.playback.time   # the sequence time, looped into the clip
        assert close(rotation(app.editor, BONE), qmul(reference(BONE, t), R)), t
    app.editor.undo()
    app.begin_frame(0.5, 11)
    assert np.array_equal(rotation(app.editor, BONE), reference(BONE, app.editor.playback.time))


def test_with_no_clip_an_edit_poses_the_bone_directly():
    editor = Editor(load_model(None))
    arm = editor.scene.find_bone("leftArm")
    editor.set_rotation_quaternion(arm, R)
    assert np.array_equal(arm.rotation_quaternion, R / np.linalg.norm(R)) or close(arm.rotation_quaternion, R, 1e-15)
    assert editor.edit_layer is None and "_mixer" not in editor.scene.__dict__   # no mixer made, nothing held


def test_set_poses_is_set_pose_for_many_bones_at_once():
    """Mixer.set_poses (one blend for all) and set_pose_rows (the values as rows) land where
    set_pose one bone after another does; a bad row is one ViewerError and changes nothing."""
    scenes = [load_model(ROBOT) for _ in range(3)]
    for scene in scenes:
        scene.mixer.action(CLIP).play()
        scene.mixer.update(0.4)
    names = [BONE, OTHER, "Hips", "Neck"]
    rng = np.random.default_rng(5)
    poses = {name: {"rotation_quaternion": rng.normal(size=4), "position": rng.normal(scale=0.1, size=3)}
             for name in names}
    edit = scenes[0].mixer.set_poses(poses)
    for name, parts in poses.items():
        scenes[1].mixer.set_pose(name, **parts)
    rows = scenes[2].mixer
    bad = np.array([poses[name]["rotation_quaternion"] for name in names])
    bad[2, 1] = np.nan
    with pytest.raises(ViewerError, match="finite"):
        rows.set_pose_rows(names, rotation_quaternions=bad)
    with pytest.raises(ViewerError, match="zero quaternion"):
        rows.set_pose_rows(names[:1], rotation_quaternions=np.zeros((1, 4)))
    assert not rows.active_layer.tracks
    rows.set_pose_rows(names, positions=np.array([poses[name]["position"] for name in names]),
                       rotation_quaternions=np.array([poses[name]["rotation_quaternion"] for name in names]))
    for _ in range(5):
        for scene in scenes:
            scene.mixer.update(0.21)
        for name in names:
            a, b, c = (scene.find_bone(name).get_pose_target() for scene in scenes)
            assert close(a.rotation_quaternion, b.rotation_quaternion, 1e-6)
            np.testing.assert_allclose(a.position, b.position, atol=1e-12)
            assert np.array_equal(a.rotation_quaternion, c.rotation_quaternion)
            assert np.array_equal(a.position, c.position)
    edit.undo()
    assert not scenes[0].mixer.active_layer.tracks
