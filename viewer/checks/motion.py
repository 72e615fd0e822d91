"""Motion checks over a loaded Scene's clips (numpy, no GL, no file format): foot skating, the
mesh below the ground, jitter, loop seams, rotation flips, stretching bones and keys that are
not numbers a GPU can use. Findings as the rig checks make them (``findings``), and per clip the
figures behind them (``ClipFigures.as_json``), so anyone can recompute a finding.

Every clip is sampled at its own key rate (the median step between its keys; 30 frames/s where
it has one key), all frames at once: the joints' world positions and rotations over the frames,
bone by bone (FramePoses: retarget.SkeletonFrames's numbers), and the meshes' lowest point over
the frames from one product per group of vertices (only the up coordinate of each is needed).

Thresholds are scaled to the character: the figures below are for one 1.75 m tall (the largest
side of its rest bounds).

- The ground: y = 0 of the model where the feet rest there (their usual height in contact is
  within the contact height of 0), else that usual height: the median, over the frames where a
  foot is in contact, of the mesh's lowest point. ``ground=`` sets it.
- Feet: the bones the naming schemes (bone_names.py) call leftFoot and rightFoot, or those named.
  A foot's height is its joint's height above the ground less the joint's height above the sole
  at rest (so a planted foot is at 0). In contact as Guided Motion Diffusion (GMD) defines it:
  below CONTACT_HEIGHT in two consecutive frames. GMD's foot skate ratio: the share of steps
  (frame f to f+1) where a foot in contact moves faster than CONTACT_SPEED along the ground, in
  that step and in the mean of the 5 steps around it (scipy's uniform_filter1d, zeros outside).
- ``foot-skating``: a foot that drifts more than DRIFT along the ground during one contact; the
  frames named are those where it moves (from 10 % to 90 % of the drift, one frame either side).
- ``ground-penetration``: the meshes' lowest point more than PENETRATION below the ground.
- ``jitter``: a joint whose third difference of position (TransPose's and AGRoL's jitter, in
  m/s^3), relative to its parent joint, stands out from the clip's own for 10 frames or more,
  and is rough as noise is (its fourth difference larger than its third).
- ``loop-seam``: a looping clip whose first pose is not where its last pose (held, or moving
  on at its last velocity) leads, by more than DRIFT and three times the joint's usual change
  of velocity.
- ``rotation-flip``: consecutive rotation keys with a negative dot product, or a turn larger
  than FLIP_FACTOR times the channel's usual step (and more than FLIP_DEGREES).
- ``bone-stretch``: a bone with translation keys whose length (from its parent joint) strays
  more than STRETCH from its length in the file's pose.
- ``key-non-finite``, ``key-denormal``: keys holding NaN, infinity or numbers float32 keeps
  only as denormals (slow on CPUs, flushed to zero on GPUs), with their frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ViewerError
from .findings import finding

REFERENCE_HEIGHT = 1.75     # m: the character the thresholds below are for
CONTACT_HEIGHT = 0.05       # m: a foot lower than this is in contact (GMD)
CONTACT_SPEED = 0.5         # m/s: a foot in contact faster than this skates (GMD)
DRIFT = 0.02                # m: a planted foot moving more than this along the ground drifts
PENETRATION = 0.01          # m: the mesh below the ground by more than this
GMD_WINDOW = 5              # steps in GMD's moving mean of the foot's speed
DEFAULT_FPS = 30.0          # a clip with no key rate of its own
KEY_TIME_TOLERANCE = 1e-5   # s: keys closer than this are one frame
MAX_FRAMES = 200_000        # more is not a clip to check frame by frame
JITTER_FACTOR = 3.0         # a joint's windowed third difference over the clip's own level
JITTER_FLOOR = 0.002        # m: the least windowed third difference that is jitter
JITTER_ROUGHNESS = 1.65     # the fourth difference over the third where it is noise
JITTER_WINDOW = 5           # frames the differences are averaged over
STRETCH = 0.05              # of a bone's length in the file's pose
FLIP_FACTOR = 8.0           # a key's turn over its channel's usual turn (95th percentile)
FLIP_DEGREES = 30.0         # the least turn between keys that can be too fast
FLOAT32_TINY = float(np.finfo(np.float32).tiny)


@dataclass
class MotionOptions:
    """``check``'s motion options: the ground height (None: found), the feet (None: by the
    naming schemes), and whether every clip is meant to loop."""

    ground: float | None = None
    feet: tuple | None = None
    loop: bool = False


@dataclass
class ClipFigures:
    """What the checks measured on one clip (the ``motion`` entries of ``check --json``)."""

    clip: str
    fps: float
    frames: int
    height: float = 0.0
    thresholds: dict = field(default_factory=dict)
    ground: float | None = None
    ground_from: str = ""
    feet: list = field(default_factory=list)
    foot_skate_ratio: float | None = None
    lowest: list = field(default_factory=list)
    jitter: dict = field(default_factory=dict)
    loop: bool = False

    def as_json(self) -> dict:
        return {"clip": self.clip, "fps": self.fps, "frames": self.frames, "height": self.height,
                "thresholds": self.thresholds, "ground": self.ground, "ground_from": self.ground_from,
                "foot_skate_ratio": self.foot_skate_ratio, "feet": self.feet, "lowest": self.lowest,
                "jitter": self.jitter, "loop": self.loop}


def find_feet(skeleton, feet=None, scene=None) -> list:
    """[(side, bone index in skeleton.bones)] of the feet: ``feet`` names them (a name the
    skeleton lacks is a ViewerError), else the leftFoot and rightFoot of the ``scene``'s humanoid
    map (a VRM avatar's) or of the naming schemes."""
    from ..model.retarget import skeleton_parts

    names = [b.name for b in skeleton.bones]
    if feet is not None:
        found = []
        for side, name in zip(("left", "right"), feet):
            if name not in names:
                listed = ", ".join(names[:15]) + (", ..." if len(names) > 15 else "")
                raise ViewerError(f"--feet: no bone {name!r} in skeleton {skeleton.name!r} (its bones: {listed})")
            found.append((side, names.index(name)))
        return found
    parts = skeleton_parts(scene, skeleton)
    return [(side, names.index(parts[f"{side}Foot"])) for side in ("left", "right") if f"{side}Foot" in parts]


def clip_frame_times(clip) -> tuple[np.ndarray, float]:
    """(the times a clip is checked at, its frame rate): its own key rate from its first key to
    its last, or DEFAULT_FPS where it has one key."""
    arrays = [channel.times for channel in clip.channels] + [c.times for c in getattr(clip, "morph_channels", ())]
    arrays = list({id(a): a for a in arrays if len(a)}.values())  # a BVH clip's channels share one array
    if not arrays:
        raise ViewerError(f"clip {clip.name!r} has no keys: nothing to check")
    first = arrays[0]
    if all(len(a) == len(first) and np.array_equal(a, first) for a in arrays[1:]):
        keys = first  # every channel keyed at the same times (a capture, a baked clip)
    else:
        keys = np.unique(np.concatenate(arrays))
    keys = keys[np.isfinite(keys)]
    steps = np.diff(keys)
    steps = steps[steps > KEY_TIME_TOLERANCE]  # one key, written as float32 by one file and float64 by another
    fps = 1.0 / float(np.median(steps)) if len(steps) else DEFAULT_FPS
    if len(keys) == 0:
        return np.zeros(1), fps
    count = int(round((keys[-1] - keys[0]) * fps)) + 1
    if count > MAX_FRAMES:
        raise ViewerError(f"clip {clip.name!r}: {count} frames at {fps:.4g} frames/s is too many to check")
    times = keys[0] + np.arange(count) / fps
    times[-1] = min(times[-1], keys[-1])
    return times, fps


def motion_findings(scene, options: MotionOptions | None = None, clips=None) -> tuple[list, list]:
    """(findings, [ClipFigures]) for ``clips`` (default: every clip of ``scene``) on the scene's
    main skeleton. Leaves the scene as it was (nothing is posed)."""
    from ..model.retarget import main_skeleton

    options = options or MotionOptions()
    clips = list(scene.animations if clips is None else clips)
    if not clips or not scene.skeletons:
        return [], []
    skeleton = main_skeleton(scene)
    feet = find_feet(skeleton, options.feet, scene)
    found, figures = [], []
    for clip in clips:
        clip_found, clip_figures = ClipCheck(scene, skeleton, clip, feet, options).run()
        found += clip_found
        figures.append(clip_figures)
    return found, figures


def _moving_mean(values: np.ndarray, width: int) -> np.ndarray:
    """The mean of ``width`` values centred on each along the last axis (zeros beyond the ends:
    np.convolve's "same"), every row at once."""
    half, count = width // 2, values.shape[-1]
    padded = np.zeros(values.shape[:-1] + (count + 2 * half + 1,))
    np.cumsum(values, axis=-1, out=padded[..., half + 1:count + half + 1])
    padded[..., count + half + 1:] = padded[..., count + half:count + half + 1]
    return (padded[..., width:] - padded[..., :-width]) / width


def _ranges(mask: np.ndarray) -> list[tuple[int, int]]:
    """[(first, last)] of each run of True in a 1-d mask."""
    if not mask.any():
        return []
    padded = np.concatenate(([False], mask, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2])]


