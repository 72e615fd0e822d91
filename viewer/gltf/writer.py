"""glTF 2.0 writer: a Scene as it is now, as .glb or as .gltf with its .bin and images beside it.

What is written is what the loader builds from, so that loading the file gives the scene back:
every node's current TRS (the pose on screen is the file's pose), skins with inverse bind
matrices, every clip (loaded or authored; LINEAR, STEP, CUBICSPLINE), meshes as one primitive
per submesh with their attributes (4 or 8 influences, weights normalized as drawn; TEXCOORD_0
and TEXCOORD_1 as loaded; TANGENT where a normal map uses them), morph targets with their names
and current weights, materials as drawn (every metallic-roughness field, samplers, texture
transforms, KHR_materials_emissive_strength and KHR_materials_unlit) with their images' original
bytes, names and the node hierarchy. Compressed inputs come out uncompressed, and extensions
the writer does not write (KHR_lights_punctual among them, and those the loader ignored) are
dropped with one warning line.

The GLB container is a 12-byte header and two chunks; it is written here directly (a library
would add a dependency for no gain). Numbers are exact: node TRS are the model's float64 values
as JSON numbers, arrays are float32 as the loader reads them.

``apply_pose_as_bind``: the current skinned (and morphed) shape becomes the meshes' vertices,
the inverse bind matrices become the inverses of the posed joints' matrices, and the pose the
nodes' TRS, so the file at rest shows the pose (Blender's "Apply Pose as Rest Pose").
"""

from __future__ import annotations

import io
import json
import logging
import re
import struct
from itertools import accumulate
from pathlib import Path
from urllib.parse import quote

import numpy as np

try:
    import orjson
except ImportError:  # a dependency, but the writer does not need it
    orjson = None

from ..errors import ViewerError
from ..gcpause import collector_paused
from ..model.checks import OUT_OF_RANGE, first_bad_row, fits
from ..model.material import Sampler
from ..model.dual_quaternions import bone_dual_quaternions, dq_blend
from ..model.mesh import skin
from ..model.morph import MorphAnimationClip
from ..model.transforms import decompose_one
from ..model.unit_rotations import unit_rotations
from ..motion.constraints import written_as_drawn
from ..sources import texture_file_name

__all__ = ["glb_bytes", "save_gltf"]

log = logging.getLogger("boneviewer")

FLOAT, UNSIGNED_BYTE, UNSIGNED_SHORT, UNSIGNED_INT = 5126, 5121, 5123, 5125
ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 34962, 34963
GLB_MAGIC, GLB_VERSION, JSON_CHUNK, BIN_CHUNK = b"glTF", 2, 0x4E4F534A, 0x004E4942
TYPES = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4", 16: "MAT4"}
# The extensions a file may use that what is written keeps (the compressions and quantization
# by writing plain data); the writer names the others a scene's file used as dropped.
WRITTEN_EXTENSIONS = ("KHR_draco_mesh_compression", "EXT_meshopt_compression", "KHR_meshopt_compression",
                      "KHR_mesh_quantization", "KHR_texture_transform", "KHR_materials_emissive_strength",
                      "KHR_materials_unlit")
# Unit length tolerance for normals written as NORMAL (the glTF-Validator's)
UNIT_TOLERANCE = 5e-4
# Where orjson's text may not be json.dumps': a float below 1e-4 (orjson writes 0.00001 and
# 2.5e-7 for Python's 1e-05 and 2.5e-07; every other finite float is written alike, tested;
# such numbers are rewritten), and what ensure_ascii escapes (anything beyond ASCII, DEL) or
# allow_nan refuses (orjson's null): json's text then.
SHORT_EXPONENT = re.compile(rb"e-[0-9](?![0-9])")


def save_gltf(scene, path, apply_pose_as_bind: bool = False, inputs: dict | None = None,
              force: bool = False) -> Path:
    """Write ``scene`` as it is now to ``path`` (.glb, or .gltf with ``<stem>.bin`` and its
    images beside it) and return the path. Everything is checked before anything is written
    (NaN or infinite values are refused, naming the bone); the files are written to temporary
    names and renamed into place, so an existing file stays whole if anything fails.

    No file written lands on a file the scene was loaded from (its model file, buffers and
    images) or on one of ``inputs`` ({path: what uses it}: the other files the caller read);
    a .gltf's ``<stem>.bin`` and ``<stem>_image<n>`` files (names not given) replace existing
    ones only with ``force``, which also lets the output replace the model's own files when
    ``path`` is the model. Rotations are written as unit quaternions (model.unit_rotations)."""
    from ..sources import write_model_files

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".glb", ".gltf"):
        raise ViewerError(f"{path}: the output must be a .glb or .gltf file")
    dropped = [name for name in getattr(scene, "file_extensions", ()) if name not in WRITTEN_EXTENSIONS]

    def build():
        with collector_paused():  # the document's objects all live until it is written
            builder = _Builder(binary=suffix == ".glb", stem=path.stem)
            with unit_rotations(scene):
                _Scene(scene, builder, bool(apply_pose_as_bind)).write()
            return builder.files(path)

    write_model_files(scene, path, build, inputs, force)
    if dropped:
        log.warning("%s: dropped extension%s %s (boneviewer does not write %s)", path, "s" if len(dropped) > 1 else "",
                    ", ".join(dropped), "them" if len(dropped) > 1 else "it")
    warning = written_as_drawn(scene) if "VRMC_node_constraint" in dropped else None
    if warning:
        log.warning("%s: %s", path, warning)
    return path


