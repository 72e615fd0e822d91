"""Pose files: JSON with each bone's local position / rotation_quaternion / scaling.

    {"version": 1, "bones": {"leftArm": {"position": [x, y, z],
                                         "rotation_quaternion": [x, y, z, w],
                                         "scaling": [x, y, z]}}}

Every part is optional; "version" may be left out (1 is assumed). A pose goes through the
model's public API; for a bone linked to a scene node (glTF) it is written into the node,
since the node is what drives such a bone.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from .errors import ViewerError

POSE_VERSION = 1
PARTS = {"position": 3, "rotation_quaternion": 4, "scaling": 3}


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


def validate_pose(data, source: str = "pose") -> dict:
    """The pose with every value checked: {bone name: {part: list of floats}}."""
    if not isinstance(data, dict) or not isinstance(data.get("bones"), dict):
        raise ViewerError(f"{source}: expected an object with a \"bones\" object")
    version = data.get("version", POSE_VERSION)
    if version != POSE_VERSION:
        raise ViewerError(f"{source}: pose version {version!r} is not supported (this build reads {POSE_VERSION})")
    pose = {}
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
            if not all(math.isfinite(v) for v in value):
                raise ViewerError(f"{source}: bone {name!r} {part}: contains NaN or infinity")
            if part == "rotation_quaternion":
                norm = math.sqrt(sum(v * v for v in value))
                if norm < 1e-8:
                    raise ViewerError(f"{source}: bone {name!r} rotation_quaternion: the zero quaternion is not a rotation")
                value = [v / norm for v in value]
            checked[part] = [float(v) for v in value]
        pose[name] = checked
    return pose


def apply_pose(scene, pose, source: str = "pose") -> None:
    """Apply a pose (dict, or a path to a pose file) to the scene's skeletons.

    Every bone name is checked before anything changes, so a bad file leaves the model as it was.
    """
    if isinstance(pose, (str, os.PathLike)):
        source = f"pose file {pose}"
        pose = load_pose(pose)
    else:
        pose = validate_pose({"bones": pose} if "bones" not in pose else pose, source)
    targets = {}
    for name in pose:
        bone = scene.find_bone(name)
        if bone is None:
            known = sorted({b.name for s in scene.skeletons for b in s.bones})
            listed = ", ".join(known[:15]) + (", ..." if len(known) > 15 else "")
            raise ViewerError(f"{source}: unknown bone {name!r} (this model's bones: {listed})")
        targets[name] = bone
    for name, parts in pose.items():
        set_bone_pose(targets[name], **parts)


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
    """The current pose of every bone, in the pose file layout."""
    bones = {}
    for skeleton in scene.skeletons:
        for bone in skeleton.bones:
            source = bone.get_pose_target()
            bones[bone.name] = {"position": source.position.tolist(),
                                "rotation_quaternion": source.rotation_quaternion.tolist(),
                                "scaling": source.scaling.tolist()}
    return {"version": POSE_VERSION, "bones": bones}


def save_pose(path, scene) -> None:
    """Write the pose atomically: a temporary file renamed over the target, so a crash never
    leaves half a file and never destroys the previous pose."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(pose_of(scene), handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise ViewerError(f"pose file {path}: cannot write it: {error.strerror}") from None
