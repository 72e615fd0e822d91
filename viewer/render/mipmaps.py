"""A texture's mipmaps made on the CPU, as Mesa's glGenerateMipmap makes them, and uploaded level
by level.

Why: on llvmpipe the first glGenerateMipmap of a process compiles Mesa's blit shaders, 80-130 ms
(one set for sRGB, one for linear textures), before any texel is filtered; a first PNG of a
textured character paid that in full. numpy makes the same levels in 5-15 ms for a 1024x1024
texture. What GL does, and so what this does: each level is the one above it resampled to half
its size (rounded down, at least 1) with a bilinear filter sampling at each new texel's centre
(a 2x2 box where the size halves exactly), in linear light for an sRGB texture (colour decoded,
averaged, encoded again; alpha as stored), each level stored as 8 bits and read as stored by the
next. The levels agree with Mesa's to 1 in 255 (its sRGB encode is an approximation).
"""

from __future__ import annotations

import ctypes

import numpy as np

GL_TEXTURE_2D = 0x0DE1
GL_RGBA = 0x1908
GL_RGBA8 = 0x8058
GL_UNSIGNED_BYTE = 0x1401
SRGB8_ALPHA8 = 0x8C43

# sRGB's transfer function, both ways: 8-bit code -> linear, and linear in 1/65535 steps -> the
# nearest 8-bit code (16 bits are fine enough: a step is at most 0.05 of a code, near black).
_codes = np.arange(256) / 255.0
SRGB_TO_LINEAR = np.where(_codes <= 0.04045, _codes / 12.92, ((_codes + 0.055) / 1.055) ** 2.4).astype(np.float32)
SRGB_TO_LINEAR16 = np.round(SRGB_TO_LINEAR.astype(np.float64) * 65535.0).astype(np.uint16)
_linear = np.arange(65536) / 65535.0
LINEAR16_TO_SRGB = np.round(255.0 * np.where(_linear <= 0.0031308, _linear * 12.92,
                                           1.055 * _linear ** (1 / 2.4) - 0.055)).astype(np.uint8)
del _codes, _linear


def mipmap_levels(pixels: np.ndarray, srgb: bool) -> list[np.ndarray]:
    """Levels 1.. of the (H, W, 4) uint8 ``pixels`` down to 1x1, each (h, w, 4) uint8."""
    levels = []
    level = np.ascontiguousarray(pixels)
    while level.shape[0] > 1 or level.shape[1] > 1:
        if level.shape[0] % 2 == 0 and level.shape[1] % 2 == 0:
            level = _box_halved(level, srgb)
        else:
            level = _encoded(_halved(_halved(_decoded(level, srgb), axis=0), axis=1), srgb)
        levels.append(level)
    return levels


def _box_halved(level: np.ndarray, srgb: bool) -> np.ndarray:
    """A level of even width and height halved: each new texel the mean of its 2x2, in integers
    (16-bit linear light for sRGB colour)."""
    if srgb:
        values = SRGB_TO_LINEAR16.take(level)  # alpha too, put right below
        values[..., 3] = level[..., 3]
    else:
        values = level.astype(np.uint16)
    total = values[0::2, 0::2].astype(np.uint32)
    total += values[0::2, 1::2]
    total += values[1::2, 0::2]
    total += values[1::2, 1::2]
    total += 2
    total >>= 2
    if not srgb:
        return total.astype(np.uint8)
    half = LINEAR16_TO_SRGB.take(total)
    half[..., 3] = total[..., 3]
    return half


def _decoded(level: np.ndarray, srgb: bool) -> np.ndarray:
    values = SRGB_TO_LINEAR.take(level) if srgb else level * np.float32(1 / 255)
    if srgb:
        values[..., 3] = level[..., 3] * np.float32(1 / 255)
    return values


def _encoded(values: np.ndarray, srgb: bool) -> np.ndarray:
    if not srgb:
        return (values * 255.0 + 0.5).astype(np.uint8)
    level = LINEAR16_TO_SRGB.take((values * 65535.0 + 0.5).astype(np.uint16))
    level[..., 3] = (values[..., 3] * 255.0 + 0.5).astype(np.uint8)
    return level


def _halved(values: np.ndarray, axis: int) -> np.ndarray:
    """``values`` resampled along ``axis`` to half its length (rounded down, at least 1), each new
    sample bilinear at its centre, edges clamped: GL's linear blit to the smaller size."""
    length = values.shape[axis]
    if length == 1:
        return values
    half = length // 2
    if length == 2 * half:  # the centre falls between two samples: their mean
        pairs = values.reshape(values.shape[:axis] + (half, 2) + values.shape[axis + 1:])
        return (np.take(pairs, 0, axis=axis + 1) + np.take(pairs, 1, axis=axis + 1)) * np.float32(0.5)
    where = (np.arange(half) + 0.5) * (length / half) - 0.5
    low = np.floor(where).astype(np.int64)
    fraction = (where - low).astype(np.float32)
    high = np.minimum(low + 1, length - 1)
    shape = [1] * values.ndim
    shape[axis] = half
    fraction = fraction.reshape(shape)
    return np.take(values, low, axis=axis) * (1 - fraction) + np.take(values, high, axis=axis) * fraction


def upload_levels(ctx, texture, pixels: np.ndarray, srgb: bool) -> bool:
    """Give ``texture`` (``pixels`` at level 0, made by ``ctx``) the levels ``mipmap_levels``
    makes, through glTexImage2D from the context's own function loader. False when that loader
    is not there (moderngl keeps it private): the caller then asks GL to make them."""
    loader = getattr(getattr(ctx, "mglo", None), "_context", None)
    try:
        address = loader.load("glTexImage2D") if loader is not None else 0
    except Exception:  # a loader of another shape: GL's own mipmaps then
        return False
    if not address:
        return False
    tex_image = ctypes.CFUNCTYPE(None, ctypes.c_uint, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                 ctypes.c_int, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p)(address)
    texture.use(0)  # bound on unit 0, where glTexImage2D finds it (every draw binds its own again)
    for number, level in enumerate(mipmap_levels(pixels, srgb), start=1):
        level = np.ascontiguousarray(level)
        tex_image(GL_TEXTURE_2D, number, SRGB8_ALPHA8 if srgb else GL_RGBA8, level.shape[1], level.shape[0], 0,
                  GL_RGBA, GL_UNSIGNED_BYTE, level.ctypes.data)
    return True
