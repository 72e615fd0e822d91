"""Mesh picking on a ~100k-triangle skinned model: a CPU ray cast (what the viewer uses) vs a
GPU ID pass (drawn here only to measure it), and the gestures' share of a frame.

    python scripts/measure_picking.py

Prints milliseconds per pick (median of 15) for: CPU skinning + ray cast; a GPU ID pass
(skin in the vertex shader, write the heaviest joint of each triangle's first vertex, a
scissor of one pixel, read it back); and a whole 1280x720 session frame with the gizmo on.
"""

from __future__ import annotations

import time

import numpy as np

from viewer import interaction as ix
from viewer.character import build_character
from viewer.model.mesh import SkinnedMesh
from viewer.render.headless import OffscreenTarget, create_headless_context

VERT = """
#version 330
uniform mat4 u_bones[3];
uniform mat4 u_world_view_projection;
in vec3 in_position; in ivec4 in_joints; in vec4 in_weights;
flat out int v_id;
void main() {
    mat4 skin = in_weights.x * u_bones[in_joints.x] + in_weights.y * u_bones[in_joints.y]
              + in_weights.z * u_bones[in_joints.z] + in_weights.w * u_bones[in_joints.w];
    int best = in_joints.x; float weight = in_weights.x;
    if (in_weights.y > weight) { best = in_joints.y; weight = in_weights.y; }
    if (in_weights.z > weight) { best = in_joints.z; weight = in_weights.z; }
    if (in_weights.w > weight) { best = in_joints.w; }
    v_id = best;
    gl_Position = u_world_view_projection * (skin * vec4(in_position, 1.0));
}
"""
FRAG = """
#version 330
flat in int v_id;
out vec4 color;
void main() { color = vec4(float(v_id + 1) / 255.0, 0.0, 0.0, 1.0); }
"""


def dense_model(triangles: int = 100_000):
    """The built-in character's skeleton skinning a grid sphere of about ``triangles``."""
    scene = build_character()
    skeleton = scene.skeletons[0]
    n = int(np.sqrt(triangles / 2))
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, n + 1), np.linspace(0.01, np.pi - 0.01, n + 1))
    positions = np.c_[np.cos(u).ravel() * np.sin(v).ravel(), 1.2 + np.cos(v).ravel(),
                      np.sin(u).ravel() * np.sin(v).ravel() * 0.4]
    grid = np.arange((n + 1) * (n + 1)).reshape(n + 1, n + 1)
    a, b, c, d = grid[:-1, :-1].ravel(), grid[:-1, 1:].ravel(), grid[1:, :-1].ravel(), grid[1:, 1:].ravel()
    indices = np.c_[a, b, c, b, d, c].reshape(-1, 3)
    x = positions[:, 0]
    joints = np.zeros((len(positions), 4), np.int32)
    joints[:, 1] = np.where(x > 0, 1, 2)
    weights = np.zeros((len(positions), 4))
    weights[:, 1] = np.clip(np.abs(x) * 1.5 - 0.3, 0, 1)
    weights[:, 0] = 1 - weights[:, 1]
    mesh = SkinnedMesh("dense", positions, indices, skeleton, joints, weights)
    return scene, mesh


def median_ms(function, repeats: int = 15) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return 1000 * float(np.median(times))


def main() -> None:
    from viewer.camera import framed_camera

    scene, mesh = dense_model()
    skeleton = scene.skeletons[0]
    scene.prepare()
    size = (1280, 720)
    camera = framed_camera(scene, aspect=size[0] / size[1])
    matrix = camera.view_matrix() @ camera.projection_matrix(size[0] / size[1])
    pixel = (size[0] / 2, size[1] / 2)
    triangles = mesh.indices.reshape(-1, 3)
    print(f"model: {len(triangles)} triangles, {len(mesh.positions)} vertices")

    def naive_pick():
        origin, direction = ix.pixel_ray(pixel, matrix, size)
        return ix.ray_triangles(origin, direction, mesh.skinned_positions(), triangles)

    def cpu_pick():
        origin, direction = ix.pixel_ray(pixel, matrix, size)
        hit = ix.ray_triangles(origin, direction, ix.skinned_points(mesh), triangles)
        return None if hit is None else ix.heaviest_joint(mesh.joints, mesh.weights, triangles[hit[0]])

    print(f"CPU skinning + ray cast: {median_ms(cpu_pick):.1f} ms per pick (joint {cpu_pick()}); "
          f"with skinned_positions() : {median_ms(naive_pick):.1f} ms")

    ctx = create_headless_context()
    target = OffscreenTarget(ctx, size)
    program = ctx.program(vertex_shader=VERT, fragment_shader=FRAG)
    buffers = [(ctx.buffer(mesh.positions.astype("f4").tobytes()), "3f", "in_position"),
               (ctx.buffer(mesh.joints.astype("i4").tobytes()), "4i", "in_joints"),
               (ctx.buffer(mesh.weights.astype("f4").tobytes()), "4f", "in_weights")]
    vao = ctx.vertex_array(program, buffers, index_buffer=ctx.buffer(mesh.indices.astype("u4").tobytes()),
                           index_element_size=4)

    def gpu_pick():
        target.framebuffer.use()
        program["u_bones"].write(skeleton.get_transform_matrices().tobytes())
        program["u_world_view_projection"].write((mesh.world_matrix @ matrix).astype("f4").tobytes())
        ctx.enable(ctx.DEPTH_TEST)
        ctx.scissor = (int(pixel[0]), size[1] - 1 - int(pixel[1]), 1, 1)
        ctx.clear(0, 0, 0, 0, depth=1.0)
        vao.render()
        value = target.framebuffer.read(viewport=(int(pixel[0]), size[1] - 1 - int(pixel[1]), 1, 1), components=4)
        ctx.scissor = None
        return value[0] - 1

    print(f"GPU ID pass (1-pixel scissor, read back): {median_ms(gpu_pick):.1f} ms per pick (joint {gpu_pick()})")

    from viewer.loaders import load_model
    from viewer.ui.session import ViewerSession

    for name, model in (("built-in character", None), ("RobotExpressive", "tests/data/gltf-samples/RobotExpressive/RobotExpressive.glb")):
        session = ViewerSession(ctx, build_character() if model is None else load_model(model), play=False)
        session.frame(size, 1 / 60, target.framebuffer)
        session.editor.select(session.editor.bones()[min(3, len(session.editor.bones()) - 1)])
        frame = median_ms(lambda: session.frame(size, 1 / 60, target.framebuffer), 40)
        gestures = median_ms(lambda: session.gestures.update(session), 40)
        print(f"{name}: 1280x720 frame with the panel and the gizmo {frame:.1f} ms ({1000 / frame:.0f} fps); "
              f"gestures' share {gestures:.2f} ms")
        session.release()


if __name__ == "__main__":
    main()
