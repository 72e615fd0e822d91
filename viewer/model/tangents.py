"""MikkTSpace tangents for normal mapping, in numpy (glTF asks for them where a file has none).

A vectorised port of Morten Mikkelsen's reference implementation (mikktspace.c, as Blender and
the Khronos tools run it with its default 180 degree threshold), over triangle lists:

1. vertices with the same position, normal and texture coordinate are one vertex (its welding);
2. per triangle, the first-order derivative of the position along u (``vOs``, eq. 18) and its
   orientation: whether the triangle's uv area is positive (orientation preserving). Triangles
   with no uv area, no extent along u or v, or two equal corners give no tangent of their own;
3. per welded vertex and orientation (MikkTSpace's group), each corner's ``vOs`` projected into
   the plane of the vertex normal and normalised, weighted by the corner's angle (the angle
   between its two edges in that plane), summed and normalised: the tangent, with ``w`` in glTF's
   convention (see below): -1 for groups whose uv area is positive, +1 for the others;
4. the corners of a triangle without a tangent of its own take the tangent of their vertex.

Where one vertex is used by triangles of both orientations (a mirrored-uv seam whose vertices
are shared), the two tangents differ in ``w``: the vertex is split, as MikkTSpace's per-corner
output welded back by value would split it. The vertex keeps the tangent of the side with the
larger corner angles; the other side's corners get a new vertex appended after the others
(``remap`` says which vertex each copies).

The sign ``w`` is MikkTSpace's negated, as glTF needs it (three.js's computeMikkTSpaceTangents
negates it for glTF by default; Blender feeds MikkTSpace 1 - v instead). MikkTSpace's bitangent
sign * cross(N, T) points along +dP/dv, the direction v grows. glTF's bitangent
cross(N, T) * w is the normal map's +Y, which is "up" in the image, and glTF's v is 0 at the
image's top and grows downwards: the bitangent must point along -dP/dv. Run on glTF's uvs as they
are, MikkTSpace's sign is therefore the wrong way round, and a normal map's bumps would render as
dimples. E.g. a quad facing +Z with u along +X and v along -Y (the image lying on it unmirrored):
tangent +X, bitangent +Y = cross(+Z, +X), so w = +1 (MikkTSpace: -1).

Differences from the C code, none of which changes a well-formed mesh: a group is every corner
of a welded vertex with one orientation (the C code also splits a group whose fans are not
connected through edges, which only folded or non-manifold fans have); corners of triangles
without a tangent of their own (zero uv area, or two equal corners) take their vertex's tangent
(the C code copies one from the first triangle it meets, in its order); a vertex no usable
triangle touches gets a unit tangent perpendicular to its normal, w +1 (the C code: (1, 0, 0),
w -1, i.e. +1 once negated for glTF). The per-triangle derivatives are computed in float32, operation by operation as the C
code does (a sliver whose derivative float32 loses gives no tangent in both); the sums in
float64. Against the C reference (built from the pymikktspace sdist, whose own build fails on
Python 3.11), on every corner of a triangle with uv area, CesiumMan's and the Fox's meshes and
a 48x96 uv sphere agree within 0.04 degrees (float32 rounding) and in w; a mirrored sphere too
but for one corner at a pole.
"""

from __future__ import annotations

import numpy as np

FLT_MIN = float(np.finfo(np.float32).tiny)  # MikkTSpace's NotZero threshold


