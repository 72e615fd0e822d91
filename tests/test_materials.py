"""glTF 2.0 materials, texture coordinates, tangents and punctual lights as the loader reads them
(issue 27, the model side): every field of the metallic-roughness material, samplers, texCoord 0
and 1, KHR_texture_transform per slot, KHR_materials_emissive_strength, KHR_materials_unlit,
KHR_lights_punctual, TANGENT or MikkTSpace tangents, morphed and skinned tangents, the writer's
round trip, and the bad input a model is drawn without (one warning line each)."""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from viewer import load_gltf, load_model, save_gltf
from viewer.bvh.build import capsule_mesh
from viewer.errors import ViewerError
from viewer.model import Skeleton
from viewer.model.bone import Bone
from viewer.model.material import Material, Sampler, TextureSlot, uv_transform
from viewer.model.mesh import SkinnedMesh, skin
from viewer.model.morph import MorphTargets
from viewer.model.tangents import generate_tangents

FLOAT, USHORT = 5126, 5123
COLORS = {"red": (255, 0, 0, 255), "green": (0, 255, 0, 255), "blue": (0, 0, 255, 255), "grey": (128, 128, 128, 255),
          "white": (255, 255, 255, 255)}


def png(color) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGBA", (2, 2), COLORS[color]).save(buffer, "PNG")
    return buffer.getvalue()


# --- a small glTF builder: a unit quad in the xy plane (uv = xy), facing +z ------------------------
QUAD_POSITIONS = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32)
QUAD_INDICES = np.array([0, 1, 2, 0, 2, 3], np.uint16)


class Gltf:
    def __init__(self):
        self.blob = bytearray()
        self.doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": []}], "nodes": [], "meshes": [],
                    "accessors": [], "bufferViews": [], "buffers": []}

    def accessor(self, array, kind, component=FLOAT) -> int:
        array = np.ascontiguousarray(array)
        while len(self.blob) % 4:
            self.blob.append(0)
        offset = len(self.blob)
        self.blob += array.tobytes()
        self.doc["bufferViews"].append({"buffer": 0, "byteOffset": offset, "byteLength": array.nbytes})
        spec = {"bufferView": len(self.doc["bufferViews"]) - 1, "componentType": component, "count": len(array),
                "type": kind}
        if kind == "VEC3" and component == FLOAT:
            spec["min"], spec["max"] = array.min(axis=0).tolist(), array.max(axis=0).tolist()
        self.doc["accessors"].append(spec)
        return len(self.doc["accessors"]) - 1

    def add(self, key, spec) -> int:
        self.doc.setdefault(key, []).append(spec)
        return len(self.doc[key]) - 1

    def texture(self, color="red", sampler=None) -> int:
        image = self.add("images", {"uri": "data:image/png;base64," + base64.b64encode(png(color)).decode()})
        spec = {"source": image}
        if sampler is not None:
            spec["sampler"] = self.add("samplers", sampler)
        return self.add("textures", spec)

    def quad(self, material=None, uv0=True, uv1=False, normals=True, tangents=None, positions=QUAD_POSITIONS,
             targets=None, node=None, parent=None) -> int:
        """A node showing the quad (one primitive); returns the node's index."""
        attributes = {"POSITION": self.accessor(positions, "VEC3")}
        if normals:
            attributes["NORMAL"] = self.accessor(np.tile(np.float32([0, 0, 1]), (len(positions), 1)), "VEC3")
        if uv0:
            attributes["TEXCOORD_0"] = self.accessor(positions[:, :2].copy(), "VEC2")
        if uv1:
            attributes["TEXCOORD_1"] = self.accessor(positions[:, :2][:, ::-1] * 2, "VEC2")
        if tangents is not None:
            attributes["TANGENT"] = self.accessor(np.asarray(tangents, np.float32), tangents.shape[1] == 4 and "VEC4"
                                                  or "VEC3")
        primitive = {"attributes": attributes, "indices": self.accessor(QUAD_INDICES, "SCALAR", USHORT)}
        if material is not None:
            primitive["material"] = material
        if targets is not None:
            primitive["targets"] = [{name: self.accessor(np.asarray(value, np.float32), "VEC3")
                                     for name, value in target.items()} for target in targets]
        mesh = self.add("meshes", {"primitives": [primitive]})
        return self.node({"mesh": mesh, **(node or {})}, parent)

    def node(self, spec, parent=None) -> int:
        index = self.add("nodes", dict(spec))
        if parent is None:
            self.doc["scenes"][0]["nodes"].append(index)
        else:
            self.doc["nodes"][parent].setdefault("children", []).append(index)
        return index

    def save(self, path):
        self.doc["buffers"] = [{"byteLength": len(self.blob),
                                "uri": "data:application/octet-stream;base64," + base64.b64encode(self.blob).decode()}]
        path.write_text(json.dumps(self.doc))
        return path


def load_warnings(path, caplog):
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="boneviewer"):
        scene = load_gltf(path)
    return scene, [r.getMessage() for r in caplog.records if r.name == "boneviewer"]


def submesh(scene, mesh=0):
    return scene.static_meshes[mesh].submeshes[0]


