"""Rows of quaternions (x, y, z, w) as Babylon.js computes with them (numpy)."""

from __future__ import annotations

import numpy as np

from ..model.animation import dot4, slerp

__all__ = ["conjugate", "dot4", "multiply", "normalize", "power", "slerp"]


def multiply(a, b):
    """Row-wise Hamilton products a * b, summed in the order of Babylon's
    Quaternion.multiplyToRef (``a.multiplyToRef(b)``): the rotation b, then a."""
    ax, ay, az, aw = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bz, bw = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack((ax * bw + ay * bz - az * by + aw * bx,
                     -ax * bz + ay * bw + az * bx + aw * by,
                     ax * by - ay * bx + az * bw + aw * bz,
                     -ax * bx - ay * by - az * bz + aw * bw), axis=-1)


def conjugate(q):
    out = np.array(q, dtype=np.float64, copy=True)
    out[..., :3] *= -1.0
    return out


def normalize(q):
    q = np.asarray(q, dtype=np.float64)
    length = np.sqrt((q * q).sum(axis=-1, keepdims=True))
    return np.divide(q, length, out=np.zeros_like(q), where=length > 0) + (length == 0) * np.array([0, 0, 0, 1.0])


def power(q, exponent: float):
    """Unit quaternions raised to ``exponent`` (the same axis, the angle times it), shortest way."""
    q = normalize(q)
    q = np.where(q[..., 3:4] < 0, -q, q)
    w = np.clip(q[..., 3], -1.0, 1.0)
    half = np.arccos(w)
    s = np.sin(half)
    axis = np.divide(q[..., :3], s[..., None], out=np.zeros_like(q[..., :3]), where=s[..., None] > 1e-12)
    new = half * exponent
    return np.concatenate((axis * np.sin(new)[..., None], np.cos(new)[..., None]), axis=-1)
