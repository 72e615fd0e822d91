"""Babylon's bone controllers: BoneIKController (two-bone IK) and BoneLookController (look-at).

Model code: no GL. They read and write bones only through the public Bone API (world-space
getters and setters with a ``tnode``), as Babylon's ``Bones/boneIKController.ts`` and
``boneLookController.ts`` do, so a script, the panel and a viewport drag share one controller.
On a bone linked to a TransformNode (glTF joints) the setters write the node, so the result
after ``Skeleton.prepare()`` is what Babylon computes for the same unlinked skeleton.

The numbers follow Babylon.js 9 step by step (tests/test_controllers_babylon.py replays Babylon's
own results). Babylon's behaviours kept on purpose, because users of its controllers rely on
them and the replay holds them:

- IK: the controller takes the *lower* bone; its parent is the upper bone. The bones' lengths
  are measured once, in the constructor: ``length * scaling.y * tnode scaling.y`` when both
  bones have a ``length``, else the distances between the upper bone, the lower bone and the
  lower bone's first child (or the lower bone's ``length`` when it has no child).
- IK, ``bend_axis=None``: when the lower bone's absolute matrix keeps handedness, the elbow
  bends about local -Z, or about +Z with the upper bone rolled by 90 degrees when the lower
  bone's offset from its parent is mostly along +X (arms); in a mirrored chain it bends about
  local X (Babylon's nominal default). A given bend axis replaces only the axis, not the roll.
- IK: with that default axis a chain along +Y bends its elbow *away* from the pole target unless
  ``pole_angle`` is pi (Babylon's own IK example passes ``poleAngle: Math.PI``); an arm along +X
  bends toward it. The end reaches the target exactly only when each bone's child sits on the
  bone's +Y (or +X, for arms) axis, as in Blender exports; other rigs land near it.
- IK: the lower bone's local rotation is *replaced* by a rotation about the bend axis; the
  upper bone's world rotation is set, which drops its own scale (Babylon's world setters).
- IK: with no pole target the pole is the upper bone's parent, or the world origin for a root.
- IK: ``slerp_amount < 1`` slerps from the upper bone's world rotation when the controller was
  made (or last set without slerping), and blends the elbow angle from Babylon's initial pi.
- Look-at: with ``slerp_amount < 1`` the first ``update()`` does nothing (Babylon skips the
  first frame), later ones slerp from the world rotation the bone had then.
- Look-at: yaw and pitch limits are measured in a frame built from the up axis and the parent
  bone's (or, for a root, the tnode's) forward axis; when the world up axis has y exactly 1,
  Babylon takes the parent's world rotation instead, or for a root in Space.LOCAL the whole
  tnode world matrix, whose translation then shifts the limited target; kept.
- Look-at: the bone's local scaling is kept (set back after the world-space rotation).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ViewerError
from . import transforms
from .bone import Bone
from .checks import finite_array, finite_number
from .space import Space, checked_space, tnode_scaling, tnode_world_matrix

_IDENTITY = np.eye(4)
_TINY = 1e-12  # below this a cross product or a direction is treated as zero


# --- small maths in Babylon's conventions (row vectors, A @ B applies A first) -------------------
def _axes_matrix(x, y, z) -> np.ndarray:
    """Babylon's Matrix.FromXYZAxes: the rows are the three axes."""
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = x, y, z
    return m


def _axis_angle_quaternion(axis, angle: float) -> np.ndarray:
    axis = np.asarray(axis, dtype=np.float64)
    half = 0.5 * angle
    return np.append(axis / np.linalg.norm(axis) * math.sin(half), math.cos(half))


def _axis_angle_matrix(axis, angle: float) -> np.ndarray:
    return transforms.compose(np.ones(3), _axis_angle_quaternion(axis, angle), np.zeros(3))


