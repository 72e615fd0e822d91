"""Motion QA in the viewer (issue 44, item 3): the motion checks' findings listed in the panel's QA
section, a click going to a finding's first frame with its bone selected, the findings' frames
marked under the timeline, and the feet in contact ringed in the view. The service is GL-free
(viewer/editing/qa.py) and tested without a window; the panel headless through the panel driver."""

from __future__ import annotations

import numpy as np
import pytest
from imgui_bundle import imgui
from panel_driver import PANEL_SIZE, click, headless_session, move

from samples import CESIUM_MAN
from test_panel_readability import drawn
from viewer.checks import motion_findings
from viewer.checks.findings import finding
from viewer.editing.editor import Editor
from viewer.editing.qa import CONTACT_COLOR, parse_item, per_frame_contact
from viewer.loaders import load_model
from viewer.ui.panel import PosePanel


@pytest.fixture(scope="module")
def cesium():
    return load_model(CESIUM_MAN)


# --- the service, without GL ---------------------------------------------------------------------
def test_pointers_parse_into_bone_and_frames_whatever_the_names_hold():
    item = parse_item(finding("foot-skating", "m", "Armature|take/1/mixamorig:LeftFoot/frames 20-31"), "Armature|take/1")
    assert (item.bone, item.first, item.last, item.ranges) == ("mixamorig:LeftFoot", 20, 31, [(20, 31)])
    one = parse_item(finding("key-denormal", "m", "walk/Hips/frame 7"), "walk")
    assert (one.bone, one.first, one.last, one.frames) == ("Hips", 7, 7, "7")
    seam = parse_item(finding("loop-seam", "m", "walk/Spine/frames 47-0"), "walk")
    assert (seam.first, seam.last, seam.ranges) == (47, 0, [(0, 0), (47, 47)])  # both ends of the loop
    bare = parse_item(finding("loop-seam", "m", "walk"), "walk")
    assert (bare.bone, bare.first, bare.ranges) == (None, None, [])


def test_a_frame_is_in_contact_where_a_contact_step_starts_or_ends():
    assert per_frame_contact([False, True, True, False, False]).tolist() == [False, True, True, True, False, False]


def test_the_qa_rows_are_the_checks_findings_cached_per_clip_and_keys_version(cesium):
    editor = Editor(cesium)
    qa = editor.qa
    result = qa.result()
    found, figures = motion_findings(cesium, clips=[editor.clip])
    assert result.items and {item.finding for item in result.items} == set(found)   # the same data as `check`
    assert [item.severity for item in result.items] == sorted((i.severity for i in result.items),
                                                              key=["error", "warning", "info"].index)
    for foot in figures[0].feet:
        assert result.contact[foot["bone"]].tolist() == per_frame_contact(foot["contact"]).tolist()
    assert len(result.times) == figures[0].frames and result.time_of(0) == pytest.approx(editor.clip.key_times()[0])
    assert qa.result() is result                 # not run again
    version = editor.clip.keys_version
    editor.seek(1.0)
    editor.key_selected()                        # a key: the clip changed, the checks run again
    assert editor.clip.keys_version != version
    again = qa.result()
    assert again is not result and again.version == editor.clip.keys_version
    editor.undo()


def test_go_to_seeks_pauses_selects_and_says_what_the_finding_is(cesium):
    editor = Editor(cesium)
    editor.play()
    item = next(i for i in editor.qa.result().items if i.first and i.bone != editor.selected.name)
    editor.qa.go_to(item)
    assert not editor.playback.playing
    assert editor.playback.time == pytest.approx(editor.qa.result().time_of(item.first))
    assert editor.selected.name == item.bone and editor.selection_chosen
    assert editor.status.text == item.finding.message


def test_a_clip_without_keys_is_an_error_row_not_a_crash(cesium):
    editor = Editor(cesium)
    editor.new_clip("Empty")
    result = editor.qa.result()
    assert "no keys" in result.error and result.items == [] and result.frame_at(0.0) is None
    editor.undo()


def test_contact_markers_ring_the_feet_in_contact_at_the_playhead(cesium):
    editor = Editor(cesium)
    qa = editor.qa
    assert qa.contact_markers() == []            # QA off: nothing is checked or drawn
    qa.enabled = True
    contact = qa.result().contact
    left, right = sorted(contact)                # leg_joint_L_3, leg_joint_R_3
    both_off = int(np.flatnonzero(~contact[left] & ~contact[right])[0])
    left_only = int(np.flatnonzero(contact[left] & ~contact[right])[0])
    for frame, expected in ((both_off, []), (left_only, [left])):
        editor.seek(qa.result().time_of(frame))
        cesium.prepare()
        markers = qa.contact_markers()
        bone = cesium.find_bone(left)
        assert [m.points for m in markers] == [(tuple(float(v) for v in bone.get_absolute_position(editor.mesh_of(bone))),)
                                               for _ in expected]
    qa.show_contacts = False
    assert qa.contact_markers() == []


# --- the panel, headless ---------------------------------------------------------------------------
@pytest.fixture
def session():
    with headless_session(scene=load_model(CESIUM_MAN)) as session:
        session.editor.pause()
        for header in ("Display", "Bones"):   # folded: the QA rows on screen
            click(session, header)
        click(session, "QA")
        session.run(2)
        yield session


