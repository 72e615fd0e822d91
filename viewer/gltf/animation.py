"""glTF animations as AnimationClips: each channel's keyframe times and values, checked
(times increase, enough values for the interpolation, rotation keys usable as quaternions).
``weights`` channels drive the morph targets of the node's mesh (a MorphAnimationClip)."""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from ..model import TransformNode
from ..model.animation import PATHS, AnimationChannel, AnimationClip
from ..model.checks import fits
from ..model.morph import MorphAnimationClip, MorphWeightChannel
from .container import GltfFile
from .validate import short

FLOAT, BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT = 5126, 5120, 5121, 5122, 5123
VECTORS = {3: "VEC3", 4: "VEC4"}  # a path's accessor type by its width


def read_clips(file: GltfFile, nodes: list[TransformNode], morphed: dict | None = None) -> list[AnimationClip]:
    """Every animation of the file, as ``read_clip`` reads each: the keyframes of all the clips
    read and checked at once where they are plain floats that need no warning (most files);
    otherwise clip by clip."""
    indices = range(len(file.document["animations"]))
    total = file._total_bytes
    try:
        clips = _read_clips_at_once(file, indices, nodes, morphed or {})
    except Exception:  # read again clip by clip, which raises the error in its words
        clips = None
    if clips is not None:
        return clips
    file._total_bytes = total  # what the attempt counted is counted again
    return [read_clip(file, i, nodes, morphed) for i in indices]


def read_clip(file: GltfFile, index: int, nodes: list[TransformNode], morphed: dict | None = None) -> AnimationClip:
    """Animation ``index``, driving ``nodes`` (the scene's nodes, by node index) and the morph
    weights of ``morphed`` (node index -> the meshes built for it that have morph targets).
    Channels that target no node (an extension's target) are left out, and so are weights
    channels of nodes not shown or without morph targets (with a warning); the rest plays.

    The keyframe values of all channels are read and checked at once when they are plain
    floats that need no warning (most files); any other clip, and any problem, is read
    channel by channel (``read_clip_by_channel``, the reference, which words it)."""
    total = file._total_bytes
    try:
        clips = _read_clips_at_once(file, [index], nodes, morphed or {})
    except Exception:  # read again channel by channel, which raises the error in its words
        clips = None
    if clips is not None:
        return clips[0]
    file._total_bytes = total  # what the attempt counted is counted again
    return read_clip_by_channel(file, index, nodes, morphed)


def _read_clips_at_once(file: GltfFile, indices, nodes: list[TransformNode], morphed: dict):
    """``read_clip_by_channel``'s clips ``indices``, the keyframe times and values of all their
    channels each read as one array and checked in one pass (numpy's per-call cost paid once,
    not per clip or channel), or None where that reading would warn or differ."""
    clips = []  # (name, channels as (target, path, interpolation, input, output, width, what))
    for index in indices:
        clip = _clip_channels(file, index, nodes, morphed)
        if clip is None:
            return None
        clips.append(clip)
    # Each clip's distinct inputs once (as its checked_times reads them), then every channel's
    # times and values as two float64 arrays, checked at once.
    time_inputs, starts = [], []
    for _, entries in clips:
        starts.append(len(time_inputs))
        time_inputs.extend(dict.fromkeys(entry[3] for entry in entries))
    time_pieces = file.packed_float_pieces(time_inputs)
    value_pieces = None if time_pieces is None else file.packed_float_pieces(
        [entry[4] for _, entries in clips for entry in entries])
    if value_pieces is None:
        return None
    times_read = _floats(time_pieces)
    values = _floats(value_pieces)
    if not (np.isfinite(times_read).all() and np.isfinite(values).all()):
        return None
    key_counts = [n for _, _, n in time_pieces]
    ends = np.cumsum(key_counts, dtype=np.int64)
    step = np.diff(times_read)
    if len(step) and (step <= 0).any():
        inside = np.ones(len(step), dtype=bool)
        inside[ends[:-1] - 1] = False  # the step from one input's last time to the next input's first
        if (step[inside] <= 0).any():
            return None
    firsts = (ends - key_counts).tolist()
    result, start, piece, rotations, weights = [], 0, 0, [], []
    for (name, entries), first_input in zip(clips, starts):
        # input accessor -> (its keyframe times, key count): a view of times_read, one per input,
        # which the channels reading it share (keyframe arrays are replaced, never written into)
        at = {}
        channels, morph_channels = [], []
        for target, path, interpolation, input_index, _, width, what in entries:
            place = at.get(input_index)
            if place is None:
                k = first_input + len(at)
                first, keys = firsts[k], key_counts[k]
                place = at[input_index] = (times_read[first:first + keys], keys)
            times, keys = place
            cubic = interpolation == "CUBICSPLINE"
            count = value_pieces[piece][2]
            piece += 1
            if count != keys * width * (3 if cubic else 1):
                return None
            channel_values = values[start:start + count]
            start += count
            if path == "weights":  # the meshes' own checks raise (and the clip is read channel by channel)
                morph_channels.append(MorphWeightChannel(target, times, channel_values, interpolation, what,
                                                         checked=True))
                weights.append(channel_values)
                continue
            channel_values = channel_values.reshape(keys, 3, width) if cubic else channel_values.reshape(keys, width)
            if path == "rotation" and not cubic:
                rotations.append(channel_values)
            channels.append(AnimationChannel.of_checked(target, path, times, channel_values, interpolation))
        result.append(MorphAnimationClip(name, channels, morph_channels) if morph_channels
                      else AnimationClip(name, channels))
    if rotations:
        keys = np.concatenate(rotations)
        norms = np.sqrt(np.add.reduce(keys * keys, axis=1))  # as _unit_keyframes measures them
        if not (np.abs(norms - 1.0) <= 1e-3).all():
            return None  # a key to refuse or normalize, with a warning
    if weights and not fits(np.concatenate(weights)):
        return None  # a weight out of the model's range: MorphWeightChannel's own check words it
    return result


