"""What the commands share: argument types, the usage-error parser, the progress bar, and the
checks and helpers (pose files, animation choice, output folders) that several commands use."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

DEFAULT_PNG = "boneviewer.png"


def size(text: str):
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 800x600, got {text!r}") from None
    if not (1 <= width <= 16384 and 1 <= height <= 16384):
        raise argparse.ArgumentTypeError(f"{text}: each side must be 1..16384 pixels")
    return width, height


class Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit 2, like every other user error; a value that
    starts with '-' after an option that takes one (``--bvh-up -z``, ``--target -1,0,0``,
    ``--yaw -30``) is that option's value. Sub-parsers are of this class too."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # An empty path (--out '', check '') is a usage error, not the current folder (Path('') is
        # '.': render --out-dir '' wrote into it): for every option and positional of type=Path.
        self.register("type", Path, _non_empty_path)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    def parse_known_args(self, args=None, namespace=None):
        words = sys.argv[1:] if args is None else list(args)
        return super().parse_known_args(self._glue_dash_values(words), namespace)

    def _glue_dash_values(self, words: list[str]) -> list[str]:
        """argparse takes a word starting with '-' for a value only when it looks like '-5' or
        '-.5'; '-z' and '-1,0,0' it takes for an unknown option, and the option before it then
        'expected one argument'. So ``--opt WORD`` becomes ``--opt=WORD`` when --opt is one of
        this parser's options that takes exactly one value and WORD starts with a single '-' and
        is not itself one of its options. Words after '--' are left alone; a sub-command's words
        are glued by its own parser (which knows its options)."""
        glued, index = [], 0
        while index < len(words):
            word = words[index]
            if word == "--":
                return glued + words[index:]
            following = words[index + 1] if index + 1 < len(words) else None
            if following is not None and self._takes_one_value(word) and self._is_dash_value(following):
                glued.append(f"{word}={following}")
                index += 2
            else:
                glued.append(word)
                index += 1
        return glued

    def _takes_one_value(self, word: str) -> bool:
        action = self._option_string_actions.get(word)
        if action is None and word.startswith("--") and "=" not in word and self.allow_abbrev:
            matches = {a for name, a in self._option_string_actions.items() if name.startswith(word)}
            action = matches.pop() if len(matches) == 1 else None  # as argparse resolves --bvh-u
        return action is not None and bool(action.option_strings) and action.nargs in (None, 1)

    def _is_dash_value(self, word: str) -> bool:
        if len(word) < 2 or not word.startswith("-") or word.startswith("--"):
            return False
        # -h, or a short option with its value attached (-ovalue, -o=value), stays an option.
        return word.split("=", 1)[0] not in self._option_string_actions and word[:2] not in self._option_string_actions


def _non_empty_path(text: str) -> Path:
    if text == "":
        raise argparse.ArgumentTypeError("expected a path, got an empty one")
    return Path(text)


def whole_number(text: str, expected: str, least: int, too_small: str) -> int:
    """``text`` as an int of at least ``least``; the error says what was ``expected``, or ``too_small``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{text}: {too_small}")
    return value


def scene_index(text: str) -> int:
    return whole_number(text, "a scene number (0, 1, ...)", 0, "scene numbers start at 0")


def positive_finite(text: str) -> float:
    value = finite(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text}: must be more than 0")
    return value


def positive_int(text: str) -> int:
    return whole_number(text, "a whole number", 1, "must be at least 1")


def finite(text: str) -> float:
    """A number that fits float32 as every model and camera value must (checks.MAX_MAGNITUDE)."""
    from ..model.checks import LIMIT_TEXT, MAX_MAGNITUDE

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not abs(value) <= MAX_MAGNITUDE:
        raise argparse.ArgumentTypeError(f"{text}: must be a finite number with a magnitude up to {LIMIT_TEXT}")
    return value


def pitch(text: str) -> float:
    value = finite(text)
    if not -89.0 <= value <= 89.0:
        raise argparse.ArgumentTypeError(f"{text}: must be between -89 and 89 degrees")
    return value


def frames(text: str):
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


