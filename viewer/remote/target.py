"""What remote messages act on: the editing session (GL-free), on the frame loop's thread.

``RemoteTarget`` applies decoded requests to an Editor through the model's public API;
a host (the window, ``boneviewer serve``) subclasses it to draw ``render`` requests and, in the
window, to move its own camera.
"""

from __future__ import annotations

import math

import numpy as np

from ..camera import VIEW_PITCH, VIEW_YAW, OrbitCamera, framed_camera
from ..errors import ViewerError
from ..model.checks import OUT_OF_RANGE, finite_number, first_bad_row, fits
from ..model.pose_writer import PoseWriter
from ..words import counted
from . import protocol

MIN_QUATERNION_NORM = 1e-8  # as pose files: below this a quaternion is no rotation
WRITERS_KEPT = 16  # name lists whose PoseWriter is kept (clients may send any number of lists)


class RemoteTarget:
    """Applies remote requests to ``editor`` (its scene, playback) and keeps the remote camera.

    ``render(size, frame)`` is the host's: draw the state as ``boneviewer render`` would, with what
    the client set of what the frame shows (viewer.look.apply_frame's keywords) over the host's own.
    """

    def __init__(self, editor):
        self._editor = editor
        self.camera_settings: dict = {}   # yaw, pitch, distance, target given by set_camera
        self._bones_of = None             # (scene, bones, {name: index}) cached per model
        self._writers: dict = {}          # name tuple (None: all bones) -> PoseWriter, for that model

    @property
    def editor(self):
        return self._editor

    @property
    def scene(self):
        return self.editor.scene

    def _bones(self):
        scene = self.scene
        if self._bones_of is None or self._bones_of[0] is not scene:
            bones = [bone for skeleton in scene.skeletons for bone in skeleton.bones]
            index = {}
            for i, bone in enumerate(bones):
                index.setdefault(bone.name, i)  # a name two skeletons share means the first, as find_bone
            self._bones_of = (scene, bones, index)
            self._writers = {}
        return self._bones_of[1], self._bones_of[2]

    # --- requests --------------------------------------------------------------------------------
    def bone_names(self) -> list[str]:
        return [bone.name for bone in self._bones()[0]]

    def set_pose(self, pose) -> None:
        """A decoded SET_POSE (protocol.PoseArrays): every value checked before any bone changes,
        then written in one batched call (model.pose_writer; a stream brings tens of thousands a second)."""
        writer = self._writer(pose)
        chosen = writer.bones
        rotations = None
        if pose.rotations is not None:
            rotations = pose.rotations.astype(np.float64)
            if not fits(rotations):
                raise ViewerError(f"set_pose: the rotation of bone {_first_bad(chosen, rotations)!r} contains "
                                  f"{OUT_OF_RANGE}; the pose is unchanged")
            # The sum in the order pose files take it, so a pose sent as float64 lands on the same bits.
            x, y, z, w = rotations.T
            norms = np.sqrt(x * x + y * y + z * z + w * w)
            if (norms < MIN_QUATERNION_NORM).any():
                bad = chosen[int(np.argmax(norms < MIN_QUATERNION_NORM))].name
                raise ViewerError(f"set_pose: the rotation of bone {bad!r} is (nearly) the zero quaternion, not a "
                                  "rotation; the pose is unchanged")
            rotations = rotations / norms[:, None]
        positions = _finite_rows(pose.positions, chosen, "position")
        scalings = _finite_rows(pose.scalings, chosen, "scaling")
        # With a clip: into the editor's edit layer, the clip playing on with it; else written here.
        self.editor.write_pose(chosen, positions, rotations, scalings, writer)

    def _writer(self, pose) -> PoseWriter:
        """The PoseWriter for the pose's bones (all, in bones() order, or the named ones), kept per
        name list: a stream names the same bones again and again."""
        bones, index = self._bones()
        if pose.names is None:
            if pose.count != len(bones):
                raise ViewerError(f"set_pose: {counted(pose.count, 'row')} for {counted(len(bones), 'bone')} "
                                  "(bones() lists them); pass bones=[names] to pose some of them")
            key = None
        else:
            key = tuple(pose.names)
        writer = self._writers.get(key)
        if writer is None:
            if key is None:
                chosen = bones
            else:
                missing = [name for name in key if name not in index]
                if missing:
                    known = ", ".join(list(index)[:15]) + (", ..." if len(index) > 15 else "")
                    raise ViewerError(f"set_pose: unknown bone {missing[0]!r} (this model's bones: "
                                      f"{known or 'none'})")
                chosen = [bones[index[name]] for name in key]
            if len(self._writers) >= WRITERS_KEPT:
                self._writers.clear()
            writer = self._writers[key] = PoseWriter(chosen)
        return writer

    def set_pose_dict(self, pose: dict) -> None:
        self.editor.stream_pose(pose, "set_pose_dict")

    def set_time(self, seconds: float) -> None:
        if self.editor.clip is None:
            raise ViewerError("set_time: this model has no animations")
        if isinstance(seconds, (bool, np.bool_)) or not isinstance(seconds, (int, float, np.integer, np.floating)):
            raise ViewerError(f"set_time: t must be a number, got {type(seconds).__name__} {seconds!r}")
        self.editor.seek(finite_number(seconds, "set_time: seconds"))

    def play(self, flag: bool) -> None:
        if not isinstance(flag, (bool, np.bool_)):
            raise ViewerError(f"play: flag must be True or False, got {type(flag).__name__} {flag!r}")
        if flag and self.editor.clip is None:
            raise ViewerError("play: this model has no animations")
        self.editor.play() if flag else self.editor.pause()

    def set_skinning(self, mode) -> None:
        """Every skinned mesh skinned by linear blend ("lbs") or dual quaternions ("dq")."""
        from ..model.mesh import skinning_mode

        self.editor.set_skinning(skinning_mode(mode, "set_skinning"))

    def springs(self, operation: str) -> dict:
        """The spring bones "on", "off" (held at their rest: the clip alone) or "reset" (every joint
        back to its rest, from where a playing clip swings it again); returns their state."""
        springs = self.scene.springs
        call = "reset_springs" if operation == "reset" else "set_springs"
        if operation == "on" and not len(springs):
            raise ViewerError(f"{call}: this model has no spring chains (serve --spring-chain BONE adds one)")
        if operation == "reset":
            self.editor.reset_springs()
        elif operation in ("on", "off"):
            self.editor.set_springs(operation == "on")
        else:
            raise ViewerError(f"springs: expected on, off or reset, got {operation!r}")
        return {"enabled": bool(springs.enabled), "chains": [chain["name"] for chain in springs.chains],
                "joints": len(springs)}

    def before_render(self) -> None:
        """Before a picture: with the clip paused, the springs at the playhead simulated from the
        clip's start (the same time, the same picture); a playing clip swings them live."""
        self.editor.springs_at_playhead()

    def mix(self, request: dict) -> dict:
        """A decoded MIX: one action's (``{"action": clip, ...}``) or one layer's settings, every
        one checked, then applied in one go through the mixer's public API; a refused one leaves
        the mix as it was. Returns the action's or layer's state after it."""
        subject = "action" if "action" in request else "layer" if "layer" in request else None
        if subject is None or ("action" in request and "layer" in request):
            raise ViewerError('mix: give "action" (a clip name) or "layer" (a layer name)')
        call = f"mix_{subject}"
        kinds = protocol.MIX_ACTION if subject == "action" else protocol.MIX_LAYER
        unknown = sorted(set(request) - set(kinds) - {subject})
        if unknown:
            raise ViewerError(f"{call}: unknown setting {unknown[0]!r} (settings: {', '.join(kinds)}); the mix is "
                              "unchanged")
        settings = {}
        for key, value in request.items():
            kind = "name" if key == subject else kinds[key]
            ok = (isinstance(value, str) if kind == "name" else isinstance(value, bool) if kind == "flag"
                  else isinstance(value, (int, float)) and not isinstance(value, bool))
            if ok and kind == "number":
                try:
                    value = float(value)
                except OverflowError:  # a JSON integer past float's range
                    ok = False
                ok = ok and math.isfinite(value)  # JSON's 1e400 reads as inf
            if not ok:
                wanted = {"name": "a string", "flag": "true or false", "number": "a finite number"}[kind]
                raise ViewerError(f"{call}: {key} must be {wanted}, got {protocol.shown(value)}; the mix is unchanged")
            settings[key] = value
        if subject == "action" and ("seconds" in settings or "warp" in settings) and "crossfade_to" not in settings:
            raise ViewerError(f"{call}: seconds and warp go with crossfade_to; the mix is unchanged")
        mixer = self.scene.mixer
        held = mixer.hold()
        try:
            state = (_mix_action if subject == "action" else _mix_layer)(mixer, settings)
        except ViewerError as error:
            mixer.put_back(held)
            raise ViewerError(f"{call}: {error}; the mix is unchanged") from None
        mixer.evaluate()
        return state

    def set_camera(self, **settings) -> None:
        check = OrbitCamera()
        for name, value in settings.items():
            try:
                setattr(check, name, value)  # the camera's own checks (checks.py's range, the distance's floor)
            except ViewerError as error:
                raise ViewerError(f"set_camera: {error}; the camera is unchanged") from None
        if "pitch" in settings and not -89.0 <= settings["pitch"] <= 89.0:
            raise ViewerError(f"set_camera: pitch {settings['pitch']:g} is outside -89..89 degrees")
        self.camera_settings.update(settings)

    def camera_for(self, size) -> OrbitCamera:
        """The camera ``boneviewer render --yaw --pitch`` would frame for this image; a distance or
        target set by set_camera replaces the framed one."""
        settings = self.camera_settings
        camera = framed_camera(self.scene, yaw=settings.get("yaw", VIEW_YAW), pitch=settings.get("pitch", VIEW_PITCH),
                               aspect=size[0] / size[1])
        if "distance" in settings:
            camera.distance = settings["distance"]
        if "target" in settings:
            camera.target = settings["target"]
        return camera

    def render(self, size, frame: dict) -> np.ndarray:
        raise NotImplementedError

    def advance(self, seconds: float) -> None:
        """Playback on by wall-clock seconds (a host without its own frame loop calls this)."""
        self.editor.advance(seconds)


