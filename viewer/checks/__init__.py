"""``boneviewer check``'s checks, GL-free: a model file's findings (see ``findings``) from the
loader, the format's rules and the rig checks (``rig``). One checker per file extension.
"""

from __future__ import annotations

from pathlib import Path

from .findings import CODES, ERROR, INFO, MOTION_CODES, SEVERITIES, WARNING, FileReport, Finding, finding
from .motion import MotionOptions, motion_findings
from .bvh import check_bvh
from .formats import check_fbx, check_usd
from .gltf import check_gltf

CHECKERS = {".gltf": check_gltf, ".glb": check_gltf, ".vrm": check_gltf, ".bvh": check_bvh, ".fbx": check_fbx,
            **dict.fromkeys((".usd", ".usda", ".usdc", ".usdz"), check_usd)}
MODEL_SUFFIXES = tuple(CHECKERS)

__all__ = ["CHECKERS", "CODES", "ERROR", "INFO", "MODEL_SUFFIXES", "MOTION_CODES", "SEVERITIES", "WARNING",
           "FileReport", "Finding", "MotionOptions", "check_file", "finding", "model_files", "motion_findings"]


def check_file(path, scene=None, motion: MotionOptions | None = None, clips=None) -> FileReport:
    """The findings on one model file (by its extension); with ``motion``, the motion checks'
    too on its clips (or on ``clips``, a callable given the loaded scene that returns the clips
    to check: ``check --motion``'s retargeted one)."""
    path = Path(path)
    report = CHECKERS[path.suffix.lower()](path, scene)
    if motion is not None and report.loaded:
        scene = report.scene
        found, report.motion = motion_findings(scene, motion, None if clips is None else clips(scene))
        report.findings += found
    report.scene = None  # a folder's reports are kept together: not their models
    return report


def model_files(folder, suffixes=MODEL_SUFFIXES) -> list[Path]:
    """Every model file under ``folder`` (recursively, sorted by relative path); ``suffixes``:
    the extensions that count (synth's --motion folder: .bvh alone)."""
    folder = Path(folder)
    return sorted((p for p in folder.rglob("*") if p.suffix.lower() in suffixes and p.is_file()),
                  key=lambda p: p.relative_to(folder).as_posix())
