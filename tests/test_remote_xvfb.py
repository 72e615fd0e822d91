"""`boneviewer view --listen` in a real window under Xvfb: a client in another process (this
one) streams a pose, and the window's last frame shows it.

The window runs in a subprocess (a GLX window must not share a process with the EGL tests:
shared/PLATFORM.md)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from viewer.remote import connect

ROOT = Path(__file__).resolve().parents[1]


def orange(image) -> int:
    """Pixels of the built-in character's orange arms, right of the panel."""
    rgb = image[:, 420:, :3].astype(int)
    return int(((rgb[:, :, 0] > 150) & (rgb[:, :, 0] > rgb[:, :, 1] + 40) & (rgb[:, :, 1] > rgb[:, :, 2] + 30)).sum())


def window(display, shot, frames):
    env = {**os.environ, "DISPLAY": display, "PYTHONPATH": str(ROOT)}
    env.pop("WAYLAND_DISPLAY", None)
    return subprocess.Popen([sys.executable, "-m", "viewer.cli", "view", "--listen", "0", "--token", "xvfb-22",
                             "--frames", str(frames), "--screenshot", str(shot), "--size", "960x600"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_a_client_in_another_process_streams_a_pose_that_the_window_shows(xvfb_display, tmp_path):
    shots = {}
    for name in ("rest", "streamed"):
        shots[name] = tmp_path / f"{name}.png"
        viewer = window(xvfb_display, shots[name], frames=240)
        line = viewer.stdout.readline().strip()
        assert line.startswith("listening on 127.0.0.1:") and line.endswith(" token xvfb-22"), \
            (line, viewer.stderr.read() if viewer.poll() is not None else "")
        if name == "streamed":
            with connect(line.split()[2], token="xvfb-22") as client:
                assert client.bones() == ["body", "leftArm", "rightArm"]
                arms_up = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.5, 0.866], [0.0, 0.0, -0.5, 0.866]],
                                   np.float32)
                for step in range(50):  # a stream: the window applies the newest at its next frame
                    client.set_pose(rotations=arms_up, scalings=np.full((3, 3), 0.5, np.float32), wait=False)
                client.bones()  # answered after the streamed pose was applied
                image = client.render((160, 120))  # drawn in the window's context, as `render` draws
                assert image.shape == (120, 160, 4) and orange(np.pad(image, ((0, 0), (420, 0), (0, 0)))) > 50
                # the window's shadows (on, as view's default) unless this picture says otherwise
                plain = client.render((160, 120), shadows=False)
                assert (np.abs(image.astype(int) - plain).max(axis=2) > 8).sum() > 50
                assert np.abs(client.render((160, 120)).astype(int) - image).max() <= 2  # the same window twice
                client.set_skinning("dq")  # the window's editor: every skinned mesh
                assert client.set_springs(False) == {"enabled": False, "chains": [], "joints": 0}
        assert viewer.wait(timeout=120) == 0, viewer.stderr.read()
    rest, streamed = (np.asarray(Image.open(shots[name])) for name in ("rest", "streamed"))
    assert rest.shape == streamed.shape == (600, 960, 4)
    assert orange(rest) > 500
    assert orange(streamed) < 0.5 * orange(rest)  # the arms at half size, raised: the window shows the pose
