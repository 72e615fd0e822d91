"""The glTF loader's bulk paths against the element-by-element references they replaced: the
same document, nodes, bones, clips, bounds and pixels, bit for bit, and the same warnings and
errors (scripts/bench_load.py times them).

Validation checks each object by its schema's compiled checker (one generated function per
schema) and hands anything off to the object-by-object walk (``checked_document(..., bulk=False)``), which words
the first problem: here both run on the samples and on hypothesis's mutations of them (values
of every wrong type, out of range, missing), and must agree on the document or the message.
The node transforms, bone checks and clips are loaded both ways (the bulk path patched out)
and compared; rest bounds against the full CPU skinning; RGB textures against PIL's convert.
"""

from __future__ import annotations

import copy
import json
import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gltf_cases import build_base
from samples import SAMPLES_DIR
from viewer.gltf.validate import checked_document

WRONG_VALUES = [None, -1, 0, 1, 2, 3, 4, 7, 255, 5126, 5125, 2**40, 10**400, -0.0, 0.5, 1e308, math.inf, math.nan,
                True, False, "", "x", "LINEAR", "rotation", "SCALAR", [], [0], [1.0, 2.0, 3.0], [0, 0, 0, 1],
                ["a"], {}, {"x": 1}, {"POSITION": 0}]


def _json_of(path) -> dict:
    raw = path.read_bytes()
    if raw[:4] == b"glTF":
        length = struct.unpack_from("<I", raw, 12)[0]
        raw = raw[20:20 + length]
    return json.loads(raw)


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    paths = [SAMPLES_DIR / "CesiumMan" / "CesiumMan.glb", SAMPLES_DIR / "Fox" / "Fox.glb",
             SAMPLES_DIR / "RobotExpressive" / "RobotExpressive.glb", SAMPLES_DIR / "RiggedFigure" / "RiggedFigure.gltf",
             SAMPLES_DIR / "CesiumMan-Draco" / "CesiumMan.gltf", build_base(tmp_path_factory.mktemp("base"))]
    return [_json_of(path) for path in paths]


class Refused(Exception):
    pass


def _outcome(document, bulk: bool):
    """(clean document, hierarchy), or ("refused", the exception's type and message): a value
    the walk does not foresee either (a 400-digit integer) raises what load_gltf wraps."""
    try:
        clean, hierarchy = checked_document(document, Refused, bulk)
    except Exception as refused:
        return "refused", f"{type(refused).__name__}: {refused}"
    return clean, hierarchy


def test_bulk_validation_gives_the_walks_document_for_the_samples(documents):
    for document in documents:
        bulk, walk = _outcome(document, True), _outcome(document, False)
        assert bulk[0] != "refused", bulk
        assert bulk == walk
        assert json.dumps(bulk[0]) == json.dumps(walk[0])  # the same fields in the same order


