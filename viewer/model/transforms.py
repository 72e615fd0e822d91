"""Batched TRS maths in Babylon.js's conventions (numpy only).

Layout, fixed once for the whole project: a 4x4 matrix is row-major with the translation
in row 3, a point transforms as ``v @ M`` and ``A @ B`` applies A first (pyrr's and
Babylon's layout). Quaternions are (x, y, z, w).

Every function takes stacks: positions (..., 3), quaternions (..., 4), scalings (..., 3),
matrices (..., 4, 4). We do not use pyrr's ``matrix44.create_from_quaternion`` here: under
its own row-vector convention it yields the inverse rotation (the x axis turned +90 about Z
lands on -Y), and it is not batched. The formulas below are Babylon's ``Matrix.ComposeToRef``,
``Matrix.decompose``, ``Quaternion.FromRotationMatrixToRef``, ``RotationYawPitchRoll`` and
``toEulerAngles``, so that decomposed values (not only matrices) match Babylon's.
"""

from __future__ import annotations

import numpy as np

def compose(scaling, quaternion, position, out=None):
    """Matrices from scaling, rotation quaternion and translation (Babylon's ComposeToRef)."""
    scaling = np.asarray(scaling, dtype=np.float64)
    quaternion = np.asarray(quaternion, dtype=np.float64)
    position = np.asarray(position, dtype=np.float64)
    shape = np.broadcast_shapes(scaling.shape[:-1], quaternion.shape[:-1], position.shape[:-1])
    if out is None:
        out = np.empty(shape + (4, 4))
    x, y, z, w = (quaternion[..., i] for i in range(4))
    x2, y2, z2 = x + x, y + y, z + z
    xx, xy, xz = x * x2, x * y2, x * z2
    yy, yz, zz = y * y2, y * z2, z * z2
    wx, wy, wz = w * x2, w * y2, w * z2
    sx, sy, sz = scaling[..., 0], scaling[..., 1], scaling[..., 2]
    out[..., 0, 0] = (1.0 - (yy + zz)) * sx
    out[..., 0, 1] = (xy + wz) * sx
    out[..., 0, 2] = (xz - wy) * sx
    out[..., 1, 0] = (xy - wz) * sy
    out[..., 1, 1] = (1.0 - (xx + zz)) * sy
    out[..., 1, 2] = (yz + wx) * sy
    out[..., 2, 0] = (xz + wy) * sz
    out[..., 2, 1] = (yz - wx) * sz
    out[..., 2, 2] = (1.0 - (xx + yy)) * sz
    out[..., :3, 3] = 0.0
    out[..., 3, :3] = position
    out[..., 3, 3] = 1.0
    return out


def quaternion_from_rotation_matrix(m):
    """Unit quaternions from pure rotation matrices (..., 4, 4) or (..., 3, 3).

    Babylon's FromRotationMatrixToRef, branch for branch, so the sign of the result matches.
    """
    m = np.asarray(m, dtype=np.float64)
    # Babylon names elements column-major: m12 is storage [1][0], m21 is [0][1].
    m11, m12, m13 = m[..., 0, 0], m[..., 1, 0], m[..., 2, 0]
    m21, m22, m23 = m[..., 0, 1], m[..., 1, 1], m[..., 2, 1]
    m31, m32, m33 = m[..., 0, 2], m[..., 1, 2], m[..., 2, 2]
    trace = m11 + m22 + m33
    q = np.empty(m.shape[:-2] + (4,))
    with np.errstate(divide="ignore", invalid="ignore"):
        s0 = 0.5 / np.sqrt(trace + 1.0)
        s1 = 2.0 * np.sqrt(1.0 + m11 - m22 - m33)
        s2 = 2.0 * np.sqrt(1.0 + m22 - m11 - m33)
        s3 = 2.0 * np.sqrt(1.0 + m33 - m11 - m22)
        candidates = np.stack([
            np.stack([(m32 - m23) * s0, (m13 - m31) * s0, (m21 - m12) * s0, 0.25 / s0], -1),
            np.stack([0.25 * s1, (m12 + m21) / s1, (m13 + m31) / s1, (m32 - m23) / s1], -1),
            np.stack([(m12 + m21) / s2, 0.25 * s2, (m23 + m32) / s2, (m13 - m31) / s2], -1),
            np.stack([(m13 + m31) / s3, (m23 + m32) / s3, 0.25 * s3, (m21 - m12) / s3], -1),
        ])
    branch = np.where(trace > 0, 0,
                      np.where((m11 > m22) & (m11 > m33), 1, np.where(m22 > m33, 2, 3)))
    q[...] = np.take_along_axis(candidates, branch[None, ..., None], axis=0)[0]
    return q


