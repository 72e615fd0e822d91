"""Validation of a glTF document's JSON, before any of it is used.

``checked_document`` checks every field the loader reads (type, range, length, and that every
reference points at an existing object) and returns a new document of plain dicts and lists
holding only those fields, so nothing later can meet a value of a surprising type. With it
comes the node hierarchy (one parent per node, no cycles, bounded depth), checked first and in
time linear in the number of nodes.
"""

from __future__ import annotations

import math
import re
from typing import Callable, NamedTuple

from . import limits

# An error factory: message -> the exception to raise (it names the file).
Fail = Callable[[str], Exception]

COMPONENT_TYPES = {5120: "int8", 5121: "uint8", 5122: "int16", 5123: "uint16", 5125: "uint32", 5126: "float32"}
COMPONENT_NAMES = {5120: "BYTE", 5121: "UNSIGNED_BYTE", 5122: "SHORT", 5123: "UNSIGNED_SHORT", 5125: "UNSIGNED_INT",
                   5126: "FLOAT"}
TYPE_SIZES = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
# The extensions this loader implements. A file that requires any other is refused (glTF says it
# must not be loaded); one that only uses another loads, with a warning.
SUPPORTED_EXTENSIONS = ("KHR_draco_mesh_compression", "EXT_meshopt_compression", "KHR_meshopt_compression",
                        "KHR_mesh_quantization", "KHR_texture_transform", "KHR_materials_emissive_strength",
                        "KHR_materials_unlit", "KHR_lights_punctual", "VRMC_springBone",
                        "VRMC_springBone_extended_collider", "VRMC_node_constraint",
                        # VRM's: the humanoid map and expressions (gltf/vrm.py); MToon drawn as its base colour
                        "VRMC_vrm", "VRM", "VRMC_materials_mtoon")
MESHOPT = {"buffer": ("ref", "buffers", True), "byteOffset": ("uint", 0, False), "byteLength": ("uint", 1, True),
           "byteStride": ("uint", 1, True), "count": ("uint", 1, True),
           "mode": ("enum", ("ATTRIBUTES", "TRIANGLES", "INDICES"), True),
           "filter": ("enum", ("NONE", "OCTAHEDRAL", "QUATERNION", "EXPONENTIAL", "COLOR"), False)}
# A material's textureInfo (normalTexture and occlusionTexture add their scale and strength).
TEXTURE_INFO = {"index": ("ref", "textures", True), "texCoord": ("uint", 0, False),
                "extensions": ("obj", {"KHR_texture_transform": ("obj", {
                    "offset": ("nums", 2, False), "rotation": ("num", None, False), "scale": ("nums", 2, False),
                    "texCoord": ("uint", 0, False)}, False)}, False)}
# The document-level extensions of VRM avatars kept for gltf/vrm.py.
VRM_EXTENSIONS = ("VRMC_vrm", "VRM", "VRMC_springBone")
# KHR_lights_punctual's lights (the document's extensions), which nodes name by index.
LIGHT = {"type": ("enum", ("directional", "point", "spot"), True), "color": ("nums", 3, False),
         "intensity": ("num", None, False), "range": ("num", None, False),
         "spot": ("obj", {"innerConeAngle": ("num", None, False), "outerConeAngle": ("num", None, False)}, False)}
ATTRIBUTE_NAME = re.compile(r"(POSITION|NORMAL|TANGENT|(TEXCOORD|COLOR|JOINTS|WEIGHTS)_[0-9]{1,3})")