def _places(node, prefix=()):
    """Every (container path, key) in a JSON document."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield prefix, key
        yield from _places(value, prefix + (key,))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_bulk_validation_refuses_as_the_walk_does(documents, data):
    document = copy.deepcopy(data.draw(st.sampled_from(documents), label="base"))
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        places = [place for place in _places(document) if place[0][:1] not in (("buffers",), ("images",))]
        where, key = data.draw(st.sampled_from(places), label="place")
        parent = document
        for step in where:
            parent = parent[step]
        if data.draw(st.booleans(), label="delete"):
            del parent[key]
        else:
            parent[key] = copy.deepcopy(data.draw(st.sampled_from(WRONG_VALUES), label="value"))
    bulk, walk = _outcome(document, True), _outcome(document, False)
    if walk[0] == "refused":
        assert bulk == walk
    else:
        assert bulk[0] != "refused", bulk
        assert json.dumps(bulk[0]) == json.dumps(walk[0]) and bulk[1] == walk[1]


# --- node transforms: the table's rows at once, against node by node --------------------------------
def _node_by_node(file, nodes, specs):
    from viewer.gltf import scene as gltf_scene

    for i, spec in enumerate(specs):
        gltf_scene._set_node_transform(file, nodes[i], spec, i)


def _tricky_nodes(folder):
    """The base worm with nodes given every way: a matrix, an identity matrix, a rotation off
    unit length (normalized, with a warning), one just inside the 1e-3 tolerance, defaults."""
    path = build_base(folder)
    document = json.loads(path.read_text())
    half = math.sqrt(0.5)
    extra = [{"name": "m", "matrix": [2, 0, 0, 0, 0, 0, 1, 0, 0, -1, 0, 0, 1, 2, 3, 1]},
             {"name": "i", "matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], "translation": [1, 2, 3]},
             {"name": "off", "rotation": [0, 0, 2 * half, 2 * half], "scale": [1, 2, 3]},
             {"name": "near", "rotation": [0, 0, 0, 1.0009995]}, {"name": "bare"}]
    document["nodes"] += extra
    path.write_text(json.dumps(document))
    return path


def test_node_transforms_at_once_are_those_node_by_node(tmp_path, monkeypatch, caplog):
    import numpy as np

    from viewer.gltf import load_gltf
    from viewer.gltf import scene as gltf_scene

    paths = [SAMPLES_DIR / "RobotExpressive" / "RobotExpressive.glb", SAMPLES_DIR / "CesiumMan" / "CesiumMan.glb",
             _tricky_nodes(tmp_path)]
    for path in paths:
        caplog.clear()
        fast = load_gltf(path)
        fast_log = caplog.text
        with monkeypatch.context() as patch:
            patch.setattr(gltf_scene, "_set_node_transforms", _node_by_node)
            caplog.clear()
            slow = load_gltf(path)
        assert caplog.text == fast_log
        for a, b in zip(fast.nodes, slow.nodes, strict=True):
            for field in ("position", "rotation_quaternion", "scaling"):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=f"{path} {a.name}")
        # The local matrices composed at once are each node's own, bit for bit.
        at_once = gltf_scene._local_matrices(fast.nodes)
        for node, local in zip(fast.nodes, at_once, strict=True):
            np.testing.assert_array_equal(local, node.get_local_matrix())
    assert "not a unit quaternion" in fast_log


def test_positions_for_bounds_are_the_skinned_ones_without_normals():
    """Scene.rest_bounds skins positions alone (mesh.skinned_positions): the same numbers as
    skinned()'s positions, posed and animated (RobotExpressive: shared joints, morph targets)."""
    import numpy as np

    from viewer.gltf import load_gltf

    for path in (SAMPLES_DIR / "CesiumMan" / "CesiumMan.glb", SAMPLES_DIR / "RobotExpressive" / "RobotExpressive.glb"):
        scene = load_gltf(path)
        scene.animations[0].apply(0.37 * scene.animations[0].duration)
        for mesh in scene.morph_meshes:
            mesh.morph_weights = np.linspace(0.2, 0.9, len(mesh.morph_weights))
        for mesh in scene.meshes:
            np.testing.assert_array_equal(mesh.skinned_positions(), mesh.skinned()[0])
        low, high = scene.current_bounds()
        points = np.concatenate([mesh.skinned()[0] for mesh in scene.meshes])
        np.testing.assert_array_equal(low, points.min(axis=0))
        np.testing.assert_array_equal(high, points.max(axis=0))


def test_bones_checked_at_once_are_those_checked_one_by_one(monkeypatch):
    """The loader checks every bone's local and bind matrices in one pass and makes the bones
    that pass without Bone's own checks; with every bone made through those checks instead,
    the skeletons hold the same matrices, bit for bit."""
    import numpy as np

    from viewer.gltf import load_gltf
    from viewer.gltf import scene as gltf_scene

    calls = []
    at_once = gltf_scene._usable_bone_matrices
    monkeypatch.setattr(gltf_scene, "_usable_bone_matrices", lambda *a: calls.append(at_once(*a)) or calls[-1])
    for path in (SAMPLES_DIR / "RobotExpressive" / "RobotExpressive.glb", SAMPLES_DIR / "Fox" / "Fox.glb"):
        calls.clear()
        fast = load_gltf(path)
        assert calls and all(all(flags) and not near for flags, near in calls)  # the bulk path ran for every bone
        with monkeypatch.context() as patch:
            patch.setattr(gltf_scene, "_usable_bone_matrices", lambda local, binds, absolutes: ([False] * len(binds),
                                                                                               False))
            slow = load_gltf(path)
        _skeletons_alike(fast, slow)


