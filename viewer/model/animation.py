"""Keyframe animation of TransformNodes (glTF's samplers and channels).

A clip holds channels; ``apply(t)`` samples every channel at ``t`` seconds (clamped to the
keyframes: looping is the caller's choice) and writes translation / rotation / scale into
the nodes. LINEAR (slerp for rotations), STEP and CUBICSPLINE, as glTF 2.0 defines them.

Channels that share keyframe times, interpolation, path and NodeTable are one batch: one
sampling writes all their nodes' rows of the table (transform_node.NodeTable) and bumps their
versions. The sampling is compiled (csrc/ckernel.c's Sampler) when the compiled kernel is there
(viewer/model/native.py); ``_ChannelBatch.sample`` below, numpy, is the reference and the fallback.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ViewerError
from . import native
from .arrays import distinct
from .checks import OUT_OF_RANGE, fits

INTERPOLATIONS = ("LINEAR", "STEP", "CUBICSPLINE")
PATHS = {"translation": 3, "rotation": 4, "scale": 3}


class AnimationChannel:
    _alone = None  # the channel as a batch of one, made when it is first sampled by itself

    def __init__(self, node, path: str, times, values, interpolation: str = "LINEAR", *, checked: bool = False):
        """``checked=True``: float64 arrays a loader has already checked (finite, times strictly
        increasing, the value count right for the interpolation), taken without a second pass."""
        if path not in PATHS:
            raise ViewerError(f"animation channel on {node.name!r}: unsupported path {path!r}")
        if interpolation not in INTERPOLATIONS:
            raise ViewerError(f"animation channel on {node.name!r}: unknown interpolation {interpolation!r}")
        self.node, self.path, self.interpolation = node, path, interpolation
        self.times, self.values = keyframes(times, values, interpolation, PATHS[path],
                                            f"animation channel {path} of node {node.name!r}", checked)
        self._alone = None

    @classmethod
    def of_checked(cls, node, path: str, times: np.ndarray, values: np.ndarray, interpolation: str):
        """A channel of a loader's arrays, checked and shaped already (float64 times (keys,) and
        values as ``keyframes`` returns them; a known path and interpolation): no second look."""
        channel = cls.__new__(cls)  # its one-channel batch is the class's None until sampled alone
        channel.node, channel.path, channel.interpolation = node, path, interpolation
        channel.times, channel.values = times, values
        return channel

    @property
    def duration(self) -> float:
        return float(self.times[-1])

    def set_keys(self, times, values, interpolation: str) -> None:
        """Replace the keyframes (float64 arrays as ``keyframes`` returns, already checked);
        the clip holding the channel must then be told (AnimationClip.keys_changed)."""
        self.times, self.values, self.interpolation = times, values, interpolation
        self._alone = None

    def sample(self, t: float) -> np.ndarray:
        """The channel's value at ``t`` seconds (clamped to its keyframes)."""
        if not hasattr(self.node, "table"):  # a bone posed by itself (no TransformNode): no batch row
            values = self.values[:, :, None, :] if self.interpolation == "CUBICSPLINE" else self.values[:, None, :]
            return interpolate_keyframes(self.times, values, self.interpolation, t, self.path == "rotation")[0]
        if self._alone is None:
            self._alone = _ChannelBatch([self])  # one kernel serves channels alone and in batches
        return self._alone.sample(t)[0]

    def apply(self, t: float) -> None:
        value = self.sample(t)
        if self.path == "translation":
            self.node.position = value
        elif self.path == "rotation":
            self.node.rotation_quaternion = value
        else:
            self.node.scaling = value


def keyframes(times, values, interpolation: str, width: int, what: str, checked: bool = False, of: str = ""):
    """(times (keys,), values (keys, width) or (keys, 3, width) for CUBICSPLINE's in-tangent,
    value, out-tangent triplets) as float64, checked unless a loader already did: keyframes
    exist, times finite and strictly increasing, the value count right, values finite."""
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    values = np.asarray(values, dtype=np.float64)
    keys, per_key = len(times), 3 if interpolation == "CUBICSPLINE" else 1
    if not checked:
        if keys == 0:
            raise ViewerError(f"{what}: no keyframes")
        if not fits(times):
            raise ViewerError(f"{what}: keyframe times contain {OUT_OF_RANGE}")
        if (np.diff(times) <= 0).any():
            raise ViewerError(f"{what}: keyframe times must be finite and strictly increasing")
        if values.size != keys * per_key * width:
            raise ViewerError(f"{what}: {values.size} output values for {keys} keyframes{of} "
                              f"({keys * per_key * width} expected for {interpolation})")
        if not fits(values):
            raise ViewerError(f"{what}: keyframe values contain {OUT_OF_RANGE}")
    return times, values.reshape(keys, per_key, width) if per_key == 3 else values.reshape(keys, width)


