"""Model loading: the one place that turns a user's MODEL argument into a Scene."""

from __future__ import annotations

from pathlib import Path

from .errors import ViewerError


def load_model(model=None):
    """None: the built-in character; a Scene: itself; a path: the file, by its extension."""
    from .model import Scene

    if model is None:
        from .character import build_character

        return build_character()
    if isinstance(model, Scene):
        return model
    path = Path(model)
    if not path.is_file():
        raise ViewerError(f"model {path}: no such file")
    if path.suffix.lower() in (".gltf", ".glb"):
        from .gltf import load_gltf

        return load_gltf(path)
    raise ViewerError(f"model {path}: cannot open {path.suffix or 'extension-less'} files; "
                      "boneviewer reads glTF 2.0 (.gltf, .glb)")
