"""viewer.notebook.Viewer in the kernel, without a browser: jupyter_rfb's RemoteFrameBuffer is
driven as the page drives it, through handle_event with its event dicts and get_frame."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jupyter_rfb", reason="the notebook extra (pip install boneviewer[notebook])")

import viewer.editing.interaction as ix  # noqa: E402
from samples import CESIUM_MAN, ROBOT  # noqa: E402
from viewer.editing.pose import pose_of  # noqa: E402
from viewer.errors import ViewerError  # noqa: E402
from viewer.notebook import Viewer  # noqa: E402
from viewer.notebook.widget import _close_viewers_of_cell  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
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


def test_save_mix_writes_the_mix_the_commands_read(tmp_path):
    from viewer.loaders import load_model

    robot = ROOT / "tests" / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
    v = Viewer(str(robot), size=SIZE)
    try:
        def mix(scene):
            mixer = scene.mixer
            mixer.action("Walking").play()
            wave = mixer.action("Wave")
            wave.additive, wave.weight, wave.speed = True, 0.5, 1.5
            wave.play()
        v._gl.call(mix, v.scene)
        path = v.save_mix(tmp_path / "notebook.mix.json")
        assert path == tmp_path / "notebook.mix.json"
        fresh = load_model(str(robot))
        fresh.mixer.load(path)
        assert fresh.mixer.snapshot()["actions"] == v._gl.call(v.scene.mixer.snapshot)["actions"]
        with pytest.raises(ViewerError, match="RobotExpressive.glb"):
            v.save_mix(robot)  # never over the model
    finally:
        v.close()


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


def test_v_mixer_is_the_scenes_mixer_and_a_change_redraws_the_picture():
    v = Viewer(ROBOT, size=SIZE)
    try:
        draws = []
        v._changed = lambda: draws.append(1)   # what asks jupyter_rfb for a frame (and refreshes the controls)
        start = v.snapshot()
        mixer = v.mixer
        walk = mixer.action("Walking")
        assert walk == v.scene.mixer.action("Walking") and walk.name == "Walking"
        walk.play()
        assert v.scene.mixer.action("Walking").playing and draws  # the call redrew
        mixer.time = 0.4
        walking = v.snapshot()
        assert changed(start, walking) > 0.3        # the mix is written: the robot mid-stride
        count = len(draws)
        walk.weight = 0.3                           # a set redraws too
        assert v.scene.mixer.action("Walking").weight == 0.3 and len(draws) > count
        assert changed(walking, v.snapshot()) > 0.1
        # the notebook's edits go into its override layer "Pose" (v.pose holds a pose exactly), the active one
        assert mixer.active_layer == v.scene.mixer.active_layer and mixer.active_layer.name == "Pose"
        assert [layer.name for layer in mixer.layers] == ["Tweaks", "Pose"]
        mixer.layers[0].solo = True
        assert v.scene.mixer.layers[0].solo
        fading = walk.crossfade_to("Running", 0.5)  # an Action back, live too
        assert fading.name == "Running" and v.scene.mixer.action("Running").playing
        with pytest.raises(ViewerError, match="weight"):
            walk.weight = -1.0
        assert v.scene.mixer.action("Walking").weight == 0.3   # refused: unchanged
        with pytest.raises(ViewerError, match="unknown clip 'Flying'"):
            mixer.action("Flying")
    finally:
        v.close()


def test_the_controls_show_the_mixer_and_set_it():
    v = Viewer(ROBOT, size=SIZE)
    try:
        v.controls()
        controls = v._controls
        assert set(controls.mix_play) == set(v.clips) and not controls.mix_play["Walking"].value
        before = v.snapshot()
        controls.mix_play["Walking"].value = True
        assert v.scene.mixer.action("Walking").playing
        controls.mix_weight["Walking"].value = 0.4
        assert v.scene.mixer.action("Walking").weight == pytest.approx(0.4)
        v.mixer.time = 0.4
        assert changed(before, v.snapshot()) > 0.1
        v.mixer.action("Wave").play()           # from code: the controls follow
        assert controls.mix_play["Wave"].value
        controls.mix_play["Walking"].value = False
        assert not v.scene.mixer.action("Walking").playing
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


def run_python(program: str, cwd=None) -> subprocess.CompletedProcess:
    """``program`` in plain Python (no IPython kernel), as a script would run the viewer."""
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_a_viewer_that_refuses_its_input_says_only_why():
    """Its ViewerError, and nothing when the half-made widget is collected (ipywidgets' __del__
    closes it: no traceback from RemoteFrameBuffer.close)."""
    program = ("import gc\n"
               "from viewer.errors import ViewerError\n"
               "from viewer.notebook import Viewer\n"
               "for args, options in [(('missing.fbx',), {}), ((None,), {'bogus': 1}), ((None, (0, 5)), {})]:\n"
               "    try:\n"
               "        Viewer(*args, **options)\n"
               "    except ViewerError as error:\n"
               "        print(str(error).split(' (')[0])\n"
               "gc.collect()\n"
               "print('collected')\n")
    done = run_python(program)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["model missing.fbx: no such file", "Viewer: unknown option bogus",
                                        "image size 0x5 is outside 1..16384 pixels per side", "collected"]
    assert done.stderr == ""


def test_a_viewer_in_plain_python_prints_nothing():
    """jupyter_rfb displays an output widget; outside a kernel that printed "RFBOutputContext()"."""
    program = ("from viewer.notebook import Viewer\n"
               "v = Viewer(None, size=(64, 48))\n"
               "assert v.snapshot().shape == (48, 64, 4)\n"
               "v.close()\n"
               "del v\n"
               "print('drawn')\n")
    done = run_python(program)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "drawn\n"
    assert "Traceback" not in done.stderr and "Exception" not in done.stderr, done.stderr


CESIUM_ARM = "Skeleton_arm_joint_L__4_"
ARM_UP = {CESIUM_ARM: {"rotation_quaternion": [0.0, 0.0, 0.5, 0.8660254]}}


def arm_rotation(v) -> np.ndarray:
    return np.array(v.scene.find_bone(CESIUM_ARM).get_pose_target().rotation_quaternion)


@pytest.fixture
def cesium():
    """Three viewers of CesiumMan: the clip at 0.4 s; the clip at 0.4 s with the arm raised
    after it (the time, then the pose); and one for the test."""
    views = [Viewer(CESIUM_MAN, size=SIZE) for _ in range(3)]
    clip_only, posed_after, v = views
    clip_only.time = 0.4
    posed_after.time = 0.4
    posed_after.pose(ARM_UP)
    yield clip_only, posed_after, v
    for each in views:
        each.close()


def test_undo_after_setting_the_time_shows_the_time_it_says(cesium):
    """v.pose, v.time = 0.4, v.undo(): the pose step undone; the playhead (no undo step, as on
    the window's timeline) stays, and the picture is the clip at 0.4 s, as v.time says."""
    clip_only, posed_after, v = cesium
    at_04 = clip_only.snapshot()
    assert changed(at_04, v.snapshot()) > 0.5   # the model as loaded is not the clip at 0.4 s
    v.pose(ARM_UP)
    v.time = 0.4
    v.undo()
    assert v.time == pytest.approx(0.4)
    assert np.allclose(arm_rotation(v), arm_rotation(clip_only), atol=1e-9)
    assert changed(at_04, v.snapshot()) < 0.05
    v.redo()
    assert v.time == pytest.approx(0.4) and changed(posed_after.snapshot(), v.snapshot()) < 0.05
    v.time = 1.0
    v.undo()   # at another time: the clip there, still
    clip_only.time = 1.0
    assert changed(clip_only.snapshot(), v.snapshot()) < 0.05


def test_a_pose_then_the_time_keeps_the_pose_until_a_return_to_rest(cesium):
    """v.pose, v.time = 0.4: the clip at 0.4 with the arm as posed (the parts the pose set, held
    in the mixer's layer; the clip moves the rest), at other times and as it plays too."""
    clip_only, posed_after, v = cesium
    posed_at_04 = posed_after.snapshot()
    assert changed(clip_only.snapshot(), posed_at_04) > 0.5
    v.pose(ARM_UP)
    v.time = 0.4
    assert np.allclose(arm_rotation(v), ARM_UP[CESIUM_ARM]["rotation_quaternion"], atol=1e-5)
    assert changed(posed_at_04, v.snapshot()) < 0.05
    v.time = 1.5
    v.play()
    v.get_frame()
    v.pause()
    assert v.time != pytest.approx(1.5)
    assert np.allclose(arm_rotation(v), ARM_UP[CESIUM_ARM]["rotation_quaternion"], atol=1e-5)
    v.time = 0.4
    assert changed(posed_at_04, v.snapshot()) < 0.05
    v.return_to_rest(CESIUM_ARM)   # the clip drives the arm again from the next time on
    v.time = 0.4
    assert np.allclose(arm_rotation(v), arm_rotation(clip_only), atol=1e-9)
    # A part posed as it already was is held too (the notebook's layer, "Pose", is an override layer):
    # the hips' position (which the walk moves) at 0.4 s.
    target = v.scene.find_bone("Skeleton_torso_joint_1").get_pose_target()
    at_04 = target.position.tolist()
    v.pose({"Skeleton_torso_joint_1": {"position": at_04}})
    v.time = 1.0
    clip_only.time = 1.0
    moved = clip_only.scene.find_bone("Skeleton_torso_joint_1").get_pose_target().position
    assert not np.allclose(moved, at_04, atol=0.01)
    assert np.allclose(target.position, at_04, atol=1e-12)


def notebook_example() -> str:
    page = (ROOT / "docs" / "notebook.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", page, re.S | re.M)
    assert blocks and "v.pose(" in blocks[0]  # the first: the pose example (the shadows' and springs' follows)
    return blocks[0]


def test_the_pages_example_does_what_it_says(tmp_path, monkeypatch):
    """docs/notebook.md's example, run as written: the arm it poses is in the picture it takes at
    the time it sets, and in the pose file it saves."""
    example = notebook_example()
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    done = run_python(example + "import numpy\nnumpy.save('picture.npy', picture)\n", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    # The page's own viewer, time and pose, read from it; the time set first, then the pose.
    made = re.search(r"^(v = Viewer\(.*?\))\n", example, re.S | re.M).group(1)
    pose = eval(re.search(r"^v\.pose\((.*)\)$", example, re.M).group(1))
    seconds = float(re.search(r"^v\.time = ([0-9.]+)", example, re.M).group(1))
    monkeypatch.chdir(ROOT)
    names = {"Viewer": Viewer}
    exec(made, names)
    v = names["v"]
    try:
        v.time = seconds
        unposed = v.snapshot()
        v.pose(pose)
        expected, expected_pose = v.snapshot(), pose_of(v.scene)
    finally:
        v.close()
    picture = np.load(tmp_path / "picture.npy")
    assert picture.shape == expected.shape
    assert changed(unposed, expected) > 0.2   # the pose shows
    assert changed(expected, picture) < 0.5   # another process, the same renderer
    saved = json.loads((tmp_path / "arm-up.json").read_text())["bones"]
    for name, parts in expected_pose["bones"].items():
        for part, value in parts.items():
            assert np.allclose(saved[name][part], value, atol=1e-5), (name, part)
    (bone, parts), = pose.items()
    quaternion = np.array(parts["rotation_quaternion"])
    assert np.allclose(saved[bone]["rotation_quaternion"], quaternion / np.linalg.norm(quaternion), atol=1e-6)
    assert done.stdout == "" and done.stderr == ""


def test_a_list_of_models_shows_them_side_by_side_at_one_time():
    """Viewer([a, b]): the row; the first is the one edited, at its own place; the second plays
    its first clip at the first one's time."""
    from samples import DATA_DIR
    from viewer.loaders import load_model

    wave = DATA_DIR / "bvh" / "wave_hello.bvh"
    v = Viewer([CESIUM_MAN, wave], size=SIZE)
    alone = Viewer(CESIUM_MAN, size=SIZE)
    try:
        assert len(v._shown()) == 2 and v._shown()[0].scene is v.scene
        v.time = 0.7
        assert changed(v.snapshot(), alone.snapshot()) > 1.0  # the second model is in the picture
        companion = v._shown()[1].scene
        reference = load_model(wave)
        reference.animations[0].apply(0.7)
        reference.prepare()
        companion.prepare()
        assert np.allclose(companion.skeletons[0].get_absolute_matrices(),
                           reference.skeletons[0].get_absolute_matrices(), atol=1e-5)
        with pytest.raises(ViewerError, match="empty list"):
            Viewer([], size=SIZE)
    finally:
        v.close()
        alone.close()
