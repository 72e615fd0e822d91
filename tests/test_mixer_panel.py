"""The panel's Mixer section (issue 43, item 6): each control, clicked headless through the panel
driver, changes the scene's mixer as the one-line script call would; the active layer's keys are
drawn on the timeline."""

from __future__ import annotations

import numpy as np
import pytest
from imgui_bundle import imgui
from panel_driver import centre, click, click_at, headless_session

from samples import ROBOT
from viewer.loaders import load_model
from viewer.motion import quat

SIZE = (1024, 1500)  # tall enough for RobotExpressive's fourteen clips and the layers


@pytest.fixture
def session():
    scene = load_model(ROBOT)
    with headless_session(size=SIZE, scene=scene) as session:
        session.editor.pause()
        for header in ("Display", "Bones"):  # folded: the mixer's rows on screen
            click(session, header)
        click(session, "Mixer")
        yield session


def pick(session, combo, item):
    """Open a combo and choose an item (a popup finds its place in its first frames)."""
    click(session, combo)
    session.run(2)
    assert item in session.panel.rects, (item, sorted(k for k in session.panel.rects if k.startswith(combo)))
    click(session, item)


def slide(session, name, fraction):
    x0, y0, x1, y1 = session.panel.rects[name]
    click_at(session, centre((x0, y0, x1, y1), fraction))


def test_a_clip_row_plays_stops_and_weights_its_action(session):
    mixer = session.scene.mixer
    walk = mixer.action("Walking")
    assert not walk.playing and walk.weight == 1.0
    click(session, "Walking/play")
    assert walk.playing and walk.is_running
    slide(session, "Walking/weight", 0.25)
    assert 0.15 < walk.weight < 0.35
    click(session, "Walking/play")  # now the Stop button
    assert not walk.playing and walk.time == 0.0


def test_a_clip_opened_sets_loop_additive_speed_mask_fades_and_crossfades(session):
    editor, mixer = session.editor, session.scene.mixer
    walk = mixer.action("Walking")
    click(session, "Walking")  # unfold the clip's settings
    pick(session, "Walking/loop", "Walking/loop/pingpong")
    assert walk.loop == "pingpong"
    click(session, "Walking/additive", near_left=True)
    assert walk.additive
    slide(session, "Walking/speed", 0.25)   # -3..3: a quarter is -1.5
    assert -2.0 < walk.speed < -1.0
    editor.select(session.scene.find_bone("Head"))
    session.run(2)
    pick(session, "Walking/mask", "Walking/mask/subtree")
    assert walk.mask.subtrees == ["Head"] and walk.mask.include is None
    editor.select(session.scene.find_bone("UpperArm.L"))
    session.run(2)
    pick(session, "Walking/mask", "Walking/mask/+ subtree")
    assert walk.mask.subtrees == ["Head", "UpperArm.L"]
    pick(session, "Walking/mask", "Walking/mask/all bones")
    assert walk.mask is None
    click(session, "Walking/fade in")
    assert walk.playing and walk.envelope(mixer.clock) == 0.0   # ramps from 0 over the fade seconds
    mixer.update(session.panel.fade_seconds / 2)
    assert walk.envelope(mixer.clock) == pytest.approx(0.5)
    mixer.update(session.panel.fade_seconds)
    pick(session, "Walking/crossfade", "Walking/crossfade/Running")
    running = mixer.action("Running")
    assert running.playing and running.envelope(mixer.clock) == 0.0 and walk.envelope(mixer.clock) == 1.0
    mixer.update(session.panel.fade_seconds * 1.01)
    assert running.envelope(mixer.clock) == 1.0 and not walk.playing   # the cross-fade is done
    click(session, "Running")
    click(session, "Running/fade out")
    mixer.update(session.panel.fade_seconds * 1.01)
    assert not running.playing


