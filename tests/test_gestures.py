"""Posing in the viewport (issue 14), headless: a ViewerSession on EGL driven by synthetic ImGui
mouse and key events, aimed with ``app.project``. Picking, the rotate gizmo's rings and
arrows, R/G with X/Y/Z, Esc, IK drags of chain ends, mirror; each gesture one undo step."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from imgui_bundle import imgui

from viewer.editing import interaction as ix
from viewer.character import build_character
from viewer.loaders import load_model
from viewer.model.space import Space
from viewer.editing.pose import pose_of
from viewer.render.headless import OffscreenTarget, create_headless_context, release_egl_current
from viewer.ui.window_app import WindowApp
from viewer.ui.gestures import View
from viewer.ui.session import ViewerSession

from panel_driver import click_at, key, move, press
from samples import CESIUM_MAN, FOX, ROBOT

SIZE = (1280, 720)
MODELS = {"character": None, "CesiumMan": CESIUM_MAN, "Fox": FOX, "RobotExpressive": ROBOT}


@pytest.fixture(scope="module")
def context():
    ctx = create_headless_context()
    target = OffscreenTarget(ctx, SIZE)
    yield ctx, target
    target.release()
    ctx.release()
    release_egl_current()


def make_session(context, model=None):
    ctx, target = context
    scene = build_character() if model is None else load_model(model)
    session = ViewerSession(ctx, scene, play=False)
    session.target = target
    session.app = None
    session.run = lambda frames=1: [session.frame(SIZE, 1 / 60, target.framebuffer) for _ in range(frames)]
    session.run(2)
    return session


@pytest.fixture
def session(context):
    session = make_session(context)
    yield session
    session.release()


@pytest.fixture(params=list(MODELS))
def model_session(context, request):
    session = make_session(context, MODELS[request.param])
    session.model_key = request.param
    yield session
    session.release()


def project(session, point):
    return np.array(WindowApp(session).project(point))


def drag_path(session, pixels, button=0):
    move(session, pixels[0])
    press(session, button, True)
    for pixel in pixels[1:]:
        move(session, pixel)
    press(session, button, False)


def world(session, bone):
    return np.asarray(bone.get_absolute_position(session.editor.mesh_of(bone)), float)


def world_rotation(session, bone):
    return ix.rotation_part(bone.get_rotation_matrix(Space.WORLD, session.editor.mesh_of(bone)))


def model_size(session):
    low, high = session.scene.rest_bounds
    return float(np.linalg.norm(np.asarray(high) - np.asarray(low)))


def snapshot(session):
    return [(b.get_pose_target().position.copy(), b.get_pose_target().rotation_quaternion.copy(),
             b.get_pose_target().scaling.copy()) for b in session.editor.bones()]


def assert_same_bits(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            assert np.array_equal(u, v), (u, v)


def bone_mid(session, bone):
    """A point on the bone's own drawn segment (a third of the way), on screen."""
    from viewer.render.geometry import skeleton_segments

    for entry in skeleton_segments(session.scene):
        if entry.skeleton is bone.get_skeleton():
            i = np.flatnonzero(entry.owners == list(entry.skeleton.bones).index(bone))[0]
            return project(session, entry.starts[i] + (entry.ends[i] - entry.starts[i]) / 3)
    raise AssertionError(bone.name)


def test_click_at_a_bones_projected_position_selects_it(session):
    editor = session.editor
    assert editor.selected.name == "body"
    arm = session.scene.find_bone("leftArm")
    click_at(session, project(session, world(session, arm)))
    assert editor.selected is arm
    # Empty space keeps the selection; a click on the body's mesh (away from every segment)
    # picks the bone with the most weight there.
    click_at(session, (1250, 30))
    assert editor.selected is arm
    body = session.scene.find_bone("body")
    low, high = session.scene.rest_bounds
    click_at(session, project(session, (0.0, 0.35, 0.3)))
    assert editor.selected is body, editor.selected


