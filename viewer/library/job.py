"""One model's work in a library run: a pure function of (the model's bytes, the options).

``model_job`` gets the model file and the files it points at (as bytes, by path relative to
the model's folder), loads and checks it, renders its pictures and GIFs, and returns its
report row and its output files as bytes; it writes nothing outside a temporary folder of its
own. So the local pool and Ray (on any machine of a cluster, without a shared disk) map the
same function, and the same inputs give the same bytes.

Each worker process keeps one headless GL context for all the models it is given.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..options import RenderOptions

GIF_FPS = 10.0
JOB_VERSION = 6  # bump when the outputs for the same inputs change: a second run then redoes every model


@dataclass(frozen=True)
class BatchOptions:
    size: tuple = (256, 256)     # pixels of every picture and GIF frame
    gif_seconds: float = 4.0     # each clip's GIF (and the turntable) lasts at most this long
    # The look of every picture (RenderOptions' fields of the same names; the command's options).
    # A file environment is read by each worker at this path (on a Ray cluster: the same path on
    # every node); its sha256 is in the options, so a changed file redoes every model.
    environment: str = RenderOptions.environment
    environment_rotation: float = RenderOptions.environment_rotation
    tone_mapping: str = RenderOptions.tone_mapping
    exposure: float = RenderOptions.exposure
    environment_filter: str = RenderOptions.environment_filter
    environment_sha256: str | None = None
    skinning: str = "lbs"        # every skinned mesh's (--skinning): "lbs" or "dq"
    # Shadows (--shadows, issue 45): in the options (so the run's key) only when on, so a run
    # without them keeps the key it had.
    shadows: bool = False
    shadow_intensity: float = RenderOptions.shadow_intensity
    shadow_softness: float = RenderOptions.shadow_softness
    key_light: tuple | None = None   # towards the key light (--key-light); None: RenderOptions'

    def as_json(self) -> dict:
        data = asdict(self)
        for name in SHADOW_FIELDS:
            if not self.shadows or data[name] is None:
                data.pop(name)
        if data.get("key_light") is not None:
            data["key_light"] = list(data["key_light"])
        return {**data, "size": list(self.size), "fps": GIF_FPS, "job_version": JOB_VERSION}

    def look(self) -> dict:
        """RenderOptions' look fields."""
        look = {"environment": self.environment, "environment_rotation": self.environment_rotation,
                "tone_mapping": self.tone_mapping, "exposure": self.exposure,
                "environment_filter": self.environment_filter, "shadows": self.shadows,
                "shadow_intensity": self.shadow_intensity, "shadow_softness": self.shadow_softness}
        if self.key_light is not None:
            look["key_light"] = tuple(self.key_light)
        return look


SHADOW_FIELDS = ("shadows", "shadow_intensity", "shadow_softness", "key_light")


# --- inputs ------------------------------------------------------------------------------------
def model_sources(path: Path) -> dict:
    """{path relative to the model's folder: bytes}: the model file, and the buffers and images
    it names inside its folder (sources.source_files, as the loader finds them) that exist (the
    loader refuses the others: they are left out here so the worker sees what the loader would)."""
    from ..sources import source_files

    path = Path(path)
    sources = {path.name: path.read_bytes()}
    folder = path.resolve().parent  # the loader's: URIs are relative to where the file really is
    for file in source_files(path):
        if file == path:
            continue
        target = (folder / file.relative_to(path.parent)).resolve()
        if target.is_relative_to(folder) and target.is_file():
            sources[target.relative_to(folder).as_posix()] = target.read_bytes()
    return sources


def job_key(sources: dict, options: BatchOptions) -> str:
    """The hash a second run compares: the model's bytes (its resources included) and the options."""
    digest = hashlib.sha256(json.dumps(options.as_json(), sort_keys=True).encode())
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + hashlib.sha256(sources[name]).digest())
    return digest.hexdigest()


# --- the job -----------------------------------------------------------------------------------
def model_job(name: str, sources: dict, options: BatchOptions) -> dict:
    """{"row": the report's data on the model, "outputs": {file name: bytes}}. A model that does
    not load gives a failed row ("status": "failed", "error": one line) and only check.json."""
    with tempfile.TemporaryDirectory(prefix="boneviewer-job-") as temp:
        folder = Path(temp) / "model"
        for relative, data in sources.items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        out = Path(temp) / "out"
        out.mkdir()
        try:
            row = _process(folder / name, out, options)
        except Exception as error:  # noqa: BLE001 - any failure of one model is its row's error, not the run's
            row = {"status": "failed", "error": _one_line(_in_folder(str(error), folder))}
            if not (out / "check.json").exists():
                (out / "check.json").write_text(json.dumps({"file": name, "findings": []}, indent=1) + "\n")
        outputs = {path.name: path.read_bytes() for path in sorted(out.iterdir())}
    return {"row": row, "outputs": outputs}


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _in_folder(text: str, folder: Path) -> str:
    """``text`` with the job's temporary folder taken off the paths in it (a reader's message names
    a file by its path): the model's files are named as in its folder of the library."""
    for form in sorted({str(folder), str(folder.resolve())}, key=len, reverse=True):
        text = text.replace(form + os.sep, "")
    return text


