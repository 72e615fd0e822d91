"""The viewer as a Jupyter widget: jupyter_rfb's remote frame buffer, drawn by the headless
renderer where the kernel runs, posed through the editing session the panel uses.

Mouse and keys as in the window: left drag orbits, right or middle drag pans, the wheel zooms,
F frames, a left click picks the bone under the cursor (viewer.editing.interaction.bone_at,
the ID pass), Ctrl+Z / Ctrl+Shift+Z undo and redo, Space plays or pauses. All GL work (and every
change to the model the draw reads) runs on the viewer's GLThread.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import io
import math
import sys
import time
import weakref
from pathlib import Path

import anywidget
import numpy as np
from jupyter_rfb import RemoteFrameBuffer

import viewer.editing.interaction as ix
from ..camera import CameraDescription, framed_camera
from ..editing.editor import Editor
from ..errors import ViewerError
from ..images import check_output_folder
from ..editing.export import save_model
from ..loaders import load_model
from ..look import TRANSPARENT, checked_look
from ..look import background as checked_background
from ..model.scene import Scene
from ..options import LOOK_FIELDS
from ..render.geometry import skeleton_segments
from ..render.headless import HeadlessRenderer, _checked_size
from .gl_thread import GLThread

WHEEL_PIXELS_PER_STEP = 100.0  # a browser's wheel notch is about 100 pixels of deltaY
LEFT, RIGHT, MIDDLE = 1, 2, 3  # jupyter_rfb's button numbers
SKIP_LOOK = object()

_live: "weakref.WeakSet[Viewer]" = weakref.WeakSet()   # open viewers: closed at exit, or when their cell reruns
_hooked = False


class Viewer(RemoteFrameBuffer):
    """A model in a notebook cell: ``Viewer(model, size=(640, 480), **look)`` as a cell's last
    expression shows it, drawn where the kernel runs (EGL: the GPU, or llvmpipe).

    ``model``: a file path (as ``boneviewer view`` opens), a loaded viewer.model Scene, or None
    for the built-in character; a list of paths or Scenes: side by side in a row on one ground,
    the first the one the controls edit, the rest playing their first clips at its playhead; ``scene``: a glTF file's scene index. ``camera``: the ``--camera``
    JSON as a dict (or a path to such a file); what it leaves out is framed on the model.
    ``play``: start playing the first clip (else the model stays as loaded, paused).
    The look, as ``boneviewer render`` takes it: ``environment`` ("studio", "none" or a .hdr
    file), ``environment_rotation``, ``tone_mapping``, ``exposure``, ``environment_filter``,
    ``show_environment``, ``skeleton`` (the bone overlay), ``grid`` and ``background``
    ("transparent", a CSS colour name, #rrggbb, or an (r, g, b) tuple in 0..1); the shadows, on
    unless ``shadows=False``: ``shadow_intensity`` and ``shadow_softness`` (0..1), ``key_light``
    ((azimuth, elevation) in degrees). ``skinning``: "lbs" (linear blend, the default), "dq"
    (dual quaternions) or "both" (side by side). ``springs=False``: the spring bones held at
    their rest (on where the model has chains).
    """

    def __init__(self, model=None, size=(640, 480), *, scene: int | None = None, camera=None, play: bool = False,
                 skeleton: bool = True, grid: bool = True, background=None, quality: int = 80, skinning=None,
                 springs: bool | None = None, **look):
        # Everything that can refuse runs before the widget base is made: a Viewer that raises here
        # is collected without a traceback (close() below leaves a half-made widget alone).
        width, height = _checked_size(size)
        unknown = sorted(set(look) - set(LOOK_FIELDS))
        if unknown:
            raise ViewerError(f"Viewer: unknown option {', '.join(unknown)} (the look: {', '.join(LOOK_FIELDS)}; "
                              "also skeleton, grid, background, camera, play, scene, quality, skinning, springs)")
        if springs is not None and not isinstance(springs, bool):
            raise ViewerError(f"Viewer: springs must be True or False, got {springs!r}")
        companions = []
        if isinstance(model, (list, tuple)):  # several: the first is the one edited, the rest beside it
            if not model:
                raise ViewerError("Viewer: an empty list of models: give one or more")
            shown = [m if isinstance(m, Scene) else load_model(Path(m), scene) for m in model]
            model, companions = shown[0], [(s, s.animations[0] if s.animations else None) for s in shown[1:]]
        if isinstance(model, Scene):
            loaded = model
        else:
            loaded = load_model(None if model is None else Path(model), scene)
        editor = Editor(loaded)
        if loaded.animations:
            # v.pose(...) then v.time = t keeps the pose: edits go into an override layer, "Pose",
            # which holds what they set over the clip (the clip moves every part they did not set).
            mixer = loaded.mixer
            mixer.active_layer = mixer.add_layer("Pose", mode="override")
        editor.use_look(checked_look({"shadows": True, **look}))  # shadows on in a notebook unless shadows=False
        _set_overlay(editor.display, skeleton, grid, background)
        if skinning is not None:
            _set_skinning(editor, skinning)
        if springs is not None:
            _set_springs(editor, springs)
        description = _camera_description(camera)
        # What the GL thread touches: no reference back to this widget, so it can be collected.
        self._editor = editor
        self._companions, self._row = companions, None
        if companions:
            from ..model.placed import PlacedScenes

            models = [loaded] + [s for s, _ in self._posed_companions()]
            self._row = PlacedScenes.row(models, [m.current_bounds() for m in models])
        self._size = (width, height)
        self._ratio = 1.0
        self._camera = description.camera(self._shown(), width / height)
        self._press = None       # (x, y, button) of a press not yet released
        self._dragging = False
        self._last_draw = time.perf_counter()
        self._controls = None
        self._cell = _cell_id()
        display = editor.display
        self._gl = GLThread(lambda: HeadlessRenderer((width, height), bone_storage=display.bone_storage,
                                                     cpu_skinning=display.cpu_skinning))
        self._finalizer = weakref.finalize(self, self._gl.close, HeadlessRenderer.release)
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        with _quiet_without_kernel():
            super().__init__(css_width=f"{width}px", css_height=f"{height}px", quality=quality, resizable=True)
        self._built = True
        if play:
            self.play()
        _live.add(self)
        _hook_ipython()

    # --- what the notebook sees -----------------------------------------------------------------------
    @property
    def scene(self):
        """The model (viewer.model Scene): its full Bone API. The viewer's thread draws it (and a
        playing clip steps its springs there), so change it through ``v.edit(lambda editor: ...)``
        (or the methods here, e.g. ``add_spring_chain``), not from the notebook's thread."""
        return self._editor.scene

    @property
    def editor(self):
        """The editing session (viewer.editing.editor.Editor) the controls and the mouse go through."""
        return self._editor

    @property
    def selected(self) -> str | None:
        """The name of the selected bone (a click on the model, the controls' dropdown), or None."""
        editor = self._editor
        return editor.selected.name if editor.selected is not None and editor.selection_chosen else None

    @selected.setter
    def selected(self, name) -> None:
        def select(editor):
            editor.end_edit()
            if name is None:
                editor.select(None)
            else:
                editor.select_by_name(str(name))
        self.edit(select)

    def update(self) -> None:
        """Show the model as it is now (after changes through ``v.scene``)."""
        self._changed()

    def pose(self, pose) -> None:
        """Apply a pose in the pose file's structure ({"BONE": {"rotation_quaternion": [x, y, z, w],
        "position": [x, y, z], "scaling": [...]}}, or a whole pose file's dict): one undo step."""
        self.edit(lambda editor: editor.set_pose(pose, "v.pose"))

    @property
    def time(self) -> float:
        """The playhead of the current clip, in seconds."""
        return self._editor.playback.time

    @time.setter
    def time(self, seconds) -> None:
        value = float(seconds)
        if not math.isfinite(value):
            raise ViewerError(f"time must be a finite number of seconds, got {seconds!r}")
        self.edit(lambda editor: editor.seek(value))

    @property
    def skinning(self) -> str:
        """How the skinned meshes follow their bones: "lbs" (linear blend), "dq" (dual
        quaternions), or "both" (the picture twice side by side, linear blend left). Settable."""
        return self._editor.skinning

    @skinning.setter
    def skinning(self, mode) -> None:
        self.edit(lambda editor: _set_skinning(editor, mode))

    @property
    def springs(self) -> bool:
        """Whether the spring bones swing (a file's chains, or ``v.add_spring_chain(...)``);
        False holds them at their rest (the clip alone). Settable. Paused, the picture at time T
        simulates them from the clip's start at 1/60 s steps, as ``render --time T``: the same time,
        the same picture; playing, they swing live."""
        # Read on the GL thread: scene.springs is made on first use, and a playing clip's frames
        # step it there.
        return self._gl.call(lambda: bool(self._editor.scene.springs.enabled))

    @springs.setter
    def springs(self, on) -> None:
        if not isinstance(on, bool):
            raise ViewerError(f"springs must be True or False, got {on!r}")
        self.edit(lambda editor: _set_springs(editor, on))

    def add_spring_chain(self, root, stiffness=1.0, drag=0.4, gravity=0.0, gravity_dir=(0, -1, 0), radius=0.0,
                         colliders=(), center=None, name=None) -> str:
        """A spring chain from bone ``root`` down to the end, as ``scene.springs.add_chain`` (its
        arguments), added on the GL thread, so safe while a clip plays (the frames step the springs
        there). Returns the chain's name; a bad bone or value is one ViewerError, and nothing is added."""
        def add(editor):
            editor.scene.springs.add_chain(root, stiffness=stiffness, drag=drag, gravity=gravity,
                                           gravity_dir=gravity_dir, radius=radius, colliders=colliders,
                                           center=center, name=name)
            return editor.scene.springs.chains[-1]["name"]
        return self.edit(add)

    def reset_springs(self) -> None:
        """Every spring joint back to its rest (a playing clip swings it again from there)."""
        self.edit(lambda editor: editor.reset_springs())

    @property
    def constraints(self) -> bool:
        """Whether the node constraints (VRMC_node_constraint: ``scene.constraints``) turn their
        nodes after the motion; False puts those nodes at their rest, or where the clip keys them.
        Settable; True on a model without them is refused."""
        return self._gl.call(lambda: bool(self._editor.scene.constraints.enabled))

    @constraints.setter
    def constraints(self, on) -> None:
        if not isinstance(on, bool):
            raise ViewerError(f"constraints must be True or False, got {on!r}")
        self.edit(lambda editor: _set_constraints(editor, on))

    @property
    def mixer(self):
        """The scene's animation mixer (viewer.motion; docs/mixing.md), as a script uses it:
        ``v.mixer.action("Walking").weight = 0.5``, ``v.mixer.layers[0].mute = True``. Each call
        and set runs on the GL thread, then the mix is written and the picture redrawn."""
        from .mixing import Live

        return Live(self, self._gl.call(lambda: self._editor.scene.mixer))

    @property
    def clips(self) -> list[str]:
        return [clip.name for clip in self._editor.scene.animations]

    def play(self, clip=None) -> None:
        """Play ``clip`` (its name or index; default the current one): another clip from its
        start, the current one from the playhead."""
        def play(editor):
            if clip is not None:
                index = self._clip_index(clip)
                if index != editor.playback.clip_index:
                    editor.choose_clip(index)   # another clip starts at 0; the current one goes on
            if editor.clip is None:
                raise ViewerError("this model has no animations to play")
            editor.play()
        self.edit(play)

    def pause(self) -> None:
        self.edit(lambda editor: editor.pause())

    def return_to_rest(self, bone: str | None = None) -> None:
        """Every bone back to its rest pose (or only ``bone``, by name): one undo step."""
        def rest(editor):
            editor.pause()
            if bone is None:
                editor.return_all_to_rest()
            else:
                editor.return_bone_to_rest(editor.scene.require_bone(str(bone), "return_to_rest"))
        self.edit(rest)

    def undo(self) -> None:
        self.edit(lambda editor: editor.undo())

    def redo(self) -> None:
        self.edit(lambda editor: editor.redo())

    @property
    def camera(self) -> dict:
        """The camera as the ``--camera`` JSON holds it (yaw, pitch, distance, target, fov). Set a
        dict (or a path to such a file): what it leaves out is framed on the model."""
        return self._gl.call(lambda: CameraDescription.of(self._camera).to_dict())

    @camera.setter
    def camera(self, value) -> None:
        description = _camera_description(value)

        def place(_editor):
            width, height = self._size
            self._camera = description.camera(self._shown(), width / height)
        self.edit(place)

    def frame(self) -> None:
        """Aim the camera at the model as posed now (the F key)."""
        self.edit(lambda _editor: self._frame_model())

    def look(self, skeleton=None, grid=None, background=SKIP_LOOK, **look) -> None:
        """Change the look (the constructor's names), e.g. ``v.look(exposure=1.5, grid=False)``."""
        unknown = sorted(set(look) - set(LOOK_FIELDS))
        if unknown:
            raise ViewerError(f"look: unknown option {', '.join(unknown)} (the look: {', '.join(LOOK_FIELDS)}; "
                              "also skeleton, grid, background)")
        checked = checked_look(look)

        def change(editor):
            editor.use_look(checked)
            _set_overlay(editor.display, skeleton, grid, background)
        self.edit(change)

    def snapshot(self) -> np.ndarray:
        """The picture as it is now, (height, width, 4) uint8 RGBA, top row first: what the widget shows."""
        return self._gl.call(self._draw, False)

    def save_pose(self, path) -> None:
        """Write the pose as a pose file (what ``boneviewer render --pose`` and ``view --pose`` read)."""
        self._gl.call(self._editor.save_pose, Path(path))

    def save_mix(self, path) -> Path:
        """Write the mix (the mixer's actions with their settings, its layers with their keys) as a
        mix file: what ``boneviewer render --mix``, ``export --mix`` and ``mixer.load`` read.
        Never over a file the model was loaded from. Returns the path written."""
        from ..editing.pose import save_scene_mix

        return self._gl.call(save_scene_mix, self._editor.scene, Path(path))

    def bake(self, fps: float = 30, start=None, end=None, name: str = "mix", springs=None):
        """The mix baked into one clip (``viewer.bake`` on the viewer's GL thread, never beside a
        draw): the spring bones' swing baked in where the scene has them and they are on
        (``springs=None``), or as ``springs=True``/``False`` says. The mix, the pose and the
        springs are as they were; the clip is returned, not added to the scene."""
        from ..motion.bake import bake

        return self._gl.call(bake, self._editor.scene, fps, start, end, name, springs)

    def export(self, path, apply_pose_as_bind: bool = False, force: bool = False) -> Path:
        """Write the model as it is now, as ``boneviewer export --out PATH`` does: .glb/.gltf, or
        .usda/.usdc/.usdz (usd-core). A side file that exists (a .gltf's .bin and images, a
        .usda's textures) is replaced only with ``force``, as with ``--force``. Returns the path
        written."""
        path = Path(path)
        check_output_folder("export", path)
        return self._gl.call(save_model, self._editor.scene, path, apply_pose_as_bind=apply_pose_as_bind,
                             force=force)

    def controls(self):
        """The picture with ipywidgets beside it: the bone, its rotation and position, return to
        rest, the clip, its timeline and play (viewer.notebook.controls)."""
        from .controls import Controls

        if self._controls is None:
            self._controls = Controls(self)
        return self._controls.layout

    def edit(self, change):
        """Run ``change(editor)`` on the GL thread (with the draw, never beside it), then show the
        result; returns what ``change`` returns, and its exception is raised here. What the controls
        and the methods above do; a script changing ``v.scene`` directly does it this way too, as
        the draw (and a playing clip's springs) read the model on that thread."""
        result = self._gl.call(self._edit, change)
        self._changed()
        return result

    def _edit(self, change):
        result = change(self._editor)
        # Paused: the springs at the playhead from the clip's start, so the same time (and edits)
        # give the same picture, as `render --time`; playing, the frames swing them live.
        self._editor.springs_at_playhead()
        return result

    def close(self) -> None:
        """Close the widget and release its GL resources (a closed or re-run cell does this)."""
        # ipywidgets' __del__ calls this on a Viewer whose __init__ raised too: its base was
        # never made, and RemoteFrameBuffer.close would fail on it.
        if self.__dict__.get("_built") and not self.__dict__.get("_closing"):
            self._closing = True
            super().close()   # emits the close event, which releases GL
        self._release()

    # --- jupyter_rfb ----------------------------------------------------------------------------------
    def get_frame(self):
        if self._gl.closed:
            return None
        pixels = self._gl.call(self._draw, True)
        if self._editor.playback.playing or _mixing(self._editor.scene):
            self.request_draw()   # the next frame when the browser has taken this one
        return pixels

    def handle_event(self, event) -> None:
        kind = event.get("type", event.get("event_type"))
        if kind == "close":
            self._release()
            return
        if self._gl.closed:
            return
        if self._gl.call(self._on_event, kind, event):
            self._changed()

    def _repr_mimebundle_(self, **kwargs):
        # RemoteFrameBuffer's calls self.snapshot() for the HTML stand-in of v.display(); here
        # snapshot() is the array, so ask RemoteFrameBuffer's own for it.
        result = anywidget.AnyWidget._repr_mimebundle_(self, **kwargs)
        data = result[0] if isinstance(result, tuple) else result
        if data and self._rfb_pending_display and self._rfb_last_frame is not None:
            data["text/html"] = RemoteFrameBuffer.snapshot(self)._repr_html_()
            self._rfb_pending_display = None
        return result

    # --- on the GL thread -----------------------------------------------------------------------------
    def _draw(self, advance: bool) -> np.ndarray:
        editor = self._editor
        now = time.perf_counter()
        if advance:
            # Paused, the springs stay where v.time put them (render --time's picture, as the docs
            # say): the window's steps on by the wall clock would move them between the page's frames.
            if editor.playback.playing:
                editor.advance(min(now - self._last_draw, 0.25))  # a stalled browser does not jump the clip
            self._last_draw = now
        editor.update_controllers()
        display = editor.display
        display.selected_bone = editor.selected if editor.selection_chosen else None
        headless = self._gl.state
        headless.resize(self._size)
        return headless.render(self._shown(), self._camera, display)

    def _posed_companions(self) -> list:
        """The models beside the edited one, each at its first clip at the playhead (looping)."""
        from ..model.animation import clip_time

        playhead = self._editor.playback.time
        for scene, clip in self._companions:
            if clip is not None:
                clip.apply(clip_time(playhead, clip.duration))
        return self._companions

    def _shown(self):
        """What is drawn and framed: the model, or the row of it (first, at its own place: picks
        and edits act on it as alone) and the models beside it."""
        if self._row is None:
            return self._editor.scene
        self._posed_companions()
        return self._row

    def _on_event(self, kind, event) -> bool:
        """One jupyter_rfb event; True when the picture changes."""
        ratio = self._ratio
        if kind == "resize":
            self._ratio = ratio = float(event.get("ratio", event.get("pixel_ratio", 1.0)) or 1.0)
            size = (max(1, round(event["width"] * ratio)), max(1, round(event["height"] * ratio)))
            self._size = _checked_size(size)
            return False  # jupyter_rfb asks for the frame itself
        if kind == "pointer_down":
            self._press = (event["x"], event["y"], event.get("button", LEFT))
            self._dragging = False
            self._last = (event["x"], event["y"])
            return False
        if kind == "pointer_move" and self._press is not None:
            x, y, button = event["x"], event["y"], self._press[2]
            if not self._dragging and math.hypot(x - self._press[0], y - self._press[1]) * ratio <= ix.CLICK_PIXELS:
                return False
            self._dragging = True
            dx, dy = (x - self._last[0]) * ratio, (y - self._last[1]) * ratio
            self._last = (x, y)
            self._camera.mouse_drag(0 if button == LEFT else 1, dx, dy, self._size[1])
            return True
        if kind == "pointer_up":
            press, self._press = self._press, None
            if press is None or self._dragging or press[2] != LEFT:
                return False
            return self._pick(event["x"] * ratio, event["y"] * ratio)
        if kind == "wheel":
            self._camera.wheel(-float(event.get("dy", 0.0)) / WHEEL_PIXELS_PER_STEP)
            return True
        if kind == "key_down":
            return self._key(str(event.get("key", "")), set(event.get("modifiers", ())))
        return False

    def _key(self, key: str, modifiers: set) -> bool:
        editor = self._editor
        command = bool(modifiers & {"Control", "Meta"})
        if key.lower() == "f" and not command:
            self._frame_model()
        elif key.lower() == "z" and command:
            editor.redo() if "Shift" in modifiers else editor.undo()
        elif key.lower() == "y" and command:
            editor.redo()
        elif key == " ":
            editor.toggle_playback()
        else:
            return False
        return True

    def _pick(self, x: float, y: float) -> bool:
        editor, camera, size = self._editor, self._camera, self._size
        scene = editor.scene
        scene.prepare()
        display = editor.display
        segments = skeleton_segments(scene) if display.show_skeleton else []
        renderer = self._gl.state.renderer
        bone = ix.bone_at(scene, display, np.array([x, y]), ix.view_projection(camera, size), size, segments,
                          lambda px, py: renderer.pick_bone(scene, camera, size, px, py))
        if bone is None:
            return False  # empty space keeps the selection, as in the window
        editor.end_edit()
        editor.select(bone)
        return True

    def _frame_model(self) -> None:
        camera, (width, height) = self._camera, self._size
        self._camera = framed_camera(self._shown(), yaw=camera.yaw, pitch=camera.pitch, aspect=width / height,
                                     fov=camera.fov_y)

    def _clip_index(self, clip) -> int:
        clips = self._editor.scene.animations
        if isinstance(clip, int) and not isinstance(clip, bool):
            if 0 <= clip < len(clips):
                return clip
        else:
            for index, candidate in enumerate(clips):
                if candidate.name == clip:
                    return index
        names = ", ".join(repr(c.name) for c in clips) or "none"
        raise ViewerError(f"no clip {clip!r} (this model's clips: {names})")

    # --- plumbing -------------------------------------------------------------------------------------
    def _changed(self) -> None:
        """Ask for a new frame, from whatever thread: jupyter_rfb schedules draws on the asyncio
        loop of the calling thread, so a thread without one hands the request to the kernel's."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if self._loop is not None and self._loop.is_running():
                self._loop.call_soon_threadsafe(self.request_draw)
        else:
            self.request_draw()
        if self._controls is not None:
            self._controls.refresh()

    def _release(self) -> None:
        _live.discard(self)
        finalizer = self.__dict__.get("_finalizer")   # none when __init__ raised before the GL thread
        if finalizer is not None:
            finalizer()   # the GL thread releases the renderer and the context, then ends


def _mixing(scene) -> bool:
    """Whether the scene's mixer (if made) has an action running: the picture moves."""
    mixer = scene.__dict__.get("_mixer")
    return mixer is not None and any(action.is_running for action in mixer.actions)


