"""Crowd: many copies of one skinned mesh, each with its own skeleton pose and placement.

The skeletons form one SkeletonGroup (one batched update, one float32 array), which a
renderer uploads as one bone texture and draws with one instanced draw call.
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from .group import SkeletonGroup
from .mesh import SkinnedMesh


class Crowd:
    def __init__(self, mesh: SkinnedMesh, skeletons, world_matrices=None):
        if not isinstance(mesh, SkinnedMesh) or mesh.skeleton is None:
            raise ViewerError(f"crowd: expected a skinned mesh, got {mesh!r}")
        group = skeletons if isinstance(skeletons, SkeletonGroup) else SkeletonGroup(skeletons)
        bones = len(mesh.skeleton.bones)
        for skeleton in group.skeletons:
            if len(skeleton.bones) != bones:
                raise ViewerError(f"crowd: skeleton {skeleton.name!r} has {len(skeleton.bones)} bones, "
                                  f"mesh {mesh.name!r} is skinned to {bones}")
        self.mesh, self.group = mesh, group
        self.bones_per_instance = bones
        self.world_matrices = (np.broadcast_to(np.eye(4), (len(group), 4, 4))
                               if world_matrices is None else world_matrices)

    @property
    def world_matrices(self) -> np.ndarray:
        return self._world_matrices

    @world_matrices.setter
    def world_matrices(self, matrices) -> None:
        matrices = np.array(matrices, dtype=np.float64)
        if matrices.shape != (len(self.group), 4, 4) or not np.isfinite(matrices).all():
            raise ViewerError(f"crowd: world matrices must be {len(self.group)} finite 4x4 matrices, "
                              f"got shape {matrices.shape}")
        self._world_matrices = matrices

    def __len__(self) -> int:
        return len(self.group)

    def prepare(self) -> None:
        self.group.prepare()
