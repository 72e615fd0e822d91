"""Pose buffers: a clip sampled into arrays, one row per pose target (numpy; the compiled sampler
of csrc/ckernel.c where it is built, numpy's ``interpolate_keyframes`` as the reference).

A ``PoseLayout`` gives every pose target of a scene a row: a node of the scene's main
NodeTable keeps its table row (so a pose buffer is shaped as the table and a clip played alone
can be sampled straight into the table, the numbers ``AnimationClip.apply`` writes), and
every other target (a bone posed by itself, a node of another table) gets a row after the
table's capacity. Morph weights get columns: one block per group of meshes a weights channel
drives (the meshes of one glTF node share their weights).

A ``ClipSampler`` is a clip packed against a layout: channels with the same keyframe times,
interpolation and path sampled in one call into rows of T (N, 3), R (N, 4), S (N, 3) and
the morph columns M (K,), and per path the rows the clip drives.
"""

from __future__ import annotations

import numpy as np

from ..model import native
from ..model.animation import FIELDS, MODES, interpolate_keyframes

PATH_INDEX = {"translation": 0, "rotation": 1, "scale": 2}


class PoseLayout:
    """Rows for the pose targets of ``scene`` and columns for its morph weights.

    Made again (by the mixer) when the main table grows (its ``generation`` moves) or a clip
    animates a target or a morph group the layout does not have yet.
    """

    def __init__(self, scene, extra_targets=(), extra_morph=()):
        self.scene = scene
        targets = []
        for skeleton in scene.skeletons:
            targets.extend(bone.get_pose_target() for bone in skeleton.bones)
        targets.extend(scene.nodes)
        for clip in scene.animations:
            targets.extend(channel.node for channel in clip.channels)
        targets.extend(extra_targets)
        tables: dict = {}
        for target in targets:
            table = getattr(target, "table", None)
            if table is not None:
                tables[id(table)] = (tables.get(id(table), (table, 0))[0], tables.get(id(table), (table, 0))[1] + 1)
        self.table = max(tables.values(), key=lambda pair: pair[1])[0] if tables else None
        self.generation = None if self.table is None else self.table.generation
        self.capacity = 0 if self.table is None else self.table.capacity
        self.extras: list = []
        self._extra_rows: dict = {}
        self.targets: dict = {}  # id(target) -> (target, row)
        for target in targets:
            if id(target) in self.targets:
                continue
            if self.table is not None and getattr(target, "table", None) is self.table:
                row = target.table_row
            else:
                row = self.capacity + len(self.extras)
                self.extras.append(target)
            self.targets[id(target)] = (target, row)
        self.rows = self.capacity + len(self.extras)
        self.extra_rows = np.arange(self.capacity, self.rows, dtype=np.int64)
        # morph groups: id(first mesh) -> (meshes, offset, count)
        self.morph: dict = {}
        width = 0
        groups = [channel.meshes for clip in scene.animations for channel in getattr(clip, "morph_channels", ())]
        groups.extend(list(meshes) for meshes in scene.morph_groups())
        groups.extend(extra_morph)
        for meshes in groups:
            key = id(meshes[0])
            if key not in self.morph:
                count = len(meshes[0].morph_targets)
                self.morph[key] = (list(meshes), width, count)
                width += count
        self.morph_width = width

    def stale(self) -> bool:
        table = self.table
        return table is not None and (table.generation != self.generation or table.capacity != self.capacity)

    def row(self, target) -> int:
        found = self.targets.get(id(target))
        if found is None:
            raise KeyError(target)
        return found[1]

    def has(self, target) -> bool:
        return id(target) in self.targets

    def read(self):
        """(T, R, S, M): the pose every target holds now, as new arrays."""
        T, R, S = np.zeros((self.rows, 3)), np.zeros((self.rows, 4)), np.ones((self.rows, 3))
        R[:, 3] = 1.0
        if self.table is not None:
            n = self.capacity
            T[:n], R[:n], S[:n] = self.table.position[:n], self.table.quaternion[:n], self.table.scaling[:n]
        for target, row in zip(self.extras, self.extra_rows):
            T[row], R[row], S[row] = target.position, target.rotation_quaternion, target.scaling
        M = np.zeros(self.morph_width)
        for meshes, offset, count in self.morph.values():
            M[offset:offset + count] = meshes[0].morph_weights
        return T, R, S, M

    def write(self, T, R, S, M, rows, morph_blocks) -> None:
        """The rows marked in ``rows`` (three (N,) bool arrays, one per path) of T, R, S written into
        the nodes and bones (each written row's version bumped once); ``morph_blocks`` (keys of
        ``morph``) written into their meshes' weights."""
        table = self.table
        cap = self.capacity
        if table is not None and cap:
            touched = rows[0][:cap] | rows[1][:cap] | rows[2][:cap]
            for array, field, mask in ((T, "position", rows[0]), (R, "quaternion", rows[1]), (S, "scaling", rows[2])):
                np.copyto(getattr(table, field)[:cap], array[:cap], where=mask[:cap, None])
            table.version[:cap] += touched
        for row in np.flatnonzero(rows[0][cap:] | rows[1][cap:] | rows[2][cap:]) + cap if len(self.extras) else ():
            target = self.extras[row - cap]
            if rows[0][row]:
                target.position = T[row]
            if rows[1][row]:
                target.rotation_quaternion = R[row]
            if rows[2][row]:
                target.scaling = S[row]
        for key in morph_blocks:
            meshes, offset, count = self.morph[key]
            set_weights([mesh.morph_targets for mesh in meshes], M[offset:offset + count])


