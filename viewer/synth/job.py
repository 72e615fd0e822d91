"""One synthetic image: a pure function of (seed, index, options, the catalogue of models).

``draw`` takes every random choice of image ``index`` (model, clip, time, camera, light,
background, environment, its rotation, exposure) from a numpy Generator seeded by (seed, index) alone, so workers split the images
without talking, and a rerun, another number of workers or a Ray run gives the same bytes. A draw
that shows too little (nothing drawn, a sliver, too few keypoints visible: ``labels.shortfall``)
is drawn again from (seed, index, attempt) for attempt 1, 2, ... up to MAX_ATTEMPTS, so the
redraw is as pure as the first.
``render_images`` is the worker's task: it poses, draws (colour, part index and depth in one
draw) and labels a run of images, encoding the PNGs on a writer thread while the next image
renders, and returns {relative path: bytes} per image; the driver writes them. Each worker
process keeps its GL context, its loaded models and their retargeted clips for every task.
"""

from __future__ import annotations

import io
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

import numpy as np

from ..look import DRAWN_EXPOSURE, DRAWN_ROTATION
from ..options import RenderOptions
from . import labels as L

JOB_VERSION = 3  # bump when the outputs for the same inputs change: a resumed run then redoes every image
PNG_LEVEL = 1  # zlib level of the written PNGs: the fastest, a little larger than the default (6)
# Draws of one image before it fails: a single-sided plane seen from behind half the time still
# finds a draw that shows it with a chance of failing under 1e-9.
MAX_ATTEMPTS = 32


@dataclass(frozen=True)
class SynthOptions:
    """The ranges every draw comes from (written into annotations.json's ``info``)."""

    size: tuple = (256, 256)             # pixels (width, height)
    seed: int = 0
    pitch: tuple = (-10.0, 30.0)         # degrees, camera above (positive) or below the target; yaw all round
    fill: tuple = (0.3, 0.9)             # the character's height (or width, if it binds) over the image's
    target_offset: float = 0.05          # of the character's height, the target's random shift across the view
    fov: float = 40.0                    # vertical field of view, degrees
    light_pitch: tuple = (15.0, 75.0)    # degrees above the horizon of the key light; its yaw all round
    occlusion_distance: float = 0.08     # of the character's height: self-occlusion allowance of a keypoint
    min_visible: int = 1                 # keypoints visible (v=2) at least, else drawn again (all, for fewer)
    min_area: float = 0.001              # of the image's pixels the character covers at least, else drawn again
    backgrounds: tuple = ()              # background image files, composited behind (sorted)
    # The look (issue 27): each image draws one environment ("studio", "none" or an .hdr file's
    # absolute path), its turn about +Y in degrees, and an exposure (evenly in stops).
    environments: tuple = (RenderOptions.environment,)
    environment_rotation: tuple = DRAWN_ROTATION
    exposure: tuple = DRAWN_EXPOSURE
    tone_mapping: str = RenderOptions.tone_mapping
    environment_filter: str = RenderOptions.environment_filter
    skinning: str = "lbs"                # every skinned mesh's (--skinning): "lbs" or "dq"
    springs: bool = True                 # spring bones swing (simulated from the clip's start), where a file has them
    # Shadows (--shadows, issue 45), from each image's drawn key light; in the ranges (so the run's
    # key) only when on, so a run without them keeps the key it had.
    shadows: bool = False
    shadow_intensity: float = RenderOptions.shadow_intensity
    shadow_softness: float = RenderOptions.shadow_softness

    def as_json(self) -> dict:
        from ..look import environment_name

        data = asdict(self)
        if not self.shadows:
            for name in ("shadows", "shadow_intensity", "shadow_softness"):
                data.pop(name)
        return {**data, "size": list(self.size), "pitch": list(self.pitch), "fill": list(self.fill),
                "light_pitch": list(self.light_pitch), "backgrounds": [os.path.basename(b) for b in self.backgrounds],
                "environments": [environment_name(e) for e in self.environments],
                "environment_rotation": list(self.environment_rotation), "exposure": list(self.exposure),
                "yaw": [0.0, 360.0], "job_version": JOB_VERSION}


