"""`boneviewer check --compare A B` (issue 44, item 4): a file against its own export differs by
about nothing; against a copy with one bone's clip turned, the turned bone leads, by the angle
it was turned; `--report OUT.html` plots it (opened in headless Chromium: the turned bone's curve
rises as it was turned); bad input is one line and exit 2, and writes no report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from samples import CESIUM_MAN, DATA_DIR
from viewer.checks.compare import compare_scenes
from viewer.editing.export import save_model
from viewer.loaders import load_model

WAVE = DATA_DIR / "bvh" / "wave_hello.bvh"
TURNED = "leg_joint_L_2"  # a CesiumMan bone with a rotation channel


def compared(cli, a, b) -> dict:
    result = cli("check", "--compare", a, b, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("model, suffix", [(CESIUM_MAN, ".gltf"), (WAVE, ".glb")])
def test_a_file_against_its_own_export_differs_by_about_nothing(cli, tmp_path, model, suffix):
    exported = save_model(load_model(model), tmp_path / f"exported{suffix}")
    report = compared(cli, model, exported)
    assert len(report["bones_in_common"]) >= 19 and not report["only_in_a"]
    (clip,) = report["clips"]
    assert clip["clip_a"] == clip["clip_b"] and clip["frames"] > 30
    assert max(b["rotation_max"] for b in clip["bones"]) < 0.01  # degrees
    assert max(b["position_max"] for b in clip["bones"]) < 1e-4  # of the model's size


def about_x(degrees) -> np.ndarray:
    half = np.radians(degrees) / 2
    return np.array([np.sin(half), 0.0, 0.0, np.cos(half)])


def quaternion_product(a, b) -> np.ndarray:
    ax, ay, az, aw = a
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz], axis=-1)


def test_a_turned_bone_is_named_first_with_its_angle(cli, tmp_path):
    scene = load_model(CESIUM_MAN)
    bone = scene.require_bone(TURNED, "test")
    (channel,) = [c for c in scene.animations[0].channels if c.node is bone.get_pose_target() and c.path == "rotation"]
    channel.values[:] = quaternion_product(about_x(20.0), channel.values)
    modified = save_model(scene, tmp_path / "turned.glb")
    report = compared(cli, CESIUM_MAN, modified)
    bones = report["clips"][0]["bones"]
    assert bones[0]["bone"] == TURNED
    assert bones[0]["rotation_max"] == pytest.approx(20.0, abs=0.05)
    assert bones[0]["rotation_mean"] == pytest.approx(20.0, abs=0.05)
    assert all(b["rotation_max"] < 0.01 for b in bones[1:])  # its children moved, but did not turn
    text = cli("check", "--compare", CESIUM_MAN, modified)
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[3].split()[0] == TURNED and float(lines[3].split()[1]) == pytest.approx(20.0, abs=0.05)


def test_compare_scenes_pairs_clips_by_name_then_order():
    a, b = load_model(CESIUM_MAN), load_model(CESIUM_MAN)
    b.animations[0].name = "renamed"
    result = compare_scenes(a, b)
    assert [(c.clip_a, c.clip_b) for c in result.clips] == [("animation0", "renamed")]
    assert max(d.rotation_max for d in result.clips[0].bones) < 1e-6


def ramped(tmp_path, degrees: float):
    """CesiumMan with TURNED's rotation keys turned about x by 0 at the first key up to
    ``degrees`` at the last: a difference that grows over the clip."""
    scene = load_model(CESIUM_MAN)
    bone = scene.require_bone(TURNED, "test")
    (channel,) = [c for c in scene.animations[0].channels if c.node is bone.get_pose_target() and c.path == "rotation"]
    ramp = np.asarray(channel.times, np.float64) / float(channel.times[-1]) * degrees
    channel.values[:] = np.stack([quaternion_product(about_x(a), v) for a, v in zip(ramp, channel.values)])
    return save_model(scene, tmp_path / "ramped.glb")


# The report's plot, read in the page: where the first colour's line (the bone that differs most,
# #1f77b4) lies in the upper panel (the rotation differences), the legend's column left out.
BLUE_LINE = """() => {
  const img = document.querySelector('figure.plot img');
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
  const context = canvas.getContext('2d');
  context.drawImage(img, 0, 0);
  const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
  const points = [];
  for (let y = 0; y < canvas.height / 2; y++)
    for (let x = 0; x < canvas.width * 0.8; x++) {
      const i = 4 * (y * canvas.width + x);
      if (Math.abs(data[i] - 0x1f) + Math.abs(data[i + 1] - 0x77) + Math.abs(data[i + 2] - 0xb4) < 40) points.push([x, y]);
    }
  return points;
}"""


def test_the_report_plots_the_turned_bone_first_rising_as_it_was_turned(cli, tmp_path, chromium_page):
    modified = ramped(tmp_path, 30.0)
    report = tmp_path / "compare.html"
    result = cli("check", "--compare", CESIUM_MAN, modified, "--report", report)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == f"report: {report}"
    page_text = report.read_text()
    assert "http://" not in page_text and "https://" not in page_text  # no network: the plot is in the page
    page = chromium_page
    page.goto(report.as_uri(), wait_until="load")
    plots = page.evaluate("Array.from(document.querySelectorAll('figure.plot img')).map(i => "
                          "[i.complete, i.naturalWidth, i.getAttribute('data-bones'), "
                          "i.getAttribute('data-rotation-bones'), i.getAttribute('data-position-bones'), "
                          "i.parentElement.querySelector('figcaption').textContent])")
    first_row = page.evaluate("document.querySelector('table.bones tbody tr td').textContent")
    line = np.array(page.evaluate(BLUE_LINE))
    ((complete, width, bones, by_rotation, by_position, caption),) = plots  # one clip: one plot
    assert complete and width == 680
    assert bones.split(", ")[0] == TURNED and first_row == TURNED
    # The figure's lower panel plots the bones that moved most (the turned leg's children: the
    # turned bone itself stays where it was): the caption and data-bones name them too.
    clip = compare_scenes(load_model(CESIUM_MAN), load_model(modified)).clips[0]
    expected = {key: [b.bone for b in sorted(clip.bones, key=lambda b: -getattr(b, f"{key}_max"))][:2]
                for key in ("rotation", "position")}
    assert by_rotation.split(", ")[0] == TURNED
    assert by_position.split(", ")[:2] == expected["position"] and TURNED not in expected["position"]
    assert set(by_rotation.split(", ") + by_position.split(", ")) == set(bones.split(", "))
    assert caption.index("rotation: " + by_rotation) < caption.index("position: " + by_position)
    # The turned bone's curve rises from about 0 to 30 degrees: the left end of its line is far
    # lower in the picture (a larger y) than its right end.
    assert len(line) > 200
    left = line[line[:, 0] <= line[:, 0].min() + 20, 1].mean()
    right = line[line[:, 0] >= line[:, 0].max() - 20, 1].mean()
    assert left - right > 100, (left, right)


def test_the_report_of_a_file_against_itself_plots_no_rotation(cli, tmp_path):
    """The same plot with nothing turned: no bone differs, so no line in the first colour is
    drawn: the rising line above comes from the difference."""
    report = tmp_path / "same.html"
    assert cli("check", "--compare", CESIUM_MAN, CESIUM_MAN, "--report", report).returncode == 0
    import base64
    import io
    import re

    from PIL import Image

    (data,) = re.findall(r'src="data:image/png;base64,([^"]+)"', report.read_text())
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        pixels = np.asarray(image.convert("RGB")).astype(int)
    upper = pixels[: pixels.shape[0] // 2, : int(pixels.shape[1] * 0.8)]
    blue = np.abs(upper - [0x1F, 0x77, 0xB4]).sum(axis=2) < 40
    text = report.read_text()
    assert 'data-rotation-bones=""' in text and "rotation: no bone differs" in text  # none ranked
    assert blue.sum() == 0  # nothing plotted, so nothing rises


@pytest.mark.parametrize("words, said", [
    (("{cesium}", "{cesium}", "--report", "{tmp}/out.txt"), "must end in .html"),
    (("{cesium}", "{cesium}", "--report", "{tmp}/missing/out.html"), "does not exist"),
    (("{cesium}", "{wave}", "--report", "{tmp}/out.html"), "share no bone names"),
])
def test_a_bad_report_is_one_line_and_writes_nothing(cli, tmp_path, words, said):
    words = [w.format(cesium=CESIUM_MAN, wave=WAVE, tmp=tmp_path) for w in words]
    result = cli("check", "--compare", *words)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # no report, no temporary file left


def test_report_goes_with_compare(cli, tmp_path):
    result = cli("check", CESIUM_MAN, "--report", tmp_path / "out.html")
    assert result.returncode == 2 and "--report goes with --compare" in result.stderr
    assert not (tmp_path / "out.html").exists()


@pytest.mark.parametrize("words, said", [
    (("{cesium}", "{wave}"), "share no bone names"),
    (("{cesium}",), "takes two model files"),
    (("{cesium}", "{cesium}", "{wave}"), "takes two model files"),
    (("{cesium}", "{wave}", "--strict"), "leave out --strict"),
    (("{cesium}", "{bad}"), "not valid glTF"),
])
def test_bad_input_is_one_line(cli, tmp_path, words, said):
    bad = tmp_path / "bad.glb"
    bad.write_text("not a model")
    words = [w.format(cesium=CESIUM_MAN, wave=WAVE, bad=bad) for w in words]
    result = cli("check", "--compare", *words)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in result.stderr


def test_the_pages_report_command_draws_the_pages_picture(tmp_path):
    """docs/motion-checks.md: the --report command shown, run from the checkout, writes the plot
    the picture under it shows (docs/images/compare-report.png, scripts/render_compare_picture.py):
    the same files, the same clip, the same curves."""
    import importlib.util
    import io
    import re
    from pathlib import Path

    from PIL import Image

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("render_compare_picture", root / "scripts" / "render_compare_picture.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = (root / "docs" / "motion-checks.md").read_text()
    section = page[page.index("`--report OUT.html`"):]
    (command,) = [line for line in re.findall(r"```sh\n(.*?)```", section, re.S)[0].splitlines() if "--report" in line]
    assert command == script.COMMAND
    assert "![check --compare --report" in section[section.index(command):][:400]  # the picture is under it
    drawn = np.asarray(Image.open(io.BytesIO(script.report_picture(command, tmp_path))).convert("RGB"), float)
    shown = np.asarray(Image.open(root / "docs" / "images" / "compare-report.png").convert("RGB"), float)
    assert drawn.shape == shown.shape
    # matplotlib's text and antialiasing may move by a pixel between versions: nearly every pixel alike
    assert (np.abs(drawn - shown).max(axis=2) > 40).mean() < 0.01