def _clip_channels(file: GltfFile, index: int, nodes: list[TransformNode], morphed: dict):
    """(name, channels as (target, path, interpolation, input accessor, output accessor, values
    per key, what)) of animation ``index``, a target being a node, or for a weights channel the
    meshes it morphs; None where reading it at once would warn or differ (integer weights
    among them: they are normalized channel by channel)."""
    spec = file.document["animations"][index]
    accessors, samplers = file.document["accessors"], spec["samplers"]
    name = spec.get("name") or f"animation{index}"
    entries = []
    for c, channel in enumerate(spec["channels"]):
        target = channel["target"]
        node = target.get("node")
        if node is None:
            continue
        sampler = samplers[channel["sampler"]]
        interpolation = sampler.get("interpolation") or "LINEAR"
        input_index, output_index = sampler["input"], sampler["output"]
        times_spec, values_spec = accessors[input_index], accessors[output_index]
        if times_spec["type"] != "SCALAR" or times_spec["componentType"] != FLOAT:
            return None
        path = target["path"]
        if path == "weights":
            meshes = morphed.get(node)
            if not meshes or values_spec["type"] != "SCALAR" or values_spec["componentType"] != FLOAT:
                return None  # skipped with a warning, outside the scene shown, or integer weights
            entries.append((meshes, path, interpolation, input_index, output_index, len(meshes[0].morph_targets),
                            f"animation {index} ({short(name)}) channel {c}"))
            continue
        width = PATHS[path]
        if values_spec["type"] != VECTORS[width] or values_spec["componentType"] != FLOAT:
            return None
        entries.append((nodes[node], path, interpolation, input_index, output_index, width, None))
    return name, entries


