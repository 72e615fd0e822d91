"""The environment light (viewer.render.environment, glsl/ibl.glsl, glsl/tonemap.glsl): the
numbers, the caches, and pictures of spheres against Babylon.js's own pictures of them."""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from viewer.errors import ViewerError
from viewer.hdr import write_hdr
from viewer.render import environment as env_module
from viewer.render.environment import (CUBE_SIZE, MIP_COUNT, Environment, brdf_table, cache_directory,
                                       equirect_directions, irradiance_sh, sh_basis, studio_environment)

import environment_spheres as spheres
from fidelity import PASS_DB, read_rgba, score_db


@pytest.fixture
def fresh_caches(monkeypatch, tmp_path):
    """An empty on-disk cache folder and no environment remembered in this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(env_module, "_BAKED", {})
    monkeypatch.setattr(env_module, "_LOADED", env_module.weakref.WeakKeyDictionary())
    return tmp_path / "cache" / "boneviewer" / "environments"


def luminance(rgb):
    return rgb @ np.array([0.2126, 0.7152, 0.0722])


# --- numbers without GL ------------------------------------------------------------------------

def test_studio_is_a_studio_not_a_flat_grey():
    picture = studio_environment()
    assert picture.shape == (256, 512, 3) and picture.dtype == np.float32
    assert np.isfinite(picture).all() and picture.min() > 0.0
    light = luminance(picture)
    assert light.max() > 20 * np.median(light)          # soft boxes far above the room
    upper, lower = light[:128].mean(), light[128:].mean()
    assert upper > 2 * lower                             # a bright sky over a darker floor
    # The key light is up on the camera's left (-X, +Z side): irradiance from there beats the right.
    sh = irradiance_sh(picture)
    irradiance = lambda d: luminance(sh_basis(np.asarray(d, float) / np.linalg.norm(d)) @ sh)  # noqa: E731
    assert irradiance([-1, 1, 1]) > 1.5 * irradiance([1, 1, 1]) > 0
    assert irradiance([0, 1, 0]) > 3 * irradiance([0, -1, 0])


def test_equirect_orientation_is_babylons_right_handed_one():
    d = equirect_directions(4, 8)
    # The middle of the picture is -Z, three quarters across +X, a quarter -X, the top row up.
    assert d[2, 6, 0] > 0.8 and d[2, 2, 0] < -0.8 and d[2, 4, 2] < -0.8
    assert d[0, :, 1].min() > 0.9 and d[-1, :, 1].max() < -0.9


def test_irradiance_of_a_uniform_sky_is_its_radiance_everywhere():
    sh = irradiance_sh(np.full((64, 128, 3), 0.7, np.float32))
    directions = np.random.default_rng(0).normal(size=(50, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    np.testing.assert_allclose(sh_basis(directions) @ sh, 0.7, rtol=2e-3)


def _unit_directions(count=200, seed=0):
    directions = np.random.default_rng(seed).normal(size=(count, 3))
    return directions / np.linalg.norm(directions, axis=1, keepdims=True)


# Analytic irradiance (what sh_basis(n) @ irradiance_sh gives is irradiance / pi). A sky of
# radiance L over the half of the sphere on the side of unit axis a, dark on the other: for a
# normal n at angle g to a, E(n) = integral over the lit half of L max(0, n.w) dw
# = pi L (1 + cos g) / 2 (the lit half's part of the cosine lobe: all of it, pi L, facing a;
# half, pi L / 2, side on; none facing away). It lies wholly in bands 0 and 1, so 9 harmonics
# hold it exactly: E(n) / pi = L (1 + n.a) / 2.
def _half_sky(normals, axis):
    return (1.0 + normals @ np.asarray(axis, float)) / 2.0


def test_a_one_pixel_sky_lights_every_side_alike():
    """A 1x1 picture is one radiance over the whole sphere: the irradiance is that radiance (times
    pi) from every side, not the light of one pixel centre (which left the Fox half black)."""
    sh = irradiance_sh(np.array([[[0.7, 1.2, 2.5]]], np.float32))
    np.testing.assert_allclose(sh_basis(_unit_directions()) @ sh, np.tile([0.7, 1.2, 2.5], (200, 1)), rtol=1e-5)


def test_a_sky_over_a_dark_floor_is_the_half_sky_formula():
    normals = _unit_directions()
    for height, width in ((2, 1), (2, 4), (64, 128)):
        picture = np.zeros((height, width, 3), np.float32)
        picture[:height // 2] = 3.0                                   # the upper rows: up, +Y
        expected = 3.0 * _half_sky(normals, (0, 1, 0))
        np.testing.assert_allclose((sh_basis(normals) @ irradiance_sh(picture))[:, 0], expected,
                                   rtol=1e-5, atol=1e-5, err_msg=f"{height}x{width}")


def test_two_pixels_light_each_half_from_its_own_side():
    """A 1x2 picture: the left pixel is the -X half of the sphere, the right one +X (Babylon's
    orientation, equirect_directions); the light is the sum of the two half skies."""
    left, right = np.array([2.0, 0.5, 0.1]), np.array([0.1, 0.5, 4.0])
    normals = _unit_directions()
    expected = _half_sky(normals, (-1, 0, 0))[:, None] * left + _half_sky(normals, (1, 0, 0))[:, None] * right
    np.testing.assert_allclose(sh_basis(normals) @ irradiance_sh(np.array([[left, right]], np.float32)), expected,
                               rtol=1e-5, atol=1e-5)


def test_irradiance_does_not_depend_on_the_pictures_size():
    """The same sky at 1x2, 4x8 and 64x128 pixels (each pixel repeated over the patch it covers)
    gives the same light, within float32's rounding of the terms; so does a random 4x8 sky at
    4x8 and repeated to 64x128."""
    halves = np.array([[[2.0, 0.5, 0.1], [0.1, 0.5, 4.0]]], np.float32)
    random_sky = np.random.default_rng(1).random((4, 8, 3)).astype(np.float32) * 5.0
    for sky, scales in ((halves, (4, 64)), (random_sky, (16,))):
        small = irradiance_sh(sky)
        for scale in scales:
            larger = np.repeat(np.repeat(sky, scale, axis=0), scale, axis=1)
            np.testing.assert_allclose(irradiance_sh(larger), small, rtol=1e-5, atol=1e-6 * np.abs(small).max(),
                                       err_msg=f"{sky.shape[:2]} repeated {scale} times")


def test_irradiance_of_one_bright_patch_points_at_it():
    picture = np.zeros((64, 128, 3), np.float32)
    picture[20:24, 96:100] = 100.0                        # three quarters across, above the horizon: +X, up
    sh = irradiance_sh(picture)
    toward = sh_basis(np.array([0.9, 0.45, 0.0]) / np.linalg.norm([0.9, 0.45, 0.0])) @ sh
    away = sh_basis(np.array([-0.9, -0.45, 0.0]) / np.linalg.norm([0.9, 0.45, 0.0])) @ sh
    assert toward[0] > 0 and toward[0] > 10 * abs(away[0])


def test_brdf_table_matches_babylons_split_sum():
    table = brdf_table(size=64, samples=256)
    total, bias = table[..., 0] + table[..., 1], table[..., 1]
    assert total.max() <= 1.03 and total.min() > 0.25
    # Babylon's shipped table at (n.v, roughness) = (0.5, 0.5): bias 0.022, scale + bias 0.851;
    # at (1.0, 1.0): 0.0, 0.307; at (0.5, 0.25): 0.032, 0.983 (read from Babylon.js 9.28).
    for n_dot_v, roughness, babylon_bias, babylon_total in ((0.5, 0.5, 0.022, 0.851), (0.99, 0.99, 0.0, 0.307),
                                                            (0.5, 0.25, 0.032, 0.983)):
        row, column = int(roughness * 64), int(n_dot_v * 64)
        assert abs(bias[row, column] - babylon_bias) < 0.01
        assert abs(total[row, column] - babylon_total) < 0.02


def test_the_shipped_brdf_table_is_brdf_table_in_float16():
    """The first picture reads the table from the package (viewer/render/brdf_table.npy) instead of
    computing it: it must be what brdf_table() computes, within float16's rounding (and numpy's
    last bits on another machine)."""
    import viewer.render.environment as environment

    shipped = np.load(environment.BRDF_TABLE_FILE).astype(np.float32)
    assert np.abs(shipped - brdf_table()).max() < 1e-3
    environment._BRDF_TABLE = None
    try:
        assert np.array_equal(environment.cached_brdf_table(), shipped)
    finally:
        environment._BRDF_TABLE = None


def test_cache_folder_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_directory() == tmp_path / "boneviewer" / "environments"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")          # ignored, as the XDG spec says
    assert cache_directory().parts[-3:] == (".cache", "boneviewer", "environments")


def test_the_suite_never_writes_into_home():
    import os

    assert not cache_directory().is_relative_to(os.path.expanduser("~/.cache"))


# --- GPU resources ------------------------------------------------------------------------------

def test_load_builds_babylons_cube_and_caches_it(ctx, fresh_caches):
    start = time.perf_counter()
    environment = Environment.load(ctx, "studio")
    assert environment.specular.size == (CUBE_SIZE, CUBE_SIZE) and environment.mip_count == MIP_COUNT == 9
    assert environment.specular.dtype == "f2" and environment.brdf_lut.components == 2
    assert environment.irradiance_sh.shape == (9, 3)
    assert Environment.load(ctx, "studio") is environment          # once per context
    files = list(fresh_caches.glob("*.npz"))
    assert len([f for f in files if not f.name.startswith("brdf")]) == 1
    first = time.perf_counter() - start

    # Another process: nothing in memory, the disk cache read, no GPU work.
    env_module._BAKED.clear()
    env_module._LOADED.clear()
    environment.release()
    original = env_module._bake
    env_module._bake = lambda *args: pytest.fail("rebaked although cached on disk")
    try:
        start = time.perf_counter()
        again = Environment.load(ctx, "studio")
        cached = time.perf_counter() - start
    finally:
        env_module._bake = original
    np.testing.assert_array_equal(again.irradiance_sh, environment.irradiance_sh)
    assert cached < first


def test_a_corrupt_cache_file_is_rebuilt_not_an_error(ctx, fresh_caches, tmp_path):
    picture = np.full((32, 64, 3), 0.5, np.float32)
    picture[4:8, 40:44] = 20.0
    write_hdr(tmp_path / "e.hdr", picture)
    first = Environment.load(ctx, tmp_path / "e.hdr")
    sh = first.irradiance_sh.copy()
    first.release()
    (cache_file,) = [f for f in fresh_caches.glob("*.npz") if not f.name.startswith("brdf")]
    for garbage in (b"", b"PK\x03\x04 not a zip", cache_file.read_bytes()[:1000]):
        cache_file.write_bytes(garbage)
        env_module._BAKED.clear()
        rebuilt = Environment.load(ctx, tmp_path / "e.hdr")
        np.testing.assert_allclose(rebuilt.irradiance_sh, sh, rtol=1e-6)
        rebuilt.release()
        assert np.load(cache_file)["sh"].shape == (9, 3)   # written again, whole


def test_an_unwritable_cache_only_costs_time(ctx, fresh_caches, monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))        # the cache folder cannot be made
    environment = Environment.load(ctx, "studio")
    assert environment.irradiance_sh.shape == (9, 3) and not list(tmp_path.glob("**/*.npz"))


def test_changed_file_is_a_new_environment(ctx, fresh_caches, tmp_path):
    path = tmp_path / "e.hdr"
    write_hdr(path, np.full((16, 32, 3), 0.25, np.float32))
    dim = Environment.load(ctx, path).irradiance_sh[0, 0]
    write_hdr(path, np.full((16, 32, 3), 1.0, np.float32))
    bright = Environment.load(ctx, path).irradiance_sh[0, 0]
    assert bright == pytest.approx(4 * dim, rel=1e-3)


def test_bad_environment_file_is_one_error_naming_it(ctx, fresh_caches, tmp_path):
    path = tmp_path / "not.hdr"
    path.write_bytes(b"#?RADIANCE\n\n-Y 99999 +X 99999\n")
    with pytest.raises(ViewerError, match="not.hdr"):
        Environment.load(ctx, path)
    with pytest.raises(ViewerError, match="no such file"):
        Environment.load(ctx, tmp_path / "missing.hdr")
    with pytest.raises(ViewerError, match="filtering"):
        Environment.load(ctx, "studio", filtering="blurry")


def _sample_cube(ctx, cube, directions, lod):
    """textureLod(cube, d, lod) for each direction, read back as float32 (N, 3)."""
    import moderngl

    from viewer.render.shaders import shader_source

    fragment = """#version 330 core