def interpolate_keyframes(times, values, interpolation: str, t: float, rotation: bool = False) -> np.ndarray:
    """Keyframe values at ``t`` seconds, clamped to the keyframes: LINEAR (slerp for rotations,
    as glTF and Babylon do), STEP or CUBICSPLINE (``values`` as (keys, 3, ...) in-tangent, value,
    out-tangent; rotations normalized). The numpy reference of every sampler here."""
    cubic = interpolation == "CUBICSPLINE"
    if t <= times[0] or len(times) == 1:
        return (values[0, 1] if cubic else values[0]).copy()
    if t >= times[-1]:
        return (values[-1, 1] if cubic else values[-1]).copy()
    i = int(np.searchsorted(times, t, side="right")) - 1
    if interpolation == "STEP":
        return values[i].copy()
    dt = times[i + 1] - times[i]
    u = (t - times[i]) / dt
    if cubic:
        u2, u3 = u * u, u * u * u
        result = ((2 * u3 - 3 * u2 + 1) * values[i, 1] + (u3 - 2 * u2 + u) * dt * values[i, 2]
                  + (-2 * u3 + 3 * u2) * values[i + 1, 1] + (u3 - u2) * dt * values[i + 1, 0])
        if rotation:  # glTF normalizes spline rotations; a zero one stays
            length = np.sqrt(dot4(result, result))[:, None]
            result = np.divide(result, length, out=result.copy(), where=length > 0)
        return result
    if rotation:
        return slerp(values[i], values[i + 1], u)
    return values[i] * (1.0 - u) + values[i + 1] * u


def clip_time(time: float, duration: float, loop: bool = True) -> float:
    """The time to sample a clip of ``duration`` seconds at, for a playhead at ``time``.

    Looping, times past either end wrap around, while the end itself stays the clip's last
    frame; not looping, they stop at the ends. A clip with no duration is always at 0.
    """
    if duration <= 0:
        return 0.0
    if 0.0 <= time <= duration:
        return float(time)
    return float(time % duration) if loop else float(min(max(time, 0.0), duration))


