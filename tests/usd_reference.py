"""UsdSkel's own evaluation of a USD stage, the reference for boneviewer's USD reader and writer
(a plain module, not a test module): blend shapes (UsdSkel.BlendShapeQuery), then linear blend
skinning (UsdSkel.SkinningQuery with the skeleton's skinning transforms), then the Skeleton
prim's world transform, as the UsdSkel schema defines; plain meshes by their own world
transform. Computed by usd-core, not by boneviewer, in the stage's own units and axes."""

from __future__ import annotations

import numpy as np


def world_points(stage, time=None) -> dict[str, np.ndarray]:
    """{mesh prim path: (V, 3) world positions} at time code ``time`` (None: the default time)."""
    from pxr import Usd, UsdGeom, UsdSkel, Vt

    time = Usd.TimeCode.Default() if time is None else Usd.TimeCode(time)
    result: dict[str, np.ndarray] = {}
    skinned = set()
    cache = UsdSkel.Cache()
    for prim in stage.Traverse():
        if not prim.IsA(UsdSkel.Root):
            continue
        root = UsdSkel.Root(prim)
        cache.Populate(root, Usd.PrimDefaultPredicate)
        for binding in cache.ComputeSkelBindings(root, Usd.PrimDefaultPredicate):
            skeleton = binding.GetSkeleton()
            query = cache.GetSkelQuery(skeleton)
            assert query, skeleton.GetPath()
            transforms = query.ComputeSkinningTransforms(time)
            animation = query.GetAnimQuery()
            weights = None
            if animation and animation.GetBlendShapeOrder():
                weights = animation.ComputeBlendShapeWeights(time)
            skeleton_world = np.array(UsdGeom.Xformable(skeleton.GetPrim()).ComputeLocalToWorldTransform(time))
            for target in binding.GetSkinningTargets():
                mesh = target.GetPrim()
                points = UsdGeom.Mesh(mesh).GetPointsAttr().Get(time)
                if weights is not None and target.HasBlendShapes():
                    mapped = target.GetBlendShapeMapper().Remap(weights)
                    shapes = UsdSkel.BlendShapeQuery(UsdSkel.BindingAPI(mesh))
                    sub_weights, shape_indices, sub_indices = shapes.ComputeSubShapeWeights(mapped)
                    points = Vt.Vec3fArray(points)
                    assert shapes.ComputeDeformedPoints(sub_weights, shape_indices, sub_indices,
                                                        shapes.ComputeBlendShapePointIndices(),
                                                        shapes.ComputeSubShapePointOffsets(), points)
                assert target.ComputeSkinnedPoints(transforms, points, time), mesh.GetPath()
                array = np.array(points, dtype=np.float64)
                result[str(mesh.GetPath())] = array @ skeleton_world[:3, :3] + skeleton_world[3, :3]
                skinned.add(str(mesh.GetPath()))
    for prim in stage.Traverse():
        if prim.IsA(UsdGeom.Mesh) and str(prim.GetPath()) not in skinned:
            world = np.array(UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(time))
            points = np.array(UsdGeom.Mesh(prim).GetPointsAttr().Get(time), dtype=np.float64)
            result[str(prim.GetPath())] = points @ world[:3, :3] + world[3, :3]
    return result


def bind_animation(stage, skeleton_path: str, animation_path: str) -> None:
    """Make ``animation_path`` the skeleton's skel:animationSource (in the stage's session
    layer: the file is not changed), as a reader picking another clip does."""
    from pxr import Usd, UsdSkel

    with Usd.EditContext(stage, stage.GetSessionLayer()):
        UsdSkel.BindingAPI(stage.GetPrimAtPath(skeleton_path)).GetAnimationSourceRel().SetTargets([animation_path])


def mesh_paths_by_name(stage) -> dict[str, str]:
    """{boneviewer mesh name (customData): prim path}."""
    from pxr import UsdGeom

    return {prim.GetCustomDataByKey("boneviewer:mesh"): str(prim.GetPath()) for prim in stage.Traverse()
            if prim.IsA(UsdGeom.Mesh)}


def usdskel_points(path, time: float) -> np.ndarray:
    """(points, 3): every mesh's points in the world at time code ``time``, in the order of the
    stage's traversal."""
    from pxr import Usd

    return np.concatenate(list(world_points(Usd.Stage.Open(str(path)), time).values()))
