"""Outputs: every file a command writes is whole or absent, follows the user's umask, and never
lands on a file the command reads (the model, its buffers and images, the --motion file, ...)
unless that is exactly the `export --out MODEL --force` case."""

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from samples import CESIUM_MAN, FOX, SAMPLES_DIR
from viewer import load_gltf, load_model
from viewer.cli import main

DRACO_FOLDER = SAMPLES_DIR / "CesiumMan-Draco"


def digests(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("boneviewer: error: "), err
    return err[0]


@pytest.fixture
def draco(tmp_path) -> Path:
    """A copy of CesiumMan-Draco: CesiumMan.gltf with CesiumMan_data.bin and CesiumMan_img0.jpg."""
    folder = tmp_path / "CesiumMan-Draco"
    shutil.copytree(DRACO_FOLDER, folder)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


# --- export: no output over a file the model uses ---------------------------------------------
def test_export_refuses_to_write_the_bin_over_the_models_own_buffer(draco, monkeypatch, capsys):
    monkeypatch.chdir(draco)
    before = digests(draco)
    for force in ([], ["--force"]):  # --force replaces the model only when --out is the model
        assert main(["export", "CesiumMan.gltf", "--out", "CesiumMan_data.gltf", *force]) == 2
        line = one_error_line(capsys)
        assert "CesiumMan_data.bin" in line and "buffer 0 of the model CesiumMan.gltf" in line, line
        assert digests(draco) == before  # nothing written, not even the .gltf
    load_gltf(draco / "CesiumMan.gltf")


def test_export_refuses_an_image_over_the_models_image(draco, capsys):
    (draco / "CesiumMan_img0.jpg").rename(draco / "out_image0.jpg")
    document = json.loads((draco / "CesiumMan.gltf").read_text())
    document["images"][0]["uri"] = "out_image0.jpg"
    (draco / "CesiumMan.gltf").write_text(json.dumps(document))
    before = digests(draco)
    assert main(["export", str(draco / "CesiumMan.gltf"), "--out", str(draco / "out.gltf")]) == 2
    assert "out_image0.jpg, image 0 of the model CesiumMan.gltf" in one_error_line(capsys)
    assert digests(draco) == before


def test_export_force_over_the_model_itself_may_replace_its_own_files(draco, capsys):
    model = draco / "CesiumMan.gltf"
    assert main(["export", str(model), "--out", str(model)]) == 2
    assert "--force" in one_error_line(capsys)
    assert main(["export", str(model), "--time", "0.5", "--out", str(model), "--force"]) == 0
    reloaded = load_gltf(model)  # the new document names its own new .bin and image
    assert len(reloaded.animations) == 1
    assert (draco / "CesiumMan.bin").is_file() and (draco / "CesiumMan_image0.jpg").is_file()


def test_export_refuses_an_output_over_the_motion_files(tmp_path, capsys):
    script = tmp_path / "wave.py"
    script.write_text("def update(app, t, dt):\n    app.find_bone('leftArm').get_pose_target().rotation = [0, 0, t]\n")
    assert main(["export", "--script", str(script), "--record", "0:1:0.5", "--clip", "Wave",
                 "--out", str(tmp_path / "out.gltf")]) == 0
    (tmp_path / "out.gltf").rename(tmp_path / "motion.gltf")  # it still names out.bin
    assert main(["export", "--out", str(tmp_path / "model.glb")]) == 0
    before = digests(tmp_path)
    for out, named in (("out.gltf", "out.bin, buffer 0 of the --motion file motion.gltf"),
                       ("motion.gltf", "motion.gltf, the --motion file")):
        for force in ([], ["--force"]):
            assert main(["export", str(tmp_path / "model.glb"), "--motion", str(tmp_path / "motion.gltf"),
                         "--out", str(tmp_path / out), *force]) == 2
            assert named in one_error_line(capsys)
            assert digests(tmp_path) == before


def test_the_keyframe_editors_export_keeps_the_models_files(draco):
    from viewer.editing.editor import Editor

    before = digests(draco)
    editor = Editor(load_gltf(draco / "CesiumMan.gltf"))
    editor.export_gltf(draco / "CesiumMan_data.gltf")
    assert editor.status.is_error and "CesiumMan_data.bin" in editor.status.text and digests(draco) == before
    editor.export_gltf(draco / "CesiumMan.gltf")  # the window has no --force: the model stays
    assert digests(draco) == before
    editor.export_gltf(draco / "posed.gltf")
    assert (draco / "posed.gltf").is_file() and load_gltf(draco / "posed.gltf")


# --- export: the side files no one named (issue 47, item 2) -----------------------------------
@pytest.mark.parametrize("out, side", [("g2.gltf", ["g2.bin", "g2_image0.jpg"]), ("ces.usda", ["ces_image0.jpg"])])
def test_export_refuses_to_replace_side_files_that_exist_unless_forced(tmp_path, monkeypatch, capsys, out, side):
    """A .gltf's .bin and images, a .usda's textures: files --out did not name. One that exists is
    refused in one line naming it, before anything is written; --force replaces them; the file
    --out names is the user's to replace."""
    monkeypatch.chdir(tmp_path)
    for name in side:
        (tmp_path / name).write_bytes(f"someone's {name}".encode())
    before = digests(tmp_path)
    assert main(["export", str(CESIUM_MAN), "--out", out]) == 2
    line = one_error_line(capsys)
    assert all(name in line for name in side) and "--force" in line, line
    assert digests(tmp_path) == before  # nothing written, not even OUT
    assert main(["export", str(CESIUM_MAN), "--out", out, "--force"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out, *side])
    written = digests(tmp_path)
    assert all(written[name] != before[name] for name in side)
    model = load_model(tmp_path / out)  # the new file names the new side files
    assert model.meshes[0].submeshes[0].pbr.base_color_texture is not None
    for name in side:
        (tmp_path / name).unlink()
    (tmp_path / out).write_text("an old export")
    assert main(["export", str(CESIUM_MAN), "--out", out]) == 0  # OUT itself, named: replaced
    assert digests(tmp_path) == written


# --- render, screenshots, pose and camera files ------------------------------------------------
def test_render_refuses_to_draw_over_the_models_texture(draco, capsys):
    (draco / "CesiumMan_img0.jpg").rename(draco / "skin.png")  # Pillow reads it by its bytes, not its name
    document = json.loads((draco / "CesiumMan.gltf").read_text())
    document["images"][0]["uri"] = "skin.png"
    (draco / "CesiumMan.gltf").write_text(json.dumps(document))
    before = digests(draco)
    assert main(["render", str(draco / "CesiumMan.gltf"), "--out", str(draco / "skin.png"), "--size", "16x16"]) == 2
    assert "skin.png, image 0 of the model CesiumMan.gltf" in one_error_line(capsys)
    assert digests(draco) == before
    (draco / "frame_00000.png").write_bytes((draco / "skin.png").read_bytes())
    document["images"][0]["uri"] = "frame_00000.png"
    (draco / "CesiumMan.gltf").write_text(json.dumps(document))
    before = digests(draco)
    assert main(["render", str(draco / "CesiumMan.gltf"), "--frames", "0:0.1:0.1", "--out-dir", str(draco),
                 "--size", "16x16"]) == 2
    assert "its frames would overwrite" in one_error_line(capsys)
    assert digests(draco) == before


def test_a_script_screenshot_pose_or_camera_never_lands_on_the_models_files(draco):
    from viewer.camera import OrbitCamera
    from viewer.editing.editor import Editor
    from viewer.editing.script_app import HeadlessApp
    from viewer.errors import ViewerError

    (draco / "CesiumMan_img0.jpg").rename(draco / "CesiumMan_img0.png")  # as if the model's texture were a PNG
    model = draco / "CesiumMan.gltf"
    model.write_text(model.read_text().replace("CesiumMan_img0.jpg", "CesiumMan_img0.png"))
    scene = load_gltf(model)
    before = digests(draco)
    app = HeadlessApp(scene, (16, 16), camera=OrbitCamera())
    with pytest.raises(ViewerError, match="image 0 of the model CesiumMan.gltf"):
        app.screenshot(draco / "CesiumMan_img0.png")
    assert app.pending_screenshots == []
    with pytest.raises(ViewerError, match="would overwrite .*CesiumMan_data.bin"):
        Editor(scene).save_pose(draco / "CesiumMan_data.bin")
    assert digests(draco) == before
    app.screenshot(draco / "shot.png")  # any other name is the script's to choose
    assert app.pending_screenshots == [draco / "shot.png"]


def test_a_png_is_written_whole_or_the_old_one_stays(tmp_path):
    import numpy as np
    from PIL import Image

    from viewer.images import write_png

    pixels = np.arange(4 * 3 * 4, dtype=np.uint8).reshape(4, 3, 4)
    write_png(tmp_path / "a.png", pixels)
    with Image.open(tmp_path / "a.png") as image:
        np.testing.assert_array_equal(np.asarray(image), pixels)
    before = (tmp_path / "a.png").read_bytes()
    with pytest.raises(ValueError):  # pixels that are no RGBA image (refused while the temporary is open)
        write_png(tmp_path / "a.png", np.zeros((4, 3, 4, 2), np.uint8))
    assert (tmp_path / "a.png").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["a.png"]  # no temporary left behind


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (5, 1), (37, 53), (256, 300)])
def test_a_written_png_reads_back_as_the_pixels_it_was_given(tmp_path, shape):
    """write_png encodes with zlib itself (no Pillow at startup): Pillow, an independent decoder,
    reads back every byte, on random pixels and on a render-like image with flat areas."""
    import numpy as np
    from PIL import Image

    from viewer.images import write_png

    rng = np.random.default_rng(sum(shape))
    noise = rng.integers(0, 256, size=(*shape, 4), dtype=np.uint8)
    flat = np.zeros((*shape, 4), np.uint8)
    flat[shape[0] // 3:, shape[1] // 2:] = (200, 120, 80, 255)
    for name, pixels in (("noise", noise), ("flat", flat)):
        write_png(tmp_path / f"{name}.png", pixels)
        with Image.open(tmp_path / f"{name}.png") as image:
            assert image.mode == "RGBA" and image.size == (shape[1], shape[0])
            np.testing.assert_array_equal(np.asarray(image), pixels)


# --- modes: the user's umask, never mkstemp's 0600 or mkdtemp's 0700 ---------------------------
@pytest.fixture(params=[0o022, 0o027])
def umask(request):
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_exported_files_follow_the_umask(tmp_path, umask):
    assert main(["export", str(FOX), "--out", str(tmp_path / "fox.glb")]) == 0
    assert main(["export", str(FOX), "--out", str(tmp_path / "fox.gltf")]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["fox.bin", "fox.glb", "fox.gltf", "fox_image0.png"]  # no temporary left behind
    for name in written:
        assert mode(tmp_path / name) == 0o666 & ~umask, name
    model = tmp_path / "model.glb"
    shutil.copyfile(FOX, model)
    model.chmod(0o604)
    assert main(["export", str(model), "--time", "0.5", "--out", str(model), "--force"]) == 0
    assert mode(model) == 0o604  # a file replaced keeps its own mode, as editors and cp keep it (issue 37)


def test_rendered_files_follow_the_umask(tmp_path, umask):
    assert main(["render", "--out", str(tmp_path / "a.png"), "--size", "16x16"]) == 0
    assert main(["render", "--turntable", "2", "--gif", str(tmp_path / "a.gif"), "--size", "16x16"]) == 0
    assert main(["render", "--turntable", "2", "--out-dir", str(tmp_path / "frames"), "--size", "16x16"]) == 0
    for path in (tmp_path / "a.png", tmp_path / "a.gif", tmp_path / "frames" / "frame_00001.png"):
        assert mode(path) == 0o666 & ~umask, path
    assert mode(tmp_path / "frames") == 0o777 & ~umask


def test_pose_and_camera_files_follow_the_umask(tmp_path, umask):
    from viewer.camera import CameraDescription
    from viewer.editing.pose import save_pose
    from viewer.loaders import load_model

    save_pose(tmp_path / "pose.json", load_model(None))
    CameraDescription(yaw=10.0).save(tmp_path / "camera.json")
    for name in ("pose.json", "camera.json"):
        assert mode(tmp_path / name) == 0o666 & ~umask


def _quick_job(name, sources, options):
    return {"row": {"status": "ok", "error": None}, "outputs": {"check.json": b"{}", "thumb.png": b"png"}}


def test_batch_folders_and_files_follow_the_umask(tmp_path, umask, monkeypatch):
    from viewer.library import run

    monkeypatch.setattr(run, "model_job", _quick_job)  # the pool's workers fork from here: the modes are ours
    library = tmp_path / "lib"
    (library / "chars").mkdir(parents=True)
    shutil.copyfile(FOX, library / "chars" / "fox.glb")
    out = tmp_path / "report"
    assert main(["batch", str(library), "--out", str(out), "--workers", "1"]) == 0
    folder = out / "chars" / "fox.glb"
    for path in (out, out / "chars", folder):
        assert mode(path) == 0o777 & ~umask, path
    for path in (out / "index.html", out / "report.json", folder / "index.html", folder / "check.json",
                 folder / "thumb.png"):
        assert mode(path) == 0o666 & ~umask, path


def test_batch_refuses_a_report_folder_that_would_replace_a_model_of_the_library(tmp_path, monkeypatch, capsys):
    from viewer.library import run

    monkeypatch.setattr(run, "model_job", _quick_job)
    library = tmp_path / "lib"
    (library / "sub").mkdir(parents=True)
    shutil.copyfile(FOX, library / "fox.glb")
    shutil.copyfile(FOX, library / "sub" / "fox.glb")
    before = digests(library / "sub")
    # lib/fox.glb's report folder would be lib/sub/fox.glb, the library's other model
    assert main(["batch", str(library), "--out", str(library / "sub"), "--workers", "1"]) == 2
    line = one_error_line(capsys)
    assert "sub/fox.glb" in line and "the library's model" in line, line
    assert digests(library / "sub") == before and sorted(p.name for p in (library / "sub").iterdir()) == ["fox.glb"]
    assert main(["batch", str(library), "--out", str(tmp_path / "report"), "--workers", "1"]) == 0


def test_a_gltf_whose_write_fails_part_way_leaves_the_old_set_whole(tmp_path, monkeypatch):
    """A .gltf is several files renamed into place one after another: when a rename fails after
    the .bin is placed, the .bin (and images) put back are the old ones, so the old .gltf still
    loads as it was and nothing new or temporary is left."""
    from viewer import save_gltf
    from viewer.errors import ViewerError

    out = tmp_path / "model.gltf"
    save_gltf(load_gltf(CESIUM_MAN), out)
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.iterdir()}
    other = load_gltf(FOX)  # every file of it differs from CesiumMan's
    real, renames = os.replace, []

    def failing_second(source, target):
        renames.append(target)
        if len(renames) == 2:
            raise OSError(28, "No space left on device")
        return real(source, target)

    monkeypatch.setattr(os, "replace", failing_second)
    with pytest.raises(ViewerError, match="No space left on device"):
        save_gltf(other, out, force=True)  # (its .bin and image exist: replacing them needs force)
    monkeypatch.setattr(os, "replace", real)
    assert len(renames) == 3 and renames[2] == renames[0]  # the file placed before the failure, put back
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.iterdir()}
    assert after == before
    assert len(load_gltf(out).skeletons[0].bones) == 19


