"""Keyframing in the viewer: the Editor's key actions (undoable) and the panel's Keyframes
section, Key markers and I / Shift+I, driven headless (the window under Xvfb is in
tests/test_keyframe_window_xvfb.py)."""

import numpy as np
import pytest
from imgui_bundle import imgui

from panel_driver import click, key
from samples import DATA_DIR
from viewer import load_gltf, load_model
from viewer.editing.editor import Editor

WORMS = DATA_DIR / "morph-worms.gltf"


@pytest.fixture
def editor():
    return Editor(load_model(None))


def arm_rotation(editor):
    return np.array(editor.scene.find_bone("leftArm").rotation_quaternion)


def test_key_the_selected_bone_step_by_step_and_undo_it_all(editor, tmp_path):
    arm = editor.scene.find_bone("leftArm")
    editor.select(arm)
    start = arm_rotation(editor)
    editor.key_selected()  # no clip yet: "Clip" at 0 s
    assert [c.name for c in editor.scene.animations] == ["Clip"] and editor.clip.name == "Clip"
    np.testing.assert_array_equal(editor.key_times(), [0.0])
    editor.seek(1.0)  # past the clip's end: the timeline reaches 2 s for a new clip
    assert editor.playback.time == 1.0
    editor.set_yaw_pitch_roll_degrees(arm, 0, 0, 80)
    turned = arm_rotation(editor)
    editor.key_selected()
    np.testing.assert_array_equal(editor.key_times(), [0.0, 1.0])
    editor.previous_key()
    assert editor.playback.time == 0.0
    np.testing.assert_allclose(arm_rotation(editor), start, atol=1e-12)
    editor.next_key()
    assert editor.playback.time == 1.0
    np.testing.assert_allclose(arm_rotation(editor), turned, atol=1e-12)
    editor.set_key_interpolation("STEP")  # the keys at the playhead: the arm's channels
    assert {c.interpolation for c in editor.clip.channels if c.node is arm} == {"STEP"}
    editor.delete_key()
    np.testing.assert_array_equal(editor.key_times(), [0.0])
    # Every step undoes: the interpolation, the deletion, the second key, the clip itself.
    editor.undo()
    np.testing.assert_array_equal(editor.key_times(), [0.0, 1.0])
    editor.undo()
    assert {c.interpolation for c in editor.clip.channels if c.node is arm} == {"LINEAR"}
    editor.undo()  # the yaw/pitch/roll edit and the key at 1 s
    editor.undo()
    np.testing.assert_array_equal(editor.key_times(), [0.0])
    editor.undo()
    assert editor.scene.animations == [] and editor.clip is None
    editor.redo()
    assert [c.name for c in editor.scene.animations] == ["Clip"]


def test_key_posed_keys_only_the_posed_bones(editor):
    arm = editor.scene.find_bone("rightArm")
    editor.set_yaw_pitch_roll_degrees(arm, 10, 0, 0)
    editor.key_posed()
    assert {c.node.name for c in editor.clip.channels} == {"rightArm"}
    editor.return_all_to_rest()
    editor.key_posed()
    assert "no bone is posed" in editor.status.text


def test_new_clip_and_morph_weights_are_keyed_with_every_bone(tmp_path):
    editor = Editor(load_gltf(WORMS))
    editor.new_clip("Squash")
    assert editor.clip.name == "Squash"
    editor.key_bones()
    mesh = editor.scene.morph_meshes[0]
    editor.seek(0.5)
    editor.set_morph_weight(mesh, 0, 0.9)
    editor.key_bones()
    assert len(editor.clip.morph_channels) >= 1
    editor.seek(0.0)
    assert mesh.morph_weights[0] != 0.9
    editor.seek(0.5)
    assert mesh.morph_weights[0] == 0.9
    with pytest.raises(Exception, match="already a clip called 'Squash'"):
        editor.new_clip("Squash")
    editor.export_gltf(tmp_path / "squash.glb")
    assert "exported" in editor.status.text
    assert load_gltf(tmp_path / "squash.glb").find_animation("Squash") is not None
    editor.export_gltf(tmp_path / "missing" / "x.glb")
    assert editor.status.is_error


def test_the_panel_keys_marks_and_exports(panel_session, tmp_path):
    session = panel_session
    editor = session.editor
    click(session, "leftArm")
    key(session, imgui.Key.i)  # I: key the selected bone
    assert editor.clip is not None and editor.clip.name == "Clip"
    assert {c.node.name for c in editor.clip.channels} == {"leftArm"}
    session.run()
    assert "timeline" in session.panel.rects  # the Animation section now shows the clip
    editor.seek(1.0)
    editor.set_yaw_pitch_roll_degrees(editor.selected, 0, 0, 70)
    editor.set_yaw_pitch_roll_degrees(editor.scene.find_bone("rightArm"), 0, 0, -70)
    key(session, imgui.Key.i, shift=True)  # Shift+I: every posed bone
    np.testing.assert_array_equal(editor.key_times(), [0.0, 1.0])
    assert {c.node.name for c in editor.clip.channels} == {"leftArm", "rightArm"}
    # The key markers: yellow ticks along the top of the timeline at 0 s and 1 s of 2 s.
    session.run()
    x0, y0, x1, y1 = session.panel.rects["timeline"]
    pixels = session.target.read()
    row = pixels[int(y0) + 1, int(x0):int(x1), :3].astype(int)
    yellow = np.flatnonzero((row[:, 0] > 200) & (row[:, 1] > 150) & (row[:, 2] < 100))
    assert yellow.size and yellow.min() < 0.1 * (x1 - x0) and abs(yellow.max() - 0.5 * (x1 - x0)) < 0.1 * (x1 - x0)
    # The Keyframes section's buttons, then Export glTF... from the Files section.
    for section in ("Bones", "Selected bone", "Keyframes"):  # make room, open Keyframes
        click(session, section)
    session.run()
    click(session, "<##key")
    assert editor.playback.time == 0.0
    click(session, "Delete key")
    np.testing.assert_array_equal(editor.key_times(), [1.0])
    for section in ("Keyframes", "Display", "Files"):  # close two sections to make room, open Files
        click(session, section)
    session.run()
    session.panel.export_path = str(tmp_path / "keyed.glb")
    click(session, "Export glTF...")
    written = load_gltf(tmp_path / "keyed.glb")
    np.testing.assert_allclose(written.find_animation("Clip").key_times(), [1.0])
