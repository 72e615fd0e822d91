"""USD: UsdSkel characters in (.usd, .usda, .usdc, .usdz) and out, through Pixar's usd-core, into
and from the same model objects as glTF's (Scene, SkinnedMesh, Skeleton, clips, Material).

The package, one job per file:

- ``read``: the child process that opens the stage with usd-core (the only reading code that
  imports it) and hands back plain arrays, every count bounded; a fault in the compiled library
  ends that child, never the viewer (``viewer.isolated``);
- ``build``: the Scene: a node per Skeleton prim and per joint, skeletons from the bind and rest
  transforms, skinned meshes in their skeleton's space, static meshes, UsdPreviewSurface
  materials, a clip per SkelAnimation, time-sampled mesh points as point caches (a morph target a
  sample, played on the stage's timeline), the stage's up axis and unit turned to glTF's;
- ``writer``: ``save_usd``, a Scene as .usda, .usdc or .usdz.
"""

from __future__ import annotations

from pathlib import Path


__all__ = ["load_usd", "load_usd_file", "read_usd"]

READER = Path(__file__).with_name("read.py")


def load_usd(path, file_axes: bool = False):
    """Load a USD stage as a Scene: its UsdSkel skeletons, skinned and static meshes, materials and
    every SkelAnimation as a clip. Its up axis and unit are turned to glTF's (+Y up, front +Z,
    metres) unless ``file_axes`` keeps them; ``scene.import_axes`` says what was done."""
    return load_usd_file(path, file_axes)[1]


def load_usd_file(path, file_axes: bool = False):
    """(what the reader made of the stage, its Scene), for ``check`` and ``info``."""
    from ..isolated import load_isolated

    return load_isolated(READER, "pxr", path, "USD", "viewer.usd.build", file_axes)


def read_usd(path) -> tuple[dict, dict]:
    """(document, arrays): what ``read`` makes of the stage, read in a child process."""
    from ..isolated import run_reader

    return run_reader(READER, "pxr", Path(path), "USD")
