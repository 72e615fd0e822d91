"""viewer.notebook.Viewer in the kernel, without a browser: jupyter_rfb's RemoteFrameBuffer is
driven as the page drives it, through handle_event with its event dicts and get_frame."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

pytest.importorskip("jupyter_rfb", reason="the notebook extra (pip install boneviewer[notebook])")

import viewer.editing.interaction as ix  # noqa: E402
from samples import CESIUM_MAN  # noqa: E402
from viewer.errors import ViewerError  # noqa: E402
from viewer.notebook import Viewer  # noqa: E402
from viewer.notebook.widget import _close_viewers_of_cell  # noqa: E402

SIZE = (320, 240)
RAISED = {"leftArm": {"rotation_quaternion": [0.0, 0.0, 0.5, 0.8660254]}}


def pointer(kind, x, y, button=1):
    return {"type": kind, "x": float(x), "y": float(y), "button": button,
            "buttons": (button,) if kind != "pointer_up" else (), "modifiers": (), "timestamp": 0.0}


def changed(a, b) -> float:
    """The mean absolute difference of two RGBA pictures, 0..255."""
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


@pytest.fixture
def viewer():
    v = Viewer(None, size=SIZE)
    yield v
    v.close()


def test_a_pose_from_code_changes_the_picture_and_undo_brings_it_back(viewer):
    before = viewer.get_frame()
    assert before.shape == (SIZE[1], SIZE[0], 4) and before.dtype == np.uint8
    viewer.pose(RAISED)
    raised = viewer.get_frame()
    assert changed(before, raised) > 0.5
    assert np.allclose(viewer.scene.find_bone("leftArm").rotation_quaternion, RAISED["leftArm"]["rotation_quaternion"],
                       atol=1e-6)
    viewer.undo()
    assert changed(before, viewer.get_frame()) < 0.05
    viewer.redo()
    assert changed(raised, viewer.get_frame()) < 0.05
    with pytest.raises(ViewerError, match="nobody"):
        viewer.pose({"nobody": {"position": [0, 0, 0]}})


def test_the_bone_api_and_update_show_without_another_call(viewer):
    before = viewer.snapshot()
    viewer.scene.find_bone("rightArm").rotation_quaternion = [0.0, 0.0, -0.5, 0.8660254]
    viewer.update()
    assert changed(before, viewer.get_frame()) > 0.5


def test_a_click_on_the_body_selects_it_and_a_drag_orbits(viewer):
    viewer.look(skeleton=False)  # the mesh under the cursor answers (the ID pass)
    matrix = ix.view_projection(viewer._camera, SIZE)
    x, y = ix.project((0.0, 0.35, 0.3), matrix, SIZE)[0][0]
    assert viewer.selected is None
    viewer.handle_event(pointer("pointer_down", x, y))
    viewer.handle_event(pointer("pointer_up", x + 1, y))
    assert viewer.selected == "body"
    selected = viewer.get_frame()
    viewer.handle_event(pointer("pointer_down", 5, 5))
    viewer.handle_event(pointer("pointer_up", 6, 5))   # empty space keeps the selection
    assert viewer.selected == "body"
    yaw = viewer.camera["yaw"]
    viewer.handle_event(pointer("pointer_down", 100, 100))
    viewer.handle_event(pointer("pointer_move", 150, 100))
    viewer.handle_event(pointer("pointer_up", 150, 100))
    assert viewer.camera["yaw"] == pytest.approx((yaw - 50 * 0.4) % 360.0)
    assert viewer.selected == "body"   # a drag is no click
    assert changed(selected, viewer.get_frame()) > 0.5
    target = np.array(viewer.camera["target"])
    viewer.handle_event(pointer("pointer_down", 100, 100, button=2))
    viewer.handle_event(pointer("pointer_move", 100, 140, button=2))
    viewer.handle_event(pointer("pointer_up", 100, 140, button=2))
    assert np.linalg.norm(np.array(viewer.camera["target"]) - target) > 1e-3   # a right drag pans
    distance = viewer.camera["distance"]
    viewer.handle_event({"type": "wheel", "x": 10.0, "y": 10.0, "dx": 0.0, "dy": -100.0, "buttons": (),
                         "modifiers": ()})
    assert viewer.camera["distance"] == pytest.approx(distance * 0.9)


def test_frames_come_from_the_gl_thread_whatever_thread_asks(viewer):
    headless = viewer._gl.state
    threads = []
    render = headless.render
    headless.render = lambda *args: threads.append(threading.current_thread()) or render(*args)
    viewer.pose(RAISED)
    here = viewer.get_frame()
    there = {}
    worker = threading.Thread(target=lambda: there.setdefault("frame", viewer.get_frame()))
    worker.start()
    worker.join()
    assert np.array_equal(here, there["frame"])
    assert threads == [viewer._gl.thread, viewer._gl.thread]


def test_save_pose_is_the_pose_render_draws(viewer, tmp_path, cli):
    viewer.pose(RAISED)
    viewer.camera = {"yaw": 30.0, "pitch": 5.0}   # the rest is framed, as --camera frames it
    pose, camera = tmp_path / "pose.json", tmp_path / "camera.json"
    viewer.save_pose(pose)
    camera.write_text(json.dumps(viewer.camera))
    result = cli("render", "--pose", pose, "--camera", camera, "--size", f"{SIZE[0]}x{SIZE[1]}",
                 "--out", tmp_path / "render.png")
    assert result.returncode == 0, result.stderr
    from PIL import Image

    drawn = np.asarray(Image.open(tmp_path / "render.png").convert("RGBA"))
    assert changed(drawn, viewer.snapshot()) < 1.0   # another process, the same renderer: within rounding
    exported = viewer.export(tmp_path / "posed.glb")
    from viewer.loaders import load_model

    again = load_model(exported)
    assert np.allclose(again.find_bone("leftArm").rotation_quaternion, RAISED["leftArm"]["rotation_quaternion"],
                       atol=1e-5)
    # A .gltf again over its own .bin: refused as `export` refuses it, replaced with force=True
    viewer.export(tmp_path / "posed.gltf")
    from viewer.errors import ViewerError

    with pytest.raises(ViewerError, match="posed.bin"):
        viewer.export(tmp_path / "posed.gltf")
    assert load_model(viewer.export(tmp_path / "posed.gltf", force=True)).meshes


def test_clips_time_and_play(tmp_path):
    v = Viewer(CESIUM_MAN, size=SIZE)
    try:
        assert v.clips == ["animation0"]
        start = v.snapshot()
        v.time = 0.5
        assert v.time == pytest.approx(0.5)
        later = v.snapshot()
        assert changed(start, later) > 0.5
        v.play("animation0")
        assert v.editor.playback.playing
        v.pause()
        assert not v.editor.playback.playing
        with pytest.raises(ViewerError, match="no clip 'walk'"):
            v.play("walk")
        v.return_to_rest()
        rest = v.snapshot()
        assert changed(later, rest) > 0.5
        v.undo()
        assert changed(later, v.snapshot()) < 0.05
    finally:
        v.close()


def test_the_controls_edit_through_the_editor_and_follow_a_click(viewer):
    controls_box = viewer.controls()
    controls = viewer._controls
    assert controls_box.children[0] is viewer
    arm = viewer.scene.find_bone("leftArm")
    viewer.selected = "leftArm"
    assert controls.bone.label == "leftArm"
    before, roll = viewer.snapshot(), viewer.editor.yaw_pitch_roll_degrees(arm)[2]
    assert controls.roll.value == pytest.approx(roll)
    controls.roll.value = roll + 20.0   # one drag's values: one undo step
    controls.roll.value = roll + 40.0
    assert viewer.editor.yaw_pitch_roll_degrees(arm)[2] == pytest.approx(roll + 40.0, abs=1e-6)
    assert changed(before, viewer.snapshot()) > 0.5
    assert "quaternion" in controls.quaternion.value
    viewer.undo()
    assert changed(before, viewer.snapshot()) < 0.05
    assert controls.roll.value == pytest.approx(roll, abs=1e-6)
    controls.bone.value = 0
    assert viewer.selected == "body"


def test_viewers_keep_their_own_scene_and_a_rerun_cell_frees_its_gl():
    first, second = Viewer(None, size=SIZE), Viewer(None, size=SIZE)
    try:
        first.pose(RAISED)
        assert changed(first.snapshot(), second.snapshot()) > 0.5
        first._cell = "cell-1"
        _close_viewers_of_cell("cell-1")
        assert first._gl.closed and not first._gl.thread.is_alive()
        with pytest.raises(ViewerError, match="closed"):
            first.snapshot()
        assert second.snapshot().shape == (SIZE[1], SIZE[0], 4)
    finally:
        first.close()
        second.close()


def test_a_kernel_that_ends_with_viewers_open_ends_at_once_and_cleanly():
    """A kernel restart ends the kernel's process: its viewers' GL threads (daemons, released at
    exit) neither hold it up nor leave an error behind."""
    import subprocess
    import sys
    import time

    program = ("from viewer.notebook import Viewer\n"
               f"views = [Viewer({str(CESIUM_MAN)!r}, size=(96, 72)) for _ in range(2)]\n"
               "assert all(v.get_frame().shape == (72, 96, 4) for v in views)\n"
               "print('drawn', flush=True)\n")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split()[-1] == "drawn", done.stderr
    assert "Traceback" not in done.stderr and "Exception" not in done.stderr, done.stderr
    assert time.perf_counter() - started < 60
