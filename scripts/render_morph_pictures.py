#!/usr/bin/env python3
"""Render the docs' morph target picture: docs/images/morph-targets.png.

    .venv/bin/python scripts/render_morph_pictures.py

RobotExpressive's head (tests/data/gltf-samples), close up, three times: neutral, Angry = 1
and Surprised = 1, each set through a version 2 pose (as `boneviewer render --pose` does).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viewer import load_gltf  # noqa: E402
from viewer.camera import OrbitCamera  # noqa: E402
from viewer.options import RenderOptions  # noqa: E402
from viewer.editing.pose import apply_pose  # noqa: E402
from viewer.render.headless import HeadlessRenderer  # noqa: E402

ROBOT = ROOT / "tests" / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
PANEL = (300, 300)
FACES = [("neutral", {}), ("Angry = 1", {"Angry": 1.0}), ("Surprised = 1", {"Surprised": 1.0})]


def main() -> None:
    scene = load_gltf(ROBOT)
    (head,) = scene.morph_meshes
    points = head.skinned_positions()
    low, high = points.min(axis=0), points.max(axis=0)
    camera = OrbitCamera(target=(low + high) / 2 + [0.0, 0.08, 0.0], distance=1.9 * float(np.linalg.norm(high - low)),
                         yaw=18, pitch=6, fov_y=35)
    options = RenderOptions(show_skeleton=False, show_grid=False)
    panels = []
    with HeadlessRenderer(PANEL) as headless:
        for label, weights in FACES:
            apply_pose(scene, {"version": 2, "bones": {}, "morph": {"Head": {"Angry": 0, "Surprised": 0, "Sad": 0,
                                                                            **weights}}})
            image = Image.fromarray(headless.render(scene, camera, options)).convert("RGB")
            draw = ImageDraw.Draw(image)
            font = ImageFont.load_default(size=20)
            draw.text((12, PANEL[1] - 32), label, fill=(235, 235, 235), font=font)
            panels.append(image)
    picture = Image.new("RGB", (PANEL[0] * len(panels), PANEL[1]))
    for i, panel in enumerate(panels):
        picture.paste(panel, (i * PANEL[0], 0))
    out = ROOT / "docs" / "images" / "morph-targets.png"
    picture.save(out, optimize=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
