"""save_gltf: the round trip load(save(load(x))) == load(x) on every model the project has, and
the writer's safety (atomic writes, NaN refused, dropped extensions named)."""

import json
import logging
import os
import struct

import numpy as np
import pygltflib
import pytest

import gltf_cases

from samples import CESIUM_MAN, DATA_DIR, ROBOT
from viewer import ViewerError, load_gltf, load_model, save_gltf
from viewer.model.morph import MorphAnimationClip

MODELS = sorted(p for p in DATA_DIR.rglob("*") if p.suffix in (".gltf", ".glb"))
# None: the built-in character; a string: an edge case of tests/gltf_cases.py (8 influences,
# STEP and CUBICSPLINE samplers, joints out of order, shared and multiple skins, ...)
CASES = [None] + MODELS + gltf_cases.CASES


def case_id(path):
    return "character" if path is None else path if isinstance(path, str) else str(path.relative_to(DATA_DIR))


def size_of(scene) -> float:
    low, high = scene.rest_bounds
    return float(np.linalg.norm(high - low))


def world_vertices(scene) -> np.ndarray:
    scene.prepare()
    return np.concatenate([mesh.skinned()[0] for mesh in scene.meshes])


def pose_sources(scene) -> list:
    """What holds the pose: the glTF nodes, else the bones (the built-in character)."""
    return list(scene.nodes) if scene.nodes else [b for s in scene.skeletons for b in s.bones]


def sample_times(clip) -> list[float]:
    return [0.0, clip.duration * 0.37, clip.duration * 0.81, clip.duration]


@pytest.fixture(scope="module", params=CASES, ids=case_id)
def round_trip(request, tmp_path_factory):
    """(the model as loaded, posed; its .glb and .gltf written and loaded back)."""
    model = request.param
    if isinstance(model, str):
        model = gltf_cases.make_case(model, tmp_path_factory.mktemp("case"))
    original = load_model(model)
    # A pose on top of what was loaded: the file must carry it (a node where the file has no skin:
    # three-vrm's spring examples are chains of static cubes).
    if original.skeletons:
        bone = original.skeletons[0].bones[min(1, len(original.skeletons[0].bones) - 1)]
        bone.get_pose_target().rotation_quaternion = [0.2, 0.1, -0.3, 0.927]
    else:
        original.nodes[min(1, len(original.nodes) - 1)].rotation_quaternion = [0.2, 0.1, -0.3, 0.927]
    for mesh in original.morph_meshes:
        mesh.set_morph_weight(0, 0.625)
    folder = tmp_path_factory.mktemp("written")
    glb = save_gltf(original, folder / "model.glb")
    gltf = save_gltf(original, folder / "model.gltf")
    return original, load_gltf(glb), load_gltf(gltf), folder


def test_node_trs_float32_exact(round_trip):
    original, glb, gltf, _ = round_trip
    before = pose_sources(original)
    for written in (glb, gltf):
        assert len(written.nodes) >= len(before)  # the nodes in order, then new ones (the character's mesh)
        for source, node in zip(before, written.nodes):
            assert node.name == source.name
            for field in ("position", "rotation_quaternion", "scaling"):
                np.testing.assert_array_equal(np.float32(getattr(node, field)), np.float32(getattr(source, field)),
                                              err_msg=f"{source.name} {field}")


def test_world_vertices_at_rest_and_through_every_clip(round_trip):
    original, glb, gltf, _ = round_trip
    tolerance = 1e-6 * size_of(original)
    for written in (glb, gltf):  # at rest (as posed), before any clip moves them
        assert np.abs(world_vertices(written) - world_vertices(original)).max() <= tolerance
    for written in (glb, gltf):
        assert [c.name for c in written.animations] == [c.name for c in original.animations]
    for k, clip in enumerate(original.animations):
        twins = [glb.animations[k], gltf.animations[k]]
        for t in sample_times(clip):
            clip.apply(t)
            expected = world_vertices(original)
            for written, twin in zip((glb, gltf), twins):
                assert twin.duration == pytest.approx(clip.duration, abs=1e-6)
                twin.apply(t)
                error = np.abs(world_vertices(written) - expected).max()
                assert error <= tolerance, f"{clip.name} at {t}: {error}"


