"""SkeletonGroup: many skeletons updated as one batch (a crowd is one update, one upload).

The group owns the per-bone storage of its members: each member's arrays become views of
its rows in the group's arrays, so ``set_pose`` on a member, a linked node or a bone setter
writes straight into the batch, and ``prepare()`` runs one compose, one pass per depth level
and one final product over all members. Members stay ordinary skeletons: their own
``prepare()`` and matrix getters keep working, on the same memory.
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from .skeleton import _IDENTITY, Skeleton, _Kernel


class SkeletonGroup:
    """Many skeletons updated as one batch, with one float32 array of all their final matrices.

    Pose the members as usual (``set_pose``, bone setters, linked nodes, animation clips),
    then call the group's ``prepare()`` once per frame instead of each member's: it costs
    close to one skeleton with all the bones. ``get_transform_matrices()`` gives every
    member's final matrices, member k's at rows ``offsets[k]:offsets[k + 1]``, ready for one
    upload (a Crowd draws its copies from it).

    Example: a hundred CesiumMen (19 bones each), each at its own time of its walk::

        from viewer import SkeletonGroup, load_gltf

        scenes = [load_gltf("CesiumMan.glb") for _ in range(100)]
        group = SkeletonGroup([scene.skeletons[0] for scene in scenes])
        for k, scene in enumerate(scenes):
            scene.animations[0].apply(0.02 * k)   # moves the nodes the bones are linked to
        group.prepare()
        matrices = group.get_transform_matrices()   # (100 * 19, 4, 4) float32
        seventh = matrices[group.offsets[7]:group.offsets[8]]
    """

    def __init__(self, skeletons):
        skeletons = list(skeletons)
        for skeleton in skeletons:
            if not isinstance(skeleton, Skeleton):
                raise ViewerError(f"SkeletonGroup: expected Skeletons, got {skeleton!r}")
        if len({id(s) for s in skeletons}) != len(skeletons):
            raise ViewerError("SkeletonGroup: a skeleton appears twice")
        self._skeletons = skeletons
        self._state = None
        self._kernel = None
        self._upload = np.empty((0, 4, 4), np.float32)
        self._upload_view = self._upload

    def __repr__(self) -> str:
        return f"SkeletonGroup({len(self._skeletons)} skeletons, {sum(s._count for s in self._skeletons)} bones)"

    def __len__(self) -> int:
        return len(self._skeletons)

    @property
    def skeletons(self) -> tuple:
        return tuple(self._skeletons)

    @property
    def offsets(self) -> np.ndarray:
        """First row of each member in ``get_transform_matrices()`` (and the total at the end)."""
        return np.concatenate([[0], np.cumsum([s._count for s in self._skeletons])]).astype(np.intp)

    def prepare(self) -> None:
        """Sync every member's linked nodes, then update all members in one batch."""
        self._update(sync_linked=True)

    def get_transform_matrices(self) -> np.ndarray:
        """Final matrices of all members, concatenated in order: float32 (total bones, 4, 4).

        Row ``offsets[k] + i`` is member k's row i. Read-only, overwritten by the next update.
        """
        self._update(sync_linked=False)
        return self._upload_view

    # --- internals -------------------------------------------------------------------------------
    def _update(self, sync_linked: bool) -> None:
        members = self._skeletons
        for skeleton in members:
            skeleton._update_structure()
        state = [(s._storage_epoch, s._structure_version) for s in members]
        if state != self._state:
            self._adopt()
        dirty = False
        for skeleton in members:
            if sync_linked and skeleton._linked:
                skeleton._sync_linked()
            if skeleton._bind_dirty:
                skeleton._update_bind()
            dirty = dirty or skeleton._pose_dirty
        if dirty:
            self._kernel.run()
            for skeleton in members:
                skeleton._pose_dirty = False

    def _adopt(self) -> None:
        """Move the members' rows into group arrays and make the members view them."""
        members = self._skeletons
        counts = [s._count for s in members]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.intp)
        total = int(offsets[-1])
        for name, (shape, dtype, _) in Skeleton._ROWS.items():
            array = np.empty((total,) + shape, dtype=dtype)
            for skeleton, start, n in zip(members, offsets, counts):
                array[start:start + n] = getattr(skeleton, name)[:n]
            setattr(self, name, array)
        self._upload = np.empty((total, 4, 4), np.float32)
        for skeleton, start, n in zip(members, offsets, counts):
            self._upload[start:start + n] = skeleton._upload
            for name in Skeleton._ROWS:
                setattr(skeleton, name, getattr(self, name)[start:start + n])
            skeleton._capacity = n  # adding a bone grows the member out of the group again
            skeleton._upload = self._upload[start:start + n]
            skeleton._upload_view = skeleton._upload.view()
            skeleton._upload_view.flags.writeable = False
            skeleton._storage_epoch += 1
            skeleton._kernel_dirty = True
            skeleton._pose_dirty = True
        self._upload_view = self._upload.view()
        self._upload_view.flags.writeable = False
        self._kernel = self._build_kernel(members, offsets, counts, total)
        self._state = [(s._storage_epoch, s._structure_version) for s in members]

    def _build_kernel(self, members, offsets, counts, total) -> _Kernel:
        first = members[0] if members else None
        rows = [s._upload_rows + start for s, start in zip(members, offsets)]
        slots = [s._upload_slots + start for s, start in zip(members, offsets)]
        self._upload_rows = np.concatenate(rows or [np.empty(0, np.intp)]).astype(np.intp)
        self._upload_slots = np.concatenate(slots or [np.empty(0, np.intp)]).astype(np.intp)
        alike = first is not None and all(
            s._count == first._count and len(s._roots) == len(first._roots)
            and s._level_bounds == first._level_bounds
            and np.array_equal(s._parent[:s._count], first._parent[:first._count])
            and _same_source(s._upload_source, first._upload_source)
            for s in members)
        if alike:
            levels = [(a, b, parents) for (a, b), (_, parents) in zip(first._level_bounds, first._levels)]
            return _Kernel(self, total, len(members), first._count, len(first._roots), levels,
                           first._upload_source, self)
        # Different skeletons: per-level index arrays over the whole batch.
        roots = np.concatenate([s._roots + start for s, start in zip(members, offsets)] or [np.empty(0, np.intp)])
        depth = max((len(s._levels) for s in members), default=0)
        level_rows = []
        for d in range(depth):
            rows = [s._levels[d][0] + start for s, start in zip(members, offsets) if d < len(s._levels)]
            parents = [s._levels[d][1] + start for s, start in zip(members, offsets) if d < len(s._levels)]
            level_rows.append((np.concatenate(rows), np.concatenate(parents)))
        sources = [s._upload_source for s in members]
        if all(source is _IDENTITY for source in sources):
            upload_source = _IDENTITY
        elif any(source is None for source in sources):
            upload_source = None
        else:
            upload_source = np.concatenate([
                (np.arange(n) if source is _IDENTITY else source) + start
                for source, start, n in zip(sources, offsets, counts)]).astype(np.intp)
        return _Kernel(self, total, 1, total, 0, None, upload_source, self, general=(roots, level_rows))


def _same_source(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, str) or isinstance(b, str):
        return a is b
    return np.array_equal(a, b)
