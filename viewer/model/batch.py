"""The batch engine: every bone's numbers as rows of arrays, ordered by depth, and the one
update that turns local poses into absolute, final and upload matrices.

Where is a bone's final matrix computed?  ``UpdateKernel.run()`` below: the absolute matrices
one depth level at a time, then ``final = absolute_inverse_bind @ absolute`` for every row,
written into the float32 upload array that a renderer sends to the GPU as it is.

``Skeleton`` (Babylon's API) and ``SkeletonGroup`` (many skeletons as one batch) are fronts
over ``BoneBatch``; a ``Bone`` is a view of one row and reads and writes it through
``BoneBatch``'s methods.  A change is announced with one of three calls, from the cheapest to
the dearest, as Babylon funnels everything through ``_markAsDirty``: ``mark_pose()``,
``mark_bind()``, ``mark_structure()``.

Row order: a bone's *slot* is its row. Rows are kept in depth order (roots first, then each
depth level as one contiguous slice), so a level costs one gather of parents and one matrix
product; the batch moves rows (and updates ``bone.slot``) whenever the structure changes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ..errors import ViewerError
from . import native, transforms
from .arrays import distinct
from .checks import MAX_MAGNITUDE

# Below this, a bind matrix is treated as singular (|det| over the product of row lengths).
SINGULAR_BIND = 1e-9

# The per-bone arrays: name -> (shape of one row, dtype, value of a fresh row).
ROW_FIELDS = {
    "position": ((3,), np.float64, 0.0),
    "quaternion": ((4,), np.float64, (0.0, 0.0, 0.0, 1.0)),
    "scaling": ((3,), np.float64, 1.0),
    "local": ((4, 4), np.float64, np.eye(4)),                  # relative to the parent
    "absolute": ((4, 4), np.float64, np.eye(4)),               # local @ parent.absolute
    "final": ((4, 4), np.float64, np.eye(4)),                  # absolute_inverse_bind @ absolute
    "bind": ((4, 4), np.float64, np.eye(4)),
    "absolute_bind": ((4, 4), np.float64, np.eye(4)),          # bind @ parent.absolute_bind
    "absolute_inverse_bind": ((4, 4), np.float64, np.eye(4)),
    "rest": ((4, 4), np.float64, np.eye(4)),                   # what return_to_rest restores
    "need_compose": ((), bool, False),       # TRS newer than the local matrix
    "need_decompose": ((), bool, False),     # local matrix newer than the TRS
    "parent": ((), np.intp, -1),             # parent slot, -1 for a root
    "length": ((), np.float64, np.nan),      # Bone.length, NaN while unset
    "linked_version": ((), np.int64, -1),    # version of the linked node last copied in
}


class RowArrays:
    """One array per ``ROW_FIELDS`` entry, each ``capacity`` rows long."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        for name, (shape, dtype, fill) in ROW_FIELDS.items():
            array = np.empty((capacity,) + shape, dtype=dtype)
            array[...] = fill
            setattr(self, name, array)

    @classmethod
    def window(cls, other: "RowArrays", start: int, count: int) -> "RowArrays":
        """Rows [start, start + count) of ``other``, sharing its memory (a group member)."""
        rows = cls.__new__(cls)
        rows.capacity = count
        for name in ROW_FIELDS:
            setattr(rows, name, getattr(other, name)[start:start + count])
        return rows

    def copy_rows(self, source: "RowArrays", count: int, start: int = 0) -> None:
        """Rows [0, count) of ``source`` into rows [start, start + count) of this one."""
        for name in ROW_FIELDS:
            getattr(self, name)[start:start + count] = getattr(source, name)[:count]

    def permute(self, order: np.ndarray) -> None:
        """Row i becomes the old row order[i], for the first len(order) rows."""
        n = len(order)
        for name in ROW_FIELDS:
            array = getattr(self, name)
            array[:n] = array[:n][order]


