"""A real window under Xvfb (conftest's private display): open, draw frames with the panel,
screenshot.

The viewer runs in a subprocess: a GLX window in this process after the EGL tests would die
with X BadAccess (shared/PLATFORM.md).
"""

import numpy as np
from PIL import Image

from samples import FOX


def test_window_opens_renders_the_panel_and_exits(xvfb_display, cli, tmp_path):
    shot = tmp_path / "window.png"
    result = cli("--frames", "20", "--screenshot", str(shot), display=xvfb_display)
    assert result.returncode == 0, result.stderr
    image = np.asarray(Image.open(shot)).astype(int)
    assert image.shape == (720, 1280, 4)
    title_bar = image[10:25, 20:300, :3]
    assert np.median(title_bar[:, :, 2]) > np.median(title_bar[:, :, 0]) + 30   # ImGui's blue title bar
    rgb = image[:, 420:, :3]
    orange = (rgb[:, :, 0] > 150) & (rgb[:, :, 0] > rgb[:, :, 1] + 40) & (rgb[:, :, 1] > rgb[:, :, 2] + 30)
    assert orange.sum() > 500                                                     # the character's arms


def test_window_plays_a_gltf_model(xvfb_display, cli, tmp_path):
    shot = tmp_path / "fox.png"
    result = cli("view", FOX, "--frames", "15", "--screenshot", str(shot), "--size", "800x600",
                 display=xvfb_display)
    assert result.returncode == 0, result.stderr
    assert np.asarray(Image.open(shot)).shape == (600, 800, 4)


def test_window_with_a_bad_model_exits_2_with_one_line(xvfb_display, cli, tmp_path):
    bad = tmp_path / "bad.gltf"
    bad.write_text("{not json")
    result = cli(bad, "--frames", "5", display=xvfb_display)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "bad.gltf" in result.stderr
