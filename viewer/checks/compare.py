"""Per-bone differences between two models' clips (numpy, no GL): a file before and after
export, a clip before and after a fix (`boneviewer check --compare A B`).

Bones are matched by name (each file's main skeleton), clips by name where both have it, then
the rest by their order. Each pair of clips is sampled at COMPARE_FPS over their common time
range (0 to the shorter one's end); per bone: the angle between the two local rotations (the
bone's world rotation relative to its parent's, so a change shows on the bone changed, not on
every bone below it) and the distance between the two world positions relative to A's size
(the largest side of its rest bounds), each as the maximum and the mean over the frames.
Two files without clips are compared in their poses as loaded (one frame).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ViewerError

COMPARE_FPS = 30.0


@dataclass
class BoneDifference:
    bone: str
    rotation_max: float   # degrees
    rotation_mean: float
    position_max: float   # world distance over the size of A
    position_mean: float

    def as_json(self) -> dict:
        return {"bone": self.bone, "rotation_max": round(self.rotation_max, 6),
                "rotation_mean": round(self.rotation_mean, 6), "position_max": round(self.position_max, 8),
                "position_mean": round(self.position_mean, 8)}


@dataclass
class ClipComparison:
    clip_a: str | None
    clip_b: str | None
    end: float            # s: the common range is 0..end
    frames: int
    bones: list = field(default_factory=list)  # BoneDifference, the largest rotation difference first
    # Per frame and bone (F, bones in common, in Comparison.common's order): what the report plots.
    rotation: np.ndarray | None = field(default=None, repr=False)  # degrees
    position: np.ndarray | None = field(default=None, repr=False)  # over the size of A

    def as_json(self) -> dict:
        return {"clip_a": self.clip_a, "clip_b": self.clip_b, "start": 0.0, "end": round(self.end, 6),
                "fps": COMPARE_FPS, "frames": self.frames, "bones": [b.as_json() for b in self.bones]}


@dataclass
class Comparison:
    size: float
    common: list          # bone names in both, in A's order
    only_a: list
    only_b: list
    clips: list = field(default_factory=list)  # ClipComparison
    unmatched_a: list = field(default_factory=list)  # clip names without a partner
    unmatched_b: list = field(default_factory=list)

    def as_json(self) -> dict:
        return {"size": round(self.size, 6), "bones_in_common": self.common, "only_in_a": self.only_a,
                "only_in_b": self.only_b, "clips": [c.as_json() for c in self.clips],
                "clips_only_in_a": self.unmatched_a, "clips_only_in_b": self.unmatched_b}


def pair_clips(a, b) -> tuple[list, list, list]:
    """([(clip of A, clip of B)], A's left over, B's left over): by name, then by order."""
    names_b = {clip.name: clip for clip in b}
    pairs, rest_a = [], []
    for clip in a:
        partner = names_b.pop(clip.name, None)
        if partner is not None:
            pairs.append((clip, partner))
        else:
            rest_a.append(clip)
    rest_b = [clip for clip in b if clip.name in names_b]
    pairs += list(zip(rest_a, rest_b))
    count = min(len(rest_a), len(rest_b))
    return pairs, [c.name for c in rest_a[count:]], [c.name for c in rest_b[count:]]


def compare_scenes(a, b, name_a: str = "A", name_b: str = "B") -> Comparison:
    """The Comparison of scene ``a``'s clips with ``b``'s (see the module's docstring)."""
    from ..model.retarget import SkeletonFrames, main_skeleton

    skeleton_a, skeleton_b = main_skeleton(a), main_skeleton(b)
    names_a = [bone.name for bone in skeleton_a.bones]
    names_b = [bone.name for bone in skeleton_b.bones]
    common = [name for name in dict.fromkeys(names_a) if name in set(names_b)]
    if not common:
        raise ViewerError(f"--compare: {name_a} and {name_b} share no bone names ({name_a}: "
                          f"{_listed(names_a)}; {name_b}: {_listed(names_b)})")
    if bool(a.animations) != bool(b.animations):
        has, lacks = (name_a, name_b) if a.animations else (name_b, name_a)
        raise ViewerError(f"--compare: {has} has clips and {lacks} has none: nothing to compare them with")
    low, high = a.rest_bounds
    comparison = Comparison(float(np.max(high - low)) or 1.0, common,
                            [n for n in names_a if n not in set(names_b)], [n for n in names_b if n not in set(names_a)])
    pairs, comparison.unmatched_a, comparison.unmatched_b = pair_clips(a.animations, b.animations)
    if not a.animations:
        pairs = [(None, None)]
    index_a = {name: i for i, name in reversed(list(enumerate(names_a)))}  # the first of a name
    index_b = {name: i for i, name in reversed(list(enumerate(names_b)))}
    rows_a = np.array([index_a[name] for name in common])
    rows_b = np.array([index_b[name] for name in common])
    for clip_a, clip_b in pairs:
        end = 0.0 if clip_a is None else min(clip_a.duration, clip_b.duration)
        count = int(np.floor(end * COMPARE_FPS + 1e-6)) + 1
        times = np.arange(count) / COMPARE_FPS
        frames_a = SkeletonFrames(a, skeleton_a, clip_a, times)
        frames_b = SkeletonFrames(b, skeleton_b, clip_b, times)
        angle = _angles(_local_rotations(frames_a)[:, rows_a], _local_rotations(frames_b)[:, rows_b])
        distance = np.linalg.norm(frames_a.world[:, rows_a, 3, :3] - frames_b.world[:, rows_b, 3, :3], axis=-1)
        distance /= comparison.size
        bones = [BoneDifference(name, float(angle[:, k].max()), float(angle[:, k].mean()),
                                float(distance[:, k].max()), float(distance[:, k].mean()))
                 for k, name in enumerate(common)]
        bones.sort(key=lambda d: (-d.rotation_max, -d.position_max))
        comparison.clips.append(ClipComparison(None if clip_a is None else clip_a.name,
                                               None if clip_b is None else clip_b.name, end, count, bones,
                                               angle, distance))
    return comparison


def _local_rotations(frames) -> np.ndarray:
    """(F, N, 3, 3) each bone's world rotation relative to its parent's (rows normalized: no scale)."""
    from ..model.retarget import rotation_rows

    world = rotation_rows(frames.world)
    parent = np.empty_like(world)
    for i, p in enumerate(frames.parents):
        parent[:, i] = rotation_rows(frames.placement[None])[0] if p < 0 else world[:, p]
    return world @ np.swapaxes(parent, -1, -2)  # row vectors: world = local @ parent


def _angles(r_a: np.ndarray, r_b: np.ndarray) -> np.ndarray:
    """Degrees between (..., 3, 3) rotations: the angle of r_a r_b^T, from the chord
    |r_a - r_b| = 2 sqrt(2) sin(angle / 2) (arccos of the trace loses small angles)."""
    chord = np.linalg.norm(r_a - r_b, axis=(-2, -1)) / (2.0 * np.sqrt(2.0))
    return np.degrees(2.0 * np.arcsin(np.clip(chord, 0.0, 1.0)))


def _listed(names) -> str:
    names = list(dict.fromkeys(names))
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "") if names else "no bones"