# --- every field --------------------------------------------------------------------------------
def full_material(b: Gltf) -> int:
    """A material with every field off its default, each texture distinct."""
    transform = {"offset": [0.25, 0.5], "rotation": 0.3, "scale": [2.0, 0.5], "texCoord": 1}
    return b.add("materials", {
        "name": "everything",
        "pbrMetallicRoughness": {
            "baseColorFactor": [0.5, 0.25, 0.125, 0.75],
            "baseColorTexture": {"index": b.texture("red", {"magFilter": 9728, "minFilter": 9984, "wrapS": 33071,
                                                             "wrapT": 33648}), "texCoord": 1},
            "metallicFactor": 0.3, "roughnessFactor": 0.7,
            "metallicRoughnessTexture": {"index": b.texture("green"),
                                         "extensions": {"KHR_texture_transform": transform}}},
        "normalTexture": {"index": b.texture("blue"), "scale": 0.8},
        "occlusionTexture": {"index": b.texture("grey"), "strength": 0.6, "texCoord": 1},
        "emissiveTexture": {"index": b.texture("white")},
        "emissiveFactor": [1.0, 0.5, 0.25],
        "alphaMode": "MASK", "alphaCutoff": 0.3, "doubleSided": True,
        "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 4.0}}})


def test_every_field_of_the_material_is_read(tmp_path):
    b = Gltf()
    b.quad(full_material(b), uv1=True)
    b.doc["extensionsUsed"] = ["KHR_texture_transform", "KHR_materials_emissive_strength"]
    scene = load_gltf(b.save(tmp_path / "full.gltf"))
    part = submesh(scene)
    m = part.pbr
    assert m.name == "everything" and not m.unlit
    np.testing.assert_array_equal(m.base_color_factor, [0.5, 0.25, 0.125, 0.75])
    np.testing.assert_array_equal(part.base_color, m.base_color_factor)  # the submesh's view of it
    assert (m.metallic_factor, m.roughness_factor) == (0.3, 0.7)
    np.testing.assert_array_equal(m.emissive_factor, [1.0, 0.5, 0.25])
    assert (m.emissive_strength, m.alpha_mode, m.alpha_cutoff, m.double_sided) == (4.0, "MASK", 0.3, True)
    expected = {"base_color_texture": COLORS["red"], "metallic_roughness_texture": COLORS["green"],
                "normal_texture": COLORS["blue"], "occlusion_texture": COLORS["grey"],
                "emissive_texture": COLORS["white"]}
    assert list(m.textures()) == list(expected)
    for name, color in expected.items():
        slot = getattr(m, name)
        assert slot.image.shape == (2, 2, 4) and slot.image.dtype == np.uint8
        assert tuple(slot.image[0, 0]) == color, name
    assert part.base_color_texture is m.base_color_texture.image
    assert m.base_color_texture.sampler == Sampler(9728, 9984, 33071, 33648)
    assert m.metallic_roughness_texture.sampler == Sampler(None, None, 10497, 10497)  # no sampler: glTF's defaults
    assert [getattr(m, n).texcoord for n in expected] == [1, 1, 0, 1, 0]  # the transform's texCoord overrides
    assert [getattr(m, n).scale for n in expected] == [1.0, 1.0, 0.8, 0.6, 1.0]
    np.testing.assert_allclose(m.metallic_roughness_texture.transform, uv_transform((0.25, 0.5), 0.3, (2.0, 0.5)))
    assert all(getattr(m, n).transform is None for n in expected if n != "metallic_roughness_texture")


def test_the_texture_coordinates_are_the_files(tmp_path):
    """mesh.texcoords is TEXCOORD_0 as the file has it (a slot's transform is the slot's);
    texcoords1 is TEXCOORD_1, zeros when the file has none."""
    b = Gltf()
    b.quad(full_material(b), uv1=True)
    b.quad(None)
    scene = load_gltf(b.save(tmp_path / "uv.gltf"))
    with_both, plain = scene.static_meshes
    np.testing.assert_array_equal(with_both.texcoords, QUAD_POSITIONS[:, :2])
    np.testing.assert_array_equal(with_both.texcoords1, QUAD_POSITIONS[:, :2][:, ::-1] * 2)
    np.testing.assert_array_equal(plain.texcoords1, np.zeros((4, 2)))
    slot = with_both.submeshes[0].pbr.metallic_roughness_texture
    uv = slot.uv(with_both.texcoords, with_both.texcoords1)  # TEXCOORD_1 through the transform
    c, s = math.cos(0.3), math.sin(0.3)
    scaled = with_both.texcoords1 * [2.0, 0.5]
    turned = np.c_[c * scaled[:, 0] + s * scaled[:, 1], -s * scaled[:, 0] + c * scaled[:, 1]]
    np.testing.assert_allclose(uv, turned + [0.25, 0.5], atol=1e-6)


def test_defaults(tmp_path):
    """No material: glTF's default material; an empty one: the same; unlit as the extension says."""
    b = Gltf()
    b.quad(None)
    b.quad(b.add("materials", {}))
    b.quad(b.add("materials", {"extensions": {"KHR_materials_unlit": {}}}))
    scene = load_gltf(b.save(tmp_path / "defaults.gltf"))
    for mesh in scene.static_meshes[:2]:
        m = mesh.submeshes[0].pbr
        np.testing.assert_array_equal(m.base_color_factor, np.ones(4))
        np.testing.assert_array_equal(m.emissive_factor, np.zeros(3))
        assert (m.metallic_factor, m.roughness_factor, m.emissive_strength, m.alpha_mode, m.alpha_cutoff,
                m.double_sided, m.unlit) == (1.0, 1.0, 1.0, "OPAQUE", 0.5, False, False)
        assert m.textures() == {} and mesh.tangents is None
    assert submesh(scene, 2).pbr.unlit
    default = Material()
    assert (default.metallic_factor, default.roughness_factor) == (1.0, 1.0)
    assert Sampler() == Sampler(None, None, 10497, 10497)
    slot = TextureSlot(np.zeros((1, 1, 4), np.uint8))
    assert (slot.texcoord, slot.transform, slot.scale) == (0, None, 1.0)


def test_meshes_made_in_code_are_a_plain_dielectric():
    character = load_model(None).meshes[0]
    skeleton = Skeleton("s")
    Bone("root", skeleton)
    capsules = capsule_mesh("bones", np.array([[0.0, 0, 0], [0, 1, 0]]), [-1, 0], skeleton)
    for mesh in (character, capsules):
        m = mesh.submeshes[0].pbr
        assert (m.metallic_factor, m.roughness_factor, m.alpha_mode) == (0.0, 0.6, "OPAQUE")
        np.testing.assert_array_equal(m.base_color_factor, mesh.submeshes[0].base_color)
    assert mesh.tangents is None and mesh.texcoords1.shape == (len(mesh.positions), 2)


def test_extensions_are_supported_when_required(tmp_path):
    b = Gltf()
    b.quad(b.add("materials", {"extensions": {"KHR_materials_unlit": {},
                                              "KHR_materials_emissive_strength": {"emissiveStrength": 2.0}}}))
    names = ["KHR_materials_unlit", "KHR_materials_emissive_strength", "KHR_lights_punctual", "KHR_texture_transform"]
    b.doc["extensionsUsed"] = b.doc["extensionsRequired"] = names
    scene = load_gltf(b.save(tmp_path / "required.gltf"))
    assert submesh(scene).pbr.emissive_strength == 2.0 and submesh(scene).pbr.unlit


def test_factors_out_of_range_are_clamped_with_one_warning(tmp_path, caplog):
    b = Gltf()
    b.quad(b.add("materials", {"pbrMetallicRoughness": {"metallicFactor": 1.5, "baseColorFactor": [2, 0.5, 0.5, 1]},
                               "emissiveFactor": [0, -1, 0]}))
    scene, lines = load_warnings(b.save(tmp_path / "range.gltf"), caplog)
    assert len(lines) == 1 and "baseColorFactor, metallicFactor, emissiveFactor outside glTF's range" in lines[0]
    m = submesh(scene).pbr
    assert m.metallic_factor == 1.0 and m.base_color_factor[0] == 1.0 and m.emissive_factor[1] == 0.0


@pytest.mark.parametrize("bad, message", [({"alphaMode": "opaque"}, "alphaMode must be one of"),
                                          ({"pbrMetallicRoughness": {"roughnessFactor": "1"}}, "roughnessFactor must be"),
                                          ({"normalTexture": {"index": 9}}, "normalTexture: index 9 does not exist")])
def test_a_malformed_material_is_still_refused(tmp_path, bad, message):
    b = Gltf()
    b.quad(b.add("materials", bad))
    with pytest.raises(ViewerError, match=message):
        load_gltf(b.save(tmp_path / "bad.gltf"))


# --- KHR_lights_punctual ------------------------------------------------------------------------
def quaternion(axis, degrees):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    half = math.radians(degrees) / 2
    return [*(axis * math.sin(half)), math.cos(half)]


def test_lights_are_placed_by_their_nodes(tmp_path):
    b = Gltf()
    b.quad(None)
    b.doc["extensionsUsed"] = ["KHR_lights_punctual"]
    b.doc["extensions"] = {"KHR_lights_punctual": {"lights": [
        {"type": "directional", "color": [1.0, 0.9, 0.8], "intensity": 3.0, "name": "sun"},
        {"type": "point", "range": 5.0},
        {"type": "spot", "intensity": 20.0, "spot": {"innerConeAngle": 0.2, "outerConeAngle": 0.5}},
        {"type": "point"}]}}
    # The sun turned -90 degrees about +x: its -z turns to -y (it shines down).
    b.node({"name": "sun", "rotation": quaternion([1, 0, 0], -90), "extensions": {"KHR_lights_punctual": {"light": 0}}})
    b.node({"name": "bulb", "translation": [1, 2, 3], "extensions": {"KHR_lights_punctual": {"light": 1}}})
    rig = b.node({"name": "rig", "translation": [0, 10, 0], "rotation": quaternion([0, 1, 0], 90), "scale": [2, 2, 2]})
    b.node({"name": "spot", "translation": [1, 0, 0], "extensions": {"KHR_lights_punctual": {"light": 2}}}, parent=rig)
    b.add("nodes", {"name": "unshown", "extensions": {"KHR_lights_punctual": {"light": 3}}})  # in no scene
    scene = load_gltf(b.save(tmp_path / "lights.gltf"))
    sun, bulb, spot = scene.lights
    assert (sun.kind, sun.name, sun.intensity, sun.range) == ("directional", "sun", 3.0, None)
    np.testing.assert_array_equal(sun.color, [1.0, 0.9, 0.8])
    np.testing.assert_allclose(sun.world_direction(), [0, -1, 0], atol=1e-12)  # -z turned -90 about x: down
    assert (bulb.kind, bulb.range, bulb.intensity) == ("point", 5.0, 1.0)
    np.testing.assert_array_equal(bulb.color, [1, 1, 1])
    np.testing.assert_allclose(bulb.world_position(), [1, 2, 3])
    np.testing.assert_allclose(bulb.world_direction(), [0, 0, -1])
    assert (spot.kind, spot.inner_cone_angle, spot.outer_cone_angle) == ("spot", 0.2, 0.5)
    # The parent turns +x to -z (90 about y) and doubles it: the spot sits at (0, 10, -2), and its
    # -z turns to -x, a unit direction whatever the scale.
    np.testing.assert_allclose(spot.world_position(), [0, 10, -2], atol=1e-12)
    np.testing.assert_allclose(spot.world_direction(), [-1, 0, 0], atol=1e-12)
    assert spot.node is scene.nodes[4] and bulb.node is scene.nodes[2]
    scene.nodes[2].position = [4, 5, 6]  # a light follows its node (an animation, a script)
    np.testing.assert_allclose(bulb.world_position(), [4, 5, 6])


def test_light_defaults_and_bad_values(tmp_path, caplog):
    b = Gltf()
    b.quad(None)
    b.doc["extensions"] = {"KHR_lights_punctual": {"lights": [
        {"type": "spot"}, {"type": "point", "range": 0.0, "intensity": -1.0}]}}
    b.node({"extensions": {"KHR_lights_punctual": {"light": 0}}})
    b.node({"extensions": {"KHR_lights_punctual": {"light": 1}}})
    scene, lines = load_warnings(b.save(tmp_path / "lights.gltf"), caplog)
    spot, point = scene.lights
    assert (spot.intensity, spot.range, spot.inner_cone_angle, spot.outer_cone_angle) == (1.0, None, 0.0, math.pi / 4)
    assert (point.range, point.intensity) == (None, 0.0)
    assert len(lines) == 1 and "light 1 (node 2)" in lines[0] and "range 0" in lines[0], lines


def test_a_light_that_does_not_exist_is_refused(tmp_path):
    b = Gltf()
    b.quad(None, node={"extensions": {"KHR_lights_punctual": {"light": 0}}})
    with pytest.raises(ViewerError, match="light 0 does not exist"):
        load_gltf(b.save(tmp_path / "nolight.gltf"))


# --- tangents -----------------------------------------------------------------------------------
def normal_mapped(b: Gltf, texcoord=0) -> int:
    return b.add("materials", {"normalTexture": {"index": b.texture("blue"), "texCoord": texcoord}})


def test_tangents_from_the_file_are_kept(tmp_path):
    b = Gltf()
    given = np.array([[0, 1, 0, -1]] * 4, np.float32)
    b.quad(normal_mapped(b), tangents=given)
    b.quad(None, tangents=given)  # tangents without a normal map are kept too
    scene = load_gltf(b.save(tmp_path / "tangents.gltf"))
    for mesh in scene.static_meshes:
        np.testing.assert_array_equal(mesh.tangents, given)
        assert mesh.tangents.dtype == np.float32


def test_a_tangent_accessor_of_the_wrong_shape_is_refused(tmp_path):
    b = Gltf()
    b.quad(normal_mapped(b), tangents=np.zeros((4, 3), np.float32))
    with pytest.raises(ViewerError, match=r"TANGENT\): shape \(4, 3\) does not match 4 vertices of 4 components"):
        load_gltf(b.save(tmp_path / "bad.gltf"))


@pytest.mark.parametrize("texcoord", [0, 1])
def test_tangents_are_generated_for_normal_maps_from_their_uvs(tmp_path, texcoord):
    """The builder's quad faces +z. uv = (x, y): u along +x, v along +y, so the image lies on it
    upside down (glTF's v runs down the image): tangent +x, and the bitangent (the image's up,
    -dP/dv = -y) is cross(+z, +x) * w = +y * w: w -1. TEXCOORD_1 = 2 (y, x): u along +y, v along
    +x: tangent +y, bitangent -x = cross(+z, +y) * w = -x * w: w +1."""
    b = Gltf()
    b.quad(normal_mapped(b, texcoord), uv1=True)
    b.quad(None, uv1=True)  # no normal map: no tangents
    scene = load_gltf(b.save(tmp_path / "generated.gltf"))
    mapped, plain = scene.static_meshes
    expected = [1, 0, 0, -1] if texcoord == 0 else [0, 1, 0, 1]
    np.testing.assert_allclose(mapped.tangents, np.tile(expected, (4, 1)), atol=1e-6)
    assert plain.tangents is None


def test_a_mesh_with_some_normal_mapped_primitives_has_tangents_for_all(tmp_path):
    b = Gltf()
    node = b.quad(normal_mapped(b))
    mesh = b.doc["meshes"][b.doc["nodes"][node]["mesh"]]
    mesh["primitives"].append({**mesh["primitives"][0]})
    del mesh["primitives"][1]["material"]
    loaded = load_gltf(b.save(tmp_path / "two.gltf")).static_meshes[0]
    assert loaded.tangents.shape == (8, 4)
    # the normal-mapped primitive's generated (v up the quad: w -1), the other's a placeholder
    np.testing.assert_allclose(loaded.tangents[:4], np.tile([1, 0, 0, -1], (4, 1)), atol=1e-6)
    np.testing.assert_allclose(loaded.tangents[4:], np.tile([1, 0, 0, 1], (4, 1)), atol=1e-6)


def uv_sphere(rings=48, segments=96):
    """An analytic sphere: u = longitude / 2pi, v = colatitude / pi, outward normals; triangles
    wound counter-clockwise seen from outside."""
    theta = np.linspace(0, np.pi, rings + 1)
    phi = np.linspace(0, 2 * np.pi, segments + 1)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    positions = np.stack([np.sin(t) * np.cos(p), np.cos(t), -np.sin(t) * np.sin(p)], axis=-1).reshape(-1, 3)
    uv = np.stack([p / (2 * np.pi), t / np.pi], axis=-1).reshape(-1, 2)
    r, s = np.meshgrid(np.arange(rings), np.arange(segments), indexing="ij")
    a = r * (segments + 1) + s
    b = a + segments + 1
    indices = np.stack([a, b, a + 1, a + 1, b, b + 1], axis=-1).reshape(-1)
    return positions, positions.copy(), uv, indices, t.reshape(-1), p.reshape(-1)


def test_mikktspace_on_a_sphere_matches_the_analytic_tangents():
    positions, normals, uv, indices, theta, phi = uv_sphere()
    tangents, remap, new_indices = generate_tangents(positions, normals, uv, indices)
    assert len(remap) == len(positions) and (new_indices == indices).all()  # nothing to split
    xyz, w = tangents[:, :3].astype(np.float64), tangents[:, 3]
    np.testing.assert_allclose(np.linalg.norm(xyz, axis=1), 1, atol=1e-6)
    assert set(np.unique(w)) <= {-1.0, 1.0}
    np.testing.assert_allclose(np.einsum("vi,vi->v", xyz, normals), 0, atol=1e-6)
    # dP/du (the direction of increasing longitude) and dP/dv (increasing colatitude)
    d_u = np.stack([-np.sin(phi), np.zeros_like(phi), -np.cos(phi)], axis=1)
    d_v = np.stack([np.cos(theta) * np.cos(phi), -np.sin(theta), -np.cos(theta) * np.sin(phi)], axis=1)
    away = (theta > 0.1) & (theta < np.pi - 0.1)  # the poles have no longitude
    angle = np.degrees(np.arccos(np.clip(np.einsum("vi,vi->v", xyz, d_u), -1, 1)))
    assert angle[away].max() < 2.0, angle[away].max()
    # glTF: bitangent = cross(N, T) * w is the normal map's +Y, up the image; glTF's v runs down
    # the image, so the bitangent points along -dP/dv (here: towards the north pole, v 0)
    bitangent = np.cross(normals, xyz) * w[:, None]
    assert (np.einsum("vi,vi->v", bitangent, -d_v)[away] > 0.99).all()
    assert (w == 1).all()  # this mapping is not mirrored (seen from outside, u right, v down)


def test_generated_tangents_follow_gltfs_convention_on_a_plane():
    """glTF 2.0 (meshes, TANGENT; materials, normalTexture): bitangent = cross(normal, tangent.xyz)
    * w, and the normal texture's +X is right and +Y is up in the image, whose uv (0, 0) is its top
    left corner (v grows down the image). So the tangent is the surface's direction of growing u
    (+dP/du) and the bitangent its direction of *shrinking* v (-dP/dv: the image's up).

    A plane facing +Z with u along +X and v along -Y (the image lying on it unmirrored, its top at
    +Y, as tests/pbr_scenes.py's quad): dP/du = +X, dP/dv = -Y. Tangent +X; the bitangent must be
    +Y (-dP/dv, the image's top), and cross(+Z, +X) = +Y, so w = +1. Its mirror image (u along -X:
    the picture seen from behind) gives tangent -X, bitangent still +Y = cross(+Z, -X) * w: w = -1.
    MikkTSpace's own sign is the opposite in both (it points its bitangent along +dP/dv)."""
    x, y = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(-1, 1, 5))
    positions = np.c_[x.reshape(-1), y.reshape(-1), np.zeros(25)]
    normals = np.tile([0.0, 0.0, 1.0], (25, 1))
    cells = np.arange(25).reshape(5, 5)[:-1, :-1].reshape(-1)
    a, b, c, d = cells, cells + 1, cells + 5, cells + 6  # b is +x of a, c is +y of a
    indices = np.stack([a, b, d, a, d, c], axis=1).reshape(-1)  # counter-clockwise seen from +Z
    for u_sign, expected in ((1.0, [1, 0, 0, 1]), (-1.0, [-1, 0, 0, -1])):
        uv = np.c_[u_sign * positions[:, 0] / 2 + 0.5, 0.5 - positions[:, 1] / 2]  # v along -Y
        tangents, remap, _ = generate_tangents(positions, normals, uv, indices)
        assert len(remap) == 25
        np.testing.assert_allclose(tangents, np.tile(expected, (25, 1)), atol=1e-6)
        bitangent = np.cross(normals, tangents[:, :3]) * tangents[:, 3:]
        np.testing.assert_allclose(bitangent, np.tile([0.0, 1.0, 0.0], (25, 1)), atol=1e-6)  # = -dP/dv


def test_mikktspace_properties_on_a_random_mesh():
    rng = np.random.default_rng(7)
    positions, normals, uv, indices, _, _ = uv_sphere(12, 24)
    positions = positions + rng.normal(0, 0.02, positions.shape)
    normals = normals + rng.normal(0, 0.05, normals.shape)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    uv = uv + rng.normal(0, 0.002, uv.shape)
    tangents, remap, new_indices = generate_tangents(positions, normals, uv, indices)
    xyz = tangents[:, :3].astype(np.float64)
    np.testing.assert_allclose(np.linalg.norm(xyz, axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(np.einsum("vi,vi->v", xyz, normals[remap]), 0, atol=1e-5)
    assert set(np.unique(tangents[:, 3])) <= {-1.0, 1.0}
    np.testing.assert_array_equal(remap[new_indices], indices)  # the same corners, maybe split vertices


def test_mikktspace_welds_equal_vertices_and_splits_mirrored_seams():
    """Two quads sharing an edge whose uvs mirror there: the seam vertices are used by both
    orientations, so each is split; the copies keep every attribute (remap), and each side
    gets its own tangent (+x, w -1 on the left, whose v runs up the quad; -x, w +1 on the right,
    whose u runs back: glTF's signs, MikkTSpace's negated)."""
    positions = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [2, 1, 0]], float)
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0], [0, 1]], float)
    normals = np.tile([0.0, 0, 1], (6, 1))
    indices = np.array([0, 1, 2, 0, 2, 3, 1, 4, 5, 1, 5, 2])
    tangents, remap, new_indices = generate_tangents(positions, normals, uv, indices)
    assert len(remap) == 8 and sorted(remap[6:]) == [1, 2]
    np.testing.assert_array_equal(remap[new_indices], indices)
    corner_tangents = tangents[new_indices]
    np.testing.assert_allclose(corner_tangents[:6], np.tile([1, 0, 0, -1], (6, 1)), atol=1e-6)
    np.testing.assert_allclose(corner_tangents[6:], np.tile([-1, 0, 0, 1], (6, 1)), atol=1e-6)
    # A vertex duplicated with the same position, normal and uv is one vertex to MikkTSpace.
    twin = np.r_[positions, positions[[2]]]
    tangents2, _, _ = generate_tangents(twin, np.r_[normals, normals[[2]]], np.r_[uv, uv[[2]]],
                                        np.array([0, 1, 2, 0, 6, 3]))
    np.testing.assert_array_equal(tangents2[2], tangents2[6])


