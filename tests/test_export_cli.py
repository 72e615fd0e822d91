"""`boneviewer export`: a posed model, a sampled clip or a recorded script to glTF."""

from pathlib import Path

import numpy as np
import pytest

from samples import CESIUM_MAN, FOX
from viewer import load_gltf, load_model
from viewer.cli import main

ROOT = Path(__file__).resolve().parent.parent
LEFT_ARM_45 = ROOT / "assets" / "poses" / "left-arm-45.json"
WAVE = '''import math


def setup(app):
    app.calls = 0


def update(app, t, dt):
    app.calls += 1
    angle = 0.5 * math.sin(3 * t)
    app.scene.find_bone("leftArm").get_pose_target().rotation_quaternion = [0, 0, math.sin(angle / 2), math.cos(angle / 2)]
'''


def world(scene):
    scene.prepare()
    return np.concatenate([mesh.skinned()[0] for mesh in scene.meshes])


def export(*args) -> int:
    return main(["export", *map(str, args)])


def test_the_built_in_character_with_a_pose(tmp_path, capsys):
    out = tmp_path / "posed.glb"
    assert export("--pose", LEFT_ARM_45, "--out", out) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    expected = load_model(None)
    from viewer.editing.pose import apply_pose, load_pose

    apply_pose(expected, {"bones": load_pose(LEFT_ARM_45)})
    np.testing.assert_allclose(world(load_gltf(out)), world(expected), atol=1e-6 * 3)


def test_a_clip_sampled_at_a_time_as_gltf(tmp_path):
    out = tmp_path / "fox.gltf"
    assert export(FOX, "--animation", "Walk", "--time", 0.3, "--out", out) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fox.bin", "fox.gltf", "fox_image0.png"]
    expected = load_gltf(FOX)
    expected.find_animation("Walk").apply(0.3)
    size = float(np.linalg.norm(np.subtract(*expected.rest_bounds)))
    assert np.abs(world(load_gltf(out)) - world(expected)).max() <= 1e-6 * size


def test_record_keys_a_scripted_motion_into_a_clip(tmp_path, capsys):
    script = tmp_path / "wave.py"
    script.write_text(WAVE)
    out = tmp_path / "wave.glb"
    assert export("--script", script, "--record", "1:2:0.25", "--clip", "Wave", "--out", out) == 0
    written = load_gltf(out)
    clip = written.find_animation("Wave")
    np.testing.assert_allclose(clip.key_times(), [0, 0.25, 0.5, 0.75, 1.0], atol=1e-7)
    arm = written.find_bone("leftArm").get_pose_target()
    for key, t in zip(clip.key_times(), (1, 1.25, 1.5, 1.75, 2)):
        clip.apply(key)
        angle = 0.5 * np.sin(3 * t)
        np.testing.assert_allclose(arm.rotation_quaternion, [0, 0, np.sin(angle / 2), np.cos(angle / 2)], atol=1e-7)


def test_apply_pose_as_bind_from_the_command_line(tmp_path):
    out = tmp_path / "bind.glb"
    assert export(CESIUM_MAN, "--time", 0.7, "--apply-pose-as-bind", "--out", out) == 0
    expected = load_gltf(CESIUM_MAN)
    expected.animations[0].apply(0.7)
    baked = load_gltf(out)
    size = float(np.linalg.norm(np.subtract(*expected.rest_bounds)))
    assert np.abs(world(baked) - world(expected)).max() <= 1e-6 * size
    skeleton = baked.skeletons[0]
    skeleton.prepare()
    np.testing.assert_allclose(skeleton.bones[1].get_final_matrix(), np.eye(4), atol=1e-5)


def test_the_input_model_is_kept_without_force(tmp_path, capsys):
    model = tmp_path / "fox.glb"
    model.write_bytes(FOX.read_bytes())
    assert export(model, "--out", model) == 2
    assert "--force" in capsys.readouterr().err
    assert model.read_bytes() == FOX.read_bytes()
    assert export(model, "--time", 0.5, "--out", model, "--force") == 0
    assert model.read_bytes() != FOX.read_bytes()
    load_gltf(model)


@pytest.mark.parametrize("args, message", [
    ([], "give --out"),
    (["--out", "x.png"], "must be a .glb or .gltf"),
    (["--out", "missing/x.glb"], "folder missing does not exist"),
    (["--record", "0:1:0.5", "--out", "x.glb"], "give --script"),
    (["--script", "s.py", "--record", "0:1:0.5", "--out", "x.glb"], "give its name with --clip"),
    (["--clip", "A", "--out", "x.glb"], "give --record"),
    (["--script", "nope.py", "--out", "x.glb"], "no such file"),
    ([FOX, "--animation", "Fly", "--out", "x.glb"], "no animation named 'Fly' (this model has 3 animations"),
])
def test_bad_input_is_one_error_line(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.py").write_text(WAVE)
    assert export(*args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("boneviewer: error: ") and message in err[0], err
    assert not (tmp_path / "x.glb").exists()


def test_a_failing_script_writes_nothing(tmp_path, capsys):
    script = tmp_path / "bad.py"
    script.write_text("def update(app, t, dt):\n    raise RuntimeError('no')\n")
    out = tmp_path / "x.glb"
    assert export("--script", script, "--record", "0:1:0.5", "--clip", "A", "--out", out) == 1
    assert "RuntimeError: no" in capsys.readouterr().err
    assert not out.exists()


def test_the_command_in_a_subprocess(tmp_path, cli):
    result = cli("export", CESIUM_MAN, "--out", tmp_path / "cm.glb")
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stdout
    assert len(load_gltf(tmp_path / "cm.glb").animations) == 1
