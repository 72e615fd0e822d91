"""TransformNode: a scene node with position, rotation and scaling (Babylon's TransformNode).

glTF joints are TransformNodes; a Bone linked to one copies its local TRS in
``Skeleton.prepare()`` (see ``Bone.get_pose_target()``). The quaternion is the stored form; ``rotation`` (Babylon's
yaw-pitch-roll Euler vector) is derived from it and converted back when set.

A node's TRS and version live in one row of a ``NodeTable`` (structure of arrays), as a bone's
numbers are rows of its ``BoneBatch``: a glTF scene's nodes share one table (the loader makes it),
other nodes share a process-wide one. Animation channels write many rows at once and linked
bones gather theirs in one call; ``node.position`` and the rest stay the public API (they return
copies) and every write bumps the row's version.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import ViewerError
from . import transforms
from .checks import finite_array, read_only


class NodeTable:
    """The TRS of many nodes as rows: ``position`` (capacity, 3), ``quaternion`` (capacity, 4),
    ``scaling`` (capacity, 3), float64, and ``version`` (capacity,) int64, bumped on every change
    of a row (linked bones and matrix caches compare it).

    Rows are handed out by ``allocate()`` and given back when their node is collected; a row's
    version only ever grows, also across reuse. Growing replaces the arrays (and bumps
    ``generation``): hold the table, not its arrays, across calls that may create nodes.
    """

    def __init__(self, capacity: int = 16):
        self.count = 0           # rows ever handed out (the high-water mark)
        self.generation = 0      # bumped when the arrays are replaced
        self._free: list[int] = []
        self._arrays(max(int(capacity), 1))

    def _arrays(self, capacity: int) -> None:
        """New arrays of ``capacity`` rows holding the rows handed out so far."""
        position, quaternion = np.zeros((capacity, 3)), np.zeros((capacity, 4))
        quaternion[:, 3] = 1.0
        scaling, version = np.ones((capacity, 3)), np.zeros(capacity, dtype=np.int64)
        n = self.count
        if n:
            position[:n], quaternion[:n], scaling[:n], version[:n] = (
                self.position[:n], self.quaternion[:n], self.scaling[:n], self.version[:n])
        self.position, self.quaternion, self.scaling, self.version = position, quaternion, scaling, version
        self.capacity = capacity
        self.generation += 1

    def __len__(self) -> int:
        return self.count - len(self._free)

    def allocate(self) -> int:
        """A row at rest (no translation, identity rotation, unit scale) with a fresh version."""
        if self._free:
            row = self._free.pop()
        else:
            if self.count == self.capacity:
                self._arrays(self.capacity * 2)
            row = self.count
            self.count += 1
        self.position[row] = 0.0
        self.quaternion[row] = (0.0, 0.0, 0.0, 1.0)
        self.scaling[row] = 1.0
        self.version[row] += 1
        return row

    def allocate_many(self, count: int) -> list[int]:
        """``count`` rows as ``allocate`` gives them one by one (the free rows first, in its
        order), the fresh ones set at rest in one call per array."""
        rows = [self.allocate() for _ in range(min(count, len(self._free)))]
        fresh = count - len(rows)
        if fresh > 0:
            while self.count + fresh > self.capacity:
                self._arrays(self.capacity * 2)
            start = self.count
            self.count += fresh
            block = slice(start, start + fresh)
            self.position[block] = 0.0
            self.quaternion[block] = (0.0, 0.0, 0.0, 1.0)
            self.scaling[block] = 1.0
            self.version[block] += 1
            rows += range(start, start + fresh)
        return rows

    def release(self, row: int) -> None:
        self._free.append(row)

    def write(self, rows, position=None, quaternion=None, scaling=None) -> None:
        """The batched writers' one way in: ``rows`` (each once) set to the given (len(rows), 3),
        (len(rows), 4) and (len(rows), 3) float64 values (None: that part unchanged), already
        checked by the caller, and their versions bumped (linked bones and caches see the change)."""
        for array, values in ((self.position, position), (self.quaternion, quaternion), (self.scaling, scaling)):
            if values is not None:
                array[rows] = values
        self.version[rows] += 1


SHARED_TABLE = NodeTable(64)  # nodes made without a table (a loader gives a scene its own)


class TransformNode:
    def __init__(self, name: str, parent: "TransformNode | None" = None, table: NodeTable | None = None):
        table = SHARED_TABLE if table is None else table
        self._setup(str(name), table, table.allocate())
        if parent is not None:
            self.parent = parent

    def _setup(self, name: str, table: NodeTable, row: int) -> None:
        self.name = name
        self._parent: TransformNode | None = None
        self.children: list[TransformNode] = []
        # The TRS is row _row of _table (see NodeTable); its version is bumped on every TRS
        # change, so linked bones and caches can skip unchanged nodes.
        self._table = table
        self._row = row
        self._local_version = -1              # _version that _local was composed from
        self._local = None
        self._world_key = None                # (_version, parent's world stamp) of _world
        self._world = None
        self._world_stamp = 0

    @classmethod
    def forest(cls, names: list[str], table: NodeTable, children: list) -> list["TransformNode"]:
        """Nodes named ``names`` in new rows of ``table``, node i's children being the nodes
        ``children[i]`` (indices, in that order): what making each node and setting each child's
        parent would give (rows, versions, children's order), for a loader's thousands at once.
        The caller has checked that the links form a forest (one parent each, no cycle)."""
        rows = table.allocate_many(len(names))
        nodes = []
        for name, row in zip(names, rows):
            node = cls.__new__(cls)
            cls._setup(node, str(name), table, row)
            nodes.append(node)
        linked = []
        for node, kids in zip(nodes, children):
            if kids:
                node.children = [nodes[k] for k in kids]
                for child in node.children:
                    cls._adopted_by(child, node)
                linked += kids
        if linked:
            table.version[[rows[k] for k in linked]] += 1  # a parent set bumps the child's row
        return nodes

    def _adopted_by(self, parent: "TransformNode") -> None:
        """forest's link, child to parent (the parent's children list is made whole by forest)."""
        self._parent = parent

    def __repr__(self) -> str:
        return f"TransformNode({self.name!r})"

    def __del__(self) -> None:
        table = getattr(self, "_table", None)
        if table is not None:
            table.release(self._row)

    @property
    def table(self) -> NodeTable:
        """The NodeTable holding this node's TRS (row ``table_row``)."""
        return self._table

    @property
    def table_row(self) -> int:
        return self._row

    @property
    def _version(self) -> int:
        return int(self._table.version[self._row])

    def _bump(self) -> None:
        self._table.version[self._row] += 1

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
        self._bump()

    # --- TRS -------------------------------------------------------------------------------
    # The row views (writable: only this class and batched writers write them).
    @property
    def _position(self) -> np.ndarray:
        return self._table.position[self._row]

    @property
    def _quaternion(self) -> np.ndarray:
        return self._table.quaternion[self._row]

    @property
    def _scaling(self) -> np.ndarray:
        return self._table.scaling[self._row]

    @property
    def position(self) -> np.ndarray:
        return read_only(self._position)

    @position.setter
    def position(self, value) -> None:
        self._table.position[self._row] = finite_array(value, (3,), f"node {self.name!r} position")
        self._bump()

    @property
    def rotation_quaternion(self) -> np.ndarray:
        return read_only(self._quaternion)

    @rotation_quaternion.setter
    def rotation_quaternion(self, value) -> None:
        quaternion = finite_array(value, (4,), f"node {self.name!r} rotation_quaternion")
        if not np.any(quaternion):
            raise ViewerError(f"node {self.name!r} rotation_quaternion: the zero quaternion is not a rotation")
        self._table.quaternion[self._row] = quaternion
        self._bump()

    @property
    def rotation(self) -> np.ndarray:
        return read_only(transforms.yaw_pitch_roll_from_quaternion(self._quaternion))

    @rotation.setter
    def rotation(self, value) -> None:
        euler = finite_array(value, (3,), f"node {self.name!r} rotation")
        self._table.quaternion[self._row] = transforms.quaternion_from_yaw_pitch_roll(euler)
        self._bump()

    @property
    def scaling(self) -> np.ndarray:
        return read_only(self._scaling)

    @scaling.setter
    def scaling(self, value) -> None:
        self._table.scaling[self._row] = finite_array(value, (3,), f"node {self.name!r} scaling")
        self._bump()

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
        """The fast path for already validated float64 values (set_pose, the space API): no checks;
        the values are copied into the node's row."""
        table, row = self._table, self._row
        if position is not None:
            table.position[row] = position
        if rotation_quaternion is not None:
            table.quaternion[row] = rotation_quaternion
        if scaling is not None:
            table.scaling[row] = scaling
        table.version[row] += 1

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

    def adopt_local_matrix(self, matrix: np.ndarray) -> None:
        """Take ``matrix`` (read-only) as the local matrix of the TRS the node has now, composed
        by the caller with ``transforms.compose`` (get_local_matrix's numbers, for many nodes in
        one call: a loader)."""
        self._local = matrix
        self._local_version = self._version

    def get_world_matrix(self, walked: dict | None = None) -> np.ndarray:
        """local @ parent.world @ ... up to the root (world space), read-only.

        Each node keeps its world matrix with the versions it came from, so an unchanged chain
        costs a walk up and back, without a matrix product (deep glTF hierarchies ask often).
        ``walked`` (id(node) -> (world, stamp), filled here): the nodes already brought up to
        date in this pass, where a walk stops (many nodes asked at once, nothing changed
        between: their shared ancestors are walked once).
        """
        chain = []
        node = self
        if walked is None:
            while node is not None:
                chain.append(node)
                node = node.parent
            world, stamp = None, 0
            for node in reversed(chain):
                world, stamp = node.world_after(world, stamp)
            return world
        while node is not None and id(node) not in walked:
            chain.append(node)
            node = node.parent
        world, stamp = (None, 0) if node is None else walked[id(node)]
        for node in reversed(chain):
            world, stamp = walked[id(node)] = node.world_after(world, stamp)
        return world

    def world_after(self, parent_world, parent_stamp: int):
        """(world matrix, its stamp) given the parent's world matrix and stamp (None, 0 for a root)."""
        key = (int(self._table.version[self._row]), parent_stamp)  # (self._version, ...) inlined: deep chains ask often
        if key != self._world_key:
            local = self.get_local_matrix()
            self._world = local if parent_world is None else read_only(local @ parent_world)
            self._world_key = key
            self._world_stamp = next(_WORLD_STAMPS)
        return self._world, self._world_stamp


_WORLD_STAMPS = itertools.count(1)  # a new number for every world matrix computed, in any node
