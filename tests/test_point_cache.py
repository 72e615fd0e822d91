"""USD point caches: a mesh whose points are time-sampled (baked from a DCC or a simulation) plays
as a vertex animation whose posed points equal usd-core's ``GetPointsAttr().Get(t)`` (t = clip
seconds x timeCodesPerSecond; linear between samples, the end samples held outside them) within
1e-6 of the model's size, with the reader's axis and unit conversion; ``info`` says it is a point
cache; a skinned mesh's time-sampled points are skinned as UsdSkel skins them; a cache too big
to read is refused in one line. tests/data/usd/lbs.baked.usda is OpenUSD's baked skinning test
(tests/data/usd/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from test_fbx import point_set_distance
from test_usd import _sparse_stage, converted
from usd_reference import usdskel_points
from viewer.errors import ViewerError
from viewer.usd import load_usd

LBS = Path(__file__).parent / "data" / "usd" / "lbs.baked.usda"
# Points of OpenUSD's own baseline/lbs.baked.usda (testUsdSkelBakeSkinning), copied from it:
# (mesh, time code, point index, its point); the remade file must hold the same numbers.
BASELINE = [("Mesh", 11, 3, (-0.5026772, -0.08666447, 0.48161066)),
            ("Mesh", 18, 6, (-0.018380404, 0.74794203, 0.96966225)),
            ("Mesh", 30, 2, (0.28605783, -0.109422445, 0.5842552)),
            ("MeshWithNormals", 18, 8, (0.0071826964, 0.7323675, 1.0337244)),
            ("MeshWithNormals", 30, 11, (-0.23994356, 0.69796413, 0.9275091))]


def usd_points(path: Path, mesh: str, code: float) -> np.ndarray:
    """usd-core's points of ``mesh`` (a prim path) at ``code``, placed by the prim's world transform."""
    from pxr import Usd, UsdGeom

    stage = Usd.Stage.Open(str(path))
    prim = stage.GetPrimAtPath(mesh)
    world = np.array(UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(Usd.TimeCode(code)))
    points = np.array(UsdGeom.Mesh(prim).GetPointsAttr().Get(Usd.TimeCode(code)), dtype=np.float64)
    return points @ world[:3, :3] + world[3, :3]


def test_the_remade_file_holds_openusds_baked_points():
    from pxr import Usd, UsdGeom

    stage = Usd.Stage.Open(str(LBS))
    for mesh, code, index, point in BASELINE:
        attribute = UsdGeom.Mesh(stage.GetPrimAtPath(f"/Root/{mesh}")).GetPointsAttr()
        assert attribute.GetNumTimeSamples() == 30
        assert np.abs(np.array(attribute.Get(code)[index]) - point).max() < 1e-6, (mesh, code, index)


@pytest.mark.parametrize("keep", [False, True])
def test_openusds_baked_skinning_plays_as_usd_reads_its_points(keep):
    scene = load_usd(LBS, file_axes=keep)
    (clip,) = scene.animations  # none before: the same picture at every time
    assert clip.duration == pytest.approx(30 / 24)
    meshes = {mesh.name: mesh for mesh in scene.meshes}
    assert sorted(meshes) == ["Mesh", "MeshWithNormals"]
    scale = 1.0 if keep else 0.01  # Y up; metersPerUnit not authored: USD's 0.01
    # Every time code, between codes, and before the first (1) and after the last (30).
    for code in [0, 0.5] + list(range(1, 31)) + [1.5, 10.25, 17.9, 29.99, 31, 40]:
        clip.apply(code / 24)
        for name, mesh in meshes.items():
            want = usd_points(LBS, f"/Root/{name}", code) * scale
            got = mesh.skinned_positions()
            assert got.shape == want.shape
            assert point_set_distance(got, want) < 1e-6, (name, code)
    clip.apply(0.0)
    first = meshes["Mesh"].skinned_positions()
    clip.apply(20 / 24)
    assert np.abs(meshes["Mesh"].skinned_positions() - first).max() > 0.1 * scale  # it does move


def _uneven_stage(path: Path) -> None:
    """A quad strip whose points are sampled at uneven time codes 2, 3, 7 and 12.5 (four samples,
    ten codes a second), Z up in centimetres, under a moved and turned Xform, with authored
    vertex normals that are not time-sampled."""
    from pxr import Gf, Usd, UsdGeom

    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    stage.SetTimeCodesPerSecond(10)
    group = UsdGeom.Xform.Define(stage, "/Group")
    group.AddTranslateOp().Set(Gf.Vec3d(5, -3, 2))
    group.AddRotateZOp().Set(30.0)
    mesh = UsdGeom.Mesh.Define(stage, "/Group/Cloth")
    for code, lift in ((2, 0.0), (3, 4.0), (7, -2.0), (12.5, 9.0)):
        mesh.CreatePointsAttr().Set([Gf.Vec3f(0, 0, 0), Gf.Vec3f(10, 0, lift), Gf.Vec3f(20, 0, -lift),
                                     Gf.Vec3f(0, 10, 0), Gf.Vec3f(10, 10, 2 * lift), Gf.Vec3f(20, 10 + lift, 0)], code)
    mesh.CreateFaceVertexCountsAttr([4, 4])
    mesh.CreateFaceVertexIndicesAttr([0, 1, 4, 3, 1, 2, 5, 4])
    mesh.CreateNormalsAttr([Gf.Vec3f(0, 0, 1)] * 6)
    mesh.SetNormalsInterpolation(UsdGeom.Tokens.vertex)
    stage.Save()


def test_uneven_samples_are_interpolated_as_usd_does(tmp_path):
    path = tmp_path / "uneven.usda"
    _uneven_stage(path)
    scene = load_usd(path)
    (clip,) = scene.animations
    (mesh,) = scene.meshes
    assert clip.duration == pytest.approx(1.25)
    for code in (0, 2, 2.5, 3, 4, 6.9, 7, 9.75, 12.5, 13, 20):
        clip.apply(code / 10)
        want = converted(usd_points(path, "/Group/Cloth", code))
        assert point_set_distance(mesh.skinned_positions(), want) < 1e-6, code
    assert mesh.morph_target_names == ["time 3", "time 7", "time 12.5"]
    assert mesh.morph_targets.normals is None  # authored normals that do not change stay as they are


def test_a_skinned_mesh_with_time_sampled_points_is_skinned_as_usdskel_does(tmp_path):
    """UsdSkel skins the points the mesh has at each time: the samples are morphed before skinning."""
    from pxr import Gf, Usd, UsdGeom

    path = tmp_path / "skinned.usda"
    _sparse_stage(path)
    stage = Usd.Stage.Open(str(path))
    points = UsdGeom.Mesh(stage.GetPrimAtPath("/R/Hand")).GetPointsAttr()
    for code, grow in ((0, 0.0), (4, 0.5), (10, 1.5)):
        points.Set([Gf.Vec3f(0, 2, 0), Gf.Vec3f(1, 2, 0), Gf.Vec3f(1 + grow, 3 + grow, 0), Gf.Vec3f(0, 3 + grow, 0)], code)
    stage.Save()
    scene = load_usd(path)
    (clip,) = scene.animations
    hand = next(mesh for mesh in scene.meshes if mesh.name == "Hand")
    assert hand.skeleton is not None and len(hand.morph_target_names) == 2
    weighted = [0, 2, 3]  # point 1 is weighted to nothing (test_usd)
    for code in (0, 2, 4, 7, 10):
        clip.apply(code / 10)
        want = usdskel_points(path, code)[:4]
        assert np.abs(hand.skinned_positions()[weighted] - want[weighted]).max() < 1e-6, code


def test_time_sampled_points_beside_blend_shapes_are_drawn_at_the_first_sample(tmp_path, caplog):
    import usd_cases
    from pxr import Usd, UsdGeom

    path = tmp_path / "shapes.usda"
    usd_cases.make_stage(path)
    stage = Usd.Stage.Open(str(path))
    body = next(prim for prim in stage.Traverse() if prim.GetName() == "Body")
    points = UsdGeom.Mesh(body).GetPointsAttr()
    rest = points.Get()
    for code in (0, 24):
        points.Set([p * (1 + code / 100) for p in rest], code)
    stage.Save()
    scene = load_usd(path)
    mesh = next(mesh for mesh in scene.meshes if mesh.name == "Body")
    assert mesh.morph_target_names == ["bulge"]
    assert any("time-sampled and it has blend shapes" in record.getMessage() for record in caplog.records)


def _long_stage(path: Path, samples: int, points: int, block: bool) -> None:
    """A triangle fan of ``points`` points with ``samples`` time samples of them (after the first,
    value blocks when ``block``: the file stays small, the count it claims does not)."""
    from pxr import Gf, Sdf, Usd, UsdGeom, Vt

    stage = Usd.Stage.CreateNew(str(path))
    mesh = UsdGeom.Mesh.Define(stage, "/Many")
    first = Vt.Vec3fArray([Gf.Vec3f(i, i % 2, 0) for i in range(points)])
    attribute = mesh.CreatePointsAttr()
    for code in range(samples):
        attribute.Set(Sdf.ValueBlock() if block and code else first, code)
    mesh.CreateFaceVertexCountsAttr([3] * (points - 2))
    mesh.CreateFaceVertexIndicesAttr([v for i in range(points - 2) for v in (0, i + 1, i + 2)])
    stage.Save()


def test_a_point_cache_too_big_to_read_is_one_line(tmp_path, cli):
    path = tmp_path / "hostile.usdc"
    _long_stage(path, 257, 20_000, block=True)  # 5.1 million points claimed
    with pytest.raises(ViewerError) as caught:
        load_usd(path)
    assert "point cache of 257 time samples of 20000 points" in str(caught.value)
    done = cli("info", path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "point cache" in done.stderr, done.stderr


def test_longer_caches_than_the_targets_are_drawn_at_their_first_sample_said(tmp_path, caplog):
    path = tmp_path / "long.usda"
    _long_stage(path, 300, 4, block=False)
    scene = load_usd(path)
    assert not scene.animations and scene.meshes[0].morph_targets is None
    assert any("300 time samples, more than the 257" in record.getMessage() for record in caplog.records)


def test_info_says_it_is_a_point_cache_and_two_times_draw_two_pictures(cli, tmp_path):
    from PIL import Image

    done = cli("info", LBS, "--json")
    assert done.returncode == 0, done.stderr
    (animation,) = json.loads(done.stdout)["animations"]
    assert animation["paths"] == {"point cache": 2}
    assert [(c["mesh"], c["samples"], c["vertices"]) for c in animation["point_caches"]] == [
        ("Mesh", 30, 40), ("MeshWithNormals", 30, 12)]
    assert animation["point_caches"][0]["start"] == pytest.approx(1 / 24)
    done = cli("info", LBS)
    assert done.returncode == 0, done.stderr
    assert "1 animation," in done.stdout
    assert "point cache of mesh Mesh (vertex animation, 30 samples" in done.stdout, done.stdout
    pictures = []
    for seconds in ("0", "1.25"):
        out = tmp_path / f"at-{seconds}.png"
        done = cli("render", LBS, "--time", seconds, "--yaw", "30", "--size", "200x150", "--out", out)
        assert done.returncode == 0, done.stderr
        pictures.append(np.asarray(Image.open(out))[..., :3].astype(int))
    changed = (np.abs(pictures[0] - pictures[1]).max(axis=2) > 40).mean()
    assert changed > 0.05, changed  # the box bends over: a different picture