def _process(path: Path, out: Path, options: BatchOptions) -> dict:
    from dataclasses import replace

    from ..checks import MotionOptions, check_file
    from ..loaders import load_model
    from .plots import motion_plots

    report = check_file(path, motion=MotionOptions())
    report.findings = [replace(f, message=_in_folder(f.message, path.parent)) for f in report.findings]
    check = {**report.as_json(), "file": path.name, **report.summary()}  # the name: the worker knows no more
    (out / "check.json").write_text(json.dumps(check, indent=1) + "\n")
    plots = motion_plots(check)  # drawn from check.json's data
    for name, data in plots.items():
        (out / name).write_bytes(data)
    plotted = [{"clip": clip["clip"], "file": name} for clip, name in zip(check.get("motion") or [], plots)]
    if not report.loaded:  # the check's error says why
        message = next((f.message for f in report.findings if f.severity == "error"), "the model does not load")
        return {"status": "failed", "error": message, **report.summary()}
    import logging

    logger = logging.getLogger("boneviewer")
    logger.disabled = True  # its warnings are findings in check.json already
    try:
        scene = load_model(path)
    finally:
        logger.disabled = False
    scene.set_skinning(options.skinning)
    clips = _render(scene, out, options)
    summary = report.summary()
    for clip, gif in zip(summary["clips"], clips):
        clip["gif"] = gif
    return {"status": "ok", "error": None, **summary, "plots": plotted}


def _renderer(size):
    """This process's headless renderer: one GL context per worker, kept for every model."""
    from ..render.headless import HeadlessRenderer

    global _RENDERER
    if _RENDERER is None:
        _RENDERER = HeadlessRenderer(size)
    else:
        _RENDERER.resize(size)
    return _RENDERER


_RENDERER = None


def _render(scene, out: Path, options: BatchOptions) -> list:
    """thumb.png, bone-map.png, weight-check.png at rest; turntable.gif; one GIF per clip
    (returns their file names, in the clips' order)."""
    headless = _renderer(options.size)
    try:
        return _render_pictures(scene, out, options, headless)
    finally:  # one renderer serves the worker's every model: this one's GPU copies go with it
        headless.renderer.forget(scene)


def _render_pictures(scene, out: Path, options: BatchOptions, headless) -> list:
    from ..camera import VIEW_PITCH, CameraDescription, framed_camera, turntable_cameras
    from ..images import AnimationFile, write_png
    from ..model.animation import clip_time
    from ..options import Paint

    look = options.look()
    aspect = options.size[0] / options.size[1]
    frames = max(1, int(round(options.gif_seconds * GIF_FPS)))
    camera = framed_camera(scene, aspect=aspect)
    write_png(out / "thumb.png", headless.render(scene, camera, RenderOptions(**look)))
    skinned = bool(scene.skeletons)
    for file, paint in (("bone-map.png", Paint.BONE_MAP), ("weight-check.png", Paint.WEIGHT_CHECK)):
        painted = RenderOptions(paint=paint if skinned else Paint.SHADED, show_skeleton=False, **look)
        write_png(out / file, headless.render(scene, camera, painted))
    gif = AnimationFile(out / "turntable.gif", GIF_FPS)
    for turning in turntable_cameras(scene, frames, CameraDescription(pitch=VIEW_PITCH), aspect):
        gif.write(headless.render(scene, turning, RenderOptions(**look)))
    gif.close()
    names = []
    for index, clip in enumerate(scene.animations):
        length = min(clip.duration, options.gif_seconds)
        times = [k / GIF_FPS for k in range(max(1, int(np.floor(length * GIF_FPS + 1e-9))))]

        def pose_at(time, clip=clip):
            clip.apply(clip_time(time, clip.duration))

        camera = framed_camera(scene, aspect=aspect, times=times, pose_at=pose_at)
        name = f"clip-{index:02d}-{_safe(clip.name)}.gif"
        gif = AnimationFile(out / name, GIF_FPS)
        for time in times:
            pose_at(time)
            gif.write(headless.render(scene, camera, RenderOptions(**look)))
        gif.close()
        names.append(name)
        for skeleton in scene.skeletons:
            skeleton.return_to_rest()
    return names


def _safe(name: str) -> str:
    """A clip's name as part of a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:60] or "clip"
