"""`boneviewer render`: a model to a PNG, a PNG sequence, a GIF or an MP4, headless."""

from __future__ import annotations

import argparse
import functools
import math
from pathlib import Path

from ..camera import FOV_RANGE, VIEW_PITCH, VIEW_YAW, turntable_cameras
from ..images import check_output_file, check_png_path, write_png
from ..look import TRANSPARENT, apply_frame
from .common import (ModelsAction, add_shadow_options, say_shadow_light, shadow_options, Progress, add_expression_option, add_frame_options, add_look_options,
                     add_mix_option, add_motion_options,
                     add_skinning_option, add_springs_option, apply_mix, apply_pose_data, check_creatable_folder, finite, frame_options,
                     frames, input_files, load_scene, logger, look_options, named_bone, pitch, positive_finite,
                     positive_int, read_mix, read_pose, scene_index, select_animation, size)

DEFAULT_CLIP_FPS = 30.0  # --frames all


def frames_or_all(text: str):
    """``all`` (the whole clip, resolved once the model is loaded) or START:END:STEP."""
    return "all" if text.strip().lower() == "all" else frames(text)


def point(text: str):
    """X,Y,Z: a world point."""
    parts = text.replace(" ", "").split(",")
    try:
        values = tuple(float(v) for v in parts)
    except ValueError:
        values = ()
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f"expected X,Y,Z such as 0,1,0, got {text!r}")
    from ..model.checks import LIMIT_TEXT, fits

    if not fits(values):
        raise argparse.ArgumentTypeError(f"{text}: each coordinate must be a finite number with a magnitude up to "
                                         f"{LIMIT_TEXT}")
    return values


def fov(text: str) -> float:
    value = finite(text)
    if not FOV_RANGE[0] < value < FOV_RANGE[1]:
        raise argparse.ArgumentTypeError(f"{text}: the field of view must be between {FOV_RANGE[0]:g} and "
                                         f"{FOV_RANGE[1]:g} degrees (both excluded)")
    return value


