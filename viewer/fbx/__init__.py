"""FBX reader: binary and ASCII FBX (6100 to 7700) through ufbx, into the same model objects as
glTF's (Scene, SkinnedMesh, Skeleton, clips, Material).

The package, one job per file:

- ``read``: the child process that reads the file with ufbx (the only code that imports it) and
  hands back plain arrays, every count bounded; a fault in the compiled reader ends that child,
  never the viewer;
- ``build``: the Scene: nodes, skeletons from the skin clusters' binds, meshes, materials, a clip
  per animation stack, the file's axes and units turned to glTF's.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from ..errors import ViewerError

__all__ = ["load_fbx", "load_fbx_file", "read_fbx"]

READER = Path(__file__).with_name("read.py")
# The child runs read.py by path without site (-S: it starts faster), with neither its folder
# (this package's inspect.py would hide the standard library's) nor the current one on sys.path;
# read.py puts ufbx's folder there itself.
LAUNCH = "import sys, runpy; del sys.path[0]; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
TIMEOUT = 300.0  # seconds one file may take to read
DTYPES = ("<f8", "<u4", "|u1")


def load_fbx(path, file_axes: bool = False):
    """Load an .fbx file as a Scene: its meshes, skins, materials and every animation stack as a
    clip named as the stack. Its axes and units are turned to glTF's (+Y up, front +Z, metres),
    unless ``file_axes`` keeps them; ``scene.fbx_import`` says what was done."""
    return load_fbx_file(path, file_axes)[1]


def load_fbx_file(path, file_axes: bool = False):
    """(what the reader made of the file, its Scene) as ``load_fbx`` loads it: for ``check`` and
    ``info``, which also tell what the file says (its version, creator, axes, stacks)."""
    from .build import build_scene

    path = Path(path)
    doc, arrays = read_fbx(path)
    try:
        scene = build_scene(doc, arrays, path, file_axes)
    except ViewerError as error:
        raise ViewerError(f"{path}: {error}") from None
    return doc, scene


def read_fbx(path) -> tuple[dict, dict]:
    """(document, arrays): what ``read`` makes of the file, read in a child process."""
    import importlib.util

    path = Path(path)
    spec = importlib.util.find_spec("ufbx")
    if spec is None or not spec.submodule_search_locations:
        raise ViewerError(f"{path}: reading FBX needs the ufbx package (pip install 'boneviewer[formats]')")
    site = str(Path(list(spec.submodule_search_locations)[0]).parent)
    try:
        done = subprocess.run([sys.executable, "-S", "-c", LAUNCH, str(READER), site, str(path)],
                              capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ViewerError(f"{path}: the FBX reader took more than {TIMEOUT:g} s; stopped") from None
    if done.returncode != 0:
        raise ViewerError(f"{path}: {_failure(done)}")
    try:
        return _answer(done.stdout)
    except (ValueError, KeyError, TypeError) as error:
        raise ViewerError(f"{path}: the FBX reader's answer did not arrive whole ({error})") from None


def _answer(data: bytes) -> tuple[dict, dict]:
    """The child's answer (see read.write) as (document, {name: read-only array})."""
    import numpy as np

    from .read import MAGIC

    if not data.startswith(MAGIC):
        raise ValueError("no header")
    line_end = data.index(b"\n", len(MAGIC))
    length = int(data[len(MAGIC):line_end])
    start = line_end + 1
    header = json.loads(data[start:start + length])
    body = memoryview(data)[start + length:]
    arrays = {}
    for name, (dtype, shape, offset, size) in header["arrays"].items():
        if dtype not in DTYPES or offset < 0 or offset + size > len(body):
            raise ValueError(f"array {name!r} out of bounds")
        array = np.frombuffer(body[offset:offset + size], dtype=dtype)
        arrays[name] = array.reshape(shape)
    return header["doc"], arrays


def _failure(done: subprocess.CompletedProcess) -> str:
    """The child's failure in one line: its own words (exit 2), else how it ended."""
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    if done.returncode == 2 and said:
        return f"not a readable FBX file: {said[-1]}"
    if done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        return f"the FBX reader crashed ({name}) on this file: it is damaged or uses what the reader cannot read"
    last = said[-1] if said else f"exit status {done.returncode}"
    return f"the FBX reader failed: {last}"
