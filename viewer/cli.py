"""The ``boneviewer`` command: wires the layers together; owns no maths.

User mistakes (ViewerError) print one line on stderr and exit 2; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from .camera import VIEW_PITCH, VIEW_YAW
from .images import check_output_file, check_png_path, write_png

DEFAULT_PNG = "boneviewer.png"


def _size(text: str):
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 800x600, got {text!r}") from None
    if not (1 <= width <= 16384 and 1 <= height <= 16384):
        raise argparse.ArgumentTypeError(f"{text}: each side must be 1..16384 pixels")
    return width, height


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit 2, like every other user error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _scene_index(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a scene number (0, 1, ...), got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: scene numbers start at 0")
    return value


def _positive_finite(text: str) -> float:
    value = _finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text}: must be more than 0")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: must be at least 1")
    return value


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text}: must be a finite number")
    return value


def _pitch(text: str) -> float:
    value = _finite(text)
    if not -89.0 <= value <= 89.0:
        raise argparse.ArgumentTypeError(f"{text}: must be between -89 and 89 degrees")
    return value


def _frames(text: str):
    try:
        start, end, step = (float(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected START:END:STEP in seconds such as 0:2:0.1, got {text!r}") from None
    if not all(map(math.isfinite, (start, end, step))) or step <= 0 or end < start:
        raise argparse.ArgumentTypeError(f"{text}: need START <= END and STEP > 0")
    count = int(math.floor((end - start) / step + 1e-9)) + 1
    if count > 100_000:
        raise argparse.ArgumentTypeError(f"{text}: {count} frames is too many (at most 100000)")
    return [start + i * step for i in range(count)]


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="boneviewer",
        description="GPU-skinned skeletal-mesh viewer and pose editor with Babylon.js bone semantics. "
                    "`boneviewer [MODEL]` opens the viewer (the `view` command).",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors (also after the command)")
    parser.add_argument("--version", action="version", version=f"boneviewer {_version()}")
    # --debug after the command too; SUPPRESS keeps a subcommand from resetting it to False.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks for errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    render = commands.add_parser("render", parents=[common], help="render a model to a PNG, headless",
                                 description="Render MODEL (default: the built-in character) to a PNG "
                                             "offscreen, on EGL; no display or GPU needed. An animated model is "
                                             "shown at --time of its first clip (or --animation), unless --rest; "
                                             "the camera frames what is drawn (for --frames, every frame).")
    render.add_argument("model", nargs="?", help="model file, .gltf or .glb (default: the built-in character)")
    render.add_argument("--out", type=Path, help="PNG file to write (or --frames with --out-dir)")
    render.add_argument("--scene", type=_scene_index, metavar="N",
                        help="which scene of a glTF file to show (default: the file's default scene)")
    render.add_argument("--size", type=_size, default=(800, 600), help="WIDTHxHEIGHT (default 800x600)")
    render.add_argument("--pose", type=Path, help="pose JSON file to apply (after the animation, over it)")
    render.add_argument("--cpu-skinning", action="store_true", help="skin vertices in numpy instead of the shader")
    render.add_argument("--bone-texture", action="store_true", help="bone matrices in a texture, not a uniform array")
    render.add_argument("--no-skeleton", action="store_true", help="hide the skeleton overlay")
    render.add_argument("--no-grid", action="store_true", help="hide the ground grid")
    render.add_argument("--animation", metavar="NAME|INDEX",
                        help="animation to sample (default: the first, when the model has any)")
    render.add_argument("--time", type=_finite, help="animation time in seconds (default 0; loops past the end)")
    render.add_argument("--rest", action="store_true",
                        help="the model's rest pose, as loaded: apply no animation (not with --animation, "
                             "--time or --frames)")
    render.add_argument("--frames", type=_frames, metavar="START:END:STEP",
                        help="render a PNG sequence at these times (seconds, END included) into --out-dir")
    render.add_argument("--out-dir", type=Path, help="folder for --frames (created if missing)")
    render.add_argument("--gif", type=Path, metavar="OUT.gif",
                        help="write the --frames (or --turntable) sequence as one animated GIF")
    render.add_argument("--mp4", type=Path, metavar="OUT.mp4",
                        help="write the sequence as an MP4 video (needs the 'video' extra: imageio-ffmpeg)")
    render.add_argument("--fps", type=_positive_finite, metavar="N",
                        help="frames per second of --gif/--mp4 (default: 1/STEP of --frames, else 25)")
    render.add_argument("--turntable", type=_positive_int, metavar="N",
                        help="N frames of the pose at --time with the camera going once round the model")
    render.add_argument("--yaw", type=_finite, default=VIEW_YAW,
                        help=f"camera yaw in degrees (default {VIEW_YAW:g}, the viewer's; 0: from the front)")
    render.add_argument("--pitch", type=_pitch, default=VIEW_PITCH,
                        help=f"camera pitch in degrees, -89..89 (default {VIEW_PITCH:g}; positive: from above)")
    skin = render.add_mutually_exclusive_group()
    skin.add_argument("--weights", metavar="BONE",
                      help="shade the mesh by BONE's skin weight, 0 blue to 1 red (Blender's weight ramp)")
    skin.add_argument("--bone-map", action="store_true",
                      help="colour each vertex by the bone with its largest weight (a stable colour per bone)")
    skin.add_argument("--weight-check", action="store_true",
                      help="print how many vertices have weights that do not sum to 1 (as the file gives them) "
                           "or more than 8 influences, and show them in magenta")
    render.add_argument("--axes", metavar="all|selected|BONE",
                        help="draw bones' local X/Y/Z axes (red, green, blue, a fixed size on screen): every bone's "
                             "(all), the --weights bone's (selected), or BONE's (which the overlay then highlights)")
    render.add_argument("--script", type=Path, metavar="FILE.py",
                        help="a Python script whose setup(app) runs after loading and update(app, t, dt) before "
                             "each frame (t: the sequence time, dt: the --frames step); a script error prints "
                             "one line, keeps the last good pose and exits 1 after writing the frames")

    view = commands.add_parser("view", parents=[common], help="open the interactive viewer (the default command)",
                               description="Open MODEL (default: the built-in character) in a window with the "
                                           "pose panel; an animated model plays its first clip. With no display "
                                           "(or one that cannot be opened), render a PNG instead and say where.")
    view.add_argument("model", nargs="?", help="model file, .gltf or .glb (default: the built-in character)")
    view.add_argument("--size", type=_size, default=(1280, 720), help="window size WIDTHxHEIGHT (default 1280x720)")
    view.add_argument("--scene", type=_scene_index, metavar="N",
                      help="which scene of a glTF file to show (default: the file's default scene)")
    view.add_argument("--pose", type=Path,
                      help="pose JSON file to apply at start (an animated model starts paused at its first "
                           "clip's start, with the pose over it)")
    view.add_argument("--rest", action="store_true", help="start paused in the rest pose (no animation applied)")
    view.add_argument("--frames", type=_positive_int, help="exit after N frames (for tests and scripts)")
    view.add_argument("--screenshot", type=Path, help="save the last frame to this PNG (with --frames)")
    view.add_argument("--script", type=Path, metavar="FILE.py",
                      help="a Python script that drives the viewer: setup(app) after loading, update(app, t, dt) "
                           "every frame (see the README's app object); it runs with your own rights")
    view.add_argument("--watch", action="store_true",
                      help="reload --script (and --pose) in the running window when the file is saved")

    bench = commands.add_parser("bench", parents=[common], help="print performance figures (skeleton update, "
                                                                "rendering)",
                                description="Benchmarks, printed as a table; not a test.")
    bench.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    bench.add_argument("--animation", nargs="+", metavar="MODEL", default=[],
                       help="also time one animation frame (clip apply, prepare, upload array) of these glTF "
                            "files, e.g. Fox.glb CesiumMan.glb")
    bench.add_argument("--no-render", action="store_true", help="skip the rendering table")
    return parser


def _version() -> str:
    from . import __version__

    return __version__


def render_command(args) -> int:
    from .errors import ViewerError
    from .loaders import load_model
    from .camera import framed_camera
    from .model.animation import clip_time
    from .model.weights import weight_check
    from .options import RenderOptions
    from .render.headless import HeadlessRenderer

    check_outputs(args)
    if args.rest:
        given = [name for name, value in (("--animation", args.animation), ("--time", args.time),
                                          ("--frames", args.frames)) if value is not None]
        if given:
            raise ViewerError(f"--rest shows the pose without animation: leave out {' and '.join(given)}")
    script = getattr(args, "script", None)
    if script is not None:
        from .script import check_script_path

        check_script_path(script)
        return render_scripted(args)
    scene = load_model(args.model, args.scene)
    clip = None if args.rest else select_animation(scene, args.animation)
    if clip is None and not args.rest and (args.time is not None or args.frames is not None):
        what = "--time" if args.frames is None else "--frames"
        _logger().warning(f"{what}: {args.model or 'the built-in character'} has no animations; "
                          "rendering its pose as loaded")
    pose = read_pose(args.pose)
    times = sequence_times(args)
    paint, axes, selected = skin_view(args, scene)

    def pose_at(time):
        if clip is not None:
            clip.apply(clip_time(time, clip.duration))
        if pose is not None:
            apply_pose_data(scene, pose, args.pose)  # the pose file overrides animated bones

    # One camera for the whole sequence, framed on every pose it shows (a turntable: on every side).
    aspect = args.size[0] / args.size[1]
    if args.turntable is not None:
        pose_at(times[0])
        cameras = turntable_cameras(scene, args.turntable, args.yaw, args.pitch, aspect)
    else:
        cameras = [framed_camera(scene, yaw=args.yaw, pitch=args.pitch, aspect=aspect, times=times,
                                 pose_at=pose_at)] * len(times)
    options = RenderOptions(show_skeleton=not args.no_skeleton, show_grid=not args.no_grid,
                            cpu_skinning=args.cpu_skinning, bone_texture=args.bone_texture, paint=paint, axes=axes,
                            selected_bone=selected)
    output = open_output(args, times)
    if args.weight_check:
        print(f"weight check: {weight_check(scene)}")
    with HeadlessRenderer(args.size, bone_storage=options.bone_storage, cpu_skinning=options.cpu_skinning) as headless:
        progress = Progress(len(times)) if len(times) > 1 else None
        for number, (time, camera) in enumerate(zip(times, cameras)):
            pose_at(time)
            output.write(headless.render(scene, camera, options))
            if progress is not None:
                progress.update(number + 1)
    if progress is not None:
        progress.close()
    print(f"wrote {output.close()} ({args.size[0]}x{args.size[1]})")
    return 0


def check_outputs(args) -> None:
    """Exactly one output that suits a single image or a sequence, checked before any work."""
    from .errors import ViewerError

    sequence = args.frames is not None or args.turntable is not None
    if args.frames is not None and args.turntable is not None:
        raise ViewerError("--turntable N renders N frames of one pose: leave out --frames")
    if args.turntable is not None and getattr(args, "script", None) is not None:
        raise ViewerError("--turntable turns the camera itself; with --script, turn app.camera in the script")
    given = [name for name, value in (("--out", args.out), ("--out-dir", args.out_dir), ("--gif", args.gif),
                                      ("--mp4", args.mp4)) if value is not None]
    if len(given) > 1:
        raise ViewerError(f"give one output, not {' and '.join(given)}")
    if not given:
        raise ViewerError("give --out FILE.png (or --frames START:END:STEP with --out-dir DIR, --gif or --mp4)")
    if sequence and args.out is not None:
        raise ViewerError(f"{'--frames' if args.frames is not None else '--turntable'} writes a sequence: give "
                          "--out-dir DIR, --gif OUT.gif or --mp4 OUT.mp4 (not --out)")
    if not sequence and args.out is None:
        raise ViewerError(f"{given[0]} goes with --frames START:END:STEP or --turntable N")
    if args.fps is not None and args.gif is None and args.mp4 is None:
        raise ViewerError("--fps sets the speed of --gif or --mp4")
    if args.out is not None:
        check_png_path("--out", args.out)
    if args.out_dir is not None:
        check_creatable_folder("--out-dir", args.out_dir)
    for option, path, suffix in (("--gif", args.gif, ".gif"), ("--mp4", args.mp4, ".mp4")):
        if path is not None:
            check_output_file(option, path, suffix)
    if args.mp4 is not None and (args.size[0] % 2 or args.size[1] % 2):
        raise ViewerError(f"--mp4: the video needs an even width and height, not {args.size[0]}x{args.size[1]}")


def sequence_times(args) -> list[float]:
    if args.frames is not None:
        return args.frames
    return [args.time or 0.0] * (args.turntable or 1)


def open_output(args, times):
    """Where the frames go: one PNG, a PNG sequence, or an animation file."""
    from .errors import ViewerError
    from .images import AnimationFile, PngSequence

    if args.out is not None:
        return SinglePng(args.out)
    if args.out_dir is not None:
        try:
            args.out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ViewerError(f"--out-dir {args.out_dir}: cannot create it: {error.strerror}") from None
        return PngSequence(args.out_dir)
    fps = args.fps
    if fps is None:
        step = times[1] - times[0] if args.frames is not None and len(times) > 1 else 0.0
        fps = 1.0 / step if step > 0 else 25.0
    return AnimationFile(args.gif if args.gif is not None else args.mp4, min(fps, 100.0))


class SinglePng:
    def __init__(self, path: Path):
        self.path = path

    def write(self, pixels) -> None:
        write_png(self.path, pixels)

    def close(self) -> str:
        return str(self.path)


def turntable_cameras(scene, count: int, yaw: float, pitch: float, aspect: float):
    """``count`` cameras going once round the posed model from ``yaw``, all at one distance
    and aimed at one point, so the model turns in place and stays whole on every side."""
    import numpy as np

    from .camera import OrbitCamera, framed_camera

    yaws = [yaw + 360.0 * k / count for k in range(count)]
    framed = [framed_camera(scene, yaw=y, pitch=pitch, aspect=aspect) for y in yaws[:: max(1, count // 24)]]
    low, high = scene.current_bounds()
    target = (low + high) / 2.0
    # Framing at each side aims at a slightly different point; from the box centre the model
    # may reach a little further from the middle of the image: keep 10% more distance.
    distance = 1.1 * max(camera.distance + float(np.linalg.norm(camera.target - target)) for camera in framed)
    return [OrbitCamera(target=target, distance=distance, yaw=y, pitch=pitch) for y in yaws]


def render_scripted(args) -> int:
    """`render --script`: as render_command, with the script's setup and update in each frame.

    Deterministic: t is the sequence time (or --time), dt the --frames step (0 for one image).
    The camera is framed on a dry run of the whole sequence (the script included) on a fresh
    copy of the model, unless the script's setup placed the camera itself; the real run then
    starts again from the freshly loaded model and a freshly loaded script.
    """
    from .app_api import HeadlessApp
    from .camera import OrbitCamera, framed_camera
    from .errors import ViewerError
    from .loaders import load_model
    from .model.weights import weight_check
    from .options import RenderOptions
    from .render.headless import HeadlessRenderer
    from .script import ScriptRunner

    times = sequence_times(args)
    step = times[1] - times[0] if len(times) > 1 else 0.0
    pose = read_pose(args.pose)
    aspect = args.size[0] / args.size[1]

    def start(quiet: bool):
        logger = _logger()
        logger.disabled = not quiet  # the model's warnings were told by the first (quiet) load
        try:
            scene = load_model(args.model, args.scene)
        finally:
            logger.disabled = False
        clip = None if args.rest else select_animation(scene, args.animation)
        index = None if clip is None else scene.animations.index(clip)
        placeholder = OrbitCamera(yaw=args.yaw, pitch=args.pitch)
        app = HeadlessApp(scene, args.size, camera=placeholder, clip_index=index)
        app.muted = quiet
        app.begin_frame(times[0], 0)
        if pose is not None:
            apply_pose_data(scene, pose, args.pose)
        runner = ScriptRunner(args.script, debug=getattr(args, "debug", False), quiet=quiet)
        runner.start(app)
        return scene, app, runner, placeholder

    def pose_frame(app, runner, number, time, scene):
        app.begin_frame(time, number)
        if pose is not None:
            apply_pose_data(scene, pose, args.pose)  # the pose file overrides animated bones
        runner.update(app, time, step)

    scene, app, runner, placeholder = start(quiet=True)  # the dry run: faults are told in the real one
    camera, unplaced = app.camera, OrbitCamera()
    script_placed_camera = (camera is not placeholder or camera.distance != unplaced.distance
                            or any(camera.target != unplaced.target))
    if not script_placed_camera:
        numbers = iter(range(len(times)))
        camera = framed_camera(scene, yaw=camera.yaw, pitch=camera.pitch, aspect=aspect, times=times,
                               pose_at=lambda time: pose_frame(app, runner, next(numbers), time, scene))
    scene, app, runner, _ = start(quiet=False)  # the real run starts from scratch
    if not script_placed_camera:
        app.camera = camera
    paint, axes, chosen = skin_view(args, scene, scripted=True)
    options = RenderOptions(show_skeleton=not args.no_skeleton, show_grid=not args.no_grid,
                            cpu_skinning=args.cpu_skinning, bone_texture=args.bone_texture, paint=paint, axes=axes)
    output = open_output(args, times)
    if args.weight_check:
        print(f"weight check: {weight_check(scene)}")
    with HeadlessRenderer(args.size, bone_storage=options.bone_storage, cpu_skinning=options.cpu_skinning) as headless:
        progress = Progress(len(times)) if len(times) > 1 else None
        for number, time in enumerate(times):
            pose_frame(app, runner, number, time, scene)
            # As without a script; a bone the script selects wins over --weights/--axes BONE.
            options.selected_bone = app.selected_bone if app.selection_made else chosen
            pixels = headless.render(scene, app.camera, options)
            output.write(pixels)
            for path in app.pending_screenshots:
                write_png(path, pixels)
            app.pending_screenshots.clear()
            if progress is not None:
                progress.update(number + 1)
            if app.closed:
                break
    if progress is not None:
        progress.close()
    print(f"wrote {output.close()} ({args.size[0]}x{args.size[1]})")
    if runner.last_error is not None:
        return 1
    return 0


def skin_view(args, scene, scripted: bool = False):
    """(Paint, Axes, selected bone or None) for --weights, --bone-map, --weight-check and --axes,
    checked against the model: its skin, its bones' names, one chosen bone."""
    from .errors import ViewerError
    from .options import Axes, Paint

    paint, option = Paint.SHADED, None
    for name, mode in (("--weights", Paint.WEIGHTS), ("--bone-map", Paint.BONE_MAP),
                       ("--weight-check", Paint.WEIGHT_CHECK)):
        if getattr(args, name[2:].replace("-", "_"), None):
            paint, option = mode, name
    model = args.model or "the built-in character"
    if (option or args.axes is not None) and not scene.skeletons:
        raise ViewerError(f"{option or '--axes'}: {model} has no skin (no bones and no weights to show)")
    selected = None if args.weights is None else named_bone(scene, "--weights", args.weights)
    axes = Axes.NONE
    if args.axes == "all":
        axes = Axes.ALL
    elif args.axes == "selected":
        if selected is None and not scripted:
            raise ViewerError("--axes selected draws the --weights bone's axes: give --weights BONE, or --axes BONE "
                              "or --axes all")
        axes = Axes.SELECTED
    elif args.axes is not None:
        bone = named_bone(scene, "--axes", args.axes)
        if selected is not None and bone is not selected:
            raise ViewerError(f"--axes {args.axes} and --weights {args.weights} choose two bones: give --axes "
                              "selected for the --weights bone's axes")
        axes, selected = Axes.SELECTED, bone
    return paint, axes, selected


