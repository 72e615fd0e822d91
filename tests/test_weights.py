"""Seeing the rig: weight heatmaps, the bone map, the weight check and bone axes, in numpy, in
the shader, on the command line and in the panel."""

import json

import numpy as np
import pygltflib as g
import pytest
from PIL import Image

import viewer
from viewer.camera import framed_camera
from viewer.character import build_character
from viewer.model.weights import (bone_weights, dominant_joints, joint_row, rigid_bone, weight_check,
                                  weight_problems)
from viewer.options import Axes, Paint, RenderOptions
from viewer.render.geometry import AXIS_COLORS, AXIS_PIXELS, bone_axes
from viewer.render.headless import HeadlessRenderer
from viewer.render.paint import NEUTRAL_COLOR, PROBLEM_COLOR, bone_color, heat_color, paint_colors

from gltf_cases import Builder, chain, inverse_binds, worm_mesh
from gltf_reference import Document
import panel_driver  # noqa: I001 (a test helper module)
from samples import CESIUM_MAN, FOX, ROBOT

SIZE = (320, 320)


# --- colours and counts in numpy ----------------------------------------------------------------
def test_the_heat_ramp_runs_blue_cyan_green_yellow_red():
    stops = heat_color([0.0, 0.25, 0.5, 0.75, 1.0, -1.0, 2.0])
    assert np.array_equal(stops, [[0, 0, 1], [0, 1, 1], [0, 1, 0], [1, 1, 0], [1, 0, 0], [0, 0, 1], [1, 0, 0]])
    assert np.allclose(heat_color([0.125]), [[0, 0.5, 1]])


def test_bone_colours_are_stable_and_distinct():
    colors = bone_color(np.arange(64))
    assert np.array_equal(colors, bone_color(np.arange(64)))            # stable
    assert np.array_equal(bone_color([7, 3])[0], colors[7])
    distance = np.linalg.norm(colors[:, None] - colors[None], axis=2) + np.eye(64)
    assert distance.min() > 0.08                                         # no two alike
    assert colors.min() >= 0 and colors.max() <= 1


def test_a_bones_weight_sums_its_slots_and_the_dominant_bone_is_the_largest():
    character = build_character()
    mesh = character.skinned_meshes[0]
    left = character.find_bone("leftArm")
    weights = bone_weights(mesh, joint_row(mesh, left))
    assert weights.shape == (len(mesh.positions),) and 0 <= weights.min() and weights.max() <= 1.0 + 1e-6
    total = sum(bone_weights(mesh, b.get_index()) for b in mesh.skeleton.bones)
    assert np.allclose(total, 1.0, atol=1e-5)                            # every vertex's weights, shared out
    dominant = dominant_joints(mesh)
    assert (weights > 0.5).sum() > 0 and (dominant[weights > 0.5] == left.get_index()).all()
    assert set(np.unique(dominant)) <= {b.get_index() for b in mesh.skeleton.bones}
    assert bone_weights(mesh, -1).max() == 0


def test_raw_sums_are_kept_when_weights_are_renormalized():
    skeleton = viewer.Skeleton("s")
    viewer.Bone("a", skeleton)
    viewer.Bone("b", skeleton, skeleton.bones[0])
    mesh = viewer.SkinnedMesh("m", [[0, 0, 0], [1, 0, 0], [0, 1, 0]], [0, 1, 2], skeleton,
                              joints=[[0, 1, 0, 0]] * 3, weights=[[0.5, 0.5, 0, 0], [0.6, 0.6, 0, 0], [1, 0.0, 0, 0]])
    assert np.allclose(mesh.raw_weight_sums, [1.0, 1.2, 1.0])
    assert np.allclose(mesh.weights.sum(axis=1), 1.0)
    assert weight_problems(mesh).tolist() == [False, True, False]
    assert mesh.extra_influences.tolist() == [0, 0, 0]
    check = weight_check(viewer.Scene("s", [mesh]))
    assert (check.flagged, check.off_sum, check.over_limit, check.vertices) == (1, 1, 0, 3)
    colors = paint_colors(mesh, None, Paint.WEIGHT_CHECK)
    assert np.allclose(colors[:, :3], [NEUTRAL_COLOR, PROBLEM_COLOR, NEUTRAL_COLOR])