def test_clips_keyframes_and_names(round_trip):
    original, glb, _, _ = round_trip
    for clip, twin in zip(original.animations, glb.animations):
        assert len(twin.channels) == len(clip.channels)
        for a, b in zip(clip.channels, twin.channels):
            assert (a.node.name, a.path, a.interpolation) == (b.node.name, b.path, b.interpolation)
            np.testing.assert_array_equal(np.float32(a.times), np.float32(b.times))
            np.testing.assert_array_equal(np.float32(a.values), np.float32(b.values))
        if isinstance(clip, MorphAnimationClip):
            assert isinstance(twin, MorphAnimationClip)
            for a, b in zip(clip.morph_channels, twin.morph_channels):
                np.testing.assert_array_equal(np.float32(a.values), np.float32(b.values))


def test_meshes_morph_targets_and_images(round_trip):
    original, glb, gltf, folder = round_trip
    for written in (glb, gltf):
        assert [m.name for m in written.meshes] == [m.name for m in original.meshes]
        for mesh, twin in zip(original.meshes, written.meshes):
            assert twin.influences == mesh.influences  # 4 or 8, as loaded
            assert len(twin.submeshes) == len(mesh.submeshes)
            np.testing.assert_array_equal(twin.indices, mesh.indices)
            assert twin.morph_target_names == mesh.morph_target_names
            np.testing.assert_array_equal(twin.morph_weights, mesh.morph_weights)
            if mesh.morph_targets is not None:
                np.testing.assert_array_equal(twin.morph_targets.positions, mesh.morph_targets.positions)
            for part, twin_part in zip(mesh.submeshes, twin.submeshes):
                np.testing.assert_array_equal(twin_part.base_color, part.base_color)
                if part.image_data is not None:
                    assert twin_part.image_data == part.image_data  # the original bytes, not re-encoded
                    np.testing.assert_array_equal(twin_part.base_color_texture, part.base_color_texture)
    # The .gltf's images lie beside it, byte for byte.
    originals = {part.image_data[0] for mesh in original.meshes for part in mesh.submeshes if part.image_data}
    beside = {p.read_bytes() for p in folder.iterdir() if p.suffix in (".png", ".jpg")}
    assert beside == originals


def test_an_independent_reader_agrees(round_trip):
    """pygltflib reads the .glb: the container, accessors' bounds and skins are well formed."""
    original, glb, _, folder = round_trip
    document = pygltflib.GLTF2().load(str(folder / "model.glb"))
    blob = document.binary_blob()
    assert len(document.nodes) == len(glb.nodes)
    for accessor in document.accessors:
        if not accessor.min:
            continue
        view = document.bufferViews[accessor.bufferView]
        width = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[accessor.type]
        data = np.frombuffer(blob, np.float32, accessor.count * width,
                             view.byteOffset + (accessor.byteOffset or 0)).reshape(-1, width)
        assert data.min(axis=0).tolist() == accessor.min and data.max(axis=0).tolist() == accessor.max
    assert len(document.skins) == len(original.skeletons)


def test_robot_weights_written_sum_to_one(tmp_path):
    robot = load_gltf(ROBOT)
    raw = np.concatenate([m.raw_weight_sums for m in robot.skinned_meshes])
    assert np.abs(raw - 1).max() > 0.5  # the input's weights do not sum to one
    path = save_gltf(robot, tmp_path / "robot.glb")
    document = pygltflib.GLTF2().load(str(path))
    blob = document.binary_blob()
    for mesh in document.meshes:
        for primitive in mesh.primitives:
            if primitive.attributes.WEIGHTS_0 is None:
                continue
            accessor = document.accessors[primitive.attributes.WEIGHTS_0]
            view = document.bufferViews[accessor.bufferView]
            weights = np.frombuffer(blob, np.float32, accessor.count * 4, view.byteOffset).reshape(-1, 4)
            assert np.abs(weights.sum(axis=1, dtype=np.float64) - 1).max() < 1e-6


