"""What is in an FBX file, for `boneviewer info`: what the file says (version, creator, axes and
unit, frame rate, animation stacks) and what the loader made of it, under the top-level keys
`info` gives a glTF file, so that one script reads both."""

from __future__ import annotations

from pathlib import Path


def inspect_fbx(path, file_axes: bool = False) -> dict:
    """The file's contents as plain data (see `boneviewer info --json`), from one load: a file the
    viewer refuses is refused here with the same line. ``"_scene"`` is the loaded Scene."""
    from ..model.summary import scene_summary
    from . import load_fbx_file

    path = Path(path)
    doc, scene = load_fbx_file(path, file_axes)
    stacks = {stack["name"]: stack for stack in doc["stacks"]}
    summary = scene_summary(scene, stacks)
    material_names = [material["name"] for material in doc["materials"]]
    return {
        "file": str(path),
        "format": "fbx",
        "version": doc["version"],
        "scene": 0,
        "scenes": [],
        "nodes": sum(not node["root"] for node in doc["nodes"]),
        "meshes": summary["meshes"],
        "skins": summary["skins"],
        "animations": summary["animations"],
        "materials": len(doc["materials"]),
        "material_names": material_names,
        "textures": sum(material["texture"] is not None for material in doc["materials"]),
        "images": sum(material["texture_embedded"] is not None for material in doc["materials"]),
        "extensions_used": [],
        "extensions_required": [],
        "size": {"file": path.stat().st_size},
        "drawn": summary["drawn"],
        "fbx": {"version": doc["version"], "encoding": "ascii" if doc["ascii"] else "binary",
                "creator": doc["creator"], "application": doc["application"], "frame_rate": doc["fps"],
                "axes": scene.import_axes, "stacks": [{"name": s["name"], "begin": s["begin"], "end": s["end"]}
                                                     for s in doc["stacks"]],
                "warnings": list(dict.fromkeys(doc["warnings"]))},
        "_scene": scene,
    }

