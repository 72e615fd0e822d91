"""Shadows (issue 45): where the cast shadow falls on the ground (the posed mesh projected along
the light, in numpy), no acne on the lit ground and body, a planted foot touching its shadow,
and the options' bad values refused in one line."""

import re

import numpy as np
import pytest
from PIL import Image, ImageDraw

from viewer.camera import framed_camera
from viewer.character import build_character
from viewer.gltf import load_gltf
from viewer.look import key_light_direction
from viewer.model.transforms import quaternion_from_yaw_pitch_roll
from viewer.options import RenderOptions
from viewer.render.headless import HeadlessRenderer

from samples import CESIUM_MAN, ROBOT

SIZE = (256, 256)


@pytest.fixture(scope="module")
def headless():
    with HeadlessRenderer(SIZE) as renderer:
        yield renderer


def character(posed: bool):
    scene = build_character()
    if posed:
        scene.find_bone("leftArm").rotation_quaternion = quaternion_from_yaw_pitch_roll([0.0, 0.0, np.radians(70)])
        scene.find_bone("rightArm").rotation_quaternion = quaternion_from_yaw_pitch_roll([0.5, 0.2, np.radians(-60)])
    return scene


def gltf(path, posed: bool, morphed: bool = False):
    scene = load_gltf(str(path))
    if posed:
        clip = scene.animations[0]
        clip.apply(0.37 * clip.duration)
    if morphed:  # every morph target fully on: the shadow pass morphs as the colour pass does
        for mesh in scene.morph_meshes:
            mesh.morph_weights = np.ones(len(mesh.morph_targets))
    return scene


def dual_quaternions():
    scene = character(True)
    scene.set_skinning("dq")
    return scene


SCENES = {"character-rest": lambda: character(False), "character-posed": lambda: character(True),
          "character-posed-dq": dual_quaternions, "robot-morphed": lambda: gltf(ROBOT, True, morphed=True),
          "cesium-rest": lambda: gltf(CESIUM_MAN, False), "cesium-posed": lambda: gltf(CESIUM_MAN, True),
          "robot-rest": lambda: gltf(ROBOT, False), "robot-posed": lambda: gltf(ROBOT, True)}


def options(key_light, shadows=True, **more):
    settings = dict(environment="none", show_skeleton=False, show_grid=False, shadows=shadows, contact_shadow=False,
                    shadow_intensity=1.0, shadow_softness=0.0, key_light=key_light)
    return RenderOptions(**{**settings, **more})


def to_pixels(points, camera):
    """World points -> (x, y) pixels of a SIZE image (y down)."""
    view, projection = camera.view_matrix(), camera.projection_matrix(SIZE[0] / SIZE[1])
    clip = np.concatenate([points, np.ones((len(points), 1))], 1) @ view @ projection
    ndc = clip[:, :2] / clip[:, 3:4]
    return np.stack([(ndc[:, 0] + 1) / 2 * SIZE[0], (1 - ndc[:, 1]) / 2 * SIZE[1]], 1)


def projected_shadow(scene, towards, camera) -> np.ndarray:
    """(H, W) bool: the posed mesh (skinned in numpy) projected along the light onto the ground,
    rasterised triangle by triangle in the camera's image."""
    ground = float(scene.rest_bounds[0][1])
    towards = np.asarray(towards, float)
    image = Image.new("1", SIZE, 0)
    draw = ImageDraw.Draw(image)
    for mesh in scene.meshes:
        points = np.asarray(mesh.skinned_positions(), float)
        on_ground = points - ((points[:, 1] - ground) / towards[1])[:, None] * towards
        pixels = to_pixels(on_ground, camera)
        for triangle in np.asarray(mesh.indices).reshape(-1, 3):
            draw.polygon([tuple(p) for p in pixels[triangle]], fill=1)
    return np.array(image, bool)


def grow(mask, pixels):
    """A binary dilation by a (2 pixels + 1) square (numpy only)."""
    out = mask.copy()
    for dy in range(-pixels, pixels + 1):
        for dx in range(-pixels, pixels + 1):
            out |= np.roll(np.roll(mask, dy, 0), dx, 1)
    return out


def scene_and_camera(name):
    scene = SCENES[name]()
    scene.prepare()
    camera = framed_camera(scene, pitch=55.0)
    camera.distance *= 1.9
    return scene, camera