def file_weight_sums(path):
    """Each skinned mesh node's weight sums as the file stores them, read with the independent
    reader (json + numpy, nothing of viewer/)."""
    doc = Document(path)
    sums = []
    for node in doc.json["nodes"]:
        if "skin" in node and "mesh" in node:
            for primitive in doc.json["meshes"][node["mesh"]]["primitives"]:
                attributes = primitive["attributes"]
                sums.append(sum(doc.accessor(attributes[f"WEIGHTS_{k}"]).sum(axis=1)
                                for k in (0, 1) if f"WEIGHTS_{k}" in attributes))
    return np.concatenate(sums)


def test_the_weight_check_counts_robot_expressives_non_unit_vertices_exactly():
    sums = file_weight_sums(ROBOT)
    expected = int((np.abs(sums - 1.0) > 1e-3).sum())
    assert expected > 0
    check = weight_check(viewer.load_gltf(ROBOT))
    assert (check.flagged, check.off_sum, check.over_limit, check.vertices) == (expected, expected, 0, len(sums))


def twelve_influences(folder):
    """A worm whose file gives 12 influences a vertex (JOINTS_2/WEIGHTS_2 past the shader's 8)
    on its first ten vertices."""
    b = Builder()
    joints = chain(b, 6, root=True)
    mesh = worm_mesh(b, 6, 0, influences=8)
    b.node("mesh", root=True, mesh=mesh, skin=0)
    b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=inverse_binds(b, joints), skeleton=joints[0]))
    vertices = b.gltf.accessors[b.gltf.meshes[mesh].primitives[0].attributes.POSITION].count
    extra = np.zeros((vertices, 4), np.float32)
    extra[:10, :2] = 0.05
    joint_accessor = b.accessor(np.zeros((vertices, 4), np.uint16), "VEC4", 5123)
    weight_accessor = b.accessor(extra, "VEC4")
    path = b.save(folder / "twelve.gltf")
    document = json.loads(path.read_text())
    document["meshes"][mesh]["primitives"][0]["attributes"].update(JOINTS_2=joint_accessor, WEIGHTS_2=weight_accessor)
    path.write_text(json.dumps(document))
    return path


def test_influences_past_eight_are_counted_and_warned(tmp_path, caplog):
    path = twelve_influences(tmp_path)
    with caplog.at_level("WARNING", logger="boneviewer"):
        scene = viewer.load_gltf(path)
    mesh = scene.skinned_meshes[0]
    assert mesh.extra_influences[:10].tolist() == [2] * 10 and mesh.extra_influences[10:].max() == 0
    assert "10 of" in caplog.text and "WEIGHTS_2" in caplog.text
    check = weight_check(scene)
    assert check.over_limit == 10 and check.flagged >= 10
    assert weight_problems(mesh)[:10].all()


def test_two_skins_over_one_set_of_joints_share_the_heatmap_bone():
    robot = viewer.load_gltf(ROBOT)
    first, second = robot.skeletons
    bone = first.get_bone("Palm2.L")
    other = robot.skinned_meshes[[m.skeleton for m in robot.skinned_meshes].index(second)]
    assert joint_row(other, bone) == second.get_bone("Palm2.L").get_index()
    torso = next(m for m in robot.static_meshes if m.name == "Torso")
    assert rigid_bone(torso, robot).name == "Body"          # the mesh hangs under the Body joint
    hot = paint_colors(torso, robot, Paint.WEIGHTS, second.get_bone("Body"))
    cold = paint_colors(torso, robot, Paint.WEIGHTS, first.get_bone("Head"))
    assert np.allclose(hot[:, :3], [1, 0, 0]) and np.allclose(cold[:, :3], [0, 0, 1])
    body = rigid_bone(torso, robot).get_index()
    assert np.allclose(paint_colors(torso, robot, Paint.BONE_MAP)[:, :3], bone_color([body]))


