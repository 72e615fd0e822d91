"""glTF meshes: primitives joined into one SkinnedMesh with submeshes, their skin attributes
(JOINTS_n/WEIGHTS_n checked against the skin), their normals (NORMAL, else flat ones as glTF
requires, vertices split where faces meet at an angle), their tangents (TANGENT, else MikkTSpace
where a normal map needs them) and their materials (every field of glTF's metallic-roughness
material)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ViewerError
from ..model import Skeleton, SkinnedMesh
from ..model.material import Material, Sampler, TextureSlot, uv_transform
from ..model.mesh import Submesh, flat_normals, vertex_normals
from ..model.morph import MorphTargets
from ..model.tangents import generate_tangents
from ..model.weights import SHADER_INFLUENCES, WEIGHT_SUM_TOLERANCE
from .container import COMPRESSION_EXTRA, GltfFile, ImageError
from .validate import short

TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN = 4, 5, 6
FLOAT, BYTE, SHORT = 5126, 5120, 5122
MORPH_ATTRIBUTES = ("POSITION", "NORMAL", "TANGENT")


def read_mesh(file: GltfFile, mesh_index: int, node_index: int, skeleton: Skeleton | None = None,
              joint_count: int = 0, skin_index: int | None = None, world_matrix=None) -> SkinnedMesh:
    """Mesh ``mesh_index`` as used by node ``node_index``: skinned by ``skeleton`` (whose skin
    has ``joint_count`` joints) or static when it is None, placed by ``world_matrix`` (None:
    the identity). Points and lines are skipped."""
    spec = file.document["meshes"][mesh_index]
    parts = {"positions": [], "normals": [], "texcoords": [], "texcoords1": [], "tangents": [], "colors": [],
             "joints": [], "weights": [], "extra": [], "indices": []}
    submeshes, vertex_offset, index_offset = [], 0, 0
    morph = []  # per drawn primitive: (vertex count, its targets' deltas by attribute)
    for p, primitive in enumerate(spec["primitives"]):
        what = f"mesh {mesh_index} primitive {p}"
        mode = primitive.get("mode", TRIANGLES)
        if mode not in (TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN):
            file.warn("mode", f"{what} draws points or lines (mode {mode}); skipped")
            continue
        attributes = primitive["attributes"]
        draco = primitive.get("extensions", {}).get("KHR_draco_mesh_compression")
        if draco is not None:
            _decode_draco(file, primitive, draco, what)
        position_index = attributes.get("POSITION")
        if position_index is None:
            raise file.error(f"{what} has no POSITION")
        file.require_accessor_kind(position_index, f"{what} POSITION", ("VEC3",))
        positions = file.accessor(position_index, f"{what} POSITION")
        count = len(positions)
        indices_index = primitive.get("indices")
        if indices_index is not None:
            file.require_accessor_kind(indices_index, f"{what} indices", ("SCALAR",), (5121, 5123, 5125), False)
            indices = file.accessor(indices_index, f"{what} indices").reshape(-1)
            if int(indices.max()) >= count:
                raise file.error(f"accessor {indices_index} ({what} indices): index {int(indices.max())} "
                                 f"is past the {count} vertices of POSITION (accessor {position_index})")
        else:
            indices = np.arange(count, dtype=np.uint32)
        indices = triangle_list(indices.astype(np.int64), mode)
        normal = _vertex_rows(file, attributes.get("NORMAL"), count, 3, f"{what} NORMAL")
        uv = [_vertex_rows(file, attributes.get(f"TEXCOORD_{k}"), count, 2, f"{what} TEXCOORD_{k}") for k in (0, 1)]
        tangents = _vertex_rows(file, attributes.get("TANGENT"), count, 4, f"{what} TANGENT")
        material, material_spec, texture_data = _primitive_material(file, primitive.get("material"), what)
        normal_map = material.normal_texture
        if normal_map is not None and uv[normal_map.texcoord] is None:
            file.warn("normal map without uvs", f"{what}: its material's normal map reads "
                      f"TEXCOORD_{normal_map.texcoord}, which the primitive does not have; drawn without the normal map")
            material = replace(material, normal_texture=None)
        # Per-vertex arrays (None: absent, its default made once the vertices are final)
        vertex = {"positions": positions, "texcoords": uv[0], "texcoords1": uv[1],
                  "colors": _colors(file, attributes.get("COLOR_0"), count, f"{what} COLOR_0")}
        if skeleton is not None:
            vertex["joints"], vertex["weights"] = skin_attributes(file, attributes, count, what, joint_count,
                                                                  skin_index)
            vertex["extra"] = extra_influences(file, attributes, count, what)
        deltas = _morph_deltas(file, primitive.get("targets"), count, what)
        if normal is None and not material.unlit and len(indices):
            # glTF: without NORMAL, "client implementations MUST calculate flat normals" (for each
            # morph target too) and ignore TANGENT; vertices split where faces meet at an angle.
            remap, indices, normal, normal_deltas = flat_normals(positions, indices, deltas.get("POSITION"))
            if len(remap) > count:
                vertex, deltas, count = _copied_vertices(vertex, deltas, remap)
            if deltas:
                deltas.update(NORMAL=normal_deltas, TANGENT=None)
            tangents = None
        vertex["normals"] = normal  # None: an unlit primitive without NORMAL (its normals shade nothing)
        if tangents is None and material.normal_texture is not None and len(indices):
            # MikkTSpace over the normal map's uvs, as glTF asks where a file gives no TANGENT;
            # vertices on mirrored-uv seams are split (every attribute copied).
            normals_used = normal if normal is not None else vertex_normals(vertex["positions"], indices)
            texcoords = vertex["texcoords1" if normal_map.texcoord else "texcoords"]
            tangents, remap, indices = generate_tangents(vertex["positions"], normals_used, texcoords, indices)
            if len(remap) > count:
                vertex, deltas, count = _copied_vertices(vertex, deltas, remap)
        vertex["tangents"] = tangents
        for key, default in (("texcoords", 0.0), ("texcoords1", 0.0), ("colors", 1.0)):
            if vertex[key] is None:
                vertex[key] = np.full((count, 4 if key == "colors" else 2), default, np.float32)
        for key, array in vertex.items():
            parts[key].append(array)
        morph.append((count, deltas))
        parts["indices"].append(indices + vertex_offset)
        image_data = texture_data.get("base_color_texture")
        submesh = Submesh(index_offset, len(indices), name=f"{spec.get('name') or mesh_index}/{p}",
                          material=material_spec, image_data=image_data, pbr=material)
        submesh.texture_data = texture_data
        submeshes.append(submesh)
        vertex_offset += count
        index_offset += len(indices)
    if not submeshes:
        raise file.error(f"mesh {mesh_index} has no triangle primitives")
    if skeleton is not None:  # primitives with 4 influences padded to the widest (8)
        width = max(j.shape[1] for j in parts["joints"])
        parts["joints"] = [j if j.shape[1] == width else np.pad(j, ((0, 0), (0, width - j.shape[1])))
                           for j in parts["joints"]]
        parts["weights"] = [w if w.shape[1] == width else np.pad(w, ((0, 0), (0, width - w.shape[1])))
                            for w in parts["weights"]]
    tangent_parts, normal_parts = parts.pop("tangents"), parts.pop("normals")
    # One primitive (most meshes): its arrays as they are, made here for this mesh alone.
    joined = {key: (value[0] if len(value) == 1 else np.concatenate(value)) if value else None
              for key, value in parts.items()}
    tangents = None
    if any(t is not None for t in tangent_parts):  # primitives without tangents get +x, w +1 (unused)
        tangents = np.concatenate([t if t is not None else np.tile(np.float32([1, 0, 0, 1]), (len(p), 1))
                                   for t, p in zip(tangent_parts, parts["positions"])])
    normals = None  # every primitive unlit without NORMAL: smooth ones when first read (SkinnedMesh.normals)
    if any(n is not None for n in normal_parts):
        smooth = None if all(n is not None for n in normal_parts) else vertex_normals(joined["positions"],
                                                                                       joined["indices"])
        if smooth is None and len(normal_parts) == 1:
            normals = normal_parts[0]
        else:
            starts = np.cumsum([0] + [len(p) for p in parts["positions"]])
            normals = np.concatenate([n if n is not None else smooth[start:end]
                                      for n, start, end in zip(normal_parts, starts, starts[1:])])
    weights = joined["weights"]
    if weights is not None:
        sums = weights.sum(axis=1)
        off = np.abs(sums - 1.0) > WEIGHT_SUM_TOLERANCE
        if off.any():
            offending = sums[off]
            file.warn("weights", f"mesh {mesh_index}: {int(off.sum())} of {len(sums)} vertices have weights that "
                      f"do not sum to 1 (sums {_value_range(offending.min(), offending.max())}); renormalized")
        dropped = int((joined["extra"] > 0).sum())
        if dropped:
            file.warn("influences", f"mesh {mesh_index}: {dropped} of {len(sums)} vertices have weights in JOINTS_2/"
                      f"WEIGHTS_2 or later sets; only {SHADER_INFLUENCES} influences are read, the rest are left out")
    name = spec.get("name") or f"mesh{mesh_index}"
    try:
        morph_targets = _morph_targets(file, spec, mesh_index, morph, file.document["nodes"][node_index].get("weights"))
        return SkinnedMesh(name, joined["positions"], joined["indices"], skeleton,
                           joints=joined["joints"], weights=weights,
                           normals=normals, texcoords=joined["texcoords"],
                           colors=joined["colors"], submeshes=submeshes, node_index=node_index,
                           morph_targets=morph_targets, extra_influences=joined["extra"],
                           texcoords1=joined["texcoords1"], tangents=tangents, world_matrix=world_matrix,
                           checked=True)  # accessor() and skin_attributes checked every number and index
    except ViewerError as error:  # the model's own checks
        raise file.error(f"mesh {mesh_index} (node {node_index}): {error}") from None


def _morph_deltas(file: GltfFile, targets: list | None, count: int, what: str) -> dict:
    """A primitive's morph targets as {attribute: (targets, count, 3) float32 deltas, or None
    when no target moves it}; {} for a primitive without targets."""
    if targets is None:
        return {}
    result = {}
    for name in MORPH_ATTRIBUTES:
        if not any(name in target for target in targets):
            result[name] = None
            continue
        deltas = np.zeros((len(targets), count, 3), np.float32)
        for t, target in enumerate(targets):
            index = target.get(name)
            if index is None:
                continue
            label = f"{what} target {t} {name}"
            file.require_accessor_kind(index, label, ("VEC3",), (FLOAT, BYTE, SHORT))
            rows = file.accessor(index, label)
            if len(rows) != count:
                raise file.error(f"accessor {index} ({label}): {len(rows)} elements for {count} vertices")
            deltas[t] = rows
        if not np.isfinite(deltas).all():
            raise file.error(f"{what}: a morph target's {name} holds NaN or infinity")
        result[name] = deltas
    return result


def _morph_targets(file: GltfFile, spec: dict, mesh_index: int, morph: list[tuple],
                   node_weights) -> MorphTargets | None:
    """The mesh's targets over its drawn primitives (``morph``: per primitive, (its vertex
    count, its targets' deltas by attribute)). Primitives without targets, and attributes a
    primitive's targets do not move, get zero deltas. Default weights are the node's, else
    the mesh's, else 0 (checked to be one per target); names come from extras.targetNames."""
    with_targets = [p for p in spec["primitives"] if p.get("targets") is not None]
    if not with_targets or not any(deltas for _, deltas in morph):
        return None
    target_count = len(with_targets[0]["targets"])
    joined = {}
    for name in MORPH_ATTRIBUTES:
        if not any(deltas.get(name) is not None for _, deltas in morph):
            joined[name] = None
            continue
        joined[name] = np.concatenate([deltas[name] if deltas.get(name) is not None
                                       else np.zeros((target_count, count, 3), np.float32)
                                       for count, deltas in morph], axis=1)
    if joined["POSITION"] is None:
        vertices = sum(count for count, _ in morph)
        joined["POSITION"] = np.zeros((target_count, vertices, 3), np.float32)
    names = [f"morphTarget{i}" for i in range(target_count)]
    given = spec.get("extras", {}).get("targetNames")
    if given is not None:
        if len(given) != target_count:
            file.warn("target names", f"mesh {mesh_index}: extras.targetNames has {len(given)} names for "
                      f"{target_count} morph targets; the rest are numbered")
        names[: len(given)] = given[:target_count]
    weights = node_weights if node_weights is not None else spec.get("weights")
    return MorphTargets(joined["POSITION"], joined["NORMAL"], joined["TANGENT"], names, weights,
                        f"mesh {spec.get('name') or mesh_index!r}")