def test_bones_made_at_once_are_those_made_one_by_one(tmp_path, monkeypatch):
    """Where every bone of a skin passes the checks, its bones are made at once
    (Bone.linked_checked); made one by one through Bone(...) and link_transform_node instead,
    the skeletons are the same: bones, parents, children, rows, slots, indices, linked nodes and
    matrices (nested skins, a skin's root below other nodes, bones that are not joints)."""
    from test_gltf_scale import recursive_skeletons

    from viewer.gltf import load_gltf
    from viewer.model import Bone

    made = []
    at_once = Bone.linked_checked.__func__
    monkeypatch.setattr(Bone, "linked_checked", classmethod(lambda *a: made.append(1) or at_once(*a)))
    paths = [SAMPLES_DIR / "RobotExpressive" / "RobotExpressive.glb", SAMPLES_DIR / "CesiumMan" / "CesiumMan.glb",
             recursive_skeletons(tmp_path, segments=7, joints=5)]
    for path in paths:
        made.clear()
        fast = load_gltf(path)
        assert len(made) == len(fast.skeletons)
        with monkeypatch.context() as patch:
            patch.setattr(Bone, "linked_checked", classmethod(lambda *a: pytest.fail("made at once")))
            patch.setattr(gltf_scene_module(), "_usable_bone_matrices",
                          lambda local, binds, absolutes: ([True] * (len(binds) - 1) + [False], False))
            slow = load_gltf(path)
        _skeletons_alike(fast, slow)


def gltf_scene_module():
    from viewer.gltf import scene

    return scene


def _skeletons_alike(fast, slow):
    import numpy as np

    for a, b in zip(fast.skeletons, slow.skeletons, strict=True):
        rows_a, rows_b = a.batch.rows, b.batch.rows
        assert a.batch.count == b.batch.count and a.batch.dirty == b.batch.dirty
        for field in ("local", "bind", "rest", "absolute_bind", "absolute_inverse_bind", "parent", "need_decompose",
                      "need_compose", "linked_version"):
            np.testing.assert_array_equal(getattr(rows_a, field)[:a.batch.count],
                                          getattr(rows_b, field)[:b.batch.count], err_msg=field)
        for x, y in zip(a.bones, b.bones, strict=True):
            assert (x.name, x.slot, x.index, x.get_transform_node().name) == (y.name, y.slot, y.index,
                                                                              y.get_transform_node().name)
            assert (x.get_parent() and x.get_parent().name) == (y.get_parent() and y.get_parent().name)
            assert [c.name for c in x.children] == [c.name for c in y.children]
            assert x.get_skeleton() is a and x._batch is a.batch
        assert [x.name for x in a.batch.by_slot] == [y.name for y in b.batch.by_slot]
        np.testing.assert_array_equal(a.get_transform_matrices(), b.get_transform_matrices())


def test_nodes_made_at_once_are_those_linked_one_by_one(tmp_path):
    """TransformNode.forest, the loader's nodes made and linked at once, against each node made
    and its parent set through TransformNode's setter: names, parents, children in the file's
    order, table rows and versions, and world matrices."""
    import numpy as np

    from test_gltf_scale import recursive_skeletons

    from viewer.gltf import scene as gltf_scene
    from viewer.gltf.container import GltfFile
    from viewer.model import NodeTable, TransformNode

    paths = [SAMPLES_DIR / "RobotExpressive" / "RobotExpressive.glb", SAMPLES_DIR / "Fox" / "Fox.glb",
             build_base(tmp_path), recursive_skeletons(tmp_path, segments=7, joints=3)]
    for path in paths:
        file = GltfFile(path)
        specs = file.document["nodes"]
        fast_table, slow_table = NodeTable(len(specs)), NodeTable(len(specs))
        fast = TransformNode.forest([s.get("name") or f"node{i}" for i, s in enumerate(specs)], fast_table,
                                    [s.get("children") for s in specs])
        slow = gltf_scene._linked_nodes(specs, file.hierarchy, slow_table)
        index = {id(node): i for i, node in enumerate(fast)} | {id(node): i for i, node in enumerate(slow)}
        assert any(node.children for node in fast)
        for a, b in zip(fast, slow, strict=True):
            assert (a.name, a.table_row, a.version) == (b.name, b.table_row, b.version)
            assert (a.parent and index[id(a.parent)]) == (b.parent and index[id(b.parent)])
            assert [index[id(c)] for c in a.children] == [index[id(c)] for c in b.children]
            np.testing.assert_array_equal(a.get_world_matrix(), b.get_world_matrix())
        for field in ("position", "quaternion", "scaling", "version"):
            np.testing.assert_array_equal(getattr(fast_table, field), getattr(slow_table, field))
        assert fast_table.count == slow_table.count
    table = NodeTable(2)  # free rows are handed out first, then fresh ones, the arrays grown
    first = TransformNode.forest(["a", "b", "c"], table, [[1], [2], None])
    rows = [node.table_row for node in first]
    del first
    import gc

    gc.collect()
    again = TransformNode.forest([f"n{i}" for i in range(6)], table, [None] * 6)
    assert sorted(node.table_row for node in again[:3]) == sorted(rows) and table.capacity >= 6
    assert [node.table_row for node in again[3:]] == [3, 4, 5]
    assert (table.version[[3, 4, 5]] == 1).all()