def add_parser(commands, common):
    render = commands.add_parser("render", parents=[common], help="render a model to a PNG, headless",
                                 description="Render MODEL (default: the built-in character) to a PNG "
                                             "offscreen, on EGL; no display or GPU needed. An animated model is "
                                             "shown at --time of its first clip (or --animation), unless --rest; "
                                             "the camera frames what is drawn (for --frames, every frame).")
    render.add_argument("models", nargs="*", metavar="MODEL", action=ModelsAction,
                        help="model file: .gltf, .glb, .fbx, .usd/.usda/.usdc/.usdz or .bvh (default: the built-in "
                             "character); several: side by side in a row on one ground, framed together, each "
                             "playing its own clip at the same time")
    render.add_argument("--out", type=Path, help="PNG file to write (or --frames with --out-dir)")
    render.add_argument("--scene", type=scene_index, metavar="N",
                        help="which scene of a glTF file to show (default: the file's default scene)")
    render.add_argument("--size", type=size, default=(800, 600), help="WIDTHxHEIGHT (default 800x600)")
    render.add_argument("--pose", type=Path, help="pose JSON file to apply (after the animation, over it)")
    render.add_argument("--cpu-skinning", action="store_true", help="skin vertices in numpy instead of the shader")
    render.add_argument("--bone-texture", action="store_true", help="bone matrices in a texture, not a uniform array")
    add_skinning_option(render)
    add_springs_option(render)
    render.add_argument("--animation", metavar="NAME|INDEX",
                        help="animation to sample (default: the first, when the model has any)")
    render.add_argument("--time", type=finite, help="animation time in seconds (default 0; loops past the end)")
    render.add_argument("--rest", action="store_true",
                        help="the model's rest pose, as loaded: apply no animation (not with --animation, "
                             "--time or --frames)")
    render.add_argument("--frames", type=frames_or_all, metavar="START:END:STEP|all",
                        help="render a sequence at these times (seconds, END included) into --out-dir, --gif or "
                             "--mp4; all: the whole clip (--animation, default the first) at --fps, default "
                             f"{DEFAULT_CLIP_FPS:g}, the last frame at its end")
    render.add_argument("--out-dir", type=Path, help="folder for --frames (created if missing)")
    render.add_argument("--gif", type=Path, metavar="OUT.gif",
                        help="write the --frames (or --turntable) sequence as one animated GIF")
    render.add_argument("--mp4", type=Path, metavar="OUT.mp4",
                        help="write the sequence as an MP4 video (needs the 'video' extra: imageio-ffmpeg)")
    render.add_argument("--fps", type=positive_finite, metavar="N",
                        help="frames per second of --gif/--mp4 (default: 1/STEP of --frames, else 25), and of "
                             f"--frames all (default {DEFAULT_CLIP_FPS:g}); GIF rounds it to whole hundredths of a "
                             "second a frame (at most 50)")
    render.add_argument("--turntable", type=positive_int, metavar="N",
                        help="N frames of the pose at --time with the camera going once round the model")
    add_camera_arguments(render)
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
                        help="a Python script whose setup(app) runs once after loading and update(app, t, dt) "
                             "once before each frame (t: the sequence time, dt: the --frames step); an error in "
                             "them prints one line, keeps the last good pose and exits 1 after writing the frames; "
                             "a script that cannot load (or has neither function) writes nothing and exits 1; "
                             "with several models it sees them all (app.scenes, app.find_bone(NAME, model=K))")
    add_mix_option(render, "the model as the mix is at --time (mixer.time = T), or a --frames sequence stepped "
                           "from its first time as the bake steps (--frames all: the mix's longest playing clip); "
                           "spring bones from rest at mix time 0 up to each time, the mix played there; "
                           "not with --animation, --rest or --script")
    add_frame_options(render, transparent="RGBA PNGs with alpha 0 there; a GIF's transparent colour; not for MP4")
    add_look_options(render)
    add_shadow_options(render, default=False, contact=True)
    add_motion_options(render, bone_map=False)
    add_expression_option(render)
    render.add_argument("--show-source", action="store_true",
                        help="with --motion: draw the motion file's own skeleton (or model) beside the character, "
                             "playing its clip at the same time")
    render.set_defaults(run=run, model=None)


def add_camera_arguments(parser) -> None:
    """The camera placement, shared by render and view: what is not given is framed."""
    parser.add_argument("--yaw", type=finite,
                        help=f"camera yaw in degrees (default {VIEW_YAW:g}, the viewer's; 0: from the front)")
    parser.add_argument("--pitch", type=pitch,
                        help=f"camera pitch in degrees, -89..89 (default {VIEW_PITCH:g}; positive: from above)")
    parser.add_argument("--target", type=point, metavar="X,Y,Z",
                        help="the point the camera looks at and orbits (default: framed on the model)")
    parser.add_argument("--distance", type=positive_finite, metavar="D",
                        help="camera distance from --target (default: near enough to show the whole model)")
    parser.add_argument("--fov", type=fov, metavar="DEGREES", help="vertical field of view (default 40)")
    parser.add_argument("--camera", type=Path, metavar="FILE.json",
                        help='a camera file {"yaw", "pitch", "distance", "target", "fov"} (the viewer\'s '
                             '"Save camera..." writes one); --yaw and the others override its values')


def camera_description(args):
    """The camera the options describe: --camera's file, with --yaw/--pitch/--target/--distance/
    --fov over it; checked (a ViewerError line) before anything is loaded."""
    from ..camera import CameraDescription

    given = CameraDescription(yaw=getattr(args, "yaw", None), pitch=getattr(args, "pitch", None),
                              distance=getattr(args, "distance", None), target=getattr(args, "target", None),
                              fov=getattr(args, "fov", None), source="camera options")
    path = getattr(args, "camera", None)
    return given if path is None else CameraDescription.read(path).updated(given)


def run(args) -> int:
    return render_command(args)


