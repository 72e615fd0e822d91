"""Scripts that drive the viewer, headless: `render --script`, the `app` object, reload on save,
faults that never kill the host (issue 13). The real window is in test_script_window.py."""

from __future__ import annotations

import math
import os
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import viewer
from viewer.editing.script_app import HeadlessApp
from viewer.errors import ViewerError
from viewer.loaders import load_model
from viewer.editing.script import WATCH_INTERVAL, FileWatcher, ScriptRunner

ROOT = Path(__file__).resolve().parents[1]
ROBOT = ROOT / "tests" / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
EXAMPLES = ROOT / "examples"


def write(path: Path, source: str) -> Path:
    path.write_text(textwrap.dedent(source))
    return path


def arm_script(path: Path, degrees: float | None) -> Path:
    """A script that turns leftArm (None: leaves it) and places the camera itself (no framing)."""
    return write(path, f"""
        import math
        DEGREES = {degrees!r}

        def setup(app):
            app.camera = {{"yaw": 0, "pitch": 0, "distance": 9, "target": [0, 1.5, 0]}}

        def update(app, t, dt):
            if DEGREES is not None:
                app.find_bone("leftArm").get_pose_target().rotation = [0, 0, math.radians(DEGREES)]
        """)


def left_arm_degrees(scene) -> float:
    q = scene.find_bone("leftArm").get_pose_target().rotation_quaternion
    return math.degrees(2 * math.atan2(q[2], q[3]))


def orange(image) -> np.ndarray:
    rgb = np.asarray(image)[:, :, :3].astype(int)
    return (rgb[:, :, 0] > 150) & (rgb[:, :, 0] > rgb[:, :, 1] + 40) & (rgb[:, :, 1] > rgb[:, :, 2] + 30)


def headless(scene=None, clip_index=None):
    return HeadlessApp(load_model(scene), (320, 240), clip_index=clip_index)


# --- render --script ---------------------------------------------------------------------------------
def test_a_script_poses_the_arm_and_the_png_changes_where_the_arm_is(cli, tmp_path):
    plain, scripted = tmp_path / "plain.png", tmp_path / "scripted.png"
    common = ["--size", "320x240", "--no-skeleton", "--no-grid"]
    assert cli("render", "--script", arm_script(tmp_path / "still.py", None), "--out", plain, *common).returncode == 0
    result = cli("render", "--script", arm_script(tmp_path / "raise.py", 150), "--out", scripted, *common)
    assert result.returncode == 0, result.stderr
    before, after = orange(Image.open(plain)), orange(Image.open(scripted))
    # From the front, the left arm is on the image's right: raised, its orange moves up there.
    right = slice(170, 320)
    rows_before = np.nonzero(before[:, right])[0]
    rows_after = np.nonzero(after[:, right])[0]
    assert rows_after.min() < rows_before.min() - 20          # the hand is higher
    assert (after[:, :150] == before[:, :150]).mean() > 0.99  # the right arm did not move


def test_render_frames_pass_sequence_time_and_step_and_are_deterministic(cli, tmp_path):
    script = write(tmp_path / "log.py", """
        import math

        def setup(app):
            app.log(f"setup frame={app.frame}")

        def update(app, t, dt):
            app.find_bone("leftArm").rotation = [0, 0, math.radians(30 + 100 * t)]
            app.log(f"t={t:.2f} dt={dt:.2f} frame={app.frame} time={app.time:.2f}")
        """)
    runs = []
    for name in ("a", "b"):
        result = cli("render", "--script", script, "--frames", "0:0.3:0.1", "--out-dir", tmp_path / name,
                     "--size", "160x120")
        assert result.returncode == 0, result.stderr
        runs.append([line for line in result.stdout.splitlines() if line.startswith(("t=", "setup"))])
    lines = runs[0]
    assert lines == ["setup frame=0", "t=0.00 dt=0.10 frame=0 time=0.00", "t=0.10 dt=0.10 frame=1 time=0.10",
                     "t=0.20 dt=0.10 frame=2 time=0.20", "t=0.30 dt=0.10 frame=3 time=0.30"]
    assert runs[0] == runs[1]
    for k in range(4):
        frame = f"frame_{k:05d}.png"
        assert np.array_equal(np.asarray(Image.open(tmp_path / "a" / frame)),
                              np.asarray(Image.open(tmp_path / "b" / frame)))
    assert not np.array_equal(np.asarray(Image.open(tmp_path / "a" / "frame_00000.png")),
                              np.asarray(Image.open(tmp_path / "a" / "frame_00003.png")))