# --- clips: every channel's keyframe values at once, against channel by channel ----------------------
def _clips_alike(fast, slow):
    import numpy as np

    assert type(fast) is type(slow) and fast.name == slow.name and fast.duration == slow.duration
    for a, b in zip(fast.channels, slow.channels, strict=True):
        assert (a.node.name, a.path, a.interpolation) == (b.node.name, b.path, b.interpolation)
        np.testing.assert_array_equal(a.times, b.times)
        np.testing.assert_array_equal(a.values, b.values)
        assert a.values.shape == b.values.shape and a.values.dtype == b.values.dtype
    for a, b in zip(getattr(fast, "morph_channels", []), getattr(slow, "morph_channels", []), strict=True):
        np.testing.assert_array_equal(a.times, b.times)
        np.testing.assert_array_equal(a.values, b.values)


@pytest.mark.parametrize("case", ["base", "step", "cubicspline", "shared_and_multiple_skins"])
def test_clips_read_at_once_are_those_read_channel_by_channel(case, tmp_path, monkeypatch):
    from gltf_cases import make_case

    from viewer.gltf import animation as gltf_animation
    from viewer.gltf import load_gltf

    path = build_base(tmp_path) if case == "base" else make_case(case, tmp_path)
    paths = [path] if case != "base" else [path, SAMPLES_DIR / "RobotExpressive" / "RobotExpressive.glb",
                                           SAMPLES_DIR / "Fox" / "Fox.glb", SAMPLES_DIR / "CesiumMan" / "CesiumMan.glb"]
    at_once = gltf_animation._read_clips_at_once
    for path in paths:
        used = []
        monkeypatch.setattr(gltf_animation, "_read_clips_at_once", lambda *a: used.append(at_once(*a)) or used[-1])
        fast = load_gltf(path)
        assert len(used) == 1 and used[0] is not None, path  # all the clips were read at once
        monkeypatch.setattr(gltf_animation, "_read_clips_at_once", lambda *a: None)
        slow = load_gltf(path)
        assert len(fast.animations) == len(slow.animations) > 0
        for a, b in zip(fast.animations, slow.animations):
            _clips_alike(a, b)
            a.apply(0.37 * a.duration)
            b.apply(0.37 * b.duration)
        for a, b in zip(fast.nodes, slow.nodes):
            assert a.position.tolist() == b.position.tolist()
            assert a.rotation_quaternion.tolist() == b.rotation_quaternion.tolist()


def test_a_clip_that_warns_or_fails_is_read_channel_by_channel(tmp_path, caplog):
    """Keys to normalize (one warning) and a NaN key (the error names the accessor) come out as
    the channel-by-channel reading words them."""
    import base64
    import struct

    from viewer import ViewerError
    from viewer.gltf import load_gltf

    path = build_base(tmp_path)
    document = json.loads(path.read_text())
    sampler = document["animations"][0]["samplers"][0]
    output = document["accessors"][sampler["output"]]
    view = document["bufferViews"][output["bufferView"]]
    prefix, _, payload = document["buffers"][0]["uri"].partition(",")
    blob = bytearray(base64.b64decode(payload))
    start = view.get("byteOffset", 0) + output.get("byteOffset", 0)
    struct.pack_into("<4f", blob, start, 0.0, 0.0, 0.0, 2.0)  # the first rotation key twice unit length
    document["buffers"][0]["uri"] = prefix + "," + base64.b64encode(bytes(blob)).decode()
    path.write_text(json.dumps(document))
    caplog.clear()
    load_gltf(path)
    assert "rotation keyframes are not unit quaternions; normalized" in caplog.text
    struct.pack_into("<f", blob, start + 4, float("nan"))
    document["buffers"][0]["uri"] = prefix + "," + base64.b64encode(bytes(blob)).decode()
    path.write_text(json.dumps(document))
    with pytest.raises(ViewerError, match=rf"accessor {sampler['output']} \(animation 0 .* element 0 contains NaN"):
        load_gltf(path)


