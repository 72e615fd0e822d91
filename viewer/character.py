"""The built-in character: the seed's example, made in code.

A body and two arms merged into one mesh; three bones, ``body``, ``leftArm`` and
``rightArm``; every vertex weighted 1 to one bone. The bind pose is the natural one: the arm
bones sit at the shoulders, rotated +/-30 degrees about Z to follow the arms, which hang down
and out (an A-pose), so the arms run along their bones' local -Y axis.

Units are metres-ish; Y is up and the character faces +Z.
"""

from __future__ import annotations

import numpy as np

from .model import Bone, Scene, Skeleton, SkinnedMesh
from .model.material import srgb_to_linear
from .model.transforms import compose, quaternion_from_yaw_pitch_roll

SHOULDER = np.array([0.5, 1.5, 0.0])
ARM_ANGLE = np.radians(30.0)
ARM_LENGTH = 1.0

# Vertex colours are linear (glTF's COLOR_0): these are the display colours the character is painted in.
BODY_COLOR = tuple(srgb_to_linear((0.30, 0.45, 0.70, 1.0)))
ARM_COLOR = tuple(srgb_to_linear((0.93, 0.55, 0.25, 1.0)))
SKIN_COLOR = tuple(srgb_to_linear((0.93, 0.78, 0.65, 1.0)))


def arm_bind_matrix(side: int) -> np.ndarray:
    """side = +1 for the left arm (at +X), -1 for the right arm."""
    rotation = quaternion_from_yaw_pitch_roll([0.0, 0.0, side * ARM_ANGLE])
    return compose([1.0, 1.0, 1.0], rotation, SHOULDER * [side, 1, 1])


def arm_direction(side: int) -> np.ndarray:
    """Where an arm points in the bind pose: the bone's local -Y, rotated by its bind."""
    return np.array([0.0, -1.0, 0.0]) @ arm_bind_matrix(side)[:3, :3]


def build_character() -> Scene:
    skeleton = Skeleton("character")
    body = Bone("body", skeleton)
    left = Bone("leftArm", skeleton, body, local_matrix=arm_bind_matrix(+1))
    right = Bone("rightArm", skeleton, body, local_matrix=arm_bind_matrix(-1))
    body.length = 1.5
    left.length = right.length = ARM_LENGTH

    parts = []  # (positions, normals, indices, color, bone index)
    # Body (bone 0): legs, hips-to-shoulders torso, neck and head.
    for side in (+1, -1):
        parts.append((*_tube([0.17 * side, 0.0, 0.0], [0.17 * side, 0.9, 0.0], 0.10, 0.13), BODY_COLOR, 0))
        parts.append((*_sphere([0.17 * side, 0.02, 0.04], 0.11, squash=(1.0, 0.5, 1.5)), SKIN_COLOR, 0))
    parts.append((*_tube([0, 0.82, 0], [0, 1.58, 0], 0.30, 0.42, depth_scale=0.6), BODY_COLOR, 0))
    parts.append((*_sphere([0, 1.58, 0], 0.42, squash=(1.0, 0.25, 0.6)), BODY_COLOR, 0))
    parts.append((*_tube([0, 1.6, 0], [0, 1.75, 0], 0.09, 0.09), SKIN_COLOR, 0))
    parts.append((*_sphere([0, 1.93, 0], 0.21, squash=(0.9, 1.05, 1.0)), SKIN_COLOR, 0))
    # Arms (bones 1 and 2): shoulder ball, upper arm tapering to the wrist, hand.
    for side, bone in ((+1, 1), (-1, 2)):
        shoulder = SHOULDER * [side, 1, 1]
        wrist = shoulder + arm_direction(side) * (ARM_LENGTH - 0.12)
        parts.append((*_sphere(shoulder, 0.12), ARM_COLOR, bone))
        parts.append((*_tube(shoulder, wrist, 0.11, 0.075), ARM_COLOR, bone))
        parts.append((*_sphere(shoulder + arm_direction(side) * (ARM_LENGTH - 0.05), 0.09), SKIN_COLOR, bone))

    positions, normals, indices, colors, joints = [], [], [], [], []
    offset = 0
    for part_positions, part_normals, part_indices, color, bone in parts:
        positions.append(part_positions)
        normals.append(part_normals)
        indices.append(part_indices + offset)
        colors.append(np.tile(color, (len(part_positions), 1)))
        joints.append(np.full(len(part_positions), bone))
        offset += len(part_positions)
    joints = np.concatenate(joints)
    joint_rows = np.zeros((len(joints), 4), dtype=np.int32)
    joint_rows[:, 0] = joints
    weights = np.zeros((len(joints), 4), dtype=np.float32)
    weights[:, 0] = 1.0
    mesh = SkinnedMesh("character", np.concatenate(positions), np.concatenate(indices), skeleton,
                       joints=joint_rows, weights=weights, normals=np.concatenate(normals),
                       colors=np.concatenate(colors))
    return Scene("built-in character", [mesh], leaf_bone_axis=(0.0, -1.0, 0.0))


