"""Scene: what a loader returns and a renderer draws (numpy only)."""

from __future__ import annotations


import numpy as np

from ..errors import ViewerError
from .animation import INTERPOLATIONS, KEY_TOLERANCE, AnimationChannel, AnimationClip, _with_key, _without_keys
from .checks import finite_number
from .mesh import SkinnedMesh, bounds
from .morph import Expressions, MorphAnimationClip, MorphWeightChannel


class Scene:
    """Skinned meshes with their skeletons, scene nodes and animations.

    ``leaf_bone_axis`` is the bone-local direction along which the skeleton overlay draws a
    leaf bone for its ``length``: +Y as Babylon's SkeletonViewer and Blender/glTF rigs.
    ``rest_bounds`` is measured once, in the pose the scene was built in, so posing or
    animating never moves a camera framed on it (a loader that knows it already passes it).
    """

    def __init__(self, name: str, skinned_meshes: list[SkinnedMesh], nodes=(), animations=(),
                 leaf_bone_axis=(0.0, 1.0, 0.0), static_meshes=(), rest_bounds=None):
        self.name = name
        self.skinned_meshes = list(skinned_meshes)
        self.static_meshes = list(static_meshes)  # meshes without a skin, placed by their node
        self.nodes = list(nodes)
        self.animations = list(animations)
        self.leaf_bone_axis = np.asarray(leaf_bone_axis, dtype=np.float64)
        self.file_scenes: list[str] = []  # the scenes of the file it was loaded from (glTF), by name
        self.file_scene: int | None = None  # the one of them it shows
        self.file_path = None  # the file it was loaded from, if any (another of its scenes; never written over)
        self.file_extensions: list[str] = []  # the glTF extensions that file used
        self.lights: list = []  # PunctualLight (KHR_lights_punctual), each placed by its node
        # {body part: bone name} a file names (VRM's humanoid map): retargeting's bone map for this
        # model, before the naming schemes.
        self.humanoid: dict[str, str] = {}
        self.expressions = Expressions()  # {name: Expression}: named groups of morph weights (VRM's)
        self.vrm = None  # what a VRM file's extension says (viewer.gltf.vrm.Vrm), for info
        if rest_bounds is None:
            with np.errstate(over="ignore", invalid="ignore"):  # huge but finite numbers overflow here
                rest_bounds = self.current_bounds()
        self.rest_bounds = tuple(np.asarray(b, dtype=np.float64) for b in rest_bounds)
        if not (np.isfinite(self.rest_bounds[0]).all() and np.isfinite(self.rest_bounds[1]).all()):
            raise ViewerError(f"model {name!r}: its extent is not finite (vertices or transforms too large "
                              "to place in world space)")

    @property
    def mixer(self):
        """The scene's animation mixer (viewer.motion.Mixer), made the first time it is asked
        for: it takes the pose the nodes hold then as the base its blends fill in with."""
        mixer = self.__dict__.get("_mixer")
        if mixer is None:
            from ..motion import Mixer  # motion sits above the model; imported when first used
            mixer = self._mixer = Mixer(self)
        return mixer

    @property
    def springs(self):
        """The scene's spring bones (viewer.motion.springs.SpringBones; empty until a file or
        ``add_chain`` gives it chains): ``update(dt)``, ``reset()``, ``add_chain(root, ...)``."""
        from ..motion.springs import springs_of  # motion sits above the model

        return springs_of(self)

    @property
    def constraints(self):
        """The scene's node constraints (viewer.motion.constraints.NodeConstraints; VRMC_node_constraint's
        roll, aim and rotation constraints): applied after the motion, before the springs."""
        from ..motion.constraints import constraints_of  # motion sits above the model

        return constraints_of(self)

    @property
    def skeletons(self) -> list:
        """Each skeleton once, in mesh order (a skin shared by meshes is updated once)."""
        seen, result = set(), []
        for mesh in self.skinned_meshes:
            if mesh.skeleton is not None and id(mesh.skeleton) not in seen:
                seen.add(id(mesh.skeleton))
                result.append(mesh.skeleton)
        return result

    @property
    def meshes(self) -> list[SkinnedMesh]:
        return self.skinned_meshes + self.static_meshes

    @property
    def morph_meshes(self) -> list[SkinnedMesh]:
        """The meshes with morph targets, in mesh order."""
        return [mesh for mesh in self.meshes if mesh.morph_targets is not None]

    def prepare(self) -> None:
        """Bring skeletons (once each) and node-placed mesh world matrices up to date (the node
        constraints first, where the pose they read changed since they were applied)."""
        constraints = self.__dict__.get("_constraints")
        if constraints is not None:
            constraints.apply_if_changed()
        for skeleton in self.skeletons:
            skeleton.prepare()
        walked = {}  # the placement nodes' ancestors, walked once for all the meshes
        for mesh in self.meshes:
            mesh.update_world_matrix(walked)

    def current_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """World-space bounds of the CPU-skinned meshes as they are now."""
        # Each mesh brings its skeleton and world matrix up to date (Scene.prepare's work, done
        # once); the normals are not needed.
        points = [mesh.skinned_positions() for mesh in self.meshes]
        return bounds(np.concatenate(points) if points else np.zeros((0, 3)))

    def set_skinning(self, mode) -> None:
        """Every skinned mesh's ``skinning``: "lbs" (linear blend) or "dq" (dual quaternions)."""
        from .mesh import skinning_mode

        mode = skinning_mode(mode)
        for mesh in self.skinned_meshes:
            mesh.skinning = mode

    def set_expression(self, name: str, weight: float) -> None:
        """Expression ``name``'s value (0..1, clamped) and the morph weights it binds, now; an
        expression the model lacks is one error naming those it has."""
        self.expressions.set(name, weight)

    def apply_expressions(self) -> None:
        """The expressions' morph weights written again (after a clip that drives weights)."""
        self.expressions.apply()

    def find_bone(self, name: str):
        """The first bone of that name in any skeleton, or None."""
        for skeleton in self.skeletons:
            index = skeleton.get_bone_index_by_name(name)
            if index >= 0:
                return skeleton.bones[index]
        return None

    def require_bone(self, name: str, what: str):
        """The bone of that name, or a ViewerError that starts with ``what`` and lists the
        model's bones (a typo is then easy to see)."""
        bone = self.find_bone(name)
        if bone is None:
            known = sorted({b.name for s in self.skeletons for b in s.bones})
            listed = ", ".join(known[:15]) + (", ..." if len(known) > 15 else "")
            raise ViewerError(f"{what}: unknown bone {name!r} (this model's bones: {listed})")
        return bone

    # --- keyframe authoring ------------------------------------------------------------------------
    def find_animation(self, name: str):
        """The clip called ``name``, or None."""
        return next((clip for clip in self.animations if clip.name == name), None)

    def insert_keyframe(self, clip_name: str, time: float, bones=None, interpolation: str = "LINEAR"):
        """Key the current local TRS of ``bones`` (Bone objects or names; default every bone of
        every skeleton, and then the morph weights of every mesh with targets too) at ``time``
        seconds into the clip ``clip_name``, made when missing. A glTF bone keys its joint node
        (its pose target). A key at an existing time (within 1e-6 s) is replaced. Returns the clip,
        which plays like a loaded one and is written by save_gltf."""
        time = _key_time(time)
        if interpolation not in INTERPOLATIONS:
            raise ViewerError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}, got {interpolation!r}")
        targets = self.pose_targets(bones)
        groups = self.morph_groups() if bones is None else []
        clip = self.clip_for_keys(clip_name, morph=bool(groups))
        clip.set_keys(time, [entry for target in targets for entry in (
            (target, "translation", target.position), (target, "rotation", target.rotation_quaternion),
            (target, "scale", target.scaling))], interpolation)
        for meshes in groups:
            _key_weights(clip, meshes, time, np.array(meshes[0].morph_weights, dtype=np.float64), interpolation)
        clip.keys_changed()
        return clip

    def record_keyframes(self, clip_name: str, bones=None, interpolation: str = "LINEAR") -> "KeyframeRecorder":
        """A recorder for many steps: ``capture(time)`` after posing each step, ``finish()`` to
        key them all, as insert_keyframe at each time would, in one pass (a motion recorded
        from a script: reading the pose each step is all a step costs)."""
        if interpolation not in INTERPOLATIONS:
            raise ViewerError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}, got {interpolation!r}")
        if not isinstance(clip_name, str) or not clip_name.strip():
            raise ViewerError(f"a clip name must be a non-empty string, got {clip_name!r}")
        return KeyframeRecorder(self, clip_name, bones, interpolation)

    def delete_keyframe(self, clip_name: str, time: float, bones=None) -> int:
        """Remove the keys at ``time`` (within 1e-6 s) of ``bones`` (default: every channel of the
        clip, morph weights too) from clip ``clip_name``; returns how many keys went."""
        time = _key_time(time)
        clip = self.find_animation(clip_name)
        if clip is None:
            raise ViewerError(f"no animation {clip_name!r} (this model's: "
                              f"{', '.join(c.name for c in self.animations) or 'none'})")
        targets = None if bones is None else self.pose_targets(bones)
        removed = clip.remove_keys(time, targets)
        if bones is None and isinstance(clip, MorphAnimationClip):
            clip.morph_channels, gone = _without_keys(clip.morph_channels, time)
            removed += gone
            clip.keys_changed()
        if not removed:
            raise ViewerError(f"animation {clip_name!r} has no key at {time:g} s")
        return removed

    def pose_targets(self, bones=None) -> list:
        """Where the pose of ``bones`` lives (Bone.get_pose_target), each once: ``bones`` is None
        for every bone, a Bone, a name, or a list of them."""
        if bones is None:
            bones = [bone for skeleton in self.skeletons for bone in skeleton.bones]
        elif isinstance(bones, str) or not isinstance(bones, (list, tuple, set)):
            bones = [bones]
        targets, seen = [], set()
        for bone in bones:
            if isinstance(bone, str):
                bone = self.require_bone(bone, "insert_keyframe")
            if not hasattr(bone, "get_pose_target"):
                raise ViewerError(f"keyframes key bones (Bone objects or names), got {bone!r}")
            target = bone.get_pose_target()
            if id(target) not in seen:
                seen.add(id(target))
                targets.append(target)
        return targets

    def morph_groups(self) -> list[list]:
        """The meshes with morph targets, those on one node together (they share its weights)."""
        groups: dict = {}
        for mesh in self.morph_meshes:
            key = ("node", mesh.node_index) if mesh.node_index is not None else ("mesh", id(mesh))
            groups.setdefault(key, []).append(mesh)
        return list(groups.values())

    def clip_for_keys(self, name: str, morph: bool) -> AnimationClip:
        """The clip called ``name`` to key into, made when missing; ``morph``: one that can hold
        weights channels too (a clip of bones only becomes one, in its place)."""
        if not isinstance(name, str) or not name.strip():
            raise ViewerError(f"a clip name must be a non-empty string, got {name!r}")
        clip = self.find_animation(name)
        if clip is None:
            clip = MorphAnimationClip(name, [], []) if morph else AnimationClip(name, [])
            self.animations.append(clip)
        elif morph and not isinstance(clip, MorphAnimationClip):  # weights join a clip of bones only
            twin = MorphAnimationClip(name, clip.channels, [])
            self.animations[self.animations.index(clip)] = twin
            clip = twin
        return clip