REQUIRED = True
# A schema entry is field -> (kind, argument, required). Kinds: "ref" (an index into the
# top-level array named by the argument), "refs" (an array of such indices, non-empty when
# required), "uint" (an integer >= argument), "bool", "str", "enum" (one of the argument's
# values), "nums" (finite numbers, exactly argument many when not None), "stride", "obj" (an
# object checked against the argument's schema), "objs" (a non-empty array of those), "attrs"
# (an object of attribute name -> accessor index), "ids" (attribute name -> an integer id),
# "num" (one finite number), "targets" (an array of morph targets, each an "attrs" object,
# at most limits.MAX_MORPH_TARGETS), "weights" (finite numbers, at most that many), "extras"
# (application data: only an object's "targetNames" is read, an array of strings).
SCHEMAS = {
    "buffers": {"uri": ("str", None, False), "byteLength": ("uint", 1, REQUIRED)},
    "bufferViews": {"buffer": ("ref", "buffers", REQUIRED), "byteOffset": ("uint", 0, False),
                    "byteLength": ("uint", 1, REQUIRED), "byteStride": ("stride", None, False),
                    "extensions": ("obj", {"EXT_meshopt_compression": ("obj", MESHOPT, False),
                                           "KHR_meshopt_compression": ("obj", MESHOPT, False)}, False)},
    "accessors": {"bufferView": ("ref", "bufferViews", False), "byteOffset": ("uint", 0, False),
                  "componentType": ("enum", tuple(COMPONENT_TYPES), REQUIRED), "normalized": ("bool", None, False),
                  "count": ("uint", 1, REQUIRED), "type": ("enum", tuple(TYPE_SIZES), REQUIRED),
                  "sparse": ("obj", {
                      "count": ("uint", 1, REQUIRED),
                      "indices": ("obj", {"bufferView": ("ref", "bufferViews", REQUIRED),
                                          "byteOffset": ("uint", 0, False),
                                          "componentType": ("enum", (5121, 5123, 5125), REQUIRED)}, REQUIRED),
                      "values": ("obj", {"bufferView": ("ref", "bufferViews", REQUIRED),
                                         "byteOffset": ("uint", 0, False)}, REQUIRED)}, False)},
    "nodes": {"children": ("refs", "nodes", False), "mesh": ("ref", "meshes", False),
              "skin": ("ref", "skins", False), "matrix": ("nums", 16, False), "rotation": ("nums", 4, False),
              "scale": ("nums", 3, False), "translation": ("nums", 3, False),
              "weights": ("weights", None, False),
              "extensions": ("obj", {"KHR_lights_punctual": ("obj", {"light": ("ref", "lights", True)}, False)},
                             False)},
    "meshes": {"primitives": ("objs", {
        "attributes": ("attrs", None, REQUIRED), "indices": ("ref", "accessors", False),
        # A material that does not exist is drawn with the default one (the loader warns).
        "material": ("uint", 0, False), "mode": ("enum", (0, 1, 2, 3, 4, 5, 6), False),
        "extensions": ("obj", {"KHR_draco_mesh_compression": ("obj", {
            "bufferView": ("ref", "bufferViews", REQUIRED), "attributes": ("ids", None, REQUIRED)}, False)},
            False), "targets": ("targets", None, False)}, REQUIRED),
        "weights": ("weights", None, False), "extras": ("extras", None, False)},
    "materials": {
        "pbrMetallicRoughness": ("obj", {
            "baseColorFactor": ("nums", 4, False), "baseColorTexture": ("obj", TEXTURE_INFO, False),
            "metallicFactor": ("num", None, False), "roughnessFactor": ("num", None, False),
            "metallicRoughnessTexture": ("obj", TEXTURE_INFO, False)}, False),
        "normalTexture": ("obj", {**TEXTURE_INFO, "scale": ("num", None, False)}, False),
        "occlusionTexture": ("obj", {**TEXTURE_INFO, "strength": ("num", None, False)}, False),
        "emissiveTexture": ("obj", TEXTURE_INFO, False), "emissiveFactor": ("nums", 3, False),
        "alphaMode": ("enum", ("OPAQUE", "MASK", "BLEND"), False), "alphaCutoff": ("num", None, False),
        "doubleSided": ("bool", None, False),
        "extensions": ("obj", {"KHR_materials_emissive_strength": ("obj", {
            "emissiveStrength": ("num", None, False)}, False), "KHR_materials_unlit": ("obj", {}, False)}, False)},
    "samplers": {"magFilter": ("enum", (9728, 9729), False),
                 "minFilter": ("enum", (9728, 9729, 9984, 9985, 9986, 9987), False),
                 "wrapS": ("enum", (33071, 33648, 10497), False), "wrapT": ("enum", (33071, 33648, 10497), False)},
    "textures": {"source": ("ref", "images", False), "sampler": ("ref", "samplers", False)},
    "images": {"uri": ("str", None, False), "bufferView": ("ref", "bufferViews", False),
               "mimeType": ("str", None, False)},
    "skins": {"joints": ("refs", "nodes", REQUIRED), "inverseBindMatrices": ("ref", "accessors", False),
              "skeleton": ("ref", "nodes", False)},
    "animations": {
        "channels": ("objs", {"sampler": ("uint", 0, REQUIRED), "target": ("obj", {
            "node": ("ref", "nodes", False),
            "path": ("enum", ("translation", "rotation", "scale", "weights"), REQUIRED)}, REQUIRED)}, REQUIRED),
        "samplers": ("objs", {"input": ("ref", "accessors", REQUIRED), "output": ("ref", "accessors", REQUIRED),
                              "interpolation": ("enum", ("LINEAR", "STEP", "CUBICSPLINE"), False)}, REQUIRED)},
    "scenes": {"nodes": ("refs", "nodes", False)},
}
LABELS = {"buffers": "buffer", "bufferViews": "bufferView", "accessors": "accessor", "nodes": "node",
          "meshes": "mesh", "materials": "material", "samplers": "sampler", "textures": "texture", "images": "image",
          "skins": "skin",
          "animations": "animation", "scenes": "scene"}


