"""Mipmaps made by numpy (viewer.render.mipmaps) are the levels GL makes: each level the one above
resampled to half its size with a bilinear filter at the new texels' centres, in linear light for
sRGB colour; uploaded level by level, a texture reads them back as made."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.model.material import Sampler
from viewer.render import materials
from viewer.render.mipmaps import mipmap_levels, upload_levels


def srgb_to_linear(codes):
    c = codes / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(values):
    return np.round(255.0 * np.where(values <= 0.0031308, values * 12.92, 1.055 * values ** (1 / 2.4) - 0.055))


def reference_halving(level: np.ndarray, srgb: bool) -> np.ndarray:
    """One level halved, written out plainly in float64: each new texel a bilinear sample of the
    level above at its centre (edges clamped), one axis then the other."""
    values = level / 255.0
    if srgb:
        values[..., :3] = srgb_to_linear(level[..., :3].astype(np.float64))
    for axis in (0, 1):
        n = values.shape[axis]
        m = max(1, n // 2)
        rows = []
        for i in range(m):
            x = min(max((i + 0.5) * n / m - 0.5, 0.0), n - 1.0)
            low = int(np.floor(x))
            high = min(low + 1, n - 1)
            f = x - low
            rows.append(np.take(values, low, axis=axis) * (1 - f) + np.take(values, high, axis=axis) * f)
        values = np.stack(rows, axis=axis)
    out = np.round(values * 255.0)
    if srgb:
        out[..., :3] = linear_to_srgb(values[..., :3])
    return out.astype(np.uint8)


@pytest.mark.parametrize("shape", [(64, 64), (32, 8), (7, 5), (5, 1), (1, 6), (37, 20)])
@pytest.mark.parametrize("srgb", [True, False])
def test_levels_equal_the_plain_reference(shape, srgb):
    """Each level against the reference's halving of the level above it (so that a rounding at
    one level is not counted again below it)."""
    pixels = np.random.default_rng(sum(shape)).integers(0, 256, shape + (4,), dtype=np.uint8)
    ours = mipmap_levels(pixels, srgb)
    assert ours[-1].shape == (1, 1, 4) and len(ours) == int(np.log2(max(shape)))  # GL: floor(log2) levels below the base
    for number, (above, level) in enumerate(zip([pixels] + ours, ours), start=1):
        want = reference_halving(above, srgb)
        assert level.shape == want.shape
        # 1 in 255: the 2x2 mean rounded in integers, sRGB colour through 16-bit linear light
        assert np.abs(level.astype(int) - want).max() <= 1, (shape, srgb, number)


def test_srgb_colour_is_averaged_in_linear_light_and_alpha_as_stored():
    pixels = np.zeros((2, 2, 4), np.uint8)
    pixels[:, 0] = (255, 255, 255, 255)  # white beside black: half the light is sRGB 188, not 128
    pixels[:, 1] = (0, 0, 0, 0)
    (level,) = mipmap_levels(pixels, srgb=True)
    assert level[0, 0].tolist() == [188, 188, 188, 128]
    (level,) = mipmap_levels(pixels, srgb=False)
    assert level[0, 0].tolist() == [128, 128, 128, 128]


def test_levels_agree_with_gls_own(ctx):
    """GL's glGenerateMipmap on the same power-of-two texture: within 4 in 255 at every level
    (Mesa filters in 8-bit fixed point, so its levels drift from exact rounding by a few codes
    over ten levels of noise)."""
    pixels = np.random.default_rng(7).integers(0, 256, (256, 128, 4), dtype=np.uint8)
    for srgb in (True, False):
        texture = ctx.texture((128, 256), 4, pixels.tobytes(), internal_format=materials.SRGB8_ALPHA8 if srgb else None)
        texture.build_mipmaps()
        for number, level in enumerate(mipmap_levels(pixels, srgb), start=1):
            theirs = np.frombuffer(texture.read(level=number), np.uint8).reshape(level.shape)
            assert np.abs(theirs.astype(int) - level).max() <= 4, (srgb, number)
        texture.release()


def sampled_level(ctx, texture, number: int, size) -> np.ndarray:
    """Texel by texel, level ``number`` of ``texture`` as a shader reads it (sRGB decoded), as
    float32 RGBA rows top first."""
    program = ctx.program(
        vertex_shader="#version 330\nin vec2 p; void main() { gl_Position = vec4(p, 0.0, 1.0); }",
        fragment_shader="#version 330\nuniform sampler2D t; uniform int level; out vec4 color;\n"
                        "void main() { color = texelFetch(t, ivec2(gl_FragCoord.xy), level); }")
    program["level"] = number
    quad = ctx.buffer(np.array([-1, -1, 3, -1, -1, 3], dtype="f4").tobytes())
    vao = ctx.simple_vertex_array(program, quad, "p")
    target = ctx.texture(size, 4, dtype="f4")
    bound = ctx.detect_framebuffer()
    framebuffer = ctx.framebuffer(color_attachments=[target])
    framebuffer.use()
    texture.use(0)
    vao.render()
    values = np.frombuffer(framebuffer.read(components=4, dtype="f4"), np.float32).reshape(size[1], size[0], 4)
    bound.use()  # a released framebuffer left bound makes the next one's creation an error
    for thing in (framebuffer, target, vao, quad, program):
        thing.release()
    return values


@pytest.mark.parametrize("srgb", [True, False])
def test_uploaded_levels_are_what_the_texture_reads(ctx, srgb):
    pixels = np.random.default_rng(11).integers(0, 256, (16, 24, 4), dtype=np.uint8)
    texture = ctx.texture((24, 16), 4, pixels.tobytes(), internal_format=materials.SRGB8_ALPHA8 if srgb else None)
    assert upload_levels(ctx, texture, pixels, srgb)
    assert ctx.error == "GL_NO_ERROR"
    for number, level in enumerate(mipmap_levels(pixels, srgb), start=1):
        read = sampled_level(ctx, texture, number, (level.shape[1], level.shape[0])).astype(np.float64) * 255.0
        if srgb:  # decoded by the sampler (llvmpipe's decode is off by up to 1e-3): encoded again
            read[..., :3] = linear_to_srgb(read[..., :3] / 255.0)
        assert np.abs(read - level).max() <= (1.0 if srgb else 0.01), number
    texture.release()


def test_material_textures_get_every_level_by_either_path(ctx, monkeypatch):
    """upload_texture: numpy's levels up to CPU_MIPMAP_TEXELS, GL's above; a mipmapped filter
    reads a complete chain either way (an incomplete one samples black)."""
    pixels = np.random.default_rng(5).integers(0, 256, (32, 32, 4), dtype=np.uint8)
    want = mipmap_levels(pixels, True)[-1][0, 0]  # the 1x1 level: the whole texture's mean
    for budget in (1 << 20, 16):  # 16 texels: the 32x32 texture is GL's
        monkeypatch.setattr(materials, "CPU_MIPMAP_TEXELS", budget)
        texture = materials.upload_texture(ctx, pixels, True, Sampler())
        read = sampled_level(ctx, texture, 5, (1, 1))[0, 0]
        assert np.abs(linear_to_srgb(read[:3].astype(np.float64)) - want[:3]).max() <= 4, budget
        texture.release()
