"""Retargeting: a clip of one skeleton made into a clip of another (numpy over two skeletons).

The method (issue 21):
1. One rotation ``A`` aligns the two skeletons: their up (hips to head) and left-to-right (the
   thighs', else the upper arms') directions in a reference pose: the target's rest, and the
   source's rest, or its first frame when its rest is not upright; then a turn about +Y
   (``turn``, part of ``A``) makes the target face, in the first frame, where the source faces
   in its world (a capture whose rest faces away from its motion drives a target that faces
   the camera as the capture does).
2. Each mapped target bone turns, in world space, by the source bone's change from its
   reference (expressed through ``A``), which keeps the source's twist; then by the smallest
   swing that points it where its source bone points (the world direction from the joint to its
   mapped child). So a T-pose source drives an A-pose target with the arms where the source's are.
3. The hips' translation follows the source's, scaled by the ratio of hip heights: their height
   above the floor (the lowest the source's joints go; the target's lowest joint at rest), and
   across the floor their path from the source's first frame, from where the target stands.
4. Unmapped target bones keep their rest.

The bone map is ``{target bone: source bone}``: from the naming schemes (bone_names.py) when
not given. ``retarget_error`` measures the result: the worst angle between a target bone's
direction and its source bone's (after ``A``), over every frame.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from .animation import AnimationChannel, AnimationClip, interpolate_keyframes, slerp
from .arrays import distinct
from .bone_names import LIMB_PARENT, PARTS, body_parts
from .transforms import compose, decompose, quaternion_from_rotation_matrix

MAX_FRAMES = 1_000_000
# For a bone with several mapped children, the child its direction is taken to (the spine chain).
PREFERRED_CHILD = ("spine", "chest", "upperChest", "neck", "head")


# --- the bone map -------------------------------------------------------------------------------
def read_bone_map(path) -> dict[str, str]:
    """A map file: a JSON object ``{"target bone": "source bone"}``."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ViewerError(f"bone map {path}: cannot read it ({error.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ViewerError(f"bone map {path}: not JSON ({str(error).splitlines()[0]})") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise ViewerError(f'bone map {path}: expected a JSON object {{"target bone": "source bone", ...}}')
    return dict(data)


def skeleton_parts(scene, skeleton) -> dict[str, str]:
    """{body part: bone name} of ``skeleton``: the humanoid map its file gives (a VRM avatar's,
    ``scene.humanoid``) where that names bones of it, else what the naming schemes recognise."""
    names = {b.name for b in skeleton.bones}
    humanoid = {part: name for part, name in (getattr(scene, "humanoid", None) or {}).items() if name in names}
    return humanoid or body_parts(b.name for b in skeleton.bones)[1]


def main_skeleton(scene):
    """The scene's skeleton with the most bones the file's humanoid map or the naming schemes
    recognise (its first when none)."""
    skeletons = scene.skeletons
    if not skeletons:
        raise ViewerError(f"model {scene.name!r} has no skeleton to retarget")
    return max(skeletons, key=lambda s: (len(skeleton_parts(scene, s)), -skeletons.index(s)))


def automatic_bone_map(source_skeleton, target_skeleton, source_scene=None, target_scene=None) -> dict[str, str]:
    """``{target bone: source bone}`` for the body parts both skeletons know: from their files'
    humanoid maps (VRM's), else their naming schemes."""
    source_parts = skeleton_parts(source_scene, source_skeleton)
    target_parts = skeleton_parts(target_scene, target_skeleton)
    return {target_parts[part]: source_parts[part] for part in target_parts if part in source_parts}


def unmapped_reason(source_scene, source_skeleton, target_scene, target_skeleton) -> str:
    """Why no bone of the target maps onto the source: the side whose names no naming scheme
    knows (a few of them shown), or that the two know no body part alike."""
    for scene, skeleton in ((target_scene, target_skeleton), (source_scene, source_skeleton)):
        if not skeleton_parts(scene, skeleton):
            names = [b.name for b in skeleton.bones]
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            return f"no bone of {scene.name!r} has a name the naming schemes know ({shown})"
    return f"{target_scene.name!r} and {source_scene.name!r} name no body part alike"


def check_bone_map(bone_map: dict, source_skeleton, target_skeleton, what: str = "bone map") -> None:
    """Every bone the map names exists: else one error listing the skeleton's bones."""
    for skeleton, names, side in ((target_skeleton, bone_map.keys(), "target"),
                                  (source_skeleton, bone_map.values(), "source")):
        known = {b.name for b in skeleton.bones}
        for name in names:
            if name not in known:
                listed = ", ".join(b.name for b in skeleton.bones)
                raise ViewerError(f"{what}: unknown {side} bone {name!r} (the {side} skeleton's bones: {listed})")


def resolve_body_parts(bone_map: dict, source_skeleton, source_scene=None) -> dict[str, str]:
    """The map with each source name that is no source bone but a body part (VRM's humanoid names:
    ``hips``, ``leftUpperArm``, ...) replaced by the source bone the naming schemes recognise as
    that part, so that one map serves every source; a part the source lacks leaves its target
    bone unmapped (logged)."""
    import logging

    names = {b.name for b in source_skeleton.bones}
    if all(value in names for value in bone_map.values()):
        return dict(bone_map)
    parts = skeleton_parts(source_scene, source_skeleton)
    resolved = {}
    for target, source in bone_map.items():
        if source in names or source not in PARTS:
            resolved[target] = source  # a bone, or an unknown name that check_bone_map reports
        elif source in parts:
            resolved[target] = parts[source]
        else:
            logging.getLogger("boneviewer").info(f"bone map: the source has no {source} bone; {target} keeps its rest")
    return resolved


# --- sampling a clip on a skeleton, vectorized over frames ----------------------------------------
def clip_times(clip) -> np.ndarray:
    """The clip's keyframe times (all channels' together)."""
    if not clip.channels:
        return np.zeros(1)
    first = clip.channels[0].times
    if all(channel.times is first for channel in clip.channels):  # a BVH clip: one set of keys
        return first
    times = distinct(np.concatenate([channel.times for channel in clip.channels]))
    if len(times) > MAX_FRAMES:
        raise ViewerError(f"animation {clip.name!r}: {len(times)} keyframe times is too many to retarget")
    return times


def sample_channel(channel, times: np.ndarray) -> np.ndarray:
    """(len(times), width) values of one channel at ``times``, as ``AnimationChannel.sample``."""
    keys, values = channel.times, channel.values
    if channel.interpolation == "CUBICSPLINE" or len(keys) == 1:
        return np.array([interpolate_keyframes(keys, values, channel.interpolation, t, channel.path == "rotation")
                         for t in times])
    index = np.clip(np.searchsorted(keys, times, side="right") - 1, 0, len(keys) - 2)
    if channel.interpolation == "STEP":
        index = np.clip(np.searchsorted(keys, times, side="right") - 1, 0, len(keys) - 1)
        return values[index].copy()
    u = np.clip((times - keys[index]) / (keys[index + 1] - keys[index]), 0.0, 1.0)
    if channel.path == "rotation":
        return slerp(values[index], values[index + 1], u)
    return values[index] * (1.0 - u)[:, None] + values[index + 1] * u[:, None]


class SkeletonFrames:
    """A skeleton's bones (parents first) with their world matrices at each of ``times`` under a
    clip (the file's pose where the clip has no channel), and their world matrices in the pose
    their file shows (``rest_world``: what is drawn as loaded, which for most formats is the
    rest; an FBX file's joints are saved in a pose that need not be its skin's bind)."""

    def __init__(self, scene, skeleton, clip, times: np.ndarray):
        bones = list(skeleton.bones)
        self.bones = bones
        self.index = {b.name: i for i, b in enumerate(bones)}
        position = {id(b): i for i, b in enumerate(bones)}
        self.parents = [position.get(id(b.get_parent()), -1) for b in bones]
        self.order = sorted(range(len(bones)), key=self.depth)
        self.placement = placement_matrix(scene, skeleton)
        rest_local = np.array([b.get_file_pose_matrix() for b in bones]).reshape(-1, 4, 4)
        self.rest_scaling, self.rest_rotation, self.rest_translation = decompose(rest_local)
        self.rest_world = self._world(rest_local[None])[0]
        frames = len(times)
        scaling = np.broadcast_to(self.rest_scaling, (frames,) + self.rest_scaling.shape).copy()
        rotation = np.broadcast_to(self.rest_rotation, (frames,) + self.rest_rotation.shape).copy()
        translation = np.broadcast_to(self.rest_translation, (frames,) + self.rest_translation.shape).copy()
        if clip is not None:
            target = {id(b.get_pose_target()): i for i, b in enumerate(bones)}
            fields = {"translation": translation, "rotation": rotation, "scale": scaling}
            for channel in clip.channels:
                i = target.get(id(channel.node))
                if i is not None:
                    fields[channel.path][:, i] = sample_channel(channel, times)
        rotation /= np.linalg.norm(rotation, axis=-1, keepdims=True)
        self.world = self._world(compose(scaling, rotation, translation))

    def depth(self, i: int) -> int:
        depth = 0
        while self.parents[i] >= 0:
            i = self.parents[i]
            depth += 1
        return depth

    def _world(self, local: np.ndarray) -> np.ndarray:
        """(F, N, 4, 4) world matrices (the mesh placement included) of (F, N, 4, 4) locals."""
        world = np.empty_like(local)
        for i in self.order:
            parent = self.parents[i]
            world[:, i] = local[:, i] @ (self.placement if parent < 0 else world[:, parent])
        return world


def placement_matrix(scene, skeleton) -> np.ndarray:
    """The world matrix of the skeleton's meshes (where its root space lies in the world)."""
    for mesh in scene.skinned_meshes:
        if mesh.skeleton is skeleton:
            mesh.update_world_matrix()
            return np.asarray(mesh.world_matrix, dtype=np.float64)
    return np.eye(4)


def rotation_rows(matrices: np.ndarray) -> np.ndarray:
    """The rotation of (..., 4, 4) affine matrices with positive scale: rows normalized."""
    rows = matrices[..., :3, :3]
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.divide(v, n, out=np.zeros_like(v), where=n > 1e-12)


def swing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(..., 3, 3) row-vector rotations turning unit directions ``a`` onto ``b`` the shortest way."""
    axis = np.cross(a, b)
    sin = np.linalg.norm(axis, axis=-1)
    cos = np.einsum("...k,...k->...", a, b)
    # Opposite directions: half a turn about any axis perpendicular to a.
    helper = np.where(np.abs(a[..., :1]) < 0.9, np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    axis = np.where((sin < 1e-9)[..., None], _unit(np.cross(a, helper)) * (cos < 0)[..., None], axis)
    k = _unit(axis)
    angle = np.arctan2(sin, cos)
    angle = np.where(sin < 1e-9, np.where(cos < 0, np.pi, 0.0), angle)
    kx, ky, kz = k[..., 0], k[..., 1], k[..., 2]
    zero = np.zeros_like(kx)
    cross = np.stack([np.stack([zero, -kz, ky], -1), np.stack([kz, zero, -kx], -1),
                      np.stack([-ky, kx, zero], -1)], -2)  # column-vector [k]x
    s, c = np.sin(angle)[..., None, None], np.cos(angle)[..., None, None]
    column = np.eye(3) + s * cross + (1 - c) * (cross @ cross)
    return np.swapaxes(column, -1, -2)


# --- alignment ----------------------------------------------------------------------------------
def body_frame(names: dict, positions: np.ndarray) -> np.ndarray | None:
    """(3, 3) rows: left-to-right, up and their cross product (backward), from body parts' world positions; None when the
    skeleton lacks hips and a head or a left/right pair."""
    top = next((names[p] for p in ("head", "neck", "upperChest", "chest") if p in names), None)
    hips = names.get("hips")
    pair = next(((names[l], names[r]) for l, r in (("leftUpperLeg", "rightUpperLeg"), ("leftUpperArm", "rightUpperArm"),
                                                   ("leftShoulder", "rightShoulder")) if l in names and r in names), None)
    if top is None or hips is None or pair is None:
        return None
    up = _unit(positions[top] - positions[hips])
    across = positions[pair[1]] - positions[pair[0]]
    across = _unit(across - up * np.dot(across, up))
    if not up.any() or not across.any():
        return None
    return np.stack([across, up, np.cross(across, up)])


def yaw_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(3, 3) row-vector rotation about +Y turning ``a``'s horizontal direction onto ``b``'s
    (the identity where either is vertical)."""
    a, b = _unit(a * [1.0, 0.0, 1.0]), _unit(b * [1.0, 0.0, 1.0])
    if not a.any() or not b.any():
        return np.eye(3)
    sin, cos = a[2] * b[0] - a[0] * b[2], a[0] * b[0] + a[2] * b[2]  # about +Y, from a to b
    return np.array([[cos, 0.0, -sin], [0.0, 1.0, 0.0], [sin, 0.0, cos]])


def upright(frame: np.ndarray | None) -> bool:
    return frame is None or frame[1, 1] > np.cos(np.radians(45.0))


class Retargeting:
    """What a retargeting worked out: the map, the aligning rotation, the hip scale, the source's
    and target's frames; ``clip`` is the new clip (see ``retarget``)."""

    def __init__(self, source_scene, target_scene, clip=None, bone_map=None, name=None):
        self.source_scene, self.target_scene = source_scene, target_scene
        self.source_clip = _choose_clip(source_scene, clip)
        self.source_skeleton = main_skeleton(source_scene)
        self.target_skeleton = main_skeleton(target_scene)
        automatic = bone_map is None
        if automatic:
            bone_map = automatic_bone_map(self.source_skeleton, self.target_skeleton, source_scene, target_scene)
        elif isinstance(bone_map, (str, Path)):
            bone_map = read_bone_map(bone_map)
        elif not isinstance(bone_map, dict):
            raise ViewerError(f'bone map: expected {{"target bone": "source bone"}}, got {type(bone_map).__name__}')
        bone_map = resolve_body_parts(bone_map, self.source_skeleton, source_scene)
        check_bone_map(bone_map, self.source_skeleton, self.target_skeleton)
        if not bone_map and automatic:
            raise ViewerError(f"{unmapped_reason(source_scene, self.source_skeleton, target_scene, self.target_skeleton)}"
                              ": give a bone map")
        if not bone_map:
            raise ViewerError(f"the bone map maps no bone of {target_scene.name!r} to a bone of {source_scene.name!r}")
        self.bone_map = dict(bone_map)
        self.times = clip_times(self.source_clip)
        self.source = SkeletonFrames(source_scene, self.source_skeleton, self.source_clip, self.times)
        self.target = SkeletonFrames(target_scene, self.target_skeleton, None, self.times[:1])
        self._align()
        self.clip = self._make_clip(name or self.source_clip.name)

    # The parts of each side as named by the map: target part names come from the target's own
    # scheme; the source's are the mapped bones of those.
    def _align(self) -> None:
        # A target bone's body part: its own name's, else that of the source bone mapped to it.
        target_parts = skeleton_parts(self.target_scene, self.target_skeleton)
        source_named = skeleton_parts(self.source_scene, self.source_skeleton)
        part_of_source = {n: p for p, n in source_named.items()}
        target_parts = {p: n for p, n in target_parts.items() if n in self.bone_map}
        for target_bone, source_bone in self.bone_map.items():
            part = part_of_source.get(source_bone)
            if part is not None and part not in target_parts and target_bone not in target_parts.values():
                target_parts[part] = target_bone
        source_parts = {p: self.bone_map[n] for p, n in target_parts.items()}
        self.target_parts = target_parts
        s_index, t_index = self.source.index, self.target.index
        source_rest = self.source.rest_world[:, 3, :3]
        s_frame = body_frame({p: s_index[n] for p, n in source_parts.items()}, source_rest)
        self.source_reference = self.source.rest_world
        if not upright(s_frame):  # a capture whose rest pose lies down: its first frame instead
            self.source_reference = self.source.world[0]
            s_frame = body_frame({p: s_index[n] for p, n in source_parts.items()}, self.source_reference[:, 3, :3])
        t_frame = body_frame({p: t_index[n] for p, n in target_parts.items()}, self.target.rest_world[:, 3, :3])
        if s_frame is None or t_frame is None:
            align = np.eye(3)
        elif upright(s_frame) and upright(t_frame):
            # Both stand: only a turn about +Y, so that the target is drawn as upright as the
            # source is in its world (a reference pose that leans, a walk's frame saved as an FBX
            # file's pose, does not tilt the whole motion).
            align = yaw_between(s_frame[2], t_frame[2])
        else:
            align = s_frame.T @ t_frame
        # Then the target turns about +Y to face, in its first frame, where the source faces in
        # its world (a capture whose rest faces away from its motion still shows the target's front).
        first = body_frame({p: s_index[n] for p, n in source_parts.items()}, self.source.world[0][:, 3, :3])
        self.turn = np.eye(3) if first is None or not upright(first) else yaw_between(first[2] @ align, first[2])
        self.align = align @ self.turn
        # Hip heights: the hips above the lowest joint, in each reference pose.
        hips = target_parts.get("hips") or self._topmost_mapped()
        self.hips = hips
        source_y = (self.source_reference[:, 3, :3] @ self.align)[:, 1]
        target_y = self.target.rest_world[:, 3, 1]
        # The floors: the lowest the source's joints go over the clip, the target's lowest at rest.
        self.source_floor = float((self.source.world[:, :, 3, :3] @ self.align)[..., 1].min())
        self.target_floor = float(target_y.min())
        source_height = source_y[s_index[self.bone_map[hips]]] - source_y.min()
        target_height = target_y[t_index[hips]] - target_y.min()
        self.hip_ratio = target_height / source_height if source_height > 1e-9 and target_height > 1e-9 else 1.0

    def _mapped_ancestor(self, i: int) -> int | None:
        parent = self.target.parents[i]
        while parent >= 0 and self.target.bones[parent].name not in self.bone_map:
            parent = self.target.parents[parent]
        return parent if parent >= 0 else None

    def _topmost_mapped(self) -> str:
        mapped = [i for i, b in enumerate(self.target.bones) if b.name in self.bone_map]
        return self.target.bones[min(mapped, key=self.target.depth)].name

    def mapped_child(self, i: int) -> int | None:
        """The target bone whose direction from bone ``i`` is matched: its nearest mapped
        descendant through unmapped bones (the spine chain's first, for several)."""
        target = self.target
        found, stack = [], [c for c in range(len(target.bones)) if target.parents[c] == i]
        while stack:
            c = stack.pop(0)
            if target.bones[c].name in self.bone_map:
                found.append(c)
            else:
                stack.extend(k for k in range(len(target.bones)) if target.parents[k] == c)
        part_of = {n: p for p, n in self.target_parts.items()}
        if not found:  # a shin whose foot hangs elsewhere (placed at the shin's end): that foot
            limb_child = {parent: part for part, parent in LIMB_PARENT.items()}.get(part_of.get(target.bones[i].name))
            name = self.target_parts.get(limb_child)
            return None if name is None else target.index[name]
        ranked = sorted(found, key=lambda c: (PREFERRED_CHILD.index(part_of.get(target.bones[c].name))
                                              if part_of.get(target.bones[c].name) in PREFERRED_CHILD else 99, c))
        return ranked[0]

    def _make_clip(self, name: str) -> AnimationClip:
        source, target, align = self.source, self.target, self.align
        frames = len(self.times)
        s_index = source.index
        world_rotation = {}  # target bone -> (F, 3, 3) world rotation, once each
        s_ref_rot = rotation_rows(self.source_reference)
        s_pos = source.world[:, :, 3, :3]
        t_rest_world = target.rest_world[0] if target.rest_world.ndim == 4 else target.rest_world
        # The target's rest as the turn leaves it (its rotations and bone directions turned about +Y);
        # its hips still start where they stand.
        t_rest_rot = rotation_rows(t_rest_world) @ self.turn
        t_rest_pos = t_rest_world[:, 3, :3]
        t_turned_pos = t_rest_pos @ self.turn
        world = np.empty((frames, len(target.bones), 4, 4))
        local_rotations, hips_translation, correction = {}, None, {}
        self.children = {}
        # World matrices only where a mapped bone needs them: the mapped bones and their ancestors.
        needed = set()
        for i, bone in enumerate(target.bones):
            if bone.name in self.bone_map:
                while i >= 0 and i not in needed:
                    needed.add(i)
                    i = target.parents[i]
        for i in target.order:
            if i not in needed:
                continue
            bone = target.bones[i]
            parent = target.parents[i]
            parent_world = np.broadcast_to(target.placement, (frames, 4, 4)) if parent < 0 else world[:, parent]
            scale_rows = target.rest_scaling[i]
            translation = np.broadcast_to(target.rest_translation[i], (frames, 3))
            if bone.name in self.bone_map:
                j = s_index[self.bone_map[bone.name]]
                delta = np.swapaxes(s_ref_rot[j], -1, -2) @ rotation_rows(source.world[:, j])  # change from reference
                delta = align.T @ delta @ align
                rotation = t_rest_rot[i] @ delta
                child = self.mapped_child(i)
                self.children[i] = child
                if child is not None:
                    k = s_index[self.bone_map[target.bones[child].name]]
                    wanted = _unit((s_pos[:, k] - s_pos[:, j]) @ align)
                    rest_direction = _unit(t_turned_pos[child] - t_turned_pos[i])
                    now = rest_direction @ delta
                    correction[i] = swing(now, wanted)
                else:
                    # No mapped child (a forearm whose hand has an unknown name): point the middle
                    # of its children where the middle of the source bone's children is; with
                    # none on either side (a head), turn with the parent's correction.
                    t_kids = [c for c in range(len(target.bones)) if target.parents[c] == i]
                    s_kids = [c for c in range(len(source.bones)) if source.parents[c] == j]
                    if t_kids and s_kids:
                        wanted = _unit((s_pos[:, s_kids].mean(axis=1) - s_pos[:, j]) @ align)
                        rest_direction = _unit(t_turned_pos[t_kids].mean(axis=0) - t_turned_pos[i])
                        correction[i] = swing(np.broadcast_to(rest_direction @ delta, wanted.shape), wanted)
                    else:
                        correction[i] = correction.get(self._mapped_ancestor(i), np.eye(3))
                rotation = rotation @ correction[i]
                if parent not in world_rotation:
                    world_rotation[parent] = rotation_rows(parent_world)
                local = rotation @ np.swapaxes(world_rotation[parent], -1, -2)
                world_rotation[i] = rotation
                q = quaternion_from_rotation_matrix(local)
                _keep_hemisphere(q)
                local_rotations[i] = q
                if bone.name == self.hips:
                    # Heights above each one's floor scale by the hip ratio; across the floor the
                    # target starts where it stands and moves as the source does from its first frame.
                    j0 = s_index[self.bone_map[self.hips]]
                    path = s_pos[:, j0] @ align
                    wanted_world = t_rest_pos[i] + (path - path[0]) * self.hip_ratio
                    wanted_world[:, 1] = self.target_floor + (path[:, 1] - self.source_floor) * self.hip_ratio
                    inverse = np.linalg.inv(parent_world)
                    translation = np.einsum("fk,fkl->fl", np.concatenate([wanted_world, np.ones((frames, 1))], 1),
                                            inverse)[:, :3]
                    hips_translation = translation
                world[:, i] = compose(scale_rows, q, translation) @ parent_world
            else:
                rest_local = compose(scale_rows, target.rest_rotation[i], target.rest_translation[i])
                world[:, i] = rest_local @ parent_world
        translations = {} if hips_translation is None else {target.index[self.hips]: hips_translation}
        translations.update(self._place_detached_limbs(world, s_pos, t_rest_pos))
        # The mapped bones' other translations and scales held where the world above put them
        # (the file's pose), whatever another clip left in their nodes: what is drawn is that world.
        ends = np.array([self.times[0], self.times[-1]]) if len(self.times) > 1 else self.times[:1]
        held = [(i, "translation", target.rest_translation[i]) for i in local_rotations if i not in translations]
        held += [(i, "scale", target.rest_scaling[i]) for i in local_rotations]
        self.target_world = world  # filled for the mapped bones and their ancestors only
        channels = []
        times = self.times
        for i, q in local_rotations.items():
            node = target.bones[i].get_pose_target()
            _require_node(node, target.bones[i])
            channels.append(AnimationChannel(node, "rotation", times, q, checked=True))
        for i, translation in translations.items():
            node = target.bones[i].get_pose_target()
            channels.append(AnimationChannel(node, "translation", times, np.ascontiguousarray(translation),
                                             checked=True))
        for i, path, value in held:
            channels.append(AnimationChannel(target.bones[i].get_pose_target(), path, ends,
                                             np.tile(value, (len(ends), 1)), checked=True))
        # Unmapped bones hold the file's pose (two keys each, whatever pose another clip left).
        for i, bone in enumerate(target.bones):
            if bone.name in self.bone_map or bone.index == -1:
                continue
            node = bone.get_pose_target()
            if not hasattr(node, "table"):
                continue
            for path, value in (("translation", target.rest_translation[i]), ("rotation", target.rest_rotation[i]),
                                ("scale", target.rest_scaling[i])):
                channels.append(AnimationChannel(node, path, ends, np.tile(value, (len(ends), 1)), checked=True))
        return AnimationClip(name, channels)


    def _place_detached_limbs(self, world, s_pos, t_rest_pos) -> dict:
        """Translations putting each mapped foot or hand that does not hang from its mapped shin or
        forearm at that limb's end: the rest distance along the source's direction (only for such
        a bone without mapped bones under it). Updates ``world``."""
        target, index = self.target, self.target.index
        part_of = {n: p for p, n in self.target_parts.items()}
        result = {}
        for name, part in part_of.items():
            limb = self.target_parts.get(LIMB_PARENT.get(part))
            if limb is None:
                continue
            b, a = index[name], index[limb]
            ancestor = target.parents[b]
            while ancestor >= 0 and ancestor != a:
                ancestor = target.parents[ancestor]
            if ancestor == a or self._has_mapped_descendant(b):
                continue
            source_a, source_b = self.source.index[self.bone_map[limb]], self.source.index[self.bone_map[name]]
            direction = _unit((s_pos[:, source_b] - s_pos[:, source_a]) @ self.align)
            wanted = world[:, a, 3, :3] + direction * np.linalg.norm(t_rest_pos[b] - t_rest_pos[a])
            parent = target.parents[b]
            parent_world = np.broadcast_to(target.placement, world[:, b].shape) if parent < 0 else world[:, parent]
            local = np.einsum("fk,fkl->fl", np.concatenate([wanted, np.ones((len(wanted), 1))], 1),
                              np.linalg.inv(parent_world))[:, :3]
            world[:, b, 3, :3] = wanted
            result[b] = local
        return result

    def _has_mapped_descendant(self, i: int) -> bool:
        stack = [c for c in range(len(self.target.bones)) if self.target.parents[c] == i]
        while stack:
            c = stack.pop()
            if self.target.bones[c].name in self.bone_map:
                return True
            stack.extend(k for k in range(len(self.target.bones)) if self.target.parents[k] == c)
        return False


def _require_node(node, bone) -> None:
    if not hasattr(node, "table"):
        raise ViewerError(f"retarget: bone {bone.name!r} of the target is not linked to a node, so a clip "
                          "cannot animate it (retarget onto glTF or BVH models)")


def _keep_hemisphere(q: np.ndarray) -> None:
    if len(q) < 2:
        return
    flips = np.cumsum(np.einsum("fk,fk->f", q[1:], q[:-1]) < 0) % 2
    q[1:][flips.astype(bool)] *= -1.0


def _choose_clip(scene, clip):
    clips = scene.animations
    if clip is None:
        if not clips:
            raise ViewerError(f"model {scene.name!r} has no animation to retarget")
        return clips[0]
    if isinstance(clip, str):
        for candidate in clips:
            if candidate.name == clip:
                return candidate
        listed = ", ".join(c.name for c in clips) or "none"
        raise ViewerError(f"animation {clip!r}: no such animation in {scene.name!r} (its animations: {listed})")
    if clip not in clips:
        raise ViewerError(f"animation {getattr(clip, 'name', clip)!r} is not one of {scene.name!r}'s animations")
    return clip


def retarget(source_scene, target_scene, clip=None, bone_map=None, name=None) -> AnimationClip:
    """A new clip on ``target_scene`` (added to its animations, named ``name`` or after the source
    clip) from ``clip`` of ``source_scene`` (a clip or its name; default: the first).
    ``bone_map``: ``{target bone: source bone}``, a path to such a JSON file, or None for the
    naming schemes' automatic map."""
    result = Retargeting(source_scene, target_scene, clip, bone_map, name)
    target_scene.animations.append(result.clip)
    target_scene.retargeting = result
    return result.clip


def facing_turn(rotation: np.ndarray) -> np.ndarray:
    """The turn about +Y of a (3, 3) row-vector rotation: where it takes +Z across the floor."""
    forward = np.array([0.0, 0.0, 1.0])
    turned = forward @ rotation
    if np.hypot(turned[0], turned[2]) < 1e-6:  # +Z taken straight up or down: judge by +X
        return yaw_between(np.array([1.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]) @ rotation)
    return yaw_between(forward, turned)


def retarget_error(retargeting: Retargeting, every: int = 1) -> tuple[float, list]:
    """(worst angle in degrees, [(target bone, its child, worst angle)]): what is drawn against the
    capture. For every mapped target bone whose mapped child is matched, the angle between its
    world direction as the new clip poses the target model (played through the model, not the
    retargeting's arrays: the skeleton as drawn, in the world after the reader's axis and unit
    conversion) and its source bone's direction in the source's world, turned only about +Y to
    face where the target faces (so a target drawn tilted or on its side from the capture counts,
    whatever the retargeting's own alignment), over every ``every``-th frame. A pair whose source
    bones lie at one place (a capture's zero-length joint, CMU's ``lowerback``) has no direction
    and is left out."""
    source_clip, target_clip = retargeting.source_clip, retargeting.clip
    source_skeleton, target_skeleton = retargeting.source_skeleton, retargeting.target_skeleton
    pairs = [(i, c) for i, c in retargeting.children.items() if c is not None]
    t_bones, s_index = retargeting.target.bones, retargeting.source.index
    t_rows = [(t_bones[i], t_bones[c]) for i, c in pairs]
    s_rows = [(s_index[retargeting.bone_map[a.name]], s_index[retargeting.bone_map[b.name]]) for a, b in t_rows]
    # Source pairs with a length: in the reference pose, more than a millionth of the source's size.
    reference = retargeting.source_reference[:, 3, :3]
    size = float(np.linalg.norm(reference.max(axis=0) - reference.min(axis=0))) or 1.0
    keep = [k for k, (sa, sb) in enumerate(s_rows) if np.linalg.norm(reference[sb] - reference[sa]) > 1e-6 * size]
    t_rows, s_rows = [t_rows[k] for k in keep], [s_rows[k] for k in keep]
    facing = facing_turn(retargeting.align)
    source_bones = list(source_skeleton.bones)
    target_place = placement_matrix(retargeting.target_scene, target_skeleton)
    source_place = placement_matrix(retargeting.source_scene, source_skeleton)
    worst = np.zeros(len(t_rows))
    for t in retargeting.times[::every]:
        source_clip.apply(t)
        target_clip.apply(t)
        source_skeleton.prepare()
        target_skeleton.prepare()
        s_abs = np.array([b.get_absolute_matrix() for b in source_bones]) @ source_place
        t_pos = {id(b): (b.get_absolute_matrix() @ target_place)[3, :3] for pair in t_rows for b in pair}
        for n, ((a, b), (sa, sb)) in enumerate(zip(t_rows, s_rows)):
            d_t = _unit(t_pos[id(b)] - t_pos[id(a)])
            d_s = _unit((s_abs[sb, 3, :3] - s_abs[sa, 3, :3]) @ facing)
            angle = np.degrees(np.arccos(np.clip(np.dot(d_t, d_s), -1.0, 1.0)))
            worst[n] = max(worst[n], angle)
    rows = [(a.name, b.name, float(w)) for (a, b), w in zip(t_rows, worst)]
    return (float(worst.max()) if len(worst) else 0.0), rows