@dataclass(frozen=True)
class ClipEntry:
    name: str | int          # the clip's name, or its index when it has none
    index: int | None        # the model's own clip number, or None for a retargeted capture
    motion: str | None       # the capture's path (retargeted onto the model), else None
    duration: float
    # A mix file's JSON (--mix): the draw poses the mix at its time (mixer.time = t). Out of the
    # repr, which the run's key hashes: the key has the mix file's digest, and runs without a mix
    # keep the keys they had.
    mix: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class ModelEntry:
    path: str                # absolute
    name: str                # relative to the input (a file: its name)
    clips: tuple             # ClipEntry, own clips first; empty: the rest pose
    category: int            # COCO category id (one per skeleton layout)
    height: float            # the character's height (its rest box's extent along Y, else its largest side)
    bones: int               # keypoints (0: no skin, a rigid object)
    bone_map: str | None = None  # the bone map file its captures are retargeted through (None: the naming schemes)


@dataclass(frozen=True)
class Catalogue:
    models: tuple
    depth_scale: float
    load: dict = field(default_factory=dict)   # load_model's BVH keywords
    key: str = ""                              # the run's hash: a label file with another is redone
    inputs: tuple = ()                         # (absolute path, sha256) of every input file, for the manifest


@dataclass(frozen=True)
class Draw:
    model: int
    clip: int | None
    time: float
    yaw: float
    pitch: float
    fill: float
    offset: tuple            # (right, up) target shift, fractions of the character's height
    light: tuple             # key light direction (towards the light; environment "none")
    background: int | None
    crop: tuple              # (x, y) of the background's crop, fractions of the free room
    environment: int         # which of options.environments
    environment_rotation: float
    exposure: float


def draw(seed: int, index: int, options: SynthOptions, catalogue: Catalogue, attempt: int = 0) -> Draw:
    """Image ``index``'s random choices, from np.random.default_rng([seed, index]) alone (its
    ``attempt``-th redraw: [seed, index, attempt]); every number is drawn whatever the branch, so
    each choice keeps its place in the stream."""
    rng = np.random.default_rng([seed, index] if attempt == 0 else [seed, index, attempt])
    model = int(rng.integers(len(catalogue.models)))
    clips = catalogue.models[model].clips
    clip_pick, time_pick = rng.integers(1 << 30), rng.random()
    clip = int(clip_pick % len(clips)) if clips else None
    time = float(time_pick * clips[clip].duration) if clips else 0.0
    yaw, pitch = rng.uniform(0.0, 360.0), rng.uniform(*options.pitch)
    fill = rng.uniform(*options.fill)
    offset = tuple(float(v) for v in rng.uniform(-1.0, 1.0, 2) * options.target_offset)
    light_yaw, light_pitch = np.radians(rng.uniform(0.0, 360.0)), np.radians(rng.uniform(*options.light_pitch))
    light = (float(np.sin(light_yaw) * np.cos(light_pitch)), float(np.sin(light_pitch)),
             float(np.cos(light_yaw) * np.cos(light_pitch)))
    background_pick, crop = rng.integers(1 << 30), tuple(float(v) for v in rng.random(2))
    background = int(background_pick % len(options.backgrounds)) if options.backgrounds else None
    # The look, drawn after everything above (whose places in the stream it leaves as they were).
    environment = int(rng.integers(1 << 30) % len(options.environments))
    rotation = float(rng.uniform(*options.environment_rotation))
    low, high = options.exposure
    stops = rng.uniform(np.log2(low), np.log2(high))
    exposure = float(low) if low == high else float(np.exp2(stops))
    return Draw(model, clip, time, float(yaw), float(pitch), float(fill), offset, light, background, crop,
                environment, rotation, exposure)


