"""Morph targets: the model (weights, morphing before skinning), weights channels, pose files
version 2, the editor's undoable sliders, the panel, and the GPU path against the CPU one."""

import json
from pathlib import Path

import numpy as np
import pytest

from viewer import ViewerError
from viewer.camera import OrbitCamera
from viewer.character import build_character
from viewer.editing.editor import Editor
from viewer.gltf import load_gltf
from viewer.model import Bone, Skeleton, SkinnedMesh
from viewer.model.mesh import skin
from viewer.model.morph import MorphAnimationClip, MorphTargets, MorphWeightChannel
from viewer.options import RenderOptions
from viewer.editing.pose import apply_pose, load_pose, pose_of, save_pose

from samples import ROBOT

DATA = Path(__file__).parent / "data"
WORMS = DATA / "morph-worms.gltf"
ASSETS = Path(__file__).parents[1] / "assets"


@pytest.fixture(scope="module")
def robot_file_scene():
    return load_gltf(ROBOT)


@pytest.fixture
def robot():
    return load_gltf(ROBOT)


def head_of(scene):
    (head,) = scene.morph_meshes
    return head


# --- the model -----------------------------------------------------------------------------------
def two_bone_mesh(targets=None):
    skeleton = Skeleton("s")
    root = Bone("root", skeleton)
    shoulder = np.eye(4)
    shoulder[3, :3] = (0.0, 1.0, 0.0)
    Bone("tip", skeleton, root, local_matrix=shoulder)
    rng = np.random.default_rng(3)
    positions = rng.uniform(-1, 1, (6, 3))
    joints = np.array([[0, 1, 0, 0]] * 6)
    weights = np.c_[rng.uniform(0.2, 0.8, 6), np.zeros(6), np.zeros(6), np.zeros(6)]
    weights[:, 1] = 1 - weights[:, 0]
    return SkinnedMesh("m", positions, [0, 1, 2, 3, 4, 5], skeleton, joints=joints, weights=weights,
                       morph_targets=targets)


def test_morphing_comes_before_skinning():
    rng = np.random.default_rng(7)
    deltas = rng.normal(size=(3, 6, 3))
    normal_deltas = rng.normal(size=(3, 6, 3)) * 0.1
    mesh = two_bone_mesh(MorphTargets(deltas, normal_deltas, names=["a", "b", "c"]))
    mesh.skeleton.bones[1].rotation_quaternion = [0, 0, np.sin(0.4), np.cos(0.4)]
    mesh.skeleton.bones[1].scaling = [1.5, 0.7, 1.0]
    mesh.morph_weights = [0.5, -0.25, 1.5]
    mesh.skeleton.prepare()
    matrices = mesh.skeleton.get_transform_matrices()
    morphed = mesh.positions + np.einsum("t,tvc->vc", [0.5, -0.25, 1.5], deltas)
    morphed_normals = mesh.normals + np.einsum("t,tvc->vc", [0.5, -0.25, 1.5], normal_deltas)
    want_p, want_n = skin(morphed, morphed_normals, mesh.joints, mesh.weights, matrices)
    got_p, got_n = mesh.skinned()
    np.testing.assert_allclose(got_p, want_p, atol=1e-5)  # deltas are stored as float32
    np.testing.assert_allclose(got_n, want_n, atol=1e-5)
    # Weights 0 give the unmorphed mesh exactly.
    mesh.morph_weights = [0, 0, 0]
    np.testing.assert_array_equal(mesh.skinned()[0], skin(mesh.positions, mesh.normals, mesh.joints, mesh.weights,
                                                          matrices)[0])


