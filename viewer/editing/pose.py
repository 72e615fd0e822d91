"""Pose files: JSON with each bone's local position / rotation_quaternion / scaling, and the
morph target weights of the model's meshes.

    {"version": 2,
     "bones": {"leftArm": {"position": [x, y, z],
                           "rotation_quaternion": [x, y, z, w],
                           "scaling": [x, y, z]}},
     "morph": {"Head": {"Angry": 1.0, "2": 0.25}}}

Every part is optional. "morph" maps a mesh's name to its targets' weights, a target named
as the file names it (glTF extras.targetNames) or by its index; a target left out keeps its
weight. Version 1 files (bones only, as older builds wrote them) still load; "version" may be
left out (1 is assumed, 2 when the file has "morph"). A pose goes through the model's public
API; for a bone linked to a scene node (glTF) it is written into the node, since the node is
what drives such a bone.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from ..model.checks import LIMIT_TEXT, MAX_MAGNITUDE, OUT_OF_RANGE
from ..model.pose_writer import PoseWriter

POSE_VERSION = 2
READABLE_VERSIONS = (1, 2)
PARTS = {"position": 3, "rotation_quaternion": 4, "scaling": 3}
WRITER_ARGUMENTS = {"position": "positions", "rotation_quaternion": "rotation_quaternions", "scaling": "scalings"}


MAX_POSE_BYTES = 64 * 2**20  # far beyond any real pose; refuses a hostile giant file


def load_pose(path) -> dict:
    path = Path(path)
    try:
        if path.stat().st_size > MAX_POSE_BYTES:
            raise ViewerError(f"pose file {path}: {path.stat().st_size} bytes is too large for a pose file")
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ViewerError(f"pose file {path}: cannot read it: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ViewerError(f"pose file {path}: not UTF-8 text") from None
    try:
        data = json.loads(text, parse_constant=lambda name: float("nan"))
    except json.JSONDecodeError as error:
        raise ViewerError(f"pose file {path}: invalid JSON at line {error.lineno} column {error.colno}: "
                          f"{error.msg}") from None
    return validate_pose(data, f"pose file {path}")


class Pose(dict):
    """A checked pose: {bone name: {part: list of floats}} (the layout version 1 files gave),
    with ``morph``: {mesh name: {target name or index: weight}}."""

    def __init__(self, bones=(), morph=None):
        super().__init__(bones)
        self.morph = dict(morph or {})


def validate_pose(data, source: str = "pose") -> Pose:
    """The pose with every value checked. ``data`` is a pose file's object; its "bones" may be
    a Pose already, whose morph weights come along."""
    if not isinstance(data, dict) or not isinstance(data.get("bones"), dict):
        raise ViewerError(f"{source}: expected an object with a \"bones\" object")
    version = data.get("version", 2 if "morph" in data else 1)
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise ViewerError(f"{source}: pose version {short_repr(version)} is not supported (this build reads "
                          f"{' and '.join(map(str, READABLE_VERSIONS))})")
    morph = data.get("morph")
    if morph is not None and version == 1:
        raise ViewerError(f"{source}: \"morph\" weights need pose version 2 (the file says version 1)")
    pose = Pose(morph=getattr(data["bones"], "morph", None))
    if morph is not None:
        pose.morph = validate_morph(morph, source)
    for name, parts in data["bones"].items():
        if not isinstance(parts, dict):
            raise ViewerError(f"{source}: bone {name!r}: expected an object of position/rotation_quaternion/scaling")
        unknown = set(parts) - set(PARTS)
        if unknown:
            raise ViewerError(f"{source}: bone {name!r}: unknown field {sorted(unknown)[0]!r} "
                              f"(expected {', '.join(PARTS)})")
        checked = {}
        for part, value in parts.items():
            width = PARTS[part]
            if (not isinstance(value, list) or len(value) != width
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
                raise ViewerError(f"{source}: bone {name!r} {part}: expected {width} numbers, got {value!r}")
            if not all(abs(v) <= MAX_MAGNITUDE for v in value):  # as checks.fits, on a short list
                raise ViewerError(f"{source}: bone {name!r} {part}: contains {OUT_OF_RANGE}: {short_repr(value)}")
            if part == "rotation_quaternion":
                norm = math.sqrt(sum(v * v for v in value))
                if norm < 1e-8:
                    raise ViewerError(f"{source}: bone {name!r} rotation_quaternion: the zero quaternion is not a rotation")
                value = [v / norm for v in value]
            checked[part] = [float(v) for v in value]
        pose[name] = checked
    return pose


def validate_morph(morph, source: str) -> dict:
    """{mesh name: {target: float weight}}, each weight a finite number."""
    if not isinstance(morph, dict):
        raise ViewerError(f"{source}: \"morph\" must be an object of mesh name -> {{target: weight}}, "
                          f"got {short_repr(morph)}")
    checked = {}
    for mesh, weights in morph.items():
        if not isinstance(weights, dict):
            raise ViewerError(f"{source}: morph {mesh!r}: expected an object of target -> weight, got "
                              f"{short_repr(weights)}")
        checked[mesh] = {}
        for target, weight in weights.items():
            if isinstance(weight, bool) or not isinstance(weight, (int, float)):
                raise ViewerError(f"{source}: morph {mesh!r} target {target!r}: the weight must be a finite number, "
                                  f"got {short_repr(weight)}")
            if not abs(weight) <= MAX_MAGNITUDE:
                raise ViewerError(f"{source}: morph {mesh!r} target {target!r}: the weight must be a finite number "
                                  f"with a magnitude up to {LIMIT_TEXT}, got {short_repr(weight)}")
            checked[mesh][target] = float(weight)
    return checked


def short_repr(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def morph_mesh_keys(scene) -> dict:
    """{key: mesh} for the scene's meshes with morph targets: the mesh's name, or, for
    meshes sharing a name, "name (node N)"."""
    meshes = scene.morph_meshes if hasattr(scene, "morph_meshes") else []
    names = [mesh.name for mesh in meshes]
    keys = {}
    for i, mesh in enumerate(meshes):
        key = mesh.name if names.count(mesh.name) == 1 else f"{mesh.name} (node {mesh.node_index if mesh.node_index is not None else i})"
        keys[key] = mesh
    return keys


def _morph_changes(scene, morph: dict, source: str) -> list:
    """[(mesh, new weights)] for a pose's morph weights, every mesh and target checked first.
    A mesh name shared by several meshes sets them all."""
    keys = morph_mesh_keys(scene)
    changes = []
    for key, weights in morph.items():
        meshes = [keys[key]] if key in keys else [mesh for mesh in keys.values() if mesh.name == key]
        if not meshes:
            listed = ", ".join(list(keys)[:15]) + (", ..." if len(keys) > 15 else "") if keys else "none"
            raise ViewerError(f"{source}: unknown morph mesh {key!r} (this model's meshes with morph targets: {listed})")
        for mesh in meshes:
            new = np.array(mesh.morph_weights, dtype=np.float64)
            for target, weight in weights.items():
                try:
                    new[mesh.morph_targets.index(target)] = weight
                except ViewerError as error:
                    raise ViewerError(f"{source}: {error}") from None
            changes.append((mesh, new))
    return changes


def apply_pose(scene, pose, source: str = "pose") -> None:
    """Apply a pose (a dict as pose files hold, a Pose, or a path to a pose file) to the
    scene's skeletons and morph weights.

    Every bone, mesh and target name is checked before anything changes, so a bad file leaves
    the model as it was.
    """
    if isinstance(pose, (str, os.PathLike)):
        source = f"pose file {pose}"
        pose = load_pose(pose)
    else:
        pose = validate_pose({"bones": pose} if "bones" not in pose else pose, source)
    morph_changes = _morph_changes(scene, pose.morph, source)
    first_of_name = {}
    for skeleton in scene.skeletons:  # the bone each name means, as scene.find_bone, in one pass
        for bone in skeleton.bones:
            first_of_name.setdefault(bone.name, bone)
    for name in pose:
        if name not in first_of_name:
            scene.require_bone(name, source)  # the error naming the model's bones
    # Each part written for all the bones that give it in one call (checked above, by validate_pose),
    # not through each bone's setters: as those would leave it, a later bone's value for a shared node.
    for part, argument in WRITER_ARGUMENTS.items():
        named = [name for name, parts in pose.items() if part in parts]
        if named:
            values = np.array([pose[name][part] for name in named], dtype=np.float64)
            PoseWriter([first_of_name[name] for name in named]).write(**{argument: values})
    for mesh, weights in morph_changes:
        mesh.morph_weights = weights


def set_bone_pose(bone, position=None, rotation_quaternion=None, scaling=None) -> None:
    """Set a bone's local TRS; a linked bone's node gets it instead (the node drives it)."""
    target = bone.get_pose_target()
    if position is not None:
        target.position = position
    if rotation_quaternion is not None:
        target.rotation_quaternion = rotation_quaternion
    if scaling is not None:
        target.scaling = scaling


def pose_of(scene) -> dict:
    """The current pose of every bone and morph weight, in the pose file layout (targets by
    name, or by index where a mesh has two targets of one name)."""
    bones = {}
    for skeleton in scene.skeletons:
        for bone in skeleton.bones:
            source = bone.get_pose_target()
            bones[bone.name] = {"position": source.position.tolist(),
                                "rotation_quaternion": source.rotation_quaternion.tolist(),
                                "scaling": source.scaling.tolist()}
    pose = {"version": POSE_VERSION, "bones": bones}
    morph = {}
    for key, mesh in morph_mesh_keys(scene).items():
        names = mesh.morph_target_names
        morph[key] = {(name if names.count(name) == 1 else str(i)): float(weight)
                      for i, (name, weight) in enumerate(zip(names, mesh.morph_weights))}
    if morph:
        pose["morph"] = morph
    return pose


def save_pose(path, scene) -> None:
    """Write the pose atomically: a temporary file renamed over the target, so a crash never
    leaves half a file and never destroys the previous pose."""
    from ..files import open_atomically

    path = Path(path)
    try:
        with open_atomically(path, "w", fsync=True) as handle:
            json.dump(pose_of(scene), handle, indent=2)
            handle.write("\n")
    except OSError as error:
        raise ViewerError(f"pose file {path}: cannot write it: {error.strerror}") from None


class PoseRecord:
    """Everything a frame's pose is made of: the local TRS of every bone's pose target and of
    every scene node, and every mesh's morph weights, copied now; ``restore()`` puts it back.

    ``render --script`` runs the script once, recording each frame, then frames the camera on
    all of them and draws each from its record.
    """

    def __init__(self, scene):
        self.scene = scene
        seen, sources = set(), []
        for skeleton in scene.skeletons:
            for bone in skeleton.bones:
                source = bone.get_pose_target()
                if id(source) not in seen:
                    seen.add(id(source))
                    sources.append(source)
        for node in scene.nodes:
            if id(node) not in seen:
                seen.add(id(node))
                sources.append(node)
        self.sources = sources
        self.trs = [(np.array(s.position), np.array(s.rotation_quaternion), np.array(s.scaling)) for s in sources]
        self.morph = [(mesh, np.array(mesh.morph_weights)) for mesh in scene.morph_meshes]

    def restore(self) -> None:
        for source, (position, quaternion, scaling) in zip(self.sources, self.trs):
            if not (np.array_equal(source.position, position) and np.array_equal(source.rotation_quaternion, quaternion)
                    and np.array_equal(source.scaling, scaling)):
                source.position, source.rotation_quaternion, source.scaling = position, quaternion, scaling
        for mesh, weights in self.morph:
            mesh.morph_weights = weights


def save_scene_mix(scene, path) -> Path:
    """The window's File > Save mix and the notebook's ``v.save_mix``: the scene's mix to
    ``path``, never over a file the model was loaded from."""
    from ..motion.files import save_mix
    from ..sources import check_not_source

    path = Path(path)
    if not str(path).strip() or path.name in ("", ".", ".."):
        raise ViewerError(f"save mix: give a file name, got {str(path)!r}")
    check_not_source(scene, "save mix", path)
    save_mix(scene.mixer, path)
    return path
