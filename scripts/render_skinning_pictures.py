#!/usr/bin/env python3
"""Render the docs' skinning picture: docs/images/skinning-twist.png.

    .venv/bin/python scripts/render_skinning_pictures.py

A striped limb (tests/twisted_limb.py: two bones, the weights handing over across the joint)
with its lower bone twisted 150 degrees about the limb, drawn twice: linear blend skinning (the
joint collapses into a "candy wrapper") and dual quaternions (the joint keeps its volume), each
set through ``mesh.skinning``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from twisted_limb import build_limb, twist  # noqa: E402
from viewer.camera import OrbitCamera  # noqa: E402
from viewer.options import RenderOptions  # noqa: E402
from viewer.render.headless import HeadlessRenderer  # noqa: E402

PANEL = (380, 260)
TWIST = 150.0
SKINNINGS = [("lbs", "linear blend (lbs)"), ("dq", "dual quaternions (dq)")]


def main() -> None:
    scene = build_limb(color=(0.85, 0.5, 0.25, 1.0), stripes=(0.12, 0.3, 0.6, 1.0))
    twist(scene, TWIST)
    (mesh,) = scene.skinned_meshes
    camera = OrbitCamera(target=(1.0, 0.0, 0.0), distance=2.6, yaw=0, pitch=12, fov_y=35)
    options = RenderOptions(show_skeleton=False, show_grid=False)
    panels = []
    with HeadlessRenderer(PANEL) as headless:
        for skinning, label in SKINNINGS:
            mesh.skinning = skinning
            image = Image.fromarray(headless.render(scene, camera, options)).convert("RGB")
            draw = ImageDraw.Draw(image)
            font = ImageFont.load_default(size=20)
            draw.text((12, PANEL[1] - 32), label, fill=(235, 235, 235), font=font)
            panels.append(image)
    picture = Image.new("RGB", (PANEL[0] * len(panels), PANEL[1]))
    for i, panel in enumerate(panels):
        picture.paste(panel, (i * PANEL[0], 0))
    out = ROOT / "docs" / "images" / "skinning-twist.png"
    picture.save(out, optimize=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