def image_name(index: int) -> str:
    return f"{index:06d}"


# --- the worker ------------------------------------------------------------------------------------
class LoadedModel:
    """A model as a worker keeps it: the scene, the skeleton it labels, the part of each vertex,
    its clips (own, then retargeted captures, made on first use) and its loaded pose to go back to."""

    def __init__(self, entry: ModelEntry, catalogue: Catalogue):
        from ..model.retarget import main_skeleton

        self.entry = entry
        self.scene = quiet_load(entry.path, catalogue.load)
        self.skeleton = main_skeleton(self.scene) if self.scene.skeletons else None
        self.parts = L.vertex_parts(self.scene, self.skeleton)
        self.own_clips = list(self.scene.animations)
        self.retargeted = {}
        self.nodes = loaded_node_rows(self.scene.nodes)
        self.morphs = [(mesh, mesh.morph_weights.copy()) for mesh in self.scene.morph_meshes]
        self.mixes = {}  # a mix's JSON -> the mixer's state as the mix made it

    def reset(self) -> None:
        """Back to the pose it loaded in: a clip animates some bones, nodes and weights; the
        previous image's clip must leave nothing behind."""
        for skeleton in self.scene.skeletons:
            skeleton.return_to_rest()
        for table, rows, position, quaternion, scaling in self.nodes:  # a copy per table, not a setter per node
            table.write(rows, position, quaternion, scaling)
        for mesh, weights in self.morphs:
            mesh.morph_weights = weights

    def clip(self, entry: ClipEntry, catalogue: Catalogue):
        if entry.index is not None:
            return self.own_clips[entry.index]
        if entry.motion not in self.retargeted:
            self.reset()
            self.retargeted[entry.motion] = retargeted_clip(self.scene, entry.motion, catalogue.load,
                                                            self.entry.bone_map)
        return self.retargeted[entry.motion]

    def pose(self, draw_: Draw, catalogue: Catalogue) -> None:
        from ..model.animation import clip_time

        clips = self.entry.clips
        mix = None if draw_.clip is None else clips[draw_.clip].mix
        clip = None if draw_.clip is None or mix is not None else self.clip(clips[draw_.clip], catalogue)
        springs = self.scene.springs
        swing = draw_.clip is not None and springs.enabled and len(springs) > 0

        def at(time):
            # the springs' rotations outlive the reset to the loaded pose, as in the frame loop
            held = [(j.bone, np.array(j.bone.rotation_quaternion)) for j in springs.joints] if swing else ()
            self.reset()
            for bone, quaternion in held:
                bone.assign_trs(rotation_quaternion=quaternion)
            if mix is not None:
                self.play_mix(mix, time)
            elif clip is not None:
                clip.apply(clip_time(time, clip.duration, loop=False))

        if swing and mix is not None:  # as render --mix draws the mix at this time
            from ..motion.playback import mix_with_springs

            self.reset()
            self.play_mix(mix, 0.0)  # the mixer as the mix made it
            mix_with_springs(self.scene)(draw_.time)
        elif swing:  # each image simulates from the clip's start: the same draw, the same picture
            springs.restart()
            springs.advance_to(draw_.time, at)
        else:
            at(draw_.time)
        self.scene.prepare()


    def play_mix(self, mix: str, time: float) -> None:
        """The mix at ``time``: the mixer as the mix made it, then every action at that time."""
        from ..motion.files import apply_mix

        mixer = self.scene.mixer
        held = self.mixes.get(mix)
        if held is None:
            apply_mix(mixer, json.loads(mix), "--mix")
            held = self.mixes[mix] = mixer.hold()
        mixer.put_back(held)
        mixer.time = time


