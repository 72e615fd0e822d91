"""What a frame costs, as the panel shows it: the wall time between frames and the scene's GPU
time from timer queries read a few frames late (viewer/render/timing.py), or "GPU time: n/a"
where the queries are missing or, on a software rasterizer, do not measure the drawing."""

import time

import numpy as np
import pytest

from panel_driver import headless_session

RING = 4  # viewer.render.timing.GPU_QUERY_RING (imported in the tests: this module loads without it)


class FakeQuery:
    """A timer query that records the frames it was issued and read in."""

    def __init__(self, log, clock):
        self.log, self.clock = log, clock

    def __enter__(self):
        self.log.append(("begin", self.clock.frame, id(self)))

    def __exit__(self, *exc):
        self.log.append(("end", self.clock.frame, id(self)))

    @property
    def elapsed(self):
        self.log.append(("read", self.clock.frame, id(self)))
        return 2_000_000  # 2 ms


class FakeContext:
    def __init__(self, renderer="NVIDIA H200/PCIe/SSE2", version_code=450, extensions=()):
        self.info = {"GL_RENDERER": renderer}
        self.version_code, self.extensions = version_code, set(extensions)
        self.log = []
        self.frame = 0

    def query(self, time=False):
        assert time
        return FakeQuery(self.log, self)


class FakeClock:
    def __init__(self, steps):
        self.steps, self.now = list(steps), 0.0

    def __call__(self):
        self.now += self.steps.pop(0) if self.steps else 0.0
        return self.now


def test_a_query_is_read_only_when_its_slot_comes_round_again():
    """Each frame's query is read GPU_QUERY_RING frames after it was issued (the GPU long done
    with it: reading never waits), and the figures are the medians of what was read."""
    from viewer.render.timing import GPU_QUERY_RING, FrameTiming

    assert GPU_QUERY_RING == RING
    ctx = FakeContext()
    clock = FakeClock([0.0] + [0.016, 0.016, 0.050, 0.016, 0.017] * 4)
    timing = FrameTiming(ctx, clock=clock)
    for frame in range(12):
        ctx.frame = frame
        timing.start_frame()
        with timing.gpu():
            pass
    issued = {}
    for event, frame, query in ctx.log:
        if event == "begin":
            issued[query] = frame
        elif event == "read":
            assert frame - issued[query] == GPU_QUERY_RING
    assert sum(event == "read" for event, _, _ in ctx.log) == 12 - GPU_QUERY_RING
    times = timing.times()
    assert times.gpu_ms == pytest.approx(2.0) and times.gpu_note is None
    assert times.frame_ms == pytest.approx(16.0)  # the median: the 50 ms hitch does not move it
    assert times.line() == "frame 16.0 ms  GPU 2.0 ms"


@pytest.mark.parametrize("ctx, note", [
    (FakeContext(version_code=320), "this OpenGL has no timer queries"),
    (FakeContext(renderer="llvmpipe (LLVM 15.0.6, 256 bits)"), "llvmpipe is a software renderer"),
])
def test_without_usable_timer_queries_the_gpu_time_is_na(ctx, note):
    from viewer.render.timing import FrameTiming

    timing = FrameTiming(ctx, clock=FakeClock([0.0] + [0.031] * 6))
    for _ in range(6):
        timing.start_frame()
        with timing.gpu():
            pass
    assert ctx.log == [], "no query is made"
    times = timing.times()
    assert times.gpu_ms is None and times.gpu_note.startswith(note)
    assert times.line() == "frame 31.0 ms  GPU time: n/a"
    assert note in times.explanation()


def test_a_real_draw_on_egl_has_a_positive_gpu_time_and_the_loops_wall_time():
    """The built-in character drawn on EGL in a loop that sleeps 30 ms a frame: after a few
    frames the timer queries give a positive GPU time (asked for on a software rasterizer too,
    to run the queries here), and the frame time is the loop's own inter-frame time."""
    from viewer.camera import framed_camera
    from viewer.character import build_character
    from viewer.options import RenderOptions
    from viewer.render.headless import HeadlessRenderer
    from viewer.render.timing import FrameTiming

    scene = build_character()
    options = RenderOptions(show_grid=False)
    with HeadlessRenderer((320, 240)) as headless:
        camera = framed_camera(scene, aspect=320 / 240)
        timing = FrameTiming(headless.ctx, software_gpu=True)
        starts = []
        for _ in range(RING + 8):
            starts.append(time.perf_counter())
            timing.start_frame()
            with timing.gpu():
                headless.render(scene, camera, options)
            time.sleep(0.03)
        times = timing.times()
        assert times.gpu_ms is not None and 0 < times.gpu_ms < 1000
        loop = float(np.median(np.diff(starts))) * 1000
        assert loop >= 30 and times.frame_ms == pytest.approx(loop, rel=0.05, abs=1.0)
        software = FrameTiming(headless.ctx).gpu_note is not None
        assert software == any(name in headless.ctx.info["GL_RENDERER"].lower() for name in ("llvmpipe", "softpipe"))


def test_the_panel_shows_the_frame_and_gpu_times():
    with headless_session() as session:
        assert session.panel.times_line == ""  # not measured yet: nothing shown
        session.run(RING + 4)
        line = session.panel.times_line
        times = session.timing.times()
        assert line == times.line() and line.startswith("frame ") and " ms  GPU " in line
        if times.gpu_note is None:  # a GPU whose timer queries measure the drawing
            assert times.gpu_ms > 0 and line.endswith(" ms")
        else:
            assert line.endswith("GPU time: n/a")


def test_frame_times_line_before_any_frame():
    from viewer.options import FrameTimes

    assert FrameTimes().line() == ""
    assert FrameTimes(frame_ms=12.34).line() == "frame 12.3 ms  GPU --"
