"""The Scene of a parsed BVH file: one skeleton whose bones are linked to nodes, one clip keyed at
the frame time, and a capsule per bone segment so that it shades, picks and renders.

Conventions, as Blender reads BVH (and three.js's BVHLoader for rotations):
- a joint's rotation composes its rotation channels in the order the CHANNELS line lists them
  (``Zrotation Xrotation Yrotation`` is Rz * Rx * Ry on column vectors);
- position channels are the joint's translation from its parent *in place of* its OFFSET
  (a component without a channel keeps the OFFSET's);
- the file's up axis is turned to +Y and its forward axis (the way the figure faces in the first
  frame) to +Z, glTF's front, by one rotation folded into the root, and ``scale`` multiplies every
  offset and position.
"""

from __future__ import annotations

import logging

import numpy as np

from ..errors import ViewerError
from ..model import NodeTable, Scene, TransformNode
from ..model.animation import AnimationChannel, AnimationClip
from ..model.axes import AXES, axis_name, axis_vector, facing_rotation, vector_axis
from ..model.bone_names import body_parts
from ..model.figure import BONE_COLOR, capsule_mesh, capsules, skeleton_figure  # noqa: F401 (also imported from here)
from ..model.transforms import compose, quaternion_product
from .parse import Motion

FIGURE_HEIGHT = 1.7  # scale=None: the first frame spans this along Y (a person in metres)