def glb_bytes(scene, apply_pose_as_bind: bool = False) -> bytes:
    """What save_gltf writes to a .glb, in memory (no file, no warning)."""
    with collector_paused():
        builder = _Builder(binary=True, stem="scene")
        with unit_rotations(scene):
            _Scene(scene, builder, bool(apply_pose_as_bind)).write()
        return builder.files(Path("scene.glb"))[0][1]


class _Builder:
    """The document and its binary buffer, accessor by accessor (each 4-byte aligned)."""

    def __init__(self, binary: bool, stem: str):
        self.binary, self.stem = binary, stem
        self.chunks: list[bytes] = []
        self.length = 0
        self.images: list[tuple[str, bytes]] = []  # .gltf: the image files beside it (name, bytes)
        self.document: dict = {"asset": {"version": "2.0", "generator": "boneviewer"}}
        # Keyframe data shares one bufferView (thousands of small accessors in a big rig): its
        # accessors are made as clips are written, its bytes placed at the end.
        self.keys_view: int | None = None
        self.keys_chunks: list[bytes] = []
        self.keys_length = 0
        self.extensions: set[str] = set()  # the extensions what is written uses

    def add(self, key: str, spec: dict) -> int:
        items = self.document.setdefault(key, [])
        items.append(spec)
        return len(items) - 1

    def view(self, data: bytes, target: int | None = None) -> int:
        spec = {"buffer": 0, "byteOffset": self.length, "byteLength": len(data)}
        if target is not None:
            spec["target"] = target
        self.chunks.append(data)
        self.length += len(data)
        pad = -self.length % 4
        if pad:
            self.chunks.append(b"\0" * pad)
            self.length += pad
        return self.add("bufferViews", spec)

    def accessor(self, array: np.ndarray, component: int, target: int | None = None, bounds: bool = False,
                 normalized: bool = False) -> int:
        array = np.ascontiguousarray(array)
        width = array.size // len(array) if len(array) else (1 if array.ndim == 1 else array.shape[-1])
        rows = array.reshape(len(array), width)
        spec = {"bufferView": self.view(rows.tobytes(), target), "componentType": component, "count": len(rows),
                "type": TYPES[width]}
        if normalized:
            spec["normalized"] = True
        if bounds and len(rows):
            spec["min"] = [_number(v) for v in rows.min(axis=0)]
            spec["max"] = [_number(v) for v in rows.max(axis=0)]
        return self.add("accessors", spec)

    def floats(self, array, target: int | None = None, bounds: bool = False) -> int:
        return self.accessor(np.asarray(array, dtype=np.float32), FLOAT, target, bounds)

    def keyframes(self, data: bytes, count: int, width: int, bounds: tuple | None = None) -> int:
        """A float32 accessor of keyframe times or values (``data``: ``count`` rows of ``width``
        float32s), in the shared keyframe bufferView; ``bounds``: its (min, max) lists."""
        if self.keys_view is None:
            self.keys_view = self.add("bufferViews", {"buffer": 0})
        spec = {"bufferView": self.keys_view, "byteOffset": self.keys_length, "componentType": FLOAT,
                "count": count, "type": TYPES[width]}
        if bounds is not None:
            spec["min"], spec["max"] = bounds
        self.keys_chunks.append(data)
        self.keys_length += len(data)
        return self.add("accessors", spec)

    def image(self, data: bytes, mime: str) -> int:
        if self.binary:
            return self.add("images", {"bufferView": self.view(data), "mimeType": mime})
        extension = "png" if mime == "image/png" else "jpg"
        name = texture_file_name(self.stem, len(self.images), extension)
        self.images.append((name, data))
        return self.add("images", {"uri": quote(name)})  # a URI: a space is %20

    def files(self, path: Path) -> list[tuple[Path, bytes]]:
        """(path, bytes) of every file to write, the main one last."""
        if self.keys_view is not None:
            self.document["bufferViews"][self.keys_view].update(byteOffset=self.length, byteLength=self.keys_length)
            self.chunks.extend(self.keys_chunks)
            self.length += self.keys_length
        blob = b"".join(self.chunks)
        document = self.document
        if self.extensions:
            document["extensionsUsed"] = sorted(self.extensions)
        if blob:
            document["buffers"] = [{"byteLength": len(blob)}]
        if self.binary:
            text = compact_json(document)
            text += b" " * (-len(text) % 4)
            chunks = [struct.pack("<II", len(text), JSON_CHUNK), text]
            if blob:
                chunks += [struct.pack("<II", len(blob), BIN_CHUNK), blob]
            length = 12 + sum(map(len, chunks))
            return [(path, b"".join([struct.pack("<4sII", GLB_MAGIC, GLB_VERSION, length), *chunks]))]  # one copy
        files = []
        if blob:
            document["buffers"][0]["uri"] = quote(f"{self.stem}.bin")
            files.append((path.with_name(f"{self.stem}.bin"), blob))
        files += [(path.with_name(name), data) for name, data in self.images]
        text = json.dumps(document, indent=1, allow_nan=False).encode()
        return files + [(path, text)]