def _floats(pieces: list) -> np.ndarray:
    """The packed float32 accessors ``pieces`` (GltfFile.packed_float_pieces' answer) as one
    float64 array: one gather from the buffer when they all lie in the same one, 4-byte aligned
    (a .glb's binary chunk), else one piece at a time."""
    if not pieces:
        return np.zeros(0)
    data = pieces[0][0]
    if all(piece[0] is data and not piece[1] % 4 for piece in pieces):
        whole = np.frombuffer(data, np.float32, count=len(data) // 4)
        starts = np.array([offset // 4 for _, offset, _ in pieces], dtype=np.int64)
        counts = np.array([n for _, _, n in pieces], dtype=np.int64)
        before = np.cumsum(counts) - counts  # where each piece starts in the result
        return whole[np.repeat(starts - before, counts) + np.arange(int(before[-1] + counts[-1]))].astype(np.float64)
    return np.concatenate([np.frombuffer(data, np.float32, count=n, offset=offset)
                           for data, offset, n in pieces]).astype(np.float64)


def read_clip_by_channel(file: GltfFile, index: int, nodes: list[TransformNode],
                         morphed: dict | None = None) -> AnimationClip:
    """``read_clip`` one channel at a time: each check in the file's order, worded."""
    spec = file.document["animations"][index]
    name = spec.get("name") or f"animation{index}"
    morphed = morphed or {}
    channels, morph_channels = [], []
    checked_times = {}  # input accessor -> its keyframe times, read and checked once per clip
    clip = f"animation {index} ({short(name)})"
    for c, channel in enumerate(spec["channels"]):
        target = channel["target"]
        path = target["path"]
        what = f"{clip} channel {c}"
        if target.get("node") is None:
            continue
        sampler_index = channel["sampler"]
        sampler = spec["samplers"][sampler_index]
        interpolation = sampler.get("interpolation") or "LINEAR"
        input_index, output_index = sampler["input"], sampler["output"]
        inputs, outputs = f"{what} sampler {sampler_index} input", f"{what} sampler {sampler_index} output"
        if input_index not in checked_times:  # read and checked already otherwise
            file.require_accessor_kind(input_index, inputs, ("SCALAR",), (FLOAT,))
        if path == "weights":
            channel = _weights_channel(file, what, target["node"], morphed, interpolation, checked_times,
                                       (input_index, inputs), (output_index, outputs))
            if channel is not None:
                morph_channels.append(channel)
            continue
        width = 4 if path == "rotation" else 3
        file.require_accessor_kind(output_index, outputs, (f"VEC{width}",),
                                   (FLOAT, BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT) if width == 4 else (FLOAT,))
        times = _keyframe_times(file, input_index, inputs, checked_times)
        values = file.accessor(output_index, outputs).astype(np.float64)
        per_key = 3 if interpolation == "CUBICSPLINE" else 1
        if len(values) != len(times) * per_key:
            raise file.error(f"accessor {output_index} ({outputs}): {len(values)} values for {len(times)} "
                             f"keyframe times ({len(times) * per_key} expected for {interpolation})")
        if path == "rotation" and interpolation != "CUBICSPLINE":
            values = _unit_keyframes(file, values.reshape(-1, 4), what)
        # accessor() refused non-finite numbers, the times increase, the count is right: no recheck
        channels.append(AnimationChannel(nodes[target["node"]], path, times, values, interpolation, checked=True))
    if morph_channels:
        return MorphAnimationClip(name, channels, morph_channels)
    return AnimationClip(name, channels)


def _keyframe_times(file: GltfFile, input_index: int, inputs: str, checked_times: dict) -> np.ndarray:
    """A sampler's keyframe times, checked to increase (once per accessor and clip); each
    channel gets its own copy."""
    times = checked_times.get(input_index)
    if times is None:
        times = file.accessor(input_index, inputs).astype(np.float64).reshape(-1)
        step = np.diff(times)
        if (step <= 0).any():
            k = int(np.flatnonzero(step <= 0)[0]) + 1
            raise file.error(f"accessor {input_index} ({inputs}): keyframe times must increase, but time {k} "
                             f"({times[k]:g}) follows {times[k - 1]:g}")
        checked_times[input_index] = times
    return times.copy()


def _weights_channel(file: GltfFile, what: str, node: int, morphed: dict, interpolation: str, checked_times: dict,
                     input, output) -> MorphWeightChannel | None:
    """A ``weights`` channel as a MorphWeightChannel on the node's morphed meshes; None (with
    a warning) when the node shows no mesh with morph targets, as Babylon skips it."""
    meshes = morphed.get(node)
    if not meshes:
        spec = file.document["nodes"][node]
        if spec.get("mesh") is None or not any(p.get("targets") for p in file.document["meshes"][spec["mesh"]]
                                                ["primitives"]):
            file.warn("weights channel", f"{what}: node {node} has no mesh with morph targets; its weights channel "
                      f"is skipped")
        return None  # else the node is outside the scene shown
    (input_index, inputs), (output_index, outputs) = input, output
    file.require_accessor_kind(output_index, outputs, ("SCALAR",), (FLOAT, BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT))
    if file.document["accessors"][output_index]["componentType"] != FLOAT \
            and not file.document["accessors"][output_index].get("normalized"):
        raise file.error(f"accessor {output_index} ({outputs}): integer weights must be normalized")
    times = _keyframe_times(file, input_index, inputs, checked_times)
    values = file.accessor(output_index, outputs).astype(np.float64).reshape(-1)
    targets = len(meshes[0].morph_targets)
    per_key = (3 if interpolation == "CUBICSPLINE" else 1) * targets
    if len(values) != len(times) * per_key:
        raise file.error(f"accessor {output_index} ({outputs}): {len(values)} values for {len(times)} keyframe "
                         f"times of {targets} morph targets ({len(times) * per_key} expected for {interpolation})")
    try:
        return MorphWeightChannel(meshes, times, values, interpolation, what)
    except ViewerError as error:  # the model's own checks
        raise file.error(f"{what}: {error}") from None


def _unit_keyframes(file: GltfFile, quaternions: np.ndarray, what: str) -> np.ndarray:
    """Rotation keys within 1e-3 of unit length are kept as stored (files round them, and
    Babylon keeps them so); ones clearly off are normalized, with one warning."""
    norms = np.sqrt(np.add.reduce(quaternions * quaternions, axis=1))  # np.linalg.norm's sum, without its checks
    off = ~(np.abs(norms - 1.0) <= 1e-3)  # one test for the common case: every key unit already
    if off.any():
        if np.any(norms == 0):
            raise file.error(f"{what}: rotation keyframe {int(np.flatnonzero(norms == 0)[0])} is the zero quaternion")
        file.warn("keyframes", f"{what}: {int(off.sum())} rotation keyframes are not unit quaternions; normalized")
        quaternions = np.where(off[:, None], quaternions / norms[:, None], quaternions)
    return quaternions
