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