def check_creatable_folder(option: str, folder: Path) -> None:
    """A folder that exists or can be made: its nearest existing ancestor is a writable folder."""
    from ..errors import ViewerError, symlink_fault

    existing = folder.absolute()
    while not existing.exists() and existing != existing.parent:
        fault = symlink_fault(existing) if os.path.islink(existing) else None
        if fault:  # the link itself, not a folder under it: mkdir would say "File exists"
            raise ViewerError(f"{option} {folder}: cannot create it: {existing} is {fault}")
        existing = existing.parent
    if existing == folder.absolute() and not existing.is_dir():
        raise ViewerError(f"{option} {folder}: is a file, not a folder")
    if not existing.is_dir():
        raise ViewerError(f"{option} {folder}: cannot create it: {existing} is a file")
    if not os.access(existing, os.W_OK):
        raise ViewerError(f"{option} {folder}: cannot create it: {existing} is not writable")


def read_pose(path):
    """The validated pose file, read once (None: no pose)."""
    from ..editing.pose import load_pose

    return None if path is None else load_pose(path)


def apply_pose_data(scene, pose: dict, path) -> None:
    from ..editing.pose import apply_pose

    apply_pose(scene, {"bones": pose}, source=f"pose file {path}")


def logger():
    import logging

    return logging.getLogger("boneviewer")


def select_animation(scene, spec):
    """The clip named or numbered by ``spec``; the first clip when spec is None; or None."""
    from ..errors import ViewerError

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
    count = f"{len(names)} animation{'s' if len(names) != 1 else ''}"
    numbers = "0" if len(names) == 1 else f"0 to {len(names) - 1}"
    listed = ", ".join(repr(name) for name in names)
    if spec.lstrip("-").isdigit():
        raise ViewerError(f"--animation {spec}: no animation number {spec} (this model has {count}, numbered "
                          f"{numbers}: {listed})")
    raise ViewerError(f"--animation {spec}: no animation named {spec!r} (this model has {count}: {listed}; "
                      f"or give its number, {numbers})")


def named_bone(scene, option: str, name: str):
    """The model's bone of that name, or an error listing its bones (as pose files do)."""
    return scene.require_bone(name, f"{option} {name}")


class Progress:
    """A one-line progress bar on stderr, redrawn in place when stderr is a terminal."""

    def __init__(self, total: int, unit: str = "frames"):
        self.total, self.unit, self.interactive = total, unit, sys.stderr.isatty()
        self.started = __import__("time").perf_counter()
        self.tenths_shown = 0  # not a terminal: a line each time another tenth is done

    def update(self, done: int) -> None:
        elapsed = __import__("time").perf_counter() - self.started
        filled = int(30 * done / self.total)
        line = f"[{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total} {self.unit}, {elapsed:.1f} s"
        if self.interactive:
            print(f"\r{line}", end="", file=sys.stderr, flush=True)
        elif done == self.total or done * 10 // self.total > self.tenths_shown:
            # by tenths crossed, not multiples of a tenth: work done in runs (synth's 8 images) skips those
            self.tenths_shown = done * 10 // self.total
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.interactive:
            print(file=sys.stderr)


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def listen_address(text: str):
    """``[HOST:]PORT`` for --listen: (host, port), the host 127.0.0.1 unless given."""
    from ..errors import ViewerError
    from ..remote.server import parse_listen

    try:
        return parse_listen(text)
    except ViewerError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix(f"--listen {text}: ")) from None


def max_clients(text: str) -> int:
    from ..remote.server import MAX_CLIENTS_LIMIT

    value = whole_number(text, "a whole number", 1, "must be at least 1")
    if value > MAX_CLIENTS_LIMIT:
        raise argparse.ArgumentTypeError(f"{text}: at most {MAX_CLIENTS_LIMIT}")
    return value


def add_listen_options(parser, required: bool) -> None:
    """--listen, --token and --max-clients, as `view` and `serve` take them."""
    parser.add_argument("--listen", type=listen_address, metavar="[HOST:]PORT", required=required,
                        help="accept connections from viewer.remote clients on PORT (0: a free one), on HOST "
                             "(default 127.0.0.1: this machine only); prints 'listening on HOST:PORT token TOKEN'")
    parser.add_argument("--token", metavar="TOKEN",
                        help="the token clients must present (default: $BONEVIEWER_TOKEN, else a random one)")
    parser.add_argument("--max-clients", type=max_clients, metavar="N",
                        help="clients connected at once; more are refused with who holds the places (default 16)")


def start_listening(args):
    """The started RemoteServer for --listen/--token, and its one line on stdout."""
    from ..errors import ViewerError
    from ..remote.server import RemoteServer

    token = args.token if args.token is not None else os.environ.get("BONEVIEWER_TOKEN") or None
    if token is not None and not token.strip():
        raise ViewerError("--token: the token must not be empty")
    host, port = args.listen
    server = RemoteServer(host, port, token,
                          **({} if args.max_clients is None else {"max_clients": args.max_clients})).start()
    shown = f"[{host}]" if ":" in host else host
    print(f"listening on {shown}:{server.address[1]} token {server.token}", flush=True)
    return server
