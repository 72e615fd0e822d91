"""The shadow cases (issue 45, "beside Babylon.js"): a character, lit by the shared studio
environment and by one directional light that casts, drawn by Babylon.js with a ShadowGenerator
(percentage-closer filtering) onto a ground that receives, and by boneviewer with --shadows.
A plain module shared by tests/test_shadows_babylon.py and tests/babylon_render/record_shadows.py.

The scene, the same on both sides:
- the character in its rest pose, with a KHR_lights_punctual directional light added to a copy
  of its file (``lit_model``): intensity LIGHT_INTENSITY, white, shining from LIGHT_ANGLES
  (azimuth, elevation in degrees as ``--key-light`` reads them). A file's light is what both
  renderers shade the same way (the fidelity cases' punctual scene) and what both shadow the
  same way: it only blocks that light (the environment's light is never shadowed in Babylon,
  and boneviewer darkens the file's light only when the file has one);
- the shared studio.hdr environment (image-based light, as the fidelity cases);
- the ground at the rest pose's lowest point (boneviewer's grid height), a shadow catcher on
  both sides: Babylon's BackgroundMaterial with ``shadowOnly`` (black, as opaque as the shadow
  is dark), boneviewer's ground (black with the shadow's alpha); a transparent background, so
  the score is over the character and its shadow, as the fidelity metric takes the pixels
  boneviewer draws;
- how dark a full shadow is: boneviewer's --shadow-intensity 0.6 (its default), Babylon's
  ``darkness`` 0.4 (what the shadowed light keeps);
- a camera looking 25 degrees down from boneviewer's framing, 1.5 times as far, so the
  ground shadow is in the picture (tests/data/shadow_cameras/<model>.json, recorded).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fidelity_cases import ENVIRONMENTS, ROOT, SAMPLES, _relative, model_files, sha256
from make_vrm_cases import glb_bytes, read_glb
from samples import DATA_DIR

PICTURES_DIR = DATA_DIR / "babylon_shadows"
RECORD_FILE = DATA_DIR / "babylon_shadows.json"
CAMERAS_DIR = DATA_DIR / "shadow_cameras"
RECORD_COMMAND = "python tests/babylon_render/record_shadows.py"
MODELS = ("CesiumMan", "RiggedFigure", "Fox")
ENVIRONMENT = "studio"
SIZE = (384, 384)
LIGHT_ANGLES = (40.0, 50.0)   # azimuth, elevation (degrees): where the light shines from
LIGHT_INTENSITY = 2.0         # lux, white
SHADOW_INTENSITY = 0.6        # boneviewer's --shadow-intensity; Babylon's darkness is 1 - this
SHADOW_SOFTNESS = 0.3         # boneviewer's --shadow-softness (its default)
SHADOW_MAP_SIZE = 512         # Babylon's map, as boneviewer's (viewer.render.shadows.SHADOW_MAP_SIZE)
CAMERA_PITCH = 25.0
CAMERA_YAW = 20.0
CAMERA_FARTHER = 1.5


def towards_light() -> np.ndarray:
    """The unit direction towards the light (viewer.look.key_light_direction of LIGHT_ANGLES)."""
    if str(ROOT) not in __import__("sys").path:
        __import__("sys").path.insert(0, str(ROOT))
    from viewer.look import key_light_direction

    return np.asarray(key_light_direction(*LIGHT_ANGLES), np.float64)


def _rotation_z_to(direction) -> list[float]:
    """The quaternion (x, y, z, w) turning +Z onto ``direction`` (a glTF light shines along its -Z)."""
    d = np.asarray(direction, np.float64) / np.linalg.norm(direction)
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, d)
    s, c = np.linalg.norm(axis), float(z @ d)
    if s < 1e-12:
        return [0.0, 0.0, 0.0, 1.0] if c > 0 else [1.0, 0.0, 0.0, 0.0]
    half = math.atan2(s, c) / 2.0
    axis = axis / s * math.sin(half)
    return [float(axis[0]), float(axis[1]), float(axis[2]), math.cos(half)]


def rest_bounds(model: Path):
    """boneviewer's rest-pose bounds of the model (what its ground height and framing use), rounded
    to 1e-4 of the model's size: they go into the recorded inputs (the light's place, the ground),
    which must not change with the last bits of another machine's skinning arithmetic."""
    import sys

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from viewer.loaders import load_model

    low, high = (np.asarray(v, np.float64) for v in load_model(str(model), None).rest_bounds)
    decimals = 4 - int(math.floor(math.log10(max(float(np.max(high - low)), 1e-6))))
    return np.round(low, decimals) + 0.0, np.round(high, decimals) + 0.0  # + 0.0: no -0.0


