"""Mesh picking (issue 14): the renderer's GPU ID pass (Renderer.pick / pick_bone) against the
numpy ray cast it replaced (viewer.editing.interaction.mesh_bone_at, kept as fallback and reference):
same triangle and same bone at random on-mesh pixels on every skinning path, morph targets,
meshes without a skin under a joint node, depth, and the session using it for clicks and hover."""

from __future__ import annotations

import numpy as np
import pytest
from imgui_bundle import imgui

from viewer.editing import interaction as ix
from viewer.camera import OrbitCamera, framed_camera
from viewer.character import build_character
from viewer.loaders import load_model
from viewer.model import Bone, Skeleton, SkinnedMesh
from viewer.model.morph import MorphTargets
from viewer.model.scene import Scene
from viewer.model.space import Space
from viewer.model.weights import heaviest_joint, rigid_bone, triangle_bone
from viewer.options import RenderOptions
from viewer.render.headless import OffscreenTarget
from viewer.render.renderer import Renderer, SkinningMode, pick_matrix
from viewer.ui import gestures as gestures_module
from viewer.ui.gestures import Gestures, View
from viewer.ui.session import ViewerSession

from samples import CESIUM_MAN, FOX, ROBOT

SIZE = (640, 360)
MODELS = {"character": None, "CesiumMan": CESIUM_MAN, "Fox": FOX, "RobotExpressive": ROBOT}
PATHS = {"uniform": dict(bone_storage="uniform"), "texture": dict(bone_storage="texture"),
         "cpu": dict(cpu_skinning=True)}
SAMPLES = 120
# Disagreements allowed between the ID pass and the ray cast, out of SAMPLES random on-mesh
# pixels: only a pixel that falls (to float precision) on a triangle's edge may go either way
# (the GPU's float32 and its fill rule against float64 and inclusive edges). Measured over
# 1000 pixels a model (llvmpipe): another triangle at up to 0.4 %, hit against miss on the
# silhouette at up to 0.1 %, another bone never (adjacent triangles share their bone).
TRIANGLE_MISMATCHES = 3     # of 120: 2.5 %, another triangle or hit against miss
BONE_MISMATCHES = 1         # of 120: < 1 %


def posed(name):
    """The model in a pose that is not its rest pose (a clip frame, a turned arm, a morph)."""
    scene = build_character() if MODELS[name] is None else load_model(MODELS[name])
    if scene.animations:
        scene.animations[0].apply(0.37 * scene.animations[0].duration)
    else:
        arm = scene.find_bone("leftArm")
        arm.rotate((0.0, 0.0, 1.0), 0.7, Space.WORLD, scene.skinned_meshes[0])
    for mesh in scene.morph_meshes:
        mesh.morph_weights = np.linspace(1.0, 0.3, len(mesh.morph_weights))
    scene.prepare()
    return scene


def camera_matrix(scene, yaw=30.0, pitch=15.0):
    camera = framed_camera(scene, yaw=yaw, pitch=pitch, aspect=SIZE[0] / SIZE[1])
    return camera, camera.view_matrix() @ camera.projection_matrix(SIZE[0] / SIZE[1])


def on_mesh_pixels(scene, matrix, count, seed=0):
    """Random pixels on the drawn meshes: random points of random triangles (area-weighted),
    projected, inside the image (some are hidden behind other parts: depth decides)."""
    rng = np.random.default_rng(seed)
    points = []
    for mesh in scene.meshes:
        world = ix.drawn_points(mesh)
        triangles = world[mesh.indices.reshape(-1, 3)]
        area = np.linalg.norm(np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]), axis=1)
        chosen = rng.choice(len(triangles), size=count, p=area / area.sum())
        a, b = rng.random((2, count))
        flip = a + b > 1
        a, b = np.where(flip, 1 - a, a), np.where(flip, 1 - b, b)
        t = triangles[chosen]
        points.append(t[:, 0] + a[:, None] * (t[:, 1] - t[:, 0]) + b[:, None] * (t[:, 2] - t[:, 0]))
    points = np.concatenate(points)
    pixels, front = ix.project(points, matrix, SIZE)
    inside = front & (pixels[:, 0] > 0) & (pixels[:, 0] < SIZE[0]) & (pixels[:, 1] > 0) & (pixels[:, 1] < SIZE[1])
    pixels = pixels[inside]
    return pixels[rng.choice(len(pixels), size=min(count, len(pixels)), replace=False)]


