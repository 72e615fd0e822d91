"""Keyframe animation of TransformNodes (glTF's samplers and channels; numpy only).

A clip holds channels; ``apply(t)`` samples every channel at ``t`` seconds (clamped to the
keyframes: looping is the caller's choice) and writes translation / rotation / scale into
the nodes. LINEAR (slerp for rotations), STEP and CUBICSPLINE, as glTF 2.0 defines them.
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError

INTERPOLATIONS = ("LINEAR", "STEP", "CUBICSPLINE")
PATHS = {"translation": 3, "rotation": 4, "scale": 3}


class AnimationChannel:
    def __init__(self, node, path: str, times, values, interpolation: str = "LINEAR"):
        if path not in PATHS:
            raise ViewerError(f"animation channel on {node.name!r}: unsupported path {path!r}")
        if interpolation not in INTERPOLATIONS:
            raise ViewerError(f"animation channel on {node.name!r}: unknown interpolation {interpolation!r}")
        self.node, self.path, self.interpolation = node, path, interpolation
        self.times = np.asarray(times, dtype=np.float64).reshape(-1)
        width = PATHS[path]
        values = np.asarray(values, dtype=np.float64)
        keys = len(self.times)
        what = f"animation channel {path} of node {node.name!r}"
        if keys == 0:
            raise ViewerError(f"{what}: no keyframes")
        if not np.all(np.isfinite(self.times)) or np.any(np.diff(self.times) <= 0):
            raise ViewerError(f"{what}: keyframe times must be finite and strictly increasing")
        per_key = 3 if interpolation == "CUBICSPLINE" else 1
        if values.size != keys * per_key * width:
            raise ViewerError(f"{what}: {values.size} output values for {keys} keyframes "
                              f"({keys * per_key * width} expected)")
        if not np.all(np.isfinite(values)):
            raise ViewerError(f"{what}: keyframe values contain NaN or infinity")
        # CUBICSPLINE keys are (in-tangent, value, out-tangent) triplets.
        self.values = values.reshape(keys, per_key, width) if per_key == 3 else values.reshape(keys, width)

    @property
    def duration(self) -> float:
        return float(self.times[-1])

    def sample(self, t: float) -> np.ndarray:
        times, values = self.times, self.values
        cubic = self.interpolation == "CUBICSPLINE"
        if t <= times[0] or len(times) == 1:
            return (values[0, 1] if cubic else values[0]).copy()
        if t >= times[-1]:
            return (values[-1, 1] if cubic else values[-1]).copy()
        i = int(np.searchsorted(times, t, side="right")) - 1
        if self.interpolation == "STEP":
            return values[i].copy()
        dt = times[i + 1] - times[i]
        u = (t - times[i]) / dt
        if cubic:
            u2, u3 = u * u, u * u * u
            result = ((2 * u3 - 3 * u2 + 1) * values[i, 1] + (u3 - 2 * u2 + u) * dt * values[i, 2]
                      + (-2 * u3 + 3 * u2) * values[i + 1, 1] + (u3 - u2) * dt * values[i + 1, 0])
            if self.path == "rotation":
                result = result / np.linalg.norm(result)
            return result
        if self.path == "rotation":
            return slerp(values[i], values[i + 1], u)
        return values[i] * (1.0 - u) + values[i + 1] * u

    def apply(self, t: float) -> None:
        value = self.sample(t)
        if self.path == "translation":
            self.node.position = value
        elif self.path == "rotation":
            self.node.rotation_quaternion = value
        else:
            self.node.scaling = value


def slerp(a, b, u):
    """Shortest-path spherical interpolation, as Babylon's Quaternion.Slerp.

    Like Babylon (and three.js) the result is not renormalized, so keyframes stored with a
    little rounding (0.707 for sqrt(0.5)) give Babylon's numbers; the loader normalizes
    keyframes that are clearly not unit quaternions.
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    dot = float(a @ b)
    sign = 1.0
    if dot < 0.0:
        dot, sign = -dot, -1.0
    if dot > 0.999999:  # nearly parallel: lerp avoids dividing by a vanishing sine
        wa, wb = 1.0 - u, u
    else:
        theta = np.arccos(dot)
        wa, wb = np.sin((1.0 - u) * theta) / np.sin(theta), np.sin(u * theta) / np.sin(theta)
    return wa * a + sign * wb * b


class AnimationClip:
    def __init__(self, name: str, channels: list[AnimationChannel]):
        self.name = name
        self.channels = list(channels)
        self.duration = max((c.duration for c in self.channels), default=0.0)

    def __repr__(self) -> str:
        return f"AnimationClip({self.name!r}, {len(self.channels)} channels, {self.duration:.3f} s)"

    def apply(self, t: float) -> None:
        """Sample every channel at ``t`` seconds and write the results into the nodes."""
        t = float(t)
        if not np.isfinite(t):
            raise ViewerError(f"animation {self.name!r}: time must be a finite number, got {t}")
        for channel in self.channels:
            channel.apply(t)