# --- pixels ------------------------------------------------------------------------------------
def foreground(image, background):
    return np.abs(image[:, :, :3].astype(int) - background[:, :, :3].astype(int)).sum(axis=2) > 30


def hot_pixels(image):
    """Pixels of weight 0.4 and up: little blue against red or green (the ramp's upper half)."""
    rgb = image[:, :, :3].astype(int)
    high = np.maximum(rgb[:, :, 0], rgb[:, :, 1])
    return (high > 60) & (rgb[:, :, 2] < 0.5 * high)


def render(scene, camera, cpu=False, bone_texture=False, **options):
    options.setdefault("show_skeleton", False)
    options.setdefault("show_grid", False)
    with HeadlessRenderer(SIZE, bone_storage="texture" if bone_texture else "auto", cpu_skinning=cpu) as headless:
        return headless.render(scene, camera, RenderOptions(**options))


@pytest.mark.parametrize("model,bone", [(CESIUM_MAN, "leg_joint_L_2"), (FOX, "b_Head_05"), (ROBOT, "LowerArm.R"),
                                        (None, "leftArm")])
def test_gpu_and_cpu_heatmaps_agree(model, bone):
    scene = build_character() if model is None else viewer.load_gltf(model)
    camera = framed_camera(scene, aspect=1.0)
    chosen = scene.find_bone(bone)
    gpu = render(scene, camera, paint=Paint.WEIGHTS, selected_bone=chosen).astype(int)
    texture = render(scene, camera, bone_texture=True, paint=Paint.WEIGHTS, selected_bone=chosen).astype(int)
    cpu = render(scene, camera, cpu=True, paint=Paint.WEIGHTS, selected_bone=chosen).astype(int)
    for other in (texture, cpu):
        differ = np.abs(gpu - other).max(axis=2) > 24
        assert differ.mean() < 0.005
    if model is not ROBOT:   # the robot's arm is a rigid part here: its skins are the hands
        assert hot_pixels(gpu).sum() > 50


@pytest.mark.parametrize("model", [CESIUM_MAN, FOX, ROBOT, None])
def test_gpu_and_cpu_bone_maps_agree(model):
    scene = build_character() if model is None else viewer.load_gltf(model)
    camera = framed_camera(scene, aspect=1.0)
    gpu = render(scene, camera, paint=Paint.BONE_MAP).astype(int)
    cpu = render(scene, camera, cpu=True, paint=Paint.BONE_MAP).astype(int)
    assert (np.abs(gpu - cpu).max(axis=2) > 24).mean() < 0.005


def test_the_left_leg_bone_heats_the_left_leg_and_the_right_the_right(cli, tmp_path):
    """Through the command line, as CI would: the hot pixels' centroids lie on either leg, each
    on the side where its hip joint projects."""
    scene = viewer.load_gltf(CESIUM_MAN)
    scene.animations[0].apply(0.0)
    camera = framed_camera(scene, yaw=0, pitch=0, aspect=1.0)
    mesh = scene.skinned_meshes[0]
    hips = {}
    for side in "LR":
        bone = scene.find_bone(f"leg_joint_{side}_1")
        head = (bone.get_absolute_matrix() @ mesh.world_matrix)[3, :3]
        hips[side] = camera.project(head, *SIZE)[0]
    centroids = {}
    for side in "LR":
        out = tmp_path / f"{side}.png"
        result = cli("render", CESIUM_MAN, "--weights", f"leg_joint_{side}_1", "--out", out, "--size", "320x320",
                     "--yaw", "0", "--pitch", "0", "--no-skeleton", "--no-grid")
        assert result.returncode == 0, result.stderr
        hot = hot_pixels(np.asarray(Image.open(out)))
        assert hot.sum() > 100
        ys, xs = np.nonzero(hot)
        centroids[side] = (xs.mean(), ys.mean())
        assert ys.mean() > min(h[1] for h in hips.values())            # below the hips: on a leg
    middle = (hips["L"][0] + hips["R"][0]) / 2
    assert (centroids["L"][0] - middle) * (centroids["R"][0] - middle) < 0      # opposite sides
    assert (centroids["L"][0] - middle) * (hips["L"][0] - middle) > 0           # each on its own hip's side
    assert abs(centroids["L"][0] - centroids["R"][0]) > 0.5 * abs(hips["L"][0] - hips["R"][0])