def test_pick_matrix_maps_the_pixel_onto_the_one_pixel_viewport():
    scene = build_character()
    camera, matrix = camera_matrix(scene)
    point = np.array([0.1, 1.1, 0.2])
    x, y = ix.project([point], matrix, SIZE)[0][0]
    clip = np.r_[point, 1.0] @ matrix @ pick_matrix(SIZE, x, y)
    assert np.allclose(clip[:2] / clip[3], 0.0, atol=1e-9)        # the centre of the 1x1 viewport
    clip = np.r_[point, 1.0] @ matrix @ pick_matrix(SIZE, x - 0.5, y + 0.25)
    assert np.allclose(clip[:2] / clip[3], [1.0, 0.5], atol=1e-9)  # half a pixel right, a quarter up
    assert clip[2] == pytest.approx((np.r_[point, 1.0] @ matrix)[2])  # depth untouched


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("name", list(MODELS))
def test_the_id_pass_finds_what_the_ray_cast_finds(ctx, name, path):
    """Same triangle and same bone as the numpy ray cast at random on-mesh pixels, posed,
    morphed, on every skinning path (uniform array, bone texture, CPU-skinned vertices)."""
    scene = posed(name)
    renderer = Renderer(ctx, **PATHS[path])
    try:
        expected = SkinningMode.CPU if path == "cpu" else (SkinningMode.UNIFORM_ARRAY if path == "uniform"
                                                           else SkinningMode.BONE_TEXTURE)
        camera, matrix = camera_matrix(scene)
        pixels = on_mesh_pixels(scene, matrix, SAMPLES)
        assert len(pixels) >= SAMPLES // 2
        triangle_misses, bone_misses, hits = [], [], 0
        for pixel in pixels:
            gpu = renderer.pick(scene, camera, SIZE, *pixel)
            cpu = ix.ray_meshes(*ix.pixel_ray(pixel, matrix, SIZE), scene.meshes)
            hits += gpu is not None
            if (gpu is None) != (cpu is None) or (gpu is not None and (gpu.mesh, gpu.triangle) != (cpu[0], cpu[1])):
                triangle_misses.append(pixel)
            picked = renderer.pick_bone(scene, camera, SIZE, *pixel)
            bone = ix.mesh_bone_at(scene, pixel, matrix, SIZE)
            if (picked is None) != (bone is None) or (bone is not None and picked[0].bones[picked[1]] is not bone):
                bone_misses.append(pixel)
        assert all(renderer.gpu_mesh(mesh).skinning is expected for mesh in scene.skinned_meshes)
        assert hits >= 0.9 * len(pixels)
        assert len(triangle_misses) <= TRIANGLE_MISMATCHES, triangle_misses
        assert len(bone_misses) <= BONE_MISMATCHES, bone_misses
    finally:
        renderer.release()


def test_bone_choice_is_the_heaviest_summed_weight_or_the_rigid_parent():
    # Summed over the triangle: joint 0 has 0.9, joint 1 1.25, joint 2 0.85, though joint 0
    # is the heaviest at the first vertex.
    joints = np.array([[0, 1, 2, 0], [0, 1, 2, 0], [0, 1, 2, 0]])
    weights = np.array([[0.6, 0.4, 0, 0], [0.1, 0.45, 0.45, 0], [0.2, 0.4, 0.4, 0]])
    assert heaviest_joint(joints, weights, [0, 1, 2]) == 1
    assert heaviest_joint(joints, weights, [0, 0, 0]) == 0
    assert heaviest_joint(joints, np.zeros_like(weights), [0, 1, 2]) is None
    # A joint number is a matrix row (bone.get_index()), not a place in skeleton.bones (parents
    # first): on the Fox they differ, and the tail's triangles pick the tail.
    fox = load_model(FOX)
    mesh = fox.skinned_meshes[0]
    triangles = mesh.indices.reshape(-1, 3)
    rows = [heaviest_joint(mesh.joints, mesh.weights, t) for t in triangles]
    bones = list(mesh.skeleton.bones)
    moved = [i for i, row in enumerate(rows) if bones[row].get_index() != row]
    assert moved
    for i in moved[:50]:
        assert triangle_bone(mesh, fox, i).get_index() == rows[i]
    robot = load_model(ROBOT)
    torso = next(mesh for mesh in robot.static_meshes if mesh.name == "Torso")
    assert triangle_bone(torso, robot, 5) is rigid_bone(torso, robot) is not None


