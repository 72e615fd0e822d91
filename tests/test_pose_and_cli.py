"""Pose files and the `boneviewer render` command, as a user runs them."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from viewer import ViewerError
from viewer.character import build_character
from viewer.editing.pose import apply_pose, load_pose, pose_of, save_pose


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "viewer.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def write(tmp_path, data, name="pose.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def turn(degrees):
    half = math.radians(degrees) / 2
    return [0.0, 0.0, math.sin(half), math.cos(half)]


def test_pose_file_turns_the_bone(tmp_path):
    scene = build_character()
    apply_pose(scene, write(tmp_path, {"bones": {"leftArm": {"rotation_quaternion": turn(75)}}}))
    arm = scene.find_bone("leftArm")
    np.testing.assert_allclose(arm.rotation_quaternion, turn(75), atol=1e-12)
    np.testing.assert_allclose(arm.position, [0.5, 1.5, 0.0], atol=1e-12)  # untouched parts stay


@pytest.mark.parametrize("content, message", [
    ({"bones": {"tail": {"position": [0, 0, 0]}}}, "unknown bone 'tail' .*body, leftArm, rightArm"),
    ({"bones": {"leftArm": {"position": [0, 0]}}}, "'leftArm' position: expected 3 numbers"),
    ({"bones": {"leftArm": {"position": [0, "a", 0]}}}, "expected 3 numbers"),
    ({"bones": {"leftArm": {"rotation_quaternion": [0, 0, 0, 0]}}}, "zero quaternion"),
    ({"bones": {"leftArm": {"rotation": [0, 0, 0]}}}, "unknown field 'rotation'"),
    ({"bones": {"leftArm": []}}, "expected an object"),
    ({"version": 7, "bones": {}}, "version 7 is not supported"),
    ({"pose": {}}, 'expected an object with a "bones" object'),
    ('{"bones": {"leftArm": {"position": [NaN, 0, 0]}}}', "NaN or infinity"),
    ('{"bones": {', "invalid JSON at line 1"),
])
def test_bad_pose_files_are_refused_and_change_nothing(tmp_path, content, message):
    scene = build_character()
    before = pose_of(scene)
    with pytest.raises(ViewerError, match=message):
        apply_pose(scene, write(tmp_path, content))
    assert pose_of(scene) == before


def test_a_bad_bone_later_in_the_file_leaves_earlier_bones_alone(tmp_path):
    scene = build_character()
    before = pose_of(scene)
    with pytest.raises(ViewerError, match="unknown bone 'nope'"):
        apply_pose(scene, write(tmp_path, {"bones": {"leftArm": {"rotation_quaternion": turn(40)},
                                                     "nope": {}}}))
    assert pose_of(scene) == before


def test_save_and_load_round_trip_and_atomic_save(tmp_path):
    scene = build_character()
    scene.find_bone("rightArm").rotation_quaternion = turn(-60)
    path = tmp_path / "saved.json"
    save_pose(path, scene)
    assert [p.name for p in tmp_path.iterdir()] == ["saved.json"]  # no temporary left behind
    loaded = load_pose(path)
    np.testing.assert_allclose(loaded["rightArm"]["rotation_quaternion"], turn(-60), atol=1e-12)
    fresh = build_character()
    apply_pose(fresh, path)
    assert pose_of(fresh) == pose_of(scene)
    # A save into a folder that does not exist fails clearly and leaves the old file intact.
    with pytest.raises(ViewerError, match="cannot write"):
        save_pose(tmp_path / "missing" / "x.json", scene)
    assert load_pose(path) == loaded


def test_render_command_writes_the_character(tmp_path):
    result = run("render", "--out", str(tmp_path / "a.png"), "--size", "200x150")
    assert result.returncode == 0, result.stderr
    assert "a.png" in result.stdout
    image = np.asarray(Image.open(tmp_path / "a.png"))
    assert image.shape == (150, 200, 4)
    assert len(np.unique(image.reshape(-1, 4), axis=0)) > 50  # a picture, not a flat fill


def test_render_command_pose_and_modes_agree(tmp_path):
    pose = write(tmp_path, {"bones": {"leftArm": {"rotation_quaternion": turn(75)}}})
    images = {}
    for name, flags in {"default": [], "cpu": ["--cpu-skinning"], "texture": ["--bone-texture"],
                        "rest": None}.items():
        out = tmp_path / f"{name}.png"
        args = ["render", "--out", str(out), "--size", "240x180"]
        args += [] if flags is None else ["--pose", str(pose), *flags]
        result = run(*args)
        assert result.returncode == 0, result.stderr
        images[name] = np.asarray(Image.open(out)).astype(int)

    def differing(a, b):
        return (np.abs(a - b).max(axis=2) > 24).mean()

    assert differing(images["cpu"], images["default"]) < 0.005
    assert differing(images["texture"], images["default"]) < 0.005
    assert differing(images["rest"], images["default"]) > 0.01  # the pose changed the picture


@pytest.mark.parametrize("args, message", [
    (["render", "--out", "{tmp}/a.png", "--pose", "{tmp}/missing.json"], "cannot read it"),
    (["render", "--out", "{tmp}/a.png", "--pose", "{tmp}/bad.json"], "unknown bone 'tail'"),
    (["render", "--out", "{tmp}/a.png", "--size", "big"], "expected WIDTHxHEIGHT"),
    (["render", "--out", "{tmp}/nowhere/a.png"], "does not exist"),
    (["render", "--out", "{tmp}/a.jpg"], "must be a .png"),
    (["render", "{tmp}/model.xyz", "--out", "{tmp}/a.png"], "no such file"),
])
def test_render_command_errors_are_one_line_and_exit_2(tmp_path, args, message):
    write(tmp_path, {"bones": {"tail": {}}}, "bad.json")
    result = run(*[a.format(tmp=tmp_path) for a in args])
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "a.png").exists()


def test_default_command_without_display_renders_a_png(tmp_path):
    env_run = subprocess.run([sys.executable, "-m", "viewer.cli"], capture_output=True, text=True, cwd=tmp_path,
                             timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert env_run.returncode == 0, env_run.stderr
    assert "no display" in env_run.stdout and str(tmp_path / "boneviewer.png") in env_run.stdout
    assert (tmp_path / "boneviewer.png").exists()


def test_a_crash_while_saving_keeps_the_previous_pose(tmp_path, monkeypatch):
    import viewer.editing.pose as pose_module

    scene = build_character()
    path = tmp_path / "pose.json"
    save_pose(path, scene)
    previous = path.read_text()
    scene.find_bone("leftArm").rotation_quaternion = turn(10)

    def crash(data, handle, **kwargs):
        handle.write('{"version": 1, "bones": {"leftA')  # half written, then the process "dies"
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pose_module.json, "dump", crash)
    with pytest.raises(ViewerError, match="cannot write it: No space left on device"):
        save_pose(path, scene)
    assert path.read_text() == previous
    assert [p.name for p in tmp_path.iterdir()] == ["pose.json"]
