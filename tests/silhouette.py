"""Which pixels a model covers, computed exactly: its triangles as boneviewer poses and projects
them, rasterised in integer arithmetic after snapping the window coordinates to a 1/2^bits pixel
grid, as a GPU's rasteriser does (GL_SUBPIXEL_BITS: 8 on Mesa's llvmpipe, 4 on SwiftShader, which
draws Babylon.js's recorded pictures).

Babylon's recorded silhouettes are exactly boneviewer's geometry at 4 bits, and boneviewer's own at
8: the ~10-20 edge pixels where the two pictures differ are the rasterisers' sub-pixel precision,
not a camera, pose or projection difference (tests/test_fidelity.py).
"""

from __future__ import annotations

import numpy as np


def window_triangles(scene, camera, width: int, height: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per mesh: GL window coordinates of its skinned vertices (x right, y up, pixels, float64) and
    its triangles (n, 3) as vertex indices."""
    scene.prepare()
    matrix = camera.view_matrix() @ camera.projection_matrix(width / height)
    meshes = []
    for mesh in scene.meshes:
        points = mesh.skinned_positions()
        clip = np.c_[points, np.ones(len(points))] @ matrix
        if np.any(clip[:, 3] <= 0.0):
            raise ValueError(f"mesh {mesh.name!r} reaches behind the camera: not clipped here")
        ndc = clip[:, :2] / clip[:, 3:4]
        window = np.c_[(ndc[:, 0] + 1.0) / 2.0 * width, (ndc[:, 1] + 1.0) / 2.0 * height]
        meshes.append((window, np.asarray(mesh.indices, np.int64).reshape(-1, 3)))
    return meshes


def coverage(meshes, width: int, height: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(covered, tied): (height, width) bool masks, rows top first (as a PNG). ``covered``: pixel
    centres strictly inside a triangle (front or back facing) once its vertices are rounded to the
    1/2^bits grid; ``tied``: centres exactly on an edge of one and inside none (a rasteriser's tie
    rule decides those)."""
    unit = 1 << bits
    covered = np.zeros((height, width), bool)
    loose = np.zeros((height, width), bool)
    for window, triangles in meshes:
        snapped = np.round(window * unit).astype(np.int64)
        for triangle in snapped[triangles]:
            low, high = triangle.min(0) // unit, triangle.max(0) // unit + 1
            x0, y0 = max(int(low[0]), 0), max(int(low[1]), 0)
            x1, y1 = min(int(high[0]), width - 1), min(int(high[1]), height - 1)
            if x1 < x0 or y1 < y0:
                continue
            (ax, ay), (bx, by), (cx, cy) = triangle
            area = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
            if area == 0:
                continue
            xs = np.arange(x0, x1 + 1, dtype=np.int64) * unit + unit // 2  # pixel centres, in grid units
            ys = np.arange(y0, y1 + 1, dtype=np.int64)[:, None] * unit + unit // 2
            sign = 1 if area > 0 else -1
            edges = [sign * ((qx - px) * (ys - py) - (qy - py) * (xs - px))
                     for (px, py), (qx, qy) in (((ax, ay), (bx, by)), ((bx, by), (cx, cy)), ((cx, cy), (ax, ay)))]
            covered[y0:y1 + 1, x0:x1 + 1] |= (edges[0] > 0) & (edges[1] > 0) & (edges[2] > 0)
            loose[y0:y1 + 1, x0:x1 + 1] |= (edges[0] >= 0) & (edges[1] >= 0) & (edges[2] >= 0)
    return covered[::-1], (loose & ~covered)[::-1]


def mismatches(mask: np.ndarray, covered: np.ndarray, tied: np.ndarray) -> tuple[int, int]:
    """(pixels ``mask`` covers that the exact coverage leaves out, pixels it leaves out that the
    exact coverage covers); tied pixels count either way."""
    return int((mask & ~covered & ~tied).sum()), int((covered & ~mask).sum())