def test_glb_layout(tmp_path):
    path = save_gltf(load_model(None), tmp_path / "character.glb")
    raw = path.read_bytes()
    magic, version, length = struct.unpack_from("<4sII", raw)
    assert (magic, version, length) == (b"glTF", 2, len(raw))
    json_length, kind = struct.unpack_from("<II", raw, 12)
    assert kind == 0x4E4F534A and json_length % 4 == 0
    document = json.loads(raw[20:20 + json_length])
    assert document["asset"]["version"] == "2.0"
    assert [n["name"] for n in document["nodes"]][:3] == ["body", "leftArm", "rightArm"]


# --- safety -----------------------------------------------------------------------------------------
def test_nan_is_refused_naming_the_bone_and_nothing_is_written(tmp_path):
    scene = load_gltf(ROBOT)
    bone = scene.find_bone("Head")
    node = bone.get_pose_target()
    node.table.position[node.table_row, 1] = np.nan  # what no setter lets through
    target = tmp_path / "robot.glb"
    target.write_bytes(b"old contents")
    with pytest.raises(ViewerError, match="bone 'Head'.*NaN"):
        save_gltf(scene, target)
    assert target.read_bytes() == b"old contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["robot.glb"]


def test_an_interrupted_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    target = tmp_path / "model.gltf"
    target.write_bytes(b"old contents")

    def fail(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(ViewerError, match="No space left"):
        save_gltf(load_model(None), target)
    assert target.read_bytes() == b"old contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.gltf"]


@pytest.mark.parametrize("name, message", [("model.obj", "must be a .glb or .gltf"),
                                           ("missing/model.glb", "does not exist")])
def test_bad_output_paths(tmp_path, name, message):
    with pytest.raises(ViewerError, match=message):
        save_gltf(load_model(None), tmp_path / name)


def test_dropped_extensions_are_named_in_one_warning(tmp_path, caplog):
    source = json.loads((DATA_DIR / "gltf-samples" / "SimpleSkin" / "SimpleSkin.gltf").read_text())
    source["extensionsUsed"] = ["KHR_materials_unlit", "KHR_texture_transform", "KHR_lights_punctual",
                                "EXT_lights_image_based"]
    path = tmp_path / "in.gltf"
    path.write_text(json.dumps(source))
    scene = load_gltf(path)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="boneviewer"):
        save_gltf(scene, tmp_path / "out.glb")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1
    # The lights are read but not written; unlit materials and texture transforms are written.
    assert "KHR_lights_punctual, EXT_lights_image_based" in lines[0], lines[0]
    assert "KHR_texture_transform" not in lines[0] and "KHR_materials_unlit" not in lines[0]
    assert "extensionsUsed" not in json.loads(_json_chunk(tmp_path / "out.glb"))


def _json_chunk(path) -> bytes:
    raw = path.read_bytes()
    length = struct.unpack_from("<I", raw, 12)[0]
    return raw[20:20 + length]


def test_glb_bytes_are_what_save_gltf_writes(tmp_path):
    from viewer.gltf.writer import glb_bytes

    scene = load_gltf(ROBOT)
    assert glb_bytes(scene) == save_gltf(scene, tmp_path / "robot.glb").read_bytes()