def test_mikktspace_survives_degenerate_triangles():
    positions = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0]], float)
    uv = np.array([[0, 0], [1, 0], [0, 1], [0, 0]], float)
    normals = np.tile([0.0, 0, 1], (4, 1))
    indices = np.array([0, 1, 2, 0, 3, 1, 3, 3, 3])  # a zero-area triangle, a triangle of one point
    tangents, remap, _ = generate_tangents(positions, normals, uv, indices)
    assert np.isfinite(tangents).all() and len(remap) == 4
    np.testing.assert_allclose(tangents[:3], np.tile([1, 0, 0, -1], (3, 1)), atol=1e-6)  # v up the triangle
    np.testing.assert_allclose(np.linalg.norm(tangents[3, :3]), 1, atol=1e-6)  # no uv: any unit tangent


def test_seam_splits_copy_every_vertex_attribute(tmp_path):
    """A normal-mapped primitive with mirrored uvs loads with its seam vertices split: the
    copies carry the positions, normals, uvs and morph deltas of the vertex they copy."""
    b = Gltf()
    positions = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [2, 1, 0]], np.float32)
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0], [0, 1]], np.float32)
    indices = np.array([0, 1, 2, 0, 2, 3, 1, 4, 5, 1, 5, 2], np.uint16)
    attributes = {"POSITION": b.accessor(positions, "VEC3"), "TEXCOORD_0": b.accessor(uv, "VEC2"),
                  "NORMAL": b.accessor(np.tile(np.float32([0, 0, 1]), (6, 1)), "VEC3")}
    delta = np.arange(18, dtype=np.float32).reshape(6, 3)
    primitive = {"attributes": attributes, "indices": b.accessor(indices, "SCALAR", USHORT),
                 "material": normal_mapped(b), "targets": [{"POSITION": b.accessor(delta, "VEC3")}]}
    b.node({"mesh": b.add("meshes", {"primitives": [primitive]})})
    mesh = load_gltf(b.save(tmp_path / "seam.gltf")).static_meshes[0]
    assert len(mesh.positions) == 8
    copies = {6: None, 7: None}
    for copy in copies:
        original = int(np.flatnonzero((positions == mesh.positions[copy]).all(axis=1))[0])
        assert original in (1, 2)
        np.testing.assert_array_equal(mesh.texcoords[copy], uv[original])
        np.testing.assert_array_equal(mesh.morph_targets.positions[0, copy], delta[original])
    corner = mesh.tangents[mesh.indices]
    np.testing.assert_array_equal(corner[:6, 3], -1)
    np.testing.assert_array_equal(corner[6:, 3], 1)


