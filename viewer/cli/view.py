"""`boneviewer view` (the default command): the window, or a PNG where no display can be opened."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..images import check_png_path
from .common import (ModelsAction, add_shadow_options, shadow_options, DEFAULT_PNG, add_expression_option, add_skinning_option, add_springs_option, add_frame_options, add_listen_options, add_look_options, add_motion_options,
                     apply_pose_data, frame_options, has_display, load_scene, look_namespace, look_options,
                     motion_namespace, positive_int, read_pose, scene_index, size)
from .render import add_camera_arguments, camera_description, render_command


def add_parser(commands, common):
    view = commands.add_parser("view", parents=[common], help="open the interactive viewer (the default command)",
                               description="Open MODEL (default: the built-in character) in a window with the "
                                           "pose panel; an animated model plays its first clip. With no display "
                                           "(or one that cannot be opened), render a PNG instead and say where.")
    view.add_argument("models", nargs="*", metavar="MODEL", action=ModelsAction,
                      help="model file: .gltf, .glb, .fbx, .usd/.usda/.usdc/.usdz or .bvh (default: the built-in "
                           "character); several: side by side in a row on one ground, each playing its first clip "
                           "at the first one's playhead (the panel works on the first)")
    view.add_argument("--size", type=size, default=(1280, 720), help="window size WIDTHxHEIGHT (default 1280x720)")
    view.add_argument("--scene", type=scene_index, metavar="N",
                      help="which scene of a glTF file to show (default: the file's default scene)")
    view.add_argument("--pose", type=Path,
                      help="pose JSON file to apply at start (an animated model starts paused at its first "
                           "clip's start, with the pose over it)")
    view.add_argument("--rest", action="store_true", help="start paused in the rest pose (no animation applied)")
    view.add_argument("--frames", type=positive_int, help="exit after N frames (for tests and scripts)")
    view.add_argument("--screenshot", type=Path, help="save the last frame to this PNG (with --frames)")
    view.add_argument("--script", type=Path, metavar="FILE.py",
                      help="a Python script that drives the viewer: setup(app) after loading, update(app, t, dt) "
                           "every frame (see docs/scripts.md: the app object); it runs with your own rights; with "
                           "several models it sees them all (app.scenes, app.find_bone(NAME, model=K))")
    view.add_argument("--watch", action="store_true",
                      help="reload --script (and --pose) in the running window when the file is saved")
    add_camera_arguments(view)
    add_skinning_option(view)
    add_springs_option(view)
    add_frame_options(view)  # how the window starts (the panel's Display section changes it)
    add_look_options(view)
    add_shadow_options(view, default=True)
    add_listen_options(view, required=False)
    add_motion_options(view)
    add_expression_option(view)
    view.set_defaults(run=run, model=None)


def run(args) -> int:
    return view_command(args)


VIEW_ONE_MODEL_OPTIONS = (("--pose", "pose"), ("--motion", "motion"), ("--scene", "scene"), ("--listen", "listen"))


def view_command(args) -> int:
    """The window; without a usable display, a PNG of the model, and where it went."""
    from ..errors import ViewerError

    if args.screenshot is not None and args.frames is None:
        raise ViewerError("--screenshot saves the last frame of a --frames N run; give --frames too")
    if args.screenshot is not None:
        check_png_path("--screenshot", args.screenshot)
    if args.rest and args.pose is not None:
        raise ViewerError("--rest and --pose: give one of them")
    if args.script is not None:
        from ..editing.script import check_script_path

        check_script_path(args.script)
    if args.watch and args.script is None and args.pose is None:
        raise ViewerError("--watch reloads --script (and --pose) when saved: give --script FILE.py or --pose")
    models = list(getattr(args, "models", None) or [])
    if len(models) > 1:
        given = [option for option, dest in VIEW_ONE_MODEL_OPTIONS if getattr(args, dest, None) not in (None, False)]
        if given:
            raise ViewerError(f"{' and '.join(given)} act{'s' if len(given) == 1 else ''} on one model: leave "
                              f"{'it' if len(given) == 1 else 'them'} out with several models")
    camera = camera_description(args)  # checked before a window opens
    look = look_options(args)  # as is the --environment file
    look.update(shadow_options(args))
    frame = frame_options(args)
    for option, value in (("--token", args.token), ("--max-clients", args.max_clients)):
        if value is not None and args.listen is None:
            raise ViewerError(f"{option} goes with --listen [HOST:]PORT")
    if not has_display():
        if args.listen is not None:
            raise ViewerError("--listen needs a window and there is no display; `boneviewer serve MODEL --listen "
                              "[HOST:]PORT` serves with no window")
        return render_instead(args, "no display")
    if len(models) > 1:
        from .render import load_several

        args.animation = None
        loaded = load_several(args)  # any that fails to load: one line, before the window opens
        scene, companions = loaded[0][0], loaded[1:]
    else:
        scene, companions = load_scene(args), []
    if args.pose is not None:
        pose = read_pose(args.pose)
        if scene.animations:
            scene.animations[0].apply(0.0)  # as `render` shows it: the first clip's start, then the pose
        apply_pose_data(scene, pose, args.pose)
    from ..ui.window import ViewerWindow, WindowUnavailable

    name = Path(args.model).name if args.model else "built-in character"
    try:
        window = ViewerWindow(scene, name, size=args.size, play=args.pose is None and not args.rest,
                              script=args.script, watch=args.watch, pose_path=args.pose, debug=args.debug,
                              camera=camera, look=look, frame=frame, companions=companions)
    except WindowUnavailable as error:
        if args.debug:
            print(f"boneviewer: {error}", file=sys.stderr)
        display = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
        if args.listen is not None:
            raise ViewerError(f"--listen needs a window: cannot open one on display {display}") from None
        return render_instead(args, f"cannot open a window on display {display}")
    if args.listen is not None:
        from .common import start_listening

        try:
            window.attach_remote(start_listening(args))
        except BaseException:
            window.close()
            raise
    return window.run(frames=args.frames, screenshot=str(args.screenshot) if args.screenshot else None)


def render_instead(args, reason: str) -> int:
    """`view` with no usable display: render what the window would show to a PNG (--screenshot,
    else boneviewer.png, or boneviewer-1.png, -2, ... the first not taken: never over a file)."""
    from ..files import unused_name

    out = unused_name(DEFAULT_PNG) if args.screenshot is None else args.screenshot
    check_png_path("--screenshot" if args.screenshot else "output", out)
    models = list(getattr(args, "models", None) or [])
    what = f"{len(models)} models side by side" if len(models) > 1 else args.model or "the built-in character"
    render_args = argparse.Namespace(
        model=args.model, models=list(getattr(args, "models", None) or []), out=out, size=args.size, pose=args.pose, cpu_skinning=False, bone_texture=False,
        no_skeleton=args.no_skeleton, no_grid=args.no_grid, yaw=args.yaw, pitch=args.pitch, target=args.target, distance=args.distance,
        fov=args.fov, camera=args.camera, background=args.background, show_environment=args.show_environment,
        animation=None, time=None,
        rest=args.rest, frames=None, skinning=args.skinning, out_dir=None, gif=None, mp4=None, fps=None, turntable=None, script=args.script,
        debug=args.debug, scene=args.scene, weights=None, bone_map=False, weight_check=False, axes=None,
        expressions=args.expressions, show_source=False,
        shadows=args.shadows, shadow_intensity=args.shadow_intensity, shadow_softness=args.shadow_softness,
        key_light=args.key_light, **motion_namespace(args), **look_namespace(args))
    status = render_command(render_args)
    # Said once it is done: a model that fails to load gets its error line alone.
    if status == 0:
        print(f"boneviewer: {reason}; rendered {what} to {out.resolve()} instead of a window", flush=True)
    return status