def _yaw_pitch_roll_matrix(yaw: float, pitch: float, roll: float) -> np.ndarray:
    quaternion = transforms.quaternion_from_yaw_pitch_roll([pitch, yaw, roll])
    return transforms.compose(np.ones(3), quaternion, np.zeros(3))


def _quaternion_matrix(quaternion) -> np.ndarray:
    return transforms.compose(np.ones(3), quaternion, np.zeros(3))


def _slerp(q0: np.ndarray, q1: np.ndarray, amount: float) -> np.ndarray:
    """Babylon's Quaternion.Slerp (the shorter way; linear when nearly equal)."""
    cosine = float(np.dot(q0, q1))
    sign = -1.0 if cosine < 0 else 1.0
    cosine = abs(cosine)
    if cosine > 0.999999:
        w0, w1 = 1.0 - amount, sign * amount
    else:
        omega = math.acos(cosine)
        inverse_sin = 1.0 / math.sin(omega)
        w0 = math.sin((1.0 - amount) * omega) * inverse_sin
        w1 = sign * math.sin(amount * omega) * inverse_sin
    return w0 * q0 + w1 * q1


def _point(matrix: np.ndarray, point) -> np.ndarray:
    """Babylon's Vector3.TransformCoordinates (with the projective divide)."""
    row = np.append(np.asarray(point, dtype=np.float64), 1.0) @ matrix
    return row[:3] / row[3]


def _normalized(vector: np.ndarray) -> np.ndarray:
    """Babylon's Vector3.normalize: a zero vector stays zero."""
    length = float(np.linalg.norm(vector))
    return vector if length == 0.0 else vector / length


def _vector(value, what: str, nonzero: bool = False) -> np.ndarray:
    vector = finite_array(value, (3,), what)
    if nonzero and not np.linalg.norm(vector) > 0:
        raise ViewerError(f"{what}: the zero vector is not a direction")
    return vector


def _check_bone(bone, what: str) -> Bone:
    if not isinstance(bone, Bone):
        raise ViewerError(f"{what}: expected a Bone, got {bone!r}")
    return bone


def _check_tnode(tnode, what: str):
    tnode_world_matrix(tnode, what)  # raises a ViewerError for anything else
    return tnode


class _Placement:
    """The tnode's world matrix and Babylon's ``tNode.scaling``, read once per update."""

    def __init__(self, tnode, what: str):
        world = tnode_world_matrix(tnode, what)
        self.world = _IDENTITY if world is None else world
        self.scaling = tnode_scaling(tnode, world)

    def direction(self, axis) -> np.ndarray:
        """TransformNode.getDirection: the axis through the world matrix, not normalized."""
        return np.asarray(axis, dtype=np.float64) @ self.world[:3, :3]