uniform samplerCube u_cube;
uniform vec3 u_directions[16];
uniform float u_lod;
out vec4 out_color;
void main() { out_color = textureLod(u_cube, u_directions[int(gl_FragCoord.x)], u_lod); }
"""
    program = ctx.program(vertex_shader=shader_source("background.vert"), fragment_shader=fragment)
    vao = ctx.vertex_array(program, [])
    target = ctx.texture((len(directions), 1), 4, dtype="f4")
    framebuffer = ctx.framebuffer(color_attachments=[target])
    try:
        framebuffer.use()
        cube.use(location=0)
        program["u_cube"].value = 0
        program["u_lod"].value = float(lod)
        padded = np.zeros((16, 3), np.float32)
        padded[:len(directions)] = directions
        program["u_directions"].write(padded.tobytes())
        vao.render(moderngl.TRIANGLES, vertices=3)
        return np.frombuffer(framebuffer.read(components=4, dtype="f4"), np.float32).reshape(-1, 4)[:, :3]
    finally:
        for resource in (framebuffer, target, vao, program):
            resource.release()


@pytest.mark.parametrize("filtering", ["mipmaps", "ggx"])
def test_every_mip_level_is_in_the_cube(ctx, fresh_caches, filtering):
    environment = Environment.load(ctx, "studio", filtering=filtering)
    baked = env_module._BAKED[environment.key]
    assert len(baked.levels) == MIP_COUNT
    directions = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]   # face centres
    for level in (0, 3, 6, 8):
        size = CUBE_SIZE >> level
        faces = baked.levels[level].astype(np.float32)
        # A face centre falls between the middle 2x2 texels (one texel at 1x1): their average.
        middle = faces[:, max(size // 2 - 1, 0):size // 2 + 1, max(size // 2 - 1, 0):size // 2 + 1].mean(axis=(1, 2))
        np.testing.assert_allclose(_sample_cube(ctx, environment.specular, directions, level), middle,
                                   rtol=2e-3, atol=2e-3)


def test_ggx_filtering_blurs_and_keeps_the_light(ctx, fresh_caches):
    box = Environment.load(ctx, "studio")
    ggx = Environment.load(ctx, "studio", filtering="ggx")
    assert ggx is not box
    box_levels = env_module._BAKED[box.key].levels
    ggx_levels = env_module._BAKED[ggx.key].levels
    np.testing.assert_array_equal(ggx_levels[0], box_levels[0])    # level 0 is the mirror either way
    for level in (3, 6):
        blurred, boxed = ggx_levels[level].astype(np.float64), box_levels[level].astype(np.float64)
        # Blurring moves light around the sphere but keeps it (texel solid angles aside: within 10 %),
        # and a GGX lobe is wider than a box of the same level: the peak drops.
        assert blurred.mean() == pytest.approx(boxed.mean(), rel=0.1)
        assert blurred.max() < (0.99 if level == 3 else 0.8) * boxed.max()


def test_box_mips_are_two_by_two_averages():
    faces = np.random.default_rng(0).random((6, 8, 8, 3)).astype(np.float32)
    levels = env_module.box_mips(faces)
    assert [level.shape[1] for level in levels] == [8, 4, 2, 1]
    np.testing.assert_allclose(levels[1][2, 1, 3], faces[2, 2:4, 6:8].mean(axis=(0, 1)), rtol=1e-6)
    np.testing.assert_allclose(levels[3][4, 0, 0], faces[4].mean(axis=(0, 1)), rtol=1e-5)


def test_a_sun_near_float32s_top_averages_to_itself_without_a_warning():
    """Radiance near float32's largest (3.4e38; an .hdr exponent of 255 gives up to 1.7e38) is
    averaged into the mips and into a wide picture's halvings as what it is: no overflow to inf
    and no RuntimeWarning (warnings are errors here), and nothing clamped on the way."""
    sun = np.float32(3.0e38)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        levels = env_module.box_mips(np.full((6, 8, 8, 3), sun, np.float32))
        picture = np.zeros((64, 256, 3), np.float32)
        picture[:32] = sun                                      # a blazing upper half, halved 4 times
        faces = env_module.cube_from_equirect(picture, size=16)
    assert all(np.all(level == sun) for level in levels)
    assert faces[2].min() == sun and faces[3].max() == 0.0      # +Y the sun, -Y the dark floor


def _exponent_255_hdr(path):
    """A 32x16 .hdr of 0.5 grey (flat RGBE 128 128 128 129) with a 4x3-pixel sun up on the +X side
    at exponent 255: (255, 240, 200) * 2**119, up to 1.7e38."""
    rgbe = np.empty((16, 32, 4), np.uint8)
    rgbe[...] = (128, 128, 128, 129)
    rgbe[3:6, 20:24] = (255, 240, 200, 255)
    path.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 16 +X 32\n" + rgbe.tobytes())
    return path


def test_an_exponent_255_sun_is_bright_finite_light_without_a_warning(ctx, fresh_caches, tmp_path):
    """Loading the .hdr raises no RuntimeWarning (warnings are errors here); every stored level
    and harmonic is finite; the sun is not clamped before the mips (its face's 1x1 level keeps
    ~1e37, stored as float16's largest, 65504), and the irradiance points at it."""
    path = _exponent_255_hdr(tmp_path / "sun.hdr")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from viewer.hdr import read_hdr

        picture = read_hdr(path)
        mips = env_module.box_mips(env_module.cube_from_equirect(picture))
        environment = Environment.load(ctx, path)
    assert picture.max() == np.float32(255 * 2.0 ** 119)
    assert mips[-1][0].min() > 1e36                              # +X: the sun's face, 1x1
    stored = env_module._BAKED[environment.key].levels
    assert all(np.isfinite(level).all() for level in stored) and stored[-1][0].min() == 65504
    sh = environment.irradiance_sh
    assert np.isfinite(sh).all()
    toward, away = (sh_basis(np.array(d) / np.linalg.norm(d)) @ sh for d in ((1.0, 0.6, -0.3), (-1.0, -0.6, 0.3)))
    assert toward.min() > 100.0 and toward.min() > 10 * np.abs(away).max()   # 9 terms ring: 460 and 21


def test_cube_faces_pick_babylons_pixels():
    """Each face texel holds the picture's pixel in Babylon's orientation: the face towards -Z
    sees the middle of the picture, +X three quarters across, +Y the top row."""
    height, width = 32, 64
    rows, columns = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    picture = np.stack([columns, rows, np.zeros_like(rows)], axis=-1).astype(np.float32)
    faces = env_module.cube_from_equirect(picture, size=16)

    def centre(face):  # the texel picked nearest the face's own axis
        d = env_module.texel_pick_directions(face, 16)
        axis = env_module.cube_face_directions(face, 2).mean(axis=(0, 1))
        return faces[face][np.unravel_index(np.argmax(d @ axis), (16, 16))]

    assert centre(5)[0] == pytest.approx(width / 2, abs=1) and centre(5)[1] == pytest.approx(height / 2, abs=1)
    assert centre(0)[0] == pytest.approx(3 * width / 4, abs=1)   # +X
    assert centre(1)[0] == pytest.approx(width / 4, abs=1)       # -X
    assert faces[2, ..., 1].max() < height / 3                   # +Y: the top rows
    assert faces[3, ..., 1].min() > 2 * height / 3               # -Y: the bottom rows
    seam = faces[4, 6:10, 6:10, 0].ravel()                        # +Z: the seam, both edges
    assert seam.min() < 3 and seam.max() > width - 4 and np.all((seam < 3) | (seam > width - 4))


# Our face -> Babylon's GL face holding the same texels and whether its columns (else rows) are
# mirrored: a world direction d reads Babylon's cube at (d.x, d.y, -d.z) in a right-handed scene.
# Stated here again on purpose (environment.py has its own): the test's independent account.
_BABYLON_FACE_OF_OURS = ((0, True), (1, True), (2, False), (3, False), (5, True), (4, True))


@pytest.mark.parametrize("size", [16, 256])
def test_each_texels_pick_is_within_half_a_texel_of_its_centre(size):
    """The direction a texel is picked at (Babylon's, at the texel's corner) is that texel's own:
    within half a texel's diagonal of its centre in our face layout (glsl/cubemap.glsl's), on every
    face, so the cube holds each pixel where the shader looks for it (a face mirrored or turned
    would be off by up to the whole face)."""
    half_diagonal = np.sqrt(2.0) / size  # radians, at a face's centre, the largest
    for face in range(6):
        picks, centres = env_module.texel_pick_directions(face, size), env_module.cube_face_directions(face, size)
        angles = np.arccos(np.clip(np.sum(picks * centres, axis=-1), -1.0, 1.0))
        assert angles.max() <= half_diagonal * 1.001, f"face {face}: {np.degrees(angles.max()):.2f} degrees off"


def test_cube_texels_hold_the_pixels_babylon_picks():
    """Every texel of the cube holds the picture pixel Babylon.js's own HDRCubeTexture holds there
    (recorded from its cube, read back in headless Chromium, by
    tests/babylon_render/record_cube_picks.py): an index picture whose pixels are their own row and
    column. Babylon steps across each face from its corner, so its texels sit half a texel off
    their centres; picks at the texel centres agree on a quarter of these texels. A pick
    right on a pixel's edge may round either way with another libm: at most 0.2 % of texels may
    differ, and by one pixel."""
    saved = list(sys.path)
    sys.path.insert(0, str(Path(__file__).parent / "babylon_render"))
    try:
        import record_cube_picks  # (it puts Babylon's recorder on the path too)
    finally:
        sys.path[:] = saved

    record = json.loads(record_cube_picks.RECORD.read_text())
    with tempfile.TemporaryDirectory() as folder:
        assert hashlib.sha256(record_cube_picks.index_picture_bytes(folder)).hexdigest() == record["picture_sha256"]
    picks = np.load(record_cube_picks.OUT)
    size = record["size"]
    faces = env_module.cube_from_equirect(record_cube_picks.index_picture(), size=size)
    ours = np.stack([faces[..., 0], faces[..., 1] + 256 * faces[..., 2]], axis=-1).astype(int)
    theirs = np.stack([picks["rows"], picks["columns"]], axis=-1).astype(int)
    mapped = np.stack([theirs[k][:, ::-1] if mirror_columns else theirs[k][::-1]
                       for k, mirror_columns in _BABYLON_FACE_OF_OURS])
    differs = np.any(ours != mapped, axis=-1)
    assert differs.mean() <= 0.002, f"{differs.sum()} of {differs.size} texels hold another pixel than Babylon's"
    steps = np.abs(ours - mapped)[differs]
    assert np.all((steps[:, 0] <= 1) & ((steps[:, 1] <= 1) | (steps[:, 1] == 511)))


@pytest.mark.parametrize("height, width", [(1, 1), (1, 2), (2, 1), (3, 5), (16, 32)])
def test_a_small_pictures_pixels_are_reflected_where_they_are(height, width):
    """Each cube texel holds the pixel whose patch of sphere its direction is in (the patch the
    irradiance integrates), not the pixel half a pixel away that Babylon's rounding picks: a 1x1
    picture is one reflection all round, a 1x2 picture's halves are the -X and +X halves. Texels
    within 1/256 turn of a pixel's edge are left out (the picks may be half that off)."""
    picture = np.random.default_rng(height * 100 + width).random((height, width, 3)).astype(np.float32)
    size = 16
    faces = env_module.cube_from_equirect(picture, size=size)
    d = np.stack([env_module.texel_pick_directions(face, size) for face in range(6)]).reshape(-1, 3)
    across = (np.arctan2(d[:, 0], -d[:, 2]) / (2.0 * np.pi) + 0.5) * width     # equirect_directions' layout
    down = np.arccos(np.clip(d[:, 1], -1.0, 1.0)) / np.pi * height
    clear = ((np.abs(across - np.round(across)) > width / 256) & (np.abs(down - np.round(down)) > height / 128))
    assert clear.mean() > 0.4
    expected = picture[np.minimum(down.astype(int), height - 1), np.minimum(across.astype(int), width - 1)]
    np.testing.assert_array_equal(faces.reshape(-1, 3)[clear], expected[clear])


def test_studio_version_is_bumped_with_the_picture():
    """The studio's cache key is STUDIO_VERSION, not its pixels (so a cached load need not
    generate it): this fingerprint fails when the generator changes; then bump the version and
    record the new fingerprint."""
    picture = studio_environment()
    blocks = picture.reshape(4, 64, 8, 64, 3).mean(axis=(1, 3, 4))
    assert env_module.STUDIO_VERSION == 1
    np.testing.assert_allclose(blocks, STUDIO_FINGERPRINT, atol=1e-3)


STUDIO_FINGERPRINT = [  # mean radiance of 4 x 8 blocks of studio_environment(), STUDIO_VERSION 1
    [0.9799, 1.5432, 1.2074, 0.7257, 0.7257, 1.2074, 1.2074, 0.7257],
    [2.9635, 3.6137, 0.3529, 0.7126, 1.5546, 0.5469, 1.2535, 0.3529],
    [0.0754, 0.0754, 0.0754, 0.0754, 0.0754, 0.0755, 0.3766, 0.0754],
    [0.0622, 0.0622, 0.0622, 0.0622, 0.0622, 0.0622, 0.0622, 0.0622]]


# --- pictures -----------------------------------------------------------------------------------

def _references():
    manifest = spheres.DATA / "references.json"
    return json.loads(manifest.read_text()) if manifest.is_file() else {}


# What each recorded case scores against Babylon.js (measured at most a dB or two below these).
FIDELITY_BOUNDS = {"mirror": -23.0, "white": -40.0, "metal_rough_0_3": -27.0, "metal_rough_0_6": -30.0,
                   "plastic_0_4": -35.0}


@pytest.mark.parametrize("name", sorted(_references()))
def test_spheres_look_as_babylon_draws_them(ctx, name, tmp_path):
    """The orientation and brightness proof: a mirror, a white diffuse, two rough metals and a
    plastic sphere in the same .hdr, ours (ibl.glsl + tonemap.glsl) against Babylon.js's picture,
    with model-viewer's fidelity metric; and the mirror with the environment turned 90 degrees
    (Babylon's texture.rotationY), which only the same sign of rotation matches."""
    entry = _references()[name]
    environment_file = spheres.environment_file(entry["environment"])
    if environment_file is None:
        pytest.skip(f"{entry['environment']} is not here")
    assert spheres.sha256(environment_file) == entry["environment_sha256"], "re-record: the environment changed"
    environment = Environment.load(ctx, environment_file)
    ours = spheres.render_sphere(ctx, environment, entry["case"], entry["tone_mapping"], entry["exposure"],
                                 tuple(entry["size"]), rotation_degrees=entry.get("rotation_degrees", 0.0))
    score = score_db(ours, read_rgba(spheres.DATA / f"{name}.png"))
    assert score <= min(PASS_DB, FIDELITY_BOUNDS[entry["case"]]), f"{name}: {score:.2f} dB"


def test_a_turned_environment_no_longer_matches(ctx):
    """The proof has teeth: the mirror sphere in the environment turned half way round (or the
    orientation three.js or a z-flip would give) is far from Babylon's picture."""
    name = "mirror-studio-khr-neutral"
    if name not in _references() or spheres.environment_file("studio.hdr") is None:
        pytest.skip("no studio.hdr reference")
    environment = Environment.load(ctx, spheres.environment_file("studio.hdr"))
    theirs = read_rgba(spheres.DATA / f"{name}.png")
    right = score_db(spheres.render_sphere(ctx, environment, "mirror"), theirs)
    turned = score_db(spheres.render_sphere(ctx, environment, "mirror", rotation_degrees=180.0), theirs)
    assert turned > right + 8.0 and turned > PASS_DB


def test_background_shows_the_environment_through_the_camera(ctx, fresh_caches, tmp_path):
    from pyrr import Matrix44

    picture = np.zeros((64, 128, 3), np.float32)
    picture[:, :, 0] = 0.2
    picture[28:36, 60:68] = (0.0, 2.0, 0.0)              # green in the middle of the picture: -Z
    picture[:4] = (0.0, 0.0, 3.0)                         # blue at the top: up
    write_hdr(tmp_path / "e.hdr", picture)
    environment = Environment.load(ctx, tmp_path / "e.hdr")
    size = (64, 64)
    color = ctx.renderbuffer(size, 4)
    framebuffer = ctx.framebuffer(color_attachments=[color])
    framebuffer.use()
    projection = Matrix44.perspective_projection(60.0, 1.0, 0.1, 100.0)
    try:
        for target, expect in (((0, 0, -1), 1), ((0, 1, 0.0001), 2), ((1, 0, 0), 0)):
            view = Matrix44.look_at((0, 0, 0), target, (0, 1, 0) if target[1] == 0 else (0, 0, -1))
            framebuffer.clear(0, 0, 0, 0)
            environment.draw_background(view, projection, tone_mapping="none")
            pixels = np.frombuffer(framebuffer.read(components=4), np.uint8).reshape(64, 64, 4)
            centre = pixels[30:34, 30:34, :3].reshape(-1, 3).mean(axis=0)
            assert np.argmax(centre) == expect, (target, centre)
    finally:
        framebuffer.release()
        color.release()


# --- tone mapping ---------------------------------------------------------------------------------

def _khr_neutral(color):
    color = color.copy()
    x = color.min(axis=-1, keepdims=True)
    color -= np.where(x < 0.08, x - 6.25 * x * x, 0.04)
    peak = color.max(axis=-1, keepdims=True)
    d = 1.0 - 0.76
    new_peak = 1.0 - d * d / (peak + d - 0.76)
    g = 1.0 - 1.0 / (0.15 * (peak - new_peak) + 1.0)
    compressed = color * new_peak / np.maximum(peak, 1e-9) * (1.0 - g) + new_peak * g
    return np.where(peak < 0.76, color, compressed)


def _aces(color):
    inp = np.array([[0.59719, 0.35458, 0.04823], [0.07600, 0.90834, 0.01566], [0.02840, 0.13383, 0.83777]])
    out = np.array([[1.60475, -0.53108, -0.07367], [-0.10208, 1.10813, -0.00605], [-0.00327, -0.07276, 1.07602]])
    v = color @ inp.T
    v = (v * (v + 0.0245786) - 0.000090537) / (v * (0.983729 * v + 0.4329510) + 0.238081)
    return np.clip(v @ out.T, 0.0, 1.0)


@pytest.mark.parametrize("mode", ["none", "khr-neutral", "aces"])
def test_tone_map_is_babylons_image_processing(ctx, mode):
    import moderngl

    from viewer.render.shaders import GLSL_DIR, shader_source
    from viewer.render.tonemap import set_tone_mapping, tone_mapping_defines

    rng = np.random.default_rng(3)
    colors = np.concatenate([rng.random((60, 3)) * 4, [[0, 0, 0], [0.01, 0.02, 0.03], [10, 5, 1], [0.5, 0.5, 0.5]]])
    fragment = ("#version 330 core\n" + "#define TONE_MAPPING {TONE_MAPPING}\n".format(**tone_mapping_defines(mode))
                + (GLSL_DIR / "tonemap.glsl").read_text()
                + "uniform vec3 u_colors[64];\nout vec4 out_color;\n"
                + "void main() { out_color = vec4(tone_map(u_colors[int(gl_FragCoord.x)]), 1.0); }\n")
    program = ctx.program(vertex_shader=shader_source("background.vert"), fragment_shader=fragment)
    vao = ctx.vertex_array(program, [])
    target = ctx.texture((64, 1), 4, dtype="f4")
    framebuffer = ctx.framebuffer(color_attachments=[target])
    try:
        framebuffer.use()
        program["u_colors"].write(colors.astype(np.float32).tobytes())
        exposure = 1.5
        set_tone_mapping(program, exposure)
        vao.render(moderngl.TRIANGLES, vertices=3)
        got = np.frombuffer(framebuffer.read(components=4, dtype="f4"), np.float32).reshape(64, 4)[:, :3]
    finally:
        for resource in (framebuffer, target, vao, program):
            resource.release()
    exposed = colors * exposure
    curve = {"none": lambda c: c, "khr-neutral": _khr_neutral, "aces": _aces}[mode](exposed)
    expected = np.clip(np.maximum(curve, 0.0) ** (1 / 2.2), 0.0, 1.0)   # Babylon's toGammaSpace, then saturate
    np.testing.assert_allclose(got, expected, atol=2e-4)


def test_tonemap_glsl_needs_its_curve_as_a_define(ctx):
    """The curve is compiled in (TONE_MAPPING), not chosen by a uniform that llvmpipe would
    evaluate both sides of: a program that includes tonemap.glsl without it does not build."""
    from viewer.render.shaders import GLSL_DIR, shader_source

    source = (GLSL_DIR / "tonemap.glsl").read_text()
    assert "u_tone_mapping" not in source
    fragment = ("#version 330 core\n" + source
                + "out vec4 out_color;\nvoid main() { out_color = vec4(tone_map(vec3(0.5)), 1.0); }\n")
    with pytest.raises(Exception, match="TONE_MAPPING"):
        ctx.program(vertex_shader=shader_source("background.vert"), fragment_shader=fragment)


def test_unknown_tone_mapping_is_a_viewer_error():
    from viewer.render.tonemap import tone_mapping_code

    assert tone_mapping_code("aces") == 2
    with pytest.raises(ViewerError, match="khr-neutral"):
        tone_mapping_code("filmic")
