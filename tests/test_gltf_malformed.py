"""A corpus of malformed and hostile glTF files, built here: each flaw gives one ViewerError
whose message names the file and the object, quickly, without reading outside the folder.

Every file starts as a small valid skinned, animated worm (tests/gltf_cases.py) and has one
thing broken. Node 3 is the mesh node, nodes 0-2 the joints; accessors: 0 POSITION,
1 JOINTS_0, 2 WEIGHTS_0, 3 indices, 4 inverseBindMatrices, 5/6, 7/8, 9/10 the input/output
of animation 0's samplers 0 (rotation of node 1), 1 (rotation of node 2), 2 (translation).
"""

from __future__ import annotations

import base64
import builtins
import io
import json
import logging
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from gltf_cases import build_base
from viewer import ViewerError
from viewer.gltf import FALLBACK, load_gltf

DATA_PREFIX = "data:application/octet-stream;base64,"


class Doc:
    """The base file's JSON and buffer, to break one thing and write back."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.path = build_base(folder)
        self.json = json.loads(self.path.read_text())
        self.blob = bytearray(base64.b64decode(self.json["buffers"][0]["uri"][len(DATA_PREFIX):]))
        self.text = None  # when set, written instead of the JSON

    def put(self, accessor: int, element: int, value, component: int = 0, fmt: str = "<f") -> None:
        spec = self.json["accessors"][accessor]
        view = self.json["bufferViews"][spec["bufferView"]]
        size = struct.calcsize(fmt)
        components = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}[spec["type"]]
        stride = view.get("byteStride") or size * components
        offset = view.get("byteOffset", 0) + spec.get("byteOffset", 0) + element * stride + component * size
        struct.pack_into(fmt, self.blob, offset, value)
        self.json["buffers"][0]["uri"] = DATA_PREFIX + base64.b64encode(bytes(self.blob)).decode()

    def save(self) -> Path:
        if self.text is not None:
            data = self.text if isinstance(self.text, bytes) else self.text.encode()
            self.path.write_bytes(data)
        else:
            self.path.write_text(json.dumps(self.json))  # NaN is written as the literal NaN
        return self.path


def _set(path, value):
    """A mutation that sets doc.json[path...] = value."""
    def mutate(doc):
        target = doc.json
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _delete(path):
    def mutate(doc):
        target = doc.json
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


def _no_mesh_no_bones(doc):
    """The worm without its mesh, its skin or its animation: nothing to show."""
    for key in ("mesh", "skin"):
        del doc.json["nodes"][3][key]
    del doc.json["skins"], doc.json["animations"]


def _text(text):
    def mutate(doc):
        doc.text = text
    return mutate


def _deep_chain(doc):
    nodes = doc.json["nodes"]
    first = len(nodes)
    for i in range(5000):
        nodes.append({"name": f"n{i}", "children": [first + i + 1]} if i < 4999 else {"name": f"n{i}"})
    doc.json["scenes"][0]["nodes"].append(first)


def _png(width: int, height: int) -> bytes:
    """A valid PNG whose header claims width x height (the pixel data is a single row)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" * 5))
            + chunk(b"IEND", b""))


def _textured(image_bytes: bytes | None = None, uri: str | None = None):
    def mutate(doc):
        doc.json["materials"] = [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]
        doc.json["textures"] = [{"source": 0}]
        doc.json["images"] = [{"uri": uri if uri is not None else
                               "data:image/png;base64," + base64.b64encode(image_bytes).decode()}]
        doc.json["meshes"][0]["primitives"][0]["material"] = 0
    return mutate


def _both(*mutations):
    def mutate(doc):
        for m in mutations:
            m(doc)
    return mutate


def _put(accessor, element, value, component=0, fmt="<f"):
    return lambda doc: doc.put(accessor, element, value, component, fmt)


def _put_matrix_zero(doc):
    for k in range(16):
        doc.put(4, 1, 0.0, k)


NAN = float("nan")
S0 = "animation 0 ('linear') channel 0 sampler 0"
PRIMITIVE = ["meshes", 0, "primitives", 0]
CHANNEL0 = ["animations", 0, "channels", 0, "target"]

