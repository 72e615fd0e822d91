"""Readers run in a process of their own: a compiled reader (ufbx, usd-core) given a damaged or
hostile file may fault, and a fault there must be an error line, never the end of the viewer.

The child is a script run by path with ``python -S`` (fast to start; ``protocol`` is all it
imports of boneviewer): it reads the file and writes a JSON document and plain arrays to its
stdout (``protocol.write``); ``run_reader`` starts it, waits, and turns how it ended into a
ViewerError in words or into (document, arrays).

A reader has a time budget (``reader_seconds``): usd-core never returns on some stages (its time
mapping spun on a root layer of timeCodesPerSecond 0 until the reader learnt to read it; its open of a
sublayer that is a named pipe waits for ever), so a child that has not answered in time is killed
and the file refused in one line, as a fault is. And a
reader never outlives the process that started it: the child asks Linux to kill it when its
parent dies (``protocol.serve``), and the parent kills it on any way out of the wait (Ctrl+C,
a batch job's alarm).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from ..errors import ViewerError

HERE = Path(__file__).parent
# By path, with neither the script's folder (a package's inspect.py would hide the standard
# library's) nor the current one on sys.path; this folder instead, for ``import protocol``. Loaded
# as __main__ through its file's loader, which keeps its byte code in __pycache__ (runpy.run_path
# compiles a script anew each time: 7 ms of the USD reader's start).
LAUNCH = ("import sys, importlib.util as u; del sys.path[0]; sys.path.insert(0, sys.argv[1]); sys.argv = sys.argv[2:]; "
          "s = u.spec_from_file_location('__main__', sys.argv[0]); m = u.module_from_spec(s); "
          "sys.modules['__main__'] = m; s.loader.exec_module(m)")
DTYPES = ("<f8", "<f4", "<i4", "<u4", "|u1", "<f2")
BUDGET_ENV = "BONEVIEWER_READER_SECONDS"
# Seconds, and one more for every 10 MB of the file: usd-core reads a 49 MB .usda of 4 million polygon
# corners in 1.5 s here (0.7 s as .usdc), so a stage at the reader's limits (50 million) has some
# 20 s to spare; a stage that spins has all it asks and never answers.
BUDGET = 30.0
BUDGET_BYTES = 10_000_000  # a second more for each
PARENT_ENV = "BONEVIEWER_READER_PARENT"  # the child's parent, by pid (protocol.stay_with_parent)


def reader_seconds(path: Path | None = None) -> float:
    """The time a reader child has to answer: BONEVIEWER_READER_SECONDS when it is a positive
    number of seconds, else BUDGET and a second for every whole 10 MB of ``path``."""
    try:
        seconds = float(os.environ.get(BUDGET_ENV, ""))
    except ValueError:
        seconds = 0.0
    if 0 < seconds < float("inf"):
        return seconds
    try:
        size = Path(path).stat().st_size if path is not None else 0
    except OSError:
        size = 0
    return BUDGET + size // BUDGET_BYTES


def _spawn(command: list[str]) -> subprocess.Popen:
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, PARENT_ENV: str(os.getpid())})


# Children started ahead of need (``start``), by (script, file): the command line starts the
# model's reader before its own imports and GL context, so the two run at once.
_STARTED: dict[tuple[str, str], subprocess.Popen] = {}


def start(script: Path, library: str, path: Path) -> None:
    """Start reading ``path`` now, for a later ``run_reader`` of the same script and file (a
    library that is not installed, or a file that is not there, is left for it to say)."""
    command = _command(script, library, path)
    if command is None or not Path(path).is_file():
        return
    key = (str(script), str(Path(path).resolve()))
    if key not in _STARTED:
        _STARTED[key] = _spawn(command)
        if len(_STARTED) == 1:
            import atexit

            atexit.register(_stop_unused)


def _stop_unused() -> None:
    for child in _STARTED.values():
        child.kill()
    _STARTED.clear()


def _command(script: Path, library: str, path: Path) -> list[str] | None:
    import importlib.util

    spec = importlib.util.find_spec(library)
    if spec is None or not spec.submodule_search_locations:
        return None
    site = str(Path(list(spec.submodule_search_locations)[0]).parent)
    return [sys.executable, "-S", "-c", LAUNCH, str(HERE), str(script), site, str(path)]


def run_reader(script: Path, library: str, path: Path, what: str, timeout: float | None = None) -> tuple[dict, dict]:
    """(document, {name: array}) of ``path`` as ``script`` reads it in a child process, with
    ``library``'s folder on its path. ``what`` names the format in errors ("FBX"). A child that
    has not answered in ``timeout`` seconds (default: ``reader_seconds(path)``) is killed and the
    file refused."""
    timeout = reader_seconds(path) if timeout is None else timeout
    command = _command(script, library, path)
    if command is None:
        raise ViewerError(f"{path}: reading {what} needs the {library_package(library)} package "
                          "(pip install 'boneviewer[formats]')")
    child = _STARTED.pop((str(script), str(Path(path).resolve())), None)
    if child is None:
        child = _spawn(command)
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(child)
        raise ViewerError(f"{path}: the {what} reader gave no answer in {timeout:g} s and was stopped "
                          f"({BUDGET_ENV}=SECONDS gives it longer)") from None
    except BaseException:  # Ctrl+C, a batch job's alarm: the child is not left reading
        _stop(child)
        raise
    done = subprocess.CompletedProcess(command, child.returncode, stdout, stderr)
    if done.returncode != 0:
        raise ViewerError(f"{path}: {failure(done, what)}")
    return read_answer(done.stdout, path, what)


def _stop(child: subprocess.Popen) -> None:
    child.kill()
    child.communicate()


def read_answer(data: bytes, path: Path, what: str) -> tuple[dict, dict]:
    """``answer`` with any flaw in the bytes one ViewerError line naming the file."""
    try:
        return answer(data)
    except (ValueError, KeyError, TypeError) as error:
        raise ViewerError(f"{path}: the {what} reader's answer did not arrive whole ({error})") from None


def load_isolated(script: Path, library: str, path, what: str, builder: str, file_axes: bool):
    """(document, Scene): ``path`` read by ``script`` in its own process while ``builder``'s module
    (its ``build_scene(doc, arrays, path, file_axes)``) is imported here, then built; every
    problem one ViewerError line naming the file (a singular matrix too)."""
    import importlib

    path = Path(path)
    start(script, library, path)  # the reader's process runs while the builder's modules import
    build_scene = importlib.import_module(builder).build_scene
    doc, arrays = run_reader(script, library, path, what)
    return doc, build_answer(build_scene, doc, arrays, path, file_axes, what)


def build_answer(build_scene, doc: dict, arrays: dict, path: Path, file_axes: bool, what: str = "reader"):
    """``build_scene(doc, arrays, path, file_axes)``'s Scene, every problem one ViewerError line
    naming the file (a singular matrix too). ``what`` names the format ("FBX")."""
    import numpy as np

    try:
        return build_scene(doc, arrays, path, file_axes)
    except ViewerError as error:
        raise ViewerError(f"{path}: {error}") from None
    except (np.linalg.LinAlgError, StopIteration):
        raise ViewerError(f"{path}: a bind or placement matrix in it cannot be inverted (singular)") from None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
        # The child's answer is built to match the builder; one that lacks a part or holds the
        # wrong kind of value (a damaged pipe, a reader from another version) is refused whole.
        raise ViewerError(f"{path}: the {what} reader's answer is not what the builder reads "
                          f"({type(error).__name__}: {str(error)[:120]})") from None


def library_package(library: str) -> str:
    return {"pxr": "usd-core"}.get(library, library)


def answer(data: bytes) -> tuple[dict, dict]:
    """The child's answer (see protocol.write) as (document, {name: read-only array})."""
    import numpy as np

    from .protocol import MAGIC

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
        arrays[name] = np.frombuffer(body[offset:offset + size], dtype=dtype).reshape(shape)
    return header["doc"], arrays


def failure(done: subprocess.CompletedProcess, what: str) -> str:
    """The child's failure in one line: its own words (exit 2), else how it ended."""
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    if done.returncode == 2 and said:
        return f"not a readable {what} file: {said[-1]}"
    if done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        return f"the {what} reader crashed ({name}) on this file: it is damaged or uses what the reader cannot read"
    last = said[-1] if said else f"exit status {done.returncode}"
    return f"the {what} reader failed: {last}"