class Dirty(enum.IntEnum):
    """What must be recomputed before the next read; a higher level implies the lower ones."""

    CLEAN = 0
    POSE = 1        # local TRS or matrices: compose, absolutes, finals, upload
    BIND = 2        # bind matrices: absolute binds and their inverses too
    STRUCTURE = 3   # bones added, re-parented, re-indexed, linked: the layout too


class UploadOrder(enum.Enum):
    """How slots map to the rows of the upload array (a vertex's joint index is a row)."""

    SAME = "upload row i is slot i"
    PERMUTED = "every slot uploaded, upload row i is slot source[i]"
    PARTIAL = "some bones are not uploaded (index -1): scatter the uploaded ones"


@dataclass
class UploadMap:
    order: UploadOrder
    rows: np.ndarray                 # upload row of each uploaded slot ...
    slots: np.ndarray                # ... and that slot
    source: np.ndarray | None        # PERMUTED: the slot each upload row reads
    pose_source: np.ndarray | None   # the input row (bone index) each slot reads in set_pose; None when PARTIAL


@dataclass
class Layout:
    """Depth-ordered rows: ``root_count`` roots, then ``levels`` as (start, stop, parent slots)."""

    root_count: int
    levels: list
    upload: UploadMap
    bones_slots: np.ndarray          # slot of each bone in skeleton ("bones") order
    parent_positions: np.ndarray     # each bone's parent position in "bones" order, -1 for roots

    def alike(self, other: "Layout") -> bool:
        """Same depth structure and upload order: members of a group can share one kernel."""
        return (self.root_count == other.root_count
                and [(a, b) for a, b, _ in self.levels] == [(a, b) for a, b, _ in other.levels]
                and all(np.array_equal(p, q) for (_, _, p), (_, _, q) in zip(self.levels, other.levels))
                and self.upload.order == other.upload.order
                and (self.upload.order is not UploadOrder.PERMUTED
                     or np.array_equal(self.upload.source, other.upload.source)))