@pytest.mark.parametrize("elevation", [90.0, 45.0])
@pytest.mark.parametrize("name", list(SCENES))
def test_the_shadow_on_the_ground_is_the_posed_mesh_projected_along_the_light(headless, name, elevation):
    scene, camera = scene_and_camera(name)
    towards = key_light_direction(30.0, elevation)
    lit = headless.render(scene, camera, options(towards))
    plain = headless.render(scene, camera, options(towards, shadows=False))
    body = headless.render(scene, camera, options(towards, shadows=False, transparent_background=True))[..., 3] > 0
    dark = (plain[..., :3].astype(int) - lit[..., :3].astype(int)).max(axis=2) > 12
    expected = projected_shadow(scene, towards, camera)
    band = grow(expected, 2) & grow(~expected, 2)  # within 2 pixels of the shadow's edge
    judged = ~body & ~band
    assert (expected & judged).sum() > 150, "the shadow must be seen on the ground"
    union = ((dark | expected) & judged).sum()
    iou = ((dark & expected) & judged).sum() / union
    assert iou >= 0.95, f"{name} at {elevation} degrees: IoU {iou:.3f}"


@pytest.mark.parametrize("environment", ["none", "studio"])
@pytest.mark.parametrize("name", ["character-posed", "cesium-posed"])
def test_no_acne_on_the_lit_ground_and_body(headless, name, environment):
    scene, camera = scene_and_camera(name)
    towards = key_light_direction(30.0, 45.0)
    lit = headless.render(scene, camera, options(towards, shadow_softness=0.5, environment=environment)).astype(int)
    plain = headless.render(scene, camera, options(towards, shadows=False, environment=environment)).astype(int)
    body = headless.render(scene, camera, options(towards, shadows=False, transparent_background=True))[..., 3] > 0
    away = ~body & ~grow(projected_shadow(scene, towards, camera), 8)
    assert np.abs(lit - plain)[away].max() <= 2
    # Seen from the light, everything in view is lit: the body as without shadows.
    front = framed_camera(scene, yaw=30.0, pitch=30.0)
    facing = key_light_direction(30.0, 30.0)
    lit = headless.render(scene, front, options(facing, environment=environment)).astype(int)
    plain = headless.render(scene, front, options(facing, shadows=False, environment=environment)).astype(int)
    body = headless.render(scene, front, options(facing, shadows=False, transparent_background=True))[..., 3] > 0
    same = (np.abs(lit - plain)[..., :3].max(axis=2) <= 2)[body].mean()
    assert same >= 0.97, f"{same:.3f} of the lit body as without shadows"


def test_the_shadow_catcher_hides_no_grid_line(headless):
    # The ground's shadow is drawn over the grid's plane without writing depth: away from the
    # shadow the grid is seen as in the picture without shadows (it was hidden in a rectangle
    # around the feet), with the contact shadow on.
    scene, camera = scene_and_camera("cesium-posed")
    towards = key_light_direction(30.0, 45.0)
    more = dict(show_grid=True, contact_shadow=True, shadow_softness=0.3)
    lit = headless.render(scene, camera, options(towards, **more)).astype(int)
    plain = headless.render(scene, camera, options(towards, shadows=False, **more)).astype(int)
    body = headless.render(scene, camera, options(towards, shadows=False, transparent_background=True))[..., 3] > 0
    grid = np.abs(plain - headless.render(scene, camera, options(towards, shadows=False)).astype(int)).max(axis=2) > 8
    away = ~body & ~grow(projected_shadow(scene, towards, camera) | body, 12)
    assert (grid & away).sum() > 200, "grid lines must be seen away from the shadow"
    assert np.abs(lit - plain)[grid & away].max() <= 2


