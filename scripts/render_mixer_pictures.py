#!/usr/bin/env python3
"""Render the docs' mixer pictures: docs/images/mixer-panel.png and docs/images/mixer-tweak.png.

    .venv/bin/python scripts/render_mixer_pictures.py

mixer-panel.png: the window's panel (headless, offscreen) on RobotExpressive with its Mixer
section open: Walking playing, Wave added on the right arm at half weight, the Tweaks layer
holding a turned head and a keyed layer whose keys are marked under the timeline.
mixer-tweak.png: RobotExpressive walking, five instants of one cycle; above, the clip alone;
below, the same instants with the head turned by the Tweaks layer (one mixer.set_pose while
the clip plays): the turn rides on the walk.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from imgui_bundle import imgui
from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # panel_driver: the tests' headless panel session and clicks

from viewer.camera import framed_camera  # noqa: E402
from viewer.loaders import load_model  # noqa: E402
from viewer.motion import BoneMask, quat  # noqa: E402
from viewer.options import RenderOptions  # noqa: E402
from viewer.render.headless import HeadlessRenderer  # noqa: E402
from panel_driver import click, headless_session  # noqa: E402

ROBOT = ROOT / "tests" / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
IMAGES = ROOT / "docs" / "images"
TURN = quat.normalize(np.array([0.0, np.sin(np.radians(20)), 0.0, np.cos(np.radians(20))]))  # 40 degrees about y



def panel_picture() -> Image.Image:
    size = (1100, 880)
    scene = load_model(ROBOT)
    with headless_session(size, scene, model_name=ROBOT.name) as session:
        editor = session.editor
        walking = next(i for i, clip in enumerate(scene.animations) if clip.name == "Walking")
        editor.choose_clip(walking)
        editor.pause()
        editor.seek(0.0)
        mixer = scene.mixer
        walk = mixer.action("Walking").play()
        wave = mixer.action("Wave")
        wave.mask = BoneMask.subtree("Shoulder.R")
        wave.additive, wave.weight = True, 0.5
        wave.play()
        mixer.time = 0.45
        head = mixer.target("Head")
        mixer.set_pose("Head", rotation_quaternion=quat.multiply(head.rotation_quaternion, TURN))
        nod = mixer.add_layer("Nod")
        duration = walk.clip.duration
        for k, t in enumerate(np.linspace(0.0, duration, 5)):
            mixer.time = float(t)
            q = np.array(mixer.target("Neck").rotation_quaternion)
            tilt = quat.normalize(np.array([np.sin(np.radians(6 if k % 2 else -6)), 0.0, 0.0, 1.0]))
            mixer.key("Neck", rotation_quaternion=quat.multiply(q, tilt), layer=nod)
        mixer.active_layer = nod
        mixer.time = 0.45
        editor.seek(0.45)
        mixer.evaluate()
        editor.select(None)
        for header in ("Display", "Bones", "Morph targets"):
            if header in session.panel.rects:
                click(session, header)
        click(session, "Mixer")
        click(session, "Wave")
        imgui.get_io().add_mouse_pos_event(1000.0, 800.0)  # no tooltip over the panel
        session.frame_model()
        session.run(3)
        return Image.fromarray(session.target.read()).convert("RGB")


def tweak_picture() -> Image.Image:
    scene = load_model(ROBOT)
    mixer = scene.mixer
    walk = mixer.action("Walking").play()
    duration = walk.clip.duration
    times = np.linspace(0.0, duration, 6)[:-1]
    cell = (260, 300)
    options = RenderOptions(show_skeleton=False, show_grid=True)
    rows = []
    with HeadlessRenderer(cell) as headless:
        mixer.time = 0.0
        camera = framed_camera(scene, yaw=25, pitch=8, aspect=cell[0] / cell[1])
        for tweaked in (False, True):
            if tweaked:
                mixer.time = 0.3
                head = mixer.target("Head")
                mixer.set_pose("Head", rotation_quaternion=quat.multiply(head.rotation_quaternion, TURN))
            row = []
            for t in times:
                mixer.time = float(t)
                image = Image.fromarray(headless.render(scene, camera, options)).convert("RGB")
                ImageDraw.Draw(image).text((8, cell[1] - 24), f"t = {t:.2f} s", fill=(235, 235, 235),
                                           font=ImageFont.load_default(size=16))
                row.append(image)
            rows.append(row)
    label_height = 30
    picture = Image.new("RGB", (cell[0] * len(times), 2 * (cell[1] + label_height)), (32, 32, 36))
    draw = ImageDraw.Draw(picture)
    font = ImageFont.load_default(size=18)
    labels = ["Walking, the clip alone",
              "Walking with the Tweaks layer: mixer.set_pose('Head', ...) turned the head 40 degrees once"]
    for r, (row, label) in enumerate(zip(rows, labels)):
        top = r * (cell[1] + label_height)
        draw.text((10, top + 6), label, fill=(235, 235, 235), font=font)
        for c, image in enumerate(row):
            picture.paste(image, (c * cell[0], top + label_height))
    return picture


def main() -> None:
    for name, make in (("mixer-tweak.png", tweak_picture), ("mixer-panel.png", panel_picture)):
        path = IMAGES / name
        make().save(path, optimize=True)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
