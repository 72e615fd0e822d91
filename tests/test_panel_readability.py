"""The panel read by a new user (issue 37, item 10): slider values not under their grabs, the bone
tree opened and scrolled to a bone chosen elsewhere, a long message shown whole. Checked on what
ImGui actually drew (its draw lists' vertices), not on the panel's own bookkeeping."""

import ctypes

import numpy as np
import pytest
from imgui_bundle import imgui

from viewer.images import write_png
from viewer.options import Status

from panel_driver import click
from samples import FOX

VERTEX = np.dtype([("pos", np.float32, 2), ("uv", np.float32, 2), ("col", np.uint32)])  # ImDrawVert


def drawn(color: int, rect) -> np.ndarray:
    """Positions of the vertices drawn last frame in ``color`` (a packed u32) inside ``rect``."""
    x0, y0, x1, y1 = rect
    found = []
    for draw_list in imgui.get_draw_data().cmd_lists:
        vtx = draw_list.vtx_buffer
        vertices = np.frombuffer(ctypes.string_at(vtx.data_address(), vtx.size() * VERTEX.itemsize), VERTEX)
        pos = vertices["pos"][vertices["col"] == np.uint32(color)]
        found.append(pos[(pos[:, 0] >= x0) & (pos[:, 0] <= x1) & (pos[:, 1] >= y0) & (pos[:, 1] <= y1)])
    return np.concatenate(found)


def box(points):
    return points[:, 0].min(), points[:, 1].min(), points[:, 0].max(), points[:, 1].max()


def overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_slider_values_are_not_under_their_grabs(panel_session, tmp_path):
    session = panel_session
    assert session.open_model(FOX)
    session.run(2)
    editor = session.editor
    editor.pause()
    editor.seek(editor.clip.duration / 2)  # the grab in the middle, where ImGui centres the text
    editor.playback.speed = 1.5
    click(session, "Light and tone mapping")
    editor.set_look("exposure", 1.0)       # the middle of the log slider's 1/16..16
    editor.set_look("environment_rotation", 0.0)
    session.run(2)
    write_png(tmp_path / "sliders.png", session.target.read())
    text, grab = imgui.get_color_u32(imgui.Col_.text), imgui.get_color_u32(imgui.Col_.slider_grab)
    for name in ("timeline", "exposure", "environment turn", "speed"):
        frame = session.panel.rects[name]
        glyphs, handle = drawn(text, frame), drawn(grab, frame)
        assert len(glyphs) >= 4 * 4 and len(handle) >= 4, name   # the value's glyphs, and the grab
        width = frame[2] - frame[0]
        assert abs((box(handle)[0] + box(handle)[2]) / 2 - (frame[0] + width / 2)) < 0.1 * width, name
        assert not overlap(box(glyphs), box(handle)), (name, box(glyphs), box(handle))


def test_a_bone_picked_in_the_view_is_opened_and_scrolled_to_in_the_tree(panel_session, tmp_path):
    from viewer.render.geometry import skeleton_segments
    from viewer.ui.gestures import View

    from panel_driver import click_at

    session = panel_session
    assert session.open_model(FOX)
    session.run(2)
    session.editor.pause()
    click(session, "Display")  # room for the tree
    # Fold the whole tree (the root's arrow): no bone but the root is drawn in it.
    x0, y0, x1, y1 = session.panel.rects["_rootJoint"]
    click_at(session, (x0 + 8, (y0 + y1) / 2))
    assert "b_Root_00" not in session.panel.rects
    # Click the middle of the deepest drawn segment (a tail or leg end) in the view.
    view = View(session.camera, session.window_size)
    deepest = None
    for entry in skeleton_segments(session.scene):
        for start, end, owner in zip(entry.starts, entry.ends, entry.owners):
            bone = entry.skeleton.bones[int(owner)]
            depth = sum(1 for _ in _ancestors(bone))
            pixel = view.project((np.asarray(start) + np.asarray(end)) / 2)
            if pixel[0] > 420 and (deepest is None or depth > deepest[0]):
                deepest = (depth, bone, pixel)
    depth, bone, pixel = deepest
    assert depth >= 4
    click_at(session, pixel)
    assert session.editor.selected is bone
    session.run(2)  # ImGui scrolls on the frame after the one that asks
    write_png(tmp_path / "picked.png", session.target.read())
    tree = session.panel.rects["bone tree"]
    row = session.panel.rects[bone.name]
    assert tree[1] <= row[1] and row[3] <= tree[3], (row, tree)  # opened, and within the tree's view
    # Once per selection: the user may scroll the tree away again, and it stays there.
    io = imgui.get_io()
    io.add_mouse_pos_event((tree[0] + tree[2]) / 2, (tree[1] + tree[3]) / 2)
    io.add_mouse_wheel_event(0.0, 5.0)
    session.run(2)
    scrolled = session.panel.rects[bone.name][1]
    assert scrolled > row[1] + 20
    session.run(3)
    assert session.panel.rects[bone.name][1] == scrolled


def _ancestors(bone):
    bone = bone.get_parent()
    while bone is not None:
        yield bone
        bone = bone.get_parent()


def test_a_long_error_is_drawn_whole_and_wrapped_in_the_panel(panel_session, tmp_path):
    session = panel_session
    folder = "hdr/" + "a_folder_with_a_rather_long_name/" * 5
    message = f"environment {folder}studio.hdr: no such file (FILE.hdr, studio or none)"
    assert len(message) >= 200
    session.editor.status = Status.error(message)
    session.run(2)
    write_png(tmp_path / "error.png", session.target.read())
    shown = f"error: {message}"
    glyphs = drawn(imgui.get_color_u32(panel_error_color()), session.panel.rects["window"])
    # Every visible character reaches the panel's draw list (a glyph is a quad: 4 vertices).
    assert len(glyphs) == 4 * sum(not c.isspace() for c in shown)
    x0, y0, x1, y1 = box(glyphs)
    assert y1 - y0 > 3 * imgui.get_text_line_height()          # wrapped over lines
    assert x1 <= session.panel.rects["window"][2]


def panel_error_color():
    from viewer.ui.panel import ERROR_TEXT
    return ERROR_TEXT
