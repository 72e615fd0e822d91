"""Dual-quaternion skinning (mesh.skinning = "dq"): against libigl's dqs (recorded by
tests/make_libigl_dqs_reference.py), the twisted limb that keeps its radius, scale blended
linearly, the GPU picture against the CPU path's, and the option in every command."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from make_libigl_dqs_reference import CASES, REFERENCE, input_digest, posed
from twisted_limb import RADIUS, build_limb, joint_ring, twist
from viewer.errors import ViewerError
from viewer.model import Bone, Scene, Skeleton, SkinnedMesh, native
from viewer.model.dual_quaternions import bone_dual_quaternions, dq_skin_positions, reference_bone_dual_quaternions
from viewer.model.mesh import bounds, place_points, skin, skin_positions
from viewer.model.transforms import compose

ROOT = Path(__file__).resolve().parents[1]
CESIUM_MAN = ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"
KEYS = [f"{name}/{time:g}" for name, _, times in CASES for time in times]


@pytest.fixture(scope="module")
def reference():
    with np.load(REFERENCE) as data:
        return {key: data[key] for key in data.files}


@pytest.fixture(params=["C", "numpy"])
def kernel(request, monkeypatch):
    """Each test twice: the compiled kernel (where it is built) and numpy's reference."""
    if request.param == "numpy":
        monkeypatch.setattr(native, "ckernel", None)
    return request.param


def clip_time(key: str):
    name, time = key.split("/")
    clip = next(clip for model, clip, _ in CASES if model == name)
    return name, clip, float(time)


@pytest.mark.parametrize("key", KEYS)
def test_equals_libigls_dqs_on_the_same_weights_bones_and_rest_vertices(key, reference, kernel):
    """Each skinned mesh at each recorded frame: the inputs are the recorded ones (the rest
    vertices, joints and weights bit for bit; each bone's rigid part within rounding), and
    ``mesh.skinned_positions()`` with skinning "dq" is libigl's result placed by the mesh's
    world matrix, within 1e-5 of the mesh's size; linear blend skinning is not (the comparison
    tells the two apart)."""
    _, meshes = posed(*clip_time(key))
    assert meshes
    for index, mesh, finals in meshes:
        case = f"{key}/{index}"
        assert input_digest(mesh) == str(reference[f"{case}/sha256"])
        expected = reference[f"{case}/result"]
        size = float(np.linalg.norm(np.subtract(*bounds(expected))))
        # the bones libigl was given are this model's now: the same rotations (q or -q) and translations
        packed = bone_dual_quaternions(finals)
        dots = np.abs(np.einsum("ji,ji->j", packed[:, 0], reference[f"{case}/quaternions"]))
        np.testing.assert_allclose(dots, 1.0, atol=1e-6)
        np.testing.assert_allclose(finals[:, 3, :3], reference[f"{case}/translations"], atol=1e-6 * size)
        assert np.abs(skin_positions(mesh.positions, mesh.joints, mesh.weights, finals, mode="dq")
                      - expected).max() <= 1e-5 * size
        mesh.skinning = "dq"
        ours = mesh.skinned_positions()
        placed = place_points(expected, mesh.world_matrix)
        assert np.abs(ours - placed).max() <= 1e-5 * float(np.linalg.norm(np.subtract(*bounds(placed))))
        positions, _ = mesh.skinned()
        np.testing.assert_allclose(positions, ours, atol=1e-9 * max(1.0, np.abs(ours).max()))
        linear = skin_positions(mesh.positions, mesh.joints, mesh.weights, finals)
        assert np.abs(linear - expected).max() > 1e-4 * size


def test_the_sign_of_a_bones_quaternion_changes_nothing(kernel):
    """q and -q are one rotation: negating any bones' dual quaternions leaves every vertex where
    it was (libigl's hemisphere check: the sum so far decides each influence's sign)."""
    _, meshes = posed("CesiumMan", 0, 1.0)
    _, mesh, finals = meshes[0]
    packed = bone_dual_quaternions(finals)
    flipped = packed.copy()
    flipped[::2, :2] *= -1.0
    a = dq_skin_positions(mesh.positions, mesh.joints, mesh.weights, packed)[0]
    b = dq_skin_positions(mesh.positions, mesh.joints, mesh.weights, flipped)[0]
    np.testing.assert_allclose(a, b, atol=1e-12)
    if native.ckernel is not None:
        out = np.empty((len(mesh.positions), 3))
        assert native.ckernel.skin_points_dq(mesh.positions, mesh.joints, mesh.weights, flipped, out) == 0
        np.testing.assert_allclose(out, a, atol=1e-12)