def test_the_ground_beside_a_planted_foot_is_in_shadow(headless):
    scene, camera = scene_and_camera("character-rest")
    towards = key_light_direction(30.0, 45.0)
    mesh_points = np.concatenate([np.asarray(m.skinned_positions()) for m in scene.meshes])
    size = float(np.max(scene.rest_bounds[1] - scene.rest_bounds[0]))
    ground = float(scene.rest_bounds[0][1])
    lowest = mesh_points[np.argmin(mesh_points[:, 1])]
    # The sole: the foot's points near the ground (the lowest point's side of the body).
    sole = mesh_points[(mesh_points[:, 1] < ground + 0.05 * size) & (np.sign(mesh_points[:, 0]) == np.sign(lowest[0]))]
    centre = sole[:, [0, 2]].mean(axis=0)
    body = headless.render(scene, camera, options(towards, shadows=False, transparent_background=True))[..., 3] > 0
    lit = headless.render(scene, camera, options(towards, contact_shadow=True, shadow_intensity=0.6,
                                                 shadow_softness=0.3)).astype(int)
    plain = headless.render(scene, camera, options(towards, shadows=False)).astype(int)
    darker = []
    for offset in np.linspace(0.0, 2 * np.pi, 24, endpoint=False):  # around the sole, just beside it
        direction = np.array([np.cos(offset), np.sin(offset)])
        reach = ((sole[:, [0, 2]] - centre) @ direction).max() + 0.01 * size
        point = np.array([centre[0] + reach * direction[0], ground, centre[1] + reach * direction[1]])
        x, y = to_pixels(point[None], camera)[0].astype(int)
        if not body[y, x]:
            darker.append(1.0 - lit[y, x, :3].mean() / plain[y, x, :3].mean())
    assert len(darker) >= 6
    assert min(darker) >= 0.05 and np.mean(darker) >= 0.12, f"the ground beside the foot darkens by {np.round(darker, 2)}"


@pytest.mark.parametrize("args, option", [
    (["--shadow-intensity", "1.5"], "--shadow-intensity"), (["--shadow-intensity", "nan"], "--shadow-intensity"),
    (["--shadow-softness", "-0.1"], "--shadow-softness"), (["--shadow-softness", "nan"], "--shadow-softness"),
    (["--key-light", "30"], "--key-light"), (["--key-light", "30,inf"], "--key-light"),
    (["--key-light", "a,b"], "--key-light"), (["--key-light", "1,2,3"], "--key-light")])
def test_bad_shadow_options_are_one_line_naming_the_option_exit_2(cli, tmp_path, args, option):
    result = cli("render", "--out", tmp_path / "x.png", *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and option in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "x.png").exists()


def test_the_look_checks_the_shadow_keywords():
    from viewer.errors import ViewerError
    from viewer.look import check

    assert check("key_light", (0.0, 90.0)) == pytest.approx((0.0, 1.0, 0.0), abs=1e-12)
    assert check("shadows", True) is True
    for name, value in (("shadow_intensity", float("nan")), ("shadow_softness", 2), ("key_light", (1.0,)),
                        ("key_light", (0.0, 0.0, 0.0)), ("shadows", "yes")):
        with pytest.raises(ViewerError, match=name):
            check(name, value)


def test_shadows_are_off_by_default_in_render_options():
    assert RenderOptions().shadows is False



def test_synth_shadows_change_the_pictures_not_the_labels(cli, tmp_path):
    import json

    runs = {}
    for flag in ("--no-shadows", "--shadows"):
        out = tmp_path / flag.strip("-")
        result = cli("synth", CESIUM_MAN, "--out", out, "--count", "2", "--size", "96x96", "--seed", "3",
                     "--workers", "1", "--environment", "none", flag)
        assert result.returncode == 0, result.stderr
        annotations = json.loads((out / "annotations.json").read_text())
        images = [np.asarray(Image.open(path)) for path in sorted((out / "images").glob("*.png"))]
        runs[flag] = (annotations, images)
    (plain, plain_images), (shaded, shaded_images) = runs["--no-shadows"], runs["--shadows"]
    assert [a["keypoints"] for a in plain["annotations"]] == [a["keypoints"] for a in shaded["annotations"]]
    assert "shadows" not in plain["info"]["ranges"] and shaded["info"]["ranges"]["shadows"] is True
    for before, after in zip(plain_images, shaded_images):
        darker = before[..., :3].astype(int).sum(axis=2) - after[..., :3].astype(int).sum(axis=2)
        assert (darker > 12).sum() > 20 and (darker < -12).sum() == 0  # shadows only darken


def test_batch_options_keep_their_key_without_shadows():
    from viewer.library.job import BatchOptions

    assert not {"shadows", "shadow_intensity", "shadow_softness", "key_light"} & set(BatchOptions().as_json())
    on = BatchOptions(shadows=True, key_light=(0.0, 1.0, 0.0))
    assert on.as_json()["shadows"] is True and on.look()["key_light"] == (0.0, 1.0, 0.0)
    assert RenderOptions(**on.look()).shadows is True