def test_app_mixer_mixes_clips_in_a_render_script(cli, tmp_path):
    from samples import ROBOT

    app = headless(ROBOT)
    assert app.mixer is app.scene.mixer
    script = write(tmp_path / "mix.py", """
        def setup(app):
            app.mixer.action("Walking").play()
            wave = app.mixer.action("Wave")
            wave.weight = 0.5
            wave.play()

        def update(app, t, dt):
            app.mixer.time = t
            head = app.mixer.target("Head").rotation_quaternion
            app.log(f"t={t:.2f} walking={app.mixer.action('Walking').sample_time():.2f} "
                    f"running={len(app.mixer.running())} head={head[0]:.4f}")
        """)
    result = cli("render", ROBOT, "--script", script, "--frames", "0:0.4:0.2", "--out-dir", tmp_path / "frames",
                 "--size", "160x120")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("t=")]
    assert [line.split(" head=")[0] for line in lines] == [
        "t=0.00 walking=0.00 running=2", "t=0.20 walking=0.20 running=2", "t=0.40 walking=0.40 running=2"]
    assert len({line.split(" head=")[1] for line in lines}) == 3   # the mix moves the head
    first, last = (np.asarray(Image.open(tmp_path / "frames" / f"frame_{k:05d}.png")) for k in (0, 2))
    assert not np.array_equal(first, last)


def test_render_script_error_prints_one_line_keeps_the_pose_and_exits_1(cli, tmp_path):
    script = write(tmp_path / "bad.py", """
        import math

        def update(app, t, dt):
            app.find_bone("leftArm").rotation = [0, 0, math.radians(150)]
            if app.frame == 2:
                app.find_bone("leftArm").rotation = [0, 0, 0]
                1 / 0
        """)
    result = cli("render", "--script", script, "--frames", "0:0.4:0.1", "--out-dir", tmp_path / "out",
                 "--size", "160x120")
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "script error" in line]
    assert errors == [f"script error: {script}:8: ZeroDivisionError: division by zero"]
    frames = [np.asarray(Image.open(tmp_path / "out" / f"frame_{k:05d}.png")) for k in range(5)]
    assert all(np.array_equal(frames[1], frame) for frame in frames[2:])  # the last good pose, kept


def test_render_script_with_debug_shows_the_traceback(cli, tmp_path):
    script = write(tmp_path / "bad.py", "def setup(app):\n    app.find_bone('nose')\n")
    result = cli("--debug", "render", "--script", script, "--out", tmp_path / "a.png")
    assert result.returncode == 1
    assert "Traceback" in result.stderr
    assert f"script error: {script}:2: app.find_bone('nose'): unknown bone 'nose' (this model's bones: body, leftArm, rightArm)" \
        in result.stderr


def test_script_option_errors_exit_2_before_any_work(cli, tmp_path):
    result = cli("render", "--script", tmp_path / "missing.py", "--out", tmp_path / "a.png")
    assert result.returncode == 2 and "--script" in result.stderr and "no such file" in result.stderr
    result = cli("view", "--watch", "--frames", "1")
    assert result.returncode == 2 and "--watch" in result.stderr


# --- reloading ---------------------------------------------------------------------------------------
def wait_for_reload(runner, app, generation, timeout=5.0):
    """Poll as the frame loop does until the runner has loaded a new generation (no fixed sleep)."""
    started = time.monotonic()
    while runner.generation == generation:
        assert time.monotonic() - started < timeout, "the script was not reloaded"
        runner.poll(app)
    return time.monotonic() - started


def test_reload_after_the_file_changes_within_half_a_second(tmp_path):
    """On the watcher's own clock (a fake one here, so a busy machine cannot fail it): a saved
    file is not looked at again before WATCH_INTERVAL, and is reloaded by the first poll after."""
    now = [0.0]
    path = arm_script(tmp_path / "arm.py", 45)
    app = headless()
    runner = ScriptRunner(path, watch=True, watch_clock=lambda: now[0])
    assert runner.start(app)
    runner.update(app, 0.0, 0.0)
    assert left_arm_degrees(app.scene) == pytest.approx(45)
    camera = app.camera
    arm_script(path, 120)
    generation = runner.generation
    now[0] = WATCH_INTERVAL * 0.9
    assert not runner.poll(app) and runner.generation == generation  # not looked at yet: cheap per frame
    now[0] = WATCH_INTERVAL
    assert runner.poll(app) and runner.generation != generation
    assert WATCH_INTERVAL <= 0.5
    runner.update(app, 0.1, 0.1)
    assert left_arm_degrees(app.scene) == pytest.approx(120)
    assert app.camera is camera  # same session state: nothing reopened