@pytest.mark.parametrize("influences", [4, 8])
def test_the_compiled_twin_is_numpys_and_declines_what_it_cannot_take(influences):
    rng = np.random.default_rng(influences)
    positions = rng.normal(size=(400, 3)).astype(np.float32)
    joints = rng.integers(0, 20, (400, influences)).astype(np.int32)
    weights = rng.random((400, influences)).astype(np.float32)
    # quaternions not of unit length: linear parts with shear, the polar decomposition's work
    matrices = compose(rng.uniform(0.5, 2.0, (20, 3)), rng.normal(size=(20, 4)), rng.normal(size=(20, 3)))
    matrices[:5, :3, :3] *= [[-1.0], [1.0], [1.0]]  # mirrored bones
    matrices[5, :3, 2] = 0.0  # a singular one: no polar factor but numpy's SVD
    packed = bone_dual_quaternions(matrices)
    # the compiled per-bone conversion (Newton's polar factor) is numpy's (an SVD's) within rounding
    np.testing.assert_allclose(packed, reference_bone_dual_quaternions(matrices), atol=1e-10)
    reference = dq_skin_positions(positions, joints, weights, packed)[0]
    np.testing.assert_allclose(skin_positions(positions, joints, weights, matrices, mode="dq"), reference,
                               atol=1e-12)
    if native.ckernel is not None:
        out = np.full((400, 3), 7.0)
        assert native.ckernel.skin_points_dq(positions, joints + 20, weights, packed, out) == -1
        assert (out == 7.0).all()
        assert native.ckernel.skin_points_dq(positions, joints.astype(np.int64), weights, packed, out) == -1
        assert native.ckernel.skin_points_dq(positions.astype(np.float64), joints, weights, packed, out) == 0
        np.testing.assert_allclose(out, reference, atol=1e-12)
        general = np.zeros(20, bool)
        assert native.ckernel.dq_bones(matrices, out := np.empty((20, 4, 4)), general) == 1 and general[5]
        assert native.ckernel.dq_bones(matrices[:, :3], out, general) == -1


def test_a_limb_twisted_90_degrees_keeps_its_radius(kernel):
    """The ring at the joint (weights 0.5 / 0.5), the lower bone turned 90 degrees about the
    limb: dual quaternions keep the radius; linear blend skinning shrinks it to cos 45 degrees
    of it (the candy wrapper). On the CPU paths a user reaches: skinned_positions and skinned."""
    scene = build_limb()
    twist(scene, 90.0)
    mesh = scene.skinned_meshes[0]
    ring = joint_ring(scene)
    assert len(ring) and np.allclose(mesh.weights[ring, :2], 0.5)
    for mode, expected in (("lbs", np.cos(np.radians(45.0))), ("dq", 1.0)):
        mesh.skinning = mode
        for positions in (mesh.skinned_positions(), mesh.skinned()[0]):
            radius = np.linalg.norm(positions[ring, 1:], axis=1) / RADIUS
            np.testing.assert_allclose(radius, expected, atol=1e-6)
            np.testing.assert_allclose(positions[ring, 0], 1.0, atol=1e-6)  # no slide along the limb
    # the normals of the twisted ring still point away from the axis
    positions, normals = mesh.skinned()
    outward = positions[ring, 1:] / np.linalg.norm(positions[ring, 1:], axis=1, keepdims=True)
    np.testing.assert_allclose(np.einsum("vi,vi->v", normals[ring, 1:], outward), 1.0, atol=1e-6)


def scaled_pair(scale):
    """Two bones that do not turn: the second scaled by ``scale`` about its origin at x = 1; a
    vertex at x = 1.5 weighted 0.5 / 0.5."""
    skeleton = Skeleton("pair")
    root = Bone("a", skeleton)
    Bone("b", skeleton, root, local_matrix=compose([1.0, 1.0, 1.0], [0, 0, 0, 1], [1.0, 0.0, 0.0]))
    skeleton.bones[1].scaling = scale
    mesh = SkinnedMesh("pair", [[1.5, 0.2, 0.1], [1.5, -0.3, 0.2], [2.0, 0.0, 0.3]], [0, 1, 2], skeleton,
                       joints=[[0, 1, 0, 0]] * 3, weights=[[0.5, 0.5, 0, 0], [0.3, 0.7, 0, 0], [0, 1, 0, 0]])
    return Scene("pair", [mesh]), mesh


