"""The lit material, drawn (issue 27): what a person would check in the pictures.

Each test builds a small scene in code (tests/pbr_scenes.py's quad and sphere), renders it
headless and checks a property of the pixels: metal and roughness, the alpha modes, culling and
double-sided lighting, the normal map's direction, samplers and texture transforms, exposure and
tone mapping; and that CPU skinning, the uniform array and the bone texture draw a textured,
normal-mapped skinned model alike.
"""

import logging

import numpy as np
import pytest

import pbr_scenes
from pbr_scenes import bump_normal_map, quad, sphere
from viewer.camera import OrbitCamera, framed_camera
from viewer.gltf import load_gltf
from viewer.model import Scene, SkinnedMesh
from viewer.model.light import PunctualLight
from viewer.model.material import MIRRORED_REPEAT, NEAREST, Material, Sampler, TextureSlot, uv_transform
from viewer.model.mesh import Submesh
from viewer.model.tangents import generate_tangents
from viewer.options import RenderOptions
from viewer.render.headless import HeadlessRenderer
from viewer.render.renderer import Renderer

from samples import CESIUM_MAN

SIZE = (96, 96)
SIMPLE = dict(environment="none", show_skeleton=False, show_grid=False, transparent_background=True)
STUDIO = dict(SIMPLE, environment="studio")


@pytest.fixture(scope="module")
def headless():
    with HeadlessRenderer(SIZE) as renderer:
        yield renderer


def model(geometry, material: Material, tangents=None, name="part", move=(0.0, 0.0, 0.0)) -> SkinnedMesh:
    """A mesh without a skin from one of pbr_scenes' geometries, drawn with ``material``."""
    indices = np.asarray(geometry["index"])
    world = np.eye(4)
    world[3, :3] = move
    return SkinnedMesh(name, geometry["position"], indices, None, normals=geometry["normal"],
                       texcoords=geometry["uv"], world_matrix=world, tangents=tangents,
                       submeshes=[Submesh(0, len(indices), pbr=material)])


def ball(radius: float) -> dict:
    """pbr_scenes' sphere (its triangles counter-clockwise seen from outside: glTF's front)."""
    return sphere(radius)


def scene_of(*meshes) -> Scene:
    return Scene("pbr test", [], static_meshes=list(meshes))


def front(distance=3.0, target=(0.0, 0.0, 0.0)) -> OrbitCamera:
    """Looking at the target from +Z (yaw 0, pitch 0)."""
    return OrbitCamera(target=target, distance=distance, yaw=0.0, pitch=0.0, fov_y=40.0)


def luminance(image) -> np.ndarray:
    return image[..., :3].astype(float) @ [0.2126, 0.7152, 0.0722]


def drawn(image) -> np.ndarray:
    return image[..., 3] > 0


def image_of(width, height, pixel) -> np.ndarray:
    """(height, width, 4) uint8 RGBA from ``pixel(x, y)`` over a grid of texel centres in 0..1."""
    y, x = np.mgrid[0:height, 0:width]
    return np.asarray(pixel((x + 0.5) / width, (y + 0.5) / height), np.uint8).transpose(1, 2, 0)


# --- the BRDF ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("look", [SIMPLE, STUDIO], ids=["simple light", "studio"])
def test_a_smooth_metal_sphere_has_a_brighter_highlight_than_a_rough_one(headless, look):
    peaks, medians = {}, {}
    for roughness in (0.15, 0.9):
        metal = Material(base_color_factor=np.array([0.9, 0.9, 0.9, 1.0]), metallic_factor=1.0,
                         roughness_factor=roughness)
        # Darker and not tone mapped, so that neither highlight is clipped at white.
        image = headless.render(scene_of(model(ball(0.8), metal)), front(),
                                RenderOptions(**look, exposure=0.3, tone_mapping="none"))
        peaks[roughness] = luminance(image)[drawn(image)].max()
        medians[roughness] = np.median(luminance(image)[drawn(image)])
    assert peaks[0.15] > peaks[0.9] + 30
    assert peaks[0.15] - medians[0.15] > peaks[0.9] - medians[0.9] + 30  # a sharper, more contrasted highlight


