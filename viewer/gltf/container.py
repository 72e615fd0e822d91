"""The glTF container: the .gltf or .glb file, its JSON (parsed once, then validated), and the
binary data the document points at: buffers (GLB chunk, data: URIs, files inside the model's
folder), buffer views, accessors (sparse ones too) and images.

Every problem raises a ``GltfError`` whose message starts with the file's path; tolerated
flaws are collected with ``warn`` and logged once per kind by ``log_warnings``.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import logging
import re
import stat
import struct
import warnings
import zlib
from pathlib import Path
from urllib.parse import unquote

import numpy as np

try:
    import orjson
except ImportError:  # a dependency, but the loader does not need it
    orjson = None

from ..errors import ViewerError
from ..images import EncodedImage
from . import limits
from .validate import COMPONENT_NAMES, COMPONENT_TYPES, SUPPORTED_EXTENSIONS, TYPE_SIZES, checked_document, short

log = logging.getLogger("boneviewer")

GLB_MAGIC, GLB_JSON, GLB_BIN = b"glTF", 0x4E4F534A, 0x004E4942
COMPRESSION_EXTRA = "pip install 'boneviewer[compression]'"
LONG_INTEGER = re.compile(rb"[0-9]{19}")  # what an integer beyond 64 bits (-2**63 - 1: 19 digits) has
MESHOPT_EXTENSIONS = ("EXT_meshopt_compression", "KHR_meshopt_compression")
DTYPES = {component: np.dtype(name) for component, name in COMPONENT_TYPES.items()}


class GltfError(ViewerError):
    """A problem with a glTF file; the message starts with the file's path."""


class ImageError(GltfError):
    """An image that cannot be read or decoded (not a limit: those stay GltfErrors). A model
    is drawn without the textures that use it; ``detail`` is the message without the path."""

    def __init__(self, message: str, detail: str):
        super().__init__(message)
        self.detail = detail


