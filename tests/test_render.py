"""Headless rendering on EGL: pixels a person would check, and the skinning paths agreeing."""

import copy

import numpy as np
import pytest

from viewer.character import SHOULDER, arm_direction, build_character
from viewer.gltf import load_gltf
from viewer.model import SkinnedMesh
from viewer.model.transforms import quaternion_from_yaw_pitch_roll
from viewer.camera import framed_camera
from viewer.render.headless import HeadlessRenderer
from viewer.options import RenderOptions
from viewer.render.geometry import SELECTED_COLOR, skeleton_overlay
from viewer.render.renderer import Renderer

from samples import CESIUM_MAN, ROBOT

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
    camera.distance *= 1.5  # room around the model: the moved one must stay wholly in view

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
    # Roughly the shift projected at the model's centre (perspective makes a silhouette's
    # centre move a little differently from any one point) ...
    middle = sum(scene.rest_bounds) / 2
    expected = camera.project(middle + shift, *SIZE)[0] - camera.project(middle, *SIZE)[0]
    np.testing.assert_allclose(moved_centre - centre, expected, atol=3.0)
    assert abs(moved_area - area) / area < 0.06  # seen three-quarter on, +X also comes nearer
    # ... and exactly: the moved mesh seen from a camera moved alike is the original picture.
    following = copy.copy(camera)
    following.target = camera.target + shift
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


# --- skeleton overlay geometry ------------------------------------------------------------------
def overlay_segments(scene, selected=None):
    """(starts, ends, highlighted) of the overlay's line segments, in drawing order."""
    scene.prepare()  # as Renderer.render does (linked glTF nodes into their bones)
    lines, _ = skeleton_overlay(scene, selected)
    segments = lines.reshape(-1, 2, 7).astype(float)
    lit = np.isclose(segments[:, 0, 3:], SELECTED_COLOR).all(axis=1)
    return segments[:, 0, :3], segments[:, 1, :3], lit


def world_matrix(scene, bone):
    scene.prepare()
    return bone.get_absolute_matrix() @ scene.skinned_meshes[0].world_matrix


def leaf_tip(scene, bone):
    """Where the overlay must end a leaf bone: along the leaf axis's world direction, for its
    set length through the bone's matrix (bone space), else a world length: half the parent
    segment."""
    matrix = world_matrix(scene, bone)
    head, axis = matrix[3, :3], scene.leaf_bone_axis @ matrix[:3, :3]
    if bone.length is not None:
        return head + bone.length * axis
    parent_head = world_matrix(scene, bone.get_parent())[3, :3]
    return head + 0.5 * np.linalg.norm(head - parent_head) * axis / np.linalg.norm(axis)


@pytest.fixture(scope="module")
def robot():
    return load_gltf(ROBOT)  # its armature is scaled x100, as FBX exports often are


def test_overlay_on_a_scaled_armature_stays_inside_the_model(robot):
    assert np.linalg.norm(robot.skinned_meshes[0].world_matrix[0, :3]) == pytest.approx(100)
    low, high = robot.rest_bounds
    size = np.linalg.norm(high - low)
    starts, ends, _ = overlay_segments(robot)
    assert len(starts) > 40
    assert np.linalg.norm(ends - starts, axis=1).max() < size
    assert (ends > low - 0.2 * size).all() and (ends < high + 0.2 * size).all()
    # An unset leaf (the knee) gets half its parent segment along its axis: down the shin.
    knee = robot.find_bone("LowerLeg.L")
    starts, ends, lit = overlay_segments(robot, knee)
    np.testing.assert_allclose(ends[lit], [leaf_tip(robot, knee)], atol=1e-5)
    assert ends[lit][0, 1] < starts[lit][0, 1] - 0.2  # it points down towards the foot
    # A set length is in the bone's own space, so the armature's x100 applies to it.
    head = robot.find_bone("Head")
    head.length = 0.004
    try:
        starts, ends, lit = overlay_segments(robot, head)
        assert np.linalg.norm(ends[lit] - starts[lit], axis=1) == pytest.approx([0.4], rel=1e-4)
        np.testing.assert_allclose(ends[lit], [leaf_tip(robot, head)], atol=1e-5)
    finally:
        head.length = None


