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
sys.path.insert(0, str(ROOT / "tests"))  # panel_driver: the tests' headless panel session and clicks

from viewer.loaders import load_model  # noqa: E402
from panel_driver import click, headless_session  # noqa: E402

CESIUM_MAN = ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"
IMAGES = ROOT / "docs" / "images"



def panel_picture() -> Image.Image:
    size = (1000, 640)
    scene = load_model(CESIUM_MAN)
    with headless_session(size, scene, model_name=CESIUM_MAN.name) as session:
        editor = session.editor
        editor.pause()
        editor.display.show_gizmo = False   # the contact ring on the selected foot in sight
        for header in ("Display", "Bones"):
            click(session, header)
        click(session, "QA")
        rows = session.panel.qa_rows
        index = next(i for i, item in enumerate(rows) if item.code == "foot-skating" and item.bone.endswith("L_3"))
        click(session, f"qa {index}")
        click(session, "Selected bone")  # folded: the list and the view have the room
        imgui.get_io().add_mouse_pos_event(990.0, 630.0)  # no tooltip over the panel
        session.frame_model()
        session.run(3)
        return Image.fromarray(session.target.read()).convert("RGB")


def main() -> None:
    path = IMAGES / "qa-panel.png"
    panel_picture().save(path, optimize=True)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
