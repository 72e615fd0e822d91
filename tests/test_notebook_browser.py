"""The notebook viewer in a real JupyterLab, in headless Chromium, used as a user uses it: the
widget shows the model, a later cell's v.pose(...) changes the picture, a drag orbits, a click on
the torso selects a bone, and v.snapshot() is what the page shows."""

from __future__ import annotations

import shutil
import time

import numpy as np
import pytest

pytest.importorskip("jupyter_rfb", reason="the notebook extra (pip install boneviewer[notebook])")
pytest.importorskip("jupyterlab")
sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
if shutil.which("chromium") is None:
    pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)", allow_module_level=True)

from jupyter_browser import (IMAGE, WATCH_IMAGE, read_image, JupyterLab, launch_chromium, open_notebook,  # noqa: E402
                             run_cell, write_notebook)
from samples import CESIUM_MAN  # noqa: E402

CELLS = [
    f"import numpy as np\nfrom viewer.notebook import Viewer\nv = Viewer({str(CESIUM_MAN)!r}, size=(480, 360))\nv",
    'v.pose({"Skeleton_arm_joint_L__4_": {"rotation_quaternion": [0, 0, 0.5, 0.866]}})',
    "np.save('snapshot.npy', v.snapshot())",
    "print('selected', v.selected, 'yaw', v.camera['yaw'])",
]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab")
    write_notebook(folder / "viewer.ipynb", CELLS)
    lab = JupyterLab(folder)
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.folder = folder
            open_notebook(page, lab, "viewer.ipynb")
            yield page
            browser.close()
    finally:
        lab.close()


def shown(page) -> np.ndarray:
    return read_image(page)


def changed(a, b) -> float:
    return float(np.abs(a[..., :3].astype(np.int16) - b[..., :3].astype(np.int16)).mean())


def new_frame(page, action, settle: float = 0.6):
    """Do ``action``, wait for the picture to change, and let jupyter_rfb's lossless PNG follow its JPEG."""
    page.evaluate(WATCH_IMAGE, IMAGE)
    action()
    page.wait_for_function("() => window.__frames.length > 0", timeout=30_000)
    time.sleep(settle)
    return shown(page)


def test_the_widget_in_jupyterlab(page):
    run_cell(page, 0)
    page.wait_for_function(f"() => document.querySelector('{IMAGE}')?.naturalWidth > 1", timeout=90_000)
    time.sleep(0.6)
    first = shown(page)
    assert abs(first.shape[1] - 480) <= 4 and abs(first.shape[0] - 360) <= 4   # the page's size (less its border)
    assert first[..., :3].std() > 20   # the model and the grid, not a blank frame
    page.screenshot(path=str(page.folder / "shown.png"))

    posed = new_frame(page, lambda: run_cell(page, 1))
    assert changed(first, posed) > 0.3

    run_cell(page, 2)
    deadline = time.monotonic() + 30
    while not (page.folder / "snapshot.npy").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.2)
    snapshot = np.load(page.folder / "snapshot.npy")
    assert snapshot.shape == posed.shape
    assert changed(snapshot, posed) < 1.0   # the lossless frame: PNG, within the browser's decoding

    box = page.locator(IMAGE).bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.45   # the torso

    def click():
        page.mouse.click(x, y)

    new_frame(page, click)   # the overlay highlights the selection

    def drag():
        page.mouse.move(x - 100, y + 120)
        page.mouse.down()
        for step in range(1, 11):
            page.mouse.move(x - 100 + 10 * step, y + 120, steps=1)
        page.mouse.up()

    orbited = new_frame(page, drag)
    assert changed(posed, orbited) > 0.3
    run_cell(page, 3)
    output = page.locator(".jp-OutputArea-output pre", has_text="selected")
    output.wait_for(timeout=30_000)
    text = output.last.inner_text()
    words = text.split()
    assert words[0] == "selected" and words[1].startswith("Skeleton_torso_joint"), text
    assert float(words[3]) != pytest.approx(20.0)   # the drag turned the camera
