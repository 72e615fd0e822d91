"""save_gltf(..., apply_pose_as_bind=True): the posed (and morphed) shape becomes the mesh, the
posed joints its bind, and the file at rest shows exactly the pose."""

import numpy as np
import pytest

from samples import CESIUM_MAN, DATA_DIR, ROBOT
from viewer import load_gltf, load_model, save_gltf

WORMS = DATA_DIR / "morph-worms.gltf"


def world(scene):
    scene.prepare()
    return np.concatenate([mesh.skinned()[0] for mesh in scene.meshes])


def posed(model):
    scene = load_model(model)
    if scene.animations:
        scene.animations[0].apply(scene.animations[0].duration * 0.4)
    bones = scene.skeletons[0].bones
    bones[min(2, len(bones) - 1)].rotate([0.3, 1, 0.2], 0.7)
    for mesh in scene.morph_meshes:
        mesh.set_morph_weight(0, 0.7)
    return scene


@pytest.mark.parametrize("model", [None, CESIUM_MAN, ROBOT, WORMS], ids=["character", "CesiumMan", "Robot", "worms"])
def test_the_file_at_rest_is_the_pose(model, tmp_path):
    scene = posed(model)
    expected = world(scene)
    size = float(np.linalg.norm(np.subtract(*scene.rest_bounds)))
    assert np.abs(expected - world(load_model(model))).max() > 1e-3 * size  # the pose moved something
    baked = load_gltf(save_gltf(scene, tmp_path / "baked.glb", apply_pose_as_bind=True))
    assert np.abs(world(baked) - expected).max() <= 1e-6 * size
    # The bind is the pose: every joint's final matrix is the identity at rest ...
    for skeleton in baked.skeletons:
        skeleton.prepare()
        finals = np.array([bone.get_final_matrix() for bone in skeleton.bones if bone.index is None or bone.index >= 0])
        np.testing.assert_allclose(finals, np.broadcast_to(np.eye(4), finals.shape), atol=1e-5)
    # ... the skinned meshes' vertices are the posed shape, the morph baked in (weights 0);
    # meshes without a skin keep their node and weights.
    for mesh in baked.morph_meshes:
        assert not mesh.morph_weights.any() if mesh.skeleton is not None else mesh.morph_weights[0] == 0.7
    # The nodes keep the pose as their TRS.
    sources = list(scene.nodes) if scene.nodes else [b for s in scene.skeletons for b in s.bones]
    for source, node in zip(sources, baked.nodes):
        np.testing.assert_array_equal(np.float32(node.rotation_quaternion), np.float32(source.rotation_quaternion))


def test_without_the_option_the_bind_is_kept(tmp_path):
    scene = posed(CESIUM_MAN)
    written = load_gltf(save_gltf(scene, tmp_path / "kept.glb"))
    original = load_gltf(CESIUM_MAN)
    for a, b in zip(original.skeletons[0].bones, written.skeletons[0].bones):
        np.testing.assert_array_equal(np.float32(a.get_absolute_inverse_bind_matrix()),
                                      np.float32(b.get_absolute_inverse_bind_matrix()))
