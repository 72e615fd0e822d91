"""The look's settings (issue 27), checked wherever a user gives them: the command line, a
script's ``app.environment`` and the rest, the panel, synth's draws. One rule each, and every
refusal one ViewerError line that names the option and the value (a bad environment file: the
file and what is wrong with it). No GL: a bad file is refused before any GL work.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from .errors import ViewerError, why_missing
from .model.checks import finite_number

STUDIO, NONE = "studio", "none"             # the environment generated in code; the simple key light
BUILT_IN_ENVIRONMENTS = (STUDIO, NONE)
TONE_MAPPINGS = ("khr-neutral", "aces", "none")
# How the environment's reflections are blurred with roughness (viewer.render.environment.FILTERINGS):
# Babylon.js's box-filtered mips (its HDRCubeTexture's default, so its pictures) or GGX importance sampling.
ENVIRONMENT_FILTERS = ("mipmaps", "ggx")
HDR_SUFFIX = ".hdr"
ENVIRONMENT_VALUES = "FILE.hdr, studio or none"
# What synth's images draw from by default: the environment turned all round, and the exposure
# within half a stop either way of 1.
DRAWN_ROTATION = (0.0, 360.0)
DRAWN_EXPOSURE = (0.7, 1.4)
# What a frame shows besides the model, as every command that draws takes it (render, view, serve,
# a remote client's render): the skeleton overlay, the ground grid, the background, and the
# environment drawn behind. apply_frame's keywords.
FRAME_SETTINGS = ("skeleton", "grid", "background", "show_environment")
TRANSPARENT = "transparent"
COLOUR_VALUES = "#rrggbb, a name such as white, or transparent"


def environment(value, what: str = "environment") -> str:
    """"studio", "none", or the absolute path of a sound Radiance .hdr file (checked whole: a
    file that is missing, a folder, not an .hdr, truncated or absurdly large is refused)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise ViewerError(f"{what}: expected {ENVIRONMENT_VALUES}, got {value!r}")
    if value.strip().lower() in BUILT_IN_ENVIRONMENTS:
        return value.strip().lower()
    check_environment_file(Path(value), what)
    return os.path.abspath(value)


def check_environment_file(path: Path, what: str = "environment") -> None:
    from .hdr import check_hdr

    if path.is_dir():
        raise ViewerError(f"{what} {path}: is a folder; give a Radiance .hdr file ({ENVIRONMENT_VALUES})")
    if not path.is_file():
        raise ViewerError(f"{what} {path}: {why_missing(path)} ({ENVIRONMENT_VALUES})")
    if path.suffix.lower() != HDR_SUFFIX:
        raise ViewerError(f"{what} {path}: expected a Radiance .hdr file ({ENVIRONMENT_VALUES})")
    try:
        check_hdr(path)
    except ViewerError as error:
        raise ViewerError(f"{what} {error}") from None  # its line starts with the path


def environment_rotation(value, what: str = "environment_rotation") -> float:
    """Degrees about +Y, any finite number (checks.py's rule)."""
    return finite_number(value, what)


def exposure(value, what: str = "exposure") -> float:
    """A linear multiplier before tone mapping: finite (checks.py's rule) and more than 0."""
    number = finite_number(value, what)
    if not number > 0.0:
        raise ViewerError(f"{what}: must be more than 0, got {value!r}")
    return number


def shadows(value, what: str = "shadows") -> bool:
    """Shadows on or off (issue 45): a bool."""
    if not isinstance(value, (bool, int)) or value not in (0, 1):
        raise ViewerError(f"{what}: expected True or False, got {value!r}")
    return bool(value)


def _unit(value, what: str) -> float:
    number = finite_number(value, what)
    if not 0.0 <= number <= 1.0:
        raise ViewerError(f"{what}: must be from 0 to 1, got {value!r}")
    return number


def shadow_intensity(value, what: str = "shadow_intensity") -> float:
    """How dark a full shadow is: 0 (none) to 1 (black)."""
    return _unit(value, what)


def shadow_softness(value, what: str = "shadow_softness") -> float:
    """How soft the shadows' edges are: 0 to 1."""
    return _unit(value, what)


def key_light_direction(azimuth: float, elevation: float) -> tuple:
    """The unit direction towards a light at ``azimuth`` degrees about +Y from the model's front
    (+Z) towards +X and ``elevation`` degrees above the ground."""
    a, e = math.radians(azimuth), math.radians(elevation)
    return (math.sin(a) * math.cos(e), math.sin(e), math.cos(a) * math.cos(e))


def key_light_angles(direction) -> tuple:
    """(azimuth, elevation) in degrees of a direction towards a light (key_light_direction's inverse)."""
    x, y, z = (float(v) for v in direction)
    return (math.degrees(math.atan2(x, z)) % 360.0, math.degrees(math.atan2(y, math.hypot(x, z))))


def key_light(value, what: str = "key_light") -> tuple:
    """The key light: (azimuth, elevation) in degrees (key_light_direction), or a direction
    towards it (x, y, z), not zero: the unit direction."""
    try:
        numbers = tuple(finite_number(v, what) for v in value)
    except (TypeError, ViewerError):
        numbers = ()
    if len(numbers) == 2:
        if not -90.0 <= numbers[1] <= 90.0:
            raise ViewerError(f"{what}: the elevation must be from -90 to 90 degrees, got {numbers[1]!r}")
        return key_light_direction(*numbers)
    length = math.hypot(*numbers) if len(numbers) == 3 else 0.0
    if length > 0:
        return tuple(v / length for v in numbers)
    raise ViewerError(f"{what}: expected two finite angles in degrees (azimuth, elevation) or a direction (x, y, z), "
                      f"got {value!r}")


