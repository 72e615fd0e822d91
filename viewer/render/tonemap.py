"""The uniforms of glsl/tonemap.glsl: exposure, then the tone curve, then sRGB (as Babylon.js)."""

from __future__ import annotations

from ..errors import ViewerError

# u_tone_mapping's values, by the names the options use.
TONE_MAPPING_CODES = {"none": 0, "khr-neutral": 1, "aces": 2}


def tone_mapping_code(tone_mapping: str) -> int:
    try:
        return TONE_MAPPING_CODES[tone_mapping]
    except KeyError:
        raise ViewerError(f"tone mapping {tone_mapping!r}: expected one of {', '.join(TONE_MAPPING_CODES)}") from None


def set_tone_mapping(program, tone_mapping: str, exposure: float) -> None:
    """Set ``u_tone_mapping`` and ``u_exposure`` on a program that includes tonemap.glsl."""
    code = tone_mapping_code(tone_mapping)
    if "u_tone_mapping" in program:
        program["u_tone_mapping"].value = code
    if "u_exposure" in program:
        program["u_exposure"].value = float(exposure)