class _Group:
    __slots__ = ("path", "rows", "times", "values", "interpolation", "compiled", "field")


class ClipSampler:
    """``clip`` packed against ``layout``: ``sample(t, T, R, S, M)`` writes the clip's values
    at ``t`` seconds (clamped to each channel's keyframes, as ``AnimationClip.apply``) into the
    rows it drives; ``driven`` holds, per path, a boolean (N,) array of those rows and
    ``rows`` their indices; ``morph_keys`` the morph blocks it drives."""

    def __init__(self, clip, layout: PoseLayout):
        self.clip = clip
        self.layout = layout
        self.signature = signature(clip)
        grouped: dict = {}
        self.driven = [np.zeros(layout.rows, dtype=bool) for _ in range(3)]
        for channel in clip.channels:
            row = layout.row(channel.node)
            key = (channel.interpolation, channel.path, len(channel.times), channel.times.tobytes())
            grouped.setdefault(key, []).append((row, channel))
            self.driven[PATH_INDEX[channel.path]][row] = True
        self.groups = []
        module = native.ckernel
        for (interpolation, path, _, _), members in grouped.items():
            group = _Group()
            group.path, group.interpolation = path, interpolation
            group.field = FIELDS[path]
            group.rows = np.array([row for row, _ in members], dtype=np.int64)
            first = members[0][1]
            group.times = first.times
            group.values = np.ascontiguousarray(np.stack([channel.values for _, channel in members], axis=-2))
            group.compiled = None if module is None else module.Sampler(
                group.times, group.values, group.rows, group.values.shape[-1], MODES[interpolation], path == "rotation")
            self.groups.append(group)
        self.rows = tuple(np.flatnonzero(d) for d in self.driven)
        self.any_rows = np.flatnonzero(self.driven[0] | self.driven[1] | self.driven[2])
        self.direct = layout.table is not None and not (self.any_rows >= layout.capacity).any()
        self.morph = []
        keys = []
        for channel in getattr(clip, "morph_channels", ()):
            meshes, offset, count = layout.morph[id(channel.meshes[0])]
            self.morph.append((channel, offset, count, id(channel.meshes[0])))
            keys.append(id(channel.meshes[0]))
        self.morph_keys = list(dict.fromkeys(keys))
        self.morph_driven = np.zeros(layout.morph_width, dtype=bool)
        for _, offset, count, _ in self.morph:
            self.morph_driven[offset:offset + count] = True
        self._scratch_version = np.zeros(layout.rows, dtype=np.int64)
        # sample_direct's calls, bound once: (compiled apply, the table array it writes)
        self._direct = None
        if self.direct and all(group.compiled is not None for group in self.groups):
            table = layout.table
            self._direct = [(group.compiled.apply, getattr(table, group.field)) for group in self.groups]
            self._direct_version = table.version
            self._direct_morph = [(channel.sample, [mesh.morph_targets for mesh in channel.meshes])
                                  for channel, _, _, _ in self.morph]

    def sample(self, t: float, T, R, S, M, version=None) -> None:
        """The clip at ``t`` into rows of T, R, S (and its morph columns of M); ``version``:
        an int64 (N,) array whose driven rows are bumped (the table's, when sampling straight
        into it), else a scratch one."""
        if version is None:
            bound = self._bound
            if bound is None or bound[0] is not T or bound[1] is not R or bound[2] is not S or bound[3] is not M:
                bound = self._bind(T, R, S, M)
            if bound[4] is not None:
                version = self._scratch_version
                for apply, target in bound[4]:
                    apply(t, target, version)
                for sample, out, offset, count in bound[5]:
                    sample(t, out)
                    M[offset:offset + count] = out
                return
        arrays = {"position": T, "quaternion": R, "scaling": S}
        version = self._scratch_version if version is None else version
        for group in self.groups:
            target = arrays[group.field]
            if group.compiled is not None:
                group.compiled.apply(t, target, version)
            else:
                target[group.rows] = interpolate_keyframes(group.times, group.values, group.interpolation, t,
                                                           group.path == "rotation")
                version[group.rows] += 1
        for channel, offset, count, _ in self.morph:
            M[offset:offset + count] = channel.sample(t)

    _bound = None

    def _bind(self, T, R, S, M):
        """The compiled calls that sample into these buffers, bound once (a mixer keeps an
        action's buffers): (T, R, S, M, [(apply, array)], [(sample, scratch, offset, count)]),
        the calls None when some group has no compiled sampler."""
        calls = morph = None
        module = native.ckernel
        if module is not None and all(group.compiled is not None for group in self.groups):
            arrays = {"position": T, "quaternion": R, "scaling": S}
            calls = [(group.compiled.apply, arrays[group.field]) for group in self.groups]
            morph = []
            for channel, offset, count, _ in self.morph:
                values = np.ascontiguousarray(channel.values[..., None])  # each weight a channel of width 1
                sampler = module.Sampler(channel.times, values, np.arange(count, dtype=np.int64), 1,
                                         MODES[channel.interpolation], False)
                morph.append((sampler.sample, np.empty(count), offset, count))
        self._bound = (T, R, S, M, calls, morph)
        return self._bound

    def sample_direct(self, t: float) -> None:
        """The clip at ``t`` written straight into the layout's table (``direct`` clips only) and
        its morph weights into the meshes: ``AnimationClip.apply``'s numbers, one copy fewer."""
        calls = self._direct
        if calls is not None:
            version = self._direct_version
            for apply, target in calls:
                apply(t, target, version)
            for sample, targets in self._direct_morph:
                set_weights(targets, sample(t))
            return
        table = self.layout.table
        arrays = {"position": table.position, "quaternion": table.quaternion, "scaling": table.scaling}
        version = table.version
        for group in self.groups:
            if group.compiled is not None:
                group.compiled.apply(t, arrays[group.field], version)
            else:
                arrays[group.field][group.rows] = interpolate_keyframes(
                    group.times, group.values, group.interpolation, t, group.path == "rotation")
                version[group.rows] += 1
        for channel, _, _, _ in self.morph:
            channel.apply(t)


def set_weights(targets, weights) -> None:
    """Morph weights sampled from checked keyframes (or blended from them) into each MorphTargets,
    as its ``weights`` setter stores them (its own copy, the version bumped) without checking again."""
    for morph in targets:
        morph._weights = np.array(weights, dtype=np.float64)
        morph.version += 1


def signature(clip) -> tuple:
    """What a packed sampler depends on: the clip's keys (``keys_changed`` bumps ``keys_version``;
    every keying method of the clip calls it) and how many channels it has."""
    return (clip.keys_version, len(clip.channels), len(getattr(clip, "morph_channels", ())))


def check_clip_fits(clip, layout: PoseLayout) -> bool:
    return all(layout.has(c.node) for c in clip.channels) and all(
        id(c.meshes[0]) in layout.morph for c in getattr(clip, "morph_channels", ()))


__all__ = ["ClipSampler", "PoseLayout", "set_weights", "signature"]
