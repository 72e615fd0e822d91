"""Skeleton: Babylon's Skeleton API over a BoneBatch (the bones' rows, see batch.py).

Matrix spaces (Babylon's names; ``A @ B`` applies A first):
- local:   the bone relative to its parent, composed from position/rotation/scaling
- absolute: local @ parent.absolute, relative to the skeleton root space
- bind / absolute bind: the bind pose, local and accumulated the same way
- absolute inverse bind: inverse of absolute bind
- final:  absolute_inverse_bind @ absolute, what the skinning shader gets
- rest:   a user-chosen pose that return_to_rest() restores
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from .batch import SINGULAR_BIND, BoneBatch, Dirty, UploadOrder
from .checks import OUT_OF_RANGE, first_bad_row, fits

__all__ = ["SINGULAR_BIND", "Skeleton"]


class Skeleton:
    def __init__(self, name: str, *, capacity: int = 8):
        """``capacity``: the bones it has room for before its arrays grow (a loader knows the count)."""
        self.name = str(name)
        self.batch = BoneBatch(f"skeleton {self.name!r}", capacity)
        # (joints, 4, 4) inverse bind matrices as a file gave them (glTF), or None: a writer
        # gives them back exactly while the bind is unchanged.
        self.inverse_bind_matrices = None

    def __repr__(self) -> str:
        return f"Skeleton({self.name!r}, {self.batch.count} bones)"

    # --- public API (Babylon's names) -----------------------------------------------------------
    @property
    def bones(self) -> tuple:
        """The bones in skeleton order (parents first after ``sort_bones()``)."""
        return tuple(self.batch.bones)

    def get_bone_index_by_name(self, name: str) -> int:
        """Position of the named bone in ``bones``, or -1 (as Babylon)."""
        for index, bone in enumerate(self.batch.bones):
            if bone.name == name:
                return index
        return -1

    def get_bone(self, name: str):
        """The named bone, or a ViewerError naming the skeleton's bones."""
        index = self.get_bone_index_by_name(name)
        if index < 0:
            bones = self.batch.bones
            known = ", ".join(repr(b.name) for b in bones[:12])
            more = ", ..." if len(bones) > 12 else ""
            raise ViewerError(f"skeleton {self.name!r} has no bone named {name!r} (bones: {known}{more})")
        return self.batch.bones[index]

    def sort_bones(self) -> None:
        """Reorder ``bones`` so parents come before children, keeping the order otherwise.

        Each bone keeps the matrix row it had: a bone without an explicit index is pinned to
        its position before sorting (Babylon intends this; its check for ``undefined`` misses
        ``null``), so sorting never changes which row a vertex's joint index reads.
        """
        bones = self.batch.bones
        ordered, visited = [], set()
        for start in bones:
            chain = []
            bone = start
            while bone is not None and id(bone) not in visited:
                visited.add(id(bone))
                chain.append(bone)
                bone = bone.get_parent()
            ordered.extend(reversed(chain))
        for position, bone in enumerate(bones):
            if bone.index is None:
                bone.index = position
        self.batch.reorder_bones(ordered)

    def prepare(self) -> None:
        """Sync linked nodes, then bring every local, absolute and final matrix up to date."""
        batch = self.batch
        if batch.dirty is Dirty.STRUCTURE:
            batch.update_layout()
        if batch.linked:
            batch.sync_linked()
        batch.update()

    def compute_absolute_matrices(self) -> None:
        """Recompute the absolute matrices of every bone, under every root."""
        self.batch.update()

    def return_to_rest(self) -> None:
        """Every bone back to its rest matrix (linked bones: written into their nodes).

        As Babylon, bones with index -1 (not uploaded) are left alone.
        """
        batch = self.batch
        unlinked = []
        for bone in batch.bones:
            if bone.index == -1:
                continue
            if bone.get_transform_node() is not None:
                bone.return_to_rest()
            else:
                unlinked.append(bone.slot)
        rows = batch.rows
        rows.local[unlinked] = rows.rest[unlinked]
        rows.need_decompose[unlinked] = True
        batch.mark_pose()
        rows.need_compose[unlinked] = False

    def set_current_pose_as_rest(self) -> None:
        """Every bone's current local matrix becomes its rest matrix."""
        batch = self.batch
        batch.compose_stale()
        batch.rows.rest[:batch.count] = batch.rows.local[:batch.count]
        for bone in batch.bones:
            bone.set_file_pose_matrix(None)  # the new rest is the pose to start from

    def get_transform_matrices(self) -> np.ndarray:
        """Final matrices as float32 (N, 4, 4), row i for the bone whose index is i.

        The array is the skeleton's upload buffer, read-only and overwritten by the next
        update: copy it to keep it.
        """
        self.batch.update()
        return self.batch.upload_view

    def get_absolute_matrices(self) -> np.ndarray:
        """Absolute matrices (N, 4, 4) in ``bones`` order: bone placements in skeleton space."""
        self.batch.update()
        return self.batch.rows.absolute[self.batch.layout.bones_slots]

    def get_bone_lengths(self) -> np.ndarray:
        """Each bone's ``length`` in ``bones`` order, NaN where unset (for overlays)."""
        self.batch.update_layout()
        return self.batch.rows.length[self.batch.layout.bones_slots]

    def get_parent_indices(self) -> np.ndarray:
        """For each bone in ``bones`` order, its parent's position in ``bones`` (-1 for roots)."""
        self.batch.update_layout()
        return self.batch.layout.parent_positions.copy()

    def set_pose(self, positions=None, rotation_quaternions=None, scalings=None) -> None:
        """Set the local TRS of every bone at once: (N,3), (N,4), (N,3) in bone index order.

        Each bone's values go where its pose lives (``Bone.get_pose_target()``): bones linked
        to a node get them written into their nodes. Parts left as None keep their values.
        """
        batch = self.batch
        if batch.set_pose_rows(positions, rotation_quaternions, scalings):
            return  # validated and written by the compiled kernel
        batch.update_layout()
        n = batch.count
        checked = []
        for label, value, width, field in (("positions", positions, 3, "position"),
                                           ("rotation_quaternions", rotation_quaternions, 4, "quaternion"),
                                           ("scalings", scalings, 3, "scaling")):
            if value is None:
                continue
            array = _checked_rows(value, n, width, f"skeleton {self.name!r} set_pose {label}")
            checked.append((field, array))
        if not checked:
            return
        batch.decompose_stale()
        rows, upload = batch.rows, batch.layout.upload
        for field, array in checked:
            target = getattr(rows, field)
            if upload.order is UploadOrder.PARTIAL:
                target[upload.slots] = array[upload.rows]
            elif upload.order is UploadOrder.SAME:
                np.copyto(target[:n], array)
            else:
                np.take(array, upload.pose_source, axis=0, out=target[:n])
        if upload.order is UploadOrder.PARTIAL:
            rows.need_compose[upload.slots] = True
        else:
            rows.need_compose[:n] = True
        batch.mark_pose()
        batch.write_linked_nodes()


def _checked_rows(value, n: int, width: int, what: str) -> np.ndarray:
    """(n, width) float64 rows, validated with one checks.fits over the whole array."""
    array = value if isinstance(value, np.ndarray) and value.dtype == np.float64 else None
    if array is None:
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ViewerError(f"{what}: expected numbers of shape {(n, width)}, got {value!r}") from None
    if array.shape != (n, width):
        raise ViewerError(f"{what}: expected shape {(n, width)}, got shape {array.shape}")
    if not fits(array):
        bad = first_bad_row(array)
        raise ViewerError(f"{what}: row {bad} contains {OUT_OF_RANGE}: {array[bad].tolist()}")
    if width == 4 and not array.any(axis=1).all():
        raise ViewerError(f"{what}: a zero quaternion is not a rotation")
    return array
