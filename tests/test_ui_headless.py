"""The viewer with its panel, rendered offscreen on EGL and driven by synthetic ImGui input."""

import numpy as np
import pytest
from imgui_bundle import imgui

from viewer.images import write_png
from viewer.options import Status
from viewer.ui.panel import rounded

from panel_driver import PANEL_SIZE, centre, click
from samples import FOX, SAMPLES_DIR

SIZE = PANEL_SIZE


@pytest.fixture
def session(panel_session):
    return panel_session


def drag(session, label, field, fields, dx, steps=6):
    x0, y0, x1, y1 = session.panel.rects[label]
    x, y = x0 + (x1 - x0) * (field + 0.5) / fields, (y0 + y1) / 2
    io = imgui.get_io()
    io.add_mouse_pos_event(x, y)
    session.run()
    io.add_mouse_button_event(0, True)
    session.run()
    for i in range(1, steps + 1):
        io.add_mouse_pos_event(x + dx * i / steps, y)
        session.run()
    io.add_mouse_button_event(0, False)
    session.run()


def arm_pixels(session):
    """The orange arm pixels right of the panel."""
    rgb = session.target.read()[:, :, :3].astype(int)
    orange = (rgb[:, :, 0] > 150) & (rgb[:, :, 0] > rgb[:, :, 1] + 40) & (rgb[:, :, 1] > rgb[:, :, 2] + 30)
    orange[:, :400] = False
    return orange


def test_panel_renders_over_the_scene(session, tmp_path):
    image = session.target.read()
    write_png(tmp_path / "panel.png", image)
    panel = image[40:500, 20:360, :3].astype(int)
    # A dark panel with bright text in it.
    assert np.median(panel) < 80 and (panel.max(axis=2) > 200).sum() > 500
    # The character is in view to the right of the panel.
    assert arm_pixels(session).sum() > 500
    for label in ("Return to rest", "rotationQuaternion", "yaw/pitch/roll deg", "Undo (Ctrl+Z)", "leftArm"):
        assert label in session.panel.rects


def test_selecting_a_bone_in_the_tree(session):
    click(session, "leftArm")
    assert session.editor.selected.name == "leftArm"


def test_dragging_roll_turns_the_bone_moves_pixels_and_undo_restores(session):
    click(session, "leftArm")
    arm = session.editor.selected
    before_q = arm.rotation_quaternion.copy()
    before = arm_pixels(session)
    drag(session, "yaw/pitch/roll deg", field=2, fields=3, dx=80)
    roll = session.editor.yaw_pitch_roll_degrees(arm)[2]
    assert roll > 45, roll                       # 30 degrees of bind plus the drag
    after = arm_pixels(session)
    assert (before ^ after).sum() > 300          # the arm's pixels moved
    assert session.editor.can_undo
    # One drag is one undo step: Ctrl+Z puts the bone and the picture back.
    io = imgui.get_io()
    io.add_key_event(imgui.Key.mod_ctrl, True)
    io.add_key_event(imgui.Key.z, True)
    session.run()
    io.add_key_event(imgui.Key.z, False)
    io.add_key_event(imgui.Key.mod_ctrl, False)
    session.run()
    np.testing.assert_allclose(arm.rotation_quaternion, before_q, atol=1e-9)
    assert (arm_pixels(session) ^ before).sum() < 20


def test_dragging_the_quaternion_renormalizes(session):
    click(session, "leftArm")
    drag(session, "rotationQuaternion", field=0, fields=4, dx=60)
    q = session.editor.selected.rotation_quaternion
    assert abs(np.linalg.norm(q) - 1) < 1e-9 and abs(q[0]) > 0.05


def test_return_to_rest_button(session):
    click(session, "leftArm")
    arm = session.editor.selected
    session.editor.set_yaw_pitch_roll_degrees(arm, 0, 0, 80)
    session.run()
    rest = arm_pixels(session)
    click(session, "Return to rest")
    np.testing.assert_allclose(session.editor.yaw_pitch_roll_degrees(arm), (0, 0, 30), atol=1e-9)
    assert (arm_pixels(session) ^ rest).sum() > 300