def test_hover_highlights_and_a_drag_on_empty_space_still_orbits(session):
    arm = session.scene.find_bone("rightArm")
    move(session, bone_mid(session, arm), frames=2)
    assert session.gestures.hovered is arm
    yaw = session.camera.yaw
    selected = session.editor.selected
    drag_path(session, [(1100, 600), (1130, 600), (1160, 600)])
    assert abs(session.camera.yaw - yaw) > 10 and session.editor.selected is selected
    assert not session.editor.can_undo


def ring_grab_point(session, name):
    """A pixel on ring ``name`` that no other handle is near."""
    view = View(session.camera, session.window_size)
    handles = {h.name + h.kind: h for h in session.gestures.handles}
    ring = handles[name + "ring"]
    screen, _ = ix.project(ring.points, view.matrix, view.size)
    for point in screen[::2]:
        if ix.pick_handle(point, session.gestures.handles, view.matrix, view.size) is ring:
            others = [h for h in session.gestures.handles if h is not ring]
            if ix.pick_handle(point, others, view.matrix, view.size, radius=3 * ix.GIZMO_HIT_PIXELS) is None:
                return point, view
    raise AssertionError(f"no clear point on ring {name}")


def sweep(center, start, degrees, steps=8):
    """Pixels along a circle about ``center`` from ``start``, counter-clockwise on screen."""
    offset = np.asarray(start) - center
    radius, angle = np.linalg.norm(offset), math.atan2(-offset[1], offset[0])
    return [center + radius * np.array([math.cos(a), -math.sin(a)])
            for a in angle + np.radians(np.linspace(0, degrees, steps + 1))]


def angle_axis(relative):
    """(degrees, unit axis) of a 3x3 rotation in the row-vector layout."""
    q = ix.quaternions(relative)
    angle = 2 * math.degrees(math.atan2(np.linalg.norm(q[:3]), q[3]))
    return angle, q[:3] / max(np.linalg.norm(q[:3]), 1e-12)


@pytest.mark.parametrize("ring, space, snap", [("Z", Space.WORLD, False), ("X", Space.WORLD, False),
                                               ("Y", Space.LOCAL, False), ("view", Space.WORLD, False),
                                               ("Z", Space.WORLD, True)])
def test_a_ring_drag_turns_the_bone_by_the_swept_angle_about_the_rings_axis(session, ring, space, snap):
    editor = session.editor
    arm = session.scene.find_bone("leftArm")
    editor.select(arm)
    editor.set_space(space)
    session.run(2)
    before = world_rotation(session, arm)
    steps_before = len(editor._undo)
    start, view = ring_grab_point(session, ring)
    handle = ix.pick_handle(start, session.gestures.handles, view.matrix, view.size)
    center = project(session, world(session, arm))
    io = imgui.get_io()
    if snap:
        io.add_key_event(imgui.Key.mod_ctrl, True)
    drag_path(session, sweep(center, start, 37.0))
    if snap:
        io.add_key_event(imgui.Key.mod_ctrl, False)
        session.run()
    relative = before.T @ world_rotation(session, arm)   # W1 = W0 @ R: the turn, in world axes
    degrees, axis = angle_axis(relative)
    expected = 30.0 if snap else 37.0
    assert abs(degrees - expected) < 1.0, degrees
    # About the ring's axis, the right-handed way when the axis faces the camera.
    sign = ix.facing_sign(handle.axis, view.to_camera)
    np.testing.assert_allclose(axis * sign, handle.axis, atol=0.02)
    assert len(editor._undo) == steps_before + 1          # one gesture, one undo step
    key(session, imgui.Key.z, ctrl=True)
    np.testing.assert_allclose(world_rotation(session, arm), before, atol=1e-9)


def test_the_gizmo_keeps_its_size_on_screen(session):
    session.editor.select(session.scene.find_bone("leftArm"))
    session.run()
    sizes = []
    for factor in (1.0, 0.5):
        session.camera.zoom(factor)
        session.run()
        view = View(session.camera, session.window_size)
        ring = [h for h in session.gestures.handles if h.name == "view"][0]
        screen, _ = ix.project(ring.points, view.matrix, view.size)
        sizes.append(np.ptp(screen[:, 0]))
    assert abs(sizes[0] - sizes[1]) < 1.0 and abs(sizes[0] - 2 * ix.VIEW_RING_PIXELS * 1.2) < 2.0