def short(value, limit: int = 60) -> str:
    """repr (or str for exceptions) of a value from the file, cut to a readable length."""
    text = str(value) if isinstance(value, BaseException) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def checked_document(document, fail: Fail, bulk: bool = True) -> tuple[dict, NodeHierarchy]:
    """(the validated document, its node hierarchy).

    The document holds every top-level array the loader reads (empty when absent), each
    object with only the fields the loader reads and their types right, and ``scene`` (None
    when the file names none). The node hierarchy is checked first, right after the top-level
    arrays, so that a hostile one (a 200,000-node chain) is refused before the rest is walked.

    Each object of a top-level array is checked by its schema's compiled checker (``bulk``: the
    checks inlined into one generated function per schema, with no wording); where anything is
    off, the object-by-object walk checks the array again and words the first problem, so the
    result and the error are the walk's (``bulk=False``: the reference the tests compare
    against).
    """
    return _Checker(fail, bulk).document(document)


class _Checker:
    def __init__(self, fail: Fail, bulk: bool = True):
        self.fail_with = fail
        self.bulk = bulk
        self.lengths: dict[str, int] = {}
        self.checks = {"ref": self.ref, "refs": self.refs, "uint": self.uint, "bool": self.boolean, "str": self.string,
                       "enum": self.enum, "nums": self.nums, "stride": self.stride, "obj": self.obj,
                       "objs": self.objs, "attrs": self.attrs, "ids": self.ids, "num": self.num,
                       "targets": self.targets, "weights": self.weights, "extras": self.extras}

    def fail(self, message: str):
        raise self.fail_with(message)

    def document(self, document) -> tuple[dict, NodeHierarchy]:
        if not isinstance(document, dict):
            self.fail("not valid glTF JSON (the top level is not an object)")
        asset = document.get("asset")
        if not isinstance(asset, dict):
            self.fail("asset must be an object with a version; this is not a glTF 2.0 file")
        version = asset.get("version")
        if not isinstance(version, str) or not version.startswith("2."):
            shown = "missing" if version is None else short(version)
            self.fail(f"asset.version is {shown}; only glTF 2.0 is supported")
        extensions = {}
        for key in ("extensionsUsed", "extensionsRequired"):
            names = document.get(key, [])
            if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
                self.fail(f"{key} must be an array of extension names, got {short(names)}")
            extensions[key] = list(dict.fromkeys(names))
        unsupported = [name for name in extensions["extensionsRequired"] if name not in SUPPORTED_EXTENSIONS]
        if unsupported:
            listed = ", ".join(short(name, 62)[1:-1] for name in unsupported[:8])  # repr escapes, unquoted
            self.fail(f"the file requires extension{'s' if len(unsupported) > 1 else ''} {listed}, which boneviewer "
                      f"does not support (it reads {', '.join(SUPPORTED_EXTENSIONS)})")
        arrays = {}
        for key in SCHEMAS:
            value = document.get(key, [])
            if not isinstance(value, list):
                self.fail(f"{key!r} must be an array, got {short(value)}")
            if not set(map(type, value)) <= _DICT:  # the common case in one pass; else find the first
                for i, item in enumerate(value):
                    if not isinstance(item, dict):
                        self.fail(f"{LABELS[key]} {i} must be an object, got {short(item)}")
            arrays[key] = value
            self.lengths[key] = len(value)
        hierarchy = node_hierarchy(self.node_children(arrays["nodes"]), self.fail_with)
        clean = {"asset": {"version": version}, **extensions, "lights": self.lights(document.get("extensions"))}
        # VRM's extensions as the file has them: gltf/vrm.py checks what it reads of them.
        top = document.get("extensions")
        clean["vrm"] = {name: top[name] for name in VRM_EXTENSIONS if name in top} if isinstance(top, dict) else {}
        # {node index: its VRMC_node_constraint as written}: gltf/constraints.py checks it
        clean["vrm"]["node_constraints"] = {
            i: node["extensions"]["VRMC_node_constraint"] for i, node in enumerate(arrays["nodes"])
            if isinstance(node.get("extensions"), dict) and "VRMC_node_constraint" in node["extensions"]}
        clean["vrm"]["constrained_nodes"] = len(clean["vrm"]["node_constraints"])
        for key, schema in SCHEMAS.items():
            label = LABELS[key]
            checked = self.bulk_objects(arrays[key], schema) if self.bulk else None
            if checked is None:  # the walk, which raises for the first problem
                checked = [self.object(item, schema, f"{label} {i}") for i, item in enumerate(arrays[key])]
            clean[key] = checked
        clean["scene"] = None
        if document.get("scene") is not None:
            clean["scene"] = self.field(document["scene"], ("ref", "scenes", False), "the document", "scene")
        for a, animation in enumerate(clean["animations"]):
            for c, channel in enumerate(animation["channels"]):
                if channel["sampler"] >= len(animation["samplers"]):
                    self.fail(f"animation {a} channel {c}: sampler {channel['sampler']} does not exist "
                              f"(the animation has {len(animation['samplers'])} samplers)")
        self.morph_counts(clean)
        for s, skin in enumerate(clean["skins"]):
            if len(set(skin["joints"])) != len(skin["joints"]):
                self.fail(f"skin {s}: a node is listed twice among its joints")
        return clean, hierarchy

    def lights(self, extensions) -> list[dict]:
        """KHR_lights_punctual's lights (the document's ``extensions``), checked; [] without them."""
        self.lengths["lights"] = 0
        if not isinstance(extensions, dict) or extensions.get("KHR_lights_punctual") is None:
            return []
        punctual = self.field(extensions["KHR_lights_punctual"], ("obj", {"lights": ("objs", LIGHT, True)}, True),
                              "the document's extensions", "KHR_lights_punctual")
        self.lengths["lights"] = len(punctual["lights"])
        return punctual["lights"]

    def morph_counts(self, clean: dict) -> None:
        """Every primitive of a mesh with targets has the same number of them (primitives
        without any are left unmorphed, as Babylon does); the mesh's and its nodes' default
        weights give one weight per target."""
        counts = []
        for m, mesh in enumerate(clean["meshes"]):
            count = None
            for p, primitive in enumerate(mesh["primitives"]):
                targets = primitive.get("targets")
                if targets is None:
                    continue
                if count is None:
                    count, first = len(targets), p
                elif len(targets) != count:
                    self.fail(f"mesh {m} primitive {p}: {len(targets)} morph targets, but primitive {first} has "
                              f"{count} (every primitive of a mesh must have the same number)")
            weights = mesh.get("weights")
            if weights is not None and len(weights) != (count or 0):
                self.fail(f"mesh {m}: weights has {len(weights)} values for {count or 0} morph targets")
            counts.append(count or 0)
        for n, node in enumerate(clean["nodes"]):
            weights = node.get("weights")
            if weights is None:
                continue
            if node.get("mesh") is None:
                self.fail(f"node {n}: weights are given, but the node has no mesh")
            if len(weights) != counts[node["mesh"]]:
                self.fail(f"node {n}: weights has {len(weights)} values for the {counts[node['mesh']]} morph "
                          f"targets of mesh {node['mesh']}")

    def node_children(self, nodes: list[dict]) -> list:
        """Each node's checked ``children`` (empty when absent), as the nodes' schema checks them."""
        count, spec = len(nodes), SCHEMAS["nodes"]["children"]
        children = [node.get("children") for node in nodes]
        for i, value in enumerate(children):
            if value is None:
                children[i] = ()
            elif type(value) is not list or not all(type(c) is int and 0 <= c < count for c in value):
                children[i] = self.refs(value, spec, f"node {i}", "children")  # raises for a bad one
        return children

    # --- in bulk: every object by its schema's compiled checker ---------------------------------------
    def bulk_objects(self, items: list, schema: dict) -> list[dict] | None:
        """The clean objects of ``items`` (dicts), as ``object`` makes them, each checked by the
        schema's compiled checker (``_object_checker``: the checks inlined, no error wording);
        None when any value is off, for the walk to find and word."""
        check, lengths, rare = _object_checker(schema), self.lengths, self.checks
        result = []
        try:
            for item in items:
                clean = check(item, lengths, rare)
                if clean is None:
                    return None
                result.append(clean)
        except Exception:  # a value the checker did not foresee (a rarer kind's check raised): the walk words it
            return None
        return result

    # --- object by object: the reference, and the wording of every problem --------------------------
    def object(self, item: dict, schema: dict, what: str) -> dict:
        result = {}
        name = item.get("name")
        if name is not None:
            if not isinstance(name, str):
                self.fail(f"{what}: name must be a string, got {short(name)}")
            result["name"] = name
        checks = self.checks
        for field, spec in schema.items():
            value = item.get(field)
            if value is None:
                if spec[2]:
                    self.fail(f"{what}: required property {field!r} is missing")
                continue
            result[field] = checks[spec[0]](value, spec, what, field)
        return result

    def field(self, value, spec, what: str, field: str):
        """``value`` checked against ``spec``; the clean value (a copy for arrays and objects)."""
        return self.checks[spec[0]](value, spec, what, field)

    # One method per kind of field: (value, spec, what, field) -> the clean value.
    def ref(self, value, spec, what, field):
        count = self.lengths[spec[1]]
        if not _is_int(value) or not 0 <= value < count:
            self.fail(f"{what}: {field} {short(value)} does not exist ({count} {spec[1]})")
        return value

    def refs(self, value, spec, what, field):
        if not isinstance(value, list) or (spec[2] and not value):
            self.fail(f"{what}: {field} must be a{' non-empty' if spec[2] else 'n'} array of indices, "
                      f"got {short(value)}")
        count = self.lengths[spec[1]]
        # The common case in one pass (json gives exact ints, and bool is not int here); the
        # first bad index found with its own message otherwise.
        if not all(type(index) is int and 0 <= index < count for index in value):
            for index in value:
                self.ref(index, ("ref", spec[1], True), what, field)
        return list(value)

    def uint(self, value, spec, what, field):
        if not _is_int(value) or value < spec[1]:
            self.fail(f"{what}: {field} must be an integer >= {spec[1]}, got {short(value)}")
        return value

    def boolean(self, value, spec, what, field):
        if not isinstance(value, bool):
            self.fail(f"{what}: {field} must be true or false, got {short(value)}")
        return value

    def string(self, value, spec, what, field):
        if not isinstance(value, str):
            self.fail(f"{what}: {field} must be a string, got {short(value)}")
        return value

    def enum(self, value, spec, what, field):
        if isinstance(value, bool) or value not in spec[1] or type(value) is float:
            self.fail(f"{what}: {field} must be one of {', '.join(map(str, spec[1]))}; got {short(value)}")
        return value

    def nums(self, value, spec, what, field):
        length = spec[1]
        if (not isinstance(value, list) or (length is not None and len(value) != length)
                or not all(map(_is_number, value))):
            self.fail(f"{what}: {field} must be {length} finite numbers, got {short(value)}")
        return [float(v) for v in value]

    def num(self, value, spec, what, field):
        if not _is_number(value):
            self.fail(f"{what}: {field} must be a finite number, got {short(value)}")
        return float(value)

    def ids(self, value, spec, what, field):
        if not isinstance(value, dict) or not value:
            self.fail(f"{what}: {field} must be a non-empty object of attribute ids, got {short(value)}")
        for name, number in value.items():
            self.uint(number, ("uint", 0, True), what, f"attribute {short(name, 40)}")
        return {name: number for name, number in value.items() if ATTRIBUTE_NAME.fullmatch(name)}

    def stride(self, value, spec, what, field):
        if not _is_int(value) or not 4 <= value <= 252 or value % 4:
            self.fail(f"{what}: {field} must be a multiple of 4 from 4 to 252, got {short(value)}")
        return value

    def obj(self, value, spec, what, field):
        if not isinstance(value, dict):
            self.fail(f"{what}: {field} must be an object, got {short(value)}")
        return self.object(value, spec[1], f"{what} {field}")

    def objs(self, value, spec, what, field):
        if not isinstance(value, list) or not value:
            self.fail(f"{what}: {field} must be a non-empty array of objects, got {short(value)}")
        singular = field[:-1]
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                self.fail(f"{what} {singular} {i} must be an object, got {short(item)}")
        return [self.object(item, spec[1], f"{what} {singular} {i}") for i, item in enumerate(value)]

    def attrs(self, value, spec, what, field):
        if not isinstance(value, dict) or not value:
            self.fail(f"{what}: {field} must be a non-empty object of accessor indices, got {short(value)}")
        for name, index in value.items():
            self.ref(index, ("ref", "accessors", True), what, f"attribute {short(name, 40)}")
        # Only the standard attributes are handed on (application-specific ones start with _).
        return {name: index for name, index in value.items() if ATTRIBUTE_NAME.fullmatch(name)}


    def targets(self, value, spec, what, field):
        if not isinstance(value, list) or not value:
            self.fail(f"{what}: {field} must be a non-empty array of morph targets, got {short(value)}")
        if len(value) > limits.MAX_MORPH_TARGETS:
            self.fail(f"{what}: {len(value)} morph targets; the limit is {limits.MAX_MORPH_TARGETS}")
        clean = []
        for t, target in enumerate(value):
            if not isinstance(target, dict):
                self.fail(f"{what} target {t} must be an object of accessor indices, got {short(target)}")
            for name, index in target.items():
                self.ref(index, ("ref", "accessors", True), f"{what} target {t}", f"attribute {short(name, 40)}")
            clean.append({name: target[name] for name in ("POSITION", "NORMAL", "TANGENT") if name in target})
        return clean

    def weights(self, value, spec, what, field):
        if not isinstance(value, list) or not all(map(_is_number, value)):
            self.fail(f"{what}: {field} must be an array of finite numbers, got {short(value)}")
        if len(value) > limits.MAX_MORPH_TARGETS:
            self.fail(f"{what}: {field} has {len(value)} values; the limit is {limits.MAX_MORPH_TARGETS} morph targets")
        return [float(v) for v in value]

    def extras(self, value, spec, what, field):
        """Application data may be anything; only an object's targetNames is read (and checked)."""
        if not isinstance(value, dict) or value.get("targetNames") is None:
            return {}
        names = value["targetNames"]
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            self.fail(f"{what}: extras.targetNames must be an array of strings, got {short(names)}")
        if len(names) > limits.MAX_MORPH_TARGETS:
            self.fail(f"{what}: extras.targetNames has {len(names)} names; the limit is {limits.MAX_MORPH_TARGETS} "
                      f"morph targets")
        return {"targetNames": list(names)}


