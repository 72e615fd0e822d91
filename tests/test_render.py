"""Headless rendering on EGL: pixels a person would check, and the skinning paths agreeing."""

import numpy as np
import pytest

from viewer.character import SHOULDER, arm_direction, build_character
from viewer.model import SkinnedMesh
from viewer.model.transforms import quaternion_from_yaw_pitch_roll
from viewer.render.headless import HeadlessRenderer, framed_camera
from viewer.render.renderer import Renderer, RenderOptions

SIZE = (320, 240)
PLAIN = RenderOptions(show_skeleton=False, show_grid=False)


@pytest.fixture(scope="module")
def headless():
    with HeadlessRenderer(SIZE) as renderer:
        yield renderer


def about_z(degrees):
    return quaternion_from_yaw_pitch_roll([0.0, 0.0, np.radians(degrees)])


def pixel(image, xy):
    x, y = np.round(xy).astype(int)
    return image[y, x, :3].astype(int)


def is_orange(rgb):  # the arms
    r, g, b = rgb
    return r > 150 and r > g + 40 and g > b + 30


def is_blue(rgb):  # the body
    r, g, b = rgb
    return b > r + 40 and b > 90


def is_background(rgb):
    r, g, b = rgb
    return max(r, g, b) < 110 and abs(r - g) < 20 and b - r < 40


def left_arm_mid(final_degrees=0.0):
    """Middle of the left arm after turning it ``final_degrees`` about Z at the shoulder."""
    direction = arm_direction(+1)
    angle = np.radians(final_degrees)
    turn = np.array([[np.cos(angle), np.sin(angle), 0], [-np.sin(angle), np.cos(angle), 0], [0, 0, 1]])
    return SHOULDER + (direction @ turn) * 0.5


def test_character_renders_body_arms_and_background(headless):
    scene = build_character()
    camera = framed_camera(scene)
    image = headless.render(scene, camera, PLAIN)
    assert image.shape == (SIZE[1], SIZE[0], 4)
    assert is_blue(pixel(image, camera.project([0, 1.2, 0.3], *SIZE)[0]))       # chest
    assert is_orange(pixel(image, camera.project(left_arm_mid(), *SIZE)[0]))     # left arm, right of image
    right_mid = SHOULDER * [-1, 1, 1] + arm_direction(-1) * 0.5
    assert is_orange(pixel(image, camera.project(right_mid, *SIZE)[0]))
    for corner in ((2, 2), (SIZE[0] - 3, 2), (2, SIZE[1] - 3)):
        assert is_background(pixel(image, corner)), corner
    # The left arm is on the right side of the image (+X right, the character faces us).
    assert camera.project(left_arm_mid(), *SIZE)[0][0] > SIZE[0] / 2


