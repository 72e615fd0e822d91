"""The pose editor's state and actions: what the ImGui panel does, as plain Python.

Every button and field of the panel calls one method here, and every method changes the
model only through its public API, so each has a one-line scripted equivalent and a unit
test without a window. No GL, no ImGui.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pyrr

from ..errors import ViewerError
from ..model.animation import clip_time
from ..model.bone import Bone
from ..model.checks import finite_array
from ..model.controllers import BoneIKController, BoneLookController
from ..model.space import Space, checked_space, tnode_world_matrix
from ..model.transforms import quaternion_from_yaw_pitch_roll, yaw_pitch_roll_from_quaternion
from ..model.weights import WeightCheck, weight_check
from ..options import LOOK_FIELDS, Axes, Marker, MarkerKind, Paint, RenderOptions, Status
from .pose import PARTS, apply_pose, pose_of, save_pose, set_bone_pose
from .pose import load_pose as read_pose_file

UNDO_LIMIT = 200

LOOK, IK = "look", "ik"                         # BoneController.kind
TARGET_COLOR = (1.0, 0.2, 0.85, 1.0)            # the target's cross: magenta, unlike anything in a model
CHAIN_COLOR = (0.3, 1.0, 0.4, 1.0)              # the IK chain, upper bone -> lower bone -> end
POLE_COLOR = (1.0, 0.55, 0.1, 1.0)              # the pole point
BEND_COLOR = (1.0, 0.25, 0.25, 1.0)             # the bend axis at the elbow
GUIDE_COLOR = (1.0, 1.0, 1.0, 0.5)              # thin lines: bone to target, elbow to pole


@dataclass(frozen=True)
class BoneController:
    """A controller the editor runs every frame on one bone, and where its inputs come from.

    ``target`` (and an IK ``pole``) is a world point (a tuple) or a Bone whose world position
    it follows each frame; ``pole`` None is the controller's default (the upper bone's parent).
    ``controller`` is the model's BoneLookController / BoneIKController: the editor sets its
    inputs from this record before each update, so an undo step that restores the record
    restores the controller too.
    """

    kind: str                       # LOOK or IK
    bone: object
    controller: object
    target: object
    pole: object = None
    pole_angle: float = 0.0

    @property
    def bend_axis(self) -> np.ndarray | None:
        """IK: the elbow's axis in the upper bone's frame (the controller's choice), else None."""
        return self.controller.bend_axis if self.kind == IK else None


@dataclass
class Playback:
    clip_index: int | None = None
    time: float = 0.0
    playing: bool = False
    speed: float = 1.0
    loop: bool = True


@dataclass
class Editor:
    scene: object
    selected: object = None                       # the selected Bone
    # Whether a bone was chosen (a click, the panel, a script) since the model opened: the first bone
    # is selected on open for the panel, but its gizmo would cover the hips until one is chosen.
    selection_chosen: bool = False
    display: RenderOptions = field(default_factory=RenderOptions)   # the panel's toggles
    playback: Playback = field(default_factory=Playback)
    status: Status = field(default_factory=Status)  # one line for the panel
    space: Space = Space.LOCAL                    # the panel's Local/World toggle for the pose fields
    key_interpolation: str = "LINEAR"             # what new keys get (the panel's LINEAR/STEP choice)
    timeline_end: float = 0.0                     # the playhead may go this far past a shorter clip (to key there)

    # Playback goes through the scene's mixer (viewer.motion): the current clip is one action of
    # it, so a seek is ``mixer.time = t`` and playing is ``mixer.update(dt)`` (a clip alone gives
    # clip.apply's numbers). With a clip, a pose edit goes into the mixer's active layer as an
    # offset from what the actions give at that instant (see ``edit_layer``), so the clip keeps
    # playing with the edit on it; with no clip, or the active layer muted, edits pose the bones.

    def __post_init__(self):
        self._undo: list[tuple] = []   # (pose, controllers, clips, layer tracks) before each step
        self._redo: list[tuple] = []
        self._edit_open = False
        self._turned: list = []        # bones a gesture of the open edit turns itself (begin_edit)
        self._controllers: dict = {}   # Bone -> BoneController, in the order they were set
        self._weight_check: WeightCheck | None = None  # counted on first use
        self._action = None            # the mixer action playing the current clip, once shown
        self._clip_shown = False       # whether the clip has been shown (seek, play) since it was chosen
        if self.scene.animations and self.playback.clip_index is None:
            self.playback.clip_index = 0
        from .qa import MotionQA

        self.qa = MotionQA(self)       # the motion checks on the current clip (the panel's QA section)
        bones = self.bones()
        if self.selected is None and bones:
            self.selected = bones[0]

    # --- bones ---------------------------------------------------------------------------------
    def bones(self) -> list:
        return [bone for skeleton in self.scene.skeletons for bone in skeleton.bones]

    def select(self, bone) -> None:
        """Select a bone of this scene (or None); anything else is a ViewerError, so a script's
        mistake is one line instead of a broken frame later."""
        if bone is not None and not (isinstance(bone, Bone) and bone.get_skeleton() in self.scene.skeletons):
            raise ViewerError(f"cannot select {bone!r}: not a bone of this model")
        self.selected = bone
        self.selection_chosen = bone is not None

    def select_by_name(self, name: str) -> None:
        bone = self.scene.find_bone(name)
        if bone is None:
            raise ViewerError(f"no bone named {name!r}")
        self.selected = bone
        self.selection_chosen = True

    def mesh_of(self, bone):
        """The skinned mesh that places ``bone``'s skeleton in the world (the ``tnode`` of the
        Space API and the controllers), or None (skeleton space is world space)."""
        skeleton = bone.get_skeleton()
        for mesh in self.scene.skinned_meshes:
            if mesh.skeleton is skeleton:
                return mesh
        return None

    def set_space(self, space) -> None:
        """Space.LOCAL or Space.WORLD: what the panel's position and rotation fields show and edit."""
        space = checked_space(space, "editor space")
        if space is Space.BONE:
            raise ViewerError("editor space: the pose fields show Space.LOCAL or Space.WORLD")
        self.space = space

    # --- pose edits (undoable) ---------------------------------------------------------------------
    def _snapshot(self) -> tuple:
        return (pose_of(self.scene), dict(self._controllers), _clips_state(self.scene, self.playback),
                self._layers_state(), dict(self.scene.expressions.weights))

    def _layers_state(self) -> list:
        """Every layer's tracks (an edit replaces a track's entry, never changes it in place)."""
        mixer = self.mixer if self.clip is not None else _mixer_of(self.scene)  # with a clip, edits go there
        return [] if mixer is None else [(layer, dict(layer.tracks)) for layer in mixer.layers]

    @staticmethod
    def _restore_layers(state) -> None:
        for layer, tracks in state:
            layer.tracks = dict(tracks)

    def _restore(self, snapshot) -> None:
        pose, controllers, clips, layers, expressions = snapshot
        self.scene.expressions.weights = dict(expressions)  # the weights they set come back with the pose
        _restore_clips(self.scene, self.playback, clips)
        self._restore_layers(layers)
        apply_pose(self.scene, pose)
        self._controllers = dict(controllers)
        # The playhead is no undo step: the step's layers over the clip at the time shown now,
        # not the clip at the time the step was made.
        self._refresh(pose)
        self.display.markers = self.markers()

    # --- playback through the mixer ------------------------------------------------------------
    @property
    def mixer(self):
        """The scene's animation mixer (viewer.motion.Mixer): the current clip plays as one of its
        actions, and pose edits go into its active layer."""
        return self.scene.mixer

    @property
    def edit_layer(self):
        """The mixer layer a pose edit goes into: the active layer when there is a current clip
        and that layer shows (not muted, weight above 0); else None, and edits pose the bones
        directly (pausing a playing clip, whose next frame would overwrite them): the classic
        keyframe editing, where Key (I) keys the pose into the clip."""
        if self.clip is None:
            return None
        layer = self.mixer.active_layer
        if layer is None or layer.mute or layer.weight <= 0:
            return None
        return layer

    def _sync_action(self):
        """The current clip's action (played in the mixer); a previous clip's action is stopped."""
        clip, action = self.clip, self._action
        if action is not None and (clip is None or action.clip is not clip):
            # Another clip (chosen, new, or the same one remade with new channels): the old one stops
            # and what it left on the bones stays (the mixer's own value, where no clip drives them);
            # the new one shows from the next seek or frame of playback.
            action.stop()
            self._action = None
            self._clip_shown = False
            self.mixer.rebase()
        if clip is None:
            return None
        action = self.mixer.action(clip)
        action.loop = "repeat" if self.playback.loop else "once"
        if self._action is not action:
            self._action = action
        return action

    def _show(self, time: float) -> None:
        """The current clip at ``time`` (``mixer.time = t``: the clip, the other running actions and
        the layers); past the clip's end (the timeline may reach further, to key there) its last frame."""
        action = self._sync_action()
        if action is None:
            return
        action.play()
        self._clip_shown = True
        duration = action.clip.duration
        self.mixer.time = min(float(time), duration) if duration > 0 else 0.0

    def _refresh(self, pose=None) -> None:
        """After the clip or the layers changed: the mix at the playhead when the clip is shown;
        else the layers over the bones as they are, then ``pose`` (the bones as a step left them)."""
        if self.clip is not None and self._clip_shown:
            self._show(self.playback.time)
            return
        self._sync_action()
        mixer = _mixer_of(self.scene)
        if mixer is not None:
            mixer.evaluate()
        if pose is not None:
            apply_pose(self.scene, pose)

    # --- edits into the layer --------------------------------------------------------------------
    def _routed(self, change, named=None) -> None:
        """Run ``change`` (which sets bones through the model's API). With an ``edit_layer``, the
        parts it changed (and those ``named()`` returns: {pose target: parts}) go into that layer,
        offsets from what the actions give now; a changed morph weight pauses a playing clip
        (layers hold bones and nodes, not morph weights). Without one, a playing clip pauses."""
        layer = self.edit_layer
        if layer is None:
            change()
            self.pause()  # else the next frame of a playing clip overwrites the edit
            return
        self._sync_action()
        self.mixer.layout  # the mixer's own values (its base) taken before the change, not after
        before = _pose_values(self.scene)
        change()
        after = _pose_values(self.scene)
        also = named() if named is not None else {}
        poses = {}
        for target, values in after[0].items():
            old = before[0].get(target)
            # a part changed (not only by the rounding of a setter that recomposes the others)
            parts = {part: value for part, value, was in zip(PARTS, values, old if old is not None else (None,) * 3)
                     if was is None or part in also.get(target, ()) or np.abs(value - was).max() > 1e-12}
            if parts:
                poses[target] = parts
        if any(not np.array_equal(weights, before[1].get(mesh)) for mesh, weights in after[1].items()):
            self.pause()
        self._hold(layer, poses)

    def _hold(self, layer, poses) -> None:
        """``poses`` ({pose target: {part: value}}) into ``layer``: held over the clip, or keyed at
        the current time where that bone's part already has keys in the layer (then interpolated)."""
        if not poses:
            return
        self._sync_action()
        held, keyed = {}, {}
        for target, parts in poses.items():
            track = layer.tracks.get(id(target))
            for part, value in parts.items():
                path = _LAYER_PATHS[part]
                has_keys = track is not None and path in track[1] and track[1][path][0] is not None
                (keyed if has_keys else held).setdefault(target, {})[part] = value
        def write():
            if held:
                self.mixer.set_poses(held, layer=layer)
            if keyed:
                self.mixer.set_poses(keyed, key=True, layer=layer)
        self._keeping_morph(write)

    def _keeping_morph(self, write) -> None:
        """``write()`` a layer change: the mix it writes would put a clip's morph weights back, but a
        bone edit leaves the weights shown as they are (set by a slider or a pose file, which paused
        the clip)."""
        weights = [(mesh, np.array(mesh.morph_weights)) for mesh in self.scene.morph_meshes]
        write()
        for mesh, values in weights:
            if not np.array_equal(mesh.morph_weights, values):
                mesh.morph_weights = values

    def write_pose(self, bones, positions=None, rotations=None, scalings=None, writer=None) -> None:
        """A pose of many bones at once, not an undo step (a remote client's stream): rows of
        (N, 3) / (N, 4) / (N, 3) values, checked, for ``bones``. With an ``edit_layer`` it goes
        into that layer (the clip keeps playing with it); else it is written (by ``writer``, a
        PoseWriter of those bones) and a playing clip pauses. A row written twice: the later wins."""
        layer = self.edit_layer
        if layer is None:
            from ..model.pose_writer import PoseWriter

            (writer or PoseWriter(bones)).write(positions, rotations, scalings)
            self.pause()
            return
        keyed = any(times is not None for _, paths in layer.tracks.values() for times, _ in paths.values())
        if not keyed:   # all held: the rows go in as they are (a stream's case)
            self._sync_action()
            self._keeping_morph(lambda: self.mixer.set_pose_rows(bones, positions, rotations, scalings, layer=layer))
            return
        poses = {}
        for i, bone in enumerate(bones):
            parts = poses.setdefault(bone.get_pose_target(), {})
            for part, values in (("position", positions), ("rotation_quaternion", rotations), ("scaling", scalings)):
                if values is not None:
                    parts[part] = values[i]
        self._hold(layer, poses)

    def stream_pose(self, pose: dict, source: str = "pose") -> None:
        """``set_pose`` without an undo step (a remote client's pose dict)."""
        self._routed(lambda: apply_pose(self.scene, pose, source), lambda: self._named(pose))

    def _named(self, pose) -> dict:
        """{pose target: the parts a pose (in the pose file's structure) names}."""
        bones = pose["bones"] if isinstance(pose, dict) and "bones" in pose else pose
        named = {}
        for name, parts in bones.items():
            bone = self.scene.find_bone(name)
            if bone is not None and isinstance(parts, dict):
                named.setdefault(bone.get_pose_target(), set()).update(part for part in parts if part in PARTS)
        return named

    def begin_edit(self, turned=()) -> None:
        """Start one undoable edit; a drag calls this once, then changes values many times.
        ``turned``: bones a viewport gesture turns itself (not through this editor's setters);
        their rotations go into the edit layer when the edit ends."""
        if not self._edit_open:
            self._undo.append(self._snapshot())
            del self._undo[:-UNDO_LIMIT]
            self._redo.clear()
            self._edit_open = True
            self._turned = []
        # with the rotation each had: a gesture that ends where it began (a click) adds nothing
        self._turned += [(bone, np.array(bone.get_pose_target().rotation_quaternion)) for bone in turned]
        if self.edit_layer is None:
            self.pause()  # nothing holds the edit: the next frame of a playing clip would overwrite it

    def end_edit(self) -> None:
        turned, self._turned = self._turned, []
        if self._edit_open and turned:
            layer = self.edit_layer
            if layer is not None:
                self._hold(layer, {bone.get_pose_target(): {"rotation_quaternion": now}
                                   for bone, began in turned
                                   if not np.array_equal(now := np.array(bone.get_pose_target().rotation_quaternion),
                                                         began)})
        self._edit_open = False

    def drop_edit(self) -> None:
        """Close the open edit and forget its undo step, leaving the pose as it is: a cancelled
        viewport gesture, which has put back the bones it touched itself (bit for bit); the
        layers go back to the step's."""
        if self._edit_open:
            self._edit_open = False
            self._turned = []
            snapshot = self._undo.pop()
            now = {id(layer): tracks for layer, tracks in self._layers_state()}
            if any(tracks.keys() != now.get(id(layer), {}).keys()
                   or any(entry is not now[id(layer)][key] for key, entry in tracks.items())
                   for layer, tracks in snapshot[3]):
                shown = _pose_values(self.scene)[0]   # as the gesture put them back, bit for bit
                self._restore_layers(snapshot[3])
                self._refresh()
                if not self._clip_shown:
                    for target, (position, rotation, scaling) in shown.items():
                        target.position, target.rotation_quaternion, target.scaling = position, rotation, scaling

    def mirror_bone(self, bone) -> None:
        """The bone's mirror (leftArm -> rightArm, Palm2.L -> Palm2.R, ...) takes its pose,
        reflected across the model's left-right plane. One undo step."""
        self._mirror([bone.get_skeleton()], [bone], f"mirrored {bone.name}")

    def mirror_pose(self) -> None:
        """Mirror the whole pose across the model's left-right plane: left and right swap
        their turns, centre bones turn the mirrored way. One undo step."""
        self._mirror(self.scene.skeletons, None, "mirrored the pose")

    def _mirror(self, skeletons, sources, message) -> None:
        from .interaction import mirror_rotations

        def change():
            # Every skeleton's result first: two skins may share joint nodes.
            results = []
            for skeleton in skeletons:
                mesh = next((m for m in self.scene.skinned_meshes if m.skeleton is skeleton), None)
                results += mirror_rotations(skeleton, None if mesh is None else mesh.world_matrix, sources).items()
            for bone, (quaternion, position) in results:
                set_bone_pose(bone, rotation_quaternion=quaternion, position=position)
        self._edit(change)
        self.status = Status(message)

    def _edit(self, change, named=None, route: bool = True) -> None:
        """One undo step, unless the panel holds an edit open for a whole drag; what ``change``
        sets goes into the edit layer (``_routed``) unless ``route`` is False."""
        opened_here = not self._edit_open
        self.begin_edit()
        try:
            if route:
                self._routed(change, named)
            else:
                change()
        except BaseException:
            if opened_here:  # the model refused the change and kept its pose: no empty undo step
                self._undo.pop()
            raise
        finally:
            if opened_here:
                self.end_edit()

    def set_position(self, bone, position, space=Space.LOCAL) -> None:
        """The bone's position in its parent's frame (LOCAL) or in the world (WORLD: where its
        mesh places it; ``bone.set_position(p, Space.WORLD, mesh)``)."""
        if self._checked_space(space) is Space.LOCAL:
            self._edit(lambda: set_bone_pose(bone, position=position))
            return
        mesh = self.mesh_of(bone)
        world = tnode_world_matrix(mesh, f"bone {bone.name!r} set_position")
        if bone.get_parent() is None and world is not None:
            # Babylon's set_position ignores the tnode for a root bone; the field shows
            # get_position(WORLD, mesh), which does not: take the point into skeleton space.
            point = _finite(position, 3, f"bone {bone.name!r} position")
            row = np.append(point, 1.0) @ np.linalg.inv(world)
            self._edit(lambda: bone.set_position(row[:3] / row[3], Space.LOCAL))
        else:
            self._edit(lambda: bone.set_position(position, Space.WORLD, mesh))

    def set_rotation_quaternion(self, bone, quaternion, space=Space.LOCAL) -> None:
        """Set the rotation, local or world; the quaternion is renormalized (a zero one is refused)."""
        q = np.asarray(quaternion, dtype=np.float64)
        norm = float(pyrr.vector.length(q)) if q.shape == (4,) else math.nan
        if not math.isfinite(norm) or norm < 1e-9:
            raise ViewerError(f"bone {bone.name!r}: {q.tolist()} is not a rotation")
        unit = pyrr.quaternion.normalize(q)  # pyrr for single quaternions; batches stay numpy
        if self._checked_space(space) is Space.LOCAL:
            self._edit(lambda: set_bone_pose(bone, rotation_quaternion=unit))
        else:
            mesh = self.mesh_of(bone)
            self._edit(lambda: _keeping_scale(bone, lambda: bone.set_rotation_quaternion(unit, Space.WORLD, mesh)))

    def set_yaw_pitch_roll_degrees(self, bone, yaw, pitch, roll, space=Space.LOCAL) -> None:
        """Babylon's rotation vector in degrees (x pitch, y yaw, z roll), local or world."""
        angles = np.radians(_finite([yaw, pitch, roll], 3, f"bone {bone.name!r} yaw/pitch/roll"))
        if self._checked_space(space) is Space.LOCAL:
            q = quaternion_from_yaw_pitch_roll(angles[[1, 0, 2]])
            self._edit(lambda: set_bone_pose(bone, rotation_quaternion=q))
        else:
            mesh = self.mesh_of(bone)
            self._edit(lambda: _keeping_scale(bone, lambda: bone.set_yaw_pitch_roll(*angles, Space.WORLD, mesh)))

    @staticmethod
    def _checked_space(space) -> Space:
        space = checked_space(space, "editor")
        return Space.WORLD if space is Space.BONE else space

    def set_scaling(self, bone, scaling) -> None:
        self._edit(lambda: set_bone_pose(bone, scaling=scaling))

    def return_bone_to_rest(self, bone) -> None:
        """The bone back to its rest pose, its tracks in the active layer cleared: the clip drives
        it again (from the next time it is shown: a playing clip's next frame). One undo step."""
        def change():
            if self.edit_layer is not None:
                self.mixer.clear_bone(bone)
            bone.return_to_rest()
        self._edit(change, route=False)

    def return_all_to_rest(self) -> None:
        """Every bone back to its rest pose, the active layer cleared: the clip drives them again
        from the next time it is shown. One undo step."""
        def change():
            if self.edit_layer is not None:
                self.mixer.clear_layer()
            for skeleton in self.scene.skeletons:
                skeleton.return_to_rest()
        self._edit(change, route=False)

    # --- morph targets (undoable) ------------------------------------------------------------------
    def morph_meshes(self) -> list:
        """The meshes with morph targets, in the scene's order (the panel's "Morph targets")."""
        return self.scene.morph_meshes

    def set_morph_weight(self, mesh, target, weight) -> None:
        """One morph target's weight (``target``: its name or index); a slider drag is one
        undo step; it pauses playback (the mixer's layers hold bones, not morph weights: a clip's
        weights channels would overwrite it)."""
        if getattr(mesh, "morph_targets", None) is None:
            raise ViewerError(f"mesh {getattr(mesh, 'name', mesh)!r} has no morph targets")
        self._edit(lambda: mesh.set_morph_weight(target, weight))

    def set_expression(self, name, weight) -> None:
        """An expression's weight (a VRM avatar's named group of morph weights, 0..1); an undo step
        that pauses playback, as a morph target's slider."""
        self.scene.expressions.require(name)
        self._edit(lambda: self.scene.set_expression(name, weight))

    def reset_morph_weights(self, mesh) -> None:
        """The mesh's weights back to the file's defaults (the node's or mesh's weights). One undo step."""
        if getattr(mesh, "morph_targets", None) is None:
            raise ViewerError(f"mesh {getattr(mesh, 'name', mesh)!r} has no morph targets")
        self._edit(lambda: setattr(mesh, "morph_weights", mesh.morph_targets.default_weights))

    def set_current_as_rest(self) -> None:
        """The current pose becomes the rest pose (not a pose edit: nothing to undo)."""
        for skeleton in self.scene.skeletons:
            skeleton.prepare()
            skeleton.set_current_pose_as_rest()
        self.status = Status("current pose set as rest")

    def yaw_pitch_roll_degrees(self, bone, space=Space.LOCAL) -> tuple[float, float, float]:
        if self._checked_space(space) is Space.LOCAL:
            rotation = yaw_pitch_roll_from_quaternion(bone.get_pose_target().rotation_quaternion)
        else:
            rotation = bone.get_rotation(Space.WORLD, self.mesh_of(bone))
        pitch, yaw, roll = np.degrees(rotation)
        return float(yaw), float(pitch), float(roll)

    def pose_values(self, bone, space=Space.LOCAL):
        """(position, rotation_quaternion, scaling) as the panel shows them: local (the node's, if
        linked), or the world position and rotation with the local scaling."""
        if self._checked_space(space) is Space.LOCAL:
            return self.local_trs(bone)
        mesh = self.mesh_of(bone)
        return (bone.get_position(Space.WORLD, mesh), bone.get_rotation_quaternion(Space.WORLD, mesh),
                bone.get_pose_target().scaling)

    @staticmethod
    def local_trs(bone):
        """(position, rotation_quaternion, scaling) as the user edits them (the node, if linked)."""
        source = bone.get_pose_target()
        return source.position, source.rotation_quaternion, source.scaling

    def matrices(self, bone) -> dict:
        """The seed's seven matrices of a bone, current."""
        bone.get_skeleton().prepare()
        return {"local": bone.get_local_matrix(), "absolute": bone.get_absolute_matrix(),
                "final": bone.get_final_matrix(), "bind": bone.get_bind_matrix(),
                "absolute bind": bone.get_absolute_bind_matrix(),
                "absolute inverse bind": bone.get_absolute_inverse_bind_matrix(), "rest": bone.get_rest_matrix()}

    # --- controllers (undoable; they run once a frame in update_controllers) ---------------------------
    @property
    def controllers(self) -> list:
        """The BoneControllers, in the order they were set."""
        return list(self._controllers.values())

    def controller_of(self, bone) -> BoneController | None:
        return self._controllers.get(bone)

    def set_look_target(self, bone, target) -> bool:
        """Turn ``bone`` every frame so that its +Z axis points at ``target``: a world point, or
        a Bone whose position it follows (BoneLookController, its up axis the world's +Y).
        One undo step; False, with the reason in the status line, when it cannot."""
        def make():
            entry = self._controllers.get(bone)
            if entry is not None and entry.kind == LOOK:
                return entry.controller
            return BoneLookController(self.mesh_of(bone), bone, self.world_point(target),
                                      up_axis_space=Space.WORLD)

        return self._attach(bone, LOOK, make, target, "bone {bone} looks at {target}")

    def set_ik_target(self, bone, target, pole=None, pole_angle=None) -> bool:
        """Two-bone IK every frame: ``bone`` (the lower bone, e.g. the forearm) and its parent
        turn so that the chain's end reaches ``target`` (a world point, or a Bone it follows).

        ``pole`` (a world point or a Bone; None: the upper bone's parent) is where the elbow
        points; ``pole_angle`` (radians) turns the bending plane about the shoulder-to-target
        line; None chooses 0 or pi so that the elbow bends toward the pole (which one depends
        on the rig: Babylon bends a +Y chain away from its pole at 0). One undo step; False,
        with the reason in the status line, when it cannot (a root bone has no chain).
        """
        def make():
            entry = self._controllers.get(bone)
            if entry is not None and entry.kind == IK:
                return entry.controller
            return BoneIKController(self.mesh_of(bone), bone)

        return self._attach(bone, IK, make, target, "IK: bone {bone} and its parent reach for {target}",
                            pole=pole, pole_angle=pole_angle)

    def clear_controller(self, bone) -> None:
        """Stop the bone's controller; the pose stays as it left it. One undo step."""
        if bone in self._controllers:
            def change():
                del self._controllers[bone]
            self._edit(change)
            self.display.markers = self.markers()
            self.status = Status(f"bone {bone.name!r}: no controller")

    def update_controllers(self) -> None:
        """Run every controller once (the session calls this once a frame, after playback):
        targets taken from bones follow them. An error goes to the status line."""
        for entry in list(self._controllers.values()):
            try:
                self._run(entry)
            except ViewerError as error:
                self.status = Status.error(error)
        self.display.markers = self.markers()

    def describe(self, source) -> str:
        """A target or pole as the status line names it."""
        if source is None:
            return "the default"
        if isinstance(source, Bone):
            return f"bone {source.name!r}"
        return "(" + ", ".join(f"{float(v):.3g}" for v in np.asarray(source, float)) + ")"

    def default_target(self, bone, kind) -> np.ndarray:
        """Where the panel puts a new target, so that choosing a controller barely moves the
        bone: for IK the chain's end; for look-at a point along the bone's +Z axis (what it
        points at the target), a fifth of the model's size away."""
        if kind == IK:
            return self.chain_end(bone)
        mesh = self.mesh_of(bone)
        origin = np.asarray(bone.get_absolute_position(mesh), dtype=np.float64)
        forward = np.asarray(bone.get_direction((0.0, 0.0, 1.0), mesh), dtype=np.float64)
        low, high = self.scene.rest_bounds
        size = max(float(np.linalg.norm(np.asarray(high) - np.asarray(low))), 1e-3)
        length = float(np.linalg.norm(forward))
        forward = forward / length if length > 0 else np.array([0.0, 0.0, 1.0])
        return origin + forward * 0.2 * size

    def _attach(self, bone, kind, make, target, message, pole=None, pole_angle=None) -> bool:
        try:
            if not isinstance(bone, Bone):
                raise ViewerError(f"a controller needs a bone, got {bone!r}")
            target = self._source(target, bone, kind, "target")
            pole = None if pole is None else self._source(pole, bone, kind, "pole")
            angle = None if pole_angle is None else _finite([pole_angle], 1, f"bone {bone.name!r} pole angle")[0]

            def change():
                previous = self._controllers.get(bone)
                try:
                    entry = BoneController(kind, bone, make(), target, pole, 0.0 if angle is None else angle)
                    if kind == IK and angle is None:
                        entry = replace(entry, pole_angle=self._bend_toward_pole(entry))
                    self._controllers[bone] = entry
                    self._run(entry)
                except BaseException:
                    if previous is None:
                        self._controllers.pop(bone, None)
                    else:
                        self._controllers[bone] = previous
                    raise

            self._edit(change)
        except ViewerError as error:
            self.status = Status.error(error)
            return False
        self.display.markers = self.markers()
        self.status = Status(message.format(bone=repr(bone.name), target=self.describe(target)))
        return True

    def _source(self, value, bone, kind, what):
        """A target or pole: a Bone of this scene that does not move with the chain, or a
        finite world point (a tuple)."""
        if isinstance(value, Bone):
            if value.get_skeleton() not in self.scene.skeletons:
                raise ViewerError(f"bone {bone.name!r} {what}: bone {value.name!r} is not in this model")
            moving = bone if kind == LOOK else (bone.get_parent() or bone)
            chain = "the bone" if kind == LOOK else "the IK chain"
            node = value
            while node is not None:
                if node is moving:
                    raise ViewerError(f"bone {bone.name!r} {what}: bone {value.name!r} moves with {chain}, "
                                      "so it would chase itself; pick a bone outside it or a point")
                node = node.get_parent()
            return value
        return tuple(float(v) for v in _finite(value, 3, f"bone {bone.name!r} {what}"))

    def world_point(self, source) -> np.ndarray:
        """A target or pole's world position now (a Bone: where its mesh places it)."""
        if isinstance(source, Bone):
            return np.asarray(source.get_absolute_position(self.mesh_of(source)), dtype=np.float64)
        return np.asarray(source, dtype=np.float64)

    def _run(self, entry) -> None:
        """Give the controller its inputs (bones followed where they are now), update it once."""
        controller = entry.controller
        if entry.kind == LOOK:
            controller.target = self.world_point(entry.target)
        else:
            self._set_ik_inputs(entry, self.world_point(entry.target))
        controller.update()

    def _set_ik_inputs(self, entry, target) -> None:
        controller, pole = entry.controller, entry.pole
        controller.target_position = target
        controller.pole_angle = entry.pole_angle
        if pole is None:   # the controller's default: the upper bone's parent
            controller.pole_target_bone = controller.upper_bone.get_parent()
            controller.pole_target_position = None
        elif isinstance(pole, Bone):
            controller.pole_target_bone, controller.pole_target_position = pole, None
        else:
            controller.pole_target_bone, controller.pole_target_position = None, pole

    def pole_point(self, entry) -> np.ndarray:
        """Where an IK controller's pole is in the world now."""
        controller = entry.controller
        bone = controller.pole_target_bone
        if entry.pole is None:
            bone = controller.upper_bone.get_parent()
        elif not isinstance(entry.pole, Bone):
            return np.asarray(entry.pole, dtype=np.float64)
        elif bone is None:
            bone = entry.pole
        if bone is None:
            return np.zeros(3)  # a root upper bone: the world origin (Babylon)
        return np.asarray(bone.get_absolute_position(self.mesh_of(bone)), dtype=np.float64)

    def _bend_toward_pole(self, entry) -> float:
        """0 or pi: the pole angle whose elbow bends toward the pole. Tried on a target inside
        the reach in the target's direction (the solve replaces both bones' rotations, so the
        trial leaves nothing behind once the real target is solved)."""
        controller, lower = entry.controller, entry.bone
        mesh = self.mesh_of(lower)
        origin = np.asarray(controller.upper_bone.get_absolute_position(mesh))
        direction = self.world_point(entry.target) - origin
        if not np.linalg.norm(direction) > 0:
            return 0.0  # the real solve reports the error
        direction /= np.linalg.norm(direction)
        self._set_ik_inputs(entry, origin + direction * 0.6 * sum(controller.lengths))
        controller.pole_angle = 0.0
        controller.update()
        elbow = np.asarray(lower.get_absolute_position(mesh)) - origin
        pole = self.pole_point(entry) - origin
        elbow -= direction * (elbow @ direction)
        pole -= direction * (pole @ direction)
        return math.pi if float(elbow @ pole) < 0 else 0.0

    def markers(self) -> list:
        """What the viewport draws for the controllers (RenderOptions.markers): each target as a
        cross (and a thin line from the bone); for IK the chain upper -> lower -> end, the pole
        point (a thin line from the elbow) and the bend axis at the elbow."""
        markers = []
        for entry in self._controllers.values():
            try:
                markers += self._markers_of(entry)
            except ViewerError:
                continue  # e.g. a bone of a model no longer shown: nothing to draw
        return markers

    def _markers_of(self, entry) -> list:
        bone, mesh = entry.bone, self.mesh_of(entry.bone)
        target = _point_tuple(self.world_point(entry.target))
        if entry.kind == LOOK:
            origin = _point_tuple(bone.get_absolute_position(mesh))
            return [Marker(MarkerKind.LINE, (origin, target), GUIDE_COLOR),
                    Marker(MarkerKind.CROSS, (target,), TARGET_COLOR)]
        controller = entry.controller
        upper = controller.upper_bone
        shoulder = _point_tuple(upper.get_absolute_position(mesh))
        elbow = _point_tuple(bone.get_absolute_position(mesh))
        end = _point_tuple(self.chain_end(bone))
        pole = _point_tuple(self.pole_point(entry))
        axis = np.asarray(bone.get_direction(controller.bend_axis, mesh), dtype=np.float64)
        markers = [Marker(MarkerKind.LINE, (end, target), GUIDE_COLOR),
                   Marker(MarkerKind.LINE, (elbow, pole), GUIDE_COLOR),
                   Marker(MarkerKind.PATH, (shoulder, elbow, end), CHAIN_COLOR),
                   Marker(MarkerKind.POINT, (pole,), POLE_COLOR)]
        if np.linalg.norm(axis) > 0:
            markers.append(Marker(MarkerKind.RAY, (elbow, _point_tuple(axis / np.linalg.norm(axis))), BEND_COLOR))
        markers.append(Marker(MarkerKind.CROSS, (target,), TARGET_COLOR))
        return markers

    def chain_end(self, bone) -> np.ndarray:
        """Where an IK chain ending in ``bone`` ends: its first child, or its length along the leaf axis."""
        mesh = self.mesh_of(bone)
        if bone.children:
            return np.asarray(bone.children[0].get_absolute_position(mesh), dtype=np.float64)
        return np.asarray(bone.get_absolute_position_from_local(self.scene.leaf_bone_axis * (bone.length or 0.0), mesh),
                          dtype=np.float64)

    # --- undo ------------------------------------------------------------------------------------
    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo(self) -> None:
        if self._undo:
            self._redo.append(self._snapshot())
            self._restore(self._undo.pop())
            self._edit_open = False
            if self.edit_layer is None:
                self.pause()  # else the next frame of a playing clip overwrites the pose

    def redo(self) -> None:
        if self._redo:
            self._undo.append(self._snapshot())
            self._restore(self._redo.pop())
            self._edit_open = False
            if self.edit_layer is None:
                self.pause()

    # --- the look ------------------------------------------------------------------------------
    def set_look(self, name: str, value, what: str | None = None) -> None:
        """One of the look's settings (options.LOOK_FIELDS: environment, environment_rotation,
        tone_mapping, exposure, show_environment), checked by viewer.look's rule of that name: a
        refused value is one ViewerError naming ``what`` (default: the setting's name) and changes
        nothing. An environment file is checked whole (viewer.hdr.check_hdr) before it is taken."""
        from ..look import check

        setattr(self.display, name, check(name, value, what))

    def use_look(self, settings: dict) -> None:
        """Take the look of another RenderOptions (``RenderOptions.look()``, already checked)."""
        for name in LOOK_FIELDS:
            if name in settings:
                setattr(self.display, name, settings[name])

    # --- skinning ------------------------------------------------------------------------------
    @property
    def skinning(self) -> str:
        """"both" while the view shows the two side by side (display.compare_skinning); else
        "dq" when every skinned mesh is skinned with dual quaternions, else "lbs"."""
        if self.display.compare_skinning:
            return "both"
        meshes = self.scene.skinned_meshes
        return "dq" if meshes and all(mesh.skinning == "dq" for mesh in meshes) else "lbs"

    def set_skinning(self, mode) -> None:
        """"lbs" (linear blend) or "dq" (dual quaternions): every skinned mesh's skinning, one
        view; "both": the view twice side by side, linear blend left and dual quaternions right
        (the meshes keep their own skinning for everything else)."""
        if isinstance(mode, str) and mode.strip().lower() == "both":
            self.display.compare_skinning = True
            self.status = Status("skinning: linear blend (left) and dual quaternions (right)")
            return
        self.scene.set_skinning(mode)
        self.display.compare_skinning = False
        self.status = Status("skinning: " + ("dual quaternions" if self.skinning == "dq" else "linear blend"))

    def set_springs(self, on: bool) -> None:
        """Spring bones on (they swing after the body as playback runs) or off (held at their
        rest: the clip alone), as --springs/--no-springs."""
        springs = self.scene.springs
        springs.enabled = bool(on)
        springs.reset()  # from rest either way: no jump left over from before
        self._refresh()  # the bones a clip moves as it has them (the reset put its rest on them)
        self.status = Status(f"springs {'on' if on else 'off'} ({len(springs)} joints)")

    def set_constraints(self, on: bool) -> None:
        """Node constraints (VRMC_node_constraint, ``scene.constraints``) on, applied every frame
        after the motion, or off: their nodes back at their rest, or where a clip keys them. A
        setting, as the springs are: not an undo step."""
        constraints = self.scene.constraints
        constraints.enabled = bool(on)
        constraints.put_at_rest()
        self._refresh()  # the nodes a clip moves as it has them (put_at_rest set their rest)
        self.scene.prepare()  # on: applied to the pose as it now is
        self.status = Status(f"node constraints {'on' if on else 'off'} ({len(constraints)})")

    def set_spring_chain(self, chain, stiffness=None, drag=None, gravity=None, radius=None) -> None:
        """A spring chain's numbers (its name, index, or the chain; None keeps a number), for
        every joint of it: scene.springs.set_chain. A refused value is one ViewerError and
        changes nothing. A setting, as the look is: not an undo step."""
        springs = self.scene.springs
        springs.set_chain(chain, stiffness=stiffness, drag=drag, gravity=gravity, radius=radius)
        found = springs.chain(chain)
        joint = found["joints"][0]
        self.status = Status(f"spring chain {found['name']}: stiffness {joint.stiffness:g}, drag "
                             f"{joint.drag:g}, gravity {joint.gravity_power:g}, radius {joint.hit_radius:g}")

    def reset_springs(self) -> None:
        """Every spring joint back to its rest (a playing clip swings them again from there)."""
        springs = self.scene.springs
        springs.reset()
        self._refresh()
        self.status = Status(f"springs reset ({len(springs)} joints)")

    def springs_at_playhead(self) -> bool:
        """The spring bones at the playhead as ``render --time`` draws them: simulated from the
        clip's start at fixed 1/60 s steps under the mix as it is now (the clip, the other actions,
        the layers' edits), so the same time and edits give the same picture whatever was shown
        before. Nothing while playing (the frame loop swings them live), before a clip is shown,
        or without springs. True when it simulated."""
        springs = self.scene.springs
        if self.playback.playing or self.clip is None or not self._clip_shown or not springs.enabled \
                or not len(springs):
            return False
        springs.restart()  # from the clip's start every time: edits since the last picture count from 0
        springs.advance_to(self.playback.time, self._show)
        return True

    # --- skin views ------------------------------------------------------------------------------
    def set_paint(self, paint) -> None:
        """What colours the mesh: a Paint or its value ("shaded", "weights" (the selected bone's,
        following the selection), "bone-map", "weight-check")."""
        try:
            self.display.paint = Paint(paint)
        except ValueError:
            raise ViewerError(f"paint must be one of {', '.join(p.value for p in Paint)}, got {paint!r}") from None
        if self.display.paint is Paint.WEIGHT_CHECK:
            self.status = Status(f"weight check: {self.weight_check()}")

    def set_axes(self, axes) -> None:
        """Whose local axes the overlay draws: an Axes or its value ("none", "selected", "all")."""
        try:
            self.display.axes = Axes(axes)
        except ValueError:
            raise ViewerError(f"axes must be one of {', '.join(a.value for a in Axes)}, got {axes!r}") from None

    def weight_check(self) -> WeightCheck:
        """The weight check's counts over the model's skins (counted once per model)."""
        if self._weight_check is None:
            self._weight_check = weight_check(self.scene)
        return self._weight_check

    # --- files ---------------------------------------------------------------------------------
    def save_pose(self, path) -> None:
        from ..sources import check_not_source

        check_not_source(self.scene, f"pose file {path}", path)  # a pose file is no model's file
        save_pose(path, self.scene)
        self.status = Status(f"pose saved to {path}")

    def load_pose(self, path) -> None:
        """Apply a pose file; a bad file leaves the pose as it was and says why in the status."""
        before = self._snapshot()
        loaded = []

        def change():
            loaded.append(read_pose_file(path))
            apply_pose(self.scene, loaded[0], f"pose file {path}")
        try:
            self._routed(change, lambda: self._named({"bones": loaded[0]}))
        except ViewerError as error:
            self.status = Status.error(error)
            return
        self._undo.append(before)
        self._redo.clear()
        self.status = Status(f"pose loaded from {path}")

    def set_pose(self, pose, source: str = "pose") -> None:
        """Apply a pose in the pose file's structure ({bone: {"rotation_quaternion": ..., "position":
        ..., "scaling": ...}}, or the whole file's {"bones": ...}) as one undo step: with a clip,
        every part it names goes into the edit layer (one it left as it was too) and the clip
        plays on; a bad pose (a name the model lacks, a value out of range) raises a ViewerError
        and changes nothing."""
        self._edit(lambda: apply_pose(self.scene, pose, source), lambda: self._named(pose))

    # --- animation -------------------------------------------------------------------------------
    @property
    def clip(self):
        index = self.playback.clip_index
        return None if index is None else self.scene.animations[index]

    def choose_clip(self, index: int) -> None:
        if not 0 <= index < len(self.scene.animations):
            raise ViewerError(f"no animation {index} (this model has {len(self.scene.animations)})")
        self.playback.clip_index = index
        self.seek(0.0)

    # --- the bone map of a retargeted clip ---------------------------------------------------------
    @property
    def retargeting(self):
        """The scene's last retargeting (viewer.retarget, --motion), or None."""
        return getattr(self.scene, "retargeting", None)

    def map_bone(self, target: str, source: str | None) -> None:
        """Change one row of the retargeting's bone map (``source=None``: ``target`` unmapped,
        so it keeps its rest) and make the clip again in its place, playback kept."""
        from ..model.retarget import Retargeting

        current = self.retargeting
        if current is None:
            raise ViewerError("no retargeted clip: the bone map belongs to one (--motion, viewer.retarget)")
        mapping = dict(current.bone_map)
        if source is None:
            mapping.pop(target, None)
        else:
            mapping[target] = source
        try:
            remade = Retargeting(current.source_scene, self.scene, current.source_clip, mapping, current.clip.name)
        except ViewerError as error:
            self.status = Status.error(error)
            return
        animations = self.scene.animations
        index = next((i for i, clip in enumerate(animations) if clip is current.clip), None)
        if index is None:
            animations.append(remade.clip)
        else:
            animations[index] = remade.clip
        self.scene.retargeting = remade
        if self.playback.clip_index == index:
            self.seek(self.playback.time)  # the new clip's pose at the same time
        self.status = Status(f"bone map: {target} <- {source}" if source else f"bone map: {target} unmapped")

    def play(self) -> None:
        if self.clip is not None:
            self.playback.playing = True

    def pause(self) -> None:
        self.playback.playing = False

    def toggle_playback(self) -> None:
        """Play or pause (the Space key)."""
        self.pause() if self.playback.playing else self.play()

    def seek(self, time: float) -> None:
        clip = self.clip
        if clip is None:
            return
        self.playback.time = float(np.clip(time, 0.0, self.timeline_length()))
        self._show(self.playback.time)

    def timeline_length(self) -> float:
        """How far the playhead goes: the clip's duration, or ``timeline_end`` when longer."""
        clip = self.clip
        return 0.0 if clip is None else max(clip.duration, self.timeline_end)

    def advance(self, seconds: float) -> None:
        """Move playback on by wall-clock seconds (times speed), looping or stopping at the end."""
        clip, playback = self.clip, self.playback
        if clip is None or not playback.playing:
            # Paused (or no clip): the springs still swing, in wall-clock time, after the bones
            # the user drags, and settle.
            self.scene.springs.tick(abs(seconds))
            return
        dt = seconds * playback.speed
        time = playback.time + dt
        if not playback.loop and not 0.0 <= time <= clip.duration:
            playback.playing = False  # played to an end
        action = self._sync_action()
        if not (self._clip_shown and action.playing):
            playback.time = clip_time(time, clip.duration, playback.loop)
            self._show(playback.time)   # the first frame shown: the clip at the playhead
            return
        self.mixer.update(dt)   # every running action on by dt, the blend and the layers written
        self.scene.springs.tick(abs(dt))   # then the springs swing after the body (fixed 1/60 s steps)
        playback.time = action.sample_time()   # the action's time (wrapped, or held at an end) is the playhead


    # --- keyframes -------------------------------------------------------------------------------
    # Keys go into the current clip at the playhead (a new clip "Clip" when the model has none);
    # every change is one undo step (the undo steps hold the clips' keys beside the pose).
    def key_times(self) -> np.ndarray:
        """The current clip's key times (the timeline's markers)."""
        clip = self.clip
        return np.zeros(0) if clip is None else clip.key_times()

    def new_clip(self, name: str) -> None:
        """An empty clip called ``name`` becomes the current one (keys then go into it)."""
        name = str(name).strip()
        if not name:
            raise ViewerError("a new clip needs a name")
        if self.scene.find_animation(name) is not None:
            raise ViewerError(f"there is already a clip called {name!r}")
        from ..model.animation import AnimationClip

        def change():
            self.scene.animations.append(AnimationClip(name, []))
            self.playback.clip_index = len(self.scene.animations) - 1
            self.playback.time = 0.0
        self._edit(change)
        self.timeline_end = max(self.timeline_end, 2.0)
        self.status = Status(f"new clip {name!r}: key bones into it with Key (I)")

    def key_bones(self, bones=None) -> None:
        """Key ``bones`` (default every bone, and the morph weights) at the playhead, with the
        editor's ``key_interpolation``, into the current clip (a new one, "Clip", at 0 s when the
        model has none); one undo step."""
        clip = self.clip
        name = clip.name if clip is not None else next(
            n for n in ("Clip", *(f"Clip{k}" for k in range(2, 1000))) if self.scene.find_animation(n) is None)
        time = self.playback.time if clip is not None else 0.0

        def change():
            shown = pose_of(self.scene)
            self.scene.insert_keyframe(name, time, bones, self.key_interpolation)
            # What is keyed is the clip's now: the active layer's tweak of it moves into the clip
            # (the pose shown is the clip's at this time, the tracks in the layer are cleared).
            layer = self.edit_layer
            if layer is not None:
                if bones is None:
                    self.mixer.clear_layer(layer)
                else:
                    for bone in bones:
                        self.mixer.clear_bone(bone, layer)
            # a clip that gained morph weights is a new object in the same place
            self.playback.clip_index = self.scene.animations.index(self.scene.find_animation(name))
            self.playback.time = time
            self._refresh(shown)
        self._edit(change, route=False)
        if clip is None:
            self.timeline_end = max(self.timeline_end, 2.0)
        what = "every bone" if bones is None else (bones[0].name if len(bones) == 1 else f"{len(bones)} bones")
        self.status = Status(f"keyed {what} at {time:.3f} s in {name!r}")

    def key_layer(self, bones=None) -> None:
        """Key ``bones`` (default every bone the edit layer holds) in the edit layer at the current
        time (the K key): each bone's pose now becomes a key of its offset there, and the layer
        interpolates between its keys (a held offset becomes the first key); later edits of a
        keyed bone key it at the time they are made. One undo step."""
        layer = self.edit_layer
        if layer is None:
            self.status = Status.error("no layer to key into: a clip and an active layer that is not muted "
                                       "(Key (I) keys the clip)")
            return
        if bones is None:
            targets = [target for target, _ in layer.tracks.values()]
            if not targets:
                self.status = Status.error(f"layer {layer.name!r} holds no bone: nothing to key")
                return
        else:
            targets = [bone.get_pose_target() for bone in bones]
        poses = {}
        for target in targets:
            track = layer.tracks.get(id(target))
            paths = list(track[1]) if track is not None else ["rotation"]
            parts = {part: np.array(getattr(target, part)) for part, path in _LAYER_PATHS.items() if path in paths}
            poses[target] = parts
        time = self.mixer.time
        self._edit(lambda: self.mixer.set_poses(poses, key=True, layer=layer), route=False)
        what = f"{len(targets)} bones" if len(targets) != 1 else repr(targets[0].name)
        self.status = Status(f"keyed {what} at {time:.3f} s in layer {layer.name!r}")

    def key_layer_selected(self) -> None:
        """Key the selected bone in the edit layer at the current time (the K key)."""
        if self.selected is None:
            self.status = Status.error("select a bone to key it")
            return
        self.key_layer([self.selected])

    def key_selected(self) -> None:
        """Key the selected bone (the I key)."""
        if self.selected is None:
            self.status = Status.error("select a bone to key it")
            return
        self.key_bones([self.selected])

    def key_posed(self) -> None:
        """Key every posed bone: those whose pose is not their rest pose (Shift+I)."""
        posed = [bone for bone in self.bones() if not np.allclose(bone.get_local_matrix(), bone.get_rest_matrix(),
                                                                  atol=1e-9)]
        if not posed:
            self.status = Status.error("no bone is posed: nothing to key")
            return
        self.key_bones(posed)

    def delete_key(self) -> None:
        """Delete the keys at the playhead from the current clip; one undo step."""
        clip = self.clip
        if clip is None:
            self.status = Status.error("no clip to delete a key from")
            return
        time = self.playback.time
        try:
            self._edit(lambda: self.scene.delete_keyframe(clip.name, time))
        except ViewerError as error:
            self.status = Status.error(error)
            return
        self.status = Status(f"deleted the keys at {time:.3f} s")

    def set_key_interpolation(self, interpolation: str) -> None:
        """LINEAR or STEP for new keys and for the keys at the playhead (glTF keeps one
        interpolation per channel: the channels keyed there change); one undo step."""
        if interpolation not in ("LINEAR", "STEP"):
            raise ViewerError(f"interpolation must be LINEAR or STEP, got {interpolation!r}")
        self.key_interpolation = interpolation
        clip, time = self.clip, self.playback.time
        if clip is None:
            return
        from ..model.animation import KEY_TOLERANCE

        keyed = [c.node for c in clip.channels if np.any(np.abs(c.times - time) <= KEY_TOLERANCE)]
        if keyed:
            self._edit(lambda: clip.set_interpolation(interpolation, keyed))
            self.status = Status(f"{interpolation} for the keys at {time:.3f} s")

    def previous_key(self) -> None:
        times = self.key_times()
        earlier = times[times < self.playback.time - 1e-6]
        if earlier.size:
            self.pause()
            self.seek(float(earlier[-1]))

    def next_key(self) -> None:
        times = self.key_times()
        later = times[times > self.playback.time + 1e-6]
        if later.size:
            self.pause()
            self.seek(float(later[0]))

    def export_gltf(self, path, apply_pose_as_bind: bool = False) -> None:
        """Write the scene as it is now (pose and clips) to a .glb or .gltf file."""
        from ..gltf import save_gltf

        try:
            save_gltf(self.scene, path, apply_pose_as_bind=apply_pose_as_bind)
        except ViewerError as error:
            self.status = Status.error(error)
            return
        self.status = Status(f"exported {path}")


def _clips_state(scene, playback) -> tuple:
    """What an undo step keeps of the clips: the list, each clip's channels and their keys.
    Keys are never changed in place (an edit makes new arrays), so references suffice."""
    clips = []
    for clip in scene.animations:
        channels = list(clip.channels) + list(getattr(clip, "morph_channels", ()))
        clips.append((clip, list(clip.channels), list(getattr(clip, "morph_channels", ())),
                      [(c, c.times, c.values, c.interpolation) for c in channels]))
    return list(scene.animations), clips, playback.clip_index


def _restore_clips(scene, playback, state) -> None:
    animations, clips, clip_index = state
    scene.animations[:] = animations
    for clip, channels, morph_channels, keys in clips:
        clip.channels = channels
        if hasattr(clip, "morph_channels"):
            clip.morph_channels = morph_channels
        for channel, times, values, interpolation in keys:
            channel.set_keys(times, values, interpolation)
        clip.keys_changed()
    playback.clip_index = clip_index


_LAYER_PATHS = {"position": "translation", "rotation_quaternion": "rotation", "scaling": "scale"}


def _mixer_of(scene):
    """The scene's mixer if it has been made (asking ``scene.mixer`` makes one)."""
    return scene.__dict__.get("_mixer")


def _pose_values(scene) -> tuple[dict, dict]:
    """({pose target: (position, rotation, scaling)} of every bone, {mesh: morph weights}), copied."""
    bones = {}
    for skeleton in scene.skeletons:
        for bone in skeleton.bones:
            source = bone.get_pose_target()
            bones[source] = (np.array(source.position), np.array(source.rotation_quaternion), np.array(source.scaling))
    return bones, {mesh: np.array(mesh.morph_weights) for mesh in scene.morph_meshes}


def _finite(values, width: int, what: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ViewerError(f"{what}: expected {width} numbers, got {values!r}") from None
    if array.shape != (width,):
        raise ViewerError(f"{what}: expected {width} numbers, got {values!r}")
    return finite_array(array, (width,), what)


def _keeping_scale(bone, change) -> None:
    """A world-space rotation setter drops the bone's scale (Babylon's); the panel keeps it."""
    scaling = np.array(bone.get_scale())
    change()
    if not np.array_equal(bone.get_scale(), scaling):
        bone.set_scale(scaling)


def _point_tuple(point) -> tuple:
    return tuple(float(v) for v in np.asarray(point, dtype=np.float64).reshape(3))
