"""``v.controls()``: ipywidgets beside the picture, the notebook's pose panel.

Every control calls the Editor (through ``Viewer.edit``, on the GL thread) as the ImGui panel
does, so undo, the pose files and the picture all see one pose. A slider dragged is one undo
step: changes of one field of one bone less than EDIT_GAP_SECONDS apart join the open edit.
"""

from __future__ import annotations

import time

import ipywidgets as widgets
import numpy as np

EDIT_GAP_SECONDS = 1.0
ANGLE = dict(min=-180.0, max=180.0, step=0.5, continuous_update=True, readout_format=".1f")


class Controls:
    def __init__(self, viewer):
        self.viewer = viewer
        editor = viewer.editor
        self._syncing = False          # True while the widgets are set from the model (no edits)
        self._open = (None, 0.0)       # (the field an open edit is for, when it last changed)
        bones = editor.bones()
        self.bone = widgets.Dropdown(description="bone", options=[(b.name, i) for i, b in enumerate(bones)])
        self.yaw = widgets.FloatSlider(description="yaw", **ANGLE)
        self.pitch = widgets.FloatSlider(description="pitch", **ANGLE)
        self.roll = widgets.FloatSlider(description="roll", **ANGLE)
        self.quaternion = widgets.HTML()
        self.position = [widgets.FloatText(description=axis, step=0.01, layout=widgets.Layout(width="150px"))
                         for axis in "xyz"]
        self.bone_rest = widgets.Button(description="bone to rest")
        self.all_rest = widgets.Button(description="all to rest")
        self.undo = widgets.Button(description="undo")
        self.redo = widgets.Button(description="redo")
        clips = [(clip.name, i) for i, clip in enumerate(editor.scene.animations)]
        self.clip = widgets.Dropdown(description="clip", options=clips, disabled=not clips)
        self.time = widgets.FloatSlider(description="time", min=0.0, max=1.0, step=0.01, readout_format=".2f",
                                        disabled=not clips)
        self.play = widgets.ToggleButton(description="play", disabled=not clips)
        # The mixer (v.mixer): per clip its action's play/stop and weight, as the panel's Mixer section.
        self.mix_play = {clip.name: widgets.ToggleButton(description=clip.name, layout=widgets.Layout(width="140px"))
                         for clip in editor.scene.animations}
        self.mix_weight = {clip.name: widgets.FloatSlider(min=0.0, max=1.0, step=0.01, readout_format=".2f",
                                                          continuous_update=True)
                           for clip in editor.scene.animations}

        self.bone.observe(self._on_bone, "value")
        for slider in (self.yaw, self.pitch, self.roll):
            slider.observe(self._on_rotation, "value")
        for field in self.position:
            field.observe(self._on_position, "value")
        self.bone_rest.on_click(lambda _: self._act(lambda e: e.return_bone_to_rest(self._bone(e))))
        self.all_rest.on_click(lambda _: self._act(lambda e: e.return_all_to_rest()))
        self.undo.on_click(lambda _: self._act(lambda e: e.undo()))
        self.redo.on_click(lambda _: self._act(lambda e: e.redo()))
        self.clip.observe(self._on_clip, "value")
        self.time.observe(self._on_time, "value")
        self.play.observe(self._on_play, "value")
        for name in self.mix_play:
            self.mix_play[name].observe(lambda change, name=name: self._on_mix_play(name, change), "value")
            self.mix_weight[name].observe(lambda change, name=name: self._on_mix_weight(name, change), "value")

        panel = widgets.VBox([
            self.bone, self.yaw, self.pitch, self.roll, self.quaternion, widgets.HBox(self.position),
            widgets.HBox([self.bone_rest, self.all_rest]), widgets.HBox([self.undo, self.redo]),
            self.clip, self.time, self.play,
            *([widgets.HTML("<b>mixer</b>")] if self.mix_play else []),
            *(widgets.HBox([self.mix_play[name], self.mix_weight[name]]) for name in self.mix_play),
        ])
        self.layout = widgets.HBox([viewer, panel])
        self.refresh()

    # --- the model -> the widgets -------------------------------------------------------------------
    def refresh(self) -> None:
        """Show the selected bone's pose, the clip and the playhead as they are now."""
        editor = self.viewer.editor
        state = self.viewer._gl.call(self._read, editor)
        mixing = self.viewer._gl.call(self._read_mix, editor) if self.mix_play else {}
        self._syncing = True
        try:
            index, (yaw, pitch, roll), quaternion, position, clip, playhead, length, playing = state
            if index is not None:
                self.bone.value = index
            self.yaw.value, self.pitch.value, self.roll.value = yaw, pitch, roll
            self.quaternion.value = ("quaternion (x, y, z, w): " + ", ".join(f"{v:.4f}" for v in quaternion))
            for field, value in zip(self.position, position):
                field.value = round(float(value), 6)
            if clip is not None:
                self.clip.value = clip
                self.time.max = max(length, 1e-3)
                self.time.value = playhead
                self.play.value = playing
            for name, (mix_playing, weight) in mixing.items():
                self.mix_play[name].value = mix_playing
                self.mix_weight[name].value = min(weight, 1.0)
        finally:
            self._syncing = False

    @staticmethod
    def _read(editor):
        bones = editor.bones()
        bone = editor.selected
        index = next((i for i, b in enumerate(bones) if b is bone), None)
        if bone is None:
            angles, quaternion, position = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0)
        else:
            angles = tuple(float(np.clip(a, -180.0, 180.0)) for a in editor.yaw_pitch_roll_degrees(bone))
            position, quaternion, _ = editor.pose_values(bone)
        playback = editor.playback
        return (index, angles, tuple(float(v) for v in quaternion), tuple(float(v) for v in position),
                playback.clip_index, playback.time, editor.timeline_length(), playback.playing)

    @staticmethod
    def _read_mix(editor) -> dict:
        mixer = editor.scene.mixer
        return {clip.name: (mixer.action(clip).playing, mixer.action(clip).weight) for clip in editor.scene.animations}

    # --- the widgets -> the editor ------------------------------------------------------------------
    def _bone(self, editor):
        return editor.bones()[self.bone.value]

    def _act(self, action) -> None:
        """One action of its own (a button): any open slider edit closes first."""
        def run(editor):
            editor.end_edit()
            self._open = (None, 0.0)
            action(editor)
        self.viewer.edit(run)

    def _field_edit(self, field: str, change) -> None:
        """A slider's or field's change: it joins the open edit of the same field and bone."""
        def run(editor):
            key = (field, self.bone.value)
            now = time.perf_counter()
            if self._open[0] != key or now - self._open[1] > EDIT_GAP_SECONDS:
                editor.end_edit()
                editor.begin_edit()
            self._open = (key, now)
            change(editor, self._bone(editor))
        self.viewer.edit(run)

    def _on_bone(self, change) -> None:
        if not self._syncing:
            self._act(lambda editor: editor.select(editor.bones()[change["new"]]))

    def _on_rotation(self, _change) -> None:
        if not self._syncing:
            yaw, pitch, roll = self.yaw.value, self.pitch.value, self.roll.value
            self._field_edit("rotation", lambda editor, bone: editor.set_yaw_pitch_roll_degrees(bone, yaw, pitch, roll))

    def _on_position(self, _change) -> None:
        if not self._syncing:
            position = [field.value for field in self.position]
            self._field_edit("position", lambda editor, bone: editor.set_position(bone, position))

    def _on_clip(self, change) -> None:
        if not self._syncing and change["new"] is not None:
            self._act(lambda editor: editor.choose_clip(change["new"]))

    def _on_time(self, change) -> None:
        if not self._syncing:
            self._act(lambda editor: editor.seek(change["new"]))

    def _mix(self, change) -> None:
        """One mixer call (the script's one line), then the mix written and shown."""
        def run(editor):
            change(editor.scene.mixer)
            editor.scene.mixer.evaluate()
        self._act(run)

    def _on_mix_play(self, name, change) -> None:
        if not self._syncing:
            self._mix(lambda mixer: mixer.action(name).play() if change["new"] else mixer.action(name).stop())

    def _on_mix_weight(self, name, change) -> None:
        if not self._syncing:
            self._mix(lambda mixer: setattr(mixer.action(name), "weight", change["new"]))

    def _on_play(self, change) -> None:
        if not self._syncing:
            self._act(lambda editor: editor.play() if change["new"] else editor.pause())