def compact_json(document) -> bytes:
    """``json.dumps(document, separators=(",", ":"), allow_nan=False).encode()``: orjson's text
    (15x faster on a 900-node model's document) where it is certainly the same, json's otherwise
    (and json's error, for a value it refuses)."""
    if orjson is not None:
        try:
            text = orjson.dumps(document)
        except TypeError:  # a value orjson does not take (numpy scalars, big integers, int keys)
            text = None
        if text is not None and text.isascii() and b"\x7f" not in text and b"null" not in text:
            if b"0.0000" not in text and SHORT_EXPONENT.search(text) is None:
                return text
            text = _python_floats(text)  # floats below 1e-4 (a rotation's 1e-8, a bound) written as json does
            if text is not None:
                return text
    return json.dumps(document, separators=(",", ":"), allow_nan=False).encode()


NUMBER_START, NUMBER_END = b"[,:", b",]}"  # what stands around a number in compact JSON
NUMBER_BYTES = b"0123456789.-+e"


def _python_floats(text: bytes) -> bytes | None:
    """orjson's compact text with every number that holds one of orjson's own forms of a float
    below 1e-4 (0.0000..., or an exponent e-N of one digit) written as json.dumps writes it,
    float.__repr__; None (for json's own text instead) where the text has a backslash, which
    could hide a quote from the count that tells a number from a string's content."""
    if b"\\" in text:
        return None
    hits = [match.start() for match in SHORT_EXPONENT.finditer(text)]
    at = text.find(b"0.0000")
    while at >= 0:
        hits.append(at)
        at = text.find(b"0.0000", at + 6)
    hits.sort()
    pieces, done, counted, quotes, size = [], 0, 0, 0, len(text)
    for hit in hits:
        start = hit
        while start and text[start - 1] in NUMBER_BYTES:
            start -= 1
        if start < done:
            continue  # a number already written
        quotes += text.count(b'"', counted, start)
        counted = start
        if quotes % 2:
            continue  # inside a string: written as it is
        end = hit
        while end < size and text[end] in NUMBER_BYTES:
            end += 1
        if not start or end == size or text[start - 1] not in NUMBER_START or text[end] not in NUMBER_END:
            return None  # not a number where one stands: leave it to json
        pieces += [text[done:start], repr(float(text[start:end])).encode()]
        done = end
    pieces.append(text[done:])
    return b"".join(pieces)


def _number(value) -> float | int:
    value = value.item() if hasattr(value, "item") else value
    return value


def _is_default(values, default) -> bool:
    return bool(np.array_equal(np.asarray(values, dtype=np.float64), default))


