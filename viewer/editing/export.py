"""Writing a model as it is now, by its file's suffix: what `boneviewer export` and the
notebook's ``v.export`` share."""

from __future__ import annotations

from pathlib import Path

from ..errors import ViewerError

GLTF_OUT_SUFFIXES = (".glb", ".gltf")
USD_OUT_SUFFIXES = (".usda", ".usdc", ".usdz")


def save_model(scene, path, apply_pose_as_bind: bool = False, inputs: dict | None = None,
               force: bool = False) -> Path:
    """Write ``scene`` as it is now to ``path``, chosen by its suffix as `boneviewer export`
    chooses: glTF (.glb, .gltf) or USD through usd-core (.usda, .usdc, .usdz); the writers' own
    never-overwrite rules hold (``inputs``, ``force``: see write_model_files). Returns the path."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in GLTF_OUT_SUFFIXES:
        from ..gltf import save_gltf as save
    elif suffix in USD_OUT_SUFFIXES:
        from ..usd.writer import save_usd as save  # imported when writing: usd-core is big
    else:
        raise ViewerError(f"{path}: the output must be a .glb or .gltf file (glTF), or a .usdz, .usda or .usdc "
                          "file (USD)")
    return save(scene, path, apply_pose_as_bind=apply_pose_as_bind, inputs=inputs, force=force)