def test_morph_weights_are_validated_and_read_only():
    mesh = two_bone_mesh(MorphTargets(np.zeros((2, 6, 3)), names=["smile", "blink"]))
    assert mesh.morph_target_names == ["smile", "blink"]
    assert mesh.morph_weights.shape == (2,) and mesh.morph_weights.dtype == np.float64
    with pytest.raises(ValueError):
        mesh.morph_weights[0] = 1.0  # a read-only view: assign the array, or set one weight
    mesh.set_morph_weight("blink", 0.5)
    mesh.set_morph_weight(0, 2.0)
    mesh.set_morph_weight("1", 0.25)  # an index as text, as pose files give it
    assert mesh.morph_weights.tolist() == [2.0, 0.25]
    for bad, message in (([1.0], r"expected 2 numbers \(one per target\)"), ([np.nan, 0], "NaN or infinity"),
                         ("ab", "expected 2 numbers")):
        with pytest.raises(ViewerError, match=message):
            mesh.morph_weights = bad
    with pytest.raises(ViewerError, match=r"no morph target 'wink' \(its targets: smile, blink; or an index 0..1\)"):
        mesh.set_morph_weight("wink", 1.0)
    with pytest.raises(ViewerError, match="no morph target 2"):
        mesh.set_morph_weight(2, 1.0)
    with pytest.raises(ViewerError, match="'smile' weight: must be a finite number"):
        mesh.set_morph_weight(0, float("inf"))
    for bad in (1e39, -1e19):  # finite in float64, but not in float32 products: refused by name
        with pytest.raises(ViewerError, match=r"'smile' weight: .*magnitude up to 1e18"):
            mesh.set_morph_weight("smile", bad)
    with pytest.raises(ViewerError, match=r"morph weights: target 'blink' holds NaN or infinity or a magnitude above "
                                          r"1e18: 1e\+39"):
        mesh.morph_weights = [0.0, 1e39]
    assert mesh.morph_weights.tolist() == [2.0, 0.25]  # refused changes change nothing
    plain = two_bone_mesh()
    assert plain.morph_target_names == [] and plain.morph_weights.shape == (0,)
    with pytest.raises(ViewerError, match="has no morph targets"):
        plain.morph_weights = [1.0]


@pytest.mark.parametrize("build, message", [
    (lambda: MorphTargets(np.zeros((2, 5, 3))), "morph targets over 5 vertices for 6"),
    (lambda: MorphTargets(np.zeros((0, 6, 3))), "0 morph targets"),
    (lambda: MorphTargets(np.zeros((1, 6, 2))), r"expected shape \(targets, vertices, 3\)"),
    (lambda: MorphTargets(np.full((1, 6, 3), np.nan)), "target 0 has NaN"),
    (lambda: MorphTargets(np.zeros((1, 6, 3)), np.zeros((2, 6, 3))), r"normals: expected shape \(1, 6, 3\)"),
    (lambda: MorphTargets(np.zeros((2, 6, 3)), names=["a"]), "1 morph target names for 2 targets"),
    (lambda: MorphTargets(np.zeros((2, 6, 3)), weights=[1, 2, 3]), "expected 2 numbers"),
])
def test_bad_morph_targets_are_refused(build, message):
    with pytest.raises(ViewerError, match=message):
        two_bone_mesh(build())


