"""Defects put into a loaded clip for the motion checks' tests (a plain module, not a test
module): each rewrites one bone's keys at the frames the checks sample, so the defect is where
the test says. World-space offsets are turned into the bone's local space through its parent's
world matrices at each frame (retarget.SkeletonFrames: the retargeting's sampling, not the
checks')."""

from __future__ import annotations

import numpy as np

from viewer.checks.motion import clip_frame_times
from viewer.model.animation import AnimationChannel
from viewer.model.retarget import SkeletonFrames, main_skeleton, sample_channel
from viewer.model.transforms import decompose


def frame_times(clip) -> np.ndarray:
    return clip_frame_times(clip)[0]


def character_scale(scene) -> float:
    """The character's size over 1.75 m (the checks' thresholds are for 1.75 m)."""
    low, high = scene.rest_bounds
    return float(np.max(high - low)) / 1.75


def _keys(scene, clip, bone, path: str, times: np.ndarray) -> np.ndarray:
    """The bone's ``path`` values at ``times`` (its channel's, else its file pose's)."""
    target = bone.get_pose_target()
    for channel in clip.channels:
        if channel.node is target and channel.path == path:
            return sample_channel(channel, times)
    scaling, rotation, translation = decompose(np.asarray(bone.get_file_pose_matrix())[None])
    value = {"translation": translation, "rotation": rotation, "scale": scaling}[path][0]
    return np.repeat(value[None], len(times), axis=0)


def set_keys(clip, bone, path: str, times: np.ndarray, values: np.ndarray) -> None:
    """The bone's ``path`` channel replaced by a LINEAR key at each of ``times``."""
    target = bone.get_pose_target()
    clip.channels = [c for c in clip.channels if not (c.node is target and c.path == path)]
    clip.channels.append(AnimationChannel(target, path, times, values))
    clip.keys_changed()


def _parent_linear(scene, clip, bone, times: np.ndarray) -> np.ndarray:
    """(F, 3, 3): the world 3x3 of the space the bone's translation lives in, at each frame."""
    skeleton = main_skeleton(scene)
    frames = SkeletonFrames(scene, skeleton, clip, times)
    i = frames.index[bone.name]
    parent = frames.parents[i]
    if parent < 0:
        return np.repeat(frames.placement[None, :3, :3], len(times), axis=0)
    return frames.world[:, parent, :3, :3]


def move(scene, clip, bone_name: str, offsets: np.ndarray) -> None:
    """Moves a bone (and what hangs from it) by world ``offsets`` (F, 3), one per frame."""
    bone = scene.require_bone(bone_name, "move")
    times = frame_times(clip)
    linear = _parent_linear(scene, clip, bone, times)
    local = np.einsum("fa,fab->fb", offsets, np.linalg.inv(linear))
    set_keys(clip, bone, "translation", times, _keys(scene, clip, bone, "translation", times) + local)


def slide(scene, clip, foot: str, start: int, frames: int = 20, distance: float = 0.10) -> None:
    """A planted foot slid ``distance`` (m at 1.75 m) along +X over ``frames`` frames from
    ``start``, and left there."""
    count = len(frame_times(clip))
    ramp = np.clip((np.arange(count) - start) / (frames - 1), 0.0, 1.0)
    offsets = np.zeros((count, 3))
    offsets[:, 0] = ramp * distance * character_scale(scene)
    move(scene, clip, foot, offsets)


def lower(scene, clip, root: str, start: int, frames: int = 15, depth: float = 0.03) -> None:
    """The whole body lowered ``depth`` (m at 1.75 m) for ``frames`` frames from ``start``."""
    count = len(frame_times(clip))
    offsets = np.zeros((count, 3))
    offsets[start:start + frames, 1] = -depth * character_scale(scene)
    move(scene, clip, root, offsets)


def shake(scene, clip, bone: str, start: int, frames: int = 30, size: float = 0.002, seed: int = 0) -> None:
    """High-frequency noise on one joint: a random offset of ``size`` (m at 1.75 m) in a random
    direction at each of ``frames`` frames from ``start``."""
    count = len(frame_times(clip))
    rng = np.random.default_rng(seed)
    directions = rng.normal(size=(frames, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    offsets = np.zeros((count, 3))
    offsets[start:start + frames] = directions * size * character_scale(scene)
    move(scene, clip, bone, offsets)


def stretch(scene, clip, bone_name: str, start: int, frames: int = 10, factor: float = 1.10) -> None:
    """A bone's translation (its length from its parent) times ``factor`` for ``frames`` frames."""
    bone = scene.require_bone(bone_name, "stretch")
    times = frame_times(clip)
    values = _keys(scene, clip, bone, "translation", times)
    values[start:start + frames] *= factor
    set_keys(clip, bone, "translation", times, values)


def negate_rotation_key(scene, clip, bone_name: str, key: int) -> int:
    """Rotation key ``key`` of the bone written as its negative (the same turn); the frame of
    that key at the clip's rate. The channel is keyed at every frame first (a bone without one
    gets its file pose's)."""
    bone = scene.require_bone(bone_name, "negate")
    times = frame_times(clip)
    values = _keys(scene, clip, bone, "rotation", times)
    values[key] = -values[key]
    set_keys(clip, bone, "rotation", times, values)
    return key


def cut(clip, fraction: float) -> None:
    """The clip cut at ``fraction`` of its duration (its keys after it dropped)."""
    end = clip.duration * fraction
    for channel in clip.channels:
        keep = channel.times <= end + 1e-9
        channel.set_keys(channel.times[keep], channel.values[keep], channel.interpolation)
    clip.keys_changed()