def decompose(m):
    """(scaling, quaternion, position) of affine matrices (Babylon's Matrix.decompose).

    A matrix with a non-positive determinant gets its Y scale negated, as Babylon does; a zero
    scale gives the identity rotation.
    """
    m = np.asarray(m, dtype=np.float64)
    position = m[..., 3, :3].copy()
    scaling = np.linalg.norm(m[..., :3, :3], axis=-1)
    det = np.linalg.det(m[..., :3, :3])
    scaling[..., 1] = np.where(det <= 0, -scaling[..., 1], scaling[..., 1])
    degenerate = np.any(scaling == 0, axis=-1)
    safe = np.where(degenerate[..., None], 1.0, scaling)
    rotation = m[..., :3, :3] / safe[..., :, None]
    quaternion = quaternion_from_rotation_matrix(rotation)
    quaternion[degenerate] = (0.0, 0.0, 0.0, 1.0)
    return scaling, quaternion, position


def quaternion_from_yaw_pitch_roll(rotation):
    """Quaternions from Babylon Euler vectors (x = pitch, y = yaw, z = roll).

    Babylon's Quaternion.RotationYawPitchRoll: roll about Z, then pitch about X, then yaw about Y.
    pyrr's create_from_eulers uses another order, hence this function.
    """
    rotation = np.asarray(rotation, dtype=np.float64)
    half = rotation * 0.5
    sp, cp = np.sin(half[..., 0]), np.cos(half[..., 0])
    sy, cy = np.sin(half[..., 1]), np.cos(half[..., 1])
    sr, cr = np.sin(half[..., 2]), np.cos(half[..., 2])
    return np.stack([
        cy * sp * cr + sy * cp * sr,
        sy * cp * cr - cy * sp * sr,
        cy * cp * sr - sy * sp * cr,
        cy * cp * cr + sy * sp * sr,
    ], axis=-1)


def yaw_pitch_roll_from_quaternion(quaternion):
    """Babylon Euler vectors (x = pitch, y = yaw, z = roll): Quaternion.toEulerAngles."""
    q = np.asarray(quaternion, dtype=np.float64)
    qx, qy, qz, qw = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    z_axis_y = qy * qz - qx * qw
    limit = 0.4999999
    sqw, sqz, sqx, sqy = qw * qw, qz * qz, qx * qx, qy * qy
    gimbal_yaw = 2.0 * np.arctan2(qy, qw)
    out = np.stack([
        np.arcsin(np.clip(-2.0 * z_axis_y, -1.0, 1.0)),
        np.arctan2(2.0 * (qz * qx + qy * qw), sqz - sqx - sqy + sqw),
        np.arctan2(2.0 * (qx * qy + qz * qw), -sqz - sqx + sqy + sqw),
    ], axis=-1)
    low, high = z_axis_y < -limit, z_axis_y > limit
    out[..., 0] = np.where(low, np.pi / 2, np.where(high, -np.pi / 2, out[..., 0]))
    out[..., 1] = np.where(low | high, gimbal_yaw, out[..., 1])
    out[..., 2] = np.where(low | high, 0.0, out[..., 2])
    return out


def singularity(m):
    """A scale-free measure of how close the 3x3 parts of matrices are to singular.

    |det| divided by the product of the row lengths: 1 for orthogonal rows, 0 when singular,
    independent of the overall scale, so tiny-but-valid bones are not refused.
    """
    m = np.asarray(m, dtype=np.float64)[..., :3, :3]
    norms = np.prod(np.linalg.norm(m, axis=-1), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norms > 0, np.abs(np.linalg.det(m)) / norms, 0.0)


