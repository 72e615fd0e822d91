"""Camera framing covers what is drawn: the posed, animated model at the rendered time, every
frame of a sequence with one camera, and the viewer's F on the current pose."""

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from samples import FOX, ROBOT
from viewer.camera import FRAME_MARGIN, OrbitCamera
from viewer.character import build_character
from viewer.model import TransformNode
from viewer.model.animation import AnimationChannel, AnimationClip
from viewer.model.transforms import quaternion_from_yaw_pitch_roll
from viewer.camera import drawn_points, framed_camera
from viewer.render.headless import HeadlessRenderer
from viewer.options import RenderOptions


def ndc(camera, points, aspect):
    """Normalized device x, y of world points (-1..1 is the image)."""
    points = np.atleast_2d(points)
    clip = np.c_[points, np.ones(len(points))] @ camera.view_matrix() @ camera.projection_matrix(aspect)
    assert np.all(clip[:, 3] > 0), "a point is behind the camera"
    return clip[:, :2] / clip[:, 3:4]


@pytest.mark.parametrize("seed", range(6))
def test_frame_points_fits_every_point_tightly_and_centred(seed):
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(200, 3)) * rng.uniform(0.1, 50, size=3) + rng.uniform(-100, 100, size=3)
    aspect = rng.uniform(0.4, 2.5)
    camera = OrbitCamera()
    camera.frame_points(points, yaw=rng.uniform(-180, 180), pitch=rng.uniform(-60, 60), aspect=aspect)
    xy = ndc(camera, points, aspect)
    limit = 1 - FRAME_MARGIN
    assert np.all(np.abs(xy) <= limit + 1e-6)
    # Tight: on one axis the extreme points sit on the margin at both sides (centred there).
    spans = [(xy[:, k].min(), xy[:, k].max()) for k in range(2)]
    assert any(np.isclose(low, -limit, atol=1e-6) and np.isclose(high, limit, atol=1e-6) for low, high in spans)
    # Every point is in front of the near plane.
    depth = (points - camera.position) @ (camera.target - camera.position) / camera.distance
    assert depth.min() > camera.distance * camera.near_ratio


@pytest.mark.parametrize("seed", range(4))
def test_deciding_points_frame_as_all_points_do(seed):
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(500, 3)) * [3, 1, 0.5]
    every, few = OrbitCamera(yaw=35, pitch=12), OrbitCamera(yaw=35, pitch=12)
    every.frame_points(points, aspect=1.5)
    few.frame_points(few.deciding_points(points, aspect=1.5), aspect=1.5)
    assert len(few.deciding_points(points, aspect=1.5)) <= 6
    np.testing.assert_allclose(few.target, every.target, atol=1e-9)
    assert few.distance == pytest.approx(every.distance, rel=1e-12)


def sliding_character(distance=4.0):
    """The built-in character with a one-second clip that slides it ``distance`` along +X."""
    scene = build_character()
    node = TransformNode("body")  # clips animate nodes; the bone follows its linked node
    scene.find_bone("body").link_transform_node(node)
    clip = AnimationClip("slide", [AnimationChannel(node, "translation", [0.0, 1.0],
                                                    [[0.0, 0.0, 0.0], [distance, 0.0, 0.0]])])
    scene.animations.append(clip)
    return scene, clip


def test_a_sequence_is_framed_by_one_camera_that_shows_every_frame():
    scene, clip = sliding_character()
    times = np.linspace(0.0, 1.0, 11)
    aspect = 4 / 3
    camera = framed_camera(scene, aspect=aspect, times=times, pose_at=clip.apply)
    first_only = (clip.apply(0.0), framed_camera(scene, aspect=aspect))[1]
    limit = 1 - FRAME_MARGIN
    for time in times:
        clip.apply(time)
        assert np.all(np.abs(ndc(camera, drawn_points(scene), aspect)) <= limit + 1e-6), time
    # Not vacuous: a camera framed on the first frame loses the model by the end.
    clip.apply(1.0)
    assert np.abs(ndc(first_only, drawn_points(scene), aspect)).max() > 1.0
    # A long sequence samples a bounded subset, still first and last included.
    long_camera = framed_camera(scene, aspect=aspect, times=np.linspace(0.0, 1.0, 5000), pose_at=clip.apply)
    np.testing.assert_allclose(long_camera.target, camera.target, atol=1e-6)
    assert long_camera.distance == pytest.approx(camera.distance, rel=1e-6)


def test_framing_uses_the_current_pose_and_the_joints():
    scene = build_character()
    raised = scene.find_bone("leftArm")
    raised.rotation_quaternion = quaternion_from_yaw_pitch_roll([0.0, 0.0, np.radians(120)])  # above the head
    aspect = 1.0
    camera = framed_camera(scene, aspect=aspect)
    points = drawn_points(scene)
    assert np.all(np.abs(ndc(camera, points, aspect)) <= 1 - FRAME_MARGIN + 1e-6)
    rest_framed = OrbitCamera()
    rest_framed.frame(*scene.rest_bounds, yaw=camera.yaw, pitch=camera.pitch, aspect=aspect)
    assert np.abs(ndc(rest_framed, points, aspect)).max() > 1.0  # the bind-pose box would cut the hand off
    # The joints are part of what is framed.
    heads = scene.skeletons[0].get_absolute_matrices()[:, 3, :3]
    assert all(any(np.allclose(head, p) for p in points) for head in heads)


