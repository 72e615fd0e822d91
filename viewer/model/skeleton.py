"""Skeleton: the bones' data as structure-of-arrays, updated in batched numpy.

Babylon keeps seven matrices in each Bone object and walks the bones in a loop. Here the
skeleton owns one array per quantity (a row per bone, in creation order: the bone's *slot*),
and each Bone reads and writes its row. ``prepare()`` composes the changed local matrices in
one batch and computes absolute matrices with one matrix product per depth level, so a
frame costs a handful of numpy calls however many bones there are.

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
from . import transforms
from .checks import finite_array

# Below this, a bind matrix is treated as singular (|det| over the product of row lengths).
SINGULAR_BIND = 1e-9


class Skeleton:
    def __init__(self, name: str):
        self.name = str(name)
        self._bones: list = []      # Babylon's skeleton.bones order (sort_bones reorders it)
        self._by_slot: list = []    # bones in slot (creation) order
        self._capacity = 0
        self._count = 0
        self._grow(8)
        # Dirty flags: what must be recomputed before the next read.
        self._structure_dirty = True  # levels and upload rows
        self._pose_dirty = True       # some local matrix or TRS changed
        self._bind_dirty = True       # some bind matrix or parent changed
        self._levels: list[tuple[np.ndarray, np.ndarray]] = []
        self._roots = np.empty(0, dtype=np.intp)
        self._upload_rows = np.empty(0, dtype=np.intp)
        self._upload_slots = np.empty(0, dtype=np.intp)
        self._upload = np.empty((0, 4, 4), dtype=np.float32)
        self._linked: list = []

    def __repr__(self) -> str:
        return f"Skeleton({self.name!r}, {self._count} bones)"

    # --- storage -----------------------------------------------------------------------------
    # Per-bone arrays: (trailing shape, dtype, value of a fresh row).
    _ROWS = {
        "_position": ((3,), np.float64, 0.0),
        "_quaternion": ((4,), np.float64, (0.0, 0.0, 0.0, 1.0)),
        "_scaling": ((3,), np.float64, 1.0),
        "_local": ((4, 4), np.float64, np.eye(4)),
        "_absolute": ((4, 4), np.float64, np.eye(4)),
        "_final": ((4, 4), np.float64, np.eye(4)),
        "_bind": ((4, 4), np.float64, np.eye(4)),
        "_absolute_bind": ((4, 4), np.float64, np.eye(4)),
        "_absolute_inverse_bind": ((4, 4), np.float64, np.eye(4)),
        "_rest": ((4, 4), np.float64, np.eye(4)),
        "_need_compose": ((), bool, False),      # TRS newer than the local matrix
        "_need_decompose": ((), bool, False),    # local matrix newer than the TRS
        "_parent": ((), np.intp, -1),            # parent slot, -1 for a root
    }

    def _grow(self, capacity: int) -> None:
        for name, (shape, dtype, fill) in self._ROWS.items():
            array = np.empty((capacity,) + shape, dtype=dtype)
            array[...] = fill
            if self._capacity:
                array[: self._count] = getattr(self, name)[: self._count]
            setattr(self, name, array)
        self._capacity = capacity

    def _add_bone(self, bone, parent, local, rest, bind) -> int:
        if self._count == self._capacity:
            self._grow(self._capacity * 2)
        slot = self._count
        self._count += 1
        self._local[slot] = local
        self._rest[slot] = rest
        self._bind[slot] = bind
        self._need_decompose[slot] = True
        self._parent[slot] = -1 if parent is None else parent._slot
        self._bones.append(bone)
        self._by_slot.append(bone)
        self._structure_dirty = self._pose_dirty = self._bind_dirty = True
        return slot

    # --- public API (Babylon's names) -----------------------------------------------------------
    @property
    def bones(self) -> tuple:
        """The bones in skeleton order (parents first after ``sort_bones()``)."""
        return tuple(self._bones)

    def get_bone_index_by_name(self, name: str) -> int:
        """Position of the named bone in ``bones``, or -1 (as Babylon)."""
        for index, bone in enumerate(self._bones):
            if bone.name == name:
                return index
        return -1

    def get_bone(self, name: str):
        """The named bone, or a ViewerError naming the skeleton's bones."""
        index = self.get_bone_index_by_name(name)
        if index < 0:
            known = ", ".join(repr(b.name) for b in self._bones[:12])
            more = ", ..." if len(self._bones) > 12 else ""
            raise ViewerError(f"skeleton {self.name!r} has no bone named {name!r} (bones: {known}{more})")
        return self._bones[index]

    def sort_bones(self) -> None:
        """Reorder ``bones`` so parents come before children, keeping the order otherwise.

        Each bone keeps the matrix row it had: a bone without an explicit index is pinned to
        its position before sorting (Babylon intends this; its check for ``undefined`` misses
        ``null``), so sorting never changes which row a vertex's joint index reads.
        """
        position = {id(bone): i for i, bone in enumerate(self._bones)}
        ordered, visited = [], set()
        for start in self._bones:
            chain = []
            bone = start
            while bone is not None and id(bone) not in visited:
                visited.add(id(bone))
                chain.append(bone)
                bone = bone._parent
            ordered.extend(reversed(chain))
        for bone in self._bones:
            if bone._index is None:
                bone._index = position[id(bone)]
        self._bones = ordered
        self._structure_dirty = True

    def prepare(self) -> None:
        """Sync linked nodes, then bring every local, absolute and final matrix up to date."""
        self._update_structure()
        for bone in self._linked:
            bone._copy_from_linked_node()
        self._update()

    def compute_absolute_matrices(self) -> None:
        """Recompute the absolute matrices of every bone, under every root."""
        self._update()

    def return_to_rest(self) -> None:
        """Every bone back to its rest matrix (linked bones: written into their nodes).

        As Babylon, bones with index -1 (not uploaded) are left alone.
        """
        n = self._count
        unlinked = np.zeros(n, dtype=bool)
        for bone in self._bones:
            if bone._index == -1:
                continue
            if bone._linked_node is not None:
                bone.return_to_rest()
            else:
                unlinked[bone._slot] = True
        self._local[:n][unlinked] = self._rest[:n][unlinked]
        self._need_compose[:n][unlinked] = False
        self._need_decompose[:n][unlinked] = True
        self._pose_dirty = True

    def set_current_pose_as_rest(self) -> None:
        """Every bone's current local matrix becomes its rest matrix."""
        self._compose_stale()
        n = self._count
        self._rest[:n] = self._local[:n]

    def get_transform_matrices(self) -> np.ndarray:
        """Final matrices as float32 (N, 4, 4), row i for the bone whose index is i.

        The array is the skeleton's upload buffer, read-only and overwritten by the next
        update: copy it to keep it.
        """
        self._update()
        return self._upload_view

    def get_absolute_matrices(self) -> np.ndarray:
        """Absolute matrices (N, 4, 4) in ``bones`` order: bone placements in skeleton space."""
        self._update()
        return self._absolute[self._bones_slots]

    def get_parent_indices(self) -> np.ndarray:
        """For each bone in ``bones`` order, its parent's position in ``bones`` (-1 for roots)."""
        self._update_structure()
        return self._parent_positions.copy()

    def set_pose(self, positions=None, rotation_quaternions=None, scalings=None) -> None:
        """Set the local TRS of every bone at once: (N,3), (N,4), (N,3) in bone index order.

        Bones linked to a node get the values written into their nodes, since the node is
        what counts for them. Parts left as None keep their current values.
        """
        self._update_structure()
        n = self._count
        rows, slots = self._upload_rows, self._upload_slots
        parts = [("positions", positions, 3, "_position"),
                 ("rotation_quaternions", rotation_quaternions, 4, "_quaternion"),
                 ("scalings", scalings, 3, "_scaling")]
        checked = []
        for label, value, width, attribute in parts:
            if value is None:
                continue
            array = finite_array(value, (n, width), f"skeleton {self.name!r} set_pose {label}")
            if width == 4 and not np.all(np.any(array, axis=1)):
                raise ViewerError(f"skeleton {self.name!r} set_pose {label}: a zero quaternion is not a rotation")
            checked.append((attribute, array))
        if not checked:
            return
        self._decompose_stale()
        for attribute, array in checked:
            getattr(self, attribute)[slots] = array[rows]
        self._need_compose[:n] = True
        self._pose_dirty = True
        for bone in self._linked:
            node, slot = bone._linked_node, bone._slot
            node.set_trs(self._position[slot], self._quaternion[slot], self._scaling[slot])

    # --- the batched update ---------------------------------------------------------------------
    def _update_structure(self) -> None:
        if not self._structure_dirty:
            return
        n = self._count
        parent = self._parent[:n]
        depth = np.full(n, -1, dtype=np.intp)
        for slot in range(n):  # only on structure change; walks up to a known depth
            chain = []
            s = slot
            while s != -1 and depth[s] < 0:
                chain.append(s)
                s = parent[s]
            d = -1 if s == -1 else depth[s]
            for s in reversed(chain):
                d += 1
                depth[s] = d
        self._roots = np.flatnonzero(depth == 0)
        self._levels = []
        for level in range(1, int(depth.max(initial=0)) + 1):
            slots = np.flatnonzero(depth == level)
            self._levels.append((slots, parent[slots]))
        rows = []
        for position, bone in enumerate(self._bones):
            index = position if bone._index is None else bone._index
            if index == -1:
                continue  # Babylon's "not uploaded"
            rows.append((index, bone._slot, bone))
        seen = {}
        for index, _, bone in rows:
            if not 0 <= index < n:
                raise ViewerError(f"bone {bone.name!r}: index {index} is outside 0..{n - 1}")
            if index in seen:
                raise ViewerError(f"bones {seen[index]!r} and {bone.name!r} both have index {index}")
            seen[index] = bone.name
        self._upload_rows = np.array([r[0] for r in rows], dtype=np.intp)
        self._upload_slots = np.array([r[1] for r in rows], dtype=np.intp)
        self._upload = np.empty((n, 4, 4), dtype=np.float32)
        self._upload[:] = np.eye(4, dtype=np.float32)
        self._upload_identity = bool(np.array_equal(self._upload_rows, np.arange(n))
                                     and np.array_equal(self._upload_slots, np.arange(n)))
        self._upload_view = self._upload.view()
        self._upload_view.flags.writeable = False
        self._linked = [b for b in self._by_slot if b._linked_node is not None]
        self._bones_slots = np.array([b._slot for b in self._bones], dtype=np.intp)
        position_of_slot = np.empty(n, dtype=np.intp)
        position_of_slot[self._bones_slots] = np.arange(n)
        parents = self._parent[self._bones_slots]
        self._parent_positions = np.where(parents >= 0, position_of_slot[np.maximum(parents, 0)], -1)
        self._structure_dirty = False
        self._pose_dirty = self._bind_dirty = True

    def _decompose_stale(self) -> None:
        """TRS from local matrices for rows whose matrix was set directly."""
        n = self._count
        stale = np.flatnonzero(self._need_decompose[:n])
        if stale.size:
            scaling, quaternion, position = transforms.decompose(self._local[stale])
            self._scaling[stale], self._quaternion[stale], self._position[stale] = scaling, quaternion, position
            self._need_decompose[stale] = False

    def _compose_stale(self) -> None:
        """Local matrices from TRS for rows whose TRS changed."""
        n = self._count
        need = self._need_compose[:n]
        if need.all():
            transforms.compose(self._scaling[:n], self._quaternion[:n], self._position[:n], out=self._local[:n])
        else:
            stale = np.flatnonzero(need)
            if stale.size:
                self._local[stale] = transforms.compose(self._scaling[stale], self._quaternion[stale], self._position[stale])
        need[:] = False

    def _update_bind(self) -> None:
        if not self._bind_dirty:
            return
        self._update_structure()
        bind, absolute_bind = self._bind, self._absolute_bind
        roots = self._roots
        absolute_bind[roots] = bind[roots]
        for slots, parents in self._levels:
            absolute_bind[slots] = np.matmul(bind[slots], absolute_bind[parents])
        n = self._count
        quality = transforms.singularity(absolute_bind[:n])
        bad = np.flatnonzero(~(quality > SINGULAR_BIND))
        if bad.size:
            raise ViewerError(f"bone {self._by_slot[bad[0]].name!r}: its absolute bind matrix is singular "
                              "(a zero or degenerate scale in its bind matrix or a parent's)")
        self._absolute_inverse_bind[:n] = np.linalg.inv(absolute_bind[:n])
        self._bind_dirty = False
        self._pose_dirty = True  # finals depend on the inverse binds

    def _update(self) -> None:
        self._update_structure()
        self._update_bind()
        if not self._pose_dirty:
            return
        n = self._count
        self._compose_stale()
        local, absolute = self._local, self._absolute
        roots = self._roots
        absolute[roots] = local[roots]
        for slots, parents in self._levels:
            absolute[slots] = np.matmul(local[slots], absolute[parents])
        np.matmul(self._absolute_inverse_bind[:n], absolute[:n], out=self._final[:n])
        if self._upload_identity:
            self._upload[...] = self._final[:n]
        else:
            self._upload[self._upload_rows] = self._final[self._upload_slots]
        self._pose_dirty = False
