"""The `boneviewer` command as a new user meets it: typos, --debug anywhere, bad numbers, output
folders checked before any window, an unusable display, view --pose, --time without animations
and --rest."""

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from samples import FOX
from viewer import cli as cli_module
from viewer.character import build_character

ROOT = Path(__file__).parent.parent
LEFT_ARM_45 = ROOT / "assets" / "poses" / "left-arm-45.json"


def one_error_line(result, *needles):
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("boneviewer") and "error:" in lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_an_unknown_command_lists_the_commands(cli, tmp_path):
    line = one_error_line(cli("frobnicate", cwd=tmp_path), "unknown command 'frobnicate'")
    assert all(command in line for command in ("render", "view", "bench"))
    one_error_line(cli("--debug", "rendr", cwd=tmp_path), "unknown command 'rendr'")
    # A missing file that is named like a model is still a model, and says so.
    one_error_line(cli("missing.glb", cwd=tmp_path), "missing.glb: no such file")


def test_an_existing_model_path_opens_it_without_a_command(cli, tmp_path):
    local = tmp_path / "Fox.glb"
    local.write_bytes(FOX.read_bytes())
    result = cli("Fox.glb", "--size", "160x120", cwd=tmp_path)  # no display: a PNG of it
    assert result.returncode == 0, result.stderr
    assert "Fox.glb" in result.stdout and (tmp_path / "boneviewer.png").exists()
    # An existing file with any name is a model too (and gets the loader's own message).
    (tmp_path / "notes").write_text("hello")
    one_error_line(cli("notes", cwd=tmp_path), "cannot open extension-less files")


@pytest.mark.parametrize("args", [["--debug", "render"], ["render", "--debug"]])
def test_debug_works_before_and_after_the_command(cli, tmp_path, args):
    result = cli(*args, "--out", tmp_path / "missing" / "a.png")
    assert result.returncode != 0
    assert "Traceback" in result.stderr and "ViewerError" in result.stderr and "does not exist" in result.stderr
    quiet = cli("render", "--out", tmp_path / "missing" / "a.png")
    assert "Traceback" not in quiet.stderr


@pytest.mark.parametrize("option, value", [("--yaw", "nan"), ("--yaw", "inf"), ("--pitch", "-inf"),
                                           ("--pitch", "nan"), ("--time", "nan"), ("--time", "inf")])
def test_non_finite_numbers_are_refused(cli, tmp_path, option, value):
    out = tmp_path / "a.png"
    one_error_line(cli("render", f"{option}={value}", "--out", out), option, "finite")
    assert not out.exists()


def test_pitch_beyond_straight_down_is_refused(cli, tmp_path):
    one_error_line(cli("render", "--pitch", "90", "--out", tmp_path / "a.png"), "--pitch", "-89 and 89")


class WindowOpened(Exception):
    pass


@pytest.fixture
def fake_window(monkeypatch):
    """`view` in this process with a display set, and a window class that records what it got
    (and opens nothing)."""
    import viewer.ui.window as window_module

    opened = []

    class FakeWindow:
        def __init__(self, scene, model_name, size=(1280, 720), play=True, **options):
            opened.append({"scene": scene, "play": play, **options})

        def run(self, frames=None, screenshot=None):
            return 0

    monkeypatch.setattr(window_module, "ViewerWindow", FakeWindow)
    monkeypatch.setenv("DISPLAY", ":0")
    return opened


def test_screenshot_folder_is_checked_before_any_window(fake_window, tmp_path, capsys):
    missing = tmp_path / "missing" / "x.png"
    assert cli_module.main(["view", "--screenshot", str(missing), "--frames", "3"]) == 2
    assert fake_window == []
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"folder {missing.parent} does not exist" in err[0]
    assert "Errno" not in err[0]
    # A good folder does open the window.
    assert cli_module.main(["view", "--screenshot", str(tmp_path / "x.png"), "--frames", "3"]) == 0
    assert len(fake_window) == 1


