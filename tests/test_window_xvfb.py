"""A real window under Xvfb, started by the test: open, draw frames with the panel, screenshot.

The viewer runs in a subprocess: a GLX window in this process after the EGL tests would die
with X BadAccess (shared/PLATFORM.md).
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from test_gltf import SAMPLES_DIR


@pytest.fixture(scope="module")
def display():
    xvfb = shutil.which("Xvfb")
    assert xvfb, "Xvfb is missing: run scripts/test.sh as root once (it installs xvfb), or apt-get install xvfb"
    for number in range(90, 140):
        if not Path(f"/tmp/.X11-unix/X{number}").exists() and not Path(f"/tmp/.X{number}-lock").exists():
            break
    process = subprocess.Popen([xvfb, f":{number}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    socket = Path(f"/tmp/.X11-unix/X{number}")
    deadline = time.monotonic() + 10
    while not socket.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert socket.exists(), "Xvfb did not start"
    yield f":{number}"
    process.terminate()
    process.wait(timeout=10)


def run_viewer(display, *args, timeout=120):
    env = {**os.environ, "DISPLAY": display}
    env.pop("WAYLAND_DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "viewer.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def test_window_opens_renders_the_panel_and_exits(display, tmp_path):
    shot = tmp_path / "window.png"
    result = run_viewer(display, "--frames", "20", "--screenshot", str(shot))
    assert result.returncode == 0, result.stderr
    image = np.asarray(Image.open(shot)).astype(int)
    assert image.shape == (720, 1280, 4)
    title_bar = image[10:25, 20:300, :3]
    assert np.median(title_bar[:, :, 2]) > np.median(title_bar[:, :, 0]) + 30   # ImGui's blue title bar
    rgb = image[:, 420:, :3]
    orange = (rgb[:, :, 0] > 150) & (rgb[:, :, 0] > rgb[:, :, 1] + 40) & (rgb[:, :, 1] > rgb[:, :, 2] + 30)
    assert orange.sum() > 500                                                     # the character's arms


def test_window_plays_a_gltf_model(display, tmp_path):
    shot = tmp_path / "fox.png"
    result = run_viewer(display, "view", str(SAMPLES_DIR / "Fox/Fox.glb"), "--frames", "15", "--screenshot", str(shot),
                        "--size", "800x600")
    assert result.returncode == 0, result.stderr
    assert np.asarray(Image.open(shot)).shape == (600, 800, 4)


def test_window_with_a_bad_model_exits_2_with_one_line(display, tmp_path):
    bad = tmp_path / "bad.gltf"
    bad.write_text("{not json")
    result = run_viewer(display, str(bad), "--frames", "5")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "bad.gltf" in result.stderr