def test_weights_channels_are_read_at_once_and_one_out_of_range_is_worded_as_before(tmp_path, monkeypatch):
    """The morph worms' weights channels (LINEAR, STEP, CUBICSPLINE) are read with the other
    channels in one pass, as the channel-by-channel reading makes them; a weight key beyond
    the model's range (1e30) is refused in that reading's words."""
    import base64
    import struct

    from gltf_cases import build_morph_case
    from viewer import ViewerError
    from viewer.gltf import animation as gltf_animation
    from viewer.gltf import load_gltf

    path = build_morph_case(tmp_path)
    at_once = gltf_animation._read_clips_at_once
    used = []
    monkeypatch.setattr(gltf_animation, "_read_clips_at_once", lambda *a: used.append(at_once(*a)) or used[-1])
    fast = load_gltf(path)
    assert used[0] is not None and len(fast.animations[0].morph_channels) == 3
    monkeypatch.setattr(gltf_animation, "_read_clips_at_once", lambda *a: None)
    slow = load_gltf(path)
    _clips_alike(fast.animations[0], slow.animations[0])
    monkeypatch.setattr(gltf_animation, "_read_clips_at_once", at_once)
    document = json.loads(path.read_text())
    animation = document["animations"][0]
    channel = next(c for c in animation["channels"] if c["target"]["path"] == "weights")
    output = document["accessors"][animation["samplers"][channel["sampler"]]["output"]]
    view = document["bufferViews"][output["bufferView"]]
    prefix, _, payload = document["buffers"][0]["uri"].partition(",")
    blob = bytearray(base64.b64decode(payload))
    struct.pack_into("<f", blob, view.get("byteOffset", 0) + output.get("byteOffset", 0) + 4, 1e30)
    document["buffers"][0]["uri"] = prefix + "," + base64.b64encode(bytes(blob)).decode()
    path.write_text(json.dumps(document))
    with pytest.raises(ViewerError, match=r"animation 0 \('morph'\) channel 1: weights channel of mesh .*: keyframe "
                                          r"values contain NaN or infinity or a magnitude above 1e18"):
        load_gltf(path)


def test_rgb_textures_read_without_conversion_are_convert_rgbas_pixels():
    """RGB images skip PIL's convert("RGBA") pass: the same pixels (JPEG and PNG, read-only)."""
    import io

    import numpy as np
    from PIL import Image

    from viewer.images import _rgba

    rng = np.random.default_rng(3)
    pixels = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    for kind in ("PNG", "JPEG"):
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, kind)
        for mode in ("RGB", "L", "P", "RGBA", "LA"):
            source = Image.open(io.BytesIO(buffer.getvalue())).convert(mode)
            stored = io.BytesIO()
            source.save(stored, "PNG")
            with Image.open(io.BytesIO(stored.getvalue())) as opened:
                expected = np.asarray(opened.convert("RGBA"))
            with Image.open(io.BytesIO(stored.getvalue())) as opened:
                assert opened.mode == mode
                np.testing.assert_array_equal(_rgba(opened), expected)
        with Image.open(io.BytesIO(buffer.getvalue())) as opened:
            expected = np.asarray(opened.convert("RGBA"))
        with Image.open(io.BytesIO(buffer.getvalue())) as opened:
            np.testing.assert_array_equal(_rgba(opened), expected)


def _sample_models():
    return sorted(p for p in SAMPLES_DIR.rglob("*") if p.suffix in (".gltf", ".glb"))


@pytest.mark.parametrize("path", _sample_models(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_rest_bounds_from_the_loaders_world_matrices_are_the_skinned_ones(path):
    """The loader places the rest bounds' vertices with glTF's joint matrices (inverse bind x
    world(joint), float64) without preparing the skeletons; the Scene's own CPU skinning (the
    skeletons' float32 final matrices x the mesh's world matrix) finds the same box, to float32's
    precision of the model's size. The skeletons are prepared only when asked."""
    import numpy as np

    from viewer.gltf import load_gltf
    from viewer.model.batch import Dirty

    scene = load_gltf(path)
    assert all(skeleton.batch.dirty is Dirty.STRUCTURE for skeleton in scene.skeletons)  # nothing prepared yet
    low, high = scene.rest_bounds
    size = float(np.linalg.norm(high - low))
    skinned_low, skinned_high = scene.current_bounds()
    assert size > 0
    np.testing.assert_allclose(low, skinned_low, rtol=0, atol=1e-6 * size)
    np.testing.assert_allclose(high, skinned_high, rtol=0, atol=1e-6 * size)


def test_an_absolute_bind_that_becomes_singular_down_the_chain_is_refused_while_loading(tmp_path):
    """Joint 1's bind relative to joint 0 is a well-conditioned shear, and so is joint 0's, but
    their product is singular to the skeleton's measure: refused by load_gltf (the bind batch is
    brought up to date while loading when a bind is near the limit), not at the first draw."""
    import numpy as np
    import pygltflib as g

    from gltf_cases import Builder, worm_mesh
    from viewer import ViewerError
    from viewer.gltf import load_gltf

    k = 2048.0  # each shear alone: singularity ~5e-4; the two together ~1e-10, under the 1e-9 limit
    across, down = np.eye(4), np.eye(4)
    across[0, 1], down[1, 0] = k, k
    absolute = [across, down @ across, down @ across]  # joint 2 sits where joint 1 does
    b = Builder()
    joints = [b.node("j0", root=True)]
    joints.append(b.node("j1", parent=joints[0]))
    joints.append(b.node("j2", parent=joints[1]))
    # Inverses exact in float32 (integers under 2^24); a column-major MAT4 read row by row is
    # our row-vector matrix, so each inverse bind is written row by row.
    ibms = np.array([np.linalg.inv(a).reshape(-1) for a in absolute])
    assert np.array_equal(ibms.astype(np.float32), ibms)
    b.node("mesh", root=True, mesh=worm_mesh(b, 3, 0), skin=0)
    b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=b.accessor(ibms.astype(np.float32), "MAT4")))
    path = b.save(tmp_path / "sheared.gltf")
    with pytest.raises(ViewerError, match=r"sheared\.gltf: bone 'j1': its absolute bind matrix is singular"):
        load_gltf(path)


