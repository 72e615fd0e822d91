"""`boneviewer export`: a model, posed (or with a clip a script records), to glTF (.glb, .gltf) or
USD (.usda, .usdc, .usdz)."""

from __future__ import annotations

import os
from pathlib import Path

from ..images import check_output_folder
from ..words import counted
from .common import (add_mix_option, add_motion_options, add_springs_option, apply_mix, apply_pose_data, finite,
                     frames, input_files, load_scene, logger, positive_finite, read_mix, read_pose, scene_index,
                     select_animation)


from ..editing.export import GLTF_OUT_SUFFIXES as GLTF_SUFFIXES, USD_OUT_SUFFIXES as USD_SUFFIXES


def add_parser(commands, common):
    export = commands.add_parser("export", parents=[common],
                                 help="write a model, posed, as glTF (.glb, .gltf) or USD (.usda, .usdc, .usdz)",
                                 description="Write MODEL (default: the built-in character) as glTF or USD as it is "
                                             "after --animation/--time, --pose and --script: the pose (the file's "
                                             "pose at rest), skins, meshes, morph targets, materials and images, and "
                                             "every clip, loaded or recorded. USD is written through usd-core as "
                                             "UsdSkel: a SkelRoot with a Skeleton per skeleton, UsdPreviewSurface "
                                             "materials, every clip a SkelAnimation (the first bound); .usdz is an "
                                             "ARKit-style package with its textures inside.")
    export.add_argument("model", nargs="?",
                        help="model file: .gltf, .glb, .fbx, .usd/.usda/.usdc/.usdz or .bvh (default: the built-in "
                             "character)")
    export.add_argument("--out", type=Path, metavar="OUT",
                        help="file to write: .glb, .gltf (its .bin and images beside it), .usdz (one package), "
                             ".usda or .usdc (its textures beside it as OUT_image<n>.png or .jpg); a file beside it that "
                             "these would replace is refused without --force")
    export.add_argument("--scene", type=scene_index, metavar="N",
                        help="which scene of a glTF file to load (default: the file's default scene)")
    export.add_argument("--pose", type=Path, help="pose JSON file to apply (after the animation, over it)")
    export.add_argument("--animation", metavar="NAME|INDEX",
                        help="pose the model as this clip is at --time (default with --time: the first clip)")
    export.add_argument("--time", type=finite, help="the clip's time in seconds (default 0; loops past the end)")
    export.add_argument("--script", type=Path, metavar="FILE.py",
                        help="a Python script, as `render --script` runs it: setup(app) once, then update(app, t, "
                             "dt) once (at --time), or once per --record step")
    export.add_argument("--record", type=frames, metavar="START:END:STEP",
                        help="run the script's update at these times (seconds, END included) and key every bone "
                             "(and morph weight) at each step into the clip --clip, from time 0")
    export.add_argument("--clip", metavar="NAME",
                        help="name of the clip --record makes (replacing one of that name), or of the clip --bake "
                             "makes (default mix)")
    add_mix_option(export, "the model posed as the mix is at --time (mixer.time = T, default 0), its clips written "
                           "as they are; with --bake, the mix written as one clip. Not with --animation or --script")
    bake = export.add_argument_group("--bake: the mix as one clip")
    bake.add_argument("--bake", action="store_true",
                      help="write the --mix, layers included, as one clip keyed at every frame from --start to --end "
                           "(viewer.bake): the file's clips are replaced by it, and it is posed as the mix is at "
                           "--start; reading it back gives the mix at every frame. Node constraints "
                           "(VRMC_node_constraint) are baked in as drawn, and not written again")
    bake.add_argument("--fps", type=positive_finite, metavar="N", help="the bake's frames per second (default 30)")
    bake.add_argument("--start", type=finite, metavar="S",
                      help="the mix time the bake starts at, keyed at 0 in the clip (default 0)")
    bake.add_argument("--end", type=finite, metavar="E",
                      help="the mix time the bake ends at (default: --start plus the longest playing clip's duration "
                           "over its speed)")
    add_springs_option(bake, on="bake the spring bones (VRMC_springBone, --spring-chain) into the clip as render --mix "
                               "draws them: from rest at mix time 0 (a pre-roll up to --start), stepped at 1/60 s; the "
                               "file then holds no live springs (the default where the model has them)",
                       off="bake the spring joints as the mix has them, without the springs' swing")
    export.add_argument("--apply-pose-as-bind", action="store_true",
                        help="bake the posed shape into the meshes and make the pose the bind (Blender's Apply "
                             "Pose as Rest Pose): the file at rest shows the pose")
    export.add_argument("--force", action="store_true",
                        help="replace the files OUT writes beside it (its .bin, images, textures) where they "
                             "exist, and MODEL itself (and the files it names) when --out is the same file")
    add_motion_options(export)  # --motion: the retargeted clip is written with the model's own
    export.set_defaults(run=run)


