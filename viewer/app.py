"""The app level for scripts: load, pose and render in one call (wires loaders, pose files and
the headless renderer; owns no maths)."""

from __future__ import annotations

import numpy as np

from .camera import OrbitCamera
from .options import RenderOptions
from .render.headless import DEFAULT_SIZE, HeadlessRenderer


def render_image(model=None, pose=None, size=DEFAULT_SIZE, *, cpu_skinning: bool = False,
                 bone_texture: bool = False, skeleton: bool = True, grid: bool = True,
                 camera: OrbitCamera | None = None, **look) -> np.ndarray:
    """Render a model (a Scene, a path, or None for the built-in character) with an optional
    pose (a dict or a pose file path) to an RGBA uint8 array of shape (height, width, 4). A list
    of models: side by side in a row on one ground, each as loaded (the pose applies to the
    first).
    ``look``: environment ("studio", "none" or an .hdr path), environment_rotation (degrees),
    tone_mapping ("khr-neutral", "aces", "none"), exposure, show_environment, as the
    command line's options (checked the same way)."""
    from .editing.pose import apply_pose
    from .loaders import load_model
    from .look import checked_look

    look = checked_look(look)  # a bad environment file is refused before the model loads or GL starts
    if isinstance(model, (list, tuple)):
        scene = side_by_side(model)
        if pose is not None:
            apply_pose(scene[0].scene, pose)
    else:
        scene = load_model(model)
        if pose is not None:
            apply_pose(scene, pose)
    options = RenderOptions(show_skeleton=skeleton, show_grid=grid, cpu_skinning=cpu_skinning,
                            bone_texture=bone_texture, **look)
    with HeadlessRenderer(size, bone_storage=options.bone_storage, cpu_skinning=cpu_skinning) as headless:
        return headless.render(scene, camera, options)


def side_by_side(models):
    """A list of models (Scenes, paths) as PlacedScenes in a row, each posed as loaded, as
    render_image shows one (render_image's list)."""
    from .errors import ViewerError
    from .loaders import load_model
    from .model.placed import PlacedScenes

    if not models:
        raise ViewerError("an empty list of models: give one or more")
    scenes = [load_model(model) for model in models]
    return PlacedScenes.row(scenes, [scene.current_bounds() for scene in scenes])


def run_viewer(model=None, script=None, size=(1280, 720), frames=None, *, watch: bool = False,
               screenshot=None, play: bool = True, debug: bool = False, camera=None, **look) -> int:
    """Open the viewer window on ``model`` (a Scene, a path, or None for the built-in character;
    a list of them: side by side, the panel on the first, the rest playing their first clips at
    its playhead) and run it until it is closed, or for ``frames`` frames (``screenshot``: save the last one).

    ``script`` is a path to a .py file or any object with ``setup(app)`` and/or
    ``update(app, t, dt)`` (see viewer.editing.script_app.App), so a notebook or a training loop can open a
    window that it drives (with a list of models it sees them all: ``app.scenes``,
    ``app.find_bone(name, model=k)``); ``watch`` reloads a script file when it is saved. Raises
    viewer.ui.window.WindowUnavailable (a ViewerError) when no window can be opened here.
    ``camera``: where the view starts, a dict with the ``--camera`` file's keys (yaw, pitch,
    distance, target, fov) or a viewer.camera.CameraDescription; what it leaves out is framed.
    ``look``: the look it starts with, as render_image takes it (the panel's Display section and
    a script's ``app.environment`` and the rest change it); shadows are on unless ``shadows=False``.
    """
    from pathlib import Path

    from .camera import CameraDescription
    from .errors import ViewerError
    from .loaders import load_model
    from .look import checked_look
    from .model import Scene

    look = checked_look({"shadows": True, **look})  # the window draws shadows by default
    if isinstance(camera, dict):
        camera = CameraDescription.from_dict(camera, "camera")
    if isinstance(script, (str, Path)):
        from .editing.script import check_script_path

        check_script_path(script, "script")
    companions = []
    if isinstance(model, (list, tuple)):  # several: the first with the panel, the rest beside it
        if not model:
            raise ViewerError("an empty list of models: give one or more")
        loaded = [load_model(m) for m in model]
        companions = [(s, s.animations[0] if s.animations else None) for s in loaded[1:]]
        model = loaded[0]
    scene = load_model(model)
    if isinstance(model, Scene):
        name = model.name or "scene"
    else:
        name = "built-in character" if model is None else Path(model).name
    from .ui.window import ViewerWindow

    window = ViewerWindow(scene, name, size=tuple(size), play=play, script=script, watch=watch, debug=debug,
                          camera=camera, look=look, companions=companions)
    return window.run(frames=frames, screenshot=None if screenshot is None else str(screenshot))