class BoneBatch:
    """The bones of one skeleton as rows: storage, layout, change tracking and the update."""

    def __init__(self, owner: str, capacity: int = 8):
        self.owner = owner               # for error messages: "skeleton 'x'"
        self.rows = RowArrays(max(int(capacity), 1))  # room for that many bones before the arrays grow
        self.count = 0
        self.bones: list = []            # skeleton order (Babylon's skeleton.bones)
        self.by_slot: list = []          # the same bones in row order
        self.linked: list = []           # bones with a linked TransformNode, row order
        self.linked_nodes: list = []     # their nodes
        self._links: list | None = None  # sync_linked()'s plan for this layout and storage
        self.layout: Layout | None = None
        self.layout_version = 0          # bumped when the layout or the storage is replaced
        self.dirty = Dirty.STRUCTURE
        self.upload = np.empty((0, 4, 4), dtype=np.float32)
        self.upload_view = self.upload
        self._kernel = None
        self._scatter = None             # the compiled set_pose scatter for this layout, False: none

    # --- change tracking ----------------------------------------------------------------------
    def mark_pose(self, slot: int | None = None) -> None:
        """A local TRS (``slot``'s, or any when None) changed: compose it on the next update."""
        if slot is not None:
            self.rows.need_compose[slot] = True
            self.rows.linked_version[slot] = -1  # a linked node overrides it again in prepare()
        if self.dirty < Dirty.POSE:
            self.dirty = Dirty.POSE

    def mark_bind(self) -> None:
        if self.dirty < Dirty.BIND:
            self.dirty = Dirty.BIND

    def mark_structure(self) -> None:
        self.dirty = Dirty.STRUCTURE

    def mark_clean(self) -> None:
        """A group's kernel has just updated these rows."""
        self.dirty = Dirty.CLEAN

    # --- rows ---------------------------------------------------------------------------------
    def add_bone(self, bone, parent_slot: int, local, rest, bind) -> int:
        if self.count == self.rows.capacity:
            grown = RowArrays(self.rows.capacity * 2)
            grown.copy_rows(self.rows, self.count)
            self._replace_rows(grown)
        slot = self.count
        self.count += 1
        rows = self.rows
        rows.local[slot], rows.rest[slot], rows.bind[slot] = local, rest, bind
        rows.need_decompose[slot] = True
        rows.parent[slot] = parent_slot
        self.bones.append(bone)
        self.by_slot.append(bone)
        self.mark_structure()
        return slot

    def add_bones(self, bones: list, parents: list[int], local, rest, bind) -> range:
        """``add_bone`` for each of ``bones`` in turn, at once: ``parents[k]`` the position of
        bone k's parent among them (before k), -1 for a root; its slots."""
        count = len(bones)
        capacity = self.rows.capacity
        while capacity < self.count + count:  # as add_bone grows the arrays, by doubling
            capacity *= 2
        self.reserve(capacity)
        start = self.count
        block = slice(start, start + count)
        rows = self.rows
        rows.local[block], rows.rest[block], rows.bind[block] = local, rest, bind
        rows.need_decompose[block] = True
        parents = np.asarray(parents, dtype=np.intp)
        rows.parent[block] = np.where(parents < 0, -1, parents + start)
        self.count += count
        self.bones.extend(bones)
        self.by_slot.extend(bones)
        self.mark_structure()
        return range(start, start + count)

    def reserve(self, capacity: int) -> None:
        """Room for ``capacity`` bones, so that adding that many grows the arrays at most once
        (a loader that knows the count)."""
        if capacity > self.rows.capacity:
            grown = RowArrays(capacity)
            if self.count:
                grown.copy_rows(self.rows, self.count)
            self._replace_rows(grown)

    def _replace_rows(self, rows: RowArrays) -> None:
        self.rows = rows
        self._kernel = None
        self._scatter = None
        self._links = None
        self.layout_version += 1

    def adopt_rows(self, rows: RowArrays, upload: np.ndarray) -> None:
        """Use ``rows`` (a window of a group's arrays, already holding this batch's rows) and
        ``upload`` (a window of the group's upload array) from now on."""
        self._replace_rows(rows)
        self.upload = upload
        self.upload_view = _read_only_view(upload)
        self.mark_pose()

    def set_parent(self, slot: int, parent_slot: int) -> None:
        self.rows.parent[slot] = parent_slot
        self.mark_structure()

    def reorder_bones(self, bones: list) -> None:
        """A new skeleton order (sort_bones); the rows stay where they are."""
        self.bones = list(bones)
        self.mark_structure()

    def trs(self, name: str, slot: int) -> np.ndarray:
        """Row ``slot`` of position / quaternion / scaling, decomposed first if a matrix was set."""
        if self.rows.need_decompose[slot]:
            self.decompose_stale()
        return getattr(self.rows, name)[slot]

    def set_trs(self, name: str, slot: int, value: np.ndarray) -> None:
        if self.rows.need_decompose[slot]:
            self.decompose_stale()  # keep the other two parts of a directly set matrix
        getattr(self.rows, name)[slot] = value
        self.mark_pose(slot)

    def local_matrix(self, slot: int) -> np.ndarray:
        if self.rows.need_compose[slot]:
            self.compose_stale()
        return self.rows.local[slot]

    def set_local_matrix(self, slot: int, matrix: np.ndarray) -> None:
        rows = self.rows
        rows.local[slot] = matrix
        rows.need_decompose[slot] = True
        self.mark_pose(slot)
        rows.need_compose[slot] = False

    def set_bind_matrix(self, slot: int, matrix: np.ndarray) -> None:
        """The bind matrix; the subtree's absolute binds follow on the next update."""
        self.rows.bind[slot] = matrix
        self.mark_bind()

    def decompose_stale(self) -> None:
        """TRS from local matrices for rows whose matrix was set directly."""
        rows, n = self.rows, self.count
        need = rows.need_decompose[:n]
        if not need.any():
            return
        stale = np.flatnonzero(need)
        rows.scaling[stale], rows.quaternion[stale], rows.position[stale] = transforms.decompose(rows.local[stale])
        need[stale] = False

    def compose_stale(self) -> None:
        """Local matrices from TRS for rows whose TRS changed."""
        rows, n = self.rows, self.count
        need = rows.need_compose[:n]
        if not need.any():
            return
        stale = np.flatnonzero(need)
        rows.local[stale] = transforms.compose(rows.scaling[stale], rows.quaternion[stale], rows.position[stale])
        need[:] = False

    # --- linked TransformNodes ----------------------------------------------------------------
    def sync_linked(self) -> None:
        """Copy the TRS of linked nodes that changed since the last copy: per NodeTable of the
        linked nodes, one gather of the rows whose version moved (in C when the compiled kernel
        is there, else numpy's ``_gather_linked``)."""
        links = self._links
        if links is None:
            links = self._links = self._plan_links()
        copied = 0
        for table, sync, node_rows, slots, _ in links:
            if sync is not None:
                copied += sync(table.position, table.quaternion, table.scaling, table.version)
            else:
                copied += self._gather_linked(table, node_rows, slots)
        if copied:
            self.mark_pose()

    def _plan_links(self) -> list:
        """(table, compiled gather or None, node rows, bone slots, (node rows, bone slots) to write
        back: each node once, from its last bone) per NodeTable of the linked nodes."""
        groups: dict = {}
        for bone, node in zip(self.linked, self.linked_nodes):
            table = node.table
            group = groups.setdefault(id(table), (table, [], []))
            group[1].append(node.table_row)
            group[2].append(bone.slot)
        module, rows, n = native.ckernel, self.rows, self.count
        links = []
        for table, node_rows, slots in groups.values():
            node_rows, slots = np.array(node_rows, dtype=np.int64), np.array(slots, dtype=np.int64)
            sync = None if module is None else module.LinkSync(
                node_rows, slots, rows.position[:n], rows.quaternion[:n], rows.scaling[:n], rows.need_compose[:n],
                rows.need_decompose[:n], rows.linked_version[:n]).sync
            keep = last_of_each(node_rows)
            written = (node_rows, slots) if keep is None else (node_rows[keep], slots[keep])
            links.append((table, sync, node_rows, slots, written))
        return links

    def _gather_linked(self, table, node_rows: np.ndarray, slots: np.ndarray) -> int:
        """numpy's gather: the bones whose node's version differs from the one last copied."""
        rows = self.rows
        versions = table.version[node_rows]
        changed = versions != rows.linked_version[slots]
        if not changed.any():
            return 0
        if not changed.all():
            node_rows, slots, versions = node_rows[changed], slots[changed], versions[changed]
        rows.position[slots] = table.position[node_rows]
        rows.quaternion[slots] = table.quaternion[node_rows]
        rows.scaling[slots] = table.scaling[node_rows]
        rows.need_compose[slots] = True
        rows.need_decompose[slots] = False
        rows.linked_version[slots] = versions
        return len(slots)

    def copy_linked(self, slot: int, node) -> None:
        """Copy one linked node's TRS now, as ``sync_linked()`` would: a pose written to the node
        through a Bone (its space API) is then the bone's at once, and the next sync skips it."""
        rows = self.rows
        rows.position[slot] = node.position
        rows.quaternion[slot] = node.rotation_quaternion
        rows.scaling[slot] = node.scaling
        rows.need_compose[slot] = True
        rows.need_decompose[slot] = False
        rows.linked_version[slot] = node.version
        self.mark_pose()

    def set_pose_rows(self, positions, rotation_quaternions, scalings) -> bool:
        """``Skeleton.set_pose``'s validate and scatter in C (csrc/ckernel.c's PoseScatter), for the
        current layout: True when done (or nothing was given); False when the compiled kernel is
        not there or declined (not C-contiguous float64 rows of the right shape, a value that
        does not fit (checks.fits), a zero quaternion, a matrix to decompose first): nothing was written, and the numpy path runs,
        which raises the error or handles the input."""
        write = self._scatter
        if write is None or self.dirty is Dirty.STRUCTURE:
            self.update_layout()
            write = self._scatter
            if write is None:
                write = self._scatter = self._pose_scatter()
        if write is False:
            return False
        done = write(positions, rotation_quaternions, scalings)
        if done < 0:
            return False
        if done:
            if self.dirty is Dirty.CLEAN:
                self.dirty = Dirty.POSE
            if self.linked:
                self.write_linked_nodes()
        return True

    def _pose_scatter(self):
        module = native.ckernel
        if module is None:
            return False
        rows, n, upload = self.rows, self.count, self.layout.upload
        if upload.order is UploadOrder.SAME:
            dst = src = None
        elif upload.order is UploadOrder.PARTIAL:
            dst, src = upload.slots, upload.rows
        else:
            dst, src = np.arange(n), upload.pose_source
        as_int64 = (lambda a: None if a is None else np.ascontiguousarray(a, dtype=np.int64))
        return module.PoseScatter(n, rows.need_decompose[:n], rows.need_compose[:n], rows.position[:n],
                                  rows.quaternion[:n], rows.scaling[:n], as_int64(dst), as_int64(src),
                                  MAX_MAGNITUDE).write

    def write_linked_nodes(self) -> None:
        """After set_pose: a linked bone's pose lives in its node (Bone.get_pose_target()). Per
        NodeTable, one copy of the bones' rows into their nodes' rows (a node two bones share gets
        the later bone's, as writes one after another would leave it)."""
        links = self._links
        if links is None:
            links = self._links = self._plan_links()
        rows = self.rows
        for table, _, _, _, (node_rows, slots) in links:
            table.write(node_rows, rows.position[slots], rows.quaternion[slots], rows.scaling[slots])

    # --- update ---------------------------------------------------------------------------------
    def update_layout(self) -> None:
        if self.dirty is Dirty.STRUCTURE:
            self._build_layout()
            self.dirty = Dirty.BIND

    def update_bind(self) -> None:
        self.update_layout()
        if self.dirty >= Dirty.BIND:
            self._update_bind()
            self.dirty = Dirty.POSE

    def update(self) -> None:
        """Everything up to date: layout, binds, local, absolute, final and upload matrices."""
        dirty = self.dirty
        if dirty is Dirty.CLEAN:
            return
        if dirty is Dirty.POSE and self._kernel is not None:  # the per-frame case
            self._kernel.run()
            self.dirty = Dirty.CLEAN
            return
        self.update_bind()
        if self.dirty is Dirty.CLEAN:
            return
        if self._kernel is None:
            self._kernel = UpdateKernel.for_batch(self)
        self._kernel.run()
        self.dirty = Dirty.CLEAN

    def _update_bind(self) -> None:
        rows, layout, n = self.rows, self.layout, self.count
        bind, absolute_bind = rows.bind, rows.absolute_bind
        absolute_bind[:layout.root_count] = bind[:layout.root_count]
        for start, stop, parents in layout.levels:
            absolute_bind[start:stop] = np.matmul(bind[start:stop], absolute_bind[parents])
        quality = transforms.singularity(absolute_bind[:n])
        bad = np.flatnonzero(~(quality > SINGULAR_BIND))
        if bad.size:
            raise ViewerError(f"bone {self.by_slot[bad[0]].name!r}: its absolute bind matrix is singular "
                              "(a zero or degenerate scale in its bind matrix or a parent's)")
        rows.absolute_inverse_bind[:n] = np.linalg.inv(absolute_bind[:n])

    def _build_layout(self) -> None:
        n = self.count
        parent = self.rows.parent[:n]
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
        # Rows in depth order (stable), so that every depth level is one contiguous slice.
        order = np.argsort(depth, kind="stable")
        if not np.array_equal(order, np.arange(n)):
            new_of_old = np.empty(n, dtype=np.intp)
            new_of_old[order] = np.arange(n)
            self.rows.permute(order)
            parent = self.rows.parent[:n]
            parent[:] = np.where(parent >= 0, new_of_old[np.maximum(parent, 0)], -1)
            self.by_slot = [self.by_slot[i] for i in order]
            for slot, bone in enumerate(self.by_slot):
                bone.slot = slot
            depth = depth[order]
        bounds = np.searchsorted(depth, np.arange(int(depth.max(initial=-1)) + 2))
        root_count = int(bounds[1]) if n else 0
        levels = [(int(bounds[level]), int(bounds[level + 1]), parent[bounds[level]:bounds[level + 1]].copy())
                  for level in range(1, len(bounds) - 1)]
        bones_slots = np.array([bone.slot for bone in self.bones], dtype=np.intp)
        position_of_slot = np.empty(n, dtype=np.intp)
        position_of_slot[bones_slots] = np.arange(n)
        parents = parent[bones_slots]
        parent_positions = np.where(parents >= 0, position_of_slot[np.maximum(parents, 0)], -1)
        self.layout = Layout(root_count, levels, self._upload_map(), bones_slots, parent_positions)
        self.upload = np.empty((n, 4, 4), dtype=np.float32)
        self.upload[:] = np.eye(4, dtype=np.float32)
        self.upload_view = _read_only_view(self.upload)
        self.linked = [bone for bone in self.by_slot if bone.get_transform_node() is not None]
        self.linked_nodes = [bone.get_transform_node() for bone in self.linked]
        self._links = None
        self.rows.linked_version[:n] = -1
        self._kernel = None
        self._scatter = None
        self.layout_version += 1

    def _upload_map(self) -> UploadMap:
        """Which slot goes to which upload row: a bone's index, or its position in ``bones``."""
        n = self.count
        rows, slots, seen = [], [], {}
        for position, bone in enumerate(self.bones):
            index = bone.index if bone.index is not None else position
            if index == -1:
                continue  # Babylon's "not uploaded"
            if not 0 <= index < n:
                raise ViewerError(f"bone {bone.name!r}: index {index} is outside 0..{n - 1}")
            if index in seen:
                raise ViewerError(f"bones {seen[index]!r} and {bone.name!r} both have index {index}")
            seen[index] = bone.name
            rows.append(index)
            slots.append(bone.slot)
        rows, slots = np.array(rows, dtype=np.intp), np.array(slots, dtype=np.intp)
        if len(rows) < n:
            return UploadMap(UploadOrder.PARTIAL, rows, slots, None, None)
        source = np.empty(n, dtype=np.intp)
        source[rows] = slots
        pose_source = np.empty(n, dtype=np.intp)
        pose_source[slots] = rows
        if np.array_equal(source, np.arange(n)):
            return UploadMap(UploadOrder.SAME, rows, slots, None, pose_source)
        return UploadMap(UploadOrder.PERMUTED, rows, slots, source, pose_source)


