"""A small UsdSkel stage made with usd-core for the USD reader's tests: Z up, centimetres, a
SkelRoot and a Skeleton prim both transformed, two joints whose rest is not their bind, a skinned
box with a geomBindTransform (and its own transform, which UsdSkel ignores), an animation of a
joint and a blend shape weight over 24 time codes at 24 a second, a UsdPreviewSurface material,
and a static mesh with a textured material. Its meaning is what UsdSkel evaluates
(tests/usd_reference.py), not anything written here."""

from __future__ import annotations


def make_stage(path, texture: str | None = None) -> None:
    """Write the stage to ``path`` (.usda or .usdc); ``texture``: an image path for the static
    mesh's material, relative to the stage."""
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdShade, UsdSkel, Vt

    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    stage.SetTimeCodesPerSecond(24); stage.SetStartTimeCode(0); stage.SetEndTimeCode(24)
    root = UsdSkel.Root.Define(stage, "/Char"); stage.SetDefaultPrim(root.GetPrim())
    UsdGeom.Xformable(root).AddTranslateOp().Set(Gf.Vec3d(10, 0, 0))
    skel = UsdSkel.Skeleton.Define(stage, "/Char/Skel")
    UsdGeom.Xformable(skel).AddRotateZOp().Set(30.0)
    joints = ["Hips", "Hips/Spine"]
    skel.CreateJointsAttr(joints)
    def T(x,y,z): m = Gf.Matrix4d(1); m.SetTranslateOnly(Gf.Vec3d(x,y,z)); return m
    skel.CreateRestTransformsAttr(Vt.Matrix4dArray([T(0,0,50), T(0,0,30)]))
    skel.CreateBindTransformsAttr(Vt.Matrix4dArray([T(0,0,50), T(0,0,80)]))
    anim = UsdSkel.Animation.Define(stage, "/Char/Skel/Anim")
    anim.CreateJointsAttr(["Hips/Spine"])
    anim.CreateBlendShapesAttr(["bulge"])
    tr = anim.CreateTranslationsAttr(); rot = anim.CreateRotationsAttr(); sc = anim.CreateScalesAttr(); bw = anim.CreateBlendShapeWeightsAttr()
    for t, ang in ((0, 0), (12, 45), (24, 90)):
        tr.Set(Vt.Vec3fArray([Gf.Vec3f(0,0,30)]), t)
        rot.Set(Vt.QuatfArray([Gf.Quatf(Gf.Rotation(Gf.Vec3d(1,0,0), ang).GetQuat())]), t)
        sc.Set(Vt.Vec3hArray([Gf.Vec3h(1,1,1)]), t)
        bw.Set(Vt.FloatArray([t/24.0]), t)
    binding = UsdSkel.BindingAPI.Apply(skel.GetPrim()); binding.CreateAnimationSourceRel().SetTargets([anim.GetPath()])
    mesh = UsdGeom.Mesh.Define(stage, "/Char/Body")
    pts = [Gf.Vec3f(x, y, z) for z in (40, 60, 80, 100) for y in (-5, 5) for x in (-5, 5)]
    mesh.CreatePointsAttr(pts)
    faces = []
    ring = [0, 1, 3, 2]
    for lv in range(3):
        for k in range(4):
            a, b = ring[k], ring[(k+1)%4]
            faces.append([lv*4+a, lv*4+b, (lv+1)*4+b, (lv+1)*4+a])
    mesh.CreateFaceVertexCountsAttr([4]*len(faces)); mesh.CreateFaceVertexIndicesAttr([i for f in faces for i in f])
    UsdGeom.Xformable(mesh).AddTranslateOp().Set(Gf.Vec3d(1000, 0, 0))  # ignored for a skinned mesh
    mb = UsdSkel.BindingAPI.Apply(mesh.GetPrim())
    mb.CreateSkeletonRel().SetTargets([skel.GetPath()])
    w = [min(max((p[2]-50)/20, 0), 1) for p in pts]
    mb.CreateJointIndicesPrimvar(False, 2).Set([j for _ in pts for j in (0, 1)])
    mb.CreateJointWeightsPrimvar(False, 2).Set([v for x in w for v in (1-x, x)])
    mb.CreateGeomBindTransformAttr(Gf.Matrix4d(1).SetScale(Gf.Vec3d(1.0, 1.0, 1.0)) * T(0, 0, 2))
    shape = UsdSkel.BlendShape.Define(stage, "/Char/Body/bulge")
    shape.CreateOffsetsAttr([Gf.Vec3f(3, 0, 0)]*4); shape.CreatePointIndicesAttr([8, 9, 10, 11])
    mb.CreateBlendShapesAttr(["bulge"]); mb.CreateBlendShapeTargetsRel().SetTargets([shape.GetPath()])
    st = UsdGeom.PrimvarsAPI(mesh).CreatePrimvar("st", Sdf.ValueTypeNames.TexCoord2fArray, UsdGeom.Tokens.faceVarying)
    st.Set([Gf.Vec2f((i%4)/4, (i//4)/12) for i in range(48)])
    mat = UsdShade.Material.Define(stage, "/Char/Mat"); sh = UsdShade.Shader.Define(stage, "/Char/Mat/Surf")
    sh.CreateIdAttr("UsdPreviewSurface"); sh.CreateInput("diffuseColor", Sdf.ValueTypeNames.Color3f).Set(Gf.Vec3f(0.8, 0.2, 0.1))
    sh.CreateInput("roughness", Sdf.ValueTypeNames.Float).Set(0.4)
    mat.CreateSurfaceOutput().ConnectToSource(sh.ConnectableAPI(), "surface")
    UsdShade.MaterialBindingAPI.Apply(mesh.GetPrim()).Bind(mat)
    m2 = UsdGeom.Mesh.Define(stage, "/Static"); m2.CreatePointsAttr([Gf.Vec3f(0,0,0), Gf.Vec3f(10,0,0), Gf.Vec3f(0,10,0)]); m2.CreateFaceVertexCountsAttr([3]); m2.CreateFaceVertexIndicesAttr([0,1,2])
    UsdGeom.Xformable(m2).AddTranslateOp().Set(Gf.Vec3d(0, 20, 0))
    if texture is not None:
        tmat = UsdShade.Material.Define(stage, "/Textured")
        tsurf = UsdShade.Shader.Define(stage, "/Textured/Surf")
        tsurf.CreateIdAttr("UsdPreviewSurface")
        reader = UsdShade.Shader.Define(stage, "/Textured/Image")
        reader.CreateIdAttr("UsdUVTexture")
        reader.CreateInput("file", Sdf.ValueTypeNames.Asset).Set(texture)
        reader.CreateOutput("rgb", Sdf.ValueTypeNames.Float3)
        tsurf.CreateInput("diffuseColor", Sdf.ValueTypeNames.Color3f).ConnectToSource(reader.ConnectableAPI(), "rgb")
        tmat.CreateSurfaceOutput().ConnectToSource(tsurf.ConnectableAPI(), "surface")
        UsdShade.MaterialBindingAPI.Apply(m2.GetPrim()).Bind(tmat)
    stage.Save()