def test_many_skins_clips_and_inverse_binds_as_the_bones_give_them(tmp_path):
    """The writer gathers keyframes and inverse binds in bulk, not channel by channel or bone by
    bone: each sampler's accessors hold its channel's float32 times and values (the input's
    bounds its first and last time), times shared by channels are written once, and each skin's
    inverse binds are its bones' own, read one by one here."""
    from test_gltf_scale import recursive_skeletons

    scene = load_gltf(recursive_skeletons(tmp_path, segments=3, joints=4))
    scene.skeletons[1].bones[2].get_pose_target().rotation_quaternion = [0.2, 0.1, -0.3, 0.927]
    path = save_gltf(scene, tmp_path / "out.glb")
    document = pygltflib.GLTF2().load(str(path))
    blob = document.binary_blob()

    def read(index: int) -> np.ndarray:
        accessor = document.accessors[index]
        width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[accessor.type]
        offset = document.bufferViews[accessor.bufferView].byteOffset + (accessor.byteOffset or 0)
        return np.frombuffer(blob, np.float32, accessor.count * width, offset).reshape(accessor.count, width)

    clip, written = scene.animations[0], document.animations[0]
    assert len(written.channels) == len(clip.channels) > 0
    for channel, spec in zip(clip.channels, written.channels):
        sampler = written.samplers[spec.sampler]
        assert document.nodes[spec.target.node].name == channel.node.name and spec.target.path == channel.path
        assert read(sampler.input).tobytes() == np.float32(channel.times).tobytes()
        assert read(sampler.output).tobytes() == np.float32(channel.values).tobytes()
        bounds = document.accessors[sampler.input]
        assert (bounds.min, bounds.max) == ([float(np.float32(channel.times[0]))], [float(np.float32(channel.times[-1]))])
    distinct_times = {np.float32(channel.times).tobytes() for channel in clip.channels}
    assert len({sampler.input for sampler in written.samplers}) == len(distinct_times) == 1  # every segment's six
    skeletons = {skeleton.bones[0].name: skeleton for skeleton in scene.skeletons}
    assert len(document.skins) == len(skeletons)
    for skin in document.skins:
        skeleton = skeletons[document.nodes[skin.joints[0]].name]
        bones = sorted(skeleton.bones, key=lambda bone: bone.index)
        assert [document.nodes[j].name for j in skin.joints] == [bone.name for bone in bones]
        expected = np.array([bone.get_absolute_inverse_bind_matrix() for bone in bones])
        np.testing.assert_allclose(read(skin.inverseBindMatrices).reshape(-1, 4, 4), expected, rtol=0, atol=1e-6)


# --- unit rotations (issue 47, item 6) ---------------------------------------------------------------
ARM = "Skeleton_arm_joint_L__4_"
OFF_UNIT = [0, 0, 0.38, 0.92]  # length 0.9954: what docs/export.md's example sets


def reach(model=CESIUM_MAN):
    """The docs' example: a clip keying the arm, then the arm posed by a quaternion off unit length."""
    scene = load_gltf(model)
    arm = scene.find_bone(ARM)
    scene.insert_keyframe("Reach", 0.0, [arm])
    arm.get_pose_target().rotation_quaternion = OFF_UNIT
    scene.insert_keyframe("Reach", 1.0, [arm], interpolation="STEP")
    return scene, arm


def written_rotations(path):
    """Every rotation in a written .glb: the nodes', then every rotation sampler's keys."""
    document = pygltflib.GLTF2().load(str(path))
    blob = document.binary_blob()
    nodes = np.array([node.rotation for node in document.nodes if node.rotation is not None])
    keys = []
    for animation in document.animations:
        for channel in animation.channels:
            if channel.target.path == "rotation":
                accessor = document.accessors[animation.samplers[channel.sampler].output]
                view = document.bufferViews[accessor.bufferView]
                keys.append(np.frombuffer(blob, np.float32, accessor.count * 4,
                                          view.byteOffset + (accessor.byteOffset or 0)).reshape(-1, 4))
    return nodes, np.concatenate(keys)


