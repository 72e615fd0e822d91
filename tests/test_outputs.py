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
from viewer import load_gltf
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
