"""Findings as data: what ``boneviewer check``, the batch report and their JSON all read.

A Finding is (severity, code, message, pointer): the code is stable (scripts and CI match on
it), the message says what is wrong in words, the pointer is the JSON pointer into the glTF
document (``/nodes/4``), the line of a BVH file (``line 12``) or the bone it concerns, or "" for the whole file. ``CODES`` lists
every code with its severity and what it means; docs/check-batch.md's table comes from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = (ERROR, WARNING, INFO)

# code -> (severity, what it means). Errors make a file invalid or undrawable (the loader refuses
# it, or the Khronos glTF-Validator calls it an error and it changes what is drawn); rig findings
# on a valid file are warnings or infos.
CODES = {
    "load-failed": (ERROR, "the loader refuses the file (the message says why)"),
    "bvh-refused": (ERROR, "the BVH loader refuses the file (the message says why, the pointer names the line)"),
    "fbx-refused": (ERROR, "the FBX reader refuses the file, or fails on it (the message says why)"),
    "usd-refused": (ERROR, "the USD reader refuses the file, or fails on it (the message says why)"),
    "extension-unsupported": (ERROR, "the file requires an extension boneviewer does not implement"),
    "texture-missing": (ERROR, "a texture's image is missing, outside the model's folder, or does not decode "
                               "(drawn without that texture)"),
    "material-missing": (ERROR, "a primitive's material does not exist (drawn with glTF's default material)"),
    "keyframe-times": (ERROR, "an animation sampler's keyframe times do not increase"),
    "keyframe-quaternion": (ERROR, "rotation keyframes that are not unit quaternions (off by more than 1e-3)"),
    "node-rotation": (ERROR, "a node's rotation is not a unit quaternion (off by more than 1e-3)"),
    "inverse-bind-singular": (ERROR, "an inverse bind matrix that cannot be inverted"),
    "vertex-unweighted": (ERROR, "a skinned vertex whose weights are all zero"),
    "weights-sum": (ERROR, "vertices whose weights do not sum to 1 (more than 1e-3 off; drawn renormalized)"),
    "accessor-stride": (ERROR, "animation or inverse-bind data in a buffer view with byteStride (glTF forbids it)"),
    "influences-dropped": (WARNING, "vertices with more influences than the 8 that are drawn"),
    "bind-pose": (WARNING, "inverse binds that do not match the joints' rest world matrices (bind pose is not "
                           "the node pose)"),
    "inverse-bind-conditioning": (WARNING, "an inverse bind matrix that is badly conditioned (near singular)"),
    "joint-scale-negative": (WARNING, "a joint with a negative scale (a mirror) at rest or in a clip"),
    "joint-scale-non-uniform": (WARNING, "a joint with a non-uniform scale at rest or in a clip"),
    "bone-zero-length": (WARNING, "a joint at the same place as its parent joint"),
    "key-jump": (WARNING, "a bone turning more than 120 degrees between consecutive keys (a flipped or broken key)"),
    "clip-explodes": (WARNING, "a clip whose skinned bounds grow past 10x the rest bounds"),
    "extension-ignored": (WARNING, "the file uses an extension boneviewer ignores (drawn without it)"),
    "primitive-skipped": (WARNING, "a primitive of points or lines, which is not drawn"),
    "bvh-joint-renamed": (WARNING, "a BVH joint named as another joint or a generated End Site (<parent>_end) "
                                   "is, renamed <name>_2 (bone maps and poses must use that name)"),
    "loader-warning": (WARNING, "another flaw the loader tolerates (the message says which)"),
    "foot-skating": (WARNING, "a planted foot drifts along the ground (more than 2 cm at 1.75 m) during one contact"),
    "ground-penetration": (WARNING, "the skinned mesh's lowest point goes below the ground (more than 1 cm at 1.75 m)"),
    "jitter": (WARNING, "a joint whose third difference of position (m/s^3) stands out from the clip's own"),
    "loop-seam": (WARNING, "a looping clip whose first pose or velocity does not follow on from its last"),
    "rotation-flip": (WARNING, "consecutive rotation keys with a negative dot product, or a turn far faster than "
                               "the channel's usual step"),
    "bone-stretch": (WARNING, "translation keys that change a bone's length by more than 5 %"),
    "key-non-finite": (ERROR, "a clip's key holding NaN or infinity (the message names the clip, bone and frame)"),
    "key-denormal": (WARNING, "a clip's key holding a float32 denormal (slow on CPUs, zero on GPUs)"),
    "joint-unused": (INFO, "a joint that no vertex uses"),
    "no-inverse-binds": (INFO, "a skin without inverseBindMatrices (identity is used)"),
}


@dataclass(frozen=True)
class Finding:
    severity: str
    code: str
    message: str
    pointer: str = ""

    def as_json(self) -> dict:
        return {"severity": self.severity, "code": self.code, "message": self.message, "pointer": self.pointer}


def finding(code: str, message: str, pointer: str = "") -> Finding:
    """A Finding of ``code`` with the code's severity."""
    return Finding(CODES[code][0], code, message, pointer)


@dataclass
class FileReport:
    """What ``check`` found in one file, and what the model holds (for the batch report)."""

    file: str
    findings: list = field(default_factory=list)
    bones: int = 0
    vertices: int = 0
    clips: list = field(default_factory=list)   # (name, duration in seconds)
    loaded: bool = False                         # whether the loader read it (else an error says why)
    motion: list | None = None                   # the motion checks' figures per clip (ClipFigures), when run
    scene: object = field(default=None, repr=False, compare=False)  # the Scene loaded, for the motion checks

    def count(self, severity: str) -> int:
        return sum(f.severity == severity for f in self.findings)

    @property
    def errors(self) -> int:
        return self.count(ERROR)

    @property
    def warnings(self) -> int:
        return self.count(WARNING)

    def fails(self, strict: bool = False) -> bool:
        return self.errors > 0 or (strict and self.warnings > 0)

    def as_json(self) -> dict:
        """The ``--json`` object: {"file", "findings": [{"severity", "code", "message", "pointer"}]},
        and "motion": [per clip figures] where the motion checks ran (see motion.ClipFigures)."""
        data = {"file": self.file, "findings": [f.as_json() for f in self.findings]}
        if self.motion is not None:
            data["motion"] = [figures.as_json() for figures in self.motion]
        return data

    def summary(self) -> dict:
        return {"bones": self.bones, "vertices": self.vertices,
                "clips": [{"name": name, "duration": duration} for name, duration in self.clips],
                "errors": self.errors, "warnings": self.warnings, "infos": self.count(INFO)}


# The motion checks' codes (motion.py), as opposed to the file's and the rig's.
MOTION_CODES = ("foot-skating", "ground-penetration", "jitter", "loop-seam", "rotation-flip", "bone-stretch",
                "key-non-finite", "key-denormal")

__all__ = ["CODES", "ERROR", "FileReport", "Finding", "INFO", "MOTION_CODES", "SEVERITIES", "WARNING", "finding"]