# --- compiled checkers: a schema's checks as one Python function per object ----------------------
# The bulk path's checks of one field kind, inlined; ``v`` is the field's value (not None), a
# failed check returns None (the walk then words the problem).
_INLINE = {
    "ref": "if type(v) is not int or v < 0 or v >= lengths[{arg!r}]:\n    return None",
    "uint": "if type(v) is not int or v < {arg!r}:\n    return None",
    "bool": "if type(v) is not bool:\n    return None",
    "str": "if type(v) is not str:\n    return None",
    "stride": "if type(v) is not int or not 4 <= v <= 252 or v % 4:\n    return None",
    "enum": "if (type(v) is not int and type(v) is not str) or v not in allowed{k}:\n    return None",
    "nums": "v = _finite_floats(v, {arg!r})\nif v is None:\n    return None",
    "refs": "v = _indices(v, lengths[{arg!r}], {required!r})\nif v is None:\n    return None",
    "obj": "if type(v) is not dict:\n    return None\nv = sub{k}(v, lengths, rare)\nif v is None:\n    return None",
    "objs": ("if type(v) is not list or not v:\n    return None\nclean = []\nfor x in v:\n"
             "    if type(x) is not dict:\n        return None\n    x = sub{k}(x, lengths, rare)\n"
             "    if x is None:\n        return None\n    clean.append(x)\nv = clean"),
}
_CHECKERS: dict = {}  # id(schema) -> its compiled checker
_INT, _FLOAT, _FLOAT_OR_INT, _DICT = {int}, {float}, {float, int}, {dict}


