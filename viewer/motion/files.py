"""A mix as JSON: the actions with their settings, the layers with their tracks, the 1-D blends.

``save_mix`` writes the file whole (a temporary file beside it, renamed over it). ``load_mix``
reads and checks everything (the shape, every clip and bone name) before it changes anything:
a wrong file gives one ViewerError line and the mix stays as it was.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from .mask import BoneMask
from .names import LOOPS, MODES, PATHS

FORMAT = "boneviewer-mix"
VERSION = 1
WIDTH = {"translation": 3, "rotation": 4, "scale": 3}


def mix_to_dict(mixer) -> dict:
    return {
        "format": FORMAT, "version": VERSION, "model": mixer.scene.name, "clock": mixer.clock,
        "actions": [action.to_dict() for action in mixer.actions],
        "layers": [layer.to_dict() for layer in mixer.layers],
        "active_layer": None if mixer.active_layer is None else mixer.layers.index(mixer.active_layer),
        "blends": [blend.to_dict() for blend in mixer.blends.values()],
    }


def save_mix(mixer, path) -> None:
    path = Path(path)
    text = json.dumps(mix_to_dict(mixer), indent=1) + "\n"
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise ViewerError(f"save mix: folder {str(directory)!r} does not exist")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError as error:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise ViewerError(f"save mix {str(path)!r}: {error.strerror or error}") from None


def load_mix(mixer, path) -> None:
    apply_mix(mixer, read_mix_file(path), f"mix file {str(path)!r}")


def read_mix_file(path, what: str | None = None) -> dict:
    """The file's JSON, checked as far as it can be without a model (JSON, an object, the
    format and version): what the commands read before they load the model. ``what`` names the
    file in the error (default: mix file 'PATH')."""
    path = Path(path)
    what = what or f"mix file {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ViewerError(f"{what}: {getattr(error, 'strerror', None) or error}") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ViewerError(f"{what}: not JSON ({error})") from None
    if not isinstance(data, dict):
        raise ViewerError(f"{what}: expected a JSON object")
    if data.get("format") != FORMAT:
        raise ViewerError(f"{what}: not a mix file (format {data.get('format')!r}, expected {FORMAT!r})")
    if data.get("version") != VERSION:
        raise ViewerError(f"{what}: version {data.get('version')!r} is not supported (expected {VERSION})")
    return data


def apply_mix(mixer, data, what: str) -> None:
    """Check ``data`` whole, then make the mixer's actions, layers and blends as it says."""
    plan = _checked(mixer, data, what)
    # everything checked: apply
    for action in mixer.actions:
        action.stop()
        action.weight, action.speed, action.loop, action.additive = 1.0, 1.0, "repeat", False
        action._reference_time, action._reference_clip, action._mask, action._mask_cache = 0.0, None, None, None
        action.managed, action.enabled = None, True
    mixer.blends = {}
    mixer.clock = plan["clock"]
    for spec in sorted(plan["actions"], key=lambda s: s["order"]):
        action = mixer.action(spec["clip"])
        action._weight, action._speed, action._time = spec["weight"], spec["speed"], spec["time"]
        action._loop, action._additive, action._reference_time = spec["loop"], spec["additive"], spec["reference_time"]
        action._reference_clip = spec["reference_clip"]
        action._mask, action._mask_cache = spec["mask"], None
        if spec["playing"]:
            action.play()
    layers = []
    for spec in plan["layers"]:
        layer = mixer.new_layer(spec["name"], spec["mode"], spec["weight"], None, spec["mute"], spec["solo"])
        layer._mask = spec["mask"]
        layer.tracks = spec["tracks"]
        layers.append(layer)
    mixer.layers = layers
    mixer.active_layer = layers[plan["active_layer"]] if layers else None
    for spec in plan["blends"]:
        blend = mixer.blend_1d(spec["name"], spec["entries"])
        blend._parameter, blend._weight, blend.phase = spec["parameter"], spec["weight"], spec["phase"]
        blend._apply()
    mixer.evaluate()


