"""Frame timing: the wall time between frames, and the GPU time of the scene's drawing.

The GPU time comes from GL timer queries (GL_TIME_ELAPSED, core since GL 3.3) around the draw,
one query per frame in a small ring: a query is read only when its slot comes round again,
``GPU_QUERY_RING`` frames after it was issued, by when the GPU has long finished that frame
(drivers queue two or three), so reading it never waits for the GPU.

Software rasterizers (Mesa's llvmpipe and softpipe, SwiftShader) answer timer queries, but not
with the cost: measured on llvmpipe (Mesa 22.3, 2 cores), RobotExpressive in the viewer at
1280x720 takes 49-60 ms a frame and its queries say 5.4 ms; a full-screen draw of 36 ms (300 ms
with a heavier shader) says 5-16 ms: the rasterizing threads are left out. There the frame's
wall time is the cost, and the GPU time is left out ("n/a") unless asked for (``software_gpu``).
"""

from __future__ import annotations

import time
from collections import deque
from contextlib import contextmanager

import numpy as np

from ..options import FrameTimes

GPU_QUERY_RING = 4        # frames between issuing a timer query and reading it
WINDOW = 60               # frames the figures are the median of
SOFTWARE_RENDERERS = ("llvmpipe", "softpipe", "swiftshader", "swrast")
SATURATED = 0xFFFFFFFF    # moderngl reads the elapsed nanoseconds as 32 bits: a saturated value is no time


class FrameTiming:
    """Per frame: ``start_frame()`` once at its start, ``with gpu():`` around the drawing whose
    GPU time is wanted; ``times()`` the figures (medians over the last ``window`` frames)."""

    def __init__(self, ctx, ring: int = GPU_QUERY_RING, window: int = WINDOW, software_gpu: bool = False,
                 clock=time.perf_counter):
        self.clock = clock
        self._last_start = None
        self._intervals = deque(maxlen=window)   # seconds between frame starts
        self._gpu = deque(maxlen=window)         # seconds of GPU time, a few frames late
        renderer = str(ctx.info.get("GL_RENDERER", ""))
        self.gpu_note = None  # why there is no GPU time (None: there is)
        if ctx.version_code < 330 and "GL_ARB_timer_query" not in ctx.extensions:
            self.gpu_note = "this OpenGL has no timer queries"
        elif not software_gpu and any(name in renderer.lower() for name in SOFTWARE_RENDERERS):
            self.gpu_note = (f"{renderer.split(' (')[0]} is a software renderer: its timer queries leave out "
                             "the rasterizing; the frame time is the cost")
        self._queries = []
        if self.gpu_note is None:
            try:
                self._queries = [ctx.query(time=True) for _ in range(max(int(ring), 2))]
            except Exception as error:  # moderngl raises plain Exceptions for GL errors
                self.gpu_note = f"timer queries failed ({error})"
        self._issued = [False] * len(self._queries)
        self._slot = 0

    def start_frame(self) -> None:
        """A frame starts: the time since the last start is one frame's wall time; the query
        this frame reuses, issued ``ring`` frames ago, is read."""
        now = self.clock()
        if self._last_start is not None:
            self._intervals.append(now - self._last_start)
        self._last_start = now
        if not self._queries:
            return
        self._slot = (self._slot + 1) % len(self._queries)
        if self._issued[self._slot]:
            self._issued[self._slot] = False
            elapsed = self._queries[self._slot].elapsed
            if 0 < elapsed < SATURATED:
                self._gpu.append(elapsed * 1e-9)

    @contextmanager
    def gpu(self):
        """The GL commands issued inside, timed on the GPU (once per frame)."""
        if not self._queries or self._issued[self._slot]:
            yield
            return
        query = self._queries[self._slot]
        with query:
            yield
        self._issued[self._slot] = True

    def times(self) -> FrameTimes:
        frame = float(np.median(self._intervals)) * 1000.0 if len(self._intervals) >= 3 else None
        gpu = float(np.median(self._gpu)) * 1000.0 if self._gpu else None
        return FrameTimes(frame_ms=frame, gpu_ms=gpu, gpu_note=self.gpu_note)

    def release(self) -> None:
        """No more GPU timing (moderngl's queries have no release: they go with the context)."""
        self._queries, self._issued = [], []