def _add_light(document: dict, position) -> dict:
    """``document`` with a directional KHR_lights_punctual light on a new root node at ``position``."""
    document = json.loads(json.dumps(document))
    extension = "KHR_lights_punctual"
    lights = document.setdefault("extensions", {}).setdefault(extension, {}).setdefault("lights", [])
    lights.append({"type": "directional", "color": [1.0, 1.0, 1.0], "intensity": LIGHT_INTENSITY, "name": "sun"})
    nodes = document.setdefault("nodes", [])
    nodes.append({"name": "sun", "translation": [float(v) for v in position],
                  "rotation": [round(v, 9) for v in _rotation_z_to(towards_light())],
                  "extensions": {extension: {"light": len(lights) - 1}}})
    scene = document["scenes"][document.get("scene", 0)]
    scene.setdefault("nodes", []).append(len(nodes) - 1)
    used = document.setdefault("extensionsUsed", [])
    if extension not in used:
        used.append(extension)
    return document


@dataclass(frozen=True)
class ShadowCase:
    model: str  # a fidelity_cases.SAMPLES key

    @property
    def name(self) -> str:
        return f"{self.model}-shadows"

    @property
    def source(self) -> Path:
        return SAMPLES[self.model]

    @property
    def camera(self) -> Path:
        return CAMERAS_DIR / f"{self.model}.json"

    @property
    def environment_file(self) -> Path:
        return ENVIRONMENTS[ENVIRONMENT]

    @property
    def picture(self) -> Path:
        return PICTURES_DIR / f"{self.name}.png"

    def lit_model(self, folder) -> Path:
        """A copy of the model (and the files it names) in ``folder`` with the light added; the
        light's node stands two model sizes away towards the light (Babylon's shadow map looks from there)."""
        folder = Path(folder)
        source = self.source
        out = folder / f"{source.stem}-lit{source.suffix}"
        if out.exists():
            return out
        low, high = rest_bounds(source)
        size = float(np.max(high - low))
        position = np.round((low + high) / 2.0 + 2.0 * size * towards_light(), 6)
        if source.suffix.lower() == ".glb":
            document, binary = read_glb(source)
            out.write_bytes(glb_bytes(_add_light(document, position), binary))
        else:
            for name, path in model_files(source).items():
                if path != source:
                    (folder / name).parent.mkdir(parents=True, exist_ok=True)
                    (folder / name).write_bytes(path.read_bytes())
            document = json.loads(source.read_text(encoding="utf-8"))
            out.write_text(json.dumps(_add_light(document, position), indent=1))
        return out

    def babylon_shadows(self) -> dict:
        """The page's shadow settings (tests/babylon_render/page.html): the ground and the map's depth range."""
        low, high = rest_bounds(self.source)
        size = float(np.max(high - low))
        return {"darkness": 1.0 - SHADOW_INTENSITY, "mapSize": SHADOW_MAP_SIZE, "groundY": float(low[1]),
                "groundCenter": [float(v) for v in (low + high) / 2.0], "groundSize": 8.0 * size,
                # from the light's node (2 sizes away): the character and the ground under it
                "minZ": 0.5 * size, "maxZ": 6.0 * size}

    def inputs(self, folder) -> dict:
        """What Babylon's picture depends on, as recorded: the files by sha256, and the settings."""
        model = self.lit_model(folder)
        return {"model": _relative(self.source) + " with a directional light added (tests/shadow_cases.py)",
                "model_files": {name: sha256(path) for name, path in model_files(model).items()},
                "environment": _relative(self.environment_file), "environment_sha256": sha256(self.environment_file),
                "camera": json.loads(self.camera.read_text()), "camera_sha256": sha256(self.camera),
                "size": list(SIZE), "shadows": self.babylon_shadows()}

    def render_command(self, folder, out: Path) -> list[str]:
        """boneviewer's picture of the case: the lit copy, the environment, --shadows."""
        import sys

        command = [sys.executable, "-m", "viewer.cli", "render", str(self.lit_model(folder)), "--rest",
                   "--camera", str(self.camera), "--background", "transparent", "--no-skeleton", "--no-grid",
                   "--environment", str(self.environment_file), "--shadows",
                   "--shadow-intensity", f"{SHADOW_INTENSITY:g}", "--shadow-softness", f"{SHADOW_SOFTNESS:g}",
                   "--size", f"{SIZE[0]}x{SIZE[1]}", "--out", str(out)]
        return command


CASES = [ShadowCase(model) for model in MODELS]


def framed_camera(case: ShadowCase):
    """boneviewer's framing of the model, looking CAMERA_PITCH down, CAMERA_FARTHER as far."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "babylon_render"))
    from framed_camera import framed_description

    description = framed_description(case.source, SIZE, yaw=CAMERA_YAW, pitch=CAMERA_PITCH)
    description.distance *= CAMERA_FARTHER
    return description


def recorded() -> dict:
    if not RECORD_FILE.exists():
        return {"cases": {}}
    return json.loads(RECORD_FILE.read_text())
