"""The cyclic garbage collector paused while a model is read or written whole.

A load or an export makes tens of thousands of objects that all live on (the parsed JSON, the
nodes, bones, channels; the document written): none is garbage while it runs, yet every 700
new objects start a collection, and the older generations' passes walk every object in the
process. Paused, the objects are looked at once, by the first collection after the load.
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
