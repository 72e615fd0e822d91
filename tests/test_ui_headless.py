"""The viewer with its panel, rendered offscreen on EGL and driven by synthetic ImGui input."""

import numpy as np
import pytest
from imgui_bundle import imgui

from viewer.character import build_character
from viewer.cli import write_png
from viewer.render.headless import OffscreenTarget, create_headless_context, release_egl_current
from viewer.ui.session import ViewerSession

from test_gltf import SAMPLES_DIR

SIZE = (1024, 640)


@pytest.fixture
def session():
    ctx = create_headless_context()
    target = OffscreenTarget(ctx, SIZE)
    session = ViewerSession(ctx, build_character())
    session.target = target
    session.run = lambda frames=1, **kw: [session.frame(SIZE, 1 / 60, target.framebuffer, **kw) for _ in range(frames)]
    session.run(2)
    yield session
    session.release()
    target.release()
    ctx.release()
    release_egl_current()


def centre(rect, fraction=0.5):
    x0, y0, x1, y1 = rect
    return x0 + (x1 - x0) * fraction, (y0 + y1) / 2


def click(session, label):
    x, y = centre(session.panel.rects[label])
    io = imgui.get_io()
    io.add_mouse_pos_event(x, y)
    session.run()
    io.add_mouse_button_event(0, True)
    session.run()
    io.add_mouse_button_event(0, False)
    session.run()


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
    assert session.scene is scene and session.editor.status.startswith("error:") and "broken.glb" in session.editor.status
    assert session.open_model(SAMPLES_DIR / "RiggedFigure/RiggedFigure.gltf")
    session.run(3)
    assert session.model_name == "RiggedFigure.gltf" and session.editor.playback.playing


def test_playback_controls(session):
    assert session.open_model(SAMPLES_DIR / "Fox/Fox.glb")
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


def test_matrices_section_shows_the_seven_matrices(session, tmp_path):
    click(session, "leftArm")
    assert "matrix final" not in session.panel.rects  # collapsed by default
    click(session, "Display")                          # make room: collapse a section
    click(session, "Matrices")
    session.run()
    names = ["local", "absolute", "final", "bind", "absolute bind", "absolute inverse bind", "rest"]
    shown = [n for n in names if f"matrix {n}" in session.panel.rects]
    assert shown[:3] == ["local", "absolute", "final"]  # the rest may scroll below the window
    write_png(tmp_path / "matrices.png", session.target.read())
