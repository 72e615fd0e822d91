"""A loaded Scene summed up as plain data (meshes, skins, clips), what ``boneviewer info`` shows
for the formats whose readers build the Scene first (FBX, USD)."""

from __future__ import annotations

from .morph import PointCacheChannel


def scene_summary(scene, stacks: dict | None = None) -> dict:
    """{"meshes", "skins", "animations", "drawn"}; ``stacks``: {clip name: {"begin", "end"}} the
    file's own time spans of its clips, when it has them."""
    stacks = stacks or {}
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
    animations = []
    for clip in scene.animations:
        paths: dict[str, int] = {}
        for channel in clip.channels:
            paths[channel.path] = paths.get(channel.path, 0) + 1
        # Point caches (vertex animations: a mesh's positions at each sample) are said as such.
        caches = [channel for channel in getattr(clip, "morph_channels", ()) if isinstance(channel, PointCacheChannel)]
        if caches:
            paths["point cache"] = len(caches)
        stack = stacks.get(clip.name, {})
        animations.append({"name": clip.name, "duration": float(clip.duration), "channels": len(clip.channels),
                           "nodes": len({id(channel.node) for channel in clip.channels}), "paths": paths,
                           "interpolations": sorted({channel.interpolation for channel in clip.channels}
                                                    | {channel.interpolation for channel in caches}),
                           "point_caches": [{"mesh": channel.meshes[0].name, "samples": channel.samples,
                                             "vertices": int(len(channel.meshes[0].positions)),
                                             "start": float(channel.times[0]), "end": float(channel.times[-1]),
                                             "interpolation": channel.interpolation} for channel in caches],
                           "begin": stack.get("begin"), "end": stack.get("end")})
    return {"meshes": meshes, "skins": skins, "animations": animations,
            "drawn": {"meshes": len(scene.meshes), "skinned_meshes": len(scene.skinned_meshes),
                      "bones": sum(len(skeleton.bones) for skeleton in scene.skeletons),
                      "vertices": int(sum(len(mesh.positions) for mesh in scene.meshes))}}


def _depth(skeleton) -> int:
    """Levels of the skeleton's bone tree."""
    depth = {}
    for bone in skeleton.bones:  # parents before children
        parent = bone.get_parent()
        depth[id(bone)] = 1 if parent is None else depth.get(id(parent), 0) + 1
    return max(depth.values(), default=0)
