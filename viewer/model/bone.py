"""Bone: Babylon's Bone API as a light view of one row of its Skeleton's arrays.

TRS and the local matrix are synced lazily both ways, as Babylon does: setting position,
rotation, rotation_quaternion or scaling first decomposes a local matrix that was set
directly (so the other two are kept), then marks the matrix for composing; setting a matrix
marks the TRS for decomposing. The quaternion is the stored rotation.

Unlike Babylon, matrix getters never return stale values: reading an absolute or final
matrix first brings the skeleton up to date (a no-op when nothing changed). Returned
vectors and matrices are read-only copies, so writing into one fails loudly instead of
being silently lost.
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from . import transforms
from .checks import finite_array, read_only
from .batch import SINGULAR_BIND
from .skeleton import Skeleton
from .transform_node import TransformNode


class Bone:
    def __init__(self, name: str, skeleton: Skeleton, parent: "Bone | str | None" = None,
                 local_matrix=None, rest_matrix=None, bind_matrix=None, index: int | None = None):
        if not isinstance(skeleton, Skeleton):
            raise ViewerError(f"bone {name!r}: skeleton must be a Skeleton, got {skeleton!r}")
        self.name = str(name)
        self._skeleton = skeleton
        parent = self._resolve_parent(parent)
        local = np.eye(4) if local_matrix is None else finite_array(local_matrix, (4, 4), f"bone {self.name!r} local matrix")
        rest = local if rest_matrix is None else finite_array(rest_matrix, (4, 4), f"bone {self.name!r} rest matrix")
        bind = local if bind_matrix is None else finite_array(bind_matrix, (4, 4), f"bone {self.name!r} bind matrix")
        self._check_bind(bind)
        if index is not None and not isinstance(index, (int, np.integer)):
            raise ViewerError(f"bone {self.name!r}: index must be an integer or None, got {index!r}")
        self._index = None if index is None else int(index)
        self._parent: Bone | None = parent
        self.children: list[Bone] = []
        self._linked_node: TransformNode | None = None
        self._batch = skeleton.batch
        # The bone's row in the skeleton's arrays; the batch moves rows (and updates this)
        # when it reorders them by depth.
        self.slot = self._batch.add_bone(self, -1 if parent is None else parent.slot, local, rest, bind)
        if parent is not None:
            parent.children.append(self)
        # Babylon computes the absolute bind matrices here; they are computed lazily in one
        # batch instead (each bind was checked invertible above, so their products are too).

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
            value = float(value)
            if not np.isfinite(value) or value < 0:
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

    def set_current_pose_as_rest(self) -> None:
        """The current local matrix becomes the rest matrix (Babylon's setCurrentPoseAsRest)."""
        self.set_rest_matrix(self.get_local_matrix())

    def _check_bind(self, bind: np.ndarray) -> None:
        if not transforms.singularity(bind) > SINGULAR_BIND:
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
