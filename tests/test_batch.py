"""`boneviewer batch`: a tiny library (two small samples, a small BVH capture, a broken file) rendered into a report
by the local pool and by Ray (the same bytes), failed rows for what does not load, crashes or
times out, a second run that skips what did not change, and bad arguments."""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from viewer.checks import MotionOptions, check_file

SAMPLES = Path(__file__).parent / "data" / "gltf-samples"
BVH = Path(__file__).parent / "data" / "bvh"
TINY = ["--size", "32x32", "--gif-seconds", "0.1"]  # 32x32 pictures, one-frame GIFs
OUTPUTS = {"thumb.png", "turntable.gif", "bone-map.png", "weight-check.png", "check.json"}


def make_library(folder: Path) -> Path:
    (folder / "chars").mkdir(parents=True)
    shutil.copy(SAMPLES / "SimpleSkin" / "SimpleSkin.gltf", folder / "chars")
    shutil.copy(SAMPLES / "RiggedSimple" / "RiggedSimple.gltf", folder)
    (folder / "mocap").mkdir()
    shutil.copy(BVH / "asf_zup_xyz.bvh", folder / "mocap" / "asf.bvh")  # 20 frames, 23 joints and End Sites
    (folder / "broken.glb").write_bytes(b"glTF this is not a GLB file")
    return folder


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    return make_library(tmp_path_factory.mktemp("library"))


@pytest.fixture(scope="module")
def local_report(library, tmp_path_factory):
    from conftest import run_cli

    out = tmp_path_factory.mktemp("report") / "report"
    result = run_cli("batch", library, "--out", out, "--workers", "2", *TINY)
    return out, result


def test_the_report_has_every_model_and_a_failed_row_for_the_broken_one(local_report, library):
    out, result = local_report
    assert result.returncode == 1, result.stderr  # one model failed
    assert "4 models: 4 processed, 0 unchanged (skipped), 1 failed" in result.stdout
    report = json.loads((out / "report.json").read_text())
    rows = {row["file"]: row for row in report["models"]}
    assert list(rows) == ["RiggedSimple.gltf", "broken.glb", "chars/SimpleSkin.gltf", "mocap/asf.bvh"]
    broken = rows["broken.glb"]
    assert broken["status"] == "failed" and "GLB" in broken["error"] and "\n" not in broken["error"]
    for name in ("RiggedSimple.gltf", "chars/SimpleSkin.gltf", "mocap/asf.bvh"):
        row = rows[name]
        assert row["status"] == "ok" and row["error"] is None
        folder = out / name
        clip_gifs = {clip["gif"] for clip in row["clips"]}
        assert len(clip_gifs) == len(row["clips"]) == 1
        plots = {plot["file"] for plot in row["plots"]}  # one motion plot per clip
        assert plots == {"motion-0.png"}
        assert set(row["outputs"]) == OUTPUTS | clip_gifs | plots
        assert set(p.name for p in folder.iterdir()) == OUTPUTS | clip_gifs | plots | {"index.html"}
        check = json.loads((folder / "check.json").read_text())
        expected = check_file(library / name, motion=MotionOptions())
        assert check["findings"] == [f.as_json() for f in expected.findings]
        assert [clip["clip"] for clip in check["motion"]] == [clip["name"] for clip in row["clips"]]
        assert (row["bones"], row["vertices"]) == (expected.bones, expected.vertices)
        assert [clip["name"] for clip in row["clips"]] == [name for name, _ in expected.clips]
    bvh = rows["mocap/asf.bvh"]
    assert bvh["bones"] == 23 and bvh["vertices"] > 0 and bvh["errors"] == 0  # its warnings: its motion's
    # its clip is named after the file
    assert [(clip["name"], clip["gif"]) for clip in bvh["clips"]] == [("asf", "clip-00-asf.gif")]
    from PIL import Image

    with Image.open(out / "chars/SimpleSkin.gltf/thumb.png") as thumb:
        assert thumb.size == (32, 32)
        import numpy as np

        assert len(np.unique(np.asarray(thumb).reshape(-1, 4), axis=0)) > 10  # a picture, not a blank
    # The BVH's capsules are rigidly skinned: the bone map paints them in many bone colours.
    bvh_out = out / "mocap/asf.bvh"
    with Image.open(bvh_out / "bone-map.png") as bone_map, Image.open(bvh_out / "thumb.png") as thumb:
        assert len(np.unique(np.asarray(bone_map).reshape(-1, 4), axis=0)) > 10
        assert not np.array_equal(np.asarray(bone_map), np.asarray(thumb))
    with Image.open(out / "RiggedSimple.gltf/turntable.gif") as gif:
        assert gif.n_frames == 1 and gif.size == (32, 32)


