"""Spring bones: secondary motion (tails, hair) as @pixiv/three-vrm-springbone 3.5 computes it.

Model code (numpy, no GL). A joint is a bone with the node its tail points at (VRMC_springBone
1.0 pairs each joint with the next one of its spring; the last bone of a chain added by hand,
having no child, gets three-vrm's 0.07 tail along its own offset). Each step, per joint, in
three-vrm's order (parents and colliders' nodes first):

  next = tail + (tail - prev) * (1 - drag)       (in the ``center`` node's space, else world)
         + world bone axis * stiffness * dt + gravity dir * gravity power * dt
  next = bone position + normalised(next - bone position) * world bone length
  push ``next`` out of each collider, keep the length
  rotation = initial rotation * (bone axis -> next, seen from the initial parent frame)

The world matrices read follow three.js's cache as three-vrm leaves it (the scene's matrices
brought up to date before the update; a joint's parent re-read after that parent's joint moved,
its child read as it was when the step began), so the numbers equal three-vrm's.

Deterministic playback: :meth:`SpringBones.advance_to` simulates from time 0 at a fixed step
(1/60 s), so the same time always gives the same pose, whatever the frame rate (UniVRM #425).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ViewerError

STEP = 1.0 / 60.0  # the fixed step of advance_to (seconds)
_EPS = 1e-8  # three.js Quaternion.setFromUnitVectors' threshold


def _number(value, what: str, minimum=None) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ViewerError(f"{what}: {value!r} is not a number") from None
    if not math.isfinite(number):
        raise ViewerError(f"{what}: {value!r} is not a finite number")
    if minimum is not None and number < minimum:
        raise ViewerError(f"{what}: {number:g} is below {minimum:g}")
    return number


def _vector(value, what: str) -> np.ndarray:
    try:
        vector = np.asarray(value, dtype=np.float64).reshape(3)
    except (TypeError, ValueError):
        raise ViewerError(f"{what}: {value!r} is not three numbers") from None
    if not np.isfinite(vector).all():
        raise ViewerError(f"{what}: {value!r} is not finite")
    return vector


class Collider:
    """A sphere, capsule or plane on a node (three-vrm's VRMSpringBoneColliderShape*)."""

    def __init__(self, node, shape: str = "sphere", offset=(0, 0, 0), radius=0.0, tail=(0, 0, 0),
                 normal=(0, 0, 1), inside: bool = False):
        if shape not in ("sphere", "capsule", "plane"):
            raise ViewerError(f"spring collider on {node.name!r}: shape {shape!r} is not sphere, capsule or plane")
        what = f"spring collider on {node.name!r}"
        self.node = node
        self.shape = shape
        self.offset = _vector(offset, f"{what} offset")
        self.radius = _number(radius, f"{what} radius", 0.0)
        self.tail = _vector(tail, f"{what} tail")
        self.normal = _vector(normal, f"{what} normal")
        self.inside = bool(inside)

    def matrix(self, world: np.ndarray) -> np.ndarray:
        """The collider matrix (column vectors): the node's world with the offset moved into it."""
        m = world.copy()
        m[:3, 3] = world[:3, :3] @ self.offset + world[:3, 3]
        return m

    def collide(self, m: np.ndarray, point: np.ndarray, radius: float):
        """(distance, push direction) of a sphere at ``point`` against this collider; the
        distance is negative when they overlap (three-vrm's calculateCollision)."""
        centre = m[:3, 3]
        if self.shape == "plane":
            normal = np.linalg.inv(m[:3, :3]).T @ self.normal  # three's normal matrix
            normal = normal / math.sqrt(normal @ normal)
            return float((point - centre) @ normal) - radius, normal
        target = point - centre
        if self.shape == "capsule":
            axis = m[:3, :3] @ (self.tail - self.offset)
            length_sq = float(axis @ axis)
            dot = float(axis @ target)
            if dot <= 0:
                pass
            elif length_sq <= dot:
                target = target - axis
            else:
                target = target - axis * (dot / length_sq)
        length = math.sqrt(float(target @ target))
        if self.inside:
            distance = self.radius - radius - length
        else:
            distance = length - radius - self.radius
        if distance < 0:
            target = target * (1.0 / length)
            if self.inside:
                target = -target
        return distance, target


class Joint:
    """One spring joint: ``bone`` swings so that its ``child`` (or, without one, three-vrm's
    0.07 tail) trails behind."""

    def __init__(self, bone, child=None, stiffness=1.0, gravity_power=0.0, gravity_dir=(0, -1, 0), drag=0.4,
                 hit_radius=0.0, colliders=(), center=None):
        what = f"spring joint {bone.name!r}"
        self.bone = bone
        self.child = child
        self.stiffness = _number(stiffness, f"{what} stiffness", 0.0)
        self.gravity_power = _number(gravity_power, f"{what} gravity power", 0.0)
        self.gravity_dir = _vector(gravity_dir, f"{what} gravity direction")
        self.drag = _number(drag, f"{what} drag", 0.0)
        if self.drag > 1.0:
            raise ViewerError(f"{what} drag: {self.drag:g} is above 1")
        self.hit_radius = _number(hit_radius, f"{what} hit radius", 0.0)
        self.colliders = list(colliders)
        self.center = center


def _local(node) -> np.ndarray:
    """The node's local matrix with column vectors (three.js's layout; ours is its transpose)."""
    return node.get_local_matrix().T


def _from_unit_vectors(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """three.js Quaternion.setFromUnitVectors, (x, y, z, w)."""
    r = float(a @ b) + 1.0
    if r < _EPS:
        if abs(a[0]) > abs(a[2]):
            q = np.array([-a[1], a[0], 0.0, 0.0])
        else:
            q = np.array([0.0, -a[2], a[1], 0.0])
    else:
        q = np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0], r])
    return q / math.sqrt(q @ q)