def named_bone(scene, option: str, name: str):
    """The model's bone of that name, or an error listing its bones (as pose files do)."""
    return scene.require_bone(name, f"{option} {name}")


def check_creatable_folder(option: str, folder: Path) -> None:
    """A folder that exists or can be made: its nearest existing ancestor is a writable folder."""
    from .errors import ViewerError

    existing = folder.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing == folder.absolute() and not existing.is_dir():
        raise ViewerError(f"{option} {folder}: is a file, not a folder")
    if not existing.is_dir():
        raise ViewerError(f"{option} {folder}: cannot create it: {existing} is a file")
    if not os.access(existing, os.W_OK):
        raise ViewerError(f"{option} {folder}: cannot create it: {existing} is not writable")


def read_pose(path):
    """The validated pose file, read once (None: no pose)."""
    from .pose import load_pose

    return None if path is None else load_pose(path)


def apply_pose_data(scene, pose: dict, path) -> None:
    from .pose import apply_pose

    apply_pose(scene, {"bones": pose}, source=f"pose file {path}")


def _logger():
    import logging

    return logging.getLogger("boneviewer")


def select_animation(scene, spec):
    """The clip named or numbered by ``spec``; the first clip when spec is None; or None."""
    from .errors import ViewerError

    clips = scene.animations
    if spec is None:
        return clips[0] if clips else None
    if not clips:
        raise ViewerError(f"--animation {spec}: this model has no animations")
    names = [clip.name for clip in clips]
    if spec in names:
        return clips[names.index(spec)]
    if spec.lstrip("-").isdigit():
        index = int(spec)
        if 0 <= index < len(clips):
            return clips[index]
    listed = ", ".join(f"{i}: {name}" for i, name in enumerate(names))
    raise ViewerError(f"--animation {spec}: no such animation (this model has {listed})")