def test_a_dielectric_keeps_its_colour_and_a_metal_tints_its_reflections(headless):
    """Orange plastic and orange metal: the plastic's highlight is white-ish (F0 0.04, untinted),
    the metal's reflections are orange (F0 = its base colour) and it has no diffuse colour."""
    def sphere_image(metallic):
        material = Material(base_color_factor=np.array([0.9, 0.35, 0.05, 1.0]), metallic_factor=metallic,
                            roughness_factor=0.3)
        return headless.render(scene_of(model(ball(0.8), material)), front(), RenderOptions(**STUDIO))

    plastic, metal = sphere_image(0.0), sphere_image(1.0)
    for image in (plastic, metal):
        rgb = image[drawn(image)][:, :3].astype(float).mean(axis=0)
        assert rgb[0] > rgb[2] + 30  # both read as orange
    brightest = lambda image: image[drawn(image)][np.argmax(luminance(image)[drawn(image)])][:3].astype(int)  # noqa: E731
    r, g, b = brightest(plastic)
    assert b > 0.6 * r  # a white highlight on the plastic
    r, g, b = brightest(metal)
    assert r > b + 60   # an orange one on the metal


def test_punctual_lights_light_what_they_face_with_the_range_falling_off(headless):
    plane = quad(4.0, 4.0, 8)
    gray = Material.dielectric((0.5, 0.5, 0.5, 1.0))
    scene = scene_of(model(plane, gray))
    dark = headless.render(scene, front(4.0), RenderOptions(**SIMPLE, key_light=(0.0, 0.0, -1.0)))
    # A point light in front of the left half, 0.5 from the plane.
    node = type("Node", (), {"get_world_matrix": lambda self: _translation(-1.0, 0.0, 0.5)})()
    scene.lights = [PunctualLight("point", np.array([1.0, 0.9, 0.8]), intensity=2.0, node=node)]
    lit = headless.render(scene, front(4.0), RenderOptions(**SIMPLE, key_light=(0.0, 0.0, -1.0)))
    gain = luminance(lit) - luminance(dark)
    left, right = gain[:, : SIZE[0] // 2], gain[:, SIZE[0] // 2:]
    assert left.max() > 40 and left.mean() > right.mean() + 5
    scene.lights[0].range = 0.6  # nothing farther than 0.6 from the light is lit
    ranged = luminance(headless.render(scene, front(4.0), RenderOptions(**SIMPLE, key_light=(0.0, 0.0, -1.0))))
    assert np.abs(ranged - luminance(dark))[:, SIZE[0] // 2:].max() < 2


def _translation(x, y, z) -> np.ndarray:
    matrix = np.eye(4)
    matrix[3, :3] = (x, y, z)
    return matrix


# --- alpha modes and sides --------------------------------------------------------------------------

def half_clear_texture() -> np.ndarray:
    """White, alpha 0.2 on the left half and 1 on the right."""
    return image_of(16, 16, lambda x, y: (np.full_like(x, 255), np.full_like(x, 255), np.full_like(x, 255),
                                          np.where(x < 0.5, 51, 255)))


def test_mask_discards_what_is_under_the_cutoff_and_opaque_ignores_alpha(headless):
    texture = half_clear_texture()
    pictures = {}
    for mode in ("OPAQUE", "MASK"):
        material = Material.dielectric(texture=texture)
        material.alpha_mode, material.alpha_cutoff = mode, 0.5
        pictures[mode] = headless.render(scene_of(model(quad(2.0, 2.0), material)), front(), RenderOptions(**SIMPLE))
    row = SIZE[1] // 2
    left, right = slice(20, 44), slice(52, 76)
    assert (pictures["OPAQUE"][row, left, 3] == 255).all() and (pictures["OPAQUE"][row, right, 3] == 255).all()
    assert (pictures["MASK"][row, left, 3] == 0).all()      # discarded: the clear background
    assert (pictures["MASK"][row, right, 3] == 255).all()   # kept, and drawn opaque


def test_blend_shows_what_is_behind_it_whatever_the_mesh_order(headless):
    red = Material.dielectric((0.8, 0.05, 0.05, 1.0))
    glass = Material.dielectric((0.05, 0.1, 0.9, 0.5))
    glass.alpha_mode = "BLEND"
    behind = model(quad(2.0, 2.0), red, name="behind", move=(0.0, 0.0, -0.5))
    pane = model(quad(1.0, 1.0), glass, name="pane", move=(0.0, 0.0, 0.5))
    centre = (SIZE[1] // 2, SIZE[0] // 2)
    for meshes in ((behind, pane), (pane, behind)):  # blended meshes are drawn last, whatever the order
        image = headless.render(scene_of(*meshes), front(), RenderOptions(**SIMPLE))
        r, g, b, a = image[centre].astype(int)
        assert r > 60 and b > 60 and a == 255  # the red through the blue
    pane_alone = headless.render(scene_of(pane), front(), RenderOptions(**SIMPLE))
    a = int(pane_alone[centre][3])
    assert 100 < a < 160  # over nothing, the pane's own alpha (0.5)
    glass.alpha_mode = "OPAQUE"
    solid = headless.render(scene_of(model(quad(2.0, 2.0), red, move=(0.0, 0.0, -0.5)),
                                     model(quad(1.0, 1.0), glass, move=(0.0, 0.0, 0.5))), front(),
                            RenderOptions(**SIMPLE))
    r, g, b, a = solid[centre].astype(int)
    assert b > r + 60  # opaque: the red is hidden


def test_back_faces_are_culled_unless_double_sided_and_then_lit_from_their_side(headless):
    away = quad(2.0, 2.0)
    # Turned half round about Y: its front (counter-clockwise side) faces -Z, away from the camera.
    away = dict(away, position=away["position"] * [-1.0, 1.0, -1.0], normal=away["normal"] * [-1.0, 1.0, -1.0])
    centre = (SIZE[1] // 2, SIZE[0] // 2)
    single = Material.dielectric((0.8, 0.8, 0.8, 1.0))
    light_at_camera = RenderOptions(**SIMPLE, key_light=(0.0, 0.0, 1.0))
    culled = headless.render(scene_of(model(away, single)), front(), light_at_camera)
    assert culled[centre][3] == 0
    double = Material.dielectric((0.8, 0.8, 0.8, 1.0))
    double.double_sided = True
    shown = headless.render(scene_of(model(away, double)), front(), light_at_camera)
    assert shown[centre][3] == 255
    # Its normal flipped towards the camera, the key light behind the camera lights it as the
    # front of a plane turned to the camera is lit.
    facing = headless.render(scene_of(model(quad(2.0, 2.0), double)), front(), light_at_camera)
    assert abs(luminance(shown)[centre] - luminance(facing)[centre]) < 4
    assert luminance(shown)[centre] > 120


# --- textures --------------------------------------------------------------------------------------

def tilted_normal_map(x: float, y: float) -> np.ndarray:
    """A 4x4 normal map of one tangent-space normal tilted towards +X (right) and +Y (up)."""
    normal = np.array([x, y, 1.0]) / np.linalg.norm([x, y, 1.0])
    texel = np.round((normal * 0.5 + 0.5) * 255)
    return np.tile(np.r_[texel, 255].astype(np.uint8), (4, 4, 1))


@pytest.mark.parametrize("tangents", ["given", "generated", "derivatives"])
def test_a_normal_map_turns_the_shading_towards_its_normals(headless, tangents):
    """Light from the upper right: a normal map leaning right or up (the map's +X, +Y: the image's
    right and top, glTF's convention) brightens the plane, leaning left or down darkens it. The
    quad's u runs along +X and v along -Y (down the image): glTF's tangent +X, w +1; MikkTSpace's
    (generated) must give the same."""
    plane = quad(2.0, 2.0)
    given = None
    if tangents == "given":
        given = np.tile([1.0, 0.0, 0.0, 1.0], (len(plane["position"]), 1))
    elif tangents == "generated":
        given, remap, _ = generate_tangents(plane["position"], plane["normal"], plane["uv"], plane["index"])
        assert len(remap) == len(plane["position"])
    options = RenderOptions(**SIMPLE, key_light=(0.6, 0.6, 0.5))
    centre = (slice(40, 56), slice(40, 56))

    def brightness(x, y):
        material = Material.dielectric((0.7, 0.7, 0.7, 1.0))
        if (x, y) != (0, 0):
            material.normal_texture = TextureSlot(tilted_normal_map(x, y), sampler=Sampler(NEAREST, NEAREST))
        image = headless.render(scene_of(model(plane, material, tangents=given)), front(), options)
        return luminance(image)[centre].mean()

    flat = brightness(0, 0)
    assert brightness(0.5, 0) > flat + 5 and brightness(-0.5, 0) < flat - 5
    assert brightness(0, 0.5) > flat + 5 and brightness(0, -0.5) < flat - 5
    # The scale shortens the tilt (normalTexture.scale)
    material = Material.dielectric((0.7, 0.7, 0.7, 1.0))
    material.normal_texture = TextureSlot(tilted_normal_map(0.5, 0), scale=0.2, sampler=Sampler(NEAREST, NEAREST))
    scaled = luminance(headless.render(scene_of(model(plane, material, tangents=given)), front(), options))
    assert flat < scaled[centre].mean() < brightness(0.5, 0)


def test_the_normal_map_scene_shades_alike_with_a_tangent_accessor_generated_tangents_and_derivatives(
        headless, tmp_path):
    """tests/pbr_scenes.py's normal_map scene (bumps) as it is (no TANGENT: MikkTSpace's, generated
    on loading), with a TANGENT accessor of glTF's analytic frame for its uvs (+X, w +1), and
    without tangents at all (the shader's screen-space derivative frame, as Babylon draws a file
    without TANGENT): the three pictures agree. A w of the wrong sign draws its domes as dimples."""
    gltf, cam = pbr_scenes.scene_normal_map()
    (tmp_path / "generated.glb").write_bytes(gltf.glb())
    gltf, _ = pbr_scenes.scene_normal_map()
    primitive = gltf.doc["meshes"][0]["primitives"][0]
    count = gltf.doc["accessors"][primitive["attributes"]["POSITION"]]["count"]
    primitive["attributes"]["TANGENT"] = gltf.accessor(np.tile([1.0, 0.0, 0.0, 1.0], (count, 1)), "VEC4")
    (tmp_path / "given.glb").write_bytes(gltf.glb())
    camera = OrbitCamera(target=cam["target"], distance=cam["distance"], yaw=cam["yaw"], pitch=cam["pitch"],
                         fov_y=cam["fov"])

    def picture(name, change=None):  # a scene loaded afresh each time (the renderer keeps a mesh's buffers)
        scene = load_gltf(tmp_path / name)
        if change is not None:
            change(scene.static_meshes[0])
        return headless.render(scene, camera, RenderOptions(**STUDIO))

    generated_tangents = load_gltf(tmp_path / "generated.glb").static_meshes[0].tangents
    assert (generated_tangents[:, 3] == 1).all()
    np.testing.assert_allclose(generated_tangents, load_gltf(tmp_path / "given.glb").static_meshes[0].tangents,
                               atol=1e-6)
    generated, given = picture("generated.glb"), picture("given.glb")
    derivatives = picture("generated.glb", lambda mesh: setattr(mesh, "tangents", None))
    flat = picture("generated.glb", lambda mesh: setattr(mesh.submeshes[0].pbr, "normal_texture", None))
    inside = drawn(given)
    assert inside.mean() > 0.3

    def difference(a, b):
        return np.abs(a[..., :3].astype(float) - b[..., :3].astype(float)).max(axis=-1)[inside]

    assert difference(generated, given).max() <= 2
    assert np.mean(difference(derivatives, given) > 8) < 0.01  # derivatives differ by rounding, at edges
    assert np.mean(difference(flat, given) > 8) > 0.2  # the bumps show: the comparison is not vacuous
    # and so would a flipped w: the dimples differ from the domes
    dimples = picture("given.glb", lambda mesh: setattr(mesh, "tangents", mesh.tangents * np.float32([1, 1, 1, -1])))
    assert np.mean(difference(dimples, given) > 8) > 0.1


def stripes() -> np.ndarray:
    """Black on the left half, white on the right."""
    return image_of(8, 8, lambda x, y: (*(np.where(x < 0.5, 0, 255),) * 3, np.full_like(x, 255)))


def test_samplers_wrap_and_texture_transforms_move_the_picture(headless):
    """u runs 0..2 across the quad: REPEAT shows black white black white, MIRRORED_REPEAT black
    white white black; a KHR_texture_transform offset of half the picture swaps the halves."""
    plane = quad(2.0, 2.0)
    plane = dict(plane, uv=plane["uv"] * [2.0, 1.0])
    camera = front(3.0)
    centres = camera.project([[x, 0.0, 0.0] for x in (-0.75, -0.25, 0.25, 0.75)], *SIZE)  # u 0.25, 0.75, ...

    def quarters(slot):
        material = Material.dielectric()
        material.base_color_texture = slot
        image = headless.render(scene_of(model(plane, material)), camera, RenderOptions(**SIMPLE))
        return [bool(luminance(image)[int(y), int(x)] > 100) for x, y in centres]

    nearest = dict(mag_filter=NEAREST, min_filter=NEAREST)
    assert quarters(TextureSlot(stripes(), sampler=Sampler(**nearest))) == [False, True, False, True]
    mirrored = Sampler(**nearest, wrap_s=MIRRORED_REPEAT)
    assert quarters(TextureSlot(stripes(), sampler=mirrored)) == [False, True, True, False]
    shifted = TextureSlot(stripes(), sampler=Sampler(**nearest), transform=uv_transform(offset=(0.5, 0.0)))
    assert quarters(shifted) == [True, False, True, False]


def test_a_slot_reads_the_uv_set_it_names(headless):
    plane = quad(2.0, 2.0)
    mesh = model(plane, Material.dielectric())
    mesh.texcoords1 = np.asarray(plane["uv"], np.float32)[:, ::-1] * [1.0, 1.0]  # u and v swapped
    mesh.texcoords = np.zeros_like(mesh.texcoords1)  # TEXCOORD_0 samples one texel: black
    slot = TextureSlot(stripes(), texcoord=1, sampler=Sampler(NEAREST, NEAREST))
    mesh.submeshes[0].pbr.base_color_texture = slot
    image = luminance(headless.render(scene_of(mesh), front(), RenderOptions(**SIMPLE)))
    top, bottom = image[30, SIZE[0] // 2], image[66, SIZE[0] // 2]  # TEXCOORD_1's u runs down the quad
    assert top < 60 and bottom > 100


def test_emissive_glows_in_the_dark_and_unlit_shows_the_base_colour(headless):
    dark = dict(SIMPLE, key_light=(0.0, 0.0, -1.0))  # the key light behind the plane
    glowing = Material.dielectric((0.0, 0.0, 0.0, 1.0))
    glowing.emissive_factor, glowing.emissive_strength = np.array([1.0, 0.2, 0.0]), 0.6
    r, g, b, _ = headless.render(scene_of(model(quad(2.0, 2.0), glowing)), front(), RenderOptions(**dark))[48, 48]
    assert r > 150 and g < 120 and b < 40
    flat = Material.dielectric((0.2, 0.5, 0.1, 1.0))
    flat.unlit = True
    pictures = [headless.render(scene_of(model(ball(0.8), flat)), front(), RenderOptions(**look))
                for look in (dark, STUDIO)]
    for image in pictures:
        colors = image[drawn(image)][:, :3].astype(int)
        assert np.ptp(colors, axis=0).max() <= 2  # one colour all over: no light, no shading
    assert np.abs(pictures[0][drawn(pictures[0])].astype(int) - pictures[1][drawn(pictures[1])]).max() <= 2


def test_a_texture_whose_pixels_do_not_decode_is_drawn_without_with_one_warning_line(headless, tmp_path, caplog):
    from test_materials import Gltf, cut_png, data_uri

    files = {}
    for name, texture in (("cut", True), ("plain", False)):
        b = Gltf()
        spec = {"pbrMetallicRoughness": {"baseColorFactor": [0.2, 0.6, 0.3, 1], "metallicFactor": 0}}
        if texture:  # the pixels decode when the renderer first reads them, and do not
            image = b.add("images", {"uri": data_uri(cut_png())})
            spec["pbrMetallicRoughness"]["baseColorTexture"] = {"index": b.add("textures", {"source": image})}
            spec["normalTexture"] = {"index": b.add("textures", {"source": image})}
        b.quad(b.add("materials", spec))
        files[name] = load_gltf(b.save(tmp_path / f"{name}.gltf"))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="boneviewer"):
        pictures = [headless.render(files[name], front(), RenderOptions(**SIMPLE)) for name in ("cut", "cut", "plain")]
    lines = [r.getMessage() for r in caplog.records if r.name == "boneviewer"]
    assert len(lines) == 1 and "image 0 does not decode as PNG or JPEG" in lines[0] and "\n" not in lines[0], lines
    assert drawn(pictures[0]).any()
    np.testing.assert_array_equal(pictures[0], pictures[2])  # as if it had no texture
    np.testing.assert_array_equal(pictures[1], pictures[2])


# --- the look --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cesium_man():
    scene = load_gltf(CESIUM_MAN)
    return scene, framed_camera(scene, aspect=1.0)


def test_exposure_two_is_brighter_than_one(headless, cesium_man):
    scene, camera = cesium_man
    one = headless.render(scene, camera, RenderOptions(**STUDIO))
    two = headless.render(scene, camera, RenderOptions(**STUDIO, exposure=2.0))
    assert luminance(two)[drawn(two)].mean() > luminance(one)[drawn(one)].mean() + 15


def test_the_tone_mappings_differ(headless, cesium_man):
    scene, camera = cesium_man
    images = {mode: headless.render(scene, camera, RenderOptions(**STUDIO, tone_mapping=mode, exposure=1.5))
              for mode in ("khr-neutral", "aces", "none")}
    for a, b in (("khr-neutral", "aces"), ("khr-neutral", "none"), ("aces", "none")):
        model_pixels = drawn(images[a])
        difference = np.abs(images[a][model_pixels].astype(int) - images[b][model_pixels]).max(axis=1)
        assert (difference > 6).mean() > 0.2, (a, b)


def test_the_environment_lights_the_model_and_none_keeps_the_simple_light(headless, cesium_man):
    scene, camera = cesium_man
    studio = headless.render(scene, camera, RenderOptions(**STUDIO))
    simple = headless.render(scene, camera, RenderOptions(**SIMPLE))
    assert (drawn(studio) == drawn(simple)).all()
    difference = np.abs(studio.astype(int) - simple)[drawn(studio)].max(axis=1)
    assert (difference > 8).mean() > 0.2


# --- the skinning paths ----------------------------------------------------------------------------

def normal_mapped_cesium_man():
    """CesiumMan posed mid-walk, its texture and a bumpy normal map (tangents made up: any frame
    skinned alike on every path will do)."""
    scene = load_gltf(CESIUM_MAN)
    clip = scene.animations[0]
    clip.apply(clip.duration * 0.4)
    mesh = scene.skinned_meshes[0]
    material = mesh.submeshes[0].pbr
    material.normal_texture = TextureSlot(bump_normal_map(64), scale=1.5)
    material.metallic_factor, material.roughness_factor = 0.3, 0.35
    side = np.cross(mesh.normals, [0.0, 0.0, 1.0])
    side[np.linalg.norm(side, axis=1) < 1e-3] = (1.0, 0.0, 0.0)
    mesh.tangents = np.c_[side / np.linalg.norm(side, axis=1, keepdims=True), np.ones(len(side))].astype(np.float32)
    return scene


@pytest.mark.parametrize("mode", ["cpu", "texture"])
def test_skinning_paths_draw_a_textured_normal_mapped_model_alike(headless, mode):
    size = (160, 160)
    headless.resize(size)
    try:
        scene = normal_mapped_cesium_man()
        camera = framed_camera(scene, aspect=1.0)
        options = RenderOptions(**STUDIO)
        reference = headless.render(scene, camera, options)   # the uniform array
        assert headless.renderer.gpu_mesh(scene.skinned_meshes[0]).skinning == 1
        renderer = Renderer(headless.ctx, bone_storage="texture" if mode == "texture" else "auto",
                            cpu_skinning=mode == "cpu")
        try:
            headless.target.framebuffer.use()
            scene.prepare()
            renderer.render(scene, camera, size, options)
            image = headless.target.read()
        finally:
            renderer.release()
        bare = normal_mapped_cesium_man()
        bare.skinned_meshes[0].submeshes[0].pbr.normal_texture = None
        flat = headless.render(bare, camera, options)
    finally:
        headless.resize(SIZE)
    differing = lambda a, b: (np.abs(a[..., :3].astype(int) - b[..., :3]).max(axis=2) > 24).mean()  # noqa: E731
    assert differing(image, reference) < 0.005
    assert differing(flat, reference) > 0.02  # the normal map shows: the comparison is not vacuous


def test_morphed_tangents_turn_the_normal_map_alike_on_the_gpu_and_the_cpu(headless):
    """A morph target that turns the tangent from +X to +Y turns a normal map leaning along the
    tangent from the light's side (right) to the top: the shader's morph and numpy's agree."""
    from viewer.model.morph import MorphTargets

    plane = quad(2.0, 2.0)
    count = len(plane["position"])
    options = RenderOptions(**SIMPLE, key_light=(0.8, 0.0, 0.6))  # light from the right

    def picture(weight, cpu):
        material = Material.dielectric((0.7, 0.7, 0.7, 1.0))
        material.normal_texture = TextureSlot(tilted_normal_map(0.8, 0.0), sampler=Sampler(NEAREST, NEAREST))
        mesh = model(plane, material, tangents=np.tile([1.0, 0.0, 0.0, 1.0], (count, 1)))
        mesh.morph_targets = MorphTargets(np.zeros((1, count, 3)), tangents=np.tile([[-1.0, 1.0, 0.0]], (1, count, 1)),
                                          weights=[weight])
        if not cpu:
            return headless.render(scene_of(mesh), front(), options)
        renderer = Renderer(headless.ctx, cpu_skinning=True)
        try:
            headless.target.framebuffer.use()
            renderer.render(scene_of(mesh), front(), SIZE, options)
            return headless.target.read()
        finally:
            renderer.release()

    centre = (slice(40, 56), slice(40, 56))
    right, up = luminance(picture(0.0, False))[centre].mean(), luminance(picture(1.0, False))[centre].mean()
    assert right > up + 10  # leaning to the light, then away from it
    for weight in (0.0, 1.0):
        assert np.abs(picture(weight, True).astype(int) - picture(weight, False)).max() <= 2


def test_environment_filter_ggx_blurs_metal_with_roughness_more_widely_than_box_mips(tmp_path):
    """--environment-filter: GGX-prefiltered reflections (importance sampled on the GPU) against
    Babylon.js's box mips, on the metal column of the metal/rough grid. Both blur the reflection
    more as roughness grows (the variation inside a sphere falls row by row); on the mirror they
    are alike (both read the unfiltered level); at roughness 0.75 GGX's lobe, with its long
    tails, blurs clearly more than a box mip of the same level (measured 21 against 30)."""
    from PIL import Image

    from pbr_scenes import write_scene
    from viewer.cli import main

    model, camera = write_scene("metal_rough_grid", tmp_path)
    pictures = {}
    for filtering in ("mipmaps", "ggx"):
        out = tmp_path / f"{filtering}.png"
        assert main(["render", str(model), "--camera", str(camera), "--size", "200x200", "--no-skeleton",
                     "--no-grid", "--background", "transparent", "--environment-filter", filtering,
                     "--out", str(out)]) == 0
        pictures[filtering] = np.asarray(Image.open(out).convert("RGBA")).astype(float)
    opaque = pictures["mipmaps"][..., 3] > 0

    def runs(occupied):  # (start, end) of each run of True: the five columns or rows of spheres
        edges = np.flatnonzero(np.diff(np.r_[0, occupied.astype(int), 0]))
        return list(zip(edges[::2], edges[1::2]))

    columns, rows = runs(opaque.any(axis=0)), runs(opaque.any(axis=1))
    assert len(columns) == len(rows) == 5

    def sphere_pixels(picture, column, row):
        (left, right), (top, bottom) = columns[column], rows[row]
        x, y, quarter = (left + right) // 2, (top + bottom) // 2, (right - left) // 4
        patch = picture[y - quarter:y + quarter, x - quarter:x + quarter]
        assert (patch[..., 3] == 255).all(), "the patch is inside the sphere"
        return patch[..., :3]

    variation = {name: [sphere_pixels(picture, 4, row).std(axis=(0, 1)).mean() for row in range(5)]
                 for name, picture in pictures.items()}
    for rows in variation.values():
        assert rows[0] > rows[2] > rows[3] > rows[4], variation
    assert abs(variation["ggx"][0] - variation["mipmaps"][0]) < 0.1 * variation["mipmaps"][0], variation
    assert variation["ggx"][3] < 0.85 * variation["mipmaps"][3], variation
