"""Spheres lit by an environment alone, drawn two ways: by a small program of the tests' own that
calls glsl/ibl.glsl and glsl/tonemap.glsl (the material shader is not needed), and as glTF files
for Babylon.js's recorder (tests/babylon_render/record.py). The Babylon pictures of these spheres
are the proof of the environment's orientation and brightness (tests/test_environment.py).

    python tests/environment_spheres.py --record     # re-record tests/data/environment/*.png (needs chromium)
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data" / "environment"
# Where the environments are: the tests' own, and shared/pbr beside the checkout (studio.hdr).
ENVIRONMENT_FOLDERS = (ROOT / "tests" / "data" / "environments", ROOT.parent / "shared" / "pbr")
ENVIRONMENTS = {"studio": "studio.hdr", "coloured": "coloured.hdr"}
SIZE = (256, 256)
CAMERA = {"yaw": 20.0, "pitch": 10.0, "distance": 4.2, "target": [0.0, 0.0, 0.0], "fov": 40.0}

# case: (metallic, roughness, base colour); every case is drawn in every environment
SPHERES = {
    "mirror": (1.0, 0.0, (1.0, 1.0, 1.0)),
    "white": (0.0, 1.0, (1.0, 1.0, 1.0)),
    "metal_rough_0_3": (1.0, 0.3, (1.0, 1.0, 1.0)),
    "metal_rough_0_6": (1.0, 0.6, (1.0, 1.0, 1.0)),
    "plastic_0_4": (0.0, 0.4, (0.8, 0.2, 0.1)),
}
TONE_MAPPINGS = ("khr-neutral",)


def sphere_glb(path, metallic: float, roughness: float, color=(1.0, 1.0, 1.0), rings: int = 96, segments: int = 192):
    """A unit UV sphere at the origin with one metallic-roughness material, as a .glb."""
    import pygltflib

    theta = np.linspace(0.0, np.pi, rings + 1)
    phi = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    normals = np.stack([np.sin(t) * np.cos(p), np.cos(t), -np.sin(t) * np.sin(p)], axis=-1).reshape(-1, 3)
    normals = normals.astype(np.float32)
    positions = normals.copy()
    index = np.arange((rings + 1) * (segments + 1)).reshape(rings + 1, segments + 1)
    a, b = index[:-1, :-1], index[1:, :-1]
    c, d = index[1:, 1:], index[:-1, 1:]
    triangles = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    indices = triangles.astype(np.uint32).ravel()
    blob = positions.tobytes() + normals.tobytes() + indices.tobytes()
    n = len(positions)
    gltf = pygltflib.GLTF2(
        asset=pygltflib.Asset(version="2.0"),
        scene=0, scenes=[pygltflib.Scene(nodes=[0])], nodes=[pygltflib.Node(mesh=0)],
        meshes=[pygltflib.Mesh(primitives=[pygltflib.Primitive(
            attributes=pygltflib.Attributes(POSITION=0, NORMAL=1), indices=2, material=0)])],
        materials=[pygltflib.Material(pbrMetallicRoughness=pygltflib.PbrMetallicRoughness(
            baseColorFactor=[*map(float, color), 1.0], metallicFactor=float(metallic), roughnessFactor=float(roughness)))],
        buffers=[pygltflib.Buffer(byteLength=len(blob))],
        bufferViews=[pygltflib.BufferView(buffer=0, byteOffset=0, byteLength=n * 12, target=34962),
                     pygltflib.BufferView(buffer=0, byteOffset=n * 12, byteLength=n * 12, target=34962),
                     pygltflib.BufferView(buffer=0, byteOffset=n * 24, byteLength=len(indices) * 4, target=34963)],
        accessors=[pygltflib.Accessor(bufferView=0, componentType=5126, count=n, type="VEC3",
                                      min=[-1.0, -1.0, -1.0], max=[1.0, 1.0, 1.0]),
                   pygltflib.Accessor(bufferView=1, componentType=5126, count=n, type="VEC3"),
                   pygltflib.Accessor(bufferView=2, componentType=5125, count=len(indices), type="SCALAR")])
    gltf.set_binary_blob(blob)
    gltf.save_binary(str(path))


_FRAGMENT = """
in vec2 v_uv;
uniform mat4 u_clip_to_world;
uniform vec3 u_eye;
uniform vec3 u_base;
uniform float u_metallic;
uniform float u_roughness;
out vec4 out_color;

