"""What a written glTF file holds, recorded so that another machine's file can be compared with
it within a stated tolerance (a plain module, not a test module).

The files save_gltf writes hold floats computed through BLAS, LAPACK and numpy's SIMD loops
(apply_pose_as_bind inverts and multiplies matrices; quaternions are normalized), whose last
bits depend on the CPU: a sha256 recorded on one machine does not hold on another. What the
glTF-Validator and Babylon.js judged depends on the numbers, not on their last bits, so
``fingerprint`` keeps:

- the document's structure exactly (every JSON float replaced by null and every data: URI by its
  media type, then hashed), and its floats in document order;
- for each accessor of integers that are not normalized (joints, indices): a sha256 of its
  elements, exact;
- for each accessor of floats (and normalized integers, as the numbers they stand for): its
  largest magnitude, per-component minimum and maximum, and for each block of ``BLOCK``
  consecutive numbers a weighted sum with fixed pseudo-random weights in [-1, 1) (computed in
  integers, the same everywhere);
- each image's sha256 (images are copied bytes).

``differences`` compares two fingerprints. Tolerance: every float may differ by
``RELATIVE`` (1e-6) of its accessor's largest magnitude (document floats: of the larger of
1 and the number), which is 8 float32 units in the last place at that magnitude; a weighted sum
may then differ by at most that times the sum of its weights' magnitudes (at most ``BLOCK``),
and that is its tolerance. A machine's last-bit noise stays far inside it; a change in what is
written does not: a transform applied or not, one number moved by more than about 2e-4 of its
accessor's largest magnitude, an integer, an image, a key, a name.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from pathlib import Path

import numpy as np

RELATIVE = 1e-6
BLOCK = 256
DTYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}
WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}


def _read(path: Path):
    """(document, [buffer bytes]) of a .glb or .gltf with its external or data: buffers."""
    raw = path.read_bytes()
    binary = None
    if raw[:4] == b"glTF":
        json_length = struct.unpack_from("<I", raw, 12)[0]
        document = json.loads(raw[20:20 + json_length])
        rest = 20 + json_length
        if rest + 8 <= len(raw):
            binary = raw[rest + 8: rest + 8 + struct.unpack_from("<I", raw, rest)[0]]
    else:
        document = json.loads(raw)
    return document, [_uri_bytes(path, item.get("uri"), binary) for item in document.get("buffers", [])]


def _uri_bytes(path: Path, uri, binary):
    if uri is None:
        return binary
    if uri.startswith("data:"):
        return base64.b64decode(uri.split(",", 1)[1])
    return (path.parent / uri).read_bytes()


def _elements(document, buffers, accessor) -> np.ndarray:
    """An accessor's elements, (count, width), in their stored type."""
    dtype, width = np.dtype(DTYPES[accessor["componentType"]]), WIDTHS[accessor["type"]]
    if "bufferView" not in accessor:
        return np.zeros((accessor["count"], width), dtype)
    view = document["bufferViews"][accessor["bufferView"]]
    stride = view.get("byteStride") or dtype.itemsize * width
    start = view.get("byteOffset", 0) + accessor.get("byteOffset", 0)
    return np.ndarray((accessor["count"], width), dtype, buffer=buffers[view["buffer"]], offset=start,
                      strides=(stride, dtype.itemsize)).copy()


