"""glTF loading: every sample and edge case against an independent evaluation, and rendering."""

import logging
import re
import shutil

import numpy as np
import pytest
from PIL import Image

from gltf_cases import CASES, make_case
from gltf_reference import Document
from gltf_reference import skinned_positions as reference_positions
from samples import ROBOT, SAMPLES_DIR
from viewer import ViewerError
from viewer.gltf import load_gltf
from viewer.camera import framed_camera
from viewer.render.headless import HeadlessRenderer
from viewer.options import RenderOptions
from viewer.render.renderer import Renderer

SAMPLES = ["SimpleSkin/SimpleSkin.gltf", "RiggedSimple/RiggedSimple.gltf", "RiggedFigure/RiggedFigure.gltf",
           "CesiumMan/CesiumMan.gltf", "CesiumMan/CesiumMan.glb", "Fox/Fox.gltf", "Fox/Fox.glb"]


def model_size(scene):
    low, high = scene.rest_bounds
    return float(np.linalg.norm(high - low))


def assert_matches_reference(path, scene, animation, times):
    size = model_size(scene)
    for t in times:
        if animation is not None:
            scene.animations[animation].apply(t)
        expected = reference_positions(path, animation, t)
        assert sorted(expected) == sorted(m.node_index for m in scene.skinned_meshes)
        for mesh in scene.skinned_meshes:
            got = mesh.skinned_positions()
            want = expected[mesh.node_index]
            assert got.shape == want.shape
            error = float(np.abs(got - want).max())
            assert error <= 1e-5 * size, f"{path.name} animation {animation} t={t}: error {error:.3g} (size {size:.3g})"


@pytest.mark.parametrize("sample", SAMPLES)
def test_sample_matches_independent_skinning(sample):
    path = SAMPLES_DIR / sample
    scene = load_gltf(path)
    assert_matches_reference(path, scene, None, [0.0])
    for index, clip in enumerate(scene.animations):
        assert clip.duration > 0
        assert_matches_reference(path, scene, index, [0.0, 0.37 * clip.duration, 0.81 * clip.duration, clip.duration])


@pytest.mark.parametrize("kind", CASES)
def test_edge_case_matches_independent_skinning(kind, tmp_path):
    path = make_case(kind, tmp_path)
    scene = load_gltf(path)
    assert scene.animations, "every case animates something"
    clip = scene.animations[0]
    assert_matches_reference(path, scene, 0, [0.0, 0.3, 0.77, 1.5, clip.duration])
    # The pose really changes over time (the comparison is not vacuous).
    clip.apply(0.0)
    start = scene.skinned_meshes[0].skinned_positions()
    clip.apply(0.77)
    assert np.abs(scene.skinned_meshes[0].skinned_positions() - start).max() > 0.05


@pytest.mark.parametrize("mode", ["glb", "external"])
def test_binary_and_external_buffer_forms(mode, tmp_path):
    from gltf_cases import Builder, chain, inverse_binds, worm_mesh, animate
    import pygltflib as g

    b = Builder()
    joints = chain(b, 3, root=True)
    b.node("mesh", root=True, mesh=worm_mesh(b, 3, 0), skin=0)
    b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=inverse_binds(b, joints)))
    animate(b, joints[1:])
    path = b.save(tmp_path / ("model.glb" if mode == "glb" else "model.gltf"), mode)
    scene = load_gltf(path)
    assert_matches_reference(path, scene, 0, [0.0, 0.9])


def test_structure_of_a_loaded_scene(tmp_path):
    scene = load_gltf(make_case("shared_and_multiple_skins", tmp_path))
    a1, a2, b = scene.skinned_meshes
    assert a1.skeleton is a2.skeleton and a1.skeleton is not b.skeleton
    assert len(scene.skeletons) == 2
    assert [m.node_index for m in scene.skinned_meshes] == [5, 6, 7]
    # Bones are linked to their joint nodes, indexed by joint order.
    for bone in a1.skeleton.bones:
        assert bone.get_transform_node() is scene.nodes[[n.name for n in scene.nodes].index(bone.name)]
    assert [bone.get_index() for bone in a1.skeleton.bones] == [0, 1, 2]