@pytest.mark.parametrize("load", [build_character, lambda: load_gltf(CESIUM_MAN)], ids=["character", "CesiumMan"])
def test_overlay_on_unscaled_skeletons_draws_as_before(load):
    """On a skeleton without scale, bone space and world lengths agree: every leaf tip is the
    leaf axis times its length (set, or half the parent segment) through the bone's matrix."""
    scene = load()
    skeleton = scene.skeletons[0]
    parents = skeleton.get_parent_indices()
    leaves = [bone for i, bone in enumerate(skeleton.bones) if i not in parents]
    starts, ends, _ = overlay_segments(scene)
    assert len(starts) == len(skeleton.bones) - 1 + len(leaves)
    for bone in leaves:
        matrix = world_matrix(scene, bone)
        length = bone.length
        if length is None:
            length = 0.5 * np.linalg.norm(matrix[3, :3] - world_matrix(scene, bone.get_parent())[3, :3])
        expected = np.append(length * scene.leaf_bone_axis, 1.0) @ matrix
        assert np.isclose(ends, expected[:3], atol=1e-5).all(axis=1).any(), bone.name
    if load is build_character:  # its bones have set lengths: the arm is 1 long, pointing along -Y
        arm = scene.find_bone("leftArm")
        tip = np.array([0.0, -1.0, 0.0, 1.0]) @ world_matrix(scene, arm)
        assert np.isclose(ends, tip[:3], atol=1e-6).all(axis=1).sum() == 1


def test_highlight_is_the_selected_bones_own_segments():
    scene = load_gltf(CESIUM_MAN)
    skeleton = scene.skeletons[0]
    shin = scene.find_bone("leg_joint_L_2")
    for bone in (shin, skeleton.bones[0]):  # a shin (one child) and the root (three)
        head = world_matrix(scene, bone)[3, :3]
        children = [b for b in skeleton.bones if b.get_parent() is bone]
        starts, ends, lit = overlay_segments(scene, bone)
        assert lit.sum() == len(children) >= 1, bone.name
        assert lit[-lit.sum():].all()  # drawn last, over the other lines
        np.testing.assert_allclose(starts[lit], np.repeat([head], lit.sum(), axis=0), atol=1e-6)
        for child in children:
            child_head = world_matrix(scene, child)[3, :3]
            assert np.isclose(ends[lit], child_head, atol=1e-6).all(axis=1).any()
        if bone is shin:  # not the segment from its parent, which turning the shin leaves alone
            parent_head = world_matrix(scene, bone.get_parent())[3, :3]
            assert not np.isclose(starts[lit], parent_head, atol=1e-6).all(axis=1).any()


def test_turning_a_selected_leaf_moves_its_highlight(robot):
    knee = robot.find_bone("LowerLeg.L")  # a leaf in this rig: its own segment is its leaf line
    source = knee.get_pose_target()
    rest = source.rotation_quaternion.copy()
    starts, ends, lit = overlay_segments(robot, knee)
    # Thigh to knee (once per skin: two of the robot's skins share these joints).
    parent = ~lit & np.isclose(ends, starts[lit][0], atol=1e-6).all(axis=1)
    assert lit.sum() == 1 and parent.sum() >= 1 and lit[-1]  # the highlight is drawn last
    source.rotation_quaternion = quaternion_from_yaw_pitch_roll([0.0, 1.0, 0.0])  # bend it
    try:
        bent_starts, bent_ends, bent_lit = overlay_segments(robot, knee)
    finally:
        source.rotation_quaternion = rest
    np.testing.assert_allclose(bent_starts[bent_lit], starts[lit], atol=1e-5)   # the knee stays
    assert np.linalg.norm(bent_ends[bent_lit] - ends[lit]) > 0.1                  # the shin line turns
    np.testing.assert_allclose(bent_starts[parent], starts[parent], atol=1e-5)   # the thigh line
    np.testing.assert_allclose(bent_ends[parent], ends[parent], atol=1e-5)       # does not


