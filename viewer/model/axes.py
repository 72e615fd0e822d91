"""Axis and unit conversion to glTF's convention (+Y up, metres, the front facing +Z), the one
place every reader (BVH, FBX, USD) turns a file's axes and units into boneviewer's.

Axes are named as text: "x", "+y", "-z". Rotations are 3x3 in the row-vector layout (v @ R).
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError

AXES = {"x": 0, "y": 1, "z": 2}


def axis_vector(axis: str) -> np.ndarray:
    """The unit vector of an axis name ("y", "-z", "+x")."""
    text = axis.strip().lower()
    index = AXES.get(text.lstrip("+-"))
    if index is None:
        raise ViewerError(f"axis {axis!r}: expected x, y, z, -x, -y or -z")
    vector = np.zeros(3)
    vector[index] = -1.0 if text.startswith("-") else 1.0
    return vector


def axis_name(axis: str) -> str:
    """The signed name of an axis: "+y", "-z"."""
    text = axis.strip().lower()
    return ("-" if text.startswith("-") else "+") + text.lstrip("+-")


def vector_axis(vector: np.ndarray) -> str:
    """The name ("+x", "-z") of the axis nearest a vector."""
    index = int(np.argmax(np.abs(vector)))
    return ("-" if vector[index] < 0 else "+") + "xyz"[index]


def facing_rotation(up: str, forward: str) -> np.ndarray:
    """The proper rotation (3x3, row vectors) taking the file's ``up`` axis to +Y and its
    ``forward`` axis to +Z (glTF's up and front); every entry 0 or +-1, so it is exact."""
    up_axis, forward_axis = axis_vector(up), axis_vector(forward)
    if np.dot(up_axis, forward_axis) != 0:
        raise ViewerError(f"forward axis {axis_name(forward)} is along the up axis {axis_name(up)}: "
                          "the forward axis must be one of the other two")
    # The rows are the file's vectors taken to +X, +Y and +Z: (up x forward, up, forward) is
    # right-handed as (x, y, z) is, so this orthonormal basis's transpose is its inverse.
    return np.stack([np.cross(up_axis, forward_axis), up_axis, forward_axis]).T


def file_conversion(up: str, forward: str, meters_per_unit: float) -> tuple[np.ndarray, float]:
    """(rotation, scale) taking a file whose ``up`` and ``forward`` axes and unit (in metres)
    are given to glTF's convention: +Y up, the front facing +Z, metres."""
    if not (np.isfinite(meters_per_unit) and meters_per_unit > 0):
        raise ViewerError(f"a unit of {meters_per_unit!r} metres: must be a finite number more than 0")
    return facing_rotation(up, forward), float(meters_per_unit)


def describe_conversion(up: str, forward: str, meters_per_unit: float, converted: bool) -> str:
    """What a reader did with a file's axes and units, in words, for the log and ``info``:
    "up +z, front -y, 1 unit = 0.01 m: turned to +Y up, front +Z, metres"."""
    said = f"up {axis_name(up)}, front {axis_name(forward)}, 1 unit = {meters_per_unit:g} m"
    if not converted:
        return f"{said}: kept as the file has them (file axes)"
    if np.array_equal(facing_rotation(up, forward), np.eye(3)) and meters_per_unit == 1.0:
        return f"{said}: already glTF's (+Y up, front +Z, metres)"
    return f"{said}: turned to +Y up, front +Z, metres"


class FileAxes:
    """A file's up axis, front and unit, and what a reader does with them: turned to glTF's by a
    rotation and a uniform scale folded into the top-level nodes (and their keys), which a TRS
    holds exactly, so no node is added; ``converted=False`` keeps the file's numbers."""

    def __init__(self, up: str, front: str, meters_per_unit: float, converted: bool = True, note: str = ""):
        self.up, self.front, self.unit, self.converted, self.note = axis_name(up), axis_name(front), meters_per_unit, \
            converted, note
        rotation, scale = file_conversion(self.up, self.front, meters_per_unit)
        self.rotation, self.scale = (rotation, scale) if converted else (np.eye(3), 1.0)
        from .transforms import quaternion_from_rotation_matrix

        self.quaternion = quaternion_from_rotation_matrix(self.rotation)

    @property
    def matrix(self) -> np.ndarray:
        """The conversion as a 4x4 (row vectors)."""
        matrix = np.eye(4)
        matrix[:3, :3] = self.rotation * self.scale
        return matrix

    @property
    def identity(self) -> bool:
        return self.scale == 1.0 and np.array_equal(self.rotation, np.eye(3))

    def describe(self) -> str:
        said = describe_conversion(self.up, self.front, self.unit, self.converted)
        return f"{said} ({self.note})" if self.note else said

    def as_dict(self) -> dict:
        return {"up": self.up, "front": self.front, "unit_meters": self.unit, "converted": self.converted,
                "description": self.describe()}

    def fold(self, t: np.ndarray, r: np.ndarray, s: np.ndarray):
        """A top-level node's translation, rotation (xyzw) and scale (rows of keys, or one) with
        the conversion applied after them."""
        if self.identity:
            return t, r, s
        from .transforms import quaternion_product

        return (t @ self.rotation) * self.scale, quaternion_product(self.quaternion, r), s * self.scale
