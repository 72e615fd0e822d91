"""The look's options everywhere (issue 27): --environment, --environment-rotation,
--tone-mapping and --exposure on render, view, serve, batch and synth, mapped into the
RenderOptions each builds; a script's app.environment and the rest; the panel's Display
section; and every bad environment file refused with one line naming it, exit 2, fast and
before any GL work."""

from __future__ import annotations

import copy
import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from viewer.errors import ViewerError

ROOT = Path(__file__).resolve().parents[1]
STUDIO_HDR = ROOT.parent / "shared" / "pbr" / "studio.hdr"
COMMANDS = ("render", "view", "serve", "batch", "synth")


# --- .hdr files made here ------------------------------------------------------------------------
def write_rle_hdr(path: Path, pixels: np.ndarray) -> Path:
    """A run-length encoded Radiance file of (H, W, 3) float pixels (literal runs only), as
    Radiance's own writer lays it out: '-Y H +X W', each scanline its marker then 4 channels."""
    height, width, _ = pixels.shape
    peak = pixels.max(axis=2)
    exponent = np.where(peak > 1e-32, np.ceil(np.log2(np.maximum(peak, 1e-32))), -128).astype(int)
    mantissa = np.where(peak[..., None] > 1e-32, pixels / np.exp2(exponent)[..., None] * 256.0, 0.0)
    rgbe = np.concatenate([np.clip(mantissa, 0, 255).astype(np.uint8),
                           np.clip(exponent + 128, 0, 255).astype(np.uint8)[..., None]], axis=2)
    body = bytearray()
    for row in rgbe:
        body += bytes((2, 2, width >> 8, width & 0xFF))
        for channel in range(4):
            values = row[:, channel].tobytes()
            for start in range(0, width, 128):
                chunk = values[start:start + 128]
                body += bytes((len(chunk),)) + chunk
    path.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n" + f"-Y {height} +X {width}\n".encode() + bytes(body))
    return path


@pytest.fixture(scope="module")
def good_hdr(tmp_path_factory) -> Path:
    """A small sound environment: a warm sky over a dark floor (64x32)."""
    sky = np.zeros((32, 64, 3), np.float32)
    sky[:16] = (2.0, 1.6, 1.2)
    sky[16:] = (0.1, 0.1, 0.12)
    return write_rle_hdr(tmp_path_factory.mktemp("hdr") / "warm.hdr", sky)