def test_an_out_dir_that_cannot_be_created_fails_before_loading_or_rendering(cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    one_error_line(cli("render", FOX, "--frames", "0:1:0.5", "--out-dir", blocker / "frames"), "cannot create it")
    one_error_line(cli("render", FOX, "--frames", "0:1:0.5", "--out-dir", blocker), "not a folder")


def test_view_pose_poses_the_model_in_the_window_and_keeps_it_paused(fake_window, tmp_path):
    assert cli_module.main(["view", "--pose", str(LEFT_ARM_45)]) == 0
    (opened,) = fake_window
    expected = json.loads(LEFT_ARM_45.read_text())["bones"]["leftArm"]["rotation_quaternion"]
    turned = opened["scene"].find_bone("leftArm").rotation_quaternion
    np.testing.assert_allclose(turned, np.array(expected) / np.linalg.norm(expected), atol=1e-9)
    assert opened["play"] is False  # a playing clip would overwrite the pose
    # An animated model: the first clip's start, then the pose over it (as `render` does).
    fox_pose = tmp_path / "fox.json"
    fox_pose.write_text(json.dumps({"bones": {"b_Neck_04": {"rotation_quaternion": [0, 0.6, 0, 0.8]}}}))
    assert cli_module.main(["view", str(FOX), "--pose", str(fox_pose)]) == 0
    fox = fake_window[-1]["scene"]
    np.testing.assert_allclose(fox.find_bone("b_Neck_04").get_transform_node().rotation_quaternion,
                               [0, 0.6, 0, 0.8], atol=1e-9)
    assert cli_module.main(["view", str(FOX), "--rest"]) == 0 and fake_window[-1]["play"] is False
    assert cli_module.main(["view", str(FOX)]) == 0 and fake_window[-1]["play"] is True


def test_view_pose_errors_exit_2_before_the_window(fake_window, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"bones": {"tail": {}}}))
    assert cli_module.main(["view", "--pose", str(bad)]) == 2
    assert fake_window == []
    assert "unknown bone 'tail'" in capsys.readouterr().err


def test_view_pose_without_a_display_renders_it(cli, tmp_path):
    posed = cli("view", "--pose", LEFT_ARM_45, "--size", "240x180", cwd=tmp_path)
    assert posed.returncode == 0, posed.stderr
    # view's picture stands in for the window, which draws shadows (render's are off unless asked)
    rendered = cli("render", "--pose", LEFT_ARM_45, "--size", "240x180", "--shadows", "--out", tmp_path / "render.png")
    plain = cli("render", "--size", "240x180", "--shadows", "--out", tmp_path / "plain.png")
    assert rendered.returncode == 0 and plain.returncode == 0
    fallback = np.asarray(Image.open(tmp_path / "boneviewer.png")).astype(int)
    assert np.abs(fallback - np.asarray(Image.open(tmp_path / "render.png"))).max() <= 2
    assert (np.abs(fallback - np.asarray(Image.open(tmp_path / "plain.png"))).max(axis=2) > 24).mean() > 0.01


def unused_display() -> str:
    number = 987
    while os.path.exists(f"/tmp/.X11-unix/X{number}") or os.path.exists(f"/tmp/.X{number}-lock"):
        number += 1
    return f":{number}"


def test_a_display_that_cannot_be_opened_falls_back_to_a_png(cli, tmp_path):
    display = unused_display()
    result = cli("--frames", "3", "--size", "200x150", display=display, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stdout.splitlines() if line.startswith("boneviewer:")]
    assert len(said) == 1 and f"cannot open a window on display {display}" in said[0], result.stdout
    assert str(tmp_path / "boneviewer.png") in said[0]
    everything = result.stdout + result.stderr
    assert "GLFW" not in everything and "Warning" not in everything and "warn(" not in everything
    assert result.stderr == ""
    image = np.asarray(Image.open(tmp_path / "boneviewer.png"))
    assert image.shape == (150, 200, 4) and len(np.unique(image.reshape(-1, 4), axis=0)) > 50