@pytest.mark.parametrize("scale", [(2.0, 2.0, 2.0), (1.0, 3.0, 0.5)])
def test_scale_is_blended_linearly(scale, kernel):
    """As libigl and Maya split a bone: the rigid part as dual quaternions, the rest linearly;
    so bones that do not turn give linear blend skinning's vertices, scaled uniformly or not."""
    _, mesh = scaled_pair(scale)
    mesh.skinning = "lbs"
    linear = mesh.skinned_positions()
    mesh.skinning = "dq"
    np.testing.assert_allclose(mesh.skinned_positions(), linear, atol=1e-12)
    np.testing.assert_allclose(mesh.skinned()[0], linear, atol=1e-12)
    assert not np.allclose(linear, mesh.positions)  # the scale moved them


def test_a_mirrored_bone_moves_its_own_vertices_as_its_matrix(kernel):
    """A mirror (negative determinant) goes into the scale part; a vertex of that bone alone
    goes through the bone's matrix. (Blending a mirrored bone with an unmirrored one has no one
    answer in dual-quaternion skinning: libigl and Maya take rotations only.)"""
    _, mesh = scaled_pair((-1.0, 1.0, 1.0))
    mesh.skinning = "lbs"
    linear = mesh.skinned_positions()
    mesh.skinning = "dq"
    np.testing.assert_allclose(mesh.skinned_positions()[2], linear[2], atol=1e-12)
    np.testing.assert_allclose(linear[2], [0.0, 0.0, 0.3], atol=1e-6)


def test_a_rigid_bone_alone_moves_its_vertices_exactly_as_its_matrix():
    """One influence of weight 1: the vertex goes through the bone's own matrix (turned,
    scaled and moved), whatever the skinning."""
    rng = np.random.default_rng(5)
    quaternions = rng.normal(size=(6, 4))
    matrices = compose(np.ones((6, 3)) * [[1.5, 0.7, 1.2]], quaternions / np.linalg.norm(quaternions, axis=1)[:, None],
                       rng.normal(size=(6, 3)))
    positions = rng.normal(size=(60, 3)).astype(np.float32)
    joints = np.c_[rng.integers(0, 6, 60), np.zeros((60, 3), int)].astype(np.int32)
    weights = np.tile(np.float32([1, 0, 0, 0]), (60, 1))
    expected = np.einsum("vi,vij->vj", positions.astype(np.float64), matrices[joints[:, 0], :3, :3]) \
        + matrices[joints[:, 0], 3, :3]
    np.testing.assert_allclose(skin_positions(positions, joints, weights, matrices, mode="dq"), expected, atol=1e-12)


def test_bad_skinning_is_one_error_line():
    scene = build_limb()
    mesh = scene.skinned_meshes[0]
    for value in ("quat", "", None, 1, "dual"):
        with pytest.raises(ViewerError) as error:
            mesh.skinning = value
        assert str(error.value).startswith("mesh 'limb' skinning: expected lbs") and "\n" not in str(error.value)
    assert mesh.skinning == "lbs"
    mesh.skinning = "DQ"
    assert mesh.skinning == "dq"
    with pytest.raises(ViewerError, match="skinning: expected lbs"):
        scene.set_skinning("volume")
    scene.set_skinning("lbs")
    assert mesh.skinning == "lbs"


# --- the GPU path ------------------------------------------------------------------------------
SIZE = (160, 160)


@pytest.fixture
def headless():
    """A context per test: an in-process command elsewhere in the same worker leaves no EGL
    context current (release_egl_current), so a module's context would not be current after it."""
    from viewer.render.headless import HeadlessRenderer

    with HeadlessRenderer(SIZE) as renderer:
        yield renderer


@pytest.fixture
def renderers(headless):
    """One renderer per skinning path, shared by the test's pictures (each renderer keeps its
    light: made once, not once a picture)."""
    from viewer.render.renderer import Renderer

    made = {(storage, cpu): Renderer(headless.ctx, bone_storage=storage, cpu_skinning=cpu)
            for storage, cpu in (("auto", True), ("auto", False), ("uniform", False), ("texture", False))}
    yield made
    for renderer in made.values():
        renderer.release()