# Options that act on one model (its bones, its skin, its mix): not with several (a --script
# sees them all: app.scenes).
ONE_MODEL_OPTIONS = (("--pose", "pose"), ("--mix", "mix"), ("--weights", "weights"),
                     ("--bone-map", "bone_map"), ("--weight-check", "weight_check"), ("--axes", "axes"),
                     ("--motion", "motion"), ("--scene", "scene"))


def shown_models(args) -> list:
    """The model files drawn side by side: the models given, or with --show-source the model and
    its --motion file; [] for one model."""
    from ..errors import ViewerError

    models = list(getattr(args, "models", None) or [])
    if getattr(args, "show_source", False):
        if getattr(args, "motion", None) is None:
            raise ViewerError("--show-source draws the --motion file beside the character: give --motion FILE")
        if len(models) > 1:
            raise ViewerError("--show-source draws one model's --motion file beside it: give one model")
        for option, dest in (("--mix", "mix"), ("--script", "script")):
            if getattr(args, dest, None) not in (None, False):
                raise ViewerError(f"--show-source and {option}: give one")
        return ["source"]
    if len(models) < 2:
        return []
    given = [option for option, dest in ONE_MODEL_OPTIONS if getattr(args, dest, None) not in (None, False)]
    if given:
        raise ViewerError(f"{' and '.join(given)} act{'s' if len(given) == 1 else ''} on one model: leave "
                          f"{'it' if len(given) == 1 else 'them'} out with several models")
    return models


def render_command(args) -> int:
    from ..errors import ViewerError
    from ..model.animation import clip_time

    check_outputs(args)
    check_not_inputs(args)
    mix = read_mix(args)  # a file that is not a mix: one line, before the model loads
    if mix is not None and getattr(args, "script", None) is not None:
        raise ViewerError("--mix and --script: give one (a script plays a mix itself: "
                          "app.scene.mixer.load(FILE) in its setup)")
    look = look_options(args)  # a bad --environment file: one line, before any GL work
    look.update(shadow_options(args))
    say_shadow_light(look)
    frame_options(args)  # --background with --show-environment: refused before the model loads
    if args.rest:
        given = [name for name, value in (("--animation", args.animation), ("--time", args.time),
                                          ("--frames", args.frames)) if value is not None]
        if given:
            raise ViewerError(f"--rest shows the pose without animation: leave out {' and '.join(given)}")
    description = camera_description(args)
    several = bool(shown_models(args))
    script = getattr(args, "script", None)
    if script is not None:
        from ..editing.script import check_script_path

        check_script_path(script)
        return render_scripted(args, description, look, several)
    if several:
        return render_several(args, description, look)
    scene = load_scene(args)
    playback = None
    if mix is not None:
        from ..motion.bake import mix_length
        from ..motion.playback import MixPlayback

        apply_mix(scene, args, mix)  # a clip or bone the model lacks: one line, before any GL work
        clip = None
        times = sequence_times(args, length=mix_length(scene.mixer), what="the mix")
        playback = MixPlayback(scene.mixer, times)
    else:
        clip = None if args.rest else select_animation(scene, args.animation)
        times = sequence_times(args, clip)
    if clip is None and mix is None and not args.rest and (args.time is not None or args.frames is not None):
        what = "--time" if args.frames is None else "--frames"
        logger().warning(f"{what}: {args.model or 'the built-in character'} has no animations; "
                          "rendering its pose as loaded")
    pose = read_pose(args.pose)
    paint, axes, selected = skin_view(args, scene)

    def over_the_motion():
        if pose is not None:
            apply_pose_data(scene, pose, args.pose)  # the pose file overrides animated bones
        scene.apply_expressions()  # --expression over a clip's morph weights

    def pose_at(time):
        if clip is not None:
            clip.apply(clip_time(time, clip.duration))
        elif playback is not None:
            playback.pose_at(time)
        over_the_motion()

    if scene.springs.enabled and len(scene.springs):
        if playback is not None:
            from ..motion.playback import mix_with_springs

            pose_at = mix_with_springs(scene, over_the_motion)  # over each spring step's mix, as over a frame's  # from rest at mix time 0, whatever the first time
        else:
            drive = pose_at

            def pose_at(time):  # noqa: F811  (springs from the clip's start at 1/60 s up to time)
                scene.springs.advance_to(time, drive)

    # One camera for the whole sequence, framed on every pose it shows (a turntable: on every side).
    aspect = args.size[0] / args.size[1]
    if args.turntable is not None:
        pose_at(times[0])
        cameras = turntable_cameras(scene, args.turntable, description, aspect)
    else:
        cameras = [description.camera(scene, aspect, times=times, pose_at=pose_at)] * len(times)
    options = render_options(args, paint, axes, look)
    options.selected_bone = selected

    def sequence():
        for time, camera in zip(times, cameras):
            pose_at(time)
            yield camera, None

    write_frames(args, scene, options, times, len(times), sequence())
    return 0


