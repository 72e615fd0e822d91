"""A glTF material as GPU state for glsl/skinning.frag: its textures (sRGB where glTF says the
image is colour, wrapped and filtered as its sampler says, mipmapped when the filter reads mips)
and its uniforms, written once per submesh draw.

Texture units: 0 base colour, 1 the bone texture, 2 the morph texture (the renderer's), 3..6 the
other material slots, ENVIRONMENT_UNIT and up the environment's (viewer.render.environment).
"""

from __future__ import annotations

import enum
from contextlib import contextmanager

import numpy as np

from .mipmaps import upload_levels
from ..model.material import (ALPHA_MODES, LINEAR, LINEAR_MIPMAP_LINEAR, LINEAR_MIPMAP_NEAREST, MIRRORED_REPEAT,
                              NEAREST_MIPMAP_LINEAR, NEAREST_MIPMAP_NEAREST, REPEAT)

MIPMAP_FILTERS = (NEAREST_MIPMAP_NEAREST, LINEAR_MIPMAP_NEAREST, NEAREST_MIPMAP_LINEAR, LINEAR_MIPMAP_LINEAR)
SRGB8_ALPHA8 = 0x8C43
ENVIRONMENT_UNIT = 7
# Mipmaps of textures up to this size are made by numpy (viewer.render.mipmaps: 5-15 ms for
# 1024x1024, where a process's first glGenerateMipmap on llvmpipe costs 80-130 ms); larger ones by
# GL, whose blit is then the faster.
CPU_MIPMAP_TEXELS = 1024 * 1024
ANISOTROPY = 1.0  # Babylon asks for 4 (Texture.DEFAULT_ANISOTROPIC_FILTERING_LEVEL); its pictures match 1 better


class Slot(enum.IntEnum):
    """A material's texture slots, numbered as skinning.frag's SLOT_* (bit s of its masks)."""

    BASE_COLOR = 0
    METALLIC_ROUGHNESS = 1
    NORMAL = 2
    OCCLUSION = 3
    EMISSIVE = 4


# slot: (Material attribute, sampler uniform, texture unit, sRGB)
SLOTS = {
    Slot.BASE_COLOR: ("base_color_texture", "u_base_color_texture", 0, True),
    Slot.METALLIC_ROUGHNESS: ("metallic_roughness_texture", "u_metallic_roughness_texture", 3, False),
    Slot.NORMAL: ("normal_texture", "u_normal_texture", 4, False),
    Slot.OCCLUSION: ("occlusion_texture", "u_occlusion_texture", 5, False),
    Slot.EMISSIVE: ("emissive_texture", "u_emissive_texture", 6, True),
}
SAMPLER_UNIFORMS = {uniform: unit for _, uniform, unit, _ in SLOTS.values()}


def sampler_key(sampler) -> tuple:
    """(min filter, mag filter, wrap s, wrap t) with glTF's defaults filled in."""
    return (sampler.min_filter or LINEAR_MIPMAP_LINEAR, sampler.mag_filter or LINEAR,
            int(sampler.wrap_s), int(sampler.wrap_t))


def upload_texture(ctx, image: np.ndarray, srgb: bool, sampler) -> object:
    """One RGBA8 texture of ``image`` ((H, W, 4) uint8, rows top first: glTF's (0, 0) is the
    image's top left, which is where GL's first uploaded row lands, so rows are not flipped)."""
    pixels = np.asarray(image, dtype=np.uint8)
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if pixels.shape[2] < 4:  # grey, grey + alpha or RGB, as a script may hand one over
        grey = pixels.shape[2] < 3
        rgb = np.repeat(pixels[:, :, :1], 3, axis=2) if grey else pixels[:, :, :3]
        alpha = pixels[:, :, 1:2] if pixels.shape[2] == 2 else np.full(pixels.shape[:2] + (1,), 255, np.uint8)
        pixels = np.concatenate([rgb, alpha], axis=2)
    pixels = np.ascontiguousarray(pixels)
    texture = ctx.texture((pixels.shape[1], pixels.shape[0]), 4, pixels.tobytes(),
                          internal_format=SRGB8_ALPHA8 if srgb else None)
    min_filter, mag_filter, wrap_s, wrap_t = sampler_key(sampler)
    if min_filter in MIPMAP_FILTERS and not (pixels.shape[0] * pixels.shape[1] <= CPU_MIPMAP_TEXELS
                                            and upload_levels(ctx, texture, pixels, srgb)):
        texture.build_mipmaps()
    texture.filter = (min_filter, mag_filter)
    texture.anisotropy = ANISOTROPY
    # MIRRORED_REPEAT is folded in the shader over a texture that clamps (moderngl sets only
    # REPEAT or CLAMP_TO_EDGE).
    texture.repeat_x = wrap_s == REPEAT
    texture.repeat_y = wrap_t == REPEAT
    return texture


