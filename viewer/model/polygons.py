"""Polygon meshes as drawable arrays, for the readers of formats that store polygons with
per-corner attributes (FBX, USD): fan-triangulated, corners that share their values merged into
one vertex, triangles grouped by material, every index checked against what it indexes (a file
whose counts lie is refused, in words); and what both readers do to such arrays after: move them
by a matrix, keep each point's strongest influences, hold the vertices no joint moves. numpy only."""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from .arrays import merged_rows

MAX_INFLUENCES = 8  # joints per vertex the shader reads (SkinnedMesh takes 4 or 8)


def polygon_arrays(points: np.ndarray, corner_points, attributes: dict, faces, face_material, what: str) -> dict:
    """Polygons as drawable arrays. ``points`` (P, 3); ``corner_points`` each polygon corner's point;
    ``attributes`` {label: (values, each corner's index into them)}; ``faces`` (F, 2) each polygon's
    first corner and corner count; ``face_material`` each polygon's material slot (or empty).
    Returns {"positions", each label's per-vertex values, "indices", "parts": [(first index,
    index count, material slot)], "faces_skipped" (points and lines), "vertex_point" (each
    vertex's point)}: corners with the same point and values are one vertex."""
    corner_point = checked_indices(corner_points, len(points), what, "positions")
    corners = len(corner_point)
    # Each corner's values (its point and the attributes' values, not their indices: exporters
    # index normals per corner), so that corners with the same values become one vertex.
    columns, widths = [corner_point[:, None].astype(np.float64)], []
    for label, (values, index) in attributes.items():
        index = checked_indices(index, len(values), what, label)
        if len(index) != corners:
            raise ViewerError(f"{what}: {len(index)} {label} indices for {corners} polygon corners")
        columns.append(values[index])
        widths.append((label, values.shape[1]))
    key = np.concatenate(columns, axis=1)
    faces = np.asarray(faces).astype(np.int64).reshape(-1, 2)
    begin, count = faces[:, 0], faces[:, 1]
    if len(faces) and ((begin < 0).any() or (count < 0).any() or (begin + count > corners).any()):
        raise ViewerError(f"{what}: a polygon runs past its {corners} corners")
    polygon = count >= 3  # points and lines are not drawn
    per_face = np.where(polygon, count - 2, 0)
    face_of = np.repeat(np.arange(len(faces)), per_face)
    step = np.arange(len(face_of)) - np.repeat(np.cumsum(per_face) - per_face, per_face)
    first = begin[face_of]
    triangles = np.stack([first, first + step + 1, first + step + 2], axis=1)
    drawn = np.zeros(corners, dtype=bool)  # corners of points and lines make no vertices
    drawn[triangles.reshape(-1)] = True
    used = np.flatnonzero(drawn)
    unique, inverse = merged_rows(key[used])
    corner_vertex = np.full(corners, -1, dtype=np.int64)
    corner_vertex[used] = inverse
    vertex_point = unique[:, 0].astype(np.int64)
    result = {"positions": points[vertex_point], "faces_skipped": int((~polygon).sum()), "vertex_point": vertex_point}
    column = 1
    for label, width in widths:
        result[label] = unique[:, column:column + width]
        column += width
    face_material = np.asarray(face_material).astype(np.int64)
    if len(face_material) not in (0, len(faces)):
        raise ViewerError(f"{what}: {len(face_material)} face materials for {len(faces)} polygons")
    triangle_material = face_material[face_of] if len(face_material) else np.zeros(len(face_of), np.int64)
    order = np.argsort(triangle_material, kind="stable")
    result["indices"] = corner_vertex[triangles[order]].reshape(-1).astype(np.uint32)
    slots, starts = np.unique(triangle_material[order], return_index=True)
    ends = list(starts[1:]) + [len(order)]
    result["parts"] = [(3 * int(start), 3 * (int(end) - int(start)), int(slot))
                       for slot, start, end in zip(slots, starts, ends)]
    return result


def checked_indices(values: np.ndarray, length: int, what: str, of: str) -> np.ndarray:
    """``values`` as int64, each in 0..length-1 (else a ViewerError naming ``of``)."""
    values = np.asarray(values).astype(np.int64)
    if len(values) and (values.max() >= length or values.min() < 0):
        bad = int(values.max() if values.max() >= length else values.min())
        raise ViewerError(f"{what}: a polygon corner names {of} value {bad}, of {length}")
    return values




def move_vertex_data(data: dict, matrix: np.ndarray) -> None:
    """``data``'s "positions" (and "normals", "morph_positions", "morph_normals" when there) moved
    by the 4x4 ``matrix`` (row vectors), in place: normals by its inverse transpose, unit again."""
    linear = matrix[:3, :3]
    data["positions"] = data["positions"] @ linear + matrix[3, :3]
    normal_matrix = np.linalg.inv(linear).T
    if data.get("normals") is not None:
        normals = data["normals"] @ normal_matrix
        length = np.linalg.norm(normals, axis=-1, keepdims=True)
        data["normals"] = np.divide(normals, length, out=normals, where=length > 0)
    if "morph_positions" in data:
        data["morph_positions"] = data["morph_positions"] @ linear
        data["morph_normals"] = data["morph_normals"] @ normal_matrix


def strongest_influences(point: np.ndarray, joint: np.ndarray, weight: np.ndarray, point_count: int):
    """(joints, weights, extra): per point, the joints that move it by weight, largest first, at
    most MAX_INFLUENCES ((points, 4) when no point has more than 4, else (points, 8)), and how many
    more it had. ``point``, ``joint``, ``weight``: one row per influence (zero weights dropped)."""
    moving = weight != 0
    point, joint, weight = point[moving], joint[moving], weight[moving]
    order = np.lexsort((-weight, point))
    point, joint, weight = point[order], joint[order], weight[order]
    rank = np.arange(len(point)) - np.searchsorted(point, point)
    kept = rank < MAX_INFLUENCES
    width = 4 if not len(rank) or rank.max() < 4 else MAX_INFLUENCES
    joints = np.zeros((point_count, width), np.int64)
    weights = np.zeros((point_count, width), np.float64)
    joints[point[kept], rank[kept]] = joint[kept]
    weights[point[kept], rank[kept]] = weight[kept]
    return joints, weights, np.bincount(point[~kept], minlength=point_count)


def hold_unweighted(skeleton, mesh_name: str, joints: np.ndarray, weights: np.ndarray) -> int:
    """Vertices no joint moves (all weights zero, which FBX and USD allow) given to a joint of
    their own whose final matrix is the identity: they stay where they were bound, as Maya and
    UsdSkel keep them. Adds that bone (named after the mesh) to ``skeleton`` when needed; returns
    how many vertices it holds. ``joints`` and ``weights`` (V, n) are changed in place."""
    from .bone import Bone

    still = ~(weights > 0).any(axis=1)
    if not still.any():
        return 0
    index = len(skeleton.inverse_bind_matrices)
    Bone(f"{mesh_name} (unskinned vertices)", skeleton, None, local_matrix=np.eye(4), bind_matrix=np.eye(4),
         index=index)
    skeleton.inverse_bind_matrices = np.concatenate([skeleton.inverse_bind_matrices, np.eye(4)[None]])
    joints[still, 0], weights[still, 0] = index, 1.0
    return int(still.sum())