@pytest.mark.parametrize("storage", ["texture", "cpu"])
def test_every_bone_storage_casts_the_same_shadow(headless, storage):
    scene, camera = scene_and_camera("cesium-posed")
    towards = key_light_direction(30.0, 45.0)
    reference = headless.render(scene, camera, options(towards)).astype(int)
    from viewer.render.renderer import Renderer

    usual, other = headless.renderer, Renderer(headless.ctx, bone_storage="texture" if storage == "texture" else "auto",
                                               cpu_skinning=storage == "cpu")
    headless.renderer = other
    try:
        image = headless.render(scene, camera, options(towards)).astype(int)
    finally:
        headless.renderer = usual
        other.release()
    assert (np.abs(image - reference).max(axis=2) > 24).mean() < 0.002


def test_shadows_are_on_in_the_window_and_off_in_render_by_default():
    from viewer.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["view"]).shadows is True
    assert parser.parse_args(["view", "--no-shadows"]).shadows is False
    assert parser.parse_args(["render", "--out", "x.png"]).shadows is False
    args = parser.parse_args(["render", "--out", "x.png", "--shadows", "--key-light", "90,0"])
    assert args.shadows is True and args.key_light == pytest.approx((1.0, 0.0, 0.0), abs=1e-12)



def test_a_crowd_casts_every_copy_s_shadow_where_the_projection_says(headless):
    from viewer.model import transforms
    from viewer.model.crowd import Crowd
    from viewer.model.mesh import place_points, skin_positions

    scenes = [character(posed=k % 2 == 1) for k in range(3)]
    worlds = np.array([transforms.compose([1.0, 1.0, 1.0], transforms.quaternion_from_yaw_pitch_roll([0.0, 0.5 * k, 0.0]),
                                          [2.5 * k - 2.5, 0.0, -1.0 * k]) for k in range(3)])
    crowd = Crowd(build_character().skinned_meshes[0], [scene.skeletons[0] for scene in scenes], worlds)
    crowd.prepare()
    low, high = crowd.bounds()
    from viewer.camera import OrbitCamera

    camera = OrbitCamera(target=(low + high) / 2.0, distance=2.2 * float(np.max(high - low)), yaw=20.0, pitch=55.0)
    towards = key_light_direction(30.0, 45.0)
    lit = headless.render_crowd(crowd, camera, options(towards))
    plain = headless.render_crowd(crowd, camera, options(towards, shadows=False))
    body = headless.render_crowd(crowd, camera, options(towards, shadows=False, transparent_background=True))[..., 3] > 0
    dark = (plain[..., :3].astype(int) - lit[..., :3].astype(int)).max(axis=2) > 12
    ground = float(headless.renderer._meshes[("crowd", id(crowd))].ground_bounds()[0][1])  # the grid's, as drawn
    mesh, matrices, offsets = crowd.mesh, crowd.group.get_transform_matrices(), crowd.group.offsets
    image = Image.new("1", SIZE, 0)
    draw = ImageDraw.Draw(image)
    for k, world in enumerate(crowd.world_matrices):
        points = place_points(skin_positions(mesh.positions, mesh.joints, mesh.weights,
                                             matrices[offsets[k]:offsets[k + 1]]), world)
        on_ground = points - ((points[:, 1] - ground) / towards[1])[:, None] * np.asarray(towards)
        pixels = to_pixels(on_ground, camera)
        for triangle in np.asarray(mesh.indices).reshape(-1, 3):
            draw.polygon([tuple(p) for p in pixels[triangle]], fill=1)
    expected = np.array(image, bool)
    judged = ~body & ~(grow(expected, 2) & grow(~expected, 2))
    assert (expected & judged).sum() > 150
    iou = ((dark & expected) & judged).sum() / ((dark | expected) & judged).sum()
    assert iou >= 0.95, iou



class _Placed:
    """A light's node: a fixed world matrix whose -Z axis is where the light shines."""

    def __init__(self, position, shines):
        back = -np.asarray(shines, float) / np.linalg.norm(shines)
        helper = np.array([0.0, 1.0, 0.0]) if abs(back[1]) < 0.9 else np.array([1.0, 0.0, 0.0])
        right = np.cross(helper, back)
        right /= np.linalg.norm(right)
        self.matrix = np.eye(4)
        self.matrix[:3, :3] = np.stack([right, np.cross(back, right), back])
        self.matrix[3, :3] = position

    def get_world_matrix(self, walked=None):
        return self.matrix


