"""Fixtures shared by the test modules (test modules never import each other)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_cache_home(tmp_path_factory):
    """XDG_CACHE_HOME in a temporary folder for the whole run (this process and the commands it
    starts), so the suite never writes boneviewer's caches (prefiltered environments) into the
    user's home and every run starts cold."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield os.environ["XDG_CACHE_HOME"]
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture(scope="session", autouse=True)
def private_state_home(tmp_path_factory):
    """XDG_STATE_HOME in a temporary folder for the whole run: a window's mix recovery files
    (viewer.motion.recovery) never go into the user's home, and no window the suite opens is
    offered a mix an earlier run left there."""
    previous = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("xdg-state"))
    yield os.environ["XDG_STATE_HOME"]
    if previous is None:
        os.environ.pop("XDG_STATE_HOME", None)
    else:
        os.environ["XDG_STATE_HOME"] = previous


@pytest.fixture(autouse=True)
def fresh_boneviewer_logger():
    """Every test starts with the "boneviewer" logger as a fresh process has it: the CLI's main()
    gives it a stderr handler and stops it propagating (viewer.cli._show_warnings), which would
    otherwise leave caplog (listening at the root) deaf in every later test of the process."""
    import logging

    logger = logging.getLogger("boneviewer")
    saved = (list(logger.handlers), logger.propagate, logger.level, logger.disabled)
    yield
    logger.handlers[:] = saved[0]
    logger.propagate, logger.disabled = saved[1], saved[3]
    logger.setLevel(saved[2])


@pytest.fixture(scope="session")
def xvfb_display():
    """A private X server for real-window tests: ``":N"``.

    Xvfb picks a free display number itself and writes it to a pipe (``-displayfd``), so
    parallel runs and leftover lock files never race for a number.
    """
    xvfb = shutil.which("Xvfb")
    assert xvfb, "Xvfb is missing: run scripts/test.sh as root once (it installs xvfb), or apt-get install xvfb"
    read_end, write_end = os.pipe()
    process = subprocess.Popen([xvfb, "-displayfd", str(write_end), "-screen", "0", "1600x1000x24",
                                "-nolisten", "tcp"], pass_fds=(write_end,),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()  # empty if Xvfb died before it was ready
    if not number.isdigit():
        process.kill()
        pytest.fail(f"Xvfb did not start (exit status {process.wait(timeout=10)})")
    yield f":{number}"
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def ctx():
    """A headless EGL context for a test module, released after it with nothing left current
    (an EGL context left current kills a later GLX window in the process: PLATFORM.md)."""
    from viewer.render.headless import create_headless_context, release_egl_current

    context = create_headless_context()
    yield context
    context.release()
    release_egl_current()


def run_cli(*args, display: str | None = None, cwd=None, timeout: float = 120, env_extra=None):
    """Run ``python -m viewer.cli ARGS`` in a subprocess (a GLX window must not share this
    process with the EGL tests: shared/PLATFORM.md); no display unless one is given."""
    env = {**os.environ, **(env_extra or {})}
    env.pop("WAYLAND_DISPLAY", None)
    if display is None:
        env.pop("DISPLAY", None)
    else:
        env["DISPLAY"] = display
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "viewer.cli", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


@pytest.fixture
def cli():
    """``cli(*args, display=None, cwd=None)``: the boneviewer command in a subprocess."""
    return run_cli


@pytest.fixture
def panel_session():
    """The viewer with its panel on an offscreen target (tests/panel_driver.py)."""
    from panel_driver import headless_session

    with headless_session() as session:
        yield session


@pytest.fixture
def compiled_mixer_steps_checked(monkeypatch):
    """Every step the mixer runs by csrc/ckernel.c's Plan is checked, as it runs, against numpy's
    blend (the reference) of the mix as it is then: every row of T, R, S and every morph weight
    within 1e-12, the same rows and morph blocks written (and the table and the meshes holding them),
    the same running actions and layers (so a change to the mix that the plan missed fails). Yields a
    list with one entry per checked step."""
    import numpy as np

    from viewer.motion import mixer as mixer_module

    checked = []
    run_plan = mixer_module.Mixer._run_plan

    def checked_run_plan(self, plan):
        if not run_plan(self, plan):
            return False  # the mix changed: the plan ran nothing (evaluate makes another)
        running = sorted((a for a in self._actions.values() if a.playing and a.enabled), key=lambda a: a.order)
        layers = [layer for layer in self.layers if layer.tracks and layer.heard and layer.weight > 0]
        assert plan.running == running and plan.layers == layers, "the compiled step runs a mix that changed"
        compiled, self.compiled = self.compiled, False
        try:
            T, R, S, M, rows, morph = self._blend(running=running, layers=layers)
        finally:
            self.compiled = compiled
        for got, expected in zip(plan.out, (T, R, S, M)):
            assert got.shape == expected.shape and (np.abs(got - expected).max(initial=0.0) <= 1e-12), \
                f"compiled step vs numpy: {np.abs(got - expected).max()}"
        assert all(np.array_equal(a, b) for a, b in zip(plan.written[0], rows)) and plan.written[1] == morph
        layout = self._layout  # what the step wrote: the table's rows and the meshes' morph weights
        cap = layout.capacity if layout.table is not None else 0
        for k, field in enumerate(("position", "quaternion", "scaling")):
            written = np.flatnonzero(rows[k][:cap])
            assert np.array_equal(getattr(layout.table, field)[written], plan.out[k][written]) if cap else True
        for key in morph:
            meshes, offset, count = layout.morph[key]
            for mesh in meshes:
                assert np.array_equal(mesh.morph_targets.weights, plan.out[3][offset:offset + count])
        checked.append(len(running))
        return True

    monkeypatch.setattr(mixer_module.Mixer, "_run_plan", checked_run_plan)
    yield checked


@pytest.fixture
def chromium_page():
    """A new page in Debian's chromium driven by pip's playwright (no browser download:
    shared/PLATFORM.md); the browser is closed after the test."""
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("chromium is missing: scripts/setup.sh installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            yield browser.new_page()
        finally:
            browser.close()
