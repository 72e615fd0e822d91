"""`boneviewer check --compare A B` (issue 44, item 4): a file against its own export differs by
about nothing; against a copy with one bone's clip turned, the turned bone leads, by the angle
it was turned; bad input is one line and exit 2."""

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