def test_non_joint_nodes_become_unuploaded_bones(tmp_path):
    scene = load_gltf(make_case("non_joint_between_joints", tmp_path))
    skeleton = scene.skinned_meshes[0].skeleton
    indices = {bone.name: bone.get_index() for bone in skeleton.bones}
    assert indices == {"hip": 0, "spacer": -1, "upper0": 1, "upper1": 2}
    assert skeleton.get_transform_matrices().shape[0] == 4


def test_animation_writes_into_nodes_and_editing_a_node_moves_the_mesh(tmp_path):
    scene = load_gltf(SAMPLES_DIR / "RiggedSimple/RiggedSimple.gltf")
    mesh = scene.skinned_meshes[0]
    rest = mesh.skinned_positions()
    top_bone = mesh.skeleton.bones[-1]
    node = top_bone.get_transform_node()
    node.rotation_quaternion = [0.0, 0.0, np.sin(0.4), np.cos(0.4)]
    assert np.abs(mesh.skinned_positions() - rest).max() > 0.2
    top_bone.return_to_rest()   # the seed: return_to_rest writes the rest pose into the node
    np.testing.assert_allclose(mesh.skinned_positions(), rest, atol=1e-5)


@pytest.fixture(scope="module")
def headless():
    with HeadlessRenderer((256, 256)) as renderer:
        yield renderer


def coverage(image):
    """Fraction of pixels that differ from the background gradient column."""
    rgb = image[:, :, :3].astype(int)
    background = np.median(rgb[:, :8], axis=1, keepdims=True)
    return (np.abs(rgb - background).max(axis=2) > 30).mean()


@pytest.mark.parametrize("sample", ["SimpleSkin/SimpleSkin.gltf", "RiggedSimple/RiggedSimple.gltf",
                                    "RiggedFigure/RiggedFigure.gltf", "CesiumMan/CesiumMan.glb", "Fox/Fox.glb"])
def test_samples_render_and_gpu_matches_cpu(sample, headless):
    scene = load_gltf(SAMPLES_DIR / sample)
    camera = framed_camera(scene, yaw=30, pitch=10)
    plain = RenderOptions(show_skeleton=False, show_grid=False)
    cpu = Renderer(headless.ctx, cpu_skinning=True)
    try:
        frames = []
        for fraction in (0.2, 0.6):
            scene.animations[0].apply(fraction * scene.animations[0].duration)
            gpu_image = headless.render(scene, camera, plain)
            headless.target.framebuffer.use()
            cpu.render(scene, camera, headless.size, plain)
            cpu_image = headless.target.read()
            assert 0.02 < coverage(gpu_image) < 0.9, "the model is in view and not filling everything"
            differing = (np.abs(gpu_image[:, :, :3].astype(int) - cpu_image[:, :, :3]).max(axis=2) > 24).mean()
            assert differing < 0.005
            frames.append(gpu_image)
        assert (np.abs(frames[0].astype(int) - frames[1]).max(axis=2) > 24).mean() > 0.002, "animation moves it"
    finally:
        cpu.release()


def test_textured_sample_shows_its_texture(headless):
    scene = load_gltf(SAMPLES_DIR / "CesiumMan/CesiumMan.glb")
    assert scene.skinned_meshes[0].submeshes[0].base_color_texture is not None
    image = headless.render(scene, framed_camera(scene), RenderOptions(show_skeleton=False, show_grid=False))
    rgb = image[:, :, :3].astype(int)
    # The CesiumMan texture has saturated greens and blues that no untextured shading makes.
    greenish = (rgb[:, :, 1] > rgb[:, :, 0] + 40) & (rgb[:, :, 1] > 80)
    assert greenish.sum() > 30