class GpuMaterial:
    """The textures, uniform values and shader #defines of one material; ``textures`` is a
    shared cache {(id(image), sRGB, sampler key): texture} that owns them (one per GpuMesh)."""

    def __init__(self, ctx, material, textures: dict):
        self.material = material
        self.blend = material.alpha_mode == "BLEND"
        self.double_sided = bool(material.double_sided)
        self.bindings = []  # (sampler uniform, unit, texture)
        mask = uv1 = mirror = 0
        transforms = np.tile(np.eye(3, dtype=np.float32), (len(Slot), 1, 1))
        for slot, (attribute, uniform, unit, srgb) in SLOTS.items():
            entry = getattr(material, attribute)
            if entry is None or entry.image is None:  # (an image that does not decode: warned, drawn without)
                continue
            key = (id(entry.image), srgb, sampler_key(entry.sampler))
            texture = textures.get(key)
            if texture is None:
                texture = textures[key] = upload_texture(ctx, entry.image, srgb, entry.sampler)
                texture.extra = entry.image  # keeps the image alive, so its id is not reused
            self.bindings.append((uniform, unit, texture))
            mask |= 1 << slot
            uv1 |= (1 << slot) if entry.texcoord == 1 else 0
            _, _, wrap_s, wrap_t = sampler_key(entry.sampler)
            mirror |= (int(wrap_s == MIRRORED_REPEAT) + 2 * int(wrap_t == MIRRORED_REPEAT)) << (2 * slot)
            if entry.transform is not None:
                transforms[slot] = np.asarray(entry.transform, np.float32)

        def scale_of(attribute):
            entry = getattr(material, attribute)
            return 1.0 if entry is None else float(entry.scale)

        emissive = np.asarray(material.emissive_factor, np.float64) * float(material.emissive_strength)
        self.values = {
            "u_base_color": tuple(float(v) for v in material.base_color_factor),
            "u_emissive": tuple(float(v) for v in emissive),
            "u_metallic": float(material.metallic_factor),
            "u_roughness": float(material.roughness_factor),
            "u_normal_scale": scale_of("normal_texture"),
            "u_occlusion_strength": scale_of("occlusion_texture"),
            "u_alpha_cutoff": float(material.alpha_cutoff),
        }
        # What skinning.frag compiles in (one program per distinct set).
        self.defines = (("TEXTURES", mask), ("UV1", uv1), ("MIRROR", mirror),
                        ("ALPHA_MODE", ALPHA_MODES.index(material.alpha_mode)), ("UNLIT", int(bool(material.unlit))))
        # GLSL reads a mat3 column by column: the transposed rows of each 3x3.
        self.transforms = np.ascontiguousarray(transforms.transpose(0, 2, 1)).tobytes()

    def use(self, program) -> None:
        """Bind the textures and write the uniforms into ``program``."""
        for uniform, unit, texture in self.bindings:
            texture.use(location=unit)
        for name, value in self.values.items():
            if name in program:
                program[name].value = value
        if "u_uv_transform" in program:  # the compiler keeps the array up to the last slot used
            uniform = program["u_uv_transform"]
            uniform.write(self.transforms[: 36 * uniform.array_length])


def set_sampler_units(program) -> None:
    """Point every material sampler at its own unit (two samplers of different types on one
    unit make GL refuse the draw, so the unused ones must not stay on unit 0)."""
    for name, unit in SAMPLER_UNIFORMS.items():
        if name in program:
            program[name].value = unit


def cull(ctx, double_sided: bool, world_matrix) -> None:
    """Back faces culled for a single-sided material; a world matrix that mirrors (negative
    determinant) turns the winding of front faces to clockwise (glTF)."""
    import moderngl

    if double_sided:
        ctx.disable(moderngl.CULL_FACE)
    else:
        ctx.enable(moderngl.CULL_FACE)
        ctx.front_face = "cw" if np.linalg.det(np.asarray(world_matrix, np.float64)[:3, :3]) < 0 else "ccw"


@contextmanager
def no_depth_writes(ctx):
    """Depth test kept, depth writes off while inside (Babylon.js writes no depth for an
    alpha-blended draw). moderngl keeps the depth mask on each framebuffer, set on the bound
    one (``ctx.fbo``: the window's or an offscreen one); a Context has no depth_mask, and
    setting one there changes nothing."""
    target = ctx.fbo
    target.depth_mask = False
    try:
        yield
    finally:
        target.depth_mask = True