def test_turning_the_left_arm_moves_its_pixels_where_45_degrees_puts_them(headless):
    scene = build_character()
    camera = framed_camera(scene)
    before = headless.render(scene, camera, PLAIN)
    arm = scene.find_bone("leftArm")
    arm.rotation_quaternion = about_z(75)   # bind is 30: final is 45 about the shoulder
    after = headless.render(scene, camera, PLAIN)
    old_spot = camera.project(left_arm_mid(0), *SIZE)[0]
    new_spot = camera.project(left_arm_mid(45), *SIZE)[0]
    assert is_orange(pixel(before, old_spot)) and not is_orange(pixel(before, new_spot))
    assert is_orange(pixel(after, new_spot)) and not is_orange(pixel(after, old_spot))
    # The right arm and the body did not move.
    untouched = np.abs(before[:, : SIZE[0] // 2].astype(int) - after[:, : SIZE[0] // 2]).max(axis=2)
    assert (untouched > 8).mean() < 0.002


def test_moving_the_mesh_world_matrix_moves_the_whole_image(headless):
    scene = build_character()
    camera = framed_camera(scene)

    def silhouette_centre(image):
        mask = ~np.apply_along_axis(is_background, 2, image[:, :, :3].astype(int))
        ys, xs = np.nonzero(mask)
        return np.array([xs.mean(), ys.mean()]), mask.sum()

    centre, area = silhouette_centre(headless.render(scene, camera, PLAIN))
    shift = np.array([0.4, -0.3, 0.0])
    world = np.eye(4)
    world[3, :3] = shift
    scene.skinned_meshes[0].world_matrix = world
    moved_centre, moved_area = silhouette_centre(headless.render(scene, camera, PLAIN))
    # Roughly the projected shift (perspective makes a silhouette's centre move a little
    # differently from any one point) ...
    expected = camera.project(shift, *SIZE)[0] - camera.project([0, 0, 0], *SIZE)[0]
    np.testing.assert_allclose(moved_centre - centre, expected, atol=3.0)
    assert abs(moved_area - area) / area < 0.03
    # ... and exactly: the moved mesh seen from a camera moved alike is the original picture.
    following = framed_camera(scene)
    following.target = following.target + shift
    scene.skinned_meshes[0].world_matrix = np.eye(4)
    original = headless.render(scene, camera, PLAIN)
    scene.skinned_meshes[0].world_matrix = world
    assert differing_fraction(headless.render(scene, following, PLAIN), original) < 0.001


def posed_character():
    scene = build_character()
    scene.find_bone("leftArm").rotation_quaternion = about_z(80)
    right = scene.find_bone("rightArm")
    right.rotation_quaternion = quaternion_from_yaw_pitch_roll([0.4, 0.3, np.radians(-70)])
    right.scaling = [1.4, 0.7, 1.0]  # non-uniform: normals must use the inverse transpose
    body = scene.find_bone("body")
    body.rotation_quaternion = quaternion_from_yaw_pitch_roll([0.3, 0.0, 0.05])
    return scene


def differing_fraction(a, b, threshold=24):
    return (np.abs(a[:, :, :3].astype(int) - b[:, :, :3]).max(axis=2) > threshold).mean()


@pytest.fixture(scope="module")
def reference_image(headless):
    scene = posed_character()
    return headless.render(scene, framed_camera(scene), RenderOptions())


@pytest.mark.parametrize("mode", ["cpu", "texture"])
def test_gpu_skinning_paths_agree(headless, reference_image, mode):
    scene = posed_character()
    renderer = Renderer(headless.ctx, bone_storage="texture" if mode == "texture" else "auto",
                        cpu_skinning=mode == "cpu")
    try:
        headless.target.framebuffer.use()
        renderer.render(scene, framed_camera(scene), SIZE, RenderOptions())
        image = headless.target.read()
    finally:
        renderer.release()
    assert differing_fraction(image, reference_image) < 0.005
    # And the pose really changed the picture (the comparison is not vacuous).
    rest = headless.render(build_character(), framed_camera(scene), RenderOptions())
    assert differing_fraction(rest, reference_image) > 0.02


def test_four_influences_equal_eight_with_zero_second_set(headless, reference_image):
    scene = posed_character()
    mesh = scene.skinned_meshes[0]
    rng = np.random.default_rng(3)
    joints = np.c_[mesh.joints, rng.integers(0, 3, size=(len(mesh.joints), 4))]
    weights = np.c_[mesh.weights, np.zeros((len(mesh.weights), 4), np.float32)]
    scene.skinned_meshes[0] = SkinnedMesh("eight", mesh.positions, mesh.indices, mesh.skeleton, joints=joints,
                                          weights=weights, normals=mesh.normals, colors=mesh.colors)
    assert scene.skinned_meshes[0].influences == 8
    image = headless.render(scene, framed_camera(scene), RenderOptions())
    assert differing_fraction(image, reference_image) < 0.005


def test_uniform_budget_comes_from_the_context_and_overflow_uses_the_texture(headless, reference_image):
    components = headless.ctx.info["GL_MAX_VERTEX_UNIFORM_COMPONENTS"]
    assert headless.renderer.uniform_bone_budget == (components - 256) // 16
    renderer = Renderer(headless.ctx)
    renderer.uniform_bone_budget = 2  # as a GL 3.3 minimum context would with a big skeleton
    scene = posed_character()
    try:
        assert renderer.gpu_mesh(scene.skinned_meshes[0]).skinning == 2  # bone texture
        headless.target.framebuffer.use()
        renderer.render(scene, framed_camera(scene), SIZE, RenderOptions())
        assert differing_fraction(headless.target.read(), reference_image) < 0.005
    finally:
        renderer.release()
    forced = Renderer(headless.ctx, bone_storage="uniform")
    forced.uniform_bone_budget = 2
    try:
        with pytest.raises(ValueError, match="3 bones do not fit.*uniform budget of 2"):
            forced.gpu_mesh(scene.skinned_meshes[0])
    finally:
        forced.release()


def test_overlay_and_grid_are_drawn(headless):
    scene = build_character()
    camera = framed_camera(scene)
    bare = headless.render(scene, camera, PLAIN)
    full = headless.render(scene, camera, RenderOptions())
    # The overlay runs from the body bone (origin) to the left shoulder: midway is overlay yellow.
    mid = camera.project((np.zeros(3) + SHOULDER) / 2, *SIZE)[0]
    r, g, b = pixel(full, mid)
    assert r > 200 and g > 150 and b < 140, (r, g, b)
    # The grid lies on the floor: the band of image below the feet gains grid lines.
    feet_row = int(camera.project([0, 0, 0.3], *SIZE)[0][1]) + 4
    assert differing_fraction(full[feet_row:], bare[feet_row:], threshold=6) > 0.03
    # ... and nothing of it shows in the sky above the head.
    head_row = int(camera.project([0, 2.2, 0], *SIZE)[0][1]) - 4
    assert differing_fraction(full[:head_row], bare[:head_row], threshold=6) == 0