def tone_mapping(value, what: str = "tone_mapping") -> str:
    if not isinstance(value, str) or value.strip().lower() not in TONE_MAPPINGS:
        raise ViewerError(f"{what}: expected one of {', '.join(TONE_MAPPINGS)}, got {value!r}")
    return value.strip().lower()


def environment_filter(value, what: str = "environment_filter") -> str:
    if not isinstance(value, str) or value.strip().lower() not in ENVIRONMENT_FILTERS:
        raise ViewerError(f"{what}: expected one of {', '.join(ENVIRONMENT_FILTERS)}, got {value!r}")
    return value.strip().lower()


def show_environment(value, what: str = "show_environment") -> bool:
    import numpy as np

    if not isinstance(value, (bool, np.bool_)):
        raise ViewerError(f"{what}: expected True or False, got {value!r}")
    return bool(value)


def colour(text: str):
    """``transparent``, or a colour's (r, g, b) in 0..1 from #rrggbb, #rgb or a CSS name such as
    white (ValueError, worded, for anything else)."""
    from PIL import ImageColor

    if text.strip().lower() == TRANSPARENT:
        return TRANSPARENT
    try:
        rgb = ImageColor.getrgb(text.strip())
    except ValueError:
        raise ValueError(f"unknown colour {text!r}: give {COLOUR_VALUES}") from None
    return tuple(channel / 255.0 for channel in rgb[:3])


def background(value, what: str = "background"):
    """``transparent``, or a colour as (r, g, b) in 0..1: a text as ``colour`` reads it, or three
    numbers from 0 to 1."""
    if isinstance(value, str):
        try:
            return colour(value)
        except ValueError as error:
            raise ViewerError(f"{what}: {error}") from None
    try:
        rgb = tuple(finite_number(channel, what) for channel in value)
    except (TypeError, ViewerError):
        rgb = ()
    if len(rgb) != 3 or not all(0.0 <= channel <= 1.0 for channel in rgb):
        raise ViewerError(f"{what}: expected {COLOUR_VALUES}, or three numbers from 0 to 1 (r, g, b), got {value!r}")
    return rgb


def apply_frame(options, skeleton=None, grid=None, background=None, show_environment=None, shadows=None,
                shadow_intensity=None, shadow_softness=None, key_light=None):
    """``options`` (a RenderOptions) with what the frame shows set: the skeleton overlay, the
    ground grid, the background (transparent or a colour, as ``background`` gives it, instead of
    the grey gradient) and the environment behind the model; and the shadows (a remote client's
    render: ``key_light`` as (azimuth, elevation) degrees or a direction); None leaves a setting
    as it is. A background given draws in place of the environment: not with show_environment."""
    shadow = {name: value for name, value in (("shadows", shadows), ("shadow_intensity", shadow_intensity),
                                              ("shadow_softness", shadow_softness), ("key_light", key_light))
              if value is not None}
    shadow = checked_look(shadow)  # each refused in one line naming it, before any change
    if background is not None and show_environment:
        raise ViewerError("background and show_environment: give one (the environment is drawn in place of the "
                          "background)")
    for name, value in shadow.items():
        setattr(options, name, value)
    if background is not None:
        show_environment = False
    if skeleton is not None:
        options.show_skeleton = bool(skeleton)
    if grid is not None:
        options.show_grid = bool(grid)
    if show_environment is not None:
        options.show_environment = bool(show_environment)
        if show_environment:
            options.transparent_background = False  # drawn behind in place of any background
    if background == TRANSPARENT:
        options.transparent_background = True
    elif background is not None:
        options.transparent_background = False
        options.background_top = options.background_bottom = tuple(background)
    return options


def environment_name(value: str) -> str:
    """How a line or a label names an environment: studio, none, or the file's name."""
    return value if value in BUILT_IN_ENVIRONMENTS else os.path.basename(value)


def check(name: str, value, what: str | None = None):
    """``value`` for the look's setting ``name`` (RenderOptions.look()'s names), checked by that
    setting's rule above; an error names ``what`` (default: the setting)."""
    from .options import LOOK_FIELDS

    if name not in LOOK_FIELDS:
        raise ViewerError(f"{what or name}: not a setting of the look ({', '.join(LOOK_FIELDS)})")
    return globals()[name](value, what or name)


def checked_look(settings: dict, prefix: str = "") -> dict:
    """``settings`` (the look's names) each checked; an error names ``prefix`` + the setting."""
    return {name: check(name, value, f"{prefix}{name}") for name, value in settings.items()}



def environment_digest(value: str) -> str | None:
    """The sha256 of an environment file's bytes (None for the built-in ones): what a library run's
    key or a synth run's key compares, so a changed file redoes what it lit."""
    if value in BUILT_IN_ENVIRONMENTS:
        return None
    import hashlib

    return hashlib.sha256(Path(value).read_bytes()).hexdigest()