void main() {
    vec4 far_point = u_clip_to_world * vec4(v_uv * 2.0 - 1.0, 1.0, 1.0);
    vec3 ray = normalize(far_point.xyz / far_point.w - u_eye);
    float b = dot(ray, u_eye);
    float c = dot(u_eye, u_eye) - 1.0;
    float disc = b * b - c;
    if (disc < 0.0) {
        out_color = vec4(0.0);
        return;
    }
    vec3 n = normalize(u_eye + ray * (-b - sqrt(disc)));
    vec3 v = -ray;
    vec3 r = reflect(ray, n);
    float n_dot_v = max(dot(n, v), 0.0);
    // Babylon's PBR composition with its defaults (see viewer/render/environment.py).
    float alpha = ibl_alpha(u_roughness);
    vec3 f0 = mix(vec3(0.04), u_base, u_metallic);
    vec2 brdf = ibl_brdf(n_dot_v, u_roughness);
    vec3 reflectance = f0 * brdf.x + vec3(brdf.y);
    vec3 energy = 1.0 + f0 * (1.0 / (brdf.x + brdf.y) - 1.0);
    vec3 albedo = u_base * (1.0 - 0.04) * (1.0 - u_metallic);
    vec3 irradiance = ibl_diffuse(n);
    vec3 color = irradiance * albedo + ibl_radiance(r, alpha, irradiance) * reflectance * energy;
    out_color = vec4(tone_map(color), 1.0);
}
"""


def sphere_program(ctx, tone_mapping="khr-neutral"):
    """The tests' own lit-sphere program: a full-screen triangle, each pixel's ray hits the unit
    sphere at the origin analytically, lit by ibl.glsl and tone mapped by tonemap.glsl."""
    from viewer.render.shaders import GLSL_DIR, shader_source
    from viewer.render.tonemap import tone_mapping_code

    fragment = ("#version 330 core\n" + f"#define TONE_MAPPING {tone_mapping_code(tone_mapping)}\n"
                + (GLSL_DIR / "ibl.glsl").read_text()
                + (GLSL_DIR / "tonemap.glsl").read_text() + _FRAGMENT)
    return ctx.program(vertex_shader=shader_source("background.vert"), fragment_shader=fragment)


def camera_matrices(size=SIZE):
    """(view, projection, eye) of CAMERA, as boneviewer's renderer makes them."""
    from viewer.camera import CameraDescription

    camera = CameraDescription.from_dict(CAMERA).camera(None, size[0] / size[1])
    return camera.view_matrix(), camera.projection_matrix(size[0] / size[1]), np.asarray(camera.position, float)


def render_sphere(ctx, environment, case: str, tone_mapping="khr-neutral", exposure=1.0, size=SIZE,
                  rotation_degrees=0.0) -> np.ndarray:
    """(H, W, 4) uint8, rows top first: the sphere of ``case`` in ``environment``."""
    import moderngl

    from viewer.render.tonemap import set_tone_mapping

    metallic, roughness, base = SPHERES[case]
    view, projection, eye = camera_matrices(size)
    program = sphere_program(ctx, tone_mapping)
    vao = ctx.vertex_array(program, [])
    color = ctx.renderbuffer(size, 4)
    framebuffer = ctx.framebuffer(color_attachments=[color])
    try:
        framebuffer.use()
        ctx.disable(moderngl.DEPTH_TEST | moderngl.BLEND)
        framebuffer.clear(0.0, 0.0, 0.0, 0.0)
        program["u_clip_to_world"].write(np.linalg.inv(view @ projection).astype(np.float32).tobytes())
        program["u_eye"].value = tuple(eye)
        program["u_base"].value = tuple(base)
        program["u_metallic"].value = metallic
        program["u_roughness"].value = roughness
        environment.use(program, 8, rotation_degrees)
        set_tone_mapping(program, exposure)
        vao.render(moderngl.TRIANGLES, vertices=3)
        pixels = np.frombuffer(framebuffer.read(components=4), np.uint8).reshape(size[1], size[0], 4)
        return pixels[::-1].copy()
    finally:
        for resource in (framebuffer, color, vao, program):
            resource.release()


def environment_file(name: str):
    """The path of environment file ``name``, or None when it is not here."""
    return next((folder / name for folder in ENVIRONMENT_FOLDERS if (folder / name).is_file()), None)


def reference_cases():
    """(name, case, environment file or None, tone mapping) of every Babylon picture to record."""
    for env_name, file_name in ENVIRONMENTS.items():
        for case in SPHERES:
            for tone_mapping in TONE_MAPPINGS:
                yield f"{case}-{env_name}-{tone_mapping}", case, environment_file(file_name), tone_mapping


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def record(folder=DATA) -> None:
    """Babylon.js's pictures of every case, and references.json with the sha256 of their inputs."""
    import tempfile

    sys.path.insert(0, str(ROOT / "tests" / "babylon_render"))
    from record import Recorder, write_png

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / "references.json"
    # Pictures with the environment turned need a page that sets texture.rotationY (record.py's
    # has no such input yet): they are kept as they were recorded.
    entries = {name: entry for name, entry in (json.loads(manifest.read_text()) if manifest.is_file() else {}).items()
               if entry.get("rotation_degrees")}
    with tempfile.TemporaryDirectory() as tmp, Recorder() as recorder:
        camera_file = Path(tmp) / "camera.json"
        camera_file.write_text(json.dumps(CAMERA))
        for name, case, env_path, tone_mapping in reference_cases():
            if env_path is None:
                print(f"skip {name}: its environment is not here")
                continue
            model = Path(tmp) / f"{case}.glb"
            if not model.exists():
                metallic, roughness, base = SPHERES[case]
                sphere_glb(model, metallic, roughness, base)
            pixels, info = recorder.picture(model, env_path, camera_file, tone_mapping, 1.0, SIZE)
            write_png(folder / f"{name}.png", pixels)
            entries[name] = {"case": case, "environment": Path(env_path).name, "environment_sha256": sha256(env_path),
                             "model_sha256": sha256(model), "camera": CAMERA, "tone_mapping": tone_mapping,
                             "exposure": 1.0, "size": list(SIZE), "babylon": info["babylon"]}
            print(f"recorded {name}")
    manifest.write_text(json.dumps(entries, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    if "--record" in sys.argv:
        record()
