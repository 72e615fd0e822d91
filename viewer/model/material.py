"""glTF 2.0 metallic-roughness materials as the renderer draws them (numpy only).

A ``Material`` holds every field of a glTF material the viewer reads: the factors, the five
texture slots (each a ``TextureSlot``: the image, a loader's decoded when first read, which
TEXCOORD_n it reads, its KHR_texture_transform and its sampler), the alpha mode, doubleSided, and the extensions
KHR_materials_emissive_strength and KHR_materials_unlit. ``Material()`` is glTF's default
material (white, metallic 1, roughness 1); ``Material.dielectric`` is the plain painted look
of meshes made in code (the built-in character, BVH capsules).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# glTF's sampler enums, as the file stores them (OpenGL's).
NEAREST, LINEAR = 9728, 9729
NEAREST_MIPMAP_NEAREST, LINEAR_MIPMAP_NEAREST, NEAREST_MIPMAP_LINEAR, LINEAR_MIPMAP_LINEAR = 9984, 9985, 9986, 9987
REPEAT, CLAMP_TO_EDGE, MIRRORED_REPEAT = 10497, 33071, 33648
MAG_FILTERS = (NEAREST, LINEAR)
MIN_FILTERS = (NEAREST, LINEAR, NEAREST_MIPMAP_NEAREST, LINEAR_MIPMAP_NEAREST, NEAREST_MIPMAP_LINEAR,
               LINEAR_MIPMAP_LINEAR)
WRAP_MODES = (REPEAT, CLAMP_TO_EDGE, MIRRORED_REPEAT)
ALPHA_MODES = ("OPAQUE", "MASK", "BLEND")
# The texture slots of a Material, in glTF's order.
TEXTURE_SLOTS = ("base_color_texture", "metallic_roughness_texture", "normal_texture", "occlusion_texture",
                 "emissive_texture")


@dataclass
class Sampler:
    """A glTF sampler; GL enums as glTF stores them."""

    mag_filter: int | None = None  # 9728 NEAREST, 9729 LINEAR (None: LINEAR)
    min_filter: int | None = None  # 9728..9987 (None: LINEAR_MIPMAP_LINEAR)
    wrap_s: int = REPEAT  # 10497 REPEAT, 33071 CLAMP_TO_EDGE, 33648 MIRRORED_REPEAT
    wrap_t: int = REPEAT


class DeferredImage:
    """An image a loader has checked (its size, its format) but not decoded: ``decode()`` gives
    its (H, W, 4) uint8 RGBA pixels, or None when they do not decode (the loader says so, once).
    A TextureSlot given one decodes it on the first read of its ``image``."""

    def decode(self) -> np.ndarray | None:
        raise NotImplementedError


class TextureSlot:
    """One texture of a material: the image, the UV set it reads and how. Compared by identity
    (it holds arrays: an image, a matrix)."""

    def __init__(self, image, texcoord: int = 0, transform: np.ndarray | None = None,
                 sampler: Sampler | None = None, scale: float = 1.0):
        self.image = image  # (H, W, 4) uint8 RGBA, as decoded (rows top first), or a DeferredImage
        self.texcoord = texcoord  # 0 or 1: which TEXCOORD_n
        self.transform = transform  # KHR_texture_transform as a 3x3 for column (u, v, 1); None = identity
        self.sampler = Sampler() if sampler is None else sampler
        self.scale = scale  # normalTexture.scale, occlusionTexture.strength; 1 elsewhere

    @property
    def image(self) -> np.ndarray | None:
        """The (H, W, 4) uint8 RGBA image; a DeferredImage is decoded on the first read, and is
        None from then on when it does not decode (the material is drawn without this texture)."""
        if isinstance(self._image, DeferredImage):
            self._image = self._image.decode()
        return self._image

    @image.setter
    def image(self, image) -> None:
        self._image = image

    def __repr__(self) -> str:
        image = "deferred" if isinstance(self._image, DeferredImage) else getattr(self._image, "shape", None)
        return (f"TextureSlot(image={image}, texcoord={self.texcoord}, transform={self.transform is not None}, "
                f"sampler={self.sampler}, scale={self.scale})")

    def uv(self, texcoords0, texcoords1=None) -> np.ndarray:
        """The (V, 2) texture coordinates this slot samples at: its TEXCOORD_n through its
        transform (what the shader computes per fragment)."""
        uv = np.asarray(texcoords1 if self.texcoord == 1 and texcoords1 is not None else texcoords0)
        return apply_uv_transform(self.transform, uv)


@dataclass(eq=False)  # compared by identity: it holds arrays; primitives share one by reference
class Material:
    """A glTF metallic-roughness material; the defaults are glTF's."""

    name: str = ""
    base_color_factor: np.ndarray = field(default_factory=lambda: np.ones(4))  # linear RGBA
    base_color_texture: TextureSlot | None = None  # sRGB
    metallic_factor: float = 1.0
    roughness_factor: float = 1.0
    metallic_roughness_texture: TextureSlot | None = None  # B metal, G rough (linear)
    normal_texture: TextureSlot | None = None  # scale in .scale
    occlusion_texture: TextureSlot | None = None  # R, strength in .scale
    emissive_factor: np.ndarray = field(default_factory=lambda: np.zeros(3))  # linear RGB
    emissive_texture: TextureSlot | None = None  # sRGB
    emissive_strength: float = 1.0  # KHR_materials_emissive_strength
    alpha_mode: str = "OPAQUE"  # OPAQUE | MASK | BLEND
    alpha_cutoff: float = 0.5
    double_sided: bool = False
    unlit: bool = False  # KHR_materials_unlit

    @classmethod
    def dielectric(cls, color=(1.0, 1.0, 1.0, 1.0), texture: np.ndarray | None = None, name: str = "",
                   roughness: float = 0.6) -> "Material":
        """A plain painted surface (metallic 0, roughness 0.6): meshes made in code (the built-in
        character, BVH capsules, markers) keep the look they had under the simple light."""
        return cls(name=name, base_color_factor=np.array(color, np.float64),
                   base_color_texture=None if texture is None else TextureSlot(texture),
                   metallic_factor=0.0, roughness_factor=float(roughness))

    def textures(self) -> dict[str, TextureSlot]:
        """{slot name: TextureSlot} of the slots that hold a texture, in glTF's order; a slot whose
        image does not decode is left out (this decodes a loader's deferred images)."""
        slots = (getattr(self, name) for name in TEXTURE_SLOTS)
        return {name: slot for name, slot in zip(TEXTURE_SLOTS, slots) if slot is not None and slot.image is not None}