def _checked(mixer, data, what: str) -> dict:
    def fail(message):
        raise ViewerError(f"{what}: {message}")

    def number(value, where, low=None):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            fail(f"{where} must be a finite number, got {value!r}")
        if low is not None and value < low:
            fail(f"{where} must be >= {low}, got {value!r}")
        return float(value)

    def mask(value, where):
        if value is None:
            return None
        try:
            result = BoneMask.from_value(value)
            result.retained(mixer.scene, mixer.layout)
        except ViewerError as error:
            fail(f"{where}: {error}")
        return result

    if not isinstance(data, dict):
        fail("expected a JSON object")
    if data.get("format") != FORMAT:
        fail(f"not a mix file (format {data.get('format')!r}, expected {FORMAT!r})")
    if data.get("version") != VERSION:
        fail(f"version {data.get('version')!r} is not supported (expected {VERSION})")
    for key in ("actions", "layers"):
        if not isinstance(data.get(key), list):
            fail(f"{key!r} must be a list")
    clips = {clip.name: clip for clip in mixer.scene.animations}
    plan = {"clock": number(data.get("clock", 0.0), "clock"), "actions": [], "layers": [], "blends": []}
    seen = set()
    for i, spec in enumerate(data["actions"]):
        where = f"actions[{i}]"
        if not isinstance(spec, dict):
            fail(f"{where} must be an object")
        name = spec.get("clip")
        if name not in clips:
            fail(f"{where}: unknown clip {name!r} (this model's clips: {', '.join(clips) or 'none'})")
        if name in seen:
            fail(f"{where}: clip {name!r} appears twice")
        seen.add(name)
        loop = spec.get("loop", "repeat")
        if loop not in LOOPS:
            fail(f"{where}: loop must be one of {', '.join(LOOPS)}, got {loop!r}")
        additive = spec.get("additive", False)
        playing = spec.get("playing", False)
        if not isinstance(additive, bool) or not isinstance(playing, bool):
            fail(f"{where}: additive and playing must be true or false")
        reference = spec.get("reference_clip")
        if reference is not None and reference not in clips:
            fail(f"{where}: unknown reference_clip {reference!r}")
        plan["actions"].append({
            "clip": name, "weight": number(spec.get("weight", 1.0), f"{where} weight", 0.0),
            "speed": number(spec.get("speed", 1.0), f"{where} speed"),
            "time": number(spec.get("time", 0.0), f"{where} time"), "loop": loop, "additive": additive,
            "reference_time": number(spec.get("reference_time", 0.0), f"{where} reference_time", 0.0),
            "reference_clip": None if reference is None else clips[reference],
            "mask": mask(spec.get("mask"), f"{where} mask"), "playing": playing,
            "order": number(spec.get("order", 0), f"{where} order"),
        })
    names = set()
    for i, spec in enumerate(data["layers"]):
        where = f"layers[{i}]"
        if not isinstance(spec, dict):
            fail(f"{where} must be an object")
        name = spec.get("name")
        if not isinstance(name, str) or not name.strip() or name in names:
            fail(f"{where}: a layer needs a name of its own, got {name!r}")
        names.add(name)
        mode = spec.get("mode", "additive")
        if mode not in MODES:
            fail(f"{where}: mode must be one of {', '.join(MODES)}, got {mode!r}")
        mute = spec.get("mute", False)
        if not isinstance(mute, bool):
            fail(f"{where}: mute must be true or false")
        solo = spec.get("solo", False)  # absent in files written before solo: not soloed
        if not isinstance(solo, bool):
            fail(f"{where}: solo must be true or false")
        tracks: dict = {}
        if not isinstance(spec.get("tracks", []), list):
            fail(f"{where}: tracks must be a list")
        for j, track in enumerate(spec.get("tracks", [])):
            at = f"{where}.tracks[{j}]"
            if not isinstance(track, dict):
                fail(f"{at} must be an object")
            try:
                target = mixer.target(track.get("target")) if isinstance(track.get("target"), str) else None
            except ViewerError as error:
                fail(f"{at}: {error}")
            if target is None:
                fail(f"{at}: target must be a bone or node name, got {track.get('target')!r}")
            path = track.get("path")
            if path not in PATHS:
                fail(f"{at}: path must be one of {', '.join(PATHS)}, got {path!r}")
            try:
                values = np.array(track.get("values"), dtype=np.float64)
            except (TypeError, ValueError):
                fail(f"{at}: values must be rows of numbers")
            if values.ndim != 2 or values.shape[1] != WIDTH[path] or len(values) == 0 or not np.isfinite(values).all():
                fail(f"{at}: values must be rows of {WIDTH[path]} finite numbers")
            times = track.get("times")
            if times is not None:
                try:
                    times = np.array(times, dtype=np.float64)
                except (TypeError, ValueError):
                    fail(f"{at}: times must be numbers")
                if times.ndim != 1 or len(times) != len(values) or not np.isfinite(times).all() or \
                        (np.diff(times) <= 0).any():
                    fail(f"{at}: times must be increasing finite numbers, one per row of values")
            elif len(values) != 1:
                fail(f"{at}: a held track has one row of values")
            tracks.setdefault(id(target), (target, {}))[1][path] = (times, values)
        plan["layers"].append({"name": name, "mode": mode, "mute": mute, "solo": solo, "tracks": tracks,
                               "weight": number(spec.get("weight", 1.0), f"{where} weight", 0.0),
                               "mask": mask(spec.get("mask"), f"{where} mask")})
    active = data.get("active_layer", 0 if plan["layers"] else None)
    if plan["layers"] and (not isinstance(active, int) or not 0 <= active < len(plan["layers"])):
        fail(f"active_layer must be the index of a layer, got {active!r}")
    plan["active_layer"] = active
    blends = data.get("blends", [])
    if not isinstance(blends, list):
        fail("'blends' must be a list")
    for i, spec in enumerate(blends):
        where = f"blends[{i}]"
        if not isinstance(spec, dict) or not isinstance(spec.get("entries"), list):
            fail(f"{where} must be an object with entries")
        entries = []
        for entry in spec["entries"]:
            if not isinstance(entry, list) or len(entry) != 2 or entry[0] not in clips:
                fail(f"{where}: an entry is [clip name, position], got {entry!r}")
            if any(entry[0] == other for other, _ in entries) or any(
                    entry[0] == other for blend in plan["blends"] for other, _ in blend["entries"]):
                fail(f"{where}: clip {entry[0]!r} is in a blend already")
            entries.append((entry[0], number(entry[1], f"{where} position")))
        positions = [p for _, p in entries]
        if not entries or any(b <= a for a, b in zip(positions, positions[1:])):
            fail(f"{where}: positions must be strictly increasing, got {positions}")
        plan["blends"].append({"name": str(spec.get("name")), "entries": entries,
                               "parameter": number(spec.get("parameter", 0.0), f"{where} parameter"),
                               "weight": number(spec.get("weight", 1.0), f"{where} weight", 0.0),
                               "phase": number(spec.get("phase", 0.0), f"{where} phase")})
    return plan
