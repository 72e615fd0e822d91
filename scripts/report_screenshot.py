"""The docs' picture of a batch report: the samples and a broken file rendered with
`boneviewer batch`, index.html opened in headless Chromium (Debian's chromium package driven
by playwright, no browser download) and captured to docs/images/batch-report.png.

    .venv/bin/python scripts/report_screenshot.py [--keep REPORT]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests" / "data" / "gltf-samples"
PICTURE = ROOT / "docs" / "images" / "batch-report.png"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="also copy the report to this folder")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as temp:
        library, report = Path(temp) / "library", Path(temp) / "report"
        shutil.copytree(SAMPLES, library / "samples")
        (library / "broken").mkdir()
        (library / "broken" / "truncated.glb").write_bytes((SAMPLES / "Fox" / "Fox.glb").read_bytes()[:5000])
        subprocess.run([sys.executable, "-m", "viewer.cli", "batch", str(library), "--out", str(report),
                        "--size", "160x160", "--gif-seconds", "1"], cwd=ROOT, check=False)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1000, "height": 800})
            page.goto((report / "index.html").as_uri(), wait_until="load")
            page.click("th:has-text('Warnings')")
            page.click("th:has-text('Warnings')")  # most warnings first
            page.screenshot(path=str(PICTURE), full_page=True)
            browser.close()
        if args.keep:
            shutil.copytree(report, args.keep, dirs_exist_ok=True)
    print(f"wrote {PICTURE}")


if __name__ == "__main__":
    main()
