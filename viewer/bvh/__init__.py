"""BVH motion-capture loader: a HIERARCHY becomes one skeleton, the MOTION one clip.

The package, one job per file:

- ``parse``: the text, every count bounded before it is used, to joints and a (frames, channels)
  array; a problem is one ViewerError naming the file and the line.
- ``build``: the Scene: bones linked to nodes, the clip, the up axis turned to +Y and the facing
  to +Z, the scale, and a capsule per bone segment (BVH has no mesh).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from ..model import Scene
from .build import AXES, build_scene, facing_rotation
from .parse import BvhError, read_bvh, renamed_joints

__all__ = ["BvhError", "load_bvh", "load_bvh_motion"]


def load_bvh(path, scale: float | None = None, up: str | None = None, forward: str | None = None) -> Scene:
    """Load a .bvh file as a Scene with one skeleton, one clip named after the file and a
    capsule mesh. ``up``: the file's up axis ("y", "z", "-z", ...; None: detected from the first
    frame, +Y when it cannot tell), turned to +Y. ``forward``: the axis the figure faces in the
    file (None: detected from the first frame's hips and shoulders, kept when it cannot tell),
    turned to +Z, glTF's front. ``scale`` multiplies positions (None: the first frame spans 1.7
    units along Y). ``scale=1.0, up="y", forward="z"`` keeps the file's numbers, bit for bit."""
    return load_bvh_motion(path, scale, up, forward)[1]


def load_bvh_motion(path, scale: float | None = None, up: str | None = None, forward: str | None = None):
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
    for what, axis in (("up", up), ("forward", forward)):
        if axis is not None and not (isinstance(axis, str) and axis.strip().lower().lstrip("+-") in AXES):
            raise ViewerError(f"{path}: {what} axis {axis!r}: expected x, y, z, -x, -y or -z")
    if up is not None and forward is not None:
        try:
            facing_rotation(up, forward)  # checks that they are across each other
        except ViewerError as error:
            raise ViewerError(f"{path}: {error}") from None
    motion = read_bvh(path)
    renamed = renamed_joints(motion)
    if renamed:  # one line for them all: bone maps, poses and scripts name the bones by the new names
        logging.getLogger("boneviewer").warning(
            f"{path}: {len(renamed)} joint name{'s' if len(renamed) > 1 else ''} taken already, renamed: "
            + "; ".join(renamed))
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            scene = build_scene(motion, path.name, scale, up, forward)
    except BvhError:
        raise
    except ViewerError as error:
        raise ViewerError(f"{path}: {error}") from None
    scene.file_path = path  # what an export or a saved pose must not overwrite
    return motion, scene
