"""Animated exports for CI: render --frames/--turntable into a GIF or an MP4, with one GL context."""

import builtins

import numpy as np
import pytest
from PIL import Image

import viewer.cli as cli_module
from samples import FOX, ROBOT


def gif_frames(path):
    with Image.open(path) as image:
        frames = []
        for index in range(image.n_frames):
            image.seek(index)
            frames.append(np.asarray(image.convert("RGB")).astype(int))
        return frames, image.info.get("duration"), image.info.get("loop")


def test_a_gif_of_the_fox_running(cli, tmp_path):
    out = tmp_path / "fox.gif"
    result = cli("render", FOX, "--animation", "Run", "--frames", "0:1.1:0.1", "--gif", out, "--size", "160x120")
    assert result.returncode == 0, result.stderr
    assert f"wrote 12 frames to {out}" in result.stdout
    frames, duration, loop = gif_frames(out)
    assert len(frames) == 12 and frames[0].shape == (120, 160, 3)
    assert duration == 100 and loop == 0            # 1 / STEP = 10 frames per second, looping
    moved = [np.abs(frames[k] - frames[k + 1]).sum(axis=2) > 40 for k in range(11)]
    assert all(m.sum() > 100 for m in moved)         # every frame shows the run going on


def test_fps_sets_the_gif_speed(cli, tmp_path):
    out = tmp_path / "slow.gif"
    assert cli("render", "--turntable", "3", "--gif", out, "--fps", "5", "--size", "64x48").returncode == 0
    assert gif_frames(out)[1] == 200


def test_an_mp4_of_the_fox(cli, tmp_path):
    import imageio.v3 as iio

    out = tmp_path / "fox.mp4"
    result = cli("render", FOX, "--animation", "Run", "--frames", "0:0.5:0.1", "--mp4", out, "--size", "160x120")
    assert result.returncode == 0, result.stderr
    frames = list(iio.imiter(out))
    assert len(frames) == 6 and frames[0].shape == (120, 160, 3)
    assert np.abs(frames[0].astype(int) - frames[3].astype(int)).sum(axis=2).max() > 60


def test_mp4_without_its_encoder_names_the_extra(tmp_path, monkeypatch, capsys):
    real_import = builtins.__import__

    def no_ffmpeg(name, *args, **kwargs):
        if name == "imageio_ffmpeg":
            raise ImportError("No module named 'imageio_ffmpeg'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ffmpeg)
    assert cli_module.main(["render", "--turntable", "2", "--mp4", str(tmp_path / "a.mp4"), "--size", "64x48"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'boneviewer[video]'" in err[0]


def test_a_turntable_goes_once_round_the_model_and_keeps_it_whole(cli, tmp_path):
    out = tmp_path / "turn.gif"
    result = cli("render", ROBOT, "--turntable", "8", "--gif", out, "--size", "160x120", "--no-grid")
    assert result.returncode == 0, result.stderr
    frames, _, _ = gif_frames(out)
    assert len(frames) == 8
    for frame in frames:                              # the robot never touches the border
        background = np.median(frame, axis=1, keepdims=True)  # the gradient is vertical; the robot narrow
        model = np.abs(frame - background).sum(axis=2) > 60
        assert model.sum() > 500
        assert not model[:2].any() and not model[-2:].any() and not model[:, :2].any() and not model[:, -2:].any()
    assert np.abs(frames[0] - frames[4]).sum() > np.abs(frames[0] - frames[1]).sum() * 0.5  # seen from behind


def test_one_gl_context_serves_the_whole_sequence(tmp_path, monkeypatch):
    import viewer.render.headless as headless_module

    made = []
    real = headless_module.HeadlessRenderer

    class Counting(real):
        def __init__(self, *args, **kwargs):
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(headless_module, "HeadlessRenderer", Counting)
    out = tmp_path / "a.gif"
    assert cli_module.main(["render", "--turntable", "5", "--gif", str(out), "--size", "64x48"]) == 0
    assert len(made) == 1 and gif_frames(out)[0].__len__() == 5


@pytest.mark.parametrize("args, message", [
    (["--gif", "{tmp}/a.gif"], "--gif goes with --frames START:END:STEP or --turntable N"),
    (["--turntable", "4", "--out", "{tmp}/a.png"], "--turntable writes a sequence"),
    (["--frames", "0:1:0.5", "--gif", "{tmp}/a.gif", "--out-dir", "{tmp}/d"], "give one output, not --out-dir and --gif"),
    (["--frames", "0:1:0.5", "--turntable", "3", "--gif", "{tmp}/a.gif"], "leave out --frames"),
    (["--turntable", "3", "--gif", "{tmp}/a.png"], "the file name must end in .gif"),
    (["--turntable", "3", "--mp4", "{tmp}/a.mp4", "--size", "65x48"], "an even width and height"),
    (["--turntable", "3", "--gif", "{tmp}/missing/a.gif"], "does not exist"),
    (["--out", "{tmp}/a.png", "--fps", "10"], "--fps sets the speed of --gif or --mp4"),
    (["--turntable", "0", "--gif", "{tmp}/a.gif"], "must be at least 1"),
])
def test_export_mistakes_are_one_line_before_any_work(cli, tmp_path, args, message):
    result = cli("render", *[a.format(tmp=tmp_path) for a in args])
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not list(tmp_path.glob("*.gif")) and not list(tmp_path.glob("*.mp4"))
