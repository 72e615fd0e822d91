"""The fidelity tests' feature scenes: one small .glb per feature of the glTF material, each with a
camera file, written the same to the byte on every machine (numbers rounded before they are
stored, PNG images written with stored deflate blocks, so no zlib version decides their bytes).

    python tests/pbr_scenes.py OUT_DIR        # writes OUT_DIR/<scene>.glb and OUT_DIR/<scene>.camera.json

Scenes (SCENES): normal_map, metal_rough_grid, mr_textures, emissive, alpha_modes,
texture_transform, unlit, punctual_lights, vertex_colors, double_sided, textured_detail.
"""

from __future__ import annotations

import json
import struct
import sys
import zlib
from pathlib import Path

import numpy as np

DIGITS = 5  # decimals kept of every generated float before it is stored as float32

LINEAR, NEAREST, LINEAR_MIPMAP_LINEAR = 9729, 9728, 9987
REPEAT, CLAMP, MIRROR = 10497, 33071, 33648


# --- deterministic bytes --------------------------------------------------------------------------

def png_bytes(pixels: np.ndarray) -> bytes:
    """An 8-bit RGB or RGBA PNG (filter 0, stored deflate blocks): the same bytes everywhere."""
    pixels = np.ascontiguousarray(pixels, np.uint8)
    height, width, channels = pixels.shape
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(height))
    blocks, step = bytearray(b"\x78\x01"), 65535
    for start in range(0, max(len(raw), 1), step):
        chunk = raw[start:start + step]
        last = 1 if start + step >= len(raw) else 0
        blocks += struct.pack("<BHH", last, len(chunk), len(chunk) ^ 0xFFFF) + chunk
    blocks += struct.pack(">I", zlib.adler32(raw) & 0xFFFFFFFF)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    colour_type = {3: 2, 4: 6}[channels]
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0))
            + chunk(b"IDAT", bytes(blocks)) + chunk(b"IEND", b""))


def rounded(values, digits: int = DIGITS) -> np.ndarray:
    return np.round(np.asarray(values, np.float64), digits)