def test_the_qa_section_lists_findings_and_a_click_goes_to_one(session):
    editor, panel = session.editor, session.panel
    result = editor.qa.result()
    assert panel.qa_rows == result.items and len(result.items) >= 3
    for index, item in enumerate(result.items):   # each row in its severity's colour, with code, bone, frames
        x0, y0, x1, y1 = panel.rects[f"qa {index}"]
        if y1 > panel.rects["qa list"][3]:
            break   # scrolled out of the list's view
        assert len(drawn(imgui.get_color_u32(PosePanel.SEVERITY_COLORS[item.severity]), (x0, y0, x1, y1))) >= 4 * 10
    index, item = next((i, item) for i, item in enumerate(result.items)
                       if item.first and item.bone != editor.selected.name)
    editor.play()
    click(session, f"qa {index}")
    assert not editor.playback.playing
    assert editor.playback.time == pytest.approx(result.time_of(item.first))
    assert editor.selected.name == item.bone
    assert editor.qa.chosen is item
    session.run()
    x0, y0, x1, y1 = panel.rects["timeline"]   # its frames marked in the text's colour, over the others
    (xa, xb), = [(xa, xb) for marked, xa, xb in panel.qa_marks if marked is item]
    points = drawn(imgui.get_color_u32(imgui.Col_.text), (x0, y1 + 0.5, x1, y1 + 4.5))
    assert len(points) >= 4 and points[:, 0].min() >= xa - 0.5 and points[:, 0].max() <= xb + 0.5


def test_the_timeline_marks_each_findings_frames(session):
    editor, panel = session.editor, session.panel
    result = editor.qa.result()
    x0, y0, x1, y1 = panel.rects["timeline"]
    length = editor.timeline_length()
    grab = imgui.get_style().grab_min_size / 2 + imgui.get_style().frame_padding.x / 2

    def x(frame):
        return x0 + grab + (x1 - x0 - 2 * grab) * result.time_of(frame) / length

    expected = [(item, a, b) for item in result.items for a, b in item.ranges]
    assert len(panel.qa_marks) == len(expected)
    for item, a, b in expected:
        (xa, xb), = [(xa, xb) for marked, xa, xb in panel.qa_marks if marked is item and xa <= x(a) <= xb]
        assert x(a) - 2.5 <= xa <= x(a) - 0.5 and x(b) + 0.5 <= xb <= x(b) + 2.5, (item.frames, xa, xb, x(a), x(b))
    # ... drawn: bars of the warning colour in the gap under the timeline, where the marks say.
    warning = imgui.get_color_u32(PosePanel.SEVERITY_COLORS["warning"])
    points = drawn(warning, (x0, y1, x1, y1 + 4.5))
    assert len(points) >= 4 * len(expected) and points[:, 1].min() >= y1 + 0.5
    spans = [(xa, xb) for _, xa, xb in panel.qa_marks]
    assert all(any(xa - 0.5 <= p <= xb + 0.5 for xa, xb in spans) for p in points[:, 0])
    # Folded, QA is off: no marks, no rings.
    click(session, "QA")
    session.run()
    assert panel.qa_marks == [] and not editor.qa.enabled


def lime(image) -> np.ndarray:
    """(y, x) of the pixels in the contact ring's colour."""
    r, g, b = (image[..., i].astype(int) for i in range(3))
    target = np.round(np.array(CONTACT_COLOR[:3]) * 255)
    return np.argwhere((np.abs(r - target[0]) < 40) & (g > 215) & (b < 60))


def test_the_feet_in_contact_are_ringed_in_the_view_and_only_then(session):
    editor = session.editor
    move(session, (2, 630))   # the mouse off the model and the panel's rows
    result = editor.qa.result()
    left, right = sorted(result.contact)
    size = PANEL_SIZE

    def render_at(frame):
        editor.seek(result.time_of(frame))
        session.run(2)
        image = session.target.read()
        feet = {name: session.camera.project(np.asarray(session.scene.find_bone(name).get_absolute_position(
            editor.mesh_of(session.scene.find_bone(name))), float), *size)[0] for name in (left, right)}
        return image, feet

    contact = result.contact
    frames = np.flatnonzero(contact[left] & ~contact[right])
    left_only = int(frames[len(frames) // 2])
    image, feet = render_at(left_only)
    found = lime(image)
    assert len(found) >= 30, len(found)
    near_left = np.hypot(found[:, 1] - feet[left][0], found[:, 0] - feet[left][1])
    assert near_left.max() <= 20.0 and near_left.min() >= 6.0   # a ring of ~12 px around the foot's joint
    for frame in (int(np.flatnonzero(~contact[left] & ~contact[right])[0]),):
        image, _ = render_at(frame)
        assert len(lime(image)) == 0   # no foot in contact: no ring
    editor.qa.show_contacts = False
    image, _ = render_at(left_only)
    assert len(lime(image)) == 0


def test_a_ring_marker_is_a_circle_of_ring_pixels_facing_the_camera():
    from viewer.camera import look_at, perspective
    from viewer.options import Marker, MarkerKind
    from viewer.render.geometry import RING_PIXELS, RING_SEGMENTS, marker_overlay, world_per_pixel

    view = look_at((0.0, 1.0, 4.0), (0.0, 1.0, 0.0), (0.0, 1.0, 0.0))
    projection = perspective(40.0, 1.5, 0.1, 100.0)
    centre = np.array([0.3, 0.2, 0.5])
    geometry = marker_overlay([Marker(MarkerKind.RING, (tuple(centre),), CONTACT_COLOR)], view, projection, 600)
    assert len(geometry.lines) == 2 * RING_SEGMENTS and len(geometry.points) == 0
    offsets = geometry.lines[:, :3] - centre
    radius = world_per_pixel(centre, view, projection, 600)[0] * RING_PIXELS
    assert np.allclose(np.linalg.norm(offsets, axis=1), radius, rtol=1e-4)
    assert np.allclose(offsets[:, 2], 0.0, atol=1e-6)   # in the plane facing a camera on +z
    assert np.allclose(geometry.lines[:, 3:], CONTACT_COLOR)