def clip_of(scene, spec):
    """A clip of one of several models: --animation by name where the model has it, else by
    number where it has that many, else its first (None when it has none)."""
    clips = scene.animations
    if spec is not None:
        for clip in clips:
            if clip.name == spec:
                return clip
        if spec.lstrip("-").isdigit() and 0 <= int(spec) < len(clips):
            return clips[int(spec)]
    return clips[0] if clips else None


def load_several(args) -> list:
    """[(scene, clip or None)] of render's several models, in order (with --show-source: the
    character, then its --motion file's scene playing the clip it was retargeted from)."""
    import copy

    from ..errors import ViewerError
    from .common import load_scene_and_source

    if getattr(args, "show_source", False):
        scene, source = load_scene_and_source(args)
        name = getattr(args, "motion_clip", None)
        source_clip = None if args.rest else (source.find_animation(name) if name is not None else
                                              (source.animations[0] if source.animations else None))
        return [(scene, None if args.rest else select_animation(scene, args.animation)),
                (source, source_clip)]
    loaded = []
    for path in args.models:
        one = copy.copy(args)
        one.model = path
        try:
            scene = load_scene(one)
        except ViewerError as error:
            text = str(error)
            raise ViewerError(text if str(path) in text else f"{path}: {text}") from None
        loaded.append((scene, None if args.rest else clip_of(scene, args.animation)))
    if args.animation is not None and not any(clip is not None and (clip.name == args.animation or (
            args.animation.isdigit() and scene.animations.index(clip) == int(args.animation)))
            for scene, clip in loaded):
        raise ViewerError(f"--animation {args.animation}: none of the models has an animation of that name or "
                          "number")
    return loaded


def several_times(args, clips) -> list:
    """The frame times for several models whose clips are ``clips`` (of those that have one):
    --frames all runs to the longest clip's end; else as for the first clip."""
    if args.frames == "all" and clips:
        return sequence_times(args, length=max(clip.duration for clip in clips), what="the clips")
    return sequence_times(args, clips[0] if clips else None)


def render_several(args, description, look: dict) -> int:
    """render MODEL MODEL ... (or MODEL --motion X --show-source): the models in a row on one
    ground (PlacedScenes.row), one camera framing them all, each playing its own clip at the
    shared time."""
    from ..model.animation import clip_time
    from ..model.placed import PlacedScenes

    loaded = load_several(args)
    clips = [clip for _, clip in loaded if clip is not None]
    times = several_times(args, clips)
    if not clips and not args.rest and (args.time is not None or args.frames is not None):
        logger().warning(f"{'--time' if args.frames is None else '--frames'}: none of the models has animations; "
                         "rendering their poses as loaded")

    def pose_at(time):
        for _, clip in loaded:
            if clip is not None:
                clip.apply(clip_time(time, clip.duration))

    # Spaced and grounded as they stand in the first frame: a capture's rest pose is often not
    # where its clip puts it (a BVH root's channels lift the figure off its rest).
    pose_at(times[0])
    row = PlacedScenes.row([scene for scene, _ in loaded], [scene.current_bounds() for scene, _ in loaded])

    aspect = args.size[0] / args.size[1]
    if args.turntable is not None:
        pose_at(times[0])
        cameras = turntable_cameras(row, args.turntable, description, aspect)
    else:
        cameras = [description.camera(row, aspect, times=times, pose_at=pose_at)] * len(times)
    from ..options import Axes, Paint

    options = render_options(args, Paint.SHADED, Axes.NONE, look)

    def sequence():
        for time, camera in zip(times, cameras):
            pose_at(time)
            yield camera, None

    write_frames(args, row, options, times, len(times), sequence())
    return 0


