"""glTF 2.0 loader (.gltf with embedded or external buffers, and .glb).

It builds the model: TransformNodes for every node, a Skeleton per skin whose bones are linked
to the joint nodes (Babylon's glTF mode), SkinnedMeshes with their materials, and animation
clips. Everything read from the file is checked before it is used; problems raise one
ViewerError that names the file and the object.

Checking happens in three places, in this order:

1. The container: file size, GLB header and chunks, JSON syntax.
2. The JSON structure (``_Validator``): every field the loader reads has the right type,
   range and length, and every reference points at an existing object. Only those fields
   are kept, so nothing later can meet a value of a surprising type.
3. The data: buffers, views and accessors fit each other, sizes stay within limits before
   anything is allocated, numbers are finite, joint indices fit their skin, keyframe times
   increase, inverse bind matrices invert, the node graph is a forest.

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
import math
import re
import struct
import warnings
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from .errors import ViewerError
from .model import Bone, Scene, Skeleton, SkinnedMesh, TransformNode
from .model.animation import AnimationChannel, AnimationClip
from .model.mesh import Submesh

log = logging.getLogger("boneviewer")

COMPONENT_TYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}
COMPONENT_NAMES = {5120: "BYTE", 5121: "UNSIGNED_BYTE", 5122: "SHORT", 5123: "UNSIGNED_SHORT", 5125: "UNSIGNED_INT",
                   5126: "FLOAT"}
TYPE_SIZES = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
GLB_JSON, GLB_BIN = 0x4E4F534A, 0x004E4942
# Limits, checked before anything is allocated: the elements of one accessor, the bytes of
# one file, buffer or accessor, all accessor data and decoded images of one model, the JSON
# text, image sides, and the depth of the node hierarchy.
MAX_ELEMENTS = 50_000_000
MAX_BYTES = 1 << 30
MAX_TOTAL_BYTES = 1 << 30
MAX_JSON_BYTES = 256 << 20  # parsed into Python objects, which take several times the text
MAX_IMAGE_SIDE = 16384
MAX_DEPTH = 4096
# Extensions whose data this loader cannot read: a file that requires one is refused.
UNREADABLE_EXTENSIONS = {"KHR_draco_mesh_compression", "EXT_meshopt_compression", "KHR_meshopt_compression"}
ATTRIBUTE_NAME = re.compile(r"(POSITION|NORMAL|TANGENT|(TEXCOORD|COLOR|JOINTS|WEIGHTS)_[0-9]{1,3})")
# The wording of the last line of defence in load_gltf (an unexpected exception wrapped).
FALLBACK = "malformed glTF"


def load_gltf(path) -> Scene:
    """Load a .gltf or .glb file; anything wrong with it raises one ViewerError."""
    path = Path(path)
    try:
        with np.errstate(all="ignore"):  # overflow is checked explicitly where it matters
            return GltfReader(path).scene()
    except ViewerError as error:
        if str(error).startswith(f"{path}: "):
            raise
        # A check inside the model classes: give it the file name like every other message.
        raise ViewerError(f"{path}: {error}") from None
    except Exception as error:  # the last line of defence (MemoryError, RecursionError too), not the main one
        raise ViewerError(f"{path}: {FALLBACK} ({type(error).__name__}: {_short(error, 200)})") from error


def _short(value, limit: int = 60) -> str:
    """repr (or str for exceptions) of a value from the file, cut to a readable length."""
    text = str(value) if isinstance(value, BaseException) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)



def _sum_range(low: float, high: float) -> str:
    """"0.5" or "1.001..1.755": enough digits to tell an off sum from 1."""
    low_text, high_text = f"{float(low):.4g}", f"{float(high):.4g}"
    return low_text if low_text == high_text else f"{low_text}..{high_text}"

class _Validator:
    """Checks the JSON document's structure and returns the fields the loader reads.

    A schema entry is field -> (kind, argument, required). Kinds: "ref" (an index into the
    top-level array named by the argument), "refs" (an array of such indices, non-empty when
    required), "uint" (an integer >= argument), "bool", "str", "enum" (one of the argument's
    values), "nums" (finite numbers, exactly argument many when not None), "stride", "obj"
    (an object checked against the argument's schema), "objs" (a non-empty array of those),
    "attrs" (an object of attribute name -> accessor index).
    """

    REQ = True
    SCHEMAS = {
        "buffers": {"uri": ("str", None, False), "byteLength": ("uint", 1, REQ)},
        "bufferViews": {"buffer": ("ref", "buffers", REQ), "byteOffset": ("uint", 0, False),
                        "byteLength": ("uint", 1, REQ), "byteStride": ("stride", None, False)},
        "accessors": {"bufferView": ("ref", "bufferViews", False), "byteOffset": ("uint", 0, False),
                      "componentType": ("enum", tuple(COMPONENT_TYPES), REQ), "normalized": ("bool", None, False),
                      "count": ("uint", 1, REQ), "type": ("enum", tuple(TYPE_SIZES), REQ),
                      "sparse": ("obj", {
                          "count": ("uint", 1, REQ),
                          "indices": ("obj", {"bufferView": ("ref", "bufferViews", REQ),
                                              "byteOffset": ("uint", 0, False),
                                              "componentType": ("enum", (5121, 5123, 5125), REQ)}, REQ),
                          "values": ("obj", {"bufferView": ("ref", "bufferViews", REQ),
                                             "byteOffset": ("uint", 0, False)}, REQ)}, False)},
        "nodes": {"children": ("refs", "nodes", False), "mesh": ("ref", "meshes", False),
                  "skin": ("ref", "skins", False), "matrix": ("nums", 16, False), "rotation": ("nums", 4, False),
                  "scale": ("nums", 3, False), "translation": ("nums", 3, False)},
        "meshes": {"primitives": ("objs", {
            "attributes": ("attrs", None, REQ), "indices": ("ref", "accessors", False),
            "material": ("ref", "materials", False), "mode": ("enum", (0, 1, 2, 3, 4, 5, 6), False)}, REQ)},
        "materials": {"pbrMetallicRoughness": ("obj", {
            "baseColorFactor": ("nums", 4, False),
            "baseColorTexture": ("obj", {"index": ("ref", "textures", REQ), "texCoord": ("uint", 0, False)}, False)},
            False)},
        "textures": {"source": ("ref", "images", False)},
        "images": {"uri": ("str", None, False), "bufferView": ("ref", "bufferViews", False),
                   "mimeType": ("str", None, False)},
        "skins": {"joints": ("refs", "nodes", REQ), "inverseBindMatrices": ("ref", "accessors", False),
                  "skeleton": ("ref", "nodes", False)},
        "animations": {
            "channels": ("objs", {"sampler": ("uint", 0, REQ), "target": ("obj", {
                "node": ("ref", "nodes", False),
                "path": ("enum", ("translation", "rotation", "scale", "weights"), REQ)}, REQ)}, REQ),
            "samplers": ("objs", {"input": ("ref", "accessors", REQ), "output": ("ref", "accessors", REQ),
                                  "interpolation": ("enum", ("LINEAR", "STEP", "CUBICSPLINE"), False)}, REQ)},
        "scenes": {"nodes": ("refs", "nodes", False)},
    }
    LABELS = {"buffers": "buffer", "bufferViews": "bufferView", "accessors": "accessor", "nodes": "node",
              "meshes": "mesh", "materials": "material", "textures": "texture", "images": "image", "skins": "skin",
              "animations": "animation", "scenes": "scene"}

    def __init__(self, reader: "GltfReader", document):
        self.reader = reader
        self.document = document
        self.lengths = {}

    def fail(self, message: str):
        raise self.reader.error(message)

    def clean(self) -> dict:
        document = self.document
        if not isinstance(document, dict):
            self.fail("not valid glTF JSON (the top level is not an object)")
        asset = document.get("asset")
        if not isinstance(asset, dict):
            self.fail("asset must be an object with a version; this is not a glTF 2.0 file")
        version = asset.get("version")
        if not isinstance(version, str) or not version.startswith("2."):
            shown = "missing" if version is None else _short(version)
            self.fail(f"asset.version is {shown}; only glTF 2.0 is supported")
        required = document.get("extensionsRequired", [])
        if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
            self.fail("extensionsRequired must be an array of extension names")
        unreadable = sorted(set(required) & UNREADABLE_EXTENSIONS)
        if unreadable:
            self.fail(f"the file requires extension {unreadable[0]}, which boneviewer cannot read")
        arrays = {}
        for key in self.SCHEMAS:
            value = document.get(key, [])
            if not isinstance(value, list):
                self.fail(f"{key!r} must be an array, got {_short(value)}")
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    self.fail(f"{self.LABELS[key]} {i} must be an object, got {_short(item)}")
            arrays[key] = value
            self.lengths[key] = len(value)
        clean = {"asset": {"version": version}}
        for key, schema in self.SCHEMAS.items():
            label = self.LABELS[key]
            clean[key] = [self.object(item, schema, f"{label} {i}") for i, item in enumerate(arrays[key])]
        if document.get("scene") is not None:
            clean["scene"] = self.field(document["scene"], ("ref", "scenes", False), "the document", "scene")
        for a, animation in enumerate(clean["animations"]):
            for c, channel in enumerate(animation["channels"]):
                if channel["sampler"] >= len(animation["samplers"]):
                    self.fail(f"animation {a} channel {c}: sampler {channel['sampler']} does not exist "
                              f"(the animation has {len(animation['samplers'])} samplers)")
        for s, skin in enumerate(clean["skins"]):
            if len(set(skin["joints"])) != len(skin["joints"]):
                self.fail(f"skin {s}: a node is listed twice among its joints")
        return {key: value for key, value in clean.items() if value != []}

    def object(self, item: dict, schema: dict, what: str) -> dict:
        result = {}
        name = item.get("name")
        if name is not None:
            if not isinstance(name, str):
                self.fail(f"{what}: name must be a string, got {_short(name)}")
            result["name"] = name
        for field, spec in schema.items():
            value = item.get(field)
            if value is None:
                if spec[2]:
                    self.fail(f"{what}: required property {field!r} is missing")
                continue
            result[field] = self.field(value, spec, what, field)
        return result

    def field(self, value, spec, what: str, field: str):
        kind, argument, required = spec
        where = f"{what}: {field}"
        if kind == "ref":
            count = self.lengths[argument]
            if not _is_int(value) or not 0 <= value < count:
                self.fail(f"{where} {_short(value)} does not exist ({count} {argument})")
        elif kind == "refs":
            if not isinstance(value, list) or (required and not value):
                self.fail(f"{where} must be a{' non-empty' if required else 'n'} array of indices, got {_short(value)}")
            for index in value:
                self.field(index, ("ref", argument, True), what, field)
            return list(value)
        elif kind == "uint":
            if not _is_int(value) or value < argument:
                self.fail(f"{where} must be an integer >= {argument}, got {_short(value)}")
        elif kind == "bool":
            if not isinstance(value, bool):
                self.fail(f"{where} must be true or false, got {_short(value)}")
        elif kind == "str":
            if not isinstance(value, str):
                self.fail(f"{where} must be a string, got {_short(value)}")
        elif kind == "enum":
            if isinstance(value, bool) or value not in argument or type(value) is float:
                self.fail(f"{where} must be one of {', '.join(map(str, argument))}; got {_short(value)}")
        elif kind == "nums":
            if (not isinstance(value, list) or (argument is not None and len(value) != argument)
                    or not all(map(_is_number, value))):
                self.fail(f"{where} must be {argument} finite numbers, got {_short(value)}")
            return [float(v) for v in value]
        elif kind == "stride":
            if not _is_int(value) or not 4 <= value <= 252 or value % 4:
                self.fail(f"{where} must be a multiple of 4 from 4 to 252, got {_short(value)}")
        elif kind == "obj":
            if not isinstance(value, dict):
                self.fail(f"{where} must be an object, got {_short(value)}")
            return self.object(value, argument, f"{what} {field}")
        elif kind == "objs":
            if not isinstance(value, list) or not value:
                self.fail(f"{where} must be a non-empty array of objects, got {_short(value)}")
            singular = field[:-1]
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    self.fail(f"{what} {singular} {i} must be an object, got {_short(item)}")
            return [self.object(item, argument, f"{what} {singular} {i}") for i, item in enumerate(value)]
        elif kind == "attrs":
            if not isinstance(value, dict) or not value:
                self.fail(f"{where} must be a non-empty object of accessor indices, got {_short(value)}")
            for name, index in value.items():
                self.field(index, ("ref", "accessors", True), what, f"attribute {_short(name, 40)}")
            # Only the standard attributes are handed on (application-specific ones start with _).
            return {name: index for name, index in value.items() if ATTRIBUTE_NAME.fullmatch(name)}
        return value


class GltfReader:
    def __init__(self, path: Path):
        self.path = path
        try:
            self.folder = path.resolve().parent
        except (OSError, RuntimeError) as error:  # a symlink loop
            raise self.error(f"cannot resolve its folder ({_short(error, 80)})") from None
        self._warnings: dict[str, list] = {}
        self._total_bytes = 0
        raw = self._read_file(path, "the model")
        binary_chunk = None
        if raw[:4] == b"glTF":
            json_bytes, binary_chunk = self._split_glb(raw)
        else:
            json_bytes = raw
        if len(json_bytes) > MAX_JSON_BYTES:
            raise self.error(f"its JSON is {len(json_bytes)} bytes; the limit is {MAX_JSON_BYTES}")
        try:
            document = json.loads(json_bytes.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            glb = " (nor a GLB file: it does not start with 'glTF')" if path.suffix.lower() == ".glb" else ""
            raise self.error(f"not valid glTF JSON{glb} ({_short(error, 120)})") from None
        except RecursionError:
            raise self.error("not valid glTF JSON (nested too deeply)") from None
        except ValueError as error:  # e.g. an integer with too many digits
            raise self.error(f"not valid glTF JSON ({_short(error, 120)})") from None
        # Our validator checks every field the loader reads and keeps only those, with their
        # types right; pygltflib then builds its glTF objects from that clean document.
        self.gltf = _parse_with_pygltflib(_Validator(self, document).clean())
        self.binary_chunk = binary_chunk
        self._buffers: dict[int, bytes] = {}
        self._images: dict[int, np.ndarray] = {}

    def error(self, message: str) -> ViewerError:
        return ViewerError(f"{self.path}: {message}")

    def warn(self, kind: str, message: str) -> None:
        """Collect a tolerated flaw; ``scene()`` logs one line per kind, however often it occurs."""
        self._warnings.setdefault(kind, []).append(message)

    def _flush_warnings(self) -> None:
        for messages in self._warnings.values():
            more = f" (and {len(messages) - 1} more like it)" if len(messages) > 1 else ""
            log.warning("%s: %s%s", self.path, messages[0], more)
        self._warnings.clear()

    def _read_file(self, target: Path, what: str) -> bytes:
        """A regular file's bytes, refusing anything too large to hold (and FIFOs, devices)."""
        try:
            info = target.stat()
            if not target.is_file():
                raise self.error(f"{what}: {target.name!r} is not a regular file")
            if info.st_size > MAX_BYTES:
                raise self.error(f"{what}: {target.name!r} is {info.st_size} bytes; the limit is {MAX_BYTES}")
            return target.read_bytes()
        except OSError as error:
            raise self.error(f"{what}: cannot read {target.name!r}: {error.strerror or error}") from None

    # --- containers and buffers -----------------------------------------------------------------
    def _split_glb(self, raw: bytes):
        if len(raw) < 20:
            raise self.error("GLB file is truncated (shorter than its header)")
        _, version, length = struct.unpack_from("<III", raw, 0)  # magic checked by the caller
        if version != 2:
            raise self.error(f"GLB version {version} is not supported")
        if length != len(raw):
            raise self.error(f"GLB header says {length} bytes but the file has {len(raw)}")
        chunks, offset = [], 12
        while offset < length:
            if offset + 8 > length:
                raise self.error(f"GLB chunk header at byte {offset} is truncated")
            chunk_length, chunk_type = struct.unpack_from("<II", raw, offset)
            start = offset + 8
            if start + chunk_length > length:
                raise self.error(f"GLB chunk {len(chunks)} at byte {offset} claims {chunk_length} bytes, "
                                 f"past the end of the file")
            chunks.append((chunk_type, raw[start:start + chunk_length]))
            offset = start + chunk_length
        if not chunks or chunks[0][0] != GLB_JSON:
            raise self.error("GLB file does not start with a JSON chunk")
        if any(kind == GLB_JSON for kind, _ in chunks[1:]):
            raise self.error("GLB file has more than one JSON chunk")
        binary = next((data for kind, data in chunks[1:] if kind == GLB_BIN), None)
        return chunks[0][1], binary

    def resolve_uri(self, uri: str, what: str) -> Path:
        """An external file, which must lie inside the model's folder: no '..', no absolute
        paths, no URL schemes; nothing is ever fetched from the network."""
        refuse = f"{what}: refusing URI {_short(uri)}"
        path = unquote(uri, errors="strict").replace("\\", "/") if "%" in uri else uri.replace("\\", "/")
        if ":" in uri.split("/")[0] or ":" in path.split("/")[0] or path.startswith("/"):
            raise self.error(f"{refuse}: only relative paths inside the model's folder are read")
        if any(ord(c) < 32 for c in path):
            raise self.error(f"{refuse}: it contains control characters")
        try:
            target = (self.folder / path).resolve()
        except (OSError, RuntimeError, ValueError) as error:
            raise self.error(f"{refuse}: {_short(error, 80)}") from None
        if not target.is_relative_to(self.folder):
            raise self.error(f"{refuse}: it points outside the model's folder")
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
        try:
            target = self.resolve_uri(uri, what)
        except UnicodeDecodeError:
            raise self.error(f"{what}: refusing URI {_short(uri)}: its percent-escapes are not UTF-8") from None
        return self._read_file(target, f"{what} ({_short(uri)})")

    def buffer(self, index: int) -> bytes:
        if index not in self._buffers:
            spec = self.gltf.buffers[index]
            if spec.byteLength > MAX_BYTES:
                raise self.error(f"buffer {index}: byteLength {spec.byteLength} is over the limit of {MAX_BYTES}")
            if spec.uri is None:
                if index != 0 or self.binary_chunk is None:
                    raise self.error(f"buffer {index} has no uri and there is no GLB binary chunk")
                data = self.binary_chunk
            else:
                data = self.read_uri(spec.uri, f"buffer {index}")
            if len(data) < spec.byteLength:
                raise self.error(f"buffer {index} holds {len(data)} bytes but byteLength is {spec.byteLength}")
            self._buffers[index] = data
        return self._buffers[index]

    def buffer_view(self, index: int) -> tuple[bytes, int, int, int | None]:
        """(buffer bytes, offset, length, stride) of a buffer view, checked to fit its buffer."""
        view = self.gltf.bufferViews[index]
        data = self.buffer(view.buffer)
        offset, length = view.byteOffset or 0, view.byteLength
        declared = self.gltf.buffers[view.buffer].byteLength
        if offset + length > declared:
            raise self.error(f"bufferView {index} (bytes {offset}..{offset + length}) lies outside buffer "
                             f"{view.buffer} ({declared} bytes)")
        return data, offset, length, view.byteStride

    def accessor(self, index, what: str = "") -> np.ndarray:
        """Accessor data as an array (count, components), normalized integers as floats."""
        label = f"accessor {index}" + (f" ({what})" if what else "")
        spec = self.gltf.accessors[index]
        dtype = np.dtype(COMPONENT_TYPES[spec.componentType])
        components = TYPE_SIZES[spec.type]
        count = spec.count
        item = dtype.itemsize * components
        if count * components > MAX_ELEMENTS or count * item > MAX_BYTES:
            raise self.error(f"{label}: count {_short(count, 24)} of {spec.type} is too large (the limits are "
                             f"{MAX_ELEMENTS} elements and {MAX_BYTES} bytes per accessor)")
        if spec.type in ("MAT2", "MAT3") and dtype.itemsize < 4:
            raise self.error(f"{label}: {spec.type} of {COMPONENT_NAMES[spec.componentType]} is not supported")
        self._total_bytes += count * item
        if self._total_bytes > MAX_TOTAL_BYTES:
            raise self.error(f"{label}: the model's accessors add up to more than {MAX_TOTAL_BYTES} bytes")
        if spec.bufferView is None:
            array = np.zeros((count, components), dtype)
        else:
            data, view_offset, view_length, stride = self.buffer_view(spec.bufferView)
            stride = stride or item
            offset = spec.byteOffset or 0
            needed = offset + stride * (count - 1) + item
            if stride < item:
                raise self.error(f"{label}: bufferView {spec.bufferView} has byteStride {stride}, less than the "
                                 f"{item} bytes of one element")
            if needed > view_length:
                raise self.error(f"{label}: {count} elements of {item} bytes (stride {stride}) from byte {offset} do "
                                 f"not fit bufferView {spec.bufferView} ({view_length} bytes)")
            raw = np.frombuffer(data, np.uint8, count=needed, offset=view_offset)
            rows = np.lib.stride_tricks.as_strided(raw[offset:], shape=(count, item), strides=(stride, 1))
            array = rows.copy().view(dtype).reshape(count, components)
        if spec.sparse is not None:
            array = self._apply_sparse(array.copy(), spec.sparse, label, dtype, components)
        if spec.normalized and np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            array = np.maximum(array.astype(np.float32) / info.max, -1.0)
        if np.issubdtype(array.dtype, np.floating):
            bad = ~np.isfinite(array)
            if bad.any():
                row = int(np.flatnonzero(bad.any(axis=1))[0])
                raise self.error(f"{label}: element {row} contains NaN or infinity")
        return array

    def _apply_sparse(self, array, sparse, label, dtype, components):
        count = sparse.count
        if count > len(array):
            raise self.error(f"{label}: sparse count {count} is more than the accessor's {len(array)} elements")
        index_type = np.dtype(COMPONENT_TYPES[sparse.indices.componentType])
        data, offset, length, _ = self.buffer_view(sparse.indices.bufferView)
        start = sparse.indices.byteOffset or 0
        if start + count * index_type.itemsize > length:
            raise self.error(f"{label}: sparse indices do not fit bufferView {sparse.indices.bufferView}")
        indices = np.frombuffer(data, index_type, count=count, offset=offset + start)
        if indices.max() >= len(array):
            raise self.error(f"{label}: sparse index {int(indices.max())} is past the accessor's {len(array)} elements")
        data, offset, length, _ = self.buffer_view(sparse.values.bufferView)
        start = sparse.values.byteOffset or 0
        if start + count * components * dtype.itemsize > length:
            raise self.error(f"{label}: sparse values do not fit bufferView {sparse.values.bufferView}")
        values = np.frombuffer(data, dtype, count=count * components, offset=offset + start)
        array[indices] = values.reshape(count, components)
        return array

    def _accessor_kind(self, index: int, what: str, types, components=None, normalized=None) -> None:
        """Refuse an accessor whose type or componentType does not suit its use."""
        spec = self.gltf.accessors[index]
        label = f"accessor {index} ({what})"
        if spec.type not in types:
            raise self.error(f"{label}: type {spec.type} is not allowed here (expected {' or '.join(types)})")
        if components is not None and spec.componentType not in components:
            allowed = " or ".join(COMPONENT_NAMES[c] for c in components)
            raise self.error(f"{label}: componentType {COMPONENT_NAMES[spec.componentType]} is not allowed here "
                             f"(expected {allowed})")
        if normalized is False and spec.normalized:
            raise self.error(f"{label}: must not be normalized")

    # --- scene ----------------------------------------------------------------------------------
    def scene(self) -> Scene:
        gltf = self.gltf
        specs = gltf.nodes or []
        nodes = [TransformNode(spec.name or f"node{i}") for i, spec in enumerate(specs)]
        parent_of, link_order = {}, {}
        for i, spec in enumerate(specs):
            for child in spec.children or []:
                if parent_of.get(child) == i:
                    raise self.error(f"node {i} lists child {child} twice")
                if child in parent_of:
                    raise self.error(f"node {child} has two parents (nodes {parent_of[child]} and {i})")
                parent_of[child] = i
                link_order[child] = len(link_order)
        self.parent_of = parent_of
        self.depth = self._depths(len(specs))
        # Link deepest first, so each link's cycle check in TransformNode stops at once; then
        # restore the children's order as the file lists it.
        for child in sorted(parent_of, key=lambda n: -self.depth[n]):
            nodes[child].parent = nodes[parent_of[child]]
        position = {id(node): i for i, node in enumerate(nodes)}
        for node in nodes:
            if len(node.children) > 1:
                node.children.sort(key=lambda c: link_order[position[id(c)]])
        for i, spec in enumerate(specs):
            self._set_node_transform(nodes[i], spec, i)
        self.nodes = nodes
        self.world = self._world_matrices()

        skeletons = {}
        skinned, static = [], []
        for i, spec in enumerate(specs):
            if spec.mesh is None:
                continue
            if spec.skin is not None:
                if spec.skin not in skeletons:
                    skeletons[spec.skin] = self._skeleton(spec.skin)
                skeleton, root_parent, joint_count = skeletons[spec.skin]
                mesh = self._mesh(spec.mesh, i, skeleton, joint_count, spec.skin)
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
        try:
            scene = Scene(self.path.name, skinned, nodes=nodes, animations=animations, static_meshes=static)
        except ViewerError as error:
            raise self.error(str(error)) from None
        self._flush_warnings()
        return scene

    def _depths(self, count: int) -> dict[int, int]:
        """Each node's depth in the hierarchy, refusing cycles; linear in the number of nodes."""
        depth, walked_from = {}, {}
        for start in range(count):
            path, n = [], start
            while n is not None and n not in depth:
                if walked_from.get(n) == start:
                    raise self.error(f"node {n} is its own ancestor: the node hierarchy has a cycle")
                walked_from[n] = start
                path.append(n)
                n = self.parent_of.get(n)
            d = -1 if n is None else depth[n]
            for m in reversed(path):
                d += 1
                depth[m] = d
            if d > MAX_DEPTH:
                raise self.error(f"node {start} is {d} levels deep; the limit is {MAX_DEPTH}")
        return depth

    def _world_matrices(self) -> list[np.ndarray]:
        """World matrices of every node (parents first), refusing transforms that overflow."""
        world = [None] * len(self.nodes)
        for n in sorted(range(len(self.nodes)), key=self.depth.__getitem__):
            local = self.nodes[n].get_local_matrix()
            parent = self.parent_of.get(n)
            world[n] = local if parent is None else local @ world[parent]
            if not np.all(np.isfinite(world[n])):
                raise self.error(f"node {n} ({self.nodes[n].name!r}): its world transform overflows "
                                 f"(the numbers in its transform or its ancestors' are too large)")
        return world

    def _set_node_transform(self, node: TransformNode, spec, index: int) -> None:
        what = f"node {index} ({node.name!r})"
        try:
            if spec.matrix is not None and list(spec.matrix) != [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]:
                matrix = np.asarray(spec.matrix, dtype=np.float64).reshape(4, 4)
                if np.abs(matrix[:, 3] - (0, 0, 0, 1)).max() > 1e-5:
                    raise self.error(f"{what}: matrix is not affine (its last row must be 0, 0, 0, 1)")
                # glTF matrices are column-major, which read row by row is our row-vector layout.
                node.set_local_matrix(matrix)
                return
            rotation = np.asarray(spec.rotation if spec.rotation is not None else (0, 0, 0, 1), dtype=np.float64)
            norm = float(np.linalg.norm(rotation))
            if norm == 0 or not math.isfinite(norm):
                raise self.error(f"{what}: rotation {list(spec.rotation)} is not a rotation quaternion")
            if abs(norm - 1) > 1e-3:
                self.warn("node rotation", f"{what}: rotation is not a unit quaternion (length {norm:.4g}); normalized")
                rotation = rotation / norm
            node.set_trs(spec.translation if spec.translation is not None else (0, 0, 0), rotation,
                         spec.scale if spec.scale is not None else (1, 1, 1))
        except ViewerError as error:
            if str(error).startswith(f"{self.path}: "):
                raise
            raise self.error(f"{what}: {str(error).split(': ', 1)[-1]}") from None

    def _skeleton(self, skin_index: int):
        """(Skeleton, node the mesh is placed under, joint count) for a skin."""
        skin = self.gltf.skins[skin_index]
        joints = list(skin.joints)
        what = f"skin {skin_index}"
        if skin.inverseBindMatrices is not None:
            accessor = skin.inverseBindMatrices
            self._accessor_kind(accessor, f"{what} inverseBindMatrices", ("MAT4",), (5126,))
            ibm = self.accessor(accessor, f"{what} inverseBindMatrices")
            if len(ibm) < len(joints):
                raise self.error(f"{what}: inverseBindMatrices (accessor {accessor}) has {len(ibm)} MAT4s for "
                                 f"{len(joints)} joints")
            # Column-major MAT4 read row by row is our row-vector layout.
            inverse_binds = ibm[: len(joints)].astype(np.float64).reshape(-1, 4, 4)
        else:
            self.warn("no inverse binds", f"{what} has no inverseBindMatrices; using identity")
            inverse_binds = np.broadcast_to(np.eye(4), (len(joints), 4, 4))

        # Every ancestor of every joint (walks stop at nodes already seen: linear time), and
        # how many joints lie under each: the common ancestors are those above all of them.
        visited = set()
        for joint in joints:
            n = joint
            while n is not None and n not in visited:
                visited.add(n)
                n = self.parent_of.get(n)
        below = dict.fromkeys(visited, 0)
        for joint in joints:
            below[joint] += 1
        for n in sorted(visited, key=lambda n: -self.depth[n]):
            parent = self.parent_of.get(n)
            if parent is not None:
                below[parent] += below[n]
        common = [n for n in visited if below[n] == len(joints)]
        # The skeleton root: skin.skeleton when it is a common ancestor of every joint, else
        # the nearest common ancestor (None when the joints lie in separate trees).
        nearest = max(common, key=self.depth.__getitem__, default=None)
        root = skin.skeleton if skin.skeleton in common else nearest
        if skin.skeleton is not None and skin.skeleton != root:
            self.warn("skeleton root", f"{what}: skeleton node {skin.skeleton} is not a common root of its joints; "
                      f"using {root}")
        # Bones: every joint and every node between a joint and the root (index -1, not
        # uploaded), parents first.
        members = visited if root is None else {n for n in visited if self.depth[n] >= self.depth[root]}
        order = sorted(members, key=lambda n: (self.depth[n], n))
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
                    absolute_binds[n] = None
                if absolute_binds[n] is None or not np.all(np.isfinite(absolute_binds[n])):
                    raise self.error(f"{what} joint {joint_row[n]} (node {n}, {self.nodes[n].name!r}): its inverse "
                                     f"bind matrix is singular") from None
            else:
                absolute_binds[n] = np.eye(4)
            try:
                bind = (absolute_binds[n] if parent_bone is None
                        else absolute_binds[n] @ np.linalg.inv(absolute_binds[parent]))
                bone = Bone(self.nodes[n].name, skeleton, parent_bone, local_matrix=self.nodes[n].get_local_matrix(),
                            bind_matrix=bind, index=joint_row.get(n, -1))
            except (ViewerError, np.linalg.LinAlgError) as error:
                joint = f"joint {joint_row[n]} (node {n})" if n in joint_row else f"node {n}"
                raise self.error(f"{what} {joint}: {error}") from None
            bone.link_transform_node(self.nodes[n])
            bones[n] = bone
        root_parent = None if root is None else self.parent_of.get(root)
        return skeleton, (None if root_parent is None else self.nodes[root_parent]), len(joints)

    def _mesh(self, mesh_index: int, node_index: int, skeleton, joint_count: int = 0, skin_index=None) -> SkinnedMesh:
        spec = self.gltf.meshes[mesh_index]
        parts = {"positions": [], "normals": [], "texcoords": [], "colors": [], "joints": [], "weights": [],
                 "indices": []}
        submeshes, vertex_offset, index_offset = [], 0, 0
        has_normals = True
        for p, primitive in enumerate(spec.primitives):
            what = f"mesh {mesh_index} primitive {p}"
            mode = 4 if primitive.mode is None else primitive.mode
            if mode not in (4, 5, 6):
                self.warn("mode", f"{what} draws points or lines (mode {mode}); skipped")
                continue
            attributes = primitive.attributes
            if attributes.POSITION is None:
                raise self.error(f"{what} has no POSITION")
            self._accessor_kind(attributes.POSITION, f"{what} POSITION", ("VEC3",))
            positions = self.accessor(attributes.POSITION, f"{what} POSITION")
            count = len(positions)
            if primitive.indices is not None:
                self._accessor_kind(primitive.indices, f"{what} indices", ("SCALAR",), (5121, 5123, 5125), False)
                indices = self.accessor(primitive.indices, f"{what} indices").reshape(-1)
                if int(indices.max()) >= count:
                    raise self.error(f"accessor {primitive.indices} ({what} indices): index {int(indices.max())} "
                                     f"is past the {count} vertices of POSITION (accessor {attributes.POSITION})")
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
                joints, weights = self._skin_attributes(attributes, count, what, joint_count, skin_index)
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
                bad = sums[off]
                self.warn("weights", f"mesh {mesh_index}: {int(off.sum())} of {len(sums)} vertices have weights that "
                          f"do not sum to 1 (sums {_sum_range(bad.min(), bad.max())}); renormalized")
        try:
            return SkinnedMesh(spec.name or f"mesh{mesh_index}", joined["positions"], joined["indices"], skeleton,
                               joints=joined["joints"], weights=weights,
                               normals=joined["normals"] if has_normals else None, texcoords=joined["texcoords"],
                               colors=joined["colors"], submeshes=submeshes, node_index=node_index)
        except ViewerError as error:
            raise self.error(f"mesh {mesh_index} (node {node_index}): {error}") from None

    def _optional(self, index, count, width, what):
        if index is None:
            return None
        array = self.accessor(index, what).astype(np.float32)
        if array.shape != (count, width):
            raise self.error(f"accessor {index} ({what}): shape {array.shape} does not match {count} vertices of "
                             f"{width} components")
        return array

    def _colors(self, index, count, what):
        if index is None:
            return np.ones((count, 4), np.float32)
        colors = self.accessor(index, what).astype(np.float32)
        if colors.shape == (count, 3):
            colors = np.c_[colors, np.ones(count, np.float32)]
        if colors.shape != (count, 4):
            raise self.error(f"accessor {index} ({what}): expected {count} VEC3 or VEC4 colors")
        return colors

    def _skin_attributes(self, attributes, count, what, joint_count, skin_index):
        joints, weights = [], []
        for k in (0, 1):
            # pygltflib keeps attributes it has no field for (JOINTS_1...) as plain attributes.
            joint_index = getattr(attributes, f"JOINTS_{k}", None)
            weight_index = getattr(attributes, f"WEIGHTS_{k}", None)
            if joint_index is None and weight_index is None:
                break
            if joint_index is None or weight_index is None:
                raise self.error(f"{what}: JOINTS_{k} and WEIGHTS_{k} must come together")
            joint_what, weight_what = f"{what} JOINTS_{k}", f"{what} WEIGHTS_{k}"
            self._accessor_kind(joint_index, joint_what, ("VEC4",), (5121, 5123, 5125), False)
            self._accessor_kind(weight_index, weight_what, ("VEC4",))
            j = self.accessor(joint_index, joint_what)
            w = self.accessor(weight_index, weight_what).astype(np.float32)
            for index, array, label in ((joint_index, j, joint_what), (weight_index, w, weight_what)):
                if len(array) != count:
                    raise self.error(f"accessor {index} ({label}): {len(array)} elements for {count} vertices")
            if (w < 0).any():
                v = int(np.flatnonzero((w < 0).any(axis=1))[0])
                raise self.error(f"accessor {weight_index} ({weight_what}): vertex {v} has a negative weight")
            bad = (j >= joint_count) & (w > 0)
            if bad.any():
                v, c = divmod(int(np.flatnonzero(bad)[0]), 4)
                raise self.error(f"accessor {joint_index} ({joint_what}): vertex {v} uses joint {int(j[v, c])}, but "
                                 f"skin {skin_index} has {joint_count} joints")
            joints.append(j.astype(np.int64))
            weights.append(w)
        if not joints:
            raise self.error(f"{what}: a skinned mesh primitive needs JOINTS_0 and WEIGHTS_0")
        joints, weights = np.concatenate(joints, axis=1), np.concatenate(weights, axis=1)
        empty = weights.sum(axis=1) <= 0
        if empty.any():
            raise self.error(f"{what} WEIGHTS: vertex {int(np.flatnonzero(empty)[0])} has no bone weight (all 0)")
        return joints, weights

    def _material(self, index, what):
        """(base color factor, base color image or None, texcoord set) or None."""
        if index is None:
            return None
        pbr = self.gltf.materials[index].pbrMetallicRoughness
        factor = (1.0, 1.0, 1.0, 1.0)
        image, texcoord = None, 0
        if pbr is not None:
            if pbr.baseColorFactor is not None:
                factor = tuple(pbr.baseColorFactor)
            if pbr.baseColorTexture is not None:
                image = self._texture_image(pbr.baseColorTexture.index, f"material {index}")
                texcoord = pbr.baseColorTexture.texCoord or 0
        return factor, image, texcoord

    def _texture_image(self, texture_index, what):
        source = self.gltf.textures[texture_index].source
        if source is None:
            return None  # the image comes from an extension (KTX2, WebP) this viewer does not read
        if source not in self._images:
            spec = self.gltf.images[source]
            if spec.bufferView is not None:
                data, offset, length, _ = self.buffer_view(spec.bufferView)
                raw = data[offset:offset + length]
            elif spec.uri is not None:
                raw = self.read_uri(spec.uri, f"image {source}")
            else:
                raise self.error(f"image {source} has neither uri nor bufferView")
            self._images[source] = self._decode_image(raw, source)
        return self._images[source]

    def _decode_image(self, raw: bytes, source: int) -> np.ndarray:
        from PIL import Image, UnidentifiedImageError

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                with Image.open(io.BytesIO(raw), formats=("PNG", "JPEG")) as opened:
                    width, height = opened.size
                    if width > MAX_IMAGE_SIDE or height > MAX_IMAGE_SIDE:
                        raise self.error(f"image {source} is {width}x{height} pixels; the limit is "
                                         f"{MAX_IMAGE_SIDE}x{MAX_IMAGE_SIDE}")
                    self._total_bytes += width * height * 4
                    if self._total_bytes > MAX_TOTAL_BYTES:
                        raise self.error(f"image {source}: the model's data and images add up to more than "
                                         f"{MAX_TOTAL_BYTES} bytes")
                    return np.asarray(opened.convert("RGBA"))
        except ViewerError:
            raise
        except UnidentifiedImageError:
            raise self.error(f"image {source} is not a PNG or JPEG image") from None
        except Image.DecompressionBombError as error:
            raise self.error(f"image {source} is too large to decode ({_short(error, 120)})") from None
        except Exception as error:  # Pillow's decoders raise many types on corrupt data
            raise self.error(f"image {source} does not decode as PNG or JPEG "
                             f"({type(error).__name__}: {_short(error, 120)})") from None

    def _unit_keyframes(self, quaternions: np.ndarray, what: str) -> np.ndarray:
        """Rotation keys within 1e-3 of unit length are kept as stored (files round them, and
        Babylon keeps them so); ones clearly off are normalized, with one warning."""
        norms = np.linalg.norm(quaternions, axis=1)
        if np.any(norms == 0):
            raise self.error(f"{what}: rotation keyframe {int(np.flatnonzero(norms == 0)[0])} is the zero quaternion")
        off = np.abs(norms - 1.0) > 1e-3
        if off.any():
            self.warn("keyframes", f"{what}: {int(off.sum())} rotation keyframes are not unit quaternions; normalized")
            quaternions = np.where(off[:, None], quaternions / norms[:, None], quaternions)
        return quaternions

    def _animation(self, index: int) -> AnimationClip:
        spec = self.gltf.animations[index]
        name = spec.name or f"animation{index}"
        channels = []
        for c, channel in enumerate(spec.channels):
            target = channel.target
            what = f"animation {index} ({_short(name)}) channel {c}"
            if target.node is None or target.path == "weights":
                continue  # targets of extensions, and morph targets, are not animated; the rest plays
            sampler = spec.samplers[channel.sampler]
            interpolation = sampler.interpolation or "LINEAR"
            inputs, outputs = f"{what} sampler {channel.sampler} input", f"{what} sampler {channel.sampler} output"
            self._accessor_kind(sampler.input, inputs, ("SCALAR",), (5126,))
            width = 4 if target.path == "rotation" else 3
            self._accessor_kind(sampler.output, outputs, (f"VEC{width}",),
                                (5126, 5120, 5121, 5122, 5123) if width == 4 else (5126,))
            times = self.accessor(sampler.input, inputs).astype(np.float64).reshape(-1)
            values = self.accessor(sampler.output, outputs).astype(np.float64)
            step = np.diff(times)
            if (step <= 0).any():
                k = int(np.flatnonzero(step <= 0)[0]) + 1
                raise self.error(f"accessor {sampler.input} ({inputs}): keyframe times must increase, but time {k} "
                                 f"({times[k]:g}) follows {times[k - 1]:g}")
            per_key = 3 if interpolation == "CUBICSPLINE" else 1
            if len(values) != len(times) * per_key:
                raise self.error(f"accessor {sampler.output} ({outputs}): {len(values)} values for {len(times)} "
                                 f"keyframe times ({len(times) * per_key} expected for {interpolation})")
            if target.path == "rotation" and interpolation != "CUBICSPLINE":
                values = self._unit_keyframes(values.reshape(-1, 4), what)
            try:
                channels.append(AnimationChannel(self.nodes[target.node], target.path, times, values, interpolation))
            except ViewerError as error:
                raise self.error(f"{what}: {error}") from None
        return AnimationClip(name, channels)


def _parse_with_pygltflib(clean: dict):
    """pygltflib's GLTF2 of a validated document (from_json builds the nested classes)."""
    from pygltflib import GLTF2

    return GLTF2.from_json(json.dumps(clean))


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
