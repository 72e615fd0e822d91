"""What is in an FBX file, for `boneviewer info`: what the file says (version, creator, axes and
unit, frame rate, animation stacks) and what the loader made of it, under the top-level keys
`info` gives a glTF file, so that one script reads both."""

from __future__ import annotations

from pathlib import Path


def inspect_fbx(path, file_axes: bool = False) -> dict:
    """The file's contents as plain data (see `boneviewer info --json`), from one load: a file the
    viewer refuses is refused here with the same line. ``"_scene"`` is the loaded Scene."""
    from . import load_fbx_file

    path = Path(path)
    doc, scene = load_fbx_file(path, file_axes)
    meshes = []
    for mesh in scene.meshes:
        meshes.append({"name": mesh.name, "primitives": len(mesh.submeshes), "vertices": int(len(mesh.positions)),
                       "influences": mesh.influences, "morph_targets": mesh.morph_target_names,
                       "skinned": mesh.skeleton is not None})
    skins = []
    for skeleton in scene.skeletons:
        roots = [bone for bone in skeleton.bones if bone.get_parent() is None]
        skins.append({"name": skeleton.name, "joints": sum(bone.get_index() >= 0 for bone in skeleton.bones),
                      "root": roots[0].name if len(roots) == 1 else None, "depth": _depth(skeleton)})
    stacks = {stack["name"]: stack for stack in doc["stacks"]}
    animations = []
    for clip in scene.animations:
        paths: dict[str, int] = {}
        for channel in clip.channels:
            paths[channel.path] = paths.get(channel.path, 0) + 1
        stack = stacks.get(clip.name, {})
        animations.append({"name": clip.name, "duration": float(clip.duration), "channels": len(clip.channels),
                           "nodes": len({id(channel.node) for channel in clip.channels}), "paths": paths,
                           "interpolations": sorted({channel.interpolation for channel in clip.channels}),
                           "begin": stack.get("begin"), "end": stack.get("end")})
    material_names = [material["name"] for material in doc["materials"]]
    return {
        "file": str(path),
        "format": "fbx",
        "version": doc["version"],
        "scene": 0,
        "scenes": [],
        "nodes": sum(not node["root"] for node in doc["nodes"]),
        "meshes": meshes,
        "skins": skins,
        "animations": animations,
        "materials": len(doc["materials"]),
        "material_names": material_names,
        "textures": sum(material["texture"] is not None for material in doc["materials"]),
        "images": sum(material["texture_embedded"] is not None for material in doc["materials"]),
        "extensions_used": [],
        "extensions_required": [],
        "size": {"file": path.stat().st_size},
        "drawn": {"meshes": len(scene.meshes), "skinned_meshes": len(scene.skinned_meshes),
                  "bones": sum(len(skeleton.bones) for skeleton in scene.skeletons),
                  "vertices": int(sum(len(mesh.positions) for mesh in scene.meshes))},
        "fbx": {"version": doc["version"], "encoding": "ascii" if doc["ascii"] else "binary",
                "creator": doc["creator"], "application": doc["application"], "frame_rate": doc["fps"],
                "axes": scene.fbx_import, "stacks": [{"name": s["name"], "begin": s["begin"], "end": s["end"]}
                                                     for s in doc["stacks"]],
                "warnings": list(dict.fromkeys(doc["warnings"]))},
        "_scene": scene,
    }


def _depth(skeleton) -> int:
    """Levels of the skeleton's bone tree."""
    depth = {}
    for bone in skeleton.bones:  # parents before children
        parent = bone.get_parent()
        depth[id(bone)] = 1 if parent is None else depth.get(id(parent), 0) + 1
    return max(depth.values(), default=0)