def test_a_bad_model_keeps_the_current_one(session, tmp_path):
    bad = tmp_path / "broken.glb"
    bad.write_bytes(b"glTF\x02\x00\x00\x00\xff\xff\x00\x00")
    scene = session.scene
    assert not session.open_model(bad)
    session.run()
    assert session.scene is scene and session.editor.status.is_error and "broken.glb" in session.editor.status.text
    assert session.open_model(SAMPLES_DIR / "RiggedFigure/RiggedFigure.gltf")
    session.run(3)
    assert session.model_name == "RiggedFigure.gltf" and session.editor.playback.playing


def test_playback_controls(session):
    assert session.open_model(FOX)
    session.run(2)
    assert session.editor.playback.playing
    click(session, "Pause")
    assert not session.editor.playback.playing
    time = session.editor.playback.time
    session.run(5)
    assert session.editor.playback.time == time
    click(session, "Play")
    session.run(5)
    assert session.editor.playback.time != time


def visible(session, label):
    """Whether the widget lies wholly inside the panel's sections, above the status (tables are
    laid out, and so recorded, even when scrolled out of sight)."""
    x0, y0, x1, y1 = session.panel.rects[label]
    wx0, wy0, wx1, wy1 = session.panel.rects["sections"]
    return wx0 <= x0 and wy0 <= y0 and x1 <= wx1 and y1 <= wy1


def test_matrices_section_shows_the_seven_matrices(session, tmp_path):
    click(session, "leftArm")
    assert "matrix final" not in session.panel.rects  # collapsed by default
    click(session, "Display")                          # make room: collapse a section
    click(session, "Matrices")
    session.run()
    names = ["local", "absolute", "final", "bind", "absolute bind", "absolute inverse bind", "rest"]
    write_png(tmp_path / "matrices.png", session.target.read())
    # Scroll the panel down with the mouse wheel, as a user would, until each has been seen.
    io = imgui.get_io()
    x0, y0, x1, y1 = session.panel.rects["window"]
    io.add_mouse_pos_event((x0 + x1) / 2, (y0 + y1) / 2)
    seen = set()
    for _ in range(20):
        session.run()
        tops = [session.panel.rects[f"matrix {n}"][1] for n in names]
        assert tops == sorted(tops)  # in this order, top to bottom
        line = imgui.get_text_line_height()
        for n in names:
            top, bottom = session.panel.rects[f"matrix {n}"][1::2]
            assert bottom - top > 3.5 * line  # four rows each
            if visible(session, f"matrix {n}"):
                seen.add(n)
        if seen == set(names):
            break
        io.add_mouse_wheel_event(0.0, -1.0)
    assert seen == set(names)


def test_a_status_message_moves_no_widget(session):
    """A message used to push the panel down between two frames, so a click landed on the
    widget below the one the user aimed at."""
    click(session, "Display")  # room: "All to rest" stays in sight above a wrapped message
    arm = session.editor.scene.find_bone("leftArm")
    session.editor.set_yaw_pitch_roll_degrees(arm, 0, 0, 80)
    session.run()
    before = dict(session.panel.rects)
    assert before["status"][3] - before["status"][1] == pytest.approx(imgui.get_text_line_height())
    folder = "/home/someone/a folder with a very long name/and another one inside it"
    session.editor.status = Status.error(f"{folder}/model.glb: not a glTF file")
    session.run()
    after = session.panel.rects
    assert after == before | {"status": after["status"], "sections": after["sections"]}
    x0, y0, x1, y1 = after["status"]
    # Whole and wrapped at the panel's foot, grown upward over the sections' view (they scroll).
    assert y1 == pytest.approx(before["status"][3], abs=1) and y1 - y0 > 2 * imgui.get_text_line_height()
    assert visible(session, "All to rest")
    assert x1 <= after["window"][2]                          # not running off the panel
    # A click aimed from the earlier frame lands on the widget it aimed at.
    click(session, "All to rest")
    np.testing.assert_allclose(session.editor.yaw_pitch_roll_degrees(arm), (0, 0, 30), atol=1e-9)


