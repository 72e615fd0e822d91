"""`boneviewer check`: every finding on model files, as lines or as one JSON document."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..words import counted
from .common import add_motion_options, finite


def add_parser(commands, common):
    check = commands.add_parser("check", parents=[common], help="check model files for errors, rig and motion problems",
                                description="Check model files (or every .gltf, .glb, .fbx, .usd, .usda, .usdc, .usdz and .bvh under folders, "
                                            "recursively) for what makes them invalid or undrawable (errors) and for "
                                            "rig problems (warnings, infos): weights, joints, inverse binds, scales, "
                                            "keyframes, exploding clips, extensions, textures; and every clip for "
                                            "motion problems: foot skating, the mesh below the ground, jitter, loop "
                                            "seams, rotation flips, stretching bones, keys that are no numbers. "
                                            "Exit 0 without errors, 2 with any.")
    check.add_argument("paths", nargs="+", metavar="PATH", type=Path, help="model files or folders")
    check.add_argument("--json", action="store_true",
                       help='print one JSON document: [{"file", "findings": [{"severity", "code", "message", '
                            '"pointer"}], "motion": [{"clip", "fps", "frames", "thresholds", "ground", "feet": '
                            '[{"bone", "height", "speed", "contact", ...}], "foot_skate_ratio", "jitter", ...}]}]')
    check.add_argument("--strict", action="store_true", help="warnings count as errors (exit 2)")
    motion = check.add_argument_group("motion checks")
    motion.add_argument("--ground", type=finite, metavar="Y",
                        help="the ground's height (default: y = 0 where the feet rest there, else their usual height "
                             "in contact)")
    motion.add_argument("--feet", type=feet_names, metavar="LEFT,RIGHT",
                        help="the left and right foot bones (default: found by the naming schemes)")
    motion.add_argument("--loop", action="store_true",
                        help="every clip is meant to loop: check that its end runs on into its start")
    check.add_argument("--compare", action="store_true",
                       help="compare two files' clips instead: per bone (matched by name; clips by name, else by "
                            "order) the largest and mean rotation difference in degrees and position difference "
                            f"relative to the size, over the clips' common time range at {30:g} frames/s")
    check.add_argument("--report", type=Path, metavar="OUT.html",
                       help="with --compare: also write one self-contained HTML page (no network) plotting each "
                            "clip's per-bone differences over time, the bones that differ most, and the table "
                            "(needs matplotlib: pip install 'boneviewer[plots]')")
    add_motion_options(check)
    check.set_defaults(run=run)


def feet_names(text: str) -> tuple[str, str]:
    names = [name.strip() for name in text.split(",")]
    if len(names) != 2 or not all(names):
        raise argparse.ArgumentTypeError(f"expected two bone names, LEFT,RIGHT, got {text!r}")
    return names[0], names[1]


def run(args) -> int:
    from ..checks import MotionOptions, check_file
    from ..errors import ViewerError

    if args.compare:
        return compare(args)
    if args.report is not None:
        raise ViewerError("--report goes with --compare A B (a library's report: boneviewer batch DIR --out REPORT)")
    files = checked_files(args.paths)
    options = MotionOptions(ground=args.ground, feet=args.feet, loop=args.loop)
    clips = None
    if args.motion is not None:
        if len(files) != 1:
            raise ViewerError(f"--motion checks its clip on one model; {counted(len(files), 'model')} given")
        clips = motion_clip(args)
    else:
        given = [option for option, dest in (("--motion-clip", "motion_clip"), ("--bone-map", "motion_bone_map"),
                                             ("--bvh-scale", "bvh_scale"), ("--bvh-up", "bvh_up"),
                                             ("--bvh-forward", "bvh_forward"), ("--keep-file-axes", "file_axes"))
                 if getattr(args, dest, None) not in (None, False)]
        if given:  # check reads each model as its file says; these say how to read --motion's
            raise ViewerError(f"{given[0]} goes with --motion FILE: give the file to take the motion from")
    reports = [check_file(path, motion=options, clips=clips) for path in files]
    if args.json:
        print(json.dumps([report.as_json() for report in reports], indent=1))
    else:
        for report in reports:
            print(f"{report.file}: {_counts(report)}")
            for f in report.findings:
                where = f" {f.pointer}" if f.pointer else ""
                print(f"  {f.severity} {f.code}{where}: {f.message}")
            for figures in report.motion or ():
                print(f"  motion {_figures(figures)}")
        failing = sum(report.fails(args.strict) for report in reports)
        print(f"checked {counted(len(reports), 'file')}: {failing} "
              f"{'fail' if failing != 1 else 'fails'}{' (--strict: warnings count)' if args.strict else ''}")
    return 2 if any(report.fails(args.strict) for report in reports) else 0


def compare(args) -> int:
    """check --compare A B: the per-bone differences of their clips, as lines or JSON."""
    from ..checks.compare import compare_scenes
    from ..errors import ViewerError
    from ..loaders import load_model

    given = [option for option, dest in (("--strict", "strict"), ("--ground", "ground"), ("--feet", "feet"),
                                         ("--loop", "loop"), ("--motion", "motion"), ("--motion-clip", "motion_clip"),
                                         ("--bone-map", "motion_bone_map"))
             if getattr(args, dest, None) not in (None, False)]
    if given:
        raise ViewerError(f"--compare compares two files' clips as they are: leave out {' and '.join(given)}")
    if len(args.paths) != 2:
        raise ViewerError(f"--compare takes two model files, A and B; {counted(len(args.paths), 'path')} given")
    for path in args.paths:
        if path.is_dir():
            raise ViewerError(f"--compare {path}: a folder; give two model files")
    first, second = (checked_files([path])[0] for path in args.paths)
    if args.report is not None:
        check_report_path(args.report, first, second)
    from .common import bvh_options

    bvh = bvh_options(args)
    scenes = [load_model(str(path), None, **bvh) for path in (first, second)]
    result = compare_scenes(*scenes, name_a=str(first), name_b=str(second))
    if args.report is not None:
        from ..files import write_file
        from ..library.compare_report import compare_html

        write_file(args.report, compare_html(result, str(first), str(second)))  # whole or not at all
    if args.json:
        print(json.dumps({"a": str(first), "b": str(second), **result.as_json()}, indent=1))
        return 0
    print(f"compare {first} (A) with {second} (B): {counted(len(result.common), 'bone')} in common"
          + (f", {len(result.only_a)} only in A" if result.only_a else "")
          + (f", {len(result.only_b)} only in B" if result.only_b else "")
          + f"; positions relative to A's size, {result.size:.4g}")
    for clip in result.clips:
        if clip.clip_a is None:
            title = "the poses as loaded (no clips)"
        else:
            title = (f"clip {clip.clip_a!r}" if clip.clip_a == clip.clip_b else f"clip {clip.clip_a!r} (A) with "
                     f"{clip.clip_b!r} (B)") + f", 0 to {clip.end:.4g} s, {clip.frames} frames at 30 frames/s"
        print(f"  {title}")
        width = max(len(b.bone) for b in clip.bones)
        print(f"    {'bone':<{width}}  {'max deg':>9}  {'mean deg':>9}  {'max pos':>9}  {'mean pos':>9}")
        for b in clip.bones:
            print(f"    {b.bone:<{width}}  {b.rotation_max:9.4f}  {b.rotation_mean:9.4f}  {b.position_max:9.5f}  "
                  f"{b.position_mean:9.5f}")
    for side, names in (("A", result.unmatched_a), ("B", result.unmatched_b)):
        if names:
            print(f"  clips only in {side}: {', '.join(map(repr, names))}")
    if args.report is not None:
        print(f"report: {args.report}")
    return 0


def check_report_path(report: Path, first: Path, second: Path) -> None:
    """--report OUT.html: an .html file in a writable folder, no file the comparison reads, and
    matplotlib there to draw its plots; checked before the models load."""
    from ..errors import ViewerError
    from ..files import check_outputs
    from ..images import check_output_folder
    from ..library.plots import available
    from ..sources import source_files

    if report.suffix.lower() not in (".html", ".htm"):
        raise ViewerError(f"--report {report}: the file name must end in .html")
    check_output_folder("--report", report)
    check_outputs([(f"--report {report}", report)], {**source_files(first, "model A"), **source_files(second, "model B")})
    if not available():
        raise ViewerError("--report plots with matplotlib, which is not installed: pip install 'boneviewer[plots]'")


def motion_clip(args):
    """The clips to check on the model: --motion's clip retargeted onto it (as render does)."""
    from ..errors import ViewerError, why_missing
    from ..loaders import MODEL_SUFFIXES, load_model
    from ..model.retarget import read_bone_map, retarget
    from .common import bvh_options

    motion = args.motion
    if Path(motion).suffix.lower() not in MODEL_SUFFIXES:
        raise ViewerError(f"--motion {motion}: expected a .bvh, .glb, .gltf, .fbx or USD (.usd, .usda, .usdc, .usdz) "
                          "file")
    if not Path(motion).exists():
        raise ViewerError(f"--motion {motion}: {why_missing(motion)}")
    args.model = args.paths[0]
    bvh = bvh_options(args)
    mapping = None if args.motion_bone_map is None else read_bone_map(args.motion_bone_map)
    source = load_model(motion, None, **bvh)

    def clips(scene):
        try:
            clip = retarget(source, scene, clip=args.motion_clip, bone_map=mapping)
        except ViewerError as error:
            raise ViewerError(f"--motion {motion}: {error}") from None
        return [clip]

    return clips


