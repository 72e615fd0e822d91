"""PoseWriter: the local TRS of many bones, of any skeletons, written in one call where each
bone's pose lives.

A bone's pose target (``Bone.get_pose_target()``) is its linked node (glTF joints: a row of a
NodeTable) or the bone itself (a row of its skeleton's BoneBatch). The writer sorts the bones
into those rows once, so that a pose is a few fancy-indexed copies per table and per batch
instead of a Python loop of setters, each checking its one value again (a remote client streams
tens of thousands of poses a second). The caller checks the values first, in bulk: every number
fits (checks.fits) and no quaternion is zero. Writing through the setters one bone after another
is the reference (tests/test_remote.py compares the two, matrices and pixels).

A row written twice in one pose (a bone listed twice; two bones linked to one node, as
RobotExpressive's two skins share their joints) gets the later of its values, as the setters one
after another leave it.
"""

from __future__ import annotations

import numpy as np

from .batch import Dirty, last_of_each


class PoseWriter:
    """``write(positions, rotation_quaternions, scalings)``: (N, 3), (N, 4), (N, 3) float64 rows
    (or None: that part unchanged) for ``bones``, in that order, already checked."""

    def __init__(self, bones):
        self.bones = tuple(bones)
        self._plan()

    def _plan(self) -> None:
        batches = {id(bone.get_skeleton().batch): bone.get_skeleton().batch for bone in self.bones}
        for batch in batches.values():
            batch.update_layout()  # slots and links as the next prepare() sees them
        self._batches = list(batches.values())
        self._versions = [batch.layout_version for batch in self._batches]
        nodes, rows = {}, {}  # id(table or batch) -> (it, [row], [input index])
        for i, bone in enumerate(self.bones):
            node = bone.get_transform_node()
            if node is not None:
                group = nodes.setdefault(id(node.table), (node.table, [], []))
                group[1].append(node.table_row)
            else:
                batch = bone.get_skeleton().batch
                group = rows.setdefault(id(batch), (batch, [], []))
                group[1].append(bone.slot)
            group[2].append(i)
        self._node_groups = [_group(*group) for group in nodes.values()]
        self._bone_groups = [_group(*group) for group in rows.values()]

    def _current(self) -> bool:
        """Whether the plan still holds: no skeleton's layout (bone slots, links) changed since."""
        for batch, version in zip(self._batches, self._versions):
            if batch.dirty is Dirty.STRUCTURE:
                batch.update_layout()
            if batch.layout_version != version:
                return False
        return True

    def write(self, positions=None, rotation_quaternions=None, scalings=None) -> None:
        if not self._current():
            self._plan()
        parts = (("position", positions), ("quaternion", rotation_quaternions), ("scaling", scalings))
        parts = [(field, values) for field, values in parts if values is not None]
        if not parts:
            return
        for table, rows, inputs in self._node_groups:
            table.write(rows, **{field: values[inputs] for field, values in parts})
        for batch, slots, inputs in self._bone_groups:
            bone_rows = batch.rows
            if bone_rows.need_decompose[slots].any():
                batch.decompose_stale()  # keep the other parts of a matrix set directly, as Bone's setters
            for field, values in parts:
                getattr(bone_rows, field)[slots] = values[inputs]
            bone_rows.need_compose[slots] = True
            bone_rows.linked_version[slots] = -1
            batch.mark_pose()


def _group(owner, rows: list, inputs: list) -> tuple:
    """(owner, its rows to write, the input row of each: a slice, a view, when they are the first ones)."""
    rows, inputs = np.array(rows, dtype=np.intp), np.array(inputs, dtype=np.intp)
    keep = last_of_each(rows)
    if keep is not None:
        rows, inputs = rows[keep], inputs[keep]
    if np.array_equal(inputs, np.arange(len(inputs))):
        inputs = slice(0, len(inputs))
    return owner, rows, inputs