def test_values_never_show_as_minus_zero():
    for value, shown in ((-0.0, "0.000"), (-0.0004, "0.000"), (0.0004, "0.000"), (-0.0006, "-0.001"), (1.23456, "1.235")):
        assert f"{rounded(value):.3f}" == shown and "%.3f" % rounded(value) == shown


def test_a_drag_keeps_the_untouched_fields_exact(session):
    """The fields show values rounded to 3 decimals; dragging one field must not round the others."""
    click(session, "leftArm")
    arm = session.editor.selected
    arm.position = [-0.0, -0.0001234, 1.23456789]
    session.run()
    drag(session, "position", field=0, fields=3, dx=40)
    assert arm.position[0] > 0.05
    assert arm.position[1] == -0.0001234 and arm.position[2] == 1.23456789


def press_space(session):
    io = imgui.get_io()
    io.add_key_event(imgui.Key.space, True)
    session.run()
    io.add_key_event(imgui.Key.space, False)
    session.run()


def test_space_toggles_playback_but_not_while_typing(session):
    assert session.open_model(FOX)
    session.run(2)
    editor = session.editor
    assert editor.playback.playing
    press_space(session)          # the panel has focus from the first frame: Space still plays
    assert not editor.playback.playing
    time = editor.playback.time
    session.run(3)
    assert editor.playback.time == time
    press_space(session)
    assert editor.playback.playing
    click(session, "Pause")       # a button clicked with the mouse does not take Space over
    assert not editor.playback.playing
    press_space(session)
    assert editor.playback.playing
    # Typing a space into a text field is typing, not play/pause.
    for section in ("Bones", "Selected bone", "Files"):  # make room, open Files
        click(session, section)
    assert visible(session, "pose file")
    click(session, "pose file")
    io = imgui.get_io()
    io.add_key_event(imgui.Key.end, True)
    session.run()
    io.add_key_event(imgui.Key.end, False)
    io.add_key_event(imgui.Key.space, True)
    io.add_input_character(ord(" "))
    session.run()
    io.add_key_event(imgui.Key.space, False)
    session.run()
    assert session.panel.pose_path == "pose.json " and editor.playback.playing


def test_f_frames_the_current_pose_even_with_the_panel_focused(session):
    """F is the viewer's unless ImGui is typing: the panel has focus from the first frame."""
    session.run(2)
    session.camera.target = session.camera.target + 5.0  # look away
    io = imgui.get_io()
    io.add_key_event(imgui.Key.f, True)
    session.run()
    io.add_key_event(imgui.Key.f, False)
    session.run()
    low, high = session.scene.current_bounds()
    assert np.linalg.norm(session.camera.target - (low + high) / 2) < 0.5 * np.linalg.norm(high - low)


# --- world space and controllers in the panel (issue 12) -----------------------------------------------
from viewer.model.space import Space  # noqa: E402

from samples import ROBOT  # noqa: E402


def open_robot_with_controllers(session):
    """RobotExpressive, with the controllers run each frame right after playback, as the
    session's frame() does once wired (editor.advance, then editor.update_controllers)."""
    assert session.open_model(ROBOT)
    editor = session.editor
    editor.status = Status("")  # "opened /the/sample's/long/path" wraps over lines the tests need
    advance = editor.advance

    def advance_then_controllers(dt):
        advance(dt)
        editor.update_controllers()
    editor.advance = advance_then_controllers
    for section in ("Display", "Animation", "Bones"):  # make room for the Selected bone section
        click(session, section)
    return editor


def ctrl_z(session):
    io = imgui.get_io()
    io.add_key_event(imgui.Key.mod_ctrl, True)
    io.add_key_event(imgui.Key.z, True)
    session.run()
    io.add_key_event(imgui.Key.z, False)
    io.add_key_event(imgui.Key.mod_ctrl, False)
    session.run()


