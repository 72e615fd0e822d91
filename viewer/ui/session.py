"""A viewer session: scene + editor + camera + renderers + panel, one frame at a time.

The glfw window and the headless tests both drive this class: they feed input (ImGui io
events, camera moves) and call ``frame()`` with a bound framebuffer. It wires the layers and
owns no maths.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from imgui_bundle import imgui

from ..camera import CameraDescription, OrbitCamera, drawn_points, framed_camera
from ..editing.editor import Editor
from ..errors import ViewerError
from ..images import write_png
from ..sources import check_not_source
from ..look import BUILT_IN_ENVIRONMENTS, STUDIO
from ..options import Status
from ..render.renderer import Renderer
from ..render.timing import FrameTiming
from .gestures import Gestures
from .imgui_renderer import ImGuiRenderer
from .panel import PANEL_WIDTH, PosePanel

START_FRAMING_SAMPLES = 24  # poses of the playing clip that the first view covers (CPU-skinned: keep it quick)


class ViewerSession:
    def __init__(self, ctx, scene, model_name: str = "built-in character", play: bool = True,
                 camera: CameraDescription | None = None, look: dict | None = None, recovery: bool = False,
                 companions=()):
        """``play``: an animated model starts playing its first clip, as in Babylon's loader;
        else it stays paused in the pose it has (a pose file, or the rest pose). ``camera``: where
        the view starts (--camera, --yaw, ...); what it does not give is framed on the model.
        ``look``: the look it starts with (RenderOptions.look()'s names, checked: --environment
        and the rest); it stays when another model is opened. ``recovery``: keep the mix in a
        recovery file (every 30 s and on release) and offer an earlier session's back (the
        window's; tests and benchmarks leave the user's state folder alone). ``companions``:
        [(scene, clip or None)] shown beside the model in a row on one ground (view A B ...), each
        playing its clip at the model's playhead; the model stays first, at its own place, so the
        panel, picking and gestures work on it as alone; opening another model drops them."""
        self.ctx = ctx
        self.editor = None
        self.imgui_context = imgui.create_context()
        io = imgui.get_io()
        io.set_ini_filename(None)  # no imgui.ini littered into the user's folder
        io.config_flags |= imgui.ConfigFlags_.nav_enable_keyboard
        imgui.style_colors_dark()
        self.imgui_renderer = ImGuiRenderer(ctx)
        self.panel = PosePanel()
        self.gestures = Gestures()  # picking, the gizmo, R/G/X/Y/Z, IK drags, mirror keys
        self._renderers: dict = {}
        self.model_name = model_name
        self.recovery = None  # a viewer.motion.recovery.MixRecovery, with ``recovery``
        self._keep_recovery = recovery
        self.view_aspect = 1.0  # width / height of the view beside the panel, known after a frame
        self.camera = None
        self.camera_description = camera or CameraDescription()
        self._frame_after_update = None  # (camera, target, distance) until a new script's first update
        self.companions = list(companions)
        self._row = None  # the PlacedScenes of the model and its companions
        self._companions_at = None  # the playhead the companions were last posed at
        self._start(scene, play)
        self.editor.use_look(look or {})
        self.timing = FrameTiming(ctx)  # the frame's wall time and the scene's GPU time, for the panel
        self._drag_button = None
        self.window_size = (800.0, 600.0)  # window coordinates (framebuffer / scale), known after a frame
        self.script = None             # a ScriptRunner (attach_script), and its app
        self.app = None
        self.close_requested = False   # app.close(): the window closes after this frame
        self.clipboard = None          # text -> the system clipboard (the glfw window sets it)

    # --- camera ----------------------------------------------------------------------------------
    def frame_model(self, times=None, pose_at=None) -> None:
        """Aim the camera at the model as posed now (F key), keeping the view angle and field of
        view; or at every pose of a sequence (see framed_camera)."""
        yaw, pitch, fov = self._view_angle()
        self.camera = framed_camera(self.shown(), yaw=yaw, pitch=pitch, aspect=self.view_aspect, times=times,
                                    pose_at=pose_at, fov=fov)

    def _view_angle(self):
        """(yaw, pitch, fov) of the camera now, or the one the view starts with."""
        if self.camera is not None:
            return self.camera.yaw, self.camera.pitch, self.camera.fov_y
        start = self.camera_description.camera(self.scene, self.view_aspect, points=np.zeros((1, 3)))
        return start.yaw, start.pitch, start.fov_y

    def _start(self, scene, play: bool) -> None:
        """A new model: a fresh editor, and a camera placed as the view starts (what the camera
        description leaves open framed on the model whole; if it plays, over its clip)."""
        self.scene = scene
        previous = self.editor
        self.editor = Editor(scene)
        self._start_recovery(scene)
        if previous is not None:
            self.editor.use_look(previous.display.look())  # the light and exposure are the view's, not the model's
            if previous.skinning == "dq":
                scene.set_skinning("dq")  # as the view's choice: the next model opens with it too
        self.camera = None
        if getattr(self, "gestures", None) is not None:
            self.gestures = Gestures()  # a new model: no gesture or hover carries over
        self._row = None
        if self.companions:
            from ..model.placed import PlacedScenes

            self.editor.seek(0.0)
            shown = [scene] + [companion for companion, _ in self.shown_companions(0.0)]
            self._row = PlacedScenes.row(shown, [model.current_bounds() for model in shown])
        yaw, pitch, fov = self._view_angle()
        framing = OrbitCamera(yaw=yaw, pitch=pitch, fov_y=fov)
        clip = self.editor.clip
        points = []
        if play and clip is not None:
            for time in np.linspace(0.0, clip.duration, START_FRAMING_SAMPLES):
                self.editor.seek(time)
                points.append(framing.deciding_points(drawn_points(self.shown()), self.view_aspect))
            self.editor.seek(0.0)
            self.editor.play()
        else:
            points.append(framing.deciding_points(drawn_points(self.shown()), self.view_aspect))
        self._start_points = np.concatenate(points)
        self.camera = self.camera_description.camera(self.shown(), self.view_aspect, points=self._start_points)
        if getattr(self, "script", None) is not None:
            self._await_first_update()

    def _start_recovery(self, scene) -> None:
        """The last save of the model before (another model opened), then this model's recovery
        file: an earlier session's mix is offered at the top of the panel."""
        if not self._keep_recovery:
            return
        from ..motion.recovery import MixRecovery

        if self.recovery is not None:
            self.recovery.close()
        self.recovery = MixRecovery(scene, scene.file_path)
        offer = self.recovery.offer
        self.panel.recovery_label = None if offer is None else offer.label
        if offer is not None:
            self.editor.status = Status(f"an earlier session's mix of this model was kept: {offer.label} (at the "
                                        "top of the panel)")

    def _recovery_requests(self, requests) -> None:
        recovery = self.recovery
        if recovery is None:
            return
        if requests is not None and requests.recover_mix and recovery.offer is not None:
            label = recovery.offer.label
            try:
                recovery.recover()
                self.editor.status = Status(f"{label}: done")
            except ViewerError as error:
                self.editor.status = Status.error(error)
        if requests is not None and requests.dismiss_recovery:
            recovery.dismiss()
        recovery.tick()  # every 30 s, when the mix changed
        self.panel.recovery_label = None if recovery.offer is None else recovery.offer.label

    def _await_first_update(self) -> None:
        """Frame again after the script's setup and first update (unless it placed the camera),
        so what the script does to the pose is in the picture from the first frame."""
        camera = self.camera
        self._frame_after_update = (camera, tuple(camera.target), camera.distance)

    def _frame_after_first_update(self) -> None:
        camera, target, distance = self._frame_after_update
        self._frame_after_update = None
        if self.camera is not camera or tuple(self.camera.target) != target or self.camera.distance != distance:
            return  # the script placed the camera itself
        if self.camera_description.complete:
            return
        framing = OrbitCamera(yaw=camera.yaw, pitch=camera.pitch, fov_y=camera.fov_y)
        points = np.concatenate([self._start_points,
                                 framing.deciding_points(drawn_points(self.shown()), self.view_aspect)])
        placed = CameraDescription(yaw=camera.yaw, pitch=camera.pitch, fov=camera.fov_y,
                                   target=self.camera_description.target, distance=self.camera_description.distance)
        self.camera = placed.camera(self.shown(), self.view_aspect, points=points)

    def camera_json(self) -> str:
        """The camera now, as ``--camera FILE.json`` reads it (the panel's "Copy camera")."""
        return CameraDescription.of(self.camera).to_json()

    def save_camera(self, path) -> None:
        check_not_source(self.scene, str(path), path)
        CameraDescription.of(self.camera).save(path)

    def mouse_drag(self, button: int, dx: float, dy: float, height: int) -> None:
        """Left drag orbits; right or middle drag pans (dx, dy in pixels). (In the window a
        left drag reaches this through Gestures, which first sees whether it grabs a gizmo.)"""
        self.camera.mouse_drag(button, dx, dy, height)

    def scroll(self, steps: float) -> None:
        self.camera.wheel(steps)

    @property
    def ui_wants_mouse(self) -> bool:
        return imgui.get_io().want_capture_mouse

    # --- scripts -------------------------------------------------------------------------------
    def attach_script(self, source, watch: bool = False, pose_path=None, debug: bool = False, size=None):
        """Run a script (a .py path or an object with setup/update) in this session: load it and
        call its setup now, its update every frame; with ``watch``, reload it (and re-apply
        ``pose_path``) when saved. Faults go to the console and the status line, never up."""
        from ..editing.script import ScriptRunner
        from .window_app import WindowApp

        if size is not None:
            self.window_size = tuple(float(v) for v in size)
        also = {}
        if watch and pose_path is not None:
            also[pose_path] = lambda: self.editor.load_pose(pose_path)
        self.app = WindowApp(self)
        self.script = ScriptRunner(source, show=self._show, debug=debug, watch=watch, also_watch=also)
        self._await_first_update()
        self.script.start(self.app)
        return self.script

    def _show(self, status: Status) -> None:
        self.editor.status = status

    def _run_script(self, dt: float) -> None:
        """The script's part of a frame: reload if saved, then update(app, t, dt)."""
        script, app = self.script, self.app
        script.poll(app)
        if self.editor.clip is None:
            app.clock += dt
        script.update(app, app.time, dt)
        app.frame += 1
        if self._frame_after_update is not None:
            self._frame_after_first_update()

    # --- models ----------------------------------------------------------------------------------
    def open_model(self, path, scene_index: int | None = None) -> bool:
        """Load a model (None: the built-in character), its glTF scene ``scene_index`` or its
        default one; a bad file shows its error in the panel and keeps the current model."""
        from ..loaders import load_model

        try:
            scene = load_model(None if path is None else Path(path), scene_index)
        except ViewerError as error:
            self.editor.status = Status.error(error)
            return False
        for renderer in self._renderers.values():
            for old in [self.scene] + [companion for companion, _ in self.companions]:
                renderer.forget(old)  # GL objects of the old models are released
        self.companions = []  # the new model is shown alone
        self.model_name = "built-in character" if path is None else Path(path).name
        self._start(scene, play=True)
        self.editor.status = Status(f"opened {path}")
        if self.script is not None:
            self.script.setup(self.app)  # setup runs after each model load
        _return_freed_memory()
        return True

    def shown_companions(self, time: float) -> list:
        """The companions, each posed by its clip at ``time`` (looping)."""
        from ..model.animation import clip_time

        for scene, clip in self.companions:
            if clip is not None:
                clip.apply(clip_time(time, clip.duration))
        self._companions_at = time
        return self.companions

    def shown(self):
        """What the view draws and frames: the model, or the row of it and its companions
        (posed at the playhead)."""
        if self._row is None:
            return self.scene
        if self._companions_at != self.editor.playback.time:  # posed this frame: a script's pose stays
            self.shown_companions(self.editor.playback.time)
        return self._row

    # --- frames ----------------------------------------------------------------------------------
    def renderer(self) -> Renderer:
        display = self.editor.display
        key = (display.cpu_skinning, display.bone_texture)
        if key not in self._renderers:
            self._renderers[key] = Renderer(self.ctx, bone_storage=display.bone_storage,
                                            cpu_skinning=display.cpu_skinning)
        return self._renderers[key]

    def frame(self, size, dt: float, framebuffer=None, framebuffer_scale=(1.0, 1.0), show_panel=True):
        """Advance playback by dt seconds, draw the scene and the panel into ``framebuffer``
        (the bound one when None) of ``size`` pixels. Returns the panel's requests."""
        self.timing.start_frame()
        io = imgui.get_io()
        width, height = size
        io.display_size = imgui.ImVec2(width / framebuffer_scale[0], height / framebuffer_scale[1])
        io.display_framebuffer_scale = imgui.ImVec2(*framebuffer_scale)
        io.delta_time = max(dt, 1e-4)
        self.window_size = (width / framebuffer_scale[0], height / framebuffer_scale[1])
        self.editor.advance(dt)
        self.editor.update_controllers()  # look-at and IK targets on bones, after the clip
        if self.companions:  # at the playhead before the script's update, which may pose them too
            self.shown_companions(self.editor.playback.time)
        if self.script is not None:
            self._run_script(dt)  # after playback, before the panel and the skeleton update
        imgui.new_frame()
        requests = None
        if show_panel:
            requests = self.panel.draw(self.editor, self.model_name, self.timing.times())
        imgui.render()
        if framebuffer is not None:
            framebuffer.use()
        # The panel covers the left of the window: centre the model in the rest of it.
        self.camera.screen_offset = min(PANEL_WIDTH * framebuffer_scale[0], width / 2) / width if show_panel else 0.0
        self.view_aspect = width / max(height, 1) * (1.0 - self.camera.screen_offset)  # for F
        display = self.editor.display
        if display.compare_skinning:
            self.view_aspect /= 2.0  # F frames the model in each half of the side-by-side view
        self.scene.prepare()  # gestures read world positions of the pose as it is now
        gesture_markers = self.gestures.update(self)   # gizmo, hover, IK handles: drawn, not the editor's
        display.selected_bone = self.editor.selected
        shown = self.shown()
        shown.prepare()  # the frame's one model update, after playback and the panel's edits
        gesture_markers = list(gesture_markers) + self.editor.qa.contact_markers()  # feet in contact (QA on)
        try:
            with self.timing.gpu():
                self.renderer().render(shown, self.camera, size,
                                       replace(display, markers=list(display.markers) + gesture_markers))
        except ViewerError as error:
            self.editor.status = Status.error(error)
            if display.environment not in BUILT_IN_ENVIRONMENTS and display.environment in str(error):
                # The file was sound when it was set and is not now (changed on disk): the studio
                # light from the next frame, and the error says why, instead of the error every frame.
                display.environment = STUDIO
            else:  # a forced uniform array that does not fit
                display.bone_texture = True
        self.imgui_renderer.render(imgui.get_draw_data(), size)
        if requests is not None:
            self._handle(requests, size)
        self._recovery_requests(requests)
        if self.app is not None:
            self._script_requests(size)
        return requests

    def read_pixels(self, size) -> np.ndarray:
        """The bound framebuffer as RGBA, top row first."""
        data = self.ctx.fbo.read(viewport=(0, 0, *size), components=4, alignment=1)
        return np.frombuffer(data, np.uint8).reshape(size[1], size[0], 4)[::-1].copy()

    def save_screenshot(self, path, size) -> None:
        check_not_source(self.scene, str(path), path)  # never over the model's own files
        write_png(Path(path), self.read_pixels(size))

    def _handle(self, requests, size) -> None:
        if requests.frame_model:
            self.frame_model()
        if requests.copy_camera:
            text = self.camera_json()
            imgui.set_clipboard_text(text)  # ImGui's own (its text fields paste it)
            if self.clipboard is not None:
                self.clipboard(text)        # the system's, where the window provides it
            self.editor.status = Status(f"camera copied: {text}")
        if requests.save_camera:
            try:
                self.save_camera(requests.save_camera)
                self.editor.status = Status(f"camera saved to {requests.save_camera} (boneviewer render --camera "
                                            f"{requests.save_camera} renders this view)")
            except ViewerError as error:
                self.editor.status = Status.error(error)
        if requests.screenshot:
            try:
                self.save_screenshot(requests.screenshot, size)
                self.editor.status = Status(f"screenshot saved to {requests.screenshot}")
            except ViewerError as error:
                self.editor.status = Status.error(error)
        if requests.open_model:
            self.open_model(requests.open_model)
        if requests.open_scene is not None and self.scene.file_path is not None:
            self.open_model(self.scene.file_path, requests.open_scene)

    def _script_requests(self, size) -> None:
        """What the script asked for during the frame, now that it is drawn."""
        app = self.app
        while app.pending_screenshots:
            path = app.pending_screenshots.pop(0)
            try:
                self.save_screenshot(path, size)
            except (ViewerError, OSError) as error:
                self.editor.status = Status.error(f"app.screenshot({str(path)!r}): {error}")
        if app.closed:
            self.close_requested = True

    def release(self) -> None:
        if self.recovery is not None:
            self.recovery.close()  # the mix on exit
            self.recovery = None
        for renderer in self._renderers.values():
            renderer.release()
        self._renderers.clear()
        self.timing.release()
        self.imgui_renderer.release()
        imgui.destroy_context(self.imgui_context)


def _return_freed_memory() -> None:
    """After a model swap, give the old model's memory back to the OS, so a long session
    does not keep the high-water mark of every model it opened (glibc keeps freed heap)."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to do
