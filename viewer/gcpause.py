"""The cyclic garbage collector paused while a model's document is written whole.

An export makes tens of thousands of dicts and lists (a 900-node model's glTF document): none
is garbage while it runs and none is in a cycle (reference counting frees them afterwards), yet
every 700 new objects start a collection, and the older generations' passes walk every object
in the process.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def collector_paused():
    """No automatic collection inside the block; the collector is left as it was found (a
    caller that disabled it keeps it disabled)."""
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