def test_world_toggle_edits_the_world_position(session):
    editor = open_robot_with_controllers(session)
    head = editor.scene.find_bone("Head")
    editor.select(head)
    editor.pause()  # the dance would move the head between frames
    mesh = editor.mesh_of(head)
    session.run()
    click(session, "World")
    assert editor.space is Space.WORLD
    before = head.get_absolute_position(mesh).copy()
    drag(session, "position", field=1, fields=3, dx=50)  # world y only
    after = head.get_absolute_position(mesh)
    assert after[1] - before[1] > 0.05
    np.testing.assert_allclose(after[[0, 2]], before[[0, 2]], atol=1e-5)
    ctrl_z(session)                                      # the drag was one step
    np.testing.assert_allclose(head.get_absolute_position(mesh), before, atol=1e-6)
    click(session, "Local")
    assert editor.space is Space.LOCAL


def test_ik_from_the_panel_reaches_a_dragged_target_and_undoes(session, tmp_path):
    editor = open_robot_with_controllers(session)
    assert editor.playback.playing
    lower = editor.scene.find_bone("LowerArm.L")
    editor.select(lower)
    session.run()
    click(session, "IK")
    entry = editor.controller_of(lower)
    assert entry is not None and entry.kind == "ik" and editor.playback.playing  # the clip plays on (the edit is in the layer)
    click(session, "Morph targets")  # make room (the panel scrolls; the Mixer section's header takes a row)
    session.run()
    for label in ("target from", "target xyz", "pole from", "bend axis"):
        assert visible(session, label), label
    reach = sum(entry.controller.lengths)
    start = np.array(entry.target)
    drag(session, "target xyz", field=2, fields=3, dx=60)  # pull the target forward (world z)
    moved = np.array(editor.controller_of(lower).target)
    assert moved[2] - start[2] > 0.05 and np.allclose(moved[:2], start[:2])
    session.run(2)
    # The chain's end is at the target, or, out of reach, as far toward it as the arm goes.
    shoulder = lower.get_parent().get_absolute_position(editor.mesh_of(lower))
    distance = np.linalg.norm(moved - shoulder)
    reachable = shoulder + (moved - shoulder) * min(1.0, reach / distance)
    assert np.linalg.norm(editor.chain_end(lower) - reachable) < 1e-3 * reach
    write_png(tmp_path / "ik-panel.png", session.target.read())
    ctrl_z(session)                                          # one drag, one step
    np.testing.assert_allclose(editor.controller_of(lower).target, start)
    click(session, "None")
    assert editor.controller_of(lower) is None and not editor.display.markers


def test_ik_on_a_root_bone_shows_the_error_in_the_panel(session):
    editor = open_robot_with_controllers(session)
    editor.select(editor.scene.find_bone("Bone"))
    session.run()
    click(session, "IK")  # no exception out of the panel
    assert editor.controller_of(editor.selected) is None
    assert editor.status.is_error and "no parent" in editor.status.text


def test_a_file_with_several_scenes_offers_a_choice_that_reloads_it(session, tmp_path):
    """The panel's scene chooser: shown only for a file with several scenes; choosing reloads."""
    import json

    from viewer.ui.panel import PanelRequests

    document = json.loads((SAMPLES_DIR / "RiggedSimple/RiggedSimple.gltf").read_text())
    roots = document["scenes"][0]["nodes"]
    document["scenes"] = [{"name": "rig", "nodes": roots}, {"name": "rig again", "nodes": roots},
                          {"name": "empty", "nodes": []}]
    path = tmp_path / "three-scenes.gltf"
    path.write_text(json.dumps(document))
    assert session.open_model(SAMPLES_DIR / "Fox/Fox.glb")
    session.run(2)
    assert "scene" not in session.panel.rects            # one scene: no chooser
    assert session.open_model(path)
    session.run(2)
    assert "scene" in session.panel.rects and session.scene.file_scene == 0
    session._handle(PanelRequests(open_scene=1), (640, 480))  # what choosing "1: rig again" asks for
    assert session.scene.file_scene == 1 and not session.editor.status.is_error
    session._handle(PanelRequests(open_scene=2), (640, 480))
    # Scene 2 shows nothing: the model stays on scene 1 and the status says why.
    assert session.scene.file_scene == 1 and session.editor.status.is_error and "scene 2" in str(session.editor.status)
