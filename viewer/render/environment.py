"""Image-based light: an equirectangular environment made into the GPU resources a lit shader
reads (glsl/ibl.glsl), the generated studio environment, and the environment as a background.

What Babylon.js 9.28 does with ``new HDRCubeTexture(file, scene, 256)`` in a right-handed scene
(read in its sources, and checked against the texture it builds in headless Chromium: the faces,
their mips and its harmonics), and what we do:

* Constructor defaults: noMipmap false, generateHarmonics true, gammaSpace false,
  **prefilterOnLoad false**, supersample false. So Babylon does *not* GGX-prefilter this texture:
  PanoramaToCubeMapTools picks each texel of a 256 cube from the picture (nearest pixel, rounded,
  at the texel's corner: texel_pick_directions),
  the faces go up as RGBA32F and ``gl.generateMipmap`` makes the mips (2x2 box averages: 9 levels).
  lodGenerationScale 0.8, lodGenerationOffset 0. We pick the same texels (numpy: on llvmpipe a
  gather beats compiling a shader; a picture wider than 8 x 256 is averaged down first where
  Babylon would alias, and one narrower than 256 is picked from finer where Babylon's half-pixel
  rounding would turn its light) and the same 2x2 box mips, stored as RGBA16F.
  ``filtering="mipmaps"`` (the default) keeps Babylon's box mips; ``filtering="ggx"`` replaces
  levels 1.. by GGX importance sampling (a fixed count, each sample read from the mip matching its
  solid angle), with Babylon's own prefilter mapping alpha(level) = 2**(level / 0.8) / 256 (what
  ``prefilterOnLoad: true`` gives). Against Babylon's own pictures of spheres (model-viewer's
  metric, tests/test_environment.py): box mips -25 dB (mirror) to -50 dB (white) in studio.hdr,
  rough metal -31 / -35 dB; GGX levels put rough metal at -19 / -21 dB (-15 in a coloured light),
  since Babylon's shader reads unfiltered box mips at that lod. Hence the default.
* Orientation: Babylon's faces hold direction g at u = 0.5 + atan2(g.x, g.z) / 2pi, v = acos(g.y)
  / pi from the top, and in a right-handed scene its shader flips z before the lookup
  (REFLECTIONMAP_OPPOSITEZ = useRightHandedSystem != invertZ). So a world direction d sees the
  picture at u = 0.5 + atan2(d.x, -d.z) / 2pi: -Z is the middle of the picture, +X three quarters
  across, +Z the seam, up the top row. Our cube holds world directions (no flip at lookup).
  ``rotation_degrees`` is Babylon's ``texture.rotationY`` (its reflection matrix,
  Matrix.RotationY): environment direction = R_y(angle) * world direction.
* Specular lookup (pbrBlockReflection, LODBASEDMICROSFURACE on WebGL2):
  alphaG = roughness^2 + 0.0005, lod = 0.8 * log2(256 * alphaG) + 0 (getLodFromAlphaG),
  ``textureLod`` of the cube at the reflected direction. Then, by default
  (MIX_IBL_RADIANCE_WITH_IRRADIANCE), radiance = mix(that, irradiance(normal), alphaG): rough
  surfaces get the diffuse irradiance as specular light. alphaG is not clamped: past 1 (specular
  anti-aliasing on rough, curved metal) the mix overshoots, and the final colour is clamped at 0
  before the image processing, so a sun reflected there is a dark spot, as in Babylon's pictures.
  ibl.glsl: ``ibl_specular`` is the lookup, ``ibl_radiance(r, alpha_g, irradiance)`` the mixed
  value Babylon uses. With glTF materials Babylon's loader
  turns on specular anti-aliasing: alphaG += 0.75 * sqrt(max(|dN/dx|^2, |dN/dy|^2)).
* Irradiance (generateHarmonics): CubeMapToSphericalPolynomialTools integrates the 256 cube
  (texel solid angles, values clamped at 4096) into 9 SH terms, convolves with the cosine lobe
  (pi, 2pi/3, pi/4) and divides by pi; the shader's computeEnvironmentIrradiance (SPHERICAL_HARMONICS
  on by default) returns irradiance / pi, which the material multiplies by its diffuse albedo.
  We integrate the equirectangular picture directly (each pixel's patch of sphere exactly, same
  clamp): within 1 % of Babylon's terms, and the same light from a 1x1 or 1x2 picture as from a
  large one of the same sky (Babylon's, from its cube's nearest-pixel picks, is not).
  ``irradiance_sh`` holds Babylon's pre-scaled terms in our world frame, basis
  (1, y, z, x, xy, yz, 3z^2 - 1, xz, x^2 - y^2); ``ibl_diffuse(n)`` is that sum.
* BRDF table: Babylon ships a 256 x 256 RGBD PNG (correlatedMSBRDF), looked up at
  (n.v, roughness), holding x = bias and y = scale + bias of the split sum with height-correlated
  Smith GGX (alpha = roughness^2); reflectance = f90 * x + f0 * (y - x). Ours is computed here
  (numpy, Hammersley sampling, same definitions; within its 8-bit steps of Babylon's) and stores
  (scale, bias): reflectance = f0 * scale + f90 * bias, directional albedo = scale + bias.
  Defaults Babylon's material composes with (PBRBRDFConfiguration): energy conservation on
  (MS_BRDF_ENERGY_CONSERVATION: specular *= 1 + f0 * (1 / (scale + bias) - 1)), height-correlated
  visibility on, **legacy specular energy conservation on**, so the diffuse is *not* scaled by
  (1 - specular): the metallic workflow's albedo is base * (1 - 0.04 * specularWeight) * (1 - metallic),
  f0 = mix(0.04, base, metallic), f90 = 1; final = irradiance * albedo * ao + radiance * reflectance
  * energy factor (+ emissive). The table is read at (n.v, perceptual roughness). Radiance and
  horizon occlusion are on by default: the specular reflectance is also multiplied by
  saturate((n.v + ao)^2 - 1 + ao) (1 without an occlusion texture) and, with a normal map, by
  saturate(1 + 1.1 * dot(reflected view, geometric normal))^2.
* Image processing (imageProcessingFunctions): colour * exposure, tone curve
  (TONEMAPPING_ACES is Stephen Hill's fitted ACES; KHR_PBR_NEUTRAL the Khronos curve), then
  ``pow(c, 1/2.2)`` (not the exact sRGB curve: the engine's useExactSrgbConversions is off), then a
  clamp. glsl/tonemap.glsl does the same; the #define TONE_MAPPING picks the curve
  (viewer.render.tonemap).

Cost, measured on llvmpipe (2 busy cores): a first load of studio.hdr or the generated studio
takes about 0.5 s ("ggx": 2-3 s), of which 0.1 s is the BRDF table, computed once per machine.
The result is cached in memory per context (a second load there: 0.1 ms) and on disk under
``$XDG_CACHE_HOME/boneviewer/environments/<key>.npz`` (``~/.cache`` without it; a file's key is
the sha256 of its bytes), so another
process only reads and uploads it: 45-95 ms. A cache file that does not read back is rebuilt,
never an error.
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from .shaders import load_program
from .tonemap import set_tone_mapping, tone_mapping_defines

CUBE_SIZE = 256                    # Babylon's HDRCubeTexture(file, scene, 256)
MIP_COUNT = CUBE_SIZE.bit_length()  # 9: 256 .. 1
FINE_PICK_WIDTH = 256              # cube_from_equirect: a narrower picture is picked from finer
LOD_SCALE = 0.8                    # Babylon's lodGenerationScale (offset 0)
SH_MAX_RADIANCE = 4096.0           # Babylon's CubeMapToSphericalPolynomialTools.MAX_HDRI_VALUE
PREFILTER_SAMPLES = 128
BRDF_LUT_SIZE = 64
BRDF_LUT_SAMPLES = 512
FILTERINGS = ("mipmaps", "ggx")
DEFAULT_FILTERING = "mipmaps"
CACHE_VERSION = 3                  # bump with any change to what a bake makes (2: pixel integrals, fine picks; 3: corner picks)
BRDF_CACHE_VERSION = 2             # bump with any change to brdf_table (apart from the baked cubes')
STUDIO_WIDTH = 512
STUDIO_VERSION = 1                 # bump with any change to studio_environment (its cache key)

_GL_TEXTURE_CUBE_MAP_SEAMLESS = 0x884F


# --- directions -------------------------------------------------------------------------------

def equirect_directions(height: int, width: int) -> np.ndarray:
    """(H, W, 3) unit world directions through the pixel centres of an equirectangular picture
    in Babylon's right-handed orientation (module docstring): -Z in the middle, up at the top."""
    theta = (np.arange(height) + 0.5) / height * np.pi
    phi = ((np.arange(width) + 0.5) / width - 0.5) * 2.0 * np.pi
    sin_t, cos_t = np.sin(theta)[:, None], np.cos(theta)[:, None]
    return np.stack(np.broadcast_arrays(sin_t * np.sin(phi), cos_t, -sin_t * np.cos(phi)), axis=-1)


