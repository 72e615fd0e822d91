"""VRM avatars' extensions, read: VRM 1.0's ``VRMC_vrm`` and VRM 0.x's ``VRM``.

A .vrm file is a GLB; this is the one module that knows what its extensions say. What they mean
lives where the meaning already is: the humanoid map is a bone map ({body part: bone}, the names
retargeting's naming schemes use, which are VRM's), expressions are groups of morph weights
(``model.morph.Expressions``). VRM 0.x models face -Z: the loader turns them half a turn about +Y
to face +Z, as glTF's models and VRM 1.0's do (``turn``).

A malformed extension, or one naming a node or morph target the file lacks, is one error when the
file lists the extension in ``extensionsRequired``; otherwise the model opens without it, with a
warning (glTF's rule for an optional extension a reader cannot use).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .container import GltfFile

EXTENSIONS = ("VRMC_vrm", "VRM")
# MToon is drawn as its material's base colour and texture (pbrMetallicRoughness, which VRM files
# fill in as MToon's fallback): read, so not "ignored".
MATERIAL_EXTENSIONS = ("VRMC_materials_mtoon",)

# VRM 0.x's preset names (blendShapeGroups' presetName) as VRM 1.0 names them.
PRESETS_0X = {"joy": "happy", "angry": "angry", "sorrow": "sad", "fun": "relaxed", "a": "aa", "i": "ih",
              "u": "ou", "e": "ee", "o": "oh", "blink": "blink", "blink_l": "blinkLeft", "blink_r": "blinkRight",
              "lookup": "lookUp", "lookdown": "lookDown", "lookleft": "lookLeft", "lookright": "lookRight",
              "neutral": "neutral"}
OVERRIDES = ("none", "block", "blend")


class ExpressionSpec(NamedTuple):
    """An expression as the file gives it: binds ``[(node, morph target index, weight 0..1)]``."""

    name: str
    binds: list
    is_binary: bool
    preset: bool
    overrides: dict  # {"blink" | "lookAt" | "mouth": "none" | "block" | "blend"}


class Vrm(NamedTuple):
    """What a VRM file's extension says."""

    version: str            # "1.0" or "0.x"
    humanoid: dict          # {VRM bone name: node index}
    expressions: list       # [ExpressionSpec]
    meta: dict              # name, version, authors, licence fields (as the file gives them)
    springs: int            # spring chains (VRMC_springBone's springs; 0.x's secondaryAnimation boneGroups)
    colliders: int
    constraints: int        # nodes with VRMC_node_constraint (read by gltf/constraints.py)
    turn: bool              # 0.x: turned half a turn about +Y to face +Z


class _Malformed(Exception):
    pass


def read_vrm(file: GltfFile) -> Vrm | None:
    """The file's VRM extension (1.0 preferred), or None when it has none, or when it is
    malformed and optional (a warning); malformed and required: the file's error."""
    document = file.document
    extensions = document["vrm"]
    for name in EXTENSIONS:
        if name in extensions:
            break
    else:
        return None
    try:
        return _read_1(file, extensions[name]) if name == "VRMC_vrm" else _read_0(file, extensions[name])
    except _Malformed as problem:
        if name in document["extensionsRequired"]:
            raise file.error(f"{name}: {problem}") from None
        file.warn("vrm", f"{name}: {problem}; the model is shown without it (the file says the extension is optional)")
        return None


def _obj(value, what: str) -> dict:
    if not isinstance(value, dict):
        raise _Malformed(f"{what} is not an object")
    return value


def _list(value, what: str) -> list:
    if not isinstance(value, list):
        raise _Malformed(f"{what} is not a list")
    return value


def _node(file: GltfFile, value, what: str) -> int:
    count = len(file.document["nodes"])
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
        raise _Malformed(f"{what} names node {value!r}, which does not exist (the file's nodes are 0..{count - 1})")
    return value


