"""Measure the notebook viewer in a real JupyterLab in headless Chromium (Debian's chromium):
from Shift+Enter on ``v.pose(...)`` to the new picture in the page, for boneviewer's Viewer
(CesiumMan, 640x480) and for a jupyter_rfb widget that draws nothing (the floor: the kernel
and the websocket); and the frames a second a mouse drag gets.

    PYTHONPATH=. python scripts/bench_notebook.py [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from jupyter_browser import IMAGE, WATCH_IMAGE, JupyterLab, launch_chromium, open_notebook, run_cell, write_notebook  # noqa: E402
from samples import CESIUM_MAN  # noqa: E402

BLANK = """import numpy as np
from jupyter_rfb import RemoteFrameBuffer
class Blank(RemoteFrameBuffer):
    frame = np.zeros((480, 640, 3), np.uint8)
    def get_frame(self):
        return self.frame
b = Blank(css_width='640px', css_height='480px')
b"""
CELLS = [
    f"from viewer.notebook import Viewer\nv = Viewer({str(CESIUM_MAN)!r}, size=(640, 480))\nv",
    "angle = 0.0",
    "angle += 0.3\nimport math\nv.pose({'Skeleton_arm_joint_L__4_': {'rotation_quaternion': [0, 0, math.sin(angle), math.cos(angle)]}})",
    BLANK,
    "b.frame = b.frame + 1\nb.request_draw()",
]


def latency(page, cell: int, image_index: int, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        page.evaluate(f"(i) => {{ const img = document.querySelectorAll('{IMAGE}')[i]; window.__frames = [];"
                      " new MutationObserver(() => window.__frames.push(performance.now()))"
                      ".observe(img, {attributes: true, attributeFilter: ['src']}); }", image_index)
        page.locator(".jp-Notebook .jp-Cell").nth(cell).locator(".jp-InputPrompt").click()
        start = page.evaluate("performance.now()")
        page.keyboard.press("Shift+Enter")
        page.wait_for_function("() => window.__frames.length > 0", timeout=30_000)
        times.append(page.evaluate("window.__frames[0]") - start)
        time.sleep(0.5)   # past jupyter_rfb's lossless redraw
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        write_notebook(Path(folder) / "bench.ipynb", CELLS)
        lab = JupyterLab(Path(folder))
        try:
            with sync_playwright() as playwright:
                browser = launch_chromium(playwright)
                page = browser.new_page(viewport={"width": 1100, "height": 1400})
                open_notebook(page, lab, "bench.ipynb")
                run_cell(page, 0)
                page.wait_for_function(f"() => document.querySelector('{IMAGE}')?.naturalWidth > 1", timeout=90_000)
                run_cell(page, 1)
                time.sleep(1.0)
                viewer = latency(page, 2, 0, args.runs)
                run_cell(page, 3)
                page.wait_for_function(f"() => document.querySelectorAll('{IMAGE}').length > 1 && "
                                       f"document.querySelectorAll('{IMAGE}')[1].naturalWidth > 1", timeout=60_000)
                time.sleep(1.0)
                blank = latency(page, 4, 1, args.runs)
                # A drag: Playwright's mouse moves for 2 s; frames the page shows a second.
                image = page.locator(IMAGE).first
                image.scroll_into_view_if_needed()
                box = image.bounding_box()
                x, y = box["x"] + 100, box["y"] + box["height"] - 60
                page.evaluate(WATCH_IMAGE, IMAGE)
                page.mouse.move(x, y)
                page.mouse.down()
                start = time.monotonic()
                step = 0
                while time.monotonic() - start < 2.0:
                    step += 1
                    page.mouse.move(x + (step % 200) * 2, y)
                page.mouse.up()
                frames = page.evaluate("window.__frames")
                drag = [t for t in frames if t - frames[0] < 2000.0] if frames else []
                browser.close()
        finally:
            lab.close()
    print(f"v.pose(...) Shift+Enter -> new picture, CesiumMan 640x480: median {statistics.median(viewer):.0f} ms "
          f"(min {min(viewer):.0f}, max {max(viewer):.0f}, {len(viewer)} runs)")
    print(f"a jupyter_rfb widget that draws nothing, same path:           median {statistics.median(blank):.0f} ms "
          f"(min {min(blank):.0f}, max {max(blank):.0f})")
    print(f"boneviewer's part: about {statistics.median(viewer) - statistics.median(blank):.0f} ms")
    print(f"mouse drag: {len(drag) / 2.0:.1f} frames/s shown in the page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