def test_the_bone_map_shows_one_colour_per_dominant_bone():
    scene = viewer.load_gltf(CESIUM_MAN)
    mesh = scene.skinned_meshes[0]
    dominant = set(np.unique(dominant_joints(mesh)).tolist())
    colors = paint_colors(mesh, scene, Paint.BONE_MAP)[:, :3]
    assert len(np.unique(colors, axis=0)) == len(dominant)
    # In the picture (front and back, so every part shows), the pixels whose colour is one bone's
    # under the shader's grey light: every dominant bone shows, and no other bone's colour does.
    seen = set()
    palette = bone_color(np.arange(len(mesh.skeleton.bones)))
    for yaw in (0, 180):
        image = render(scene, framed_camera(scene, yaw=yaw, pitch=0, aspect=1.0), paint=Paint.BONE_MAP)
        rgb = image[:, :, :3].reshape(-1, 3).astype(float) / 255
        bright = rgb.max(axis=1) > 0.25
        light = (rgb[bright] @ palette.T) / (palette ** 2).sum(axis=1)          # best grey scale per colour
        error = np.linalg.norm(rgb[bright, None] - light[:, :, None] * palette[None], axis=2)
        nearest, close = error.argmin(axis=1), error.min(axis=1) < 0.012
        counts = np.bincount(nearest[close], minlength=len(palette))
        seen |= set(np.flatnonzero(counts >= 5).tolist())
    assert seen == dominant


def test_the_weight_check_paints_the_flagged_vertices(tmp_path):
    scene = viewer.load_gltf(ROBOT)
    camera = framed_camera(scene, aspect=1.0)
    image = render(scene, camera, paint=Paint.WEIGHT_CHECK).astype(int)
    magenta = (image[:, :, 0] > 100) & (image[:, :, 2] > 0.6 * image[:, :, 0]) & (image[:, :, 1] < 0.2 * image[:, :, 0])
    assert magenta.sum() > 200                                          # the robot's hands
    clean = render(build_character(), framed_camera(build_character(), aspect=1.0), paint=Paint.WEIGHT_CHECK)
    clean = clean[:, :, :3].astype(int)
    assert not ((clean[:, :, 0] > 100) & (clean[:, :, 1] < 0.2 * clean[:, :, 0])).any()


# --- bone axes ----------------------------------------------------------------------------------
def test_bone_axes_are_the_bones_own_axes_at_a_fixed_size_on_screen():
    scene = viewer.load_gltf(ROBOT)   # a x100 armature: the axes must not grow with it
    camera = framed_camera(scene, aspect=1.0)
    view, projection = camera.view_matrix(), camera.projection_matrix(1.0)
    bone = scene.find_bone("LowerArm.L")
    lines = bone_axes(scene, [bone], view, projection, SIZE[1])
    assert lines.shape == (6, 7)
    mesh = scene.skinned_meshes[0]
    world = bone.get_absolute_matrix() @ mesh.world_matrix
    for axis in range(3):
        start, end = lines[2 * axis, :3].astype(float), lines[2 * axis + 1, :3].astype(float)
        assert np.allclose(start, world[3, :3], atol=1e-4 * np.abs(world[3, :3]).max())
        direction = world[axis, :3] / np.linalg.norm(world[axis, :3])
        assert np.allclose((end - start) / np.linalg.norm(end - start), direction, atol=1e-4)
        assert np.allclose(lines[2 * axis, 3:], AXIS_COLORS[axis])
        # AXIS_PIXELS long where it stands, as a segment across the view would show it.
        right = camera.axes()[0] * np.linalg.norm(end - start)
        across = camera.project(np.array([start, start + right]), *SIZE)
        assert np.linalg.norm(across[1] - across[0]) == pytest.approx(AXIS_PIXELS, rel=0.02)
    # The same size on screen from twice as far.
    far = framed_camera(scene, aspect=1.0)
    far.distance *= 2
    near_pixels = camera.project(lines[:, :3], *SIZE)
    far_lines = bone_axes(scene, [bone], far.view_matrix(), far.projection_matrix(1.0), SIZE[1])
    far_pixels = far.project(far_lines[:, :3], *SIZE)
    assert np.allclose(np.linalg.norm(far_pixels[1::2] - far_pixels[::2], axis=1),
                       np.linalg.norm(near_pixels[1::2] - near_pixels[::2], axis=1), rtol=0.1, atol=1.0)
    every = bone_axes(scene, None, view, projection, SIZE[1])
    assert len(every) == 6 * sum(len(s.bones) for s in scene.skeletons)