def picture(headless, renderers, scene, camera, storage: str, cpu: bool) -> np.ndarray:
    from viewer.options import RenderOptions

    renderer = renderers[(storage, cpu)]
    headless.target.framebuffer.use()
    renderer.render(scene, camera, SIZE, RenderOptions(show_skeleton=False, show_grid=False))
    image = headless.target.read().astype(int)
    renderer.forget(scene)
    return image


def differing(a, b, threshold=24) -> float:
    return float((np.abs(a - b).max(axis=-1) > threshold).mean())


def limb_camera():
    from viewer.camera import OrbitCamera

    return OrbitCamera(target=(1.0, 0.0, 0.0), distance=3.2, yaw=0.0, pitch=0.0, fov_y=35)


def eight_influences(scene):
    """The limb with four more influences per vertex, on other bones of a longer skeleton: the
    shader's second set (in_joints1, in_weights1) blended too."""
    mesh = scene.skinned_meshes[0]
    skeleton = mesh.skeleton
    for k in range(2):
        Bone(f"extra{k}", skeleton, skeleton.bones[1], local_matrix=compose([1, 1, 1], [0, 0, 0, 1], [0.2, 0.1 * k, 0]))
        skeleton.bones[2 + k].rotation_quaternion = [0.0, np.sin(0.4 + k), 0.0, np.cos(0.4 + k)]
    count = len(mesh.positions)
    rng = np.random.default_rng(8)
    extra = rng.random((count, 4)).astype(np.float32) * 0.15
    joints = np.c_[mesh.joints, rng.integers(0, 4, (count, 4))]
    weights = np.c_[mesh.weights, extra]
    scene.skinned_meshes[0] = SkinnedMesh("eight", mesh.positions, mesh.indices, skeleton, joints=joints,
                                          weights=weights, normals=mesh.normals, colors=mesh.colors)
    assert scene.skinned_meshes[0].influences == 8
    return scene


@pytest.mark.parametrize("model", ["limb", "CesiumMan", "eight influences"])
def test_the_gpu_picture_equals_the_cpu_paths(headless, renderers, model):
    """Uniform array and bone texture against numpy's dual-quaternion vertices, within the
    rasteriser's tolerance; and the dual-quaternion picture is not the linear blend one."""
    from viewer.camera import framed_camera
    from viewer.loaders import load_model

    if model == "CesiumMan":
        scene = load_model(CESIUM_MAN)
        scene.animations[0].apply(1.0)
        camera = framed_camera(scene)
    else:
        scene = build_limb()
        twist(scene, 120.0)
        if model == "eight influences":
            scene = eight_influences(scene)
        camera = limb_camera()
    scene.set_skinning("dq")
    cpu = picture(headless, renderers, scene, camera, "auto", True)
    for storage in ("uniform", "texture"):
        assert differing(picture(headless, renderers, scene, camera, storage, False), cpu) < 0.002, storage
    scene.set_skinning("lbs")
    linear = picture(headless, renderers, scene, camera, "auto", False)
    assert differing(linear, cpu) > (0.001 if model == "CesiumMan" else 0.02)
    # a mesh switched back and forth redraws as it is now (no stale program or upload)
    scene.set_skinning("dq")
    assert differing(picture(headless, renderers, scene, camera, "auto", False), cpu) < 0.002


def test_picking_follows_the_skinning(headless):
    """The ID pass draws the mesh as the frame does: with dual quaternions the twisted joint is
    round, so a pixel just inside the kept radius hits the limb, and misses it with LBS."""
    from viewer.render.renderer import Renderer

    scene = build_limb()
    twist(scene, 180.0)
    camera = limb_camera()
    renderer = Renderer(headless.ctx)
    try:
        view, projection = camera.view_matrix(), camera.projection_matrix(SIZE[0] / SIZE[1])
        point = np.array([1.0, 0.9 * RADIUS, 0.0, 1.0]) @ view @ projection
        x = (point[0] / point[3] + 1.0) / 2.0 * SIZE[0]
        y = (1.0 - point[1] / point[3]) / 2.0 * SIZE[1]
        scene.set_skinning("dq")
        assert renderer.pick(scene, camera, SIZE, x, y) is not None
        scene.set_skinning("lbs")  # LBS collapses the ring at 180 degrees to the axis
        assert renderer.pick(scene, camera, SIZE, x, y) is None
    finally:
        renderer.release()