def test_a_mesh_without_a_skin_picks_the_joint_it_hangs_from_and_hides_what_is_behind(ctx):
    """RobotExpressive's parts have no skin: each picks the bone of the joint node above it;
    the skinned hands behind the body are not picked through it."""
    scene = load_model(ROBOT)
    scene.prepare()
    renderer = Renderer(ctx)
    try:
        camera, matrix = camera_matrix(scene, yaw=0.0, pitch=0.0)
        for name, bone in (("Torso", "Body"), ("Head", "Head"), ("LowerLeg.L", "LowerLeg.L")):
            mesh = next(m for m in scene.static_meshes if m.name == name)
            # The pixel under the part's triangle nearest the camera, at its centroid.
            world = ix.drawn_points(mesh)
            centroids = world[mesh.indices.reshape(-1, 3)].mean(axis=1)
            pixels, _ = ix.project(centroids, matrix, SIZE)
            for pixel in pixels[np.argsort(np.linalg.norm(centroids - camera.position, axis=1))[:20]]:
                hit = renderer.pick(scene, camera, SIZE, *pixel)
                if hit is not None and hit.mesh is mesh:
                    skeleton, index = renderer.pick_bone(scene, camera, SIZE, *pixel)
                    assert skeleton.bones[index].name == bone
                    break
            else:
                raise AssertionError(f"no pixel of {name} picked")
    finally:
        renderer.release()


def test_the_nearest_mesh_wins_whatever_the_drawing_order(ctx):
    """Depth-tested: of two squares, one behind the other, the near one is picked, listed
    first or last; through a hole-free square nothing behind it is."""
    square = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], float)
    near = SkinnedMesh("near", square, [0, 1, 2, 0, 2, 3], None)
    far = SkinnedMesh("far", square * 2, [0, 1, 2, 0, 2, 3], None)
    far.world_matrix = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, -1, 1]], float)
    camera = OrbitCamera(target=(0.0, 0.0, 0.0), distance=6.0)
    matrix = camera.view_matrix() @ camera.projection_matrix(SIZE[0] / SIZE[1])
    centre = ix.project([(0.2, 0.1, 0.0)], matrix, SIZE)[0][0]
    rim = ix.project([(1.5, 0.0, -1.0)], matrix, SIZE)[0][0]
    renderer = Renderer(ctx)
    try:
        for meshes in ([near, far], [far, near]):
            scene = Scene("squares", [], static_meshes=meshes)
            scene.prepare()
            assert renderer.pick(scene, camera, SIZE, *centre).mesh is near
            assert renderer.pick(scene, camera, SIZE, *rim).mesh is far
            assert ix.ray_meshes(*ix.pixel_ray(centre, matrix, SIZE), scene.meshes)[0] is near
    finally:
        renderer.release()


