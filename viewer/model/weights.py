"""Questions about a skin, answered from its vertex arrays (numpy only): how much a bone moves
each vertex, which bone moves it most, which vertices' weights look wrong, which bone moves a
mesh without a skin rigidly (a glTF mesh hanging under a joint node), and which bone a click
on a triangle picks.

A vertex's joint index is a row of ``skeleton.get_transform_matrices()``: ``bone.get_index()``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..words import counted

# |sum - 1| above this counts as "does not sum to 1" (the glTF loader warns with the same).
WEIGHT_SUM_TOLERANCE = 1e-3
# Influences per vertex the skinning shader reads (JOINTS_0/WEIGHTS_0 and JOINTS_1/WEIGHTS_1).
SHADER_INFLUENCES = 8


def joint_row(mesh, bone) -> int:
    """The joint index (matrix row) that stands for ``bone`` in ``mesh``'s skin, or -1.

    A bone of the mesh's own skeleton gives its index; a bone of another skeleton stands for
    the bone linked to the same node (two glTF skins over one set of joints, as
    RobotExpressive's hands)."""
    skeleton = getattr(mesh, "skeleton", None)
    if bone is None or skeleton is None:
        return -1
    if bone.get_skeleton() is skeleton:
        return bone.get_index()
    node = bone.get_transform_node()
    if node is not None:
        for other in skeleton.bones:
            if other.get_transform_node() is node:
                return other.get_index()
    return -1


def bone_weights(mesh, joint: int) -> np.ndarray:
    """(V,) float32: the weight of joint ``joint`` at each vertex (0..1; its slots summed)."""
    if mesh.joints is None or joint < 0:
        return np.zeros(len(mesh.positions), np.float32)
    return np.where(mesh.joints == joint, mesh.weights, np.float32(0)).sum(axis=1, dtype=np.float32)


def dominant_joints(mesh) -> np.ndarray:
    """(V,) int: the joint of each vertex's largest weight (the first slot of equal largest ones,
    as the shader picks it)."""
    slot = np.argmax(mesh.weights, axis=1)
    return mesh.joints[np.arange(len(slot)), slot].astype(np.int64)


def weight_problems(mesh) -> np.ndarray:
    """(V,) bool: vertices whose weights, as the file gave them, do not sum to 1 (within
    WEIGHT_SUM_TOLERANCE, before the renormalisation that draws them), or that use more
    influences than the shader reads (the loader drops them). All False without a skin."""
    if mesh.joints is None:
        return np.zeros(len(mesh.positions), bool)
    return (np.abs(mesh.raw_weight_sums - 1.0) > WEIGHT_SUM_TOLERANCE) | (mesh.extra_influences > 0)


def rigid_bone(mesh, scene):
    """The bone that moves a mesh without a skin as a whole: the bone linked to the nearest
    joint node at or above the node that places it (RobotExpressive's body parts), or None."""
    node = getattr(mesh, "world_node", None)
    if node is None or mesh.skeleton is not None or scene is None:
        return None
    linked = {id(bone.get_transform_node()): bone for skeleton in reversed(scene.skeletons) for bone in skeleton.bones
              if bone.get_transform_node() is not None}
    seen = 0
    while node is not None and seen < 100_000:
        if id(node) in linked:
            return linked[id(node)]
        node, seen = node.parent, seen + 1
    return None


def heaviest_joint(joints, weights, triangle) -> int | None:
    """The joint with the largest summed skin weight over a triangle's three vertices (the
    first joint, by number, of equal largest sums), or None when they have no weight."""
    j = np.asarray(joints)[triangle].reshape(-1)
    w = np.asarray(weights, dtype=np.float64)[triangle].reshape(-1)
    if not np.any(w > 0):
        return None
    keys, inverse = np.unique(j, return_inverse=True)
    sums = np.bincount(inverse, weights=w)
    return int(keys[int(np.argmax(sums))])


def triangle_bone(mesh, scene, triangle: int):
    """The bone a click on triangle ``triangle`` of ``mesh`` picks, or None: in a skin, the
    joint with the largest summed weight over its three vertices; in a mesh without a skin,
    the bone that moves it rigidly (``rigid_bone``). Both mesh pickers (the GPU ID pass and
    the numpy ray cast) end here, so they agree whenever they hit the same triangle."""
    if mesh.skeleton is None:
        return rigid_bone(mesh, scene)
    triangles = mesh.indices.reshape(-1, 3)
    if not 0 <= triangle < len(triangles):
        return None
    joint = heaviest_joint(mesh.joints, mesh.weights, triangles[triangle])
    return None if joint is None else joint_bone(mesh.skeleton, joint)


def joint_bone(skeleton, joint: int):
    """The bone of ``skeleton`` whose matrix row is ``joint`` (``bone.get_index()``; not its
    position in ``skeleton.bones``, which is parents-first order), or None."""
    for bone in skeleton.bones:
        if bone.get_index() == joint:
            return bone
    return None


class WeightCheck(NamedTuple):
    """What ``weight_check`` found over a scene's skins, in vertices."""

    flagged: int       # either problem (what the weight check paints)
    off_sum: int       # weights that do not sum to 1 as given
    over_limit: int    # more influences than the shader reads
    vertices: int      # skinned vertices looked at

    def __str__(self) -> str:
        return (f"{self.flagged} of {counted(self.vertices, 'skinned vertex', 'skinned vertices')} flagged "
                f"({self.off_sum} with weights that do not "
                f"sum to 1, {self.over_limit} with more than {SHADER_INFLUENCES} influences)")


def weight_check(scene) -> WeightCheck:
    """Count ``weight_problems`` over every skinned mesh of a scene."""
    flagged = off_sum = over = vertices = 0
    for mesh in scene.skinned_meshes:
        if mesh.joints is None:
            continue
        flagged += int(weight_problems(mesh).sum())
        off_sum += int((np.abs(mesh.raw_weight_sums - 1.0) > WEIGHT_SUM_TOLERANCE).sum())
        over += int((mesh.extra_influences > 0).sum())
        vertices += len(mesh.positions)
    return WeightCheck(flagged, off_sum, over, vertices)
