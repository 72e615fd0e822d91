"""glTF as users meet it: compressed meshes (Draco, meshopt), quantized attributes, texture
transforms, scenes, and required or unknown extensions."""

import base64
import builtins
import json
import logging

import numpy as np
import pytest

from samples import SAMPLES_DIR
from viewer import ViewerError, load_gltf
from viewer.camera import framed_camera
from viewer.options import RenderOptions
from viewer.render.headless import HeadlessRenderer

FLOAT, SHORT, USHORT = 5126, 5122, 5123


def nearest_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each point of a, the distance to the nearest point of b."""
    best = np.full(len(a), np.inf)
    for start in range(0, len(b), 512):
        block = np.linalg.norm(a[:, None, :] - b[None, start:start + 512, :], axis=2)
        best = np.minimum(best, block.min(axis=1))
    return best


def size_of(points: np.ndarray) -> float:
    return float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))


# --- Draco ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("draco, plain", [("RiggedSimple-Draco/RiggedSimple.gltf", "RiggedSimple/RiggedSimple.gltf"),
                                          ("CesiumMan-Draco/CesiumMan.gltf", "CesiumMan/CesiumMan.glb")])
def test_draco_models_match_their_plain_twins_within_quantisation(draco, plain):
    compressed, original = load_gltf(SAMPLES_DIR / draco), load_gltf(SAMPLES_DIR / plain)
    for time in (None, 0.37, 0.81):
        if time is not None:
            compressed.animations[0].apply(time * compressed.animations[0].duration)
            original.animations[0].apply(time * original.animations[0].duration)
        ours = compressed.skinned_meshes[0].skinned_positions()
        theirs = original.skinned_meshes[0].skinned_positions()
        size = size_of(theirs)
        # Draco re-orders and quantises (14-bit positions here): compare as point sets.
        assert nearest_distances(ours, theirs).max() < 1e-3 * size
        assert nearest_distances(theirs, ours).max() < 1e-3 * size


def test_a_draco_model_renders_like_its_plain_twin():
    draco = load_gltf(SAMPLES_DIR / "CesiumMan-Draco/CesiumMan.gltf")
    plain = load_gltf(SAMPLES_DIR / "CesiumMan/CesiumMan.glb")
    options = RenderOptions(show_skeleton=False, show_grid=False)
    with HeadlessRenderer((200, 200)) as headless:
        camera = framed_camera(plain)
        background = headless.render(load_gltf(SAMPLES_DIR / "CesiumMan/CesiumMan.glb"), camera,
                                     RenderOptions(show_mesh=False, show_skeleton=False, show_grid=False))
        masks = [np.abs(headless.render(scene, camera, options).astype(int) - background).sum(axis=2) > 30
                 for scene in (plain, draco)]
    overlap = (masks[0] & masks[1]).sum() / (masks[0] | masks[1]).sum()
    assert masks[0].sum() > 2000 and overlap > 0.97


def test_draco_without_its_decoder_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_draco(name, *args, **kwargs):
        if name == "DracoPy":
            raise ImportError("No module named 'DracoPy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_draco)
    with pytest.raises(ViewerError, match=r"KHR_draco_mesh_compression.*pip install 'boneviewer\[compression\]'"):
        load_gltf(SAMPLES_DIR / "RiggedSimple-Draco/RiggedSimple.gltf")


# --- meshopt --------------------------------------------------------------------------------------
def data_uri(data: bytes) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(data).decode()


def meshopt_variant(folder, extension="EXT_meshopt_compression"):
    """RiggedSimple with its vertex and index buffer views compressed by meshopt; the original
    bytes of those views are zeroed, so only a decoder gets the mesh back."""
    import meshopt

    document = json.loads((SAMPLES_DIR / "RiggedSimple/RiggedSimple.gltf").read_text())
    raw = bytearray(base64.b64decode(document["buffers"][0]["uri"].split(",", 1)[1]))
    primitive = document["meshes"][0]["primitives"][0]
    modes = {document["accessors"][index]["bufferView"]: "ATTRIBUTES" for index in primitive["attributes"].values()}
    modes[document["accessors"][primitive["indices"]]["bufferView"]] = "INDICES"
    compressed = bytearray()
    for view_index, mode in modes.items():
        view = document["bufferViews"][view_index]
        users = [a for a in document["accessors"] if a.get("bufferView") == view_index]
        item = {FLOAT: 4, SHORT: 2, USHORT: 2, 5121: 1, 5125: 4}[users[0]["componentType"]] * \
            {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[users[0]["type"]]
        stride = view.get("byteStride", item)
        start, length = view.get("byteOffset", 0), view["byteLength"]
        assert length % stride == 0 and stride % (4 if mode == "ATTRIBUTES" else 2) == 0
        plain = np.frombuffer(bytes(raw[start:start + length]), np.uint8).reshape(-1, stride)
        if mode == "INDICES":
            plain = np.frombuffer(plain.tobytes(), np.uint16 if stride == 2 else np.uint32)
        encoded = meshopt.encode_gltf_buffer(plain, mode)
        view["extensions"] = {extension: {"buffer": 1, "byteOffset": len(compressed), "byteLength": len(encoded),
                                          "byteStride": stride, "count": length // stride, "mode": mode}}
        compressed += encoded + b"\0" * (-len(encoded) % 4)
        raw[start:start + length] = bytes(length)
    document["buffers"][0]["uri"] = data_uri(bytes(raw))
    document["buffers"].append({"uri": data_uri(bytes(compressed)), "byteLength": len(compressed)})
    document["extensionsUsed"] = [extension]
    document["extensionsRequired"] = [extension]
    path = folder / "RiggedSimple-meshopt.gltf"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("extension", ["EXT_meshopt_compression", "KHR_meshopt_compression"])
def test_meshopt_decodes_to_exactly_the_plain_mesh(tmp_path, extension):
    compressed = load_gltf(meshopt_variant(tmp_path, extension))
    plain = load_gltf(SAMPLES_DIR / "RiggedSimple/RiggedSimple.gltf")
    ours, theirs = compressed.skinned_meshes[0], plain.skinned_meshes[0]
    np.testing.assert_array_equal(ours.positions, theirs.positions)  # lossless without filters
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.weights, theirs.weights)
    compressed.animations[0].apply(0.8)
    plain.animations[0].apply(0.8)
    np.testing.assert_allclose(ours.skinned_positions(), theirs.skinned_positions(), atol=1e-12)


# --- small hand-made files --------------------------------------------------------------------------
TRIANGLE = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]], np.float32)


def static_file(folder, name="model.gltf", positions=TRIANGLE, component=FLOAT, normalized=False, node=None,
                nodes=1, scenes=None, scene=None, extensions_used=(), texcoords=None, texture_transform=None):
    """A glTF of ``nodes`` nodes each showing one triangle mesh (node i moved i along x)."""
    blob = bytearray(positions.tobytes())
    accessors = [{"bufferView": 0, "componentType": component, "count": len(positions), "type": "VEC3",
                  **({"normalized": True} if normalized else {})}]
    views = [{"buffer": 0, "byteLength": len(blob)}]
    attributes = {"POSITION": 0}
    materials = []
    extra = {}
    if texcoords is not None:
        start = len(blob)
        blob += texcoords.astype(np.float32).tobytes()
        views.append({"buffer": 0, "byteOffset": start, "byteLength": len(blob) - start})
        accessors.append({"bufferView": 1, "componentType": FLOAT, "count": len(texcoords), "type": "VEC2"})
        attributes["TEXCOORD_0"] = 1
        png = base64.b64decode(  # a 1x1 white PNG
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==")
        texture = {"index": 0}
        if texture_transform is not None:
            texture["extensions"] = {"KHR_texture_transform": texture_transform}
        materials = [{"pbrMetallicRoughness": {"baseColorTexture": texture}}]
        extra = {"textures": [{"source": 0}], "images": [{"uri": "data:image/png;base64," + base64.b64encode(png).decode()}]}
    primitive = {"attributes": attributes, **({"material": 0} if materials else {})}
    document = {
        "asset": {"version": "2.0"},
        "buffers": [{"uri": data_uri(bytes(blob)), "byteLength": len(blob)}],
        "bufferViews": views, "accessors": accessors,
        "meshes": [{"primitives": [primitive]}],
        "nodes": [{"name": f"n{i}", "mesh": 0, "translation": [float(i), 0.0, 0.0], **(node or {})}
                  for i in range(nodes)],
        **({"materials": materials} if materials else {}), **extra,
    }
    if scenes is not None:
        document["scenes"] = scenes
    if scene is not None:
        document["scene"] = scene
    if extensions_used:
        document["extensionsUsed"] = list(extensions_used)
    path = folder / name
    path.write_text(json.dumps(document))
    return path


def test_quantized_positions_load_with_the_node_scale(tmp_path):
    """KHR_mesh_quantization: SHORT positions, unnormalized and normalized, dequantized by the
    node's scale as exporters write them."""
    integers = np.round(TRIANGLE * 1000).astype(np.int16)
    path = static_file(tmp_path, positions=integers, component=SHORT, node={"scale": [1e-3] * 3},
                       extensions_used=["KHR_mesh_quantization"])
    mesh = load_gltf(path).static_meshes[0]
    np.testing.assert_allclose(mesh.skinned_positions(), TRIANGLE, atol=1e-6)
    normalized = np.round(TRIANGLE / 2.0 * 32767).astype(np.int16)
    path = static_file(tmp_path, "normalized.gltf", positions=normalized, component=SHORT, normalized=True,
                       node={"scale": [2.0] * 3}, extensions_used=["KHR_mesh_quantization"])
    np.testing.assert_allclose(load_gltf(path).static_meshes[0].skinned_positions(), TRIANGLE, atol=1e-4)


