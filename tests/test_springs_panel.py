"""The window's springs (issue 46, item 2): the Spring chains section's sliders set a chain's
numbers through scene.springs.set_chain (a refused value is one clear error), Reset puts the
joints at rest, and with the clip paused a bone dragged in the viewport swings the chain hanging
from it, which settles back; springs off, the chain follows rigidly. Driven headless through
tests/panel_driver.py, with synthetic mouse and key events."""

from __future__ import annotations

import math

import numpy as np
import pytest
from imgui_bundle import imgui
from panel_driver import centre, click, click_at, headless_session, key, move

from samples import FOX
from springs_cases import size
from viewer.errors import ViewerError
from viewer.loaders import load_model
from viewer.ui.window_app import WindowApp

SIZE = (1024, 800)
TAIL = "b_Tail01_012"


def fox():
    scene = load_model(FOX)
    scene.springs.add_chain(TAIL, stiffness=60, drag=0.2, gravity=10, radius=3)
    return scene


@pytest.fixture
def session():
    with headless_session(size=SIZE, scene=fox()) as session:
        session.editor.pause()
        session.run(90)  # the tail settles where gravity and stiffness hold it
        yield session


def tip(session) -> np.ndarray:
    """The world position of the tail's tip (the last joint's bone)."""
    bone = session.scene.springs.joints[-1].bone
    return np.array(bone.get_world_matrix()[3, :3])


def tail_turns(session) -> np.ndarray:
    """The tail joints' local rotations: what the springs write (the drag turns the hip)."""
    return np.array([j.bone.rotation_quaternion for j in session.scene.springs.joints])


def test_a_chains_sliders_set_its_numbers_and_the_next_frames_swing_with_them(session):
    springs = session.scene.springs
    for header in ("Display", "Bones", "Selected bone"):  # folded: the springs' rows on screen
        click(session, header)
    click(session, "Spring chains")
    session.run()
    joints = springs.chain(TAIL)["joints"]
    settled = tip(session)
    x0, y0, x1, y1 = session.panel.rects[f"{TAIL}/gravity"]
    click_at(session, centre((x0, y0, x1, y1), 0.9))
    gravity = joints[0].gravity_power
    assert gravity > 40 and all(j.gravity_power == gravity for j in joints)  # every joint of the chain
    assert "gravity" in str(session.editor.status) and not session.editor.status.is_error
    session.run(60)
    sagged = tip(session)
    assert sagged[1] < settled[1] - 0.02 * size(session.scene)  # a heavier tail hangs lower
    x0, y0, x1, y1 = session.panel.rects[f"{TAIL}/drag"]
    click_at(session, centre((x0, y0, x1, y1), 0.75))
    assert 0.6 < joints[-1].drag < 0.9
    for label in ("stiffness", "radius"):
        before = joints[0].__dict__[{"stiffness": "stiffness", "radius": "hit_radius"}[label]]
        x0, y0, x1, y1 = session.panel.rects[f"{TAIL}/{label}"]
        click_at(session, centre((x0, y0, x1, y1), 0.95))
        after = joints[0].__dict__[{"stiffness": "stiffness", "radius": "hit_radius"}[label]]
        assert after > before, label
    # Reset: every joint at its rest, no motion left (the tail swung with velocity until now);
    # the paused clip is shown again (Editor.reset_springs), so the joints' tails are where it puts them
    assert max(np.linalg.norm(np.asarray(j.tail) - j.prev) for j in joints) > 1e-6 * size(session.scene)
    click(session, "Reset springs")
    for j in joints:
        np.testing.assert_array_equal(j.tail, j.prev)


def test_a_chains_numbers_are_checked_before_any_is_taken():
    scene = fox()
    springs = scene.springs
    for values, said in (({"radius": -1.0}, "hit radius: -1 is below 0"), ({"stiffness": math.nan}, "not a finite"),
                         ({"drag": 1.5}, "drag: 1.5 is above 1"), ({"gravity": "heavy"}, "is not a number")):
        with pytest.raises(ViewerError, match="spring chain 'b_Tail01_012'") as error:
            springs.set_chain(TAIL, stiffness=5.0, **values) if "stiffness" not in values else \
                springs.set_chain(TAIL, drag=0.5, **values)
        assert said in str(error.value) and "\n" not in str(error.value)
        assert [j.stiffness for j in springs.joints] == [60.0] * 3 and springs.joints[0].drag == 0.2
    with pytest.raises(ViewerError, match="no such chain"):
        springs.set_chain("b_Head_05", stiffness=1.0)


