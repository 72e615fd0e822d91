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
from .batch import Dirty, IndexedLevels, RepeatedLevels, RowArrays, UpdateKernel, UploadMap, UploadOrder
from .skeleton import Skeleton


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
        self._layout_versions = None  # the members' layout versions the kernel was built for
        self._kernel = None
        self._upload = np.empty((0, 4, 4), np.float32)
        self._upload_view = self._upload

    def __repr__(self) -> str:
        return f"SkeletonGroup({len(self._skeletons)} skeletons, {sum(s.batch.count for s in self._skeletons)} bones)"

    def __len__(self) -> int:
        return len(self._skeletons)

    @property
    def skeletons(self) -> tuple:
        return tuple(self._skeletons)

    @property
    def offsets(self) -> np.ndarray:
        """First row of each member in ``get_transform_matrices()`` (and the total at the end)."""
        return np.concatenate([[0], np.cumsum([s.batch.count for s in self._skeletons])]).astype(np.intp)

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
        batches = [skeleton.batch for skeleton in self._skeletons]
        for batch in batches:
            batch.update_layout()
        if [batch.layout_version for batch in batches] != self._layout_versions:
            self._adopt(batches)
        dirty = False
        for batch in batches:
            if sync_linked and batch.linked:
                batch.sync_linked()
            batch.update_bind()
            dirty = dirty or batch.dirty is not Dirty.CLEAN
        if dirty:
            self._kernel.run()
            for batch in batches:
                batch.mark_clean()

    def _adopt(self, batches) -> None:
        """Move the members' rows into group arrays and make the members use windows of them."""
        counts = [batch.count for batch in batches]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.intp)
        total = int(offsets[-1])
        rows = RowArrays(total)
        self._upload = np.empty((total, 4, 4), np.float32)
        for batch, start, n in zip(batches, offsets, counts):
            rows.copy_rows(batch.rows, n, start)
            self._upload[start:start + n] = batch.upload
            # a window's capacity is its count: adding a bone grows the member out of the group
            batch.adopt_rows(RowArrays.window(rows, start, n), self._upload[start:start + n])
        self._upload_view = self._upload.view()
        self._upload_view.flags.writeable = False
        self._kernel = _group_kernel(rows, batches, offsets, total, self._upload)
        self._layout_versions = [batch.layout_version for batch in batches]


def _group_kernel(rows, batches, offsets, total, upload_buffer) -> UpdateKernel:
    layouts = [batch.layout for batch in batches]
    maps = [layout.upload for layout in layouts]
    if all(m.order is UploadOrder.SAME for m in maps):
        upload = UploadMap(UploadOrder.SAME, None, None, None, None)
    elif any(m.order is UploadOrder.PARTIAL for m in maps):
        upload = UploadMap(UploadOrder.PARTIAL, np.concatenate([m.rows + start for m, start in zip(maps, offsets)]),
                           np.concatenate([m.slots + start for m, start in zip(maps, offsets)]), None, None)
    else:
        upload = None  # PERMUTED: per member (alike) or over the whole batch, below
    first = batches[0] if batches else None
    if first is not None and all(b.count == first.count and b.layout.alike(first.layout) for b in batches):
        levels = RepeatedLevels(len(batches), first.count, first.layout.root_count, first.layout.levels)
        return UpdateKernel(rows, total, levels, upload or first.layout.upload, upload_buffer)
    # Different skeletons: per-level index arrays over the whole batch.
    roots = np.concatenate([np.arange(layout.root_count) + start for layout, start in zip(layouts, offsets)]
                           or [np.empty(0, np.intp)]).astype(np.intp)
    depth = max((len(layout.levels) for layout in layouts), default=0)
    level_rows = []
    for d in range(depth):
        inside = [(layout.levels[d], start) for layout, start in zip(layouts, offsets) if d < len(layout.levels)]
        level_rows.append((np.concatenate([np.arange(a, b) + start for (a, b, _), start in inside]).astype(np.intp),
                           np.concatenate([parents + start for (_, _, parents), start in inside]).astype(np.intp)))
    if upload is None:
        source = np.concatenate([(np.arange(b.count) if m.order is UploadOrder.SAME else m.source) + start
                                 for b, m, start in zip(batches, maps, offsets)]).astype(np.intp)
        upload = UploadMap(UploadOrder.PERMUTED, None, None, source, None)
    return UpdateKernel(rows, total, IndexedLevels(roots, level_rows), upload, upload_buffer)
