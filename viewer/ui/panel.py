"""The ImGui pose panel: draws the Editor's state and calls its actions.

It changes the model only through viewer.editing.editor.Editor (the public API a script would use) and
asks the session for what needs GL or files (screenshot, open a model, frame the camera) by
returning PanelRequests. It knows nothing of GL.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass

import numpy as np
from imgui_bundle import imgui

from ..editing.editor import IK, LOOK
from ..errors import ViewerError
from ..loaders import MODEL_SUFFIXES
from ..look import BUILT_IN_ENVIRONMENTS, ENVIRONMENT_FILTERS, NONE, STUDIO, TONE_MAPPINGS, environment_name
from ..model.bone import Bone
from ..model.space import Space
from ..editing.pose import save_scene_mix
from ..options import Axes, FrameTimes, Paint, Status

PANEL_WIDTH = 380
DIALOG_TOOLS = ("zenity", "kdialog", "matedialog", "qarma")  # what portable-file-dialogs runs on Linux
MODEL_FILTERS = ["Models", " ".join(f"*{suffix}" for suffix in MODEL_SUFFIXES), "All files", "*"]
HDR_FILTERS = ["Radiance HDR", "*.hdr", "All files", "*"]


def open_file_dialog(title: str, filters: list):
    """A native Open dialog that does not block (imgui-bundle's portable-file-dialogs: a helper
    process such as zenity on Linux): poll ``ready()`` each frame, then ``result()``, a list of paths."""
    from imgui_bundle import portable_file_dialogs as pfd

    return pfd.open_file(title, os.getcwd(), filters)


def dialog_missing() -> str | None:
    """Why Open... cannot show a dialog here (None: it can)."""
    if sys.platform.startswith("linux") and not any(shutil.which(tool) for tool in DIALOG_TOOLS):
        return "Open... needs zenity or kdialog: type a path"
    return None
SELECTED_TEXT = imgui.ImVec4(0.3, 0.95, 1.0, 1.0)
ERROR_TEXT = imgui.ImVec4(1.0, 0.45, 0.4, 1.0)
STATUS_TEXT = imgui.ImVec4(0.7, 0.9, 0.7, 1.0)


@dataclass
class PanelRequests:
    screenshot: str | None = None
    open_model: str | None = None
    open_scene: int | None = None   # another scene of the model's file
    frame_model: bool = False
    copy_camera: bool = False       # the camera as --camera JSON, to the clipboard
    save_camera: str | None = None  # ... to this file
    recover_mix: bool = False       # load the recovery file's mix (the prompt at the top)
    dismiss_recovery: bool = False


class PosePanel:
    def __init__(self, pose_path: str = "pose.json", screenshot_path: str = "screenshot.png",
                 camera_path: str = "camera.json"):
        self.pose_path = pose_path
        self.camera_path = camera_path
        self.screenshot_path = screenshot_path
        self.model_path = ""
        self.environment_path = ""       # the Display section's environment file field
        self.export_path = "export.glb"  # Export glTF... writes the pose and clips here (.glb or .gltf)
        self.new_clip_name = "Clip"
        self.mix_path = "mix.json"       # Save mix writes the mixer's mix here (render --mix reads it)
        self.recovery_label = None       # "Recover the mix saved at HH:MM": an earlier session's mix to offer
        # Where each widget was drawn last frame (label -> (x0, y0, x1, y1) in window
        # coordinates), so tests can click and drag them like a user.
        self.rects: dict[str, tuple] = {}
        self.times_line = ""  # the frame and GPU times shown last frame
        self.open_dialog = open_file_dialog  # (title, filters) -> a dialog with ready(), result()
        self.dialog_missing = dialog_missing()
        self._dialog = None      # the Open dialog showing, and what its file is for
        self._dialog_for = None
        self._revealed = None  # the selection the bone tree last opened and scrolled to
        self.fade_seconds = 0.5  # the Mixer section's seconds for fades and cross-fades
        self.layer_key_marks: list = []  # x of each active-layer key drawn on the timeline last frame
        self.qa_marks: list = []  # (QAItem, x0, x1) of each finding's frames marked under the timeline last frame
        self.qa_rows: list = []   # the QA section's rows (QAItem) drawn last frame, as "qa N" in rects
        self._reveal: set[int] = set()  # ids of the bones on the way to it, this frame
        self._spring_reaches: dict = {}  # (scene, chain, number) -> the top of its slider

    def _record(self, label: str, fields_only: bool = False, shown: str | None = None) -> None:
        """``shown``: the widget's label as drawn, where ``label`` is another name for it."""
        low, high = imgui.get_item_rect_min(), imgui.get_item_rect_max()
        right = high.x
        shown = imgui.calc_text_size(label if shown is None else shown, hide_text_after_double_hash=True).x
        if fields_only and shown:  # leave out the label drawn right of a multi-field widget
            right -= shown + imgui.get_style().item_inner_spacing.x
        self.rects[label] = (low.x, low.y, right, high.y)

    def _button(self, label: str, size=None) -> bool:
        pressed = imgui.button(label, size) if size is not None else imgui.button(label)
        self._record(label)
        return pressed

    def _slider(self, label: str, value: float, low: float, high: float, format: str, logarithmic: bool = False,
                name: str | None = None):
        """imgui.slider_float with its value drawn inside the frame on the side away from the grab
        (ImGui centres it, where the grab covers a digit: "3.|17 s"); Ctrl+click types as before.
        Recorded as ``name`` (the label's shown part): the frame, the grab and the value's rects."""
        name = name or label.split("##")[0]
        typing = imgui.internal.temp_input_is_active(imgui.get_id(label))
        flags = imgui.SliderFlags_.logarithmic if logarithmic else 0
        changed, value = imgui.slider_float(label, value, low, high, format if typing else "", flags)
        self._record(name, fields_only=True, shown=label)
        if typing:
            return changed, value
        x0, y0, x1, y1 = self.rects[name]
        style = imgui.get_style()
        # Where ImGui puts the grab (SliderBehaviorT: 2 px padding, GrabMinSize wide for floats).
        if high == low:
            fraction = 0.0
        elif logarithmic:
            fraction = np.log(max(value, low) / low) / np.log(high / low)
        else:
            fraction = (value - low) / (high - low)
        fraction = min(max(float(fraction), 0.0), 1.0)
        grab = style.grab_min_size
        grab_x = x0 + 2.0 + grab / 2 + fraction * max(x1 - x0 - 4.0 - grab, 0.0)
        self.rects[f"{name} grab"] = (grab_x - grab / 2, y0 + 2.0, grab_x + grab / 2, y1 - 2.0)
        text = format % value
        size = imgui.calc_text_size(text)
        if x1 - (grab_x + grab / 2) >= (grab_x - grab / 2) - x0:  # more room right of the grab
            x = x1 - style.frame_padding.x - size.x
        else:
            x = x0 + style.frame_padding.x
        y = (y0 + y1 - size.y) / 2
        draw = imgui.get_window_draw_list()
        draw.push_clip_rect(imgui.ImVec2(x0, y0), imgui.ImVec2(x1, y1), True)
        draw.add_text(imgui.ImVec2(x, y), imgui.get_color_u32(imgui.Col_.text), text)
        draw.pop_clip_rect()
        self.rects[f"{name} value"] = (x, y, x + size.x, y + size.y)
        return changed, value

    def _open_button(self, label: str, purpose: str, title: str, filters) -> None:
        """An Open... button: a native dialog; its file is taken by _poll_dialog."""
        imgui.begin_disabled(self.dialog_missing is not None or self._dialog is not None)
        if self._button(label):
            self._dialog, self._dialog_for = self.open_dialog(title, filters), purpose
        imgui.end_disabled()
        if self.dialog_missing is not None:
            imgui.push_style_color(imgui.Col_.text, imgui.get_style_color_vec4(imgui.Col_.text_disabled))
            imgui.text_wrapped(self.dialog_missing)  # whole, however narrow the panel
            imgui.pop_style_color()
            self._record(f"{label} missing")

    def _poll_dialog(self, editor, requests) -> None:
        """The Open dialog's file once chosen: a model opens as a dropped file does (the
        session's open_model), an .hdr as typed in its field; a cancelled dialog changes nothing."""
        if self._dialog is None or not self._dialog.ready():
            return
        paths, purpose = self._dialog.result(), self._dialog_for
        self._dialog = self._dialog_for = None
        if not paths:
            return
        if purpose == "model":
            self.model_path = paths[0]
            requests.open_model = paths[0]
        else:
            self.environment_path = paths[0]
            self._set_look(editor, "environment", paths[0], f"environment: {paths[0]}")

    def _scene_choice(self, editor, requests) -> None:
        """A file with several scenes (glTF): which one is shown; choosing reloads the file."""
        names = editor.scene.file_scenes
        if len(names) < 2:
            return
        shown = editor.scene.file_scene or 0
        labels = [f"{i}: {name}" for i, name in enumerate(names)]
        changed, chosen = imgui.combo("scene", shown, labels)
        self._record("scene")
        if changed and chosen != shown:
            requests.open_scene = chosen

    def _header(self, label: str, default_open: bool = True) -> bool:
        opened = imgui.collapsing_header(label, imgui.TreeNodeFlags_.default_open if default_open else 0)
        self._record(label)
        return opened

    def draw(self, editor, model_name: str, times: FrameTimes | None = None) -> PanelRequests:
        requests = PanelRequests()
        self.rects.clear()
        self._poll_dialog(editor, requests)
        io = imgui.get_io()
        imgui.set_next_window_pos(imgui.ImVec2(8, 8), imgui.Cond_.first_use_ever)
        imgui.set_next_window_size(imgui.ImVec2(PANEL_WIDTH, max(200.0, io.display_size.y - 16)),
                                   imgui.Cond_.first_use_ever)
        imgui.begin("boneviewer")
        position, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rects["window"] = (position.x, position.y, position.x + size.x, position.y + size.y)
        imgui.text(model_name)
        self.times_line = "" if times is None else times.line()
        if self.times_line:
            imgui.same_line()
            imgui.text_disabled(f"  {self.times_line}")
            if imgui.is_item_hovered():
                imgui.set_tooltip(times.explanation())
        if self.recovery_label:  # an earlier session's mix of this model (the window closed without saving it)
            if self._button(self.recovery_label):
                requests.recover_mix = True
            imgui.same_line()
            if self._button("Dismiss"):
                requests.dismiss_recovery = True
        # The sections scroll above the status, which shows the whole message wrapped at the
        # bottom: a longer message shortens their view and moves none of their widgets.
        status_height = self._status_height(editor.status)
        imgui.begin_child("sections", imgui.ImVec2(0, -(status_height + imgui.get_style().item_spacing.y)))
        position, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rects["sections"] = (position.x, position.y, position.x + size.x, position.y + size.y)
        self._scene_choice(editor, requests)
        self._shortcuts(editor, requests)
        if self._header("Display"):
            self._display(editor, requests)
        if editor.scene.animations and self._header("Animation"):
            self._animation(editor)
        if editor.scene.animations and self._header("Mixer", default_open=False):
            self._mixer(editor)
        # QA is on while its section is open: the checks run, the timeline and the feet are marked.
        editor.qa.enabled = bool(editor.scene.animations) and self._header("QA", default_open=False)
        if editor.qa.enabled:
            self._qa(editor)
        if editor.retargeting is not None and self._header("Bone map", default_open=False):
            self._bone_map(editor)
        if editor.scene.expressions and self._header("Expressions"):
            self._expressions(editor)
        if editor.morph_meshes() and self._header("Morph targets"):
            self._morph_targets(editor)
        if len(editor.scene.springs) and self._header("Spring chains", default_open=False):
            self._spring_chains(editor)
        if self._header("Bones"):
            self._bone_tree(editor)
        if editor.selected is not None and self._header("Selected bone"):
            self._bone_editor(editor, editor.selected)
        if editor.selected is not None and self._header("Matrices", default_open=False):
            self._matrices(editor, editor.selected)
        if self._header("Files", default_open=False):
            self._files(editor, requests)
        if self._header("Keyframes", default_open=False):
            self._keying(editor)
        imgui.end_child()
        self._status(editor.status, status_height)
        imgui.end()
        return requests

    # --- sections ------------------------------------------------------------------------------
    STATUS_SHARE = 0.4  # of the panel's height, the most a long message takes (it scrolls beyond)

    def _status_height(self, status: Status) -> float:
        """The height of the status, wrapped to the panel's width (one line at least)."""
        wrapped = imgui.calc_text_size(str(status) or " ", wrap_width=imgui.get_content_region_avail().x).y
        return min(wrapped, max(imgui.get_text_line_height(), imgui.get_content_region_avail().y * self.STATUS_SHARE))

    def _status(self, status: Status, height: float) -> None:
        """What just happened, whole and wrapped (a path, a script's FILE:LINE: nothing is cut),
        in red for an error; a message taller than ``height`` scrolls."""
        imgui.begin_child("status", imgui.ImVec2(0, height))
        imgui.push_style_color(imgui.Col_.text, ERROR_TEXT if status.is_error else STATUS_TEXT)
        imgui.text_wrapped(str(status))
        imgui.pop_style_color()
        self._record("status")
        imgui.end_child()

    def _shortcuts(self, editor, requests) -> None:
        io = imgui.get_io()
        if io.want_text_input:
            return
        if keyboard_is_free() and imgui.is_key_chord_pressed(imgui.Key.space):
            editor.toggle_playback()
        if keyboard_is_free() and imgui.is_key_chord_pressed(imgui.Key.f):
            requests.frame_model = True
        ctrl = imgui.Key.mod_ctrl
        if keyboard_is_free() and imgui.is_key_chord_pressed(imgui.Key.i):
            editor.key_selected()
        if keyboard_is_free() and imgui.is_key_chord_pressed(imgui.Key.mod_shift | imgui.Key.i):
            editor.key_posed()
        if keyboard_is_free() and imgui.is_key_chord_pressed(imgui.Key.k):
            editor.key_layer_selected()   # the selected bone's tweak keyed in the active layer
        if imgui.is_key_chord_pressed(ctrl | imgui.Key.z):
            editor.undo()
        if imgui.is_key_chord_pressed(ctrl | imgui.Key.y) or imgui.is_key_chord_pressed(ctrl | imgui.Key.mod_shift | imgui.Key.z):
            editor.redo()

    def _display(self, editor, requests) -> None:
        display = editor.display
        _, display.show_skeleton = imgui.checkbox("Skeleton", display.show_skeleton)
        imgui.same_line(130)
        _, display.show_mesh = imgui.checkbox("Mesh", display.show_mesh)
        imgui.same_line(240)
        _, display.wireframe = imgui.checkbox("Wireframe", display.wireframe)
        _, display.show_grid = imgui.checkbox("Grid", display.show_grid)
        imgui.same_line(130)
        _, display.cpu_skinning = imgui.checkbox("CPU skinning", display.cpu_skinning)
        imgui.same_line(240)
        _, display.bone_texture = imgui.checkbox("Bone texture", display.bone_texture)
        _, display.show_gizmo = imgui.checkbox("Gizmo", display.show_gizmo)
        self._record("Gizmo")
        imgui.same_line(130)
        _, display.move_arrows_all_bones = imgui.checkbox("Move arrows on every bone", display.move_arrows_all_bones)
        self._record("Move arrows on every bone")
        if self._button("Frame model (F)"):
            requests.frame_model = True
        imgui.same_line()
        if self._button("Copy camera"):
            requests.copy_camera = True
        if editor.scene.skinned_meshes:  # on this row: the rows below keep their place
            imgui.same_line()
            current = editor.skinning
            imgui.set_next_item_width(-1)
            if imgui.begin_combo("##skinning", dict(self.SKINNINGS)[current]):
                for mode, label in self.SKINNINGS:
                    if imgui.selectable(label, current == mode)[0] and current != mode:
                        editor.set_skinning(mode)
                    self._record(f"skinning {label}")
                imgui.end_combo()
            self._record("skinning")
            if imgui.is_item_hovered():
                imgui.set_tooltip("skinning: LBS, linear blend (as Babylon.js and three.js draw), or DQ, dual "
                                  "quaternions: the volume kept where a joint twists (--skinning lbs|dq);\n"
                                  "LBS | DQ: the view twice side by side (mouse editing follows the single view)")
        self._skin_views(editor)
        springs = editor.scene.springs
        if len(springs):  # only for a model with spring chains: the rows of the others keep their place
            changed, on = imgui.checkbox("Springs", springs.enabled)
            if changed:
                editor.set_springs(on)
            self._record("Springs")
            if imgui.is_item_hovered():
                imgui.set_tooltip(f"spring bones: {len(springs.chains)} chains, {len(springs)} joints swing after the "
                                  "body as the clip plays and after a bone you drag (--springs/--no-springs);\n"
                                  "their numbers: the Spring chains section")
        constraints = editor.scene.constraints
        if len(constraints):  # only for a model with node constraints (VRMC_node_constraint)
            if len(springs):
                imgui.same_line(130)
            changed, on = imgui.checkbox("Constraints", constraints.enabled)
            if changed:
                editor.set_constraints(on)
            self._record("Constraints")
            if imgui.is_item_hovered():
                kinds = sorted({c.kind for c in constraints})
                imgui.set_tooltip(f"node constraints: {len(constraints)} ({', '.join(kinds)}) turn their nodes after "
                                  "the motion, before the springs (VRMC_node_constraint);\n"
                                  "off: the nodes as the file or the clip has them")
        # The look folds, so the sections below keep their place on a small window.
        opened = imgui.tree_node_ex("Light and tone mapping", imgui.TreeNodeFlags_.span_avail_width)
        self._record("Light and tone mapping")
        if opened:
            self._look(editor)
            imgui.tree_pop()

    SKINNINGS = (("lbs", "LBS"), ("dq", "DQ"), ("both", "LBS | DQ"))  # (editor.skinning, shown)
    EXPOSURE_RANGE = (1.0 / 16.0, 16.0)  # the slider's reach, four stops either way (Ctrl+click types any)

    def _look(self, editor) -> None:
        """The light and the picture: the environment (studio, none, or an .hdr file typed and
        loaded; a file that is not a sound .hdr leaves the light as it was and says why in the
        status line), its turn about +Y, the exposure (a log slider), the tone mapping, and
        how reflections blur with roughness (Babylon's box mips or GGX), and whether the environment
        shows as the background. Each calls Editor.set_look, as ``app.environment`` and the rest do."""
        display = editor.display
        for i, (label, value) in enumerate((("Studio light", STUDIO), ("Key light only", NONE))):
            if i:
                imgui.same_line()
            if imgui.radio_button(label, display.environment == value) and display.environment != value:
                self._set_look(editor, "environment", value, f"environment: {value}")
            self._record(label)
        if display.environment not in BUILT_IN_ENVIRONMENTS:
            imgui.same_line()
            imgui.text_colored(SELECTED_TEXT, environment_name(display.environment))
            self._record("environment shown")
            if imgui.is_item_hovered():
                imgui.set_tooltip(display.environment)
        imgui.set_next_item_width(-110)
        _, self.environment_path = imgui.input_text_with_hint("##environment file", "FILE.hdr", self.environment_path)
        self._record("environment file")
        imgui.same_line()
        if self._button("Load .hdr") and self.environment_path.strip():
            self._set_look(editor, "environment", self.environment_path.strip(),
                           f"environment: {self.environment_path.strip()}")
        self._open_button("Open .hdr...", "environment", "Open a Radiance .hdr environment", HDR_FILTERS)
        imgui.set_next_item_width(-150)
        changed, rotation = self._slider("environment turn", float(display.environment_rotation), -180.0, 180.0,
                                         "%.0f deg")
        if changed:
            self._set_look(editor, "environment_rotation", rotation)
        imgui.set_next_item_width(-150)
        changed, exposure = self._slider("exposure", float(display.exposure), *self.EXPOSURE_RANGE, "%.3f",
                                         logarithmic=True)
        if changed:
            self._set_look(editor, "exposure", exposure)
        self._look_choice(editor, "tone mapping", "tone_mapping", TONE_MAPPINGS)
        self._look_choice(editor, "reflections", "environment_filter", ENVIRONMENT_FILTERS)  # blur with roughness
        if imgui.is_item_hovered():
            imgui.set_tooltip("mipmaps: Babylon.js's box-filtered mips (its pictures); ggx: GGX importance sampling")
        changed, flag = imgui.checkbox("Show environment", display.show_environment)
        self._record("Show environment")
        if changed:
            self._set_look(editor, "show_environment", flag)
        # Shadows (issue 45): the toggle, and how dark and how soft they are.
        changed, flag = imgui.checkbox("Shadows", display.shadows)
        self._record("Shadows")
        if changed:
            self._set_look(editor, "shadows", flag)
        if imgui.is_item_hovered():
            imgui.set_tooltip("a contact shadow on the ground and shadows cast by the key light (--shadows)")
        for label, setting in (("shadow intensity", "shadow_intensity"), ("shadow softness", "shadow_softness")):
            imgui.set_next_item_width(-150)
            changed, value = self._slider(label, float(getattr(display, setting)), 0.0, 1.0, "%.2f")
            if changed:
                self._set_look(editor, setting, value)

    def _look_choice(self, editor, label: str, setting: str, choices) -> None:
        """A combo of one of the look's named settings (``choices``), set through Editor.set_look."""
        current = getattr(editor.display, setting)
        imgui.set_next_item_width(120)
        if imgui.begin_combo(label, current):
            for name in choices:
                if imgui.selectable(name, name == current)[0] and name != current:
                    self._set_look(editor, setting, name)
                self._record(f"{label}/{name}")
            imgui.end_combo()
        self._record(label, fields_only=True)

    @staticmethod
    def _set_look(editor, name: str, value, said: str | None = None) -> None:
        """Editor.set_look; a refused value (a bad file, a typed exposure of 0) goes to the status line."""
        try:
            editor.set_look(name, value)
        except ViewerError as error:
            editor.status = Status.error(error)
            return
        if said is not None:
            editor.status = Status(said)

    PAINTS = (("Shaded", Paint.SHADED), ("Weights", Paint.WEIGHTS), ("Bone map", Paint.BONE_MAP),
              ("Weight check", Paint.WEIGHT_CHECK))
    AXES = (("No axes", Axes.NONE), ("Selected axes", Axes.SELECTED), ("All axes", Axes.ALL))

    def _skin_views(self, editor) -> None:
        """What colours the mesh (the weights follow the selected bone: pick one in the tree or
        the viewport) and whose axes show; the weight check's count."""
        display = editor.display
        has_skin = bool(editor.scene.skeletons)
        imgui.begin_disabled(not has_skin)
        for i, (label, paint) in enumerate(self.PAINTS):
            if i:
                imgui.same_line()
            if imgui.radio_button(label, display.paint is paint) and display.paint is not paint:
                editor.set_paint(paint)
            self._record(label)
        for i, (label, axes) in enumerate(self.AXES):
            if i:
                imgui.same_line()
            if imgui.radio_button(label, display.axes is axes):
                editor.set_axes(axes)
            self._record(label)
        imgui.end_disabled()
        if display.paint is Paint.WEIGHTS:
            bone = editor.selected
            imgui.text_disabled(f"weights of {bone.name}: 0 blue .. 1 red" if bone is not None
                                else "select a bone to see its weights")
            self._record("weights of")
        elif display.paint is Paint.WEIGHT_CHECK:
            check = editor.weight_check()
            color = ERROR_TEXT if check.flagged else STATUS_TEXT
            imgui.text_colored(color, f"{check.flagged} of {check.vertices} vertices flagged (magenta)")
            self._record("weight check")
            if imgui.is_item_hovered():
                imgui.set_tooltip(f"{check.off_sum} with weights that do not sum to 1 as the file gives them "
                                  f"(renormalized to draw them)\n{check.over_limit} with more than 8 influences "
                                  "(the rest are left out)")

    def _animation(self, editor) -> None:
        names = [f"{i}: {clip.name}" for i, clip in enumerate(editor.scene.animations)]
        index = editor.playback.clip_index or 0
        imgui.set_next_item_width(-1)
        changed, index = imgui.combo("##clip", index, names)
        if changed:
            editor.choose_clip(index)
        playback, clip = editor.playback, editor.clip
        if self._button("Pause" if playback.playing else "Play", imgui.ImVec2(70, 0)):
            editor.toggle_playback()
        imgui.same_line()
        _, playback.loop = imgui.checkbox("Loop", playback.loop)
        imgui.same_line()
        imgui.set_next_item_width(-1)
        _, playback.speed = self._slider("##speed", playback.speed, 0.0, 3.0, "speed %.2fx", name="speed")
        imgui.set_next_item_width(-1)
        length = editor.timeline_length()
        changed, time = self._slider("##time", playback.time, 0.0, length, f"%.3f / {clip.duration:.3f} s",
                                     name="timeline")
        if changed:
            editor.pause()
            editor.seek(time)
        self._key_markers(editor.key_times(), length)
        mixer = existing_mixer(editor.scene)
        layer = None if mixer is None else mixer.active_layer
        self.layer_key_marks = [] if layer is None else self._key_markers(layer.key_times(), length, below=True)
        self.qa_marks = self._qa_marks(editor.qa.current(), length, editor.qa.chosen)

    KEY_COLOR = imgui.ImVec4(1.0, 0.8, 0.2, 1.0)
    LAYER_KEY_COLOR = imgui.ImVec4(0.3, 0.95, 1.0, 1.0)  # the active mixer layer's keys, under the timeline

    def _key_markers(self, times, length: float, below: bool = False) -> list:
        """A tick on the timeline at every key of the clip (where the slider's grab centre
        would be at that time); ``below``: the active layer's keys, pointing up from the
        timeline's lower edge. Returns the ticks' x."""
        _, y0, _, y1 = self.rects["timeline"]
        draw = imgui.get_window_draw_list()
        color = imgui.get_color_u32(self.LAYER_KEY_COLOR if below else self.KEY_COLOR)
        # One tick per pixel column: a long capture has a key every frame, far more than pixels.
        ticks = np.unique(np.round(self._timeline_x(times, length))).tolist()
        for x in ticks:
            if below:
                draw.add_triangle_filled(imgui.ImVec2(x - 4, y1), imgui.ImVec2(x, y1 - 6), imgui.ImVec2(x + 4, y1), color)
            else:
                draw.add_triangle_filled(imgui.ImVec2(x - 4, y0), imgui.ImVec2(x + 4, y0), imgui.ImVec2(x, y0 + 6),
                                         color)
        return ticks

    SEVERITY_COLORS = {"error": imgui.ImVec4(1.0, 0.35, 0.3, 1.0), "warning": imgui.ImVec4(1.0, 0.62, 0.12, 1.0),
                       "info": imgui.ImVec4(0.55, 0.75, 1.0, 1.0)}
    QA_MARK_HEIGHT = 3.0  # px: the findings' bars in the gap under the timeline (ImGui's item spacing is 4)

    def _timeline_x(self, times, length: float) -> np.ndarray:
        """Where the timeline's grab centre is at each of ``times`` (as the key ticks)."""
        x0, _, x1, _ = self.rects["timeline"]
        grab = imgui.get_style().grab_min_size / 2 + imgui.get_style().frame_padding.x / 2
        fraction = np.asarray(times, dtype=np.float64) / length if length > 0 else np.zeros(len(times))
        return x0 + grab + (x1 - x0 - 2 * grab) * np.clip(fraction, 0.0, 1.0)

    def _qa_marks(self, result, length: float, chosen=None) -> list:
        """A bar in the finding's severity colour under the timeline over each finding's frames
        (a frame at least 2 px wide; errors drawn last, on top; the row last clicked, ``chosen``,
        in the text's colour over them). Returns (item, x0, x1) each."""
        if result is None or not result.items:
            return []
        _, _, _, y1 = self.rects["timeline"]
        draw = imgui.get_window_draw_list()
        marks = []
        order = sorted(result.items, key=lambda item: (item is chosen, ("info", "warning", "error").index(item.severity)))
        for item in order:
            color = imgui.get_color_u32(imgui.Col_.text if item is chosen else self.SEVERITY_COLORS[item.severity])
            for a, b in item.ranges:
                xa, xb = self._timeline_x([result.time_of(a), result.time_of(b)], length)
                xa, xb = float(np.floor(xa - 1.0)), float(np.ceil(xb + 1.0))
                draw.add_rect_filled(imgui.ImVec2(xa, y1 + 1), imgui.ImVec2(xb, y1 + 1 + self.QA_MARK_HEIGHT), color)
                marks.append((item, xa, xb))
        return marks

    def _qa(self, editor) -> None:
        """The motion checks on the current clip (run when the section opens and when the clip
        or its keys change): a row per finding in its severity's colour (code, bone, frames;
        the message as its tooltip); a click goes to it (MotionQA.go_to: the playhead to its
        first frame, its bone selected). The feet in contact ringed in the view."""
        qa = editor.qa
        result = qa.current()
        self.qa_rows = []
        if result is None:
            return
        changed, qa.show_contacts = imgui.checkbox("Feet in contact", qa.show_contacts)
        self._record("Feet in contact")
        if imgui.is_item_hovered():
            imgui.set_tooltip("a lime ring on each foot while the motion checks call it in contact (GMD: below the "
                              "contact height in two consecutive frames)")
        if result.error:
            imgui.push_style_color(imgui.Col_.text, ERROR_TEXT)
            imgui.text_wrapped(result.error)
            imgui.pop_style_color()
            self._record("qa error")
            return
        counts = result.counts()
        said = ", ".join(f"{n} {severity}{'s' if n != 1 else ''}" for severity, n in counts.items() if n) or "no findings"
        imgui.same_line()
        imgui.text_disabled(f"{said} in {len(result.times)} frames")
        self._record("qa summary")
        if not result.items:
            return
        rows = min(len(result.items), 8)
        height = rows * imgui.get_text_line_height_with_spacing() + 2 * imgui.get_style().window_padding.y
        imgui.begin_child("qa list", imgui.ImVec2(0, height), imgui.ChildFlags_.borders)
        position, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rects["qa list"] = (position.x, position.y, position.x + size.x, position.y + size.y)
        for index, item in enumerate(result.items):
            imgui.push_style_color(imgui.Col_.text, self.SEVERITY_COLORS[item.severity])
            label = f"{item.code:<18} {item.bone or '':<16} {item.frames}##qa{index}"
            clicked, _ = imgui.selectable(label, item is qa.chosen, imgui.SelectableFlags_.span_all_columns)
            imgui.pop_style_color()
            self._record(f"qa {index}")
            if imgui.is_item_hovered():
                imgui.set_tooltip(f"{item.severity}: {item.finding.message}")
            if clicked:
                qa.go_to(item)
            self.qa_rows.append(item)
        imgui.end_child()

    # --- the Mixer section: every control is one call of the mixer's public API (viewer.motion) ---
    LOOPS = ("repeat", "once", "pingpong")
    LAYER_MODES = ("additive", "override")

    def _mix(self, editor, change) -> None:
        """Run one mixer call and show the mix now (paused, nothing else would write it); a
        refused value goes to the status line and leaves the mix as it was."""
        try:
            change()
            editor.scene.mixer.evaluate()
        except ViewerError as error:
            editor.status = Status.error(error)

    def _mixer(self, editor) -> None:
        """Each clip's action (play or stop, weight, and folded: loop, speed, additive, mask,
        fades and "Cross-fade to..."), then the layers (the active one, weight, mode, mute, solo)."""
        mixer = editor.scene.mixer
        imgui.set_next_item_width(120)
        changed, seconds = imgui.drag_float("fade seconds", self.fade_seconds, 0.01, 0.0, 60.0, "%.2f s")
        self._record("fade seconds", fields_only=True)
        if changed:
            self.fade_seconds = max(0.0, seconds)
        for index, clip in enumerate(editor.scene.animations):
            self._mix_action(editor, mixer, index, clip)
        imgui.separator_text("Layers")
        self._record("Layers")
        for index, layer in enumerate(list(mixer.layers)):
            self._mix_layer(editor, mixer, index, layer)
        if self._button("Add layer"):
            taken = {layer.name for layer in mixer.layers}
            name = next(f"Layer {n}" for n in range(len(taken) + 1, len(taken) + 100) if f"Layer {n}" not in taken)
            self._mix(editor, lambda: setattr(mixer, "active_layer", mixer.add_layer(name)))
        imgui.same_line()
        imgui.begin_disabled(mixer.active_layer is None)
        if self._button("Clear layer"):
            self._mix(editor, mixer.clear_layer)
        imgui.end_disabled()

    def _mix_action(self, editor, mixer, index, clip) -> None:
        action = mixer.action(clip)
        name = clip.name
        running = action.is_running
        label = f"{'Stop' if action.playing else 'Play'}##mix{index}"
        if self._button(label, imgui.ImVec2(44, 0)):
            self._mix(editor, action.stop if action.playing else action.play)
        self.rects[f"{name}/play"] = self.rects.pop(label)
        imgui.same_line()
        imgui.set_next_item_width(-150)
        changed, weight = self._slider(f"##mix{index}/weight", float(action.weight), 0.0, 1.0, "%.2f",
                                       name=f"{name}/weight")
        if changed:
            self._mix(editor, lambda: setattr(action, "weight", weight))
        imgui.same_line()
        opened = imgui.tree_node_ex(f"{name}##mix{index}", imgui.TreeNodeFlags_.span_avail_width)
        self._record(name)
        if imgui.is_item_hovered():
            imgui.set_tooltip(f"{action!r}")
        if running:
            imgui.same_line()
            imgui.text_colored(STATUS_TEXT, f"{action.sample_time():.2f} s")
        if not opened:
            return
        imgui.set_next_item_width(110)
        if imgui.begin_combo(f"loop##mix{index}", action.loop):
            for loop in self.LOOPS:
                if imgui.selectable(loop, loop == action.loop)[0] and loop != action.loop:
                    self._mix(editor, lambda loop=loop: setattr(action, "loop", loop))
                self._record(f"{name}/loop/{loop}")
            imgui.end_combo()
        self._record(f"{name}/loop", fields_only=True, shown=f"loop##mix{index}")
        imgui.same_line()
        changed, additive = imgui.checkbox(f"additive##mix{index}", action.additive)
        self._record(f"{name}/additive", shown=f"additive##mix{index}")
        if changed:
            self._mix(editor, lambda: setattr(action, "additive", additive))
        imgui.set_next_item_width(-1)
        changed, speed = self._slider(f"##mix{index}/speed", float(action.speed), -3.0, 3.0, "speed %.2fx",
                                      name=f"{name}/speed")
        if changed:
            self._mix(editor, lambda: setattr(action, "speed", speed))
        self._mask_choice(editor, f"{name}/mask", f"mask##mix{index}", action)
        seconds = self.fade_seconds
        if self._button(f"Fade in##mix{index}"):
            self._mix(editor, lambda: action.fade_in(seconds))
        self.rects[f"{name}/fade in"] = self.rects.pop(f"Fade in##mix{index}")
        imgui.same_line()
        if self._button(f"Fade out##mix{index}"):
            self._mix(editor, lambda: action.fade_out(seconds))
        self.rects[f"{name}/fade out"] = self.rects.pop(f"Fade out##mix{index}")
        imgui.same_line()
        others = [other for other in editor.scene.animations if other is not clip]
        imgui.set_next_item_width(-1)
        imgui.begin_disabled(not others)
        if imgui.begin_combo(f"##mix{index}/crossfade", "Cross-fade to..."):
            for other in others:
                if imgui.selectable(f"{other.name} in {seconds:g} s##{id(other)}", False)[0]:
                    self._mix(editor, lambda other=other: action.crossfade_to(other, seconds))
                self._record(f"{name}/crossfade/{other.name}")
            imgui.end_combo()
        self._record(f"{name}/crossfade")
        imgui.end_disabled()
        imgui.tree_pop()

    def _mask_choice(self, editor, name, label, owner) -> None:
        """An action's or a layer's mask from the bone tree: every bone, the subtree of the
        selected bone, or that subtree added to the subtrees it has; another mask (a script's)
        shows as custom."""
        from ..motion import BoneMask

        mask = owner.mask
        if mask is None:
            current = "all bones"
        elif mask.include is None and not mask.exclude and mask.subtrees:
            current = f"subtree{'s' if len(mask.subtrees) > 1 else ''} of {', '.join(mask.subtrees)}"
        else:
            current = "custom"
        selected = editor.selected.name if editor.selected is not None else None
        choices = [("all bones", None)]
        if selected is not None:
            choices.append((f"subtree of {selected}", lambda: BoneMask.subtree(selected)))
            if current.startswith("subtree") and selected not in mask.subtrees:
                choices.append((f"+ subtree of {selected}", lambda: BoneMask(subtree=mask.subtrees + [selected])))
        imgui.set_next_item_width(-150)
        if imgui.begin_combo(label, current):
            if selected is None:
                imgui.text_disabled("select a bone for its subtree")
            for i, (text, make) in enumerate(choices):
                if imgui.selectable(f"{text}##{i}", text == current)[0] and text != current:
                    self._mix(editor, lambda make=make: setattr(owner, "mask", None if make is None else make()))
                self._record(f"{name}/{text.split(' of ')[0]}")
            imgui.end_combo()
        self._record(name, fields_only=True, shown=label)

    def _mix_layer(self, editor, mixer, index, layer) -> None:
        name = layer.name
        if imgui.radio_button(f"##mixlayer{index}/active", mixer.active_layer is layer) and mixer.active_layer is not layer:
            self._mix(editor, lambda: setattr(mixer, "active_layer", layer))
        self._record(f"layer {name}/active")
        if imgui.is_item_hovered():
            imgui.set_tooltip("the active layer: edits and keys go here")
        imgui.same_line()
        imgui.text_colored(SELECTED_TEXT if mixer.active_layer is layer else imgui.get_style_color_vec4(imgui.Col_.text),
                           f"{name} ({len(layer.tracks)} bone{'' if len(layer.tracks) == 1 else 's'})")
        if imgui.is_item_hovered():
            imgui.set_tooltip(f"{layer!r}")
        imgui.same_line(150)
        changed, mute = imgui.checkbox(f"mute##mixlayer{index}", layer.mute)
        self._record(f"layer {name}/mute", shown=f"mute##mixlayer{index}")
        if changed:
            self._mix(editor, lambda: setattr(layer, "mute", mute))
        imgui.same_line()
        changed, solo = imgui.checkbox(f"solo##mixlayer{index}", layer.solo)
        self._record(f"layer {name}/solo", shown=f"solo##mixlayer{index}")
        if changed:
            self._mix(editor, lambda: setattr(layer, "solo", solo))
        imgui.same_line()
        imgui.set_next_item_width(-1)
        if imgui.begin_combo(f"##mixlayer{index}/mode", layer.mode):
            for mode in self.LAYER_MODES:
                if imgui.selectable(mode, mode == layer.mode)[0] and mode != layer.mode:
                    self._mix(editor, lambda mode=mode: setattr(layer, "mode", mode))
                self._record(f"layer {name}/mode/{mode}")
            imgui.end_combo()
        self._record(f"layer {name}/mode")
        imgui.set_next_item_width(-150)
        changed, weight = self._slider(f"##mixlayer{index}/weight", float(layer.weight), 0.0, 1.0, "weight %.2f",
                                       name=f"layer {name}/weight")
        if changed:
            self._mix(editor, lambda: setattr(layer, "weight", weight))
        self._mask_choice(editor, f"layer {name}/mask", f"mask##mixlayer{index}", layer)

    def _keying(self, editor) -> None:
        """Key the selected bone (I), every posed bone (Shift+I); delete the keys at the
        playhead; jump between keys; the interpolation of new keys and of those at the
        playhead; a new clip; how far the timeline reaches. All undoable."""
        for label, action, tip in (("Key", editor.key_selected, "key the selected bone at the playhead (I)"),
                                   ("Key posed", editor.key_posed, "key every posed bone (Shift+I)"),
                                   ("Delete key", editor.delete_key, "delete the keys at the playhead"),
                                   ("<##key", editor.previous_key, "previous key"),
                                   (">##key", editor.next_key, "next key")):
            if self._button(label):
                action()
            if imgui.is_item_hovered():
                imgui.set_tooltip(tip)
            imgui.same_line()
        modes = ["LINEAR", "STEP"]
        imgui.set_next_item_width(-1)
        changed, mode = imgui.combo("##interpolation", modes.index(editor.key_interpolation), modes)
        self._record("interpolation")
        if changed:
            editor.set_key_interpolation(modes[mode])
        imgui.set_next_item_width(-170)
        _, self.new_clip_name = imgui.input_text("##new clip", self.new_clip_name)
        self._record("new clip")
        imgui.same_line()
        if self._button("New clip"):
            try:
                editor.new_clip(self.new_clip_name)
            except ViewerError as error:
                editor.status = Status.error(error)
        imgui.same_line()
        imgui.set_next_item_width(-1)
        changed, end = imgui.drag_float("##timeline end", editor.timeline_end, 0.05, 0.0, 600.0, "to %.2f s")
        if changed:
            editor.timeline_end = max(0.0, end)

    def _bone_map(self, editor) -> None:
        """The retargeted clip's map, a row per target bone: the source bone it follows, chosen
        from the source's bones (or none); a change makes the clip again (Editor.map_bone)."""
        retargeting = editor.retargeting
        sources = [bone.name for bone in retargeting.source.bones]
        imgui.text_disabled(f"{retargeting.source_clip.name}: target bone <- source bone")
        imgui.begin_child("bone map", imgui.ImVec2(0, 200), imgui.ChildFlags_.borders)
        for bone in retargeting.target.bones:
            current = retargeting.bone_map.get(bone.name)
            imgui.text(bone.name)
            imgui.same_line(imgui.get_content_region_avail().x * 0.5)
            imgui.set_next_item_width(-1)
            label = f"map/{bone.name}"
            if imgui.begin_combo(f"##{label}", current or "(none)"):
                for index, name in enumerate([None] + sources):
                    if imgui.selectable(f"{name or '(none)'}##{index}", name == current)[0] and name != current:
                        editor.map_bone(bone.name, name)
                    self._record(f"{label}/{name or '(none)'}")
                imgui.end_combo()
            self._record(label)
        imgui.end_child()

    def _expressions(self, editor) -> None:
        """A slider per expression of a VRM avatar (0..1); a whole drag is one undo step."""
        weights = editor.scene.expressions.weights
        for name in editor.scene.expressions:
            imgui.set_next_item_width(-150)
            changed, value = self._slider(f"{name}##expression", float(weights.get(name, 0.0)), 0.0, 1.0, "%.3f",
                                          name=f"expression/{name}")
            if imgui.is_item_activated():
                editor.begin_edit()
            if changed:
                try:
                    editor.set_expression(name, value)
                except ViewerError as error:
                    editor.status = Status.error(error)
            if imgui.is_item_deactivated():
                editor.end_edit()

    # (label, Joint attribute, set_spring_chain keyword, format); the reach of each slider is
    # _spring_reach's: the numbers are in the model's units (a Fox in centimetres needs ~100x a VRM's)
    SPRING_FIELDS = (("stiffness", "stiffness", "stiffness", "%.3g"), ("drag", "drag", "drag", "%.2f"),
                     ("gravity", "gravity_power", "gravity", "%.3g"), ("radius", "hit_radius", "radius", "%.3g"))

    def _spring_reach(self, editor, chain, attribute: str) -> float:
        """A slider's top for one of a chain's numbers, fixed the first time it is drawn (a top
        that followed the value would move the grab under the mouse): four times the file's
        value, at least a share of the model's size (Ctrl+click types beyond it)."""
        key = (id(editor.scene), chain["name"], attribute)
        reach = self._spring_reaches.get(key)
        if reach is None:
            if attribute == "drag":
                reach = 1.0
            else:
                low, high = editor.scene.rest_bounds
                size = float(np.linalg.norm(np.asarray(high) - np.asarray(low))) or 1.0
                share = {"stiffness": 1.0, "gravity_power": 0.5, "hit_radius": 0.05}[attribute]
                reach = max(4.0 * getattr(chain["joints"][0], attribute), share * size)
            self._spring_reaches[key] = reach
        return reach

    def _spring_chains(self, editor) -> None:
        """Reset (every joint at rest), then per chain (named by its root bone, or as its file
        names it) its stiffness, drag, gravity power and hit radius, for every joint of it
        (Editor.set_spring_chain); a refused value goes to the status line."""
        springs = editor.scene.springs
        if self._button("Reset springs"):
            editor.reset_springs()
        if imgui.is_item_hovered():
            imgui.set_tooltip("every spring joint back to its rest (scene.springs.reset())")
        for index, chain in enumerate(springs.chains):
            name = chain["name"]
            opened = imgui.tree_node_ex(f"{name}##spring{index}", imgui.TreeNodeFlags_.span_avail_width
                                        | (imgui.TreeNodeFlags_.default_open if len(springs.chains) <= 4 else 0))
            self._record(f"spring {name}")
            if imgui.is_item_hovered():
                imgui.set_tooltip(f"{len(chain['joints'])} joints: "
                                  + ", ".join(j.bone.name for j in chain["joints"][:8]))
            if not opened:
                continue
            joint = chain["joints"][0]  # a file's chain may differ joint by joint: the first is shown
            for label, attribute, keyword, format in self.SPRING_FIELDS:
                imgui.set_next_item_width(-150)
                reach = self._spring_reach(editor, chain, attribute)
                changed, value = self._slider(f"{label}##spring{index}", float(getattr(joint, attribute)), 0.0, reach,
                                              format, name=f"{name}/{label}")
                if changed:
                    try:
                        editor.set_spring_chain(chain, **{keyword: value})
                    except ViewerError as error:
                        editor.status = Status.error(error)
            imgui.tree_pop()

    def _morph_targets(self, editor) -> None:
        """A slider per target of every mesh with morph targets (0..1; Ctrl+click types any
        value); a whole drag is one undo step and pauses playback."""
        for mesh in editor.morph_meshes():
            imgui.text_colored(SELECTED_TEXT, mesh.name)
            imgui.same_line()
            if self._button(f"Reset##{id(mesh)}"):
                editor.reset_morph_weights(mesh)
            self.rects[f"{mesh.name}/Reset"] = self.rects.pop(f"Reset##{id(mesh)}")
            for index, (name, weight) in enumerate(zip(mesh.morph_target_names, mesh.morph_weights)):
                imgui.set_next_item_width(-150)
                changed, value = self._slider(f"{name}##{id(mesh)}/{index}", float(weight), 0.0, 1.0, "%.3f",
                                              name=f"{mesh.name}/{name}")
                if imgui.is_item_activated():
                    editor.begin_edit()
                if changed:
                    try:
                        editor.set_morph_weight(mesh, index, value)
                    except ViewerError as error:
                        editor.status = Status.error(error)
                if imgui.is_item_deactivated():
                    editor.end_edit()

    def _bone_tree(self, editor) -> None:
        """The bones as a tree. A bone selected another way (a click in the view, the gizmo, a
        script) is shown once: its parents open and the tree scrolled to it."""
        selected = editor.selected
        self._reveal = set()
        if selected is not None and selected is not self._revealed:
            bone = selected
            while bone is not None:
                self._reveal.add(id(bone))
                bone = bone.get_parent()
        imgui.begin_child("bones", imgui.ImVec2(0, 170), imgui.ChildFlags_.borders)
        position, size = imgui.get_window_pos(), imgui.get_window_size()
        self.rects["bone tree"] = (position.x, position.y, position.x + size.x, position.y + size.y)
        for skeleton in editor.scene.skeletons:
            parents = skeleton.get_parent_indices()
            children = {i: [] for i in range(-1, len(parents))}
            for i, p in enumerate(parents):
                children[int(p)].append(i)
            for root in children[-1]:
                self._bone_node(editor, skeleton.bones, children, root)
        imgui.end_child()
        self._revealed = editor.selected

    def _bone_node(self, editor, bones, children, index) -> None:
        bone = bones[index]
        flags = imgui.TreeNodeFlags_.open_on_arrow | imgui.TreeNodeFlags_.default_open | imgui.TreeNodeFlags_.span_avail_width
        if not children[index]:
            flags |= imgui.TreeNodeFlags_.leaf
        if bone is editor.selected:
            flags |= imgui.TreeNodeFlags_.selected
        if id(bone) in self._reveal and children[index]:
            imgui.set_next_item_open(True)
        opened = imgui.tree_node_ex(f"{bone.name}##{id(bone)}", flags)
        self._record(bone.name)
        if id(bone) in self._reveal and bone is editor.selected:
            imgui.set_scroll_here_y(0.5)
        if imgui.is_item_clicked() and not imgui.is_item_toggled_open():
            editor.select(bone)  # in sight already: no scrolling under the mouse
            self._reveal = set()
        if opened:
            for child in children[index]:
                self._bone_node(editor, bones, children, child)
            imgui.tree_pop()

    def _bone_editor(self, editor, bone) -> None:
        imgui.text_colored(SELECTED_TEXT, bone.name)
        if bone.get_transform_node() is not None:
            imgui.same_line()
            imgui.text_disabled("edits go to its node")
        space = editor.space
        imgui.text("space")
        for name, value in (("Local", Space.LOCAL), ("World", Space.WORLD)):
            imgui.same_line()
            if imgui.radio_button(name, space is value):
                editor.set_space(value)
            self._record(name)
        imgui.same_line()
        imgui.text_disabled("placed by its mesh" if space is Space.WORLD else "in the parent's frame")
        space = editor.space
        try:
            position, quaternion, scaling = editor.pose_values(bone, space)
            yaw, pitch, roll = editor.yaw_pitch_roll_degrees(bone, space)
        except ViewerError as error:  # e.g. a singular world matrix: show the local values
            editor.status = Status.error(error)
            editor.set_space(space := Space.LOCAL)
            position, quaternion, scaling = editor.pose_values(bone, space)
            yaw, pitch, roll = editor.yaw_pitch_roll_degrees(bone, space)
        self._drag(editor, "position", np.asarray(position), 0.01, lambda v: editor.set_position(bone, v, space))
        self._drag(editor, "rotationQuaternion", np.asarray(quaternion), 0.005,
                   lambda v: editor.set_rotation_quaternion(bone, v, space))
        self._drag(editor, "yaw/pitch/roll deg", np.array([yaw, pitch, roll]), 0.5,
                   lambda v: editor.set_yaw_pitch_roll_degrees(bone, *v, space=space))
        self._drag(editor, "scaling", np.asarray(scaling), 0.01, lambda v: editor.set_scaling(bone, v))
        if self._button("Return to rest"):
            editor.return_bone_to_rest(bone)
        imgui.same_line()
        if self._button("All to rest"):
            editor.return_all_to_rest()
        imgui.same_line()
        if self._button("Set current as rest"):
            editor.set_current_as_rest()
        if self._button("Mirror bone (M)"):
            editor.mirror_bone(bone)
        imgui.same_line()
        if self._button("Mirror pose (Shift+M)"):
            editor.mirror_pose()
        imgui.text_disabled("R rotate, G move, X/Y/Z axis, L local/world")
        imgui.begin_disabled(not editor.can_undo)
        if self._button("Undo (Ctrl+Z)"):
            editor.undo()
        imgui.end_disabled()
        imgui.same_line()
        imgui.begin_disabled(not editor.can_redo)
        if self._button("Redo (Ctrl+Y)"):
            editor.redo()
        imgui.end_disabled()
        self._controller(editor, bone)

    def _controller(self, editor, bone) -> None:
        """None / Look at / IK for the selected bone; the target (and IK pole) is a point typed
        or dragged (world space) or another bone it follows; the IK bend axis read-only."""
        imgui.separator_text("Controller")
        entry = editor.controller_of(bone)
        current = None if entry is None else entry.kind
        for i, (name, kind) in enumerate((("None", None), ("Look at", LOOK), ("IK", IK))):
            if i:
                imgui.same_line()
            if imgui.radio_button(name, current == kind) and kind != current:
                target = entry.target if entry is not None else tuple(editor.default_target(bone, kind))
                if kind is None:
                    editor.clear_controller(bone)
                elif kind == LOOK:
                    editor.set_look_target(bone, target)
                else:
                    editor.set_ik_target(bone, target)
            self._record(name)
        entry = editor.controller_of(bone)
        if entry is None:
            return

        def retarget(target=None, pole=False):
            if entry.kind == LOOK:
                editor.set_look_target(bone, target)
            elif pole is False:
                editor.set_ik_target(bone, target, pole=entry.pole, pole_angle=entry.pole_angle)
            else:
                editor.set_ik_target(bone, entry.target, pole=pole)  # a new pole: the bend side is chosen again

        self._source(editor, "target", entry.target, editor.world_point(entry.target), retarget)
        if entry.kind == IK:
            self._source(editor, "pole", entry.pole, editor.pole_point(entry), lambda value: retarget(pole=value),
                         default="upper bone's parent")
            axis = ", ".join(f"{rounded(v):.3f}" for v in entry.bend_axis)
            imgui.text_disabled(f"bend axis ({axis})")
            self._record("bend axis")
            imgui.text_disabled(f"  in {entry.controller.upper_bone.name}'s frame; pole angle "
                                f"{np.degrees(entry.pole_angle):.0f} deg")

    def _source(self, editor, label, value, point, apply, default=None) -> None:
        """A combo (a typed point, or a bone to follow; an optional default) and, for a point,
        its x y z (drag, or double-click to type)."""
        bones = editor.bones()
        names = ([f"default ({default})"] if default else []) + ["point (x y z)"] + [b.name for b in bones]
        first_bone = len(names) - len(bones)
        if value is None:
            index = 0
        elif isinstance(value, Bone):
            index = first_bone + next((i for i, b in enumerate(bones) if b is value), 0)
        else:
            index = first_bone - 1
        imgui.set_next_item_width(-150)
        changed, index = imgui.combo(f"{label} from", index, names)
        self._record(f"{label} from", fields_only=True)
        if changed:
            if default and index == 0:
                apply(None)
            elif index == first_bone - 1:
                apply(tuple(float(v) for v in point))   # a point where the bone or default was
            else:
                apply(bones[index - first_bone])
        if index == first_bone - 1 and not isinstance(value, Bone) and value is not None:
            low, high = editor.scene.rest_bounds
            speed = max(float(np.linalg.norm(high - low)), 1e-3) * 0.002
            self._drag(editor, f"{label} xyz", np.asarray(point), speed, lambda v: apply(tuple(v)))

    def _drag(self, editor, label, values, speed, apply) -> None:
        """A drag field whose whole drag is one undo step; bad values go to the status line."""
        imgui.set_next_item_width(-150)
        widget = {3: imgui.drag_float3, 4: imgui.drag_float4}[len(values)]
        shown = [rounded(v) for v in values]  # as "%.3f" shows them, with no -0.000
        changed, new = widget(label, shown, speed, 0.0, 0.0, "%.3f")
        # A field the user did not touch keeps its full value, not the shown rounding.
        new = [value if np.float32(n) == np.float32(s) else n for value, n, s in zip(values, new, shown)]
        self._record(label, fields_only=True)
        if imgui.is_item_activated():
            editor.begin_edit()
        if changed:
            try:
                apply(list(new))
            except ViewerError as error:
                editor.status = Status.error(error)
        if imgui.is_item_deactivated():
            editor.end_edit()

    def _matrices(self, editor, bone) -> None:
        flags = imgui.TableFlags_.borders_inner_v | imgui.TableFlags_.sizing_stretch_same
        for name, matrix in editor.matrices(bone).items():
            imgui.text(name)
            if imgui.begin_table(f"##{name}", 4, flags):
                for row in matrix:
                    imgui.table_next_row()
                    for value in row:
                        imgui.table_next_column()
                        imgui.text(f"{rounded(value): .3f}")
                imgui.end_table()
                self._record(f"matrix {name}")

    def _files(self, editor, requests) -> None:
        imgui.set_next_item_width(-110)
        _, self.pose_path = imgui.input_text("pose file", self.pose_path)
        self._record("pose file", fields_only=True)
        if self._button("Save pose"):
            try:
                editor.save_pose(self.pose_path)
            except ViewerError as error:
                editor.status = Status.error(error)
        imgui.same_line()
        if self._button("Load pose"):
            editor.load_pose(self.pose_path)
        imgui.set_next_item_width(-180)  # one row: the field, its label, the button
        _, self.mix_path = imgui.input_text("mix file", self.mix_path)
        self._record("mix file", fields_only=True)
        imgui.same_line()
        if self._button("Save mix"):
            try:
                path = save_scene_mix(editor.scene, self.mix_path)
                editor.status = Status(f"mix saved to {path} (boneviewer render MODEL --mix {path} draws it)")
            except ViewerError as error:
                editor.status = Status.error(error)
        imgui.set_next_item_width(-110)
        _, self.screenshot_path = imgui.input_text("screenshot", self.screenshot_path)
        if self._button("Screenshot"):
            requests.screenshot = self.screenshot_path
        imgui.set_next_item_width(-110)
        _, self.camera_path = imgui.input_text("camera file", self.camera_path)
        self._record("camera file", fields_only=True)
        if self._button("Save camera..."):
            requests.save_camera = self.camera_path
        imgui.set_next_item_width(-110)
        _, self.model_path = imgui.input_text("model", self.model_path)
        if self._button("Open model") and self.model_path:
            requests.open_model = self.model_path
        imgui.same_line()
        self._open_button("Open model...", "model", "Open a model", MODEL_FILTERS)
        imgui.set_next_item_width(-110)
        _, self.export_path = imgui.input_text("export file", self.export_path)
        self._record("export file", fields_only=True)
        if self._button("Export glTF..."):
            editor.export_gltf(self.export_path)


def existing_mixer(scene):
    """The scene's mixer if something made it already (None: no mix to show; asking
    ``scene.mixer`` would make one)."""
    return scene.__dict__.get("_mixer")


def keyboard_is_free() -> bool:
    """Whether a plain key press is the viewer's: ImGui is not typing, dragging or keyboard-
    navigating with it. (``io.want_capture_keyboard`` is not the test: with keyboard navigation
    on it is true whenever the panel has focus, as it has from the first frame, although a
    panel focused by the mouse does nothing with Space.)"""
    io = imgui.get_io()
    return not (io.want_text_input or io.nav_visible or imgui.is_any_item_active())


def rounded(value: float, decimals: int = 3) -> float:
    """``value`` rounded for display, with -0 as 0 (so nothing shows as -0.000)."""
    return round(float(value), decimals) + 0.0  # -0.0 + 0.0 is +0.0