def test_skin_points_compiled_is_numpys_bit_for_bit_and_declines_what_it_cannot_take():
    """csrc/ckernel.c's skin_points against mesh._skin_positions, the reference: the same bits
    for 4 and 8 influences; an out-of-range joint or another dtype is declined (nothing
    written) and skin_positions falls back to numpy; float64 positions (morphed ones) are taken."""
    import numpy as np

    from viewer.model import mesh, native

    if native.ckernel is None:
        pytest.skip("the compiled kernel is not built here")  # the numpy path is the one tested then
    rng = np.random.default_rng(3)
    for influences in (4, 8):
        positions = rng.normal(size=(500, 3)).astype(np.float32)
        joints = rng.integers(0, 30, (500, influences)).astype(np.int32)
        weights = rng.random((500, influences)).astype(np.float32)
        matrices = rng.normal(size=(30, 4, 4))
        reference = mesh._skin_positions(positions, joints, weights, matrices)[0]
        out = np.empty((500, 3))
        assert native.ckernel.skin_points(positions, joints, weights, matrices, out) == 0
        np.testing.assert_array_equal(out, reference)
        np.testing.assert_array_equal(mesh.skin_positions(positions, joints, weights, matrices), reference)
        out[:] = 7.0
        assert native.ckernel.skin_points(positions, joints + 30, weights, matrices, out) == -1
        assert (out == 7.0).all()
        wide = positions.astype(np.float64) + rng.normal(size=(500, 3)) * 1e-9  # morphed positions are float64
        assert native.ckernel.skin_points(wide, joints, weights, matrices, out) == 0
        np.testing.assert_array_equal(out, mesh._skin_positions(wide, joints, weights, matrices)[0])
        assert native.ckernel.skin_points(positions, joints.astype(np.int64), weights, matrices, out) == -1
        np.testing.assert_array_equal(mesh.skin_positions(positions, joints.astype(np.int64), weights, matrices),
                                      reference)


def test_vertex_normals_are_the_add_at_references_bit_for_bit():
    """mesh.vertex_normals (cross products written out, one bincount per axis) against the
    plain numpy it replaced (np.cross, np.add.at corner by corner, np.linalg.norm): the same
    float32 normals, degenerate triangles and unused vertices included."""
    import numpy as np

    from viewer.model.mesh import vertex_normals

    def reference(positions, indices):
        triangles = positions[indices.reshape(-1, 3)]
        face = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
        normals = np.zeros_like(positions, dtype=np.float64)
        for corner in range(3):
            np.add.at(normals, indices.reshape(-1, 3)[:, corner], face)
        length = np.linalg.norm(normals, axis=1, keepdims=True)
        normals = np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)
        return normals.astype(np.float32)

    rng = np.random.default_rng(11)
    positions = rng.normal(size=(600, 3)).astype(np.float32)
    positions[5] = positions[4]  # a triangle with two corners at one place
    indices = rng.integers(0, 590, 3000).astype(np.uint32)  # vertices 590.. unused: zero normals
    indices[:3] = (4, 5, 6)
    for index_type in (np.uint32, np.int64, np.uint16):
        np.testing.assert_array_equal(vertex_normals(positions, indices.astype(index_type)),
                                      reference(positions, indices.astype(index_type)))