# --- morphed and skinned tangents ---------------------------------------------------------------
def test_morph_targets_move_tangents_and_keep_w(tmp_path):
    b = Gltf()
    tangents = np.tile(np.float32([1, 0, 0, -1]), (4, 1))
    b.quad(normal_mapped(b), tangents=tangents, targets=[{"POSITION": np.zeros((4, 3)),
                                                          "TANGENT": np.tile([-1.0, 1.0, 0.0], (4, 1))}],
           node={"weights": [0.5]})
    mesh = load_gltf(b.save(tmp_path / "morph.gltf")).static_meshes[0]
    np.testing.assert_array_equal(mesh.morph_targets.tangents[0], np.tile([-1.0, 1.0, 0.0], (4, 1)))
    positions, normals, morphed = mesh.morphed(tangents=True)
    np.testing.assert_allclose(morphed, np.tile([0.5, 0.5, 0.0, -1.0], (4, 1)))
    assert len(mesh.morphed()) == 2  # the callers of old get what they had
    # MorphTargets.apply: with tangents, three arrays; without, two; no tangent deltas, unchanged.
    targets = MorphTargets(np.zeros((1, 4, 3)), weights=[1.0])
    assert len(targets.apply(QUAD_POSITIONS)) == 2
    np.testing.assert_array_equal(targets.apply(QUAD_POSITIONS, tangents=tangents)[2], tangents)


