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
        self._kernel = None           # preallocated views and buffers of the batched update
        self._kernel_dirty = True     # storage arrays were replaced (grown, or adopted by a group)
        self._structure_version = 0   # bumped whenever levels / rows are rebuilt (groups watch it)
        self._storage_epoch = 0       # bumped whenever the per-bone arrays are replaced

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
        "_length": ((), np.float64, np.nan),     # Bone.length, NaN while unset
    }

    def _grow(self, capacity: int) -> None:
        for name, (shape, dtype, fill) in self._ROWS.items():
            array = np.empty((capacity,) + shape, dtype=dtype)
            array[...] = fill
            if self._capacity:
                array[: self._count] = getattr(self, name)[: self._count]
            setattr(self, name, array)
        self._capacity = capacity
        self._storage_epoch = getattr(self, "_storage_epoch", 0) + 1
        self._kernel_dirty = True

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
        if self._linked:
            self._sync_linked()
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

    def get_bone_lengths(self) -> np.ndarray:
        """Each bone's ``length`` in ``bones`` order, NaN where unset (for overlays)."""
        self._update_structure()
        return self._length[self._bones_slots]

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
        checked = []
        for label, value, width, attribute in (("positions", positions, 3, "_position"),
                                               ("rotation_quaternions", rotation_quaternions, 4, "_quaternion"),
                                               ("scalings", scalings, 3, "_scaling")):
            if value is None:
                continue
            array = _checked_rows(value, n, width, f"skeleton {self.name!r} set_pose {label}")
            checked.append((attribute, array))
        if not checked:
            return
        self._decompose_stale()
        pose_source = self._pose_source
        for attribute, array in checked:
            target = getattr(self, attribute)[:n]
            if pose_source is None:
                getattr(self, attribute)[self._upload_slots] = array[self._upload_rows]
            elif pose_source is _IDENTITY:
                np.copyto(target, array)
            else:
                np.take(array, pose_source, axis=0, out=target)
        if pose_source is None:
            self._need_compose[self._upload_slots] = True
        else:
            self._need_compose[:n] = True
        self._pose_dirty = True
        if self._linked:
            position, quaternion, scaling = self._position, self._quaternion, self._scaling
            for bone in self._linked:
                slot = bone._slot
                bone._linked_node._set_trs_unchecked(position[slot].copy(), quaternion[slot].copy(),
                                                     scaling[slot].copy())

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
        # Store the rows in depth order (stable), so that every depth level is one contiguous
        # slice of each array: a level costs one gather of parents and one matrix product.
        order = np.argsort(depth, kind="stable")
        if not np.array_equal(order, np.arange(n)):
            new_of_old = np.empty(n, dtype=np.intp)
            new_of_old[order] = np.arange(n)
            for name in self._ROWS:
                array = getattr(self, name)
                array[:n] = array[:n][order]
            parent = self._parent[:n]
            parent[:] = np.where(parent >= 0, new_of_old[np.maximum(parent, 0)], -1)
            self._by_slot = [self._by_slot[i] for i in order]
            for slot, bone in enumerate(self._by_slot):
                bone._slot = slot
            depth = depth[order]
        bounds = np.searchsorted(depth, np.arange(int(depth.max(initial=-1)) + 2))
        self._roots = np.arange(bounds[1] if n else 0, dtype=np.intp)
        self._levels = []
        self._level_bounds = []
        for level in range(1, len(bounds) - 1):
            a, b = int(bounds[level]), int(bounds[level + 1])
            slots = np.arange(a, b, dtype=np.intp)
            self._levels.append((slots, parent[a:b].copy()))
            self._level_bounds.append((a, b))
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
        # Row sources: upload row i reads slot _upload_source[i]; set_pose writes slot s from
        # input row _pose_source[s]. None when some row is not uploaded (index -1).
        if len(rows) == n:
            upload_source = np.empty(n, dtype=np.intp)
            upload_source[self._upload_rows] = self._upload_slots
            pose_source = np.empty(n, dtype=np.intp)
            pose_source[self._upload_slots] = self._upload_rows
            self._upload_source = _IDENTITY if self._upload_identity else upload_source
            self._pose_source = _IDENTITY if self._upload_identity else pose_source
        else:
            self._upload_source = self._pose_source = None
        self._upload_view = self._upload.view()
        self._upload_view.flags.writeable = False
        self._linked = [b for b in self._by_slot if b._linked_node is not None]
        self._bones_slots = np.array([b._slot for b in self._bones], dtype=np.intp)
        position_of_slot = np.empty(n, dtype=np.intp)
        position_of_slot[self._bones_slots] = np.arange(n)
        parents = self._parent[self._bones_slots]
        self._parent_positions = np.where(parents >= 0, position_of_slot[np.maximum(parents, 0)], -1)
        self._structure_dirty = False
        self._kernel_dirty = True
        self._structure_version += 1
        self._pose_dirty = self._bind_dirty = True

    def _decompose_stale(self) -> None:
        """TRS from local matrices for rows whose matrix was set directly."""
        n = self._count
        need = self._need_decompose[:n]
        if not need.any():
            return
        stale = np.flatnonzero(need)
        scaling, quaternion, position = transforms.decompose(self._local[stale])
        self._scaling[stale], self._quaternion[stale], self._position[stale] = scaling, quaternion, position
        self._need_decompose[stale] = False

    def _compose_stale(self) -> None:
        """Local matrices from TRS for rows whose TRS changed."""
        n = self._count
        need = self._need_compose[:n]
        if not need.any():
            return
        stale = np.flatnonzero(need)
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

    def _sync_linked(self) -> None:
        """Copy the TRS of linked nodes that changed since the last copy (one batch when many)."""
        changed = [bone for bone in self._linked if bone._linked_node._version != bone._linked_version]
        if not changed:
            return
        if len(changed) < 4:
            for bone in changed:
                bone._copy_from_linked_node()
            return
        slots = [bone._slot for bone in changed]
        nodes = [bone._linked_node for bone in changed]
        self._position[slots] = [node._position for node in nodes]
        self._quaternion[slots] = [node._quaternion for node in nodes]
        self._scaling[slots] = [node._scaling for node in nodes]
        self._need_compose[slots] = True
        self._need_decompose[slots] = False
        self._pose_dirty = True
        for bone, node in zip(changed, nodes):
            bone._linked_version = node._version

    def _update(self) -> None:
        self._update_structure()
        self._update_bind()
        if not self._pose_dirty:
            return
        if self._kernel_dirty:
            self._kernel = _Kernel.for_skeleton(self)
            self._kernel_dirty = False
        self._kernel.run()
        self._pose_dirty = False