@contextlib.contextmanager
def _quiet_without_kernel():
    """RemoteFrameBuffer.__init__ displays an output widget (where errors in its callbacks go);
    with no kernel to show it, IPython's display prints its repr, "RFBOutputContext()", to
    stdout. Outside a kernel that line is caught here; anything else printed goes through."""
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
    except ImportError:
        kernel = None
    if kernel is not None:
        yield
        return
    caught = io.StringIO()
    try:
        with contextlib.redirect_stdout(caught):
            yield
    finally:
        rest = [line for line in caught.getvalue().splitlines(keepends=True) if line.strip() != "RFBOutputContext()"]
        if rest:
            sys.stdout.write("".join(rest))


def _set_overlay(display, skeleton, grid, background) -> None:
    """The render options' overlay and background, as render's --no-skeleton, --no-grid and --background."""
    if skeleton is not None:
        display.show_skeleton = bool(skeleton)
    if grid is not None:
        display.show_grid = bool(grid)
    if background is SKIP_LOOK:
        return
    default = type(display)()
    display.transparent_background = False
    display.background_top, display.background_bottom = default.background_top, default.background_bottom
    if background is None:
        return
    colour = checked_background(background)
    if colour == TRANSPARENT:
        display.transparent_background = True
    else:
        display.background_top = display.background_bottom = colour