# --- skinning: linear blend or dual quaternions (every command that draws frames) -----------------
def skinning(text: str) -> str:
    from ..errors import ViewerError
    from ..model.mesh import skinning_mode

    try:
        return skinning_mode(text)
    except ViewerError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("skinning: ")) from None


def add_skinning_option(parser) -> None:
    """--skinning lbs|dq, as render, view, serve, batch and synth take it (every skinned mesh's
    ``mesh.skinning``)."""
    parser.add_argument("--skinning", type=skinning, default="lbs", metavar="lbs|dq",
                        help="how vertices follow their bones: lbs (linear blend skinning, as Babylon.js and "
                             "three.js draw) or dq (dual quaternions, Blender's 'Preserve Volume': no candy wrapper "
                             "where a joint twists; scale and shear still blended linearly) (default lbs)")


# --- spring bones: on where the file has them, chains added by hand ------------------------------
SPRING_KEYS = {"stiffness": "stiffness", "drag": "drag", "gravity": "gravity", "radius": "radius"}


def spring_chain(text: str) -> dict:
    """BONE[:stiffness=S,drag=D,gravity=G,radius=R] as add_chain's arguments."""
    bone, _, rest = text.partition(":")
    if not bone.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected BONE[:stiffness=S,drag=D,gravity=G,radius=R]")
    chain = {"root_bone": bone.strip()}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, _, value = item.partition("=")
        if key.strip() not in SPRING_KEYS:
            raise argparse.ArgumentTypeError(f"{item!r}: expected stiffness=, drag=, gravity= or radius=")
        try:
            chain[SPRING_KEYS[key.strip()]] = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{item!r}: {value!r} is not a number") from None
    return chain


def add_springs_option(parser, chains: bool = True, on: str | None = None, off: str | None = None) -> None:
    """--springs/--no-springs and --spring-chain, as render, view and serve take them (synth:
    --springs alone, its models many; export: its own words for what they do to a bake)."""
    parser.add_argument("--springs", action="store_true", default=None,
                        help=on or "secondary motion: the spring bones (VRMC_springBone) swing after the body moves, "
                                   "simulated from the clip's start at 1/60 s steps (the default where the model has "
                                   "them)")
    parser.add_argument("--no-springs", dest="springs", action="store_false",
                        help=off or "the spring bones held at their rest (the clip alone)")
    if not chains:
        return
    parser.add_argument("--spring-chain", action="append", type=spring_chain, default=None,
                        metavar="BONE[:stiffness=S,drag=D,gravity=G,radius=R]",
                        help="add a spring chain from BONE down its first children (a tail, hair); "
                             "three-vrm's defaults: stiffness 1, drag 0.4, gravity 0, radius 0; repeatable")


def apply_springs(args, scene) -> None:
    """The chains --spring-chain adds (on the rest pose, as loaded) and --no-springs."""
    from ..errors import ViewerError

    for chain in getattr(args, "spring_chain", None) or ():
        try:
            scene.springs.add_chain(**chain)
        except ViewerError as error:
            raise ViewerError(f"--spring-chain {chain['root_bone']}: {error}") from None
    wanted = getattr(args, "springs", None)
    if wanted is False:
        scene.springs.enabled = False
    elif wanted and not len(scene.springs):
        logger().warning(f"--springs: {args.model or 'the model'} has no spring chains (add one with --spring-chain)")


# --- loading a model, BVH options and --motion (every command that opens a model) ---------------
BVH_UP_AXES = ("x", "y", "z", "-x", "-y", "-z", "+x", "+y", "+z")
BVH_DESTS = ("bvh_scale", "bvh_up", "bvh_forward")
MOTION_DESTS = BVH_DESTS + ("motion", "motion_clip", "motion_bone_map")


def bvh_up(text: str) -> str:
    if text.lower() not in BVH_UP_AXES:
        raise argparse.ArgumentTypeError(f"expected an axis: x, y, z, -x, -y or -z, got {text!r}")
    return text.lower()