def _multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Quaternion product a * b, (x, y, z, w)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([ax * bw + aw * bx + ay * bz - az * by, ay * bw + aw * by + az * bx - ax * bz,
                     az * bw + aw * bz + ax * by - ay * bx, aw * bw - ax * bx - ay * by - az * bz])


def _normalised(v: np.ndarray) -> np.ndarray:
    length = math.sqrt(float(v @ v))
    return v / length if length > 0 else v


class SpringBones:
    """A scene's spring chains (``scene.springs``): ``update(dt)`` steps every joint,
    ``reset()`` returns them to their rest, ``add_chain(root, ...)`` adds a chain by hand."""

    def __init__(self, scene):
        self._scene = scene
        self.joints: list[Joint] = []
        self.chains: list[dict] = []  # name, joints (for info and the panel)
        self.enabled = True
        self._order = None
        self._time = None  # advance_to's simulated time
        self._kids = None
        self._plan = None
        self._held = set()  # id(node) of joints the user holds (grab())
        self._carry = 0.0  # tick()'s time not yet stepped (less than one fixed step)

    def __len__(self) -> int:
        return len(self.joints)

    def __bool__(self) -> bool:
        return True

    # --- building ----------------------------------------------------------------------------
    def _node(self, name_or_node, what: str):
        if not isinstance(name_or_node, str):
            return name_or_node
        # a skeleton's bone first (a mesh node may share its name), then any node
        bone = self._scene.find_bone(name_or_node)
        if bone is not None and getattr(bone, "_linked_node", None) is not None:
            return bone._linked_node
        for node in self._scene.nodes:
            if node.name == name_or_node:
                return node
        names = ", ".join(n.name for n in self._scene.nodes[:15])
        raise ViewerError(f"{what}: no node or bone named {name_or_node!r} (this model's: {names}, ...)")

    def add_joint(self, joint: Joint, chain: str | None = None) -> Joint:
        self.joints.append(joint)
        self._order = None
        self._init_joint(joint)
        if chain is not None:
            if not self.chains or self.chains[-1]["name"] != chain:
                self.chains.append({"name": chain, "joints": []})
            self.chains[-1]["joints"].append(joint)
        return joint

    def add_chain(self, root_bone, stiffness=1.0, drag=0.4, gravity=0.0, gravity_dir=(0, -1, 0), radius=0.0,
                  colliders=(), center=None, name=None) -> list[Joint]:
        """Springs from ``root_bone`` down its first children (skin joints first) to the end (names or nodes).

        ``colliders``: Collider objects, or dicts ``{"node": name, "shape": "sphere", "radius": r,
        "offset": (x, y, z), "tail": (x, y, z), "normal": (x, y, z), "inside": False}``.
        """
        root = self._node(root_bone, "add_chain")
        made = [c if isinstance(c, Collider) else
                Collider(self._node(c["node"], "add_chain collider"), **{k: v for k, v in c.items() if k != "node"})
                for c in colliders]
        centre = None if center is None else self._node(center, "add_chain center")
        joints_of_skins = {id(b._linked_node) for sk in self._scene.skeletons for b in sk.bones
                           if getattr(b, "_linked_node", None) is not None}
        bones = [root]
        while True:  # down the first child that is a skin's joint (a mesh node is no bone), else the first
            children = self._children(bones[-1])
            if not children:
                break
            bones.append(next((c for c in children if id(c) in joints_of_skins), children[0]))
        joints = []
        chain = name or root.name
        for i, bone in enumerate(bones):
            child = bones[i + 1] if i + 1 < len(bones) else None
            joints.append(self.add_joint(Joint(bone, child, stiffness, gravity, gravity_dir, drag, radius, made,
                                               centre), chain))
        return joints

    def chain(self, chain) -> dict:
        """A chain of ``chains`` by its name or index, or the chain itself."""
        if isinstance(chain, dict) and any(c is chain for c in self.chains):
            return chain
        if isinstance(chain, int) and not isinstance(chain, bool) and -len(self.chains) <= chain < len(self.chains):
            return self.chains[chain]
        for c in self.chains:
            if c["name"] == chain:
                return c
        names = ", ".join(repr(c["name"]) for c in self.chains[:10]) or "none"
        raise ViewerError(f"spring chain {chain!r}: no such chain (this model's: {names})")

    def set_chain(self, chain, stiffness=None, drag=None, gravity=None, radius=None) -> None:
        """Every joint of ``chain`` (a name, an index or the chain) gets the numbers given (None
        keeps a joint's own): stiffness, drag (0 to 1), gravity power and hit radius, checked as
        add_chain checks them, all before any is taken: a refused one changes nothing."""
        chain = self.chain(chain)
        what = f"spring chain {chain['name']!r}"
        values = {}
        for field, value, label in (("stiffness", stiffness, "stiffness"), ("drag", drag, "drag"),
                                    ("gravity_power", gravity, "gravity power"), ("hit_radius", radius, "hit radius")):
            if value is not None:
                values[field] = _number(value, f"{what} {label}", 0.0)
        if values.get("drag", 0.0) > 1.0:
            raise ViewerError(f"{what} drag: {values['drag']:g} is above 1")
        for joint in chain["joints"]:
            for field, value in values.items():
                setattr(joint, field, value)
        self.changed()

    def grab(self, nodes) -> None:
        """Joints on these nodes (bones being dragged) keep the rotation they are given instead of
        swinging: their tails follow them (so the joints below swing after them), and swing again,
        with the motion they had, once ``let_go()`` lets them go."""
        joints = {id(j.bone) for j in self.joints}  # only joints: others leave the compiled step on
        self._held = {id(getattr(n, "_linked_node", None) or n) for n in nodes} & joints

    def let_go(self) -> None:
        self._held = set()

    def _children(self, node) -> list:
        if self._kids is None:
            self._kids = {}
            for other in self._scene.nodes:
                if other.parent is not None:
                    self._kids.setdefault(id(other.parent), []).append(other)
        return self._kids.get(id(node), [])

    # --- state -------------------------------------------------------------------------------
    def _world(self, node) -> np.ndarray:
        return node.get_world_matrix().T

    def _init_joint(self, j: Joint) -> None:
        """three-vrm's setInitState."""
        self._plan = None
        j.initial_local = _local(j.bone).copy()
        j.initial_rotation = np.array(j.bone.rotation_quaternion, dtype=np.float64)
        if j.child is not None:
            j.initial_child = np.array(j.child.position, dtype=np.float64)
        else:
            j.initial_child = _normalised(np.array(j.bone.position, dtype=np.float64)) * 0.07
        j.axis = _normalised(j.initial_child)
        self._reset_tail(j)

    def _to_center(self, j: Joint) -> np.ndarray:
        return np.eye(4) if j.center is None else np.linalg.inv(self._world(j.center))

    def changed(self) -> None:
        """Say that a joint's numbers or colliders were changed in place (the compiled step
        copies them once)."""
        self._plan = None

    def _reset_tail(self, j: Joint) -> None:
        world = self._world(j.bone)
        tail = world[:3, :3] @ j.initial_child + world[:3, 3]
        m = self._to_center(j)
        j.tail = m[:3, :3] @ tail + m[:3, 3]
        j.prev = j.tail.copy()
        if self._plan is not None:
            self._plan.shared = False

    def clear(self) -> None:
        """Drop every joint and chain (after a bake keyed their swing: none left to write or to
        swing again); the bones keep the rotations they have now, and ``enabled`` stays as it is."""
        self.joints = []
        self.chains = []
        self._order = self._time = self._kids = self._plan = None
        self._held = set()
        self._carry = 0.0

    def reset(self) -> None:
        """Every joint back to its initial rotation and at rest (three-vrm's reset)."""
        for j in self._sorted():
            j.bone.assign_trs(rotation_quaternion=j.initial_rotation)
            self._reset_tail(j)
        self._time = None

    def _sorted(self) -> list[Joint]:
        """three-vrm's _sortJoints: a joint after the joints on its parent's ancestors and on its
        colliders' nodes' ancestors."""
        if self._order is not None:
            return self._order
        by_node = {}
        for j in self.joints:
            by_node.setdefault(id(j.bone), []).append(j)
        order, tried, done = [], set(), set()

        def ancestors_from_root(node):
            chain = []
            while node is not None:
                chain.append(node)
                node = node.parent
            return reversed(chain)

        def insert(j):
            if id(j) in done or id(j) in tried:
                return
            tried.add(id(j))
            deps = ([j.bone.parent] if j.bone.parent is not None else []) + [c.node for c in j.colliders]
            for dep in deps:
                for anc in ancestors_from_root(dep):
                    for other in by_node.get(id(anc), ()):
                        insert(other)
            order.append(j)
            done.add(id(j))

        for j in self.joints:
            insert(j)
        self._order = order
        read = {}
        for j in order:
            for node in (j.bone.parent, j.child, j.center, *(c.node for c in j.colliders)):
                if node is not None:
                    read[id(node)] = node
        self._read_nodes = list(read.values())
        return order

    # --- stepping ----------------------------------------------------------------------------
    def update(self, dt: float) -> None:
        """Step every joint by ``dt`` seconds (three-vrm's VRMSpringBoneManager.update, the
        scene's matrices taken as they are now). The compiled kernel runs it where it is built
        (csrc/ckernel.c's spring_step); this module's numpy step is the reference."""
        if not self.joints or not self.enabled:
            return
        dt = float(dt)
        if not dt > 0:
            return
        # three-vrm's frame: the node constraints after the motion, then the springs
        constraints = self._scene.__dict__.get("_constraints")
        if constraints is not None:
            constraints.apply()
        self._step(dt)
        if constraints is not None:
            constraints.settled()  # the springs' bones are the next step's sources, as in three-vrm

    def _step(self, dt: float) -> None:
        from ..model import native

        kernel = native.ckernel
        if kernel is not None and not self._held and hasattr(kernel, "spring_step"):
            plan = self._plan if self._plan is not None and self._plan.order is self._sorted() else None
            if plan is None:
                plan = self._plan = _Plan(self, self._sorted())
            if plan.step(kernel, self, dt):
                return
        self._update_numpy(dt)

    def _update_numpy(self, dt: float) -> None:
        order = self._sorted()
        if self._plan is not None:
            self._plan.shared = False
        spring_nodes = {id(j.bone) for j in order}
        # id(node) -> world matrix (column vectors) as three.js's matrixWorld holds it: all
        # brought up to date as the step begins, then only what three-vrm updates as it goes
        cache = {id(node): self._world(node) for node in self._read_nodes}

        def world(node):
            m = cache.get(id(node))
            if m is None:
                m = cache[id(node)] = self._world(node)
            return m

        held = self._held
        for j in order:
            bone, parent = j.bone, j.bone.parent
            parent_world = np.eye(4) if parent is None else world(parent)
            bone_world = parent_world @ _local(bone)
            cache[id(bone)] = bone_world
            position = bone_world[:3, 3]
            if id(bone) in held:  # dragged: the tail where the bone's own rotation puts it
                tail = bone_world @ np.append(j.initial_child if j.child is None else j.child.position, 1.0)
                to_center = self._to_center(j)
                j.prev, j.tail = j.tail, to_center[:3, :3] @ tail[:3] + to_center[:3, 3]
                self._below(bone, cache, spring_nodes)
                continue
            # _calcWorldSpaceBoneLength: the child as the step began
            if j.child is not None:
                child_position = world(j.child)[:3, 3]
            else:
                child_position = bone_world[:3, :3] @ j.initial_child + position
            length = math.sqrt(float((position - child_position) @ (position - child_position)))
            axis = _normalised(parent_world[:3, :3] @ _normalised(j.initial_local[:3, :3] @ j.axis))
            to_world = np.eye(4) if j.center is None else world(j.center)
            nxt = j.tail + (j.tail - j.prev) * (1.0 - j.drag)
            nxt = to_world[:3, :3] @ nxt + to_world[:3, 3]
            nxt = nxt + axis * (j.stiffness * dt) + j.gravity_dir * (j.gravity_power * dt)
            nxt = _normalised(nxt - position) * length + position
            for collider in j.colliders:
                distance, push = collider.collide(collider.matrix(world(collider.node)), nxt, j.hit_radius)
                if distance < 0:
                    nxt = nxt + push * (-distance)
                    offset = nxt - position
                    nxt = offset * (length / math.sqrt(float(offset @ offset))) + position
            j.prev = j.tail
            to_center = np.eye(4) if j.center is None else np.linalg.inv(to_world)
            j.tail = to_center[:3, :3] @ nxt + to_center[:3, 3]
            inverse = np.linalg.inv(parent_world @ j.initial_local)
            direction = _normalised(inverse[:3, :3] @ nxt + inverse[:3, 3])
            q = _multiply(j.initial_rotation, _from_unit_vectors(j.axis, direction))
            bone.assign_trs(rotation_quaternion=q)
            cache[id(bone)] = parent_world @ _local(bone)
            self._below(bone, cache, spring_nodes)

    def _below(self, bone, cache: dict, spring_nodes: set) -> None:
        """three-vrm's update of a joint's descendants down to the next spring bones."""
        stack = list(self._children(bone))
        while stack:
            node = stack.pop()
            if id(node) in spring_nodes:
                continue
            cache[id(node)] = cache[id(node.parent)] @ _local(node)
            stack.extend(self._children(node))

    def tick(self, seconds: float, step: float = STEP) -> int:
        """The frame loop's call: ``seconds`` of wall-clock time in whole fixed steps (the rest
        carried to the next frame), so the swing does not depend on the frame rate. The
        number of steps taken."""
        if not self.joints or not self.enabled:
            return 0
        self._carry += max(0.0, float(seconds))
        count = min(int(self._carry / step + 1e-9), 10)  # a stall does not freeze the window
        self._carry = 0.0 if count == 10 else self._carry - count * step
        for _ in range(count):
            self.update(step)
        self._time = None  # advance_to starts again from 0 after live play
        return count

    def advance_to(self, time: float, pose_at, step: float = STEP) -> None:
        """The springs at ``time`` simulated from time 0 at a fixed ``step``: ``pose_at(t)``
        puts the driving motion (the mixer, a clip) at t. Continues from the last call when
        time moves on, starts again from 0 when it goes back: the same time, the same pose."""
        time = float(time)
        if self._time is None or time + 1e-12 < self._time:
            pose_at(0.0)
            constraints = self._scene.__dict__.get("_constraints")
            if constraints is not None:
                constraints.apply()  # the springs start from the constrained pose
            self.reset()
            self._time = 0.0
        count = max(0, int(math.floor(time / step + 1e-9)))  # before 0: at rest
        done = int(round(self._time / step))
        for k in range(done + 1, count + 1):
            pose_at(k * step)
            self.update(step)
        self._time = count * step
        held = [(j.bone, np.array(j.bone.rotation_quaternion)) for j in self.joints]
        pose_at(time)
        for bone, q in held:  # the driving motion between steps moves the rest, not the springs
            bone.assign_trs(rotation_quaternion=q)

    def restart(self) -> None:
        """The next advance_to simulates from time 0 again."""
        self._time = None

    def rebase(self) -> None:
        """Take the pose the nodes hold now as every joint's initial state."""
        for j in self._sorted():
            self._init_joint(j)
        self._time = None

    def hold(self):
        """What the springs hold now (every joint's tail and previous tail, whether they are on,
        where advance_to stands): ``put_back(held)`` returns to it (a bake leaves them as found)."""
        return ([(np.array(j.tail), np.array(j.prev)) for j in self.joints], self.enabled, self._time, self._carry)

    def put_back(self, held) -> None:
        tails, self.enabled, self._time, self._carry = held
        for j, (tail, prev) in zip(self.joints, tails):
            j.tail, j.prev = tail.copy(), prev.copy()
        if self._plan is not None:
            self._plan.shared = False  # the compiled step copies them in again