def test_texture_transform_moves_the_texture_coordinates(tmp_path):
    """The mesh keeps TEXCOORD_0 as the file has it; the base colour slot carries the transform
    (the shader applies it), which moves the coordinates as the extension defines."""
    uv = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    transform = {"offset": [0.5, 0.25], "rotation": np.pi / 2, "scale": [2.0, 3.0]}
    path = static_file(tmp_path, texcoords=uv, texture_transform=transform,
                       extensions_used=["KHR_texture_transform"])
    mesh = load_gltf(path).static_meshes[0]
    np.testing.assert_array_equal(mesh.texcoords, uv)
    got = mesh.submeshes[0].pbr.base_color_texture.uv(mesh.texcoords, mesh.texcoords1)
    # glTF's order: scale, then rotate (counter-clockwise in uv, as the extension defines), then offset.
    scaled = uv * [2.0, 3.0]
    c, s = np.cos(np.pi / 2), np.sin(np.pi / 2)
    rotated = np.c_[c * scaled[:, 0] + s * scaled[:, 1], -s * scaled[:, 0] + c * scaled[:, 1]]
    np.testing.assert_allclose(got, rotated + [0.5, 0.25], atol=1e-6)
    assert not np.allclose(got, uv)


# --- scenes ---------------------------------------------------------------------------------------
def shown_x(scene) -> list[float]:
    return sorted(float(mesh.world_matrix[3, 0]) for mesh in scene.static_meshes)


