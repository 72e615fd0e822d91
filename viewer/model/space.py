"""Babylon's Space enum, and the ``tnode`` argument of the Bone space methods.

``tnode`` is what places the skeleton in the world (Babylon's ``tNode``, usually the mesh):
a ``TransformNode`` (its world matrix), a ``SkinnedMesh`` (its world matrix), a (4, 4) world
matrix, or None (the identity: skeleton space is world space).
"""

from __future__ import annotations

import enum

import numpy as np

from ..errors import ViewerError
from . import transforms
from .checks import finite_array
from .mesh import SkinnedMesh
from .transform_node import TransformNode


class Space(enum.IntEnum):
    """Babylon's spaces, with Babylon's values."""

    LOCAL = 0   # the bone's parent's frame (its local TRS)
    WORLD = 1   # skeleton space times the tnode's world matrix
    BONE = 2    # see Bone's space methods for what each one does with it (Babylon's quirks)


def checked_space(space, what: str) -> Space:
    try:
        return Space(space)
    except (ValueError, TypeError):
        raise ViewerError(f"{what}: space must be Space.LOCAL, Space.WORLD or Space.BONE, got {space!r}") from None


def tnode_world_matrix(tnode, what: str) -> np.ndarray | None:
    """The tnode's world matrix, or None for the identity."""
    if tnode is None:
        return None
    if isinstance(tnode, TransformNode):
        return tnode.get_world_matrix()
    if isinstance(tnode, SkinnedMesh):  # its placement node when it has one (Scene.prepare()'s rule)
        node = tnode.world_node
        return node.get_world_matrix() if node is not None else tnode.world_matrix
    if isinstance(tnode, (np.ndarray, list, tuple)):
        return finite_array(tnode, (4, 4), f"{what} tnode")
    raise ViewerError(f"{what}: tnode must be a TransformNode, a SkinnedMesh, a (4, 4) matrix or None, "
                      f"got {tnode!r}")


def tnode_scaling(tnode, world: np.ndarray | None) -> np.ndarray:
    """The scaling Babylon reads from ``tNode.scaling`` in its world-space rotation setters.

    For a TransformNode that is its own (local) scaling, as in Babylon, even under a scaled
    parent; a mesh or a matrix has no TRS of its own, so its world matrix is decomposed.
    """
    if tnode is None:
        return np.ones(3)
    if isinstance(tnode, TransformNode):
        return np.asarray(tnode.scaling, dtype=np.float64)
    return transforms.decompose_one(world)[0]
