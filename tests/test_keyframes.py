"""Keyframe authoring: Scene.insert_keyframe / delete_keyframe on the model's clip objects."""

import numpy as np
import pytest

from samples import CESIUM_MAN, DATA_DIR, FOX
from viewer import ViewerError, load_gltf, load_model, save_gltf
from viewer.model.morph import MorphAnimationClip

WORMS = DATA_DIR / "morph-worms.gltf"
TURN = np.array([0.0, 0.0, np.sin(0.4), np.cos(0.4)])  # 0.8 rad about z


def world(scene):
    scene.prepare()
    return np.concatenate([mesh.skinned()[0] for mesh in scene.meshes])


@pytest.fixture(scope="module")
def cesium():
    return load_gltf(CESIUM_MAN)


def test_keys_a_glTF_bone_on_its_joint_node_and_plays_them(cesium):
    scene = cesium
    bone = scene.skeletons[0].bones[3]
    node = bone.get_pose_target()
    start = node.rotation_quaternion.copy()
    clip = scene.insert_keyframe("reach", 0.0, [bone])
    node.rotation_quaternion = TURN
    assert scene.insert_keyframe("reach", 2.0, [bone.name]) is clip
    assert clip in scene.animations and clip.duration == 2.0
    assert {c.node for c in clip.channels} == {node}
    assert sorted(c.path for c in clip.channels) == ["rotation", "scale", "translation"]
    np.testing.assert_array_equal(clip.key_times(), [0.0, 2.0])
    clip.apply(0.0)
    np.testing.assert_allclose(node.rotation_quaternion, start, atol=1e-12)
    clip.apply(2.0)
    np.testing.assert_allclose(node.rotation_quaternion, TURN, atol=1e-12)
    clip.apply(1.0)  # halfway: the slerp of the two keys
    rotation = next(c for c in clip.channels if c.path == "rotation")
    np.testing.assert_allclose(node.rotation_quaternion, rotation.sample(1.0), atol=1e-12)
    assert not np.allclose(node.rotation_quaternion, start) and not np.allclose(node.rotation_quaternion, TURN)


def test_a_key_at_an_existing_time_replaces_it_and_step_holds(cesium):
    scene = cesium
    bone = scene.skeletons[0].bones[4]
    node = bone.get_pose_target()
    first = node.rotation_quaternion.copy()
    scene.insert_keyframe("hold", 0.0, [bone], interpolation="STEP")
    node.rotation_quaternion = [0.3, 0, 0, 0.954]
    scene.insert_keyframe("hold", 1.0, [bone], interpolation="STEP")
    node.rotation_quaternion = TURN
    clip = scene.insert_keyframe("hold", 1.0 + 1e-9, [bone], interpolation="STEP")
    np.testing.assert_array_equal(clip.key_times(), [0.0, 1.0])
    clip.apply(0.99)  # STEP: still the first key
    np.testing.assert_allclose(node.rotation_quaternion, first, atol=1e-12)
    clip.apply(1.0)
    np.testing.assert_allclose(node.rotation_quaternion, TURN, atol=1e-12)
    assert {c.interpolation for c in clip.channels} == {"STEP"}


def test_inserting_into_a_loaded_clip():
    fox = load_gltf(FOX)
    walk = fox.find_animation("Walk")
    times = walk.key_times()
    count = len(times)
    # Kept while no key changes (the timeline asks every frame), and not writable by callers.
    assert walk.key_times() is times and not times.flags.writeable
    walk.apply(0.3)
    bone = fox.skeletons[0].bones[5]
    bone.get_pose_target().rotation_quaternion = TURN
    fox.insert_keyframe("Walk", float(times[3]), [bone])
    assert len(walk.key_times()) == count  # replaced, not added
    fox.insert_keyframe("Walk", 0.123, [bone])
    assert len(walk.key_times()) == count + 1
    walk.apply(0.123)
    np.testing.assert_allclose(bone.get_pose_target().rotation_quaternion, TURN, atol=1e-12)


def test_every_bone_and_the_morph_weights_by_default_and_the_round_trip(tmp_path):
    scene = load_gltf(WORMS)
    mesh = scene.morph_meshes[0]
    targets = {id(b.get_pose_target()) for s in scene.skeletons for b in s.bones}
    before = mesh.morph_weights[0]
    scene.insert_keyframe("made", 0.0)
    mesh.set_morph_weight(0, 0.8)
    scene.skeletons[0].bones[1].get_pose_target().rotation_quaternion = TURN
    clip = scene.insert_keyframe("made", 0.5)
    assert isinstance(clip, MorphAnimationClip)
    assert len(clip.channels) == 3 * len(targets) and len(clip.morph_channels) >= 1
    clip.apply(0.0)
    assert mesh.morph_weights[0] == before != 0.8
    clip.apply(0.5)
    assert mesh.morph_weights[0] == 0.8
    written = load_gltf(save_gltf(scene, tmp_path / "made.glb"))
    twin = written.find_animation("made")
    assert twin is not None and isinstance(twin, MorphAnimationClip)
    size = float(np.linalg.norm(np.subtract(*scene.rest_bounds)))
    for t in (0.0, 0.2, 0.5):
        clip.apply(t)
        twin.apply(t)
        assert np.abs(world(scene) - world(written)).max() <= 1e-6 * size


