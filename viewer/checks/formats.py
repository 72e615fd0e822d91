"""``check`` for FBX and USD files: the reader's refusal (one error), its warnings, else the rig
checks of ``rig`` on the Scene the loader builds (at rest: the skins' bind pose), pointing at the
nodes and joints by name."""

from __future__ import annotations

from ..errors import ViewerError
from .findings import FileReport, finding
from .gltf import _captured_warnings
from .rig import rig_findings


def check_fbx(path, scene=None) -> FileReport:
    """Findings on an .fbx file, and the model's counts when it loads (``scene`` is not reused:
    the reader's warnings are findings, so the file is read again)."""
    from ..fbx import load_fbx_file

    return _check(path, load_fbx_file, "fbx-refused", {"weights-sum"})


def check_usd(path, scene=None) -> FileReport:
    """Findings on a .usd, .usda, .usdc or .usdz file, as ``check_fbx``'s."""
    from ..usd import load_usd_file

    return _check(path, load_usd_file, "usd-refused", set())


def _check(path, load, refused: str, not_errors: set) -> FileReport:
    report = FileReport(str(path))
    prefix = f"{path}: "
    with _captured_warnings() as warned:
        try:
            _, scene = load(path)
            for mesh in scene.meshes:  # decoded now (deferred by the loader), so images that do not decode are found
                for submesh in mesh.submeshes:
                    submesh.pbr.textures()
        except ViewerError as error:
            message = str(error)
            message = message[len(prefix):] if message.startswith(prefix) else message
            report.findings.append(finding(refused, message))
            return report
    for message in warned:
        message = message[len(prefix):] if message.startswith(prefix) else message
        code = "texture-missing" if "texture" in message and ("not found" in message or "decode" in message) \
            else "loader-warning"
        report.findings.append(finding(code, message))
    # The rig checks read the pose as loaded; an FBX file's node pose is the frame it was
    # exported at (Blender's), not its bind pose, which is what the loader makes the rest.
    for skeleton in scene.skeletons:
        for bone in skeleton.bones:
            bone.return_to_rest()
    # Weights that do not sum to 1 are glTF's error, not FBX's: a cluster's default link mode
    # (Normalize) divides by the sum, as Maya, Blender and the loader do.
    report.findings += [f for f in rig_findings(scene) if f.code not in not_errors]
    report.loaded, report.scene = True, scene
    report.bones = sum(1 for skeleton in scene.skeletons for bone in skeleton.bones if bone.get_index() >= 0)
    report.vertices = sum(len(mesh.positions) for mesh in scene.meshes)
    report.clips = [(clip.name, round(float(clip.duration), 6)) for clip in scene.animations]
    return report