def test_the_watcher_sees_a_change_of_content_even_with_the_same_size_and_mtime(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    stat = path.stat()
    watcher = FileWatcher(path)
    assert not watcher.changed(force=True)
    path.write_text("x = 2\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert watcher.changed(force=True)
    assert not watcher.changed(force=True)  # once per change
    path.unlink()
    assert not watcher.changed(force=True)  # gone for a moment (a save by rename): not a change
    path.write_text("x = 3\n")
    assert watcher.changed(force=True)


def test_an_error_in_update_keeps_the_last_pose_stops_update_and_a_fix_resumes(tmp_path, capsys):
    path = write(tmp_path / "flaky.py", """
        import math
        calls = []

        def update(app, t, dt):
            calls.append(t)
            app.find_bone("leftArm").rotation = [0, 0, math.radians(40 + t)]
            if len(calls) == 3:
                app.find_bone("rightArm").rotation = [0, 0, 1.0]
                raise RuntimeError("boom")
        """)
    app = headless()
    shown = []
    runner = ScriptRunner(path, watch=True, show=shown.append)
    runner.start(app)
    right_before = app.find_bone("rightArm").rotation_quaternion.copy()
    assert runner.update(app, 1.0, 0.1) and runner.update(app, 2.0, 0.1)
    assert not runner.update(app, 3.0, 0.1)                      # the fault: reported, not raised
    line = f"script error: {path}:10: RuntimeError: boom"
    assert capsys.readouterr().err.strip() == line
    assert shown[-1].is_error and shown[-1].text == line          # the panel's status line
    assert left_arm_degrees(app.scene) == pytest.approx(42)       # the last good pose, not the half-made one
    assert np.allclose(app.find_bone("rightArm").rotation_quaternion, right_before)
    assert not runner.update(app, 4.0, 0.1)                      # not called again ...
    assert runner.target.calls == [1.0, 2.0, 3.0]
    write(path, """
        import math

        def update(app, t, dt):
            app.find_bone("leftArm").rotation = [0, 0, math.radians(100)]
        """)
    wait_for_reload(runner, app, runner.generation)              # ... until the file changes
    assert runner.update(app, 5.0, 0.1)
    assert left_arm_degrees(app.scene) == pytest.approx(100)


def test_a_syntax_error_names_its_line_and_the_previous_script_stops(tmp_path, capsys):
    path = arm_script(tmp_path / "arm.py", 45)
    app = headless()
    runner = ScriptRunner(path, watch=True)
    runner.start(app)
    runner.update(app, 0.0, 0.0)
    write(path, "def update(app, t, dt):\n    pass\n\ndef oops(:\n")
    started = time.monotonic()
    while not runner.failed:
        assert time.monotonic() - started < 5.0
        runner.poll(app)
    assert f"script error: {path}:4: SyntaxError: " in capsys.readouterr().err
    assert not runner.update(app, 1.0, 0.1)
    assert left_arm_degrees(app.scene) == pytest.approx(45)


def test_a_slow_update_is_reported_with_its_time():
    ticks = iter([0.0, 0.080, 1.0, 1.001])

    class Script:
        def update(self, app, t, dt):
            pass

    shown = []
    runner = ScriptRunner(Script(), show=shown.append, clock=lambda: next(ticks), quiet=True)
    app = headless()
    runner.start(app)
    runner.update(app, 0.0, 0.1)
    assert "80 ms" in shown[-1].text and "slow" in shown[-1].text and not shown[-1].is_error
    count = len(shown)
    runner.update(app, 0.1, 0.1)
    assert len(shown) == count  # 1 ms: nothing to say


def test_an_object_script_and_setup_once_loaded():
    events = []

    class Script:
        def setup(self, app):
            events.append(("setup", app.frame))

        def update(self, app, t, dt):
            events.append(("update", t, dt))

    app = headless()
    runner = ScriptRunner(Script())
    assert runner.start(app)
    runner.update(app, 0.5, 0.25)
    assert events == [("setup", 0), ("update", 0.5, 0.25)]
    with pytest.raises(ViewerError, match="setup"):
        ScriptRunner(object())


# --- the app object ----------------------------------------------------------------------------------
def test_the_app_facade_over_the_built_in_character():
    app = headless()
    assert app.scene.find_bone("leftArm") is app.find_bone("leftArm")
    with pytest.raises(ViewerError, match="unknown bone 'hand'.*body, leftArm, rightArm"):
        app.find_bone("hand")
    app.selected_bone = "rightArm"
    assert app.selected_bone is app.find_bone("rightArm")
    assert app.animation is None and not app.playing
    app.time = 2.5
    assert app.time == 2.5
    app.camera = {"yaw": 0, "pitch": 0, "distance": 8, "target": [0, 1, 0]}
    assert (app.camera.yaw, app.camera.distance) == (0.0, 8.0)
    assert app.window_size == (320, 240)
    # A point on the line of sight lands in the image centre; one behind the camera is None.
    assert app.project([0, 1, 0]) == pytest.approx((160, 120))
    assert app.project(app.camera.position + np.array([0, 0, 1.0])) is None
    shoulder = app.find_bone("leftArm").get_absolute_position()
    assert app.project(shoulder) == pytest.approx(tuple(app.camera.project(shoulder, 320, 240)[0]))
    app.log("hello")
    assert app.editor.status.text == "hello"
    with pytest.raises(ViewerError, match="png"):
        app.screenshot("a.jpg")
    app.close()
    assert app.closed


def test_the_app_selects_and_seeks_a_clip():
    app = headless(ROBOT, clip_index=0)
    assert app.animation == "Dance" and app.playing
    app.animation = "Wave"
    assert app.animation == "Wave" and app.playing
    with pytest.raises(ViewerError, match="no such clip.*0: Dance"):
        app.animation = "Fly"
    app.playing = False
    app.begin_frame(0.5, 3)
    assert app.frame == 3 and app.time == 0.5


def test_run_viewer_is_exported_lazily():
    assert callable(viewer.run_viewer) and "run_viewer" in viewer.__all__


# --- the examples ------------------------------------------------------------------------------------
@pytest.mark.parametrize("example, model", [("wave.py", None), ("pose_list.py", None), ("ik_follow.py", ROBOT)])
def test_the_examples_render_a_sequence_without_a_fault(cli, tmp_path, example, model):
    args = ["render"] + ([model] if model else []) + ["--script", EXAMPLES / example, "--frames", "0:0.5:0.25",
                                                       "--out-dir", tmp_path, "--size", "160x120"]
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    assert "script error" not in result.stderr
    frames = [np.asarray(Image.open(tmp_path / f"frame_{k:05d}.png")) for k in range(3)]
    assert not np.array_equal(frames[0], frames[1])  # it moves


def test_the_ik_example_puts_the_hand_on_its_moving_target():
    app = headless(ROBOT, clip_index=0)
    runner = ScriptRunner(EXAMPLES / "ik_follow.py")
    assert runner.start(app) and app.animation == "Idle"
    hand = app.find_bone("LowerArm.L").children[0]
    mesh = runner.target.state["mesh"]
    targets = []
    for number, t in enumerate(np.linspace(0.0, 3.3, 9)):
        app.begin_frame(t, number)
        assert runner.update(app, t, 0.4)
        app.scene.prepare()
        target = runner.target.state["ik"].target_position
        targets.append(target)
        assert np.linalg.norm(hand.get_absolute_position(mesh) - target) < 1e-3
    assert np.ptp(np.array(targets), axis=0).max() > 0.8  # it went round


def test_script_mistakes_with_the_app_are_one_script_error_line(cli, tmp_path):
    """A bone that is no bone, a camera target of two numbers, a NaN distance, a screenshot into
    a missing folder: each is one `script error` line, and the frames are still written."""
    for number, line in enumerate(["app.selected_bone = 3", "app.camera.target = (1, 2)",
                                   "app.camera.distance = float('nan')",
                                   f"app.screenshot({str(tmp_path / 'missing' / 'x.png')!r})"]):
        script = tmp_path / f"bad{number}.py"
        script.write_text(f"def setup(app):\n    {line}\n")
        out = tmp_path / f"out{number}"
        result = cli("render", "--script", script, "--frames", "0:0.1:0.1", "--out-dir", out)
        assert result.returncode == 1, result.stderr
        lines = [line for line in result.stderr.splitlines() if not line.startswith("[")]  # not the progress bar
        assert len(lines) == 1 and lines[0].startswith(f"script error: {script}:2:"), result.stderr
        assert "Traceback" not in result.stderr
        assert len(list(out.glob("frame_*.png"))) == 2
