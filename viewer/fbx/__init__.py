"""FBX reader: binary and ASCII FBX (6100 to 7700) through ufbx, into the same model objects as
glTF's (Scene, SkinnedMesh, Skeleton, clips, Material).

The package, one job per file:

- ``read``: the child process that reads the file with ufbx (the only code that imports it) and
  hands back plain arrays, every count bounded; a fault in the compiled reader ends that child,
  never the viewer (``viewer.isolated``);
- ``meshes``: the array work on what it hands back (triangles, vertices, influences, shapes);
- ``build``: the Scene: nodes, skeletons from the skin clusters' binds, meshes, materials, a clip
  per animation stack, the file's axes and units turned to glTF's.
"""

from __future__ import annotations

from pathlib import Path


__all__ = ["load_fbx", "load_fbx_file", "read_fbx"]

READER = Path(__file__).with_name("read.py")


def load_fbx(path, file_axes: bool = False):
    """Load an .fbx file as a Scene: its meshes, skins, materials and every animation stack as a
    clip named as the stack. Its axes and units are turned to glTF's (+Y up, front +Z, metres),
    unless ``file_axes`` keeps them; ``scene.import_axes`` says what was done."""
    return load_fbx_file(path, file_axes)[1]


def load_fbx_file(path, file_axes: bool = False):
    """(what the reader made of the file, its Scene) as ``load_fbx`` loads it: for ``check`` and
    ``info``, which also tell what the file says (its version, creator, axes, stacks)."""
    from ..isolated import load_isolated

    return load_isolated(READER, "ufbx", path, "FBX", "viewer.fbx.build", file_axes)


def read_fbx(path) -> tuple[dict, dict]:
    """(document, arrays): what ``read`` makes of the file, read in a child process."""
    from ..isolated import run_reader

    return run_reader(READER, "ufbx", Path(path), "FBX")