def test_bone_axes_show_in_the_picture():
    scene = build_character()
    camera = framed_camera(scene, yaw=0, pitch=0, aspect=1.0)
    bone = scene.find_bone("leftArm")
    plain = render(scene, camera, show_mesh=False).astype(int)
    drawn = render(scene, camera, show_mesh=False, axes=Axes.SELECTED, selected_bone=bone).astype(int)
    head = camera.project((bone.get_absolute_matrix() @ scene.skinned_meshes[0].world_matrix)[3, :3], *SIZE)[0]
    changed = np.argwhere(np.abs(drawn - plain).sum(axis=2) > 60)
    assert len(changed) > 40
    assert np.linalg.norm(changed[:, ::-1] - head, axis=1).max() < AXIS_PIXELS + 6    # all at the shoulder
    red = (drawn[:, :, 0] > 200) & (drawn[:, :, 1] < 120)
    green = (drawn[:, :, 1] > 200) & (drawn[:, :, 0] < 120)
    assert red.sum() > 10 and green.sum() > 10
    everything = render(scene, camera, show_mesh=False, axes=Axes.ALL).astype(int)
    assert (np.abs(everything - plain).sum(axis=2) > 60).sum() > 2 * len(changed)


# --- the command line ---------------------------------------------------------------------------
def test_weight_check_prints_the_count_and_writes_the_picture(cli, tmp_path):
    out = tmp_path / "check.png"
    result = cli("render", ROBOT, "--weight-check", "--out", out, "--size", "200x200")
    assert result.returncode == 0, result.stderr
    expected = int((np.abs(file_weight_sums(ROBOT) - 1.0) > 1e-3).sum())
    line = next(line for line in result.stdout.splitlines() if line.startswith("weight check:"))
    assert line.startswith(f"weight check: {expected} of {len(file_weight_sums(ROBOT))} skinned vertices flagged")
    assert out.is_file()


def test_bone_map_and_axes_on_the_command_line(cli, tmp_path):
    for model in (None, FOX):
        out = tmp_path / "map.png"
        args = ["render", *([model] if model else []), "--bone-map", "--axes", "all", "--out", out, "--size", "160x120"]
        result = cli(*args)
        assert result.returncode == 0, result.stderr
        assert np.asarray(Image.open(out)).shape == (120, 160, 4)


def test_a_heatmap_turntable_gif(cli, tmp_path):
    out = tmp_path / "turn.gif"
    result = cli("render", FOX, "--weights", "b_Head_05", "--axes", "selected", "--turntable", "4", "--gif", out,
                 "--size", "120x90")
    assert result.returncode == 0, result.stderr
    with Image.open(out) as image:
        assert image.n_frames == 4
        frames = []
        for index in range(4):
            image.seek(index)
            frames.append(np.asarray(image.convert("RGB")).astype(int))
    assert all(np.abs(frames[k] - frames[k + 1]).sum() > 0 for k in range(3))
    assert hot_pixels(frames[0].astype(np.uint8)).sum() > 10