def test_robot_overlay_pixels_stay_near_the_model(headless, robot):
    camera = framed_camera(robot)
    bare = headless.render(robot, camera, PLAIN)
    with_overlay = headless.render(robot, camera, RenderOptions(show_grid=False))
    changed = np.abs(with_overlay[:, :, :3].astype(int) - bare[:, :, :3]).max(axis=2) > 40
    assert changed.sum() > 300
    low, high = robot.rest_bounds
    corners = np.array([[x, y, z] for x in (low[0], high[0]) for y in (low[1], high[1]) for z in (low[2], high[2])])
    projected = camera.project(corners, *SIZE)
    ys, xs = np.nonzero(changed)
    margin = 12  # joint dots and line widths, in pixels
    assert xs.min() >= projected[:, 0].min() - margin and xs.max() <= projected[:, 0].max() + margin
    assert ys.min() >= projected[:, 1].min() - margin and ys.max() <= projected[:, 1].max() + margin


# --- the editor's markers (controller targets, IK chains) ---------------------------------------------
from viewer.camera import OrbitCamera  # noqa: E402
from viewer.editing.editor import TARGET_COLOR, Editor  # noqa: E402
from viewer.options import Marker, MarkerKind  # noqa: E402
from viewer.render.geometry import CROSS_PIXELS, RAY_PIXELS, marker_overlay, world_per_pixel  # noqa: E402


def marker_camera():
    camera = OrbitCamera(target=(0.2, 1.0, -0.3), distance=6.0, yaw=30.0, pitch=15.0)
    return camera, camera.view_matrix(), camera.projection_matrix(SIZE[0] / SIZE[1])


def test_world_per_pixel_is_one_pixel_on_screen():
    camera, view, projection = marker_camera()
    points = np.array([[0.0, 1.0, 0.0], [1.0, 0.5, -2.0], [-0.5, 2.0, 1.5]])
    size = world_per_pixel(points, view, projection, SIZE[1])
    up = view[:3, 1]
    moved = camera.project(points + up * size[:, None] * 10, *SIZE) - camera.project(points, *SIZE)
    np.testing.assert_allclose(np.linalg.norm(moved, axis=1), 10.0, rtol=1e-3)
    assert size[1] > size[2]  # farther from the camera: bigger in the world


