"""The pose editor's state and actions: what the ImGui panel does, as plain Python.

Every button and field of the panel calls one method here, and every method changes the
model only through its public API, so each has a one-line scripted equivalent and a unit
test without a window. No GL, no ImGui.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import ViewerError
from .model.animation import clip_time
from .model.transforms import quaternion_from_yaw_pitch_roll, yaw_pitch_roll_from_quaternion
from .options import RenderOptions, Status
from .pose import apply_pose, pose_of, save_pose, set_bone_pose

UNDO_LIMIT = 200


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
    display: RenderOptions = field(default_factory=RenderOptions)   # the panel's toggles
    playback: Playback = field(default_factory=Playback)
    status: Status = field(default_factory=Status)  # one line for the panel

    def __post_init__(self):
        self._undo: list[dict] = []
        self._redo: list[dict] = []
        self._edit_open = False
        if self.scene.animations and self.playback.clip_index is None:
            self.playback.clip_index = 0
        bones = self.bones()
        if self.selected is None and bones:
            self.selected = bones[0]

    # --- bones ---------------------------------------------------------------------------------
    def bones(self) -> list:
        return [bone for skeleton in self.scene.skeletons for bone in skeleton.bones]

    def select(self, bone) -> None:
        self.selected = bone

    def select_by_name(self, name: str) -> None:
        bone = self.scene.find_bone(name)
        if bone is None:
            raise ViewerError(f"no bone named {name!r}")
        self.selected = bone

    # --- pose edits (undoable) ---------------------------------------------------------------------
    def begin_edit(self) -> None:
        """Start one undoable edit; a drag calls this once, then changes values many times."""
        if not self._edit_open:
            self._undo.append(pose_of(self.scene))
            del self._undo[:-UNDO_LIMIT]
            self._redo.clear()
            self._edit_open = True
        if self.playback.playing:
            self.playback.playing = False  # editing a bone while a clip plays pauses it

    def end_edit(self) -> None:
        self._edit_open = False

    def _edit(self, change) -> None:
        """One undo step, unless the panel holds an edit open for a whole drag."""
        opened_here = not self._edit_open
        self.begin_edit()
        try:
            change()
        finally:
            if opened_here:
                self.end_edit()

    def set_position(self, bone, position) -> None:
        self._edit(lambda: set_bone_pose(bone, position=position))

    def set_rotation_quaternion(self, bone, quaternion) -> None:
        """Set the rotation; the quaternion is renormalized (a zero one is refused)."""
        q = np.asarray(quaternion, dtype=np.float64)
        norm = float(np.linalg.norm(q))
        if not math.isfinite(norm) or norm < 1e-9:
            raise ViewerError(f"bone {bone.name!r}: {list(q)} is not a rotation")
        self._edit(lambda: set_bone_pose(bone, rotation_quaternion=q / norm))

    def set_yaw_pitch_roll_degrees(self, bone, yaw, pitch, roll) -> None:
        """Babylon's rotation vector in degrees (x pitch, y yaw, z roll)."""
        q = quaternion_from_yaw_pitch_roll(np.radians([pitch, yaw, roll]))
        self._edit(lambda: set_bone_pose(bone, rotation_quaternion=q))

    def set_scaling(self, bone, scaling) -> None:
        self._edit(lambda: set_bone_pose(bone, scaling=scaling))

    def return_bone_to_rest(self, bone) -> None:
        self._edit(bone.return_to_rest)

    def return_all_to_rest(self) -> None:
        def change():
            for skeleton in self.scene.skeletons:
                skeleton.return_to_rest()
        self._edit(change)

    def set_current_as_rest(self) -> None:
        """The current pose becomes the rest pose (not a pose edit: nothing to undo)."""
        for skeleton in self.scene.skeletons:
            skeleton.prepare()
            skeleton.set_current_pose_as_rest()
        self.status = Status("current pose set as rest")

    @staticmethod
    def yaw_pitch_roll_degrees(bone) -> tuple[float, float, float]:
        pitch, yaw, roll = np.degrees(yaw_pitch_roll_from_quaternion(bone.get_pose_target().rotation_quaternion))
        return float(yaw), float(pitch), float(roll)

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

    # --- undo ------------------------------------------------------------------------------------
    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo(self) -> None:
        if self._undo:
            self._redo.append(pose_of(self.scene))
            apply_pose(self.scene, self._undo.pop())
            self._edit_open = False
            self.pause()  # else the next frame of a playing clip overwrites the pose

    def redo(self) -> None:
        if self._redo:
            self._undo.append(pose_of(self.scene))
            apply_pose(self.scene, self._redo.pop())
            self._edit_open = False
            self.pause()

    # --- files ---------------------------------------------------------------------------------
    def save_pose(self, path) -> None:
        save_pose(path, self.scene)
        self.status = Status(f"pose saved to {path}")

    def load_pose(self, path) -> None:
        """Apply a pose file; a bad file leaves the pose as it was and says why in the status."""
        before = pose_of(self.scene)
        try:
            apply_pose(self.scene, path)
        except ViewerError as error:
            self.status = Status.error(error)
            return
        self._undo.append(before)
        self._redo.clear()
        self.pause()  # else the next frame of a playing clip overwrites the pose
        self.status = Status(f"pose loaded from {path}")

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
        self.playback.time = float(np.clip(time, 0.0, clip.duration))
        clip.apply(self.playback.time)

    def advance(self, seconds: float) -> None:
        """Move playback on by wall-clock seconds (times speed), looping or stopping at the end."""
        clip, playback = self.clip, self.playback
        if clip is None or not playback.playing:
            return
        time = playback.time + seconds * playback.speed
        if not playback.loop and not 0.0 <= time <= clip.duration:
            playback.playing = False  # played to an end
        playback.time = clip_time(time, clip.duration, playback.loop)
        clip.apply(playback.time)