def _mix_action(mixer, settings: dict) -> dict:
    """The settings applied in a fixed order (stop first, the cross-fade last), as one script's lines."""
    action = mixer.action(settings["action"])
    if settings.get("stop"):
        action.stop()
    for name in ("loop", "speed", "weight", "time"):
        if name in settings:
            setattr(action, name, settings[name])
    if settings.get("play"):
        action.play()
    if "fade_in" in settings:
        action.fade_in(settings["fade_in"])
    if "fade_out" in settings:
        action.fade_out(settings["fade_out"])
    if "crossfade_to" in settings:
        action.crossfade_to(settings["crossfade_to"], settings.get("seconds", 0.5), warp=settings.get("warp", False))
    clock = mixer.clock
    return {"clip": action.name, "weight": action.weight, "speed": action.speed, "time": action.time,
            "loop": action.loop, "playing": action.playing, "running": action.is_running,
            "effective_weight": action.effective_weight(clock), "clock": clock}


def _mix_layer(mixer, settings: dict) -> dict:
    layer = mixer.layer(settings["layer"])
    for name in ("mode", "weight", "mute", "solo"):
        if name in settings:
            setattr(layer, name, settings[name])
    if settings.get("active"):
        mixer.active_layer = layer
    return {"layer": layer.name, "weight": layer.weight, "mode": layer.mode, "mute": layer.mute, "solo": layer.solo,
            "active": mixer.active_layer is layer, "bones": layer.bones()}


def _finite_rows(values, bones, what: str):
    if values is None:
        return None
    values = values.astype(np.float64)
    if not fits(values):  # one vectorized check for the whole batch
        raise ViewerError(f"set_pose: the {what} of bone {_first_bad(bones, values)!r} contains {OUT_OF_RANGE}; "
                          "the pose is unchanged")
    return values


def _first_bad(bones, values) -> str:
    return bones[first_bad_row(values)].name