# --- the option, in every command that draws frames -------------------------------------------
COMMANDS = ("render", "view", "serve", "batch", "synth")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_a_bad_skinning_in_one_line(command, cli, tmp_path):
    result = cli(command, "--skinning", "quat", *(["--listen", "0"] if command == "serve" else []),
                 *([str(tmp_path), "--out", str(tmp_path / "out")] if command in ("batch", "synth") else []))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "--skinning: expected lbs (linear blend) or dq (dual quaternions), got 'quat'" in lines[0]
    assert result.stdout == ""


@pytest.fixture
def drawn_skinning(monkeypatch):
    """Each mesh's skinning when the headless renderer draws, in this process."""
    from viewer.render.headless import HeadlessRenderer

    seen = []
    original = HeadlessRenderer.render

    def render(self, scene, camera, options, *args, **kwargs):
        seen.append([mesh.skinning for mesh in scene.skinned_meshes])
        return original(self, scene, camera, options, *args, **kwargs)

    monkeypatch.setattr(HeadlessRenderer, "render", render)
    return seen


def test_render_and_view_draw_with_the_skinning_asked(tmp_path, drawn_skinning, monkeypatch, capsys):
    from PIL import Image

    from viewer.cli import main

    args = [str(CESIUM_MAN), "--time", "1", "--size", "120x120", "--no-grid", "--no-skeleton"]
    assert main(["render", *args, "--out", str(tmp_path / "lbs.png")]) == 0
    assert main(["render", *args, "--out", str(tmp_path / "dq.png"), "--skinning", "dq"]) == 0
    assert drawn_skinning == [["lbs"], ["dq"]]
    lbs, dq = (np.asarray(Image.open(tmp_path / f"{name}.png")).astype(int) for name in ("lbs", "dq"))
    assert differing(lbs, dq) > 0.001
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    drawn_skinning.clear()
    assert main(["view", str(CESIUM_MAN), "--frames", "1", "--screenshot", str(tmp_path / "v.png"), "--size", "32x32",
                 "--skinning", "dq"]) == 0
    assert drawn_skinning == [["dq"]]


def test_batch_and_synth_take_the_skinning(tmp_path, cli):
    library = tmp_path / "library"
    library.mkdir()
    shutil.copy(CESIUM_MAN, library)
    result = cli("batch", library, "--out", tmp_path / "report", "--workers", "1", "--size", "32x32",
                 "--gif-seconds", "0.2", "--skinning", "dq")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "report" / "report.json").read_text())["options"]["skinning"] == "dq"
    result = cli("synth", library, "--out", tmp_path / "synth", "--count", "1", "--size", "32x32", "--workers", "1",
                 "--skinning", "dq")
    assert result.returncode == 0, result.stderr
    annotations = json.loads((tmp_path / "synth" / "annotations.json").read_text())
    assert annotations["info"]["ranges"]["skinning"] == "dq"


def test_the_recorded_reference_names_its_inputs(reference):
    """Every recorded case keeps libigl's inputs beside its output, and the sha256 of the inputs
    that travel bit for bit."""
    assert str(reference["libigl_version"]) == "2.5.1"
    for key in KEYS:
        case = f"{key}/0"
        digest = hashlib.sha256()
        for name in ("rest", "joints", "weights"):
            array = reference[f"{case}/{name}"]
            digest.update(np.ascontiguousarray(array.astype(np.float32) if name == "rest" else array).tobytes())
        assert digest.hexdigest() == str(reference[f"{case}/sha256"])


def test_the_panel_switches_the_skinning_and_an_opened_model_keeps_it(panel_session):
    from panel_driver import click

    session = panel_session
    (mesh,) = session.scene.skinned_meshes
    assert mesh.skinning == "lbs" and session.editor.skinning == "lbs"
    choose(session, "DQ")
    assert mesh.skinning == "dq" and "dual quaternions" in str(session.editor.status)
    session.open_model(CESIUM_MAN)
    assert [m.skinning for m in session.scene.skinned_meshes] == ["dq"]
    session.run(2)
    choose(session, "LBS")
    assert [m.skinning for m in session.scene.skinned_meshes] == ["lbs"]