def run(args) -> int:
    from ..editing.export import save_model
    from ..model.animation import clip_time

    check_arguments(args)
    mix = read_mix(args)  # not a mix file: one line, before the model loads
    pose = read_pose(args.pose)
    scene = load_scene(args)
    baked = None
    if mix is not None:
        apply_mix(scene, args, mix)  # a clip or bone the model lacks: one line, nothing written
        if args.bake:
            baked = bake_mix(args, scene)
        else:
            scene.mixer.time = args.time or 0.0
    elif args.animation is not None or args.time is not None:
        clip = select_animation(scene, args.animation)
        if clip is None:
            logger().warning(f"--time: {args.model or 'the built-in character'} has no animations; exporting its "
                             "pose as loaded")
        else:
            clip.apply(clip_time(args.time or 0.0, clip.duration))
    if pose is not None:
        apply_pose_data(scene, pose, args.pose)
    if args.script is not None:
        if not run_script(args, scene, pose):
            return 1
    # No output over a file the command read, nor over an existing side file without --force;
    # --force replaces the model's own files only when --out is the model itself (save_gltf and
    # save_usd check every file they write: the .bin, the images, the textures).
    path = save_model(scene, args.out, apply_pose_as_bind=args.apply_pose_as_bind, inputs=input_files(args),
                      force=args.force)
    clips = len(scene.animations)
    meshes = len(scene.meshes)
    if baked is not None:
        baked, swung, constrained = baked
        frames_ = len(baked.channels[0].times) if baked.channels else 1
        parts = []
        if swung:
            chains, joints = swung
            parts.append(f"its springs ({counted(chains, 'chain')}, {counted(joints, 'joint')})" if chains
                         else f"its springs ({counted(joints, 'joint')})")
        if constrained:
            parts.append(f"its {counted(constrained, 'node constraint')}")
        what = "the mix" + (f" and {' and '.join(parts)}" if parts else "")
        live = [word for word, done in (("springs", swung), ("constraints", constrained)) if done]
        live = f"; no live {' or '.join(live)}" if live else ""
        print(f"wrote {path} ({counted(meshes, 'mesh')}, 1 clip: {baked.name!r}, {what} baked into "
              f"{counted(frames_, 'frame')} at {args.fps or 30:g} fps{live})")
        return 0
    print(f"wrote {path} ({counted(meshes, 'mesh')}, {counted(clips, 'clip')})")
    return 0


def bake_mix(args, scene):
    """The --mix baked into one clip (--clip, default "mix") that replaces the scene's clips; the
    scene posed as the clip is at 0 (what the file shows at rest). With the springs on (the
    default where the model has them), their swing is baked in and the scene keeps no live
    springs: a player that runs VRMC_springBone would swing the baked joints a second time. The
    node constraints (VRMC_node_constraint) likewise: every constrained node keyed as drawn, and
    none left in the scene or the file. (clip, (chains, joints) baked or None, constraints baked)."""
    from ..errors import ViewerError
    from ..gltf.constraints import EXTENSION as CONSTRAINTS
    from ..gltf.springs import EXTENDED, EXTENSION
    from ..motion.bake import bake, bakes_constraints, bakes_springs

    start = 0.0 if args.start is None else args.start
    springs = bakes_springs(scene)  # on unless --no-springs, where the model has chains
    constrained = len(scene.constraints) if bakes_constraints(scene) else 0
    baked = bake(scene, fps=args.fps or 30.0, start=start, end=args.end, name=args.clip or "mix", springs=springs)
    if not baked.channels and not getattr(baked, "morph_channels", None):
        raise ViewerError(f"--bake: the mix in {args.mix} moves nothing (no clip in it plays and its layers are "
                          "empty): nothing to bake")
    scene.mixer.time = start
    scene.mixer.stop_all()  # the pose stays; the mixer no longer plays the clips that go
    scene.animations = [baked]
    swung = None
    if springs:
        chains = scene.springs
        swung = (len(chains.chains), len(chains))  # (0 chains: joints added with no chain name)
        chains.reset()
        chains.clear()  # baked: none left to write or to swing again
        scene.file_extensions = [name for name in scene.file_extensions if name not in (EXTENSION, EXTENDED)]
    if constrained:  # baked: a player that runs VRMC_node_constraint would constrain them a second time
        scene._constraints = None
        scene.file_extensions = [name for name in scene.file_extensions if name != CONSTRAINTS]
    if springs or constrained:
        baked.apply(0.0)  # the file at rest is the clip's first frame (the springs swung up to --start)
    return baked, swung, constrained


