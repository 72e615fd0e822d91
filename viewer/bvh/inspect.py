"""What is in a BVH file, for `boneviewer info`: what the file says (joints, End Sites, channels
and their order, frames) and what the loader made of it (scale, up axis, the generated mesh),
under the top-level keys `info` gives a glTF file, so that one script reads both."""

from __future__ import annotations

from pathlib import Path


def inspect_bvh(path, scale=None, up=None, forward=None) -> dict:
    """The file's contents as plain data (see `boneviewer info --json`), from one load (with
    ``load_bvh``'s ``scale``, ``up`` and ``forward``): a file the viewer refuses is refused here
    with the same line. ``"_scene"`` is the loaded Scene."""
    from . import load_bvh_motion

    path = Path(path)
    motion, scene = load_bvh_motion(path, scale, up, forward)
    joints = motion.joints
    skeleton = scene.skeletons[0]
    depth = [0] * len(joints)
    for j, joint in enumerate(joints):  # parents come before their children
        depth[j] = 0 if joint.parent < 0 else depth[joint.parent] + 1
    hierarchy = [{"name": joint.name, "parent": None if joint.parent < 0 else joints[joint.parent].name,
                  "end_site": joint.end_site, "line": joint.line, "offset": [float(v) for v in joint.offset],
                  "channels": list(joint.channels), "order": _order(joint.channels)} for joint in joints]
    orders: dict[str, int] = {}
    for row in hierarchy:
        if row["order"]:
            orders[row["order"]] = orders.get(row["order"], 0) + 1
    animations = []
    for clip in scene.animations:
        paths: dict[str, int] = {}
        for channel in clip.channels:
            paths[channel.path] = paths.get(channel.path, 0) + 1
        animations.append({"name": clip.name, "duration": float(clip.duration), "channels": len(clip.channels),
                           "nodes": len({id(channel.node) for channel in clip.channels}), "paths": paths,
                           "interpolations": sorted({channel.interpolation for channel in clip.channels})})
    frames = len(motion.values)
    imported = scene.bvh_import
    return {
        "file": str(path),
        "format": "bvh",
        "version": None,
        "scene": 0,
        "scenes": [{"name": None, "nodes": 1}],
        "nodes": len(joints),
        "meshes": [{"name": mesh.name, "primitives": 1, "vertices": int(len(mesh.positions)), "influences": 1,
                    "morph_targets": [], "generated": True} for mesh in scene.meshes],
        "skins": [{"name": skeleton.name, "joints": len(skeleton.bones), "root": joints[0].name,
                   "depth": max(depth) + 1}],
        "animations": animations,
        "materials": 0,
        "material_names": [],
        "textures": 0,
        "images": 0,
        "extensions_used": [],
        "extensions_required": [],
        "vrm": None,  # the glTF facts' key: a BVH is no VRM avatar
        "node_constraints": [],  # the glTF facts' key: a BVH has none
        "size": {"file": path.stat().st_size},
        "drawn": {"meshes": len(scene.meshes), "skinned_meshes": len(scene.skinned_meshes),
                  "bones": len(skeleton.bones), "vertices": int(sum(len(mesh.positions) for mesh in scene.meshes))},
        "bvh": {
            "joints": sum(not joint.end_site for joint in joints),
            "end_sites": sum(joint.end_site for joint in joints),
            "channels": int(motion.channel_count),
            "rotation_orders": orders,
            "frames": frames,
            "frame_time": float(motion.frame_time),
            "duration": float(scene.animations[0].duration) if scene.animations else 0.0,
            "scale": float(imported["scale"]),
            "up": imported["up"],
            "up_detected": bool(imported["detected"]),
            "forward": imported["forward"],
            "facing": imported["facing"],
            "turn": imported["turn"],
            "hierarchy": hierarchy,
        },
        "_scene": scene,
    }


def _order(channels: list[str]) -> str | None:
    """The rotation order as the CHANNELS line lists it ("ZXY"), None without rotation channels."""
    order = "".join(channel[0] for channel in channels if channel.endswith("rotation"))
    return order or None