def add_pool_options(parser, ray_help: str) -> None:
    """--workers and --ray, as batch and synth take them (``ray_help``: what --ray runs as Ray
    tasks, and where); check_pool_options refuses the two together."""
    parser.add_argument("--workers", type=positive_int, metavar="N",
                        help=f"worker processes of the local pool, each with one GL context (default: the number "
                             f"of cores, {os.cpu_count()})")
    parser.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                        help=f"{ray_help}; needs pip install 'boneviewer[ray]'")


def check_pool_options(args) -> None:
    from ..errors import ViewerError

    if args.ray is not None and args.workers is not None:
        raise ViewerError("--workers sizes the local pool; with --ray, Ray places the tasks on its workers")


def add_bvh_options(parser) -> None:
    """--bvh-scale, --bvh-up and --bvh-forward: how a BVH file (the model or --motion's) loads;
    --keep-file-axes: an FBX file's own axes and units, not glTF's."""
    parser.add_argument("--bvh-scale", type=positive_finite, metavar="S",
                        help="a BVH file's scale (default: the figure 1.7 units tall in its first frame)")
    parser.add_argument("--bvh-up", type=bvh_up, metavar="AXIS",
                        help="a BVH file's up axis: y, z, -z, ... (default: detected from its first frame)")
    parser.add_argument("--bvh-forward", type=bvh_up, metavar="AXIS",
                        help="the axis a BVH file's figure faces, turned to +Z (glTF's front): z, -z, x, ... "
                             "(default: detected from its first frame's hips or shoulders)")
    parser.add_argument("--keep-file-axes", dest="file_axes", action="store_true",
                        help="keep an FBX or USD file's own up axis, front and unit (default: turned to glTF's: "
                             "+Y up, front +Z, metres, as Blender and three.js import them)")


class ModelsAction(argparse.Action):
    """MODEL ...: the model files (``models``), the first also as ``model`` (what a command with
    one model reads)."""

    def __call__(self, parser, namespace, values, option_string=None):
        values = list(values or [])
        setattr(namespace, self.dest, values)
        namespace.model = values[0] if values else None


def add_motion_options(parser, bone_map: bool = True) -> None:
    """--bvh-scale, --bvh-up, --bvh-forward, --motion, --motion-clip and (unless the command has
    its own --bone-map that takes the map too, as render does) --bone-map MAP.json."""
    group = parser.add_argument_group("BVH, FBX and USD files, and motion from another file")
    add_bvh_options(group)
    group.add_argument("--motion", type=Path, metavar="FILE",
                       help="retarget a clip of this file onto the model and play it: a BVH capture, or a glTF, FBX "
                            "or USD file with a clip (a character's, or a skeleton's with no mesh)")
    group.add_argument("--motion-clip", metavar="NAME", help="the --motion file's clip (default: its first)")
    if bone_map:
        group.add_argument("--bone-map", dest="motion_bone_map", type=Path, metavar="MAP.json",
                           help='--motion\'s bone map, {"target bone": "source bone"} (default: by the naming schemes)')


def expression_setting(text: str) -> tuple[str, float]:
    """NAME=WEIGHT (--expression): an expression's name and its weight, a finite number."""
    import argparse

    name, equals, value = text.rpartition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=WEIGHT (e.g. happy=1), got {text!r}")
    return name, finite(value)


def add_expression_option(parser) -> None:
    """--expression NAME=WEIGHT, repeatable: a VRM avatar's expressions (named groups of morph weights)."""
    parser.add_argument("--expression", dest="expressions", type=expression_setting, action="append",
                        metavar="NAME=WEIGHT",
                        help="set an expression of a VRM avatar (happy, angry, sad, relaxed, surprised, aa, blink, "
                             "..., or the file's own) to WEIGHT, 0..1; repeatable (`info MODEL` lists them)")


def bvh_options(args) -> dict:
    """The BVH options of ``args`` as ``load_model``'s keywords; warns (one line) when they are
    given and no file they apply to is (the model, or --motion, a .bvh file)."""
    options = {name: getattr(args, name, None) for name in BVH_DESTS}
    given = [f"--{name.replace('_', '-')}" for name in BVH_DESTS if options[name] is not None]
    model, motion = getattr(args, "model", None), getattr(args, "motion", None)
    if given and not any(path is not None and Path(path).suffix.lower() == ".bvh" for path in (model, motion)):
        what = f"{model} is not a BVH file" if model is not None else "the built-in character is not a BVH file"
        to = " or a --motion FILE.bvh" if hasattr(args, "motion") else ""
        they = "they apply" if len(given) > 1 else "it applies"
        logger().warning(f"{', '.join(given)} ignored: {what} ({they} to a .bvh model{to})")
    options["file_axes"] = bool(getattr(args, "file_axes", False))
    from ..loaders import USD_SUFFIXES

    if options["file_axes"] and not any(path is not None and Path(path).suffix.lower() in (".fbx",) + USD_SUFFIXES
                                        for path in (model, motion)) and not (model and Path(model).is_dir()):
        logger().warning("--keep-file-axes ignored: it applies to an FBX or USD model")
    return options


