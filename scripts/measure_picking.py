"""Mesh picking on a ~100k-triangle skinned model: the renderer's GPU ID pass (what the viewer
uses: Renderer.pick_bone) vs the numpy ray cast on the CPU-skinned mesh (its fallback without a
GL context, viewer.editing.interaction.mesh_bone_at), and the gestures' share of a frame.

    python scripts/measure_picking.py

Prints milliseconds per pick (median of 15) for: CPU skinning + ray cast; the ID pass on each
skinning path (uniform array, bone texture, CPU-skinned vertices: skin in the vertex shader or
in numpy, draw every mesh through a 1-pixel pick projection into a 1x1 framebuffer, read the
mesh and triangle back, then the bone with the most weight on it; with CPU skinning, also with
the pose changed before each pick, so numpy skins again); and a whole 1280x720 session frame
with the gizmo on.
"""

from __future__ import annotations

import time

import numpy as np

from viewer.editing import interaction as ix
from viewer.character import build_character
from viewer.model.mesh import SkinnedMesh
from viewer.model.scene import Scene
from viewer.render.headless import OffscreenTarget, create_headless_context
from viewer.render.renderer import Renderer


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

    _character, mesh = dense_model()
    scene = Scene("dense", [mesh])
    scene.prepare()
    size = (1280, 720)
    camera = framed_camera(scene, aspect=size[0] / size[1])
    matrix = camera.view_matrix() @ camera.projection_matrix(size[0] / size[1])
    pixel = (size[0] / 2, size[1] / 2)
    print(f"model: {len(mesh.indices) // 3} triangles, {len(mesh.positions)} vertices")

    def cpu_pick():
        return ix.mesh_bone_at(scene, pixel, matrix, size)

    print(f"CPU skinning + ray cast (interaction.mesh_bone_at): {median_ms(cpu_pick):.1f} ms per pick "
          f"(bone {cpu_pick().name})")

    ctx = create_headless_context()
    target = OffscreenTarget(ctx, size)
    for label, options in (("uniform array", dict(bone_storage="uniform")),
                           ("bone texture", dict(bone_storage="texture")),
                           ("CPU-skinned vertices", dict(cpu_skinning=True))):
        renderer = Renderer(ctx, **options)

        def gpu_pick():
            return renderer.pick_bone(scene, camera, size, *pixel)

        skeleton, index = gpu_pick()  # builds the ID pass's program and buffers once
        print(f"GPU ID pass, {label} (Renderer.pick_bone): {median_ms(gpu_pick):.1f} ms per pick "
              f"(bone {skeleton.bones[index].name})")
        if options.get("cpu_skinning"):
            # Above, the pose had not changed since the last upload (a paused frame): the
            # vertices were reused. Here it changes before every pick, so numpy skins again.
            arm = scene.find_bone("leftArm")
            turns = iter(np.tile([0.01, -0.01], 100))

            def posed_pick():
                arm.rotate((0.0, 0.0, 1.0), next(turns))
                scene.prepare()
                return gpu_pick()

            print(f"GPU ID pass, {label}, the pose changed before each pick: {median_ms(posed_pick):.1f} ms per pick")
        renderer.release()

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