@pytest.mark.parametrize("apply_pose_as_bind", [False, True])
def test_rotations_are_written_as_unit_quaternions_whatever_a_script_sets(tmp_path, caplog, apply_pose_as_bind):
    """A pose or a key off unit length is written normalized (and the inverse binds a pose applied
    as bind makes agree with it: the file at rest shows the pose); the file reads back without a
    warning; the scene keeps the values it was given."""
    scene, arm = reach()
    clip = scene.animations[0]  # a loaded clip's rotation keys, made longer than unit
    channel = next(c for c in clip.channels if c.path == "rotation")
    channel.set_keys(channel.times, channel.values * 1.5, channel.interpolation)
    clip.keys_changed()
    out = save_gltf(scene, tmp_path / "reach.glb", apply_pose_as_bind=apply_pose_as_bind)
    nodes, keys = written_rotations(out)
    assert len(nodes) and len(keys) > 2
    for rotations in (nodes, keys):
        np.testing.assert_allclose(np.linalg.norm(rotations, axis=1), 1.0, atol=1e-6)
    with caplog.at_level(logging.WARNING, logger="boneviewer"):
        reloaded = load_gltf(out)
    assert caplog.records == []
    np.testing.assert_array_equal(arm.get_pose_target().rotation_quaternion, OFF_UNIT)  # the scene's own
    assert np.abs(np.linalg.norm(channel.values, axis=1) - 1.5).max() < 1e-6
    np.testing.assert_allclose(reloaded.find_bone(ARM).get_pose_target().rotation_quaternion,
                               np.divide(OFF_UNIT, np.linalg.norm(OFF_UNIT)), atol=1e-7)
    if apply_pose_as_bind:
        skeleton = reloaded.skeletons[0]
        skeleton.prepare()
        for bone in skeleton.bones:
            np.testing.assert_allclose(bone.get_final_matrix(), np.eye(4), atol=1e-5, err_msg=bone.name)


@pytest.mark.parametrize("value, said", [(0.0, "the zero quaternion"), (np.nan, "not finite")])
def test_a_zero_or_nan_rotation_key_is_refused_naming_the_bone_and_the_key(tmp_path, value, said):
    scene, _ = reach()
    clip = scene.find_animation("Reach")
    channel = next(c for c in clip.channels if c.path == "rotation")
    values = channel.values.copy()
    values[1] = value  # what no setter lets through
    channel.set_keys(channel.times, values, channel.interpolation)
    for name in ("reach.glb", "reach.gltf"):
        with pytest.raises(ViewerError, match=rf"bone '{ARM}': rotation key 1 \(at 1 s\) of clip 'Reach' is {said}"):
            save_gltf(scene, tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_compact_json_is_json_dumps_text():
    """The GLB's JSON chunk: orjson's text only where it is json.dumps' byte for byte (floats of
    every magnitude, tiny ones that orjson writes otherwise, names beyond ASCII, DEL, control
    characters, values orjson refuses), json's error for NaN, and orjson's text used at all."""
    from viewer.gltf import writer

    rng = np.random.default_rng(3)
    floats = (rng.standard_normal(4000) * 10.0 ** rng.integers(-12, 25, 4000)).tolist()
    floats += [1e-05, 2.5e-07, 0.0001, 1e-4 * 0.999, 1e16, 1e15, 1e22, 5e-324, -0.0, 1.7976931348623157e308,
               float(np.float32(0.1)), float(np.float32(1e-5))]
    documents = [
        {"asset": {"version": "2.0"}, "nodes": [{"name": f"n{i}", "translation": [v, 1.0, -v]}
                                               for i, v in enumerate(floats)]},
        {"nodes": [{"name": "plain", "rotation": [0.0, 0.0, 0.7071067811865476, 0.7071067811865476]}]},
        {"nodes": [{"name": "Kn\u00f6chel \u9aa8", "scale": [1.5, 2.0, 3.0]}]},
        {"nodes": [{"name": "del\x7f tab\t nl\n ctrl\x01 quote\" back\\ slash/"}]},
        {"nodes": [{"name": "null"}], "count": 2 ** 70, "keys": {1: 2}, "numpy": [np.float64(0.5), np.float32(2.0).item()]},
        {"tiny": [1e-8], "word": "e-5 0.00001"},
        {"nodes": [{"name": "a,1e-5,b [0.00001] :2.5e-7} x:-0.00003]", "rotation": [1e-08, -2.5e-07, 0.00001, 1.0]},
                   {"name": "n", "translation": [10.00001, -0.000099, 3e-5], "scale": [1e-4, 9.99e-5, 1e-300]}],
         "e-5": 0.00001, "0.0000": [-1e-05, [1e-06, {"k": 7e-9}]]},
        {"nodes": [{"name": "back\\slash \"1e-5\"", "rotation": [1e-08, 0.0, 0.0, 1.0]}]},
    ]
    for document in documents:
        assert writer.compact_json(document) == json.dumps(document, separators=(",", ":"), allow_nan=False).encode()
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError):
            writer.compact_json({"nodes": [{"translation": [bad, 0.0, 0.0]}]})
    if writer.orjson is not None:  # the fast path is taken for a plain document and for tiny floats
        real = json.dumps
        try:
            json.dumps = None
            for document in (documents[0], documents[1], documents[-2]):
                assert writer.compact_json(document) == real(document, separators=(",", ":")).encode()
        finally:
            json.dumps = real