def motion_namespace(args) -> dict:
    """The motion options of ``args``, to pass on to another command's namespace."""
    return {name: getattr(args, name, None) for name in MOTION_DESTS}


def load_scene(args):
    """The command's model (``args.model``, ``args.scene``, the BVH options), with the --motion
    file's clip retargeted onto it as its first animation. Says a BVH file's scale, up axis and
    facing."""
    return load_scene_and_source(args)[0]


def load_scene_and_source(args):
    """(the model as load_scene gives it, the --motion file's own scene or None): the capture
    drawn beside the character it moves (render --show-source)."""
    from ..errors import ViewerError, why_missing
    from ..loaders import load_model

    _split_bone_map(args)
    bvh = bvh_options(args)
    scene = load_model(args.model, getattr(args, "scene", None), **bvh)
    if getattr(args, "skinning", None) is not None:
        scene.set_skinning(args.skinning)
    apply_springs(args, scene)
    _say_bvh(args.model, scene)
    _say_axes(args.model, scene)
    for name, weight in getattr(args, "expressions", None) or ():
        scene.set_expression(name, weight)  # one that does not exist: one line naming those there are
    motion = getattr(args, "motion", None)
    bone_map, clip_name = getattr(args, "motion_bone_map", None), getattr(args, "motion_clip", None)
    if motion is None:
        if bone_map is not None or clip_name is not None:
            raise ViewerError(f"{'--bone-map MAP.json' if bone_map is not None else '--motion-clip'} goes with "
                              "--motion FILE: give the file to take the motion from")
        return scene, None
    from ..model.retarget import read_bone_map, retarget

    from ..loaders import MODEL_SUFFIXES

    if Path(motion).suffix.lower() not in MODEL_SUFFIXES:
        raise ViewerError(f"--motion {motion}: expected a .bvh, .glb, .gltf, .fbx or USD (.usd, .usda, .usdc, .usdz) "
                          "file")
    if not Path(motion).exists():  # said here, or load_model would call it the model
        raise ViewerError(f"--motion {motion}: {why_missing(motion)}")
    mapping = None if bone_map is None else read_bone_map(bone_map)
    source = load_model(motion, None, **bvh)
    _say_bvh(motion, source)
    try:
        clip = retarget(source, scene, clip=clip_name, bone_map=mapping)
    except ViewerError as error:
        raise ViewerError(f"--motion {motion}: {error}") from None
    scene.animations.remove(clip)
    scene.animations.insert(0, clip)  # the clip a command plays first
    return scene, source


def input_files(args) -> dict:
    """{file: what uses it} for every file the command reads: the model and the files it names
    (a glTF file's buffers and images), the --motion file and its files, and the --pose,
    --camera, --script, bone map and --environment files; no output may be written over one of them."""
    from ..sources import source_files

    _split_bone_map(args)
    files = {}
    for option, role in (("motion", "the --motion file"), ("model", "the model")):
        value = getattr(args, option, None)
        if value is not None and Path(value).is_file():
            files.update(source_files(value, role))
    for value in (getattr(args, "models", None) or [])[1:]:  # several models side by side
        if value is not None and Path(value).is_file():
            files.update(source_files(value, "a model"))
    for option, dest in (("--pose", "pose"), ("--camera", "camera"), ("--script", "script"),
                         ("--bone-map", "motion_bone_map"), ("--mix", "mix")):
        value = getattr(args, dest, None)
        if isinstance(value, (str, Path)):
            files.setdefault(Path(value), f"the {option} file")
    from ..look import BUILT_IN_ENVIRONMENTS

    environment = getattr(args, "environment", None)
    if isinstance(environment, str) and environment.strip().lower() not in BUILT_IN_ENVIRONMENTS:
        files.setdefault(Path(environment), "the --environment file")
    return files