class Gltf:
    """A glTF 2.0 document with one binary buffer, written as a .glb."""

    def __init__(self):
        self.doc = {"asset": {"version": "2.0", "generator": "boneviewer tests/pbr_scenes.py"},
                    "scene": 0, "scenes": [{"nodes": []}], "nodes": [], "meshes": [], "materials": [],
                    "accessors": [], "bufferViews": [], "buffers": [{"byteLength": 0}]}
        self.bin = bytearray()
        self.used: set[str] = set()

    def _view(self, data: bytes, target: int | None = None) -> int:
        while len(self.bin) % 4:
            self.bin += b"\x00"
        view = {"buffer": 0, "byteOffset": len(self.bin), "byteLength": len(data)}
        if target is not None:
            view["target"] = target
        self.bin += data
        self.doc["bufferViews"].append(view)
        return len(self.doc["bufferViews"]) - 1

    def accessor(self, values, kind: str, component: int = 5126, normalized: bool = False,
                 bounds: bool = False, target: int | None = 34962) -> int:
        dtype = {5126: "<f4", 5125: "<u4", 5123: "<u2", 5121: "u1"}[component]
        array = np.asarray(values)
        if component == 5126:
            array = rounded(array)
        array = array.astype(dtype)
        accessor = {"bufferView": self._view(array.tobytes(), target), "componentType": component,
                    "count": int(len(array)), "type": kind}
        if normalized:
            accessor["normalized"] = True
        if bounds:
            accessor["min"] = [float(v) for v in array.min(axis=0)]
            accessor["max"] = [float(v) for v in array.max(axis=0)]
        self.doc["accessors"].append(accessor)
        return len(self.doc["accessors"]) - 1

    def primitive(self, geometry: dict, material: int, colors=None, colors_u8: bool = False) -> dict:
        """A primitive of ``geometry`` (its accessors written once however many primitives share it)."""
        cache = self.__dict__.setdefault("_geometries", {})
        if colors is None and id(geometry) in cache:
            return dict(cache[id(geometry)][1], material=material)
        attributes = {"POSITION": self.accessor(geometry["position"], "VEC3", bounds=True),
                      "NORMAL": self.accessor(geometry["normal"], "VEC3")}
        if "uv" in geometry:
            attributes["TEXCOORD_0"] = self.accessor(geometry["uv"], "VEC2")
        if "uv1" in geometry:
            attributes["TEXCOORD_1"] = self.accessor(geometry["uv1"], "VEC2")
        if colors is not None:
            if colors_u8:
                attributes["COLOR_0"] = self.accessor(np.round(np.asarray(colors) * 255), "VEC4", 5121, normalized=True)
            else:
                attributes["COLOR_0"] = self.accessor(colors, "VEC3")
        indices = self.accessor(np.asarray(geometry["index"]).reshape(-1), "SCALAR", 5125, target=34963)
        primitive = {"attributes": attributes, "indices": indices, "material": material}
        if colors is None:
            cache[id(geometry)] = (geometry, primitive)  # the geometry kept alive: its id stays its own
        return primitive

    def mesh(self, primitives: list[dict], name: str = "") -> int:
        self.doc["meshes"].append({"name": name, "primitives": primitives})
        return len(self.doc["meshes"]) - 1

    def node(self, name: str, mesh: int | None = None, translation=None, rotation=None, scale=None,
             extensions: dict | None = None) -> int:
        node = {"name": name}
        if mesh is not None:
            node["mesh"] = mesh
        for key, value in (("translation", translation), ("rotation", rotation), ("scale", scale)):
            if value is not None:
                node[key] = [float(v) for v in rounded(value, 6)]
        if extensions:
            node["extensions"] = extensions
        self.doc["nodes"].append(node)
        index = len(self.doc["nodes"]) - 1
        self.doc["scenes"][0]["nodes"].append(index)
        return index

    def material(self, name: str, base=(1, 1, 1, 1), metallic: float = 0.0, roughness: float = 0.5, **extra) -> int:
        pbr = {"baseColorFactor": [float(v) for v in base], "metallicFactor": float(metallic),
               "roughnessFactor": float(roughness)}
        for key in ("baseColorTexture", "metallicRoughnessTexture"):
            if key in extra:
                pbr[key] = extra.pop(key)
        material = {"name": name, "pbrMetallicRoughness": pbr, **extra}
        for extension in material.get("extensions", {}):
            self.used.add(extension)
        for slot in (pbr.get("baseColorTexture"), pbr.get("metallicRoughnessTexture"), material.get("normalTexture"),
                     material.get("occlusionTexture"), material.get("emissiveTexture")):
            for extension in (slot or {}).get("extensions", {}):
                self.used.add(extension)
        self.doc["materials"].append(material)
        return len(self.doc["materials"]) - 1

    def texture(self, pixels: np.ndarray, mag: int = LINEAR, min_: int = LINEAR_MIPMAP_LINEAR,
                wrap_s: int = REPEAT, wrap_t: int = REPEAT) -> int:
        images = self.doc.setdefault("images", [])
        images.append({"bufferView": self._view(png_bytes(pixels)), "mimeType": "image/png"})
        samplers = self.doc.setdefault("samplers", [])
        sampler = {"magFilter": mag, "minFilter": min_, "wrapS": wrap_s, "wrapT": wrap_t}
        if sampler not in samplers:
            samplers.append(sampler)
        textures = self.doc.setdefault("textures", [])
        textures.append({"sampler": samplers.index(sampler), "source": len(images) - 1})
        return len(textures) - 1

    def glb(self) -> bytes:
        while len(self.bin) % 4:
            self.bin += b"\x00"
        self.doc["buffers"][0]["byteLength"] = len(self.bin)
        if self.used:
            self.doc["extensionsUsed"] = sorted(self.used)
        text = json.dumps(self.doc, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 4)
        body = (struct.pack("<I4s", len(text), b"JSON") + text + struct.pack("<I4s", len(self.bin), b"BIN\x00")
                + bytes(self.bin))
        return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body