def test_skinning_turns_tangents_and_keeps_w():
    """A bone turned 90 degrees about z turns tangent +x to +y; w stays; the normals as before."""
    positions = QUAD_POSITIONS.astype(np.float64)
    normals = np.tile([0.0, 0, 1], (4, 1))
    tangents = np.tile([2.0, 0, 0, -1], (4, 1))  # not unit: comes out unit
    joints = np.zeros((4, 4), int)
    weights = np.tile([1.0, 0, 0, 0], (4, 1))
    turn = np.eye(4)
    turn[:2, :2] = [[0, 1], [-1, 0]]  # row vectors: x -> y
    turn[3, :3] = [5, 0, 0]
    p, n = skin(positions, normals, joints, weights, turn[None])
    p3, n3, t3 = skin(positions, normals, joints, weights, turn[None], tangents)
    np.testing.assert_array_equal(p, p3)
    np.testing.assert_array_equal(n, n3)
    np.testing.assert_allclose(t3, np.tile([0, 1, 0, -1], (4, 1)), atol=1e-12)

    skeleton = Skeleton("s")
    bone = Bone("b", skeleton)
    mesh = SkinnedMesh("m", positions, QUAD_INDICES, skeleton, joints=joints, weights=weights, normals=normals,
                       tangents=np.tile([1.0, 0, 0, 1], (4, 1)))
    bone.rotate([0, 0, 1], math.pi / 2)
    world = np.eye(4)
    world[:3, :3] *= 3  # a scaled world matrix: the tangents stay unit
    mesh.world_matrix = world
    positions_now, normals_now, tangents_now = mesh.skinned(tangents=True)
    np.testing.assert_array_equal(positions_now, mesh.skinned()[0])
    assert len(mesh.skinned()) == 2
    np.testing.assert_allclose(np.linalg.norm(tangents_now[:, :3], axis=1), 1)
    np.testing.assert_allclose(np.abs(tangents_now[:, :3] @ [0, 1, 0]), 1, atol=1e-9)
    np.testing.assert_array_equal(tangents_now[:, 3], 1)
    assert SkinnedMesh("plain", positions, QUAD_INDICES, None).skinned(tangents=True)[2] is None


