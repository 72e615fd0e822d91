"""BVH motion-capture loader: a HIERARCHY becomes one skeleton, the MOTION one clip.

The package, one job per file:

- ``parse``: the text, every count bounded before it is used, to joints and a (frames, channels)
  array; a problem is one ViewerError naming the file and the line.
- ``build``: the Scene: bones linked to nodes, the clip, the up axis turned to +Y, the scale, and
  a capsule per bone segment (BVH has no mesh).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from ..model import Scene
from .build import build_scene, up_rotation
from .parse import BvhError, read_bvh

__all__ = ["BvhError", "load_bvh", "load_bvh_motion"]


def load_bvh(path, scale: float | None = None, up: str | None = None) -> Scene:
    """Load a .bvh file as a Scene with one skeleton, one clip named after the file and a
    capsule mesh. ``up``: the file's up axis ("y", "z", "-z", ...; None: detected from the first
    frame, +Y when it cannot tell), turned to +Y. ``scale`` multiplies positions (None: the
    first frame spans 1.7 units along Y). ``scale=1.0, up="y"`` keeps the file's numbers."""
    return load_bvh_motion(path, scale, up)[1]


def load_bvh_motion(path, scale: float | None = None, up: str | None = None):
    """(the parsed file, its Scene) as ``load_bvh`` loads it: for ``check`` and ``info``, which
    also tell what the file says (joints' lines, channels, frames)."""
    path = Path(path)
    if scale is not None:
        try:
            scale = float(scale)
        except (TypeError, ValueError):
            raise ViewerError(f"{path}: scale must be a number, got {scale!r}") from None
        if not math.isfinite(scale) or scale <= 0:
            raise ViewerError(f"{path}: scale must be a finite number more than 0, got {scale!r}")
    if up is not None:
        if not isinstance(up, str):
            raise ViewerError(f"{path}: up must be an axis name such as 'y' or '-z', got {up!r}")
        up_rotation(up)  # checks the name
    motion = read_bvh(path)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            scene = build_scene(motion, path.name, scale, up)
    except BvhError:
        raise
    except ViewerError as error:
        raise ViewerError(f"{path}: {error}") from None
    scene.file_path = path  # what an export or a saved pose must not overwrite
    return motion, scene