# --- geometry ---------------------------------------------------------------------------------

def quad(width: float, height: float, divisions: int = 1) -> dict:
    """A rectangle in the XY plane facing +Z, centred; UV (0, 0) at its top-left corner."""
    steps = np.linspace(0.0, 1.0, divisions + 1)
    u, v = np.meshgrid(steps, steps)
    u, v = u.reshape(-1), v.reshape(-1)
    position = np.c_[(u - 0.5) * width, (0.5 - v) * height, np.zeros_like(u)]
    row = divisions + 1
    index = []
    for j in range(divisions):
        for i in range(divisions):
            a, b, c, d = j * row + i, j * row + i + 1, (j + 1) * row + i, (j + 1) * row + i + 1
            index += [a, c, b, b, c, d]  # counter-clockwise seen from +Z
    return {"position": position, "normal": np.tile([0.0, 0.0, 1.0], (len(u), 1)), "uv": np.c_[u, v],
            "index": np.array(index)}


def sphere(radius: float, segments: int = 32, rings: int = 16) -> dict:
    """A UV sphere; u goes round from -Z through +X, v from the top (v 0) to the bottom; triangles
    counter-clockwise seen from outside (glTF's front faces), the poles' degenerate ones left out."""
    u, v = np.meshgrid(np.linspace(0, 1, segments + 1), np.linspace(0, 1, rings + 1))
    u, v = u.reshape(-1), v.reshape(-1)
    theta, phi = u * 2 * np.pi, v * np.pi
    normal = np.c_[np.sin(phi) * np.sin(theta), np.cos(phi), -np.sin(phi) * np.cos(theta)]
    row = segments + 1
    index = []
    for j in range(rings):
        for i in range(segments):
            a, b, c, d = j * row + i, j * row + i + 1, (j + 1) * row + i, (j + 1) * row + i + 1
            # counter-clockwise seen from outside (glTF's front faces): a -> b runs along +u,
            # a -> c along +v (down), and down-then-right is counter-clockwise from outside
            if j != 0:
                index += [a, b, c]
            if j != rings - 1:
                index += [b, d, c]
    return {"position": normal * radius, "normal": normal, "uv": np.c_[u, v], "index": np.array(index)}


def half_cylinder(radius: float, height: float, segments: int = 24) -> dict:
    """An open half tube about +Y, its outside facing +Z (normals outward), its inside open to -Z."""
    u, v = np.meshgrid(np.linspace(0, 1, segments + 1), np.linspace(0, 1, 2))
    u, v = u.reshape(-1), v.reshape(-1)
    angle = np.pi * u  # from +X round through +Z to -X
    normal = np.c_[np.cos(angle), np.zeros_like(u), np.sin(angle)]
    position = np.c_[radius * normal[:, 0], (0.5 - v) * height, radius * normal[:, 2]]
    row = segments + 1
    index = []
    for i in range(segments):
        a, b, c, d = i, i + 1, row + i, row + i + 1
        index += [a, b, c, b, d, c]  # counter-clockwise seen from outside
    return {"position": position, "normal": normal, "uv": np.c_[u, v], "index": np.array(index)}


def look_rotation(eye, target) -> list[float]:
    """The quaternion (x, y, z, w) turning a node's -Z towards target - eye, keeping +Y up."""
    forward = np.asarray(target, np.float64) - np.asarray(eye, np.float64)
    back = -forward / np.linalg.norm(forward)
    right = np.cross([0.0, 1.0, 0.0], back)
    right /= np.linalg.norm(right)
    up = np.cross(back, right)
    m = np.c_[right, up, back]  # columns: the node's axes in the world
    w = np.sqrt(max(0.0, 1.0 + m[0, 0] + m[1, 1] + m[2, 2])) / 2.0
    x = np.copysign(np.sqrt(max(0.0, 1.0 + m[0, 0] - m[1, 1] - m[2, 2])) / 2.0, m[2, 1] - m[1, 2])
    y = np.copysign(np.sqrt(max(0.0, 1.0 - m[0, 0] + m[1, 1] - m[2, 2])) / 2.0, m[0, 2] - m[2, 0])
    z = np.copysign(np.sqrt(max(0.0, 1.0 - m[0, 0] - m[1, 1] + m[2, 2])) / 2.0, m[1, 0] - m[0, 1])
    q = np.array([x, y, z, w])
    return list(rounded(q / np.linalg.norm(q), 6))