@pytest.mark.parametrize("kind", ["directional", "spot"])
def test_a_file_s_directional_or_spot_light_casts_where_the_projection_says(headless, kind):
    from viewer.model.light import PunctualLight

    scene, camera = scene_and_camera("character-posed")
    low, high = scene.rest_bounds
    centre = (low + high) / 2.0
    towards = np.array(key_light_direction(-40.0, 55.0))
    where = centre + 2.5 * float(np.max(high - low)) * towards  # the spot: up there, shining at the middle
    scene.lights = [PunctualLight(kind, intensity=3.0 if kind == "directional" else 40.0, outer_cone_angle=np.radians(50),
                                  node=_Placed(where, -towards))]
    overhead = (0.0, 1.0, 0.0)  # the placed key light, straight down: the file's light casts instead
    lit = headless.render(scene, camera, options(overhead, environment="studio"))
    plain = headless.render(scene, camera, options(overhead, shadows=False, environment="studio"))
    body = headless.render(scene, camera, options(overhead, shadows=False, transparent_background=True))[..., 3] > 0
    dark = (plain[..., :3].astype(int) - lit[..., :3].astype(int)).max(axis=2) > 12
    if kind == "directional":
        expected = projected_shadow(scene, towards, camera)
    else:  # from the spot's position: each vertex along its own ray
        ground = float(low[1])
        image = Image.new("1", SIZE, 0)
        draw = ImageDraw.Draw(image)
        for mesh in scene.meshes:
            points = np.asarray(mesh.skinned_positions(), float)
            t = (where[1] - ground) / (where[1] - points[:, 1])
            pixels = to_pixels(where + (points - where) * t[:, None], camera)
            for triangle in np.asarray(mesh.indices).reshape(-1, 3):
                draw.polygon([tuple(p) for p in pixels[triangle]], fill=1)
        expected = np.array(image, bool)
    judged = ~body & ~(grow(expected, 2) & grow(~expected, 2))
    assert (expected & judged).sum() > 150
    iou = ((dark & expected) & judged).sum() / ((dark | expected) & judged).sum()
    assert iou >= 0.95, iou


def sky_with_a_sun(path, towards, size=(128, 64)):
    """An equirectangular .hdr: an even sky and a small bright sun in the world direction
    ``towards`` (as the renderer reads the picture: u = 0.5 + atan2(x, -z) / 2pi, v = acos(y) / pi)."""
    from test_look_options import write_rle_hdr

    width, height = size
    pixels = np.full((height, width, 3), 0.5)
    x, y, z = towards
    u, v = 0.5 + np.arctan2(x, -z) / (2 * np.pi), np.arccos(y) / np.pi
    column, row = int(u * width) % width, min(int(v * height), height - 1)
    pixels[max(row - 1, 0):row + 2, max(column - 1, 0):column + 2] = 400.0
    return write_rle_hdr(path, pixels.astype(np.float32))


def test_the_sun_of_an_hdr_is_found_where_it_is_and_turns_with_the_environment(tmp_path):
    from viewer.hdr import read_hdr
    from viewer.render.environment import rotation_matrix
    from viewer.render.shadows import sun_direction

    towards = np.array(key_light_direction(-60.0, 40.0))
    pixels = read_hdr(sky_with_a_sun(tmp_path / "sun.hdr", towards))
    found = sun_direction(pixels)
    assert np.degrees(np.arccos(np.clip(found @ towards, -1, 1))) < 4.0
    turned = sun_direction(pixels, 90.0)
    assert np.degrees(np.arccos(np.clip(turned @ (rotation_matrix(90.0).T @ towards), -1, 1))) < 4.0
    assert sun_direction(np.full((32, 64, 3), 0.5)) is None  # an even sky has no sun