def test_fox_without_normal_is_drawn_as_before():
    """Fox has no NORMAL and no indices: every vertex is in one triangle, so its flat normals
    (glTF's rule, computed at load) are the smooth ones it was drawn with before, on the same
    1728 vertices."""
    import numpy as np

    from viewer.gltf import load_gltf
    from viewer.model.mesh import vertex_normals

    fox = load_gltf(SAMPLES_DIR / "Fox" / "Fox.glb").meshes[0]
    assert len(fox.positions) == 1728 and fox.normals.dtype == np.float32
    np.testing.assert_array_equal(fox.indices, np.arange(1728))
    np.testing.assert_allclose(fox.normals, vertex_normals(fox.positions, fox.indices), atol=1e-6)


def test_image_sizes_read_from_the_header_are_pillows():
    """container.header_size reads a PNG's IHDR or a JPEG's first frame header: the size
    Pillow's open gives, for PNGs of every colour type and JPEGs baseline, progressive, with
    EXIF and restart markers; anything it does not recognise (a broken IHDR CRC, a truncated
    JPEG, another format) is None, and Pillow opens it instead, as before."""
    import io

    import numpy as np
    from PIL import Image

    from viewer.gltf.container import GltfFile, header_size

    rng = np.random.default_rng(5)
    encoded = []
    for width, height in ((1, 1), (7, 300), (640, 480), (4096, 3)):
        pixels = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
        for mode in ("RGB", "RGBA", "L", "P", "I;16"):
            image = Image.fromarray(pixels).convert(mode if mode != "I;16" else "I").convert(mode) \
                if mode != "I;16" else Image.fromarray(pixels[..., 0].astype(np.uint16) * 257)
            out = io.BytesIO()
            image.save(out, "PNG")
            encoded.append(out.getvalue())
        exif = Image.Exif()
        exif[0x0112] = 6  # an orientation: Pillow's size stays the stored one
        for options in ({}, {"progressive": True}, {"exif": exif.tobytes()}, {"restart_marker_blocks": 1},
                        {"quality": 20, "optimize": True}):
            out = io.BytesIO()
            Image.fromarray(pixels).save(out, "JPEG", **options)
            encoded.append(out.getvalue())
    for path in (SAMPLES_DIR / "CesiumMan" / "CesiumMan.glb", SAMPLES_DIR / "Fox" / "Fox.glb"):
        file = GltfFile(path)
        encoded.append(file.image(0).data)
    for data in encoded:
        with Image.open(io.BytesIO(data)) as opened:
            assert header_size(data) == opened.size
    png, jpeg = encoded[0], encoded[5]
    broken_crc = png[:29] + bytes([png[29] ^ 1]) + png[30:]
    fill = b"\xff\xd8" + b"\xff" * 100_000  # fill bytes without end: given up after a few hundred, left to Pillow
    for data in (broken_crc, png[:20], jpeg[:40], jpeg[:2] + b"\x00" + jpeg[3:], b"GIF89a" + png[6:], b"", fill):
        assert header_size(data) is None


def test_meshes_taken_as_checked_are_those_checked_again(monkeypatch):
    """The loader hands SkinnedMesh arrays it has checked (checked=True: no second pass over
    them); made with SkinnedMesh's own checks instead, every sample's meshes hold the same
    arrays, bit for bit."""
    import numpy as np

    from viewer.gltf import load_gltf
    from viewer.gltf import meshes as gltf_meshes
    from viewer.model.mesh import SkinnedMesh

    for path in _sample_models():
        fast = load_gltf(path)
        with monkeypatch.context() as patch:
            patch.setattr(gltf_meshes, "SkinnedMesh", lambda *a, checked, **k: SkinnedMesh(*a, **k))
            slow = load_gltf(path)
        for a, b in zip(fast.meshes, slow.meshes, strict=True):
            for field in ("positions", "indices", "joints", "weights", "raw_weight_sums", "extra_influences", "normals",
                          "texcoords", "texcoords1", "colors", "tangents"):
                x, y = getattr(a, field), getattr(b, field)
                assert (x is None) == (y is None), field
                if x is not None:
                    assert x.dtype == y.dtype, field
                    np.testing.assert_array_equal(x, y, err_msg=f"{path.name} {a.name} {field}")


def _skin_root_reference(joints, declared, parent_of, depth):
    """The loader's skeleton root before the declared root's short walk: every ancestor of
    every joint, the common ones, the declared root when common, else the nearest."""
    visited = set()
    for joint in joints:
        n = joint
        while n is not None and n not in visited:
            visited.add(n)
            n = parent_of.get(n)
    common = [n for n in visited if all(_at_or_under(j, n, parent_of) for j in joints)]
    nearest = max(common, key=depth.__getitem__, default=None)
    root = declared if declared in common else nearest
    members = visited if root is None else {n for n in visited if depth[n] >= depth[root]}
    return root, members, declared is not None and declared != root


