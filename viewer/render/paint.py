"""Colours for the skin views (RenderOptions.paint) in numpy, no GL: the weight heatmap, the
bone map and the weight check.

glsl/skinning.vert computes the heatmap and the bone map itself from the joint and weight
attributes (``heat_color`` and ``bone_color`` there are these functions, line for line); these
serve the meshes the shader cannot paint: CPU skinning, meshes without a skin (hanging under a
joint node, they take their bone's colour), and the weight check, whose raw sums only numpy
knows. Colours are per vertex and interpolated across triangles, on both paths.
"""

from __future__ import annotations

import numpy as np

from ..model.weights import bone_weights, dominant_joints, joint_row, rigid_bone, weight_problems
from ..options import Paint

NEUTRAL_COLOR = (0.6, 0.6, 0.6)        # a bone map mesh no bone moves; the weight check's sound vertices
PROBLEM_COLOR = (1.0, 0.0, 0.85)       # the weight check's flagged vertices: magenta, in no heatmap
# Bone colours walk the R3 low-discrepancy sequence through (hue, saturation, value), so bones
# close in number differ in hue, and bones whose hues come round again differ in tone.
R3 = (0.8191725, 0.6710436, 0.5497005)


def heat_color(weights) -> np.ndarray:
    """(N, 3) float32: Blender's weight ramp, 0 blue, 0.25 cyan, 0.5 green, 0.75 yellow, 1 red."""
    t = np.clip(np.asarray(weights, np.float32), 0, 1) * np.float32(4)
    green = np.where(t < 2, t, 4 - t)
    return np.clip(np.stack([t - 2, green, 2 - t], axis=-1), 0, 1).astype(np.float32)


def bone_color(joints) -> np.ndarray:
    """(N, 3) float32: a stable colour per joint index (the shader's bone_color): hue, saturation
    0.45..1 and value 0.65..1 from the R3 sequence."""
    j = np.asarray(joints, np.int64).astype(np.float32)[:, None]
    hsv = (j * np.asarray(R3, np.float32) + np.float32(0.85)) % np.float32(1)
    hue, saturation, value = hsv[:, :1], 0.45 + 0.55 * hsv[:, 1:2], 0.65 + 0.35 * hsv[:, 2:3]
    k = np.clip(np.abs((hue * 6 + np.array([0, 4, 2], np.float32)) % 6 - 3) - 1, 0, 1)
    return (value * (1 + saturation * (k - 1))).astype(np.float32)


def paint_colors(mesh, scene, paint: Paint, bone=None) -> np.ndarray:
    """(V, 4) float32 rgba per vertex of ``mesh`` for ``paint`` (WEIGHTS: ``bone``'s weights)."""
    count = len(mesh.positions)
    if paint is Paint.WEIGHTS:
        if mesh.skeleton is not None:
            rgb = heat_color(bone_weights(mesh, joint_row(mesh, bone)))
        else:
            owner = rigid_bone(mesh, scene)
            rgb = np.repeat(heat_color([1.0 if _same_bone(owner, bone) else 0.0]), count, axis=0)
    elif paint is Paint.BONE_MAP:
        if mesh.skeleton is not None:
            rgb = bone_color(dominant_joints(mesh))
        else:
            owner = rigid_bone(mesh, scene)
            rgb = np.repeat(bone_color([owner.get_index()]) if owner is not None and owner.get_index() >= 0
                            else np.array([NEUTRAL_COLOR], np.float32), count, axis=0)
    elif paint is Paint.WEIGHT_CHECK:
        rgb = np.where(weight_problems(mesh)[:, None], np.float32(PROBLEM_COLOR), np.float32(NEUTRAL_COLOR))
    else:
        rgb = np.ones((count, 3), np.float32)
    return np.c_[rgb, np.ones(count)].astype(np.float32)


def _same_bone(a, b) -> bool:
    """The same bone, or bones of two skins linked to one node."""
    if a is None or b is None:
        return False
    return a is b or (a.get_transform_node() is not None and a.get_transform_node() is b.get_transform_node())

