"""Issue 24, the first hour with the CLI: scripts run once, scripts that cannot run write
nothing, a folder as a model, GIFs that stream into a temporary file, render cameras and
backgrounds, --frames all, and the viewer's first frame (framing after the script, no gizmo
over the hips)."""

import json
import math
import textwrap
from pathlib import Path

import numpy as np
import pytest
from imgui_bundle import imgui
from PIL import Image

from viewer.camera import CameraDescription
from viewer.cli import main
from viewer.errors import ViewerError
from viewer.images import AnimationFile

FOX = Path(__file__).parent / "data" / "gltf-samples" / "Fox" / "Fox.glb"
CESIUM_MAN = Path(__file__).parent / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"
SMALL = ["--size", "160x120"]


def write(path: Path, source: str) -> Path:
    path.write_text(textwrap.dedent(source))
    return path


def pixels(path) -> np.ndarray:
    return np.asarray(Image.open(path))


# --- scripts run once ---------------------------------------------------------------------------------
CALL_LOG = """
    import math
    from pathlib import Path

    LOG = Path({log!r})

    def setup(app):
        with LOG.open("a") as f:
            f.write("setup\\n")

    def update(app, t, dt):
        with LOG.open("a") as f:
            f.write(f"update {{t:.2f}}\\n")
        # The arm goes straight up only in the last frame: the framing must still include it.
        degrees = 180 if t > 0.15 else 30
        app.find_bone("leftArm").get_pose_target().rotation = [0, 0, math.radians(degrees)]
    """


def test_render_runs_setup_once_and_update_once_a_frame_and_frames_every_frame(cli, tmp_path):
    log = tmp_path / "calls.txt"
    script = write(tmp_path / "count.py", CALL_LOG.format(log=str(log)))
    result = cli("render", "--script", script, "--out", tmp_path / "one.png", *SMALL)
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == ["setup", "update 0.00"]
    log.unlink()
    result = cli("render", "--script", script, "--frames", "0:0.2:0.1", "--out-dir", tmp_path / "seq",
                 "--no-grid", "--no-skeleton", *SMALL)
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == ["setup", "update 0.00", "update 0.10", "update 0.20"]
    first, last = (pixels(tmp_path / "seq" / f"frame_{k:05d}.png") for k in (0, 2))
    background = first[0, 0]
    # One camera for all: the raised hand of the last frame is inside its picture (not cut at
    # the top), so the first frame, framed for it too, has room above the head.
    model_rows = np.nonzero((np.abs(last.astype(int) - background).sum(axis=2) > 30).any(axis=1))[0]
    assert model_rows.min() > 2
    first_rows = np.nonzero((np.abs(first.astype(int) - background).sum(axis=2) > 30).any(axis=1))[0]
    assert first_rows.min() > model_rows.min() + 10


@pytest.mark.parametrize("source, message", [
    ("def update(app, t, dt)\n    pass\n", "SyntaxError"),
    ("import no_such_module_for_boneviewer\n\ndef update(app, t, dt):\n    pass\n", "ModuleNotFoundError"),
    ("def udpate(app, t, dt):\n    pass\n\ndef helper():\n    pass\n",
     "defines neither setup(app) nor update(app, t, dt) (it defines helper, udpate); did you mean update?"),
    ("X = 1\n", "defines neither setup(app) nor update(app, t, dt) (it defines no functions)"),
])
def test_a_script_that_cannot_run_writes_nothing_and_exits_1(cli, tmp_path, source, message):
    script = write(tmp_path / "broken.py", source)
    out, gif = tmp_path / "a.png", tmp_path / "a.gif"
    result = cli("render", "--script", script, "--out", out, *SMALL)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"script error: {script}") and message in errors[0], errors
    assert not out.exists() and "wrote" not in result.stdout
    result = cli("render", "--script", script, "--frames", "0:0.1:0.1", "--gif", gif, *SMALL)
    assert result.returncode == 1 and not gif.exists() and list(tmp_path.iterdir()) == [script]