def choose(session, label):
    """The skinning combo opened and ``label`` chosen."""
    from panel_driver import click

    click(session, "skinning")
    session.run()
    click(session, f"skinning {label}")
    session.run()


def test_side_by_side_draws_linear_blend_left_and_dual_quaternions_right(tmp_path):
    """The panel's "LBS | DQ": the view right of the panel split in two, the left half as the
    LBS view draws that part of the model and the right half as the DQ view; the meshes keep
    their own skinning."""
    from panel_driver import headless_session

    scene = build_limb(stripes=(0.12, 0.3, 0.6, 1.0))
    twist(scene, 150.0)
    with headless_session(scene=scene) as session:
        session.editor.display.show_skeleton = session.editor.display.show_grid = False
        choose(session, "LBS | DQ")
        assert session.editor.skinning == "both" and session.scene.skinned_meshes[0].skinning == "lbs"
        session.run(2)
        both = session.target.read().astype(int)
        width = both.shape[1]
        left = int(round(session.camera.screen_offset * width))
        half = (width - left) // 2
        halves = []
        for mode in ("lbs", "dq"):
            session.editor.set_skinning(mode)  # the single view, in a camera as wide as a half
            session.run(2)
            halves.append(session.target.read().astype(int))
        assert session.editor.skinning == "dq"
        # The twisted joint, in the middle of each half: thin on the left, as thick as the limb on the right.
        column = lambda image, x: (np.ptp(image[:, x, :3], axis=1) > 60).sum()  # noqa: E731  (the limb's saturated colours)
        lbs_joint, dq_joint = column(both, left + half // 2), column(both, left + half + half // 2)
        assert dq_joint > 1.5 * lbs_joint > 0
        assert differing(halves[0], halves[1]) > 0.005  # the single views differ too


def test_an_instanced_crowd_of_twisted_limbs_equals_drawing_each():
    """A crowd's mesh with skinning "dq": one instanced draw from the packed bone texture
    equals the limbs drawn one by one with dual quaternions (not with linear blend)."""
    from viewer import Crowd
    from viewer.options import RenderOptions
    from viewer.render.headless import HeadlessRenderer

    options = RenderOptions(show_skeleton=False, show_grid=False)
    scenes = [build_limb() for _ in range(3)]
    worlds = np.array([compose([1.0, 1.0, 1.0], [0, 0, 0, 1], [0.0, 0.7 * k - 0.7, 0.0]) for k in range(3)])
    meshes = []
    for k, (scene, world) in enumerate(zip(scenes, worlds)):
        twist(scene, 60.0 * (k + 1))
        mesh = scene.skinned_meshes[0]
        mesh.world_matrix, mesh.skinning = world, "dq"
        meshes.append(mesh)
    one_by_one = Scene("limbs", meshes)
    base = build_limb().skinned_meshes[0]
    base.skinning = "dq"
    crowd = Crowd(base, [scene.skeletons[0] for scene in scenes], worlds)
    camera = limb_camera()
    with HeadlessRenderer(SIZE, bone_storage="texture") as headless:
        reference = headless.render(one_by_one, camera, options).astype(int)
        instanced = headless.render_crowd(crowd, camera, options).astype(int)
        assert differing(reference, instanced) < 0.003
        for mesh in meshes:
            mesh.skinning = "lbs"
        assert differing(headless.render(one_by_one, camera, options).astype(int), instanced) > 0.01


def test_apply_pose_as_bind_writes_the_shape_drawn_with_dual_quaternions(tmp_path):
    """save_gltf(apply_pose_as_bind=True) bakes the shape as drawn: a dq mesh's twisted joint
    keeps its radius in the written file."""
    from viewer.gltf import load_gltf
    from viewer.gltf.writer import save_gltf

    scene = build_limb()
    twist(scene, 90.0)
    scene.set_skinning("dq")
    drawn = scene.skinned_meshes[0].skinned_positions()
    baked = load_gltf(save_gltf(scene, tmp_path / "baked.glb", apply_pose_as_bind=True))
    (mesh,) = baked.skinned_meshes
    np.testing.assert_allclose(mesh.positions, drawn, atol=1e-6)
    radius = np.linalg.norm(mesh.positions[joint_ring(scene), 1:], axis=1) / RADIUS
    np.testing.assert_allclose(radius, 1.0, atol=1e-6)