def _weight(value, what: str, scale: float = 1.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Malformed(f"{what}: weight {value!r} is not a number")
    return float(value) / scale


def _humanoid(file: GltfFile, pairs, what: str) -> dict:
    humanoid = {}
    for bone, node in pairs:
        if not isinstance(bone, str) or not bone:
            raise _Malformed(f"{what}: a bone name {bone!r} is not a name")
        humanoid[bone] = _node(file, node, f"{what} {bone}")
    if "hips" not in humanoid:
        raise _Malformed(f"{what} has no hips (VRM requires it)")
    return humanoid


def _morph_index(file: GltfFile, node: int, index, what: str) -> int:
    """Morph target ``index`` of node ``node``'s mesh, checked."""
    mesh = file.document["nodes"][node].get("mesh")
    if mesh is None:
        raise _Malformed(f"{what}: node {node} has no mesh")
    primitives = file.document["meshes"][mesh]["primitives"]
    count = min(len(p.get("targets") or ()) for p in primitives)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
        have = f"0..{count - 1}" if count else "none"
        raise _Malformed(f"{what}: node {node}'s mesh has no morph target {index!r} (its targets: {have})")
    return index


def _read_1(file: GltfFile, ext) -> Vrm:
    ext = _obj(ext, "the extension")
    humanoid = _obj(ext.get("humanoid"), "humanoid")
    bones = _obj(humanoid.get("humanBones"), "humanoid.humanBones")
    pairs = [(bone, _obj(spec, f"humanoid.humanBones.{bone}").get("node")) for bone, spec in bones.items()]
    expressions = []
    groups = _obj(ext.get("expressions", {}), "expressions")
    for kind in ("preset", "custom"):
        for name, spec in _obj(groups.get(kind, {}), f"expressions.{kind}").items():
            what = f"expression {name!r}"
            spec = _obj(spec, what)
            binds = []
            for k, bind in enumerate(_list(spec.get("morphTargetBinds", []), f"{what} morphTargetBinds")):
                bind = _obj(bind, f"{what} morphTargetBinds[{k}]")
                where = f"{what} morphTargetBinds[{k}]"
                node = _node(file, bind.get("node"), where)
                binds.append((node, _morph_index(file, node, bind.get("index"), where),
                              _weight(bind.get("weight", 1.0), where)))
            overrides = {}
            for key, field in (("blink", "overrideBlink"), ("lookAt", "overrideLookAt"), ("mouth", "overrideMouth")):
                value = spec.get(field, "none")
                if value not in OVERRIDES:
                    raise _Malformed(f"{what}: {field} {value!r} is not one of {', '.join(OVERRIDES)}")
                overrides[key] = value
            expressions.append(ExpressionSpec(name, binds, bool(spec.get("isBinary", False)), kind == "preset",
                                              overrides))
    meta = _obj(ext.get("meta", {}), "meta")
    springs = colliders = 0
    spring = file.document["vrm"].get("VRMC_springBone")
    if isinstance(spring, dict):
        springs = len(spring.get("springs") or [])
        colliders = len(spring.get("colliders") or [])
    constraints = file.document["vrm"]["constrained_nodes"]
    return Vrm("1.0", _humanoid(file, pairs, "humanoid.humanBones"), expressions, dict(meta), springs, colliders,
               constraints, False)


def _read_0(file: GltfFile, ext) -> Vrm:
    ext = _obj(ext, "the extension")
    humanoid = _obj(ext.get("humanoid"), "humanoid")
    pairs = []
    for k, spec in enumerate(_list(humanoid.get("humanBones"), "humanoid.humanBones")):
        spec = _obj(spec, f"humanoid.humanBones[{k}]")
        pairs.append((spec.get("bone"), spec.get("node")))
    master = _obj(ext.get("blendShapeMaster", {}), "blendShapeMaster")
    nodes_of_mesh: dict[int, list[int]] = {}
    for i, node in enumerate(file.document["nodes"]):
        if node.get("mesh") is not None:
            nodes_of_mesh.setdefault(node["mesh"], []).append(i)
    expressions, seen = [], set()
    for k, group in enumerate(_list(master.get("blendShapeGroups", []), "blendShapeMaster.blendShapeGroups")):
        group = _obj(group, f"blendShapeGroups[{k}]")
        preset = PRESETS_0X.get(str(group.get("presetName", "unknown")).lower())
        name = preset or group.get("name")
        if not isinstance(name, str) or not name or name in seen:
            continue  # an unnamed or repeated group: the first of a name is the expression
        seen.add(name)
        what = f"blend shape group {name!r}"
        binds = []
        for j, bind in enumerate(_list(group.get("binds", []), f"{what} binds")):
            bind = _obj(bind, f"{what} binds[{j}]")
            where = f"{what} binds[{j}]"
            mesh = bind.get("mesh")
            if mesh not in nodes_of_mesh:
                raise _Malformed(f"{where} names mesh {mesh!r}, which no node shows")
            for node in nodes_of_mesh[mesh]:  # 0.x binds a mesh: every node showing it
                binds.append((node, _morph_index(file, node, bind.get("index"), where),
                              _weight(bind.get("weight", 100.0), where, 100.0)))  # 0.x weights are 0..100
        expressions.append(ExpressionSpec(name, binds, bool(group.get("isBinary", False)), preset is not None,
                                          dict.fromkeys(("blink", "lookAt", "mouth"), "none")))
    meta = _obj(ext.get("meta", {}), "meta")
    secondary = ext.get("secondaryAnimation") if isinstance(ext.get("secondaryAnimation"), dict) else {}
    springs = len(secondary.get("boneGroups") or [])
    colliders = sum(len(g.get("colliders") or []) for g in secondary.get("colliderGroups") or [] if isinstance(g, dict))
    return Vrm("0.x", _humanoid(file, pairs, "humanoid.humanBones"), expressions, dict(meta), springs, colliders, 0,
               True)


def describe_meta(meta: dict) -> dict:
    """The meta fields ``info`` shows: name, version, authors and the licence, 1.0's or 0.x's."""
    shown = {}
    for key, fields in (("name", ("name", "title")), ("version", ("version",)), ("authors", ("authors", "author")),
                        ("license", ("licenseUrl", "licenseName", "otherLicenseUrl")),
                        ("commercial_usage", ("commercialUsage", "commercialUssageName"))):
        for field in fields:
            value = meta.get(field)
            if value not in (None, "", []):
                shown[key] = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
                break
    return shown