def _at_or_under(n, ancestor, parent_of):
    while n is not None:
        if n == ancestor:
            return True
        n = parent_of.get(n)
    return False


def test_skin_root_found_from_the_declared_root_is_the_full_walks():
    """A skin's root and bones: from skin.skeleton walked down to the joints where it is a
    common root, else the nearest common ancestor (with the warning), as the walk over every
    ancestor found them, on random forests and joint sets."""
    import random

    from viewer.gltf import scene as gltf_scene
    from viewer.gltf.validate import node_hierarchy

    rng = random.Random(5)
    checked = 0
    for _ in range(400):
        count = rng.randint(1, 40)
        children = [[] for _ in range(count)]
        for child in range(1, count):
            if rng.random() < 0.85:
                children[rng.randrange(child)].append(child)
        hierarchy = node_hierarchy(children, ValueError)
        joints = rng.sample(range(count), rng.randint(1, min(count, 8)))
        declared = rng.choice([None, rng.randrange(count), *(joints[:1])])
        if rng.random() < 0.3:  # an ancestor of the first joint, often a common root
            n = joints[0]
            while hierarchy.parent.get(n) is not None and rng.random() < 0.7:
                n = hierarchy.parent[n]
            declared = n
        expected = _skin_root_reference(joints, declared, hierarchy.parent, hierarchy.depth)
        members = gltf_scene._below_root(joints, declared, hierarchy.parent, hierarchy.depth)
        if members is not None:
            got = (declared, members, False)
            checked += 1
        else:
            root, members = gltf_scene._common_root(joints, hierarchy.parent, hierarchy.depth)
            got = (root, members, declared is not None)
        assert got == expected, (children, joints, declared)
    assert checked > 50


def test_singularity_screen_is_transforms_singularity_up_to_rounding():
    """The loader's bone screen measures what transforms.singularity measures (|det| over the
    row lengths), up to rounding, on random, scaled, nearly singular, singular, overflowing and
    NaN matrices; far from the limit it passes and fails the same."""
    import numpy as np

    from viewer.gltf import scene as gltf_scene
    from viewer.model import transforms

    rng = np.random.default_rng(11)
    m = rng.standard_normal((3000, 4, 4)) * 10.0 ** rng.integers(-6, 7, (3000, 1, 1))
    m[:500, 2, :3] = (m[:500, 0, :3] * 2 + m[:500, 1, :3] + rng.standard_normal((500, 3)) * np.abs(m[:500, 0, :1])
                      * 10.0 ** -rng.integers(4, 14, (500, 1)))  # rows nearly dependent
    m[500:520, 1] = 0.0  # singular
    m[520:530, 0, 0] = np.inf
    m[530:540, 1, 1] = np.nan
    m[540:550] *= 1e200  # products overflow
    with np.errstate(all="ignore"):  # the overflowing and NaN ones
        expected = transforms.singularity(m)
    got = gltf_scene._singularity_screen(m)
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=0, atol=1e-13)  # a measure of scale 1
    limit = 2 * gltf_scene.SINGULAR_BIND
    clear = ~finite | (np.abs(expected - limit) > 1e-12)
    np.testing.assert_array_equal((got > limit)[clear], (expected > limit)[clear])
    assert (expected[:500] < limit).any() and (expected[:500] > limit).any()


def test_a_meshs_arrays_are_its_own(tmp_path):
    """A one-primitive mesh keeps the arrays read for it (no joining copy): none is shared with
    another mesh, the file's decoded (Draco) data or a second node drawing the same mesh."""
    import numpy as np

    from viewer.gltf import load_file

    plain = json.loads(build_base(tmp_path).read_text())
    plain["nodes"].append({"name": "again", "mesh": 0, "skin": 0})  # a second node drawing mesh 0
    plain["scenes"][0]["nodes"].append(len(plain["nodes"]) - 1)
    twice = tmp_path / "twice.gltf"
    twice.write_text(json.dumps(plain))
    for path in (SAMPLES_DIR / "CesiumMan-Draco" / "CesiumMan.gltf", twice):
        scene, file = load_file(path)
        arrays = [a for mesh in scene.meshes for a in (mesh.positions, mesh.normals, mesh.indices, mesh.joints,
                                                         mesh.weights, mesh.texcoords, mesh.colors) if a is not None]
        arrays += list(file._provided.values())
        assert len(arrays) >= 8
        for i, a in enumerate(arrays):
            for b in arrays[i + 1:]:
                assert not np.shares_memory(a, b)
    assert len(scene.meshes) == 2
