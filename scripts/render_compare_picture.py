#!/usr/bin/env python3
"""Render the docs' comparison report picture: docs/images/compare-report.png.

    .venv/bin/python scripts/render_compare_picture.py          # the picture
    .venv/bin/python scripts/render_compare_picture.py --copy   # the turned copy first, then the picture

The picture is the plot that the command docs/motion-checks.md shows (COMMAND, run from the
checkout) puts in its report: CesiumMan against tests/data/compare/CesiumMan-knee-turned.glb, a
copy of it whose left knee (leg_joint_L_2) turns about x by 0 degrees at its first key up to 30
at its last, as tests/test_check_compare.py makes it (its texture left out: a comparison reads
the bones). ``--copy`` writes that copy again.
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
TURNED_COPY = ROOT / "tests" / "data" / "compare" / "CesiumMan-knee-turned.glb"
PICTURE = ROOT / "docs" / "images" / "compare-report.png"
TURNED = "leg_joint_L_2"
# the docs' command (docs/motion-checks.md; tests/test_check_compare.py checks the page shows it)
COMMAND = (f"boneviewer check --compare {CESIUM_MAN.relative_to(ROOT)} {TURNED_COPY.relative_to(ROOT)} "
           "--report compare.html")


def turned_about_x(quaternions: np.ndarray, degrees: np.ndarray) -> np.ndarray:
    """Each (x, y, z, w) key turned about x by its angle first (about_x(angle) * key)."""
    half = np.radians(degrees) / 2
    ax, aw = np.sin(half), np.cos(half)
    x, y, z, w = quaternions.T
    return np.stack([aw * x + ax * w, aw * y - ax * z, aw * z + ax * y, aw * w - ax * x], axis=-1)


def write_turned_copy() -> None:
    scene = load_model(CESIUM_MAN)
    for mesh in scene.meshes:  # no texture: the comparison reads the bones, and the file is half the size
        for submesh in mesh.submeshes:
            submesh.pbr.base_color_texture, submesh.image_data, submesh.texture_data = None, None, {}
    target = scene.require_bone(TURNED, "the picture").get_pose_target()
    (channel,) = [c for c in scene.animations[0].channels if c.node is target and c.path == "rotation"]
    times = np.asarray(channel.times, np.float64)
    channel.values[:] = turned_about_x(np.asarray(channel.values, np.float64), times / times[-1] * 30.0)
    save_model(scene, TURNED_COPY, force=True)
    print(f"wrote {TURNED_COPY}")


def report_picture(command: str, folder: Path) -> bytes:
    """The plot in the report ``command`` (``boneviewer check ... --report NAME.html``) writes, run
    from the checkout with its report in ``folder``."""
    words = command.split()
    assert words[:2] == ["boneviewer", "check"] and words[-2] == "--report", command
    report = folder / words[-1]
    subprocess.run([sys.executable, "-m", "viewer", *words[1:-1], str(report)], check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL)
    (data,) = re.findall(r'src="data:image/png;base64,([^"]+)"', report.read_text())
    return base64.b64decode(data)


def main() -> None:
    if "--copy" in sys.argv[1:]:
        write_turned_copy()
    with tempfile.TemporaryDirectory() as temp:
        PICTURE.write_bytes(report_picture(COMMAND, Path(temp)))
    print(f"wrote {PICTURE}")


if __name__ == "__main__":
    main()