def _finite_floats(values, length):
    """A list of finite numbers (exactly ``length`` many unless None) as floats: the list itself
    when it holds floats only (the parsed JSON is not used again), else a list of float(x);
    None for anything else (a bool is not a number here)."""
    if type(values) is not list or (length is not None and len(values) != length):
        return None
    types = set(map(type, values))
    if not types <= _FLOAT_OR_INT or not all(map(math.isfinite, values)):
        return None
    return values if types <= _FLOAT else [float(x) for x in values]


def _indices(values, count, required):
    """A list of indices below ``count`` (not empty when ``required``) as a new list, else None."""
    if type(values) is not list or (required and not values):
        return None
    if values and not (set(map(type, values)) <= _INT and min(values) >= 0 and max(values) < count):
        return None
    return list(values)


def _object_checker(schema: dict):
    """``check(item, lengths, rare)``: the clean object ``_Checker.object`` makes of ``item``
    (its name, then the schema's fields it has, in the schema's order), or None when a value
    is off; ``lengths`` the top-level arrays' sizes, ``rare`` the walk's checks by kind, which
    run (and raise) for the rarer kinds. Generated from the schema once and kept: the same
    checks as one function call per object, with no per-field dispatch (a .gltf's thousands
    of accessors, nodes and channels)."""
    checker = _CHECKERS.get(id(schema))
    if checker is not None:
        return checker
    env = {"_finite_floats": _finite_floats, "_indices": _indices}
    lines = ["def check(item, lengths, rare):",
             "    name = item.get('name')",
             "    if name is None:",
             "        d = {}",
             "    elif type(name) is str:",
             "        d = {'name': name}",
             "    else:",
             "        return None"]
    for k, (field, (kind, argument, required)) in enumerate(schema.items()):
        if kind == "enum":
            env[f"allowed{k}"] = frozenset(argument)
        elif kind in ("obj", "objs"):
            env[f"sub{k}"] = _object_checker(argument)
        if kind in _INLINE:
            body = _INLINE[kind].format(arg=argument, k=k, required=required).split("\n")
        else:  # the walk's own check (it raises for a bad value)
            body = [f"v = rare[{kind!r}](v, ({kind!r}, {argument!r}, {required!r}), '', {field!r})"]
        lines += [f"    v = item.get({field!r})", "    if v is not None:"]
        lines += ["        " + line for line in body] + [f"        d[{field!r}] = v"]
        if required:
            lines += ["    else:", "        return None"]
    lines.append("    return d")
    exec("\n".join(lines), env)  # code made here from SCHEMAS, never from the file
    checker = _CHECKERS[id(schema)] = env["check"]
    return checker