def springs_of(scene) -> SpringBones:
    springs = scene.__dict__.get("_springs")
    if springs is None:
        springs = scene._springs = SpringBones(scene)
    return springs


class _Plan:
    """The joints as csrc/ckernel.c's spring_step reads them: the nodes the step reads (their
    ancestors too), parents first, in slots; per joint its slots, numbers, colliders and the
    nodes three-vrm brings up to date after it. Made again when the joints change."""

    def __init__(self, springs: SpringBones, order: list[Joint]):
        self.order = order
        self.usable = False
        needed = {}

        def add(node):
            chain = []
            while node is not None and id(node) not in needed:
                chain.append(node)
                node = node.parent
            for n in chain:
                needed[id(n)] = n

        for j in order:
            for node in (j.bone, j.child, j.center, *(c.node for c in j.colliders)):
                if node is not None:
                    add(node)
        nodes = list(needed.values())
        tables = {id(n.table) for n in nodes}
        if len(tables) != 1:
            return  # nodes of several tables: numpy's step
        depth = {}

        def depth_of(n):
            d = depth.get(id(n))
            if d is None:
                d = depth[id(n)] = 0 if n.parent is None else depth_of(n.parent) + 1
            return d

        nodes.sort(key=depth_of)
        slot = {id(n): k for k, n in enumerate(nodes)}
        self.nodes = nodes
        self.table = nodes[0].table
        self.rows = np.array([n.table_row for n in nodes], dtype=np.intp)
        parent = np.array([-1 if n.parent is None else slot[id(n.parent)] for n in nodes], dtype=np.int32)
        joints = np.array([[slot[id(j.bone)], -1 if j.child is None else slot[id(j.child)],
                            -1 if j.center is None else slot[id(j.center)]] for j in order], dtype=np.int32)
        colliders, refs, start = {}, [], [0]
        for j in order:
            for c in j.colliders:
                refs.append(colliders.setdefault(id(c), (len(colliders), c))[0])
            start.append(len(refs))
        listed = sorted(colliders.values(), key=lambda item: item[0])
        kinds = np.array([[slot[id(c.node)], {"sphere": 0, "capsule": 1, "plane": 2}[c.shape] + 4 * c.inside]
                          for _, c in listed], dtype=np.int32).reshape(-1, 2)
        data = np.array([[*c.offset, c.radius, *c.tail, *c.normal] for _, c in listed],
                        dtype=np.float64).reshape(-1, 10)
        spring_slots = {slot[id(j.bone)] for j in order}
        children = {}
        for k, n in enumerate(nodes):
            if parent[k] >= 0:
                children.setdefault(int(parent[k]), []).append(k)
        dstart, dslots = [0], []
        for j in order:
            below, stack = [], list(children.get(slot[id(j.bone)], ()))
            while stack:
                k = stack.pop()
                if k in spring_slots:
                    continue
                below.append(k)
                stack.extend(children.get(k, ()))
            dslots.extend(sorted(below))  # slots are parents first
            dstart.append(len(dslots))
        self.parts = (parent, joints, None, None, np.array(start, dtype=np.int32), np.array(refs, dtype=np.int32),
                      np.ascontiguousarray(kinds), np.ascontiguousarray(data),
                      (np.array(dstart, dtype=np.int32), np.array(dslots, dtype=np.int32)))
        self.joint_rows = np.array([n.table_row for n in (j.bone for j in order)], dtype=np.intp)
        self.out = np.zeros((len(order), 4))
        self.state = np.zeros((len(order), 6))
        self.world = np.zeros((len(nodes), 12))
        self.params = np.array([[j.stiffness, j.gravity_power, j.drag, j.hit_radius, *j.gravity_dir,
                                 *j.initial_rotation, *j.initial_child, *j.axis,
                                 *_normalised(j.initial_local[:3, :3] @ j.axis)] for j in order], dtype=np.float64)
        initial = np.ascontiguousarray(np.array([j.initial_local[:3] for j in order]).reshape(-1, 12))
        self.parts = self.parts[:2] + (self.params, initial) + self.parts[4:]
        self.shared = False  # the joints' tail and prev are views of self.state
        self.usable = len(set(self.joint_rows.tolist())) == len(order)  # one joint per bone

    def step(self, kernel, springs: SpringBones, dt: float) -> bool:
        if not self.usable:
            return False
        order, state, table = self.order, self.state, self.table
        if not self.shared:  # the numpy step or a reset rebound them
            for k, j in enumerate(order):
                state[k, :3], state[k, 3:] = j.tail, j.prev
        rows = self.rows
        if kernel.spring_step(self.parts, self.world, table.position[rows], table.quaternion[rows],
                              table.scaling[rows], state, self.out, dt) != 0:
            return False
        if not self.shared:
            for k, j in enumerate(order):
                j.tail, j.prev = state[k, :3], state[k, 3:]
            self.shared = True
        table.quaternion[self.joint_rows] = self.out
        table.version[self.joint_rows] += 1
        return True