# --- weights channels ------------------------------------------------------------------------------
def test_weights_channels_follow_gltf_interpolation():
    mesh = two_bone_mesh(MorphTargets(np.zeros((2, 6, 3))))
    times = [0.0, 1.0, 3.0]
    values = [[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]
    linear = MorphWeightChannel([mesh], times, values, "LINEAR")
    np.testing.assert_allclose(linear.sample(0.25), [0.25, 0.75])
    np.testing.assert_allclose(linear.sample(2.0), [0.75, 0.25])
    np.testing.assert_allclose(linear.sample(-1.0), [0.0, 1.0])
    np.testing.assert_allclose(linear.sample(9.0), [0.5, 0.5])
    step = MorphWeightChannel([mesh], times, values, "STEP")
    np.testing.assert_allclose(step.sample(0.99), [0.0, 1.0])
    np.testing.assert_allclose(step.sample(1.0), [1.0, 0.0])
    # CUBICSPLINE: (in-tangent, value, out-tangent) per key; the Hermite spline with tangents x dt.
    a, b = np.array([0.2, -0.1]), np.array([0.9, 0.4])
    out_a, in_b = np.array([1.5, -2.0]), np.array([-0.5, 0.7])
    cubic = MorphWeightChannel([mesh], [0.0, 2.0], [[0, 0], a, out_a, in_b, b, [0, 0]], "CUBICSPLINE")
    u, dt = 0.3, 2.0
    want = ((2 * u**3 - 3 * u**2 + 1) * a + (u**3 - 2 * u**2 + u) * dt * out_a + (-2 * u**3 + 3 * u**2) * b
            + (u**3 - u**2) * dt * in_b)
    np.testing.assert_allclose(cubic.sample(0.6), want)
    cubic.apply(0.6)
    np.testing.assert_allclose(mesh.morph_weights, want)
    with pytest.raises(ViewerError, match="5 output values for 3 keyframes of 2 targets"):
        MorphWeightChannel([mesh], times, [0, 1, 2, 3, 4], "LINEAR")
    with pytest.raises(ViewerError, match="strictly increasing"):
        MorphWeightChannel([mesh], [0.0, 0.0], [[0, 0], [1, 1]])


def test_a_clip_plays_weights_with_its_node_channels():
    scene = load_gltf(WORMS)
    clip = scene.animations[0]
    assert isinstance(clip, MorphAnimationClip) and len(clip.channels) == 3 and len(clip.morph_channels) == 3
    assert clip.duration == 2.0
    linear = next(mesh for mesh in scene.meshes if mesh.name == "worm_linear")
    clip.apply(0.25)  # halfway between the keys at 0 and 0.5
    start, middle = (next(c for c in clip.morph_channels if c.meshes[0] is linear).values[k] for k in (0, 1))
    np.testing.assert_allclose(linear.morph_weights, (start + middle) / 2, atol=1e-7)


# --- the glTF loader ----------------------------------------------------------------------------------
def test_robot_head_has_named_targets_and_angry_moves_it_by_3_9_percent(robot_file_scene):
    scene = robot_file_scene
    head = head_of(scene)
    assert head.name == "Head" and head.skeleton is None  # a node under the neck bone, not skinned
    assert head.morph_target_names == ["Angry", "Surprised", "Sad"]
    assert head.morph_weights.tolist() == [0.0, 0.0, 0.0]
    assert all(len(c.morph_channels) == 1 for c in scene.animations)  # each clip drives the head's weights
    low, high = scene.rest_bounds
    base = head.skinned_positions()
    try:
        head.morph_weights = [1.0, 0.0, 0.0]
        moved = float(np.linalg.norm(head.skinned_positions() - base, axis=1).max())
    finally:
        head.morph_weights = [0.0, 0.0, 0.0]
    # The figure: up to 3.9 % of the model's size (its largest extent, the height).
    assert round(moved / float((high - low).max()), 3) == 0.039
    assert 0.028 < moved / float(np.linalg.norm(high - low)) < 0.029  # of the bounding-box diagonal


def test_default_weights_names_and_warnings(tmp_path, caplog):
    document = json.loads(WORMS.read_text())
    assert load_gltf(WORMS).meshes[1].morph_weights.tolist() == [0.5, 0.1]  # the node's weights win
    document["meshes"][0]["extras"] = {"targetNames": ["only"]}
    document["meshes"][1]["extras"] = "application data of any kind"
    path = tmp_path / "named.gltf"
    path.write_text(json.dumps(document))
    with caplog.at_level("WARNING"):
        scene = load_gltf(path)
    assert scene.meshes[0].morph_target_names == ["only", "morphTarget1"]  # Babylon's default names
    assert scene.meshes[1].morph_target_names == ["morphTarget0", "morphTarget1"]
    assert "extras.targetNames has 1 names for 2 morph targets" in caplog.text
    # A weights channel on a node without morph targets is skipped with one warning (Babylon skips it).
    document["animations"][0]["channels"][1]["target"]["node"] = 0
    path.write_text(json.dumps(document))
    caplog.clear()
    with caplog.at_level("WARNING"):
        scene = load_gltf(path)
    assert len(scene.animations[0].morph_channels) == 2
    assert "node 0 has no mesh with morph targets; its weights channel is skipped" in caplog.text


# --- pose files ------------------------------------------------------------------------------------
def test_version_1_pose_files_still_load():
    path = ASSETS / "poses" / "left-arm-45.json"
    assert json.loads(path.read_text())["version"] == 1
    pose = load_pose(path)
    assert list(pose) == ["leftArm"] and pose.morph == {}
    scene = build_character()
    apply_pose(scene, path)
    np.testing.assert_allclose(scene.find_bone("leftArm").rotation_quaternion, [0, 0, 0.608761429, 0.79335334],
                               atol=1e-8)
    assert "morph" not in pose_of(scene) and pose_of(scene)["version"] == 2


def test_pose_files_carry_morph_weights(robot, tmp_path):
    head = head_of(robot)
    head.morph_weights = [1.0, 0.0, 0.25]
    robot.find_bone("Head").get_pose_target().rotation_quaternion = [0, 0.6, 0, 0.8]
    save_pose(tmp_path / "p.json", robot)
    saved = json.loads((tmp_path / "p.json").read_text())
    assert saved["version"] == 2 and saved["morph"] == {"Head": {"Angry": 1.0, "Surprised": 0.0, "Sad": 0.25}}
    fresh = load_gltf(ROBOT)
    apply_pose(fresh, tmp_path / "p.json")
    assert pose_of(fresh)["morph"] == pose_of(robot)["morph"]
    np.testing.assert_allclose(fresh.find_bone("Head").get_pose_target().rotation_quaternion,
                               robot.find_bone("Head").get_pose_target().rotation_quaternion, atol=1e-12)
    # Targets by index, a target left out keeps its weight; the CLI's way (the bones dict of a loaded file).
    (tmp_path / "q.json").write_text(json.dumps({"version": 2, "bones": {}, "morph": {"Head": {"1": 0.5}}}))
    apply_pose(fresh, {"bones": load_pose(tmp_path / "q.json")})
    assert head_of(fresh).morph_weights.tolist() == [1.0, 0.5, 0.25]


@pytest.mark.parametrize("content, message", [
    ({"version": 2, "bones": {}, "morph": {"Face": {"Angry": 1}}},
     "unknown morph mesh 'Face' (this model's meshes with morph targets: Head)"),
    ({"version": 2, "bones": {}, "morph": {"Head": {"Happy": 1}}},
     "mesh 'Head': no morph target 'Happy' (its targets: Angry, Surprised, Sad; or an index 0..2)"),
    ({"version": 2, "bones": {}, "morph": {"Head": {"3": 1}}}, "no morph target '3'"),
    ({"version": 2, "bones": {}, "morph": {"Head": {"Angry": "1"}}},
     "morph 'Head' target 'Angry': the weight must be a finite number, got '1'"),
    ({"version": 2, "bones": {}, "morph": {"Head": {"Angry": True}}}, "the weight must be a finite number"),
    ({"version": 2, "bones": {}, "morph": {"Head": [1, 0, 0]}}, "morph 'Head': expected an object of target -> weight"),
    ({"version": 2, "bones": {}, "morph": [1]}, "\"morph\" must be an object of mesh name -> {target: weight}"),
    ({"version": 1, "bones": {}, "morph": {"Head": {"Angry": 1}}}, "\"morph\" weights need pose version 2"),
    ({"version": 3, "bones": {}}, "pose version 3 is not supported (this build reads 1 and 2)"),
    ({"version": True, "bones": {}}, "pose version True is not supported"),
    ({"version": 2, "bones": {"Nope": {}}, "morph": {"Head": {"Angry": 1}}}, "unknown bone 'Nope'"),
])
def test_bad_morph_in_pose_files_is_one_clear_error(robot_file_scene, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    before = pose_of(robot_file_scene)
    with pytest.raises(ViewerError) as caught:
        apply_pose(robot_file_scene, path)
    assert str(caught.value).startswith(f"pose file {path}: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)
    assert pose_of(robot_file_scene) == before  # nothing changed, weights included


def test_render_pose_shows_morphs(tmp_path):
    """`boneviewer render --pose` with morph weights: the head changes where Angry moves it."""
    from viewer.cli import main

    pose = tmp_path / "angry.json"
    pose.write_text(json.dumps({"version": 2, "bones": {}, "morph": {"Head": {"Angry": 1}}}))
    images = {}
    for name, extra in (("neutral", []), ("angry", ["--pose", str(pose)])):
        out = tmp_path / f"{name}.png"
        assert main(["render", str(ROBOT), "--out", str(out), "--size", "240x180", "--no-grid", "--no-skeleton",
                     *extra]) == 0
        from PIL import Image

        images[name] = np.asarray(Image.open(out).convert("RGB")).astype(int)
    changed = np.abs(images["neutral"] - images["angry"]).max(axis=2) > 24
    ys, _ = np.nonzero(changed)
    assert changed.mean() > 0.003 and ys.mean() < 180 * 0.45  # the head, in the upper part of the image


# --- the editor ----------------------------------------------------------------------------------------
def test_a_slider_edit_is_one_undo_step_and_pauses_playback(robot):
    editor = Editor(robot)
    head = head_of(robot)
    assert editor.morph_meshes() == [head]
    editor.play()
    editor.begin_edit()  # a slider drag: many values, one step
    for value in (0.2, 0.5, 0.8):
        editor.set_morph_weight(head, "Surprised", value)
    editor.end_edit()
    assert not editor.playback.playing
    assert head.morph_weights.tolist() == [0.0, 0.8, 0.0]
    editor.set_morph_weight(head, 0, 1.0)
    editor.undo()
    assert head.morph_weights.tolist() == [0.0, 0.8, 0.0]
    editor.undo()
    assert head.morph_weights.tolist() == [0.0, 0.0, 0.0] and not editor.can_undo
    editor.redo()
    assert head.morph_weights.tolist() == [0.0, 0.8, 0.0]
    editor.reset_morph_weights(head)
    assert head.morph_weights.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ViewerError, match="no morph target 'Happy'"):
        editor.set_morph_weight(head, "Happy", 1.0)
    editor.undo()  # the refused edit left no empty step: this undoes the reset
    assert head.morph_weights.tolist() == [0.0, 0.8, 0.0]
    # Playing the clip again drives the weights from its channels (Robot's keep them at 0).
    editor.play()
    editor.advance(0.1)
    assert head.morph_weights.tolist() == [0.0, 0.0, 0.0]


def test_the_panel_has_a_slider_per_target_and_a_drag_is_one_step():
    from imgui_bundle import imgui

    from viewer.render.headless import OffscreenTarget, create_headless_context, release_egl_current
    from viewer.ui.session import ViewerSession

    size = (1024, 900)
    ctx = create_headless_context()
    target = OffscreenTarget(ctx, size)
    session = ViewerSession(ctx, load_gltf(ROBOT))
    try:
        def run(frames=1):
            for _ in range(frames):
                session.frame(size, 1 / 60, target.framebuffer)

        run(2)
        editor = session.editor
        head = head_of(editor.scene)
        rects = session.panel.rects
        assert {"Head/Angry", "Head/Surprised", "Head/Sad", "Head/Reset"} <= set(rects)
        x0, y0, x1, y1 = rects["Head/Surprised"]
        assert x1 - x0 > 100
        io = imgui.get_io()
        io.add_mouse_pos_event(x0 + 2, (y0 + y1) / 2)
        run()
        io.add_mouse_button_event(0, True)
        run()
        for k in range(1, 6):
            io.add_mouse_pos_event(x0 + 2 + (x1 - x0) * 0.75 * k / 5, (y0 + y1) / 2)
            run()
        io.add_mouse_button_event(0, False)
        run(2)
        weight = head.morph_weights[1]
        assert 0.6 < weight < 0.85 and head.morph_weights[0] == 0 == head.morph_weights[2]
        assert not editor.playback.playing
        editor.undo()
        assert head.morph_weights.tolist() == [0.0, 0.0, 0.0] and not editor.can_undo
    finally:
        session.release()
        target.release()
        ctx.release()
        release_egl_current()


# --- GPU against CPU ---------------------------------------------------------------------------------
def head_camera(scene, aspect):
    """Close on the robot's head, a little from the side."""
    head = head_of(scene)
    low, high = head.skinned_positions().min(axis=0), head.skinned_positions().max(axis=0)
    return OrbitCamera(target=(low + high) / 2, distance=2.2 * float(np.linalg.norm(high - low)), yaw=25, pitch=10)


def differing_fraction(a, b, threshold=24):
    return (np.abs(a[:, :, :3].astype(int) - b[:, :, :3]).max(axis=2) > threshold).mean()


@pytest.mark.parametrize("model", ["robot", "worms"])
def test_gpu_morphing_equals_cpu_morphing(model):
    from viewer.render.headless import HeadlessRenderer
    from viewer.render.renderer import Renderer

    size = (320, 240)
    options = RenderOptions(show_skeleton=False, show_grid=False)
    if model == "robot":
        scene = load_gltf(ROBOT)
        camera = head_camera(scene, size[0] / size[1])
        weights = {head_of(scene): [0.6, 0.5, 0.3]}
    else:
        scene = load_gltf(WORMS)
        scene.animations[0].apply(0.74)  # skinned and morphed, normals too, weights past 1
        from viewer.camera import framed_camera

        camera = framed_camera(scene)
        weights = {mesh: mesh.morph_weights.copy() for mesh in scene.meshes}
    with HeadlessRenderer(size) as headless:
        for mesh in weights:
            mesh.morph_weights = np.zeros(len(mesh.morph_weights))
        scene.prepare()
        unmorphed = headless.render(scene, camera, options)
        for mesh, value in weights.items():
            mesh.morph_weights = value
        scene.prepare()
        images = {"gpu": headless.render(scene, camera, options)}
        for mode in ("cpu", "texture"):
            renderer = Renderer(headless.ctx, bone_storage="texture" if mode == "texture" else "auto",
                                cpu_skinning=mode == "cpu")
            try:
                headless.target.framebuffer.use()
                renderer.render(scene, camera, size, options)
                images[mode] = headless.target.read()
            finally:
                renderer.release()
    assert differing_fraction(images["gpu"], unmorphed) > 0.01  # the weights change the picture
    assert differing_fraction(images["cpu"], images["gpu"]) < 0.002
    assert differing_fraction(images["texture"], images["gpu"]) < 0.002
