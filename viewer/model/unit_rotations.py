"""Unit rotations for the writers: every rotation a file gets (the pose of each node and bone,
every rotation key) is a unit quaternion, whatever a script or a setter handed the model.

A rotation within UNIT_TOLERANCE of unit length is written as it is: the loaders keep such a
one as the file stores it (files round 0.7071 to 0.707, Babylon draws them so), which keeps a
model's round trip exact. One further off is normalized while the file is built, so that the
file holds unit quaternions and every number computed from them (glTF's inverse binds with
``apply_pose_as_bind``, USD's rest transforms, the clips USD samples) agrees with them; the
model is given its own values back afterwards. A zero or non-finite key is an error naming the
bone and the key (a pose's non-finite values are the writers' own check, naming the bone).
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..errors import ViewerError

# The loaders' tolerance: a rotation off unit length by more is normalized (with a warning there).
UNIT_TOLERANCE = 1e-3


def _norms(quaternions: np.ndarray) -> np.ndarray:
    return np.sqrt(np.add.reduce(quaternions * quaternions, axis=1))


def _off(norms: np.ndarray) -> np.ndarray:
    """Rows to normalize: finite, non-zero and further than UNIT_TOLERANCE from 1."""
    return (np.abs(norms - 1.0) > UNIT_TOLERANCE) & np.isfinite(norms) & (norms > 0)


@contextmanager
def unit_rotations(scene):
    """Within the block, ``scene``'s poses and rotation keys are unit quaternions (see the
    module's words); afterwards the scene has its own values back. Raises ViewerError for a
    zero pose rotation or a zero or non-finite rotation key, before changing anything."""
    names = {}
    for skeleton in scene.skeletons:
        for bone in skeleton.bones:
            names.setdefault(id(bone.get_pose_target()), f"bone {bone.name!r}")

    def label(node) -> str:
        return names.get(id(node), f"node {node.name!r}")

    # Checked first, all of it: an error leaves the scene untouched.
    tables: dict[int, tuple] = {}  # id(table) -> (table, rows, nodes)
    for node in scene.nodes:
        entry = tables.setdefault(id(node.table), (node.table, [], []))
        entry[1].append(node.table_row)
        entry[2].append(node)
    node_fixes = []  # (table, rows, their quaternions as they are)
    for table, rows, nodes in tables.values():
        quaternions = table.quaternion[rows]
        norms = _norms(quaternions)
        if (norms == 0).any():
            raise ViewerError(f"{label(nodes[int(np.flatnonzero(norms == 0)[0])])}: its rotation is the zero "
                              "quaternion, not a rotation; nothing was written")
        off = _off(norms)
        if off.any():
            where = np.asarray(rows)[off]
            node_fixes.append((table, where, quaternions[off].copy(), quaternions[off] / norms[off, None]))
    bone_fixes = []  # (bone, its quaternion, the unit one): bones posed by themselves (no node)
    for skeleton in scene.skeletons:
        for bone in skeleton.bones:
            if bone.get_pose_target() is not bone:
                continue
            quaternion = np.array(bone.rotation_quaternion, dtype=np.float64)
            norm = float(np.sqrt(quaternion @ quaternion))
            if norm == 0:
                raise ViewerError(f"{label(bone)}: its rotation is the zero quaternion, not a rotation; nothing "
                                  "was written")
            if _off(np.array([norm])).any():
                bone_fixes.append((bone, quaternion, quaternion / norm))
    key_fixes = []  # (clip, channel, its values, the unit ones)
    for clip in scene.animations:
        channels = [channel for channel in clip.channels if channel.path == "rotation"]
        if not channels:
            continue
        # One test per clip for the common case, every key unit already (a rig has thousands
        # of channels: a numpy call each would cost more than writing them).
        keys = [channel.values[:, 1] if channel.interpolation == "CUBICSPLINE" else channel.values
                for channel in channels]
        norms = _norms(np.concatenate(keys).reshape(-1, 4))
        if (np.abs(norms - 1.0) <= UNIT_TOLERANCE).all():
            continue
        start = 0
        for channel, values in zip(channels, keys):
            own = norms[start:start + len(values)]
            start += len(values)
            bad = ~(np.isfinite(own) & (own > 0))
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                what = "the zero quaternion" if own[k] == 0 else "not finite"
                raise ViewerError(f"{label(channel.node)}: rotation key {k} (at {float(channel.times[k]):g} s) of "
                                  f"clip {clip.name!r} is {what}, not a rotation; nothing was written")
            off = _off(own)
            if off.any():
                scale = np.where(off, 1.0 / own, 1.0)
                # A spline key's tangents scale with its value, so the curve keeps its shape.
                unit = channel.values * (scale[:, None, None] if channel.values.ndim == 3 else scale[:, None])
                key_fixes.append((clip, channel, channel.values, unit))
    _apply(node_fixes, bone_fixes, key_fixes, new=True)
    try:
        yield
    finally:
        _apply(node_fixes, bone_fixes, key_fixes, new=False)


def _apply(node_fixes, bone_fixes, key_fixes, new: bool) -> None:
    """Put the unit values in (``new``), or the model's own back."""
    for table, rows, old, unit in node_fixes:
        table.quaternion[rows] = unit if new else old
        table.version[rows] += 1
    for bone, old, unit in bone_fixes:
        bone.rotation_quaternion = unit if new else old
    clips = {}
    for clip, channel, old, unit in key_fixes:
        channel.set_keys(channel.times, unit if new else old, channel.interpolation)
        clips[id(clip)] = clip
    for clip in clips.values():
        clip.keys_changed()
