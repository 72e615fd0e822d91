"""TransformNode: a scene node with position, rotation and scaling (Babylon's TransformNode).

glTF joints are TransformNodes; a Bone linked to one copies its local TRS in
``Skeleton.prepare()`` (see ``Bone.get_pose_target()``). The quaternion is the stored form; ``rotation`` (Babylon's
yaw-pitch-roll Euler vector) is derived from it and converted back when set.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import ViewerError
from . import transforms
from .checks import finite_array, read_only


class TransformNode:
    def __init__(self, name: str, parent: "TransformNode | None" = None):
        self.name = str(name)
        self._parent: TransformNode | None = None
        self.children: list[TransformNode] = []
        self._position = np.zeros(3)
        self._quaternion = np.array([0.0, 0.0, 0.0, 1.0])
        self._scaling = np.ones(3)
        # Bumped on every TRS change so linked bones and caches can skip unchanged nodes.
        self._version = 0
        self._local_version = -1              # _version that _local was composed from
        self._local = None
        self._world_key = None                # (_version, parent's world stamp) of _world
        self._world = None
        self._world_stamp = 0
        if parent is not None:
            self.parent = parent

    def __repr__(self) -> str:
        return f"TransformNode({self.name!r})"

    # --- hierarchy -------------------------------------------------------------------------
    @property
    def parent(self) -> "TransformNode | None":
        return self._parent

    @parent.setter
    def parent(self, parent: "TransformNode | None") -> None:
        if parent is not None:
            if not isinstance(parent, TransformNode):
                raise ViewerError(f"node {self.name!r}: parent must be a TransformNode, got {parent!r}")
            ancestor = parent
            while ancestor is not None:
                if ancestor is self:
                    raise ViewerError(f"node {self.name!r}: parenting it to {parent.name!r} makes a cycle")
                ancestor = ancestor.parent
        if self._parent is not None:
            self._parent.children.remove(self)
        self._parent = parent
        if parent is not None:
            parent.children.append(self)
        self._version += 1

    # --- TRS -------------------------------------------------------------------------------
    @property
    def position(self) -> np.ndarray:
        return read_only(self._position)

    @position.setter
    def position(self, value) -> None:
        self._position = finite_array(value, (3,), f"node {self.name!r} position")
        self._version += 1

    @property
    def rotation_quaternion(self) -> np.ndarray:
        return read_only(self._quaternion)

    @rotation_quaternion.setter
    def rotation_quaternion(self, value) -> None:
        quaternion = finite_array(value, (4,), f"node {self.name!r} rotation_quaternion")
        if not np.any(quaternion):
            raise ViewerError(f"node {self.name!r} rotation_quaternion: the zero quaternion is not a rotation")
        self._quaternion = quaternion
        self._version += 1

    @property
    def rotation(self) -> np.ndarray:
        return read_only(transforms.yaw_pitch_roll_from_quaternion(self._quaternion))

    @rotation.setter
    def rotation(self, value) -> None:
        euler = finite_array(value, (3,), f"node {self.name!r} rotation")
        self._quaternion = transforms.quaternion_from_yaw_pitch_roll(euler)
        self._version += 1

    @property
    def scaling(self) -> np.ndarray:
        return read_only(self._scaling)

    @scaling.setter
    def scaling(self, value) -> None:
        self._scaling = finite_array(value, (3,), f"node {self.name!r} scaling")
        self._version += 1

    def set_trs(self, position, rotation_quaternion, scaling) -> None:
        """Set all three at once (what loaders and animation sampling do)."""
        self.position = position
        self.rotation_quaternion = rotation_quaternion
        self.scaling = scaling

    @property
    def version(self) -> int:
        """Bumped on every change: linked bones copy a node only when its version moved."""
        return self._version

    def assign_trs(self, position=None, rotation_quaternion=None, scaling=None) -> None:
        """The fast path for already validated float64 arrays (animation, set_pose): no checks.

        The arrays are kept, not copied: callers pass arrays nobody writes into afterwards.
        """
        if position is not None:
            self._position = position
        if rotation_quaternion is not None:
            self._quaternion = rotation_quaternion
        if scaling is not None:
            self._scaling = scaling
        self._version += 1

    def set_local_matrix(self, matrix) -> None:
        """Set the TRS from a matrix (a glTF node given as ``matrix``)."""
        matrix = finite_array(matrix, (4, 4), f"node {self.name!r} matrix")
        scaling, quaternion, position = transforms.decompose(matrix)
        self.set_trs(position, quaternion, scaling)

    # --- matrices --------------------------------------------------------------------------
    def get_local_matrix(self) -> np.ndarray:
        """The TRS as a matrix (read-only; composed again only after a change)."""
        if self._local_version != self._version:
            local = transforms.compose_one(self._scaling, self._quaternion, self._position)
            local.flags.writeable = False
            self._local = local
            self._local_version = self._version
        return self._local

    def get_world_matrix(self) -> np.ndarray:
        """local @ parent.world @ ... up to the root (world space), read-only.

        Each node keeps its world matrix with the versions it came from, so an unchanged chain
        costs a walk up and back, without a matrix product (deep glTF hierarchies ask often).
        """
        chain = []
        node = self
        while node is not None:
            chain.append(node)
            node = node.parent
        world, stamp = None, 0
        for node in reversed(chain):
            world, stamp = node.world_after(world, stamp)
        return world

    def world_after(self, parent_world, parent_stamp: int):
        """(world matrix, its stamp) given the parent's world matrix and stamp (None, 0 for a root)."""
        key = (self._version, parent_stamp)
        if key != self._world_key:
            local = self.get_local_matrix()
            self._world = local if parent_world is None else read_only(local @ parent_world)
            self._world_key = key
            self._world_stamp = next(_WORLD_STAMPS)
        return self._world, self._world_stamp


_WORLD_STAMPS = itertools.count(1)  # a new number for every world matrix computed, in any node