def write_frames(args, scene, options, times, count: int, frames) -> None:
    """Draws ``frames`` (``count`` of them) into the output the options name, whole or not at all.
    Each item of ``frames`` poses the scene as it is made and is (camera, drawn): drawn(pixels), or
    None, runs once the frame is drawn."""
    from ..model.weights import weight_check
    from ..render.headless import HeadlessRenderer

    output = open_output(args, times)
    if args.weight_check:
        print(f"weight check: {weight_check(scene)}")
    progress = Progress(count) if count > 1 else None
    try:
        with HeadlessRenderer(args.size, bone_storage=options.bone_storage,
                              cpu_skinning=options.cpu_skinning) as headless:
            for number, (camera, drawn) in enumerate(frames):
                pixels = headless.render(scene, camera, options)
                output.write(pixels)
                if drawn is not None:
                    drawn(pixels)
                if progress is not None:
                    progress.update(number + 1)
        written = output.close()
    except BaseException:
        output.abort()  # nothing under the final name (a PNG sequence keeps its whole frames)
        raise
    finally:
        if progress is not None:
            progress.close()
    print(f"wrote {written} ({args.size[0]}x{args.size[1]})")


def render_options(args, paint, axes, look: dict):
    """The RenderOptions of the render options of ``args``, with ``look`` (common.look_options)."""
    from ..options import RenderOptions

    options = RenderOptions(cpu_skinning=args.cpu_skinning, bone_texture=args.bone_texture, paint=paint, axes=axes,
                            **look)
    return apply_frame(options, **frame_options(args))


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
    if args.fps is not None and args.gif is None and args.mp4 is None and args.frames != "all":
        raise ViewerError("--fps sets the speed of --gif or --mp4 (or the frame rate of --frames all)")
    if args.frames == "all" and args.time is not None:
        raise ViewerError("--frames all renders the whole clip: leave out --time")
    if args.mp4 is not None and getattr(args, "background", None) == TRANSPARENT:
        raise ViewerError("--background transparent: an MP4 video has no transparency; give --gif, or "
                          "--out-dir for RGBA PNG frames")
    if args.out is not None:
        check_png_path("--out", args.out)
    if args.out_dir is not None:
        check_creatable_folder("--out-dir", args.out_dir)
    for option, path, suffix in (("--gif", args.gif, ".gif"), ("--mp4", args.mp4, ".mp4")):
        if path is not None:
            check_output_file(option, path, suffix)
    if args.mp4 is not None and (args.size[0] % 2 or args.size[1] % 2):
        raise ViewerError(f"--mp4: the video needs an even width and height, not {args.size[0]}x{args.size[1]}")


def check_not_inputs(args) -> None:
    """No output over a file the command reads: the model's (a texture is a PNG too), --motion's,
    --pose, --camera, --script; --out-dir's frames neither."""
    import re

    from ..errors import ViewerError
    from ..files import check_outputs as check_files

    inputs = input_files(args)
    check_files([(f"{option} {path}", path) for option, path in (("--out", args.out), ("--gif", args.gif), ("--mp4", args.mp4))
                 if path is not None], inputs)
    if args.out_dir is not None and args.out_dir.is_dir():
        folder = args.out_dir.resolve()
        for path, what in inputs.items():
            if re.fullmatch(r"frame_\d{5}\.png", path.name) and path.resolve().parent == folder:
                raise ViewerError(f"--out-dir {args.out_dir}: its frames would overwrite {path}, {what}; give "
                                  "another folder")


