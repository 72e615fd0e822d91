"""The ``app`` object a script receives: a small public façade over the viewer (no GL, no ImGui).

The window (viewer.ui.window_app.WindowApp) and ``boneviewer render --script``
(HeadlessApp, here) give a script the same object, so one script works in both.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..camera import OrbitCamera
from ..errors import ViewerError
from ..images import check_png_path
from ..sources import check_not_source
from ..model.animation import clip_time
from ..model.checks import finite_number
from ..options import Status


def _look_property(name: str, doc: str) -> property:
    """``app.<name>``: one of the look's settings, read from and checked into the editor's display."""

    def get(self):
        return getattr(self.editor.display, name)

    def set(self, value) -> None:
        self.editor.set_look(name, value, f"app.{name}")

    return property(get, set, doc=doc)


class App:
    """What a script sees: ``setup(app)`` once the model has loaded (and after each reload),
    ``update(app, t, dt)`` every frame, after playback moved the clip and before the skeleton
    update (so what update sets is what the frame shows).

    - ``app.scene``: the Scene (``scene.skeletons``, ``scene.animations``, ``scene.static_meshes``).
    - ``app.scenes``: every model shown, ``app.scene`` first, then the models beside it (several
      models side by side: ``render A B``, ``view A B``, ``run_viewer([a, b])``), each posed by its
      own clip at the shared time before ``update`` (so what update sets on them is what the
      frame shows), each in its own coordinates (the row moves only where it is drawn).
    - ``app.find_bone(name, model=0)``: the Bone of that name (of ``app.scenes[model]``); an
      unknown name raises an error that lists the model's bones (``app.scene.find_bone(name)``
      returns None instead).
    - ``app.selected_bone``: the bone the panel shows and the overlay highlights; set a Bone,
      a bone name or None.
    - ``app.time`` (seconds): the clip time when the model has a clip, else the script's clock
      (seconds since the window opened; in ``render`` the sequence time). Setting it seeks.
    - ``app.playing``: whether the clip plays (set False to pause it, True to play).
    - ``app.animation``: the current clip's name (None: the model has none); set a name or an index.
    - ``app.mixer``: the scene's animation mixer (viewer.motion.Mixer, docs/mixing.md): clips
      played together with weights, fades and cross-fades, and layers of tweaks;
      ``app.mixer.time = t`` puts every action at ``t`` and writes the mix.
    - ``app.camera``: the orbit camera; its ``yaw``, ``pitch`` (degrees), ``distance`` and
      ``target`` (a world point) are settable, or set ``app.camera`` to an OrbitCamera or a dict
      of those names and ``fov`` (the camera file's keys, as ``--camera`` reads them).
    - ``app.window_size``: (width, height) of the window in window coordinates (the image in render).
    - ``app.frame``: frames since the script started (0 in the first update).
    - ``app.project(point)``: a world point's (x, y) in window pixels, origin at the top-left of the
      content area as mouse events use, or None when it is behind the camera or off the window.
    - ``app.screenshot(path)``: save this frame to a PNG once it is drawn.
    - ``app.pose({"BONE": {"rotation_quaternion": [x, y, z, w], ...}})``: pose bones as the panel
      does (an undo step; with a clip, into the mixer's active layer, the clip playing on).
    - ``app.log(message)``: a line on the console and in the panel's status line.
    - ``app.close()``: close the window after this frame (in render: end the sequence).
    - The look, read and written: ``app.environment`` ("studio", "none" or an .hdr file's path; a
      file is checked whole when set), ``app.environment_rotation`` (degrees about +Y),
      ``app.exposure`` (more than 0), ``app.tone_mapping`` ("khr-neutral", "aces" or "none") and
      ``app.show_environment`` (the environment as the background), ``app.environment_filter``
      ("mipmaps" or "ggx"). A refused value raises one
      error naming it and changes nothing. In ``render --script`` each frame is drawn with the
      look its update left.

    Posing: set a bone's local ``position`` / ``rotation_quaternion`` / ``rotation`` /
    ``scaling`` through ``bone.get_pose_target()`` (for a glTF bone that is its joint node,
    which drives the bone; for the built-in character the bone itself), or use the world-space
    setters (``bone.set_rotation(..., Space.WORLD, tnode)``, ``set_absolute_position``) and the
    controllers (``viewer.BoneIKController``, ``viewer.BoneLookController``), which already do.
    A script runs with the user's own rights: it is the user's code, as a Blender script is.
    """

    def __init__(self):
        self.frame = 0
        self.closed = False
        self.clock = 0.0                  # the script's clock, for a model without clips
        self.pending_screenshots: list[Path] = []
        self.muted = False                # app.log goes to the panel only (a render's dry run)

    # --- provided by a host ----------------------------------------------------------------------
    @property
    def editor(self):  # the Editor holding selection, playback and status (window and headless)
        raise NotImplementedError

    @property
    def camera(self) -> OrbitCamera:
        raise NotImplementedError

    @camera.setter
    def camera(self, value) -> None:
        raise NotImplementedError

    @property
    def window_size(self) -> tuple[int, int]:
        raise NotImplementedError

    def _print(self, text: str) -> None:
        if not self.muted:
            print(text, flush=True)

    # --- the façade ------------------------------------------------------------------------------
    @property
    def scene(self):
        return self.editor.scene

    @property
    def scenes(self) -> list:
        return [self.scene] + [scene for scene, _ in self._companions()]

    def _companions(self) -> list:
        """The host's [(scene, its clip or None)] shown beside ``app.scene`` (none: one model)."""
        return []

    def _pose_companions(self) -> None:
        """The host poses the models beside ``app.scene`` at the playhead (after a seek)."""

    def find_bone(self, name: str, model: int = 0):
        scenes = self.scenes
        if isinstance(model, bool) or not isinstance(model, int) or not 0 <= model < len(scenes):
            raise ViewerError(f"app.find_bone({name!r}, model={model!r}): the model is a number from 0 to "
                              f"{len(scenes) - 1} (app.scenes: {len(scenes)} shown)")
        return scenes[model].require_bone(name, f"app.find_bone({name!r})")

    @property
    def mixer(self):
        """The scene's animation mixer (the same object as ``app.scene.mixer``)."""
        return self.scene.mixer

    @property
    def selected_bone(self):
        return self.editor.selected

    @selected_bone.setter
    def selected_bone(self, bone) -> None:
        self.editor.select(self.find_bone(bone) if isinstance(bone, str) else bone)

    @property
    def time(self) -> float:
        return self.editor.playback.time if self.editor.clip is not None else self.clock

    @time.setter
    def time(self, seconds: float) -> None:
        seconds = _finite(seconds, "app.time")
        if self.editor.clip is not None:
            self.editor.seek(seconds)
        else:
            self.clock = seconds
        self._pose_companions()

    @property
    def playing(self) -> bool:
        return bool(self.editor.playback.playing)

    @playing.setter
    def playing(self, value: bool) -> None:
        self.editor.play() if value else self.editor.pause()

    @property
    def animation(self) -> str | None:
        clip = self.editor.clip
        return None if clip is None else clip.name

    @animation.setter
    def animation(self, which) -> None:
        clips = self.scene.animations
        names = [clip.name for clip in clips]
        if isinstance(which, str) and which in names:
            index = names.index(which)
        elif isinstance(which, int) and not isinstance(which, bool) and 0 <= which < len(clips):
            index = which
        else:
            listed = ", ".join(f"{i}: {name}" for i, name in enumerate(names)) or "none"
            raise ViewerError(f"app.animation = {which!r}: no such clip (this model's clips: {listed})")
        playing = self.playing
        self.editor.choose_clip(index)
        if playing:
            self.editor.play()

    def _set_camera(self, current: OrbitCamera, value) -> OrbitCamera:
        """The camera after ``app.camera = value``: an OrbitCamera, or a dict of the camera
        description's keys (yaw, pitch, distance, target, fov: those given are set)."""
        from ..camera import CameraDescription

        if isinstance(value, OrbitCamera):
            value.screen_offset = current.screen_offset
            return value
        if not isinstance(value, dict):
            raise ViewerError("app.camera: set an OrbitCamera or a dict of yaw, pitch, distance, target, fov")
        description = CameraDescription.from_dict(value, "app.camera")
        for key, item in description.to_dict().items():
            setattr(current, "fov_y" if key == "fov" else key, item)
        return current

    def pose(self, pose) -> None:
        """Pose bones as a pose file does ({"BONE": {"rotation_quaternion": [x, y, z, w], "position":
        [x, y, z], "scaling": [...]}}): one undoable edit of the editing session, the panel's. With
        a clip it goes into the mixer's active layer, and the clip plays on with it."""
        self.editor.set_pose(pose, "app.pose")

    def project(self, point):
        width, height = self.window_size
        camera = self.camera
        p = np.append(np.asarray(point, dtype=np.float64).reshape(3), 1.0)
        clip = p @ camera.view_matrix() @ camera.projection_matrix(width / max(height, 1))
        if not clip[3] > 1e-12:
            return None
        x = (clip[0] / clip[3] + 1.0) / 2.0 * width
        y = (1.0 - clip[1] / clip[3]) / 2.0 * height
        if not (0.0 <= x < width and 0.0 <= y < height):
            return None
        return float(x), float(y)

    def screenshot(self, path) -> None:
        path = Path(path)
        label = f"app.screenshot({str(path)!r})"
        check_png_path(label, path)  # now, as a script error, not at write time
        check_not_source(self.scene, label, path)  # a texture of the model is no place for a screenshot
        self.pending_screenshots.append(path)

    def log(self, message) -> None:
        text = str(message)
        self._print(text)
        self.editor.status = Status(text)

    def close(self) -> None:
        self.closed = True

    environment = _look_property("environment", "\"studio\", \"none\" or the absolute path of an .hdr file")
    environment_rotation = _look_property("environment_rotation", "the environment's turn about +Y, degrees")
    exposure = _look_property("exposure", "a linear multiplier before tone mapping, more than 0")
    tone_mapping = _look_property("tone_mapping", "\"khr-neutral\", \"aces\" or \"none\"")
    show_environment = _look_property("show_environment", "whether the environment is drawn as the background")
    environment_filter = _look_property("environment_filter", 'how reflections blur with roughness: "mipmaps" '
                                        '(Babylon.js\'s) or "ggx"')
    shadows = _look_property("shadows", "whether the ground and the character get shadows (issue 45)")
    shadow_intensity = _look_property("shadow_intensity", "how dark a full shadow is, 0 to 1")
    shadow_softness = _look_property("shadow_softness", "how soft the shadows' edges are, 0 to 1")
    key_light = _look_property("key_light", "the key light: (azimuth, elevation) degrees, read back as a direction")


class HeadlessApp(App):
    """The ``app`` of ``boneviewer render --script``: an Editor over the scene without a window.

    The renderer sets the time of each frame (``begin_frame``): the clip, if any, is applied at
    that time (looping), ``t`` is the sequence time and ``dt`` its step, so a render is
    deterministic whatever the machine.
    """

    def __init__(self, scene, size, camera: OrbitCamera | None = None, clip_index: int | None = None,
                 look: dict | None = None, companions=()):
        """``look``: the look it starts with (RenderOptions.look()'s names; the command's options);
        ``companions``: [(scene, its clip or None)] beside ``scene`` (render A B --script), each
        posed by its clip at the sequence time, as render A B poses them."""
        from .editor import Editor

        super().__init__()
        self._editor = Editor(scene)
        self._editor.use_look(look or {})
        self._editor.playback.clip_index = clip_index
        self._editor.playback.playing = clip_index is not None
        self._size = (int(size[0]), int(size[1]))
        self._camera = camera or OrbitCamera()
        self.selection_made = False
        self._beside = list(companions)

    def _companions(self) -> list:
        return self._beside

    @property
    def editor(self):
        return self._editor

    @property
    def camera(self) -> OrbitCamera:
        return self._camera

    @camera.setter
    def camera(self, value) -> None:
        self._camera = self._set_camera(self._camera, value)

    @property
    def window_size(self) -> tuple[int, int]:
        return self._size

    @App.selected_bone.setter
    def selected_bone(self, bone) -> None:
        App.selected_bone.fset(self, bone)
        self.selection_made = True  # render highlights a bone only when the script chose one

    @property
    def time(self) -> float:
        return self.clock

    @time.setter
    def time(self, seconds: float) -> None:
        self.clock = _finite(seconds, "app.time")
        self.apply_clip()

    def begin_frame(self, seconds: float, number: int) -> None:
        """Frame ``number`` of the sequence, at ``seconds``: the clip is applied there."""
        self.frame = number
        self.clock = float(seconds)
        self.apply_clip()

    def apply_clip(self) -> None:
        """The clip at the sequence time (paused by the script: where it was paused). A script that
        plays actions of its own in ``app.mixer`` drives the mixer itself: the clip, started here
        before them, is stopped and not started again (a script that wants it in its mix plays it
        after its own: ``app.mixer.action(app.clip).play()``)."""
        for _, beside in self._beside:
            if beside is not None:
                beside.apply(clip_time(self.clock, beside.duration))
        clip, playback = self._editor.clip, self._editor.playback
        if clip is not None:
            if playback.playing:
                playback.time = clip_time(self.clock, clip.duration)
            mixer = self._editor.scene.mixer
            own, others = mixer.action(clip), [a for a in mixer.running() if a.clip is not clip]
            if others and (not own.playing or own.order < min(a.order for a in others)):
                own.stop()
                return
            self._editor.seek(playback.time)  # through the mixer: the clip, with the layers over it


def _finite(value, what: str) -> float:
    return finite_number(value, what)