def test_marker_geometry_is_sized_on_screen():
    camera, view, projection = marker_camera()
    target, elbow = np.array([0.5, 1.2, 0.3]), np.array([-0.2, 0.8, 0.1])
    markers = [Marker(MarkerKind.CROSS, (tuple(target),), TARGET_COLOR),
               Marker(MarkerKind.PATH, ((0, 1, 0), tuple(elbow), (0.6, 0.2, 0.0)), (0, 1, 0, 1)),
               Marker(MarkerKind.LINE, (tuple(elbow), (1.0, 0.0, 0.0)), (1, 1, 1, 0.5)),
               Marker(MarkerKind.POINT, ((1.0, 0.0, 0.0),), (1, 0.5, 0, 1)),
               Marker(MarkerKind.RAY, (tuple(elbow), (0.0, 0.0, 5.0)), (1, 0, 0, 1))]
    for scale in (1.0, 2.0):
        lines, guides, points = marker_overlay(markers, view, projection, SIZE[1], scale)
        assert lines.dtype == guides.dtype == points.dtype == np.float32 and lines.shape[1] == 7
        assert len(lines) == 2 * (2 + 2 + 1) and len(guides) == 2 and len(points) == 2
        # The cross: two diagonals through the target, CROSS_PIXELS from it on screen, in its color.
        centre = camera.project(target, *SIZE)[0]
        ends = camera.project(lines[:4, :3], *SIZE)
        np.testing.assert_allclose(np.abs(ends - centre), CROSS_PIXELS * scale, rtol=2e-2)  # x and y: a diagonal
        np.testing.assert_allclose(lines[:4, 3:], np.tile(TARGET_COLOR, (4, 1)))
        np.testing.assert_allclose(points[0, :3], target, rtol=1e-6)
        # The path: consecutive segments through its points.
        np.testing.assert_allclose(lines[4:8, :3], [[0, 1, 0], elbow, elbow, [0.6, 0.2, 0.0]], atol=1e-6)
        # The ray: RAY_PIXELS long on screen (it runs along the view's z, seen at a slant: measure in the world).
        start, end = lines[8:10, :3]
        np.testing.assert_allclose(start, elbow, atol=1e-6)
        length = np.linalg.norm(end - start) / world_per_pixel(elbow, view, projection, SIZE[1])[0]
        assert length == pytest.approx(RAY_PIXELS * scale, rel=1e-4)
        np.testing.assert_allclose((end - start) / np.linalg.norm(end - start), [0, 0, 1], atol=1e-6)
    empty = marker_overlay([], view, projection, SIZE[1])
    assert all(part.shape == (0, 7) for part in empty)


def test_the_ik_target_marker_is_drawn_where_the_target_projects(headless, robot):
    from viewer.editing.pose import apply_pose, pose_of

    start = pose_of(robot)
    editor = Editor(robot)
    lower = robot.find_bone("LowerArm.L")
    target = (1.6, 2.8, 1.1)
    assert editor.set_ik_target(lower, target, pole=(2.4, 1.3, -0.6)), editor.status
    editor.update_controllers()
    robot.prepare()
    camera = framed_camera(robot)
    options = RenderOptions(show_skeleton=False, show_grid=False, markers=editor.display.markers)
    try:
        bare = headless.render(robot, camera, RenderOptions(show_skeleton=False, show_grid=False))
        marked = headless.render(robot, camera, options)
    finally:
        apply_pose(robot, start)

    def magenta(image):
        rgb = image[:, :, :3].astype(int)
        return (rgb[:, :, 0] > 180) & (rgb[:, :, 2] > 150) & (rgb[:, :, 1] < 110)

    x, y = np.round(camera.project(target, *SIZE)[0]).astype(int)
    assert magenta(marked)[y - 1:y + 2, x - 1:x + 2].any() and not magenta(bare).any()
    ys, xs = np.nonzero(magenta(marked))
    assert np.abs(xs - x).max() <= CROSS_PIXELS + 3 and np.abs(ys - y).max() <= CROSS_PIXELS + 3  # only there
    green = (marked[:, :, 1].astype(int) > 200) & (marked[:, :, 0] < 150) & (marked[:, :, 2] < 150)
    assert green.sum() > 20  # the chain is highlighted


def test_a_headless_renderer_keeps_drawing_after_another_is_made_and_released(headless):
    """Each HeadlessRenderer makes its own context current when it draws: another one made and
    released on the same thread (which leaves no context current) used to make GL refuse the
    first one's next buffer ("cannot create buffer") and its resize."""
    reference = headless.render(build_character(), options=PLAIN)
    with HeadlessRenderer((64, 48)) as other:
        assert other.render(build_character(), options=PLAIN).shape == (48, 64, 4)
    robot = load_gltf(str(ROBOT))  # new meshes: new buffers on the first renderer's context
    assert headless.render(robot, options=PLAIN)[..., 3].max() == 255
    headless.resize((160, 120))
    try:
        assert headless.render(robot, options=PLAIN).shape == (120, 160, 4)
    finally:
        headless.resize(SIZE)
    again = headless.render(build_character(), options=PLAIN)
    assert np.abs(again.astype(int) - reference).max() <= 1