_IDENTITY = "identity"  # marker: a row mapping that is the identity


def _checked_rows(value, n: int, width: int, what: str) -> np.ndarray:
    """(n, width) float64 rows, validated with one isfinite over the whole array."""
    array = value if isinstance(value, np.ndarray) and value.dtype == np.float64 else None
    if array is None:
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ViewerError(f"{what}: expected numbers of shape {(n, width)}, got {value!r}") from None
    if array.shape != (n, width):
        raise ViewerError(f"{what}: expected shape {(n, width)}, got shape {array.shape}")
    if not np.isfinite(array).all():
        bad = int(np.flatnonzero(~np.isfinite(array).all(axis=1))[0])
        raise ViewerError(f"{what}: row {bad} contains NaN or infinity: {array[bad].tolist()}")
    if width == 4 and not array.any(axis=1).all():
        raise ViewerError(f"{what}: a zero quaternion is not a rotation")
    return array


# Babylon's ComposeToRef as one product: the 3x3 rotation part, row-major, is
#   R = [1 | 2 q_i q_j terms] @ COEFFICIENTS, over the 16 products q_i q_j (x, y, z, w) and 1.
def _compose_coefficients() -> np.ndarray:
    c = np.zeros((17, 9))
    x, y, z, w, one = 0, 1, 2, 3, 16

    def term(row, col, i, j, sign):
        c[i * 4 + j, row * 3 + col] += 2.0 * sign

    for (row, col), terms in {
        (0, 0): [(y, y, -1), (z, z, -1)], (0, 1): [(x, y, 1), (w, z, 1)], (0, 2): [(x, z, 1), (w, y, -1)],
        (1, 0): [(x, y, 1), (w, z, -1)], (1, 1): [(x, x, -1), (z, z, -1)], (1, 2): [(y, z, 1), (w, x, 1)],
        (2, 0): [(x, z, 1), (w, y, 1)], (2, 1): [(y, z, 1), (w, x, -1)], (2, 2): [(x, x, -1), (y, y, -1)],
    }.items():
        for i, j, sign in terms:
            term(row, col, i, j, sign)
    for d in (0, 4, 8):
        c[one, d] = 1.0
    return c


COMPOSE_COEFFICIENTS = _compose_coefficients()
SMALL_COMPOSE = 300  # up to this many rows, compose as one product (fewer numpy calls)
_LAST_COLUMN = np.array([0.0, 0.0, 0.0, 1.0])


