"""boneviewer: a GPU-skinned skeletal-mesh viewer and pose editor with Babylon.js bone semantics.

Names are imported lazily so that ``import viewer`` (and a headless render) starts fast.
"""

__version__ = "0.1.0"

_EXPORTS = {
    "ViewerError": "viewer.errors",
    "Bone": "viewer.model",
    "BoneIKController": "viewer.model",
    "BoneLookController": "viewer.model",
    "Skeleton": "viewer.model",
    "SkeletonGroup": "viewer.model",
    "Crowd": "viewer.model",
    "PlacedScenes": "viewer.model",
    "TransformNode": "viewer.model",
    "SkinnedMesh": "viewer.model",
    "Scene": "viewer.model",
    "Space": "viewer.model",
    "render_image": "viewer.app",
    "run_viewer": "viewer.app",
    "load_model": "viewer.loaders",
    "load_gltf": "viewer.gltf",
    "save_gltf": "viewer.gltf",
    "save_usd": "viewer.usd.writer",
    "load_bvh": "viewer.bvh",
    "retarget": "viewer.model.retarget",
    "bake": "viewer.motion",
    "BoneMask": "viewer.motion",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'viewer' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)