def check_arguments(args) -> None:
    """Everything that can be told before loading: the options together, the output's type and
    folder, the input not overwritten without --force, the script's path."""
    from ..errors import ViewerError

    if args.out is None:
        raise ViewerError("give --out OUT.glb (or OUT.gltf, OUT.usdz, OUT.usda, OUT.usdc)")
    if args.out.suffix.lower() not in GLTF_SUFFIXES + USD_SUFFIXES:
        raise ViewerError(f"--out {args.out}: the output must be a .glb or .gltf file (glTF), or a .usdz, .usda "
                          "or .usdc file (USD)")
    check_output_folder("--out", args.out)
    mix = getattr(args, "mix", None)
    bake = getattr(args, "bake", False)
    if mix is not None and args.script is not None:
        raise ViewerError("--mix and --script: give one (a script plays a mix itself: app.scene.mixer.load(FILE) in "
                          "its setup, and --record keys what it shows)")
    if bake and mix is None:
        raise ViewerError("--bake writes a mix as one clip: give --mix FILE.json")
    if not bake:
        given = [f"--{name}" for name in ("fps", "start", "end") if getattr(args, name, None) is not None]
        given += [option for option, value in (("--springs", getattr(args, "springs", None) is True),
                                               ("--no-springs", getattr(args, "springs", None) is False),
                                               ("--spring-chain", bool(getattr(args, "spring_chain", None))))
                  if value]
        if given:
            raise ViewerError(f"{' and '.join(given)} go{'es' if len(given) == 1 else ''} with --bake: give "
                              "--mix FILE.json --bake")
    if bake and args.time is not None:
        raise ViewerError("--bake starts the clip at --start: leave out --time")
    if bake and args.start is not None and args.end is not None and args.end < args.start:
        raise ViewerError(f"--end {args.end:g} is before --start {args.start:g}")
    if args.record is not None and args.script is None:
        raise ViewerError("--record runs a script's update at each step: give --script FILE.py")
    if args.record is not None and not args.clip:
        raise ViewerError("--record keys a new clip: give its name with --clip NAME")
    if args.clip is not None and args.record is None and not bake:
        raise ViewerError("--clip names the clip --record or --bake makes: give --record START:END:STEP, or --mix "
                          "FILE.json --bake")
    if args.record is not None and args.time is not None:
        raise ViewerError("--record sets the script's times itself: leave out --time")
    if args.model is not None and not args.force and Path(args.model).exists() and args.out.exists() \
            and os.path.samefile(args.model, args.out):
        raise ViewerError(f"--out {args.out}: that would overwrite the model {args.model}; give --force to "
                          "replace it")
    if args.script is not None:
        from ..editing.script import check_script_path

        check_script_path(args.script)


def run_script(args, scene, pose) -> bool:
    """Run the script on ``scene`` as `render --script` does: setup once, then update once at
    --time, or once per --record step, keying every bone into --clip after each. False (the
    script's fault told in one line) when it failed."""
    from ..camera import OrbitCamera
    from ..editing.script import ScriptRunner
    from ..editing.script_app import HeadlessApp

    times = args.record if args.record is not None else [args.time or 0.0]
    step = times[1] - times[0] if len(times) > 1 else 0.0
    app = HeadlessApp(scene, (800, 600), camera=OrbitCamera())
    app.begin_frame(times[0], 0)
    runner = ScriptRunner(args.script, debug=getattr(args, "debug", False))
    if not runner.start(app):
        return False
    recorder = None
    if args.record is not None:
        existing = scene.find_animation(args.clip)
        if existing is not None:  # a new recording replaces the clip of that name
            scene.animations.remove(existing)
        recorder = scene.record_keyframes(args.clip)
    for number, time in enumerate(times):
        app.begin_frame(time, number)
        if pose is not None:
            apply_pose_data(scene, pose, args.pose)
        runner.update(app, time, step)
        if runner.last_error is not None:
            return False
        if recorder is not None:
            recorder.capture(time - times[0])
        if app.closed:
            break
    if recorder is not None:
        recorder.finish()
    return True