def test_a_failed_rename_over_an_existing_file_leaves_no_backup_behind(tmp_path, monkeypatch):
    """The file whose rename fails was still the old one, so its backup is a hard link to it and
    renaming the backup over it does nothing (POSIX): the backup name must still go. Written over
    a set of the same names, every name exists before."""
    from viewer import save_gltf
    from viewer.errors import ViewerError

    out = tmp_path / "model.gltf"
    save_gltf(load_gltf(CESIUM_MAN), out)
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.iterdir()}
    assert len(before) >= 3  # the .gltf, its .bin and its image
    real, renames = os.replace, []

    def failing_second(source, target):
        renames.append(target)
        if len(renames) == 2:
            raise OSError(28, "No space left on device")
        return real(source, target)

    monkeypatch.setattr(os, "replace", failing_second)
    with pytest.raises(ViewerError, match="No space left on device"):
        save_gltf(load_gltf(CESIUM_MAN), out, force=True)  # the same names again: each exists
    monkeypatch.setattr(os, "replace", real)
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.iterdir()}
    assert after == before


def test_a_replaced_file_keeps_its_mode_and_a_symlink_is_followed(cli, tmp_path):
    """Issue 37, item 6: rendering over a 0600 file leaves it 0600 (as editors and cp do), and
    --out naming a symlink writes the file it names, the link staying a link."""
    import os
    import stat

    private = tmp_path / "private.png"
    private.write_bytes(b"old")
    os.chmod(private, 0o600)
    done = cli("render", "--out", private, "--size", "64x48")
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600 and private.read_bytes()[:4] == b"\x89PNG"
    real = tmp_path / "real.png"
    real.write_bytes(b"old")
    link = tmp_path / "link.png"
    link.symlink_to(real)
    done = cli("render", "--out", link, "--size", "64x48")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and real.read_bytes()[:4] == b"\x89PNG"
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_a_full_disk_under_a_gif_is_one_error_and_the_old_file_whole(tmp_path):
    """Issue 37, item 5: a GIF whose disk fills up mid-way (the closing flush failing again) is
    one ViewerError, not two chained OSErrors; no temporary file stays; the old GIF stays whole."""
    import errno

    import numpy as np

    from viewer.errors import ViewerError
    from viewer.images import AnimationFile

    target = tmp_path / "a.gif"
    target.write_bytes(b"the old gif")
    output = AnimationFile(target, 10.0)
    output.write(np.zeros((8, 8, 4), np.uint8))

    class FullDisk:
        def __init__(self, real):
            self.real = real

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        flush = close = lambda self: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device"))

    real = output.encoder.file
    output.encoder.file = FullDisk(real)
    try:
        with pytest.raises(ViewerError, match="cannot write .*a.gif: No space left on device") as caught:
            output.write(np.zeros((8, 8, 4), np.uint8))
        assert "\n" not in str(caught.value)
    finally:
        real.close()
    assert target.read_bytes() == b"the old gif"
    assert [p.name for p in tmp_path.iterdir()] == ["a.gif"]