def _set_skinning(editor, mode) -> None:
    from ..model.mesh import skinning_mode

    if not (isinstance(mode, str) and mode.strip().lower() == "both"):
        try:
            skinning_mode(mode)
        except ViewerError:
            raise ViewerError(f"skinning: expected lbs (linear blend), dq (dual quaternions) or both (side by side), "
                              f"got {mode!r}") from None
    editor.set_skinning(mode)


def _set_springs(editor, on: bool) -> None:
    if on and not len(editor.scene.springs):
        raise ViewerError("springs: this model has no spring chains (v.add_spring_chain(BONE, ...) adds one)")
    editor.set_springs(on)


def _set_constraints(editor, on: bool) -> None:
    if on and not len(editor.scene.constraints):
        raise ViewerError("constraints: this model has no node constraints (VRMC_node_constraint)")
    editor.set_constraints(on)


def _camera_description(value) -> CameraDescription:
    if value is None:
        return CameraDescription()
    if isinstance(value, CameraDescription):
        return value
    if isinstance(value, (str, Path)):
        return CameraDescription.read(Path(value), "camera")
    return CameraDescription.from_dict(value, "camera")


# --- re-run cells and the kernel's exit ------------------------------------------------------------
def _cell_id():
    """The id of the notebook cell running now (JupyterLab and Notebook 7 send it), or None."""
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        parent = kernel.get_parent("shell") if kernel is not None else None
    except Exception:  # not in a kernel, or a kernel without the call
        return None
    return ((parent or {}).get("metadata") or {}).get("cellId")


def _close_viewers_of_cell(cell_id) -> None:
    """A cell runs again: the viewers it made before are closed (their views are gone)."""
    if cell_id is None:
        return
    for viewer in list(_live):
        if viewer._cell == cell_id:
            viewer.close()


def _before_cell(info) -> None:
    _close_viewers_of_cell(getattr(info, "cell_id", None))


def _hook_ipython() -> None:
    global _hooked
    if _hooked:
        return
    _hooked = True
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        shell.events.register("pre_run_cell", _before_cell)


@atexit.register
def _close_all() -> None:
    """The kernel exits (or restarts): every GL thread releases its context before the process goes."""
    for viewer in list(_live):
        viewer._release()