class KeyframeRecorder:
    """Steps of a pose captured one by one and keyed at the end (Scene.record_keyframes)."""

    def __init__(self, scene: Scene, clip_name: str, bones, interpolation: str):
        self.scene, self.clip_name, self.bones, self.interpolation = scene, clip_name, bones, interpolation
        self.targets = scene.pose_targets(bones)
        self.groups = scene.morph_groups() if bones is None else []
        self.times: list[float] = []
        self.poses: list[np.ndarray] = []   # per step: (targets, 10) translation, rotation, scale
        self.weights: list[list] = []       # per step: each group's weights
        # Nodes are read a table at a time (one gather per array per step); bones posed by
        # themselves (no node) one by one.
        tables: dict = {}
        self.loose = []
        for i, target in enumerate(self.targets):
            table = getattr(target, "table", None)
            if table is None:
                self.loose.append(i)
            else:
                tables.setdefault(id(table), (table, [], []))
                tables[id(table)][1].append(i)
                tables[id(table)][2].append(target.table_row)
        self.tables = [(table, np.array(where), np.array(rows)) for table, where, rows in tables.values()]

    def capture(self, time: float) -> None:
        """Read the pose (and the morph weights) as it is now, for the key at ``time``."""
        self.times.append(_key_time(time))
        pose = np.empty((len(self.targets), 10))
        for table, where, rows in self.tables:
            pose[where, :3] = table.position[rows]
            pose[where, 3:7] = table.quaternion[rows]
            pose[where, 7:] = table.scaling[rows]
        for i in self.loose:
            target = self.targets[i]
            pose[i] = np.concatenate((target.position, target.rotation_quaternion, target.scaling))
        self.poses.append(pose)
        self.weights.append([np.array(meshes[0].morph_weights, dtype=np.float64) for meshes in self.groups])

    def finish(self):
        """Key every captured step into the clip; returns it (None when nothing was captured)."""
        scene, times = self.scene, np.array(self.times)
        if not self.times:
            return None
        new = scene.find_animation(self.clip_name) is None
        if not new or (np.diff(times) <= KEY_TOLERANCE).any():  # keys to merge: step by step
            for k, time in enumerate(self.times):
                clip = scene.clip_for_keys(self.clip_name, morph=bool(self.groups))
                clip.set_keys(time, [entry for target, row in zip(self.targets, self.poses[k]) for entry in (
                    (target, "translation", row[:3]), (target, "rotation", row[3:7]), (target, "scale", row[7:]))],
                    self.interpolation)
                for meshes, weights in zip(self.groups, self.weights[k]):
                    _key_weights(clip, meshes, time, weights, self.interpolation)
                clip.keys_changed()
            return clip
        clip = scene.clip_for_keys(self.clip_name, morph=bool(self.groups))
        poses = np.stack(self.poses)  # (steps, targets, 10)
        for i, target in enumerate(self.targets):
            for path, columns in (("translation", slice(0, 3)), ("rotation", slice(3, 7)), ("scale", slice(7, 10))):
                clip.channels.append(AnimationChannel(target, path, times, poses[:, i, columns], self.interpolation))
        for g, meshes in enumerate(self.groups):
            values = np.array([step[g] for step in self.weights])
            clip.morph_channels.append(MorphWeightChannel(meshes, times, values, self.interpolation,
                                                          f"{clip.name} weights"))
        clip.keys_changed()
        return clip



def _key_weights(clip, meshes, time: float, weights: np.ndarray, interpolation: str) -> None:
    """Key the morph weights of ``meshes`` (one node's) at ``time`` in ``clip``."""
    channel = next((c for c in clip.morph_channels if c.meshes[0] is meshes[0]), None)
    if channel is None:
        clip.morph_channels.append(MorphWeightChannel(meshes, [time], [weights], interpolation, f"{clip.name} weights"))
    else:
        channel.set_keys(*_with_key(channel.times, channel.values, channel.interpolation, time, weights, interpolation))


def _key_time(time) -> float:
    value = finite_number(time, "a keyframe time")
    if value < 0:
        raise ViewerError(f"a keyframe time must be a finite number of seconds >= 0, got {time!r}")
    return value


__all__ = ["KEY_TOLERANCE", "KeyframeRecorder", "Scene"]