def test_many_meshes_world_matrices_walked_once(tmp_path):
    """Scene.prepare brings every mesh's world matrix up to date in one walk of the shared
    ancestors: the same matrices as each mesh's node asked alone, after a pose change too."""
    from test_gltf_scale import recursive_skeletons

    scene = load_gltf(recursive_skeletons(tmp_path, segments=7, joints=4))
    placed = [mesh for mesh in scene.meshes if mesh.world_node is not None]
    assert len(placed) >= 6
    scene.prepare()
    before = [mesh.world_matrix for mesh in placed]
    scene.nodes[1].position = [0.5, 2.0, 0.0]  # an ancestor of every segment but the first
    scene.prepare()
    for mesh in placed:
        np.testing.assert_array_equal(mesh.world_matrix, mesh.world_node.get_world_matrix())
    moved = [not np.array_equal(a, mesh.world_matrix) for a, mesh in zip(before, placed)]
    assert sum(moved) >= 6


def test_export_pauses_the_collector_and_restores_it(tmp_path):
    """save_gltf and glb_bytes run with the cyclic collector paused (their document is tens of
    thousands of live objects) and leave it as they found it, after an error too."""
    import gc

    from viewer.gltf import writer

    scene = load_gltf(ROBOT)
    seen = []
    real = writer._Builder.files

    def files(self, path):
        seen.append(gc.isenabled())
        return real(self, path)

    writer._Builder.files = files
    try:
        assert gc.isenabled()
        writer.glb_bytes(scene)
        save_gltf(scene, tmp_path / "out.glb")
        assert gc.isenabled()
        gc.disable()
        writer.glb_bytes(scene)
        assert not gc.isenabled()
        gc.enable()
        writer._Builder.files = lambda self, path: 1 / 0
        with pytest.raises(ZeroDivisionError):
            writer.glb_bytes(scene)
        assert gc.isenabled()
    finally:
        writer._Builder.files = real
        gc.enable()
    assert seen == [False, False, False]


def _merged_reference(joints, weights):
    """The writer's merge of a joint listed twice for a vertex, pair by pair (its reference)."""
    joints, weights = joints.copy(), weights.copy()
    for k in range(1, joints.shape[1]):
        for j in range(k):
            twice = (joints[:, k] == joints[:, j]) & (weights[:, k] > 0) & (weights[:, j] > 0)
            if twice.any():
                weights[twice, j] += weights[twice, k]
                weights[twice, k] = 0
    joints[weights == 0] = 0
    return joints, weights


