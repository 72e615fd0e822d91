"""`boneviewer render`: a model to a PNG, a PNG sequence, a GIF or an MP4, headless."""

from __future__ import annotations

from pathlib import Path

from ..camera import VIEW_PITCH, VIEW_YAW
from ..images import check_output_file, check_png_path, write_png
from .common import (Progress, add_motion_options, apply_pose_data, check_creatable_folder, finite, frames, load_scene,
                     logger, named_bone, pitch, positive_finite, positive_int, read_pose, scene_index, select_animation, size)


def add_parser(commands, common):
    render = commands.add_parser("render", parents=[common], help="render a model to a PNG, headless",
                                 description="Render MODEL (default: the built-in character) to a PNG "
                                             "offscreen, on EGL; no display or GPU needed. An animated model is "
                                             "shown at --time of its first clip (or --animation), unless --rest; "
                                             "the camera frames what is drawn (for --frames, every frame).")
    render.add_argument("model", nargs="?", help="model file, .gltf or .glb (default: the built-in character)")
    render.add_argument("--out", type=Path, help="PNG file to write (or --frames with --out-dir)")
    render.add_argument("--scene", type=scene_index, metavar="N",
                        help="which scene of a glTF file to show (default: the file's default scene)")
    render.add_argument("--size", type=size, default=(800, 600), help="WIDTHxHEIGHT (default 800x600)")
    render.add_argument("--pose", type=Path, help="pose JSON file to apply (after the animation, over it)")
    render.add_argument("--cpu-skinning", action="store_true", help="skin vertices in numpy instead of the shader")
    render.add_argument("--bone-texture", action="store_true", help="bone matrices in a texture, not a uniform array")
    render.add_argument("--no-skeleton", action="store_true", help="hide the skeleton overlay")
    render.add_argument("--no-grid", action="store_true", help="hide the ground grid")
    render.add_argument("--animation", metavar="NAME|INDEX",
                        help="animation to sample (default: the first, when the model has any)")
    render.add_argument("--time", type=finite, help="animation time in seconds (default 0; loops past the end)")
    render.add_argument("--rest", action="store_true",
                        help="the model's rest pose, as loaded: apply no animation (not with --animation, "
                             "--time or --frames)")
    render.add_argument("--frames", type=frames, metavar="START:END:STEP",
                        help="render a PNG sequence at these times (seconds, END included) into --out-dir")
    render.add_argument("--out-dir", type=Path, help="folder for --frames (created if missing)")
    render.add_argument("--gif", type=Path, metavar="OUT.gif",
                        help="write the --frames (or --turntable) sequence as one animated GIF")
    render.add_argument("--mp4", type=Path, metavar="OUT.mp4",
                        help="write the sequence as an MP4 video (needs the 'video' extra: imageio-ffmpeg)")
    render.add_argument("--fps", type=positive_finite, metavar="N",
                        help="frames per second of --gif/--mp4 (default: 1/STEP of --frames, else 25)")
    render.add_argument("--turntable", type=positive_int, metavar="N",
                        help="N frames of the pose at --time with the camera going once round the model")
    render.add_argument("--yaw", type=finite, default=VIEW_YAW,
                        help=f"camera yaw in degrees (default {VIEW_YAW:g}, the viewer's; 0: from the front)")
    render.add_argument("--pitch", type=pitch, default=VIEW_PITCH,
                        help=f"camera pitch in degrees, -89..89 (default {VIEW_PITCH:g}; positive: from above)")
    skin = render.add_mutually_exclusive_group()
    skin.add_argument("--weights", metavar="BONE",
                      help="shade the mesh by BONE's skin weight, 0 blue to 1 red (Blender's weight ramp)")
    skin.add_argument("--bone-map", nargs="?", const=True, default=False, metavar="MAP.json",
                      help="no value: colour each vertex by the bone with its largest weight (a stable colour per "
                           "bone); MAP.json: --motion's bone map")
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
    add_motion_options(render, bone_map=False)
    render.set_defaults(run=run)


def run(args) -> int:
    return render_command(args)


def render_command(args) -> int:
    from ..errors import ViewerError
    from ..loaders import load_model
    from ..camera import framed_camera
    from ..model.animation import clip_time
    from ..model.weights import weight_check
    from ..options import RenderOptions
    from ..render.headless import HeadlessRenderer

    check_outputs(args)
    if args.rest:
        given = [name for name, value in (("--animation", args.animation), ("--time", args.time),
                                          ("--frames", args.frames)) if value is not None]
        if given:
            raise ViewerError(f"--rest shows the pose without animation: leave out {' and '.join(given)}")
    script = getattr(args, "script", None)
    if script is not None:
        from ..editing.script import check_script_path

        check_script_path(script)
        return render_scripted(args)
    scene = load_scene(args)
    clip = None if args.rest else select_animation(scene, args.animation)
    if clip is None and not args.rest and (args.time is not None or args.frames is not None):
        what = "--time" if args.frames is None else "--frames"
        logger().warning(f"{what}: {args.model or 'the built-in character'} has no animations; "
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
    from ..errors import ViewerError

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
    from ..errors import ViewerError
    from ..images import AnimationFile, PngSequence

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

    from ..camera import OrbitCamera, framed_camera

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
    from ..editing.script_app import HeadlessApp
    from ..camera import OrbitCamera, framed_camera
    from ..errors import ViewerError
    from ..loaders import load_model
    from ..model.weights import weight_check
    from ..options import RenderOptions
    from ..render.headless import HeadlessRenderer
    from ..editing.script import ScriptRunner

    times = sequence_times(args)
    step = times[1] - times[0] if len(times) > 1 else 0.0
    pose = read_pose(args.pose)
    aspect = args.size[0] / args.size[1]

    def start(quiet: bool):
        log = logger()
        log.disabled = not quiet  # the model's warnings were told by the first (quiet) load
        try:
            scene = load_scene(args)
        finally:
            log.disabled = False
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
    from ..errors import ViewerError
    from ..options import Axes, Paint

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