def _figures(figures) -> str:
    """One line of what the motion checks measured on a clip."""
    text = f"{figures.clip!r}: {figures.frames} frames at {figures.fps:.4g} frames/s"
    if figures.ground is not None:
        text += f", ground y = {figures.ground:.4g} ({figures.ground_from})"
    if figures.feet:
        text += f", feet {', '.join(foot['bone'] for foot in figures.feet)}"
    if figures.foot_skate_ratio is not None:
        text += f", foot skate ratio {figures.foot_skate_ratio:.3f}"
    return text


def checked_files(paths) -> list[Path]:
    """The model files named, folders expanded (recursively); a path that is neither, or a
    folder without models, is a user error."""
    from ..checks import MODEL_SUFFIXES, model_files
    from ..errors import ViewerError, why_missing

    files = []
    for path in paths:
        if path.is_dir():
            found = model_files(path)
            if not found:
                raise ViewerError(f"{path}: no model files ({', '.join(MODEL_SUFFIXES)}) in this folder")
            files += found
        elif path.is_file():
            if path.suffix.lower() not in MODEL_SUFFIXES:
                raise ViewerError(f"{path}: cannot check {path.suffix or 'extension-less'} files; "
                                  f"check reads {', '.join(MODEL_SUFFIXES)}")
            files.append(path)
        else:
            raise ViewerError(f"{path}: {why_missing(path, 'file or folder')}")
    return list(dict.fromkeys(files))  # a file named twice, or inside two folders given, is checked once


def _counts(report) -> str:
    from ..checks import SEVERITIES

    if not report.findings:
        return "ok"
    counts = [(report.count(s), s) for s in SEVERITIES]
    return ", ".join(counted(n, s) for n, s in counts if n)