class Progress:
    """A one-line progress bar on stderr, redrawn in place when stderr is a terminal."""

    def __init__(self, total: int):
        self.total, self.interactive = total, sys.stderr.isatty()
        self.started = __import__("time").perf_counter()

    def update(self, done: int) -> None:
        elapsed = __import__("time").perf_counter() - self.started
        filled = int(30 * done / self.total)
        line = f"[{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total} frames, {elapsed:.1f} s"
        if self.interactive:
            print(f"\r{line}", end="", file=sys.stderr, flush=True)
        elif done == self.total or done % max(1, self.total // 10) == 0:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.interactive:
            print(file=sys.stderr)


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def view_command(args) -> int:
    """The window; without a usable display, a PNG of the model, and where it went."""
    from .errors import ViewerError
    from .loaders import load_model

    if args.screenshot is not None and args.frames is None:
        raise ViewerError("--screenshot saves the last frame of a --frames N run; give --frames too")
    if args.screenshot is not None:
        check_png_path("--screenshot", args.screenshot)
    if args.rest and args.pose is not None:
        raise ViewerError("--rest and --pose: give one of them")
    if args.script is not None:
        from .script import check_script_path

        check_script_path(args.script)
    if args.watch and args.script is None and args.pose is None:
        raise ViewerError("--watch reloads --script (and --pose) when saved: give --script FILE.py or --pose")
    if not has_display():
        return render_instead(args, "no display")
    scene = load_model(args.model, args.scene)
    if args.pose is not None:
        pose = read_pose(args.pose)
        if scene.animations:
            scene.animations[0].apply(0.0)  # as `render` shows it: the first clip's start, then the pose
        apply_pose_data(scene, pose, args.pose)
    from .ui.window import ViewerWindow, WindowUnavailable

    name = Path(args.model).name if args.model else "built-in character"
    try:
        window = ViewerWindow(scene, name, size=args.size, play=args.pose is None and not args.rest,
                              script=args.script, watch=args.watch, pose_path=args.pose, debug=args.debug)
    except WindowUnavailable as error:
        if args.debug:
            print(f"boneviewer: {error}", file=sys.stderr)
        display = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
        return render_instead(args, f"cannot open a window on display {display}")
    return window.run(frames=args.frames, screenshot=str(args.screenshot) if args.screenshot else None)


def render_instead(args, reason: str) -> int:
    """`view` with no usable display: render what the window would show to a PNG."""
    out = Path(DEFAULT_PNG) if args.screenshot is None else args.screenshot
    check_png_path("--screenshot" if args.screenshot else "output", out)
    what = args.model or "the built-in character"
    print(f"boneviewer: {reason}; rendering {what} to {out.resolve()}", flush=True)
    render_args = argparse.Namespace(
        model=args.model, out=out, size=args.size, pose=args.pose, cpu_skinning=False, bone_texture=False,
        no_skeleton=False, no_grid=False, yaw=VIEW_YAW, pitch=VIEW_PITCH, animation=None, time=None,
        rest=args.rest, frames=None, out_dir=None, gif=None, mp4=None, fps=None, turntable=None, script=args.script,
        debug=args.debug, scene=args.scene, weights=None, bone_map=False, weight_check=False, axes=None)
    return render_command(render_args)


COMMANDS = ("render", "view", "bench")
MODEL_SUFFIXES = (".gltf", ".glb")


def _default_to_view(argv: list[str], parser) -> list[str]:
    """`boneviewer` and `boneviewer MODEL` mean `boneviewer view [MODEL]`; any other first
    word that is not a command is a usage error (a typo must not be taken for a model)."""
    words = [a for a in argv if a != "--debug"]
    first = words[0] if words else None
    if first in COMMANDS or first in ("-h", "--help", "--version"):
        return argv
    if first is None or first.startswith("-") or _looks_like_model(first):
        return ["view", *argv]
    parser.error(f"unknown command {first!r}; the commands are {', '.join(COMMANDS)}, "
                 f"and a model is a file that exists or ends in .gltf or .glb")


def _looks_like_model(word: str) -> bool:
    return Path(word).exists() or word.lower().endswith(MODEL_SUFFIXES) or "/" in word or os.sep in word


def _show_warnings() -> None:
    """Loader warnings (tolerated flaws in a file) as one line each on stderr."""
    import logging

    logger = logging.getLogger("boneviewer")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("boneviewer: warning: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False


def main(argv: list[str] | None = None) -> int:
    from .errors import ViewerError

    parser = _build_parser()
    argv = _default_to_view(sys.argv[1:] if argv is None else list(argv), parser)
    args = parser.parse_args(argv)
    _show_warnings()
    try:
        if args.command == "render":
            return render_command(args)
        if args.command == "view":
            return view_command(args)
        if args.command == "bench":
            from .bench import main as bench_main

            return bench_main(args)
        parser.print_help()
        return 0
    except ViewerError as error:
        if args.debug:
            raise
        print(f"boneviewer: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