def bad_files(folder: Path, good: Path) -> dict:
    """{kind: path} of every bad environment the issue names, and a few more."""
    data = good.read_bytes()
    picture = folder / "picture.png"
    Image.new("RGB", (4, 4)).save(picture)
    header = b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n"
    files = {
        "missing": folder / "missing.hdr",
        "folder": folder / "a-folder.hdr",
        "not-hdr-suffix": picture,
        "not-radiance": folder / "notes.hdr",
        "truncated-pixels": folder / "cut.hdr",
        "truncated-header": folder / "cut-header.hdr",
        "absurd-size": folder / "absurd.hdr",
        "absurd-digits": folder / "digits.hdr",
        "other-orientation": folder / "turned.hdr",
        "xyze": folder / "xyze.hdr",
        "empty": folder / "empty.hdr",
    }
    files["folder"].mkdir(exist_ok=True)
    files["not-radiance"].write_text("these are notes, not an image\n")
    files["truncated-pixels"].write_bytes(data[: len(data) * 2 // 3])
    files["truncated-header"].write_bytes(data[:20])
    files["absurd-size"].write_bytes(header + b"-Y 100000 +X 200000\n" + bytes(64))
    files["absurd-digits"].write_bytes(header + b"-Y 999999999999 +X 999999999999\n")
    files["other-orientation"].write_bytes(header + b"+X 64 -Y 32\n" + bytes(64))
    files["xyze"].write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_xyze\n\n-Y 32 +X 64\n" + bytes(8192))
    files["empty"].write_bytes(b"")
    return files


BAD_KINDS = ("missing", "folder", "not-hdr-suffix", "not-radiance", "truncated-pixels", "truncated-header",
             "absurd-size", "absurd-digits", "other-orientation", "xyze", "empty")


def command_args(command: str, tmp_path: Path, environment: Path) -> list:
    """The command's arguments, all sound but --environment (a model folder for batch and synth)."""
    library = tmp_path / "library"
    library.mkdir(exist_ok=True)
    shutil.copy(ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb", library)
    return {"render": ["render", "--out", tmp_path / "out.png", "--size", "32x32"],
            "view": ["view", "--frames", "1", "--screenshot", tmp_path / "shot.png", "--size", "32x32"],
            "serve": ["serve", "--listen", "0"],
            "batch": ["batch", library, "--out", tmp_path / "report", "--workers", "1"],
            "synth": ["synth", library, "--out", tmp_path / "synth", "--count", "1", "--workers", "1"],
            }[command] + ["--environment", environment]


@pytest.fixture
def no_gl(monkeypatch):
    """GL must not start: every way a context is made fails the test."""
    import moderngl

    def refuse(*args, **kwargs):
        raise AssertionError("a GL context was made before the bad environment was refused")

    monkeypatch.setattr(moderngl, "create_standalone_context", refuse)
    monkeypatch.setattr(moderngl, "create_context", refuse)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_a_bad_environment_is_one_line_naming_it_exit_2_before_gl(kind, tmp_path, good_hdr, capsys, no_gl):
    """In the process (so no GL can start unseen, and the time is the command's, not Python's
    start): exit 2, exactly one line on stderr, naming the file, in well under a second."""
    from viewer.cli import main

    path = bad_files(tmp_path, good_hdr)[kind]
    main(["render", "--out", str(tmp_path / "warm.png"), "--environment", str(tmp_path / "warm-up.hdr")])
    capsys.readouterr()  # the first call imported the command's modules: what is timed is the command's work
    started = time.perf_counter()
    status = main([str(a) for a in command_args("render", tmp_path, path)])
    elapsed = time.perf_counter() - started
    err = capsys.readouterr().err
    assert status == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and lines[0].startswith("boneviewer: error: --environment "), err
    assert elapsed < 1.0, elapsed
    assert not (tmp_path / "out.png").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_refuses_a_bad_environment_the_same_way(command, tmp_path, good_hdr, cli):
    """As a user runs it: each command, a truncated file, one line naming it, exit 2."""
    path = bad_files(tmp_path, good_hdr)["truncated-pixels"]
    started = time.perf_counter()
    result = cli(*command_args(command, tmp_path, path))
    elapsed = time.perf_counter() - started
    lines = result.stderr.splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and str(path) in lines[0] and "truncated" in lines[0], result.stderr
    assert result.stdout == ""  # serve printed no 'listening' line: nothing was started
    assert elapsed < 10.0, elapsed  # Python's own start included; the check itself is timed above
    for made in ("out.png", "shot.png", "report", "synth"):
        assert not (tmp_path / made).exists(), made


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_the_check_itself_is_fast_and_names_the_file(kind, tmp_path, good_hdr):
    from viewer.look import environment

    path = bad_files(tmp_path, good_hdr)[kind]
    started = time.perf_counter()
    with pytest.raises(ViewerError) as caught:
        environment(str(path), "--environment")
    assert time.perf_counter() - started < 0.2
    assert str(caught.value).startswith(f"--environment {path}") and "\n" not in str(caught.value)


def test_sound_files_pass_the_check_and_are_named_by_their_absolute_path(good_hdr, monkeypatch):
    from viewer.hdr import check_hdr, read_hdr_header
    from viewer.look import environment

    assert read_hdr_header(good_hdr) == check_hdr(good_hdr) == (64, 32)
    if STUDIO_HDR.exists():
        assert check_hdr(STUDIO_HDR) == (512, 256)
    monkeypatch.chdir(good_hdr.parent)
    assert environment("warm.hdr") == str(good_hdr)
    assert environment(" Studio ") == "studio" and environment("NONE") == "none"
    flat = good_hdr.parent / "flat.hdr"  # flat RGBE scanlines (no run-length marker) are read too
    flat.write_bytes(b"#?RGBE\n\n-Y 2 +X 3\n" + bytes(range(24)))
    assert check_hdr(flat) == (3, 2)
    flat.write_bytes(b"#?RGBE\n\n-Y 2 +X 3\n" + bytes(range(23)))
    with pytest.raises(ViewerError, match="truncated"):
        check_hdr(flat)


def test_option_values_are_checked_by_argparse(cli):
    for args, why in ((["--exposure", "0"], "must be more than 0"), (["--exposure", "-1"], "must be more than 0"),
                      (["--exposure", "nan"], "finite"), (["--exposure", "1e30"], "finite"),
                      (["--environment-rotation", "inf"], "finite"), (["--tone-mapping", "filmic"], "khr-neutral"),
                      (["--environment-filter", "box"], "mipmaps, ggx")):
        result = cli("render", "--out", "x.png", *args)
        assert result.returncode == 2 and why in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr


# --- the options reach the RenderOptions each command builds ------------------------------------
LOOK = {"environment_rotation": 75.0, "tone_mapping": "aces", "exposure": 1.5}
LOOK_ARGS = ["--environment-rotation", "75", "--tone-mapping", "aces", "--exposure", "1.5"]


@pytest.fixture
def drawn(monkeypatch):
    """Every RenderOptions the headless renderer is given, in this process."""
    from viewer.render.headless import HeadlessRenderer

    seen = []
    original = HeadlessRenderer.render

    def render(self, scene, camera, options, *args, **kwargs):
        seen.append(copy.copy(options))  # as it is now: a sequence changes one object frame by frame
        return original(self, scene, camera, options, *args, **kwargs)

    monkeypatch.setattr(HeadlessRenderer, "render", render)
    return seen


# The shadows' settings are in the look too (issue 45): off in render, on in view.
NO_SHADOWS = {"shadows": False, "shadow_intensity": 0.6, "shadow_softness": 0.3, "key_light": (0.45, 0.8, 0.6)}


def looks(options) -> list:
    return [o.look() for o in options]


def test_render_maps_the_options(tmp_path, good_hdr, drawn, capsys):
    from viewer.cli import main

    assert main(["render", "--out", str(tmp_path / "a.png"), "--size", "32x32", "--environment", str(good_hdr),
                 *LOOK_ARGS]) == 0
    assert looks(drawn) == [{"environment": str(good_hdr), "show_environment": False, "environment_filter": "mipmaps", **LOOK,
                             **NO_SHADOWS}]
    drawn.clear()
    assert main(["render", "--out", str(tmp_path / "b.png"), "--size", "32x32"]) == 0
    assert looks(drawn) == [{"environment": "studio", "environment_rotation": 0.0, "tone_mapping": "khr-neutral",
                             "exposure": 1.0, "show_environment": False, "environment_filter": "mipmaps", **NO_SHADOWS}]
    drawn.clear()
    assert main(["render", "--out", str(tmp_path / "c.png"), "--size", "32x32", "--environment", "none"]) == 0
    assert drawn[0].environment == "none"


def test_view_without_a_display_renders_with_the_options(tmp_path, good_hdr, drawn, monkeypatch, capsys):
    from viewer.cli import main

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["view", "--frames", "1", "--screenshot", str(tmp_path / "v.png"), "--size", "32x32",
                 "--environment", str(good_hdr), *LOOK_ARGS]) == 0
    assert looks(drawn) == [{"environment": str(good_hdr), "show_environment": False, "environment_filter": "mipmaps", **LOOK,
                             **NO_SHADOWS, "shadows": True}]  # the window's default, as it renders in its place


def test_the_environment_file_is_an_input_no_output_folder_replaces_it(tmp_path, good_hdr, cli):
    out = tmp_path / "data"
    target = out / "images" / "light.hdr"  # synth replaces OUT/images whole
    target.parent.mkdir(parents=True)
    shutil.copy(good_hdr, target)
    result = cli("synth", ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb", "--out", out,
                 "--count", "1", "--environment", target)
    assert result.returncode == 2 and f"which holds {target}, an --environment file" in result.stderr, result.stderr
    assert target.read_bytes() == good_hdr.read_bytes()


def test_batch_takes_the_look_and_a_changed_file_redoes_the_models(tmp_path, good_hdr, cli):
    library = tmp_path / "library"
    library.mkdir()
    shutil.copy(ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb", library)
    light = tmp_path / "light.hdr"
    shutil.copy(good_hdr, light)
    args = ["batch", library, "--out", tmp_path / "report", "--workers", "1", "--size", "32x32", "--gif-seconds",
            "0.2", "--environment", light, *LOOK_ARGS]
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    options = json.loads((tmp_path / "report" / "report.json").read_text())["options"]
    assert {k: options[k] for k in ("environment", *LOOK)} == {"environment": str(light), **LOOK}
    assert options["environment_sha256"] == __import__("hashlib").sha256(light.read_bytes()).hexdigest()
    again = cli(*args)
    assert "0 processed, 1 unchanged" in again.stdout, again.stdout
    data = bytearray(light.read_bytes())
    data[-1] ^= 1  # the same size and layout, one value changed
    light.write_bytes(bytes(data))
    changed = cli(*args)
    assert "1 processed, 0 unchanged" in changed.stdout, changed.stdout


def test_synth_draws_the_environment_its_rotation_and_exposure_per_image(tmp_path, good_hdr, cli):
    out = tmp_path / "synth"
    result = cli("synth", ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb", "--out", out,
                 "--count", "6", "--size", "48x48", "--workers", "1", "--environment", good_hdr, "--environment",
                 "studio", "--environment-rotation", "-30:30", "--exposure", "0.5:2", "--tone-mapping", "aces")
    assert result.returncode == 0, result.stderr
    annotations = json.loads((out / "annotations.json").read_text())
    info = annotations["info"]["ranges"]
    assert info["environments"] == ["warm.hdr", "studio"] and info["environment_rotation"] == [-30.0, 30.0]
    assert info["exposure"] == [0.5, 2.0] and info["tone_mapping"] == "aces"
    images = annotations["images"]
    assert {image["environment"] for image in images} <= {"warm.hdr", "studio"}
    assert all(-30.0 <= image["environment_rotation"] <= 30.0 for image in images)
    assert all(0.5 <= image["exposure"] <= 2.0 for image in images)
    assert len({image["exposure"] for image in images}) == len(images)  # drawn, not fixed


def test_synth_draws_are_a_function_of_seed_and_index_and_keep_the_earlier_draws():
    """The look is drawn after every earlier choice, so a draw's model, clip, camera, light and
    background are what they were before the look was added to the stream."""
    from viewer.synth.job import Catalogue, ClipEntry, ModelEntry, SynthOptions, draw

    catalogue = Catalogue((ModelEntry("/m.glb", "m.glb", (ClipEntry("walk", 0, None, 2.0),), 1, 1.7, 19),), 1.0)
    options = SynthOptions(environments=("studio", "none", "/x.hdr"), environment_rotation=(10.0, 20.0),
                           exposure=(1.0, 4.0))
    first = draw(3, 7, options, catalogue)
    assert first == draw(3, 7, options, catalogue)
    plain = draw(3, 7, SynthOptions(), catalogue)
    assert (first.model, first.clip, first.time, first.yaw, first.pitch, first.light, first.crop) == (
        plain.model, plain.clip, plain.time, plain.yaw, plain.pitch, plain.light, plain.crop)
    picks = [draw(3, i, options, catalogue) for i in range(200)]
    assert {p.environment for p in picks} == {0, 1, 2}
    assert all(10.0 <= p.environment_rotation <= 20.0 and 1.0 <= p.exposure <= 4.0 for p in picks)
    # evenly in stops: about as many draws below 2 (one stop up) as above
    assert 70 < sum(p.exposure < 2.0 for p in picks) < 130
    fixed = draw(3, 7, SynthOptions(exposure=(1.3, 1.3), environment_rotation=(45.0, 45.0)), catalogue)
    assert fixed.exposure == 1.3 and fixed.environment_rotation == 45.0


def test_serve_renders_what_render_renders_with_the_same_look(tmp_path, good_hdr, cli):
    import os
    import subprocess
    import sys

    from viewer.remote import connect

    args = ["--environment", str(good_hdr), *LOOK_ARGS]
    out = tmp_path / "render.png"
    result = cli("render", ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb", "--out", out,
                 "--size", "96x80", *args)
    assert result.returncode == 0, result.stderr
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DISPLAY", None)
    log = open(tmp_path / "serve.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "viewer.cli", "serve",
                                str(ROOT / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"),
                                "--listen", "0", "--token", "look", *args],
                               stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    try:
        line = process.stdout.readline().split()
        assert line[:2] == ["listening", "on"], (tmp_path / "serve.log").read_text()
        with connect(line[2], token="look") as client:
            assert np.array_equal(client.render((96, 80)), np.asarray(Image.open(out)))
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


# --- scripts: app.environment and the rest ---------------------------------------------------------
def test_the_script_app_reads_and_writes_the_look_with_checks(good_hdr, tmp_path):
    from viewer.character import build_character
    from viewer.editing.script_app import HeadlessApp

    app = HeadlessApp(build_character(), (64, 64), look={"exposure": 2.0, "tone_mapping": "none"})
    assert (app.environment, app.environment_rotation, app.exposure, app.tone_mapping, app.show_environment) == (
        "studio", 0.0, 2.0, "none", False)
    app.environment = str(good_hdr)
    app.environment_rotation = -90
    app.exposure = 0.25
    app.tone_mapping = "ACES"
    app.show_environment = True
    assert app.editor.display.look() == {"environment": str(good_hdr), "environment_rotation": -90.0,
                                         "tone_mapping": "aces", "exposure": 0.25, "show_environment": True,
                                         "environment_filter": "mipmaps", **NO_SHADOWS}
    bad = bad_files(tmp_path, good_hdr)
    for name, value, why in (("environment", str(bad["truncated-pixels"]), "truncated"),
                             ("environment", str(bad["missing"]), "no such file"),
                             ("environment", 3, "expected FILE.hdr"),
                             ("environment_rotation", float("nan"), "finite"), ("environment_rotation", "x", "number"),
                             ("exposure", 0, "more than 0"), ("exposure", -2.0, "more than 0"),
                             ("exposure", float("inf"), "finite"), ("exposure", True, "number"),
                             ("tone_mapping", "filmic", "khr-neutral, aces, none"), ("tone_mapping", None, "expected"),
                             ("show_environment", "yes", "True or False")):
        before = app.editor.display.look()
        with pytest.raises(ViewerError, match=why) as caught:
            setattr(app, name, value)
        assert str(caught.value).startswith(f"app.{name}")
        assert app.editor.display.look() == before


def test_render_script_draws_each_frame_with_the_look_its_update_left(tmp_path, drawn, capsys):
    from viewer.cli import main

    script = tmp_path / "look.py"
    script.write_text("def update(app, t, dt):\n    app.exposure = 1.0 + t\n    app.environment_rotation = 90 * t\n"
                      "    app.tone_mapping = 'none' if t > 0.5 else 'aces'\n")
    assert main(["render", "--script", str(script), "--frames", "0:1:0.5", "--out-dir", str(tmp_path / "frames"),
                 "--size", "32x32", "--exposure", "3", "--environment", "none"]) == 0
    assert [(o.exposure, o.environment_rotation, o.tone_mapping, o.environment) for o in drawn] == [
        (1.0, 0.0, "aces", "none"), (1.5, 45.0, "aces", "none"), (2.0, 90.0, "none", "none")]


def test_render_image_and_run_viewer_take_the_look(good_hdr, drawn):
    from viewer.app import render_image, run_viewer

    image = render_image(size=(32, 32), environment=str(good_hdr), exposure=2.0, tone_mapping="none")
    assert image.shape == (32, 32, 4)
    assert looks(drawn)[0] == {"environment": str(good_hdr), "environment_rotation": 0.0, "tone_mapping": "none",
                               "exposure": 2.0, "show_environment": False, "environment_filter": "mipmaps", **NO_SHADOWS}
    with pytest.raises(ViewerError, match="exposure: must be more than 0"):
        render_image(exposure=0)
    with pytest.raises(ViewerError, match="brightness: not a setting of the look"):
        run_viewer(brightness=2)


# --- the panel's Display section (headless, as the other panel tests) ------------------------------
def type_into(session, label: str, text: str) -> None:
    """Click a text field, select what is there, type ``text``."""
    from imgui_bundle import imgui
    from panel_driver import click

    click(session, label)
    io = imgui.get_io()
    io.add_key_event(imgui.Key.mod_ctrl, True)
    io.add_key_event(imgui.Key.a, True)
    session.run()
    io.add_key_event(imgui.Key.a, False)
    io.add_key_event(imgui.Key.mod_ctrl, False)
    session.run()
    for character in text:
        io.add_input_character(ord(character))
    session.run(2)


def open_look(session) -> None:
    """Unfold Display's "Light and tone mapping" (folded by default) and fold the sections below."""
    from panel_driver import click

    click(session, "Light and tone mapping")
    for section in ("Bones", "Selected bone"):
        click(session, section)
    session.run()


def test_the_look_folds_in_the_display_section(panel_session):
    session = panel_session
    assert "Light and tone mapping" in session.panel.rects and "exposure" not in session.panel.rects
    open_look(session)
    for label in ("Studio light", "Key light only", "environment file", "Load .hdr", "environment turn", "exposure",
                  "tone mapping", "reflections", "Show environment"):
        assert label in session.panel.rects, label


def test_panel_environment_choices_and_a_bad_file_in_the_status_line(panel_session, good_hdr, tmp_path):
    from panel_driver import click

    session, display = panel_session, panel_session.editor.display
    open_look(session)
    click(session, "Key light only", near_left=True)
    assert display.environment == "none" and session.editor.status.text == "environment: none"
    click(session, "Studio light", near_left=True)
    assert display.environment == "studio"
    bad = bad_files(tmp_path, good_hdr)["truncated-pixels"]
    type_into(session, "environment file", str(bad))
    assert session.panel.environment_path == str(bad)
    click(session, "Load .hdr")
    status = session.editor.status
    assert status.is_error and str(bad) in status.text and "truncated" in status.text
    assert display.environment == "studio"      # the light is as it was
    type_into(session, "environment file", str(good_hdr))
    click(session, "Load .hdr")
    assert display.environment == str(good_hdr) and not session.editor.status.is_error
    session.run()
    assert "environment shown" in session.panel.rects   # the file's name beside the choices


def test_panel_rotation_exposure_tone_mapping_and_background(panel_session):
    from imgui_bundle import imgui
    from panel_driver import centre, click, click_at, move

    session, display = panel_session, panel_session.editor.display
    open_look(session)
    x0, y0, x1, y1 = session.panel.rects["exposure"]
    click_at(session, (x0 + (x1 - x0) * 0.9, (y0 + y1) / 2))   # right on the log slider: brighter
    assert display.exposure > 4.0
    click_at(session, (x0 + (x1 - x0) * 0.1, (y0 + y1) / 2))
    assert display.exposure < 0.25
    x0, y0, x1, y1 = session.panel.rects["environment turn"]
    click_at(session, (x0 + (x1 - x0) * 0.75, (y0 + y1) / 2))
    assert 60.0 < display.environment_rotation < 120.0
    click(session, "tone mapping")
    session.run()
    click(session, "tone mapping/aces")
    assert display.tone_mapping == "aces"
    assert display.environment_filter == "mipmaps"
    click(session, "reflections")
    session.run()
    click(session, "reflections/ggx")
    assert display.environment_filter == "ggx"
    click(session, "Show environment", near_left=True)
    assert display.show_environment
    # Ctrl+click types a value: 0 is refused in the status line, the exposure kept
    before = display.exposure
    io = imgui.get_io()
    move(session, centre(session.panel.rects["exposure"]))
    io.add_key_event(imgui.Key.mod_ctrl, True)
    session.run()
    io.add_mouse_button_event(0, True)
    session.run()
    io.add_mouse_button_event(0, False)
    io.add_key_event(imgui.Key.mod_ctrl, False)
    session.run()
    io.add_key_event(imgui.Key.mod_ctrl, True)
    io.add_key_event(imgui.Key.a, True)
    session.run()
    io.add_key_event(imgui.Key.a, False)
    io.add_key_event(imgui.Key.mod_ctrl, False)
    io.add_input_character(ord("0"))
    session.run()
    io.add_key_event(imgui.Key.enter, True)
    session.run()
    io.add_key_event(imgui.Key.enter, False)
    session.run(2)
    assert session.editor.status.is_error and "exposure: must be more than 0" in session.editor.status.text
    assert display.exposure == before


def test_the_look_stays_when_another_model_is_opened(panel_session, good_hdr):
    from samples import FOX

    session = panel_session
    session.editor.set_look("environment", str(good_hdr))
    session.editor.set_look("exposure", 2.5)
    assert session.open_model(FOX)
    assert session.editor.display.environment == str(good_hdr) and session.editor.display.exposure == 2.5


def test_the_session_starts_with_the_look_it_is_given(good_hdr):
    from viewer.character import build_character
    from viewer.render.headless import create_headless_context, release_egl_current
    from viewer.ui.session import ViewerSession

    ctx = create_headless_context()
    try:
        session = ViewerSession(ctx, build_character(), look={"environment": str(good_hdr), "tone_mapping": "none"})
        assert session.editor.display.environment == str(good_hdr) and session.editor.display.tone_mapping == "none"
        session.release()
    finally:
        ctx.release()
        release_egl_current()


def test_an_environment_that_goes_bad_on_disk_falls_back_to_the_studio_light_once(panel_session, good_hdr, tmp_path,
                                                                                 monkeypatch):
    """Checked when set, then changed on disk: the renderer's error (one naming the file) goes to
    the status line and the light becomes the studio's, not the error every frame, and the bone
    storage is left alone."""
    from viewer.render.renderer import Renderer

    session, display = panel_session, panel_session.editor.display
    light = tmp_path / "light.hdr"
    shutil.copy(good_hdr, light)
    session.editor.set_look("environment", str(light))
    original = Renderer.render

    def render(self, scene, camera, size, options, *args, **kwargs):
        if options.environment == str(light):
            raise ViewerError(f"{light}: not a readable Radiance .hdr file: the pixels end at row 3 of 32 (truncated)")
        return original(self, scene, camera, size, options, *args, **kwargs)

    monkeypatch.setattr(Renderer, "render", render)
    session.run()
    assert session.editor.status.is_error and str(light) in session.editor.status.text
    assert display.environment == "studio" and not display.bone_texture
    session.run(2)
    assert display.environment == "studio" and not display.bone_texture
