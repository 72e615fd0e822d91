"""`boneviewer synth`: labelled images for pose estimation (keypoints with visibility, depth,
part index, COCO annotations) of one model or a folder of models, in random poses and views."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import (add_shadow_options, BVH_DESTS, Progress, add_bvh_options, add_look_options, add_pool_options, add_skinning_option, add_springs_option,
                     bvh_options, check_creatable_folder, check_pool_options, finite, positive_int, size)


def range_of(low: float, high: float, unit: str = ""):
    """An argparse type for MIN:MAX within [low, high]."""

    def parse(text: str):
        try:
            first, second = (finite(v) for v in text.split(":"))
        except (ValueError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(f"expected MIN:MAX such as {low:g}:{high:g}, got {text!r}") from None
        if not low <= first <= second <= high:
            raise argparse.ArgumentTypeError(f"{text}: need {low:g} <= MIN <= MAX <= {high:g}{unit}")
        return first, second

    return parse


def fraction(text: str) -> float:
    value = finite(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text}: must be between 0 and 1")
    return value


def field_of_view(text: str) -> float:
    value = finite(text)
    if not 1.0 < value < 179.0:
        raise argparse.ArgumentTypeError(f"{text}: must be between 1 and 179 degrees (both excluded)")
    return value


def seed(text: str) -> int:
    from .common import whole_number

    return whole_number(text, "a whole number", 0, "must be 0 or more")


def add_parser(commands, common):
    synth = commands.add_parser(
        "synth", parents=[common], help="labelled images for pose estimation (keypoints, depth, parts, COCO)",
        description="Render N images of a model, or of every model under a folder, each a random draw (model, "
                    "clip, time, camera, light, background, environment, its rotation, exposure) reproducible from "
                    "--seed and its index alone, with "
                    "labels: OUT/images/NNNNNN.png, OUT/depth/NNNNNN.png (16-bit depth times info.depth_scale), "
                    "OUT/parts/NNNNNN.png (1 + the bone that most influences the surface), OUT/annotations.json "
                    "(COCO keypoints: 2D keypoints with visibility, keypoints_3d, boxes, RLE masks, K and "
                    "world_to_camera in OpenCV's axes), OUT/index.html (a preview) and OUT/synth.json (the run's options). "
                    "A draw that shows too little (--min-visible, --min-area) is drawn again from the same seed. The "
                    "same command into the same --out resumes an interrupted run (a larger --count adds images); "
                    "other options are refused unless --force.")
    synth.add_argument("model", type=Path, metavar="MODEL|DIR", help="a .gltf, .glb, .fbx, USD or .bvh file, or a folder of them")
    synth.add_argument("--out", type=Path, required=True, metavar="DIR", help="the data set's folder (created)")
    synth.add_argument("--count", type=positive_int, required=True, metavar="N", help="images to render")
    synth.add_argument("--size", type=size, default=(256, 256), metavar="WxH",
                       help="WIDTHxHEIGHT of the images (default 256x256)")
    synth.add_argument("--seed", type=seed, default=0, metavar="S", help="the draws' seed (default 0)")
    synth.add_argument("--force", action="store_true",
                       help="--out holds an earlier run with other options: remove its files (its images/, depth/, "
                            "parts/ and labels/ files, annotations.json, index.html, synth.json; nothing else) and "
                            "start over (without it, such a run is refused, naming the options that differ)")
    group = synth.add_argument_group("motion")
    add_bvh_options(group)
    group.add_argument("--motion", type=Path, metavar="FILE|DIR",
                       help="BVH captures (a file, or every .bvh under a folder; a file may also be an FBX, glTF or "
                            "USD file with a skeleton and its motion), each retargeted onto each model it "
                            "fits and drawn from beside the model's own clips; a model no capture fits keeps its own "
                            "clips (without any, it is left out), a capture under DIR that does not load is left out, "
                            "and one line says what was retargeted and what was left out, and why")
    group.add_argument("--bone-map", type=Path, metavar="MAP.json|DIR",
                       help='--motion\'s bone map, {"target bone": "source bone"}: a file for every model, or a folder '
                            "of one per model: DIR/<the model's path under MODEL|DIR, .json for its suffix>, else "
                            "DIR/<its file stem>.json (Fox/Fox.glb: DIR/Fox/Fox.json, else DIR/Fox.json); a model "
                            "without one is mapped by the naming schemes (the default)")
    group.add_argument("--mix", type=Path, metavar="FILE.json",
                       help="pose MODEL (a file) as this mix file plays (the mixer's File > Save mix, mixer.save()): "
                            "each image draws a time over the mix's length (its longest playing clip's duration over "
                            "its speed) and shows the mix there (mixer.time = T), not one clip; not with --motion")
    ranges = synth.add_argument_group("the draws' ranges (written into annotations.json)")
    ranges.add_argument("--pitch", type=range_of(-89.0, 89.0, " degrees"), default=(-10.0, 30.0), metavar="MIN:MAX",
                        help="camera pitch in degrees, positive above the character (default -10:30); yaw is all round")
    ranges.add_argument("--fill", type=range_of(0.01, 1.0), default=(0.3, 0.9), metavar="MIN:MAX",
                        help="the character's height (or width, where that binds) over the image's (default 0.3:0.9)")
    ranges.add_argument("--target-offset", type=fraction, default=0.05, metavar="F",
                        help="random shift of the camera's target across the view, a fraction of the character's "
                             "height (default 0.05)")
    ranges.add_argument("--fov", type=field_of_view, default=40.0, metavar="DEG",
                        help="vertical field of view in degrees (default 40)")
    ranges.add_argument("--occlusion-distance", type=fraction, default=0.08, metavar="F",
                        help="a keypoint is visible (v=2) where the surface drawn at its pixel lies within F times "
                             "the character's height of it in depth, else hidden (v=1): a surface nearer by more, "
                             "its own surface not drawn, or nothing drawn (default 0.08)")
    ranges.add_argument("--min-visible", type=seed, default=1, metavar="K",
                        help="an image with fewer than K keypoints visible (all of a rig's, for fewer) is drawn "
                             "again, from the same seed (default 1)")
    ranges.add_argument("--min-area", type=fraction, default=0.001, metavar="F",
                        help="an image whose character covers less than F of its pixels is drawn again, from the "
                             "same seed; one where nothing is drawn always is (default 0.001)")
    ranges.add_argument("--backgrounds", type=Path, metavar="DIR",
                        help="a folder of images (.png, .jpg): for each image, one of them drawn at random, "
                             "scaled to cover the frame and cropped at random behind the character")
    add_look_options(synth, draws=True)
    add_shadow_options(synth, default=False, key_light=False)  # the key light is drawn per image
    add_skinning_option(synth)
    add_springs_option(synth, chains=False)
    run_group = synth.add_argument_group("workers")
    add_pool_options(run_group, "render as Ray tasks: on a local Ray runtime, or on the cluster at ADDRESS (its "
                                "nodes read the models at the same paths)")
    synth.set_defaults(run=run)


BACKGROUND_SUFFIXES = (".png", ".jpg", ".jpeg")


def run(args) -> int:
    from ..errors import ViewerError, why_missing
    from ..files import check_folder_outputs, check_outputs
    from ..sources import source_files
    from ..look import BUILT_IN_ENVIRONMENTS
    from ..synth.run import ANNOTATIONS, MANIFEST, OUTPUT_FOLDERS, model_inputs, motion_inputs, synth
    from ..synth.job import SynthOptions

    if not args.model.exists():
        raise ViewerError(f"{args.model}: {why_missing(args.model, 'file or folder')}")
    check_pool_options(args)
    environments = synth_environments(args)
    if args.motion is not None and not args.motion.exists():
        raise ViewerError(f"--motion {args.motion}: {why_missing(args.motion, 'file or folder')}")
    from ..loaders import MODEL_SUFFIXES

    if args.motion is not None and args.motion.is_file() and args.motion.suffix.lower() not in MODEL_SUFFIXES:
        raise ViewerError(f"--motion {args.motion}: expected a .bvh capture (or an FBX, glTF or USD file with a "
                          "skeleton and its motion) or a folder of .bvh captures")
    if args.mix is not None:
        from ..motion.files import read_mix_file

        if args.motion is not None:
            raise ViewerError("--mix plays the clips the mix file names (a capture retargeted with --motion is not "
                              "one of them here): leave out --motion")
        if args.model.is_dir():
            raise ViewerError(f"--mix names one model's clips and bones: give a model file, not the folder "
                              f"{args.model}")
        read_mix_file(args.mix, f"--mix {args.mix}")  # not a mix file: one line, before any model loads
    if args.bone_map is not None and args.motion is None:
        raise ViewerError("--bone-map MAP.json|DIR goes with --motion: give the captures to retarget")
    if args.bone_map is not None and not args.bone_map.exists():
        raise ViewerError(f"--bone-map {args.bone_map}: {why_missing(args.bone_map, 'file or folder')}")
    backgrounds = ()
    if args.backgrounds is not None:
        if not args.backgrounds.is_dir():
            raise ViewerError(f"--backgrounds {args.backgrounds}: {why_missing(args.backgrounds, 'folder')}"
                              if not args.backgrounds.exists() else f"--backgrounds {args.backgrounds}: is a file; "
                              "give a folder of images")
        backgrounds = tuple(str(p.resolve()) for p in sorted(args.backgrounds.rglob("*"))
                            if p.suffix.lower() in BACKGROUND_SUFFIXES and p.is_file())
        if not backgrounds:
            raise ViewerError(f"--backgrounds {args.backgrounds}: no images ({', '.join(BACKGROUND_SUFFIXES)}) in "
                              "this folder")
        check_backgrounds(backgrounds)
    check_creatable_folder("--out", args.out)
    models, _ = model_inputs(args.model)
    inputs = {}
    for path, _ in models:
        inputs.update(source_files(path, "a model"))
    for capture in motion_inputs(args.motion):
        inputs[capture] = "a --motion capture"
    if args.bone_map is not None:
        for map_file in args.bone_map.rglob("*.json") if args.bone_map.is_dir() else [args.bone_map]:
            inputs[map_file] = "a --bone-map file"
    for background in backgrounds:
        inputs[Path(background)] = "a --backgrounds image"
    for environment in environments:
        if environment not in BUILT_IN_ENVIRONMENTS:
            inputs[Path(environment)] = "an --environment file"
    if args.mix is not None:
        inputs[args.mix] = "the --mix file"
    check_outputs([(f"--out {args.out}", args.out / name) for name in (ANNOTATIONS, "index.html", MANIFEST)], inputs)
    check_folder_outputs(f"--out {args.out}", [args.out / name for name in OUTPUT_FOLDERS], inputs)
    # --out is made by ``synth`` once every model and capture has been read: a model it cannot
    # read leaves no empty folder behind.
    options = SynthOptions(size=tuple(args.size), seed=args.seed, pitch=tuple(args.pitch), fill=tuple(args.fill),
                           target_offset=args.target_offset, fov=args.fov, occlusion_distance=args.occlusion_distance,
                           min_visible=args.min_visible, min_area=args.min_area,
                           backgrounds=backgrounds, environments=environments,
                           environment_rotation=tuple(args.environment_rotation), exposure=tuple(args.exposure),
                           tone_mapping=args.tone_mapping, environment_filter=args.environment_filter,
                           skinning=args.skinning, springs=args.springs is not False, shadows=args.shadows,
                           shadow_intensity=args.shadow_intensity, shadow_softness=args.shadow_softness)
    if args.model.is_dir() or (args.motion is not None and args.motion.is_dir()):
        load = {name: getattr(args, name) for name in BVH_DESTS}  # for the .bvh files among them
        load["file_axes"] = bool(args.file_axes)  # and the .fbx files
    else:
        load = bvh_options(args)  # warns when no file given is a .bvh
    progress = Progress(args.count, "images")
    written = [0]  # images whole on disk, for the line Ctrl+C leaves

    def update(done: int, todo: int) -> None:
        written[0] = args.count - todo + done
        progress.update(written[0])

    try:
        annotations = synth(args.model, args.out, args.count, options, args.motion, load, args.bone_map,
                            args.workers, args.ray, say=lambda line: print(line, file=sys.stderr), progress=update,
                            force=args.force, mix=args.mix)
    except KeyboardInterrupt:
        progress.close()
        print(f"boneviewer: synth: interrupted with {written[0]} of {args.count} images written; the same command "
              "resumes", file=sys.stderr)
        raise
    progress.close()
    visible = sum(1 for a in annotations["annotations"] for v in a["keypoints"][2::3] if v == 2)
    redrawn = sum(1 for image in annotations["images"] if image.get("attempt", 0) > 0)
    again = f" ({redrawn} drawn again: their first draw showed too little)" if redrawn else ""
    print(f"{args.count} images, {len(annotations['annotations'])} annotations, {visible} visible keypoints{again}; "
          f"{args.out / ANNOTATIONS}, preview: {args.out / 'index.html'}")
    return 0


def synth_environments(args) -> tuple:
    """The environments the images draw from (--environment, each checked whole; default studio)."""
    from ..look import environment
    from ..options import RenderOptions

    return tuple(environment(value, "--environment") for value in args.environment or [RenderOptions.environment])


def check_backgrounds(paths) -> None:
    """Every background opens as an image (a broken one is one line now, not a failed worker later)."""
    from PIL import Image, UnidentifiedImageError

    from ..errors import ViewerError

    for path in paths:
        try:
            with Image.open(path) as image:
                image.verify()
        except (OSError, UnidentifiedImageError):
            raise ViewerError(f"--backgrounds {path}: not an image Pillow can read") from None