def last_of_each(rows: np.ndarray) -> np.ndarray | None:
    """Indices into ``rows`` of the last occurrence of each row, ascending; None when no row
    repeats (every index is kept). A scatter through them leaves what writes in order would."""
    if len(distinct(rows)) == len(rows):
        return None
    _, first_from_end = np.unique(rows[::-1], return_index=True)
    return np.sort(len(rows) - 1 - first_from_end)


def _read_only_view(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


# --- the kernel -----------------------------------------------------------------------------------
# Babylon's ComposeToRef as one product: the 3x3 rotation part, row-major, is
#   R = [q_i q_j products | 1] @ COMPOSE_COEFFICIENTS, over the 16 products (x, y, z, w) and 1.
def _compose_coefficients() -> np.ndarray:
    c = np.zeros((17, 9))
    x, y, z, w, one = 0, 1, 2, 3, 16
    for (row, col), terms in {
        (0, 0): [(y, y, -1), (z, z, -1)], (0, 1): [(x, y, 1), (w, z, 1)], (0, 2): [(x, z, 1), (w, y, -1)],
        (1, 0): [(x, y, 1), (w, z, -1)], (1, 1): [(x, x, -1), (z, z, -1)], (1, 2): [(y, z, 1), (w, x, 1)],
        (2, 0): [(x, z, 1), (w, y, 1)], (2, 1): [(y, z, 1), (w, x, -1)], (2, 2): [(x, x, -1), (y, y, -1)],
    }.items():
        for i, j, sign in terms:
            c[i * 4 + j, row * 3 + col] += 2.0 * sign
    for d in (0, 4, 8):
        c[one, d] = 1.0
    return c


COMPOSE_COEFFICIENTS = _compose_coefficients()
SMALL_COMPOSE = 300  # up to this many rows, compose as one product (fewer numpy calls)
_LAST_COLUMN = np.array([0.0, 0.0, 0.0, 1.0])


@dataclass
class RepeatedLevels:
    """``members`` copies of one depth structure, each ``n`` rows (one skeleton: members=1)."""

    members: int
    n: int
    root_count: int
    levels: list     # (start, stop, parent slots) within one member


@dataclass
class IndexedLevels:
    """Any rows: root rows, then per level (rows, parent rows) index arrays (mixed groups)."""

    roots: np.ndarray
    levels: list


class UpdateKernel:
    """The per-frame update of rows [0, total) of ``rows``, with preallocated views and buffers.

    ``run()`` composes changed local matrices (one batched product when all changed), computes
    the absolute matrices a depth level at a time, the finals, and writes the float32 upload
    array, without allocating when every bone changed.
    """

    @classmethod
    def for_batch(cls, batch: BoneBatch) -> "UpdateKernel":
        layout = batch.layout
        return cls(batch.rows, batch.count, RepeatedLevels(1, batch.count, layout.root_count, layout.levels),
                   layout.upload, batch.upload)

    def __init__(self, rows: RowArrays, total: int, levels, upload: UploadMap, upload_buffer: np.ndarray,
                 compiled: bool | None = None):
        t = total
        self.total = total
        # The compiled kernel (native.py) when it is there, unless compiled=False asks for numpy's.
        module = native.ckernel if compiled is not False else None
        if compiled and module is None:
            raise ViewerError(f"the compiled kernel is not available: {native.describe()}")
        self.compiled = None if module is None else _compiled_kernel(module, rows, total, levels, upload,
                                                                     upload_buffer)
        if self.compiled is not None:
            return
        self.need = rows.need_compose[:t]
        self.position, self.quaternion, self.scaling = rows.position[:t], rows.quaternion[:t], rows.scaling[:t]
        self.local, self.absolute, self.final = rows.local[:t], rows.absolute[:t], rows.final[:t]
        self.inverse_bind = rows.absolute_inverse_bind[:t]
        # compose buffers: the products q_i q_j plus a constant 1, and the 3x3 rotation parts
        self.products = np.empty((t, 17))
        self.products[:, 16] = 1.0
        self.outer = self.products[:, :16].reshape(t, 4, 4)
        self.rotation = np.empty((t, 9))
        self.rotation3 = self.rotation.reshape(t, 3, 3)
        self.scale_column = self.scaling[:, :, None]
        self.local_rotation = self.local[:, :3, :3]
        self.local_translation = self.local[:, 3, :3]
        self.local_last_column = self.local[:, :, 3]
        self._plan_absolute(levels)
        self._plan_upload(levels, upload, upload_buffer)

    def _plan_absolute(self, levels) -> None:
        self.indexed = isinstance(levels, IndexedLevels)
        if self.indexed:
            self.root_rows = levels.roots
            self.root_buffer = np.empty((len(levels.roots), 4, 4))
            self.levels = [(rows, parents, np.empty((len(rows), 4, 4)), np.empty((len(rows), 4, 4)),
                            np.empty((len(rows), 4, 4))) for rows, parents in levels.levels]
            return
        # One skeleton: 3-d slices; many alike: (members, n) views, a level is [:, a:b].
        if levels.members == 1:
            local, absolute, self.axis = self.local, self.absolute, 0
        else:
            shape = (levels.members, levels.n, 4, 4)
            local, absolute, self.axis = self.local.reshape(shape), self.absolute.reshape(shape), 1
        index = (slice(None),) * self.axis
        self.roots = (local[index + (slice(0, levels.root_count),)], absolute[index + (slice(0, levels.root_count),)])
        self.levels = []
        for start, stop, parents in levels.levels:
            buffer = np.empty(((levels.members,) if self.axis else ()) + (stop - start, 4, 4))
            rows = index + (slice(start, stop),)
            self.levels.append((absolute, parents, buffer, local[rows], absolute[rows]))

    def _plan_upload(self, levels, upload: UploadMap, upload_buffer: np.ndarray) -> None:
        self.upload, self.upload_map = upload_buffer, upload
        self.order = upload.order
        if self.order is not UploadOrder.PERMUTED:
            return
        if self.indexed or levels.members == 1:
            self.source_final, self.source_upload, self.source_axis = self.final, self.upload, 0
        else:
            shape = (levels.members, levels.n, 4, 4)
            self.source_final, self.source_upload = self.final.reshape(shape), self.upload.reshape(shape)
            self.source_axis = 1

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
        if self.compiled is not None:
            self.compiled.run()  # the same pass in C: csrc/ckernel.c
            return
        self.compose()
        absolute = self.absolute
        if not self.indexed:
            np.copyto(self.roots[1], self.roots[0])
            axis, take, matmul = self.axis, np.take, np.matmul
            for absolute_all, parents, buffer, local_rows, absolute_rows in self.levels:
                take(absolute_all, parents, axis=axis, out=buffer, mode="clip")  # indices are valid
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
        # The one place a final matrix is computed, and the upload array written.
        np.matmul(self.inverse_bind, absolute, out=self.final)
        if self.order is UploadOrder.SAME:
            np.copyto(self.upload, self.final)
        elif self.order is UploadOrder.PERMUTED:
            np.take(self.source_final, self.upload_map.source, axis=self.source_axis, out=self.source_upload,
                    mode="clip")
        else:
            self.upload[self.upload_map.rows] = self.final[self.upload_map.slots]


def _compiled_kernel(module, rows: RowArrays, total: int, levels, upload: UploadMap, upload_buffer: np.ndarray):
    """The C kernel over the same rows: one pass in row order, each row's parent as a row index
    (rows are parents first within a skeleton, a group's members one after another), and the
    upload as (upload row, slot) pairs unless row i is slot i."""
    t = total
    if isinstance(levels, IndexedLevels):
        parents = np.full(t, -1, dtype=np.int64)
        for level_rows, level_parents in levels.levels:
            parents[level_rows] = level_parents
    else:
        one = np.full(levels.n, -1, dtype=np.int64)
        for start, stop, level_parents in levels.levels:
            one[start:stop] = level_parents
        offsets = np.repeat(np.arange(levels.members, dtype=np.int64) * levels.n, levels.n)
        parents = np.where(np.tile(one, levels.members) >= 0, np.tile(one, levels.members) + offsets, -1)
    if upload.order is UploadOrder.SAME:
        dst = src = None
    elif upload.order is UploadOrder.PARTIAL:
        dst, src = upload.rows, upload.slots
    else:
        src = upload.source
        if not isinstance(levels, IndexedLevels) and levels.members > 1:  # one member's order, repeated
            src = np.tile(src, levels.members) + np.repeat(np.arange(levels.members) * levels.n, levels.n)
        dst = np.arange(len(src))
    as_int64 = (lambda a: None if a is None else np.ascontiguousarray(a, dtype=np.int64))
    return module.Kernel(rows.need_compose[:t], rows.position[:t], rows.quaternion[:t], rows.scaling[:t],
                         rows.local[:t], rows.absolute[:t], rows.final[:t], rows.absolute_inverse_bind[:t],
                         np.ascontiguousarray(parents, dtype=np.int64), upload_buffer, as_int64(dst), as_int64(src))
