"""Instanced crowds: one draw call from one bone texture equals drawing the copies one by one."""

import numpy as np
import pytest

from viewer import Crowd, Scene, ViewerError
from viewer.character import build_character
from viewer.model import transforms
from viewer.render.headless import HeadlessRenderer
from viewer.render.renderer import RenderOptions


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
    crowd = Crowd(meshes[0], [scene.skeletons[0] for scene in scenes], worlds)
    options = RenderOptions(show_skeleton=False, show_grid=False)
    with HeadlessRenderer((320, 240), bone_storage="texture") as headless:
        from viewer.render.headless import framed_camera

        camera = framed_camera(one_by_one)
        reference = headless.render(one_by_one, camera, options)
        instanced = headless.render_crowd(crowd, camera, options)
        again = headless.render_crowd(crowd, camera, options)  # reuses the GPU crowd
    differing = np.any(np.abs(reference.astype(int) - instanced.astype(int)) > 2, axis=-1).mean()
    assert differing < 0.005, differing
    np.testing.assert_array_equal(instanced, again)
    # The characters are really there and posed apart: the crowd is not the background.
    assert np.any(np.abs(np.diff(instanced[..., :3].astype(int), axis=1)) > 30)


def test_crowd_checks_bone_counts_and_world_matrices():
    scenes, worlds = posed_characters(2)
    mesh = scenes[0].skinned_meshes[0]
    with pytest.raises(ViewerError):
        Crowd(mesh, [scenes[0].skeletons[0]], worlds)
    crowd = Crowd(mesh, [s.skeletons[0] for s in scenes])
    np.testing.assert_array_equal(crowd.world_matrices, np.broadcast_to(np.eye(4), (2, 4, 4)))
