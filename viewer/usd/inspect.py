"""What is in a USD stage, for `boneviewer info`: what the stage says (up axis, metersPerUnit,
timeCodesPerSecond, its skeletons and animations) and what the loader made of it, under the
top-level keys `info` gives a glTF file, so that one script reads both."""

from __future__ import annotations

from pathlib import Path


def inspect_usd(path, file_axes: bool = False) -> dict:
    """The stage's contents as plain data (see `boneviewer info --json`), from one load: a file
    the viewer refuses is refused here with the same line. ``"_scene"`` is the loaded Scene."""
    from ..model.summary import scene_summary
    from . import load_usd_file

    path = Path(path)
    doc, scene = load_usd_file(path, file_axes)
    summary = scene_summary(scene)
    materials = [material["name"] for material in doc["materials"]]
    return {
        "file": str(path),
        "format": "usd",
        "version": None,
        "scene": 0,
        "scenes": [],
        "nodes": len(scene.nodes),
        "meshes": summary["meshes"],
        "skins": summary["skins"],
        "animations": summary["animations"],
        "materials": len(materials),
        "material_names": materials,
        "textures": sum(material["texture"] is not None for material in doc["materials"]),
        "images": sum(bool(material["texture"] and material["texture"]["bytes"]) for material in doc["materials"]),
        "extensions_used": [],
        "extensions_required": [],
        "size": {"file": path.stat().st_size},
        "drawn": summary["drawn"],
        "usd": {"encoding": path.suffix.lower().lstrip("."), "time_codes_per_second": doc["tcps"],
                "default_prim": doc["default_prim"], "axes": scene.import_axes,
                "skeletons": [{"path": s["path"], "joints": len(s["joints"]),
                               "animations": [c["path"] for c in s["clips"]]} for s in doc["skeletons"]],
                "warnings": list(dict.fromkeys(doc["warnings"]))},
        "_scene": scene,
    }
