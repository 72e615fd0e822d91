"""A synthetic limb for skinning tests and the docs' picture: a tube along +X from 0 to
2 * SEGMENT, two bones ("upper" at the origin, "lower" at x = SEGMENT), the weights handing over
from upper to lower across the joint (0.5 / 0.5 on the ring at the joint itself)."""

from __future__ import annotations

import numpy as np

from viewer.model import Bone, Scene, Skeleton, SkinnedMesh
from viewer.model.transforms import compose

SEGMENT = 1.0
RADIUS = 0.25


def build_limb(rings: int = 81, sides: int = 48, blend: float = 0.3, color=(0.8, 0.55, 0.35, 1.0),
               stripes=None) -> Scene:
    """The limb; ``blend``: the half-width of the hand-over (smoothstep from SEGMENT - blend to
    SEGMENT + blend); ``rings`` odd puts a ring on the joint; ``stripes`` (a second colour):
    eight stripes along the limb, alternating with ``color``, so a twist shows."""
    skeleton = Skeleton("limb")
    upper = Bone("upper", skeleton)
    Bone("lower", skeleton, upper, local_matrix=compose([1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0], [SEGMENT, 0.0, 0.0]))
    x = np.linspace(0.0, 2.0 * SEGMENT, rings)
    angle = np.linspace(0.0, 2.0 * np.pi, sides, endpoint=False)
    ring = np.stack([np.zeros(sides), RADIUS * np.cos(angle), RADIUS * np.sin(angle)], axis=1)
    positions = (ring[None, :, :] + x[:, None, None] * np.array([1.0, 0.0, 0.0])).reshape(-1, 3)
    normals = np.tile(ring / RADIUS, (rings, 1))
    t = np.clip((x - (SEGMENT - blend)) / (2.0 * blend), 0.0, 1.0)
    lower = np.repeat(t * t * (3.0 - 2.0 * t), sides)
    weights = np.stack([1.0 - lower, lower, np.zeros_like(lower), np.zeros_like(lower)], axis=1)
    joints = np.tile([0, 1, 0, 0], (len(positions), 1))
    quads = []
    for r in range(rings - 1):
        for s in range(sides):
            a, b = r * sides + s, r * sides + (s + 1) % sides
            c, d = a + sides, b + sides
            quads += [a, c, b, b, c, d]
    colors = np.tile(color, (len(positions), 1))
    if stripes is not None:
        sector = np.tile((np.arange(sides) * 8 // sides) % 2 == 1, rings)
        colors[sector] = stripes
    mesh = SkinnedMesh("limb", positions, np.array(quads), skeleton, joints=joints, weights=weights,
                       normals=normals, colors=colors)
    return Scene("twisted limb", [mesh])


def twist(scene: Scene, degrees: float) -> None:
    """Turn the lower bone ``degrees`` about the limb's axis (+X)."""
    half = np.radians(degrees) / 2.0
    scene.skinned_meshes[0].skeleton.bones[1].rotation_quaternion = [np.sin(half), 0.0, 0.0, np.cos(half)]


def joint_ring(scene: Scene) -> np.ndarray:
    """Indices of the vertices on the ring at the joint (weights 0.5 / 0.5)."""
    mesh = scene.skinned_meshes[0]
    return np.flatnonzero(np.isclose(mesh.positions[:, 0], SEGMENT))
