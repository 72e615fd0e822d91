"""Bone: Babylon's Bone API as a light view of one row of its Skeleton's arrays.

TRS and the local matrix are synced lazily both ways, as Babylon does: setting position,
rotation, rotation_quaternion or scaling first decomposes a local matrix that was set
directly (so the other two are kept), then marks the matrix for composing; setting a matrix
marks the TRS for decomposing. The quaternion is the stored rotation.

Unlike Babylon, matrix getters never return stale values: reading an absolute or final
matrix first brings the skeleton up to date (a no-op when nothing changed). Returned
vectors and matrices are read-only copies, so writing into one fails loudly instead of
being silently lost.

Babylon's Space API (``get_position(Space.WORLD, tnode)``, ``rotate``, ``set_rotation_*``, ...)
poses a bone in its parent's frame or in the world, with Babylon's numbers and quirks (listed
above the methods, recorded from Babylon.js in tests/data/babylon_space_reference.json). Its
setters write through ``get_pose_target()``, so they pose glTF joints too.
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from . import transforms
from .checks import OUT_OF_RANGE, finite_array, finite_number, fits, read_only
from .batch import SINGULAR_BIND
from .skeleton import Skeleton
from .space import Space, checked_space, tnode_scaling, tnode_world_matrix
from .transform_node import TransformNode

# Below this (|det| over the product of row lengths) a matrix is not inverted by the space API.
SINGULAR_SPACE = 1e-12


class Bone:
    def __init__(self, name: str, skeleton: Skeleton, parent: "Bone | str | None" = None,
                 local_matrix=None, rest_matrix=None, bind_matrix=None, index: int | None = None, *,
                 checked: bool = False):
        """``checked=True``: float64 (4, 4) matrices a loader has already checked for many bones
        at once (numbers in the model's range, an invertible bind), taken without a second pass."""
        if not isinstance(skeleton, Skeleton):
            raise ViewerError(f"bone {name!r}: skeleton must be a Skeleton, got {skeleton!r}")
        self.name = str(name)
        self._skeleton = skeleton
        parent = self._resolve_parent(parent)
        if checked:
            local = np.eye(4) if local_matrix is None else local_matrix
            rest = local if rest_matrix is None else rest_matrix
            bind = local if bind_matrix is None else bind_matrix
        else:
            local = (np.eye(4) if local_matrix is None
                     else finite_array(local_matrix, (4, 4), f"bone {self.name!r} local matrix"))
            rest = local if rest_matrix is None else finite_array(rest_matrix, (4, 4), f"bone {self.name!r} rest matrix")
            bind = local if bind_matrix is None else finite_array(bind_matrix, (4, 4), f"bone {self.name!r} bind matrix")
            self._check_bind(bind)
        if index is not None and not isinstance(index, (int, np.integer)):
            raise ViewerError(f"bone {self.name!r}: index must be an integer or None, got {index!r}")
        self._setup(None if index is None else int(index), parent)
        # The bone's row in the skeleton's arrays; the batch moves rows (and updates this)
        # when it reorders them by depth.
        self.slot = self._batch.add_bone(self, -1 if parent is None else parent.slot, local, rest, bind)
        if parent is not None:
            parent.children.append(self)
        # Babylon computes the absolute bind matrices here; they are computed lazily in one
        # batch instead (each bind was checked invertible above, so their products are too).

    def _setup(self, index: int | None, parent: "Bone | None") -> None:
        """The fields besides name, skeleton and slot."""
        self._index = index
        self._parent: Bone | None = parent
        self.children: list[Bone] = []
        self._linked_node: TransformNode | None = None
        self._file_pose: np.ndarray | None = None  # see get_file_pose_matrix
        self._batch = self._skeleton.batch

    @classmethod
    def linked_checked(cls, skeleton: Skeleton, names: list[str], parents: list[int], local: np.ndarray,
                       bind: np.ndarray, indices: list[int], nodes: list[TransformNode]) -> list["Bone"]:
        """What ``Bone(names[k], skeleton, parent, local_matrix=local[k], bind_matrix=bind[k],
        index=indices[k], checked=True).link_transform_node(nodes[k])`` for k = 0, 1, ... makes,
        at once (a loader's hundreds of bones; its rows written in one call per array):
        ``parents[k]`` is the position among these bones of bone k's parent (before k), -1 for a
        root; ``local`` and ``bind`` (n, 4, 4) float64 matrices checked as ``checked=True`` says."""
        bones = []
        for name, parent, index, node in zip(names, parents, indices, nodes):
            bone = cls.__new__(cls)
            cls._start_linked(bone, str(name), skeleton, int(index), None if parent < 0 else bones[parent], node)
            bones.append(bone)
        for bone, slot in zip(bones, skeleton.batch.add_bones(bones, parents, local, local, bind)):
            bone.slot = slot
            parent = bone.get_parent()
            if parent is not None:
                parent.children.append(bone)
        return bones

    def _start_linked(self, name: str, skeleton: Skeleton, index: int, parent: "Bone | None",
                      node: TransformNode) -> None:
        """linked_checked's bone before its rows exist: the fields __init__ sets, linked to ``node``."""
        self.name = name
        self._skeleton = skeleton
        self._setup(index, parent)
        self._linked_node = node

    def __repr__(self) -> str:
        return f"Bone({self.name!r})"

    # --- hierarchy ---------------------------------------------------------------------------
    def _resolve_parent(self, parent) -> "Bone | None":
        if parent is None:
            return None
        if isinstance(parent, str):
            return self._skeleton.get_bone(parent)
        if not isinstance(parent, Bone):
            raise ViewerError(f"bone {self.name!r}: unknown parent {parent!r} (expected a Bone or a bone name)")
        if parent.get_skeleton() is not self._skeleton:
            raise ViewerError(f"bone {self.name!r}: parent {parent.name!r} belongs to skeleton "
                              f"{parent.get_skeleton().name!r}, not {self._skeleton.name!r}")
        return parent

    def get_parent(self) -> "Bone | None":
        return self._parent

    def get_skeleton(self) -> Skeleton:
        return self._skeleton

    def set_parent(self, parent: "Bone | str | None") -> None:
        """Re-parent the bone (its local matrix is kept, so its absolute pose moves)."""
        parent = self._resolve_parent(parent)
        ancestor = parent
        while ancestor is not None:
            if ancestor is self:
                raise ViewerError(f"bone {self.name!r}: parenting it to {parent.name!r} makes a cycle")
            ancestor = ancestor.get_parent()
        if self._parent is not None:
            self._parent.children.remove(self)
        self._parent = parent
        if parent is not None:
            parent.children.append(self)
        self._batch.set_parent(self.slot, -1 if parent is None else parent.slot)

    @property
    def index(self) -> int | None:
        """The explicit matrix row given to this bone (-1: not uploaded), or None."""
        return self._index

    @index.setter
    def index(self, value: int | None) -> None:
        if value is not None and not isinstance(value, (int, np.integer)):
            raise ViewerError(f"bone {self.name!r}: index must be an integer or None, got {value!r}")
        self._index = None if value is None else int(value)
        self._batch.mark_structure()

    def get_index(self) -> int:
        """The matrix row of this bone: its index, or its position in ``skeleton.bones``."""
        if self._index is None:
            return self._skeleton.bones.index(self)
        return self._index

    # --- length ------------------------------------------------------------------------------
    @property
    def length(self) -> float | None:
        """Display length for a leaf bone (Babylon leaves it unset; None here)."""
        value = self._batch.rows.length[self.slot]
        return None if np.isnan(value) else float(value)

    @length.setter
    def length(self, value) -> None:
        if value is not None:
            value = finite_number(value, f"bone {self.name!r} length")
            if value < 0:
                raise ViewerError(f"bone {self.name!r}: length must be a finite number >= 0, got {value!r}")
        self._batch.rows.length[self.slot] = np.nan if value is None else value

    # --- TRS ---------------------------------------------------------------------------------
    # On a linked bone these set the bone itself, as Babylon does, and the node overrides them
    # in the next prepare(); to pose any bone, write to get_pose_target().
    @property
    def position(self) -> np.ndarray:
        return read_only(self._batch.trs("position", self.slot))

    @position.setter
    def position(self, value) -> None:
        self._batch.set_trs("position", self.slot, finite_array(value, (3,), f"bone {self.name!r} position"))

    @property
    def rotation_quaternion(self) -> np.ndarray:
        return read_only(self._batch.trs("quaternion", self.slot))

    @rotation_quaternion.setter
    def rotation_quaternion(self, value) -> None:
        quaternion = finite_array(value, (4,), f"bone {self.name!r} rotation_quaternion")
        if not np.any(quaternion):
            raise ViewerError(f"bone {self.name!r} rotation_quaternion: the zero quaternion is not a rotation")
        self._batch.set_trs("quaternion", self.slot, quaternion)

    @property
    def rotation(self) -> np.ndarray:
        """Babylon's Euler vector: x = pitch, y = yaw, z = roll (from the quaternion)."""
        return read_only(transforms.yaw_pitch_roll_from_quaternion(self._batch.trs("quaternion", self.slot)))

    @rotation.setter
    def rotation(self, value) -> None:
        euler = finite_array(value, (3,), f"bone {self.name!r} rotation")
        self._batch.set_trs("quaternion", self.slot, transforms.quaternion_from_yaw_pitch_roll(euler))

    @property
    def scaling(self) -> np.ndarray:
        return read_only(self._batch.trs("scaling", self.slot))

    @scaling.setter
    def scaling(self, value) -> None:
        self._batch.set_trs("scaling", self.slot, finite_array(value, (3,), f"bone {self.name!r} scaling"))

    # --- matrices ----------------------------------------------------------------------------
    def get_local_matrix(self) -> np.ndarray:
        return read_only(self._batch.local_matrix(self.slot))

    def get_absolute_matrix(self) -> np.ndarray:
        self._batch.update()
        return read_only(self._batch.rows.absolute[self.slot])

    def get_final_matrix(self) -> np.ndarray:
        """absolute_inverse_bind @ absolute: the matrix the skinning shader applies."""
        self._batch.update()
        return read_only(self._batch.rows.final[self.slot])

    def get_bind_matrix(self) -> np.ndarray:
        return read_only(self._batch.rows.bind[self.slot])

    def set_bind_matrix(self, matrix) -> None:
        """Set the bind matrix; the absolute (inverse) bind of this bone and its subtree follow.

        As in Babylon (``updateMatrix(m, true, true)``), the local matrix becomes ``matrix``
        too, so the bone is in its new bind pose; the rest matrix is left alone.
        """
        bind = finite_array(matrix, (4, 4), f"bone {self.name!r} bind matrix")
        self._check_bind(bind)
        self._batch.set_bind_matrix(self.slot, bind)
        self._batch.set_local_matrix(self.slot, bind)

    def get_absolute_bind_matrix(self) -> np.ndarray:
        self._batch.update_bind()
        return read_only(self._batch.rows.absolute_bind[self.slot])

    def get_absolute_inverse_bind_matrix(self) -> np.ndarray:
        self._batch.update_bind()
        return read_only(self._batch.rows.absolute_inverse_bind[self.slot])

    def get_rest_matrix(self) -> np.ndarray:
        return read_only(self._batch.rows.rest[self.slot])

    def set_rest_matrix(self, matrix) -> None:
        self._batch.rows.rest[self.slot] = finite_array(matrix, (4, 4), f"bone {self.name!r} rest matrix")
        self._file_pose = None  # a rest set anew is the pose to start from

    def set_current_pose_as_rest(self) -> None:
        """The current local matrix becomes the rest matrix (Babylon's setCurrentPoseAsRest)."""
        self.set_rest_matrix(self.get_local_matrix())

    def get_file_pose_matrix(self) -> np.ndarray:
        """The local matrix of the pose the bone's file shows (what is drawn as loaded, no clip
        playing): its rest, unless the loader set another (an FBX file's joints are saved in a
        pose of their own, while the loader makes the skin's bind their rest) and no rest was set
        since."""
        return self.get_rest_matrix() if self._file_pose is None else read_only(self._file_pose)

    def set_file_pose_matrix(self, matrix) -> None:
        """Set the file's pose (a loader's); None: the rest is the file's pose again."""
        self._file_pose = None if matrix is None else \
            finite_array(matrix, (4, 4), f"bone {self.name!r} file pose matrix").copy()

    def _check_bind(self, bind: np.ndarray) -> None:
        if not transforms.singularity_one(bind) > SINGULAR_BIND:
            raise ViewerError(f"bone {self.name!r}: bind matrix is singular (zero or degenerate scale)")

    # --- poses -------------------------------------------------------------------------------
    def return_to_rest(self) -> None:
        """Back to the rest matrix; a linked bone writes the rest pose into its node."""
        rest = self._batch.rows.rest[self.slot]
        if self._linked_node is not None:
            scaling, quaternion, position = transforms.decompose(rest)
            self._linked_node.set_trs(position, quaternion, scaling)
        else:
            self._batch.set_local_matrix(self.slot, rest)

    def compute_absolute_matrices(self) -> None:
        """Bring this bone's and its children's absolute matrices up to date.

        Babylon assumes the parent is already current; here the whole skeleton is brought up
        to date in one batch, which costs nothing when it already is.
        """
        self._batch.update()

    # --- linked TransformNode (glTF joints) ----------------------------------------------------
    def link_transform_node(self, node: TransformNode | None) -> None:
        """Let ``node``'s local TRS drive this bone (copied in ``Skeleton.prepare()``)."""
        if node is not None and not isinstance(node, TransformNode):
            raise ViewerError(f"bone {self.name!r}: can only link a TransformNode, got {node!r}")
        self._linked_node = node
        self._batch.mark_structure()

    def get_transform_node(self) -> TransformNode | None:
        return self._linked_node

    def get_pose_target(self) -> "TransformNode | Bone":
        """Where this bone's local pose lives: its linked node (glTF joints), else the bone.

        Write position / rotation_quaternion / scaling here to pose any bone; a value
        written to a linked bone itself is replaced by its node's in the next prepare().
        """
        return self if self._linked_node is None else self._linked_node

    # --- spaces: Babylon's Space API ------------------------------------------------------------
    # Babylon's behaviour, quirks included (recorded from Babylon.js itself in
    # tests/data/babylon_space_reference.json):
    # - WORLD means skeleton space times the tnode's world matrix; the getters, set_position and
    #   translate treat Space.BONE as WORLD; rotate treats BONE as LOCAL.
    # - rotate(..., Space.LOCAL) turns about an axis given in the parent's frame (local @ R).
    # - set_position / translate in WORLD ignore the tnode for a root bone.
    # - The world-space rotation setters (set_rotation, set_rotation_quaternion,
    #   set_rotation_matrix, set_yaw_pitch_roll, set_axis_angle) make the bone's world rotation
    #   the tnode's own scaling times the given rotation: the bone's scale is dropped, and a
    #   TransformNode's local (not world) scaling is used, as Babylon reads ``tNode.scaling``.
    #   In Space.BONE, Babylon computes something meaningful only for a root bone without a
    #   tnode, where it equals WORLD; these setters treat BONE as WORLD everywhere.
    # - The world-space rotation getters flip the first axis when the absolute bind matrix is a
    #   mirror (Babylon's _scalingDeterminant).
    # Differences, on purpose: a singular matrix, a zero axis or a NaN raises ViewerError and
    # leaves the pose unchanged (Babylon returns silently or computes NaN); the absolute matrices
    # are those of every root (Babylon computes them under bones[0] only: equal on single-root
    # skeletons). Every setter writes through get_pose_target(): a linked bone's node gets the
    # new pose (and the bone at once), so prepare() keeps it. Getters first sync linked nodes and
    # bring the skeleton up to date: one batch update per call at most.

    def get_position(self, space=Space.LOCAL, tnode=None) -> np.ndarray:
        """The bone's position: the local translation, or (WORLD, BONE) its world position."""
        what = self._what("get_position")
        if checked_space(space, what) is Space.LOCAL:
            return _result(self._current_local()[3, :3])
        return self._world_position(tnode_world_matrix(tnode, what))

    def get_absolute_position(self, tnode=None) -> np.ndarray:
        """The bone's world position: ``get_position(Space.WORLD, tnode)``."""
        return self._world_position(tnode_world_matrix(tnode, self._what("get_absolute_position")))

    def set_position(self, position, space=Space.LOCAL, tnode=None) -> None:
        """Move the bone to ``position`` in its parent's frame (LOCAL) or in the world (WORLD, BONE)."""
        self._update_position(position, space, tnode, False, self._what("set_position"))

    def set_absolute_position(self, position, tnode=None) -> None:
        """``set_position(position, Space.WORLD, tnode)``."""
        self._update_position(position, Space.WORLD, tnode, False, self._what("set_absolute_position"))

    def translate(self, vec, space=Space.LOCAL, tnode=None) -> None:
        """Move the bone by ``vec``, given in its parent's frame (LOCAL) or the world (WORLD, BONE)."""
        self._update_position(vec, space, tnode, True, self._what("translate"))

    def get_rotation(self, space=Space.LOCAL, tnode=None) -> np.ndarray:
        """Babylon's Euler vector (x pitch, y yaw, z roll) of ``get_rotation_quaternion``."""
        quaternion = self._rotation_quaternion(space, tnode, self._what("get_rotation"))
        return _result(transforms.yaw_pitch_roll_from_quaternion(quaternion))

    def get_rotation_quaternion(self, space=Space.LOCAL, tnode=None) -> np.ndarray:
        """The local quaternion, or (WORLD, BONE) the rotation of the world matrix (x, y, z, w)."""
        return _result(self._rotation_quaternion(space, tnode, self._what("get_rotation_quaternion")))

    def get_rotation_matrix(self, space=Space.LOCAL, tnode=None) -> np.ndarray:
        """The (4, 4) rotation of the local matrix, or (WORLD, BONE) of the world matrix."""
        what = self._what("get_rotation_matrix")
        if checked_space(space, what) is Space.LOCAL:
            return _result(_rotation_part(self._current_local()))
        world = self._world_matrix(tnode_world_matrix(tnode, what))
        world[0, :3] *= self._scaling_determinant()
        return _result(_rotation_part(world))

    def set_rotation(self, rotation, space=Space.LOCAL, tnode=None) -> None:
        """Set Babylon's Euler vector (x pitch, y yaw, z roll), locally or in the world."""
        what = self._what("set_rotation")
        pitch, yaw, roll = finite_array(rotation, (3,), f"{what} rotation")
        self._set_yaw_pitch_roll(yaw, pitch, roll, space, tnode, what)

    def set_yaw_pitch_roll(self, yaw, pitch, roll, space=Space.LOCAL, tnode=None) -> None:
        """Set the rotation from yaw (Y), pitch (X) and roll (Z), locally or in the world."""
        what = self._what("set_yaw_pitch_roll")
        self._set_yaw_pitch_roll(_number(yaw, what, "yaw"), _number(pitch, what, "pitch"),
                                 _number(roll, what, "roll"), space, tnode, what)

    def set_rotation_quaternion(self, q, space=Space.LOCAL, tnode=None) -> None:
        """Set the rotation quaternion (x, y, z, w), locally or in the world."""
        what = self._what("set_rotation_quaternion")
        quaternion = finite_array(q, (4,), f"{what} quaternion")
        if not np.any(quaternion):
            raise ViewerError(f"{what}: the zero quaternion is not a rotation")
        if checked_space(space, what) is Space.LOCAL:
            self._write_trs(self, quaternion=quaternion)
        else:
            self._set_world_rotation(_rotation_matrix(quaternion), tnode, what)

    def set_rotation_matrix(self, m, space=Space.LOCAL, tnode=None) -> None:
        """Set the rotation from a (4, 4) or (3, 3) rotation matrix, locally or in the world."""
        what = self._what("set_rotation_matrix")
        matrix = _matrix4(m, f"{what} matrix")
        if checked_space(space, what) is Space.LOCAL:
            quaternion = transforms.quaternion_from_rotation_matrix_one(matrix)
            if not np.all(np.isfinite(quaternion)) or not np.any(quaternion):
                raise ViewerError(f"{what}: not a rotation matrix: {matrix.tolist()}")
            self._write_trs(self, quaternion=quaternion)
        else:
            self._set_world_rotation(matrix, tnode, what)

    def rotate(self, axis, amount, space=Space.LOCAL, tnode=None) -> None:
        """Turn the bone by ``amount`` radians about ``axis``.

        As Babylon: in Space.LOCAL (and BONE) the axis is in the parent's frame; in WORLD it
        is a world axis (through the bone's position, which is kept).
        """
        what = self._what("rotate")
        rotation = _rotation_matrix(_axis_quaternion(axis, _number(amount, what, "amount"), what))
        world = checked_space(space, what) is Space.WORLD
        tnode_world = tnode_world_matrix(tnode, what)
        if world and (self._parent is not None or tnode_world is not None):
            self._skeleton.prepare()
        else:
            self._sync()
        self._rotate_with_matrix(rotation, world, tnode_world, what)

    def set_axis_angle(self, axis, angle, space=Space.LOCAL, tnode=None) -> None:
        """Set the rotation to ``angle`` radians about ``axis``, locally or in the world."""
        what = self._what("set_axis_angle")
        quaternion = _axis_quaternion(axis, _number(angle, what, "angle"), what)
        if checked_space(space, what) is Space.LOCAL:
            self._write_trs(self, quaternion=quaternion)
        else:
            self._set_world_rotation(_rotation_matrix(quaternion), tnode, what)

    def get_direction(self, local_axis, tnode=None) -> np.ndarray:
        """The world direction (unit length) of an axis given in the bone's own frame."""
        what = self._what("get_direction")
        axis = finite_array(local_axis, (3,), f"{what} local_axis")
        if not np.any(axis):
            raise ViewerError(f"{what}: the zero vector is not an axis")
        direction = axis @ self._world_matrix(tnode_world_matrix(tnode, what))[:3, :3]
        length = float(np.sqrt(direction @ direction))
        return _result(direction / length if length > 0 else direction)

    def get_absolute_position_from_local(self, position, tnode=None) -> np.ndarray:
        """A point given in the bone's own frame, in world space."""
        what = self._what("get_absolute_position_from_local")
        point = finite_array(position, (3,), f"{what} position")
        return _result(_transform_point(point, self._world_matrix(tnode_world_matrix(tnode, what))))

    def get_local_position_from_absolute(self, position, tnode=None) -> np.ndarray:
        """A world-space point, in the bone's own frame."""
        what = self._what("get_local_position_from_absolute")
        point = finite_array(position, (3,), f"{what} position")
        world = self._world_matrix(tnode_world_matrix(tnode, what))
        return _result(_transform_point(point, _inverse(world, what)))

    def scale(self, x, y, z, scale_children=False) -> None:
        """Scale the bone along its parent's axes, keeping its children where they are.

        Babylon's ``scale``: the local matrix becomes ``S @ local`` and each child's
        ``local @ S^-1`` (translation kept), so only this bone's own geometry grows; with
        ``scale_children`` every descendant is scaled the same way in turn. A non-uniform
        scale of a bone with rotated children shears their local matrices, which a linked
        node (TRS) cannot hold: it gets the nearest TRS (decomposed).
        """
        what = self._what("scale")
        factors = np.array([_number(x, what, "x"), _number(y, what, "y"), _number(z, what, "z")])
        if not np.all(factors):
            raise ViewerError(f"{what}: a zero scale factor cannot be undone for the children")
        self._sync()
        batch = self._batch
        changed: dict = {}

        def local_of(bone):
            if bone not in changed:
                changed[bone] = batch.local_matrix(bone.slot).copy()
            return changed[bone]

        def scale_bone(bone):
            local_of(bone)[:3, :] *= factors[:, None]
            for child in bone.children:
                local_of(child)[:3, :3] /= factors
            if scale_children:
                for child in bone.children:
                    scale_bone(child)

        scale_bone(self)
        for bone, matrix in changed.items():
            self._write_local(bone, matrix, what)

    def set_scale(self, scale) -> None:
        """Set the local scaling (Babylon's setScale: position and rotation are kept)."""
        what = self._what("set_scale")
        self._sync()
        self._write_trs(self, scaling=finite_array(scale, (3,), f"{what} scale"))

    def get_scale(self) -> np.ndarray:
        """The local scaling."""
        self._sync()
        return _result(self._batch.trs("scaling", self.slot))

    # --- the space API's plumbing -------------------------------------------------------------------
    def _what(self, method: str) -> str:
        return f"bone {self.name!r} {method}"

    def _sync(self) -> None:
        """Copy linked nodes that changed into their bones (no matrix update)."""
        batch = self._batch
        batch.update_layout()
        if batch.linked:
            batch.sync_linked()

    def _current_local(self) -> np.ndarray:
        self._sync()
        return self._batch.local_matrix(self.slot)

    def _world_matrix(self, tnode_world: np.ndarray | None) -> np.ndarray:
        """absolute @ tnode world (a new array), after the skeleton's one update."""
        self._skeleton.prepare()
        absolute = self._batch.rows.absolute[self.slot]
        return absolute.copy() if tnode_world is None else absolute @ tnode_world

    def _world_position(self, tnode_world: np.ndarray | None) -> np.ndarray:
        """Row 3 of absolute @ tnode world, after the skeleton's one update."""
        self._skeleton.prepare()
        row = self._batch.rows.absolute[self.slot, 3]
        return _result(row[:3] if tnode_world is None else (row @ tnode_world)[:3])

    def _scaling_determinant(self) -> float:
        """-1 when the absolute bind matrix mirrors (Babylon's _scalingDeterminant), else 1."""
        return -1.0 if transforms.determinant3(self._batch.rows.absolute_bind[self.slot]) < 0 else 1.0

    def _rotation_quaternion(self, space, tnode, what: str) -> np.ndarray:
        if checked_space(space, what) is Space.LOCAL:
            self._sync()
            return self._batch.trs("quaternion", self.slot)
        world = self._world_matrix(tnode_world_matrix(tnode, what))
        world[0, :3] *= self._scaling_determinant()
        return transforms.decompose_one(world)[1]

    def _update_position(self, value, space, tnode, add: bool, what: str) -> None:
        """Babylon's _updatePosition: set (or add to) the local translation; in WORLD, ``value``
        is first taken into the parent's frame (for a root, as is: the tnode is ignored)."""
        vector = finite_array(value, (3,), f"{what} position")
        space = checked_space(space, what)
        tnode_world = tnode_world_matrix(tnode, what)
        if space is not Space.LOCAL and self._parent is not None:
            self._skeleton.prepare()
            frame = self._batch.rows.absolute[self._parent.slot]
            frame = frame.copy() if tnode_world is None else frame @ tnode_world
            if add:
                frame[3, :3] = 0.0
            vector = _transform_point(vector, _inverse(frame, what))
        else:
            self._sync()
        local = self._batch.local_matrix(self.slot).copy()
        if add:
            local[3, :3] += vector
        else:
            local[3, :3] = vector
        self._write_local(self, local, what)

    def _set_yaw_pitch_roll(self, yaw: float, pitch: float, roll: float, space, tnode, what: str) -> None:
        quaternion = transforms.quaternion_from_yaw_pitch_roll([pitch, yaw, roll])
        if checked_space(space, what) is Space.LOCAL:
            self._write_trs(self, quaternion=quaternion)
        else:
            self._set_world_rotation(_rotation_matrix(quaternion), tnode, what)

    def _set_world_rotation(self, rotation: np.ndarray, tnode, what: str) -> None:
        """Make the world rotation ``tnode scaling @ rotation`` (Babylon's setters in WORLD):
        rotate by inverse(world) @ scaling @ rotation about the bone's world position."""
        tnode_world = tnode_world_matrix(tnode, what)
        world = self._world_matrix(tnode_world)
        scaling = tnode_scaling(tnode, tnode_world) * (self._scaling_determinant(), 1.0, 1.0)
        unscaled_inverse = _inverse(world, what) * np.append(scaling, 1.0)  # @ diag(scaling, 1)
        self._rotate_with_matrix(unscaled_inverse @ rotation, True, tnode_world, what)

    def _rotate_with_matrix(self, rotation: np.ndarray, world: bool, tnode_world, what: str) -> None:
        """Babylon's _rotateWithMatrix: ``local @ rotation`` (LOCAL), or the rotation applied in
        the frame of parent absolute @ tnode (WORLD); the local translation is kept. The
        caller has brought the skeleton up to date."""
        local = self._batch.local_matrix(self.slot)
        translation = local[3, :3].copy()
        frame = None
        if world:
            if self._parent is not None:
                frame = self._batch.rows.absolute[self._parent.slot]
                if tnode_world is not None:
                    frame = frame @ tnode_world
            else:
                frame = tnode_world
        if frame is not None:
            new = local @ frame @ rotation @ _inverse(frame, what)
        else:
            new = local @ rotation
        new[3, :3] = translation
        self._write_local(self, new, what)

    def _write_local(self, bone: "Bone", matrix: np.ndarray, what: str) -> None:
        """The one rule: a new local matrix goes to ``bone.get_pose_target()``."""
        if not fits(matrix):
            raise ViewerError(f"{what}: the result holds {OUT_OF_RANGE} (a singular or degenerate matrix, or "
                              "values too large)")
        target = bone.get_pose_target()
        if target is bone:
            self._batch.set_local_matrix(bone.slot, matrix)
        else:
            scaling, quaternion, position = transforms.decompose_one(matrix)
            target.assign_trs(position, quaternion, scaling)
            self._batch.copy_linked(bone.slot, target)

    def _write_trs(self, bone: "Bone", quaternion=None, scaling=None) -> None:
        """A local rotation or scaling goes to ``bone.get_pose_target()`` (validated already)."""
        target = bone.get_pose_target()
        if target is bone:
            if quaternion is not None:
                self._batch.set_trs("quaternion", bone.slot, quaternion)
            if scaling is not None:
                self._batch.set_trs("scaling", bone.slot, scaling)
        else:
            target.assign_trs(rotation_quaternion=quaternion, scaling=scaling)
            self._batch.copy_linked(bone.slot, target)


def _result(array) -> np.ndarray:
    """A new read-only float64 array (a returned value, never a view of the bone's rows)."""
    result = np.array(array, dtype=np.float64)
    result.flags.writeable = False
    return result


def _number(value, what: str, name: str) -> float:
    return finite_number(value, f"{what} {name}")


def _matrix4(value, what: str) -> np.ndarray:
    """A (4, 4) matrix, or a (3, 3) one embedded in the identity."""
    array = np.asarray(value, dtype=np.float64) if not isinstance(value, np.ndarray) else value
    if getattr(array, "shape", None) == (3, 3):
        matrix = np.eye(4)
        matrix[:3, :3] = finite_array(array, (3, 3), what)
        return matrix
    return finite_array(value, (4, 4), what)


def _axis_quaternion(axis, angle: float, what: str) -> np.ndarray:
    """Babylon's Quaternion.RotationAxis (the axis normalized)."""
    vector = finite_array(axis, (3,), f"{what} axis")
    length = float(np.sqrt(vector @ vector))
    if not length > 0:
        raise ViewerError(f"{what}: the zero vector is not an axis")
    half = 0.5 * angle
    return np.append(vector * (np.sin(half) / length), np.cos(half))


def _rotation_matrix(quaternion: np.ndarray) -> np.ndarray:
    """Babylon's Matrix.FromQuaternion (RotationAxis, RotationYawPitchRoll): no normalization."""
    return transforms.rotation_matrix_one(quaternion)


def _rotation_part(matrix: np.ndarray) -> np.ndarray:
    """Babylon's getRotationMatrixToRef: rows divided by the decomposed scale, identity if 0."""
    scaling = np.sqrt(np.einsum("ij,ij->i", matrix[:3, :3], matrix[:3, :3]))
    if transforms.determinant3(matrix) <= 0:
        scaling[1] = -scaling[1]
    result = np.eye(4)
    if np.all(scaling != 0):
        result[:3, :3] = matrix[:3, :3] / scaling[:, None]
    return result


def _transform_point(point: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Babylon's Vector3.TransformCoordinates: (point, 1) @ matrix, divided by w."""
    row = point @ matrix[:3] + matrix[3]
    return row[:3] / row[3]


def _inverse(matrix: np.ndarray, what: str) -> np.ndarray:
    if not transforms.singularity_one(matrix) > SINGULAR_SPACE:
        raise ViewerError(f"{what}: a singular matrix (a zero scale in the bone, a parent or the tnode) "
                          "cannot be inverted")
    return np.linalg.inv(matrix)