def test_shadows_fall_from_the_sun_of_an_hdr_unless_a_key_light_is_placed(headless, tmp_path):
    scene, camera = scene_and_camera("character-posed")
    towards = np.array(key_light_direction(-60.0, 40.0))
    sky = str(sky_with_a_sun(tmp_path / "sun.hdr", towards))
    lit = headless.render(scene, camera, options(RenderOptions.key_light, environment=sky))
    plain = headless.render(scene, camera, options(RenderOptions.key_light, shadows=False, environment=sky))
    body = headless.render(scene, camera, options(towards, shadows=False, transparent_background=True))[..., 3] > 0
    dark = (plain[..., :3].astype(int) - lit[..., :3].astype(int)).max(axis=2) > 12
    from viewer.hdr import read_hdr
    from viewer.render.shadows import sun_direction

    sun = sun_direction(read_hdr(sky))
    expected = projected_shadow(scene, sun, camera)  # where the sun that was found puts it
    judged = ~body & ~(grow(expected, 2) & grow(~expected, 2))
    assert np.degrees(np.arccos(np.clip(sun @ towards, -1, 1))) < 4.0
    assert ((dark & expected) & judged).sum() / ((dark | expected) & judged).sum() >= 0.95
    placed = headless.render(scene, camera, options((0.0, 1.0, 0.0), environment=sky))
    assert np.abs(placed.astype(int) - lit.astype(int)).max() > 40  # a key light placed wins over the sun


def test_render_says_where_it_found_the_sun(cli, tmp_path):
    towards = np.array(key_light_direction(-60.0, 40.0))
    sky = sky_with_a_sun(tmp_path / "sun.hdr", towards)
    result = cli("render", "--out", tmp_path / "a.png", "--size", "32x32", "--environment", sky, "--shadows")
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("shadows:"))
    azimuth, elevation = (float(word) for word in re.findall(r"(?:azimuth|elevation) (-?\d+)", line))
    assert abs((azimuth - 300.0 + 180.0) % 360.0 - 180.0) <= 4 and abs(elevation - 40.0) <= 4, line
    placed = cli("render", "--out", tmp_path / "b.png", "--size", "32x32", "--environment", sky, "--shadows",
                 "--key-light", "10,60")
    assert "from the key light (--key-light)" in placed.stdout

# Last: these make GL contexts of their own current (the module's renderer is not used after).
def test_the_panel_toggles_shadows_and_sets_their_intensity(panel_session):
    from panel_driver import click

    session, display = panel_session, panel_session.editor.display
    click(session, "Light and tone mapping")
    for section in ("Bones", "Selected bone"):
        click(session, section)
    session.run()
    for label in ("Shadows", "shadow intensity", "shadow softness"):
        assert label in session.panel.rects, label
    before = display.shadows
    click(session, "Shadows", near_left=True)
    assert display.shadows is (not before)
    click(session, "Shadows", near_left=True)
    assert display.shadows is before
    x0, y0, x1, y1 = session.panel.rects["shadow intensity"]
    from panel_driver import click_at

    click_at(session, (x0 + 0.9 * (x1 - x0), (y0 + y1) / 2))
    assert display.shadow_intensity > 0.8


def test_the_notebook_draws_shadows_unless_told_not_to():
    from viewer.notebook import Viewer

    shaded, plain = Viewer(None, size=(160, 120)), Viewer(None, size=(160, 120), shadows=False, shadow_softness=0.5)
    try:
        assert shaded.editor.display.shadows is True and plain.editor.display.shadows is False
        assert plain.editor.display.shadow_softness == 0.5
        darker = plain.get_frame()[..., :3].astype(int) - shaded.get_frame()[..., :3].astype(int)
        assert (darker.max(axis=2) > 8).sum() > 50
    finally:
        shaded.close()
        plain.close()


def test_reloading_models_keeps_shadow_captures_only_for_the_meshes_drawn():
    """A window reloading models (Renderer.forget of the old scene, as the session does) keeps one
    shadow capture per live GpuMesh, not one more per model ever drawn."""
    with HeadlessRenderer(SIZE) as headless:
        renderer = headless.renderer
        for name in ("character-posed", "robot-posed", "cesium-posed", "character-rest"):
            scene, camera = scene_and_camera(name)
            headless.render(scene, camera, options(key_light_direction(30.0, 45.0)))
            shadows = renderer._shadow_pass
            live = {id(gpu): gpu for key, gpu in renderer._meshes.items() if not isinstance(key, tuple)}
            assert len(shadows._captures) == len(scene.meshes)
            assert all(entry[0] is live.get(key) for key, entry in shadows._captures.items())
            assert set(shadows._boxes) == {id(mesh) for mesh in scene.meshes}
            renderer.forget(scene)
        assert shadows._captures == {} and shadows._boxes == {}