def rotate_hip_and_back(session):
    """R on the hip: the mouse swings it about the view axis and back to where it began, then
    Enter (the hip ends as it was). The tail's local turns and tip after each frame."""
    editor = session.editor
    hip = session.scene.find_bone("b_Hip_01")
    editor.select(hip)
    session.run()
    here = np.array(WindowApp(session).project(hip.get_absolute_position(editor.mesh_of(hip))))
    start = here + (80, 0)
    move(session, start)
    key(session, imgui.Key.r)
    turns, tips = [], []
    for degrees in list(range(0, 50, 5)) + list(range(50, -5, -5)):
        a = math.radians(degrees)
        move(session, here + 80 * np.array([math.cos(a), -math.sin(a)]))
        turns.append(tail_turns(session))
        tips.append(tip(session))
    key(session, imgui.Key.enter)
    assert session.gestures.operator is None
    return np.array(turns), np.array(tips)


def test_with_the_clip_paused_a_dragged_hip_swings_the_tail_which_settles_back(session):
    editor = session.editor
    assert not editor.playback.playing
    settled_turns, settled_tip = tail_turns(session), tip(session)
    turns, tips = rotate_hip_and_back(session)
    swing = np.abs(turns - settled_turns).max(axis=(1, 2))
    assert swing.max() > 0.05   # the tail lagged behind the turning hip
    # the hip is back where it began: the tip still moves on the following frames, then settles
    moving = []
    for _ in range(6):
        before = tip(session)
        session.run(20)
        moving.append(float(np.linalg.norm(tip(session) - before)))
    unit = size(session.scene)
    assert moving[0] > 1e-3 * unit
    assert moving[-1] < 0.2 * moving[0]
    assert np.linalg.norm(tip(session) - settled_tip) < 0.02 * unit
    np.testing.assert_allclose(tail_turns(session), settled_turns, atol=0.02)


def test_springs_off_the_tail_follows_the_dragged_hip_rigidly(session):
    click(session, "Springs", near_left=True)
    springs = session.scene.springs
    assert not springs.enabled
    held = tail_turns(session)
    turns, tips = rotate_hip_and_back(session)
    assert np.ptp(tips, axis=0).max() > 0.03 * size(session.scene)  # the tip went round with the hip
    for now in turns:
        np.testing.assert_array_equal(now, held)  # its turns never changed: rigid
    session.run()
    let_go = tail_turns(session)  # (the edit's end shows the paused clip's pose: its own tail turns)
    session.run(30)
    np.testing.assert_array_equal(tail_turns(session), let_go)  # nothing swings on


def test_a_spring_joint_dragged_keeps_the_drags_turn_and_swings_back_when_let_go(session):
    editor = session.editor
    springs = session.scene.springs
    root = springs.joints[0].bone
    bone = session.scene.find_bone(TAIL)
    settled = tail_turns(session)
    settled_child = np.array(springs.joints[0].child.get_world_matrix()[3, :3])
    editor.select(bone)
    session.run()
    here = np.array(WindowApp(session).project(bone.get_absolute_position(editor.mesh_of(bone))))
    move(session, here + (80, 0))
    key(session, imgui.Key.r)
    move(session, here + (0, -80))   # a quarter turn about the view axis
    turned = np.array(root.rotation_quaternion)
    session.run(10)
    # held: the springs leave the dragged joint as the drag turned it; the ones below swing
    np.testing.assert_array_equal(root.rotation_quaternion, turned)
    assert abs(abs(float(turned @ settled[0])) - 1.0) > 0.05
    child = springs.joints[0].child
    dragged = np.array(child.get_world_matrix()[3, :3])
    np.testing.assert_allclose(springs.joints[0].tail, dragged, atol=1e-6 * size(session.scene))  # it follows
    key(session, imgui.Key.enter)
    # no jump on letting go: it swings back from where the drag left it (the drag's twist about
    # the bone is dropped, as a spring joint's turn is its swing from rest alone)
    let_go = np.array(child.get_world_matrix()[3, :3])
    assert np.linalg.norm(let_go - dragged) < 0.25 * np.linalg.norm(dragged - settled_child)
    session.run(180)
    # let go: the spring pulls it back toward its rest
    np.testing.assert_allclose(tail_turns(session), settled, atol=0.02)
