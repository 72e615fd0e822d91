"""An FBX mesh's arrays as the reader hands them over (control points, per-corner indices,
polygons, skin clusters, blend shapes) turned into drawable vertex arrays, in numpy: polygons
fan-triangulated, corners with the same values merged into one vertex, triangles grouped by
material, each vertex's strongest influences, blend shapes as dense deltas. Every index is
checked against what it indexes (a file whose counts lie is refused, in words)."""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from ..model.polygons import polygon_arrays, strongest_influences

def mesh_arrays(spec: dict, arrays: dict, prefix: str) -> dict:
    """{"positions", "normals", "uv", "colors" (or absent), "indices", "parts": [(first, count,
    material slot)], "faces_skipped", and for a skinned mesh "joints", "weights", "extra" (cluster
    indices and weights per vertex), and "morph_positions", "morph_normals" with blend shapes}."""
    what = f"mesh {spec['mesh_name']!r}"
    points = arrays[prefix + ".points"]
    attributes = {label: (arrays[f"{prefix}.{label}"], arrays[f"{prefix}.{label}.index"])
                  for label in spec["attributes"]}
    result = polygon_arrays(points, arrays[prefix + ".points.index"], attributes, arrays[prefix + ".faces"],
                            arrays[prefix + ".face_material"], what)
    vertex_point = result["vertex_point"]
    if spec["clusters"]:
        result.update(_influences(spec, arrays, prefix, len(points), vertex_point, what))
    if spec["channels"]:
        result.update(_blend_shapes(spec, arrays, prefix, len(points), vertex_point, what))
    return result


def _influences(spec: dict, arrays: dict, prefix: str, point_count: int, vertex_point: np.ndarray, what: str) -> dict:
    """Per vertex, the clusters that move it and their weights, largest first (see
    strongest_influences; how many more there were: ``extra``)."""
    counts = arrays[prefix + ".cluster_counts"].astype(np.int64)
    point = arrays[prefix + ".cluster_points"].astype(np.int64)
    weight = arrays[prefix + ".cluster_weights"]
    if len(counts) != len(spec["clusters"]) or counts.sum() != len(point) or len(weight) != len(point):
        raise ViewerError(f"{what}: its skin clusters' vertex and weight counts do not agree")
    if len(point) and point.max() >= point_count:
        raise ViewerError(f"{what}: a skin cluster names vertex {int(point.max())}, the mesh has {point_count}")
    if not np.isfinite(weight).all():
        raise ViewerError(f"{what}: a skin weight is not a finite number")
    joints, weights, extra = strongest_influences(point, np.repeat(np.arange(len(counts)), counts), weight,
                                                  point_count)
    return {"joints": joints[vertex_point], "weights": weights[vertex_point], "extra": extra[vertex_point],
            "binds": arrays[prefix + ".binds"].reshape(-1, 4, 4),
            "bind_world": arrays[prefix + ".bind_world"].reshape(4, 4)}


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