def _frames(a: int, b: int) -> str:
    return f"frame {a}" if a == b else f"frames {a}-{b}"


def gmd_skating(height: np.ndarray, plane: np.ndarray, fps: float, contact_height: float, speed: float):
    """GMD's foot skating for one foot: (contact (F-1,), speed along the ground (F-1,), skating
    (F-1,)) from its heights (F,) and ground-plane positions (F, 2)."""
    contact = (height[:-1] < contact_height) & (height[1:] < contact_height)
    step_speed = np.linalg.norm(np.diff(plane, axis=0), axis=1) * fps
    padded = np.concatenate((np.zeros(GMD_WINDOW // 2), step_speed, np.zeros(GMD_WINDOW // 2)))
    window = np.convolve(padded, np.ones(GMD_WINDOW) / GMD_WINDOW, mode="valid")
    skating = contact & (step_speed > speed) & (window > speed)
    return contact, step_speed, skating


def _rotations(q: np.ndarray) -> np.ndarray:
    """(3, 3, ...) rotation parts of unit quaternions (4, ...) as (x, y, z, w), components
    first (elementwise products over the frames are then contiguous); rows as transforms.compose."""
    x, y, z, w = q
    return np.array([[1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)],
                     [2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)],
                     [2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)]])


class FramePoses:
    """A skeleton's joint positions (F, N, 3) and the up column of its world rotations (F, N,
    3: the 3x3 parts, scale included) at each of ``times`` under a clip, bone by bone over all
    frames at once: retarget.SkeletonFrames's numbers (the file's pose where the clip has no
    channel, the mesh's placement above the roots) without its 4x4 stacks, components first.
    ``rest_world``: (N, 4, 4) at that pose."""

    def __init__(self, scene, skeleton, clip, times: np.ndarray):
        from ..model.retarget import placement_matrix, sample_channel
        from ..model.transforms import decompose

        bones = list(skeleton.bones)
        self.bones = bones
        position = {id(b): i for i, b in enumerate(bones)}
        self.parents = [position.get(id(b.get_parent()), -1) for b in bones]
        depth = []
        for i in range(len(bones)):
            d, j = 0, i
            while self.parents[j] >= 0:
                j, d = self.parents[j], d + 1
            depth.append(d)
        self.order = sorted(range(len(bones)), key=depth.__getitem__)
        self.placement = placement = placement_matrix(scene, skeleton)
        rest_local = np.array([b.get_file_pose_matrix() for b in bones]).reshape(-1, 4, 4)
        self.rest_world = np.empty_like(rest_local)
        for i in self.order:
            parent = self.parents[i]
            self.rest_world[i] = rest_local[i] @ (placement if parent < 0 else self.rest_world[parent])
        rest_scaling, rest_rotation, rest_translation = decompose(rest_local)
        keyed: dict = {}
        target = {id(b.get_pose_target()): i for i, b in enumerate(bones)}
        for channel in clip.channels:
            i = target.get(id(channel.node))
            if i is not None:
                keys = channel.times
                exact = (channel.interpolation != "CUBICSPLINE" and len(keys) == len(times)
                         and float(np.abs(keys - times).max()) <= 1e-9)
                keyed.setdefault(i, {})[channel.path] = channel.values if exact else sample_channel(channel, times)
        frames = len(times)
        rotation = [None] * len(bones)   # (3, 3, F) or (3, 3, 1) each
        where = [None] * len(bones)      # (3, F) or (3, 1)
        # The keyed bones' local rotations, all at once: (3, 3, K, F), scale included.
        moved = sorted(keyed)
        quaternions = np.empty((4, len(moved), frames))
        scales = np.empty((3, len(moved), frames))
        for k, i in enumerate(moved):
            quaternions[:, k] = np.asarray(keyed[i].get("rotation", rest_rotation[i][None])).T
            scales[:, k] = np.asarray(keyed[i].get("scale", rest_scaling[i][None])).T
        quaternions /= np.sqrt((quaternions ** 2).sum(axis=0))
        local_rotations = _rotations(quaternions) * scales[:, None]
        slot = {i: k for k, i in enumerate(moved)}
        for i in self.order:
            parent = self.parents[i]
            if i not in slot:
                local_rotation, local_position = rest_local[i, :3, :3, None], rest_local[i, 3, :3, None]
            else:
                local_rotation = local_rotations[:, :, slot[i]]
                local_position = np.asarray(keyed[i].get("translation", rest_translation[i][None])).T
            if parent < 0:
                above, at = placement[:3, :3, None], placement[3, :3, None]
            else:
                above, at = rotation[parent], where[parent]
            rotation[i] = np.einsum("abf,bcf->acf", local_rotation, above)
            where[i] = np.einsum("af,abf->bf", local_position, above) + at
        # Bone-major (N, 3, F) for the skinning's columns, frame-major (F, N, 3) for the rest.
        self.up = np.empty((len(bones), 3, frames))
        positions = np.empty((len(bones), 3, frames))
        for i in range(len(bones)):
            self.up[i] = rotation[i][:, 1, :]
            positions[i] = where[i]
        self.heights = positions[:, 1]  # (N, F)
        self.by_bone = positions  # (N, 3, F)
        self.positions = positions.transpose(2, 0, 1).copy()


