"""glTF 2.0 loader (.gltf with embedded or external buffers, and .glb), built on pygltflib.

It builds the model: TransformNodes for every node, a Skeleton per skin whose bones are linked
to the joint nodes (Babylon's glTF mode), SkinnedMeshes with their materials, and animation
clips. Everything read from the file is checked before it is used; problems raise one
ViewerError that names the file and the object.

Skinning follows the seed's rule, as Babylon's loader does: a bone's absolute matrix is its
joint's transform relative to the parent of the skeleton root, the absolute inverse bind of a
joint is its inverse bind matrix, and the mesh is placed at the world matrix of the skeleton
root's parent. So final x mesh world = inverseBind x world(joint), which is glTF's joint
matrix, and the skinned mesh node's own transform is ignored, as glTF requires.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import logging
import struct
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from .errors import ViewerError
from .model import Bone, Scene, Skeleton, SkinnedMesh, TransformNode
from .model.animation import AnimationChannel, AnimationClip
from .model.mesh import Submesh

log = logging.getLogger("boneviewer")

COMPONENT_TYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}
TYPE_SIZES = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
GLB_MAGIC, GLB_JSON, GLB_BIN = 0x46546C67, 0x4E4F534A, 0x004E4942
# Refuse sizes that would need absurd memory before allocating anything.
MAX_ELEMENTS = 50_000_000


def load_gltf(path) -> Scene:
    return GltfReader(Path(path)).scene()


class GltfReader:
    def __init__(self, path: Path):
        self.path = path
        self.folder = path.resolve().parent
        try:
            raw = path.read_bytes()
        except OSError as error:
            raise self.error(f"cannot read it: {error.strerror}") from None
        binary_chunk = None
        if raw[:4] == b"glTF":
            json_bytes, binary_chunk = self._split_glb(raw)
        else:
            json_bytes = raw
        try:
            document = json.loads(json_bytes.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise self.error(f"not valid glTF JSON ({error})") from None
        if not isinstance(document, dict):
            raise self.error("not valid glTF JSON (the top level is not an object)")
        version = str(document.get("asset", {}).get("version", ""))
        if not version.startswith("2."):
            raise self.error(f"asset.version is {version or 'missing'}; only glTF 2.0 is supported")
        from pygltflib import GLTF2

        try:
            # from_json builds nested dataclasses (from_dict leaves attributes as dicts).
            self.gltf = GLTF2.from_json(json.dumps(document))
        except Exception as error:  # pygltflib raises assorted errors on malformed structure
            raise self.error(f"malformed glTF structure ({type(error).__name__}: {error})") from None
        self.binary_chunk = binary_chunk
        self._buffers: dict[int, bytes] = {}
        self._images: dict[int, np.ndarray] = {}

    def error(self, message: str) -> ViewerError:
        return ViewerError(f"{self.path}: {message}")

    # --- containers and buffers -----------------------------------------------------------------
    def _split_glb(self, raw: bytes):
        if len(raw) < 20:
            raise self.error("GLB file is truncated (shorter than its header)")
        magic, version, length = struct.unpack_from("<III", raw, 0)
        if version != 2:
            raise self.error(f"GLB version {version} is not supported")
        if length > len(raw):
            raise self.error(f"GLB header says {length} bytes but the file has {len(raw)}")
        chunks, offset = [], 12
        while offset + 8 <= length:
            chunk_length, chunk_type = struct.unpack_from("<II", raw, offset)
            start = offset + 8
            if start + chunk_length > length:
                raise self.error(f"GLB chunk at byte {offset} claims {chunk_length} bytes, past the end of the file")
            chunks.append((chunk_type, raw[start:start + chunk_length]))
            offset = start + chunk_length
        if not chunks or chunks[0][0] != GLB_JSON:
            raise self.error("GLB file does not start with a JSON chunk")
        binary = next((data for kind, data in chunks[1:] if kind == GLB_BIN), None)
        return chunks[0][1], binary

    def resolve_uri(self, uri: str, what: str) -> Path:
        """An external file, which must lie inside the model's folder: no '..', no absolute
        paths, no URL schemes; nothing is ever fetched from the network."""
        if ":" in uri.split("/")[0] or uri.startswith(("/", "\\")):
            raise self.error(f"{what}: refusing URI {uri!r}: only relative paths inside the model's folder are read")
        target = (self.folder / unquote(uri)).resolve()
        if not target.is_relative_to(self.folder):
            raise self.error(f"{what}: refusing URI {uri!r}: it points outside the model's folder")
        return target

    def read_uri(self, uri: str, what: str) -> bytes:
        if uri.startswith("data:"):
            header, comma, payload = uri.partition(",")
            if not comma or ";base64" not in header:
                raise self.error(f"{what}: only base64 data: URIs are supported")
            try:
                return base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                raise self.error(f"{what}: the base64 data does not decode") from None
        target = self.resolve_uri(uri, what)
        try:
            return target.read_bytes()
        except OSError as error:
            raise self.error(f"{what}: cannot read {uri!r}: {error.strerror}") from None

    def buffer(self, index: int) -> bytes:
        if index not in self._buffers:
            buffers = self.gltf.buffers or []
            if not 0 <= index < len(buffers):
                raise self.error(f"buffer {index} does not exist ({len(buffers)} buffers)")
            spec = buffers[index]
            if spec.uri is None:
                if index != 0 or self.binary_chunk is None:
                    raise self.error(f"buffer {index} has no uri and there is no GLB binary chunk")
                data = self.binary_chunk
            else:
                data = self.read_uri(spec.uri, f"buffer {index}")
            if spec.byteLength is None or len(data) < spec.byteLength:
                raise self.error(f"buffer {index} holds {len(data)} bytes but byteLength is {spec.byteLength}")
            self._buffers[index] = data
        return self._buffers[index]

    def buffer_view(self, index: int) -> tuple[bytes, int, int, int | None]:
        """(buffer bytes, offset, length, stride) of a buffer view, checked to fit its buffer."""
        views = self.gltf.bufferViews or []
        if not 0 <= index < len(views):
            raise self.error(f"bufferView {index} does not exist ({len(views)} bufferViews)")
        view = views[index]
        data = self.buffer(view.buffer if view.buffer is not None else -1)
        offset, length = view.byteOffset or 0, view.byteLength or 0
        if offset < 0 or length < 0 or offset + length > len(data):
            raise self.error(f"bufferView {index} (bytes {offset}..{offset + length}) lies outside buffer "
                             f"{view.buffer} ({len(data)} bytes)")
        return data, offset, length, view.byteStride

    def accessor(self, index, what: str = "") -> np.ndarray:
        """Accessor data as an array (count, components), normalized integers as floats."""
        accessors = self.gltf.accessors or []
        label = f"accessor {index}" + (f" ({what})" if what else "")
        if not isinstance(index, int) or not 0 <= index < len(accessors):
            raise self.error(f"{label} does not exist ({len(accessors)} accessors)")
        spec = accessors[index]
        dtype = COMPONENT_TYPES.get(spec.componentType)
        components = TYPE_SIZES.get(spec.type)
        count = spec.count
        if dtype is None or components is None:
            raise self.error(f"{label}: unknown componentType {spec.componentType} or type {spec.type!r}")
        if not isinstance(count, int) or count < 0 or count * components > MAX_ELEMENTS:
            raise self.error(f"{label}: count {count} is not a sane number of elements")
        item = np.dtype(dtype).itemsize * components
        if spec.bufferView is None:
            array = np.zeros((count, components), dtype)
        else:
            data, view_offset, view_length, stride = self.buffer_view(spec.bufferView)
            stride = stride or item
            offset = spec.byteOffset or 0
            needed = offset + stride * (count - 1) + item if count else 0
            if offset < 0 or stride < item or needed > view_length:
                raise self.error(f"{label}: {count} elements of {item} bytes (stride {stride}) from byte {offset} do "
                                 f"not fit bufferView {spec.bufferView} ({view_length} bytes)")
            raw = np.frombuffer(data, np.uint8, count=needed, offset=view_offset) if count else np.zeros(0, np.uint8)
            if count:
                rows = np.lib.stride_tricks.as_strided(raw[offset:], shape=(count, item), strides=(stride, 1))
                array = rows.copy().view(dtype).reshape(count, components)
            else:
                array = np.zeros((0, components), dtype)
        if spec.sparse is not None:
            array = self._apply_sparse(array.copy(), spec.sparse, label, dtype, components)
        if spec.normalized and np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            array = np.maximum(array.astype(np.float32) / info.max, -1.0)
        if np.issubdtype(array.dtype, np.floating) and not np.all(np.isfinite(array)):
            raise self.error(f"{label}: contains NaN or infinity")
        return array

    def _apply_sparse(self, array, sparse, label, dtype, components):
        count = sparse.count or 0
        index_type = COMPONENT_TYPES.get(sparse.indices.componentType)
        if index_type is None or not np.issubdtype(index_type, np.unsignedinteger):
            raise self.error(f"{label}: sparse indices have an invalid componentType")
        data, offset, length, _ = self.buffer_view(sparse.indices.bufferView)
        start = offset + (sparse.indices.byteOffset or 0)
        if count * np.dtype(index_type).itemsize > length - (sparse.indices.byteOffset or 0):
            raise self.error(f"{label}: sparse indices do not fit their bufferView")
        indices = np.frombuffer(data, index_type, count=count, offset=start)
        if count and indices.max() >= len(array):
            raise self.error(f"{label}: sparse index {int(indices.max())} is past the accessor's {len(array)} elements")
        data, offset, length, _ = self.buffer_view(sparse.values.bufferView)
        size = count * components * np.dtype(dtype).itemsize
        if size > length - (sparse.values.byteOffset or 0):
            raise self.error(f"{label}: sparse values do not fit their bufferView")
        values = np.frombuffer(data, dtype, count=count * components, offset=offset + (sparse.values.byteOffset or 0))
        array[indices] = values.reshape(count, components)
        return array

    # --- scene ----------------------------------------------------------------------------------
    def scene(self) -> Scene:
        gltf = self.gltf
        specs = gltf.nodes or []
        nodes = [TransformNode(spec.name or f"node{i}") for i, spec in enumerate(specs)]
        parent_of = {}
        for i, spec in enumerate(specs):
            for child in spec.children or []:
                if not isinstance(child, int) or not 0 <= child < len(specs):
                    raise self.error(f"node {i} has child {child}, which does not exist")
                if child in parent_of:
                    raise self.error(f"node {child} has two parents (nodes {parent_of[child]} and {i})")
                parent_of[child] = i
        for child, parent in parent_of.items():
            ancestor = parent
            while ancestor is not None:
                if ancestor == child:
                    raise self.error(f"node {child} is its own ancestor: the node hierarchy has a cycle")
                ancestor = parent_of.get(ancestor)
            nodes[child].parent = nodes[parent]
        for i, spec in enumerate(specs):
            self._set_node_transform(nodes[i], spec, i)
        self.nodes, self.parent_of = nodes, parent_of

        skeletons = {}
        skinned, static = [], []
        for i, spec in enumerate(specs):
            if spec.mesh is None:
                continue
            if spec.skin is not None:
                if spec.skin not in skeletons:
                    skeletons[spec.skin] = self._skeleton(spec.skin)
                skeleton, root_parent = skeletons[spec.skin]
                mesh = self._mesh(spec.mesh, i, skeleton)
                mesh.world_node = root_parent
                mesh.world_matrix = np.eye(4) if root_parent is None else root_parent.get_world_matrix()
                skinned.append(mesh)
            else:
                mesh = self._mesh(spec.mesh, i, None)
                mesh.world_node = nodes[i]
                mesh.world_matrix = nodes[i].get_world_matrix()
                static.append(mesh)
        if not skinned and not static:
            raise self.error("the file has no meshes to show")
        animations = [self._animation(i) for i in range(len(gltf.animations or []))]
        return Scene(self.path.name, skinned, nodes=nodes, animations=animations, static_meshes=static)

    def _set_node_transform(self, node: TransformNode, spec, index: int) -> None:
        what = f"node {index} ({node.name!r})"
        try:
            if spec.matrix is not None and list(spec.matrix) != [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]:
                # glTF matrices are column-major, which read row by row is our row-vector layout.
                node.set_local_matrix(np.asarray(spec.matrix, dtype=np.float64).reshape(4, 4))
                return
            rotation = np.asarray(spec.rotation if spec.rotation is not None else (0, 0, 0, 1), dtype=np.float64)
            norm = np.linalg.norm(rotation) if rotation.shape == (4,) else 0
            if rotation.shape == (4,) and norm > 0 and abs(norm - 1) > 1e-3:
                log.warning("%s: %s rotation is not a unit quaternion (length %.4g); normalized", self.path, what, norm)
            node.set_trs(spec.translation if spec.translation is not None else (0, 0, 0),
                         rotation / norm if norm > 0 and abs(norm - 1) > 1e-3 else rotation,
                         spec.scale if spec.scale is not None else (1, 1, 1))
        except ViewerError as error:
            raise self.error(f"{what}: {str(error).split(': ', 1)[-1]}") from None

    def _ancestors(self, node_index: int) -> list[int]:
        """The node and its ancestors, nearest first."""
        chain = [node_index]
        while chain[-1] in self.parent_of:
            chain.append(self.parent_of[chain[-1]])
        return chain

    def _skeleton(self, skin_index: int):
        """(Skeleton, node the mesh is placed under) for a skin."""
        skins = self.gltf.skins or []
        if not 0 <= skin_index < len(skins):
            raise self.error(f"skin {skin_index} does not exist ({len(skins)} skins)")
        skin = skins[skin_index]
        joints = list(skin.joints or [])
        what = f"skin {skin_index}"
        if not joints:
            raise self.error(f"{what} has no joints")
        for joint in joints:
            if not isinstance(joint, int) or not 0 <= joint < len(self.nodes):
                raise self.error(f"{what}: joint node {joint} does not exist")
        if len(set(joints)) != len(joints):
            raise self.error(f"{what}: a node is listed twice among its joints")
        if skin.inverseBindMatrices is not None:
            ibm = self.accessor(skin.inverseBindMatrices, f"{what} inverseBindMatrices")
            if ibm.shape != (len(joints), 16):
                raise self.error(f"{what}: inverseBindMatrices has {len(ibm)} MAT4s for {len(joints)} joints")
            # Column-major MAT4 read row by row is our row-vector layout.
            inverse_binds = ibm.astype(np.float64).reshape(-1, 4, 4)
        else:
            log.warning("%s: %s has no inverseBindMatrices; using identity", self.path, what)
            inverse_binds = np.broadcast_to(np.eye(4), (len(joints), 4, 4))

        # The skeleton root: skin.skeleton when it is a common ancestor of every joint, else
        # the nearest common ancestor (None when the joints lie in separate trees).
        chains = [self._ancestors(j) for j in joints]
        common = set(chains[0]).intersection(*chains[1:])
        root = skin.skeleton if skin.skeleton in common else next((n for n in chains[0] if n in common), None)
        if skin.skeleton is not None and skin.skeleton != root:
            log.warning("%s: %s: skeleton node %s is not a common root of its joints; using %s",
                        self.path, what, skin.skeleton, root)
        # Bones: every joint and every node between a joint and the root (index -1, not
        # uploaded), parents first.
        members = set()
        for chain in chains:
            for n in chain:
                members.add(n)
                if n == root:
                    break
        depth = {n: len(self._ancestors(n)) for n in members}
        order = sorted(members, key=lambda n: (depth[n], n))
        joint_row = {n: i for i, n in enumerate(joints)}
        skeleton = Skeleton(f"skin{skin_index}" if skin.name is None else skin.name)
        bones, absolute_binds = {}, {}
        for n in order:
            parent = self.parent_of.get(n) if n != root else None
            parent_bone = bones.get(parent)
            if n in joint_row:
                inverse = inverse_binds[joint_row[n]]
                try:
                    absolute_binds[n] = np.linalg.inv(inverse)
                except np.linalg.LinAlgError:
                    raise self.error(f"{what}: the inverse bind matrix of joint {joint_row[n]} (node {n}, "
                                     f"{self.nodes[n].name!r}) is singular") from None
            else:
                absolute_binds[n] = np.eye(4)
            bind = absolute_binds[n] if parent_bone is None else absolute_binds[n] @ np.linalg.inv(absolute_binds[parent])
            try:
                bone = Bone(self.nodes[n].name, skeleton, parent_bone, local_matrix=self.nodes[n].get_local_matrix(),
                            bind_matrix=bind, index=joint_row.get(n, -1))
            except ViewerError as error:
                raise self.error(f"{what}: joint node {n}: {error}") from None
            bone.link_transform_node(self.nodes[n])
            bones[n] = bone
        root_parent = None if root is None else self.parent_of.get(root)
        return skeleton, (None if root_parent is None else self.nodes[root_parent])

    def _mesh(self, mesh_index: int, node_index: int, skeleton) -> SkinnedMesh:
        meshes = self.gltf.meshes or []
        if not 0 <= mesh_index < len(meshes):
            raise self.error(f"node {node_index} uses mesh {mesh_index}, which does not exist")
        spec = meshes[mesh_index]
        parts = {"positions": [], "normals": [], "texcoords": [], "colors": [], "joints": [], "weights": [],
                 "indices": []}
        submeshes, vertex_offset, index_offset = [], 0, 0
        has_normals = True
        for p, primitive in enumerate(spec.primitives or []):
            what = f"mesh {mesh_index} primitive {p}"
            mode = 4 if primitive.mode is None else primitive.mode
            if mode not in (4, 5, 6):
                log.warning("%s: %s draws points or lines (mode %s); skipped", self.path, what, mode)
                continue
            attributes = primitive.attributes
            if attributes.POSITION is None:
                raise self.error(f"{what} has no POSITION")
            positions = self.accessor(attributes.POSITION, f"{what} POSITION")
            count = len(positions)
            if primitive.indices is not None:
                indices = self.accessor(primitive.indices, f"{what} indices").reshape(-1)
                if not np.issubdtype(indices.dtype, np.unsignedinteger):
                    raise self.error(f"{what}: indices must be unsigned integers")
                if indices.size and int(indices.max()) >= count:
                    raise self.error(f"{what}: index {int(indices.max())} is past its {count} vertices")
            else:
                indices = np.arange(count, dtype=np.uint32)
            indices = _triangle_list(indices.astype(np.int64), mode)
            normal = self._optional(attributes.NORMAL, count, 3, f"{what} NORMAL")
            has_normals &= normal is not None
            parts["positions"].append(positions)
            parts["normals"].append(normal if normal is not None else np.zeros((count, 3), np.float32))
            texcoord_set = 0
            material = self._material(primitive.material, what)
            if material is not None:
                texcoord_set = material[2]
            texcoords = self._optional(getattr(attributes, f"TEXCOORD_{texcoord_set}", None), count, 2,
                                       f"{what} TEXCOORD_{texcoord_set}")
            parts["texcoords"].append(texcoords if texcoords is not None else np.zeros((count, 2), np.float32))
            colors = self._colors(attributes.COLOR_0, count, f"{what} COLOR_0")
            parts["colors"].append(colors)
            if skeleton is not None:
                joints, weights = self._skin_attributes(attributes, count, what)
                parts["joints"].append(joints)
                parts["weights"].append(weights)
            parts["indices"].append(indices + vertex_offset)
            base_color, texture = (material[0], material[1]) if material is not None else ((1, 1, 1, 1), None)
            submeshes.append(Submesh(index_offset, len(indices), base_color, texture, f"{spec.name or mesh_index}/{p}"))
            vertex_offset += count
            index_offset += len(indices)
        if not submeshes:
            raise self.error(f"mesh {mesh_index} has no triangle primitives")
        if skeleton is not None:
            width = max(j.shape[1] for j in parts["joints"])
            parts["joints"] = [np.pad(j, ((0, 0), (0, width - j.shape[1]))) for j in parts["joints"]]
            parts["weights"] = [np.pad(w, ((0, 0), (0, width - w.shape[1]))) for w in parts["weights"]]
        joined = {key: np.concatenate(value) if value else None for key, value in parts.items()}
        weights = joined["weights"]
        if weights is not None:
            sums = weights.sum(axis=1)
            off = np.abs(sums - 1.0) > 1e-3
            if off.any():
                log.warning("%s: mesh %s: %d of %d vertices have weights that do not sum to 1 (min %.3g); renormalized",
                            self.path, mesh_index, int(off.sum()), len(sums), float(sums.min()))
        try:
            return SkinnedMesh(spec.name or f"mesh{mesh_index}", joined["positions"], joined["indices"], skeleton,
                               joints=joined["joints"], weights=weights,
                               normals=joined["normals"] if has_normals else None, texcoords=joined["texcoords"],
                               colors=joined["colors"], submeshes=submeshes, node_index=node_index)
        except ViewerError as error:
            raise self.error(str(error)) from None

    def _optional(self, index, count, width, what):
        if index is None:
            return None
        array = self.accessor(index, what).astype(np.float32)
        if array.shape != (count, width):
            raise self.error(f"{what}: shape {array.shape} does not match {count} vertices of {width} components")
        return array

    def _colors(self, index, count, what):
        if index is None:
            return np.ones((count, 4), np.float32)
        colors = self.accessor(index, what).astype(np.float32)
        if colors.shape == (count, 3):
            colors = np.c_[colors, np.ones(count, np.float32)]
        if colors.shape != (count, 4):
            raise self.error(f"{what}: expected {count} VEC3 or VEC4 colors")
        return colors

    def _skin_attributes(self, attributes, count, what):
        joints, weights = [], []
        for k in (0, 1):
            joint_index, weight_index = getattr(attributes, f"JOINTS_{k}", None), getattr(attributes, f"WEIGHTS_{k}", None)
            if joint_index is None and weight_index is None:
                break
            if joint_index is None or weight_index is None:
                raise self.error(f"{what}: JOINTS_{k} and WEIGHTS_{k} must come together")
            j = self.accessor(joint_index, f"{what} JOINTS_{k}")
            w = self.accessor(weight_index, f"{what} WEIGHTS_{k}").astype(np.float32)
            if not np.issubdtype(j.dtype, np.unsignedinteger) or j.shape != (count, 4) or w.shape != (count, 4):
                raise self.error(f"{what}: JOINTS_{k}/WEIGHTS_{k} must be {count} VEC4s of unsigned joints and weights")
            joints.append(j.astype(np.int64))
            weights.append(w)
        if not joints:
            raise self.error(f"{what}: a skinned mesh primitive needs JOINTS_0 and WEIGHTS_0")
        return np.concatenate(joints, axis=1), np.concatenate(weights, axis=1)

    def _material(self, index, what):
        """(base color factor, base color image or None, texcoord set) or None."""
        if index is None:
            return None
        materials = self.gltf.materials or []
        if not 0 <= index < len(materials):
            raise self.error(f"{what}: material {index} does not exist")
        pbr = materials[index].pbrMetallicRoughness
        factor = (1.0, 1.0, 1.0, 1.0)
        image, texcoord = None, 0
        if pbr is not None:
            if pbr.baseColorFactor is not None:
                factor = tuple(pbr.baseColorFactor)
                if len(factor) != 4 or not np.all(np.isfinite(factor)):
                    raise self.error(f"material {index}: baseColorFactor must be 4 finite numbers")
            if pbr.baseColorTexture is not None:
                image = self._texture_image(pbr.baseColorTexture.index, f"material {index}")
                texcoord = pbr.baseColorTexture.texCoord or 0
        return factor, image, texcoord

    def _texture_image(self, texture_index, what):
        textures = self.gltf.textures or []
        if not isinstance(texture_index, int) or not 0 <= texture_index < len(textures):
            raise self.error(f"{what}: texture {texture_index} does not exist")
        source = textures[texture_index].source
        images = self.gltf.images or []
        if not isinstance(source, int) or not 0 <= source < len(images):
            raise self.error(f"texture {texture_index}: image {source} does not exist")
        if source not in self._images:
            spec = images[source]
            if spec.bufferView is not None:
                data, offset, length, _ = self.buffer_view(spec.bufferView)
                raw = data[offset:offset + length]
            elif spec.uri is not None:
                raw = self.read_uri(spec.uri, f"image {source}")
            else:
                raise self.error(f"image {source} has neither uri nor bufferView")
            from PIL import Image

            try:
                with Image.open(io.BytesIO(raw)) as opened:
                    if opened.width * opened.height > 16384 * 16384:
                        raise self.error(f"image {source} is {opened.width}x{opened.height}, too large")
                    self._images[source] = np.asarray(opened.convert("RGBA"))
            except (OSError, SyntaxError, ValueError) as error:
                raise self.error(f"image {source} does not decode as PNG or JPEG ({error})") from None
        return self._images[source]

    def _unit_keyframes(self, quaternions: np.ndarray, what: str) -> np.ndarray:
        """Rotation keys within 1e-3 of unit length are kept as stored (files round them, and
        Babylon keeps them so); ones clearly off are normalized, with one warning."""
        norms = np.linalg.norm(quaternions, axis=1)
        if np.any(norms == 0):
            raise self.error(f"{what}: a rotation keyframe is the zero quaternion")
        off = np.abs(norms - 1.0) > 1e-3
        if off.any():
            log.warning("%s: %s: %d rotation keyframes are not unit quaternions; normalized",
                        self.path, what, int(off.sum()))
            quaternions = np.where(off[:, None], quaternions / norms[:, None], quaternions)
        return quaternions

    def _animation(self, index: int) -> AnimationClip:
        spec = self.gltf.animations[index]
        name = spec.name or f"animation{index}"
        samplers = spec.samplers or []
        channels = []
        for c, channel in enumerate(spec.channels or []):
            what = f"animation {index} ({name!r}) channel {c}"
            target = channel.target
            if target is None or target.node is None:
                continue  # targets of extensions we do not animate
            if not 0 <= target.node < len(self.nodes):
                raise self.error(f"{what}: target node {target.node} does not exist")
            if target.path == "weights":
                continue  # morph targets are not supported; the rest of the clip still plays
            if not isinstance(channel.sampler, int) or not 0 <= channel.sampler < len(samplers):
                raise self.error(f"{what}: sampler {channel.sampler} does not exist")
            sampler = samplers[channel.sampler]
            times = self.accessor(sampler.input, f"{what} input").astype(np.float64).reshape(-1)
            values = self.accessor(sampler.output, f"{what} output").astype(np.float64)
            if target.path == "rotation" and (sampler.interpolation or "LINEAR") != "CUBICSPLINE" and values.size:
                values = self._unit_keyframes(values.reshape(-1, 4), what)
            try:
                channels.append(AnimationChannel(self.nodes[target.node], target.path, times, values,
                                                 sampler.interpolation or "LINEAR"))
            except ViewerError as error:
                raise self.error(f"{what}: {str(error)}") from None
        return AnimationClip(name, channels)


def _triangle_list(indices: np.ndarray, mode: int) -> np.ndarray:
    """TRIANGLES as they are; TRIANGLE_STRIP and TRIANGLE_FAN unrolled into a list."""
    if mode == 4:
        return indices[: len(indices) - len(indices) % 3]
    if len(indices) < 3:
        return indices[:0]
    i = np.arange(len(indices) - 2)
    if mode == 5:
        even = i % 2 == 0
        a = np.where(even, indices[i], indices[i + 1])
        b = np.where(even, indices[i + 1], indices[i])
        return np.stack([a, b, indices[i + 2]], axis=1).reshape(-1)
    return np.stack([np.full_like(i, indices[0]), indices[i + 1], indices[i + 2]], axis=1).reshape(-1)
