"""``check`` for glTF files: the loader's refusal or its tolerated flaws as findings, the
document rules the loader lets pass but the Khronos glTF-Validator calls errors, and the rig
checks of ``rig`` with JSON pointers into the document."""

from __future__ import annotations

import logging
import re
from contextlib import contextmanager

from ..errors import ViewerError
from .findings import FileReport, finding
from .rig import Where, rig_findings

LOG = "boneviewer"

# A refusal's code, by what its message says (the first match wins); else "load-failed".
REFUSALS = (
    (re.compile(r"requires extensions? "), "extension-unsupported"),
    (re.compile(r"\bimage \d+|baseColorTexture|texture"), "texture-missing"),
    (re.compile(r"keyframe times must increase"), "keyframe-times"),
    (re.compile(r"inverse bind matrix is singular"), "inverse-bind-singular"),
    (re.compile(r"has no bone weight"), "vertex-unweighted"),
)
# A loader warning's code, by what its message says; the weights and influences warnings are
# left out: rig_findings reports them with their counts.
WARNINGS = (
    (re.compile(r"rotation keyframes are not unit quaternions"), "keyframe-quaternion"),
    (re.compile(r"rotation is not a unit quaternion"), "node-rotation"),
    (re.compile(r"which boneviewer ignores"), "extension-ignored"),
    (re.compile(r"draws points or lines"), "primitive-skipped"),
    (re.compile(r"has no inverseBindMatrices"), "no-inverse-binds"),
    (re.compile(r"\(texture \d+, .*\); drawn without it"), "texture-missing"),
    (re.compile(r"drawn with the default material"), "material-missing"),
    (re.compile(r"weights that do not sum to 1|only \d+ influences are read"), None),
)
# "mesh 0 primitive 1", "animation 2 ('walk') channel 3", "accessor 5": the object a message names.
OBJECT = re.compile(r"\b(accessor|bufferView|buffer|node|mesh|skin|animation|image|texture|material|scene|camera)"
                    r" (\d+)(?: \([^)]*\))?(?: (primitive|channel|sampler|joint) (\d+))?")
ARRAYS = {"accessor": "accessors", "bufferView": "bufferViews", "buffer": "buffers", "node": "nodes",
          "mesh": "meshes", "skin": "skins", "animation": "animations", "image": "images", "texture": "textures",
          "material": "materials", "scene": "scenes", "camera": "cameras"}
PARTS = {"primitive": "primitives", "channel": "channels", "sampler": "samplers", "joint": "joints"}


def pointer_of(message: str) -> str:
    """The JSON pointer of the first object a loader message names ("" when none)."""
    match = OBJECT.search(message)
    if match is None:
        return ""
    kind, index, part, number = match.groups()
    pointer = f"/{ARRAYS[kind]}/{index}"
    return pointer + (f"/{PARTS[part]}/{number}" if part else "")


def _code(message: str, table, default):
    for pattern, code in table:
        if pattern.search(message):
            return code
    return default


@contextmanager
def _captured_warnings():
    """The loader's warnings, collected instead of printed."""
    logger = logging.getLogger(LOG)
    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    saved = logger.handlers[:], logger.propagate, logger.disabled
    logger.handlers[:] = [Collect()]
    logger.propagate, logger.disabled = False, False
    try:
        yield records
    finally:
        logger.handlers[:], logger.propagate, logger.disabled = saved[0], saved[1], saved[2]


def check_gltf(path, scene=None) -> FileReport:
    """Findings on a .gltf or .glb file, and the model's counts when it loads. ``scene``: the
    file already loaded (its warnings are then not seen again)."""
    from ..gltf import load_file
    from ..gltf.container import GltfFile

    report = FileReport(str(path))
    prefix = f"{path}: "
    with _captured_warnings() as warned:
        try:
            if scene is None:  # one read: the scene and the checked document (pointers, layout rules)
                scene, file = load_file(path)
            else:
                file = GltfFile(path)
            for mesh in scene.meshes:  # decoded now (the loader defers it), so pixels that do not decode are found
                for submesh in mesh.submeshes:
                    submesh.pbr.textures()
        except ViewerError as error:
            message = str(error)
            message = message[len(prefix):] if message.startswith(prefix) else message
            report.findings.append(finding(_code(message, REFUSALS, "load-failed"), message, pointer_of(message)))
            return report
    for line in warned:
        message = line[len(prefix):] if line.startswith(prefix) else line
        code = _code(message, WARNINGS, "loader-warning")
        if code is not None:
            report.findings.append(finding(code, message, pointer_of(message)))
    report.findings += _layout_findings(file.document)
    report.findings += rig_findings(scene, GltfWhere(file.document, scene))
    report.loaded, report.scene = True, scene
    report.bones = sum(1 for skeleton in scene.skeletons for bone in skeleton.bones if bone.get_index() >= 0)
    report.vertices = sum(len(mesh.positions) for mesh in scene.meshes)
    report.clips = [(clip.name, round(float(clip.duration), 6)) for clip in scene.animations]
    return report


def _layout_findings(document) -> list:
    """Animation samplers' and inverse binds' accessors must not sit in a strided buffer view
    (the validator's *_ACCESSOR_WITH_BYTESTRIDE errors): an engine that follows the rule reads
    other numbers than one that honours the stride."""
    found, seen = [], set()
    uses = [(skin.get("inverseBindMatrices"), f"/skins/{s}") for s, skin in enumerate(document["skins"])]
    uses += [(sampler[key], f"/animations/{a}/samplers/{i}") for a, animation in enumerate(document["animations"])
             for i, sampler in enumerate(animation["samplers"]) for key in ("input", "output")]
    for accessor, pointer in uses:
        if accessor is None or accessor in seen:
            continue
        seen.add(accessor)
        view = document["accessors"][accessor].get("bufferView")
        if view is not None and document["bufferViews"][view].get("byteStride") is not None:
            found.append((accessor, pointer, view))
    if not found:
        return []
    accessor, pointer, view = found[0]
    more = f" (and {len(found) - 1} more accessors like it)" if len(found) > 1 else ""
    return [finding("accessor-stride", f"accessor {accessor} (used by {pointer}) lies in bufferView {view}, which has "
                    f"a byteStride{more}", f"/accessors/{accessor}")]


class GltfWhere(Where):
    """JSON pointers into the document for the scene's objects."""

    def __init__(self, document, scene):
        self.document = document
        self.node_of = {id(node): i for i, node in enumerate(scene.nodes)}

    def mesh(self, mesh) -> str:
        node = getattr(mesh, "node_index", None)
        if node is None:
            return ""
        return f"/meshes/{self.document['nodes'][node]['mesh']}"

    def bone(self, bone) -> str:
        node = bone.get_transform_node()
        index = None if node is None else self.node_of.get(id(node))
        return bone.name if index is None else f"/nodes/{index}"

    def channel(self, clip_index: int, clip, channel) -> str:
        node = self.node_of.get(id(channel.node))
        for c, spec in enumerate(self.document["animations"][clip_index]["channels"]):
            if spec["target"].get("node") == node and spec["target"]["path"] == channel.path:
                return f"/animations/{clip_index}/channels/{c}"
        return f"/animations/{clip_index}"

    def clip(self, clip_index: int, clip) -> str:
        return f"/animations/{clip_index}"
