"""Scene: what a loader returns and a renderer draws (numpy only)."""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from .mesh import SkinnedMesh, bounds


class Scene:
    """Skinned meshes with their skeletons, scene nodes and animations.

    ``leaf_bone_axis`` is the bone-local direction along which the skeleton overlay draws a
    leaf bone for its ``length``: +Y as Babylon's SkeletonViewer and Blender/glTF rigs.
    ``rest_bounds`` is measured once, in the pose the scene was built in, so posing or
    animating never moves a camera framed on it.
    """

    def __init__(self, name: str, skinned_meshes: list[SkinnedMesh], nodes=(), animations=(),
                 leaf_bone_axis=(0.0, 1.0, 0.0), static_meshes=()):
        self.name = name
        self.skinned_meshes = list(skinned_meshes)
        self.static_meshes = list(static_meshes)  # meshes without a skin, placed by their node
        self.nodes = list(nodes)
        self.animations = list(animations)
        self.leaf_bone_axis = np.asarray(leaf_bone_axis, dtype=np.float64)
        self.file_scenes: list[str] = []  # the scenes of the file it was loaded from (glTF), by name
        self.file_scene: int | None = None  # the one of them it shows
        self.file_path = None  # the file it was loaded from, if any (to show another of its scenes)
        self.file_extensions: list[str] = []  # the glTF extensions that file used
        with np.errstate(over="ignore", invalid="ignore"):  # huge but finite numbers overflow here
            self.rest_bounds = self.current_bounds()
        if not (np.isfinite(self.rest_bounds[0]).all() and np.isfinite(self.rest_bounds[1]).all()):
            raise ViewerError(f"model {name!r}: its extent is not finite (vertices or transforms too large "
                              "to place in world space)")

    @property
    def skeletons(self) -> list:
        """Each skeleton once, in mesh order (a skin shared by meshes is updated once)."""
        seen, result = set(), []
        for mesh in self.skinned_meshes:
            if mesh.skeleton is not None and id(mesh.skeleton) not in seen:
                seen.add(id(mesh.skeleton))
                result.append(mesh.skeleton)
        return result

    @property
    def meshes(self) -> list[SkinnedMesh]:
        return self.skinned_meshes + self.static_meshes

    @property
    def morph_meshes(self) -> list[SkinnedMesh]:
        """The meshes with morph targets, in mesh order."""
        return [mesh for mesh in self.meshes if mesh.morph_targets is not None]

    def prepare(self) -> None:
        """Bring skeletons (once each) and node-placed mesh world matrices up to date."""
        for skeleton in self.skeletons:
            skeleton.prepare()
        for mesh in self.meshes:
            mesh.update_world_matrix()

    def current_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """World-space bounds of the CPU-skinned meshes as they are now."""
        self.prepare()
        points = [mesh.skinned()[0] for mesh in self.meshes]
        return bounds(np.concatenate(points) if points else np.zeros((0, 3)))

    def find_bone(self, name: str):
        """The first bone of that name in any skeleton, or None."""
        for skeleton in self.skeletons:
            index = skeleton.get_bone_index_by_name(name)
            if index >= 0:
                return skeleton.bones[index]
        return None

    def require_bone(self, name: str, what: str):
        """The bone of that name, or a ViewerError that starts with ``what`` and lists the
        model's bones (a typo is then easy to see)."""
        bone = self.find_bone(name)
        if bone is None:
            known = sorted({b.name for s in self.skeletons for b in s.bones})
            listed = ", ".join(known[:15]) + (", ..." if len(known) > 15 else "")
            raise ViewerError(f"{what}: unknown bone {name!r} (this model's bones: {listed})")
        return bone
