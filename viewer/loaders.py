"""Model loading: the one place that turns a user's MODEL argument into a Scene."""

from __future__ import annotations

from pathlib import Path

from .errors import ViewerError


def load_model(model=None, scene: int | None = None, bvh_scale: float | None = None, bvh_up: str | None = None):
    """None: the built-in character; a Scene: itself; a path: the file, by its extension.
    ``scene`` picks a glTF file's scene (default: the file's own default); ``bvh_scale`` and
    ``bvh_up`` are a BVH file's ``scale`` and ``up`` (see ``viewer.bvh.load_bvh``)."""
    from .model import Scene

    if model is None:
        from .character import build_character

        if scene is not None:
            raise ViewerError("--scene picks a scene of a glTF file; the built-in character has none")
        return build_character()
    if isinstance(model, Scene):
        return model
    path = Path(model)
    if not path.is_file():
        raise ViewerError(f"model {path}: no such file")
    if path.suffix.lower() in (".gltf", ".glb"):
        from .gltf import load_gltf

        return load_gltf(path, scene)
    if path.suffix.lower() == ".bvh":
        from .bvh import load_bvh

        if scene is not None:
            raise ViewerError("--scene picks a scene of a glTF file; a BVH file has one skeleton")
        return load_bvh(path, bvh_scale, bvh_up)
    raise ViewerError(f"model {path}: cannot open {path.suffix or 'extension-less'} files; "
                      "boneviewer reads glTF 2.0 (.gltf, .glb) and BVH motion capture (.bvh)")