def loaded_node_rows(nodes) -> list:
    """(table, rows, positions, quaternions, scalings) per NodeTable of ``nodes``: their TRS as
    they are now, to write back in one call per table."""
    groups: dict = {}
    for node in nodes:
        groups.setdefault(id(node.table), (node.table, []))[1].append(node.table_row)
    saved = []
    for table, rows in groups.values():
        rows = np.array(rows, dtype=np.intp)
        saved.append((table, rows, table.position[rows], table.quaternion[rows], table.scaling[rows]))
    return saved


_SOURCES: dict = {}  # (capture path, its load options) -> its loaded scene, per process


def quiet_load(path: str, load: dict, quiet: bool = True):
    """load_model; ``quiet``: without its warnings (a worker's: the driver loaded every file first
    and said them once)."""
    import logging

    from ..loaders import load_model

    logger = logging.getLogger("boneviewer")
    was = logger.disabled
    logger.disabled = was or quiet
    try:
        return load_model(path, None, **load)
    finally:
        logger.disabled = was


def capture_scene(motion: str, load: dict, quiet: bool = True):
    """The capture's loaded scene, loaded once per process for each set of BVH options."""
    key = (motion, tuple(sorted(load.items())))
    source = _SOURCES.get(key)
    if source is None:
        source = _SOURCES[key] = quiet_load(motion, load, quiet)
    return source


def retargeted_clip(scene, motion: str, load: dict, bone_map: str | None, quiet: bool = True):
    """The capture's first clip retargeted onto ``scene`` (kept out of its animations) through
    the map file ``bone_map`` (None: the naming schemes)."""
    from ..model.retarget import read_bone_map, retarget

    source = capture_scene(motion, load, quiet)
    clip = retarget(source, scene, bone_map=None if bone_map is None else read_bone_map(bone_map))
    scene.animations.remove(clip)
    return clip


class Worker:
    """This process's GL context and models (one per worker process, kept for every task)."""

    def __init__(self, size):
        from ..render.headless import HeadlessRenderer

        self.headless = HeadlessRenderer(size)
        self.models: dict = {}
        self.backgrounds: dict = {}

    def model(self, entry: ModelEntry, catalogue: Catalogue) -> LoadedModel:
        loaded = self.models.get(entry.path)
        if loaded is None:
            loaded = self.models[entry.path] = LoadedModel(entry, catalogue)
        return loaded

    def background(self, path: str, size, crop) -> np.ndarray:
        """The image scaled to cover ``size`` (its aspect kept), cropped at ``crop`` of the free room."""
        from PIL import Image

        image = self.backgrounds.get(path)
        if image is None:
            with Image.open(path) as opened:
                image = self.backgrounds[path] = opened.convert("RGB")
        width, height = size
        scale = max(width / image.width, height / image.height)
        scaled = image.resize((max(width, round(image.width * scale)), max(height, round(image.height * scale))),
                              Image.BILINEAR)
        x = int(crop[0] * (scaled.width - width))
        y = int(crop[1] * (scaled.height - height))
        return np.asarray(scaled.crop((x, y, x + width, y + height)), np.float64)


_WORKER: Worker | None = None


def worker(size) -> Worker:
    global _WORKER
    if _WORKER is None:
        _WORKER = Worker(size)
    _WORKER.headless.resize(size)
    return _WORKER


def camera_for(loaded: LoadedModel, draw_: Draw, options: SynthOptions):
    """The drawn camera: yaw and pitch as drawn, aimed at the posed character's middle (shifted
    by the drawn offset across the view), from the distance at which its height, or its width
    where that binds, fills the drawn fraction of the image."""
    from ..camera import MIN_DISTANCE, OrbitCamera, drawn_points

    width, height = options.size
    aspect = width / height
    camera = OrbitCamera(yaw=draw_.yaw, pitch=draw_.pitch, fov_y=options.fov)
    points = drawn_points(loaded.scene)
    right, up, back = camera.axes()
    across, upward, depth = points @ right, points @ up, points @ back
    extent = max(upward.max() - upward.min(), (across.max() - across.min()) / aspect, 1e-6)
    middle = np.array([(across.max() + across.min()) / 2.0, (upward.max() + upward.min()) / 2.0,
                       (depth.max() + depth.min()) / 2.0])
    shift = np.array(draw_.offset) * loaded.entry.height
    camera.target = (middle[0] + shift[0]) * right + (middle[1] + shift[1]) * up + middle[2] * back
    tan = np.tan(np.radians(options.fov) / 2.0)
    distance = extent / (2.0 * tan * draw_.fill) + (depth.max() - middle[2])  # the fill at the nearest side
    nearest = (depth.max() - middle[2]) / (1.0 - 2.0 * camera.near_ratio)  # near plane clear of the character
    camera.distance = max(distance, nearest, MIN_DISTANCE)
    return camera


