"""A real JupyterLab on loopback driven in headless Chromium (Debian's, through Playwright), as a
user drives it: tests/test_notebook_browser.py and scripts/bench_notebook.py share it."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The widget's picture: jupyter_rfb draws into an <img class="renderview-view"> (a new blob URL a frame).
IMAGE = ".renderview-view"
READ_IMAGE = """(selector) => {
    const img = document.querySelector(selector);
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    return canvas.toDataURL('image/png');   // lossless, and a short string (not 10^6 numbers)
}"""
# Record when the picture's src changes (performance.now(), the page's clock).
WATCH_IMAGE = """(selector) => {
    const img = document.querySelector(selector);
    window.__frames = [];
    new MutationObserver(() => window.__frames.push(performance.now()))
        .observe(img, {attributes: true, attributeFilter: ['src']});
}"""


def read_image(page) -> "np.ndarray":
    """The widget's picture as the page shows it, (H, W, 4) uint8."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    url = page.evaluate(READ_IMAGE, IMAGE)
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGBA"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_notebook(path: Path, cells: list[str]) -> None:
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"cell{i}", "metadata": {}, "outputs": [],
                   "source": source} for i, source in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}))


class JupyterLab:
    """``jupyter lab`` serving ``folder`` on a free loopback port, with a token; the kernel sees
    this checkout on its PYTHONPATH."""

    def __init__(self, folder: Path):
        self.folder, self.port, self.token = Path(folder), free_port(), secrets.token_hex(16)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               "JUPYTER_CONFIG_DIR": str(self.folder / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(self.folder / ".run")}
        self.log = open(self.folder / "jupyter.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", f"--IdentityProvider.token={self.token}",
             f"--port={self.port}", "--ip=127.0.0.1", f"--ServerApp.root_dir={self.folder}",
             "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            cwd=self.folder, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=2)
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise RuntimeError(f"jupyter lab did not start: {(self.folder / 'jupyter.log').read_text()}")
                time.sleep(0.3)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?token={self.token}"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])


def open_notebook(page, lab: JupyterLab, name: str) -> None:
    page.goto(lab.notebook_url(name))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    # The kernel is up when the status bar says so (a Shift+Enter before that is lost).
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)


def run_cell(page, index: int) -> None:
    """Select cell ``index`` (a click on its prompt, not into its text) and Shift+Enter it."""
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputPrompt").click()
    page.keyboard.press("Shift+Enter")
