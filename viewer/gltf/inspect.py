"""What is in a glTF file, for `boneviewer info`: the loaded Scene (the one the viewer draws) and
what the file's checked document says about it, from one read of the file (no second parser)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .container import GltfFile

GEOMETRY, ANIMATION, IMAGES, SKINS = "geometry", "animation", "images", "skins"


def inspect_gltf(path, scene_index: int | None = None) -> dict:
    """The file's contents as plain data (see `boneviewer info --json`): counts as the file has
    them, names as given (None: unnamed), durations in seconds from the loaded clips. Loading it
    is the viewer's load: a file the viewer refuses is refused here with the same one line.
    ``"_scene"`` is the loaded Scene (for the bone tree; not part of the JSON)."""
    from . import load_file

    scene, file = load_file(Path(path), scene_index)
    document = file.document
    accessors = document["accessors"]
    names = [node.get("name") for node in document["nodes"]]

    def accessor_count(index):
        return int(accessors[index]["count"]) if index is not None else 0

    meshes = []
    for m, mesh in enumerate(document["meshes"]):
        primitives = mesh["primitives"]
        target_count = max((len(p.get("targets") or []) for p in primitives), default=0)
        given = list((mesh.get("extras") or {}).get("targetNames") or [])
        target_names = [given[i] if i < len(given) else f"target {i}" for i in range(target_count)]
        meshes.append({
            "name": mesh.get("name"),
            "primitives": len(primitives),
            "vertices": sum(accessor_count(p["attributes"].get("POSITION")) for p in primitives),
            "influences": max((4 * sum(1 for key in p["attributes"] if key.startswith("JOINTS_")) for p in primitives),
                              default=0),
            "morph_targets": target_names,
        })

    skins = []
    for s, skin in enumerate(document["skins"]):
        joints = skin["joints"]
        joint_set = set(joints)
        roots = [j for j in joints if file.hierarchy.parent.get(j) not in joint_set]
        root = skin.get("skeleton", roots[0] if roots else joints[0])
        depths = [_depth_in(j, joint_set, file.hierarchy.parent) for j in joints]
        skins.append({"name": skin.get("name"), "joints": len(joints),
                      "root": names[root] if names[root] is not None else f"node {root}", "depth": max(depths) + 1})

    animations = []
    for a, (spec, clip) in enumerate(zip(document["animations"], scene.animations)):
        paths: dict[str, int] = {}
        for channel in spec["channels"]:
            path_name = channel["target"]["path"]
            paths[path_name] = paths.get(path_name, 0) + 1
        targets = {channel["target"].get("node") for channel in spec["channels"]} - {None}
        interpolations = sorted({sampler.get("interpolation", "LINEAR") for sampler in spec["samplers"]})
        animations.append({"name": spec.get("name"), "duration": float(clip.duration),
                           "channels": len(spec["channels"]), "nodes": len(targets), "paths": paths,
                           "interpolations": interpolations})

    scenes = [{"name": spec.get("name"), "nodes": len(spec.get("nodes") or [])}
              for i, spec in enumerate(document["scenes"])]
    return {
        "file": str(path),
        "format": "glb" if file.binary_chunk is not None or Path(path).suffix.lower() in (".glb", ".vrm") else "gltf",
        "version": document["asset"]["version"],
        "scene": scene.file_scene,
        "scenes": scenes,
        "nodes": len(document["nodes"]),
        "meshes": meshes,
        "skins": skins,
        "animations": animations,
        "materials": len(document["materials"]),
        "material_names": [m.get("name") for m in document["materials"]],
        "textures": len(document["textures"]),
        "images": len(document["images"]),
        "extensions_used": list(document["extensionsUsed"]),
        "extensions_required": list(document["extensionsRequired"]),
        "size": _sizes(file),
        "vrm": _vrm_facts(scene),
        "node_constraints": _constraint_facts(scene),
        "drawn": {"meshes": len(scene.meshes), "skinned_meshes": len(scene.skinned_meshes),
                  "bones": sum(len(skeleton.bones) for skeleton in scene.skeletons),
                  "vertices": int(sum(len(mesh.positions) for mesh in scene.meshes))},
        "_scene": scene,
    }


def _vrm_facts(scene) -> dict | None:
    """A VRM avatar's extension as ``info`` lists it: version, meta, the humanoid map, the
    expressions, the spring chains and the constrained nodes (counted)."""
    from .vrm import describe_meta

    vrm = scene.vrm
    if vrm is None:
        return None
    return {"version": vrm.version, "meta": describe_meta(vrm.meta), "humanoid": dict(scene.humanoid),
            "expressions": [{"name": e.name, "preset": e.preset, "binds": len(e.binds), "binary": e.is_binary}
                            for e in scene.expressions.values()],
            # node_constraints stays the count of constrained nodes (scripts read it as a number);
            # the constraints themselves are the top-level "node_constraints", for any glTF file
            "turned": vrm.turn, "spring_chains": vrm.springs, "colliders": vrm.colliders,
            "node_constraints": vrm.constraints}


def _constraint_facts(scene) -> list[dict]:
    """The node constraints as applied (none when the file has none, or they were refused)."""
    constraints = scene.__dict__.get("_constraints")
    return [] if constraints is None else constraints.describe()


def _depth_in(joint: int, joints: set, parent: dict) -> int:
    """How many joints of the skin are above ``joint``."""
    depth, node = 0, parent.get(joint)
    while node is not None:
        if node in joints:
            depth += 1
        node = parent.get(node)
    return depth


def _sizes(file: GltfFile) -> dict:
    """Bytes by part: the buffer views each part reads (a view read by two parts counts once,
    for the first of geometry, animation, skins, images), the JSON, and the rest of the buffers."""
    document = file.document
    accessors, views = document["accessors"], document["bufferViews"]
    owner: dict[int, str] = {}

    def claim(view, part):
        if view is not None and view not in owner:
            owner[view] = part

    def claim_accessor(index, part):
        if index is None:
            return
        accessor = accessors[index]
        claim(accessor.get("bufferView"), part)
        sparse = accessor.get("sparse")
        if sparse:
            claim(sparse["indices"]["bufferView"], part)
            claim(sparse["values"]["bufferView"], part)

    for mesh in document["meshes"]:
        for primitive in mesh["primitives"]:
            for index in primitive["attributes"].values():
                claim_accessor(index, GEOMETRY)
            claim_accessor(primitive.get("indices"), GEOMETRY)
            for target in primitive.get("targets") or []:
                for index in target.values():
                    claim_accessor(index, GEOMETRY)
            draco = (primitive.get("extensions") or {}).get("KHR_draco_mesh_compression")
            if draco:
                claim(draco["bufferView"], GEOMETRY)
    for animation in document["animations"]:
        for sampler in animation["samplers"]:
            claim_accessor(sampler["input"], ANIMATION)
            claim_accessor(sampler["output"], ANIMATION)
    for skin in document["skins"]:
        claim_accessor(skin.get("inverseBindMatrices"), SKINS)
    for image in document["images"]:
        claim(image.get("bufferView"), IMAGES)
    sizes = {GEOMETRY: 0, ANIMATION: 0, SKINS: 0, IMAGES: 0}
    for view, part in owner.items():
        sizes[part] += int(views[view]["byteLength"])
    external_images = 0
    for image in document["images"]:
        uri = image.get("uri")
        if uri and not uri.startswith("data:"):
            try:
                external_images += file.resolve_uri(uri, "image").stat().st_size
            except (OSError, ValueError):
                pass
    sizes[IMAGES] += external_images
    buffers = sum(int(buffer["byteLength"]) for buffer in document["buffers"])
    sizes["other"] = max(0, buffers - sum(sizes[part] for part in (GEOMETRY, ANIMATION, SKINS)) -
                         (sizes[IMAGES] - external_images))
    sizes["json"] = file.json_bytes
    sizes["file"] = file.file_bytes
    return sizes


def bone_tree(scene) -> list[tuple[int, str, float | None]]:
    """(depth, name, length) of every bone of the loaded skeletons, parents before children.

    A bone's length is the distance to its child in the pose as loaded (to the farthest child
    when it has several: the one a chain continues to is usually the longest); a leaf has the
    length the model gives it, else None (a file does not say where a last bone ends).
    """
    rows = []
    for skeleton in scene.skeletons:
        skeleton.prepare()
        children: dict = {}
        for bone in skeleton.bones:
            children.setdefault(bone.get_parent(), []).append(bone)
        heads = {id(bone): np.asarray(bone.get_absolute_position(), float) for bone in skeleton.bones}

        def length(bone):
            kids = children.get(bone, [])
            if kids:
                value = max(float(np.linalg.norm(heads[id(k)] - heads[id(bone)])) for k in kids)
            else:
                value = None if bone.length is None else float(bone.length)
            return value if value is None or np.isfinite(value) else None

        def walk(bone, depth):
            rows.append((depth, bone.name, length(bone)))
            for child in children.get(bone, []):
                walk(child, depth + 1)

        for root in children.get(None, []):
            walk(root, 0)
    return rows