# (id, mutation, a distinctive part of the message that names the object and the flaw)
JSON_CASES = [
    # the container
    ("not-json", _text("hello, I am not JSON"), "not valid glTF JSON"),
    ("not-utf8", _text(b"\xff\xfe\x00garbage\x80"), "not valid glTF JSON"),
    ("json-array", _text("[1, 2, 3]"), "the top level is not an object"),
    ("json-deep-nesting", _text('{"a": ' * 100_000 + "1" + "}" * 100_000), "not valid glTF JSON"),
    ("json-huge-integer", _text('{"asset": {"version": "2.0"}, "nodes": [{"mesh": ' + "9" * 5000 + "}]}"),
     "not valid glTF JSON"),
    ("asset-missing", _delete(["asset"]), "asset must be an object"),
    ("asset-list", _set(["asset"], ["2.0"]), "asset must be an object"),
    ("version-1", _set(["asset", "version"], "1.0"), "asset.version is '1.0'"),
    ("huge-but-finite-translation", _set(["nodes", 1, "translation"], [1e308, 0, 0]),
     "node 1 ('joint1'): node 'joint1' position: contains NaN or infinity or a magnitude above 1e18: [1e+308, 0.0, 0.0]"),
    ("version-number", _set(["asset", "version"], 2.0), "asset.version is 2.0"),
    ("requires-unknown", _set(["extensionsRequired"], ["EXT_made_up"]),
     "requires extension EXT_made_up, which boneviewer does not support"),
    # wrong types anywhere
    ("nodes-is-5", _set(["nodes"], 5), "'nodes' must be an array, got 5"),
    ("accessor-not-object", _set(["accessors", 0], 7), "accessor 0 must be an object, got 7"),
    ("children-string", _set(["nodes", 0, "children"], "x"), "node 0: children must be an array"),
    ("translation-2", _set(["nodes", 0, "translation"], [1, 2]), "node 0: translation must be 3 finite numbers"),
    ("rotation-string", _set(["nodes", 1, "rotation"], "abc"), "node 1: rotation must be 4 finite numbers"),
    ("scale-null", _set(["nodes", 2, "scale"], [1, 1, None]), "node 2: scale must be 3 finite numbers"),
    ("scale-bool", _set(["nodes", 2, "scale"], [1, True, 1]), "node 2: scale must be 3 finite numbers"),
    ("matrix-nan", _set(["nodes", 0, "matrix"], [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, NAN, 0, 0, 1]),
     "node 0: matrix must be 16 finite numbers"),
    ("translation-infinity", _set(["nodes", 1, "translation"], [float("inf"), 0, 0]),
     "node 1: translation must be 3 finite numbers"),
    ("name-number", _set(["nodes", 0, "name"], 12), "node 0: name must be a string"),
    ("mesh-index-bool", _set(["nodes", 3, "mesh"], True), "node 3: mesh True does not exist"),
    ("joint-index-float", _set(["skins", 0, "joints"], [0, 1.0, 2]), "skin 0: joints 1.0 does not exist"),
    ("scene-string", _set(["scene"], "x"), "scene 'x' does not exist"),
    ("primitives-empty", _set(["meshes", 0, "primitives"], []), "mesh 0: primitives must be a non-empty array"),
    ("attributes-missing", _delete(["meshes", 0, "primitives", 0, "attributes"]),
     "mesh 0 primitive 0: required property 'attributes' is missing"),
    ("attribute-string", _set(["meshes", 0, "primitives", 0, "attributes", "POSITION"], "0"),
     "mesh 0 primitive 0: attribute 'POSITION' '0' does not exist"),
    ("mode-9", _set(["meshes", 0, "primitives", 0, "mode"], 9), "mesh 0 primitive 0: mode must be one of"),
    ("position-missing", _delete(["meshes", 0, "primitives", 0, "attributes", "POSITION"]),
     "mesh 0 primitive 0 has no POSITION"),
    # the node graph
    ("child-missing", _set(["nodes", 2, "children"], [99]), "node 2: children 99 does not exist"),
    ("node-cycle", _set(["nodes", 2, "children"], [0]), "is its own ancestor: the node hierarchy has a cycle"),
    ("node-self-child", _set(["nodes", 3, "children"], [3]), "node 3 is its own ancestor"),
    ("child-twice", _set(["nodes", 0, "children"], [1, 1]), "node 0 lists child 1 twice"),
    ("two-parents", _set(["nodes", 3, "children"], [2]), "node 2 has two parents (nodes 1 and 3)"),
    ("too-deep", _deep_chain, "levels deep; the limit is 4096"),
    ("rotation-zero", _set(["nodes", 1, "rotation"], [0, 0, 0, 0]), "node 1 ('joint1'): rotation"),
    ("matrix-projective", _set(["nodes", 0, "matrix"], [1, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]),
     "node 0 ('joint0'): matrix is not affine"),
    # each scale within the model's range (1e18), their product not
    ("world-overflow", _both(_set(["nodes", 0, "scale"], [1e12] * 3), _set(["nodes", 1, "scale"], [1e12] * 3)),
     "node 1 ('joint1'): its world transform overflows"),
    # (Without its mesh but with its skin or its animation it opens as a BVH file does: a figure.)
    ("no-meshes", _no_mesh_no_bones, "the file has no meshes to show in scene 0, and no skeleton"),
    # buffers, views, accessors
    ("count-negative", _set(["accessors", 0, "count"], -1), "accessor 0: count must be an integer >= 1, got -1"),
    ("count-zero", _set(["accessors", 0, "count"], 0), "accessor 0: count must be an integer >= 1, got 0"),
    ("count-string", _set(["accessors", 0, "count"], "26"), "accessor 0: count must be an integer >= 1, got '26'"),
    ("count-2**31", _set(["accessors", 0, "count"], 2**31),
     "accessor 0 (mesh 0 primitive 0 POSITION): count 2147483648"),
    ("count-10**30", _set(["accessors", 1, "count"], 10**30), "accessor 1 (mesh 0 primitive 0 JOINTS_0): count 1000"),
    ("count-past-view", _set(["accessors", 0, "count"], 27), "accessor 0 (mesh 0 primitive 0 POSITION): 27 elements"),
    ("bufferless-huge", _set(["accessors", 0], {"componentType": 5126, "count": 400_000_000, "type": "VEC3"}),
     "accessor 0 (mesh 0 primitive 0 POSITION): count 400000000 of VEC3 is too large"),
    ("byteOffset-negative", _set(["accessors", 0, "byteOffset"], -4), "accessor 0: byteOffset must be an integer >= 0"),
    ("byteOffset-float", _set(["accessors", 0, "byteOffset"], 1.5), "accessor 0: byteOffset must be an integer >= 0"),
    ("byteOffset-past-view", _set(["accessors", 0, "byteOffset"], 8), "from byte 8 do not fit bufferView 0"),
    ("stride-13", _set(["bufferViews", 0, "byteStride"], 13), "bufferView 0: byteStride must be a multiple of 4"),
    ("stride-256", _set(["bufferViews", 0, "byteStride"], 256), "bufferView 0: byteStride must be a multiple of 4"),
    ("stride-0", _set(["bufferViews", 0, "byteStride"], 0), "bufferView 0: byteStride must be a multiple of 4"),
    ("stride-below-item", _set(["bufferViews", 0, "byteStride"], 8),
     "accessor 0 (mesh 0 primitive 0 POSITION): bufferView 0 has byteStride 8, less than the 12 bytes"),
    ("componentType-5124", _set(["accessors", 0, "componentType"], 5124), "accessor 0: componentType must be one of"),
    ("componentType-float", _set(["accessors", 0, "componentType"], 5126.0),
     "accessor 0: componentType must be one of"),
    ("type-VEC5", _set(["accessors", 0, "type"], "VEC5"), "accessor 0: type must be one of"),
    ("view-missing", _set(["accessors", 0, "bufferView"], 77), "accessor 0: bufferView 77 does not exist"),
    ("view-outside-buffer", _set(["bufferViews", 10, "byteLength"], 10_000),
     "bufferView 10 (bytes 1492..11492) lies outside buffer 0"),
    ("buffer-missing", _set(["bufferViews", 0, "buffer"], 3), "bufferView 0: buffer 3 does not exist"),
    ("buffer-length-absurd", _set(["buffers", 0, "byteLength"], 10**12),
     "buffer 0: byteLength 1000000000000 is over the limit"),
    ("buffer-length-short", _set(["buffers", 0, "byteLength"], 2000),
     "buffer 0 holds 1552 bytes but byteLength is 2000"),
    ("buffer-no-uri", _delete(["buffers", 0, "uri"]), "buffer 0 has no uri and there is no GLB binary chunk"),
    ("base64-garbage", _set(["buffers", 0, "uri"], DATA_PREFIX + "@@not base64@@"),
     "buffer 0: the base64 data does not decode"),
    ("base64-truncated", lambda doc: doc.json["buffers"][0].update(uri=doc.json["buffers"][0]["uri"][:-3]),
     "buffer 0: the base64 data does not decode"),
    ("data-uri-plain", _set(["buffers", 0, "uri"], "data:text/plain,hello"), "buffer 0: only base64 data: URIs"),
    ("sparse-count-too-big", _set(["accessors", 0, "sparse"], {
        "count": 100, "indices": {"bufferView": 3, "componentType": 5123}, "values": {"bufferView": 0}}),
     "accessor 0 (mesh 0 primitive 0 POSITION): sparse count 100 is more than"),
    ("sparse-values-missing", _set(["accessors", 0, "sparse"], {"count": 1, "indices": {"bufferView": 3,
     "componentType": 5123}}),
     "accessor 0 sparse: required property 'values' is missing"),
    ("sparse-index-float", _set(["accessors", 0, "sparse"], {
        "count": 1, "indices": {"bufferView": 3, "componentType": 5126}, "values": {"bufferView": 0}}),
     "accessor 0 sparse indices: componentType must be one of"),
    # vertex data
    ("position-nan", _put(0, 1, NAN, 2), "accessor 0 (mesh 0 primitive 0 POSITION): element 1 contains NaN"),
    ("position-vec2", _set(["accessors", 0, "type"], "VEC2"),
     "accessor 0 (mesh 0 primitive 0 POSITION): type VEC2 is not allowed here"),
    ("indices-float", _set(["accessors", 3, "componentType"], 5126),
     "accessor 3 (mesh 0 primitive 0 indices): componentType FLOAT is not allowed here"),
    ("indices-vec3", _both(_set(["accessors", 3, "type"], "VEC3"), _set(["accessors", 3, "count"], 24)),
     "accessor 3 (mesh 0 primitive 0 indices): type VEC3 is not allowed here"),
    ("index-past-vertices", _put(3, 0, 999, fmt="<H"),
     "accessor 3 (mesh 0 primitive 0 indices): index 999 is past the 26 vertices"),
    ("joints-float", _set(["accessors", 1, "componentType"], 5126),
     "accessor 1 (mesh 0 primitive 0 JOINTS_0): componentType FLOAT is not allowed here"),
    ("joints-normalized", _set(["accessors", 1, "normalized"], True),
     "accessor 1 (mesh 0 primitive 0 JOINTS_0): must not be normalized"),
    ("joint-past-skin", _put(1, 0, 7, 0, "<H"),
     "accessor 1 (mesh 0 primitive 0 JOINTS_0): vertex 0 uses joint 7, but skin 0 has 3 joints"),
    ("joints-without-weights", _delete(["meshes", 0, "primitives", 0, "attributes", "WEIGHTS_0"]),
     "mesh 0 primitive 0: JOINTS_0 and WEIGHTS_0 must come together"),
    ("weight-negative", _put(2, 0, -0.5, 1),
     "accessor 2 (mesh 0 primitive 0 WEIGHTS_0): vertex 0 has a negative weight"),
    ("weights-all-zero", _put(2, 0, 0.0, 0), "mesh 0 primitive 0 WEIGHTS: vertex 0 has no bone weight"),
    ("weights-count", _set(["accessors", 2, "count"], 20),
     "accessor 2 (mesh 0 primitive 0 WEIGHTS_0): 20 elements for 26"),
    # skins
    ("ibm-singular", _put_matrix_zero, "skin 0 joint 1 (node 1, 'joint1'): its inverse bind matrix is singular"),
    ("ibm-nan", _put(4, 2, NAN, 5), "accessor 4 (skin 0 inverseBindMatrices): element 2 contains NaN"),
    ("ibm-ushort", _set(["accessors", 4, "componentType"], 5123),
     "accessor 4 (skin 0 inverseBindMatrices): componentType UNSIGNED_SHORT is not allowed here"),
    ("ibm-too-few", _set(["accessors", 4, "count"], 2),
     "skin 0: inverseBindMatrices (accessor 4) has 2 MAT4s for 3 joints"),
    ("skin-joint-missing", _set(["skins", 0, "joints"], [0, 1, 42]), "skin 0: joints 42 does not exist"),
    ("skin-joint-twice", _set(["skins", 0, "joints"], [0, 1, 1]), "skin 0: a node is listed twice"),
    ("skin-no-joints", _set(["skins", 0, "joints"], []), "skin 0: joints must be a non-empty array"),
    ("skin-missing", _set(["nodes", 3, "skin"], 4), "node 3: skin 4 does not exist"),
    # animations
    ("times-not-increasing", _put(5, 2, 0.5), f"accessor 5 ({S0} input): keyframe times must increase, but time 2"),
    ("time-nan", _put(5, 3, NAN), f"accessor 5 ({S0} input): element 3 contains NaN"),
    ("keyframe-nan", _put(6, 1, NAN, 2), f"accessor 6 ({S0} output): element 1 contains NaN"),
    ("keyframe-zero-quaternion", lambda doc: [doc.put(6, 1, 0.0, k) for k in range(4)],
     "animation 0 ('linear') channel 0: rotation keyframe 1 is the zero quaternion"),
    ("output-count", _set(["accessors", 6, "count"], 4), f"accessor 6 ({S0} output): 4 values for 5 keyframe times"),
    ("output-vec3-for-rotation", _set(["accessors", 6, "type"], "VEC3"),
     f"accessor 6 ({S0} output): type VEC3 is not allowed"),
    ("input-uint", _set(["accessors", 5, "componentType"], 5125),
     f"accessor 5 ({S0} input): componentType UNSIGNED_INT"),
    ("sampler-missing", _set(["animations", 0, "channels", 0, "sampler"], 9),
     "animation 0 channel 0: sampler 9 does not exist"),
    ("target-node-missing", _set(["animations", 0, "channels", 0, "target", "node"], 99),
     "animation 0 channel 0 target: node 99 does not exist"),
    ("target-path-unknown", _set(["animations", 0, "channels", 0, "target", "path"], "color"),
     "animation 0 channel 0 target: path must be one of"),
    ("interpolation-unknown", _set(["animations", 0, "samplers", 0, "interpolation"], "BEZIER"),
     "animation 0 sampler 0: interpolation must be one of"),
    ("channels-not-list", _set(["animations", 0, "channels"], {"0": 1}),
     "animation 0: channels must be a non-empty array"),
    # materials and images
    ("base-color-short", _set(["materials"], [{"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1]}}]),
     "material 0 pbrMetallicRoughness: baseColorFactor must be 4 finite numbers"),
    ("texture-missing", _set(["materials"], [{"pbrMetallicRoughness": {"baseColorTexture": {"index": 3}}}]),
     "material 0 pbrMetallicRoughness baseColorTexture: index 3 does not exist"),
    ("image-too-wide", _textured(_png(20000, 1)), "image 0 is 20000x1 pixels; the limit is 16384x16384"),
    ("image-bomb", _textured(_png(16000, 16000)), "image 0 is too large to decode"),
    # morph targets (accessor 0, the POSITION, serves as a valid target), their weights and channels
    ("targets-not-list", _set(PRIMITIVE + ["targets"], {"POSITION": 0}),
     "mesh 0 primitive 0: targets must be a non-empty array of morph targets"),
    ("targets-empty", _set(PRIMITIVE + ["targets"], []), "mesh 0 primitive 0: targets must be a non-empty array"),
    ("target-not-object", _set(PRIMITIVE + ["targets"], [5]), "mesh 0 primitive 0 target 0 must be an object"),
    ("target-accessor-missing", _set(PRIMITIVE + ["targets"], [{"POSITION": 99}]),
     "mesh 0 primitive 0 target 0: attribute 'POSITION' 99 does not exist"),
    ("target-accessor-bool", _set(PRIMITIVE + ["targets"], [{"NORMAL": True}]),
     "mesh 0 primitive 0 target 0: attribute 'NORMAL' True does not exist"),
    ("target-wrong-type", _set(PRIMITIVE + ["targets"], [{"POSITION": 1}]),
     "accessor 1 (mesh 0 primitive 0 target 0 POSITION): type VEC4 is not allowed here (expected VEC3)"),
    ("target-wrong-count", _both(lambda doc: doc.json["accessors"].append({**doc.json["accessors"][0], "count": 10}),
                                 _set(PRIMITIVE + ["targets"], [{"POSITION": 11}])),
     "accessor 11 (mesh 0 primitive 0 target 0 POSITION): 10 elements for 26 vertices"),
    ("targets-too-many", _set(PRIMITIVE + ["targets"], [{"POSITION": 0}] * 257),
     "mesh 0 primitive 0: 257 morph targets; the limit is 256"),
    ("targets-differ", _both(lambda doc: doc.json["meshes"][0]["primitives"].append(
        {**doc.json["meshes"][0]["primitives"][0], "targets": [{"POSITION": 0}] * 2}),
        _set(PRIMITIVE + ["targets"], [{"POSITION": 0}])),
     "mesh 0 primitive 1: 2 morph targets, but primitive 0 has 1"),
    ("mesh-weights-count", _both(_set(PRIMITIVE + ["targets"], [{"POSITION": 0}]), _set(["meshes", 0, "weights"], [0.5, 1])),
     "mesh 0: weights has 2 values for 1 morph targets"),
    ("mesh-weights-without-targets", _set(["meshes", 0, "weights"], [0.5]), "mesh 0: weights has 1 values for 0 morph"),
    ("mesh-weights-nan", _set(["meshes", 0, "weights"], [NAN]), "mesh 0: weights must be an array of finite numbers"),
    ("mesh-weights-huge", _set(["meshes", 0, "weights"], [0.0] * 300),
     "mesh 0: weights has 300 values; the limit is 256 morph targets"),
    ("node-weights-count", _both(_set(PRIMITIVE + ["targets"], [{"POSITION": 0}]), _set(["nodes", 3, "weights"], [1, 2])),
     "node 3: weights has 2 values for the 1 morph targets of mesh 0"),
    ("node-weights-no-mesh", _set(["nodes", 0, "weights"], [1.0]), "node 0: weights are given, but the node has no mesh"),
    ("node-weights-string", _set(["nodes", 3, "weights"], "0.5"), "node 3: weights must be an array of finite numbers"),
    ("target-names-not-strings", _both(_set(PRIMITIVE + ["targets"], [{"POSITION": 0}]),
                                       _set(["meshes", 0, "extras"], {"targetNames": [1]})),
     "mesh 0: extras.targetNames must be an array of strings"),
    ("weights-channel-vec4", _both(_set(PRIMITIVE + ["targets"], [{"POSITION": 0}]), _set(CHANNEL0, {"node": 3, "path": "weights"})),
     "accessor 6 (animation 0 ('linear') channel 0 sampler 0 output): type VEC4 is not allowed here (expected SCALAR)"),
    ("weights-channel-count", _both(_set(PRIMITIVE + ["targets"], [{"POSITION": 0}] * 2),
                                    _set(CHANNEL0, {"node": 3, "path": "weights"}),
                                    _set(["animations", 0, "samplers", 0, "output"], 5)),
     "accessor 5 (animation 0 ('linear') channel 0 sampler 0 output): 5 values for 5 keyframe times of 2 morph targets "
     "(10 expected for LINEAR)"),
    ("weights-channel-integers", _both(_set(PRIMITIVE + ["targets"], [{"POSITION": 0}]),
                                       _set(CHANNEL0, {"node": 3, "path": "weights"}),
                                       _set(["animations", 0, "samplers", 0, "output"], 3)),
     "accessor 3 (animation 0 ('linear') channel 0 sampler 0 output): integer weights must be normalized"),
]


def _messages_name_the_file(message: str, path: Path) -> None:
    assert message.startswith(f"{path}: "), message
    assert FALLBACK not in message, f"the generic fallback fired: {message}"


@pytest.mark.timeout(10)
@pytest.mark.parametrize("case, mutate, expected", JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_malformed_gltf(case, mutate, expected, tmp_path):
    doc = Doc(tmp_path)
    mutate(doc)
    path = doc.save()
    with pytest.raises(ViewerError) as caught:
        load_gltf(path)
    message = str(caught.value)
    _messages_name_the_file(message, path)
    assert expected in message, message
    assert caught.value.__cause__ is None  # a checked error, not a wrapped exception
    assert "\n" not in message


# Bad material input the model is drawn without (issue 27): one warning line, never an error.
# (A texture over the size limits is still refused above: that is what the file would cost.)
MATERIAL_WARNING_CASES = [
    ("material-missing", _set(["meshes", 0, "primitives", 0, "material"], 5),
     "mesh 0 primitive 0: material 5 does not exist (0 materials); drawn with the default material"),
    ("image-garbage", _textured(b"\x89PNG\r\n\x1a\nthis is not a png at all"), "image 0 is not a PNG or JPEG image"),
    ("image-truncated", _textured(_png(4, 4)), "image 0 does not decode as PNG or JPEG"),
    ("image-gif", _textured(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "image 0 is not a PNG or JPEG image"),
    ("image-no-source", _both(_textured(_png(1, 1)), _set(["images", 0], {"name": "x"})),
     "image 0 has neither uri nor bufferView"),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("case, mutate, expected", MATERIAL_WARNING_CASES, ids=[c[0] for c in MATERIAL_WARNING_CASES])
def test_bad_material_input_loads_with_one_warning(case, mutate, expected, tmp_path, caplog):
    doc = Doc(tmp_path)
    mutate(doc)
    path = doc.save()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="boneviewer"):
        scene = load_gltf(path)
        submesh = scene.skinned_meshes[0].submeshes[0]
        image = submesh.base_color_texture  # pixels are decoded when first read (issue 30): warned then
        assert submesh.base_color_texture is None and submesh.pbr.textures() == {}  # read again: no second line
    lines = [r.getMessage() for r in caplog.records if r.name == "boneviewer"]
    assert len(lines) == 1 and lines[0].startswith(f"{path}: ") and expected in lines[0], lines
    assert image is None


# --- GLB containers ----------------------------------------------------------------------------
def _glb_chunks(raw: bytes):
    chunks, offset = [], 12
    while offset < len(raw):
        length, kind = struct.unpack_from("<II", raw, offset)
        chunks.append((kind, raw[offset + 8:offset + 8 + length]))
        offset += 8 + length
    return chunks


def _glb(chunks, version=2, length=None):
    body = b"".join(struct.pack("<II", len(data), kind) + data for kind, data in chunks)
    return struct.pack("<III", 0x46546C67, version, 12 + len(body) if length is None else length) + body


def _swap(raw):
    return _glb(_glb_chunks(raw)[::-1])


def _patch(offset, fmt, value):
    def mutate(raw):
        raw = bytearray(raw)
        struct.pack_into(fmt, raw, offset, value)
        return bytes(raw)
    return mutate


def _glb_json(edit):
    def mutate(raw):
        (jkind, jdata), *rest = _glb_chunks(raw)
        document = json.loads(jdata)
        edit(document)
        text = json.dumps(document).encode()
        text += b" " * (-len(text) % 4)
        return _glb([(jkind, text), *rest])
    return mutate


GLB_CASES = [
    ("truncated-header", lambda raw: raw[:15], "GLB file is truncated"),
    ("truncated-file", lambda raw: raw[:-100], "GLB header says"),
    ("length-too-small", _patch(8, "<I", 100), "GLB header says 100 bytes"),
    ("length-huge", _patch(8, "<I", 0xFFFFFFFF), "GLB header says 4294967295 bytes"),
    ("version-1", _patch(4, "<I", 1), "GLB version 1 is not supported"),
    ("json-chunk-length-past-end", _patch(12, "<I", 0xFFFFFFF0), "GLB chunk 0 at byte 12 claims 4294967280 bytes"),
    ("bin-chunk-first", _swap, "GLB file does not start with a JSON chunk"),
    ("trailing-partial-chunk", lambda raw: _glb(_glb_chunks(raw), length=len(raw) + 4) + b"\0\0\0\0",
     "GLB chunk header at byte"),
    ("no-bin-chunk", lambda raw: _glb(_glb_chunks(raw)[:1]), "buffer 0 has no uri and there is no GLB binary chunk"),
    ("two-json-chunks", lambda raw: _glb([_glb_chunks(raw)[0], *_glb_chunks(raw)]), "more than one JSON chunk"),
    ("json-chunk-garbage", lambda raw: _glb([(0x4E4F534A, b"\x00\xff" * 8), *_glb_chunks(raw)[1:]]),
     "not valid glTF JSON"),
    ("bin-shorter-than-byteLength", _glb_json(lambda d: d["buffers"][0].update(byteLength=10**6)),
     "buffer 0 holds"),
    ("glb-view-outside", _glb_json(lambda d: d["bufferViews"][0].update(byteOffset=10**6)),
     "bufferView 0 (bytes 1000000..1000312) lies outside buffer 0"),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("case, mutate, expected", GLB_CASES, ids=[c[0] for c in GLB_CASES])
def test_malformed_glb(case, mutate, expected, tmp_path):
    path = build_base(tmp_path, "glb")
    path.write_bytes(mutate(path.read_bytes()))
    with pytest.raises(ViewerError) as caught:
        load_gltf(path)
    message = str(caught.value)
    _messages_name_the_file(message, path)
    assert expected in message, message
    assert caught.value.__cause__ is None


def test_glb_with_json_extension_mismatch_is_named(tmp_path):
    path = tmp_path / "model.glb"
    path.write_bytes(b"PK\x03\x04 this is a zip file")
    with pytest.raises(ViewerError, match=r"model\.glb: not valid glTF JSON \(nor a GLB file"):
        load_gltf(path)


# --- URIs: nothing outside the model's folder is ever opened -----------------------------------
@pytest.fixture
def opened(monkeypatch):
    """Every path opened for reading while loading, through open(), io.open or Path."""
    seen = []
    real_open, real_read_bytes = builtins.open, Path.read_bytes

    def spy_open(file, *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)):
            seen.append(Path(os.fsdecode(file)))
        return real_open(file, *args, **kwargs)

    def spy_read_bytes(self):
        seen.append(Path(self))
        return real_read_bytes(self)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(io, "open", spy_open)
    monkeypatch.setattr(Path, "read_bytes", spy_read_bytes)
    return seen


URI_CASES = [
    ("dot-dot", "../decoy.bin", "refusing URI '../decoy.bin': it points outside the model's folder"),
    ("dot-dot-inside-subfolder", "sub/../../decoy.bin", "it points outside the model's folder"),
    ("absolute", "/etc/passwd", "refusing URI '/etc/passwd': only relative paths"),
    ("absolute-decoy", None, "only relative paths"),  # the decoy's absolute path
    ("file-scheme", "file:///etc/passwd", "refusing URI 'file:///etc/passwd': only relative paths"),
    ("http", "http://example.com/a.bin", "refusing URI 'http://example.com/a.bin': only relative paths"),
    ("windows-drive", "C:\\x.bin", "only relative paths"),
    ("windows-dot-dot", "..\\decoy.bin", "it points outside the model's folder"),
    ("percent-dot-dot", "%2e%2e/decoy.bin", "refusing URI '%2e%2e/decoy.bin': it points outside"),
    ("percent-slash", "%2Fetc%2Fpasswd", "only relative paths"),
    ("percent-scheme", "file%3A%2F%2F%2Fetc%2Fpasswd", "only relative paths"),
    ("percent-null", "a%00.bin", "it contains control characters"),
    ("percent-bad-utf8", "%ff%fe.bin", "its percent-escapes are not UTF-8"),
    ("symlink-out", "link.bin", "refusing URI 'link.bin': it points outside the model's folder"),
    ("symlink-dir-out", "linkdir/decoy.bin", "it points outside the model's folder"),
    ("missing-file", "nope.bin", "cannot read 'nope.bin'"),
    ("a-folder", "sub", "'sub' is not a regular file"),
    ("fifo", "pipe.bin", "'pipe.bin' is not a regular file"),
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("case, uri, expected", URI_CASES, ids=[c[0] for c in URI_CASES])
@pytest.mark.parametrize("what", ["buffer", "image"])
def test_uris_stay_inside_the_folder(case, uri, expected, what, tmp_path, opened, caplog):
    folder = tmp_path / "model"
    folder.mkdir()
    decoy = tmp_path / "decoy.bin"
    decoy.write_bytes(b"secret" * 100)
    (folder / "sub").mkdir()
    (folder / "link.bin").symlink_to(decoy)
    (folder / "linkdir").symlink_to(tmp_path)
    os.mkfifo(folder / "pipe.bin")
    uri = str(decoy) if uri is None else uri
    doc = Doc(folder)
    if what == "buffer":
        doc.json["buffers"][0]["uri"] = uri
        label = "buffer 0"
    else:
        _textured(uri=uri)(doc)
        label = "image 0"
    path = doc.save()
    opened.clear()
    if what == "buffer":
        with pytest.raises(ViewerError) as caught:
            load_gltf(path)
        message = str(caught.value)
        _messages_name_the_file(message, path)
    else:  # a texture that cannot be read: drawn without it, one warning line
        scene, lines = _load_warnings(path, caplog)
        assert len(lines) == 1 and scene.skinned_meshes[0].submeshes[0].base_color_texture is None, lines
        message = lines[0]
    assert f"{label}" in message and expected in message, message
    outside = [p for p in opened if not p.resolve().is_relative_to(folder.resolve())]
    assert not outside, f"opened outside the model's folder: {outside}"
    assert path in opened or path.resolve() in [p.resolve() for p in opened]


def test_external_buffer_inside_the_folder_still_loads(tmp_path, opened):
    folder = tmp_path / "model"
    (folder / "bin").mkdir(parents=True)
    path = build_base(folder, "external")
    (folder / "model.bin").rename(folder / "bin" / "data file.bin")
    document = json.loads(path.read_text())
    document["buffers"][0]["uri"] = "bin/data%20file.bin"
    path.write_text(json.dumps(document))
    opened.clear()
    assert load_gltf(path).skinned_meshes
    assert {p.resolve() for p in opened} == {path.resolve(), (folder / "bin" / "data file.bin").resolve()}


# --- tolerated flaws: one warning line each --------------------------------------------------------
def _load_warnings(path, caplog):
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="boneviewer"):
        scene = load_gltf(path)
    return scene, [r.getMessage() for r in caplog.records if r.name == "boneviewer"]


def test_non_unit_node_rotations_warn_once(tmp_path, caplog):
    doc = Doc(tmp_path)
    for n in range(3):
        doc.json["nodes"][n]["rotation"] = [0, 0, 0, 2.0 + n]
    scene, lines = _load_warnings(doc.save(), caplog)
    assert len(lines) == 1, lines
    assert "node 0 ('joint0'): rotation is not a unit quaternion" in lines[0] and "and 2 more" in lines[0]
    np.testing.assert_allclose(scene.nodes[1].rotation_quaternion, [0, 0, 0, 1])


def test_weights_not_summing_to_one_warn_once(tmp_path, caplog):
    doc = Doc(tmp_path)
    for v in range(26):
        for k in range(4):
            offset = doc.json["bufferViews"][2]["byteOffset"] + (v * 4 + k) * 4
            (w,) = struct.unpack_from("<f", doc.blob, offset)
            doc.put(2, v, w * 3.0, k)
    scene, lines = _load_warnings(doc.save(), caplog)
    assert len(lines) == 1 and "26 of 26 vertices have weights that do not sum to 1" in lines[0], lines
    np.testing.assert_allclose(scene.skinned_meshes[0].weights.sum(axis=1), 1.0, atol=1e-6)


def test_low_weight_sums_warn_with_their_range(tmp_path, caplog):
    # Vertices 0-19 get weights summing to 0.2, 0.22, ... 0.58; the rest keep their sum of 1.
    doc = Doc(tmp_path)
    sums = []
    for v in range(26):
        factor = 0.2 + 0.02 * v if v < 20 else 1.0
        written = []
        for k in range(4):
            offset = doc.json["bufferViews"][2]["byteOffset"] + (v * 4 + k) * 4
            (w,) = struct.unpack_from("<f", doc.blob, offset)
            doc.put(2, v, w * factor, k)
            written.append(struct.unpack_from("<f", doc.blob, offset)[0])
        sums.append(sum(written))
    off = [s for s in sums if abs(s - 1.0) > 1e-3]
    scene, lines = _load_warnings(doc.save(), caplog)
    assert len(off) == 20 and min(off) < 0.25 and max(off) > 0.55
    assert len(lines) == 1 and f"{len(off)} of 26 vertices" in lines[0], lines
    assert f"(sums {min(off):.4g}..{max(off):.4g})" in lines[0], lines
    np.testing.assert_allclose(scene.skinned_meshes[0].weights.sum(axis=1), 1.0, atol=1e-6)


def test_missing_inverse_binds_warn_once(tmp_path, caplog):
    doc = Doc(tmp_path)
    del doc.json["skins"][0]["inverseBindMatrices"]
    doc.json["nodes"].append({"name": "mesh2", "mesh": 0, "skin": 0})
    doc.json["scenes"][0]["nodes"].append(4)
    _, lines = _load_warnings(doc.save(), caplog)
    assert lines == [f"{doc.path}: skin 0 has no inverseBindMatrices; using identity"]


def test_non_unit_keyframes_warn_once(tmp_path, caplog):
    doc = Doc(tmp_path)
    for accessor in (6, 8):
        for key in range(5):
            for k in range(4):
                offset = doc.json["bufferViews"][accessor]["byteOffset"] + (key * 4 + k) * 4
                (q,) = struct.unpack_from("<f", doc.blob, offset)
                doc.put(accessor, key, q * 2.0, k)
    scene, lines = _load_warnings(doc.save(), caplog)
    assert len(lines) == 1 and "5 rotation keyframes are not unit quaternions" in lines[0] and "1 more" in lines[0]
    scene.animations[0].apply(0.3)
    assert abs(np.linalg.norm(scene.nodes[1].rotation_quaternion) - 1) < 1e-6


def test_more_inverse_binds_than_joints_is_accepted(tmp_path):
    doc = Doc(tmp_path)
    doc.json["skins"][0]["joints"] = [0, 1]
    doc.put(1, 0, 0, 0, "<H")  # keep the joints used within the two
    for v in range(26):
        for k in range(4):
            offset = doc.json["bufferViews"][1]["byteOffset"] + (v * 4 + k) * 2
            (j,) = struct.unpack_from("<H", doc.blob, offset)
            doc.put(1, v, min(j, 1), k, "<H")
    assert load_gltf(doc.save()).skinned_meshes[0].skeleton


# --- the command line ------------------------------------------------------------------------------
CLI_CASES = ["nodes-is-5", "node-cycle", "joint-past-skin", "base64-garbage", "count-2**31", "times-not-increasing"]


@pytest.mark.parametrize("case", CLI_CASES)
def test_cli_prints_one_line_and_exits_2(case, tmp_path):
    _, mutate, expected = next(c for c in JSON_CASES if c[0] == case)
    doc = Doc(tmp_path)
    mutate(doc)
    path = doc.save()
    result = subprocess.run([sys.executable, "-m", "viewer.cli", "render", str(path), "--out", str(tmp_path / "x.png")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("boneviewer: error: ") and str(path) in lines[0] and expected in lines[0]
    assert not (tmp_path / "x.png").exists()


def test_cli_hostile_glb_and_uri(tmp_path):
    path = build_base(tmp_path, "glb")
    path.write_bytes(_swap(path.read_bytes()))
    folder = tmp_path / "m"
    folder.mkdir()
    doc = Doc(folder)
    doc.json["buffers"][0]["uri"] = "%2e%2e/model.glb"
    for model in (path, doc.save()):
        result = subprocess.run([sys.executable, "-m", "viewer.cli", "render", str(model), "--out",
                                 str(tmp_path / "x.png")], capture_output=True, text=True, timeout=120)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr


def test_corpus_is_large_and_varied():
    assert len(JSON_CASES) + len(GLB_CASES) + len(URI_CASES) >= 40
    assert len({c[0] for c in JSON_CASES}) == len(JSON_CASES)


# --- limits, with the thresholds lowered so the test files stay small ----------------------------
@pytest.mark.timeout(10)
@pytest.mark.parametrize("limit, value, mode, expected", [
    ("MAX_JSON_BYTES", 1000, "embedded", "its JSON is"),
    ("MAX_BYTES", 6000, "external", "buffer 0 ('model.bin'): 'model.bin' is 10000 bytes; the limit is 6000"),
    ("MAX_BYTES", 1000, "glb", "'model.glb' is"),
    ("MAX_TOTAL_BYTES", 1000, "embedded", "the model's accessors add up to more than 1000 bytes"),
    ("MAX_ELEMENTS", 50, "embedded", "accessor 0 (mesh 0 primitive 0 POSITION): count 26 of VEC3 is too large"),
    ("MAX_DEPTH", 1, "embedded", "node 2 is 2 levels deep; the limit is 1"),
])
def test_limits_refuse_before_allocating(limit, value, mode, expected, tmp_path, monkeypatch):
    import viewer.gltf

    path = build_base(tmp_path, mode)
    if mode == "external":
        with open(tmp_path / "model.bin", "ab") as padded:
            padded.write(bytes(10000 - 1552))
    monkeypatch.setattr(viewer.gltf.limits, limit, value)
    with pytest.raises(ViewerError) as caught:
        load_gltf(path)
    _messages_name_the_file(str(caught.value), path)
    assert expected in str(caught.value)


def test_image_data_counts_towards_the_total(tmp_path, monkeypatch):
    import viewer.gltf

    doc = Doc(tmp_path)
    _textured(_png(64, 64))(doc)
    monkeypatch.setattr(viewer.gltf.limits, "MAX_TOTAL_BYTES", 16000)
    with pytest.raises(ViewerError, match=r"image 0: the model's data and images add up to more than 16000 bytes"):
        load_gltf(doc.save())


def test_the_generic_fallback_names_the_file_and_the_exception(tmp_path, monkeypatch):
    """Only a bug reaches it; it still gives one ViewerError, with the original as its cause."""
    import viewer.gltf

    def broken(*args):
        raise KeyError("surprise")

    path = build_base(tmp_path)
    monkeypatch.setattr(viewer.gltf.scene, "read_clips", broken)
    with pytest.raises(ViewerError) as caught:
        load_gltf(path)
    assert str(caught.value) == f"{path}: {FALLBACK} (KeyError: 'surprise')"
    assert isinstance(caught.value.__cause__, KeyError)


def test_model_file_problems(tmp_path):
    with pytest.raises(ViewerError, match=r"nope\.gltf: the model: cannot read 'nope\.gltf'"):
        load_gltf(tmp_path / "nope.gltf")
    (tmp_path / "dir.gltf").mkdir()
    with pytest.raises(ViewerError, match=r"dir\.gltf: the model: 'dir\.gltf' is not a regular file"):
        load_gltf(tmp_path / "dir.gltf")
    os.mkfifo(tmp_path / "pipe.gltf")
    with pytest.raises(ViewerError, match="not a regular file"):
        load_gltf(tmp_path / "pipe.gltf")
    (tmp_path / "loop.gltf").symlink_to(tmp_path / "loop.gltf")
    with pytest.raises(ViewerError, match=r"loop\.gltf: "):
        load_gltf(tmp_path / "loop.gltf")


def _json_edits():
    def big_count(doc):  # beyond 64 bits: orjson reads it as a float, json as the integer it is
        doc["accessors"][0]["count"] = 10**30
    def big_translation(doc):
        doc["nodes"][0]["translation"] = [10**25, 0, 0]
    def nan_rotation(doc):
        doc["nodes"][1]["rotation"] = [float("nan"), 0.0, 0.0, 1.0]
    def lone_surrogate_name(doc):
        doc["nodes"][0]["name"] = "\ud800bone"
    return {"big count": (big_count, ""), "big translation": (big_translation, ""),
            "NaN rotation": (nan_rotation, ""), "lone surrogate": (lone_surrogate_name, ""),
            "byte order mark": (None, "\ufeff"), "plain": (None, "")}


@pytest.mark.parametrize("edit", list(_json_edits()))
def test_orjsons_parse_gives_what_jsons_gives(edit, tmp_path, monkeypatch):
    """The JSON is parsed by orjson where it takes the text; what only json takes (a BOM, NaN,
    lone surrogates) and integers beyond 64 bits (which orjson reads as floats: the document is
    checked again as json parses it) give the same Scene or the same error as json's parse."""
    from viewer.gltf import container

    change, prefix = _json_edits()[edit]
    path = build_base(tmp_path)
    doc = json.loads(path.read_text())
    if change:
        change(doc)
    path.write_text(prefix + json.dumps(doc))

    def outcome():
        try:
            scene = load_gltf(path)
        except ViewerError as error:
            return str(error)
        return [(n.name, n.position.tolist(), n.rotation_quaternion.tolist()) for n in scene.nodes]

    assert container.orjson is not None
    fast = outcome()
    monkeypatch.setattr(container, "orjson", None)
    assert fast == outcome()
    if edit == "plain" or edit == "byte order mark":
        assert isinstance(fast, list)
    else:
        assert isinstance(fast, str) or edit == "lone surrogate"


def test_a_chain_too_deep_is_refused_after_one_parse(tmp_path, monkeypatch):
    """A node chain deeper than the limit holds no integer beyond 64 bits, so json's second parse
    (which reads those exactly) could not change its error: it is refused after orjson's parse
    alone, with the error json's parse gives."""
    from viewer.gltf import container

    count = 5000
    nodes = [{"children": [i + 1]} for i in range(count - 1)] + [{"name": "the last"}]
    path = tmp_path / "chain.gltf"
    path.write_text(json.dumps({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": nodes}))
    parsed, loads = [], json.loads
    monkeypatch.setattr(container.json, "loads", lambda *args, **kwargs: parsed.append(args) or loads(*args, **kwargs))
    assert container.orjson is not None
    with pytest.raises(ViewerError) as fast:
        load_gltf(path)
    assert "levels deep; the limit is 4096" in str(fast.value) and parsed == []
    monkeypatch.setattr(container, "orjson", None)
    with pytest.raises(ViewerError) as exact:
        load_gltf(path)
    assert str(exact.value) == str(fast.value) and len(parsed) == 1

    # 19 digits (a name here) might be an integer orjson reads as a float: json's parse decides
    nodes[-1]["name"] = "1" * 19
    path.write_text(json.dumps({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": nodes}))
    monkeypatch.setattr(container, "orjson", __import__("orjson"))
    with pytest.raises(ViewerError, match="levels deep"):
        load_gltf(path)
    assert len(parsed) == 2