class AnimationClip:
    def __init__(self, name: str, channels: list[AnimationChannel]):
        self.name = name
        self.channels = list(channels)
        self.duration = max((c.duration for c in self.channels), default=0.0)
        self._packed_for: list | None = None
        self._packed: list = []

    def __repr__(self) -> str:
        return f"AnimationClip({self.name!r}, {len(self.channels)} channels, {self.duration:.3f} s)"

    def apply(self, t: float) -> None:
        """Sample every channel at ``t`` seconds and write the results into the nodes.

        Channels that share keyframe times, interpolation and path are sampled together: one
        search for the keyframe and one batched lerp / slerp / spline for all of them, the same
        numbers as ``AnimationChannel.sample`` channel by channel.
        """
        t = float(t)
        if not math.isfinite(t):
            raise ViewerError(f"animation {self.name!r}: time must be a finite number, got {t}")
        if self._packed_for is None or self.channels != self._packed_for or self._packed_kernel is not native.ckernel:
            self._packed = _pack(self.channels)
            self._packed_for = list(self.channels)
            self._packed_kernel = native.ckernel
        for batch in self._packed:
            batch.apply(t)

    _packed_kernel = None

    # --- keyframe editing ------------------------------------------------------------------------
    def key_times(self) -> np.ndarray:
        """Every time at which some channel has a key, sorted, each once (read-only).

        The timeline asks every frame: the union is kept until a channel's times array is
        replaced (set_keys does that) or the channels change."""
        arrays = [channel.times for channel in self._all_channels()]
        cached = self._key_times
        if cached is None or len(cached[0]) != len(arrays) or any(a is not b for a, b in zip(cached[0], arrays)):
            times = distinct(np.concatenate(arrays)) if arrays else np.zeros(0)
            times.flags.writeable = False
            self._key_times = cached = (arrays, times)
        return cached[1]

    _key_times = None  # (the channels' times arrays, their union)

    def set_key(self, target, path: str, time: float, value, interpolation: str = "LINEAR") -> None:
        """Key ``value`` for ``target``'s ``path`` (translation, rotation, scale) at ``time``: a key
        within KEY_TOLERANCE seconds of it is replaced, else one is inserted; the channel is made
        when missing, and takes ``interpolation`` (glTF keeps one per channel)."""
        self.set_keys(time, [(target, path, value)], interpolation)

    def set_keys(self, time: float, entries, interpolation: str = "LINEAR") -> None:
        """``set_key`` for many (target, path, value) at one time, each channel found once."""
        channels = {(id(c.node), c.path): c for c in self.channels}
        for target, path, value in entries:
            channel = channels.get((id(target), path))
            if channel is None:
                channel = AnimationChannel(target, path, [time], [value], interpolation)
                self.channels.append(channel)
                channels[(id(target), path)] = channel
            else:
                channel.set_keys(*_with_key(channel.times, channel.values, channel.interpolation, time,
                                            np.asarray(value, dtype=np.float64), interpolation))
        self.keys_changed()

    def remove_keys(self, time: float, targets=None) -> int:
        """Remove the keys within KEY_TOLERANCE of ``time`` from the channels of ``targets``
        (default: every channel); a channel left without keys goes. Returns how many went."""
        self.channels, removed = _without_keys(
            self.channels, time, lambda channel: targets is None or any(channel.node is target for target in targets))
        self.keys_changed()
        return removed

    def set_interpolation(self, interpolation: str, targets=None) -> None:
        """LINEAR or STEP for the channels of ``targets`` (default: all of them); spline keys keep
        their values and lose their tangents."""
        if interpolation not in ("LINEAR", "STEP"):
            raise ViewerError(f"animation {self.name!r}: interpolation must be LINEAR or STEP, got {interpolation!r}")
        for channel in self._all_channels():
            if targets is None or any(getattr(channel, "node", None) is target for target in targets):
                values = channel.values
                if channel.interpolation == "CUBICSPLINE":
                    values = np.ascontiguousarray(values[:, 1])
                channel.set_keys(channel.times, values, interpolation)
        self.keys_changed()

    def _all_channels(self) -> list:
        return list(self.channels) + list(getattr(self, "morph_channels", ()))

    def keys_changed(self) -> None:
        """Keys or channels changed: the duration follows and the next apply() packs afresh
        (and so does the mixer's sampler of the clip: ``keys_version`` moves)."""
        self.duration = max((c.duration for c in self._all_channels()), default=0.0)
        self._packed_for = None
        self.keys_version += 1

    keys_version = 0  # bumped by keys_changed (viewer.motion repacks a clip when it moves)


# Keys this close in time are one key (glTF stores times as float32).
KEY_TOLERANCE = 1e-6


def _with_key(times, values, interpolation: str, time: float, value: np.ndarray, new_interpolation: str):
    """(times, values, interpolation) with ``value`` keyed at ``time``; a spline channel keeps
    its tangents and gets zero ones for the new key unless it becomes LINEAR or STEP."""
    if interpolation == "CUBICSPLINE" and new_interpolation != "CUBICSPLINE":
        values = values[:, 1]
    if new_interpolation == "CUBICSPLINE":
        if interpolation != "CUBICSPLINE":
            values = np.stack([np.zeros_like(values), values, np.zeros_like(values)], axis=1)
        value = np.stack([np.zeros_like(value), value, np.zeros_like(value)])
    if time > times[-1] + KEY_TOLERANCE:  # the common case (recording): a key after the last
        return np.concatenate((times, [time])), np.concatenate((values, value[None])), new_interpolation
    same = np.flatnonzero(np.abs(times - time) <= KEY_TOLERANCE)
    if same.size:
        values = values.copy()
        values[same[0]] = value
        return times, values, new_interpolation
    at = int(np.searchsorted(times, time))
    return np.insert(times, at, time), np.insert(values, at, value, axis=0), new_interpolation


def _without_key(times, values, time: float):
    keep = np.abs(times - time) > KEY_TOLERANCE
    return times[keep], values[keep], int((~keep).sum())


def _without_keys(channels, time: float, chosen=lambda channel: True):
    """(the channels that still have keys, how many keys went) once the keys within KEY_TOLERANCE of
    ``time`` are removed from the ``chosen`` channels (in place)."""
    removed = 0
    kept = []
    for channel in channels:
        if chosen(channel):
            times, values, gone = _without_key(channel.times, channel.values, time)
            channel.set_keys(times, values, channel.interpolation)
            removed += gone
        if len(channel.times):
            kept.append(channel)
    return kept, removed