def _weights(count: int) -> np.ndarray:
    """(blocks, BLOCK) weights in [-1, 1) for ``count`` numbers, zero past the end, from integer
    arithmetic (the same on every machine)."""
    blocks = -(-count // BLOCK)
    index = np.arange(blocks * BLOCK, dtype=np.uint64)
    weights = ((index * np.uint64(2654435761) + np.uint64(40503)) % np.uint64(2 ** 32)).astype(np.float64)
    weights = weights / 2.0 ** 31 - 1.0
    weights[count:] = 0.0
    return weights.reshape(blocks, BLOCK)


def _block_sums(flat: np.ndarray) -> list[float]:
    weights = _weights(len(flat))
    padded = np.zeros(weights.size)
    padded[:len(flat)] = flat
    return (weights * padded.reshape(weights.shape)).sum(axis=1).tolist()


def _floats_of(document):
    """(the document with every float made null, its floats in order)."""
    floats = []

    def strip(value):
        if isinstance(value, float):
            floats.append(value)
            return None
        if isinstance(value, str) and value.startswith("data:"):  # a buffer's bytes: compared by accessor
            return value.split(",", 1)[0]
        if isinstance(value, dict):
            return {key: strip(item) for key, item in value.items()}
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    return strip(document), floats


def fingerprint(path) -> dict:
    """The recorded form of the glTF file at ``path`` (see the module's text)."""
    path = Path(path)
    document, buffers = _read(path)
    shape, floats = _floats_of(document)
    accessors = []
    for accessor in document.get("accessors", []):
        elements = _elements(document, buffers, accessor)
        if elements.dtype.kind in "iu" and not accessor.get("normalized"):
            accessors.append({"sha256": hashlib.sha256(elements.tobytes()).hexdigest()})
            continue
        values = elements.astype(np.float64)
        if elements.dtype.kind in "iu":
            values /= np.iinfo(elements.dtype).max
        flat = values.reshape(-1)
        accessors.append({
            "elements": len(flat),
            "scale": float(np.abs(flat).max(initial=0.0)),
            "min": values.min(axis=0, initial=np.inf).tolist() if len(values) else [],
            "max": values.max(axis=0, initial=-np.inf).tolist() if len(values) else [],
            "sums": _block_sums(flat),
        })
    images = []
    for image in document.get("images", []):
        if "bufferView" in image:
            view = document["bufferViews"][image["bufferView"]]
            start = view.get("byteOffset", 0)
            data = buffers[view["buffer"]][start:start + view["byteLength"]]
        else:
            data = _uri_bytes(path, image["uri"], None)
        images.append(hashlib.sha256(data).hexdigest())
    structure = json.dumps(shape, sort_keys=True, separators=(",", ":")).encode()
    return {"structure": hashlib.sha256(structure).hexdigest(), "floats": floats, "accessors": accessors,
            "images": images}


def differences(recorded: dict, written: dict) -> list[str]:
    """What differs between two fingerprints beyond the tolerance; [] when they agree."""
    problems = []
    for key in ("structure", "images"):
        if recorded[key] != written[key]:
            problems.append(f"{key} differs")
    if len(recorded["floats"]) != len(written["floats"]):
        problems.append("the document holds another number of floats")
    else:
        a, b = np.asarray(recorded["floats"], float), np.asarray(written["floats"], float)
        allowed = RELATIVE * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
        for i in np.flatnonzero(~(np.abs(a - b) <= allowed))[:3]:
            problems.append(f"document float {i}: {a[i]!r} was {b[i]!r}")
    if len(recorded["accessors"]) != len(written["accessors"]):
        return problems + ["another number of accessors"]
    for index, (want, got) in enumerate(zip(recorded["accessors"], written["accessors"])):
        if want.keys() != got.keys() or ("sha256" in want and want != got) or want.get("elements") != got.get("elements"):
            problems.append(f"accessor {index}: integers differ")
        elif "scale" in want:
            problems.extend(f"accessor {index}: {what}" for what in _float_differences(want, got))
    return problems


def _float_differences(want: dict, got: dict) -> list[str]:
    tolerance = RELATIVE * max(want["scale"], got["scale"])
    found = []
    if abs(want["scale"] - got["scale"]) > tolerance:
        found.append(f"largest magnitude {got['scale']!r}, recorded {want['scale']!r}")
    for key in ("min", "max"):
        a, b = np.asarray(want[key], float), np.asarray(got[key], float)
        if a.shape != b.shape or not (np.abs(a - b) <= tolerance).all():
            found.append(f"{key} {got[key]}, recorded {want[key]}")
    # Each element within the tolerance moves a weighted sum by at most the tolerance times the
    # sum of the weights' magnitudes (the element count is part of the compared structure).
    weight_totals = np.abs(_weights(want["elements"])).sum(axis=1)
    a, b = np.asarray(want["sums"], float), np.asarray(got["sums"], float)
    if a.shape != b.shape:
        return found + ["another number of blocks"]
    for k in np.flatnonzero(~(np.abs(a - b) <= tolerance * weight_totals))[:3]:
        found.append(f"numbers {k * BLOCK}-{(k + 1) * BLOCK - 1}: weighted sum {b[k]!r}, recorded {a[k]!r}")
    return found
