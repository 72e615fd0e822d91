"""Rig checks over a loaded Scene (numpy, no GL, no file format): weights, joints, inverse
binds, scales, bone lengths, keyframes and clips. ``Where`` names the object a finding
concerns (a glTF JSON pointer, or a bone); the format's own checker supplies it."""

from __future__ import annotations

import numpy as np

from ..model.weights import SHADER_INFLUENCES, WEIGHT_SUM_TOLERANCE
from ..words import counted
from .findings import finding

KEY_JUMP_DEGREES = 120.0
EXPLODE_FACTOR = 10.0
CLIP_SAMPLES = 12          # poses per clip looked at for its bounds (at its keyframe times)
BIND_TOLERANCE = 1e-3      # of the model's size (translation) or of 1 (rotation and scale)
CONDITION_LIMIT = 1e6      # of an inverse bind's 3x3 part
SCALE_TOLERANCE = 1e-3


class Where:
    """Pointers for findings; this default names bones and meshes by their names."""

    def mesh(self, mesh) -> str:
        return mesh.name

    def bone(self, bone) -> str:
        return bone.name

    def channel(self, clip_index: int, clip, channel) -> str:
        return f"{clip.name}/{channel.node.name}/{channel.path}"

    def clip(self, clip_index: int, clip) -> str:
        return clip.name


def rig_findings(scene, where: Where | None = None) -> list:
    """Every rig finding on ``scene`` as loaded (its rest pose); leaves it posed at rest again."""
    where = where or Where()
    found = []
    low, high = scene.current_bounds()
    size = float(np.linalg.norm(high - low)) or 1.0
    for mesh in scene.skinned_meshes:
        found += _weight_findings(mesh, where)
    for skeleton in scene.skeletons:
        found += _skeleton_findings(scene, skeleton, size, where)
    joint_nodes = {id(bone.get_transform_node()): bone for skeleton in scene.skeletons for bone in skeleton.bones
                   if bone.get_index() >= 0 and bone.get_transform_node() is not None}
    for c, clip in enumerate(scene.animations):
        for channel in clip.channels:
            bone = joint_nodes.get(id(channel.node))
            if bone is not None:
                found += _channel_findings(c, clip, channel, bone, where)
    found += _clip_bounds_findings(scene, low, high, size, where)
    return found


def _weight_findings(mesh, where: Where) -> list:
    found = []
    if mesh.joints is None:
        return found
    sums = mesh.raw_weight_sums
    off = np.abs(sums - 1.0) > WEIGHT_SUM_TOLERANCE
    if off.any():
        low, high = float(sums[off].min()), float(sums[off].max())
        off_count = int(off.sum())
        found.append(finding("weights-sum", f"{off_count} of {counted(len(sums), 'vertex', 'vertices')} "
                             f"{'has' if off_count == 1 else 'have'} weights that do not sum "
                             f"to 1 (sums {low:.4g}..{high:.4g})", where.mesh(mesh)))
    dropped = int((mesh.extra_influences > 0).sum())
    if dropped:
        found.append(finding("influences-dropped", f"{dropped} of {counted(len(sums), 'vertex', 'vertices')} "
                             f"{'has' if dropped == 1 else 'have'} more than "
                             f"{SHADER_INFLUENCES} influences; the rest are not drawn", where.mesh(mesh)))
    return found


def _skeleton_findings(scene, skeleton, size: float, where: Where) -> list:
    found = []
    joints = [bone for bone in skeleton.bones if bone.get_index() >= 0]
    meshes = [mesh for mesh in scene.skinned_meshes if mesh.skeleton is skeleton and mesh.joints is not None]
    used = set()
    for mesh in meshes:
        used.update(np.unique(mesh.joints[mesh.weights > 0]).tolist())
    found += _grouped("joint-unused", [bone for bone in joints if bone.get_index() not in used],
                      ("moves no vertex", "move no vertex"), skeleton, where)
    skeleton.prepare()
    # Where the bind pose is the node pose, inverse bind x rest world is one matrix for every
    # joint (the identity, or the one rigid move of a skeleton under a turned armature node):
    # compare each joint's with the first's.
    finals = np.array(skeleton.get_transform_matrices(), dtype=np.float64)
    if joints:
        first = finals[joints[0].get_index()]
        try:
            finals = finals @ np.linalg.inv(first)
        except np.linalg.LinAlgError:
            pass  # a singular inverse bind is the loader's refusal, not reached here
    absolute = skeleton.get_absolute_matrices()
    position = {id(bone): absolute[i][3, :3] for i, bone in enumerate(skeleton.bones)}
    off_bind, worst = [], (0.0, 0.0)
    for bone in joints:
        final = finals[bone.get_index()]
        turn = float(np.abs(final[:3, :3] - np.eye(3)).max())
        shift = float(np.abs(final[3, :3]).max()) / size
        if max(turn, shift) > BIND_TOLERANCE:
            off_bind.append(bone)
            worst = max(worst[0], turn), max(worst[1], shift)
        inverse_bind = bone.get_absolute_inverse_bind_matrix()[:3, :3]
        condition = np.linalg.cond(inverse_bind)
        if not np.isfinite(condition) or condition > CONDITION_LIMIT:
            found.append(finding("inverse-bind-conditioning", f"joint {bone.name!r}: its inverse bind matrix is badly "
                                 f"conditioned (condition number {condition:.3g})", where.bone(bone)))
        found += _scale_findings(bone.get_local_matrix()[:3, :3], f"joint {bone.name!r} at rest", where.bone(bone))
        parent = bone.get_parent()
        if parent is not None and parent.get_index() >= 0:
            length = float(np.linalg.norm(position[id(bone)] - position[id(parent)]))
            if length <= 1e-6 * size:
                found.append(finding("bone-zero-length", f"joint {bone.name!r} is at the same place as its parent "
                                     f"{parent.name!r}", where.bone(bone)))
    off_by = (f"(off by up to {worst[0]:.3g} in rotation/scale, {worst[1]:.3g} of the model's size in "
              "position)")
    found += _grouped("bind-pose", off_bind,
                      (f"has an inverse bind that does not match its rest world matrix {off_by}",
                       f"have inverse binds that do not match their rest world matrices {off_by}"), skeleton, where)
    return found