def encode_png(pixels: np.ndarray) -> bytes:
    """PNG bytes of an (H, W, 3) uint8, (H, W) uint8 or (H, W) uint16 image (16-bit greyscale)."""
    from PIL import Image

    buffer = io.BytesIO()
    if pixels.dtype == np.uint16:
        image = Image.frombuffer("I;16", (pixels.shape[1], pixels.shape[0]), np.ascontiguousarray(pixels).tobytes(),
                                 "raw", "I;16", 0, 1)
    else:
        image = Image.fromarray(np.ascontiguousarray(pixels))
    image.save(buffer, format="PNG", compress_level=PNG_LEVEL)
    return buffer.getvalue()


def render_images(indices, options: SynthOptions, catalogue: Catalogue) -> dict:
    """{index: {relative path: bytes}} for each image: images/, depth/, parts/ PNGs and
    labels/NNNNNN.json (the image's COCO entry and annotation, written last). The PNGs are
    encoded on a writer thread while the next image renders. A failure names the image."""
    os.environ.setdefault("LP_NUM_THREADS", "1")  # one core per worker: see library.run.timed_job
    state = worker(options.size)
    results = {}
    with ThreadPoolExecutor(1) as writer:
        pending = []
        for index in indices:
            try:
                color, parts, depth, label = render_one(state, index, options, catalogue)
            except Exception as error:  # noqa: BLE001 - one image's failure is reported, named
                from ..library.job import _one_line

                results[index] = f"image {index}: {_one_line(error)}"
                continue
            pending.append((index, label, writer.submit(encode_all, color, parts, depth)))
        for index, label, future in pending:
            name = image_name(index)
            color_png, parts_png, depth_png = future.result()
            results[index] = {f"images/{name}.png": color_png, f"parts/{name}.png": parts_png,
                              f"depth/{name}.png": depth_png,
                              f"labels/{name}.json": json.dumps(label, separators=(",", ":")).encode()}
    return results


def encode_all(color, parts, depth):
    return encode_png(color), encode_png(parts), encode_png(depth)


class Attempt:
    """One draw of an image, rendered and labelled in numpy: what ``render_one`` keeps, or draws
    again when it shows too little."""

    def __init__(self, state: Worker, index: int, attempt: int, options: SynthOptions, catalogue: Catalogue):
        self.attempt = attempt
        self.choice = choice = draw(options.seed, index, options, catalogue, attempt)
        self.entry = entry = catalogue.models[choice.model]
        self.loaded = loaded = state.model(entry, catalogue)
        loaded.scene.set_skinning(options.skinning)
        loaded.scene.springs.enabled = options.springs
        loaded.pose(choice, catalogue)
        camera = camera_for(loaded, choice, options)
        width, height = options.size
        view, projection = camera.view_matrix(), camera.projection_matrix(width / height)
        self.K, self.world_to_camera = L.opencv_camera(view, projection, width, height)
        render_options = RenderOptions(show_skeleton=False, show_grid=False, key_light=choice.light,
                                       transparent_background=choice.background is not None,
                                       environment=options.environments[choice.environment],
                                       environment_rotation=choice.environment_rotation, exposure=choice.exposure,
                                       tone_mapping=options.tone_mapping,
                                       environment_filter=options.environment_filter, shadows=options.shadows,
                                       shadow_intensity=options.shadow_intensity,
                                       shadow_softness=options.shadow_softness)
        self.rgba, self.parts, self.view_depth = state.headless.render_labels(loaded.scene, camera, render_options,
                                                                             loaded.parts)
        self.occlusion = options.occlusion_distance * entry.height
        if loaded.skeleton is not None:
            self.joints = L.to_camera(L.joint_positions(loaded.scene, loaded.skeleton), self.world_to_camera)
            self.points = L.keypoints(self.joints, self.K, self.view_depth, self.occlusion)
        else:
            self.joints, self.points = np.zeros((0, 3)), np.zeros((0, 3))
        self.drawn = self.view_depth > 0
        self.box, self.area = L.mask_box(self.drawn)
        self.shortfall = L.shortfall(self.points, self.area, width * height, options.min_visible, options.min_area)