# --- one matrix at a time (the Bone space API): the same formulas on Python floats, ~10x faster
# than the stacked versions above for a single 4x4.
def quaternion_from_rotation_matrix_one(m) -> np.ndarray:
    """``quaternion_from_rotation_matrix`` for one matrix, branch for branch."""
    (m11, m21, m31), (m12, m22, m32), (m13, m23, m33) = (row[:3] for row in np.asarray(m)[:3].tolist())
    trace = m11 + m22 + m33
    if trace > 0:
        s = 0.5 / np.sqrt(trace + 1.0)
        q = ((m32 - m23) * s, (m13 - m31) * s, (m21 - m12) * s, 0.25 / s)
    elif m11 > m22 and m11 > m33:
        s = 2.0 * np.sqrt(1.0 + m11 - m22 - m33)
        q = (0.25 * s, (m12 + m21) / s, (m13 + m31) / s, (m32 - m23) / s)
    elif m22 > m33:
        s = 2.0 * np.sqrt(1.0 + m22 - m11 - m33)
        q = ((m12 + m21) / s, 0.25 * s, (m23 + m32) / s, (m13 - m31) / s)
    else:
        s = 2.0 * np.sqrt(1.0 + m33 - m11 - m22)
        q = ((m13 + m31) / s, (m23 + m32) / s, 0.25 * s, (m21 - m12) / s)
    return np.array(q, dtype=np.float64)


def decompose_one(m):
    """``decompose`` for one matrix: (scaling, quaternion, position)."""
    m = np.asarray(m, dtype=np.float64)
    scaling = np.sqrt(np.einsum("ij,ij->i", m[:3, :3], m[:3, :3]))
    if determinant3(m) <= 0:
        scaling[1] = -scaling[1]
    if not np.all(scaling):
        return scaling, np.array([0.0, 0.0, 0.0, 1.0]), m[3, :3].copy()
    return scaling, quaternion_from_rotation_matrix_one(m[:3, :3] / scaling[:, None]), m[3, :3].copy()


def determinant3(m) -> float:
    """Determinant of the 3x3 part of one matrix."""
    (a, b, c), (d, e, f), (g, h, i) = (row[:3] for row in np.asarray(m)[:3].tolist())
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


def singularity_one(m) -> float:
    """``singularity`` for one matrix."""
    rows = [row[:3] for row in np.asarray(m)[:3].tolist()]
    norms = 1.0
    for x, y, z in rows:
        norms *= (x * x + y * y + z * z) ** 0.5
    return abs(determinant3(m)) / norms if norms > 0 else 0.0


def compose_one(scaling, quaternion, position) -> np.ndarray:
    """``compose`` for one matrix, the same operations in the same order on Python floats
    (so the same bits), without numpy's per-call cost."""
    sx, sy, sz = (float(v) for v in scaling)
    x, y, z, w = (float(v) for v in quaternion)
    px, py, pz = (float(v) for v in position)
    x2, y2, z2 = x + x, y + y, z + z
    xx, xy, xz = x * x2, x * y2, x * z2
    yy, yz, zz = y * y2, y * z2, z * z2
    wx, wy, wz = w * x2, w * y2, w * z2
    return np.array([
        [(1.0 - (yy + zz)) * sx, (xy + wz) * sx, (xz - wy) * sx, 0.0],
        [(xy - wz) * sy, (1.0 - (xx + zz)) * sy, (yz + wx) * sy, 0.0],
        [(xz + wy) * sz, (yz - wx) * sz, (1.0 - (xx + yy)) * sz, 0.0],
        [px, py, pz, 1.0],
    ])


def rotation_matrix_one(quaternion) -> np.ndarray:
    """``compose`` with unit scale and no translation (Babylon's Matrix.FromQuaternion), one quaternion."""
    x, y, z, w = np.asarray(quaternion, dtype=np.float64).tolist()
    xx, yy, zz = x * x, y * y, z * z
    xy, zw, zx, yw, yz, xw = x * y, z * w, z * x, y * w, y * z, x * w
    return np.array([
        [1.0 - 2.0 * (yy + zz), 2.0 * (xy + zw), 2.0 * (zx - yw), 0.0],
        [2.0 * (xy - zw), 1.0 - 2.0 * (zz + xx), 2.0 * (yz + xw), 0.0],
        [2.0 * (zx + yw), 2.0 * (yz - xw), 1.0 - 2.0 * (yy + xx), 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ])


def quaternion_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products a * b of (..., 4) xyzw quaternions (b applied first to a column vector)."""
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz], axis=-1)