def rotation_matrix(rotation_degrees: float) -> np.ndarray:
    """3x3: world direction -> environment direction, Babylon's rotationY (column vectors)."""
    a = np.radians(rotation_degrees)
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def cube_face_directions(face: int, size: int) -> np.ndarray:
    """(size, size, 3) unit directions through the texel centres of one cube face, as OpenGL
    samples a cube (faces +X -X +Y -Y +Z -Z, rows in upload order); glsl/cubemap.glsl's twin."""
    c = (np.arange(size) + 0.5) / size * 2.0 - 1.0
    t, s = np.meshgrid(c, c, indexing="ij")          # t: row, s: column
    one = np.ones_like(s)
    x, y, z = ((one, -t, -s), (-one, -t, s), (s, one, t), (s, -one, -t), (s, -t, one), (-s, -t, -one))[face]
    d = np.stack([x, y, z], axis=-1)
    return d / np.linalg.norm(d, axis=-1, keepdims=True)


# Babylon's PanoramaToCubeMapTools: the corners of each face it fills (in its picture's frame), and
# the GL faces they go up as, +X -X +Y -Y +Z -Z (HDRCubeTexture._FacesMapping).
_BABYLON_FACE_CORNERS = {
    "left": ((-1, -1, -1), (1, -1, -1), (-1, 1, -1), (1, 1, -1)),
    "right": ((1, -1, 1), (-1, -1, 1), (1, 1, 1), (-1, 1, 1)),
    "front": ((1, -1, -1), (1, -1, 1), (1, 1, -1), (1, 1, 1)),
    "back": ((-1, -1, 1), (-1, -1, -1), (-1, 1, 1), (-1, 1, -1)),
    "down": ((1, 1, -1), (1, 1, 1), (-1, 1, -1), (-1, 1, 1)),
    "up": ((-1, -1, -1), (-1, -1, 1), (1, -1, -1), (1, -1, 1)),
}
_BABYLON_GL_FACES = ("right", "left", "up", "down", "front", "back")
# Our face -> (Babylon's GL face holding the same texels, the axis they are mirrored on: 1 columns,
# 0 rows): a world direction d reads Babylon's cube at (d.x, d.y, -d.z) (REFLECTIONMAP_OPPOSITEZ).
_FROM_BABYLON_FACE = ((0, 1), (1, 1), (2, 0), (3, 0), (5, 1), (4, 1))