# --- images ---------------------------------------------------------------------------------

def grid(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel-centre coordinates (x, y) in 0..1, y down the image."""
    c = (np.arange(size) + 0.5) / size
    return np.meshgrid(c, c)


def bump_normal_map(size: int = 128) -> np.ndarray:
    """A tangent-space normal map (RGB, +Y towards the image's top) of a height field: a 4x4 grid
    of round domes and one diagonal ridge, so a flipped or swapped axis shows."""
    x, y = grid(size)
    cx, cy = (x * 4) % 1 - 0.5, (y * 4) % 1 - 0.5
    height = np.sqrt(np.clip(0.16 - cx * cx - cy * cy, 0, None))  # domes of radius 0.4 of a cell
    height += 0.15 * np.exp(-((x - y) ** 2) / 0.002)  # the ridge from top-left to bottom-right
    dx = (np.roll(height, -1, axis=1) - np.roll(height, 1, axis=1)) * size / 2 / 4  # d/d(cell units)
    dy_down = (np.roll(height, -1, axis=0) - np.roll(height, 1, axis=0)) * size / 2 / 4
    normal = np.stack([-dx, dy_down, np.ones_like(dx)], axis=-1)  # +Y up: d/d(up) = -d/d(down)
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
    return np.round((rounded(normal, 4) * 0.5 + 0.5) * 255).astype(np.uint8)


def checker(size: int, cells: int, a, b) -> np.ndarray:
    x, y = grid(size)
    odd = ((np.floor(x * cells) + np.floor(y * cells)) % 2).astype(bool)
    return np.where(odd[..., None], np.array(b, np.uint8), np.array(a, np.uint8))


def letter_f(size: int = 64) -> np.ndarray:
    """An asymmetric picture (RGB): a dark blue F on a yellow-to-pink gradient, a red corner mark at
    the top-left: any flip, turn or shift of the UVs shows."""
    x, y = grid(size)
    image = np.stack([np.full_like(x, 250), 200 - 90 * y, 60 + 150 * x], axis=-1)
    f = ((x > 0.25) & (x < 0.4) & (y > 0.15) & (y < 0.85)) | ((x > 0.25) & (x < 0.75) & (y > 0.15) & (y < 0.3)) \
        | ((x > 0.25) & (x < 0.6) & (y > 0.45) & (y < 0.58))
    image[f] = (20, 30, 120)
    image[(x < 0.12) & (y < 0.12)] = (220, 20, 20)
    return np.round(image).astype(np.uint8)


# --- the scenes ---------------------------------------------------------------------------------

def camera(yaw, pitch, distance, target, fov=40.0) -> dict:
    return {"yaw": float(yaw), "pitch": float(pitch), "distance": float(distance),
            "target": [float(v) for v in target], "fov": float(fov)}


def scene_normal_map():
    g = Gltf()
    normals = g.texture(bump_normal_map())
    m = g.material("bumps", base=(0.75, 0.75, 0.78, 1), metallic=0.0, roughness=0.35,
                   normalTexture={"index": normals, "scale": 1.0})
    g.node("plane", g.mesh([g.primitive(quad(2.0, 2.0), m)], "plane"))
    return g, camera(20, 15, 3.4, (0, 0, 0))


def scene_metal_rough_grid():
    g = Gltf()
    ball = sphere(0.4, 32, 16)
    for row in range(5):          # roughness 0 (top) .. 1 (bottom)
        for column in range(5):   # metallic 0 (left) .. 1 (right)
            m = g.material(f"metal {column / 4:g} rough {row / 4:g}", base=(0.95, 0.64, 0.54, 1),
                           metallic=column / 4, roughness=row / 4)
            g.node(f"sphere m{column} r{row}", g.mesh([g.primitive(ball, m)]),
                   translation=((column - 2) * 1.0, (2 - row) * 1.0, 0.0))
    return g, camera(0, 0, 8.2, (0, 0, 0))


def scene_mr_textures():
    g = Gltf()
    x, y = grid(64)
    mr = np.stack([np.zeros_like(x), 0.1 + 0.85 * y, (np.floor(x * 4) % 2) * 1.0], axis=-1)  # G rough, B metal
    occlusion = np.repeat((0.35 + 0.65 * ((np.floor(y * 8) % 2) == 0))[..., None], 3, axis=-1)
    m = g.material("textured metal and roughness", base=(0.9, 0.9, 0.9, 1), metallic=1.0, roughness=1.0,
                   metallicRoughnessTexture={"index": g.texture(np.round(mr * 255).astype(np.uint8))},
                   occlusionTexture={"index": g.texture(np.round(occlusion * 255).astype(np.uint8)), "strength": 0.8})
    g.node("sphere", g.mesh([g.primitive(sphere(1.0, 48, 24), m)]))
    return g, camera(20, 10, 3.6, (0, 0, 0))


def scene_emissive():
    g = Gltf()
    ball = sphere(0.45, 32, 16)
    glow = g.material("orange glow", base=(0.05, 0.05, 0.05, 1), roughness=0.6, emissiveFactor=[1.0, 0.35, 0.05])
    strong = g.material("strong blue", base=(0.05, 0.05, 0.05, 1), roughness=0.6, emissiveFactor=[0.2, 0.5, 1.0],
                        extensions={"KHR_materials_emissive_strength": {"emissiveStrength": 4.0}})
    x, y = grid(64)
    stripes = np.where((np.floor(x * 8) % 2 == 0)[..., None], [255, 230, 40], [40, 200, 90]).astype(np.uint8)
    textured = g.material("emissive texture", base=(0.3, 0.3, 0.3, 1), roughness=0.5, emissiveFactor=[1.0, 1.0, 1.0],
                          emissiveTexture={"index": g.texture(stripes)})
    for i, m in enumerate((glow, strong, textured)):
        g.node(f"sphere {i}", g.mesh([g.primitive(ball, m)]), translation=((i - 1) * 1.1, 0.0, 0.0))
    return g, camera(0, 5, 4.6, (0, 0, 0))


def scene_alpha_modes():
    g = Gltf()
    backdrop = g.material("backdrop", roughness=0.7,
                          baseColorTexture={"index": g.texture(checker(64, 8, (235, 235, 235), (40, 40, 40)))})
    g.node("backdrop", g.mesh([g.primitive(quad(4.2, 2.0), backdrop)]), translation=(0, 0, -0.6))
    x, y = grid(64)
    radial = np.clip(1.0 - np.hypot(x - 0.5, y - 0.5) / 0.5, 0, 1)
    mask_image = np.dstack([np.full((64, 64, 3), 255), np.round(radial * 255)]).astype(np.uint8)
    fade = np.dstack([np.full((64, 64, 3), 255), np.round((0.2 + 0.8 * x) * 255)]).astype(np.uint8)
    opaque = g.material("opaque (its alpha 0.3 ignored)", base=(0.2, 0.6, 0.9, 0.3), roughness=0.4)
    mask = g.material("mask", base=(0.9, 0.15, 0.1, 1), roughness=0.4, alphaMode="MASK", alphaCutoff=0.4,
                      baseColorTexture={"index": g.texture(mask_image)})
    blend = g.material("blend", base=(0.1, 0.8, 0.2, 0.8), roughness=0.4, alphaMode="BLEND",
                       baseColorTexture={"index": g.texture(fade)})
    blend_back = g.material("blend behind", base=(0.9, 0.2, 0.8, 0.6), roughness=0.4, alphaMode="BLEND")
    card = quad(1.0, 1.0)
    g.node("opaque", g.mesh([g.primitive(card, opaque)]), translation=(-1.3, 0, 0))
    g.node("mask", g.mesh([g.primitive(card, mask)]), translation=(0, 0, 0))
    g.node("blend behind", g.mesh([g.primitive(card, blend_back)]), translation=(1.1, 0.25, -0.3))
    g.node("blend", g.mesh([g.primitive(card, blend)]), translation=(1.4, -0.1, 0))
    return g, camera(10, 5, 4.4, (0, 0, -0.2))


def scene_texture_transform():
    g = Gltf()
    picture = g.texture(letter_f())
    plain = g.material("no transform", roughness=0.6, baseColorTexture={"index": picture})
    transform = {"KHR_texture_transform": {"offset": [0.2, 0.1], "rotation": 0.5236, "scale": [2.0, 1.5]}}
    moved = g.material("offset, rotation, scale", roughness=0.6,
                       baseColorTexture={"index": picture, "extensions": transform})
    second = g.material("TEXCOORD_1", roughness=0.6, baseColorTexture={"index": picture, "texCoord": 1})
    card = quad(1.0, 1.0)
    flipped = dict(card, uv1=np.c_[card["uv"][:, 1], 1.0 - card["uv"][:, 0]] * 0.5 + 0.25)  # turned, zoomed in
    for i, (m, geometry) in enumerate(((plain, card), (moved, card), (second, flipped))):
        g.node(f"card {i}", g.mesh([g.primitive(geometry, m)]), translation=((i - 1) * 1.15, 0, 0))
    return g, camera(0, 0, 4.2, (0, 0, 0))


def scene_unlit():
    g = Gltf()
    unlit = {"KHR_materials_unlit": {}}
    textured = g.material("unlit checker", roughness=1.0, metallic=0.0, extensions=unlit,
                          baseColorTexture={"index": g.texture(checker(64, 8, (250, 180, 40), (30, 90, 200)))})
    flat = g.material("unlit orange", base=(0.9, 0.3, 0.1, 1), extensions=unlit)
    g.node("sphere", g.mesh([g.primitive(sphere(0.6, 32, 16), textured)]), translation=(-0.7, 0, 0))
    g.node("card", g.mesh([g.primitive(quad(1.0, 1.2), flat)]), translation=(0.75, 0, 0))
    return g, camera(15, 10, 3.3, (0, 0, 0))


def scene_punctual_lights():
    g = Gltf()
    lights = [
        {"type": "spot", "name": "warm spot", "color": [1.0, 0.85, 0.6], "intensity": 40.0,
         "spot": {"innerConeAngle": 0.2, "outerConeAngle": 0.45}},
        {"type": "point", "name": "blue point", "color": [0.3, 0.5, 1.0], "intensity": 6.0, "range": 6.0},
        {"type": "directional", "name": "red sun", "color": [1.0, 0.35, 0.3], "intensity": 1.5},
    ]
    g.doc["extensions"] = {"KHR_lights_punctual": {"lights": lights}}
    g.used.add("KHR_lights_punctual")
    floor = g.material("floor", base=(0.3, 0.3, 0.3, 1), roughness=0.6)
    ball = g.material("ball", base=(0.9, 0.9, 0.9, 1), roughness=0.3)
    ground = quad(4.0, 4.0, 8)
    ground = dict(ground, position=ground["position"][:, [0, 2, 1]] * [1, 1, -1],
                  normal=np.tile([0.0, 1.0, 0.0], (len(ground["position"]), 1)))  # XZ plane facing +Y
    g.node("floor", g.mesh([g.primitive(ground, floor)]))
    g.node("ball", g.mesh([g.primitive(sphere(0.5, 32, 16), ball)]), translation=(0, 0.5, 0))
    spot_at = (1.5, 2.5, 1.0)
    g.node("warm spot", translation=spot_at, rotation=look_rotation(spot_at, (0, 0, 0)),
           extensions={"KHR_lights_punctual": {"light": 0}})
    g.node("blue point", translation=(-1.2, 0.8, 1.2), extensions={"KHR_lights_punctual": {"light": 1}})
    sun_from = (-2.0, 3.0, -1.0)
    g.node("red sun", rotation=look_rotation(sun_from, (0, 0, 0)), extensions={"KHR_lights_punctual": {"light": 2}})
    return g, camera(20, 30, 5.2, (0, 0.3, 0))


def scene_vertex_colors():
    g = Gltf()
    white = g.material("white", roughness=0.5)
    ball = sphere(0.6, 32, 16)
    g.node("sphere", g.mesh([g.primitive(ball, white, colors=0.5 + 0.5 * ball["normal"])]), translation=(-0.7, 0, 0))
    card = quad(1.0, 1.2, 4)
    u, v = card["uv"][:, 0], card["uv"][:, 1]
    rgba = np.c_[u, v, 1.0 - u, np.ones_like(u)]
    g.node("card", g.mesh([g.primitive(card, white, colors=rgba, colors_u8=True)]), translation=(0.75, 0, 0))
    return g, camera(10, 5, 3.3, (0, 0, 0))


def scene_double_sided():
    g = Gltf()
    picture = g.texture(checker(32, 4, (240, 200, 60), (60, 120, 220)))
    two = g.material("double-sided", roughness=0.5, doubleSided=True, baseColorTexture={"index": picture})
    one = g.material("single-sided", roughness=0.5, baseColorTexture={"index": picture})
    tube = half_cylinder(0.55, 1.3)
    turn = [0.0, 0.97437, 0.0, 0.22495]  # about +Y by 154 degrees: the open side towards the camera
    g.node("double-sided", g.mesh([g.primitive(tube, two)]), translation=(-0.7, 0, 0), rotation=turn)
    g.node("single-sided", g.mesh([g.primitive(tube, one)]), translation=(0.7, 0, 0), rotation=turn)
    return g, camera(15, 20, 3.6, (0, 0, 0))


def panel_maps(size: int = 256, cells: int = 8, seed: int = 38) -> dict[str, np.ndarray]:
    """The textured detail of a hard-surface model (the kind DamagedHelmet shows), one tile of
    ``cells`` x ``cells`` panels, as uint8 images: base colour (tinted panels, dark seams, fine
    grain, a yellow stripe), metal-rough (half the panels bare metal, each its own roughness),
    normal (grooved seams, a rivet at each panel's corner), occlusion (dark in the seams) and
    emissive (a thin cyan strip on a few panels). A seeded PCG64 makes the same bytes everywhere."""
    rng = np.random.default_rng(seed)
    x, y = grid(size)
    cx, cy = x * cells, y * cells
    column, row = np.floor(cx).astype(int), np.floor(cy).astype(int)
    fx, fy = cx - column, cy - row                                   # 0..1 within a panel
    seam = np.minimum(np.minimum(fx, 1 - fx), np.minimum(fy, 1 - fy)) * size / cells  # texels to a seam
    palette = np.array([[118, 122, 96], [92, 98, 104], [150, 146, 132], [70, 84, 96], [130, 110, 84]], float)
    tint = palette[rng.integers(0, len(palette), (cells, cells))][row, column]
    grain = rng.normal(0.0, 9.0, (size, size, 1))
    base = tint + grain
    base[(np.abs(fy - 0.5) < 0.06) & (row % 3 == 0)] = (230, 190, 40)  # a painted stripe
    base *= np.clip(seam / 1.5, 0.25, 1.0)[..., None]                  # the seams dark
    metal = (rng.random((cells, cells)) < 0.5)[row, column]
    rough = (0.25 + 0.55 * rng.random((cells, cells)))[row, column] + rng.normal(0.0, 0.04, (size, size))
    mr = np.stack([np.zeros_like(x), np.clip(rough, 0.05, 1.0) * 255, metal * 255.0], axis=-1)
    corner = np.minimum(np.hypot(fx - 0.08, fy - 0.08), np.hypot(fx - 0.92, fy - 0.92)) * size / cells
    height = -np.exp(-(seam / 1.2) ** 2) + 0.8 * np.exp(-(corner / 1.5) ** 2)
    dx = (np.roll(height, -1, axis=1) - np.roll(height, 1, axis=1)) / 2
    dy_down = (np.roll(height, -1, axis=0) - np.roll(height, 1, axis=0)) / 2
    normal = np.stack([-dx, dy_down, np.ones_like(dx)], axis=-1)
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
    occlusion = np.repeat((0.45 + 0.55 * np.clip(seam / 2.5, 0.0, 1.0))[..., None], 3, axis=-1)
    lit = (rng.random((cells, cells)) < 0.2)[row, column] & (np.abs(fx - 0.7) < 0.04) & (seam > 2)
    emissive = np.where(lit[..., None], [40.0, 230.0, 255.0], 0.0)
    to_bytes = lambda values: np.round(np.clip(rounded(values, 3), 0, 255)).astype(np.uint8)  # noqa: E731
    return {"base": to_bytes(base), "metal_rough": to_bytes(mr), "normal": to_bytes((normal * 0.5 + 0.5) * 255),
            "occlusion": to_bytes(occlusion * 255), "emissive": to_bytes(emissive)}


def scene_textured_detail():
    """A hard-surface ball with every map of DamagedHelmet's kind at fine detail: the tile repeats
    4 x 2 times round the sphere, so the textures are drawn smaller than their texels (their mips,
    as on a helmet seen whole), and a few panels glow."""
    g = Gltf()
    maps = panel_maps()
    ball = sphere(1.0, 64, 32)
    ball = dict(ball, uv=ball["uv"] * np.array([4.0, 2.0]))
    m = g.material("panels", base=(1, 1, 1, 1), metallic=1.0, roughness=1.0,
                   baseColorTexture={"index": g.texture(maps["base"])},
                   metallicRoughnessTexture={"index": g.texture(maps["metal_rough"])},
                   normalTexture={"index": g.texture(maps["normal"]), "scale": 1.0},
                   occlusionTexture={"index": g.texture(maps["occlusion"]), "strength": 1.0},
                   emissiveTexture={"index": g.texture(maps["emissive"])}, emissiveFactor=[1.0, 1.0, 1.0])
    g.node("ball", g.mesh([g.primitive(ball, m)]))
    return g, camera(25, 12, 3.3, (0, 0, 0))


SCENES = {
    "normal_map": scene_normal_map,
    "metal_rough_grid": scene_metal_rough_grid,
    "mr_textures": scene_mr_textures,
    "emissive": scene_emissive,
    "alpha_modes": scene_alpha_modes,
    "texture_transform": scene_texture_transform,
    "unlit": scene_unlit,
    "punctual_lights": scene_punctual_lights,
    "vertex_colors": scene_vertex_colors,
    "double_sided": scene_double_sided,
    "textured_detail": scene_textured_detail,
}


def write_scene(name: str, folder) -> tuple[Path, Path]:
    """Write scene ``name`` as folder/<name>.glb and its camera as folder/<name>.camera.json."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    gltf, cam = SCENES[name]()
    model, camera_file = folder / f"{name}.glb", folder / f"{name}.camera.json"
    model.write_bytes(gltf.glb())
    camera_file.write_text(json.dumps(cam) + "\n")
    return model, camera_file


def write_all(folder) -> dict[str, tuple[Path, Path]]:
    return {name: write_scene(name, folder) for name in SCENES}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python tests/pbr_scenes.py OUT_DIR", file=sys.stderr)
        return 2
    for name, (model, _) in write_all(argv[0]).items():
        print(f"wrote {model} ({model.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
