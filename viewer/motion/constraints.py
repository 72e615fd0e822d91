"""Node constraints (VRMC_node_constraint 1.0): roll, aim and rotation constraints, computed as
@pixiv/three-vrm-node-constraint 3.5 computes them.

Model code (numpy, no GL). Each constraint writes its destination node's local rotation from
the destination's rest rotation (the rotation it had when the constraint was made) and its
source, slerped by ``weight`` (0: the rest, 1: the full constraint):

- rotation: rest x (source's rest^-1 x source), the source's local turn since its rest;
- roll: that turn measured in the destination's rest frame, with only its twist about
  ``roll_axis`` (X, Y or Z) kept (the swing taken out: from the rolled axis back to the axis);
- aim: the destination's ``aim_axis`` (PositiveX ... NegativeZ) turned, in world space, to point
  at the source's world position.

A constraint replaces whatever the motion wrote to its destination's rotation. They run in
three-vrm's order (a constraint whose source, or an ancestor of it, is another's destination runs
after that one; an aim's destination's parent counts too), after the motion and the expressions
and before the spring bones: the springs' step applies them first, and ``Scene.prepare()``
applies them when the pose they read changed since (a frame drawn without springs).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ViewerError
from ..model.transforms import determinant3, quaternion_from_rotation_matrix_one

ROLL_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
AIM_AXES = {"PositiveX": (1.0, 0.0, 0.0), "NegativeX": (-1.0, 0.0, 0.0), "PositiveY": (0.0, 1.0, 0.0),
            "NegativeY": (0.0, -1.0, 0.0), "PositiveZ": (0.0, 0.0, 1.0), "NegativeZ": (0.0, 0.0, -1.0)}
KINDS = ("roll", "aim", "rotation")
_EPS = 1e-8  # three.js Quaternion.setFromUnitVectors' threshold


# --- quaternions (x, y, z, w), as three.js computes them -----------------------------------------
# Plain floats: a constraint is a few dozen operations on 4-vectors, where numpy's per-call cost
# would be most of a frame's.
def _mul(a, b) -> tuple:
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (ax * bw + aw * bx + ay * bz - az * by, ay * bw + aw * by + az * bx - ax * bz,
            az * bw + aw * bz + ax * by - ay * bx, aw * bw - ax * bx - ay * by - az * bz)


def _inverse(q) -> tuple:
    return (-q[0], -q[1], -q[2], q[3])


def _rotate(q, v) -> tuple:
    """v turned by q (three.js Vector3.applyQuaternion)."""
    qx, qy, qz, qw = q
    vx, vy, vz = v
    tx, ty, tz = 2 * (qy * vz - qz * vy), 2 * (qz * vx - qx * vz), 2 * (qx * vy - qy * vx)
    return (vx + qw * tx + qy * tz - qz * ty, vy + qw * ty + qz * tx - qx * tz, vz + qw * tz + qx * ty - qy * tx)


def _from_unit_vectors(a, b) -> tuple:
    ax, ay, az = a
    bx, by, bz = b
    r = ax * bx + ay * by + az * bz + 1.0
    if r < _EPS:  # opposite: any perpendicular axis, three.js's choice
        q = (-ay, ax, 0.0, 0.0) if abs(ax) > abs(az) else (0.0, -az, ay, 0.0)
    else:
        q = (ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx, r)
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


def _slerp(a, b, t: float) -> tuple:
    """three.js Quaternion.slerp (0.187): the short way round; nearly equal ones lerped."""
    dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
    if dot < 0:
        b, dot = (-b[0], -b[1], -b[2], -b[3]), -dot
    s = 1.0 - t
    if dot < 0.9995:
        theta = math.acos(dot)
        sin = math.sin(theta)
        s, t = math.sin(s * theta) / sin, math.sin(t * theta) / sin
        return (a[0] * s + b[0] * t, a[1] * s + b[1] * t, a[2] * s + b[2] * t, a[3] * s + b[3] * t)
    q = (a[0] * s + b[0] * t, a[1] * s + b[1] * t, a[2] * s + b[2] * t, a[3] * s + b[3] * t)
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n) if n > 0 else (0.0, 0.0, 0.0, 1.0)


def _rotation_of(world) -> tuple:
    """The rotation of a world matrix (ours: row vectors, so its rows are three.js's columns),
    its scale taken out as three.js's Matrix4.decompose does (a mirror flips x)."""
    rows = world[:3, :3]
    det = float(determinant3(rows))
    if det == 0:
        return (0.0, 0.0, 0.0, 1.0)
    scales = [math.sqrt(float(row @ row)) for row in rows]
    if det < 0:
        scales[0] = -scales[0]
    return tuple(quaternion_from_rotation_matrix_one(rows / np.array(scales)[:, None]).tolist())


def _position(node) -> tuple:
    return tuple(node.get_world_matrix()[3, :3].tolist())


class Constraint:
    """One node constraint: ``kind`` "roll", "aim" or "rotation" on ``destination`` from ``source``."""

    def __init__(self, kind: str, destination, source, weight=1.0, axis: str | None = None):
        if kind not in KINDS:
            raise ViewerError(f"node constraint on {destination.name!r}: kind {kind!r} is not roll, aim or rotation")
        what = f"{kind} constraint on {destination.name!r}"
        if source is None:
            raise ViewerError(f"{what}: it has no source node")
        if source is destination:
            raise ViewerError(f"{what}: its source is the node itself")
        try:
            weight = float(weight)
        except (TypeError, ValueError):
            raise ViewerError(f"{what}: weight {weight!r} is not a number") from None
        if not 0.0 <= weight <= 1.0:  # NaN too
            raise ViewerError(f"{what}: weight {weight!r} is not between 0 and 1")
        axes = ROLL_AXES if kind == "roll" else AIM_AXES if kind == "aim" else None
        if axes is not None:
            axis = next(iter(axes)) if axis is None else axis  # three-vrm's default: X, PositiveX
            if axis not in axes:
                name = "rollAxis" if kind == "roll" else "aimAxis"
                raise ViewerError(f"{what}: {name} {axis!r} is not one of {', '.join(axes)}")
            self.vector = axes[axis]
        self.kind, self.destination, self.source, self.weight, self.axis = kind, destination, source, weight, axis
        self.set_rest()

    @property
    def dependencies(self) -> list:
        """The nodes whose pose this constraint reads (besides its destination's rest)."""
        parent = self.destination.parent
        return [self.source] + ([parent] if self.kind == "aim" and parent is not None else [])

    def set_rest(self) -> None:
        """Take the destination's and source's rotations now as their rest (three-vrm's setInitState)."""
        self.rest = tuple(self.destination.rotation_quaternion.tolist())
        self.source_rest_inverse = _inverse(tuple(self.source.rotation_quaternion.tolist()))
        self._roll_base = _mul(self.source_rest_inverse, self.rest)

    def target(self) -> tuple:
        """The destination's rotation at full weight, from the pose as it is now."""
        source = tuple(self.source.rotation_quaternion.tolist())
        if self.kind == "rotation":
            return _mul(self.rest, _mul(self.source_rest_inverse, source))
        if self.kind == "roll":
            delta = _mul(_mul(_inverse(self.rest), source), self._roll_base)
            rolled = _rotate(delta, self.vector)
            return _mul(_mul(self.rest, _from_unit_vectors(rolled, self.vector)), delta)
        parent = self.destination.parent
        turn = (0.0, 0.0, 0.0, 1.0) if parent is None else _rotation_of(parent.get_world_matrix())
        a0 = _rotate(turn, _rotate(self.rest, self.vector))
        (sx, sy, sz), (dx, dy, dz) = _position(self.source), _position(self.destination)
        a1 = (sx - dx, sy - dy, sz - dz)
        length = math.sqrt(a1[0] * a1[0] + a1[1] * a1[1] + a1[2] * a1[2])
        if length > 0:
            a1 = (a1[0] / length, a1[1] / length, a1[2] / length)
        return _mul(_mul(_mul(_inverse(turn), _from_unit_vectors(a0, a1)), turn), self.rest)

    def apply(self) -> None:
        q = _slerp(self.rest, self.target(), self.weight)
        self.destination.assign_trs(rotation_quaternion=q)


class NodeConstraints:
    """A scene's node constraints (``scene.constraints``): ``apply()`` writes every destination."""

    def __init__(self):
        self.constraints: list[Constraint] = []
        self.enabled = True
        self._order: list[Constraint] | None = None
        self._watched: list = []
        self._stamp = None

    def __len__(self) -> int:
        return len(self.constraints)

    def __bool__(self) -> bool:
        return True

    def __iter__(self):
        return iter(self.constraints)

    def add(self, constraint: Constraint) -> Constraint:
        """Add a constraint; one whose dependencies loop back to it is refused."""
        constraints = self.constraints + [constraint]
        order = _ordered(constraints)  # raises for a circle, leaving the list as it was
        self.constraints, self._order = constraints, order
        watched = {}
        for c in constraints:
            for node in (c.destination, *c.dependencies):
                while node is not None:
                    watched[id(node)] = node
                    node = node.parent
        self._watched = list(watched.values())
        self._stamp = None
        return constraint

    def apply(self) -> None:
        """Every constraint, dependencies first (three-vrm's VRMNodeConstraintManager.update)."""
        if not self.constraints or not self.enabled:
            return
        for constraint in self._order:
            constraint.apply()
        self.settled()

    def settled(self) -> None:
        """The pose as it is now needs no constraint applied again (the springs moved their bones
        after the constraints, as three-vrm does: the next frame's constraints see them)."""
        self._stamp = [node.version for node in self._watched]

    def apply_if_changed(self) -> None:
        """``apply()`` when a node a constraint reads or writes changed since the last apply."""
        if self.constraints and self.enabled and [node.version for node in self._watched] != self._stamp:
            self.apply()

    def unsettle(self) -> None:
        """The next ``apply_if_changed()`` applies them whatever changed (the pose was put back)."""
        self._stamp = None

    def put_at_rest(self) -> None:
        """Every destination back at its rest rotation: the pose the constraints found (turned
        off, the nodes show the file's pose, or a clip's where it keys them)."""
        for constraint in self.constraints:
            constraint.destination.assign_trs(rotation_quaternion=constraint.rest)
        self.unsettle()

    def describe(self) -> list[dict]:
        """One entry per constraint (what ``info`` lists)."""
        return [{"node": c.destination.name, "kind": c.kind, "source": c.source.name, "weight": c.weight,
                 **({} if c.axis is None else {"axis": c.axis})} for c in self.constraints]


def _ordered(constraints: list[Constraint]) -> list[Constraint]:
    """The constraints in three-vrm's update order; a circle is an error."""
    on_node: dict[int, list[Constraint]] = {}
    for c in constraints:
        on_node.setdefault(id(c.destination), []).append(c)
    done: dict[int, Constraint] = {}
    tried: set[int] = set()
    order: list[Constraint] = []

    def visit(c: Constraint) -> None:
        if id(c) in done:
            return
        if id(c) in tried:
            raise ViewerError(f"{c.kind} constraint on {c.destination.name!r}: its sources depend on it in a circle")
        tried.add(id(c))
        for node in c.dependencies:
            chain = []
            while node is not None:
                chain.append(node)
                node = node.parent
            for ancestor in reversed(chain):  # from the root down, as three-vrm walks them
                for other in on_node.get(id(ancestor), ()):
                    visit(other)
        order.append(c)
        done[id(c)] = c

    for c in constraints:
        visit(c)
    return order


def constraints_of(scene) -> NodeConstraints:
    constraints = scene.__dict__.get("_constraints")
    if constraints is None:
        constraints = scene._constraints = NodeConstraints()
    return constraints


def written_as_drawn(scene) -> str | None:
    """A writer's warning where ``scene``'s node constraints are on: glTF (without
    VRMC_node_constraint) and USD write the pose as drawn, the constraints applied, and a clip's
    keys without them. None where there are none, or they are off."""
    constraints = scene.__dict__.get("_constraints")  # none made yet: the scene has none
    if constraints is None or not len(constraints) or not constraints.enabled:
        return None
    return "the node constraints are written as the pose shows them (applied)" + (
        "; the clips move the constrained nodes as keyed, without them: export --mix FILE --bake bakes them "
        "into a clip" if scene.animations else "")