def static_model(folder):
    b = Builder()
    positions = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    attributes = g.Attributes(POSITION=b.accessor(positions, "VEC3"))
    b.gltf.meshes.append(g.Mesh(primitives=[g.Primitive(attributes=attributes)]))
    b.node("triangle", root=True, mesh=0)
    return b.save(folder / "static.gltf")


@pytest.mark.parametrize("args,message", [
    (["--weights", "nope"], "--weights nope: unknown bone 'nope' (this model's bones: body, leftArm, rightArm)"),
    (["--weights", "body", "--bone-map"], "not allowed with"),
    (["--bone-map", "--weight-check"], "not allowed with"),
    (["--axes", "selected"], "--axes selected draws the --weights bone's axes"),
    (["--axes", "leftArm", "--weights", "body"], "choose two bones"),
    (["--axes", "nope"], "--axes nope: unknown bone 'nope'"),
])
def test_bad_skin_view_options_get_one_clear_line(cli, tmp_path, args, message):
    result = cli("render", *args, "--out", tmp_path / "a.png")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not (tmp_path / "a.png").exists()


def test_skin_views_need_a_skin(cli, tmp_path):
    model = static_model(tmp_path)
    for args in (["--weights", "x"], ["--bone-map"], ["--weight-check"], ["--axes", "all"]):
        result = cli("render", model, *args, "--out", tmp_path / "a.png")
        assert result.returncode == 2
        message = "static.gltf has no skin (no bones and no weights to show)"
        assert result.returncode == 2 and result.stderr.strip().endswith(message), result.stderr


# --- the panel ----------------------------------------------------------------------------------
@pytest.fixture
def session(panel_session):
    return panel_session


def click(session, label):
    panel_driver.click(session, label, near_left=True)  # radio buttons: their rect spans the label


def test_the_panel_paints_the_picked_bones_weights_at_once(session):
    click(session, "Weights")
    assert session.editor.display.paint is Paint.WEIGHTS
    click(session, "leftArm")
    assert session.editor.selected.name == "leftArm"
    image = session.target.read()
    hot = hot_pixels(image)
    hot[:, :400] = False                                  # the model, right of the panel
    assert hot.sum() > 200 and "weights of" in session.panel.rects
    left_x = np.nonzero(hot)[1].mean()
    click(session, "rightArm")                            # one click: the next frame shows the other arm
    hot = hot_pixels(session.target.read())
    hot[:, :400] = False
    assert hot.sum() > 200 and abs(np.nonzero(hot)[1].mean() - left_x) > 80
    click(session, "Shaded")
    assert session.editor.display.paint is Paint.SHADED


def test_the_panel_counts_the_weight_check_and_toggles_axes(session):
    assert session.open_model(str(ROBOT))
    session.run(2)
    click(session, "Weight check")
    assert session.editor.display.paint is Paint.WEIGHT_CHECK
    session.run()
    assert "weight check" in session.panel.rects
    expected = int((np.abs(file_weight_sums(ROBOT) - 1.0) > 1e-3).sum())
    assert session.editor.weight_check().flagged == expected
    assert f"weight check: {expected} of" in str(session.editor.status)
    plain = session.target.read().astype(int)
    click(session, "All axes")
    assert session.editor.display.axes is Axes.ALL
    assert (np.abs(session.target.read().astype(int) - plain).sum(axis=2) > 60).sum() > 200
    click(session, "No axes")
    assert session.editor.display.axes is Axes.NONE


def test_editor_paint_and_axes_refuse_unknown_values():
    from viewer.editing.editor import Editor
    from viewer.errors import ViewerError

    editor = Editor(build_character())
    editor.set_paint("bone-map")
    editor.set_axes("all")
    assert editor.display.paint is Paint.BONE_MAP and editor.display.axes is Axes.ALL
    with pytest.raises(ViewerError, match="paint must be one of shaded, weights, bone-map, weight-check"):
        editor.set_paint("heat")
    with pytest.raises(ViewerError, match="axes must be one of none, selected, all"):
        editor.set_axes("some")
