"""Crowd: many copies of one skinned mesh, each with its own skeleton pose and placement.

The skeletons form one SkeletonGroup (one batched update, one float32 array), which a
renderer uploads as one bone texture and draws with one instanced draw call.
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from .checks import OUT_OF_RANGE, first_bad_row, fits
from ..words import counted
from .group import SkeletonGroup
from .mesh import SkinnedMesh, bounds, place_points, skin_positions


class Crowd:
    """Copies of one skinned mesh, one per skeleton, each posed by its skeleton and placed by
    its instance matrix; drawn with one instanced call (``HeadlessRenderer.render_crowd``).

    ``skeletons`` (a list or a SkeletonGroup) must each have the mesh's bone count, in the
    same order: typically the same model loaded once per copy, so that each copy has its own
    skeleton and animation clips. Instance k's world matrix is the mesh's own world matrix,
    then instance matrix k (``mesh.world_matrix @ instance_matrices[k]``), so an instance
    matrix places the model as a whole, whatever transform the model's file puts on its
    skeleton (CesiumMan's Z-up to Y-up rotation, an armature's scale). The default instance
    matrices are identities: every copy where the mesh itself is.

    Example: twelve CesiumMen in a 4 x 3 grid, each at its own point of its walk::

        import numpy as np
        from viewer import Crowd, load_gltf

        scenes = [load_gltf("CesiumMan.glb") for _ in range(12)]
        places = np.tile(np.eye(4), (12, 1, 1))
        places[:, 3, 0] = [1.2 * (k % 4) for k in range(12)]    # x (translation is row 3)
        places[:, 3, 2] = [-1.5 * (k // 4) for k in range(12)]  # z
        crowd = Crowd(scenes[0].skinned_meshes[0], [s.skeletons[0] for s in scenes], places)
        for k, scene in enumerate(scenes):
            clip = scene.animations[0]
            clip.apply(clip.duration * k / 12)
    """

    def __init__(self, mesh: SkinnedMesh, skeletons, instance_matrices=None):
        if not isinstance(mesh, SkinnedMesh) or mesh.skeleton is None:
            raise ViewerError(f"crowd: expected a skinned mesh, got {mesh!r}")
        group = skeletons if isinstance(skeletons, SkeletonGroup) else SkeletonGroup(skeletons)
        if not len(group):  # nothing to draw: said here, not as an IndexError in the renderer
            raise ViewerError("crowd: expected at least one skeleton (one copy), got none")
        bones = len(mesh.skeleton.bones)
        for skeleton in group.skeletons:
            if len(skeleton.bones) != bones:
                raise ViewerError(f"crowd: skeleton {skeleton.name!r} has {counted(len(skeleton.bones), 'bone')}, "
                                  f"mesh {mesh.name!r} is skinned to {bones}")
        self.mesh, self.group = mesh, group
        self.bones_per_instance = bones
        self.instance_matrices = (np.broadcast_to(np.eye(4), (len(group), 4, 4))
                                  if instance_matrices is None else instance_matrices)

    @property
    def instance_matrices(self) -> np.ndarray:
        """(N, 4, 4): where each copy goes, applied after the mesh's own world matrix."""
        return self._instance_matrices

    @instance_matrices.setter
    def instance_matrices(self, matrices) -> None:
        matrices = np.array(matrices, dtype=np.float64)
        if matrices.shape != (len(self.group), 4, 4):
            raise ViewerError(f"crowd: instance matrices must be {len(self.group)} 4x4 matrices, "
                              f"got shape {matrices.shape}")
        if not fits(matrices):
            bad = first_bad_row(matrices.reshape(len(matrices), 16))
            raise ViewerError(f"crowd: instance matrix {bad} contains {OUT_OF_RANGE}")
        self._instance_matrices = matrices

    @property
    def world_matrices(self) -> np.ndarray:
        """(N, 4, 4): each copy's world matrix, ``mesh.world_matrix @ instance_matrices[k]``."""
        return self.mesh.world_matrix @ self._instance_matrices

    def __len__(self) -> int:
        return len(self.group)

    def prepare(self) -> None:
        """Update every skeleton in one batch, and the mesh's world matrix (once per frame)."""
        self.group.prepare()
        self.mesh.update_world_matrix()

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """World-space (low, high) corners around every copy in its current pose (CPU-skinned),
        e.g. for ``OrbitCamera.frame(*crowd.bounds())``."""
        self.prepare()
        matrices = self.group.get_transform_matrices()
        offsets = self.group.offsets
        mesh, lows, highs = self.mesh, [], []
        for k, world in enumerate(self.world_matrices):
            positions = skin_positions(mesh.positions, mesh.joints, mesh.weights, matrices[offsets[k]:offsets[k + 1]],
                                       mode=mesh.skinning)
            low, high = bounds(place_points(positions, world))
            lows.append(low)
            highs.append(high)
        if not lows:
            return np.zeros(3), np.zeros(3)
        return np.min(lows, axis=0), np.max(highs, axis=0)
