"""USD in: what boneviewer draws of a USD stage equals what UsdSkel itself evaluates
(tests/usd_reference.py: UsdSkel's blend shapes and skinning at a time code), within 1e-5 of the
model's size, for .usda, .usdc and .usdz, with the stage's axes and units kept or turned to glTF's;
clips at time code / timeCodesPerSecond; textures read from the package; bad stages refused in one
line with exit 2."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import usd_cases
from test_fbx import point_set_distance, posed_points
from usd_reference import usdskel_points
from viewer.errors import ViewerError
from viewer.usd import load_usd, load_usd_file

TIMES = (0, 6, 12, 18.5, 24, 30)  # time codes: on samples, between, past the last


def _png(path: Path) -> None:
    from PIL import Image

    pixels = np.zeros((8, 8, 3), np.uint8)
    pixels[:, :4] = (255, 0, 0)
    pixels[:, 4:] = (0, 0, 255)
    Image.fromarray(pixels).save(path)


@pytest.fixture(scope="module")
def stages(tmp_path_factory):
    """The case as .usda, .usdc and .usdz (the .usdz with its texture packed)."""
    from pxr import Usd, UsdUtils

    folder = tmp_path_factory.mktemp("usd")
    _png(folder / "stripes.png")
    usda = folder / "character.usda"
    usd_cases.make_stage(usda, texture="stripes.png")
    usdc = folder / "character.usdc"
    Usd.Stage.Open(str(usda)).Export(str(usdc))
    usdz = folder / "character.usdz"
    assert UsdUtils.CreateNewUsdzPackage(str(usdc), str(usdz))
    return {"usda": usda, "usdc": usdc, "usdz": usdz}


def converted(points: np.ndarray) -> np.ndarray:
    """The case's Z-up centimetres as glTF's Y-up metres: (x, y, z) -> (x, z, -y) / 100."""
    return np.column_stack([points[:, 0], points[:, 2], -points[:, 1]]) * 0.01


@pytest.mark.parametrize("kind", ["usda", "usdc", "usdz"])
@pytest.mark.parametrize("keep", [False, True])
def test_posed_points_equal_usdskels(stages, kind, keep):
    scene = load_usd(stages[kind], file_axes=keep)
    (clip,) = scene.animations
    assert clip.name == "Anim"
    assert clip.duration == pytest.approx(1.0)  # 24 time codes at 24 a second
    for code in TIMES:
        want = usdskel_points(stages[kind], code)
        clip.apply(code / 24.0)
        got = posed_points(scene)
        assert point_set_distance(got, want if keep else converted(want)) < 1e-5, code


def test_the_blend_shape_is_a_morph_target_with_its_animated_weight(stages):
    scene = load_usd(stages["usda"])
    body = next(mesh for mesh in scene.meshes if mesh.name == "Body")
    assert body.morph_target_names == ["bulge"]
    scene.animations[0].apply(0.5)
    assert body.morph_weights[0] == pytest.approx(0.5)


def test_the_package_texture_is_read(stages):
    scene = load_usd(stages["usdz"])
    static = next(mesh for mesh in scene.meshes if mesh.name == "Static")
    image = static.submeshes[0].pbr.base_color_texture.image
    assert image.shape == (8, 8, 4)
    assert tuple(image[0, 0, :3]) == (255, 0, 0) and tuple(image[0, 7, :3]) == (0, 0, 255)
    body = next(mesh for mesh in scene.meshes if mesh.name == "Body")
    assert body.submeshes[0].pbr.base_color_factor[:3] == pytest.approx([0.8, 0.2, 0.1])
    assert body.submeshes[0].pbr.roughness_factor == pytest.approx(0.4)


def test_info_and_check(cli, stages):
    done = cli("info", stages["usdz"], "--json")
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["format"] == "usd" and facts["usd"]["time_codes_per_second"] == 24
    assert facts["usd"]["axes"]["up"] == "+z" and facts["usd"]["axes"]["unit_meters"] == pytest.approx(0.01)
    assert [a["name"] for a in facts["animations"]] == ["Anim"]
    done = cli("check", stages["usda"])
    assert done.returncode == 0 and "ok" in done.stdout, done.stdout + done.stderr


def _edited(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def bad_stages(folder: Path, usda: Path) -> dict:
    text = usda.read_text()
    files = {
        "syntax.usda": text.replace("def SkelRoot", "def SkelRoot {{", 1),
        "joint-out-of-range.usda": _edited(text, "int[] primvars:skel:jointIndices = [0, 1,",
                                           "int[] primvars:skel:jointIndices = [0, 7,"),
        "nan-weights.usda": _edited(text, "float[] primvars:skel:jointWeights = [1, 0,",
                                    "float[] primvars:skel:jointWeights = [nan, 0,"),
        # UsdSkel computes no joint transforms without all three of translations, rotations, scales
        "animation-without-scales.usda": _edited(text, "half3[] scales.timeSamples", "half3[] unused.timeSamples"),
        "zero-rotation.usda": _edited(text, "12: [(0.9238795, 0.38268343, 0, 0)]", "12: [(0, 0, 0, 0)]"),
        "not-a-zip.usdz": "this is not a zip archive",
        "empty.usdc": "",
    }
    for name, content in files.items():
        (folder / name).write_text(content)
    return files


def test_bad_stages_are_one_line_and_exit_2(cli, stages, tmp_path):
    _png(tmp_path / "stripes.png")
    for name in bad_stages(tmp_path, stages["usda"]):
        path = tmp_path / name
        done = cli("render", path, "--out", tmp_path / "out.png")
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, (name, done.stderr)
        assert lines[0].startswith(f"boneviewer: error: {path}: "), lines[0]
        assert SAID.get(name, "") in lines[0]
        assert not (tmp_path / "out.png").exists()


SAID = {"animation-without-scales.usda": "its transforms at time 0 do not cover its joints",
        "zero-rotation.usda": "a joint rotation is a zero quaternion"}


def test_a_usdz_that_is_a_zip_of_something_else(tmp_path):
    path = tmp_path / "other.usdz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "no layer here")
    with pytest.raises(ViewerError) as caught:
        load_usd_file(path)
    assert str(caught.value).startswith(f"{path}: ") and "\n" not in str(caught.value)


# --- round trips through boneviewer's own writer -----------------------------------------------
SAMPLES = Path(__file__).parent / "data" / "gltf-samples"


@pytest.mark.parametrize("source", ["CesiumMan/CesiumMan.glb", "Fox/Fox.glb", "RobotExpressive/RobotExpressive.glb",
                                    "../fbx/robot_morphs.fbx"])
def test_a_model_written_as_usdz_reads_back_as_it_was_drawn(tmp_path, source):
    """glTF (and FBX) to .usdz with save_usd, read back by the USD reader: every clip, at four
    times each, places every vertex where boneviewer draws the source."""
    from viewer.loaders import load_model
    from viewer.usd.writer import save_usd

    original = load_model(SAMPLES / source)
    path = save_usd(original, tmp_path / "model.usdz")
    written = load_usd(path)
    assert written.import_axes["up"] == "+y" and written.import_axes["unit_meters"] == 1.0
    assert [clip.name for clip in written.animations] == [clip.name for clip in original.animations]
    for clip in original.animations[:4]:
        other = written.find_animation(clip.name)
        assert other.duration == pytest.approx(clip.duration, abs=1e-6)
        for scene in (original, written):  # a clip leaves the joints it does not key as they were
            for skeleton in scene.skeletons:
                for bone in skeleton.bones:
                    bone.return_to_rest()
        for fraction in (0.0, 0.37, 0.81, 1.0):
            clip.apply(clip.duration * fraction)
            other.apply(clip.duration * fraction)
            assert point_set_distance(posed_points(written), posed_points(original)) < 1e-5, (clip.name, fraction)


def test_the_readme_conversion_commands_run_in_order(tmp_path, cli):
    """The conversion commands of docs/fbx-usd.md, in one folder: each writes what it says, and
    the last two draw the converted files."""
    import re
    import shlex

    root = Path(__file__).resolve().parents[1]
    section = (root / "docs" / "fbx-usd.md").read_text().split("## Converting: glTF, FBX and USD to USDZ", 1)[1].split("\n#", 1)[0]
    commands = [shlex.split(line)[1:] for line in re.search(r"```sh\n(.*?)```", section, re.S).group(1).splitlines()]
    assert [c[0] for c in commands].count("export") >= 3
    (tmp_path / "tests").symlink_to(root / "tests")
    for command in commands:
        result = cli(*command, cwd=tmp_path, timeout=300)
        assert result.returncode == 0 and "wrote" in result.stdout, (command, result.stderr[-2000:])
    for name in ("fox-usd.png", "robot-usd.png"):
        from PIL import Image

        pixels = np.asarray(Image.open(tmp_path / name))[..., :3].astype(int)
        background = pixels[0, 0]
        assert (np.abs(pixels - background).max(axis=2) > 40).mean() > 0.05  # the character is drawn


def _sparse_stage(path: Path) -> None:
    """Joints A and A/B/C (C's parent is A: B is not a joint), one joint animated, a mesh weighted
    to C and A, another whose points are authored only as time samples, one point of the first
    weighted to nothing, and a displayColor under a bound material."""
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdShade, UsdSkel, Vt

    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    stage.SetTimeCodesPerSecond(10)
    root = UsdSkel.Root.Define(stage, "/R")
    stage.SetDefaultPrim(root.GetPrim())
    skeleton = UsdSkel.Skeleton.Define(stage, "/R/S")
    skeleton.CreateJointsAttr(["A", "A/B/C"])
    skeleton.CreateJointNamesAttr(["hips", "hand.L"])

    def moved(y):
        return Gf.Matrix4d(1).SetTranslateOnly(Gf.Vec3d(0, y, 0))

    skeleton.CreateRestTransformsAttr(Vt.Matrix4dArray([moved(1), moved(1)]))
    skeleton.CreateBindTransformsAttr(Vt.Matrix4dArray([moved(1), moved(2)]))
    animation = UsdSkel.Animation.Define(stage, "/R/S/Move")
    animation.CreateJointsAttr(["A"])
    rotations = animation.CreateRotationsAttr()
    for code, angle in ((0, 0.0), (10, 90.0)):
        rotations.Set(Vt.QuatfArray([Gf.Quatf(Gf.Rotation(Gf.Vec3d(0, 0, 1), angle).GetQuat())]), code)
    animation.CreateTranslationsAttr().Set(Vt.Vec3fArray([Gf.Vec3f(0, 1, 0)]))
    animation.CreateScalesAttr().Set(Vt.Vec3hArray([Gf.Vec3h(1, 1, 1)]))
    UsdSkel.BindingAPI.Apply(skeleton.GetPrim()).CreateAnimationSourceRel().SetTargets([animation.GetPath()])
    mesh = UsdGeom.Mesh.Define(stage, "/R/Hand")
    mesh.CreatePointsAttr([Gf.Vec3f(0, 2, 0), Gf.Vec3f(1, 2, 0), Gf.Vec3f(1, 3, 0), Gf.Vec3f(0, 3, 0)])
    mesh.CreateFaceVertexCountsAttr([4])
    mesh.CreateFaceVertexIndicesAttr([0, 1, 2, 3])
    binding = UsdSkel.BindingAPI.Apply(mesh.GetPrim())
    binding.CreateSkeletonRel().SetTargets([skeleton.GetPath()])
    binding.CreateJointIndicesPrimvar(False, 1).Set([1, 1, 0, 0])
    binding.CreateJointWeightsPrimvar(False, 1).Set([1.0, 0.0, 1.0, 1.0])  # point 1: weighted to nothing
    UsdGeom.PrimvarsAPI(mesh).CreatePrimvar("displayColor", Sdf.ValueTypeNames.Color3fArray,
                                            UsdGeom.Tokens.constant).Set([Gf.Vec3f(0, 1, 0)])
    material = UsdShade.Material.Define(stage, "/R/M")
    shader = UsdShade.Shader.Define(stage, "/R/M/S")
    shader.CreateIdAttr("UsdPreviewSurface")
    shader.CreateInput("diffuseColor", Sdf.ValueTypeNames.Color3f).Set(Gf.Vec3f(1, 0, 0))
    material.CreateSurfaceOutput().ConnectToSource(shader.ConnectableAPI(), "surface")
    UsdShade.MaterialBindingAPI.Apply(mesh.GetPrim()).Bind(material)
    cache = UsdGeom.Mesh.Define(stage, "/Cache")  # points only as time samples (a vertex cache)
    for code in (0, 10):
        cache.CreatePointsAttr().Set([Gf.Vec3f(3, 0, 0), Gf.Vec3f(4, 0, 0), Gf.Vec3f(3, 1 + code, 0)], code)
    cache.CreateFaceVertexCountsAttr([3])
    cache.CreateFaceVertexIndicesAttr([0, 1, 2])
    lines = UsdGeom.Mesh.Define(stage, "/Lines")  # two-corner faces only: nothing to draw
    lines.CreatePointsAttr([Gf.Vec3f(0, 0, 0), Gf.Vec3f(1, 0, 0)])
    lines.CreateFaceVertexCountsAttr([2])
    lines.CreateFaceVertexIndicesAttr([0, 1])
    stage.Save()


def test_sparse_joints_time_sampled_points_and_unweighted_vertices(tmp_path):
    path = tmp_path / "sparse.usda"
    _sparse_stage(path)
    scene = load_usd(path)
    bones = {bone.name: bone for bone in scene.skeletons[0].bones}
    assert bones["hand.L"].get_parent() is bones["hips"]  # UsdSkel's topology; the names from jointNames
    hand = next(mesh for mesh in scene.meshes if mesh.name == "Hand")
    assert tuple(hand.colors[0]) == (1.0, 1.0, 1.0, 1.0)  # displayColor does not tint a bound material
    assert [mesh.name for mesh in scene.meshes] == ["Hand", "Cache"]  # the lines-only mesh left out
    (clip,) = scene.animations
    weighted = [0, 2, 3]  # UsdSkel puts a point of zero weights at the skeleton's origin; it stays where bound here
    cache = next(mesh for mesh in scene.meshes if mesh.name == "Cache")
    for code in (0, 5, 10):
        clip.apply(code / 10)
        want = usdskel_points(path, code)
        got = hand.skinned_positions()
        assert np.abs(got[weighted] - want[:4][weighted]).max() < 1e-6, code  # one point a vertex: no merging here
        assert got[1] == pytest.approx([1.0, 2.0, 0.0], abs=1e-9)
        # Its points only as time samples: a point cache, played in the stage's one clip.
        assert point_set_distance(cache.skinned_positions(), want[4:7]) < 1e-6, code


def test_a_texture_outside_the_models_folder_is_not_read(tmp_path, stages):
    """As for glTF: a stage naming a file elsewhere on the machine as its texture reads nothing."""
    folder = tmp_path / "model"
    folder.mkdir()
    _png(tmp_path / "secret.png")
    usd_cases.make_stage(folder / "escape.usda", texture="../secret.png")
    scene = load_usd(folder / "escape.usda")
    static = next(mesh for mesh in scene.meshes if mesh.name == "Static")
    assert static.submeshes[0].pbr.base_color_texture is None


def test_animated_prim_transforms_play_in_every_clip(tmp_path, stages):
    """The SkelRoot slides and the static mesh turns by time-sampled xformOps: UsdGeom's world
    transforms at each time code, as the skinned points UsdSkel places under the moving root."""
    from pxr import Gf, Usd, UsdGeom

    path = tmp_path / "moving.usda"
    stage = Usd.Stage.Open(str(stages["usda"]))
    stage.GetRootLayer().Export(str(path))
    stage = Usd.Stage.Open(str(path))
    slide = UsdGeom.Xformable(stage.GetPrimAtPath("/Char")).GetOrderedXformOps()[0]
    for code, x in ((0, 10.0), (12, 40.0), (24, 10.0)):
        slide.Set(Gf.Vec3d(x, 0, 0), code)
    turn = UsdGeom.Xformable(stage.GetPrimAtPath("/Static")).AddRotateYOp()
    for code, angle in ((0, 0.0), (24, 180.0)):
        turn.Set(angle, code)
    stage.GetRootLayer().Save()
    scene = load_usd(path)
    (clip,) = scene.animations
    for code in (0, 6, 12, 18.5, 24):
        clip.apply(code / 24.0)
        want = converted(usdskel_points(path, code))
        assert point_set_distance(posed_points(scene), want) < 1e-5, code


# --- polygon corners of a primvar, by interpolation (build.corner_indices) ----------------------
def reference_corners(interpolation, index, counts, corner_points):
    """UsdGeom's rules written out element by element (as the reader once did them)."""
    element = list(index) if index is not None else None
    if interpolation == "faceVarying":
        return element if element is not None else list(range(len(corner_points)))
    if interpolation in ("vertex", "varying"):
        return [element[i] for i in corner_points] if element is not None else list(corner_points)
    if interpolation == "uniform":
        faces = element if element is not None else list(range(len(counts)))
        return [faces[f] for f, n in enumerate(counts) for _ in range(n)]
    return [element[0] if element else 0] * len(corner_points)


@pytest.mark.parametrize("interpolation", ["faceVarying", "vertex", "varying", "uniform", "constant"])
@pytest.mark.parametrize("indexed", [False, True])
def test_corner_indices_follow_usdgeoms_interpolation_rules(interpolation, indexed):
    from viewer.usd.build import corner_indices

    counts = np.array([3, 4, 5])
    corner_points = np.array([0, 1, 2, 2, 1, 3, 4, 4, 3, 5, 6, 0])
    elements = {"faceVarying": 12, "vertex": 7, "varying": 7, "uniform": 3, "constant": 1}[interpolation]
    index = np.random.default_rng(elements).integers(0, 4, elements) if indexed else None
    count = 4 if indexed else elements
    got = corner_indices(interpolation, index, count, counts, corner_points, "mesh /M: uv")
    assert got.tolist() == reference_corners(interpolation, index, counts, corner_points)


@pytest.mark.parametrize("interpolation, index, count, said", [
    ("faceVarying", np.array([0, 9]), 4, "an index past its 4 values"),
    ("faceVarying", None, 5, "5 values for 12 corners (faceVarying)"),
    ("vertex", None, 6, "6 values for its points (vertex)"),
    ("uniform", np.array([0, 1]), 2, "2 values for 3 faces (uniform)"),
])
def test_corner_indices_that_do_not_fit_are_one_line(interpolation, index, count, said):
    from viewer.usd.build import corner_indices

    counts, corner_points = np.array([3, 4, 5]), np.array([0, 1, 2, 2, 1, 3, 4, 4, 3, 5, 6, 0])
    with pytest.raises(ViewerError) as caught:
        corner_indices(interpolation, index, count, counts, corner_points, "mesh /M: uv")
    assert str(caught.value) == f"mesh /M: uv: {said}"
