"""glTF animations as AnimationClips: each channel's keyframe times and values, checked
(times increase, enough values for the interpolation, rotation keys usable as quaternions)."""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from ..model import TransformNode
from ..model.animation import AnimationChannel, AnimationClip
from .container import GltfFile
from .validate import short

FLOAT, BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT = 5126, 5120, 5121, 5122, 5123


def read_clip(file: GltfFile, index: int, nodes: list[TransformNode]) -> AnimationClip:
    """Animation ``index``, driving ``nodes`` (the scene's nodes, by node index). Channels that
    target morph weights or no node (an extension's target) are left out; the rest plays."""
    spec = file.document["animations"][index]
    name = spec.get("name") or f"animation{index}"
    channels = []
    checked_times = {}  # input accessor -> its keyframe times, read and checked once per clip
    for c, channel in enumerate(spec["channels"]):
        target = channel["target"]
        path = target["path"]
        what = f"animation {index} ({short(name)}) channel {c}"
        if target.get("node") is None or path == "weights":
            continue
        sampler_index = channel["sampler"]
        sampler = spec["samplers"][sampler_index]
        interpolation = sampler.get("interpolation") or "LINEAR"
        input_index, output_index = sampler["input"], sampler["output"]
        inputs, outputs = f"{what} sampler {sampler_index} input", f"{what} sampler {sampler_index} output"
        file.require_accessor_kind(input_index, inputs, ("SCALAR",), (FLOAT,))
        width = 4 if path == "rotation" else 3
        file.require_accessor_kind(output_index, outputs, (f"VEC{width}",),
                                   (FLOAT, BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT) if width == 4 else (FLOAT,))
        times = checked_times.get(input_index)
        if times is None:
            times = file.accessor(input_index, inputs).astype(np.float64).reshape(-1)
            values = file.accessor(output_index, outputs).astype(np.float64)
            step = np.diff(times)
            if (step <= 0).any():
                k = int(np.flatnonzero(step <= 0)[0]) + 1
                raise file.error(f"accessor {input_index} ({inputs}): keyframe times must increase, but time {k} "
                                 f"({times[k]:g}) follows {times[k - 1]:g}")
            checked_times[input_index] = times
        else:
            times = times.copy()  # each channel owns its arrays
            values = file.accessor(output_index, outputs).astype(np.float64)
        per_key = 3 if interpolation == "CUBICSPLINE" else 1
        if len(values) != len(times) * per_key:
            raise file.error(f"accessor {output_index} ({outputs}): {len(values)} values for {len(times)} "
                             f"keyframe times ({len(times) * per_key} expected for {interpolation})")
        if path == "rotation" and interpolation != "CUBICSPLINE":
            values = _unit_keyframes(file, values.reshape(-1, 4), what)
        try:
            channels.append(AnimationChannel(nodes[target["node"]], path, times, values, interpolation))
        except ViewerError as error:  # the model's own checks
            raise file.error(f"{what}: {error}") from None
    return AnimationClip(name, channels)


def _unit_keyframes(file: GltfFile, quaternions: np.ndarray, what: str) -> np.ndarray:
    """Rotation keys within 1e-3 of unit length are kept as stored (files round them, and
    Babylon keeps them so); ones clearly off are normalized, with one warning."""
    norms = np.linalg.norm(quaternions, axis=1)
    if np.any(norms == 0):
        raise file.error(f"{what}: rotation keyframe {int(np.flatnonzero(norms == 0)[0])} is the zero quaternion")
    off = np.abs(norms - 1.0) > 1e-3
    if off.any():
        file.warn("keyframes", f"{what}: {int(off.sum())} rotation keyframes are not unit quaternions; normalized")
        quaternions = np.where(off[:, None], quaternions / norms[:, None], quaternions)
    return quaternions
