"""UsdSkel's own evaluation of a stage, the reference for boneviewer's USD reader and writer:
every mesh's points in the world at a time code, skinned meshes deformed by UsdSkel itself
(blend shapes by UsdSkel.BlendShapeQuery, then UsdSkel.SkinningQuery.ComputeSkinnedPoints with
the skeleton's skinning transforms, placed at the Skeleton prim's world transform, as the
UsdSkel schema defines), in the stage's own units and axes. Needs usd-core (the dev extra)."""

from __future__ import annotations

import numpy as np


def usdskel_points(path, time: float) -> np.ndarray:
    """(points, 3): every mesh's points in the world at time code ``time``, in the order of the
    stage's traversal (skinned meshes as UsdSkel deforms them)."""
    from pxr import Usd, UsdGeom, UsdSkel

    stage = Usd.Stage.Open(str(path))
    code = Usd.TimeCode(time)
    cache = UsdSkel.Cache()
    skinned = {}
    for prim in stage.Traverse():
        if not prim.IsA(UsdSkel.Root):
            continue
        root = UsdSkel.Root(prim)
        cache.Populate(root, Usd.PrimDefaultPredicate)
        for binding in cache.ComputeSkelBindings(root, Usd.PrimDefaultPredicate):
            skeleton = cache.GetSkelQuery(binding.GetSkeleton())
            transforms = skeleton.ComputeSkinningTransforms(code)
            anim = skeleton.GetAnimQuery()
            placement = UsdGeom.Xformable(binding.GetSkeleton().GetPrim()).ComputeLocalToWorldTransform(code)
            for query in binding.GetSkinningTargets():
                mesh = query.GetPrim()
                points = UsdGeom.Mesh(mesh).GetPointsAttr().Get(code)
                if anim and query.HasBlendShapes():
                    weights = anim.ComputeBlendShapeWeights(code)
                    mapped = query.GetBlendShapeMapper().Remap(weights) if query.GetBlendShapeMapper() else weights
                    shapes = UsdSkel.BlendShapeQuery(UsdSkel.BindingAPI(mesh))
                    sub_weights, shape_indices, sub_indices = shapes.ComputeSubShapeWeights(mapped)
                    shapes.ComputeDeformedPoints(sub_weights, shape_indices, sub_indices,
                                                 shapes.ComputeBlendShapePointIndices(),
                                                 shapes.ComputeSubShapePointOffsets(), points)
                query.ComputeSkinnedPoints(transforms, points, code)
                world = np.array(placement, dtype=np.float64)
                skinned[mesh.GetPath()] = np.array(points, dtype=np.float64) @ world[:3, :3] + world[3, :3]
    result = []
    for prim in stage.Traverse():
        if prim.IsA(UsdGeom.Mesh):
            if prim.GetPath() in skinned:
                result.append(skinned[prim.GetPath()])
            else:
                points = np.array(UsdGeom.Mesh(prim).GetPointsAttr().Get(code), dtype=np.float64)
                world = np.array(UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(code), dtype=np.float64)
                result.append(points @ world[:3, :3] + world[3, :3])
    return np.concatenate(result)
