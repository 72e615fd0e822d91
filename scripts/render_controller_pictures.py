#!/usr/bin/env python3
"""Render the docs' controller pictures: docs/images/ik-reach.png and docs/images/look-at.png.

    .venv/bin/python scripts/render_controller_pictures.py

RobotExpressive (tests/data/gltf-samples) reaches for a ball with BoneIKController and turns
its head to another with BoneLookController; each ball is a small static mesh in the scene.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viewer import BoneIKController, BoneLookController, Space, load_gltf  # noqa: E402
from viewer.character import marker_ball  # noqa: E402
from viewer.camera import framed_camera  # noqa: E402
from viewer.options import RenderOptions  # noqa: E402
from viewer.render.headless import HeadlessRenderer  # noqa: E402

ROBOT = ROOT / "tests" / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
BALL_COLOR = (0.1, 0.75, 1.0, 1.0)



def ik_reach(headless: HeadlessRenderer) -> np.ndarray:
    scene = load_gltf(ROBOT)
    mesh = scene.skinned_meshes[0]
    forearm = mesh.skeleton.get_bone("LowerArm.L")
    target = np.array([2.0, 3.4, 1.0])
    BoneIKController(mesh, forearm, target_position=target, pole_angle=math.pi).update()
    # The IK puts the palm joint on the target; the ball sits just beyond it, in the fist.
    shoulder = forearm.get_parent().get_absolute_position(mesh)
    reach = (target - shoulder) / np.linalg.norm(target - shoulder)
    scene.static_meshes.append(marker_ball(target + 0.4 * reach, 0.18, BALL_COLOR))
    return headless.render(scene, framed_camera(scene, yaw=20), RenderOptions(show_skeleton=False))


def look_at(headless: HeadlessRenderer) -> np.ndarray:
    scene = load_gltf(ROBOT)
    mesh = scene.skinned_meshes[0]
    target = np.array([-2.5, 3.8, 1.6])
    BoneLookController(mesh, mesh.skeleton.get_bone("Head"), target, up_axis_space=Space.WORLD).update()
    scene.static_meshes.append(marker_ball(target, 0.2, BALL_COLOR))
    return headless.render(scene, framed_camera(scene, yaw=10), RenderOptions(show_skeleton=False))


def main() -> None:
    with HeadlessRenderer((640, 480)) as headless:
        for name, render in (("ik-reach.png", ik_reach), ("look-at.png", look_at)):
            path = ROOT / "docs" / "images" / name
            Image.fromarray(render(headless)).save(path)
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