def test_r_with_axis_keys_then_esc_restores_the_pose_bit_for_bit(model_session):
    session = model_session
    editor = session.editor
    bones = [b for b in editor.bones() if b.get_parent() is not None and (b.children or len(editor.bones()) < 5)]
    bone = bones[len(bones) // 2]
    editor.select(bone)
    session.run()
    before, steps = snapshot(session), len(editor._undo)
    center = project(session, world(session, bone))
    move(session, center + (60, 0))
    key(session, imgui.Key.r)
    for letter in (None, imgui.Key.x, imgui.Key.x, imgui.Key.y, imgui.Key.z):
        if letter is not None:
            key(session, letter)
        move(session, center + (0, -60))
        changed = any(not np.array_equal(a[1], b[1]) for a, b in zip(snapshot(session), before))
        assert changed, letter
        move(session, center + (60, 0))
    move(session, center + (0, 60))
    key(session, imgui.Key.escape)
    assert_same_bits(snapshot(session), before)
    assert len(editor._undo) == steps
    # G, then a right click cancels as well; Enter confirms as one undo step.
    key(session, imgui.Key.g)
    move(session, center + (40, 30))
    assert any(not np.array_equal(a[0], b[0]) for a, b in zip(snapshot(session), before))
    click_at(session, center + (40, 30), button=1)
    assert_same_bits(snapshot(session), before)
    key(session, imgui.Key.r)
    key(session, imgui.Key.z)
    move(session, center + (0, -60))
    key(session, imgui.Key.enter)
    assert len(editor._undo) == steps + 1 and session.gestures.operator is None
    key(session, imgui.Key.z, ctrl=True)
    np.testing.assert_allclose(np.array([s[1] for s in snapshot(session)]), np.array([s[1] for s in before]),
                               atol=1e-12)


def test_g_moves_a_root_bone_and_arrows_move_along_their_axis(model_session):
    session = model_session
    editor = session.editor
    root = next(b for b in editor.bones() if b.get_parent() is None)
    editor.select(root)
    editor.set_space(Space.WORLD)
    session.run(2)
    start = world(session, root)
    view = View(session.camera, session.window_size)
    arrow = next(h for h in session.gestures.handles if h.kind == "arrow" and h.name == "X")
    screen, _ = ix.project(arrow.points, view.matrix, view.size)
    grab = screen[0] + (screen[1] - screen[0]) * 0.9
    assert ix.pick_handle(grab, session.gestures.handles, view.matrix, view.size) is arrow
    direction = (screen[1] - screen[0]) / np.linalg.norm(screen[1] - screen[0])
    drag_path(session, [grab, grab + direction * 20, grab + direction * 40])
    moved = world(session, root) - start
    assert moved[0] > 0 and np.linalg.norm(moved[1:]) < 1e-6 * model_size(session) + 1e-9
    expected = ix.axis_drag(np.floor(grab), np.floor(grab + direction * 40), start, np.array([1.0, 0, 0]), view.matrix, view.size,
                            view.world_per_pixel(start))
    assert abs(moved[0] - expected) < 1e-3 * model_size(session)


def ik_end(session):
    """A chain end to drag on each model (a marked handle where the model names one)."""
    names = {"CesiumMan": "Skeleton_arm_joint_L__2_", "Fox": "b_LeftHand_011", "RobotExpressive": "Palm2.L"}
    return session.scene.find_bone(names[session.model_key])


@pytest.mark.parametrize("model", ["CesiumMan", "Fox", "RobotExpressive"])
def test_an_ik_drag_puts_the_chain_end_on_the_target(context, model):
    session = make_session(context, MODELS[model])
    session.model_key = model
    try:
        editor = session.editor
        end = ik_end(session)
        if not ix.is_ik_handle(end):
            editor.select(end)  # not named like a hand: the selected bone's joint is its handle
        session.run()
        start_world = world(session, end)
        start = project(session, start_world)
        shoulder = world(session, end.get_parent().get_parent())
        elbow_before = world(session, end.get_parent())
        steps = len(editor._undo)
        # A reachable target: towards the shoulder, a fifth of the way, on screen.
        goal = start + (project(session, shoulder) - start) * 0.2 + np.array([6.0, 4.0])
        drag_path(session, [start, start + (goal - start) * 0.3, start + (goal - start) * 0.7, goal])
        view = View(session.camera, session.window_size)
        target = ix.ray_plane(*view.ray(goal), start_world, view.to_camera)
        assert np.linalg.norm(world(session, end) - target) < 0.01 * model_size(session)
        assert np.linalg.norm(world(session, end) - start_world) > 0.02 * model_size(session)
        assert len(editor._undo) == steps + 1
        # The elbow stayed on its side of the shoulder-hand line (no flip).
        def bend(elbow, hand):
            line = (hand - shoulder) / np.linalg.norm(hand - shoulder)
            offset = elbow - shoulder
            return offset - line * (offset @ line)
        assert bend(elbow_before, start_world) @ bend(world(session, end.get_parent()), world(session, end)) > 0
        # Esc during a drag puts the chain back exactly.
        before = snapshot(session)
        move(session, project(session, world(session, end)))
        press(session, 0, True)
        move(session, project(session, world(session, end)) + (-15, 10))
        assert any(not np.array_equal(a[1], b[1]) for a, b in zip(snapshot(session), before))
        key(session, imgui.Key.escape)
        press(session, 0, False)
        assert_same_bits(snapshot(session), before)
    finally:
        session.release()


def test_mirror_of_a_posed_arm_gives_the_mirrored_rotation(session):
    editor = session.editor
    left, right = session.scene.find_bone("leftArm"), session.scene.find_bone("rightArm")
    editor.select(left)
    editor.set_yaw_pitch_roll_degrees(left, 20, 10, 75)
    session.run()
    key(session, imgui.Key.m)
    yaw, pitch, roll = editor.yaw_pitch_roll_degrees(right)
    # Across the x = 0 plane: yaw and roll change sign, pitch stays.
    np.testing.assert_allclose((yaw, pitch, roll), (-20, 10, -75), atol=1e-9)
    key(session, imgui.Key.z, ctrl=True)
    np.testing.assert_allclose(editor.yaw_pitch_roll_degrees(right), (0, 0, -30), atol=1e-9)


def reflect(points, normal, point):
    return points - 2.0 * ((points - point) @ normal)[:, None] * normal


@pytest.mark.parametrize("model", ["CesiumMan", "Fox", "RobotExpressive"])
def test_mirror_pose_reflects_every_joint_on_gltf_models(context, model):
    session = make_session(context, MODELS[model])
    try:
        editor = session.editor
        skeleton = session.scene.skeletons[0]
        mesh = editor.mesh_of(skeleton.bones[0])
        bones = list(skeleton.bones)
        bind = np.array([b.get_absolute_bind_matrix() for b in bones]) @ mesh.world_matrix
        normal, point = ix.mirror_plane([b.name for b in bones], bind[:, 3, :3])
        partners = ix.mirror_partners([b.name for b in bones], bind[:, 3, :3], normal, point)
        paired = [i for i in range(len(bones)) if partners[i] != i]
        assert len(paired) >= 4
        # An asymmetric pose: a few limbs turned on one side.
        for i in paired[:: max(1, len(paired) // 4)]:
            if bones[i].get_parent() is not None:
                bones[i].rotate((0.3, 0.8, 0.2), 0.6, Space.WORLD, mesh)
        session.run()
        before = (skeleton.get_absolute_matrices() @ mesh.world_matrix)[:, 3, :3]
        roots = [i for i, b in enumerate(bones) if b.get_parent() is None]
        key(session, imgui.Key.m, shift=True)
        after = (skeleton.get_absolute_matrices() @ mesh.world_matrix)[:, 3, :3]
        expected = reflect(before, normal, point)[partners]
        # Roots keep their position (only turns are mirrored): measure from them.
        shift = after[roots].mean(axis=0) - expected[roots].mean(axis=0)
        error = np.linalg.norm(after - expected - shift, axis=1).max()
        assert error < 0.01 * model_size(session), error
        assert len(editor._undo) == 1
    finally:
        session.release()


def test_every_gesture_shows_in_the_panel_while_it_runs(session):
    editor = session.editor
    arm = session.scene.find_bone("leftArm")
    editor.select(arm)
    session.run()
    center = project(session, world(session, arm))
    move(session, center + (50, 0))
    key(session, imgui.Key.r)
    move(session, center + (0, -50))
    move(session, center + (0, -50))
    assert "rotate leftArm" in editor.status.text and " deg" in editor.status.text
    # The panel draws from the same model the gesture is turning: its quaternion field
    # shows the bone's rotation mid-drag.
    session.panel.draw  # noqa: B018 (drawn every frame by session.run)
    quaternion = editor.pose_values(arm, Space.LOCAL)[1]
    np.testing.assert_array_equal(quaternion, arm.get_pose_target().rotation_quaternion)
    assert abs(editor.yaw_pitch_roll_degrees(arm)[2] - 30.0) > 20.0
    key(session, imgui.Key.enter)
    assert editor.can_undo


def test_gestures_cost_little_per_frame(context):
    """The gestures' part of a frame (hover, gizmo, handles) on the robot: a guard against a
    blow-up (per-vertex work, buffers rebuilt), at 10 times the typical 3-4 ms; the figure itself
    is measured by scripts/measure_picking.py, not asserted (a shared machine's timings vary)."""
    session = make_session(context, ROBOT)
    try:
        session.editor.select(session.scene.find_bone("UpperArm.L"))
        move(session, project(session, world(session, session.scene.find_bone("Head"))) + (3, 3), frames=3)
        times = []
        for _ in range(20):
            started = time.perf_counter()
            session.gestures.update(session)
            times.append(time.perf_counter() - started)
        assert np.median(times) < 0.040, np.median(times)
    finally:
        session.release()


def test_r_on_a_playing_clip_keeps_it_playing_with_the_turn_on_it(context):
    """R while the clip plays: the rest of the body plays on during the gesture; once confirmed,
    the turn is an offset in the mixer's active layer, and every later frame shows the clip's
    rotation times it; Ctrl+Z gives the clip's own numbers back, exactly."""
    session = make_session(context, FOX)
    editor = session.editor
    reference = load_model(FOX)
    clip = reference.animations[editor.playback.clip_index]
    rotated = {c.node.name for c in clip.channels if c.path == "rotation"}
    bone = next(b for b in editor.bones() if b.get_pose_target().name in rotated and b.children and b.get_parent())
    editor.select(bone)
    editor.play()
    session.run(3)
    center = project(session, world(session, bone))
    move(session, center + (60, 0))
    key(session, imgui.Key.r)
    move(session, center + (0, -60), frames=3)
    press(session, 0, True)    # a click confirms
    press(session, 0, False)
    assert session.gestures.operator is None and editor.playback.playing
    target = bone.get_pose_target()
    tracks = editor.mixer.active_layer.tracks
    assert list(tracks) == [id(target)]
    turn = tracks[id(target)][1]["rotation"][1][0]
    assert abs(turn[3]) < math.cos(math.radians(10) / 2)   # turned by more than 10 degrees

    def clip_rotation(t):
        clip.apply(t)
        return np.array(reference.find_bone(bone.name).get_pose_target().rotation_quaternion)

    times = set()
    for _ in range(10):
        session.run()
        t = editor.playback.time
        times.add(round(t, 6))
        x, y, z, w = clip_rotation(t)
        a, b, c, d = turn
        expected = np.array([w * a + x * d + y * c - z * b, w * b - x * c + y * d + z * a,
                             w * c + x * b - y * a + z * d, w * d - x * a - y * b - z * c])
        got = np.array(target.rotation_quaternion)
        assert min(np.abs(got - expected).max(), np.abs(got + expected).max()) < 1e-6, t
    assert len(times) == 10   # the clip went on playing
    key(session, imgui.Key.z, ctrl=True)
    assert not editor.mixer.active_layer.tracks and editor.playback.playing
    session.run()
    assert np.array_equal(target.rotation_quaternion, clip_rotation(editor.playback.time))
    session.release()
