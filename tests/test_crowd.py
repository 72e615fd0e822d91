"""Instanced crowds: one draw call from one bone texture equals drawing the copies one by one,
and an instance matrix places the model as a whole (after the mesh's own world matrix)."""

import numpy as np
import pytest

from samples import CESIUM_MAN
from viewer import Crowd, Scene, ViewerError, load_gltf
from viewer.camera import OrbitCamera
from viewer.character import build_character
from viewer.model import transforms
from viewer.camera import framed_camera
from viewer.render.headless import HeadlessRenderer
from viewer.options import RenderOptions

PLAIN = RenderOptions(show_skeleton=False, show_grid=False)


def posed_characters(count):
    rng = np.random.default_rng(11)
    scenes = [build_character() for _ in range(count)]
    worlds = []
    for k, scene in enumerate(scenes):
        skeleton = scene.skeletons[0]
        angles = rng.uniform(-1.2, 1.2, size=(len(skeleton.bones), 3))
        skeleton.set_pose(rotation_quaternions=transforms.quaternion_from_yaw_pitch_roll(angles))
        yaw = transforms.quaternion_from_yaw_pitch_roll([0.0, 0.4 * k, 0.0])
        worlds.append(transforms.compose([0.8, 0.8, 0.8], yaw, [2.2 * (k % 3) - 2.2, 0.0, -1.5 * (k // 3)]))
    return scenes, np.array(worlds)


def test_instanced_crowd_equals_drawing_each_instance():
    scenes, worlds = posed_characters(5)
    meshes = []
    for scene, world in zip(scenes, worlds):
        mesh = scene.skinned_meshes[0]
        mesh.world_matrix = world
        meshes.append(mesh)
    one_by_one = Scene("copies", meshes)
    # The crowd's mesh sits at the origin (the character's world matrix is the identity), so
    # the instance matrices are the world matrices the copies were drawn with one by one.
    base = build_character().skinned_meshes[0]
    assert np.array_equal(base.world_matrix, np.eye(4))
    crowd = Crowd(base, [scene.skeletons[0] for scene in scenes], worlds)
    options = PLAIN
    with HeadlessRenderer((320, 240), bone_storage="texture") as headless:
        camera = framed_camera(one_by_one)
        reference = headless.render(one_by_one, camera, options)
        instanced = headless.render_crowd(crowd, camera, options)
        again = headless.render_crowd(crowd, camera, options)  # reuses the GPU crowd
    differing = np.any(np.abs(reference.astype(int) - instanced.astype(int)) > 2, axis=-1).mean()
    assert differing < 0.005, differing
    np.testing.assert_array_equal(instanced, again)
    # The characters are really there and posed apart: the crowd is not the background.
    assert np.any(np.abs(np.diff(instanced[..., :3].astype(int), axis=1)) > 30)


def test_crowd_checks_bone_counts_and_instance_matrices():
    scenes, worlds = posed_characters(2)
    mesh = scenes[0].skinned_meshes[0]
    with pytest.raises(ViewerError):
        Crowd(mesh, [scenes[0].skeletons[0]], worlds)
    crowd = Crowd(mesh, [s.skeletons[0] for s in scenes])
    np.testing.assert_array_equal(crowd.instance_matrices, np.broadcast_to(np.eye(4), (2, 4, 4)))
    with pytest.raises(ViewerError):
        crowd.instance_matrices = np.full((2, 4, 4), np.nan)
    with pytest.raises(ViewerError):
        crowd.instance_matrices = np.eye(4)


def test_world_matrix_is_the_mesh_world_then_the_instance():
    scene = load_gltf(CESIUM_MAN)
    mesh = scene.skinned_meshes[0]
    scene.prepare()
    assert not np.allclose(mesh.world_matrix, np.eye(4))  # CesiumMan's Z-up to Y-up armature
    places = np.array([translation(1.0, 0.0, -2.0), transforms.compose([2, 2, 2], [0, 0, 0, 1], [0, 1, 0])])
    crowd = Crowd(mesh, [scene.skeletons[0], load_gltf(CESIUM_MAN).skeletons[0]], places)
    point = np.array([0.1, 0.2, 0.3, 1.0])
    for world, place in zip(crowd.world_matrices, places):
        np.testing.assert_allclose(point @ world, (point @ mesh.world_matrix) @ place)


def translation(x, y, z):
    matrix = np.eye(4)
    matrix[3, :3] = x, y, z
    return matrix


class ShiftedCamera:
    """``camera`` looking at the world moved by -offset: the view of a model placed at +offset."""

    def __init__(self, camera, offset):
        self.camera, self.offset = camera, np.asarray(offset, float)
        self.position = camera.position - self.offset

    def view_matrix(self):
        return translation(*self.offset) @ self.camera.view_matrix()

    def projection_matrix(self, aspect):
        return self.camera.projection_matrix(aspect)


def test_an_instanced_cesium_man_equals_the_normal_render_moved():
    # The instance matrix moves the whole model: drawn at +offset, it looks exactly as the
    # normal path's CesiumMan (armature rotation included) seen by a camera moved by -offset.
    scene = load_gltf(CESIUM_MAN)
    scene.animations[0].apply(0.6)
    offset = np.array([1.5, 0.0, -2.0])
    crowd = Crowd(scene.skinned_meshes[0], [scene.skeletons[0]], [translation(*offset)])
    camera = OrbitCamera()
    low, high = scene.rest_bounds
    camera.frame(low + offset, high + offset, yaw=25.0, pitch=15.0)
    with HeadlessRenderer((240, 240)) as headless:
        instanced = headless.render_crowd(crowd, camera, PLAIN)
        normal = headless.render(scene, ShiftedCamera(camera, offset), PLAIN)
    differing = np.any(np.abs(normal.astype(int) - instanced.astype(int)) > 2, axis=-1).mean()
    assert differing < 0.005, differing
    rows, columns = np.nonzero(figure_mask(instanced, background(crowd, camera, (240, 240))))
    assert rows.size > 2000, "CesiumMan is in the picture"
    assert np.ptp(rows) > 2 * np.ptp(columns), "standing: taller than wide"


def background(crowd, camera, size):
    """The crowd's picture with every copy shrunk to nothing: the background alone."""
    places = crowd.instance_matrices
    crowd.instance_matrices = np.zeros_like(places)
    with HeadlessRenderer(size) as headless:
        image = headless.render_crowd(crowd, camera, PLAIN)
    crowd.instance_matrices = places
    return image


def figure_mask(image, empty):
    return np.any(np.abs(image[..., :3].astype(int) - empty[..., :3].astype(int)) > 12, axis=-1)


def test_a_grid_of_cesium_men_stands_upright_at_different_phases():
    # Two staggered rows of three: from the front every figure has its own columns.
    count = 6
    scenes = [load_gltf(CESIUM_MAN) for _ in range(count)]
    places = np.array([translation(2.4 * (k % 3) + 1.2 * (k // 3), 0.0, -1.5 * (k // 3)) for k in range(count)])
    crowd = Crowd(scenes[0].skinned_meshes[0], [s.skeletons[0] for s in scenes], places)
    for k, scene in enumerate(scenes):
        clip = scene.animations[0]
        clip.apply(clip.duration * k / count)
    camera = OrbitCamera()
    camera.frame(*crowd.bounds(), yaw=0.0, pitch=5.0, aspect=2.0)
    size = (480, 240)
    with HeadlessRenderer(size) as headless:
        image = headless.render_crowd(crowd, camera, PLAIN)
    mask = figure_mask(image, background(crowd, camera, size))
    filled = np.flatnonzero(mask.any(axis=0))
    runs = np.split(filled, np.flatnonzero(np.diff(filled) > 1) + 1)
    assert len(runs) == count, [(r[0], r[-1]) for r in runs]
    shapes = []
    for run in runs:
        rows = np.flatnonzero(mask[:, run].any(axis=1))
        height, width = np.ptp(rows) + 1, len(run)
        # Standing (even mid-stride) a CesiumMan is over twice as tall as wide; lying on its
        # back, seen from the front, it is wider than tall.
        assert height > 1.5 * width, (height, width)
        shapes.append(mask[rows[0]:rows[-1] + 1, run[0]:run[-1] + 1])
    # Each at its own point of the walk: the front row's three silhouettes (runs 0, 2, 4) differ.
    assert len({(shape.shape, shape.tobytes()) for shape in shapes[::2]}) == 3


def test_a_crowd_of_no_copies_is_one_clear_error():
    scene = load_gltf(str(CESIUM_MAN))
    with pytest.raises(ViewerError, match="at least one skeleton"):
        Crowd(scene.skinned_meshes[0], [])