def test_a_models_page_shows_each_clips_motion_plot(local_report):
    from PIL import Image

    out, _ = local_report
    folder = out / "mocap/asf.bvh"
    page = (folder / "index.html").read_text()
    assert 'src="motion-0.png"' in page and "asf: feet and jitter" in page
    with Image.open(folder / "motion-0.png") as plot:
        assert plot.size == (560, 528)


def _tinted(png: bytes, colour) -> int:
    """How many pixels have ``colour`` at the shading's 18 % over white."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        pixels = np.asarray(image.convert("RGB")).reshape(-1, 3).astype(int)
    tint = np.round(255 + 0.18 * (np.array(colour) - 255))
    return int((np.abs(pixels - tint).max(axis=1) <= 3).sum())


def test_the_motion_plot_shades_the_findings_frames_from_check_json():
    """CesiumMan's walk skates and sinks in (check's findings): the plot shades those frames in
    their colours; the same figures without the findings shade nothing."""
    from viewer.library.plots import PLOT_CODES, motion_plots

    check = check_file(SAMPLES / "CesiumMan" / "CesiumMan.glb", motion=MotionOptions()).as_json()
    assert {"foot-skating", "ground-penetration"} <= {f["code"] for f in check["findings"]}
    shaded = motion_plots(check)["motion-0.png"]
    bare = motion_plots({**check, "findings": []})["motion-0.png"]
    for code, (colour, _) in PLOT_CODES.items():
        colour = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
        assert _tinted(shaded, colour) > 500, code
        assert _tinted(bare, colour) == 0, code


def test_the_motion_plot_loads_in_headless_chromium(local_report, chromium_page):
    out, _ = local_report
    page = chromium_page
    page.goto((out / "mocap/asf.bvh/index.html").as_uri(), wait_until="load")
    plots = page.evaluate("Array.from(document.querySelectorAll('figure.plot img')).map(i => "
                          "[i.getAttribute('src'), i.complete, i.naturalWidth])")
    assert plots == [["motion-0.png", True, 560]]


def test_the_index_is_a_table_with_a_row_per_model_and_no_network(local_report):
    out, _ = local_report
    page = (out / "index.html").read_text()
    assert "<thead>" in page and "<tbody>" in page and page.count('<tr class="') == 4
    assert "http://" not in page and "https://" not in page and "fetch(" not in page
    assert 'src="chars/SimpleSkin.gltf/thumb.png"' in page
    model_page = (out / "chars/SimpleSkin.gltf/index.html").read_text()
    assert 'src="turntable.gif"' in model_page and 'href="../../index.html"' in model_page
    assert "bone-zero-length" in model_page  # SimpleSkin's finding, shown on its page


def test_a_second_run_skips_unchanged_models_and_force_redoes_them(library, tmp_path, cli):
    shutil.copytree(library, tmp_path / "lib")
    lib, out = tmp_path / "lib", tmp_path / "out"
    assert cli("batch", lib, "--out", out, "--workers", "1", *TINY).returncode == 1
    thumb = out / "RiggedSimple.gltf" / "thumb.png"
    stamp = thumb.stat().st_mtime_ns
    again = cli("batch", lib, "--out", out, "--workers", "1", *TINY)
    assert "0 processed, 4 unchanged (skipped)" in again.stdout and again.returncode == 1
    assert thumb.stat().st_mtime_ns == stamp
    (lib / "broken.glb").unlink()
    shutil.copy(SAMPLES / "SimpleSkin" / "SimpleSkin.gltf", lib / "chars" / "Other.gltf")
    changed = cli("batch", lib, "--out", out, "--workers", "1", *TINY)
    assert changed.returncode == 0, changed.stdout  # no failed model left
    assert "4 models: 1 processed, 3 unchanged (skipped), 0 failed" in changed.stdout
    other = cli("batch", lib, "--out", out, "--workers", "1", "--size", "32x24", "--gif-seconds", "0.1")
    assert "4 processed" in other.stdout  # other options: every model again
    forced = cli("batch", lib, "--out", out, "--workers", "1", "--size", "32x24", "--gif-seconds", "0.1", "--force")
    assert "4 processed, 0 unchanged" in forced.stdout


def _timed_job():
    from viewer.library import run

    return run.timed_job


_TIMED_JOB = _timed_job()  # the real one, taken before any test patches it


def _fake_job(name, sources, options):
    import os

    if name == "RiggedSimple.gltf":
        os._exit(3)  # the worker dies
    if name == "SimpleSkin.gltf":
        import time

        time.sleep(30)
    return {"row": {"status": "ok", "error": None}, "outputs": {"check.json": b"{}"}}


def _fake_timed_job(name, sources, options, timeout):
    """The pool's job in its worker: the pool's workers start from a fork server, not from this
    process, so the fake job is put in place there (this module is imported by reference)."""
    from viewer.library import run

    run.model_job = _fake_job
    return _TIMED_JOB(name, sources, options, timeout)


def test_crashed_and_timed_out_workers_give_failed_rows(library, tmp_path, monkeypatch, capsys):
    from viewer.cli import main
    from viewer.library import run

    monkeypatch.setattr(run, "timed_job", _fake_timed_job)
    monkeypatch.setattr(run, "GRACE", 0.5)
    status = main(["batch", str(library), "--out", str(tmp_path / "out"), "--workers", "2", "--timeout", "1", *TINY])
    assert status == 1
    rows = {row["file"]: row for row in json.loads((tmp_path / "out" / "report.json").read_text())["models"]}
    assert rows["RiggedSimple.gltf"]["error"] == "its worker crashed (exit status 3)"
    assert rows["chars/SimpleSkin.gltf"]["error"].startswith("timed out after 1 s")
    assert rows["broken.glb"]["status"] == "ok"  # the fake job's: the others went on


def test_ray_writes_the_same_bytes_as_the_local_pool(local_report, library, tmp_path, cli):
    pytest.importorskip("ray")  # the 'ray' extra (in the dev extra, so the suite runs this)
    out, _ = local_report
    result = cli("batch", library, "--out", tmp_path / "ray", "--ray", *TINY, timeout=240)
    assert result.returncode == 1, result.stderr
    compared = filecmp.dircmp(out, tmp_path / "ray")
    different = []

    def walk(comparison, prefix=""):
        different.extend(prefix + name for name in comparison.diff_files + comparison.left_only + comparison.right_only)
        for name, sub in comparison.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(compared)
    assert different == []
    # dircmp compares by size and time unless shallow=False: compare every file's bytes too
    for path in out.rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (tmp_path / "ray" / path.relative_to(out)).read_bytes(), path


@pytest.mark.parametrize("args, expected", [
    (["nowhere", "--out", "x"], "nowhere: no such folder"),
    (["LIB", "--out", "x", "--ray", "--workers", "2"], "--workers sizes the local pool"),
    (["LIB", "--out", "LIB"], "the report needs its own folder"),
    (["LIB", "--out", "x", "--size", "0x3"], "must be 1..16384"),
    (["LIB", "--out", "x", "--gif-seconds", "-1"], "must be more than 0"),
    (["EMPTY", "--out", "x"], "no model files"),
])
def test_bad_arguments_are_one_line_and_exit_2(args, expected, library, tmp_path, cli):
    (tmp_path / "empty").mkdir()
    args = [str(library) if a == "LIB" else str(tmp_path / "empty") if a == "EMPTY" else
            str(tmp_path / a) if a in ("x", "nowhere") else a for a in args]
    result = cli("batch", *args)
    assert result.returncode == 2
    assert result.stderr.startswith("boneviewer") and "error:" in result.stderr and expected in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "x").exists()


def test_the_index_loads_in_headless_chromium_with_every_image_and_sorts(local_report, chromium_page):
    """Debian's chromium driven by pip's playwright (the chromium_page fixture)."""
    out, _ = local_report
    page = chromium_page
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto((out / "index.html").as_uri(), wait_until="load")
    images = page.evaluate("Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, "
                           "i.naturalWidth])")
    assert len(images) == 3  # the three models that rendered
    assert all(complete and width == 32 for _, complete, width in images), images
    assert all(url.startswith("file://") for url in requests), requests  # no network

    def names():
        return page.eval_on_selector_all("#models tbody tr:not([hidden]) td:nth-child(2)",
                                         "cells => cells.map(c => c.textContent)")

    page.click("th:has-text('Vertices')")
    ascending = names()
    page.click("th:has-text('Vertices')")
    assert names() == ascending[::-1]
    assert ascending[0] == "broken.glb"  # no vertices
    # 10, 160, then the BVH's capsules
    assert ascending[1:] == ["chars/SimpleSkin.gltf", "RiggedSimple.gltf", "mocap/asf.bvh"]
    page.click("th:has-text('Name')")
    assert names() == sorted(names(), key=str.lower)
    page.fill("#filter", "rigged")
    assert names() == ["RiggedSimple.gltf"]


def test_a_jobs_sources_are_the_files_the_loader_reads_inside_the_models_folder(tmp_path):
    import struct

    from viewer.library.job import model_sources

    folder = tmp_path / "lib"
    (folder / "textures").mkdir(parents=True)
    (folder / "a.bin").write_bytes(b"buffer")
    (folder / "textures" / "skin map.png").write_bytes(b"image")
    (tmp_path / "outside.bin").write_bytes(b"not the model's")
    document = {"asset": {"version": "2.0"},
                "buffers": [{"uri": "a.bin"}, {"uri": "data:application/octet-stream;base64,AAAA"},
                            {"uri": "../outside.bin"}, {"uri": "missing.bin"}],
                "images": [{"uri": "textures/skin%20map.png"}]}
    (folder / "m.gltf").write_text(json.dumps(document))
    sources = model_sources(folder / "m.gltf")
    assert sources == {"m.gltf": (folder / "m.gltf").read_bytes(), "a.bin": b"buffer",
                       "textures/skin map.png": b"image"}
    # A .glb may name external files too: the worker needs them as the loader does.
    text = json.dumps({"asset": {"version": "2.0"}, "buffers": [{"uri": "a.bin"}]}).encode()
    text += b" " * (-len(text) % 4)
    glb = struct.pack("<4sII", b"glTF", 2, 20 + len(text)) + struct.pack("<II", len(text), 0x4E4F534A) + text
    (folder / "g.glb").write_bytes(glb)
    assert model_sources(folder / "g.glb") == {"g.glb": glb, "a.bin": b"buffer"}
    (folder / "mocap.bvh").write_text("HIERARCHY\n")
    assert model_sources(folder / "mocap.bvh") == {"mocap.bvh": b"HIERARCHY\n"}


def test_a_worker_keeps_no_gpu_copies_of_the_models_it_has_drawn(tmp_path):
    """One headless renderer serves every model of a batch worker: each model's GPU meshes are
    released when its pictures are written, so a long batch does not pile them up."""
    from samples import CESIUM_MAN, FOX

    from viewer.library import job
    from viewer.library.job import BatchOptions
    from viewer.loaders import load_model

    options = BatchOptions(size=(64, 64), gif_seconds=0.1)
    for index, path in enumerate((CESIUM_MAN, FOX)):
        scene = load_model(str(path))
        out = tmp_path / str(index)
        out.mkdir()
        assert job._render(scene, out, options)  # its clips' GIFs written
        assert (out / "thumb.png").stat().st_size > 0
        assert job._RENDERER.renderer._meshes == {}
