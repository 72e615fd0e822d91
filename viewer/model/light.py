"""KHR_lights_punctual lights placed by scene nodes (numpy only).

A light sits at its node's origin and shines along its node's -Z axis (glTF's convention), so
posing or animating the node moves the light. Intensity is in glTF's units: candela (lm/sr) for
point and spot lights, lux (lm/m^2) for directional ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

LIGHT_KINDS = ("directional", "point", "spot")


@dataclass
class PunctualLight:
    """One KHR_lights_punctual light on ``node`` (a TransformNode, or None for the world origin
    looking down -Z)."""

    kind: str  # "directional" | "point" | "spot"
    color: np.ndarray = field(default_factory=lambda: np.ones(3, np.float32))  # linear RGB
    intensity: float = 1.0
    range: float | None = None  # None: infinite (point and spot; directional lights have none)
    inner_cone_angle: float = 0.0  # spot: radians, full intensity inside
    outer_cone_angle: float = math.pi / 4  # spot: radians, no light outside
    node: object | None = None
    name: str = ""

    def world_matrix(self) -> np.ndarray:
        return np.eye(4) if self.node is None else np.asarray(self.node.get_world_matrix(), dtype=np.float64)

    def world_position(self) -> np.ndarray:
        """Where the light is: its node's origin in world space, (3,) float64."""
        return self.world_matrix()[3, :3].copy()

    def world_direction(self) -> np.ndarray:
        """Where the light shines: its node's -Z axis in world space, unit (3,) float64
        (row vectors: the direction is (0, 0, -1) @ the world matrix's linear part)."""
        direction = -self.world_matrix()[2, :3]
        length = float(np.linalg.norm(direction))
        return direction / length if length > 0 else np.array([0.0, 0.0, -1.0])


__all__ = ["LIGHT_KINDS", "PunctualLight"]