def test_the_id_pass_follows_morph_targets_and_the_pose(ctx):
    """A triangle moved by a morph target, or by its bone, is picked where it is now (on the
    GPU morphing path and with CPU skinning), and not where it was."""
    skeleton = Skeleton("s")
    root = Bone("root", skeleton)
    Bone("tip", skeleton, root, local_matrix=np.eye(4))
    positions = np.array([[-1, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    mesh = SkinnedMesh("tri", positions, [0, 1, 2], skeleton, joints=np.tile([1, 0, 0, 0], (3, 1)),
                       weights=np.tile([1.0, 0, 0, 0], (3, 1)),
                       morph_targets=MorphTargets(np.array([[[3.0, 0, 0]] * 3])))
    scene = Scene("morph", [mesh])
    scene.prepare()
    camera = OrbitCamera(target=(1.5, 0.4, 0.0), distance=8.0)
    matrix = camera.view_matrix() @ camera.projection_matrix(SIZE[0] / SIZE[1])
    before, after = (ix.project([(x, 0.3, 0.0)], matrix, SIZE)[0][0] for x in (0.0, 3.0))
    for options in (dict(), dict(cpu_skinning=True)):
        renderer = Renderer(ctx, **options)
        try:
            mesh.morph_weights = [0.0]
            scene.prepare()
            assert renderer.pick_bone(scene, camera, SIZE, *before) == (skeleton, 1)
            assert renderer.pick(scene, camera, SIZE, *after) is None
            mesh.morph_weights = [1.0]
            assert renderer.pick(scene, camera, SIZE, *before) is None
            assert renderer.pick_bone(scene, camera, SIZE, *after) == (skeleton, 1)
            assert ix.mesh_bone_at(scene, after, matrix, SIZE) is skeleton.bones[1]
            # The pose as it is now, too (CPU skinning skins again when the pose changed).
            mesh.morph_weights = [0.0]
            tip = skeleton.bones[1]
            tip.position = (3.0, 0.0, 0.0)
            scene.prepare()
            assert renderer.pick(scene, camera, SIZE, *before) is None
            assert renderer.pick_bone(scene, camera, SIZE, *after) == (skeleton, 1)
            tip.position = (0.0, 0.0, 0.0)
            scene.prepare()
            assert renderer.pick(scene, camera, SIZE, *after) is None
        finally:
            renderer.release()


def test_a_pick_leaves_the_frame_as_it_was(ctx):
    """The ID pass binds its own 1x1 framebuffer and binds the caller's again: a frame drawn
    after a pick is the frame drawn before it; off the image, nothing is picked."""
    scene = posed("character")
    target = OffscreenTarget(ctx, SIZE)
    renderer = Renderer(ctx)
    try:
        camera, matrix = camera_matrix(scene)
        target.framebuffer.use()
        renderer.render(scene, camera, SIZE, RenderOptions())
        before = target.read()
        pixel = on_mesh_pixels(scene, matrix, 1)[0]
        assert renderer.pick(scene, camera, SIZE, *pixel) is not None
        assert renderer.ctx.fbo is target.framebuffer
        renderer.render(scene, camera, SIZE, RenderOptions())
        assert np.array_equal(target.read(), before)
        assert renderer.pick(scene, camera, SIZE, -1.0, 10.0) is None
        assert renderer.pick(scene, camera, SIZE, 10.0, SIZE[1] + 1.0) is None
    finally:
        renderer.release()
        target.release()


# --- the session ----------------------------------------------------------------------------------
@pytest.fixture
def session(ctx):
    target = OffscreenTarget(ctx, (1280, 720))
    session = ViewerSession(ctx, build_character(), play=False)
    session.run = lambda frames=1: [session.frame((1280, 720), 1 / 60, target.framebuffer) for _ in range(frames)]
    session.run(2)
    yield session
    session.release()
    target.release()


def body_pixel(session):
    """A pixel on the body's mesh, away from every drawn bone segment."""
    view = View(session.camera, session.window_size)
    return view.project((0.0, 0.35, 0.3))


def test_a_mesh_click_in_the_viewer_goes_through_the_id_pass(session, monkeypatch):
    def no_ray_cast(*args):
        raise AssertionError("the ray cast ran with a GL context")

    monkeypatch.setattr(ix, "mesh_bone_at", no_ray_cast)
    session.editor.select(session.scene.find_bone("leftArm"))
    io = imgui.get_io()
    pixel = body_pixel(session)
    io.add_mouse_pos_event(*map(float, pixel))
    session.run()
    io.add_mouse_button_event(0, True)
    session.run()
    io.add_mouse_button_event(0, False)
    session.run()
    assert session.editor.selected is session.scene.find_bone("body")


def test_without_a_context_or_gpu_picking_the_ray_cast_answers(session, monkeypatch):
    view = View(session.camera, session.window_size)
    pixel = body_pixel(session)
    gestures = Gestures()
    body = session.scene.find_bone("body")
    assert gestures.mesh_bone_at(session, view, pixel) is body       # the ID pass
    calls = []
    real = ix.mesh_bone_at
    monkeypatch.setattr(ix, "mesh_bone_at", lambda *args: calls.append(args) or real(*args))
    gestures.gpu_picking = False
    assert gestures.mesh_bone_at(session, view, pixel) is body
    gestures.gpu_picking = True

    class NoContext:
        ctx = None
        scene, camera = session.scene, session.camera

    assert gestures.mesh_bone_at(NoContext(), view, pixel) is body
    assert len(calls) == 2


def test_hover_at_rest_picks_the_mesh_with_the_id_pass(session, monkeypatch):
    monkeypatch.setattr(gestures_module, "HOVER_REST_SECONDS", 0.0)
    monkeypatch.setattr(ix, "mesh_bone_at", lambda *args: pytest.fail("the ray cast ran"))
    imgui.get_io().add_mouse_pos_event(*map(float, body_pixel(session)))
    session.run(2)
    assert session.gestures.hovered is session.scene.find_bone("body")