def test_influences_merged_and_binds_compared_as_their_references():
    """The writer's shortcuts: influences without a joint listed twice skip the pairwise merge,
    and the bind comparison written out is np.allclose; both give their references' results
    (joints listed twice or not, zero weights, 4 and 8 influences; finite, inf and NaN binds)."""
    from viewer.gltf import writer

    rng = np.random.default_rng(8)
    for width in (4, 8):
        for duplicates in (False, True):
            count = 300
            joints = np.stack([rng.permutation(40)[:width] for _ in range(count)])
            if duplicates:
                joints[::7, width - 1] = joints[::7, 0]
            weights = rng.uniform(0, 1, (count, width)).astype(np.float32)
            weights[::5, 1] = 0.0
            got, expected = writer._merged_influences(joints, weights), _merged_reference(joints, weights)
            for a, b in zip(got, expected):
                np.testing.assert_array_equal(a, b)
            assert duplicates == (not np.array_equal(got[1], weights))
    base = rng.standard_normal((30, 4, 4))
    for scale in (0.0, 1e-7, 1e-6, 1e-5, 1e-3):
        for other in (base + scale, base * (1 + scale), base + scale * rng.standard_normal(base.shape)):
            assert writer._all_close(base, other) == np.allclose(base, other, rtol=1e-5, atol=1e-6)
    for bad in (np.inf, -np.inf, np.nan):
        other = base.copy()
        other[3, 1, 2] = bad
        same = other.copy()
        assert writer._all_close(base, other) == np.allclose(base, other, rtol=1e-5, atol=1e-6)
        assert writer._all_close(other, same) == np.allclose(other, same, rtol=1e-5, atol=1e-6)


def test_poses_written_at_once_are_those_written_node_by_node():
    """Every node's TRS left out at its default, tested for all nodes at once: the same specs as
    node by node (defaults, -0.0, one part moved, all moved)."""
    from viewer.gltf.writer import _Scene

    rng = np.random.default_rng(4)
    rest = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    poses = np.array([rest] * 60)
    poses[1:10, :3] = rng.standard_normal((9, 3))
    poses[10:20, 3:7] = rng.standard_normal((10, 4))
    poses[20:30, 7:] = rng.uniform(0.5, 2, (10, 3))
    poses[30:40] = rng.standard_normal((10, 10))
    poses[40:45, [0, 3]] = -0.0
    poses[45:50, 9] = 1.0 + 1e-15
    at_once, one_by_one = [{} for _ in poses], [{} for _ in poses]
    _Scene._write_poses(at_once, poses)
    for spec, pose in zip(one_by_one, poses.tolist()):
        _Scene._write_trs(spec, pose)
    assert at_once == one_by_one
    assert [list(spec) for spec in at_once] == [list(spec) for spec in one_by_one]
    assert at_once[0] == {} and "scale" in at_once[45]


def test_compact_json_of_random_documents_is_json_dumps_text():
    """compact_json against json.dumps on random documents: floats of every size among names
    made of what a number is written with, and of JSON's own punctuation and escapes."""
    import random

    from viewer.gltf import writer

    rng = random.Random(9)
    alphabet = '0123456789.-+e,:[]{}" \\ab'
    for _ in range(300):
        nodes = []
        for _ in range(rng.randint(1, 8)):
            node = {"name": "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))}
            for key in rng.sample(["translation", "rotation", "scale"], rng.randint(0, 3)):
                node[key] = [rng.choice([0.0, 1.0, -0.0]) if rng.random() < 0.3
                             else rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 18) for _ in range(3)]
            nodes.append(node)
        document = {"nodes": nodes, "count": rng.randint(0, 10 ** 6)}
        assert writer.compact_json(document) == json.dumps(document, separators=(",", ":"), allow_nan=False).encode()
