"""Overlay and ground geometry as numpy arrays (no GL): what the renderer draws as lines
and points, testable without a context.

Every function returns vertices as (N, 7) float32 rows of world-space xyz + rgba.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..options import MarkerKind

BONE_COLOR = (1.0, 0.78, 0.25, 0.95)
JOINT_COLOR = (1.0, 1.0, 1.0, 0.95)
SELECTED_COLOR = (0.25, 0.95, 1.0, 1.0)


class SkeletonSegments(NamedTuple):
    """One skeleton's drawn bone segments in world space: each bone's own segments run from
    its head to each child, or along its leaf axis; ``owners`` are the bones' indices in
    ``skeleton.bones`` (what a click on a segment picks)."""

    skeleton: object
    mesh: object
    heads: np.ndarray      # (N, 3) every joint
    starts: np.ndarray     # (S, 3)
    ends: np.ndarray       # (S, 3)
    owners: np.ndarray     # (S,) bone index of each segment


def skeleton_segments(scene) -> list:
    """The bone segments the overlay draws, per skeleton (a skeleton shared by two skins once).

    A line from each bone to each child; a leaf bone along the scene's leaf axis (bone space)
    for its ``length``, which is in the bone's own space (Babylon), so it scales with the
    bone; when unset, a world length along the axis's world direction: half the parent
    segment, or a tenth of the model's size for a bone that sits on its parent.
    """
    result = []
    model_size = float(np.linalg.norm(scene.rest_bounds[1] - scene.rest_bounds[0]))
    drawn = set()
    for mesh in scene.skinned_meshes:
        skeleton = mesh.skeleton
        if skeleton is None or id(skeleton) in drawn:
            continue
        drawn.add(id(skeleton))
        absolute = skeleton.get_absolute_matrices() @ mesh.world_matrix
        parents = skeleton.get_parent_indices()
        heads = absolute[:, 3, :3]
        children = np.flatnonzero(parents >= 0)
        has_child = np.zeros(len(parents), bool)
        has_child[parents[children]] = True
        leaves = np.flatnonzero(~has_child)
        segment = np.zeros(len(parents))
        segment[children] = np.linalg.norm(heads[children] - heads[parents[children]], axis=1)
        length = skeleton.get_bone_lengths()[leaves]
        # The leaf axis in world space, scaled as the bone is (an armature scaled x100 makes it
        # 100 long): a set length goes through that scale, the world-length fallback does not.
        axis = np.einsum("i,nij->nj", scene.leaf_bone_axis, absolute[leaves, :3, :3])
        axis_scale = np.linalg.norm(axis, axis=1)
        fallback = np.where(segment[leaves] > 0, 0.5 * segment[leaves], 0.1 * model_size)
        world_length = np.where(np.isnan(length), fallback, length * axis_scale)
        keep = (world_length > 0) & (axis_scale > 0)
        leaves = leaves[keep]
        tips = heads[leaves] + axis[keep] * (world_length[keep] / axis_scale[keep])[:, None]
        # A bone's own segments run from its head: to each child, or to its leaf tip.
        result.append(SkeletonSegments(skeleton, mesh, heads, np.concatenate([heads[parents[children]], heads[leaves]]),
                                       np.concatenate([heads[children], tips]),
                                       np.concatenate([parents[children], leaves])))
    return result


def skeleton_overlay(scene, selected_bone=None, segments=None):
    """(line vertices, point vertices) as (N, 7) arrays of xyz + rgba, in world space: the
    segments of ``skeleton_segments`` (or the ``segments`` given) and a dot at each joint.

    The selected bone's own segments (to its children, or its leaf segment) are highlighted,
    drawn last (after every skeleton's lines: two skins may share joints and draw the same lines).
    """
    starts, ends, lit, joints, lit_joints = [], [], [], [], []
    for entry in (skeleton_segments(scene) if segments is None else segments):
        selected = np.zeros(len(entry.heads), bool)
        if selected_bone is not None and selected_bone.get_skeleton() is entry.skeleton:
            selected[list(entry.skeleton.bones).index(selected_bone)] = True
        starts.append(entry.starts)
        ends.append(entry.ends)
        lit.append(selected[entry.owners])
        joints.append(entry.heads)
        lit_joints.append(selected)
    if not starts:
        return np.zeros((0, 7), np.float32), np.zeros((0, 7), np.float32)
    starts, ends, lit = np.concatenate(starts), np.concatenate(ends), np.concatenate(lit)
    joints, lit_joints = np.concatenate(joints), np.concatenate(lit_joints)
    order = np.argsort(lit, kind="stable")  # highlighted last, so on top
    lines = _segments(starts[order], ends[order], np.where(lit[order, None], SELECTED_COLOR, BONE_COLOR))
    order = np.argsort(lit_joints, kind="stable")
    points = np.c_[joints[order], np.where(lit_joints[order, None], SELECTED_COLOR, JOINT_COLOR)]
    return lines.astype(np.float32), points.astype(np.float32)


# Marker sizes in pixels (times the overlay's scale, as the joint dots' 7 px).
CROSS_PIXELS = 11.0    # half the width of a target's cross
RAY_PIXELS = 36.0      # the length of an axis ray
RING_PIXELS = 12.0     # the radius of a ring (around a joint dot's 7 px)
RING_SEGMENTS = 24


class MarkerGeometry(NamedTuple):
    """A marker overlay's vertices, (N, 7) float32 xyz + rgba each: ``lines`` drawn wide,
    ``guides`` drawn thin (both as GL lines, two vertices a segment), ``points`` as dots."""

    lines: np.ndarray
    guides: np.ndarray
    points: np.ndarray


def world_per_pixel(points, view, projection, height) -> np.ndarray:
    """World units per pixel of image height at each world point (N,), for a perspective
    projection (pyrr's row-vector layout): how big a pixel-sized marker must be there."""
    points = np.atleast_2d(np.asarray(points, dtype=np.float64))
    w = (np.c_[points, np.ones(len(points))] @ view @ projection)[:, 3]
    return 2.0 * np.abs(w) / (abs(projection[1, 1]) * max(float(height), 1.0))


def marker_overlay(markers, view, projection, height, scale: float = 1.0) -> MarkerGeometry:
    """World-space vertices for RenderOptions.markers, sized on screen (``scale`` times the
    pixel sizes above, as the joint dots): a CROSS is an X facing the camera with a dot in its
    middle, POINT dots, PATH wide segments through its points, LINE thin ones, RAY a wide
    segment of RAY_PIXELS from its first point along its direction, a RING a circle of radius
    RING_PIXELS facing the camera around each point."""
    right, up = np.asarray(view, float)[:3, 0], np.asarray(view, float)[:3, 1]  # camera axes in the world
    lines, guides, points = [], [], []
    for marker in markers:
        color = tuple(marker.color)
        xyz = np.asarray(marker.points, dtype=np.float64).reshape(-1, 3)
        kind = MarkerKind(marker.kind)
        if kind is MarkerKind.CROSS:
            for center, size in zip(xyz, world_per_pixel(xyz, view, projection, height) * CROSS_PIXELS * scale):
                for diagonal in (right + up, right - up):
                    lines.append((center - diagonal * size, center + diagonal * size, color))
                points.append((center, color))
        elif kind is MarkerKind.POINT:
            points += [(point, color) for point in xyz]
        elif kind in (MarkerKind.PATH, MarkerKind.LINE):
            segments = lines if kind is MarkerKind.PATH else guides
            segments += [(a, b, color) for a, b in zip(xyz[:-1], xyz[1:])]
        elif kind is MarkerKind.RAY:
            origin, direction = xyz[0], xyz[1]
            length = float(np.linalg.norm(direction))
            if length > 0:
                size = world_per_pixel(origin, view, projection, height)[0] * RAY_PIXELS * scale
                lines.append((origin, origin + direction / length * size, color))
        elif kind is MarkerKind.RING:
            angles = np.linspace(0.0, 2.0 * np.pi, RING_SEGMENTS + 1)
            circle = np.cos(angles)[:, None] * right + np.sin(angles)[:, None] * up  # (S+1, 3)
            for center, size in zip(xyz, world_per_pixel(xyz, view, projection, height) * RING_PIXELS * scale):
                around = center + circle * size
                lines += [(a, b, color) for a, b in zip(around[:-1], around[1:])]
    return MarkerGeometry(_colored_segments(lines), _colored_segments(guides), _colored_points(points))


AXIS_PIXELS = 28.0     # the length of a bone axis on screen
AXIS_COLORS = ((1.0, 0.2, 0.2, 1.0), (0.25, 0.95, 0.3, 1.0), (0.3, 0.5, 1.0, 1.0))  # X red, Y green, Z blue


def bone_axes(scene, bones, view, projection, height, scale: float = 1.0) -> np.ndarray:
    """Line vertices (N, 7) of bones' local X, Y and Z axes (red, green, blue) in world space,
    from each bone's head, AXIS_PIXELS * ``scale`` long on screen whatever the bone's scale
    (Babylon's BoneAxesViewer, sized as the overlay). ``bones``: a list of Bones, or None for
    every bone of every skeleton (a skeleton shared by two skins once)."""
    starts, ends, colors = [], [], []
    drawn = set()
    for mesh in scene.skinned_meshes:
        skeleton = mesh.skeleton
        if skeleton is None or id(skeleton) in drawn:
            continue
        drawn.add(id(skeleton))
        if bones is None:
            rows = slice(None)  # every bone, without a Python loop over them
        else:
            everyone = skeleton.bones
            rows = [everyone.index(bone) for bone in bones if bone is not None and bone.get_skeleton() is skeleton]
            if not rows:
                continue
        world = (skeleton.get_absolute_matrices()[rows] @ np.asarray(mesh.world_matrix, np.float64))
        heads = world[:, 3, :3]
        length = world_per_pixel(heads, view, projection, height) * AXIS_PIXELS * scale
        for axis in range(3):
            direction = world[:, axis, :3]
            norm = np.linalg.norm(direction, axis=1)
            keep = norm > 1e-12  # a bone scaled to nothing along an axis has no direction to show
            starts.append(heads[keep])
            ends.append(heads[keep] + direction[keep] / norm[keep, None] * length[keep, None])
            colors.append(np.repeat([AXIS_COLORS[axis]], keep.sum(), axis=0))
    if not starts:
        return np.zeros((0, 7), np.float32)
    return _segments(np.concatenate(starts), np.concatenate(ends), np.concatenate(colors)).astype(np.float32)


def _colored_segments(segments) -> np.ndarray:
    if not segments:
        return np.zeros((0, 7), np.float32)
    starts, ends, colors = zip(*segments)
    return _segments(np.array(starts), np.array(ends), np.array(colors, dtype=np.float64)).astype(np.float32)


def _colored_points(points) -> np.ndarray:
    if not points:
        return np.zeros((0, 7), np.float32)
    return np.array([(*point, *color) for point, color in points], dtype=np.float32)


def _segments(starts, ends, colors):
    """Line vertices (2N, 7): start, end, start, end, ... each with its segment's color."""
    vertices = np.empty((len(starts), 2, 7))
    vertices[:, 0, :3], vertices[:, 1, :3] = starts, ends
    vertices[:, :, 3:] = colors[:, None, :]
    return vertices.reshape(-1, 7)


def ground_grid(low, high):
    """Grid lines on the floor under the model: (vertices (N,7), fade radius).

    The spacing is a 1-2-5 step giving about 10 cells across the model; the grid reaches
    about three model sizes out and fades towards its edge.
    """
    low, high = np.asarray(low, float), np.asarray(high, float)
    size = max(float(np.max(high - low)), 1e-3)
    raw = size / 10.0
    exponent = np.floor(np.log10(raw))
    step = min((m * 10.0**exponent for m in (1, 2, 5, 10) if m * 10.0**exponent >= raw), default=raw)
    center = (low + high) / 2.0
    radius = 1.6 * size
    count = int(np.ceil(radius / step))
    cx, cz = np.round(center[0] / step) * step, np.round(center[2] / step) * step
    y = low[1]
    offsets = np.arange(-count, count + 1) * step
    vertices = []
    for i, offset in enumerate(offsets):
        major = (np.round(offset / step) % 5) == 0
        color = (0.62, 0.64, 0.68, 0.55) if major else (0.5, 0.52, 0.56, 0.3)
        vertices += [(cx + offset, y, cz - count * step, *color), (cx + offset, y, cz + count * step, *color),
                     (cx - count * step, y, cz + offset, *color), (cx + count * step, y, cz + offset, *color)]
    return np.array(vertices, np.float32), radius
