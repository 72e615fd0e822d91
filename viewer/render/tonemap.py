"""glsl/tonemap.glsl's settings: exposure, then the tone curve, then sRGB (as Babylon.js).

The curve is compiled in (the #define TONE_MAPPING, ``tone_mapping_defines``: one program per
curve, as the other features of the shader family); the exposure is a uniform
(``set_tone_mapping``).
"""

from __future__ import annotations

from ..errors import ViewerError

# TONE_MAPPING's values, by the names the options use.
TONE_MAPPING_CODES = {"none": 0, "khr-neutral": 1, "aces": 2}


def tone_mapping_code(tone_mapping: str) -> int:
    try:
        return TONE_MAPPING_CODES[tone_mapping]
    except KeyError:
        raise ViewerError(f"tone mapping {tone_mapping!r}: expected one of {', '.join(TONE_MAPPING_CODES)}") from None


def tone_mapping_defines(tone_mapping: str) -> dict[str, int]:
    """The #defines a program that includes tonemap.glsl is built with for this curve."""
    return {"TONE_MAPPING": tone_mapping_code(tone_mapping)}


def set_tone_mapping(program, exposure: float) -> None:
    """Set ``u_exposure`` on a program that includes tonemap.glsl (its curve is compiled in:
    ``tone_mapping_defines``)."""
    if "u_exposure" in program:
        program["u_exposure"].value = float(exposure)