# --- the session's F key -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def egl_ctx():
    with HeadlessRenderer((64, 64)) as headless:
        yield headless.ctx


def test_f_frames_the_current_pose_and_pose_or_rest_start_paused(egl_ctx):
    from viewer.ui.session import ViewerSession

    scene = build_character()
    session = ViewerSession(egl_ctx, scene)
    try:
        arm = scene.find_bone("leftArm")
        arm.rotation_quaternion = quaternion_from_yaw_pitch_roll([0.0, 0.0, np.radians(120)])
        session.camera.orbit(30, 5)
        yaw, pitch = session.camera.yaw, session.camera.pitch
        session.frame_model()
        assert (session.camera.yaw, session.camera.pitch) == (yaw, pitch)  # F keeps the view angle
        points = drawn_points(scene)
        assert np.all(np.abs(ndc(session.camera, points, session.view_aspect)) <= 1 - FRAME_MARGIN + 1e-6)
    finally:
        session.release()

    from viewer.gltf import load_gltf

    for play in (True, False):
        fox = load_gltf(FOX)
        session = ViewerSession(egl_ctx, fox, play=play)
        try:
            before = fox.skeletons[0].get_transform_matrices().copy()
            session.editor.advance(0.3)
            fox.prepare()
            moved = not np.allclose(before, fox.skeletons[0].get_transform_matrices())
            assert session.editor.playback.playing == play and moved == play
        finally:
            session.release()


# --- pictures: the model inside the image, with a margin of background ---------------------------
SIZE = (400, 300)


@pytest.fixture(scope="module")
def background():
    """The background alone at SIZE (nothing drawn over the gradient)."""
    with HeadlessRenderer(SIZE) as headless:
        return headless.render(build_character(), OrbitCamera(),
                               RenderOptions(show_mesh=False, show_skeleton=False, show_grid=False))


def model_mask(image, background):
    return np.abs(image[:, :, :3].astype(int) - background[:, :, :3]).max(axis=2) > 6


@pytest.mark.parametrize("model, flags", [
    (FOX, ["--animation", "Run", "--time", "0.5"]),
    (ROBOT, []),
    (None, ["--pose", "assets/poses/left-arm-45.json"]),
])
def test_rendered_models_keep_a_margin_and_fill_the_frame(cli, tmp_path, background, model, flags):
    out = tmp_path / "a.png"
    args = ["render", *([model] if model else []), *flags, "--out", out, "--size", f"{SIZE[0]}x{SIZE[1]}",
            "--no-grid", "--no-skeleton"]
    result = cli(*args, cwd=Path(__file__).parent.parent)
    assert result.returncode == 0, result.stderr
    mask = model_mask(np.asarray(Image.open(out)), background)
    band = 4
    border = np.ones_like(mask)
    border[band:-band, band:-band] = False
    assert not (mask & border).any(), "the model touches the image border"
    ys, xs = np.nonzero(mask)
    spans = ((xs.max() - xs.min()) / SIZE[0], (ys.max() - ys.min()) / SIZE[1])
    assert max(spans) > 0.7, spans  # framed, not lost in the middle


def test_a_frames_sequence_uses_one_camera(cli, tmp_path, background):
    """--frames over Fox Run: every frame keeps the margin, and the camera does not move between
    frames: the ground grid (fixed in the world) is the same picture wherever the fox is not."""
    def sequence(name, *flags):
        result = cli("render", FOX, "--animation", "Run", "--frames", "0:0.6:0.2", "--out-dir", tmp_path / name,
                     "--size", f"{SIZE[0]}x{SIZE[1]}", "--no-skeleton", *flags)
        assert result.returncode == 0, result.stderr
        return [np.asarray(Image.open(path)) for path in sorted((tmp_path / name).glob("frame_*.png"))]

    masks = [model_mask(image, background) for image in sequence("plain", "--no-grid")]
    assert len(masks) == 4
    for mask in masks:
        assert not mask[:4].any() and not mask[-4:].any() and not mask[:, :4].any() and not mask[:, -4:].any()
    assert np.any(masks[0] != masks[2]), "the clip moves the fox"
    with_grid = sequence("grid")
    model_anywhere = np.any(masks, axis=0)
    grown = model_anywhere.copy()  # a few pixels of antialiasing around the silhouettes
    for axis in (0, 1):
        for shift in (-2, -1, 1, 2):
            grown |= np.roll(model_anywhere, shift, axis=axis)
    grid = np.abs(with_grid[0][:, :, :3].astype(int) - background[:, :, :3]).max(axis=2) > 6
    assert (grid & ~grown).sum() > 500, "the grid shows around the fox"
    for image in with_grid[1:]:
        moved = np.abs(image[:, :, :3].astype(int) - with_grid[0][:, :, :3]).max(axis=2) > 6
        assert (moved & ~grown).mean() < 0.001


def test_a_model_too_large_to_frame_is_said_in_its_own_numbers(cli, tmp_path):
    """A pose that sends a bone 1e18 units away (valid float32): one line about the model's extent
    in plain numbers, not about a camera distance the user did not give (issue 37)."""
    pose = tmp_path / "far.json"
    pose.write_text('{"version": 1, "bones": {"leftArm": {"position": [1e18, 1e18, 1e18]}}}')
    done = cli("render", "--pose", pose, "--out", tmp_path / "far.png")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "the model is too large to frame: it spans 1.73e+18 units" in lines[0]
    assert "camera distance" not in lines[0] and "np.float64" not in lines[0]
    assert not (tmp_path / "far.png").exists()