# --- IK ------------------------------------------------------------------------------------------
class BoneIKController:
    """Two-bone IK: turn ``bone``'s parent and ``bone`` so that the chain's end reaches
    ``target_position`` (world space), the elbow bending toward the pole target.

    ``bone`` is the lower bone (the forearm); its parent is the upper bone (the upper arm).
    The pole target is ``pole_target_bone`` (default: the upper bone's parent, when neither a
    pole bone nor ``pole_target_position`` is given) at ``pole_target_local_offset`` in that
    bone's space, else ``pole_target_position`` (world), else the world origin.
    ``pole_angle`` turns the chain's plane about the upper-bone-to-target line; ``max_angle``
    (0..pi) limits how far the elbow opens; ``slerp_amount`` < 1 eases toward the solution.
    Every constructor argument is also a settable attribute; ``update()`` applies the IK once.
    """

    def __init__(self, tnode, bone, target_position=None, pole_target_position=None,
                 pole_target_bone=None, pole_target_local_offset=None, pole_angle=0.0,
                 bend_axis=None, max_angle=math.pi, slerp_amount=1.0):
        bone = _check_bone(bone, "BoneIKController")
        what = f"BoneIKController on bone {bone.name!r}"
        upper = bone.get_parent()
        if upper is None:
            raise ViewerError(f"{what}: the bone has no parent; IK needs a two-bone chain "
                              "(pass the lower bone, e.g. the forearm, whose parent is the upper arm)")
        if not bone.children and not bone.length:
            raise ViewerError(f"{what}: the bone is a leaf without a length, so its length is unknown "
                              "(give it a length or pass the bone above it)")
        self._what = what
        self._bone, self._upper = bone, upper
        self._tnode = _check_tnode(tnode, what)
        placement = _Placement(tnode, what)

        # Babylon's choice of bend axis, from the lower bone's handedness and offset.
        self._right_handed = bool(np.linalg.det(bone.get_absolute_matrix()[:3, :3]) > 0)
        self._adjust_roll = 0.0
        chosen_axis = np.array([1.0, 0.0, 0.0])
        if self._right_handed:
            chosen_axis = np.array([0.0, 0.0, -1.0])
            x, y, z = bone.get_position(Space.LOCAL)
            if x > y and x > z:
                self._adjust_roll = math.pi / 2
                chosen_axis = np.array([0.0, 0.0, 1.0])

        self._upper_length, self._lower_length = self._measure(placement)
        for name, value in (("upper", self._upper_length), ("lower", self._lower_length)):
            if not (math.isfinite(value) and value != 0):
                raise ViewerError(f"{what}: the {name} bone's length is {value!r}; IK needs two bones of "
                                  "non-zero length (bones at the same place, or a zero length)")
        # Slerp state: the upper bone's world rotation to ease from, and the elbow angle.
        self._upper_rotation = upper.get_rotation_matrix(Space.WORLD, tnode)
        self._lower_angle = math.pi
        self._slerping = False

        self.target_position = target_position
        self.pole_target_bone = (upper.get_parent() if pole_target_bone is None and pole_target_position is None
                                 else pole_target_bone)
        self.pole_target_position = pole_target_position
        self.pole_target_local_offset = (0.0, 0.0, 0.0) if pole_target_local_offset is None \
            else pole_target_local_offset
        self.pole_angle = pole_angle
        self.bend_axis = chosen_axis if bend_axis is None else bend_axis
        self.max_angle = max_angle
        self.slerp_amount = slerp_amount

    def _measure(self, placement: _Placement) -> tuple[float, float]:
        bone, upper, tnode = self._bone, self._upper, self._tnode
        mesh_scale_y = float(placement.scaling[1])
        if upper.length and bone.length:
            return (upper.length * float(upper.get_scale()[1]) * mesh_scale_y,
                    bone.length * float(bone.get_scale()[1]) * mesh_scale_y)
        lower_position = bone.get_absolute_position(tnode)
        upper_length = float(np.linalg.norm(lower_position - upper.get_absolute_position(tnode)))
        if bone.children:
            end = bone.children[0].get_absolute_position(tnode)
            return upper_length, float(np.linalg.norm(end - lower_position))
        return upper_length, bone.length * float(bone.get_scale()[1]) * mesh_scale_y

    def __repr__(self) -> str:
        return f"BoneIKController({self._bone.name!r})"

    # --- settable attributes ---------------------------------------------------------------------
    @property
    def bone(self) -> Bone:
        """The lower bone (read-only: make a new controller for another chain)."""
        return self._bone

    @property
    def upper_bone(self) -> Bone:
        return self._upper

    @property
    def tnode(self):
        return self._tnode

    @tnode.setter
    def tnode(self, value) -> None:
        """Where the skeleton is in the world; the bone lengths stay as first measured (Babylon)."""
        self._tnode = _check_tnode(value, self._what)

    @property
    def target_position(self) -> np.ndarray | None:
        return None if self._target is None else self._target.copy()

    @target_position.setter
    def target_position(self, value) -> None:
        self._target = None if value is None else _vector(value, f"{self._what} target_position")

    @property
    def pole_target_position(self) -> np.ndarray | None:
        return None if self._pole_position is None else self._pole_position.copy()

    @pole_target_position.setter
    def pole_target_position(self, value) -> None:
        self._pole_position = None if value is None else _vector(value, f"{self._what} pole_target_position")

    @property
    def pole_target_bone(self) -> Bone | None:
        """The bone the pole follows; it wins over ``pole_target_position`` (set it to None)."""
        return self._pole_bone

    @pole_target_bone.setter
    def pole_target_bone(self, value) -> None:
        self._pole_bone = None if value is None else _check_bone(value, f"{self._what} pole_target_bone")

    @property
    def pole_target_local_offset(self) -> np.ndarray:
        return self._pole_offset.copy()

    @pole_target_local_offset.setter
    def pole_target_local_offset(self, value) -> None:
        self._pole_offset = _vector(value, f"{self._what} pole_target_local_offset")

    @property
    def pole_angle(self) -> float:
        return self._pole_angle

    @pole_angle.setter
    def pole_angle(self, value) -> None:
        self._pole_angle = finite_number(value, f"{self._what} pole_angle")

    @property
    def bend_axis(self) -> np.ndarray:
        """The elbow's axis in the lower bone's parent frame (chosen as Babylon does by default)."""
        return self._bend_axis.copy()

    @bend_axis.setter
    def bend_axis(self, value) -> None:
        self._bend_axis = _vector(value, f"{self._what} bend_axis", nonzero=True)

    @property
    def max_angle(self) -> float:
        return self._max_angle

    @max_angle.setter
    def max_angle(self, value) -> None:
        """Clamped to [0, pi], as Babylon's setter."""
        self._max_angle = min(max(finite_number(value, f"{self._what} max_angle"), 0.0), math.pi)

    @property
    def max_reach(self) -> float:
        """How far the chain reaches with the elbow opened to ``max_angle``."""
        a, b = self._upper_length, self._lower_length
        return math.sqrt(max(a * a + b * b - 2 * a * b * math.cos(self._max_angle), 0.0))

    @property
    def slerp_amount(self) -> float:
        return self._slerp_amount

    @slerp_amount.setter
    def slerp_amount(self, value) -> None:
        self._slerp_amount = finite_number(value, f"{self._what} slerp_amount")

    @property
    def lengths(self) -> tuple[float, float]:
        """(upper, lower) bone lengths in world units, as measured when the controller was made."""
        return self._upper_length, self._lower_length

    # --- the solve ---------------------------------------------------------------------------------
    def update(self) -> None:
        """Pose the two bones once (at most one skeleton update)."""
        what, tnode = self._what, self._tnode
        if self._target is None:
            raise ViewerError(f"{what}: no target_position to reach")
        upper, lower = self._upper, self._bone
        if self._pole_bone is not None:
            pole = self._pole_bone.get_absolute_position_from_local(self._pole_offset, tnode)
        elif self._pole_position is not None:
            pole = self._pole_position
        else:
            pole = np.zeros(3)
        origin = upper.get_absolute_position(tnode)
        up = pole - origin
        up = np.array([0.0, 1.0, 0.0]) if not up.any() else up / np.linalg.norm(up)
        to_target = self._target - origin
        distance = float(np.linalg.norm(to_target))
        if not distance > _TINY * max(1.0, float(np.abs(origin).max())):
            raise ViewerError(f"{what}: the target {self._target.tolist()} is at the upper bone "
                              f"{upper.name!r}'s position; IK needs a direction to reach in")
        y_axis = to_target / distance
        z_axis = np.cross(y_axis, up)
        if not np.linalg.norm(z_axis) > _TINY:
            raise ViewerError(f"{what}: the target and the pole target are in line with the upper bone "
                              f"{upper.name!r}, so the bending plane is undefined; move the pole target")
        z_axis /= np.linalg.norm(z_axis)
        x_axis = _normalized(np.cross(y_axis, z_axis))
        basis = _axes_matrix(x_axis, y_axis, z_axis)

        a, b = self._upper_length, self._lower_length
        reach = self.max_reach
        c = min(reach, distance) if reach > 0 else distance
        cos_a = min(max((b * b + c * c - a * a) / (2 * b * c), -1.0), 1.0)
        cos_b = min(max((c * c + a * a - b * b) / (2 * c * a), -1.0), 1.0)
        angle_b = math.acos(cos_b)
        angle_c = -math.acos(cos_a) - angle_b
        bend = self._bend_axis
        if self._right_handed:
            basis = _yaw_pitch_roll_matrix(0.0, 0.0, self._adjust_roll) @ basis
            basis = _axis_angle_matrix(bend, angle_b) @ basis
        else:
            basis = _axis_angle_matrix(bend * (-1.0, 1.0, 1.0), -angle_b) @ basis
        if self._pole_angle:
            basis = basis @ _axis_angle_matrix(y_axis, self._pole_angle)

        amount = self._slerp_amount
        if amount < 1:
            start = (self._upper_quaternion if self._slerping
                     else transforms.quaternion_from_rotation_matrix(self._upper_rotation))
            quaternion = _slerp(start, transforms.quaternion_from_rotation_matrix(basis), amount)
            angle_c = self._lower_angle * (1.0 - amount) + angle_c * amount
            upper.set_rotation_quaternion(quaternion, Space.WORLD, tnode)
            self._upper_quaternion = quaternion
            self._slerping = True
        else:
            upper.set_rotation_matrix(basis, Space.WORLD, tnode)
            self._upper_rotation = basis
            self._slerping = False
        lower.set_axis_angle(bend, angle_c, Space.LOCAL)
        self._lower_angle = angle_c