def srgb_to_linear(color) -> np.ndarray:
    """A colour given as display sRGB (what a colour picker shows, 0..1) as the linear values glTF's
    factors and vertex colours hold; an alpha (a fourth value) stays as it is."""
    color = np.array(color, dtype=np.float64)
    rgb = color[..., :3]
    color[..., :3] = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return color


def uv_transform(offset=(0.0, 0.0), rotation: float = 0.0, scale=(1.0, 1.0)) -> np.ndarray:
    """KHR_texture_transform's matrix, translation x rotation x scale, for column (u, v, 1)
    vectors (the extension's own formula: the rotation turns uv counter-clockwise)."""
    c, s = np.cos(rotation), np.sin(rotation)
    translation = np.array([[1.0, 0.0, offset[0]], [0.0, 1.0, offset[1]], [0.0, 0.0, 1.0]])
    turn = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
    return translation @ turn @ np.diag([scale[0], scale[1], 1.0])


def apply_uv_transform(transform: np.ndarray | None, uv) -> np.ndarray:
    """(V, 2) float32 texture coordinates through a 3x3 uv transform (None: unchanged)."""
    uv = np.asarray(uv, dtype=np.float32)
    if transform is None:
        return uv
    return (np.c_[uv, np.ones(len(uv))] @ np.asarray(transform).T)[:, :2].astype(np.float32)


__all__ = ["ALPHA_MODES", "DeferredImage", "Material", "Sampler", "TEXTURE_SLOTS", "TextureSlot", "apply_uv_transform",
           "srgb_to_linear", "uv_transform"]