def _pack(channels) -> list:
    """Channels grouped by (keyframe times, interpolation, path, node table), in first-seen order;
    a channel of a bone posed by itself (no node table) is applied alone."""
    groups: dict = {}
    for channel in channels:
        if not hasattr(channel.node, "table"):
            groups[id(channel)] = _LoneChannel(channel)
            continue
        key = (channel.interpolation, channel.path, len(channel.times), channel.times.tobytes(),
               id(channel.node.table))
        groups.setdefault(key, []).append(channel)
    return [members if isinstance(members, _LoneChannel) else _ChannelBatch(members) for members in groups.values()]


class _LoneChannel:
    """A channel applied by itself (a bone without a TransformNode: its TRS lives in its skeleton)."""

    def __init__(self, channel):
        self.channel = channel

    def apply(self, t: float) -> None:
        self.channel.apply(t)


# A path's NodeTable array; the modes of csrc/ckernel.c's Sampler.
FIELDS = {"translation": "position", "rotation": "quaternion", "scale": "scaling"}
MODES = {"LINEAR": 0, "STEP": 1, "CUBICSPLINE": 2}


class _ChannelBatch:
    """Channels with the same keyframe times, interpolation and path, sampled as one array.

    ``apply(t)`` writes the rows of the channels' nodes in their NodeTable (all the nodes of a
    batch share one; ``AnimationClip`` groups them so) with the compiled sampler, or with
    numpy's ``sample`` when it is not there or ``compiled=False``.
    """

    def __init__(self, channels, compiled: bool | None = None):
        first = channels[0]
        self.times, self.interpolation, self.path = first.times, first.interpolation, first.path
        self.nodes = [channel.node for channel in channels]
        self.cubic = self.interpolation == "CUBICSPLINE"
        # LINEAR/STEP: (keys, channels, width); CUBICSPLINE: (keys, 3, channels, width)
        self.values = np.ascontiguousarray(np.stack([channel.values for channel in channels], axis=-2))
        self.table = first.node.table
        if any(node.table is not self.table for node in self.nodes):
            raise ViewerError("animation channels batched together must animate nodes of one NodeTable")
        self.rows = np.array([node.table_row for node in self.nodes], dtype=np.int64)
        self.field = FIELDS[self.path]
        module = native.ckernel if compiled is not False else None
        if compiled and module is None:
            raise ViewerError(f"the compiled sampler is not available: {native.describe()}")
        self.compiled = None if module is None else module.Sampler(
            self.times, self.values, self.rows, self.values.shape[-1], MODES[self.interpolation],
            self.path == "rotation")

    def sample(self, t: float) -> np.ndarray:
        return interpolate_keyframes(self.times, self.values, self.interpolation, t, self.path == "rotation")

    def apply(self, t: float) -> None:
        """Sample at ``t`` into the nodes' table rows and bump their versions."""
        table = self.table
        if self.compiled is not None:
            self.compiled.apply(t, getattr(table, self.field), table.version)
            return
        rows = self.rows
        getattr(table, self.field)[rows] = self.sample(t)
        table.version[rows] += 1


def slerp(a, b, u):
    """Shortest-path spherical interpolation of rows of quaternions, as Babylon's
    Quaternion.Slerp: like Babylon (and three.js) the result is not renormalized, so keyframes
    stored with a little rounding (0.707 for sqrt(0.5)) give Babylon's numbers; the loader
    normalizes keyframes that are clearly not unit quaternions."""
    dot = dot4(a, b)
    sign = np.where(dot < 0.0, -1.0, 1.0)
    dot = dot * sign
    near = dot > 0.999999
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.arccos(np.minimum(dot, 1.0))
        sin_theta = np.sin(theta)
        wa = np.where(near, 1.0 - u, np.sin((1.0 - u) * theta) / sin_theta)
        wb = np.where(near, u, np.sin(u * theta) / sin_theta)
    return wa[:, None] * a + (sign * wb)[:, None] * b


def dot4(a, b):
    """Row-wise dot products of (n, 4) rows summed in Babylon's order, x + y + z + w (einsum's
    order depends on numpy's SIMD), so csrc/ckernel.c's Sampler can give the same bits."""
    p = a * b
    return ((p[:, 0] + p[:, 1]) + p[:, 2]) + p[:, 3]
