"""A plain per-bone reference for the skeleton maths, written the obvious way.

It shares no code with viewer.model: matrices come from pyrr, hierarchy walks are Python
loops over bones, exactly what the vectorized Skeleton must reproduce.
"""

from __future__ import annotations

import numpy as np
import pyrr


def trs_matrix(scaling, quaternion, position) -> np.ndarray:
    """S, then R, then T, for row vectors (pyrr's inverse-of-quaternion is Babylon's layout)."""
    scale = pyrr.matrix44.create_from_scale(np.asarray(scaling, dtype=np.float64))
    rotate = pyrr.matrix44.create_from_inverse_of_quaternion(np.asarray(quaternion, dtype=np.float64))
    translate = pyrr.matrix44.create_from_translation(np.asarray(position, dtype=np.float64))
    return scale @ rotate @ translate


def yaw_pitch_roll_matrix(rotation) -> np.ndarray:
    """Babylon's rotation vector (x pitch, y yaw, z roll): roll about Z, pitch about X, yaw about Y."""
    pitch, yaw, roll = rotation
    rz = pyrr.matrix44.create_from_inverse_of_quaternion(pyrr.quaternion.create_from_z_rotation(roll))
    rx = pyrr.matrix44.create_from_inverse_of_quaternion(pyrr.quaternion.create_from_x_rotation(pitch))
    ry = pyrr.matrix44.create_from_inverse_of_quaternion(pyrr.quaternion.create_from_y_rotation(yaw))
    return rz @ rx @ ry


def float32_store(matrix):
    """Round as Babylon does when it stores a matrix (its Matrix is a Float32Array)."""
    return np.asarray(matrix, dtype=np.float32).astype(np.float64)


def reference_matrices(parents, locals_, binds, store=lambda m: m):
    """Per-bone loop: absolute, absolute bind, absolute inverse bind and final for each bone.

    ``store`` is applied to every stored matrix; ``float32_store`` reproduces Babylon's
    rounding, so comparing the two runs measures how far float32 alone moves each result.
    """
    n = len(parents)
    locals_ = [store(m) for m in locals_]
    binds = [store(m) for m in binds]
    absolute = [None] * n
    absolute_bind = [None] * n

    def resolve(i):
        if absolute[i] is None:
            p = parents[i]
            if p is None:
                absolute[i] = locals_[i]
                absolute_bind[i] = binds[i]
            else:
                resolve(p)
                absolute[i] = store(locals_[i] @ absolute[p])
                absolute_bind[i] = store(binds[i] @ absolute_bind[p])

    for i in range(n):
        resolve(i)
    inverse_bind = [store(np.linalg.inv(m)) for m in absolute_bind]
    final = [store(inverse_bind[i] @ absolute[i]) for i in range(n)]
    return absolute, absolute_bind, inverse_bind, final