def test_tangent_w_is_a_sign():
    mesh = SkinnedMesh("m", QUAD_POSITIONS, QUAD_INDICES, None, tangents=[[1, 0, 0, 0.5], [1, 0, 0, -3],
                                                                         [1, 0, 0, 0], [1, 0, 0, 1]])
    np.testing.assert_array_equal(mesh.tangents[:, 3], [1, -1, 1, 1])
    with pytest.raises(ViewerError, match="tangents: 3 rows for 4 vertices"):
        SkinnedMesh("m", QUAD_POSITIONS, QUAD_INDICES, None, tangents=np.zeros((3, 4)))


# --- bad input: drawn without, one warning line each ----------------------------------------------
def test_a_texture_that_does_not_decode_is_left_out(tmp_path, caplog):
    b = Gltf()
    broken = b.add("images", {"uri": "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\nnope").decode()})
    material = b.add("materials", {"pbrMetallicRoughness": {"baseColorTexture": {"index": b.add("textures", {
        "source": broken})}, "baseColorFactor": [0.5, 0.5, 0.5, 1]}, "emissiveTexture": {"index": b.texture("red")},
        "occlusionTexture": {"index": b.add("textures", {"source": broken})}})
    b.quad(material)
    b.quad(material)  # the same material again: still one line
    scene, lines = load_warnings(b.save(tmp_path / "broken.gltf"), caplog)
    assert len(lines) == 1, lines
    assert ("image 0 is not a PNG or JPEG image (texture 0, material 0 baseColorTexture); drawn without it"
            in lines[0])
    m = submesh(scene).pbr
    assert m.base_color_texture is None and m.occlusion_texture is None and submesh(scene).base_color_texture is None
    assert m.emissive_texture is not None and m.base_color_factor[0] == 0.5  # the rest is drawn


