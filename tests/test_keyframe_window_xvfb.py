"""Keying and exporting a clip in a real window under Xvfb with real pointer and key events
(xdotool): click the arm, I keys it into a new clip, Shift+I keys every posed bone later, the
Keyframes section's buttons and "Export glTF..." write the clip, which loads back.

The viewer runs in a subprocess (a GLX window must not share a process with the EGL tests);
its probe script reports the session's state and where the panel's widgets are, as JSON."""

from __future__ import annotations

import numpy as np
import pytest

from test_gestures_xvfb import Viewer, open_viewer
from viewer import load_gltf

PROBE = """
import json
from pathlib import Path

OUT = Path({out!r})


def setup(app):
    app._session.panel.export_path = str(OUT / "keyed.glb")


def update(app, t, dt):
    arm = app.find_bone("leftArm")
    editor = app.editor
    if app.frame == 3:
        OUT.joinpath("aim.json").write_text(json.dumps({{"arm": app.project(arm.get_absolute_position())}}))
    if OUT.joinpath("pose").exists():  # the test's stand-in for a drag: a new pose one second later
        OUT.joinpath("pose").unlink()
        editor.seek(1.0)
        editor.set_yaw_pitch_roll_degrees(arm, 0, 0, 75)
    state = {{"frame": app.frame, "selected": app.selected_bone.name if app.selected_bone else None,
              "clips": [c.name for c in editor.scene.animations],
              "keys": [float(k) for k in editor.key_times()],
              "keyed": sorted({{c.node.name for c in editor.clip.channels}}) if editor.clip else [],
              "time": editor.playback.time, "status": editor.status.text,
              "rects": app._session.panel.rects}}
    OUT.joinpath("state.tmp").write_text(json.dumps(state))
    OUT.joinpath("state.tmp").replace(OUT / "state.json")
    if OUT.joinpath("close").exists():
        app.close()
"""


class KeyingViewer(Viewer):
    def __init__(self, display, out):
        super().__init__(display, out, PROBE)

    def click(self, label):
        x0, y0, x1, y1 = self.state(lambda s: label in s["rects"])["rects"][label]
        self.move((x0 + x1) / 2, (y0 + y1) / 2)
        self.xdo("click", 1)
        return self.settle()


@pytest.fixture
def viewer(xvfb_display, tmp_path):
    yield from open_viewer(KeyingViewer, xvfb_display, tmp_path)


def test_keys_and_exports_a_clip_in_the_window(viewer, tmp_path):
    x, y = viewer.aim["arm"]
    viewer.move(x, y)
    viewer.xdo("click", 1)
    viewer.state(lambda s: s["selected"] == "leftArm")
    viewer.xdo("key", "i")  # I: key the selected bone, into a new clip at 0 s
    state = viewer.state(lambda s: s["keys"] == [0.0])
    assert state["clips"] == ["Clip"] and state["keyed"] == ["leftArm"]
    (tmp_path / "pose").write_text("")
    viewer.state(lambda s: s["time"] == 1.0)
    viewer.xdo("key", "shift+i")  # Shift+I: every posed bone, at the playhead
    state = viewer.state(lambda s: s["keys"] == [0.0, 1.0])
    assert "keyed" in state["status"]
    for section in ("Bones", "Selected bone", "Keyframes"):  # make room, open Keyframes
        viewer.click(section)
    viewer.click("<##key")
    assert viewer.state(lambda s: s["time"] == 0.0)["keys"] == [0.0, 1.0]
    for section in ("Keyframes", "Display", "Files"):  # make room again (the Mixer and QA sections, a mix row), open Files
        viewer.click(section)
    viewer.click("Export glTF...")
    viewer.state(lambda s: "exported" in s["status"])
    written = load_gltf(tmp_path / "keyed.glb")
    clip = written.find_animation("Clip")
    np.testing.assert_allclose(clip.key_times(), [0.0, 1.0], atol=1e-7)
    arm = written.find_bone("leftArm").get_pose_target()
    clip.apply(0.0)
    first = np.array(arm.rotation_quaternion)
    clip.apply(1.0)
    assert abs(float(np.dot(first, arm.rotation_quaternion))) < 0.99  # the two keys differ