class GltfFile:
    """One glTF file, read and validated: ``document`` is the checked JSON (plain dicts and
    lists) and ``hierarchy`` its node graph (see ``validate.checked_document``); the methods
    read the data the document points at."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self.folder = path.resolve().parent
        except (OSError, RuntimeError) as error:  # a symlink loop
            raise self.error(f"cannot resolve its folder ({short(error, 80)})") from None
        self._warnings: dict[str, list[str]] = {}
        self._total_bytes = 0
        self._buffers: dict[int, bytes] = {}
        self._decoded_views: dict[int, bytes] = {}
        self._checked_views: dict[int, tuple] = {}  # bufferView -> buffer_view()'s answer (uncompressed views)
        self._provided: dict[int, np.ndarray] = {}  # accessor -> data decoded elsewhere (Draco)
        self._images: dict[int, EncodedImage] = {}
        self._image_errors: dict[int, ImageError] = {}
        self.built_materials: dict[int, tuple] = {}  # material -> what meshes.py built of it, built once
        raw = self._read_file(path, "the model")
        self.binary_chunk = None
        if raw[:4] == GLB_MAGIC:
            json_bytes, self.binary_chunk = self._split_glb(raw)
        else:
            json_bytes = raw
        self.file_bytes, self.json_bytes = len(raw), len(json_bytes)  # what `boneviewer info` reports
        document = self._parse_json(json_bytes, fast=orjson is not None)
        # The document's own extensions as written (the checked document keeps only what the
        # core loader reads): VRM's readers check what they take from it.
        self.raw_extensions = document.get("extensions") if isinstance(document, dict) else None
        try:
            self.document, self.hierarchy = checked_document(document, self.error)
        except GltfError:
            if orjson is None or not LONG_INTEGER.search(json_bytes):
                raise
            # orjson reads an integer beyond 64 bits as a float: json's exact parse is checked
            # again, so the error (or the document) is the one json's parse gives. Such an integer
            # has 19 digits or more; a text without a run of 19 digits parses the same with both,
            # and its error (a 200,000-node chain's depth) stands without the second parse.
            self.document, self.hierarchy = checked_document(self._parse_json(json_bytes, fast=False), self.error)
        unknown = [name for name in self.document["extensionsUsed"] if name not in SUPPORTED_EXTENSIONS]
        if unknown:
            self.warn("extensions", f"uses extension{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}, which "
                      "boneviewer ignores (the model is shown without them)")

    # --- problems -------------------------------------------------------------------------------
    def error(self, message: str) -> GltfError:
        return GltfError(f"{self.path}: {message}")

    def warn(self, kind: str, message: str) -> None:
        """Collect a tolerated flaw; ``log_warnings`` logs one line per kind, however often it occurs."""
        self._warnings.setdefault(kind, []).append(message)

    def log_warnings(self) -> None:
        for messages in self._warnings.values():
            more = f" (and {len(messages) - 1} more like it)" if len(messages) > 1 else ""
            log.warning("%s: %s%s", self.path, messages[0], more)
        self._warnings.clear()

    # --- the file and its JSON ------------------------------------------------------------------
    def _read_file(self, target: Path, what: str) -> bytes:
        """A regular file's bytes, refusing anything too large to hold (and FIFOs, devices)."""
        try:
            info = target.stat()
            if not stat.S_ISREG(info.st_mode):  # is_file()'s answer from the same stat
                raise self.error(f"{what}: {target.name!r} is not a regular file")
            if info.st_size > limits.MAX_BYTES:
                raise self.error(f"{what}: {target.name!r} is {info.st_size} bytes; the limit is {limits.MAX_BYTES}")
            return target.read_bytes()
        except OSError as error:
            raise self.error(f"{what}: cannot read {target.name!r}: {error.strerror or error}") from None

    def _split_glb(self, raw: bytes) -> tuple[bytes, memoryview | None]:
        """(JSON chunk, binary chunk or None) of a GLB file: the binary chunk a view of the
        file's bytes, not a copy (buffers are read through np.frombuffer and slices)."""
        view = memoryview(raw)
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
            chunks.append((chunk_type, view[start:start + chunk_length]))
            offset = start + chunk_length
        if not chunks or chunks[0][0] != GLB_JSON:
            raise self.error("GLB file does not start with a JSON chunk")
        if any(kind == GLB_JSON for kind, _ in chunks[1:]):
            raise self.error("GLB file has more than one JSON chunk")
        binary = next((data for kind, data in chunks[1:] if kind == GLB_BIN), None)
        return bytes(chunks[0][1]), binary

    def _parse_json(self, json_bytes: bytes, fast: bool):
        """The parsed JSON: with ``fast``, orjson's parse where it takes the text (json's, which
        also reads a BOM, NaN, Infinity and lone surrogates, and words the errors, where not)."""
        if len(json_bytes) > limits.MAX_JSON_BYTES:
            raise self.error(f"its JSON is {len(json_bytes)} bytes; the limit is {limits.MAX_JSON_BYTES}")
        if fast:
            try:
                return orjson.loads(json_bytes)
            except orjson.JSONDecodeError:
                pass
        try:
            return json.loads(json_bytes.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            glb = " (nor a GLB file: it does not start with 'glTF')" if self.path.suffix.lower() == ".glb" else ""
            raise self.error(f"not valid glTF JSON{glb} ({short(error, 120)})") from None
        except RecursionError:
            raise self.error("not valid glTF JSON (nested too deeply)") from None
        except ValueError as error:  # e.g. an integer with too many digits
            raise self.error(f"not valid glTF JSON ({short(error, 120)})") from None

    # --- URIs and buffers -----------------------------------------------------------------------
    def resolve_uri(self, uri: str, what: str) -> Path:
        """An external file, which must lie inside the model's folder: no '..', no absolute
        paths, no URL schemes; nothing is ever fetched from the network."""
        refuse = f"{what}: refusing URI {short(uri)}"
        path = unquote(uri, errors="strict").replace("\\", "/") if "%" in uri else uri.replace("\\", "/")
        if ":" in uri.split("/")[0] or ":" in path.split("/")[0] or path.startswith("/"):
            raise self.error(f"{refuse}: only relative paths inside the model's folder are read")
        if any(ord(c) < 32 for c in path):
            raise self.error(f"{refuse}: it contains control characters")
        try:
            target = (self.folder / path).resolve()
        except (OSError, RuntimeError, ValueError) as error:
            raise self.error(f"{refuse}: {short(error, 80)}") from None
        if not target.is_relative_to(self.folder):
            raise self.error(f"{refuse}: it points outside the model's folder")
        return target

    def read_uri(self, uri: str, what: str) -> bytes:
        """The bytes of a base64 data: URI or of a file inside the model's folder."""
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
            raise self.error(f"{what}: refusing URI {short(uri)}: its percent-escapes are not UTF-8") from None
        return self._read_file(target, f"{what} ({short(uri)})")

    def buffer(self, index: int) -> bytes | memoryview:
        if index not in self._buffers:
            spec = self.document["buffers"][index]
            byte_length = spec["byteLength"]
            if byte_length > limits.MAX_BYTES:
                raise self.error(f"buffer {index}: byteLength {byte_length} is over the limit of {limits.MAX_BYTES}")
            uri = spec.get("uri")
            if uri is None:
                if index != 0 or self.binary_chunk is None:
                    raise self.error(f"buffer {index} has no uri and there is no GLB binary chunk")
                data = self.binary_chunk
            else:
                data = self.read_uri(uri, f"buffer {index}")
            if len(data) < byte_length:
                raise self.error(f"buffer {index} holds {len(data)} bytes but byteLength is {byte_length}")
            self._buffers[index] = data
        return self._buffers[index]

    def buffer_view(self, index: int) -> tuple[bytes | memoryview, int, int, int | None]:
        """(buffer bytes, offset, length, stride or None) of a buffer view, checked to fit its buffer.

        A view compressed with EXT_meshopt_compression is decoded (once) and its plain bytes
        returned; the view's own buffer is then only a fallback, which may hold no data.
        """
        checked = self._checked_views.get(index)
        if checked is not None:  # a view's bounds are checked once, however many accessors read it
            return checked
        view = self.document["bufferViews"][index]
        extensions = view.get("extensions")
        compressed = None if not extensions else next(
            (extensions[name] for name in MESHOPT_EXTENSIONS if extensions.get(name) is not None), None)
        if compressed is not None:
            if index not in self._decoded_views:
                self._decoded_views[index] = self._meshopt_view(index, view, compressed)
            data = self._decoded_views[index]
            if len(data) < view["byteLength"]:
                raise self.error(f"bufferView {index}: decoded {len(data)} bytes, byteLength is {view['byteLength']}")
            return data, 0, view["byteLength"], view.get("byteStride")
        data = self.buffer(view["buffer"])
        offset, length = view.get("byteOffset", 0), view["byteLength"]
        declared = self.document["buffers"][view["buffer"]]["byteLength"]
        if offset + length > declared:
            raise self.error(f"bufferView {index} (bytes {offset}..{offset + length}) lies outside buffer "
                             f"{view['buffer']} ({declared} bytes)")
        checked = self._checked_views[index] = (data, offset, length, view.get("byteStride"))
        return checked

    def _meshopt_view(self, index: int, view: dict, spec: dict) -> bytes:
        try:
            import meshopt
        except ImportError:
            raise self.error(f"bufferView {index} is compressed with EXT_meshopt_compression, which needs the "
                             f"meshopt package: {COMPRESSION_EXTRA}") from None
        count, stride = spec["count"], spec["byteStride"]
        if count * stride > limits.MAX_BYTES:
            raise self.error(f"bufferView {index}: {count} x {stride} bytes of meshopt data is over the limit of "
                             f"{limits.MAX_BYTES}")
        data = self.buffer(spec["buffer"])
        offset, length = spec.get("byteOffset", 0), spec["byteLength"]
        if offset + length > len(data):
            raise self.error(f"bufferView {index}: its meshopt data (bytes {offset}..{offset + length}) lies "
                             f"outside buffer {spec['buffer']}")
        self._total_bytes += count * stride
        try:
            decoded = meshopt.decode_gltf_buffer(bytes(data[offset:offset + length]), count, stride, spec["mode"],
                                                 spec.get("filter", "NONE"))
        except Exception as error:  # the decoder's own report of corrupt data
            raise self.error(f"bufferView {index}: meshopt data does not decode ({short(error, 120)})") from None
        return np.ascontiguousarray(decoded).tobytes()

    def provide(self, index: int, array: np.ndarray) -> None:
        """Data for accessor ``index`` decoded from an extension (Draco): ``accessor`` returns it,
        normalized and checked as if it had been read from the accessor's buffer view."""
        self._provided[index] = array

    # --- accessors ------------------------------------------------------------------------------
    def require_accessor_kind(self, index: int, what: str, types, components=None, normalized=None) -> None:
        """Refuse an accessor whose type or componentType does not suit its use."""
        spec = self.document["accessors"][index]
        label = f"accessor {index} ({what})"
        if spec["type"] not in types:
            raise self.error(f"{label}: type {spec['type']} is not allowed here (expected {' or '.join(types)})")
        if components is not None and spec["componentType"] not in components:
            allowed = " or ".join(COMPONENT_NAMES[c] for c in components)
            raise self.error(f"{label}: componentType {COMPONENT_NAMES[spec['componentType']]} is not allowed here "
                             f"(expected {allowed})")
        if normalized is False and spec.get("normalized"):
            raise self.error(f"{label}: must not be normalized")

    def accessor(self, index: int, what: str = "") -> np.ndarray:
        """Accessor data as an array (count, components), normalized integers as floats."""
        label = f"accessor {index}" + (f" ({what})" if what else "")
        spec = self.document["accessors"][index]
        dtype = DTYPES[spec["componentType"]]
        kind = spec["type"]
        components = TYPE_SIZES[kind]
        count = spec["count"]
        item = dtype.itemsize * components
        if count * components > limits.MAX_ELEMENTS or count * item > limits.MAX_BYTES:
            raise self.error(f"{label}: count {short(count, 24)} of {kind} is too large (the limits are "
                             f"{limits.MAX_ELEMENTS} elements and {limits.MAX_BYTES} bytes per accessor)")
        if kind in ("MAT2", "MAT3") and dtype.itemsize < 4:
            raise self.error(f"{label}: {kind} of {COMPONENT_NAMES[spec['componentType']]} is not supported")
        self._total_bytes += count * item
        if self._total_bytes > limits.MAX_TOTAL_BYTES:
            raise self.error(f"{label}: the model's accessors add up to more than {limits.MAX_TOTAL_BYTES} bytes")
        view_index = spec.get("bufferView")
        if index in self._provided:
            array = np.array(self._provided[index])  # each read its own array, as a buffer's are
            if array.shape != (count, components):
                raise self.error(f"{label}: decoded data has shape {array.shape}, the accessor declares {count} "
                                 f"{kind}")
            if array.dtype.kind in "iu":  # raw integers, normalized below as stored ones are
                array = array.astype(dtype)
        elif view_index is None:
            array = np.zeros((count, components), dtype)
        else:
            data, view_offset, view_length, stride = self.buffer_view(view_index)
            stride = stride or item
            offset = spec.get("byteOffset", 0)
            needed = offset + stride * (count - 1) + item
            if stride < item:
                raise self.error(f"{label}: bufferView {view_index} has byteStride {stride}, less than the "
                                 f"{item} bytes of one element")
            if needed > view_length:
                raise self.error(f"{label}: {count} elements of {item} bytes (stride {stride}) from byte {offset} do "
                                 f"not fit bufferView {view_index} ({view_length} bytes)")
            if stride == item:  # tightly packed: the bytes as they are
                array = np.frombuffer(data, dtype, count=count * components, offset=view_offset + offset)
                array = array.reshape(count, components).copy()
            else:
                raw = np.frombuffer(data, np.uint8, count=needed, offset=view_offset)
                rows = np.lib.stride_tricks.as_strided(raw[offset:], shape=(count, item), strides=(stride, 1))
                array = rows.copy().view(dtype).reshape(count, components)
        sparse = spec.get("sparse")
        if sparse is not None:
            array = self._apply_sparse(array.copy(), sparse, label, dtype, components)
        if spec.get("normalized") and array.dtype.kind in "iu":
            info = np.iinfo(dtype)
            array = np.maximum(array.astype(np.float32) / info.max, -1.0)
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            bad = ~np.isfinite(array)
            if bad.any():
                row = int(np.flatnonzero(bad.any(axis=1))[0])
                raise self.error(f"{label}: element {row} contains NaN or infinity")
        return array

    def packed_float_pieces(self, indices: list[int]) -> list[tuple[bytes, int, int]] | None:
        """(buffer bytes, byte offset, number of floats) of each accessor of ``indices``, when all
        are plain FLOAT data packed in uncompressed bufferViews (no stride, sparse values or data
        decoded elsewhere), checked as ``accessor`` checks them and counted in the model's total
        as it counts them; None when any is not, or for any problem (``accessor`` words it). For
        reading many accessors at once (a file's clips: hundreds of channels); the caller checks
        that the numbers are finite."""
        accessors, views, provided = self.document["accessors"], self.document["bufferViews"], self._provided
        checked, max_elements, max_bytes = self._checked_views, limits.MAX_ELEMENTS, limits.MAX_BYTES
        total, pieces = self._total_bytes, []
        for index in indices:
            spec = accessors[index]
            view_index = spec.get("bufferView")
            if (spec["componentType"] != 5126 or view_index is None or "sparse" in spec or spec.get("normalized")
                    or index in provided or views[view_index].get("extensions")):
                return None
            components, count = TYPE_SIZES[spec["type"]], spec["count"]
            item = 4 * components
            total += count * item
            if count * components > max_elements or count * item > max_bytes or total > limits.MAX_TOTAL_BYTES:
                return None
            view = checked.get(view_index) or self.buffer_view(view_index)
            data, view_offset, view_length, stride = view
            offset = spec.get("byteOffset", 0)
            if (stride is not None and stride != item) or offset + count * item > view_length:
                return None
            pieces.append((data, view_offset + offset, count * components))
        self._total_bytes = total
        return pieces

    def _apply_sparse(self, array: np.ndarray, sparse: dict, label: str, dtype, components: int) -> np.ndarray:
        count = sparse["count"]
        if count > len(array):
            raise self.error(f"{label}: sparse count {count} is more than the accessor's {len(array)} elements")
        indices_spec, values_spec = sparse["indices"], sparse["values"]
        index_type = np.dtype(COMPONENT_TYPES[indices_spec["componentType"]])
        data, offset, length, _ = self.buffer_view(indices_spec["bufferView"])
        start = indices_spec.get("byteOffset", 0)
        if start + count * index_type.itemsize > length:
            raise self.error(f"{label}: sparse indices do not fit bufferView {indices_spec['bufferView']}")
        indices = np.frombuffer(data, index_type, count=count, offset=offset + start)
        if indices.max() >= len(array):
            raise self.error(f"{label}: sparse index {int(indices.max())} is past the accessor's {len(array)} elements")
        data, offset, length, _ = self.buffer_view(values_spec["bufferView"])
        start = values_spec.get("byteOffset", 0)
        if start + count * components * dtype.itemsize > length:
            raise self.error(f"{label}: sparse values do not fit bufferView {values_spec['bufferView']}")
        values = np.frombuffer(data, dtype, count=count * components, offset=offset + start)
        array[indices] = values.reshape(count, components)
        return array

    # --- images ---------------------------------------------------------------------------------
    def image(self, index: int, used_by: str = "") -> "EncodedImage":
        """Image ``index`` read and checked but not decoded (an EncodedImage: its pixels are
        decoded on first use), read once. Its bytes are read, its PNG or JPEG header parsed and
        its declared size held to the limits now; an image that cannot be read, or is not a PNG
        or JPEG, raises an ImageError (each time it is asked for); one over the limits, or whose
        bufferView does not fit its buffer, a GltfError. ``used_by`` ("texture 0, material 0
        baseColorTexture") names its first use in the warning of pixels that do not decode."""
        if index in self._image_errors:
            raise self._image_errors[index]
        if index not in self._images:
            spec = self.document["images"][index]
            if spec.get("bufferView") is not None:
                data, offset, length, _ = self.buffer_view(spec["bufferView"])
                raw = data[offset:offset + length]
            elif spec.get("uri") is not None:
                try:
                    raw = self.read_uri(spec["uri"], f"image {index}")
                except GltfError as error:  # a missing file, a refused URI: read nothing, draw without it
                    raise self._image_error(index, str(error)[len(f"{self.path}: "):]) from None
            else:
                raise self._image_error(index, f"image {index} has neither uri nor bufferView")
            raw = bytes(raw)
            self._open_image(raw, index)
            mime = "image/png" if raw[:4] == b"\x89PNG" else "image/jpeg"
            self._images[index] = EncodedImage(self.path, index, raw, mime, used_by)
        return self._images[index]

    def image_data(self, index: int) -> tuple[bytes, str]:
        """Image ``index`` as the file stores it: (its encoded bytes, MIME type)."""
        image = self.image(index)
        return image.data, image.mime

    def _image_error(self, index: int, detail: str) -> ImageError:
        error = self._image_errors[index] = ImageError(f"{self.path}: {detail}", detail)
        return error

    def _open_image(self, raw: bytes, index: int) -> tuple[int, int]:
        """(width, height) of an encoded image, from its header alone (no pixels decoded), held
        to the limits and counted in the model's bytes as the RGBA it decodes to."""
        Image, UnidentifiedImageError = _pil()
        size = header_size(raw)
        if (size is not None and max(size) <= limits.MAX_IMAGE_SIDE
                and (Image.MAX_IMAGE_PIXELS is None or size[0] * size[1] <= Image.MAX_IMAGE_PIXELS)):
            return self._count_image(index, *size)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                with Image.open(io.BytesIO(raw), formats=("PNG", "JPEG")) as opened:
                    width, height = opened.size
        except UnidentifiedImageError:
            raise self._image_error(index, f"image {index} is not a PNG or JPEG image") from None
        except Image.DecompressionBombError as error:
            raise self.error(f"image {index} is too large to decode ({short(error, 120)})") from None
        except Exception as error:  # Pillow's header parsers raise many types on corrupt data
            raise self._image_error(index, f"image {index} does not decode as PNG or JPEG "
                                           f"({type(error).__name__}: {short(error, 120)})") from None
        if width > limits.MAX_IMAGE_SIDE or height > limits.MAX_IMAGE_SIDE:
            raise self.error(f"image {index} is {width}x{height} pixels; the limit is "
                             f"{limits.MAX_IMAGE_SIDE}x{limits.MAX_IMAGE_SIDE}")
        return self._count_image(index, width, height)

    def _count_image(self, index: int, width: int, height: int) -> tuple[int, int]:
        """Count an image in the model's bytes as the RGBA it decodes to."""
        self._total_bytes += width * height * 4
        if self._total_bytes > limits.MAX_TOTAL_BYTES:
            raise self.error(f"image {index}: the model's data and images add up to more than "
                             f"{limits.MAX_TOTAL_BYTES} bytes")
        return width, height


def header_size(raw: bytes) -> tuple[int, int] | None:
    """(width, height) of a well-formed PNG (its IHDR chunk, CRC checked) or JPEG (its first
    start-of-frame segment, walked to through the segments before it), read from those few
    bytes; None for anything else, which Pillow then opens (and words what is wrong). Pillow's
    open of a JPEG also parses its EXIF and more (0.2 ms for CesiumMan's texture, a tenth of
    its whole load) for the two numbers the loader's limits need; it decodes the pixels, and
    refuses pixels that do not decode, when they are first used either way."""
    if raw[:8] == b"\x89PNG\r\n\x1a\n":
        if len(raw) < 33 or raw[8:16] != b"\x00\x00\x00\x0dIHDR" or zlib.crc32(raw[12:29]) != int.from_bytes(raw[29:33],
                                                                                                          "big"):
            return None
        width, height = struct.unpack_from(">II", raw, 16)
        return (width, height) if width and height else None
    if raw[:3] != b"\xff\xd8\xff":
        return None
    offset = 2
    for _ in range(256):  # real files have a dozen segments before the frame; anything else goes to Pillow
        if offset + 4 > len(raw) or raw[offset] != 0xFF:
            return None
        marker = raw[offset + 1]
        if marker == 0xFF:  # a fill byte before a marker
            offset += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xDA:  # a marker without a length, or the scan before any frame
            return None
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # SOF0..SOF15 (not DHT, JPG, DAC)
            if offset + 9 > len(raw):
                return None
            height, width = struct.unpack_from(">HH", raw, offset + 5)
            return (width, height) if width and height else None
        length = int.from_bytes(raw[offset + 2:offset + 4], "big")
        if length < 2:
            return None
        offset += 2 + length
    return None


def _pil():
    """(PIL.Image, PIL.UnidentifiedImageError), imported when a file first has an image (and
    kept: an import statement per image is a lookup through importlib each time)."""
    global _PIL
    if _PIL is None:
        from PIL import Image, UnidentifiedImageError

        _PIL = (Image, UnidentifiedImageError)
    return _PIL


_PIL = None
