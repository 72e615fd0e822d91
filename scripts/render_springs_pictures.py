#!/usr/bin/env python3
"""Render the docs' picture of the springs in the window: docs/images/springs-panel.png.

    .venv/bin/python scripts/render_springs_pictures.py

The window's panel (headless, offscreen) on the Fox with a chain added on its tail and the
Spring chains section open; the clip is paused and the hip is being turned with R: the tail
swings after it (the springs keep stepping while the clip is paused).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from imgui_bundle import imgui
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # panel_driver: the tests' headless panel session and clicks

from viewer.loaders import load_model  # noqa: E402
from viewer.ui.window_app import WindowApp  # noqa: E402
from panel_driver import click, key, move, headless_session  # noqa: E402

FOX = ROOT / "tests" / "data" / "gltf-samples" / "Fox" / "Fox.glb"
IMAGES = ROOT / "docs" / "images"


def panel_picture() -> Image.Image:
    scene = load_model(str(FOX))
    scene.springs.add_chain("b_Tail01_012", stiffness=60, drag=0.2, gravity=10, radius=3)
    with headless_session((1100, 640), scene, model_name=FOX.name) as session:
        editor = session.editor
        editor.pause()
        session.camera.yaw = 235.0  # from behind and the side: the tail in view
        session.frame_model()
        session.run(90)  # the tail settles
        for header in ("Bones", "Files", "Keyframes"):
            if header in session.panel.rects:
                click(session, header)
        click(session, "Spring chains")
        hip = scene.find_bone("b_Hip_01")
        editor.select(hip)
        session.run()
        here = np.array(WindowApp(session).project(hip.get_absolute_position(editor.mesh_of(hip))))
        move(session, here + (90, 0))
        key(session, imgui.Key.r)
        for degrees in range(0, 36, 3):  # the hip turned quickly: the tail lags behind
            a = math.radians(degrees)
            move(session, here + 90 * np.array([math.cos(a), -math.sin(a)]))
        return Image.fromarray(session.target.read()).convert("RGB")


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    path = IMAGES / "springs-panel.png"
    panel_picture().save(path, optimize=True)
    print(path)


if __name__ == "__main__":
    main()
