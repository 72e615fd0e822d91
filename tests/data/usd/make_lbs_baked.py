"""Writes lbs.baked.usda: OpenUSD's baked linear-blend-skinning test (pxr/usd/usdSkel/testenv/
testUsdSkelBakeSkinning: lbs.usda baked by UsdSkel.BakeSkinning into baseline/lbs.baked.usda),
remade here with usd-core's own UsdSkel.BakeSkinning from lbs.usda's skeleton, animation and its
two meshes ("Mesh", 40 points; "MeshWithNormals", 12 points with vertex normals), numbers copied
from OpenUSD. The result is a stage of two meshes whose points (and normals) are time-sampled at
codes 1..30, 24 a second, with no skinning left to do: a point cache. tests/test_point_cache.py
checks points of it against values copied from OpenUSD's baseline file.

    python tests/data/usd/make_lbs_baked.py    (from the repository root; needs usd-core)
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent

# SkelAnimation "Animation": joint1/joint2's rotation at time codes 1..30 (w, x, y, z); joint1's
# and joint3's rotations, every translation and scale, do not change.
JOINT2 = [
    (1, 0, 0, 0), (0.99998206, 0, 0, 0.0059874505), (0.9997573, 0, 0, 0.022032166), (0.9989757, 0, 0, 0.04524994),
    (0.9973507, 0, 0, 0.07274352), (0.9948242, 0, 0, 0.10161159), (0.99164855, 0, 0, 0.12896946),
    (0.9883851, 0, 0, 0.15197003), (0.9858194, 0, 0, 0.16780986), (0.98479694, 0, 0, 0.1737094),
    (0.9847693, -0.0060739038, 0.0033323904, 0.17372827), (0.98440933, -0.022794377, 0.012332357, 0.17397308),
    (0.98309743, -0.047886964, 0.025488343, 0.17486162), (0.98019844, -0.07903047, 0.041256294, 0.17681383),
    (0.9753132, -0.11386365, 0.058064535, 0.18007703), (0.9684434, -0.15002865, 0.07434445, 0.18461232),
    (0.9600648, -0.18523708, 0.08857696, 0.1900445), (0.9511102, -0.21733138, 0.09933574, 0.19567554),
    (0.9428679, -0.24431108, 0.10530581, 0.2005567), (0.93680716, -0.26430017, 0.10526084, 0.20361213),
    (0.9323757, -0.27953127, 0.10192881, 0.20530044), (0.9280986, -0.2934199, 0.09885244, 0.20679928),
    (0.9240588, -0.30590457, 0.09605568, 0.20811309), (0.9203373, -0.31692496, 0.093561925, 0.20924607),
    (0.9170122, -0.32642126, 0.09139402, 0.21020201), (0.9141572, -0.33433342, 0.08957415, 0.21098393),
    (0.9118408, -0.34060043, 0.08812382, 0.2115938), (0.9101248, -0.34515962, 0.08706377, 0.21203218),
    (0.9090633, -0.34794572, 0.0864139, 0.21229787), (0.9087012, -0.34889027, 0.08619322, 0.21238756),
]
JOINT1 = (0.5, 0.5, 0.5, 0.5)
JOINT3 = (0.5, -0.5, -0.5, -0.5)
TRANSLATIONS = [(0, -1, 0), (1, 0, 0), (1, 0, 0)]
REST = [((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)), ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (1, 0, 0, 1)),
        ((0, 0, 1, 0), (1, 0, 0, 0), (0, 1, 0, 0), (1, 0, 0, 1))]
BIND = [((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)), ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (1, 0, 0, 1)),
        ((0, 0, 1, 0), (1, 0, 0, 0), (0, 1, 0, 0), (2, 0, 0, 1))]
GEOM_BIND = ((0, 0, 1, 0), (1, 0, 0, 0), (0, 1, 0, 0), (1, 0, 0, 1))

# Mesh "Mesh": ten quads of their own corners, three influences a point.
MESH_POINTS = [
    (-0.5, -1, 0.5), (0.5, -1, 0.5), (0.5, 0, 0.5), (-0.5, 0, 0.5), (-0.5, 0, 0.5), (0.5, 0, 0.5), (0.5, 1, 0.5),
    (-0.5, 1, 0.5), (-0.5, 1, 0.5), (0.5, 1, 0.5), (0.5, 1, -0.5), (-0.5, 1, -0.5), (-0.5, 1, -0.5), (0.5, 1, -0.5),
    (0.5, 0, -0.5), (-0.5, 0, -0.5), (-0.5, 0, -0.5), (0.5, 0, -0.5), (0.5, -1, -0.5), (-0.5, -1, -0.5),
    (-0.5, -1, -0.5), (0.5, -1, -0.5), (0.5, -1, 0.5), (-0.5, -1, 0.5), (0.5, -1, 0.5), (0.5, -1, -0.5),
    (0.5, 0, -0.5), (0.5, 0, 0.5), (0.5, 0, 0.5), (0.5, 0, -0.5), (0.5, 1, -0.5), (0.5, 1, 0.5), (-0.5, -1, -0.5),
    (-0.5, -1, 0.5), (-0.5, 0, 0.5), (-0.5, 0, -0.5), (-0.5, 0, -0.5), (-0.5, 0, 0.5), (-0.5, 1, 0.5),
    (-0.5, 1, -0.5)]
MESH_INDICES = [
    0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2,
    0, 1, 2, 0, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0,
    1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 2, 0, 1, 2, 0, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2,
    1, 2, 0, 1, 2, 0,
]
MESH_WEIGHTS = [
    1, 0, 0, 1, 0, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0,
    0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1,
    0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 1, 0, 0, 1, 0, 0,
    1, 0, 0, 1, 0, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 1, 0, 0, 1, 0, 0,
]

# Mesh "MeshWithNormals": twelve shared points, vertex normals, two influences a point.
THIN_POINTS = [(0.45, -1, 0.55), (0.55, -1, 0.55), (0.55, -1, 0.45), (0.45, -1, 0.45), (0.55, 0, 0.55), (0.45, 0, 0.55),
               (0.55, 0, 0.45), (0.45, 0, 0.45), (0.55, 1, 0.55), (0.45, 1, 0.55), (0.55, 1, 0.45), (0.45, 1, 0.45)]
THIN_FACES = [1, 4, 5, 0, 4, 8, 9, 5, 8, 10, 11, 9, 10, 6, 7, 11, 6, 2, 3, 7, 2, 1, 0, 3, 2, 6, 4, 1, 6, 10, 8, 4, 0, 5,
              7, 3, 5, 9, 11, 7]
THIN_NORMALS = [(-1, -1, 1), (1, -1, 1), (1, -1, -1), (-1, -1, -1), (1, 0, 1), (-1, 0, 1), (1, 0, -1), (-1, 0, -1),
                (1, 1, 1), (-1, 1, 1), (1, 1, -1), (-1, 1, -1)]
THIN_INDICES = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 2, 2, 2, 2, 2, 2, 2, 2]
THIN_WEIGHTS = [1, 0, 1, 0, 1, 0, 1, 0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1, 0, 1, 0, 1, 0, 1, 0]


def skinned_stage(path: Path):
    """lbs.usda's skeleton, animation and two meshes, before baking."""
    from pxr import Gf, Usd, UsdGeom, UsdSkel, Vt

    stage = Usd.Stage.CreateNew(str(path))
    stage.SetStartTimeCode(1)
    stage.SetEndTimeCode(30)
    stage.SetTimeCodesPerSecond(24)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    root = UsdSkel.Root.Define(stage, "/Root")
    stage.SetDefaultPrim(root.GetPrim())
    skeleton = UsdSkel.Skeleton.Define(stage, "/Root/Skeleton")
    joints = ["joint1", "joint1/joint2", "joint1/joint2/joint3"]
    skeleton.CreateJointsAttr(joints)
    skeleton.CreateRestTransformsAttr(Vt.Matrix4dArray([Gf.Matrix4d(*m) for m in REST]))
    skeleton.CreateBindTransformsAttr(Vt.Matrix4dArray([Gf.Matrix4d(*m) for m in BIND]))
    animation = UsdSkel.Animation.Define(stage, "/Root/Skeleton/Animation")
    animation.CreateJointsAttr(joints)
    rotations, translations, scales = (animation.CreateRotationsAttr(), animation.CreateTranslationsAttr(),
                                       animation.CreateScalesAttr())
    for code, (w, x, y, z) in enumerate(JOINT2, start=1):
        rotations.Set(Vt.QuatfArray([Gf.Quatf(JOINT1[0], *JOINT1[1:]), Gf.Quatf(w, x, y, z),
                                     Gf.Quatf(JOINT3[0], *JOINT3[1:])]), code)
        translations.Set(Vt.Vec3fArray([Gf.Vec3f(*t) for t in TRANSLATIONS]), code)
        scales.Set(Vt.Vec3hArray([Gf.Vec3h(1, 1, 1)] * 3), code)
    UsdSkel.BindingAPI.Apply(skeleton.GetPrim()).CreateAnimationSourceRel().SetTargets([animation.GetPath()])
    UsdSkel.BindingAPI.Apply(root.GetPrim()).CreateSkeletonRel().SetTargets([skeleton.GetPath()])
    for name, points, counts, faces, indices, weights, size in (
            ("Mesh", MESH_POINTS, [4] * 10, list(range(40)), MESH_INDICES, MESH_WEIGHTS, 3),
            ("MeshWithNormals", THIN_POINTS, [4] * 10, THIN_FACES, THIN_INDICES, THIN_WEIGHTS, 2)):
        mesh = UsdGeom.Mesh.Define(stage, f"/Root/{name}")
        mesh.CreatePointsAttr(Vt.Vec3fArray([Gf.Vec3f(*p) for p in points]))
        mesh.CreateFaceVertexCountsAttr(counts)
        mesh.CreateFaceVertexIndicesAttr(faces)
        mesh.CreateSubdivisionSchemeAttr("none")
        if name == "MeshWithNormals":
            mesh.CreateNormalsAttr(Vt.Vec3fArray([Gf.Vec3f(*n) for n in THIN_NORMALS]))
            mesh.SetNormalsInterpolation(UsdGeom.Tokens.vertex)
        binding = UsdSkel.BindingAPI.Apply(mesh.GetPrim())
        binding.CreateGeomBindTransformAttr(Gf.Matrix4d(*GEOM_BIND))
        binding.CreateJointIndicesPrimvar(False, size).Set(indices)
        binding.CreateJointWeightsPrimvar(False, size).Set(weights)
    return stage


def main(out: Path = HERE / "lbs.baked.usda") -> None:
    from pxr import Gf, Usd, UsdSkel

    source = out.with_name("lbs.usda.tmp.usda")
    stage = skinned_stage(source)
    assert UsdSkel.BakeSkinning(Usd.PrimRange(stage.GetPseudoRoot()), Gf.Interval(1, 30))
    stage.GetRootLayer().documentation = ("OpenUSD's testUsdSkelBakeSkinning lbs.baked.usda (its two meshes), "
                                          "remade by tests/data/usd/make_lbs_baked.py")
    stage.GetRootLayer().Export(str(out))
    source.unlink()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "lbs.baked.usda")
