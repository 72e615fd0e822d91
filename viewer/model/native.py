"""Which skeleton kernel runs: the compiled one (``viewer.model._ckernel``, built from
csrc/ckernel.c by ``pip install``) or numpy's (``batch.UpdateKernel``), the reference.

The compiled module is optional. numpy's kernel runs instead when the module is not built (no
C compiler at install time), fails to import, or is stale (built from another version of
csrc/ckernel.c: its ``KERNEL_VERSION`` differs from ``KERNEL_VERSION`` here), and when the
environment says ``BONEVIEWER_KERNEL=numpy``. ``BONEVIEWER_KERNEL=c`` makes a missing or
stale module an error instead of a fallback.

``ckernel`` is the module or None, read each time a kernel is built, so a test can switch
kernels by setting it; ``describe()`` says which kernel runs and why.
"""

from __future__ import annotations

import os

from ..errors import ViewerError

KERNEL_VERSION = 12  # csrc/ckernel.c's KERNEL_VERSION this Python code was written for
ENV = "BONEVIEWER_KERNEL"


def _load():
    choice = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if choice not in ("auto", "c", "numpy"):
        raise ViewerError(f"{ENV}={choice!r}: expected 'auto', 'c' or 'numpy'")
    if choice == "numpy":
        return None, f"numpy ({ENV}=numpy)"
    try:
        from . import _ckernel
    except ImportError as error:
        module, why = None, f"numpy (the compiled kernel is not built: {error})"
    else:
        built = getattr(_ckernel, "KERNEL_VERSION", None)
        if built == KERNEL_VERSION:
            return _ckernel, "C (compiled, viewer.model._ckernel)"
        module, why = None, (f"numpy (the compiled kernel is stale: version {built}, expected {KERNEL_VERSION}; "
                             "rebuild it with pip install -e .)")
    if choice == "c":
        raise ViewerError(f"{ENV}=c: {why.removeprefix('numpy (').rstrip(')')}")
    return module, why


ckernel, _why = _load()


def describe() -> str:
    """The kernel that runs, e.g. ``C (compiled, viewer.model._ckernel)`` or ``numpy (...)``."""
    if ckernel is None:
        return _why if _why.startswith("numpy") else "numpy (switched off)"
    return _why if _why.startswith("C") else "C (compiled, viewer.model._ckernel)"


def name() -> str:
    """``C`` or ``numpy``."""
    return "numpy" if ckernel is None else "C"