def sequence_times(args, clip=None, length=None, what=None) -> list[float]:
    """The times of the frames: --frames, --frames all (the clip from 0 to its duration at
    --fps; or from 0 to ``length``, what plays instead of a clip, named ``what``), or --time
    once (N times for --turntable N)."""
    from ..errors import ViewerError

    if args.frames == "all":
        if length is not None:
            if length <= 0:
                raise ViewerError(f"--frames all renders the whole of {what}, but no clip in it plays: give "
                                  "--frames START:END:STEP")
        elif clip is None:
            what = args.model or "the built-in character"
            raise ViewerError(f"--frames all renders the whole clip, but {what} has no animations: give "
                              "--frames START:END:STEP")
        duration = clip.duration if length is None else length
        fps = args.fps or DEFAULT_CLIP_FPS
        count = int(math.floor(duration * fps + 1e-6)) + 1
        if count > 100_000:
            raise ViewerError(f"--frames all: {count} frames is too many (at most 100000): lower --fps")
        times = [i / fps for i in range(count)]
        if duration - times[-1] > 1e-6:
            times.append(float(duration))  # the last frame at the clip's end
        return times
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
    output = AnimationFile(args.gif if args.gif is not None else args.mp4, min(fps, 100.0),
                           transparent=getattr(args, "background", None) == TRANSPARENT)
    if output.rate_note:
        print(output.rate_note, flush=True)
    return output


class SinglePng:
    def __init__(self, path: Path):
        self.path = path

    def write(self, pixels) -> None:
        write_png(self.path, pixels)

    def close(self) -> str:
        return str(self.path)

    def abort(self) -> None:
        """write_png writes whole or not at all."""


class RecordedFrame:
    """One frame of a scripted render, recorded in the script's one pass and drawn after."""

    def __init__(self, pose, camera, selected, screenshots, look):
        self.pose, self.camera, self.selected, self.screenshots = pose, camera, selected, screenshots  # pose: a
        # PoseRecord per model shown (app.scenes)
        self.look = look  # app.environment, app.exposure, ... as the script left them (RenderOptions.look())