def cut_png() -> bytes:
    """A 4x4 PNG whose header reads but whose pixel data is cut short: it passes the load's
    checks (format, declared size) and fails only when its pixels are decoded."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 5)) + chunk(b"IEND", b""))


def data_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def counted_decoding(monkeypatch) -> list:
    """The encoded images decode_pixels is given from now on (one entry per decode)."""
    from viewer import images

    calls, decode = [], images.decode_pixels
    monkeypatch.setattr(images, "decode_pixels", lambda data: calls.append(data) or decode(data))
    return calls


def test_loading_decodes_no_pixels_and_the_first_read_decodes_each_image_once(tmp_path, monkeypatch):
    calls = counted_decoding(monkeypatch)
    b = Gltf()
    green = b.add("images", {"uri": data_uri(png("green"))})
    material = b.add("materials", {"pbrMetallicRoughness": {"baseColorTexture": {"index": b.texture("red")}},
                                   "emissiveTexture": {"index": b.add("textures", {"source": green})},
                                   "occlusionTexture": {"index": b.add("textures", {"source": green})}})
    b.quad(material)
    b.quad(material)
    scene = load_gltf(b.save(tmp_path / "lazy.gltf"))
    assert calls == []  # loading read and checked the images, decoded none
    m = submesh(scene).pbr
    assert m.emissive_texture.image is m.occlusion_texture.image  # one image, one decode, one array
    assert tuple(m.emissive_texture.image[0, 0]) == COLORS["green"] and len(calls) == 1
    assert tuple(submesh(scene).base_color_texture[1, 1]) == COLORS["red"] and len(calls) == 2
    assert list(submesh(scene, 1).pbr.textures()) == ["base_color_texture", "occlusion_texture", "emissive_texture"]
    assert len(calls) == 2  # read again, by the other primitive too: not decoded again


def test_pixels_that_do_not_decode_warn_once_when_first_read_and_are_left_out(tmp_path, monkeypatch, caplog):
    calls = counted_decoding(monkeypatch)
    b = Gltf()
    broken = b.add("images", {"uri": data_uri(cut_png())})
    material = b.add("materials", {"pbrMetallicRoughness": {"baseColorTexture": {"index": b.add("textures", {
        "source": broken})}, "baseColorFactor": [0.5, 0.5, 0.5, 1]}, "emissiveTexture": {"index": b.texture("red")},
        "occlusionTexture": {"index": b.add("textures", {"source": broken})}})
    b.quad(material)
    b.quad(material)
    path = b.save(tmp_path / "cut.gltf")
    scene, lines = load_warnings(path, caplog)
    assert lines == [] and calls == []  # its header is fine: the load has nothing to say
    with caplog.at_level(logging.WARNING, logger="boneviewer"):
        assert submesh(scene).base_color_texture is None
        assert list(submesh(scene).pbr.textures()) == list(submesh(scene, 1).pbr.textures()) == ["emissive_texture"]
        save_gltf(scene, tmp_path / "out.glb")  # written without it
    lines = [r.getMessage() for r in caplog.records if r.name == "boneviewer"]
    assert len(calls) == 2 and len(lines) == 1, lines  # the broken image and the red one, each once; one line
    assert lines[0].startswith(f"{path}: image 0 does not decode as PNG or JPEG (")
    assert lines[0].endswith("(texture 0, material 0 baseColorTexture); drawn without it")
    written = load_gltf(tmp_path / "out.glb")
    assert list(submesh(written).pbr.textures()) == ["emissive_texture"]
    assert submesh(written).base_color[0] == 0.5


def test_a_normal_map_without_its_uvs_is_left_out(tmp_path, caplog):
    b = Gltf()
    b.quad(normal_mapped(b, texcoord=1))  # the primitive has TEXCOORD_0 only
    b.quad(normal_mapped(b, texcoord=0), uv0=False)
    scene, lines = load_warnings(b.save(tmp_path / "nouv.gltf"), caplog)
    assert len(lines) == 1, lines
    assert ("mesh 0 primitive 0: its material's normal map reads TEXCOORD_1, which the primitive does not have; "
            "drawn without the normal map (and 1 more like it)") in lines[0]
    for mesh in scene.static_meshes:
        assert mesh.submeshes[0].pbr.normal_texture is None and mesh.tangents is None


def test_a_material_that_does_not_exist_draws_the_default(tmp_path, caplog):
    b = Gltf()
    b.add("materials", {"pbrMetallicRoughness": {"metallicFactor": 0.0}})
    b.quad(7)
    scene, lines = load_warnings(b.save(tmp_path / "nomaterial.gltf"), caplog)
    assert lines == [f"{tmp_path / 'nomaterial.gltf'}: mesh 0 primitive 0: material 7 does not exist (1 materials); "
                     "drawn with the default material"]
    assert submesh(scene).pbr.metallic_factor == 1.0 and submesh(scene).material is None


def test_a_texcoord_other_than_0_or_1_is_left_out(tmp_path, caplog):
    b = Gltf()
    b.quad(b.add("materials", {"pbrMetallicRoughness": {"baseColorTexture": {"index": b.texture(), "texCoord": 2}},
                               "emissiveTexture": {"index": b.texture(), "extensions": {
                                   "KHR_texture_transform": {"texCoord": 3}}}}))
    scene, lines = load_warnings(b.save(tmp_path / "texcoord.gltf"), caplog)
    assert len(lines) == 1 and "baseColorTexture: texCoord 2 is not 0 or 1" in lines[0] and "1 more" in lines[0]
    assert submesh(scene).pbr.textures() == {}


# --- the writer's round trip ------------------------------------------------------------------------
def test_what_is_written_loads_back_as_the_same_materials(tmp_path, caplog):
    b = Gltf()
    tangents = np.tile(np.float32([0, 1, 0, -1]), (4, 1))
    b.quad(full_material(b), uv1=True, tangents=tangents)
    b.quad(b.add("materials", {"name": "flat", "extensions": {"KHR_materials_unlit": {}}}))
    b.quad(None)
    b.doc["extensions"] = {"KHR_lights_punctual": {"lights": [{"type": "point"}]}}
    b.node({"extensions": {"KHR_lights_punctual": {"light": 0}}})
    b.doc["extensionsUsed"] = ["KHR_texture_transform", "KHR_materials_emissive_strength", "KHR_materials_unlit",
                               "KHR_lights_punctual"]
    original = load_gltf(b.save(tmp_path / "in.gltf"))
    caplog.clear()
    for name in ("out.glb", "out.gltf"):
        with caplog.at_level(logging.WARNING, logger="boneviewer"):
            save_gltf(original, tmp_path / name)
        twin = load_gltf(tmp_path / name)
        for mesh, again in zip(original.static_meshes, twin.static_meshes):
            np.testing.assert_array_equal(again.texcoords, mesh.texcoords)
            np.testing.assert_array_equal(again.texcoords1, mesh.texcoords1)
            if mesh.tangents is None:
                assert again.tangents is None
            else:
                np.testing.assert_array_equal(again.tangents, mesh.tangents)
            a, z = mesh.submeshes[0].pbr, again.submeshes[0].pbr
            for field in ("name", "metallic_factor", "roughness_factor", "emissive_strength", "alpha_mode",
                          "alpha_cutoff", "double_sided", "unlit"):
                assert getattr(z, field) == getattr(a, field), field
            np.testing.assert_array_equal(z.base_color_factor, a.base_color_factor)
            np.testing.assert_array_equal(z.emissive_factor, a.emissive_factor)
            assert list(z.textures()) == list(a.textures())
            for slot_name, slot in a.textures().items():
                other = getattr(z, slot_name)
                np.testing.assert_array_equal(other.image, slot.image)
                assert (other.texcoord, other.scale, other.sampler) == (slot.texcoord, slot.scale, slot.sampler)
                if slot.transform is None:
                    assert other.transform is None
                else:
                    np.testing.assert_allclose(other.transform, slot.transform, atol=1e-12)
        assert twin.static_meshes[2].submeshes[0].material is None  # no material stays none
    lines = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(lines) == 2 and all("dropped extension KHR_lights_punctual" in line for line in lines)
    document = json.loads((tmp_path / "out.gltf").read_text())
    assert document["extensionsUsed"] == ["KHR_materials_emissive_strength", "KHR_materials_unlit",
                                          "KHR_texture_transform"]
    assert len(document["images"]) == 5 and len(document["samplers"]) == 1