def _split_bone_map(args) -> None:
    """render's --bone-map is both the bone-colour view (no value) and --motion's map (a value)."""
    value = getattr(args, "bone_map", None)
    if not isinstance(value, str):
        return
    if getattr(args, "motion", None) is None and args.model is None and not value.lower().endswith(".json"):
        args.model, args.bone_map = value, True  # `render --bone-map MODEL`: the colour view of MODEL
        return
    args.motion_bone_map, args.bone_map = Path(value), False


def _say_axes(path, scene) -> None:
    """What an FBX or USD reader did with the file's axes and units, on one line."""
    info = getattr(scene, "import_axes", None)
    if info is None or logger().disabled:
        return
    kind = "FBX" if Path(path).suffix.lower() == ".fbx" else "USD"
    print(f"boneviewer: {path}: {kind} {info['description']}", file=sys.stderr)


def _say_bvh(path, scene) -> None:
    info = getattr(scene, "bvh_import", None)
    if info is None or logger().disabled:
        return
    from ..bvh.build import describe_import

    print(f"boneviewer: {path}: BVH {describe_import(info)}", file=sys.stderr)


# --- the look: image-based light, tone mapping, exposure (render, view, serve, batch, synth) --------
LOOK_DESTS = ("environment", "environment_rotation", "tone_mapping", "exposure", "environment_filter")


def value_or_range(parse):
    """An argparse type for X (always X) or MIN:MAX (each image draws one), each part read by ``parse``."""

    def parse_range(text: str):
        parts = text.split(":")
        if len(parts) > 2:
            raise argparse.ArgumentTypeError(f"expected a number or MIN:MAX, got {text!r}")
        values = tuple(parse(part) for part in parts)
        if values[0] > values[-1]:
            raise argparse.ArgumentTypeError(f"{text}: need MIN <= MAX")
        return values[0], values[-1]

    return parse_range


def tone_mapping(text: str) -> str:
    from ..look import TONE_MAPPINGS

    if text.strip().lower() not in TONE_MAPPINGS:
        raise argparse.ArgumentTypeError(f"expected {', '.join(TONE_MAPPINGS)}, got {text!r}")
    return text.strip().lower()


def environment_filter(text: str) -> str:
    from ..look import ENVIRONMENT_FILTERS

    if text.strip().lower() not in ENVIRONMENT_FILTERS:
        raise argparse.ArgumentTypeError(f"expected {', '.join(ENVIRONMENT_FILTERS)}, got {text!r}")
    return text.strip().lower()


def unit_interval(text: str) -> float:
    value = finite(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text}: must be from 0 to 1")
    return value


def key_light_angles(text: str) -> tuple:
    """--key-light AZIMUTH,ELEVATION (degrees): the direction towards the light (viewer.look.key_light_direction)."""
    from ..look import key_light_direction

    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected AZIMUTH,ELEVATION in degrees, got {text!r}")
    azimuth, elevation = (finite(part) for part in parts)
    if not -90.0 <= elevation <= 90.0:
        raise argparse.ArgumentTypeError(f"{text}: the elevation must be from -90 to 90 degrees")
    return key_light_direction(azimuth, elevation)


def add_shadow_options(parser, default: bool, key_light: bool = True, contact: bool = False) -> None:
    """--shadows/--no-shadows, --shadow-intensity, --shadow-softness and (with ``key_light``)
    --key-light (issue 45); ``default``: whether shadows are on without either (the window: on;
    render, serve, batch, synth: off). synth draws its key light per image: no --key-light.
    ``contact``: --no-contact-shadow too (render: the cast shadow alone, as Babylon.js draws it)."""
    from ..options import RenderOptions

    options = RenderOptions()
    group = parser.add_argument_group("shadows")
    group.add_argument("--shadows", dest="shadows", action="store_true", default=default,
                       help="a contact shadow on the ground and shadows cast by the key light (the simple light's, "
                            "the file's first directional light, or with an environment the --key-light) "
                            f"({'the default here' if default else 'default: off'})")
    group.add_argument("--no-shadows", dest="shadows", action="store_false",
                       help=f"no shadows ({'default: on' if default else 'the default here'})")
    group.add_argument("--shadow-intensity", type=unit_interval, default=options.shadow_intensity, metavar="0..1",
                       help=f"how dark a full shadow is, 0 to 1 (default {options.shadow_intensity:g})")
    group.add_argument("--shadow-softness", type=unit_interval, default=options.shadow_softness, metavar="0..1",
                       help=f"how soft the shadows' edges are, 0 to 1 (default {options.shadow_softness:g})")
    if contact:
        group.add_argument("--no-contact-shadow", dest="contact_shadow", action="store_false", default=True,
                           help="with --shadows, no contact shadow on the ground: only the light's cast shadow "
                                "(as Babylon.js's ShadowGenerator draws)")
    if not key_light:
        return
    from ..look import key_light_angles as angles

    default_key = angles(options.key_light)
    group.add_argument("--key-light", type=key_light_angles, default=None, metavar="AZIMUTH,ELEVATION",
                       help="where the key light shines from, in degrees: azimuth about +Y from the model's front "
                            "(+Z) towards +X, elevation above the ground (default "
                            f"{default_key[0]:.2f},{default_key[1]:.2f}: the simple light's key, the direction "
                            f"{','.join(f'{v:g}' for v in options.key_light)}; with an .hdr environment the sun "
                            "found in it, where it has one)")