def test_with_no_display_view_takes_a_free_name_never_an_existing_picture(cli, tmp_path):
    """Issue 47, item 2: with no display, view draws to boneviewer.png, or boneviewer-1.png, -2, ...,
    the first name that is free, and says which; the files there stay as they were."""
    (tmp_path / "boneviewer.png").write_bytes(b"someone's picture")
    (tmp_path / "boneviewer-1.png").write_bytes(b"another")
    result = cli("--size", "64x48", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "boneviewer.png").read_bytes() == b"someone's picture"
    assert (tmp_path / "boneviewer-1.png").read_bytes() == b"another"
    said = [line for line in result.stdout.splitlines() if line.startswith("boneviewer:")]
    assert len(said) == 1 and f"to {tmp_path / 'boneviewer-2.png'} instead of a window" in said[0], result.stdout
    assert np.asarray(Image.open(tmp_path / "boneviewer-2.png")).shape == (48, 64, 4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["boneviewer-1.png", "boneviewer-2.png", "boneviewer.png"]


def test_time_on_a_model_without_animations_warns_and_renders(cli, tmp_path):
    out = tmp_path / "a.png"
    result = cli("render", "--time", "1.5", "--out", out, "--size", "160x120")
    assert result.returncode == 0, result.stderr
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("boneviewer: warning: --time")
    assert "no animations" in warnings[0]
    assert out.exists()
    # With animations there is nothing to warn about.
    fox = cli("render", FOX, "--time", "1.5", "--out", tmp_path / "fox.png", "--size", "160x120")
    assert fox.returncode == 0 and "--time" not in fox.stderr


def test_rest_renders_the_model_without_its_clip(cli, tmp_path):
    from viewer.gltf import load_gltf
    from viewer.camera import framed_camera
    from viewer.render.headless import HeadlessRenderer
    from viewer.options import RenderOptions

    size = (240, 180)
    flags = ["--size", f"{size[0]}x{size[1]}", "--no-grid"]
    rest = cli("render", FOX, "--rest", "--out", tmp_path / "rest.png", *flags)
    clip = cli("render", FOX, "--out", tmp_path / "clip.png", *flags)
    assert rest.returncode == 0 and clip.returncode == 0, rest.stderr + clip.stderr
    rest_image = np.asarray(Image.open(tmp_path / "rest.png")).astype(int)
    # The same as the model drawn just as loaded, with no clip applied ...
    scene = load_gltf(FOX)
    with HeadlessRenderer(size) as headless:
        loaded = headless.render(scene, framed_camera(scene, aspect=size[0] / size[1]),
                                 RenderOptions(show_grid=False)).astype(int)
    assert (np.abs(rest_image - loaded).max(axis=2) > 24).mean() < 0.002
    # ... and not the first clip's first frame (the default).
    clip_image = np.asarray(Image.open(tmp_path / "clip.png")).astype(int)
    assert (np.abs(rest_image - clip_image).max(axis=2) > 24).mean() > 0.01
    one_error_line(cli("render", FOX, "--rest", "--time", "1", "--out", tmp_path / "x.png"), "--rest", "--time")


def test_render_defaults_to_the_viewers_view_and_yaw_pitch_still_work(cli, tmp_path):
    from viewer.render.headless import HeadlessRenderer
    from viewer.ui.session import ViewerSession

    with HeadlessRenderer((32, 32)) as headless:
        session = ViewerSession(headless.ctx, build_character())
        yaw, pitch = session.camera.yaw, session.camera.pitch
        session.release()
    size = ["--size", "200x150"]
    default = cli("render", "--out", tmp_path / "default.png", *size)
    same = cli("render", "--yaw", str(yaw), "--pitch", str(pitch), "--out", tmp_path / "same.png", *size)
    front = cli("render", "--yaw", "0", "--pitch", "0", "--out", tmp_path / "front.png", *size)
    assert default.returncode == same.returncode == front.returncode == 0
    images = {name: np.asarray(Image.open(tmp_path / f"{name}.png")).astype(int)
              for name in ("default", "same", "front")}
    np.testing.assert_array_equal(images["default"], images["same"])
    assert (np.abs(images["default"] - images["front"]).max(axis=2) > 24).mean() > 0.02
    assert not math.isclose(yaw, 0.0)  # the viewer's view is a three-quarter one


def test_help_mentions_the_new_options(cli):
    render_help = cli("render", "--help").stdout
    for option in ("--rest", "--debug", "--yaw", "the viewer's"):
        assert option in render_help, option
    view_help = cli("view", "--help").stdout
    for option in ("--pose", "--rest", "--debug"):
        assert option in view_help, option


# --- real windows under Xvfb (a subprocess each: shared/PLATFORM.md) ----------------------------
def screenshot(cli, display, tmp_path, name, *args):
    shot = tmp_path / f"{name}.png"
    result = cli("view", *args, "--size", "800x600", "--screenshot", shot, display=display)
    assert result.returncode == 0, result.stderr
    return np.asarray(Image.open(shot))[:, 420:, :3].astype(int)  # the scene, right of the panel


def test_window_rest_stays_still_and_pose_shows(xvfb_display, cli, tmp_path):
    early = screenshot(cli, xvfb_display, tmp_path, "early", FOX, "--rest", "--frames", "2")
    late = screenshot(cli, xvfb_display, tmp_path, "late", FOX, "--rest", "--frames", "12")
    assert (np.abs(early - late).max(axis=2) > 24).mean() < 0.001  # paused at rest
    plain = screenshot(cli, xvfb_display, tmp_path, "plain", "--frames", "3")
    posed = screenshot(cli, xvfb_display, tmp_path, "posed", "--pose", LEFT_ARM_45, "--frames", "3")
    assert (np.abs(plain - posed).max(axis=2) > 24).mean() > 0.01


def test_view_hands_the_frame_options_to_the_window(fake_window):
    """--no-skeleton, --no-grid and --background start the window's Display toggles so."""
    assert cli_module.main(["view", "--no-skeleton", "--no-grid", "--background", "#204060"]) == 0
    frame = fake_window[0]["frame"]
    assert frame["skeleton"] is False and frame["grid"] is False
    assert tuple(round(c * 255) for c in frame["background"]) == (0x20, 0x40, 0x60)