class _Scene:
    """One scene's nodes, skins, meshes, materials and clips into a _Builder."""

    def __init__(self, scene, builder: _Builder, apply_pose_as_bind: bool):
        self.scene, self.out, self.apply_pose_as_bind = scene, builder, apply_pose_as_bind
        self.node_index: dict[int, int] = {}  # id(TransformNode or unlinked Bone) -> node index
        self.node_specs: list[dict] = []
        self.parents: dict[int, int] = {}  # node index -> parent node index
        self.sources: list = []  # node index -> the TransformNode or Bone it comes from
        self.bone_names: dict[int, str] = {}  # id(pose target) -> its bone's name, for errors
        self.mesh_node: dict[int, int] = {}  # id(mesh) -> the node its mesh is on
        self.materials: dict[str, int] = {}  # a material's JSON -> its index (equal materials written once)
        self.images: dict[int, int] = {}  # id(image bytes or array) -> image index
        self.samplers: dict[tuple, int] = {}
        self.textures: dict[tuple, int] = {}  # (image, sampler) -> texture index

    def write(self) -> None:
        scene = self.scene
        scene.prepare()
        for node in scene.nodes:
            self._add_node(node, node.name)
        for skeleton in scene.skeletons:
            for bone in skeleton.bones:
                target = bone.get_pose_target()
                self.bone_names[id(target)] = bone.name
                if target is bone:
                    self._add_node(bone, bone.name)
        for i, source in enumerate(self.sources):
            parent = source.parent if hasattr(source, "table") else source.get_parent()
            if parent is not None and not hasattr(parent, "table"):
                parent = parent.get_pose_target()
            if parent is not None:
                self.parents[i] = self.node_index[id(parent)]
        poses = self._poses()
        self._check_finite(poses)
        self._write_poses(self.node_specs, poses)
        skins = {}
        for mesh in scene.meshes:
            host = self._mesh_node(mesh)
            spec = self.node_specs[host]
            if mesh.skeleton is not None:
                if id(mesh.skeleton) not in skins:
                    skins[id(mesh.skeleton)] = self._skin(mesh.skeleton)
                spec["skin"] = skins[id(mesh.skeleton)][0]
            spec["mesh"] = self._mesh(mesh, None if mesh.skeleton is None else skins[id(mesh.skeleton)])
            if mesh.morph_targets is not None:
                spec["weights"] = self._weights(mesh)
        for clip in scene.animations:
            self._clip(clip)
        children: dict[int, list[int]] = {}
        for child, parent in sorted(self.parents.items()):
            children.setdefault(parent, []).append(child)
        for parent, kids in children.items():
            self.node_specs[parent]["children"] = kids
        out = self.out
        out.document["nodes"] = self.node_specs
        roots = [i for i in range(len(self.node_specs)) if i not in self.parents]
        name = scene.file_scenes[scene.file_scene] if scene.file_scene is not None and scene.file_scenes else scene.name
        out.document["scenes"] = [{"name": str(name), "nodes": roots}]
        out.document["scene"] = 0

    # --- nodes -----------------------------------------------------------------------------------
    def _add_node(self, source, name: str) -> int:
        index = len(self.node_specs)
        self.node_index[id(source)] = index
        self.node_specs.append({"name": str(name)})
        self.sources.append(source)
        return index

    def _poses(self) -> np.ndarray:
        """(sources, 10): each node's translation, rotation, scale; nodes read a table at a time."""
        poses = np.empty((len(self.sources), 10))
        tables: dict = {}
        for i, source in enumerate(self.sources):
            table = getattr(source, "table", None)
            if table is None:  # a bone posed by itself
                poses[i] = np.concatenate([source.position, source.rotation_quaternion, source.scaling])
            else:
                entry = tables.setdefault(id(table), (table, [], []))
                entry[1].append(i)
                entry[2].append(source.table_row)
        for table, where, rows in tables.values():
            poses[where, :3] = table.position[rows]
            poses[where, 3:7] = table.quaternion[rows]
            poses[where, 7:] = table.scaling[rows]
        return poses

    def _check_finite(self, poses: np.ndarray) -> None:
        """Every pose and weight fits float32 as the model's setters require (checks.fits): the
        loader reads the file back as float32."""
        if not fits(poses):
            source = self.sources[first_bad_row(poses)]
            bone = self.bone_names.get(id(source))
            what = f"bone {bone!r}" if bone is not None else f"node {source.name!r}"
            raise ViewerError(f"{what}: its pose holds {OUT_OF_RANGE}; nothing was written")
        for mesh in self.scene.meshes:
            if mesh.morph_targets is not None and not fits(mesh.morph_weights):
                raise ViewerError(f"mesh {mesh.name!r}: its morph weights hold {OUT_OF_RANGE}; nothing was written")

    @staticmethod
    def _write_poses(specs: list[dict], poses: np.ndarray) -> None:
        """``_write_trs`` for every node, each part's test against its default made for all
        nodes at once."""
        moved = [(poses[:, :3] != 0.0).any(axis=1), (poses[:, 3:7] != (0.0, 0.0, 0.0, 1.0)).any(axis=1),
                 (poses[:, 7:] != 1.0).any(axis=1)]
        for spec, pose, translated, rotated, scaled in zip(specs, poses.tolist(), *(m.tolist() for m in moved)):
            if translated:
                spec["translation"] = pose[:3]
            if rotated:
                spec["rotation"] = pose[3:7]
            if scaled:
                spec["scale"] = pose[7:]

    @staticmethod
    def _write_trs(spec: dict, pose: list) -> None:
        """The TRS as Python floats (the float64 values exactly), each left out at its default
        (node by node: ``_write_poses``' reference)."""
        for key, values, default in (("translation", pose[:3], [0.0, 0.0, 0.0]),
                                     ("rotation", pose[3:7], [0.0, 0.0, 0.0, 1.0]),
                                     ("scale", pose[7:], [1.0, 1.0, 1.0])):
            if values != default:
                spec[key] = values

    def _mesh_node(self, mesh) -> int:
        """The node the mesh is written on: the node it was loaded on (a glTF file's), or the
        scene node a static mesh follows (an FBX or USD file's: a prop parented to a bone moves
        with it), else a new root node placed at the mesh's world matrix (ignored by skinning,
        as glTF says)."""
        nodes = self.scene.nodes
        on = None
        if mesh.node_index is not None and 0 <= mesh.node_index < len(nodes):
            on = nodes[mesh.node_index]
        elif mesh.skeleton is None and mesh.world_node is not None:
            on = mesh.world_node
        host = None if on is None else self.node_index.get(id(on))
        if host is not None and host not in self.mesh_node.values():
            self.mesh_node[id(mesh)] = host
            return host
        host = len(self.node_specs)
        self.node_specs.append({"name": mesh.name})
        self.sources.append(None)
        if mesh.skeleton is None and not _is_default(mesh.world_matrix, np.eye(4)):
            scaling, quaternion, position = decompose_one(mesh.world_matrix)
            spec = self.node_specs[host]
            spec.update(translation=[float(v) for v in position], rotation=[float(v) for v in quaternion],
                        scale=[float(v) for v in scaling])
        self.mesh_node[id(mesh)] = host
        return host

    # --- skins -----------------------------------------------------------------------------------
    def _skin(self, skeleton) -> tuple[int, np.ndarray | None]:
        """(skin index, the final matrices a pose applied as bind bakes, else None)."""
        bones = skeleton.bones
        by_index = {}
        for position, bone in enumerate(bones):
            index = position if bone.index is None else bone.index
            if index >= 0:
                by_index[index] = bone
        count = max(by_index, default=-1) + 1
        if sorted(by_index) != list(range(count)):
            raise ViewerError(f"skeleton {skeleton.name!r}: its bones' indices are not 0..{count - 1}")
        joints = [by_index[i] for i in range(count)]
        skeleton.prepare()
        # The joints' matrices gathered from the skeleton's rows in one index each (the values
        # bone.get_absolute_matrix() and the rest return one bone at a time).
        batch, slots = skeleton.batch, [bone.slot for bone in joints]
        if self.apply_pose_as_bind:
            absolute = batch.rows.absolute[slots]
            finals = batch.rows.final[slots]
            inverse = np.linalg.inv(absolute)
        else:
            batch.update_bind()
            inverse = batch.rows.absolute_inverse_bind[slots]
            finals = None
            loaded = skeleton.inverse_bind_matrices
            if loaded is not None and loaded.shape == inverse.shape and _all_close(loaded, inverse):
                inverse = loaded  # the file's own numbers, exactly, while the bind is unchanged
        inverse = np.array(inverse, dtype=np.float64)
        inverse[:, :3, 3], inverse[:, 3, 3] = 0.0, 1.0  # exactly affine, as glTF requires (not 1e-17)
        if not fits(inverse):
            bad = joints[first_bad_row(inverse.reshape(count, -1))]
            raise ViewerError(f"bone {bad.name!r}: its bind holds {OUT_OF_RANGE}; nothing was written")
        spec = {"name": skeleton.name, "joints": [self.node_index[id(bone.get_pose_target())] for bone in joints],
                # Row-vector matrices read row by row are glTF's column-major ones.
                "inverseBindMatrices": self.out.floats(inverse.reshape(count, 16))}
        roots = [bone for bone in bones if bone.get_parent() is None]
        if len(roots) == 1:
            spec["skeleton"] = self.node_index[id(roots[0].get_pose_target())]
        return self.out.add("skins", spec), finals

    # --- meshes ----------------------------------------------------------------------------------
    def _mesh(self, mesh, skin) -> int:
        positions, normals, tangents = mesh.positions, mesh.normals, mesh.tangents
        targets = mesh.morph_targets
        deltas = None if targets is None else (targets.positions, targets.normals, targets.tangents)
        if skin is not None and skin[1] is not None:  # apply pose as bind: the drawn shape
            positions, normals, tangents, deltas = _posed(mesh, skin[1])
        spec = {"name": mesh.name, "primitives": []}
        for submesh, (start, end) in zip(mesh.submeshes, _vertex_ranges(mesh)):
            rows = slice(start, end)
            indices = mesh.indices[submesh.first_index: submesh.first_index + submesh.index_count].astype(np.int64)
            attributes = {"POSITION": self.out.floats(positions[rows], ARRAY_BUFFER, bounds=True)}
            part_normals = np.asarray(normals[rows], dtype=np.float32)
            if len(part_normals) and np.abs(np.linalg.norm(part_normals, axis=1) - 1).max() <= UNIT_TOLERANCE:
                attributes["NORMAL"] = self.out.floats(part_normals, ARRAY_BUFFER)
            textures = submesh.pbr.textures()
            sets = {slot.texcoord for slot in textures.values()}
            for k, texcoords in enumerate((mesh.texcoords[rows], mesh.texcoords1[rows])):
                if k in sets or texcoords.any():
                    attributes[f"TEXCOORD_{k}"] = self.out.floats(texcoords, ARRAY_BUFFER)
            if tangents is not None and "normal_texture" in textures and "NORMAL" in attributes:
                part_tangents = np.asarray(tangents[rows], dtype=np.float32)
                if np.abs(np.linalg.norm(part_tangents[:, :3], axis=1) - 1).max() <= UNIT_TOLERANCE:
                    attributes["TANGENT"] = self.out.floats(part_tangents, ARRAY_BUFFER)
            colors = mesh.colors[rows]
            if not (colors == 1).all():
                attributes["COLOR_0"] = self.out.floats(colors, ARRAY_BUFFER)
            if mesh.skeleton is not None:
                self._skin_attributes(attributes, mesh.joints[rows], mesh.weights[rows])
            primitive = {"attributes": attributes, "mode": 4}
            count = end - start
            index_type = (np.uint16, UNSIGNED_SHORT) if count < 65535 else (np.uint32, UNSIGNED_INT)
            primitive["indices"] = self.out.accessor((indices - start).astype(index_type[0]), index_type[1],
                                                     ELEMENT_ARRAY_BUFFER)
            material = self._material(submesh)
            if material is not None:
                primitive["material"] = material
            if deltas is not None:
                primitive["targets"] = []
                for t in range(len(targets)):
                    target = {"POSITION": self.out.floats(deltas[0][t, rows], ARRAY_BUFFER, bounds=True)}
                    if deltas[1] is not None and "NORMAL" in attributes:
                        target["NORMAL"] = self.out.floats(deltas[1][t, rows], ARRAY_BUFFER)
                    if deltas[2] is not None and "TANGENT" in attributes:
                        target["TANGENT"] = self.out.floats(deltas[2][t, rows], ARRAY_BUFFER)
                    primitive["targets"].append(target)
            spec["primitives"].append(primitive)
        if targets is not None:
            spec["weights"] = [float(w) for w in targets.default_weights]
            spec["extras"] = {"targetNames": list(targets.names)}
        return self.out.add("meshes", spec)

    def _skin_attributes(self, attributes: dict, joints: np.ndarray, weights: np.ndarray) -> None:
        """JOINTS_0/WEIGHTS_0, and JOINTS_1/WEIGHTS_1 where a vertex has more than 4 influences.
        Weights are the normalized ones the model draws; unused slots are joint 0, weight 0."""
        joints, weights = _merged_influences(joints, weights)
        width = 8 if joints.shape[1] == 8 and (weights[:, 4:] > 0).any() else 4
        component = (np.uint8, UNSIGNED_BYTE) if joints.max(initial=0) < 256 else (np.uint16, UNSIGNED_SHORT)
        for k in range(width // 4):
            columns = slice(4 * k, 4 * k + 4)
            attributes[f"JOINTS_{k}"] = self.out.accessor(joints[:, columns].astype(component[0]), component[1],
                                                          ARRAY_BUFFER)
            attributes[f"WEIGHTS_{k}"] = self.out.floats(weights[:, columns], ARRAY_BUFFER)

    def _weights(self, mesh) -> list[float]:
        weights = mesh.morph_weights
        if self.apply_pose_as_bind and mesh.skeleton is not None:
            return [0.0] * len(weights)  # the morph is baked into the vertices
        return [float(w) for w in weights]

    def _material(self, submesh) -> int | None:
        """The submesh's Material as drawn (glTF's defaults left out), written once however many
        primitives use it; None for glTF's default material (a primitive without one)."""
        material = submesh.pbr
        textures = material.textures()  # (without those whose image does not decode)
        spec = {"name": material.name} if material.name else {}
        pbr = {}
        if not _is_default(material.base_color_factor, (1, 1, 1, 1)):
            pbr["baseColorFactor"] = [float(v) for v in material.base_color_factor]
        if "base_color_texture" in textures:
            pbr["baseColorTexture"] = self._texture_info(submesh, "base_color_texture")
        if material.metallic_factor != 1:
            pbr["metallicFactor"] = float(material.metallic_factor)
        if material.roughness_factor != 1:
            pbr["roughnessFactor"] = float(material.roughness_factor)
        if "metallic_roughness_texture" in textures:
            pbr["metallicRoughnessTexture"] = self._texture_info(submesh, "metallic_roughness_texture")
        spec["pbrMetallicRoughness"] = pbr
        if "normal_texture" in textures:
            spec["normalTexture"] = self._texture_info(submesh, "normal_texture", "scale")
        if "occlusion_texture" in textures:
            spec["occlusionTexture"] = self._texture_info(submesh, "occlusion_texture", "strength")
        if "emissive_texture" in textures:
            spec["emissiveTexture"] = self._texture_info(submesh, "emissive_texture")
        if not _is_default(material.emissive_factor, (0, 0, 0)):
            spec["emissiveFactor"] = [float(v) for v in material.emissive_factor]
        if material.alpha_mode != "OPAQUE":
            spec["alphaMode"] = material.alpha_mode
            if material.alpha_mode == "MASK" and material.alpha_cutoff != 0.5:
                spec["alphaCutoff"] = float(material.alpha_cutoff)
        if material.double_sided:
            spec["doubleSided"] = True
        extensions = {}
        if material.emissive_strength != 1:
            extensions["KHR_materials_emissive_strength"] = {"emissiveStrength": float(material.emissive_strength)}
        if material.unlit:
            extensions["KHR_materials_unlit"] = {}
        if extensions:
            spec["extensions"] = extensions
            self.out.extensions.update(extensions)
        if spec == {"pbrMetallicRoughness": {}}:
            return None
        key = json.dumps(spec, sort_keys=True)
        if key not in self.materials:
            self.materials[key] = self.out.add("materials", spec)
        return self.materials[key]

    def _texture_info(self, submesh, slot_name: str, scale_name: str | None = None) -> dict:
        """A textureInfo for one of the submesh's texture slots: the texture (image and sampler,
        each written once), texCoord, the scale or strength, KHR_texture_transform."""
        slot = getattr(submesh.pbr, slot_name)
        data = submesh.image_data if slot_name == "base_color_texture" else submesh.texture_data.get(slot_name)
        image_key = id(data[0]) if data is not None else id(slot.image)
        if image_key not in self.images:
            if data is not None:
                encoded, mime = data
            else:  # an image made in memory: encoded once, as PNG
                from PIL import Image

                buffer = io.BytesIO()
                Image.fromarray(np.asarray(slot.image, dtype=np.uint8)).save(buffer, "PNG")
                encoded, mime = buffer.getvalue(), "image/png"
            self.images[image_key] = self.out.image(encoded, mime)
        sampler = None
        if slot.sampler != Sampler():
            fields = (("magFilter", slot.sampler.mag_filter), ("minFilter", slot.sampler.min_filter),
                      ("wrapS", slot.sampler.wrap_s), ("wrapT", slot.sampler.wrap_t))
            sampler_spec = {name: int(value) for name, value in fields if value is not None}
            key = tuple(sampler_spec.items())
            if key not in self.samplers:
                self.samplers[key] = self.out.add("samplers", sampler_spec)
            sampler = self.samplers[key]
        texture_key = (self.images[image_key], sampler)
        if texture_key not in self.textures:
            texture = {"source": self.images[image_key]}
            if sampler is not None:
                texture["sampler"] = sampler
            self.textures[texture_key] = self.out.add("textures", texture)
        info = {"index": self.textures[texture_key]}
        if slot.texcoord:
            info["texCoord"] = int(slot.texcoord)
        if scale_name is not None and slot.scale != 1:
            info[scale_name] = float(slot.scale)
        if slot.transform is not None and not _is_default(slot.transform, np.eye(3)):
            info["extensions"] = {"KHR_texture_transform": _texture_transform(slot.transform)}
            self.out.extensions.add("KHR_texture_transform")
        return info

    # --- clips -----------------------------------------------------------------------------------
    def _clip(self, clip) -> None:
        # Each channel's target, keyframe times and (rows, width) values; then every channel's
        # times and values converted to float32 at once and cut into accessors (a numpy call per
        # small array cost more than the rest of the export on a many-node model).
        targets, times, values = [], [], []
        for channel in clip.channels:
            node = self.node_index.get(id(channel.node))
            if node is None:
                continue  # a node outside the scene
            targets.append((node, channel.path, channel.interpolation))
            times.append(channel.times)
            values.append(channel.values)  # CUBICSPLINE: in, value, out per key; rows of its last axis
        if isinstance(clip, MorphAnimationClip):
            for channel in clip.morph_channels:
                node = self.mesh_node.get(id(channel.meshes[0]))
                if node is None:
                    continue
                targets.append((node, "weights", channel.interpolation))
                times.append(np.asarray(channel.times).reshape(-1))
                values.append(np.asarray(channel.values).reshape(-1, 1))  # a SCALAR per target per key
        if not targets:
            return
        time_counts = [len(t) for t in times]
        time_ends = list(accumulate(time_counts))
        all_times = np.concatenate(times, dtype=np.float32)
        time_bytes = all_times.tobytes()
        # Every channel's first and last key time (its input's bounds), in two calls.
        starts = np.minimum(np.subtract(time_ends, time_counts), max(len(all_times) - 1, 0))
        lows = np.minimum.reduceat(all_times, starts).tolist() if len(all_times) else []
        highs = np.maximum.reduceat(all_times, starts).tolist() if len(all_times) else []
        value_sizes = [v.size for v in values]
        value_ends = list(accumulate(value_sizes))
        value_bytes = np.concatenate([v.reshape(-1) for v in values], dtype=np.float32).tobytes()
        samplers, channels = [], []
        inputs: dict[bytes, int] = {}  # keyframe times shared by channels are written once
        out = self.out
        # Builder.keyframes for every accessor, inlined (two per channel, thousands in a big rig).
        if out.keys_view is None:
            out.keys_view = out.add("bufferViews", {"buffer": 0})
        view, accessors, chunks = out.keys_view, out.document.setdefault("accessors", []), out.keys_chunks
        length = out.keys_length
        for k, (node, path, interpolation) in enumerate(targets):
            count, end = time_counts[k], time_ends[k]
            key = time_bytes[4 * (end - count): 4 * end]
            input_index = inputs.get(key)
            if input_index is None:
                spec = {"bufferView": view, "byteOffset": length, "componentType": FLOAT, "count": count,
                        "type": "SCALAR"}
                if count:
                    spec["min"], spec["max"] = [lows[k]], [highs[k]]
                chunks.append(key)
                length += len(key)
                input_index = inputs[key] = len(accessors)
                accessors.append(spec)
            width, size, value_end = values[k].shape[-1], value_sizes[k], value_ends[k]
            data = value_bytes[4 * (value_end - size): 4 * value_end]
            accessors.append({"bufferView": view, "byteOffset": length, "componentType": FLOAT, "count": size // width,
                              "type": TYPES[width]})
            chunks.append(data)
            length += len(data)
            samplers.append({"input": input_index, "output": len(accessors) - 1, "interpolation": interpolation})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": path}})
        out.keys_length = length
        out.add("animations", {"name": clip.name, "channels": channels, "samplers": samplers})


def _all_close(a: np.ndarray, b: np.ndarray) -> bool:
    """np.allclose(a, b, rtol=1e-5, atol=1e-6), its test written out for finite numbers (a few
    numpy calls instead of isclose's dozen); np.allclose itself where any is not finite."""
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return bool(np.allclose(a, b, rtol=1e-5, atol=1e-6))
    return bool((np.abs(a - b) <= 1e-6 + 1e-5 * np.abs(b)).all())


def _merged_influences(joints: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A joint listed twice for a vertex (glTF forbids it) as one influence with the two weights
    summed; the same skinning. Slots left unused are joint 0 with weight 0."""
    joints, weights = joints.copy(), weights.copy()
    # A joint listed twice with weight shows as two equal neighbours once each vertex's weighted
    # joints are sorted (the slots without weight made distinct negatives): one sort, not a test
    # per pair of slots.
    keyed = np.sort(np.where(weights > 0, joints, -1 - np.arange(joints.shape[1])), axis=1)
    if not (keyed[:, 1:] == keyed[:, :-1]).any():
        joints[weights == 0] = 0  # nothing to merge (most meshes)
        return joints, weights
    for k in range(1, joints.shape[1]):
        for j in range(k):
            twice = (joints[:, k] == joints[:, j]) & (weights[:, k] > 0) & (weights[:, j] > 0)
            if twice.any():
                weights[twice, j] += weights[twice, k]
                weights[twice, k] = 0
    joints[weights == 0] = 0
    return joints, weights


def _vertex_ranges(mesh) -> list[tuple[int, int]]:
    """Per submesh, the vertices its primitive is written with: the loader's primitives own
    consecutive vertex ranges, found back here; submeshes that share vertices each get all."""
    count = len(mesh.positions)
    submeshes = mesh.submeshes
    if len(submeshes) == 1:
        return [(0, count)]
    lows, highs = [], []
    for submesh in submeshes:
        part = mesh.indices[submesh.first_index: submesh.first_index + submesh.index_count]
        lows.append(int(part.min()) if part.size else None)
        highs.append(int(part.max()) + 1 if part.size else None)
    starts = [0] + [lows[i] for i in range(1, len(submeshes))]
    ends = starts[1:] + [count]
    if all(lo is not None for lo in lows) and all(a <= lo and hi <= b for a, b, lo, hi in zip(starts, ends, lows, highs)):
        return list(zip(starts, ends))
    return [(0, count)] * len(submeshes)


def _texture_transform(matrix: np.ndarray) -> dict:
    """KHR_texture_transform's offset, rotation and scale (defaults left out) of the 3x3 that
    ``material.uv_transform`` makes of them: translation x rotation x scale."""
    matrix = np.asarray(matrix, dtype=np.float64)
    rotation = float(np.arctan2(-matrix[1, 0], matrix[0, 0]))
    c, s = np.cos(rotation), np.sin(rotation)
    scale = [float(np.hypot(matrix[0, 0], matrix[1, 0])), float(s * matrix[0, 1] + c * matrix[1, 1])]
    result = {}
    if matrix[0, 2] or matrix[1, 2]:
        result["offset"] = [float(matrix[0, 2]), float(matrix[1, 2])]
    if rotation:
        result["rotation"] = rotation
    if scale != [1.0, 1.0]:
        result["scale"] = scale
    return result


def _posed(mesh, finals: np.ndarray):
    """(positions, normals, tangents or None, (position, normal, tangent deltas)) of a skinned
    mesh as drawn now, in the skeleton root's space: morphed by the current weights, then skinned
    by ``finals``. Morph deltas turn with each vertex's blended matrix, so targets still move the
    posed shape."""
    positions, normals, tangents = mesh.morphed(tangents=True)
    posed, posed_normals, *posed_tangents = skin(positions, normals, mesh.joints, mesh.weights, finals, tangents,
                                                 mode=mesh.skinning)
    posed_tangents = posed_tangents[0] if posed_tangents else None
    deltas = None
    if mesh.morph_targets is not None:
        if mesh.skinning == "dq":
            blend = dq_blend(mesh.joints, mesh.weights, bone_dual_quaternions(finals))[:, :3, :3]
        else:
            blend = np.zeros((len(positions), 3, 3))
            for k in range(mesh.joints.shape[1]):
                blend += mesh.weights[:, k, None, None] * finals[mesh.joints[:, k], :3, :3]
        targets = mesh.morph_targets
        moved = np.einsum("tvi,vij->tvj", targets.positions, blend)
        moved_normals = None if targets.normals is None else np.einsum("tvi,vij->tvj", targets.normals, blend)
        moved_tangents = None if targets.tangents is None else np.einsum("tvi,vij->tvj", targets.tangents, blend)
        deltas = (moved, moved_normals, moved_tangents)
    if not (fits(posed) and np.isfinite(posed_normals).all()):
        raise ViewerError(f"mesh {mesh.name!r}: its posed shape holds {OUT_OF_RANGE} (a pose too large for "
                          "float32); nothing was written")
    return posed, posed_normals, posed_tangents, deltas