def texel_pick_directions(face: int, size: int) -> np.ndarray:
    """(size, size, 3) unit world directions at which Babylon picks the picture's pixel for each
    texel of one face (our layout, as cube_face_directions): CreateCubemapTexture steps across
    each of its faces from the face's corner, so its texel (row i, column j, in Babylon's own face
    layout, before the mirroring to ours) is picked at the face point (j/size, i/size): a texel's
    corner, not its centre, half a texel's diagonal off (0.32 degrees at a 256 cube's face centres,
    0.11 at its corners). Tested against the picks of Babylon's own cube, texel for texel
    (tests/test_environment.py)."""
    gl_face, axis = _FROM_BABYLON_FACE[face]
    corners = np.array(_BABYLON_FACE_CORNERS[_BABYLON_GL_FACES[gl_face]], np.float64)
    across = np.arange(size)[None, :, None] / size
    down = np.arange(size)[:, None, None] / size
    top, bottom = corners[0] + across * (corners[1] - corners[0]), corners[2] + across * (corners[3] - corners[2])
    g = np.flip(top + (bottom - top) * down, axis=axis)
    d = np.stack([g[..., 2], -g[..., 1], -g[..., 0]], axis=-1)  # its picture's frame -> our world
    return d / np.linalg.norm(d, axis=-1, keepdims=True)


