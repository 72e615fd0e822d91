#!/usr/bin/env python3
"""Render the docs' shadow pictures (docs/look.md, issue 45): a character with and without shadows,
in the window and in a render.

    .venv/bin/python scripts/render_shadow_pictures.py

shadows-window.png, shadows-window-off.png: the window's panel (headless, offscreen) on CesiumMan
walking, paused at 0.6 s, seen from a little above, its *Light and tone mapping* section open;
without shadows, then with them (the window's default) by a click on the panel's *Shadows* toggle.
shadows-shadows.png, shadows-no-shadows.png: `boneviewer render` of the same pose, with
`--shadows --key-light 40,50` and without (render's default), as the look page's command.
"""

from __future__ import annotations

import subprocess
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
TIME = 0.6
YAW = 100.0  # from the character's side: its shadow stretches on the ground beside it, out of the panel's way
RENDER = ["render", str(CESIUM_MAN.relative_to(ROOT)), "--animation", "0", "--time", f"{TIME:g}", "--no-skeleton",
          "--size", "480x360", "--pitch", "25", "--yaw", "110", "--target", "0.3,0.95,0", "--distance", "2.3"]


def window_pictures() -> tuple[Image.Image, Image.Image]:
    """The window with shadows (its default), then with them turned off in the panel."""
    size = (960, 560)
    scene = load_model(CESIUM_MAN)
    pictures = []
    with headless_session(size, scene, model_name=CESIUM_MAN.name) as session:
        editor = session.editor
        editor.pause()
        editor.seek(TIME)
        editor.display.show_skeleton = False
        for header in ("Bones", "Selected bone"):
            if header in session.panel.rects:
                click(session, header)  # folded: the light section in sight
        click(session, "Light and tone mapping")
        session.camera.pitch = 30.0
        session.camera.yaw = YAW
        session.frame_model()
        session.camera.distance *= 1.5  # the ground around the feet in sight
        # The session starts with the look it is given (none here: no shadows; `boneviewer view` gives
        # it shadows on): the picture without, then the panel's Shadows toggle clicked, the picture with.
        editor.use_look({"shadows": False})
        for _ in range(2):
            imgui.get_io().add_mouse_pos_event(size[0] - 10.0, size[1] - 10.0)  # no hover, no tooltip
            session.run(3)
            pictures.append(Image.fromarray(session.target.read()).convert("RGB"))
            if len(pictures) == 1:
                click(session, "Shadows", near_left=True)
                assert editor.display.shadows
    return pictures[1], pictures[0]


def render(out: Path, *extra: str) -> None:
    subprocess.run([sys.executable, "-m", "viewer", *RENDER, *extra, "--out", str(out)], cwd=ROOT, check=True)


def save(picture: Image.Image, name: str) -> None:
    path = IMAGES / name
    picture.save(path, optimize=True)
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size / 1e3:.0f} kB)")


def main() -> None:
    on, off = window_pictures()
    save(on, "shadows-window.png")
    save(off, "shadows-window-off.png")
    render(IMAGES / "shadows-shadows.png", "--shadows", "--key-light", "40,50")
    render(IMAGES / "shadows-no-shadows.png")
    for name in ("shadows-shadows.png", "shadows-no-shadows.png"):
        print(f"wrote docs/images/{name} ({(IMAGES / name).stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
