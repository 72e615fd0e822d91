"""Dual-quaternion skinning: the other branch of the CPU skinning, and the per-bone data the
skinning shader's SKINNING_DQ reads (numpy; the compiled kernel's dq_bones where it is built).

Each bone's final matrix F (row vectors: ``v @ F``) is split as Kavan et al. ("Geometric
skinning with approximate dual quaternion blending", 2008, section 4.3) and Maya split it: its
linear part by the polar decomposition into a symmetric scale/shear P applied first and a
rotation R after it (``v @ F[:3,:3] == (v @ P) @ R``), and its translation t. A vertex is moved
by the P of its joints blended linearly, then by the rigid parts (R, t) blended as dual
quaternions, as libigl's ``igl::dqs`` (which takes rotations and translations only) blends
them: influence by influence, a quaternion whose dot product with the sum so far is negative is
added with its weight negated (antipodality), then the real and dual sums are both divided by
the real sum's length (Kavan's approximate blend, without making the dual part orthogonal). The
hemisphere check is libigl's since 2024 (pull request 2390); its 2.5.1 wheel, the tests'
reference, sums the signs it is given. For rigid bones (P the identity) that is ``igl::dqs``;
libigl takes its bones in index order, this takes a vertex's influences in its slot order (the
order the shader reads them), the same sums unless two of a vertex's bones turn about 180
degrees apart.

The blend is the affine map ``v -> rotate(c0, v @ Pb) + t``; ``dq_blend`` returns it as one
(V,4,4) matrix per vertex, so positions, normals (inverse transpose) and tangents go through the
same code as linear blend skinning's blended matrices.
"""

from __future__ import annotations

import numpy as np

from . import native
from .transforms import compose


def bone_dual_quaternions(matrices) -> np.ndarray:
    """``reference_bone_dual_quaternions``' array: the compiled kernel's loop (csrc/ckernel.c's
    dq_bones) for the bones it takes (rows orthogonal), numpy's for the rest (or all, where the
    kernel is not built)."""
    module = native.ckernel
    if module is not None:
        source = np.ascontiguousarray(matrices)
        if source.dtype not in (np.float32, np.float64):
            source = source.astype(np.float64)
        out = np.empty((len(source), 4, 4))
        general = np.zeros(len(source), bool)
        left = module.dq_bones(source, out, general)
        if left == 0:
            return out
        if left > 0:
            out[general] = reference_bone_dual_quaternions(source[general])
            return out
    return reference_bone_dual_quaternions(matrices)


def reference_bone_dual_quaternions(matrices) -> np.ndarray:
    """(J,4,4) final matrices -> (J,4,4) float64 packed as the shader reads them: row 0 the
    rotation quaternion (x, y, z, w), row 1 the dual part (x, y, z, w: half the translation
    times the rotation), row 2 (P00, P01, P02, P11) and row 3 (P12, P22, 0, 0): the symmetric
    scale/shear applied before the rotation (the identity for a rigid bone).

    The linear part A splits as A = P R (polar decomposition; unique for an invertible A): R the
    orthogonal factor (SVD's U Vt), P = A R^T. Where R mirrors (det < 0), R is negated into a
    rotation and P with it (P R is still A). Bones whose rows are orthogonal (a bone scaled
    along its own axes, or not at all: nearly every rig) take the short way, R the rows
    normalized and P their lengths, the same factors without an SVD."""
    matrices = np.asarray(matrices, dtype=np.float64)
    count = len(matrices)
    linear = matrices[:, :3, :3]
    lengths = np.sqrt(np.einsum("jik,jik->ji", linear, linear))  # (J,3) row lengths
    safe = np.where(lengths > 0, lengths, 1.0)
    rotation = linear / safe[:, :, None]
    gram = np.einsum("jik,jlk->jil", rotation, rotation)
    orthogonal = (np.abs(gram - np.eye(3)).reshape(count, 9).max(axis=1) < ORTHOGONAL) & (lengths > 0).all(axis=1)
    scale = np.zeros((count, 3, 3))
    scale[:, [0, 1, 2], [0, 1, 2]] = lengths
    general = np.flatnonzero(~orthogonal)
    if len(general):
        u, _, vt = np.linalg.svd(linear[general])
        rotation[general] = u @ vt
        scale[general] = linear[general] @ np.swapaxes(rotation[general], 1, 2)
    r = rotation
    det = (r[:, 0, 0] * (r[:, 1, 1] * r[:, 2, 2] - r[:, 1, 2] * r[:, 2, 1])
           - r[:, 0, 1] * (r[:, 1, 0] * r[:, 2, 2] - r[:, 1, 2] * r[:, 2, 0])
           + r[:, 0, 2] * (r[:, 1, 0] * r[:, 2, 1] - r[:, 1, 1] * r[:, 2, 0]))
    mirror = det < 0
    if mirror.any():
        rotation[mirror] *= -1.0
        scale[mirror] *= -1.0
    real = _quaternions(rotation)
    t = matrices[:, 3, :3]
    x, y, z, w = real[:, 0], real[:, 1], real[:, 2], real[:, 3]
    tx, ty, tz = t[:, 0], t[:, 1], t[:, 2]
    packed = np.zeros((count, 4, 4))
    packed[:, 0] = real
    # libigl's dual part: 0.5 * (t, 0) * q
    packed[:, 1, 0] = 0.5 * (tx * w + ty * z - tz * y)
    packed[:, 1, 1] = 0.5 * (-tx * z + ty * w + tz * x)
    packed[:, 1, 2] = 0.5 * (tx * y - ty * x + tz * w)
    packed[:, 1, 3] = -0.5 * (tx * x + ty * y + tz * z)
    # the symmetric part (the mean of P and its transpose: P is symmetric up to rounding)
    packed[:, 2, :3] = (scale[:, 0] + scale[:, :, 0]) / 2.0
    packed[:, 2, 3] = scale[:, 1, 1]
    packed[:, 3, 0] = (scale[:, 1, 2] + scale[:, 2, 1]) / 2.0
    packed[:, 3, 1] = scale[:, 2, 2]
    return packed


