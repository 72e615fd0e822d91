"""An FBX mesh's arrays as the reader hands them over (control points, per-corner indices,
polygons, skin clusters, blend shapes) turned into drawable vertex arrays, in numpy: polygons
fan-triangulated, corners with the same values merged into one vertex, triangles grouped by
material, each vertex's strongest influences, blend shapes as dense deltas. Every index is
checked against what it indexes (a file whose counts lie is refused, in words)."""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError

MAX_INFLUENCES = 8  # joints per vertex the shader reads


def mesh_arrays(spec: dict, arrays: dict, prefix: str) -> dict:
    """{"positions", "normals", "uv", "colors" (or absent), "indices", "parts": [(first, count,
    material slot)], "faces_skipped", and for a skinned mesh "joints", "weights", "extra" (cluster
    indices and weights per vertex), and "morph_positions", "morph_normals" with blend shapes}."""
    what = f"mesh {spec['mesh_name']!r}"
    points = arrays[prefix + ".points"]
    corner_point = _indices(arrays[prefix + ".points.index"], len(points), what, "positions")
    corners = len(corner_point)
    # Each corner's values (its control point and the attributes' values, not their indices:
    # exporters index normals per corner), so that corners with the same values become one vertex.
    columns, widths = [corner_point[:, None].astype(np.float64)], []
    for label in spec["attributes"]:
        values = arrays[f"{prefix}.{label}"]
        index = _indices(arrays[f"{prefix}.{label}.index"], len(values), what, label)
        if len(index) != corners:
            raise ViewerError(f"{what}: {len(index)} {label} indices for {corners} polygon corners")
        columns.append(values[index])
        widths.append((label, values.shape[1]))
    key = np.concatenate(columns, axis=1)
    faces = arrays[prefix + ".faces"].astype(np.int64)
    begin, count = faces[:, 0], faces[:, 1]
    if len(faces) and (begin + count > corners).any():
        raise ViewerError(f"{what}: a polygon runs past its {corners} corners")
    polygon = count >= 3  # points and lines are not drawn
    per_face = np.where(polygon, count - 2, 0)
    face_of = np.repeat(np.arange(len(faces)), per_face)
    step = np.arange(len(face_of)) - np.repeat(np.cumsum(per_face) - per_face, per_face)
    first = begin[face_of]
    triangles = np.stack([first, first + step + 1, first + step + 2], axis=1)
    used = np.unique(triangles)  # corners of points and lines make no vertices
    unique, inverse = np.unique(key[used], axis=0, return_inverse=True)
    corner_vertex = np.full(corners, -1, dtype=np.int64)
    corner_vertex[used] = inverse.reshape(-1)
    vertex_point = unique[:, 0].astype(np.int64)
    result = {"positions": points[vertex_point], "faces_skipped": int((~polygon).sum()), "vertex_point": vertex_point}
    column = 1
    for label, width in widths:
        result[label] = unique[:, column:column + width]
        column += width
    face_material = arrays[prefix + ".face_material"].astype(np.int64)
    if len(face_material) not in (0, len(faces)):
        raise ViewerError(f"{what}: {len(face_material)} face materials for {len(faces)} polygons")
    triangle_material = face_material[face_of] if len(face_material) else np.zeros(len(face_of), np.int64)
    order = np.argsort(triangle_material, kind="stable")
    result["indices"] = corner_vertex[triangles[order]].reshape(-1).astype(np.uint32)
    slots, starts = np.unique(triangle_material[order], return_index=True)
    ends = list(starts[1:]) + [len(order)]
    result["parts"] = [(3 * int(start), 3 * (int(end) - int(start)), int(slot)) for slot, start, end in zip(slots, starts, ends)]
    if spec["clusters"]:
        result.update(_influences(spec, arrays, prefix, len(points), vertex_point, what))
    if spec["channels"]:
        result.update(_blend_shapes(spec, arrays, prefix, len(points), vertex_point, what))
    return result


def _indices(values: np.ndarray, length: int, what: str, of: str) -> np.ndarray:
    values = values.astype(np.int64)
    if len(values) and values.max() >= length:
        raise ViewerError(f"{what}: a polygon corner names {of} value {int(values.max())}, of {length}")
    return values


def _influences(spec: dict, arrays: dict, prefix: str, point_count: int, vertex_point: np.ndarray, what: str) -> dict:
    """Per vertex, the clusters that move it and their weights, largest first, MAX_INFLUENCES at
    most (how many more there were: ``extra``)."""
    counts = arrays[prefix + ".cluster_counts"].astype(np.int64)
    point = arrays[prefix + ".cluster_points"].astype(np.int64)
    weight = arrays[prefix + ".cluster_weights"]
    if len(counts) != len(spec["clusters"]) or counts.sum() != len(point) or len(weight) != len(point):
        raise ViewerError(f"{what}: its skin clusters' vertex and weight counts do not agree")
    if len(point) and point.max() >= point_count:
        raise ViewerError(f"{what}: a skin cluster names vertex {int(point.max())}, the mesh has {point_count}")
    if not np.isfinite(weight).all():
        raise ViewerError(f"{what}: a skin weight is not a finite number")
    owner = np.repeat(np.arange(len(counts)), counts)
    nonzero = weight != 0
    point, weight, owner = point[nonzero], weight[nonzero], owner[nonzero]
    order = np.lexsort((-weight, point))
    point, weight, owner = point[order], weight[order], owner[order]
    rank = np.arange(len(point)) - np.searchsorted(point, point)
    kept = rank < MAX_INFLUENCES
    width = 4 if not len(rank) or rank.max() < 4 else MAX_INFLUENCES
    joints = np.zeros((point_count, width), np.int64)
    weights = np.zeros((point_count, width), np.float64)
    joints[point[kept], rank[kept]] = owner[kept]
    weights[point[kept], rank[kept]] = weight[kept]
    extra = np.bincount(point[~kept], minlength=point_count)
    return {"joints": joints[vertex_point], "weights": weights[vertex_point], "extra": extra[vertex_point],
            "binds": arrays[prefix + ".binds"].reshape(-1, 4, 4), "bind_world": arrays[prefix + ".bind_world"].reshape(4, 4)}


def _blend_shapes(spec: dict, arrays: dict, prefix: str, point_count: int, vertex_point: np.ndarray, what: str) -> dict:
    """Each channel's full-weight shape as dense (targets, vertices, 3) position and normal deltas
    (a shape keyed at a target weight other than 1 scaled to reach it at 1)."""
    positions = np.zeros((len(spec["channels"]), point_count, 3))
    normals = np.zeros_like(positions)
    for k, channel in enumerate(spec["channels"]):
        points = arrays[f"{prefix}.shape{k}.points"].astype(np.int64)
        if len(points) and points.max() >= point_count:
            raise ViewerError(f"{what}: blend shape {channel['name']!r} moves vertex {int(points.max())}, "
                              f"the mesh has {point_count}")
        deltas = arrays[f"{prefix}.shape{k}.positions"]
        if len(deltas) != len(points):
            raise ViewerError(f"{what}: blend shape {channel['name']!r} has {len(deltas)} offsets for "
                              f"{len(points)} vertices")
        scale = 1.0 / channel["target_weight"] if channel["target_weight"] > 0 else 1.0
        positions[k, points] = deltas * scale
        if f"{prefix}.shape{k}.normals" in arrays:
            normals[k, points] = arrays[f"{prefix}.shape{k}.normals"] * scale
    return {"morph_positions": positions[:, vertex_point], "morph_normals": normals[:, vertex_point]}