class ClipCheck:
    """The motion checks on one clip (see the module's docstring)."""

    def __init__(self, scene, skeleton, clip, feet, options: MotionOptions):
        self.scene, self.skeleton, self.clip, self.feet, self.options = scene, skeleton, clip, feet, options
        low, high = scene.rest_bounds
        self.height = float(np.max(high - low)) or 1.0
        self.scale = self.height / REFERENCE_HEIGHT

    def pointer(self, bone: str = "", frames: str = "") -> str:
        return "/".join(part for part in (self.clip.name, bone, frames) if part)

    def run(self) -> tuple[list, ClipFigures]:
        clip = self.clip
        times, fps = clip_frame_times(clip)
        self.fps, self.times = fps, times
        figures = ClipFigures(clip.name, round(fps, 6), len(times), round(self.height, 6))
        figures.loop = bool(self.options.loop or getattr(clip, "loop", False))
        found = self.key_findings()
        if any(f.code == "key-non-finite" for f in found):
            return found, figures  # the poses cannot be sampled
        frames = FramePoses(self.scene, self.skeleton, clip, times)
        self.frames = frames
        self.positions = frames.positions  # (F, N, 3)
        self.moving = {i for i in range(len(frames.bones)) if self._has_channel(frames.bones[i])}
        s = self.scale
        figures.thresholds = {"contact_height": CONTACT_HEIGHT * s, "contact_speed": CONTACT_SPEED * s,
                              "drift": DRIFT * s, "penetration": PENETRATION * s, "stretch": STRETCH,
                              "speed_window": GMD_WINDOW, "jitter_factor": JITTER_FACTOR,
                              "jitter_floor": JITTER_FLOOR * s, "jitter_roughness": JITTER_ROUGHNESS,
                              "jitter_window": JITTER_WINDOW, "flip_factor": FLIP_FACTOR, "flip_degrees": FLIP_DEGREES}
        lowest, lowest_bone = self.lowest_points()
        found += self.feet_findings(figures, lowest, lowest_bone)
        found += self.jitter_findings(figures)
        found += self.stretch_findings()
        if figures.loop:
            found += self.loop_findings()
        return found, figures

    def _has_channel(self, bone) -> bool:
        target = bone.get_pose_target()
        return any(channel.node is target for channel in self.clip.channels)

    def frame_of(self, time: float) -> int:
        return int(np.clip(round((time - self.times[0]) * self.fps), 0, len(self.times) - 1))

    # --- keys ----------------------------------------------------------------------------------
    def key_findings(self) -> list:
        """Keys that are no numbers (NaN, infinity) or float32 denormals, and rotation keys that
        flip hemisphere or turn faster than the channel does elsewhere."""
        found = []
        for channel in self.clip.channels:
            name = channel.node.name
            values = channel.values[:, 1] if channel.interpolation == "CUBICSPLINE" else channel.values
            values = values.reshape(len(channel.times), -1)
            if not (np.isfinite(values).all() and np.isfinite(channel.times).all()):
                bad = ~np.isfinite(values).all(axis=1) | ~np.isfinite(channel.times)
                k = int(np.argmax(bad))
                frame = self.frame_of(float(channel.times[k])) if np.isfinite(channel.times[k]) else 0
                found.append(finding("key-non-finite", f"clip {self.clip.name!r}, bone {name!r}: {channel.path} key "
                                     f"{k} holds NaN or infinity ({int(bad.sum())} such keys)",
                                     self.pointer(name, _frames(frame, frame))))
                continue
            magnitude = np.abs(values)
            if ((magnitude < FLOAT32_TINY) & (magnitude > 0)).any():
                small = (magnitude < FLOAT32_TINY) & (magnitude > 0)
                rows = small.any(axis=1)
                k = int(np.argmax(rows))
                frame = self.frame_of(float(channel.times[k]))
                found.append(finding("key-denormal", f"clip {self.clip.name!r}, bone {name!r}: {channel.path} key {k} "
                                     f"holds {values[k][small[k]][0]:.3g}, a float32 denormal ({int(rows.sum())} "
                                     "such keys)", self.pointer(name, _frames(frame, frame))))
            if channel.path == "rotation" and len(values) > 1:
                found += self._flip_findings(channel, values)
        return found

    def _flip_findings(self, channel, values) -> list:
        norm = np.sqrt(np.einsum("ij,ij->i", values, values))
        dots = np.einsum("ij,ij->i", values[:-1], values[1:]) / np.maximum(norm[:-1] * norm[1:], 1e-300)
        negative = dots < 0
        # The turn between keys, 2 acos|dot|, falls as |dot| rises: its 95th percentile is |dot|'s 5th.
        closeness = np.minimum(np.abs(dots), 1.0)
        k = int(0.05 * (len(closeness) - 1))
        usual = float(np.degrees(2.0 * np.arccos(np.partition(closeness, k)[k])))
        limit = max(FLIP_DEGREES, FLIP_FACTOR * usual)
        fast = closeness < np.cos(np.radians(limit) / 2.0) if limit < 180.0 else np.zeros(len(closeness), bool)
        if not (fast.any() or negative.any()):
            return []
        turn = np.degrees(2.0 * np.arccos(closeness))
        found, name = [], channel.node.name
        for mask, why in ((negative, "the keys' dot product is negative (the same turn written the other way "
                                     "round: a blend or a spline between them takes the long way)"),
                          (fast & ~negative, "a turn of {turn:.0f} degrees, more than {factor:g}x the channel's usual "
                                             "step")):
            for a, b in _ranges(mask):
                first, last = self.frame_of(float(channel.times[a])), self.frame_of(float(channel.times[b + 1]))
                found.append(finding("rotation-flip", f"clip {self.clip.name!r}, bone {name!r}: rotation keys {a} to "
                                     f"{b + 1}: " + why.format(turn=float(turn[a:b + 1].max()), factor=FLIP_FACTOR),
                                     self.pointer(name, _frames(first, last))))
        return found

    # --- the mesh's lowest point ---------------------------------------------------------------
    def lowest_points(self) -> tuple[np.ndarray, np.ndarray]:
        """(the meshes' lowest height at each frame (F,), the bone its lowest vertex follows
        most (F,) as an index in frames.bones); the joints' where no mesh follows the skeleton.

        The meshes: those skinned by a skeleton whose joints are the clip's bones (several
        skins may share the joints), and those placed under a bone's node (RobotExpressive's
        parts). A vertex's height at a frame is ``p_k . c`` summed over its influences k, ``p_k``
        the vertex in its joint's space (through its inverse bind) and ``c`` the joint's world up
        column: one product over the vertices and frames. Vertices are grouped by their main
        joint; a group whose bounding sphere, under each of its joints, stays above the lowest
        height found so far (from a few of its vertices) is skipped at that frame, so the result
        is exact at a fraction of the products. A group that follows one joint alone is moved
        rigidly: its centre's height is then the mean of its vertices', so no lower than their
        lowest, which makes a first lowest height found without a product."""
        frames = self.frames
        bones = frames.bones
        count = len(self.positions)
        by_target = {id(b.get_pose_target()): i for i, b in enumerate(bones)}
        rigid, blended = [], []  # (points (V, 4) or q (V, 4u), joint or used joints, centre, radius, main joint)
        for mesh in self.scene.meshes:
            influences = self._influences(mesh, by_target)
            if influences is None:
                continue
            joints, weights, points = influences  # (V, K) bone indices, (V, K), (V, K, 4)
            strongest = weights.argmax(axis=1)
            vertices = np.arange(len(joints))
            main = joints[vertices, strongest]
            alone = weights[vertices, strongest] >= 1.0 - 1e-6  # one joint moves the vertex
            order = np.argsort(main, kind="stable")
            starts = np.flatnonzero(np.r_[True, np.diff(main[order]) != 0])
            for members in np.split(order, starts[1:]):
                joint = int(main[members[0]])
                if alone[members].all():
                    own = points[members, strongest[members]]  # (V, 4)
                    centre = own[:, :3].mean(axis=0)
                    rigid.append((own, joint, centre, float(np.sqrt(((own[:, :3] - centre) ** 2).sum(axis=1)).max())))
                    continue
                used = np.unique(joints[members][weights[members] > 0])
                q = np.zeros((len(members), len(used), 4))
                weighted = weights[members] > 0  # an unweighted influence may name any joint: it adds nothing
                slot = np.where(weighted, np.minimum(np.searchsorted(used, joints[members]), len(used) - 1), 0)
                rows = np.arange(len(members))
                for k in range(joints.shape[1]):  # one influence at a time: no row twice in one +=
                    q[rows, slot[:, k]] += weights[members, k, None] * points[members, k]
                spread = points[members][weighted][:, :3]
                centre = spread.mean(axis=0)
                radius = float(np.sqrt(((spread - centre) ** 2).sum(axis=1)).max())
                blended.append((q.reshape(len(members), -1), used, centre, radius, joint))
        if not rigid and not blended:
            lowest = self.positions[:, :, 1].argmin(axis=1)
            return self.positions[np.arange(count), lowest, 1], lowest
        columns = np.concatenate((frames.up, frames.heights[:, None, :]), axis=1)  # (N, 4, F): each bone's y row
        reach = np.sqrt((frames.up ** 2).sum(axis=1))  # (N, F): how far a unit of bone space reaches up or down
        best = np.full(count, np.inf)
        best_bone = np.zeros(count, dtype=np.int64)
        candidates = []  # (bound (F,), block (4u, F), q (V, 4u), joint)
        if rigid:
            joint_of = np.array([joint for _, joint, _, _ in rigid])
            centres = np.array([centre for _, _, centre, _ in rigid])
            radii = np.array([radius for _, _, _, radius in rigid])
            centre_heights = np.einsum("ga,gaf->gf", centres, frames.up[joint_of]) + frames.heights[joint_of]
            first = centre_heights.argmin(axis=0)
            best[:] = centre_heights[first, np.arange(count)]
            best_bone[:] = joint_of[first]
            bounds = centre_heights - radii[:, None] * reach[joint_of]
            candidates += [(bound, columns[joint], own, joint) for bound, (own, joint, _, _) in zip(bounds, rigid)]
        for q, used, centre, radius, joint in blended:
            block = columns[used].reshape(len(used) * 4, count)  # matching q's columns
            centre_height = np.einsum("a,uaf->uf", centre, frames.up[used]) + frames.heights[used]
            candidates.append(((centre_height - radius * reach[used]).min(axis=0), block, q, joint))
            lows = (q[:: max(1, len(q) // 8)] @ block).min(axis=0)  # a few of its vertices
            better = lows < best
            best[better], best_bone[better] = lows[better], joint
        for bound, block, q, joint in candidates:
            needed = np.flatnonzero(bound < best)
            if len(needed):
                low = (block[:, needed].T @ q.T).min(axis=1)
                better = low < best[needed]
                best[needed[better]] = low[better]
                best_bone[needed[better]] = joint
        return best, best_bone

    def _influences(self, mesh, by_target):
        """(joints (V, K) as indices in frames.bones, weights (V, K), each influence's point in
        its joint's space (V, K, 4)) of a mesh that follows the skeleton, else None."""
        bones = self.frames.bones
        positions = np.c_[np.asarray(mesh.morphed_positions(), dtype=np.float64), np.ones(len(mesh.positions))]
        if mesh.skeleton is not None and mesh.joints is not None:
            skin = mesh.skeleton.bones
            rows = {b.get_index(): b for b in skin if b.get_index() >= 0}
            index = np.full(max(rows) + 1, -1)
            binds = np.zeros((len(index), 4, 4))
            for row, bone in rows.items():
                index[row] = by_target.get(id(bone.get_pose_target()), -1)
                binds[row] = bone.get_absolute_inverse_bind_matrix()
            weighted = mesh.weights > 0
            if (index[mesh.joints[weighted]] < 0).any():
                return None  # joints the clip's skeleton lacks: another character's skin
            mesh.update_world_matrix()
            placed = positions @ np.asarray(mesh.world_matrix, dtype=np.float64)  # as frames' placement
            placement = self.frames.placement
            if not np.allclose(mesh.world_matrix, placement, atol=1e-9 * self.height):
                try:
                    positions = placed @ np.linalg.inv(placement)
                except np.linalg.LinAlgError:
                    return None  # a skeleton placed by a singular matrix: nothing of it has a height
            points = np.einsum("va,vkab->vkb", positions, binds[mesh.joints])
            return np.maximum(index[mesh.joints], 0), mesh.weights, points
        node = mesh.world_node
        while node is not None and id(node) not in by_target:
            node = node.parent
        if node is None:
            return None
        bone = by_target[id(node)]
        mesh.update_world_matrix()
        try:
            into = np.asarray(mesh.world_matrix, dtype=np.float64) @ np.linalg.inv(node.get_world_matrix())
        except np.linalg.LinAlgError:
            return None  # under a bone scaled to nothing
        points = (positions @ into)[:, None, :]
        return np.full((len(positions), 1), bone), np.ones((len(positions), 1)), points

    # --- feet and ground -------------------------------------------------------------------------
    def feet_findings(self, figures: ClipFigures, lowest: np.ndarray, lowest_bone: np.ndarray) -> list:
        frames, s = self.frames, self.scale
        contact_height, speed, drift = CONTACT_HEIGHT * s, CONTACT_SPEED * s, DRIFT * s
        rest_low = float(self.scene.rest_bounds[0][1])
        lifts = {i: max(0.0, float(frames.rest_world[i, 3, 1]) - rest_low) for _, i in self.feet}
        ground = self.options.ground
        if ground is not None:
            figures.ground_from = "--ground"
        else:
            provisional = float(np.median(lowest))
            touching = np.zeros(len(lowest), dtype=bool)
            for _, i in self.feet:
                h = self.positions[:, i, 1] - provisional - lifts[i]
                touching[:-1] |= (h[:-1] < contact_height) & (h[1:] < contact_height)
            usual = float(np.median(lowest[touching])) if touching.any() else provisional
            if abs(usual) <= contact_height:
                ground, figures.ground_from = 0.0, "the model's y = 0, where the feet rest"
            else:
                ground, figures.ground_from = usual, "the feet's usual height in contact"
        figures.ground = round(float(ground), 9)
        figures.lowest = np.round(lowest - ground, 6).tolist()
        found = []
        skating_any = np.zeros(max(0, len(lowest) - 1), dtype=bool)
        for side, i in self.feet:
            bone = frames.bones[i].name
            height = self.positions[:, i, 1] - ground - lifts[i]
            plane = self.positions[:, i][:, [0, 2]]
            contact, step_speed, skating = gmd_skating(height, plane, self.fps, contact_height, speed)
            skating_any |= skating
            figures.feet.append({"side": side, "bone": bone, "lift": round(lifts[i], 9),
                                 "height": np.round(height, 6).tolist(), "speed": np.round(step_speed, 6).tolist(),
                                 "contact": contact.tolist(), "skating": skating.tolist()})
            for a, b in _ranges(contact):
                last = b + 1  # the pair (b, b+1) is the contact's last
                moved = np.linalg.norm(plane[a:last + 1] - plane[a], axis=1)
                most = float(moved.max())
                if most <= drift:
                    continue
                start = a + int(np.argmax(moved > 0.1 * most))
                end = a + int(np.argmax(moved >= 0.9 * most))
                first, final = max(a, start - 1), min(last, end + 1)
                found.append(finding("foot-skating", f"clip {self.clip.name!r}: the {side} foot {bone!r} drifts "
                                     f"{most / s * 100:.1f} cm (at 1.75 m) along the ground while planted, frames "
                                     f"{first}-{final} (planted {a}-{last})", self.pointer(bone, _frames(first, final))))
        figures.foot_skate_ratio = (round(float(skating_any.sum()) / len(skating_any), 9)
                                    if self.feet and len(skating_any) else None)
        below = (lowest - ground) < -PENETRATION * s
        for a, b in _ranges(below):
            depth = float(ground - lowest[a:b + 1].min())
            at = a + int(np.argmin(lowest[a:b + 1]))
            bone = frames.bones[int(lowest_bone[at])].name
            found.append(finding("ground-penetration", f"clip {self.clip.name!r}: the mesh goes {depth:.4g} below the "
                                 f"ground (y = {ground:.4g}), deepest at frame {at} near bone {bone!r}",
                                 self.pointer(bone, _frames(a, b))))
        return found

    # --- jitter ----------------------------------------------------------------------------------
    def jitter_findings(self, figures: ClipFigures) -> list:
        """Joints whose third difference of position relative to their parent (what the joint
        itself adds), averaged over JITTER_WINDOW frames, is more than JITTER_FACTOR times the
        clip's own level (the median over joints of their medians over the clip) and more than
        JITTER_FLOOR, and rough: its fourth difference larger than JITTER_ROUGHNESS times the
        third, as noise's is (sqrt(70/20)) and smooth motion's is not (a sway at w rad/s gives
        w dt). The figures are TransPose's: the mean third difference of world positions x fps^3."""
        positions, fps, frames = self.positions, self.fps, self.frames
        if len(positions) < 5 + JITTER_WINDOW:
            return []
        world = np.diff(frames.by_bone, n=3, axis=2)  # (N, 3, F-3)
        figures.jitter = {bone.name: round(float(value), 6) for bone, value in zip(
            frames.bones, np.sqrt((world ** 2).sum(axis=1)).mean(axis=1) * fps ** 3)}
        # Differences are linear: the joint's own is its world one less its parent's.
        parents = np.array(frames.parents)
        own = world - np.where(parents[:, None, None] >= 0, world[np.maximum(parents, 0)], 0.0)
        third = np.sqrt((own ** 2).sum(axis=1))  # (N, F-3)
        fourth = np.sqrt((np.diff(own, axis=2) ** 2).sum(axis=1))  # (N, F-4)
        w3 = _moving_mean(third, JITTER_WINDOW)[:, :-1]  # (N, F-4)
        w4 = _moving_mean(fourth, JITTER_WINDOW)
        usual = float(np.median(np.median(w3, axis=1)))
        limit = max(JITTER_FACTOR * usual, JITTER_FLOOR * self.scale)
        above = (w3 > limit) & (w4 > JITTER_ROUGHNESS * w3)
        found = []
        for i in np.flatnonzero(above.any(axis=1)):
            bone = frames.bones[i]
            for a, b in _ranges(above[i]):
                if b - a + 1 < 2 * JITTER_WINDOW:
                    continue  # a blip (an impact, a corner of the keys) smeared by the window, not trembling
                # A window of 5 centred on third differences that span frames f..f+3.
                first, last = min(a + 2, len(positions) - 1), min(b + 1, len(positions) - 1)
                peak = float(w3[i, a:b + 1].max() * fps ** 3)
                level = float(usual * fps ** 3) or 1.0
                found.append(finding("jitter", f"clip {self.clip.name!r}, joint {bone.name!r}: jitters at "
                                     f"{peak / self.scale:.4g} m/s^3 (at 1.75 m), {peak / level:.0f}x the clip's own "
                                     f"level", self.pointer(bone.name, _frames(first, last))))
        return found

    # --- bones ---------------------------------------------------------------------------------
    def stretch_findings(self) -> list:
        frames, positions = self.frames, self.positions
        found = []
        for i, bone in enumerate(frames.bones):
            parent = frames.parents[i]
            if parent < 0 or i not in self.moving or not self._has_translation(bone):
                continue
            if frames.parents[parent] < 0 and not self._has_translation(frames.bones[parent]):
                continue  # placed under a root the clip leaves still: the body, an IK target, no length
            length = np.linalg.norm(positions[:, i] - positions[:, parent], axis=1)
            rest = float(np.linalg.norm(frames.rest_world[i, 3, :3] - frames.rest_world[parent, 3, :3]))
            if rest <= 1e-3 * self.height:
                continue  # no length to keep (a joint on its parent)
            change = length / rest - 1.0
            for a, b in _ranges(np.abs(change) > STRETCH):
                worst = float(change[a:b + 1][np.argmax(np.abs(change[a:b + 1]))])
                found.append(finding("bone-stretch", f"clip {self.clip.name!r}, bone {bone.name!r}: its length "
                                     f"changes by {worst * 100:+.1f} % (from {rest:.4g} as the file poses it)",
                                     self.pointer(bone.name, _frames(a, b))))
        return found

    def _has_translation(self, bone) -> bool:
        target = bone.get_pose_target()
        return any(channel.node is target and channel.path == "translation" for channel in self.clip.channels)

    # --- loops ---------------------------------------------------------------------------------
    def loop_findings(self) -> list:
        """The first pose against the last one held and the last one moving on, body-relative
        (the root's travel is the clip's, not a seam)."""
        positions, frames = self.positions, self.frames
        if len(positions) < 4:
            return []
        root = next((i for i in frames.order if frames.parents[i] < 0), 0)
        relative = positions - positions[:, root:root + 1]
        held = np.linalg.norm(relative[0] - relative[-1], axis=1)
        moving = np.linalg.norm(relative[0] - (2 * relative[-1] - relative[-2]), axis=1)
        error = np.minimum(held, moving)
        usual = np.percentile(np.linalg.norm(np.diff(relative, n=2, axis=0), axis=2), 95, axis=0)
        limit = np.maximum(DRIFT * self.scale, 3.0 * usual)
        off = error > limit
        if not off.any():
            return []
        worst = int(np.argmax(np.where(off, error / limit, 0)))
        name = frames.bones[worst].name
        last = len(positions) - 1
        others = int(off.sum()) - 1
        more = f" (and {others} more joints)" if others else ""
        return [finding("loop-seam", f"clip {self.clip.name!r}: it loops with a pop at joint {name!r}: its first pose "
                        f"is {error[worst]:.4g} from where its last frame leads{more}",
                        self.pointer(name, f"frames {last}-0"))]