class NodeHierarchy(NamedTuple):
    """The node graph of a checked document, by node index."""

    parent: dict[int, int]  # child -> parent, for every node that has one
    depth: list[int]  # 0 for roots


def node_hierarchy(children: list, fail: Fail) -> NodeHierarchy:
    """Check that the nodes (given as each node's list of child indices, checked to exist)
    form a forest no deeper than ``limits.MAX_DEPTH`` levels, in time linear in the number of
    nodes, and return it."""
    parent = {}
    for i, node_children in enumerate(children):
        for child in node_children:
            if child in parent:
                if parent[child] == i:
                    raise fail(f"node {i} lists child {child} twice")
                raise fail(f"node {child} has two parents (nodes {parent[child]} and {i})")
            parent[child] = i
    return NodeHierarchy(parent, _depths(len(children), parent, fail))


def _depths(count: int, parent: dict[int, int], fail: Fail) -> list[int]:
    """Each node's depth, refusing cycles and depths over the limit; each node is walked once."""
    depth = [-1] * count
    walked_from = {}
    for start in range(count):
        path, n = [], start
        while n is not None and depth[n] < 0:
            if walked_from.get(n) == start:
                raise fail(f"node {n} is its own ancestor: the node hierarchy has a cycle")
            walked_from[n] = start
            path.append(n)
            n = parent.get(n)
        d = -1 if n is None else depth[n]
        for m in reversed(path):
            d += 1
            depth[m] = d
        if d > limits.MAX_DEPTH:
            raise fail(f"node {start} is {d} levels deep; the limit is {limits.MAX_DEPTH}")
    return depth