def generate_tangents(positions, normals, texcoords, indices) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tangents (V', 4) float32, remap (V',) int64, indices (T*3,) int64) of a triangle list.

    ``positions`` (V, 3), ``normals`` (V, 3), ``texcoords`` (V, 2) and ``indices`` (T*3,).
    ``remap[i]`` is the input vertex output vertex ``i`` copies: ``arange(V)`` followed by the
    vertices split at mirrored seams; ``indices`` are the triangles over the output vertices.
    """
    positions = np.asarray(positions, dtype=np.float64)
    normals = _unit(np.asarray(normals, dtype=np.float64))
    uv = np.asarray(texcoords, dtype=np.float64)
    indices = np.asarray(indices, dtype=np.int64).reshape(-1)
    count = len(positions)
    triangles = indices.reshape(-1, 3)
    if not len(triangles):
        return _fallback(normals).astype(np.float32), np.arange(count), indices

    # 1. welding: one id per distinct (position, normal, uv), as MikkTSpace compares them (float32)
    key = np.ascontiguousarray(np.concatenate([np.asarray(positions, np.float32), np.asarray(normals, np.float32),
                                               np.asarray(uv, np.float32)], axis=1))
    key[key == 0] = 0  # -0.0 and 0.0 are one value
    _, welded = np.unique(key.view(np.dtype((np.void, key.dtype.itemsize * key.shape[1]))).reshape(-1),
                          return_inverse=True)
    welded = welded.reshape(-1)

    # 2. per triangle, in float32 operation by operation as the C code computes it (a sliver whose
    # derivative is lost to float32 rounding there gives no tangent here either): vOs (unit,
    # sign-corrected: dP/du's direction) and its orientation
    p = np.asarray(positions, np.float32)[triangles]  # (T, 3, 3)
    t = np.asarray(uv, np.float32)[triangles]  # (T, 3, 2)
    d1, d2 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
    t21, t31 = t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]
    area = t21[:, 0] * t31[:, 1] - t21[:, 1] * t31[:, 0]  # twice the signed uv area
    v_os = t31[:, 1, None] * d1 - t21[:, 1, None] * d2  # eq. 18
    v_ot = -t31[:, 0, None] * d1 + t21[:, 0, None] * d2  # eq. 19
    orient = area > 0
    length_s = np.sqrt(np.einsum("ti,ti->t", v_os, v_os, dtype=np.float32))
    length_t = np.sqrt(np.einsum("ti,ti->t", v_ot, v_ot, dtype=np.float32))
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        sign = np.where(orient, np.float32(1), np.float32(-1))
        v_os = np.where((length_s > FLT_MIN)[:, None], v_os * (sign / length_s)[:, None], 0.0).astype(np.float64)
        magnitude_s, magnitude_t = length_s / np.abs(area), length_t / np.abs(area)
    degenerate = ((p[:, 0] == p[:, 1]).all(axis=1) | (p[:, 0] == p[:, 2]).all(axis=1)
                  | (p[:, 1] == p[:, 2]).all(axis=1))
    good = (np.abs(area) > FLT_MIN) & (magnitude_s > FLT_MIN) & (magnitude_t > FLT_MIN) & ~degenerate

    # 3. per corner (triangle-major): its projected vOs weighted by its angle, into its group
    corner_vertex = triangles.reshape(-1)
    n = normals[corner_vertex]  # (C, 3)
    tangent = np.repeat(v_os, 3, axis=0)
    tangent = _unit(tangent - np.einsum("ci,ci->c", n, tangent)[:, None] * n)
    previous = positions[triangles[:, [2, 0, 1]].reshape(-1)] - positions[corner_vertex]
    following = positions[triangles[:, [1, 2, 0]].reshape(-1)] - positions[corner_vertex]
    previous = _unit(previous - np.einsum("ci,ci->c", n, previous)[:, None] * n)
    following = _unit(following - np.einsum("ci,ci->c", n, following)[:, None] * n)
    angle = np.arccos(np.clip(np.einsum("ci,ci->c", previous, following), -1.0, 1.0))
    corner_good = np.repeat(good, 3)
    group = np.where(corner_good, welded[corner_vertex] * 2 + np.repeat(orient, 3), -1)
    groups = 2 * (int(welded.max()) + 1)
    weighted = tangent * angle[:, None]
    sums = np.stack([np.bincount(group[corner_good], weighted[corner_good, k], minlength=groups)
                     for k in range(3)], axis=1)
    group_tangent = _unit(sums)
    usable = np.linalg.norm(group_tangent, axis=1) > 0.5
    group = np.where(corner_good & usable[np.maximum(group, 0)], group, -1)

    # 4. per vertex: the group of its larger corner angle stays on it, another gets a new vertex;
    # corners without a group take their vertex's.
    valid = group >= 0
    pairs = corner_vertex[valid] * groups + group[valid]
    unique_pairs, pair_of_corner = np.unique(pairs, return_inverse=True)
    pair_weight = np.bincount(pair_of_corner, angle[valid] + 1e-9, minlength=len(unique_pairs))
    pair_vertex, pair_group = np.divmod(unique_pairs, groups)
    order = np.lexsort((-pair_weight, pair_vertex))  # by vertex, the heaviest first
    first = np.ones(len(order), bool)
    first[1:] = pair_vertex[order][1:] != pair_vertex[order][:-1]
    primary = np.zeros(len(unique_pairs), bool)
    primary[order[first]] = True
    extra = np.flatnonzero(~primary)
    extra = extra[np.argsort(pair_vertex[extra] * groups + pair_group[extra], kind="stable")]
    output = np.empty(len(unique_pairs), np.int64)
    output[primary] = pair_vertex[primary]
    output[extra] = count + np.arange(len(extra))
    new_indices = corner_vertex.copy()
    new_indices[valid] = output[pair_of_corner]

    remap = np.concatenate([np.arange(count), pair_vertex[extra]])
    vertex_group = np.full(len(remap), -1)
    vertex_group[output] = pair_group
    tangents = np.empty((len(remap), 4))
    tangents[:, :3] = _fallback(normals[remap])
    tangents[:, 3] = 1.0
    has = vertex_group >= 0
    tangents[has, :3] = group_tangent[vertex_group[has]]
    # glTF's sign: MikkTSpace's negated (positive uv area: MikkTSpace +1, glTF -1), since glTF's v
    # runs down the image while its normal map's +Y (cross(N, T) * w) points up it: see the docstring.
    tangents[has, 3] = np.where(vertex_group[has] % 2 == 1, -1.0, 1.0)
    return tangents.astype(np.float32), remap, new_indices


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows normalised; rows of length <= FLT_MIN stay as they are (zeros)."""
    length = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.divide(vectors, length, out=np.array(vectors, dtype=np.float64), where=length > FLT_MIN)


def _fallback(normals: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to each normal (any; x unless the normal is near x)."""
    normals = np.asarray(normals, dtype=np.float64)
    axis = np.where((np.abs(normals[:, :1]) < 0.9), [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    result = _unit(axis - np.einsum("vi,vi->v", normals, axis)[:, None] * normals)
    return np.where((np.linalg.norm(result, axis=1) > 0.5)[:, None], result, axis)


__all__ = ["generate_tangents"]