def shadow_options(args) -> dict:
    """RenderOptions' shadow fields from ``args`` (add_shadow_options)."""
    options = {"shadows": args.shadows, "shadow_intensity": args.shadow_intensity,
               "shadow_softness": args.shadow_softness}
    if getattr(args, "key_light", None) is not None:
        options["key_light"] = args.key_light
    if not getattr(args, "contact_shadow", True):
        options["contact_shadow"] = False
    return options


def say_shadow_light(look: dict) -> None:
    """With shadows and an .hdr environment, where the shadows come from: the sun found in the
    picture (its brightest region), or the key light when there is none or --key-light placed it."""
    import math

    from ..look import BUILT_IN_ENVIRONMENTS, environment_name

    environment = look.get("environment")
    if not look.get("shadows") or environment in BUILT_IN_ENVIRONMENTS:
        return
    name = environment_name(environment)
    if "key_light" in look:
        print(f"shadows: from the key light (--key-light), not the sun of {name}", flush=True)
        return
    from ..hdr import read_hdr
    from ..render.shadows import sun_direction

    sun = sun_direction(read_hdr(environment), look.get("environment_rotation", 0.0))
    if sun is None:
        print(f"shadows: no sun found in {name} (nothing stands out above the horizon); from the key light", flush=True)
        return
    azimuth = math.degrees(math.atan2(sun[0], sun[2])) % 360.0
    elevation = math.degrees(math.asin(max(-1.0, min(1.0, float(sun[1])))))
    print(f"shadows: from the sun of {name}, found at azimuth {azimuth:.0f}, elevation {elevation:.0f} degrees "
          f"(its brightest region; --key-light places another light)", flush=True)


def add_look_options(parser, draws: bool = False) -> None:
    """--environment, --environment-rotation, --tone-mapping and --exposure, defined once for every
    command that draws the model lit. ``draws`` (synth): --environment may be given more than
    once, and the rotation and the exposure may be MIN:MAX ranges; each image draws its own."""
    from ..look import DRAWN_EXPOSURE, DRAWN_ROTATION
    from ..options import RenderOptions

    default = RenderOptions()
    group = parser.add_argument_group("the look: image-based light, tone mapping, exposure")
    light = ("the light: an equirectangular Radiance .hdr (Babylon.js's orientation for it), studio (a neutral "
             "studio generated in code) or none (the simple key light)")
    if draws:
        group.add_argument("--environment", action="append", metavar="FILE.hdr|studio|none",
                           help=f"{light}; give it more than once and each image draws one of them "
                                f"(default {default.environment})")
        group.add_argument("--environment-rotation", type=value_or_range(finite), default=DRAWN_ROTATION,
                           metavar="DEG|MIN:MAX",
                           help="the environment's turn about +Y in degrees: each image draws one in MIN:MAX "
                                f"(default {DRAWN_ROTATION[0]:g}:{DRAWN_ROTATION[1]:g}), or DEG for every image")
        group.add_argument("--exposure", type=value_or_range(positive_finite), default=DRAWN_EXPOSURE,
                           metavar="X|MIN:MAX",
                           help="a linear multiplier before tone mapping: each image draws one in MIN:MAX, evenly in "
                                f"stops (default {DRAWN_EXPOSURE[0]:g}:{DRAWN_EXPOSURE[1]:g}), or X for every image")
    else:
        group.add_argument("--environment", default=default.environment, metavar="FILE.hdr|studio|none",
                           help=f"{light} (default {default.environment})")
        group.add_argument("--environment-rotation", type=finite, default=default.environment_rotation,
                           metavar="DEG", help="turn the environment DEG degrees about +Y (default 0)")
        group.add_argument("--exposure", type=positive_finite, default=default.exposure, metavar="X",
                           help="a linear multiplier before tone mapping, more than 0, as Babylon.js's "
                                f"imageProcessingConfiguration.exposure (default {default.exposure:g})")
    group.add_argument("--tone-mapping", type=tone_mapping, default=default.tone_mapping,
                       metavar="khr-neutral|aces|none",
                       help="Khronos PBR Neutral, ACES (Babylon.js's TONEMAPPING_ACES) or none; sRGB out "
                            f"(default {default.tone_mapping})")
    group.add_argument("--environment-filter", type=environment_filter, default=default.environment_filter,
                       metavar="mipmaps|ggx",
                       help="how reflections blur with roughness: mipmaps (the environment's box-filtered mips "
                            "read as Babylon.js reads them, so its pictures) or ggx (prefiltered by GGX importance "
                            f"sampling on the GPU; about 2 s more on a CPU renderer, once: cached) (default "
                            f"{default.environment_filter})")