# --- errors that say what is wrong ---------------------------------------------------------------------
def test_a_folder_as_the_model_says_it_is_a_folder(cli, tmp_path):
    result = cli("render", FOX.parent, "--out", tmp_path / "a.png")
    assert result.returncode == 2
    assert result.stderr.startswith(f"boneviewer: error: model {FOX.parent}: is a folder")
    assert str(FOX) in result.stderr and len(result.stderr.splitlines()) == 1
    assert f"boneviewer batch {FOX.parent} --out REPORT" in result.stderr  # the library commands


@pytest.mark.parametrize("args, message", [
    (["--target", "1,2"], "expected X,Y,Z"),
    (["--target", "0,nan,0"], "finite"),
    (["--distance", "-3"], "must be more than 0"),
    (["--fov", "0.5"], "between 1 and 179"),
    (["--fov", "179"], "between 1 and 179"),
    (["--background", "mauvish"], "unknown colour 'mauvish'"),
    (["--pitch", "95"], "between -89 and 89"),
])
def test_bad_camera_and_background_options_are_one_line_and_exit_2(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        main(["render", "--out", str(tmp_path / "a.png"), *args])
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert message in error and len(error.strip().splitlines()) == 1
    assert not (tmp_path / "a.png").exists()


@pytest.mark.parametrize("content, message", [
    ('{"yaw": "left"}', "yaw must be a number"),
    ('{"distance": -1}', "distance must be at least 0.001"),
    ('{"distance": NaN}', "distance must be a finite number"),
    ('{"target": [0, 1]}', "target must be 3 numbers"),
    ('{"target": [0, true, 1]}', "target must be a number"),
    ('{"fov": 180}', "fov must be between 1 and 179 degrees"),
    ('{"zoom": 2}', "unknown key 'zoom'"),
    ('[1, 2]', "expected a JSON object"),
    ('{"yaw": 3', "not valid JSON"),
])
def test_bad_camera_files_are_one_line_and_exit_2_before_rendering(tmp_path, capsys, content, message):
    camera = tmp_path / "camera.json"
    camera.write_text(content)
    assert main(["render", "--camera", str(camera), "--out", str(tmp_path / "a.png")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"boneviewer: error: --camera {camera}: ") and message in error, error
    assert len(error.strip().splitlines()) == 1 and not (tmp_path / "a.png").exists()


def test_transparent_background_on_mp4_is_refused_in_one_line(tmp_path, capsys):
    code = main(["render", "--turntable", "2", "--mp4", str(tmp_path / "a.mp4"), "--background", "transparent"])
    assert code == 2 and "an MP4 video has no transparency" in capsys.readouterr().err


# --- cameras and backgrounds -----------------------------------------------------------------------------
def test_a_transparent_render_has_alpha_0_around_the_model_and_255_on_it(tmp_path):
    out = tmp_path / "thumb.png"
    assert main(["render", "--background", "transparent", "--no-grid", "--no-skeleton", "--out", str(out),
                 *SMALL]) == 0
    image = Image.open(out)
    assert image.mode == "RGBA"
    alpha = np.asarray(image)[..., 3]
    assert set(np.unique(alpha)) == {0, 255}
    assert (alpha[0, :] == 0).all() and (alpha[:, 0] == 0).all()       # the background
    assert alpha[60, 80] == 255 and 0.05 < (alpha == 255).mean() < 0.6  # the model, whole


def test_a_colour_background_and_a_transparent_gif(tmp_path):
    out = tmp_path / "white.png"
    assert main(["render", "--background", "white", "--no-grid", "--out", str(out), *SMALL]) == 0
    assert tuple(pixels(out)[0, 0]) == (255, 255, 255, 255)
    gif = tmp_path / "turn.gif"
    assert main(["render", "--background", "transparent", "--turntable", "3", "--gif", str(gif), *SMALL]) == 0
    image = Image.open(gif)
    assert image.n_frames == 3 and image.info["transparency"] == 255
    image.seek(2)
    rgba = np.asarray(image.convert("RGBA"))
    assert rgba[0, 0, 3] == 0 and rgba[60, 80, 3] == 255


def test_a_camera_file_renders_as_the_same_options_and_aims_at_its_target(tmp_path):
    camera = tmp_path / "camera.json"
    # The character's head is at about (0, 1.95, 0): from 1.5 units, it fills the middle of the image.
    CameraDescription(yaw=0, pitch=0, distance=1.5, target=(0, 1.95, 0), fov=30).save(camera)
    assert json.loads(camera.read_text()) == {"yaw": 0.0, "pitch": 0.0, "distance": 1.5, "target": [0, 1.95, 0],
                                              "fov": 30.0}
    from_file, from_options = tmp_path / "file.png", tmp_path / "options.png"
    assert main(["render", "--camera", str(camera), "--no-skeleton", "--out", str(from_file), *SMALL]) == 0
    assert main(["render", "--yaw", "0", "--pitch", "0", "--distance", "1.5", "--target", "0,1.95,0", "--fov", "30",
                 "--no-skeleton", "--out", str(from_options), *SMALL]) == 0
    image = pixels(from_file)
    assert np.array_equal(image, pixels(from_options))
    r, g, b, _ = image[60, 80].astype(int)
    assert r > 180 and r > b + 30  # skin in the middle: the head, not the shirt or the background
    # Options override the file's values: another yaw is another picture.
    turned = tmp_path / "turned.png"
    assert main(["render", "--camera", str(camera), "--yaw", "90", "--no-skeleton", "--out", str(turned), *SMALL]) == 0
    assert not np.array_equal(pixels(turned), image)


def test_a_target_alone_keeps_the_target_and_backs_off_to_show_the_model(tmp_path):
    from viewer.camera import drawn_points, framed_camera
    from viewer.character import build_character

    scene = build_character()
    camera = framed_camera(scene, target=(0.0, 0.5, 0.0), aspect=4 / 3)
    assert np.allclose(camera.target, (0, 0.5, 0))
    points = camera.project(drawn_points(scene), 160, 120)
    assert (points >= -0.5).all() and (points[:, 0] <= 160.5).all() and (points[:, 1] <= 120.5).all()
    assert points[:, 1].min() < 15 or points[:, 1].max() > 105  # as near as it may: one side is at the margin


# --- whole clips --------------------------------------------------------------------------------------------
def test_frames_all_renders_the_whole_clip_with_the_last_frame_at_its_end(cli, tmp_path):
    from viewer.loaders import load_model

    duration = load_model(CESIUM_MAN).animations[0].duration
    log = tmp_path / "times.txt"
    script = write(tmp_path / "times.py", f"""
        def update(app, t, dt):
            with open({str(log)!r}, "a") as f:
                f.write(f"{{t:.6f}}\\n")
        """)
    result = cli("render", CESIUM_MAN, "--frames", "all", "--fps", "4", "--script", script, "--out-dir",
                 tmp_path / "clip", "--size", "64x48")
    assert result.returncode == 0, result.stderr
    times = [float(v) for v in log.read_text().split()]
    expected = [k / 4 for k in range(int(duration * 4) + 1)]
    if duration - expected[-1] > 1e-6:
        expected.append(duration)
    assert times == pytest.approx(expected, abs=1e-6) and times[-1] == pytest.approx(duration, abs=1e-6)
    assert len(list((tmp_path / "clip").glob("frame_*.png"))) == len(times)


def test_frames_all_without_a_clip_says_so_in_one_line(tmp_path, capsys):
    assert main(["render", "--frames", "all", "--out-dir", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err
    assert "--frames all renders the whole clip, but the built-in character has no animations" in error
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").iterdir())


# --- GIFs that stream ----------------------------------------------------------------------------------------
def frame(k: int, size=(64, 48)) -> np.ndarray:
    image = np.zeros((size[1], size[0], 4), np.uint8)
    image[..., 3] = 255
    image[:, 4 * k:4 * k + 8, 0] = 255
    image[(np.arange(size[1]) * 7 + k) % size[1] == 0, :, 2] = 200
    return image


def test_a_gif_streams_frames_to_a_temporary_file_renamed_at_the_end(tmp_path):
    path = tmp_path / "a.gif"
    gif = AnimationFile(path, 20)
    sizes = []
    for k in range(4):
        gif.write(frame(k))
        sizes.append(gif.temporary.stat().st_size)
    assert not path.exists()                     # nothing under the final name until it is whole
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]  # each frame reached the file as it came
    assert gif.close() == f"4 frames to {path}"
    assert not gif.temporary.exists()
    image = Image.open(path)
    assert image.n_frames == 4 and image.info["duration"] == 50 and image.info["loop"] == 0
    for k in range(4):
        image.seek(k)
        assert np.array_equal(np.asarray(image.convert("RGB")), frame(k)[..., :3])  # few colours: exact


def test_an_interrupted_render_leaves_an_existing_gif_whole_and_no_other_file(tmp_path, monkeypatch):
    from viewer.render.headless import HeadlessRenderer

    path = tmp_path / "turn.gif"
    path.write_bytes(b"an earlier GIF")
    calls = []
    render = HeadlessRenderer.render

    def interrupted(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return render(self, *args, **kwargs)

    monkeypatch.setattr(HeadlessRenderer, "render", interrupted)
    assert main(["render", "--turntable", "5", "--gif", str(path), *SMALL]) == 130
    assert path.read_bytes() == b"an earlier GIF" and list(tmp_path.iterdir()) == [path]


def test_a_gif_fps_that_is_not_whole_hundredths_says_the_rate_written(tmp_path, capsys):
    path = tmp_path / "a.gif"
    assert main(["render", "--turntable", "2", "--gif", str(path), "--fps", "30", *SMALL]) == 0
    out = capsys.readouterr().out
    assert f"{path}: GIF delays are whole hundredths of a second: 30 fps written as 33.33 fps (3/100 s a frame)" \
        in out
    assert Image.open(path).info["duration"] == 30
    assert main(["render", "--turntable", "2", "--gif", str(path), "--fps", "25", *SMALL]) == 0
    assert "GIF delays" not in capsys.readouterr().out


# --- the viewer's first frame ----------------------------------------------------------------------------------
RAISE = """
import math

def setup(app):
    app.log("raise.py: set up")

def update(app, t, dt):
    app.find_bone("leftArm").get_pose_target().rotation = [0, 0, math.radians(180)]
"""


def test_the_viewer_frames_the_model_after_the_scripts_setup_and_first_update(panel_session, tmp_path):
    session = panel_session
    before = session.camera
    arm = session.scene.find_bone("leftArm")
    session.attach_script(write(tmp_path / "raise.py", RAISE))
    session.run()
    assert session.camera is not before and session.camera.distance > before.distance
    from viewer.camera import drawn_points

    width, height = session.window_size
    x, y = session.camera.project(drawn_points(session.scene), int(width), int(height)).T
    assert y.min() > 0  # the raised hand is in the picture from the first frame
    tip = session.app.project(arm.get_absolute_position(session.editor.mesh_of(arm)))
    assert tip is not None


def test_a_script_that_places_the_camera_keeps_it(panel_session, tmp_path):
    session = panel_session
    session.attach_script(write(tmp_path / "place.py", RAISE + """
def setup(app):
    app.camera = {"yaw": 0, "pitch": 0, "distance": 20, "target": [0, 1, 0]}
"""))
    session.run(2)
    assert session.camera.distance == 20 and tuple(session.camera.target) == (0, 1, 0)


def test_on_open_no_gizmo_covers_the_root_bone_until_a_bone_is_chosen(panel_session):
    session = panel_session
    assert session.editor.selected is session.scene.find_bone("body")  # the panel shows the first bone
    assert session.gestures.handles == []
    session.editor.select(session.scene.find_bone("body"))
    session.run()
    assert {handle.kind for handle in session.gestures.handles} == {"ring", "arrow"}


# --- the panel: the camera, and errors in full ------------------------------------------------------------------
def test_copy_camera_and_save_camera_write_what_render_reads(panel_session, tmp_path, monkeypatch):
    from panel_driver import click

    session = panel_session
    monkeypatch.chdir(tmp_path)
    session.camera.orbit(33.0, 7.0)
    click(session, "Copy camera")
    copied = CameraDescription.from_dict(json.loads(imgui.get_clipboard_text()))
    assert copied.yaw == pytest.approx(session.camera.yaw, abs=1e-5)
    assert copied.pitch == pytest.approx(session.camera.pitch, abs=1e-5)
    assert copied.distance == pytest.approx(session.camera.distance, rel=1e-5)
    assert copied.fov == session.camera.fov_y
    assert np.allclose(copied.target, session.camera.target, atol=1e-5)
    for section in ("Display", "Bones", "Selected bone", "Files"):  # make room, open Files
        click(session, section)
    click(session, "Save camera...")
    saved = CameraDescription.read(tmp_path / "camera.json")
    assert saved.to_dict() == copied.to_dict()
    assert "camera saved to camera.json" in session.editor.status.text


def test_a_long_error_shows_in_full_wrapped_without_moving_the_panel(panel_session):
    from viewer.options import Status

    session = panel_session
    before = dict(session.panel.rects)
    folder = "/home/someone/a folder with a very long name/and another one inside it" * 2
    text = f"script error: {folder}/wave.py:27: NameError: name 'phase' is not defined"
    session.editor.status = Status.error(text)
    session.run(2)  # ImGui sizes a new auto-sized window in its first (hidden) frame
    rects = session.panel.rects
    assert rects == before | {"status": rects["status"], "sections": rects["sections"]}
    x0, y0, x1, y1 = rects["status"]
    window = rects["window"]
    assert window[0] <= x0 and x1 <= window[2] and y1 <= window[3]   # in the panel, at its foot
    assert y1 - y0 > 2 * imgui.get_text_line_height()                # wrapped onto several lines
    session.editor.status = Status("fine")
    session.run()
    x0, y0, x1, y1 = session.panel.rects["status"]
    assert y1 - y0 == pytest.approx(imgui.get_text_line_height())


def test_camera_description_checks_and_merges():
    base = CameraDescription.from_dict({"yaw": 10, "distance": 3})
    merged = base.updated(CameraDescription(yaw=45, fov=20))
    assert merged.to_dict() == {"yaw": 45.0, "distance": 3.0, "fov": 20.0}
    with pytest.raises(ViewerError, match="pitch must be between -89 and 89"):
        CameraDescription(pitch=90)


def test_view_takes_the_same_camera_without_a_display_and_in_the_window(cli, tmp_path):
    camera = tmp_path / "camera.json"
    CameraDescription(yaw=30, pitch=5, distance=4.0, target=(0, 1, 0), fov=35).save(camera)
    shot, rendered = tmp_path / "view.png", tmp_path / "render.png"
    result = cli("view", "--camera", camera, "--size", "160x120", "--frames", "1", "--screenshot", shot)
    assert result.returncode == 0, result.stderr
    # the window draws shadows; render draws them when asked
    assert main(["render", "--camera", str(camera), "--size", "160x120", "--shadows", "--out", str(rendered)]) == 0
    assert np.array_equal(pixels(shot), pixels(rendered))
    # The window's session starts where the description says (what it leaves out is framed).
    from viewer.character import build_character
    from viewer.render.headless import create_headless_context, release_egl_current
    from viewer.ui.session import ViewerSession

    ctx = create_headless_context()
    try:
        session = ViewerSession(ctx, build_character(), camera=CameraDescription.read(camera))
        placed = session.camera
        assert (placed.yaw, placed.pitch, placed.distance, placed.fov_y) == (30, 5, 4.0, 35)
        assert tuple(placed.target) == (0, 1, 0)
        session.release()
        session = ViewerSession(ctx, build_character(), camera=CameraDescription(yaw=90, fov=25))
        assert (session.camera.yaw, session.camera.fov_y) == (90, 25) and session.camera.distance != 5.0
        session.release()
    finally:
        ctx.release()
        release_egl_current()
