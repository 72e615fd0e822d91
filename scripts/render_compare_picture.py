#!/usr/bin/env python3
"""Render the docs' comparison report picture: docs/images/compare-report.png.

    .venv/bin/python scripts/render_compare_picture.py

CesiumMan against a copy of it whose left knee (leg_joint_L_2) turns about x by 0 degrees at
its first key up to 30 at its last, as tests/test_check_compare.py makes it; the picture is the
plot `boneviewer check --compare A B --report OUT.html` puts in the page.
"""

from __future__ import annotations

import base64
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viewer.editing.export import save_model  # noqa: E402
from viewer.loaders import load_model  # noqa: E402

CESIUM_MAN = ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"
PICTURE = ROOT / "docs" / "images" / "compare-report.png"
TURNED = "leg_joint_L_2"


def turned_about_x(quaternions: np.ndarray, degrees: np.ndarray) -> np.ndarray:
    """Each (x, y, z, w) key turned about x by its angle first (about_x(angle) * key)."""
    half = np.radians(degrees) / 2
    ax, aw = np.sin(half), np.cos(half)
    x, y, z, w = quaternions.T
    return np.stack([aw * x + ax * w, aw * y - ax * z, aw * z + ax * y, aw * w - ax * x], axis=-1)


def main() -> None:
    scene = load_model(CESIUM_MAN)
    target = scene.require_bone(TURNED, "the picture").get_pose_target()
    (channel,) = [c for c in scene.animations[0].channels if c.node is target and c.path == "rotation"]
    times = np.asarray(channel.times, np.float64)
    channel.values[:] = turned_about_x(np.asarray(channel.values, np.float64), times / times[-1] * 30.0)
    with tempfile.TemporaryDirectory() as temp:
        modified = save_model(scene, Path(temp) / "CesiumMan-knee.glb")
        report = Path(temp) / "compare.html"
        subprocess.run([sys.executable, "-m", "viewer", "check", "--compare", str(CESIUM_MAN), str(modified),
                        "--report", str(report)], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        (data,) = re.findall(r'src="data:image/png;base64,([^"]+)"', report.read_text())
    PICTURE.write_bytes(base64.b64decode(data))
    print(f"wrote {PICTURE}")


if __name__ == "__main__":
    main()