def test_the_built_in_character_keys_its_bones_themselves(tmp_path):
    scene = load_model(None)
    arm = scene.find_bone("leftArm")
    scene.insert_keyframe("wave", 0.0)
    rest = world(scene)
    arm.rotate([0, 0, 1], 0.8)
    posed = world(scene)
    clip = scene.insert_keyframe("wave", 1.0, ["leftArm"])
    clip.apply(0.0)
    np.testing.assert_allclose(world(scene), rest, atol=1e-9)
    clip.apply(1.0)
    np.testing.assert_allclose(world(scene), posed, atol=1e-9)
    written = load_gltf(save_gltf(scene, tmp_path / "wave.glb"))
    twin = written.find_animation("wave")
    for t in (0.0, 0.4, 1.0):
        clip.apply(t)
        twin.apply(t)
        np.testing.assert_allclose(world(written), world(scene), atol=1e-6 * 3)


def test_delete_keyframe(cesium):
    scene = cesium
    bones = scene.skeletons[0].bones[5:7]
    scene.insert_keyframe("trim", 0.0, list(bones))
    clip = scene.insert_keyframe("trim", 1.0, list(bones))
    assert scene.delete_keyframe("trim", 1.0, [bones[0]]) == 3
    assert clip.duration == 1.0  # bones[1] still has its key at 1 s
    assert scene.delete_keyframe("trim", 1.0) == 3
    assert clip.duration == 0.0
    np.testing.assert_array_equal(clip.key_times(), [0.0])
    with pytest.raises(ViewerError, match="no key at 1 s"):
        scene.delete_keyframe("trim", 1.0)
    with pytest.raises(ViewerError, match="no animation 'nope'"):
        scene.delete_keyframe("nope", 0.0)


@pytest.mark.parametrize("time", [-0.5, float("nan"), float("inf"), "soon"])
def test_bad_times_are_refused(cesium, time):
    with pytest.raises(ViewerError, match="keyframe time"):
        cesium.insert_keyframe("bad", time)
    assert cesium.find_animation("bad") is None


def test_bad_bones_interpolation_and_names_are_refused(cesium):
    with pytest.raises(ViewerError, match="unknown bone 'nobody'"):
        cesium.insert_keyframe("bad", 0.0, ["nobody"])
    with pytest.raises(ViewerError, match="interpolation"):
        cesium.insert_keyframe("bad", 0.0, interpolation="SMOOTH")
    with pytest.raises(ViewerError, match="clip name"):
        cesium.insert_keyframe("", 0.0)
    assert cesium.find_animation("bad") is None


@pytest.mark.parametrize("model", [None, WORMS], ids=["character", "worms"])
def test_a_recording_keys_what_insert_keyframe_keys_step_by_step(model):
    """Scene.record_keyframes (export --record) in one pass == insert_keyframe at each step."""
    stepwise, recorded = load_model(model), load_model(model)
    recorder = recorded.record_keyframes("Take")
    for k, t in enumerate([0.0, 0.25, 0.5, 0.75]):
        for scene in (stepwise, recorded):
            bone = scene.skeletons[0].bones[-1]
            bone.get_pose_target().rotation_quaternion = [0, np.sin(0.2 * k), 0, np.cos(0.2 * k)]
            for mesh in scene.morph_meshes:
                mesh.set_morph_weight(0, 0.1 * k)
        stepwise.insert_keyframe("Take", t)
        recorder.capture(t)
    clip = recorder.finish()
    expected = stepwise.find_animation("Take")
    assert clip is recorded.find_animation("Take") and type(clip) is type(expected)
    assert [(c.node.name, c.path) for c in clip.channels] == [(c.node.name, c.path) for c in expected.channels]
    for a, b in zip(clip.channels + getattr(clip, "morph_channels", []),
                    expected.channels + getattr(expected, "morph_channels", [])):
        np.testing.assert_array_equal(a.times, b.times)
        np.testing.assert_array_equal(a.values, b.values)


def test_a_recording_into_an_existing_clip_merges_its_keys(cesium):
    bone = cesium.skeletons[0].bones[8]
    cesium.insert_keyframe("merge", 0.5, [bone])
    recorder = cesium.record_keyframes("merge", [bone])
    for t in (0.0, 0.5, 1.0):
        recorder.capture(t)
    clip = recorder.finish()
    np.testing.assert_array_equal(clip.key_times(), [0.0, 0.5, 1.0])
    assert len(clip.channels) == 3
    with pytest.raises(ViewerError, match="keyframe time"):
        cesium.record_keyframes("merge").capture(-1)