def skin_attributes(file: GltfFile, attributes: dict, count: int, what: str, joint_count: int,
                    skin_index: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(joints int64, weights float32), each (count, 4) or (count, 8), from JOINTS_0/WEIGHTS_0
    and JOINTS_1/WEIGHTS_1, checked against the skin's ``joint_count`` joints."""
    joints, weights = [], []
    for k in (0, 1):
        joint_index = attributes.get(f"JOINTS_{k}")
        weight_index = attributes.get(f"WEIGHTS_{k}")
        if joint_index is None and weight_index is None:
            break
        if joint_index is None or weight_index is None:
            raise file.error(f"{what}: JOINTS_{k} and WEIGHTS_{k} must come together")
        joint_what, weight_what = f"{what} JOINTS_{k}", f"{what} WEIGHTS_{k}"
        file.require_accessor_kind(joint_index, joint_what, ("VEC4",), (5121, 5123, 5125), False)
        file.require_accessor_kind(weight_index, weight_what, ("VEC4",))
        j = file.accessor(joint_index, joint_what)
        w = file.accessor(weight_index, weight_what).astype(np.float32)
        for index, array, label in ((joint_index, j, joint_what), (weight_index, w, weight_what)):
            if len(array) != count:
                raise file.error(f"accessor {index} ({label}): {len(array)} elements for {count} vertices")
        if (w < 0).any():
            v = int(np.flatnonzero((w < 0).any(axis=1))[0])
            raise file.error(f"accessor {weight_index} ({weight_what}): vertex {v} has a negative weight")
        bad = (j >= joint_count) & (w > 0)
        if bad.any():
            v, c = divmod(int(np.flatnonzero(bad)[0]), 4)
            raise file.error(f"accessor {joint_index} ({joint_what}): vertex {v} uses joint {int(j[v, c])}, but "
                             f"skin {skin_index} has {joint_count} joints")
        joints.append(j.astype(np.int64))
        weights.append(w)
    if not joints:
        raise file.error(f"{what}: a skinned mesh primitive needs JOINTS_0 and WEIGHTS_0")
    if len(joints) > 1:  # JOINTS_1/WEIGHTS_1 beside the first set (each set's arrays are new ones)
        joints, weights = np.concatenate(joints, axis=1), np.concatenate(weights, axis=1)
    else:
        joints, weights = joints[0], weights[0]
    empty = weights.sum(axis=1) <= 0
    if empty.any():
        raise file.error(f"{what} WEIGHTS: vertex {int(np.flatnonzero(empty)[0])} has no bone weight (all 0)")
    return joints, weights


def extra_influences(file: GltfFile, attributes: dict, count: int, what: str) -> np.ndarray:
    """(count,) int32: per vertex, the non-zero weights in WEIGHTS_2 and later sets, which the
    skin leaves out (the shader reads 8 influences); their accessors are checked as the others."""
    extra = np.zeros(count, np.int32)
    k = 2
    while f"WEIGHTS_{k}" in attributes or f"JOINTS_{k}" in attributes:
        weight_index = attributes.get(f"WEIGHTS_{k}")
        if weight_index is None or f"JOINTS_{k}" not in attributes:
            raise file.error(f"{what}: JOINTS_{k} and WEIGHTS_{k} must come together")
        label = f"{what} WEIGHTS_{k}"
        file.require_accessor_kind(weight_index, label, ("VEC4",))
        w = file.accessor(weight_index, label)
        if len(w) != count:
            raise file.error(f"accessor {weight_index} ({label}): {len(w)} elements for {count} vertices")
        extra += (w > 0).sum(axis=1, dtype=np.int32)
        k += 1
    return extra


def _vertex_rows(file: GltfFile, index: int | None, count: int, width: int, what: str) -> np.ndarray | None:
    """An optional per-vertex attribute as float32 (count, width), or None when absent."""
    if index is None:
        return None
    array = file.accessor(index, what).astype(np.float32)
    if array.shape != (count, width):
        raise file.error(f"accessor {index} ({what}): shape {array.shape} does not match {count} vertices of "
                         f"{width} components")
    return array


def _copied_vertices(vertex: dict, deltas: dict, remap: np.ndarray) -> tuple[dict, dict, int]:
    """(vertex arrays, morph deltas, vertex count) with vertices copied as ``remap`` says (each
    output vertex copies input vertex ``remap[i]``)."""
    vertex = {key: None if array is None else array[remap] for key, array in vertex.items()}
    deltas = {key: None if array is None else array[:, remap] for key, array in deltas.items()}
    return vertex, deltas, len(remap)


def _colors(file: GltfFile, index: int | None, count: int, what: str) -> np.ndarray | None:
    """COLOR_0 as RGBA float32 (count, 4); None when absent (opaque white)."""
    if index is None:
        return None
    colors = file.accessor(index, what).astype(np.float32)
    if colors.shape == (count, 3):
        colors = np.c_[colors, np.ones(count, np.float32)]
    if colors.shape != (count, 4):
        raise file.error(f"accessor {index} ({what}): expected {count} VEC3 or VEC4 colors")
    return colors


# A material's texture slots: (Material field, where the file has its textureInfo, its scale's name).
SLOTS = (("base_color_texture", ("pbrMetallicRoughness", "baseColorTexture"), None),
         ("metallic_roughness_texture", ("pbrMetallicRoughness", "metallicRoughnessTexture"), None),
         ("normal_texture", ("normalTexture",), "scale"),
         ("occlusion_texture", ("occlusionTexture",), "strength"),
         ("emissive_texture", ("emissiveTexture",), None))


def _primitive_material(file: GltfFile, index: int | None, what: str) -> tuple[Material, dict | None, dict]:
    """(the Material a primitive is drawn with, the material's checked JSON or None, {slot:
    (encoded image bytes, MIME type)} of its textures): glTF's default material for a primitive
    without one, or whose material does not exist (with a warning). Each material is read once
    per file and shared by the primitives that use it."""
    if index is None:
        return Material(), None, {}
    count = len(file.document["materials"])
    if index >= count:
        file.warn("material index", f"{what}: material {index} does not exist ({count} materials); drawn with the "
                  "default material")
        return Material(), None, {}
    if index not in file.built_materials:
        file.built_materials[index] = _read_material(file, index)
    material, texture_data = file.built_materials[index]
    return material, file.document["materials"][index], texture_data


def _read_material(file: GltfFile, index: int) -> tuple[Material, dict]:
    """Material ``index`` (every field glTF 2.0's metallic-roughness material has, with
    KHR_texture_transform, KHR_materials_emissive_strength and KHR_materials_unlit) and its
    textures' encoded images. Factors outside glTF's ranges are clamped, with a warning; a
    texture that cannot be drawn (its image cannot be read or is not a PNG or JPEG, its texCoord
    is not 0 or 1) is left out, with a warning; pixels are decoded later, when first read."""
    spec = file.document["materials"][index]
    what = f"material {index}" + (f" ({spec['name']!r})" if spec.get("name") else "")
    pbr = spec.get("pbrMetallicRoughness", {})
    extensions = spec.get("extensions", {})
    clamped = []

    def clamp(value, low, high, field):  # np.clip's numbers (the values are finite), on a few Python floats
        if isinstance(value, (list, tuple)):
            given = [float(v) for v in value]
            inside = [min(max(v, low), high) for v in given]
            if inside != given:
                clamped.append(field)
            return np.array(inside)
        inside = min(max(float(value), low), high)
        if inside != value:
            clamped.append(field)
        return inside

    material = Material(
        name=spec.get("name", ""),
        base_color_factor=clamp(pbr.get("baseColorFactor", (1.0, 1.0, 1.0, 1.0)), 0.0, 1.0, "baseColorFactor"),
        metallic_factor=clamp(pbr.get("metallicFactor", 1.0), 0.0, 1.0, "metallicFactor"),
        roughness_factor=clamp(pbr.get("roughnessFactor", 1.0), 0.0, 1.0, "roughnessFactor"),
        emissive_factor=clamp(spec.get("emissiveFactor", (0.0, 0.0, 0.0)), 0.0, 1.0, "emissiveFactor"),
        emissive_strength=clamp(extensions.get("KHR_materials_emissive_strength", {}).get("emissiveStrength", 1.0),
                                0.0, np.inf, "emissiveStrength"),
        alpha_mode=spec.get("alphaMode", "OPAQUE"),
        alpha_cutoff=clamp(spec.get("alphaCutoff", 0.5), 0.0, np.inf, "alphaCutoff"),
        double_sided=spec.get("doubleSided", False),
        unlit="KHR_materials_unlit" in extensions)
    texture_data = {}
    for slot, path, scale_name in SLOTS:
        info = spec
        for key in path:
            info = info.get(key, {})
        if not info:
            continue
        scale = 1.0
        if scale_name == "strength":
            scale = clamp(info.get("strength", 1.0), 0.0, 1.0, "occlusionTexture.strength")
        elif scale_name == "scale":
            scale = float(info.get("scale", 1.0))
        texture = _texture_slot(file, info, f"{what} {path[-1]}", scale)
        if texture is not None:
            setattr(material, slot, texture[0])
            texture_data[slot] = texture[1]
    if clamped:
        file.warn("material range", f"{what}: {', '.join(clamped)} outside glTF's range; clamped")
    return material, texture_data


def _texture_slot(file: GltfFile, info: dict, what: str, scale: float) -> tuple[TextureSlot, tuple] | None:
    """(the TextureSlot of a textureInfo, its image as the file stores it), or None when it
    cannot be drawn: a texCoord other than 0 or 1, an image that cannot be read or is not a
    PNG or JPEG (warned), or an image only an extension gives (KTX2, WebP: the extension's
    warning says so). The slot's pixels are decoded when first read; pixels that do not
    decode are warned about then (the slot's image is None: drawn without it)."""
    texcoord, transform = info.get("texCoord", 0), None
    uv = info.get("extensions", {}).get("KHR_texture_transform")
    if uv is not None:
        texcoord = uv.get("texCoord", texcoord)
        transform = uv_transform(uv.get("offset", (0.0, 0.0)), uv.get("rotation", 0.0), uv.get("scale", (1.0, 1.0)))
    if texcoord > 1:
        file.warn("texcoord", f"{what}: texCoord {texcoord} is not 0 or 1 (boneviewer reads TEXCOORD_0 and "
                  "TEXCOORD_1); drawn without that texture")
        return None
    texture = file.document["textures"][info["index"]]
    source = texture.get("source")
    if source is None:
        return None
    try:
        image = file.image(source, f"texture {info['index']}, {what}")  # decoded when first drawn
    except ImageError as error:
        file.warn("texture", f"{error.detail} (texture {info['index']}, {what}); drawn without it")
        return None
    sampler = Sampler()
    if texture.get("sampler") is not None:
        given = file.document["samplers"][texture["sampler"]]
        sampler = Sampler(given.get("magFilter"), given.get("minFilter"), given.get("wrapS", 10497),
                          given.get("wrapT", 10497))
    return TextureSlot(image, texcoord, transform, sampler, scale), (image.data, image.mime)


def _decode_draco(file: GltfFile, primitive: dict, draco: dict, what: str) -> None:
    """Decode a KHR_draco_mesh_compression primitive and hand its attributes and indices to
    the file as the data of the primitive's accessors (which then read as usual)."""
    try:
        import DracoPy
    except ImportError:
        raise file.error(f"{what} is compressed with KHR_draco_mesh_compression, which needs the DracoPy package: "
                         f"{COMPRESSION_EXTRA}") from None
    data, offset, length, _ = file.buffer_view(draco["bufferView"])
    try:
        mesh = DracoPy.decode(bytes(data[offset:offset + length]))
    except Exception as error:  # the decoder's report of corrupt data, whatever its type
        raise file.error(f"{what}: its Draco data does not decode ({short(error, 120)})") from None
    for name, unique_id in draco["attributes"].items():
        accessor = primitive["attributes"].get(name)
        if accessor is None:
            raise file.error(f"{what}: Draco attribute {name} is not among the primitive's attributes")
        attribute = mesh.get_attribute_by_unique_id(unique_id)
        if attribute is None:
            raise file.error(f"{what}: its Draco data has no attribute {unique_id} ({name})")
        values = np.asarray(attribute["data"])
        file.provide(accessor, values.reshape(len(values), -1))
    if primitive.get("indices") is not None:
        file.provide(primitive["indices"], np.asarray(mesh.faces).reshape(-1, 1))


def triangle_list(indices: np.ndarray, mode: int) -> np.ndarray:
    """TRIANGLES as they are; TRIANGLE_STRIP and TRIANGLE_FAN unrolled into a list."""
    if mode == TRIANGLES:
        return indices[: len(indices) - len(indices) % 3]
    if len(indices) < 3:
        return indices[:0]
    i = np.arange(len(indices) - 2)
    if mode == TRIANGLE_STRIP:
        even = i % 2 == 0
        a = np.where(even, indices[i], indices[i + 1])
        b = np.where(even, indices[i + 1], indices[i])
        return np.stack([a, b, indices[i + 2]], axis=1).reshape(-1)
    return np.stack([np.full_like(i, indices[0]), indices[i + 1], indices[i + 2]], axis=1).reshape(-1)


def _value_range(low: float, high: float) -> str:
    """"0.5" or "1.004..1.755": enough digits to tell an off sum from 1."""
    low_text, high_text = f"{float(low):.4g}", f"{float(high):.4g}"
    return low_text if low_text == high_text else f"{low_text}..{high_text}"