def _grouped(code: str, bones: list, what: tuple, skeleton, where: Where) -> list:
    """One finding for many joints of a skeleton (the first few named), pointing at the first;
    ``what`` is what they do, said of one joint and of several."""
    if not bones:
        return []
    names = ", ".join(repr(bone.name) for bone in bones[:6]) + (", ..." if len(bones) > 6 else "")
    count = f"{counted(len(bones), 'joint')} of skeleton {skeleton.name!r}"
    return [finding(code, f"{count} {what[0] if len(bones) == 1 else what[1]}: {names}", where.bone(bones[0]))]


def _scale_findings(matrix: np.ndarray, what: str, pointer: str) -> list:
    found = []
    if np.linalg.det(matrix) < 0:
        found.append(finding("joint-scale-negative", f"{what}: negative scale (a mirror)", pointer))
    scales = np.linalg.svd(matrix, compute_uv=False)
    if scales[-1] <= 0 or scales[0] / scales[-1] > 1.0 + SCALE_TOLERANCE:
        found.append(finding("joint-scale-non-uniform", f"{what}: non-uniform scale "
                             f"({', '.join(f'{s:.4g}' for s in scales)})", pointer))
    return found


def _channel_findings(c: int, clip, channel, bone, where: Where) -> list:
    values = channel.values
    if channel.interpolation == "CUBICSPLINE":
        values = values[:, 1]  # the keyed values, between the tangents
    pointer = where.channel(c, clip, channel)
    what = f"clip {clip.name!r}, bone {bone.name!r}"
    if channel.path == "rotation" and len(values) > 1:
        unit = values / np.linalg.norm(values, axis=1, keepdims=True)
        dots = np.abs(np.einsum("ij,ij->i", unit[:-1], unit[1:]))
        angles = np.degrees(2.0 * np.arccos(np.minimum(dots, 1.0)))
        jumps = np.flatnonzero(angles > KEY_JUMP_DEGREES)
        if len(jumps):
            k = int(jumps[0])
            more = f" (and {len(jumps) - 1} more such jumps)" if len(jumps) > 1 else ""
            return [finding("key-jump", f"{what}: turns {angles[k]:.0f} degrees between keys {k} and {k + 1}{more}",
                            pointer)]
    if channel.path == "scale":
        negative = values.min(axis=1) < 0
        ratio = np.abs(values).max(axis=1) / np.maximum(np.abs(values).min(axis=1), 1e-300)
        found = []
        if negative.any():
            found.append(finding("joint-scale-negative", f"{what}: negative scale at key {int(np.argmax(negative))}",
                                 pointer))
        if (ratio > 1.0 + SCALE_TOLERANCE).any():
            k = int(np.argmax(ratio))
            found.append(finding("joint-scale-non-uniform", f"{what}: non-uniform scale at key {k} "
                                 f"({', '.join(f'{v:.4g}' for v in values[k])})", pointer))
        return found
    return []


def _clip_bounds_findings(scene, low, high, size: float, where: Where) -> list:
    """Clips whose skinned bounds reach past EXPLODE_FACTOR x the rest bounds' size, from the
    rest bounds' centre, posed at its keyframe times (where a broken key shows whole; at most
    CLIP_SAMPLES of them, evenly spread)."""
    found = []
    if not scene.animations:
        return found
    centre = (low + high) / 2.0
    for c, clip in enumerate(scene.animations):
        worst = 0.0
        times = clip.key_times()  # node and morph-weight channels
        times = times if len(times) else np.zeros(1)
        if len(times) > CLIP_SAMPLES:
            times = times[np.linspace(0, len(times) - 1, CLIP_SAMPLES).round().astype(int)]
        for t in times:
            clip.apply(float(t))
            posed_low, posed_high = scene.current_bounds()
            reach = max(np.abs(posed_low - centre).max(), np.abs(posed_high - centre).max())
            worst = max(worst, 2.0 * reach / size)
        if worst > EXPLODE_FACTOR:
            found.append(finding("clip-explodes", f"clip {clip.name!r}: its skinned bounds reach {worst:.1f}x the "
                                 f"rest bounds' size", where.clip(c, clip)))
    _return_to_rest(scene)
    return found


def _return_to_rest(scene) -> None:
    for skeleton in scene.skeletons:
        skeleton.return_to_rest()