def test_the_default_scene_is_shown_and_nodes_in_no_scene_are_not(tmp_path):
    scenes = [{"name": "first", "nodes": [0]}, {"name": "second", "nodes": [1]}]
    path = static_file(tmp_path, nodes=3, scenes=scenes, scene=1)  # node 2 is in no scene
    scene = load_gltf(path)
    assert shown_x(scene) == [1.0]
    assert scene.file_scenes == ["first", "second"] and scene.file_scene == 1
    assert shown_x(load_gltf(path, scene=0)) == [0.0]
    no_default = static_file(tmp_path, "first.gltf", nodes=3, scenes=scenes)
    assert shown_x(load_gltf(no_default)) == [0.0]  # no default scene: the first
    no_scenes = static_file(tmp_path, "all.gltf", nodes=3)
    assert shown_x(load_gltf(no_scenes)) == [0.0, 1.0, 2.0] and load_gltf(no_scenes).file_scene is None


def test_a_scene_that_does_not_exist_is_one_clear_error(tmp_path):
    path = static_file(tmp_path, nodes=2, scenes=[{"nodes": [0]}, {"nodes": [1]}])
    with pytest.raises(ViewerError, match=r"scene 5 does not exist \(its scenes are 0\.\.1\)"):
        load_gltf(path, scene=5)


# --- extensions -----------------------------------------------------------------------------------
def test_a_file_requiring_unknown_extensions_is_refused_naming_them(tmp_path):
    path = static_file(tmp_path)
    document = json.loads(path.read_text())
    document["extensionsRequired"] = ["KHR_draco_mesh_compression", "EXT_made_up", "KHR_other"]
    document["extensionsUsed"] = document["extensionsRequired"]
    path.write_text(json.dumps(document))
    with pytest.raises(ViewerError, match="requires extensions EXT_made_up, KHR_other, which boneviewer does not"):
        load_gltf(path)


def test_unknown_used_extensions_load_with_one_warning(tmp_path, caplog):
    path = static_file(tmp_path, extensions_used=["KHR_materials_sheen", "EXT_lights_image_based"])
    with caplog.at_level(logging.WARNING, logger="boneviewer"):
        scene = load_gltf(path)
    assert len(scene.static_meshes) == 1
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and "KHR_materials_sheen, EXT_lights_image_based" in lines[0] and "ignores" in lines[0]
def test_cli_renders_the_chosen_scene(cli, tmp_path):
    path = static_file(tmp_path, nodes=2, scenes=[{"nodes": [0]}, {"nodes": [1]}])
    for number in (0, 1):
        result = cli("render", path, "--scene", str(number), "--out", tmp_path / f"s{number}.png")
        assert result.returncode == 0, result.stderr
    result = cli("render", path, "--scene", "7", "--out", tmp_path / "bad.png")
    assert result.returncode == 2 and "scene 7 does not exist" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