def render_one(state: Worker, index: int, options: SynthOptions, catalogue: Catalogue):
    """(colour (H, W, 3), part image, 16-bit depth image, label dict) of image ``index``: its
    first draw that shows enough (``labels.shortfall``), else a ViewerError saying why none did."""
    from collections import Counter

    from ..errors import ViewerError
    from ..look import environment_name

    reasons = Counter()
    for attempt in range(MAX_ATTEMPTS):
        found = Attempt(state, index, attempt, options, catalogue)
        if found.shortfall is None:
            break
        reasons[found.shortfall] += 1
    else:
        told = ", ".join(f"{count} {why}" for why, count in reasons.most_common())
        raise ViewerError(f"none of {MAX_ATTEMPTS} draws shows enough of the character for --min-visible "
                          f"{options.min_visible} and --min-area {options.min_area:g} ({told}); lower them, or "
                          "narrow the draws (--pitch, --fill)")
    choice, entry, width, height = found.choice, found.entry, *options.size
    color = found.rgba[..., :3]
    if choice.background is not None:
        behind = state.background(options.backgrounds[choice.background], options.size, choice.crop)
        alpha = found.rgba[..., 3:4].astype(np.float64) / 255.0
        color = np.rint(found.rgba[..., :3] * alpha + behind * (1.0 - alpha)).astype(np.uint8)
    points = found.points
    annotation = {"id": index + 1, "image_id": index + 1, "category_id": entry.category, "iscrowd": 0,
                  "keypoints": [float(v) if k % 3 < 2 else int(v) for k, v in enumerate(points.reshape(-1))],
                  "num_keypoints": int(np.count_nonzero(points[:, 2])),
                  "keypoints_3d": [float(v) for v in found.joints.reshape(-1)],
                  "bbox": found.box, "area": found.area, "segmentation": L.rle(found.drawn)}
    clip = entry.clips[choice.clip] if choice.clip is not None else None
    name = image_name(index)
    image = {"id": index + 1, "file_name": f"images/{name}.png", "depth_file_name": f"depth/{name}.png",
             "parts_file_name": f"parts/{name}.png", "width": width, "height": height, "model": entry.name,
             "clip": None if clip is None else clip.name, "time": choice.time,
             "motion": None if clip is None or clip.motion is None else os.path.basename(clip.motion),
             "occlusion_distance": found.occlusion, "attempt": found.attempt,
             "environment": environment_name(options.environments[choice.environment]),
             "environment_rotation": choice.environment_rotation, "exposure": choice.exposure,
             "camera": {"K": found.K.tolist(), "world_to_camera": found.world_to_camera.tolist()}}
    if choice.background is not None:
        image["background"] = os.path.basename(options.backgrounds[choice.background])
    label = {"key": catalogue.key, "image": image, "annotations": [annotation]}
    return color, L.part_image(found.parts, entry.bones), L.depth_image(found.view_depth, catalogue.depth_scale), label