def cube_from_equirect(equirect: np.ndarray, size: int = CUBE_SIZE) -> np.ndarray:
    """(6, size, size, 3) float32 faces from an equirectangular picture, each texel the picture's
    pixel Babylon's PanoramaToCubeMapTools picks for that direction (nearest, rounded as it
    rounds), in Babylon's right-handed orientation (module docstring). A picture wider than 8
    faces is first halved (2x2 averages) down to about 4 faces' width, so wide files are averaged
    where Babylon would alias. Babylon's rounding puts pixel centres on the seam and the top edge,
    half a pixel off the picture's own: a picture narrower than FINE_PICK_WIDTH (or lower than
    half that) is picked from as if each pixel were split into equal parts up to that size (the
    same picture, finer), so its light moves at most 0.7 degrees, not half a pixel (a 1x2
    picture's halves would become a quarter and three quarters of the sphere)."""
    picture = np.asarray(equirect, np.float32)
    while picture.shape[1] >= 8 * size and picture.shape[0] >= 2:
        h, w = picture.shape[0] // 2, picture.shape[1] // 2
        picture = _mean_of_halves(picture[:2 * h, :2 * w].reshape(h, 2, w, 2, 3), axis=(1, 3))
    height, width = picture.shape[:2]
    across, down = -(-FINE_PICK_WIDTH // width), -(-FINE_PICK_WIDTH // 2 // height)  # parts per pixel
    faces = np.empty((6, size, size, 3), np.float32)
    for face in range(6):
        d = texel_pick_directions(face, size)
        u = np.arctan2(d[..., 0], -d[..., 2]) / (2.0 * np.pi) + 0.5
        column = np.clip(np.floor(u * width * across + 0.5).astype(np.int64), 0, width * across - 1) // across
        from_bottom = np.arccos(np.clip(-d[..., 1], -1.0, 1.0)) / np.pi
        rows_from_bottom = np.clip(np.floor(from_bottom * height * down + 0.5).astype(np.int64), 0, height * down - 1)
        row = height - 1 - rows_from_bottom // down
        faces[face] = picture[row, column]
    return faces


def _mean_of_halves(blocks: np.ndarray, axis: tuple) -> np.ndarray:
    """float32 means of 2x2 blocks (two axes of length 2) that cannot overflow: the quarters are
    summed, so a sun near float32's top (an .hdr exponent of 255 is 1.7e38) averages to what it
    is, not to inf, and is not clamped; a quarter is exact in binary, so any other light gets the
    plain mean's numbers."""
    return (blocks * np.float32(0.25)).sum(axis=axis)


def box_mips(faces: np.ndarray) -> list:
    """[(6, s, s, 3)] float32: the faces and their 2x2 averages down to 1x1, as glGenerateMipmap
    (Babylon's mips) makes them."""
    levels = [np.asarray(faces, np.float32)]
    while levels[-1].shape[1] > 1:
        s = levels[-1].shape[1] // 2
        levels.append(_mean_of_halves(levels[-1].reshape(6, s, 2, s, 2, 3), axis=(2, 4)))
    return levels


# --- the studio -------------------------------------------------------------------------------

def _smoothstep(edge0, edge1, x):
    t = np.clip((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def _soft_box(directions, center, right, width_deg, height_deg, softness_deg):
    """0..1: inside a rectangle seen at ``center`` (angular width along ``right``, height across),
    with edges blurred over ``softness_deg``."""
    center = np.asarray(center, float) / np.linalg.norm(center)
    right = np.asarray(right, float)
    right = right - center * (right @ center)
    right /= np.linalg.norm(right)
    up = np.cross(right, center)
    forward = directions @ center
    across = np.degrees(np.abs(np.arctan2(directions @ right, forward)))
    along = np.degrees(np.abs(np.arctan2(directions @ up, forward)))
    inside = (_smoothstep(width_deg / 2 + softness_deg, width_deg / 2 - softness_deg, across)
              * _smoothstep(height_deg / 2 + softness_deg, height_deg / 2 - softness_deg, along))
    return np.where(forward > 0.0, inside, 0.0)


# Soft boxes: (centre direction, its horizontal axis, width and height in degrees, softness,
# radiance, colour). The key light is high on the camera's left (the default camera looks down
# -Z from +Z), a cool fill on the right, a long strip overhead, a rim light behind.
_STUDIO_LIGHTS = (
    ((-0.62, 0.55, 0.56), (0.67, 0.0, 0.74), 44.0, 30.0, 5.0, 9.0, (1.0, 0.95, 0.88)),
    ((0.94, 0.18, 0.28), (-0.29, 0.0, 0.96), 26.0, 44.0, 5.0, 2.2, (0.86, 0.94, 1.08)),
    ((0.0, 1.0, 0.0), (1.0, 0.0, 0.0), 64.0, 10.0, 3.0, 2.0, (1.0, 1.0, 1.0)),
    ((0.3, 0.42, -0.86), (0.94, 0.0, 0.33), 62.0, 14.0, 4.0, 4.0, (1.0, 0.99, 0.96)),
)


def studio_environment(width: int = STUDIO_WIDTH) -> np.ndarray:
    """A neutral studio as an (width/2, width, 3) float32 equirectangular picture of linear
    radiance, generated here (nothing is downloaded): a soft sky brighter towards the zenith, a
    darker warm floor, a horizon band, and four soft boxes of different sizes and tints placed
    asymmetrically, so metal shows shapes and a rough surface a clear key and fill."""
    if width < 8 or width % 2:
        raise ViewerError(f"studio environment width {width}: an even number of at least 8")
    d = equirect_directions(width // 2, width)
    y = d[..., 1]
    sky = 0.24 + 0.26 * np.clip(y, 0.0, 1.0) ** 0.7
    floor = 0.11 - 0.05 * np.clip(-y, 0.0, 1.0) ** 0.5
    wall = 0.05 * np.exp(-(y / 0.12) ** 2)                      # a darker band at the horizon
    blend = _smoothstep(-0.05, 0.05, y)[..., None]
    image = (blend * (sky - wall)[..., None] * np.array([0.95, 0.98, 1.04])
             + (1.0 - blend) * (floor - wall)[..., None] * np.array([1.04, 1.0, 0.94]))
    for center, right, w, h, soft, radiance, color in _STUDIO_LIGHTS:
        image = image + (radiance * _soft_box(d, center, right, w, h, soft))[..., None] * np.array(color)
    return image.astype(np.float32)


# --- irradiance and the BRDF table (numpy) -----------------------------------------------------

_SH_CONSTANTS = np.array([
    np.sqrt(1 / (4 * np.pi)), -np.sqrt(3 / (4 * np.pi)), np.sqrt(3 / (4 * np.pi)), -np.sqrt(3 / (4 * np.pi)),
    np.sqrt(15 / (4 * np.pi)), -np.sqrt(15 / (4 * np.pi)), np.sqrt(5 / (16 * np.pi)), -np.sqrt(15 / (4 * np.pi)),
    np.sqrt(15 / (16 * np.pi))])
_COSINE_LOBE = np.array([np.pi] + [2 * np.pi / 3] * 3 + [np.pi / 4] * 5)


def sh_basis(directions: np.ndarray) -> np.ndarray:
    """(..., 9) the polynomial part of the basis: 1, y, z, x, xy, yz, 3z^2 - 1, xz, x^2 - y^2."""
    x, y, z = directions[..., 0], directions[..., 1], directions[..., 2]
    return np.stack([np.ones_like(x), y, z, x, x * y, y * z, 3 * z * z - 1, x * z, x * x - y * y], axis=-1)


def _row_integrals(height: int) -> np.ndarray:
    """(H, 6) over each row's band of polar angle t (0 at the top) of an equirectangular picture:
    the integrals of sin t (the area element) times 1, cos t, sin t, sin t cos t, sin^2 t and
    cos^2 t, the factors in t of the basis; exact, so a row of any height weighs what it covers."""
    edges = np.arange(height + 1) / height * np.pi
    t0, t1 = edges[:-1], edges[1:]
    c0, c1, s0, s1 = np.cos(t0), np.cos(t1), np.sin(t0), np.sin(t1)
    return np.stack([c0 - c1,
                     (c0 * c0 - c1 * c1) / 2,
                     (t1 - t0) / 2 - (np.sin(2 * t1) - np.sin(2 * t0)) / 4,
                     (s1 ** 3 - s0 ** 3) / 3,
                     (c0 - c1) - (c0 ** 3 - c1 ** 3) / 3,
                     (c0 ** 3 - c1 ** 3) / 3], axis=-1)


def _column_integrals(width: int) -> np.ndarray:
    """(W, 6) over each column's band of azimuth p (equirect_directions' phi): the integrals of
    1, sin p, cos p, cos^2 p, sin^2 p and sin p cos p, the factors in p of the basis."""
    edges = (np.arange(width + 1) / width - 0.5) * 2.0 * np.pi
    p0, p1 = edges[:-1], edges[1:]
    half = (np.sin(2 * p1) - np.sin(2 * p0)) / 4
    return np.stack([p1 - p0, np.cos(p0) - np.cos(p1), np.sin(p1) - np.sin(p0),
                     (p1 - p0) / 2 + half, (p1 - p0) / 2 - half, (np.sin(p1) ** 2 - np.sin(p0) ** 2) / 2], axis=-1)


def _basis_factors() -> np.ndarray:
    """(9, 6, 6): basis term k = sum of [k, a, b] * (row factor a) * (column factor b), with
    x = sin t sin p, y = cos t, z = -sin t cos p (equirect_directions)."""
    factors = np.zeros((9, 6, 6))
    for k, products in enumerate((
            [(1, 0, 0)],                        # 1
            [(1, 1, 0)],                        # y
            [(-1, 2, 2)],                       # z
            [(1, 2, 1)],                        # x
            [(1, 3, 1)],                        # xy
            [(-1, 3, 2)],                       # yz
            [(3, 4, 3), (-1, 0, 0)],            # 3z^2 - 1
            [(-1, 4, 5)],                       # xz
            [(1, 4, 4), (-1, 5, 0)])):          # x^2 - y^2
        for coefficient, a, b in products:
            factors[k, a, b] = coefficient
    return factors


_BASIS_FACTORS = _basis_factors()


def irradiance_sh(equirect: np.ndarray) -> np.ndarray:
    """(9, 3) float32 terms c such that sum(c_i * basis_i(d)) is the irradiance / pi around d
    (Babylon's pre-scaled harmonics, in world directions), from an equirectangular picture. Each
    pixel is uniform radiance over its patch of sphere (dphi wide, cos t0 - cos t1 high) and the
    basis is integrated exactly over the patch, so any size of picture gives the same light: a
    1x1 picture lights every side alike, a 1x2 one each half from its own side. In float64, each
    pixel clamped at SH_MAX_RADIANCE as Babylon clamps (a sun near float32's top sums finitely)."""
    picture = np.asarray(equirect)
    height, width = picture.shape[:2]
    columns = _column_integrals(width)
    by_row = np.empty((height, 3, 6))
    step = max(1, (1 << 21) // width)           # rows at a time: float64 copies of 2 Mpixel at most
    for start in range(0, height, step):
        block = np.minimum(picture[start:start + step].astype(np.float64), SH_MAX_RADIANCE)
        by_row[start:start + step] = block.transpose(0, 2, 1) @ columns
    moments = np.einsum("ha,hcb->abc", _row_integrals(height), by_row)
    radiance_terms = np.einsum("kab,abc->kc", _BASIS_FACTORS, moments)
    return (radiance_terms * (_COSINE_LOBE / np.pi * _SH_CONSTANTS ** 2)[:, None]).astype(np.float32)


def _hammersley(count: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(count, dtype=np.uint32)
    bits = (i << 16) | (i >> 16)
    for shift, mask in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF)):
        bits = ((bits & mask) << shift) | ((bits >> shift) & mask)
    return (i + 0.5) / count, bits.astype(np.float64) / 2.0 ** 32


def brdf_table(size: int = BRDF_LUT_SIZE, samples: int = BRDF_LUT_SAMPLES) -> np.ndarray:
    """(size, size, 2) float32 split-sum table: row = roughness, column = n.v (texel centres),
    (scale, bias) of the GGX specular with height-correlated Smith visibility, alpha = roughness^2."""
    mu = (np.arange(size) + 0.5) / size
    v_x, v_z = np.sqrt(1.0 - mu * mu)[:, None], mu[:, None]
    u1, u2 = _hammersley(samples)
    table = np.empty((size, size, 2), np.float32)
    for row, roughness in enumerate((np.arange(size) + 0.5) / size):
        a2 = roughness ** 4
        cos_h = np.sqrt((1.0 - u1) / (1.0 + (a2 - 1.0) * u1))
        h_x = np.sqrt(1.0 - cos_h * cos_h) * np.cos(2.0 * np.pi * u2)   # the y part does not matter
        v_dot_h = np.clip(v_x * h_x + v_z * cos_h, 0.0, 1.0)
        n_dot_l = 2.0 * v_dot_h * cos_h - v_z
        lit = n_dot_l > 0.0
        n_dot_l = np.where(lit, n_dot_l, 0.0)
        visibility = 0.5 / (n_dot_l * np.sqrt(v_z * v_z * (1.0 - a2) + a2)
                            + v_z * np.sqrt(n_dot_l * n_dot_l * (1.0 - a2) + a2))
        g = np.where(lit, visibility * 4.0 * n_dot_l * v_dot_h / cos_h, 0.0)
        fresnel = (1.0 - v_dot_h) ** 5
        table[row, :, 0] = ((1.0 - fresnel) * g).mean(axis=1)
        table[row, :, 1] = (fresnel * g).mean(axis=1)
    return table


# --- caches ------------------------------------------------------------------------------------

def cache_directory() -> Path:
    """$XDG_CACHE_HOME/boneviewer/environments (~/.cache when XDG_CACHE_HOME is unset or relative)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "boneviewer" / "environments"


def _read_cache(path: Path, expected: dict) -> dict | None:
    """The arrays of a cache file when it has exactly the expected names, shapes and dtypes."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except Exception:  # missing, truncated, not a zip, a bad header: rebuilt, never an error
        return None
    if set(arrays) != set(expected):
        return None
    for name, (shape, dtype) in expected.items():
        if arrays[name].shape != shape or arrays[name].dtype != dtype:
            return None
    # The zip's checksums catch damaged bytes; the float16 levels were clamped when written, and
    # numbers that were never finite (the harmonics, the BRDF table) are refused.
    return arrays if all(np.isfinite(a).all() for a in arrays.values() if a.dtype == np.float32) else None


def _write_cache(path: Path, arrays: dict) -> None:
    """Best effort: a cache that cannot be written costs the next process time, nothing else."""
    temporary = path.with_name(f".{path.stem}.{os.getpid()}.tmp.npz")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(temporary, **arrays)
        os.replace(temporary, path)
    except OSError:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass


_BRDF_TABLE: np.ndarray | None = None


# brdf_table() as shipped (float16, as the GPU holds it), so a first picture does not pay for it,
# as Babylon.js ships its table: np.save(BRDF_TABLE_FILE, brdf_table().astype(np.float16)) makes it
# again (tests/test_environment.py checks it against brdf_table()).
BRDF_TABLE_FILE = Path(__file__).with_name("brdf_table.npy")


def cached_brdf_table() -> np.ndarray:
    """brdf_table(): the shipped file, else computed once per process and kept on disk beside the
    environments."""
    global _BRDF_TABLE
    if _BRDF_TABLE is None:
        try:
            shipped = np.load(BRDF_TABLE_FILE, allow_pickle=False)
        except (OSError, ValueError):
            shipped = None
        if (shipped is not None and shipped.shape == (BRDF_LUT_SIZE, BRDF_LUT_SIZE, 2)
                and np.isfinite(shipped).all()):
            _BRDF_TABLE = shipped.astype(np.float32)
            return _BRDF_TABLE
        shape = (BRDF_LUT_SIZE, BRDF_LUT_SIZE, 2)
        path = cache_directory() / f"brdf-{BRDF_LUT_SIZE}-{BRDF_LUT_SAMPLES}-v{BRDF_CACHE_VERSION}.npz"
        arrays = _read_cache(path, {"table": (shape, np.dtype(np.float32))})
        if arrays is None:
            arrays = {"table": brdf_table()}
            _write_cache(path, arrays)
        _BRDF_TABLE = arrays["table"]
    return _BRDF_TABLE


# --- the GPU resource ---------------------------------------------------------------------------

class _Baked:
    """What an environment is once computed: its cube's levels as numpy and its harmonics."""

    def __init__(self, levels: list, sh: np.ndarray):
        self.levels = levels      # [(6, s, s, 3) float16 for each stored level]
        self.sh = sh              # (9, 3) float32


_BAKED: dict = {}            # key -> _Baked, the last few this process computed or read
_BAKED_KEEP = 4
_LOADED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # ctx -> {key: Environment}


_FILE_KEYS: dict = {}   # (path, size, mtime, filtering) -> cache key: a loaded file is not hashed again


def _source_key(source, filtering: str) -> tuple[str, object]:
    """(cache key, what to build it from: "studio", or the path whose bytes are read when needed).
    A file's key is the sha256 of its bytes and the settings; the generated studio's is its
    settings in words (no hash needed, and hashlib's OpenSSL costs a first render 10 ms)."""
    settings = f"|cube={CUBE_SIZE}|filtering={filtering}|samples={PREFILTER_SAMPLES}|v={CACHE_VERSION}"
    if isinstance(source, str) and source == "studio":
        return (f"studio-v{STUDIO_VERSION}-{STUDIO_WIDTH}-cube{CUBE_SIZE}-{filtering}-{PREFILTER_SAMPLES}"
                f"-v{CACHE_VERSION}"), "studio"
    path = Path(source)
    try:
        stat = path.stat()
        identity = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, filtering)
        if identity not in _FILE_KEYS:
            import hashlib

            _FILE_KEYS[identity] = hashlib.sha256(path.read_bytes() + settings.encode()).hexdigest()
    except OSError:
        from ..hdr import read_hdr
        read_hdr(path)  # raises the one-line error that names the file
        raise
    return _FILE_KEYS[identity], path


def _equirect(material) -> np.ndarray:
    if isinstance(material, str):
        return studio_environment()
    from ..hdr import read_hdr

    return read_hdr(material)


class Environment:
    """One environment's GPU resources in one GL context (see the module docstring).

    ``specular``: TextureCube RGBA16F with ``mip_count`` levels (world directions; roughness r is
    read at lod 0.8 * log2(256 * (r^2 + 0.0005)), Babylon's mapping); ``irradiance_sh``: (9, 3)
    float32; ``brdf_lut``: 2D RG16F (x = n.v, y = roughness) -> (scale, bias).
    """

    def __init__(self, ctx, key: str, baked: _Baked, filtering: str):
        import moderngl

        self.ctx, self.key, self.filtering = ctx, key, filtering
        self.irradiance_sh = baked.sh
        self.mip_count = MIP_COUNT
        ctx.enable_direct(_GL_TEXTURE_CUBE_MAP_SEAMLESS)
        self.specular = _cube_texture(ctx, baked.levels)
        table = cached_brdf_table()
        self.brdf_lut = ctx.texture((table.shape[1], table.shape[0]), 2, table.astype(np.float16).tobytes(), dtype="f2")
        self.brdf_lut.filter = (moderngl.LINEAR, moderngl.LINEAR)
        self.brdf_lut.repeat_x = self.brdf_lut.repeat_y = False
        self._background: dict = {}  # TONE_MAPPING code: (program, vertex array), made when first drawn

    # .. loading

    @classmethod
    def load(cls, ctx, source, filtering: str = DEFAULT_FILTERING) -> "Environment":
        """The environment of ``source`` ("studio" or an .hdr path) in ``ctx``: the one already
        loaded there, else built from the in-process or on-disk cache, else computed (and cached).
        A file that is not a readable .hdr raises one ViewerError naming it."""
        if filtering not in FILTERINGS:
            raise ViewerError(f"environment filtering {filtering!r}: expected one of {', '.join(FILTERINGS)}")
        key, material = _source_key(source, filtering)
        loaded = _LOADED.setdefault(ctx, {})
        if key in loaded:
            return loaded[key]
        baked = _BAKED.get(key)
        if baked is None:
            path = cache_directory() / f"{key}.npz"
            arrays = _read_cache(path, _cache_layout(filtering))
            if arrays is None:
                baked = _bake(ctx, _equirect(material), filtering)
                _write_cache(path, {**{f"level{i}": level for i, level in enumerate(baked.levels)}, "sh": baked.sh})
            else:
                baked = _Baked([arrays[f"level{i}"] for i in range(MIP_COUNT)], arrays["sh"])
            if len(_BAKED) >= _BAKED_KEEP:
                _BAKED.pop(next(iter(_BAKED)))
            _BAKED[key] = baked
        environment = loaded[key] = cls(ctx, key, baked, filtering)
        return environment

    # .. drawing

    def use(self, program, first_unit: int = 8, rotation_degrees: float = 0.0) -> None:
        """Bind the cube to ``first_unit`` and the BRDF table to ``first_unit + 1`` and set the
        uniforms ibl.glsl reads (those the program does not use are skipped)."""
        self.specular.use(location=first_unit)
        self.brdf_lut.use(location=first_unit + 1)
        rotation = rotation_matrix(rotation_degrees)
        values = {"u_env_specular": first_unit, "u_env_brdf": first_unit + 1, "u_env_mips": float(self.mip_count)}
        for name, value in values.items():
            if name in program:
                program[name].value = value
        if "u_env_sh" in program:
            program["u_env_sh"].write(self.irradiance_sh.astype(np.float32).tobytes())
        if "u_env_rotation" in program:
            program["u_env_rotation"].write(rotation.T.astype(np.float32).tobytes())  # GLSL reads columns

    def draw_background(self, view, projection, rotation_degrees: float = 0.0, exposure: float = 1.0,
                        tone_mapping: str = "khr-neutral", first_unit: int = 8) -> None:
        """Fill the viewport with the environment seen through the camera (view and projection
        in pyrr's layout), tone mapped like the model. Tests no depth and writes none (the depth
        mask is left on, depth test off): draw it first, right after clearing."""
        import moderngl

        defines = tone_mapping_defines(tone_mapping)
        if defines["TONE_MAPPING"] not in self._background:  # one program per tone curve
            program = load_program(self.ctx, "background.vert", "environment_background.frag", defines)
            self._background[defines["TONE_MAPPING"]] = (program, self.ctx.vertex_array(program, []))
        program, vao = self._background[defines["TONE_MAPPING"]]
        rotation_only = np.array(view, np.float64)
        rotation_only[3, :3] = 0.0
        clip_to_direction = np.linalg.inv(rotation_only @ np.asarray(projection, np.float64))
        program["u_clip_to_direction"].write(clip_to_direction.astype(np.float32).tobytes())
        self.use(program, first_unit, rotation_degrees)
        set_tone_mapping(program, exposure)
        self.ctx.disable(moderngl.DEPTH_TEST)  # and so no depth written: GL writes it only where it tests it
        vao.render(moderngl.TRIANGLES, vertices=3)

    def release(self) -> None:
        """Free the GPU resources (the in-process cache keeps the numbers)."""
        _LOADED.get(self.ctx, {}).pop(self.key, None)
        for resource in (self.specular, self.brdf_lut, *(r for pair in self._background.values() for r in pair)):
            resource.release()
        self._background.clear()


def _rgba(faces: np.ndarray) -> np.ndarray:
    """RGB float16 -> RGBA float16 (alpha 1)."""
    out = np.ones(faces.shape[:-1] + (4,), np.float16)
    out[..., :3] = faces
    return out


def _cache_layout(filtering: str) -> dict:
    layout = {f"level{i}": ((6, CUBE_SIZE >> i, CUBE_SIZE >> i, 3), np.dtype(np.float16)) for i in range(MIP_COUNT)}
    layout["sh"] = ((9, 3), np.dtype(np.float32))
    return layout


def _bake(ctx, equirect: np.ndarray, filtering: str) -> _Baked:
    """Every level of the cube (box mips, or GGX-prefiltered on the GPU) and the harmonics."""
    levels = box_mips(cube_from_equirect(equirect))
    if filtering == "ggx":
        levels[1:] = _prefilter(ctx, levels)
    half = [np.minimum(level, 65504.0).astype(np.float16) for level in levels]
    return _Baked(half, irradiance_sh(equirect))


def _cube_texture(ctx, levels: list):
    """An RGBA16F TextureCube holding ``levels`` (moderngl writes level 0; the others go up
    with glTexImage2D, which costs nothing next to generating them on llvmpipe)."""
    import moderngl

    cube = ctx.texture_cube(levels[0].shape[1:3], 4, dtype="f2")
    for face in range(6):
        cube.write(face, _rgba(levels[0][face]).tobytes())
    for level, faces in enumerate(levels[1:], start=1):
        _write_cube_level(cube, level, faces)
    cube.filter = (moderngl.LINEAR_MIPMAP_LINEAR, moderngl.LINEAR)
    return cube


def _read_face(framebuffer, size: int) -> np.ndarray:
    data = np.frombuffer(framebuffer.read(viewport=(0, 0, size, size), components=4, dtype="f4"), np.float32)
    return data.reshape(size, size, 4)[..., :3].copy()


def _prefilter(ctx, box_levels: list) -> list:
    """Levels 1.. of the GGX-prefiltered cube (Babylon's alpha for each level), sampled from the
    box-filtered levels."""
    import moderngl

    cube = _cube_texture(ctx, [np.minimum(level, 65504.0).astype(np.float16) for level in box_levels])
    program = load_program(ctx, "background.vert", "environment_prefilter.frag")
    vao = ctx.vertex_array(program, [])
    target = ctx.texture((CUBE_SIZE // 2, CUBE_SIZE // 2), 4, dtype="f4")
    framebuffer = ctx.framebuffer(color_attachments=[target])
    levels = []
    try:
        framebuffer.use()
        cube.use(location=0)
        program["u_source"].value = 0
        program["u_source_size"].value = float(CUBE_SIZE)
        program["u_source_mips"].value = float(MIP_COUNT)
        program["u_samples"].value = PREFILTER_SAMPLES
        for level in range(1, MIP_COUNT):
            size = CUBE_SIZE >> level
            program["u_size"].value = float(size)
            program["u_alpha"].value = 2.0 ** (level / LOD_SCALE) / CUBE_SIZE
            ctx.viewport = (0, 0, size, size)
            faces = np.empty((6, size, size, 3), np.float32)
            for face in range(6):
                program["u_face"].value = face
                vao.render(moderngl.TRIANGLES, vertices=3)
                faces[face] = _read_face(framebuffer, size)
            levels.append(faces)
    finally:
        for resource in (framebuffer, target, vao, program, cube):
            resource.release()
    return levels


def _write_cube_level(cube, level: int, faces: np.ndarray) -> None:
    """glTexImage2D of one mip level of a cube, RGBA16F (moderngl writes level 0 only)."""
    import ctypes

    gl = _gl()
    cube.use(location=0)
    gl.glPixelStorei(0x0CF5, 1)   # GL_UNPACK_ALIGNMENT
    size = faces.shape[1]
    for face in range(6):
        data = np.ascontiguousarray(_rgba(faces[face]))
        gl.glTexImage2D(0x8515 + face, level, 0x881A, size, size, 0, 0x1908, 0x140B,  # RGBA16F; RGBA, HALF_FLOAT
                        data.ctypes.data_as(ctypes.c_void_p))


_GL_LIBRARY = None


def _gl():
    """libGL's entry points (GLVND dispatches them to the current context, EGL or GLX)."""
    global _GL_LIBRARY
    if _GL_LIBRARY is None:
        import ctypes

        for name in ("libGL.so.1", "libOpenGL.so.0"):
            try:
                library = ctypes.CDLL(name)
                break
            except OSError:
                continue
        else:
            raise ViewerError("environment light needs libGL.so.1 for its cube's mip levels (apt-get install libgl1)")
        library.glTexImage2D.argtypes = [ctypes.c_uint, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                         ctypes.c_int, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p]
        library.glPixelStorei.argtypes = [ctypes.c_uint, ctypes.c_int]
        _GL_LIBRARY = library
    return _GL_LIBRARY
