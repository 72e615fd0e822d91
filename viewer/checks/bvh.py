"""``check`` for BVH files: the loader's refusal (one error naming the line), else the rig
checks of ``rig`` on the Scene the loader builds, pointing at the lines that define the joints."""

from __future__ import annotations

import re

from ..errors import ViewerError
from .findings import FileReport, finding
from .gltf import _captured_warnings
from .rig import Where, rig_findings

LINE = re.compile(r"^line (\d+): ")


def check_bvh(path, scene=None) -> FileReport:
    """Findings on a .bvh file, and the model's counts when it loads. ``scene`` is not reused:
    the joints' lines come from the file, read again (cheap next to the rig checks)."""
    from ..bvh import load_bvh_motion

    report = FileReport(str(path))
    prefix = f"{path}: "
    with _captured_warnings():  # the loader's notes; renamed joints become findings below
        try:
            motion, scene = load_bvh_motion(path)
        except ViewerError as error:
            message = str(error)
            message = message[len(prefix):] if message.startswith(prefix) else message
            line = LINE.match(message)
            if line:  # the pointer names the line; said again in the message, `check` showed it twice
                message = message[line.end():]
            report.findings.append(finding("bvh-refused", message, f"line {line.group(1)}" if line else ""))
            return report
    kind = {joint.line: "End Site" if joint.end_site else "joint" for joint in motion.joints}
    for joint in motion.joints:  # said by the loader as a warning line, which this replaces
        if joint.renamed_from:
            report.findings.append(finding(
                "bvh-joint-renamed", f"{kind[joint.line]} {joint.renamed_from!r} has the name of the "
                f"{kind[joint.name_line]} at line {joint.name_line}: renamed {joint.name!r}", f"line {joint.line}"))
    # The capsule mesh is generated: an End Site (or a joint without children) moves none of it
    # by construction, so "joint-unused" says nothing about the file.
    report.findings += [f for f in rig_findings(scene, BvhWhere(motion)) if f.code != "joint-unused"]
    report.loaded, report.scene = True, scene
    report.bones = sum(1 for skeleton in scene.skeletons for bone in skeleton.bones if bone.get_index() >= 0)
    report.vertices = sum(len(mesh.positions) for mesh in scene.meshes)
    report.clips = [(clip.name, round(float(clip.duration), 6)) for clip in scene.animations]
    return report


class BvhWhere(Where):
    """A joint's finding points at the line that opens it (ROOT, JOINT or End Site)."""

    def __init__(self, motion):
        self.line_of = {joint.name: joint.line for joint in motion.joints}

    def _joint(self, name: str) -> str:
        line = self.line_of.get(name)
        return f"line {line}" if line else name

    def bone(self, bone) -> str:
        return self._joint(bone.name)

    def channel(self, clip_index: int, clip, channel) -> str:
        return self._joint(channel.node.name)