class _Kernel:
    """Preallocated views and buffers for the per-frame update of rows [0, total) of arrays.

    The rows are ``members`` skeletons of ``n`` rows each with the same depth structure (a
    single skeleton is one member), or, for a group of different skeletons, any rows with
    per-level index arrays. ``run()`` composes changed local matrices (one batched product
    when all changed), computes absolute matrices one depth level at a time, the finals,
    and writes the float32 upload array, without allocating when every bone changed.
    """

    @classmethod
    def for_skeleton(cls, skeleton: Skeleton) -> "_Kernel":
        n = skeleton._count
        levels = [(a, b, parents) for (a, b), (_, parents) in zip(skeleton._level_bounds, skeleton._levels)]
        return cls(skeleton, n, 1, n, len(skeleton._roots), levels, skeleton._upload_source, skeleton)

    def __init__(self, storage, total: int, members: int, n: int, root_count: int, levels, upload_source,
                 upload_owner, general=None):
        self.storage, self.total = storage, total
        self.upload_owner = upload_owner  # has _upload, _upload_rows, _upload_slots
        t = total
        s = storage
        self.need = s._need_compose[:t]
        self.position, self.quaternion, self.scaling = s._position[:t], s._quaternion[:t], s._scaling[:t]
        self.local, self.absolute, self.final = s._local[:t], s._absolute[:t], s._final[:t]
        self.inverse_bind = s._absolute_inverse_bind[:t]
        # compose buffers: products q_i q_j plus a constant 1, and the 3x3 rotation parts
        self.products = np.empty((t, 17))
        self.products[:, 16] = 1.0
        self.outer = self.products[:, :16].reshape(t, 4, 4)
        self.rotation = np.empty((t, 9))
        self.rotation3 = self.rotation.reshape(t, 3, 3)
        self.scale_column = self.scaling[:, :, None]
        self.local_rotation = self.local[:, :3, :3]
        self.local_translation = self.local[:, 3, :3]
        self.local_last_column = self.local[:, :, 3]
        # absolute pass
        self.general = general
        if general is None:
            # One skeleton: 3-d slices; many alike: (members, n) views, a level is [:, a:b].
            if members == 1:
                local3, absolute3, axis = self.local, self.absolute, 0
            else:
                shape = (members, n, 4, 4)
                local3, absolute3, axis = self.local.reshape(shape), self.absolute.reshape(shape), 1
            index = (slice(None),) * axis
            self.axis = axis
            self.roots = (local3[index + (slice(0, root_count),)], absolute3[index + (slice(0, root_count),)])
            self.levels = []
            for a, b, parents in levels:
                buffer = np.empty(((members,) if axis else ()) + (b - a, 4, 4))
                rows = index + (slice(a, b),)
                self.levels.append((absolute3, parents, buffer, local3[rows], absolute3[rows]))
        else:
            roots, level_rows = general
            self.root_rows = roots
            self.root_buffer = np.empty((len(roots), 4, 4))
            self.levels = [(rows, parents, np.empty((len(rows), 4, 4)), np.empty((len(rows), 4, 4)),
                            np.empty((len(rows), 4, 4))) for rows, parents in level_rows]
        # upload
        self.members, self.n = members, n
        self.upload = upload_owner._upload
        if upload_source is _IDENTITY:
            self.upload_mode = 0
        elif upload_source is None:
            self.upload_mode = 2
        else:
            self.upload_mode = 1
            self.upload_source = upload_source
            if general is None:
                self.final3, self.upload3 = self.final.reshape(members, n, 4, 4), self.upload.reshape(members, n, 4, 4)
                if members == 1:
                    self.final3, self.upload3 = self.final, self.upload
                    self.upload_axis = 0
                else:
                    self.upload_axis = 1

    def compose(self) -> None:
        need = self.need
        if need.all():
            if self.total > SMALL_COMPOSE:  # long columns: the column-wise formulas are faster
                transforms.compose(self.scaling, self.quaternion, self.position, out=self.local)
                need[...] = False
                return
            np.einsum("ni,nj->nij", self.quaternion, self.quaternion, out=self.outer)
            np.matmul(self.products, COMPOSE_COEFFICIENTS, out=self.rotation)
            np.multiply(self.rotation3, self.scale_column, out=self.local_rotation)
            np.copyto(self.local_translation, self.position)
            self.local_last_column[...] = _LAST_COLUMN
        else:
            stale = np.flatnonzero(need)
            if not stale.size:
                return
            self.local[stale] = transforms.compose(self.scaling[stale], self.quaternion[stale], self.position[stale])
        need[...] = False

    def run(self) -> None:
        self.compose()
        absolute = self.absolute
        if self.general is None:
            np.copyto(self.roots[1], self.roots[0])
            axis, take, matmul = self.axis, np.take, np.matmul
            for absolute3, parents, buffer, local_rows, absolute_rows in self.levels:
                take(absolute3, parents, axis=axis, out=buffer, mode="clip")  # indices are valid
                matmul(local_rows, buffer, out=absolute_rows)
        else:
            np.take(self.local, self.root_rows, axis=0, out=self.root_buffer)
            absolute[self.root_rows] = self.root_buffer
            local = self.local
            for rows, parents, local_buffer, parent_buffer, result in self.levels:
                np.take(local, rows, axis=0, out=local_buffer, mode="clip")
                np.take(absolute, parents, axis=0, out=parent_buffer, mode="clip")
                np.matmul(local_buffer, parent_buffer, out=result)
                absolute[rows] = result
        np.matmul(self.inverse_bind, absolute, out=self.final)
        mode = self.upload_mode
        if mode == 0:
            np.copyto(self.upload, self.final)
        elif mode == 1:
            if self.general is None:
                np.take(self.final3, self.upload_source, axis=self.upload_axis, out=self.upload3, mode="clip")
            else:
                np.take(self.final, self.upload_source, axis=0, out=self.upload, mode="clip")
        else:
            owner = self.upload_owner
            owner._upload[owner._upload_rows] = self.final[owner._upload_slots]