def test_cli_renders_an_animation_time_and_a_sequence(tmp_path, cli):
    fox = str(SAMPLES_DIR / "Fox/Fox.glb")
    a = cli("render", fox, "--animation", "Walk", "--time", "0.2", "--out", str(tmp_path / "walk.png"),
                "--size", "160x120")
    b = cli("render", fox, "--animation", "1", "--time", "0.2", "--out", str(tmp_path / "one.png"),
                "--size", "160x120")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert np.array_equal(np.asarray(Image.open(tmp_path / "walk.png")), np.asarray(Image.open(tmp_path / "one.png")))
    seq = cli("render", fox, "--animation", "Run", "--frames", "0:0.5:0.1", "--out-dir", str(tmp_path / "seq"),
                  "--size", "96x72")
    assert seq.returncode == 0, seq.stderr
    files = sorted((tmp_path / "seq").iterdir())
    assert [f.name for f in files] == [f"frame_{i:05d}.png" for i in range(6)]
    assert "6/6 frames" in seq.stderr
    first, last = (np.asarray(Image.open(f)).astype(int) for f in (files[0], files[-1]))
    assert np.abs(first - last).max() > 30


@pytest.mark.parametrize("args, message", [
    (["--animation", "Jump"], "--animation Jump: no animation named 'Jump' (this model has 3 animations: 'Survey', "
                              "'Walk', 'Run'; or give its number, 0 to 2)"),
    (["--animation", "3"], "--animation 3: no animation number 3 (this model has 3 animations, numbered 0 to 2: "
                           "'Survey', 'Walk', 'Run')"),
    (["--frames", "0:1"], "expected START:END:STEP"),
    (["--frames", "2:1:0.1", "--out-dir", "x"], "need START <= END"),
])
def test_cli_animation_errors(args, message, tmp_path, cli):
    result = cli("render", str(SAMPLES_DIR / "Fox/Fox.glb"), "--out", str(tmp_path / "a.png"), *args)
    assert result.returncode == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_an_animation_not_found_on_a_model_of_one_says_one_not_zero(tmp_path, cli):
    """Issue 47: '(this model has 0: Take 001)' read as 'has zero animations'."""
    result = cli("render", str(SAMPLES_DIR / "CesiumMan/CesiumMan.glb"), "--out", str(tmp_path / "a.png"),
                 "--animation", "Nope")
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        "boneviewer: error: --animation Nope: no animation named 'Nope' (this model has 1 animation: 'animation0'; "
        "or give its number, 0)"]


def test_model_copied_elsewhere_still_loads(tmp_path):
    # The samples are self-contained; a copy in another folder loads the same.
    shutil.copy(SAMPLES_DIR / "RiggedFigure/RiggedFigure.gltf", tmp_path / "figure.gltf")
    assert len(load_gltf(tmp_path / "figure.gltf").skinned_meshes[0].skeleton.bones) == 19


def test_weight_warning_reports_the_range_of_the_off_sums(caplog):
    # RobotExpressive's hands have weights summing to well over 1; the warning names the
    # range of the sums that are off, read here from the file independently of the loader.
    with caplog.at_level(logging.WARNING, logger="boneviewer"):
        load_gltf(ROBOT)
    lines = [r.getMessage() for r in caplog.records if "do not sum to 1" in r.getMessage()]
    assert len(lines) == 1, lines
    found = re.search(r"mesh (\d+): (\d+) of (\d+) vertices .* \(sums ([0-9.]+)\.\.([0-9.]+)\)", lines[0])
    assert found, lines[0]
    mesh, off_count, count, low, high = found.groups()
    document = Document(ROBOT)
    sums = np.concatenate([
        sum(document.accessor(index).sum(axis=1) for name, index in primitive["attributes"].items()
            if name.startswith("WEIGHTS_"))
        for primitive in document.json["meshes"][int(mesh)]["primitives"]])
    off = sums[np.abs(sums - 1.0) > 1e-3]
    assert (int(off_count), int(count)) == (len(off), len(sums))
    assert float(low) == pytest.approx(off.min(), abs=1e-3) and float(high) == pytest.approx(off.max(), abs=1e-3)
    assert off.min() > 1.0 and off.max() > 1.5  # the hands' extra weight, not "min 1"