# --- geometry ---------------------------------------------------------------------------------
def marker_ball(center=(0.0, 0.0, 0.0), radius: float = 0.1, color=(0.1, 0.75, 1.0, 1.0),
                name: str = "marker") -> SkinnedMesh:
    """A small static sphere to mark a point in a scene (a target, a ball a hand reaches for);
    its ``world_matrix`` places it, so moving it is one assignment of row 3."""
    positions, normals, indices = _sphere((0.0, 0.0, 0.0), radius, rings=8, segments=12)
    world = np.eye(4)
    world[3, :3] = center
    return SkinnedMesh(name, positions, indices, None, normals=normals, world_matrix=world, base_color=color)


def _frame(axis):
    """Two unit vectors perpendicular to ``axis`` and to each other."""
    axis = axis / np.linalg.norm(axis)
    helper = np.array([0.0, 0.0, 1.0]) if abs(axis[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = np.cross(helper, axis)
    u /= np.linalg.norm(u)
    return u, np.cross(axis, u)


def _tube(start, end, radius_start, radius_end, segments=24, depth_scale=1.0):
    """An open tapered cylinder from ``start`` to ``end`` (ends are covered by spheres)."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    axis = end - start
    u, v = _frame(axis)
    if abs(axis[1]) > 0.99 * np.linalg.norm(axis):  # vertical: keep x and z for depth_scale
        u, v = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    angle = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ring = np.cos(angle)[:, None] * u + np.sin(angle)[:, None] * v * depth_scale
    positions = np.concatenate([start + radius_start * ring, end + radius_end * ring])
    slope = (radius_start - radius_end) / np.linalg.norm(axis)
    normal = ring / np.linalg.norm(ring, axis=1, keepdims=True) + slope * axis / np.linalg.norm(axis)
    normals = np.concatenate([normal, normal])
    i = np.arange(segments)
    j = (i + 1) % segments
    indices = np.stack([i, j, i + segments, j, j + segments, i + segments], axis=1)
    if np.dot(np.cross(u, v), axis) < 0:  # the ring turns clockwise about the axis: counter-clockwise faces
        indices = indices[:, [0, 2, 1, 3, 5, 4]]
    indices = indices.reshape(-1)
    return positions, normals / np.linalg.norm(normals, axis=1, keepdims=True), indices


def _sphere(center, radius, rings=14, segments=24, squash=(1.0, 1.0, 1.0)):
    theta = np.linspace(0, np.pi, rings + 1)
    phi = np.linspace(0, 2 * np.pi, segments + 1)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    unit = np.stack([np.sin(t) * np.cos(p), np.cos(t), np.sin(t) * np.sin(p)], axis=-1).reshape(-1, 3)
    squash = np.asarray(squash, float)
    positions = np.asarray(center, float) + radius * unit * squash
    normals = unit / squash
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    r, s = np.meshgrid(np.arange(rings), np.arange(segments), indexing="ij")
    a = r * (segments + 1) + s
    b = a + segments + 1
    indices = np.stack([a, a + 1, b, a + 1, b + 1, b], axis=-1).reshape(-1)  # counter-clockwise seen from outside
    return positions, normals, indices