# Rows orthogonal within this (after normalizing): the bone's scale is along its own axes.
ORTHOGONAL = 1e-6


def _quaternions(rotation) -> np.ndarray:
    """Unit quaternions (x, y, z, w) of (J,3,3) rotations (row vectors: ``v @ R`` turns v by
    q), each from the largest of its four components (Shepperd's method, no branch per bone):
    K[a, b] = 4 q_a q_b is read off the matrix, and q = K[k] / (2 sqrt(K[k, k]))."""
    m = np.swapaxes(rotation, 1, 2)  # column vectors: M = R^T
    k = np.empty((len(m), 4, 4))
    k[:, 0, 0] = 1.0 + m[:, 0, 0] - m[:, 1, 1] - m[:, 2, 2]
    k[:, 1, 1] = 1.0 - m[:, 0, 0] + m[:, 1, 1] - m[:, 2, 2]
    k[:, 2, 2] = 1.0 - m[:, 0, 0] - m[:, 1, 1] + m[:, 2, 2]
    k[:, 3, 3] = 1.0 + m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2]
    k[:, 0, 1] = k[:, 1, 0] = m[:, 0, 1] + m[:, 1, 0]
    k[:, 0, 2] = k[:, 2, 0] = m[:, 0, 2] + m[:, 2, 0]
    k[:, 1, 2] = k[:, 2, 1] = m[:, 1, 2] + m[:, 2, 1]
    k[:, 0, 3] = k[:, 3, 0] = m[:, 2, 1] - m[:, 1, 2]
    k[:, 1, 3] = k[:, 3, 1] = m[:, 0, 2] - m[:, 2, 0]
    k[:, 2, 3] = k[:, 3, 2] = m[:, 1, 0] - m[:, 0, 1]
    largest = np.argmax(np.einsum("jii->ji", k), axis=1)
    row = k[np.arange(len(k)), largest]
    q = row / (2.0 * np.sqrt(row[np.arange(len(k)), largest]))[:, None]
    return q / np.sqrt(np.einsum("ji,ji->j", q, q))[:, None]


def dq_blend(joints, weights, packed) -> np.ndarray:
    """Per vertex the (V,4,4) affine matrix (row vectors) of the dual-quaternion blend of its
    influences (``packed``: ``bone_dual_quaternions``' array)."""
    packed = np.asarray(packed, dtype=np.float64)
    real, dual = packed[:, 0], packed[:, 1]
    scale = packed[:, 2:].reshape(len(packed), 8)[:, :6]
    count = len(joints)
    b0, be, s = np.zeros((count, 4)), np.zeros((count, 4)), np.zeros((count, 6))
    for k in range(joints.shape[1]):
        j = joints[:, k]
        w = weights[:, k].astype(np.float64)
        q = real[j]
        signed = np.where(np.einsum("vi,vi->v", b0, q) < 0, -w, w)[:, None]
        b0 += signed * q
        be += signed * dual[j]
        s += w[:, None] * scale[j]
    length = np.sqrt(np.einsum("vi,vi->v", b0, b0))[:, None]
    c0, ce = b0 / length, be / length
    d0, de, a0, ae = c0[:, :3], ce[:, :3], c0[:, 3:], ce[:, 3:]
    out = compose(np.ones(3), c0, 2.0 * (a0 * de - ae * d0 + np.cross(d0, de)))
    blended_scale = np.empty((count, 3, 3))
    blended_scale[:, 0] = s[:, 0:3]
    blended_scale[:, 1, 0], blended_scale[:, 1, 1], blended_scale[:, 1, 2] = s[:, 1], s[:, 3], s[:, 4]
    blended_scale[:, 2, 0], blended_scale[:, 2, 1], blended_scale[:, 2, 2] = s[:, 2], s[:, 4], s[:, 5]
    out[:, :3, :3] = blended_scale @ out[:, :3, :3]  # scale/shear first, then the rotation
    return out


def dq_skin_positions(positions, joints, weights, packed):
    """(skinned (V,3) float64, the blended (V,4,4) matrices)."""
    blended = dq_blend(joints, weights, packed)
    positions = np.asarray(positions, dtype=np.float64)
    return np.einsum("vi,vij->vj", positions, blended[:, :3, :3]) + blended[:, 3, :3], blended
