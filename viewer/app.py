"""The app level for scripts: load, pose and render in one call (wires loaders, pose files and
the headless renderer; owns no maths)."""

from __future__ import annotations

import numpy as np

from .camera import OrbitCamera
from .options import RenderOptions
from .render.headless import DEFAULT_SIZE, HeadlessRenderer


def render_image(model=None, pose=None, size=DEFAULT_SIZE, *, cpu_skinning: bool = False,
                 bone_texture: bool = False, skeleton: bool = True, grid: bool = True,
                 camera: OrbitCamera | None = None) -> np.ndarray:
    """Render a model (a Scene, a path, or None for the built-in character) with an optional
    pose (a dict or a pose file path) to an RGBA uint8 array of shape (height, width, 4)."""
    from .loaders import load_model
    from .pose import apply_pose

    scene = load_model(model)
    if pose is not None:
        apply_pose(scene, pose)
    options = RenderOptions(show_skeleton=skeleton, show_grid=grid, cpu_skinning=cpu_skinning,
                            bone_texture=bone_texture)
    with HeadlessRenderer(size, bone_storage=options.bone_storage, cpu_skinning=cpu_skinning) as headless:
        return headless.render(scene, camera, options)