def test_a_typed_weight_below_0_is_refused_on_the_status_line_and_changes_nothing(session):
    walk = session.scene.mixer.action("Walking")
    walk.weight = 0.7
    io = imgui.get_io()
    io.add_key_event(imgui.Key.mod_ctrl, True)   # Ctrl+click: type a value (the text is selected)
    click(session, "Walking/weight")
    io.add_key_event(imgui.Key.mod_ctrl, False)
    session.run()
    io.add_input_characters_utf8("-2")
    session.run()
    io.add_key_event(imgui.Key.enter, True)
    session.run()
    io.add_key_event(imgui.Key.enter, False)
    session.run(2)
    status = session.editor.status
    assert status.is_error and "'Walking' weight" in status.text and ">= 0" in status.text, status.text
    assert walk.weight == 0.7


def test_layers_active_mute_solo_mode_weight_and_a_new_layer(session):
    mixer = session.scene.mixer
    tweaks = mixer.layers[0]
    session.run()
    click(session, "Add layer")
    assert [layer.name for layer in mixer.layers] == ["Tweaks", "Layer 2"]
    added = mixer.layers[1]
    assert mixer.active_layer is added
    session.run()
    click(session, "layer Tweaks/active", near_left=True)
    assert mixer.active_layer is tweaks
    click(session, "layer Tweaks/mute", near_left=True)
    assert tweaks.mute
    click(session, "layer Tweaks/mute", near_left=True)
    assert not tweaks.mute
    click(session, "layer Layer 2/solo", near_left=True)
    assert added.solo and not tweaks.heard
    pick(session, "layer Layer 2/mode", "layer Layer 2/mode/override")
    assert added.mode == "override"
    slide(session, "layer Layer 2/weight", 0.5)
    assert 0.4 < added.weight < 0.6
    session.editor.select(session.scene.find_bone("Neck"))
    session.run(2)
    pick(session, "layer Layer 2/mask", "layer Layer 2/mask/subtree")
    assert added.mask.subtrees == ["Neck"] and tweaks.mask is None
    # A tweak shows at once in a paused view, and Clear layer takes it away.
    walk = mixer.action("Walking").play()
    mixer.update(0.3)
    head = np.array(mixer.target("Head").rotation_quaternion)
    turn = quat.normalize(np.array([0.0, 0.26, 0.0, 0.97]))
    mixer.set_pose("Head", rotation_quaternion=quat.multiply(head, turn), layer=tweaks)
    click(session, "layer Layer 2/solo", near_left=True)   # solo off: the tweak is heard
    assert np.allclose(mixer.target("Head").rotation_quaternion, quat.multiply(head, turn), atol=1e-6)
    assert mixer.active_layer is tweaks and walk.playing
    click(session, "Clear layer")
    assert not tweaks.tracks
    assert np.allclose(mixer.target("Head").rotation_quaternion, head, atol=1e-9)


def test_the_active_layers_keys_are_marked_on_the_timeline(session):
    editor, mixer = session.editor, session.scene.mixer
    click(session, "Mixer")  # folded: the timeline stays where it is
    editor.choose_clip(next(i for i, c in enumerate(session.scene.animations) if c.name == "Walking"))
    editor.pause()
    session.run()
    assert session.panel.layer_key_marks == []
    head = np.array(mixer.target("Head").rotation_quaternion)
    duration = editor.clip.duration
    mixer.action("Walking").play()
    for t in (0.25 * duration, 0.75 * duration):
        mixer.key("Head", rotation_quaternion=head, time=t)
    session.run()
    x0, y0, x1, y1 = session.panel.rects["timeline"]
    marks = session.panel.layer_key_marks
    assert len(marks) == 2
    length = editor.timeline_length()
    for x, t in zip(marks, (0.25 * duration, 0.75 * duration)):
        grab = imgui.get_style().grab_min_size / 2 + imgui.get_style().frame_padding.x / 2
        assert abs(x - (x0 + grab + (x1 - x0 - 2 * grab) * t / length)) <= 1.0
    # ... drawn: triangles of the layer key colour at the timeline's lower edge.
    from test_panel_readability import drawn
    from viewer.ui.panel import PosePanel

    points = drawn(imgui.get_color_u32(PosePanel.LAYER_KEY_COLOR), (x0, y0, x1, y1 + 1))
    assert len(points) >= 6 and np.isclose(points[:, 1].max(), y1, atol=1.0)
    another = mixer.add_layer("Empty")
    mixer.active_layer = another
    session.run()
    assert session.panel.layer_key_marks == []