# --- look-at -------------------------------------------------------------------------------------
def _number_property(name: str, doc: str) -> property:
    """A settable finite number, stored as ``_name``."""

    def getter(self) -> float:
        return getattr(self, "_" + name)

    def setter(self, value) -> None:
        setattr(self, "_" + name, finite_number(value, f"{self._what} {name}"))

    return property(getter, setter, doc=doc)


def _angle_difference(a: float, b: float) -> float:
    difference = math.fmod(b - a, 2 * math.pi)
    if difference > math.pi:
        difference -= 2 * math.pi
    elif difference < -math.pi:
        difference += 2 * math.pi
    return difference


def _wrap_positive(angle: float) -> float:
    angle = math.fmod(angle, 2 * math.pi)
    return angle + 2 * math.pi if angle < 0 else angle


def _angle_between(a: float, b: float) -> float:
    difference = abs(_wrap_positive(a) - _wrap_positive(b))
    return 2 * math.pi - difference if difference > math.pi else difference


def _is_angle_between(angle: float, a: float, b: float) -> bool:
    angle, a, b = _wrap_positive(angle), _wrap_positive(a), _wrap_positive(b)
    if a < b:
        return a < angle < b
    return b < angle < a


class BoneLookController:
    """Turn ``bone`` so that its +Z axis (or the axes given by ``yaw_axis``/``pitch_axis``)
    points at ``target`` (world space), its up axis toward ``up_axis``.

    ``up_axis`` is in ``up_axis_space``: Space.LOCAL (the tnode's frame, Babylon's default: a
    glTF model whose placement node turns Z-up into Y-up wants Space.WORLD), Space.WORLD, or
    Space.BONE (the parent bone's frame; LOCAL for a root). Yaw and pitch are limited to
    [min_yaw, max_yaw] and [min_pitch, max_pitch] (radians, in the parent's frame);
    ``use_absolute_value_for_yaw`` checks |yaw| against the limits (Babylon's option);
    ``adjust_*`` turn the result by fixed angles; ``slerp_amount`` < 1 eases toward the target.
    Every constructor argument is also a settable attribute; ``update()`` turns the bone once.
    """

    def __init__(self, tnode, bone, target, min_yaw=None, max_yaw=None, min_pitch=None,
                 max_pitch=None, slerp_amount=1.0, up_axis=(0, 1, 0), up_axis_space=Space.LOCAL,
                 yaw_axis=None, pitch_axis=None, adjust_yaw=0.0, adjust_pitch=0.0,
                 adjust_roll=0.0, use_absolute_value_for_yaw=False):
        bone = _check_bone(bone, "BoneLookController")
        self._what = what = f"BoneLookController on bone {bone.name!r}"
        self._bone = bone
        self._tnode = _check_tnode(tnode, what)
        self.target = target
        self.min_yaw = -math.pi if min_yaw is None else min_yaw
        self.max_yaw = math.pi if max_yaw is None else max_yaw
        self.min_pitch = -math.pi if min_pitch is None else min_pitch
        self.max_pitch = math.pi if max_pitch is None else max_pitch
        self.slerp_amount = slerp_amount
        self.up_axis = up_axis
        self.up_axis_space = up_axis_space
        self._yaw_axis = self._pitch_axis = None
        self._axes_change = self._axes_change_inverse = None
        self.yaw_axis = yaw_axis
        self.pitch_axis = pitch_axis
        self.adjust_yaw, self.adjust_pitch, self.adjust_roll = adjust_yaw, adjust_pitch, adjust_roll
        self.use_absolute_value_for_yaw = bool(use_absolute_value_for_yaw)
        self._bone_quaternion = np.array([0.0, 0.0, 0.0, 1.0])
        self._slerping = False
        self._first_frame_skipped = False

    def __repr__(self) -> str:
        return f"BoneLookController({self._bone.name!r})"

    # --- settable attributes ---------------------------------------------------------------------
    @property
    def bone(self) -> Bone:
        return self._bone

    @property
    def tnode(self):
        return self._tnode

    @tnode.setter
    def tnode(self, value) -> None:
        self._tnode = _check_tnode(value, self._what)

    @property
    def target(self) -> np.ndarray:
        return self._target.copy()

    @target.setter
    def target(self, value) -> None:
        self._target = _vector(value, f"{self._what} target")

    min_yaw = _number_property("min_yaw", "radians, in the parent's frame (default -pi: no limit)")
    max_yaw = _number_property("max_yaw", "radians (default pi: no limit)")
    min_pitch = _number_property("min_pitch", "radians (default -pi: no limit)")
    max_pitch = _number_property("max_pitch", "radians (default pi: no limit)")
    slerp_amount = _number_property("slerp_amount", "1: turn at once; less: ease, from the second update on")
    adjust_yaw = _number_property("adjust_yaw", "radians added about the bone's yaw axis")
    adjust_pitch = _number_property("adjust_pitch", "radians added about the bone's pitch axis")
    adjust_roll = _number_property("adjust_roll", "radians added about the bone's roll axis")

    @property
    def up_axis(self) -> np.ndarray:
        return self._up_axis.copy()

    @up_axis.setter
    def up_axis(self, value) -> None:
        self._up_axis = _vector(value, f"{self._what} up_axis", nonzero=True)

    @property
    def up_axis_space(self) -> Space:
        return self._up_axis_space

    @up_axis_space.setter
    def up_axis_space(self, value) -> None:
        if isinstance(value, str) and value.upper() in Space.__members__:
            value = Space[value.upper()]
        self._up_axis_space = checked_space(value, f"{self._what} up_axis_space")

    @property
    def yaw_axis(self) -> np.ndarray | None:
        """The bone's own axis that yaw turns about (None: +Y)."""
        return None if self._yaw_axis is None else self._yaw_axis.copy()

    @yaw_axis.setter
    def yaw_axis(self, value) -> None:
        self._yaw_axis = None if value is None else _vector(value, f"{self._what} yaw_axis", nonzero=True)
        self._update_axes_change()

    @property
    def pitch_axis(self) -> np.ndarray | None:
        """The bone's own axis that pitch turns about (None: +X)."""
        return None if self._pitch_axis is None else self._pitch_axis.copy()

    @pitch_axis.setter
    def pitch_axis(self, value) -> None:
        self._pitch_axis = None if value is None else _vector(value, f"{self._what} pitch_axis", nonzero=True)
        self._update_axes_change()

    def _update_axes_change(self) -> None:
        """Babylon's _transformYawPitch: from the bone's own axes to (pitch, yaw, roll)."""
        if self._yaw_axis is None and self._pitch_axis is None:
            self._axes_change = self._axes_change_inverse = None
            return
        yaw = np.array([0.0, 1.0, 0.0]) if self._yaw_axis is None else _normalized(self._yaw_axis)
        pitch = np.array([1.0, 0.0, 0.0]) if self._pitch_axis is None else _normalized(self._pitch_axis)
        roll = np.cross(pitch, yaw)
        inverse = _axes_matrix(pitch, yaw, roll)
        if not abs(np.linalg.det(inverse)) > _TINY:
            raise ViewerError(f"{self._what}: yaw_axis {yaw.tolist()} and pitch_axis {pitch.tolist()} are parallel")
        self._axes_change_inverse = inverse
        self._axes_change = np.linalg.inv(inverse)

    # --- the solve ---------------------------------------------------------------------------------
    def update(self) -> None:
        """Turn the bone toward the target once (at most one skeleton update)."""
        if self._slerp_amount < 1 and not self._first_frame_skipped:
            self._first_frame_skipped = True  # Babylon skips the first frame when slerping
            return
        what, tnode, bone = self._what, self._tnode, self._bone
        placement = _Placement(tnode, what)
        parent = bone.get_parent()
        space = self._up_axis_space
        if space is Space.BONE and parent is None:
            space = Space.LOCAL  # Babylon: a root has no bone space for the up axis
        origin = bone.get_absolute_position(tnode)
        target = self._target
        if not np.linalg.norm(target - origin) > _TINY * max(1.0, float(np.abs(origin).max())):
            raise ViewerError(f"{what}: the target {target.tolist()} is at the bone's position; "
                              "there is no direction to look in")

        up = self._up_axis.copy()
        if space is Space.BONE:
            if self._axes_change_inverse is not None:
                up = _point(self._axes_change_inverse, up)
            up = parent.get_direction(up, tnode)
        elif space is Space.LOCAL:
            up = placement.direction(up)
            if np.any(placement.scaling != 1):
                up = _normalized(up)

        if self._check_yaw() or self._check_pitch():
            target = self._limited_target(target, origin, up, space, parent, placement)

        z_axis = _normalized(target - origin)
        x_axis = _normalized(np.cross(up, z_axis))
        y_axis = _normalized(np.cross(z_axis, x_axis))
        if not (x_axis.any() and y_axis.any() and z_axis.any()):
            return  # the target is straight along the up axis: Babylon leaves the bone as it is
        rotation = _axes_matrix(x_axis, y_axis, z_axis)
        if self._adjust_yaw or self._adjust_pitch or self._adjust_roll:
            rotation = _yaw_pitch_roll_matrix(self._adjust_yaw, self._adjust_pitch, self._adjust_roll) @ rotation
        if self._axes_change is not None:
            rotation = self._axes_change @ rotation
        scaling = np.array(bone.get_scale())
        if self._slerp_amount < 1:
            if not self._slerping:
                self._bone_quaternion = np.array(bone.get_rotation_quaternion(Space.WORLD, tnode))
            quaternion = _slerp(self._bone_quaternion, transforms.quaternion_from_rotation_matrix(rotation),
                                self._slerp_amount)
            bone.set_rotation_quaternion(quaternion, Space.WORLD, tnode)
            self._bone_quaternion = quaternion
            self._slerping = True
        else:
            bone.set_rotation_matrix(rotation, Space.WORLD, tnode)
            self._slerping = False
        bone.set_scale(scaling)

    def _limited_target(self, target, origin, up, space, parent, placement) -> np.ndarray:
        """The target moved into the yaw and pitch limits (Babylon's steps, in its frame)."""
        tnode = self._tnode
        if space is Space.BONE and up[1] == 1 and parent is not None:
            frame = parent.get_rotation_matrix(Space.WORLD, tnode)
        elif space is Space.LOCAL and up[1] == 1 and parent is None:
            frame = placement.world
        else:
            forward = np.array([0.0, 0.0, 1.0])
            if self._axes_change_inverse is not None:
                forward = _point(self._axes_change_inverse, forward)
            forward = parent.get_direction(forward, tnode) if parent is not None else placement.direction(forward)
            right = np.cross(up, forward)
            if not np.linalg.norm(right) > _TINY:
                raise ViewerError(f"{self._what}: the yaw/pitch limits are undefined: the up axis is along the "
                                  "forward axis of their frame (give another up_axis or yaw/pitch axes)")
            right = _normalized(right)
            frame = _axes_matrix(right, up, np.cross(right, up))
        frame_inverse = np.linalg.inv(frame)

        planar = None
        if self._check_pitch():
            local = _point(frame_inverse, target - origin)
            planar = math.hypot(local[0], local[2])
            pitch = math.atan2(local[1], planar)
            limited = pitch
            if pitch > self._max_pitch:
                local[1], limited = math.tan(self._max_pitch) * planar, self._max_pitch
            elif pitch < self._min_pitch:
                local[1], limited = math.tan(self._min_pitch) * planar, self._min_pitch
            if limited != pitch:
                target = _point(frame, local) + origin

        if self._check_yaw():
            local = _point(frame_inverse, target - origin)
            yaw = math.atan2(local[0], local[2])
            checked = abs(yaw) if self.use_absolute_value_for_yaw else yaw
            limited = yaw
            low, high = self._min_yaw, self._max_yaw
            middle = _angle_difference(low, high) * 0.5 + low
            wide = high - low > math.pi
            if checked > high or checked < low:
                if planar is None:
                    planar = math.hypot(local[0], local[2])
                if wide:
                    if _is_angle_between(yaw, high, middle):
                        limited = high
                    elif _is_angle_between(yaw, middle, low):
                        limited = low
                elif checked > high:
                    limited = high
                elif checked < low:
                    limited = low
                if limited != yaw:
                    local[2], local[0] = math.cos(limited) * planar, math.sin(limited) * planar
                    if not wide and yaw < 0 and self.use_absolute_value_for_yaw:
                        local[0] = -local[0]
            if self._slerping and wide:
                # Would easing cross the forbidden zone? Then turn the short way round it.
                forward = np.array([0.0, 0.0, 1.0])
                if self._axes_change_inverse is not None:
                    forward = _point(self._axes_change_inverse, forward)
                bone_rotation = placement.world @ _quaternion_matrix(self._bone_quaternion)
                forward = _point(frame_inverse, _point(bone_rotation, forward))
                bone_yaw = math.atan2(forward[0], forward[2])
                if _angle_between(bone_yaw, yaw) > _angle_between(bone_yaw, middle):
                    if planar is None:
                        planar = math.hypot(local[0], local[2])
                    if _angle_between(bone_yaw, low) < _angle_between(bone_yaw, high):
                        limited = bone_yaw + math.pi * 0.75
                    else:
                        limited = bone_yaw - math.pi * 0.75
                    local[2], local[0] = math.cos(limited) * planar, math.sin(limited) * planar
            if limited != yaw:
                target = _point(frame, local) + origin
        return target

    def _check_yaw(self) -> bool:
        return self._max_yaw != math.pi or self._min_yaw != -math.pi

    def _check_pitch(self) -> bool:
        return self._max_pitch != math.pi or self._min_pitch != -math.pi