def render_scripted(args, description, look: dict, several: bool = False) -> int:
    """`render --script`: as render_command, with the script's setup once and its update once
    before each frame.

    Deterministic: t is the sequence time (or --time), dt the --frames step (0 for one image).
    The script runs once: each frame's pose (every bone and node, morph weights), camera and
    selection are recorded; then the camera is framed on every recorded frame (unless the script
    or the options placed it) and the frames are drawn from their records. A script that cannot be
    loaded (a syntax or import error, neither setup nor update) writes nothing and exits 1.
    """
    import numpy as np

    from ..camera import BOUNDS_SAMPLES, OrbitCamera, drawn_points, framed_camera
    from ..editing.pose import PoseRecord
    from ..editing.script import ScriptRunner
    from ..editing.script_app import HeadlessApp
    from ..model.arrays import distinct

    runner = ScriptRunner(args.script, debug=getattr(args, "debug", False))
    companions = []
    if several:  # render A B --script: the first is app.scene, the rest beside it (app.scenes)
        loaded = load_several(args)
        (scene, clip), companions = loaded[0], loaded[1:]
        times = several_times(args, [c for _, c in loaded if c is not None])
    else:
        scene = load_scene(args)
        clip = None if args.rest else select_animation(scene, args.animation)
        times = sequence_times(args, clip)
    step = times[1] - times[0] if len(times) > 1 else 0.0
    pose = read_pose(args.pose)
    aspect = args.size[0] / args.size[1]
    paint, axes, chosen = skin_view(args, scene, scripted=True)
    if not runner.load():
        return 1  # the fault is told; nothing is written
    index = None if clip is None else scene.animations.index(clip)
    placeholder = description.camera(scene, aspect) if description.complete else OrbitCamera(
        yaw=VIEW_YAW if description.yaw is None else description.yaw,
        pitch=VIEW_PITCH if description.pitch is None else description.pitch,
        fov_y=40.0 if description.fov is None else description.fov)
    unplaced = (placeholder.distance, tuple(placeholder.target))  # the script may change it in place
    app = HeadlessApp(scene, args.size, camera=placeholder, clip_index=index, look=look, companions=companions)
    app.begin_frame(times[0], 0)
    shown = scene
    if companions:  # spaced and grounded as they stand in the first frame, as render A B does
        from ..model.placed import PlacedScenes

        shown = PlacedScenes.row(app.scenes, [model.current_bounds() for model in app.scenes])
    if pose is not None:
        apply_pose_data(scene, pose, args.pose)
    runner.setup(app)
    # The view direction framing uses: the options', or where setup turned the camera.
    framing = OrbitCamera(yaw=app.camera.yaw, pitch=app.camera.pitch, fov_y=app.camera.fov_y)

    def frame_on(points):  # from that direction; a target or distance the options give is kept
        return framed_camera(shown, yaw=framing.yaw, pitch=framing.pitch, aspect=aspect, fov=framing.fov_y,
                             target=description.target, distance=description.distance, points=points)

    camera = app.camera
    if not description.complete and (camera.distance, tuple(camera.target)) == unplaced:
        # Until every frame is known, update sees the camera framed on the pose setup left
        # (app.project and app.camera.target then mean something); the final framing replaces it.
        provisional = frame_on(framing.deciding_points(drawn_points(shown), aspect))
        camera.target, camera.distance = provisional.target, provisional.distance
        unplaced = (camera.distance, tuple(camera.target))
    samples = set(distinct(np.linspace(0, len(times) - 1, min(len(times), BOUNDS_SAMPLES)).round().astype(int)))
    recorded, deciding = [], []
    for number, time in enumerate(times):
        app.begin_frame(time, number)
        if pose is not None:
            apply_pose_data(scene, pose, args.pose)  # the pose file overrides animated bones
        scene.apply_expressions()  # --expression over a clip's morph weights
        runner.update(app, time, step)
        camera = app.camera
        recorded.append(RecordedFrame([PoseRecord(model) for model in app.scenes],
                                      OrbitCamera(target=camera.target, distance=camera.distance, yaw=camera.yaw,
                                                  pitch=camera.pitch, fov_y=camera.fov_y),
                                      app.selected_bone if app.selection_made else chosen,
                                      list(app.pending_screenshots), app.editor.display.look()))
        app.pending_screenshots.clear()
        if number in samples:
            deciding.append(framing.deciding_points(drawn_points(shown), aspect))
        if app.closed:
            break
    placed = [frame.camera.distance != unplaced[0] or tuple(frame.camera.target) != unplaced[1]
              for frame in recorded]
    if not description.complete and not all(placed):
        framed = frame_on(np.concatenate(deciding) if deciding else None)
        for frame, own in zip(recorded, placed):
            if not own:  # the script left target and distance to the framing: theirs, its angles
                frame.camera.target, frame.camera.distance = framed.target, framed.distance
    options = render_options(args, paint, axes, look)

    def sequence():
        for frame in recorded:
            for record in frame.pose:
                record.restore()
            # As without a script; a bone the script selects wins over --weights/--axes BONE.
            options.selected_bone = frame.selected
            for name, value in frame.look.items():  # the look the script set for this frame
                setattr(options, name, value)
            yield frame.camera, functools.partial(drawn, frame)

    def drawn(frame, pixels):
        for path in frame.screenshots:
            write_png(path, pixels)
        frame.pose = None  # drawn: its memory can go

    write_frames(args, shown, options, times, len(recorded), sequence())
    return 1 if runner.last_error is not None else 0


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
