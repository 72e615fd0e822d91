#!/usr/bin/env python3
"""Render the docs' motion QA picture: docs/images/qa-panel.png.

    .venv/bin/python scripts/render_qa_pictures.py

The window's panel (headless, offscreen) on CesiumMan with its QA section open and the left
foot's foot-skating finding clicked: the playhead at its first frame, the foot selected (the
gizmo off, so the contact ring shows), the findings' frames marked under the timeline.
"""

from __future__ import annotations

import sys
from pathlib import Path

from imgui_bundle import imgui
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viewer.loaders import load_model  # noqa: E402
from viewer.render.headless import OffscreenTarget, create_headless_context, release_egl_current  # noqa: E402
from viewer.ui.session import ViewerSession  # noqa: E402

CESIUM_MAN = ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"
IMAGES = ROOT / "docs" / "images"


def _click(session, label, size):
    """A click on a panel widget (move, press, release: three frames), as the tests' panel driver."""
    x0, y0, x1, y1 = session.panel.rects[label]
    io = imgui.get_io()
    io.add_mouse_pos_event((x0 + x1) / 2, (y0 + y1) / 2)
    for down in (None, True, False):
        if down is not None:
            io.add_mouse_button_event(0, down)
        session.frame(size, 1 / 60, session.target.framebuffer)


def panel_picture() -> Image.Image:
    size = (1000, 640)
    ctx = create_headless_context()
    target = OffscreenTarget(ctx, size)
    scene = load_model(CESIUM_MAN)
    session = ViewerSession(ctx, scene, model_name=CESIUM_MAN.name)
    session.target = target
    try:
        for _ in range(2):
            session.frame(size, 1 / 60, target.framebuffer)
        editor = session.editor
        editor.pause()
        editor.display.show_gizmo = False   # the contact ring on the selected foot in sight
        for header in ("Display", "Bones"):
            _click(session, header, size)
        _click(session, "QA", size)
        rows = session.panel.qa_rows
        index = next(i for i, item in enumerate(rows) if item.code == "foot-skating" and item.bone.endswith("L_3"))
        _click(session, f"qa {index}", size)
        _click(session, "Selected bone", size)  # folded: the list and the view have the room
        imgui.get_io().add_mouse_pos_event(990.0, 630.0)  # no tooltip over the panel
        session.frame_model()
        for _ in range(3):
            session.frame(size, 1 / 60, target.framebuffer)
        return Image.fromarray(target.read()).convert("RGB")
    finally:
        session.release()
        target.release()
        ctx.release()
        release_egl_current()


def main() -> None:
    path = IMAGES / "qa-panel.png"
    panel_picture().save(path, optimize=True)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
