"""The child's side of a reader run in a process of its own (see ``viewer.isolated``): the
arrays it hands back and how they are written. Standard library only: the child starts with
``python -S`` and imports neither numpy nor boneviewer."""

from __future__ import annotations

import array
import json
import os
import sys

MAGIC = b"BONEVIEWER-READER-1\n"
DTYPES = {"d": "<f8", "f": "<f4", "i": "<i4", "I": "<u4", "B": "|u1", "e": "<f2"}


class FileProblem(Exception):
    """What is wrong with the file, in one line."""


class Blobs:
    """Named arrays as (numpy dtype, shape, bytes), written after the document."""

    def __init__(self):
        self.entries: dict[str, tuple[str, list, bytes]] = {}

    def buffer(self, name: str, view: memoryview, shape: list | None = None) -> None:
        """An array from a buffer (its format one of DTYPES' keys)."""
        dtype = DTYPES.get(view.format)
        if dtype is None:
            raise FileProblem(f"{name}: values of type {view.format!r}")
        data = view.tobytes()
        self.entries[name] = (dtype, list(view.shape) if shape is None else shape, data)

    def numbers(self, name: str, typecode: str, values, width: int | None = None) -> int:
        data = array.array(typecode, values)
        shape = [len(data)] if width is None else [len(data) // width, width]
        self.entries[name] = (DTYPES[typecode], shape, data.tobytes())
        return len(data)

    def raw(self, name: str, data: bytes) -> None:
        self.entries[name] = ("|u1", [len(data)], data)


def write(doc: dict, blobs: Blobs, out) -> None:
    """MAGIC, a line with the header's length, the header (JSON: the document and each array's
    dtype, shape, offset and length), then the arrays' bytes."""
    offset, table = 0, {}
    for name, (dtype, shape, data) in blobs.entries.items():
        table[name] = [dtype, shape, offset, len(data)]
        offset += len(data)
    header = json.dumps({"doc": doc, "arrays": table}).encode()
    out.write(MAGIC + b"%d\n" % len(header) + header)
    for _, _, data in blobs.entries.values():
        out.write(data)
    out.flush()


def stay_with_parent() -> None:
    """Have Linux kill this process when its parent ends (a job's time limit, a kernel restarted,
    kill -9): a reader spinning in a compiled library would otherwise go on at 100 % of a core.
    The parent is named by BONEVIEWER_READER_PARENT: if it ended before the request was made, the
    child has a new parent already and ends now. (Linux's request follows the parent thread that
    started the child: ``run_reader`` waits in that thread.) Elsewhere: nothing is asked."""
    parent = os.environ.get("BONEVIEWER_READER_PARENT", "")
    if not sys.platform.startswith("linux") or not parent.isdigit():
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):
        os._exit(1)


def serve(read, argv: list[str]) -> None:
    """The child's main: ``read(path) -> (doc, blobs)`` on argv's file, its answer to stdout, or
    the problem in one line to stderr and exit 2; ``os._exit`` either way (no interpreter
    teardown: a compiled library's exit-time faults cannot happen)."""
    import gc

    stay_with_parent()
    gc.disable()  # ufbx's bindings have faulted when a collection ran while their lists were walked
    sys.path.insert(0, argv[0])  # where the reader's library is installed (no site: -S)
    try:
        doc, blobs = read(argv[1])
    except FileProblem as problem:
        sys.stderr.write(f"{problem}\n")
        sys.stderr.flush()
        os._exit(2)
    write(doc, blobs, sys.stdout.buffer)
    os._exit(0)