def up_rotation(up: str) -> np.ndarray:
    """The proper rotation (3x3, row vectors: v @ R) taking the file's ``up`` axis to +Y."""
    text = up.strip().lower()
    sign = -1.0 if text.startswith("-") else 1.0
    axis = AXES.get(text.lstrip("+-"))
    if axis is None:
        raise ViewerError(f"up axis {up!r}: expected x, y, z, -x, -y or -z")
    rows = {("y", 1): [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
            ("y", -1): [[1, 0, 0], [0, -1, 0], [0, 0, -1]],
            ("z", 1): [[1, 0, 0], [0, 0, -1], [0, 1, 0]],     # Blender's: (x, y, z) -> (x, z, -y)
            ("z", -1): [[1, 0, 0], [0, 0, 1], [0, -1, 0]],    # (x, y, z) -> (x, -z, y)
            ("x", 1): [[0, 1, 0], [-1, 0, 0], [0, 0, 1]],     # (x, y, z) -> (-y, x, z)
            ("x", -1): [[0, -1, 0], [1, 0, 0], [0, 0, 1]]}    # (x, y, z) -> (y, -x, z)
    return np.array(rows[("xyz"[axis], int(sign))], dtype=np.float64)


def kept_forward(up: str) -> str:
    """The file's axis that ``up_rotation(up)`` alone takes to +Z (the facing when none is turned)."""
    return vector_axis(up_rotation(up) @ np.array([0.0, 0.0, 1.0]))


def turn_degrees(up: str, forward: str) -> int:
    """How far about +Y the facing turns once the up axis is turned: 0, 90, 180 or -90."""
    turned = axis_vector(forward) @ up_rotation(up)  # where +Y-up alone puts the forward axis
    degrees = int(round(np.degrees(np.arctan2(0.0 - turned[0], turned[2]))))  # 0.0 - : no -0, no -180
    return 180 if degrees == -180 else degrees


def quaternion_of_matrix(rows: np.ndarray) -> np.ndarray:
    """The xyzw quaternion of a 3x3 rotation in the row-vector layout."""
    from ..model.transforms import quaternion_from_rotation_matrix

    return quaternion_from_rotation_matrix(rows)


# The Hamilton product q * (s on one axis, c as w) with the zero terms left out, per axis, each
# component as quaternion_product sums it (the same value; a zero may change sign): x, y, z, w.
_AXIS_PRODUCTS = {
    "x": lambda x, y, z, w, s, c: (w * s + x * c, y * c + z * s, z * c - y * s, w * c - x * s),
    "y": lambda x, y, z, w, s, c: (x * c - z * s, w * s + y * c, x * s + z * c, w * c - y * s),
    "z": lambda x, y, z, w, s, c: (x * c + y * s, y * c - x * s, w * s + z * c, w * c - z * s),
}


def joint_rotations(motion: Motion) -> np.ndarray:
    """(frames, joints, 4) local rotations, channels composed in CHANNELS order; identity where
    a joint has no rotation channel. Joints with the same rotation order are done together, each
    quaternion component one contiguous (frames, joints) array (a product over the interleaved
    (..., 4) layout costs several times more)."""
    frames = len(motion.values)
    result = np.zeros((frames, len(motion.joints), 4))
    result[..., 3] = 1.0
    groups: dict[str, list] = {}  # order ("ZXY") -> [(joint, its rotation columns)]
    for j, joint in enumerate(motion.joints):
        columns = [joint.first_column + k for k, c in enumerate(joint.channels) if c.endswith("rotation")]
        if columns:
            order = "".join(c[0] for c in joint.channels if c.endswith("rotation"))
            groups.setdefault(order, []).append((j, columns))
    for order, members in groups.items():
        joints = [j for j, _ in members]
        columns = np.array([c for _, c in members]).T  # (axes, joints)
        half = np.radians(motion.values[:, columns]) * 0.5  # (frames, axes, joints)
        half = np.ascontiguousarray(half.transpose(1, 0, 2))  # (axes, frames, joints)
        sin, cos = np.sin(half), np.cos(half)
        zero = np.zeros(half.shape[1:])
        q = [zero, zero, zero, cos[0]]
        q[AXES[order[0].lower()]] = sin[0]
        for k, axis in enumerate(order[1:], start=1):
            q = _AXIS_PRODUCTS[axis.lower()](*q, sin[k], cos[k])
        result[:, joints] = np.stack(q, axis=-1)
    return result


def joint_translations(motion: Motion) -> np.ndarray:
    """(frames, joints, 3) local translations in the file's units: OFFSET, with position
    channels in place of its components."""
    frames = len(motion.values)
    offsets = np.array([joint.offset for joint in motion.joints]).reshape(-1, 3)
    result = np.broadcast_to(offsets, (frames, len(motion.joints), 3)).copy()
    for j, joint in enumerate(motion.joints):
        for k, channel in enumerate(joint.channels):
            if channel.endswith("position"):
                result[:, j, AXES[channel[0].lower()]] = motion.values[:, joint.first_column + k]
    return result


def world_positions(parents: list[int], rotations: np.ndarray, translations: np.ndarray) -> np.ndarray:
    """(..., joints, 3) joint positions from local rotations and translations (parents first)."""
    from ..model.transforms import compose as compose_matrices

    local = compose_matrices(np.ones(translations.shape), rotations, translations)
    world = np.empty_like(local)
    for j, parent in enumerate(parents):
        world[..., j, :, :] = local[..., j, :, :] if parent < 0 else local[..., j, :, :] @ world[..., parent, :, :]
    return world[..., 3, :3]


def first_frame_positions(motion: Motion) -> np.ndarray:
    """(joints, 3) joint positions in the first frame, in the file's units and axes."""
    parents = [joint.parent for joint in motion.joints]
    first = Motion(motion.joints, motion.frame_time, motion.values[:1], motion.channel_count)
    return world_positions(parents, joint_rotations(first), joint_translations(first))[0]


def detect_up(motion: Motion) -> str | None:
    """The file's up axis from the first frame: the axis nearest the feet-to-head direction of
    the joints the naming table knows; None when it cannot tell."""
    if len(motion.values) == 0:
        return None
    _, parts = body_parts(joint.name for joint in motion.joints)
    index = {joint.name: j for j, joint in enumerate(motion.joints)}
    top = next((parts[p] for p in ("head", "neck", "upperChest", "chest") if p in parts), None)
    feet = [parts[p] for p in ("leftFoot", "rightFoot", "leftToes", "rightToes", "leftLowerLeg", "rightLowerLeg")
            if p in parts][:2]
    bottom = feet or ([parts["hips"]] if "hips" in parts else [])
    if top is None or not bottom:
        return None
    positions = first_frame_positions(motion)
    direction = positions[index[top]] - positions[[index[b] for b in bottom]].mean(axis=0)
    if not np.isfinite(direction).all() or np.linalg.norm(direction) == 0:
        return None
    axis = int(np.argmax(np.abs(direction)))
    return ("-" if direction[axis] < 0 else "") + "xyz"[axis]


# Left/right joint pairs that say which way a figure faces, the first the file has: the hips (the
# thighs' joints, which the pelvis turns together), else the shoulders (clavicles, else upper arms).
FACING_PAIRS = (("leftUpperLeg", "rightUpperLeg"), ("leftShoulder", "rightShoulder"), ("leftUpperArm", "rightUpperArm"))


def detect_forward(motion: Motion, up: str) -> str | None:
    """The file's forward axis from the first frame: of the two axes across ``up``, the one
    nearest the way the figure faces, up x its left-to-right direction (a figure facing +Z with +Y
    up has its left side at +X, so right - left is -X, and Y x -X = +Z); None when it cannot tell."""
    if len(motion.values) == 0:
        return None
    _, parts = body_parts(joint.name for joint in motion.joints)
    pair = next(((parts[l], parts[r]) for l, r in FACING_PAIRS if l in parts and r in parts), None)
    if pair is None:
        return None
    index = {joint.name: j for j, joint in enumerate(motion.joints)}
    positions = first_frame_positions(motion)
    up_axis = axis_vector(up)
    across = positions[index[pair[1]]] - positions[index[pair[0]]]
    forward = np.cross(up_axis, across)  # across each other, so along one of the other two axes
    if not np.isfinite(forward).all() or np.linalg.norm(forward) < 1e-9 * (np.linalg.norm(across) + 1e-300):
        return None
    return vector_axis(forward)


def build_scene(motion: Motion, name: str, scale: float | None, up: str | None,
                forward: str | None = None) -> Scene:
    joints = motion.joints
    parents = [joint.parent for joint in joints]
    frames = len(motion.values)
    detected = up is None
    if up is None:
        up = detect_up(motion) or "y"
    facing = "given"
    if forward is None:
        forward, facing = detect_forward(motion, up), "detected"
        if forward is None:
            forward, facing = kept_forward(up), "not detected"
    rotation = facing_rotation(up, forward)
    rotations = joint_rotations(motion)
    translations = joint_translations(motion)
    offsets = np.array([joint.offset for joint in joints])
    rest_rotations = np.zeros((len(joints), 4))
    rest_rotations[:, 3] = 1.0
    rest_translations = offsets.copy()
    # The up and facing rotation folded into the root: its local matrix becomes local @ rotation.
    # None at all when it is the identity, so the file's numbers stay as they are, bit for bit.
    if not np.array_equal(rotation, np.eye(3)):
        q_turn = quaternion_of_matrix(rotation)
        rotations[:, 0] = quaternion_product(q_turn, rotations[:, 0])
        translations[:, 0] = translations[:, 0] @ rotation
        rest_rotations[0] = q_turn
        rest_translations[0] = offsets[0] @ rotation
    if scale is None:
        sample = (rotations[:1], translations[:1]) if frames else (rest_rotations[None], rest_translations[None])
        heights = world_positions(parents, *sample)[0][:, 1]
        span = float(heights.max() - heights.min())
        factor = FIGURE_HEIGHT / span if span > 1e-12 and np.isfinite(span) else 1.0
    else:
        factor = float(scale)
    if factor != 1.0:
        translations *= factor
        rest_translations *= factor
    imported = {"scale": factor, "up": axis_name(up), "detected": detected, "forward": axis_name(forward),
                "facing": facing, "turn": turn_degrees(up, forward)}
    logging.getLogger("boneviewer").info(f"{name}: {describe_import(imported)}")

    table = NodeTable(len(joints))
    nodes = []
    rest_local = compose(np.ones((len(joints), 3)), rest_rotations, rest_translations)
    for j, joint in enumerate(joints):
        node = TransformNode(joint.name, None if joint.parent < 0 else nodes[joint.parent], table=table)
        node.set_trs(rest_translations[j], rest_rotations[j], (1.0, 1.0, 1.0))
        nodes.append(node)
    rest_world = world_positions(parents, rest_rotations, rest_translations)
    skeleton, mesh = skeleton_figure(name, nodes, parents, rest_local, rest_world)
    bones = skeleton.bones
    for j, joint in enumerate(joints):
        if joint.end_site:
            bones[j].length = 0.0

    animations = []
    if frames:
        times = np.arange(frames, dtype=np.float64) * motion.frame_time
        _keep_hemisphere(rotations)
        channels = []
        for j, joint in enumerate(joints):
            if any(c.endswith("position") for c in joint.channels):
                channels.append(AnimationChannel(nodes[j], "translation", times,
                                                 np.ascontiguousarray(translations[:, j]), checked=True))
            if any(c.endswith("rotation") for c in joint.channels):
                channels.append(AnimationChannel(nodes[j], "rotation", times,
                                                 np.ascontiguousarray(rotations[:, j]), checked=True))
        animations.append(AnimationClip(name.rsplit(".", 1)[0], channels))

    scene = Scene(name, [mesh], nodes=nodes, animations=animations)
    scene.bvh_import = imported
    return scene


def describe_import(imported: dict) -> str:
    """What the loader chose, in words, for the log, the command line and ``info``: "scale
    0.0443097, up axis +z (detected) turned to +Y, forward axis +y (detected) turned 180° to +Z"."""
    up = f"up axis {imported['up']} ({'detected' if imported['detected'] else 'given'}) turned to +Y"
    if imported["facing"] == "not detected":
        facing = "facing not detected (kept)"
    elif imported["turn"]:
        facing = f"forward axis {imported['forward']} ({imported['facing']}) turned {imported['turn']}° to +Z"
    else:
        facing = f"forward axis {imported['forward']} ({imported['facing']}) faces +Z"
    return f"scale {imported['scale']:.6g}, {up}, {facing}"


def _keep_hemisphere(quaternions: np.ndarray) -> None:
    """Flip signs so that each key is in the hemisphere of the one before it (the same
    rotations; the keys then interpolate along the short way)."""
    if len(quaternions) < 2:
        return
    dots = np.einsum("fjk,fjk->fj", quaternions[1:], quaternions[:-1])
    flips = np.cumsum(dots < 0, axis=0) % 2
    quaternions[1:][flips.astype(bool)] *= -1.0