def add_frame_options(parser, transparent: str = "RGBA images with alpha 0 there") -> None:
    """--no-skeleton, --no-grid, --background and --show-environment, defined once for every
    command that draws a frame (render, view, serve); ``transparent`` says what
    --background transparent gives there."""
    group = parser.add_argument_group("what the frame shows besides the model")
    group.add_argument("--no-skeleton", action="store_true", help="hide the skeleton overlay")
    group.add_argument("--no-grid", action="store_true", help="hide the ground grid")
    group.add_argument("--background", type=background_colour, metavar="COLOR|transparent",
                       help="the background: a colour (#rrggbb, or a name such as white) instead of the grey "
                            f"gradient, or transparent ({transparent})")
    group.add_argument("--show-environment", action="store_true",
                       help="draw the --environment behind the model instead of the grey gradient (the studio, or "
                            "the .hdr file; none: the gradient)")


def background_colour(text: str):
    """--background: ``transparent``, or a colour's (r, g, b) in 0..1 (viewer.look.colour)."""
    from ..look import colour

    try:
        return colour(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def frame_options(args) -> dict:
    """viewer.look.apply_frame's keywords from the frame options of ``args`` (add_frame_options):
    None where the command line leaves a setting as it is."""
    from ..errors import ViewerError

    if args.background is not None and args.show_environment:
        raise ViewerError("--background and --show-environment: give one (the environment is drawn in place of "
                          "the background)")
    return {"skeleton": False if args.no_skeleton else None, "grid": False if args.no_grid else None,
            "background": args.background, "show_environment": True if args.show_environment else None}


def look_options(args) -> dict:
    """RenderOptions' look fields from the look options of ``args`` (add_look_options), with the
    --environment file checked whole: a bad one is one line naming it, before any GL work."""
    from ..look import environment

    return {"environment": environment(args.environment, "--environment"),
            "environment_rotation": args.environment_rotation, "tone_mapping": args.tone_mapping,
            "exposure": args.exposure, "environment_filter": args.environment_filter}


def look_namespace(args) -> dict:
    """The look options of ``args``, to pass on to another command's namespace."""
    return {name: getattr(args, name) for name in LOOK_DESTS}


# --- --mix: a mix file played instead of one clip (render, export, synth) --------------------------
def add_mix_option(parser, what: str) -> None:
    parser.add_argument("--mix", type=Path, metavar="FILE.json",
                        help="play this mix file (the mixer's File > Save mix, mixer.save(), v.save_mix()): its "
                             f"clips with their weights, speeds, masks and fades, and its layers of tweaks; {what}")


def read_mix(args):
    """The --mix file's JSON, checked as far as it can be before the model loads (None: no --mix);
    and --mix with --animation or --rest refused: the mix says which clips play."""
    from ..errors import ViewerError
    from ..motion.files import read_mix_file

    path = getattr(args, "mix", None)
    if path is None:
        return None
    given = [option for option, dest in (("--animation", "animation"), ("--rest", "rest"))
             if getattr(args, dest, None) not in (None, False)]
    if given:
        raise ViewerError(f"--mix plays the clips the mix file names: leave out {' and '.join(given)}")
    return read_mix_file(path, f"--mix {path}")


def apply_mix(scene, args, data) -> None:
    """Make the scene's mixer as the --mix file says: every clip and bone it names checked against
    the model first (a --motion clip is one of the scene's clips, named as the retarget named it)."""
    from ..motion.files import apply_mix as apply

    apply(scene.mixer, data, f"--mix {args.mix}")
