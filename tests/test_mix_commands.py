"""`render --mix`, `export --mix` (and `--bake`), `synth --mix`: a mix file played by the commands;
the bake's glTF (validator-clean, read back it is the live mix at every baked frame) and USD;
bad mix files and conflicting options: one line, exit 2, nothing written, no GL work."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from viewer.cli import main
from viewer.loaders import load_model
from viewer.motion import bake
from viewer.motion.playback import MixPlayback

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
ROBOT = DATA / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
MIX = DATA / "mix" / "robot_walk.mix.json"
BAKE_REFERENCE = DATA / "mix" / "bake_reference.json"


def pose(scene):
    """Every node's local TRS and every morph weight, as they are now."""
    rows = [np.concatenate([n.position, n.rotation_quaternion, n.scaling]) for n in scene.nodes]
    return np.array(rows), [np.array(m.morph_weights) for m in scene.morph_meshes]


def size_of(scene) -> float:
    return float(np.linalg.norm(scene.rest_bounds[1] - scene.rest_bounds[0]))


def same_pose(a, b, size, tolerance=1e-6):
    """Translations within tolerance * size; rotations (sign-free) and scales within tolerance."""
    (ra, ma), (rb, mb) = a, b
    assert np.abs(ra[:, :3] - rb[:, :3]).max() <= tolerance * size
    qa, qb = ra[:, 3:7], rb[:, 3:7]
    apart = np.minimum(np.abs(qa - qb).max(axis=1), np.abs(qa + qb).max(axis=1))  # q and -q: one rotation
    assert apart.max() <= tolerance
    assert np.abs(ra[:, 7:] - rb[:, 7:]).max() <= tolerance
    for x, y in zip(ma, mb):
        assert np.abs(x - y).max(initial=0.0) <= tolerance


def mixed_scene():
    scene = load_model(str(ROBOT))
    scene.mixer.load(MIX)
    return scene


def live(scene, start, fps, frames):
    """The mix as it plays: mixer.time = start, then update(1 / fps) per frame."""
    mixer, poses = scene.mixer, []
    mixer.time = start
    for k in range(frames):
        if k:
            mixer.update(1.0 / fps)
        poses.append(pose(scene))
    return poses


# --- the mix at the commands' times --------------------------------------------------------------
def test_a_sequence_shows_the_frames_the_bake_keys_in_any_order():
    scene = mixed_scene()
    expected = live(mixed_scene(), 0.25, 8, 9)
    times = [0.25 + k / 8 for k in range(9)]
    playback = MixPlayback(scene.mixer, times)
    for k in (8, 0, 3, 4, 4, 7, 1, 8):  # the camera's spread first, then in order, then back
        playback.pose_at(times[k])
        same_pose(pose(scene), expected[k], size_of(scene), 1e-7)


def test_render_at_a_time_draws_the_mix(tmp_path):
    """render --mix --time 0.4 draws what render --rest --pose draws for the mix's pose at 0.4
    (its pose file written from the mixer itself), not the first clip."""
    from viewer.editing.pose import save_pose
    from PIL import Image

    scene = mixed_scene()
    scene.mixer.time = 0.4
    pose_file = tmp_path / "at04.json"
    save_pose(pose_file, scene)
    camera = ["--yaw", "20", "--pitch", "5", "--size", "160x120"]
    mixed, posed, first = tmp_path / "mixed.png", tmp_path / "posed.png", tmp_path / "first.png"
    assert main(["render", str(ROBOT), "--mix", str(MIX), "--time", "0.4", "--out", str(mixed), *camera]) == 0
    assert main(["render", str(ROBOT), "--rest", "--pose", str(pose_file), "--out", str(posed), *camera]) == 0
    assert main(["render", str(ROBOT), "--time", "0.4", "--out", str(first), *camera]) == 0
    a, b, c = (np.asarray(Image.open(p), dtype=np.float64) for p in (mixed, posed, first))
    assert np.abs(a - b).mean() < 0.5  # the same pose drawn
    assert np.abs(a - c).mean() > 2.0  # not the first clip (Dance)


def test_render_frames_all_plays_the_whole_mix(tmp_path, capsys):
    out = tmp_path / "frames"
    assert main(["render", str(ROBOT), "--mix", str(MIX), "--frames", "all", "--fps", "4", "--out-dir", str(out),
                 "--size", "64x48"]) == 0
    mixer = mixed_scene().mixer
    longest = max(a.clip.duration / abs(a.speed) for a in mixer.running())  # Running at half speed
    frames = sorted(out.glob("frame_*.png"))
    assert len(frames) == int(np.floor(longest * 4 + 1e-6)) + 1 + (1 if longest * 4 % 1 > 1e-6 else 0)
    assert frames[0].read_bytes() != frames[2].read_bytes()  # it moves


def test_export_poses_the_model_as_the_mix_is_at_time(tmp_path):
    out = tmp_path / "posed.glb"
    assert main(["export", str(ROBOT), "--mix", str(MIX), "--time", "0.3", "--out", str(out)]) == 0
    expected = mixed_scene()
    expected.mixer.time = 0.3
    back = load_model(str(out))
    assert [c.name for c in back.animations] == [c.name for c in expected.animations]  # the clips as they are
    same_pose(pose(back), pose(expected), size_of(expected), 1e-6)


def test_export_bake_reads_back_as_the_live_mix_at_every_frame(tmp_path, capsys):
    out = tmp_path / "baked.glb"
    assert main(["export", str(ROBOT), "--mix", str(MIX), "--bake", "--fps", "20", "--start", "0.3", "--end", "1.3",
                 "--out", str(out)]) == 0
    assert "1 clip: 'mix', the mix baked into 21 frames at 20 fps" in capsys.readouterr().out
    back = load_model(str(out))
    assert [c.name for c in back.animations] == ["mix"]  # the model's 14 clips replaced by the bake
    expected = live(mixed_scene(), 0.3, 20, 21)
    size = size_of(back)
    same_pose(pose(back), expected[0], size)  # the file at rest shows the mix at --start
    clip = back.animations[0]
    assert clip.duration == pytest.approx(1.0)
    for k in range(21):
        clip.apply(k / 20)
        same_pose(pose(back), expected[k], size)


def test_export_bake_names_the_clip_and_plays_to_the_longest_clip(tmp_path):
    out = tmp_path / "baked.gltf"
    assert main(["export", str(ROBOT), "--mix", str(MIX), "--bake", "--clip", "walk mixed", "--out", str(out)]) == 0
    back = load_model(str(out))
    assert [c.name for c in back.animations] == ["walk mixed"]
    mixer = mixed_scene().mixer
    longest = max(a.clip.duration / abs(a.speed) for a in mixer.running())
    assert back.animations[0].duration == pytest.approx(np.floor(longest * 30 + 1e-9) / 30, abs=1e-6)


def test_export_bake_to_usd_reads_back_as_the_mix(tmp_path):
    out = tmp_path / "baked.usdc"
    assert main(["export", str(ROBOT), "--mix", str(MIX), "--bake", "--fps", "10", "--end", "0.5",
                 "--out", str(out)]) == 0
    back = load_model(str(out))
    assert [c.name for c in back.animations] == ["mix"]
    scene = mixed_scene()
    mixer, size = scene.mixer, size_of(scene)
    clip = back.animations[0]
    mixer.time = 0.0
    for k in range(6):
        if k:
            mixer.update(0.1)
        clip.apply(k / 10)
        theirs_by_name = {bone.name: bone for bone in back.skeletons[0].bones}
        assert len(theirs_by_name) == len(scene.skeletons[0].bones)
        for mine in scene.skeletons[0].bones:
            a, b = mine.get_pose_target(), theirs_by_name[mine.name].get_pose_target()
            qa, qb = np.array(a.rotation_quaternion), np.array(b.rotation_quaternion)
            assert min(np.abs(qa - qb).max(), np.abs(qa + qb).max()) <= 1e-5, (k, mine.name)
            assert np.abs(np.array(a.position) - b.position).max() <= 1e-5 * size, (k, mine.name)


def test_the_baked_file_is_what_the_validator_judged(tmp_path):
    """tests/data/mix/bake_reference.json (tests/record_mix_bake_reference.py): the Khronos
    glTF-Validator's report on the baked file, and what that file held; baked again, the file
    is the same within the written-references' tolerance, and the validator found no error."""
    from written_numbers import differences, fingerprint

    reference = json.loads(BAKE_REFERENCE.read_text())
    out = tmp_path / "baked.glb"
    assert main(["export", str(ROBOT), "--mix", str(MIX), *reference["options"], "--out", str(out)]) == 0
    assert differences(reference["fingerprint"], fingerprint(out)) == []
    assert reference["validator"]["errors"] == []


# --- synth --------------------------------------------------------------------------------------
def test_synth_draws_times_of_the_mix(tmp_path, capsys):
    out, mix = tmp_path / "set", tmp_path / "robot_walk.mix.json"
    mix.write_bytes(MIX.read_bytes())
    command = ["synth", str(ROBOT), "--mix", str(mix), "--out", str(out), "--count", "3", "--size", "48x48",
               "--workers", "1", "--min-visible", "0", "--min-area", "0"]
    assert main(command) == 0
    annotations = json.loads((out / "annotations.json").read_text())
    mixer = mixed_scene().mixer
    longest = max(a.clip.duration / abs(a.speed) for a in mixer.running())
    for image in annotations["images"]:
        assert image["clip"] == "mix robot_walk.mix.json"
        assert 0.0 <= image["time"] <= longest
    assert json.loads((out / "synth.json").read_text())["options"]["--mix"] == str(mix.resolve())
    # another mix in the same place is another run: refused, naming the file
    data = json.loads(mix.read_text())
    data["actions"][1]["weight"] = 0.9
    mix.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(command) == 2
    assert "robot_walk.mix.json changed" in capsys.readouterr().err


def test_synth_keypoints_follow_the_mix():
    """The worker's pose for a mix draw is the mix at the drawn time (not a clip)."""
    from viewer.synth.job import Catalogue, ClipEntry, Draw, LoadedModel, ModelEntry

    mix = json.loads(MIX.read_text())
    entry = ModelEntry(str(ROBOT), ROBOT.name, (ClipEntry("mix", None, None, 1.9, mix=json.dumps(mix)),), 1, 1.0, 0)
    catalogue = Catalogue((entry,), 1.0)
    loaded = LoadedModel(entry, catalogue)
    loaded.pose(Draw(0, 0, 0.7, 0, 0, 0.5, (0, 0), (0, 1, 0), None, (0, 0), 0, 0, 1), catalogue)
    expected = mixed_scene()
    expected.mixer.time = 0.7
    same_pose(pose(loaded.scene), pose(expected), size_of(expected), 1e-7)


# --- bad input -----------------------------------------------------------------------------------
def bad_mix(tmp_path, change) -> Path:
    data = json.loads(MIX.read_text())
    change(data)
    path = tmp_path / "bad.mix.json"
    path.write_text(json.dumps(data))
    return path


def _unknown_clip(d):
    d["actions"][0]["clip"] = "Moonwalk"


def _unknown_bone(d):
    d["layers"][0]["tracks"][0]["target"] = "Tail"


def _negative_weight(d):
    d["actions"][1]["weight"] = -1


def _wrong_shape(d):
    d["layers"] = {"Tweaks": 1}


@pytest.mark.parametrize("change, message", [
    (_unknown_clip, "unknown clip 'Moonwalk'"),
    (_unknown_bone, "Tail"),
    (_negative_weight, "weight must be >= 0"),
    (_wrong_shape, "'layers' must be a list"),
], ids=["unknown clip", "unknown bone", "negative weight", "wrong shape"])
@pytest.mark.parametrize("command", ["render", "export"])
def test_a_bad_mix_is_one_line_before_any_gl_work(tmp_path, capsys, monkeypatch, change, message, command):
    import viewer.render.headless as headless

    def no_gl(*args, **kwargs):
        raise AssertionError("GL work started")

    monkeypatch.setattr(headless, "HeadlessRenderer", no_gl)
    path = bad_mix(tmp_path, change)
    out = tmp_path / ("out.png" if command == "render" else "out.glb")
    assert main([command, str(ROBOT), "--mix", str(path), "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"boneviewer: error: --mix {path}: ") and message in error
    assert not out.exists()


@pytest.mark.parametrize("args, message", [
    (["render", "--mix", "MISSING", "--out", "OUT.png"], "--mix MISSING: No such file"),
    (["render", "--mix", "NOTJSON", "--out", "OUT.png"], "not JSON"),
    (["export", "--mix", "POSE", "--out", "OUT.glb"], "not a mix file"),
    (["render", "--mix", "MIX", "--animation", "Walking", "--out", "OUT.png"], "leave out --animation"),
    (["render", "--mix", "MIX", "--rest", "--out", "OUT.png"], "leave out --rest"),
    (["render", "--mix", "MIX", "--script", "SCRIPT", "--out", "OUT.png"], "--mix and --script"),
    (["export", "--mix", "MIX", "--script", "SCRIPT", "--out", "OUT.glb"], "--mix and --script"),
    (["export", "--bake", "--out", "OUT.glb"], "--bake writes a mix as one clip: give --mix"),
    (["export", "--mix", "MIX", "--fps", "10", "--out", "OUT.glb"], "--fps goes with --bake"),
    (["export", "--mix", "MIX", "--bake", "--time", "1", "--out", "OUT.glb"], "leave out --time"),
    (["export", "--mix", "MIX", "--bake", "--start", "2", "--end", "1", "--out", "OUT.glb"], "before --start"),
    (["synth", "--mix", "MIX", "--motion", "BVH", "--out", "DIR", "--count", "1"], "leave out --motion"),
    (["synth", "--mix", "NOTJSON", "--out", "DIR", "--count", "1"], "not JSON"),
    (["synth", "--mix", "MISSING", "--out", "DIR", "--count", "1"], "--mix MISSING: No such file"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_options_are_one_line_and_exit_2(tmp_path, args, message):
    files = {"MISSING": tmp_path / "missing.json", "NOTJSON": tmp_path / "notjson.json", "MIX": MIX,
             "POSE": ROOT / "assets" / "poses" / "left-arm-45.json", "SCRIPT": tmp_path / "script.py",
             "BVH": DATA / "bvh" / "wave_hello.bvh", "OUT.png": tmp_path / "out.png", "OUT.glb": tmp_path / "out.glb", "DIR": tmp_path / "set"}
    files["NOTJSON"].write_text("{mix")
    files["SCRIPT"].write_text("def update(app, t, dt):\n    pass\n")
    before = MIX.read_bytes()
    argv = [args[0], str(ROBOT)] + [str(files.get(word, word)) for word in args[1:]]
    result = subprocess.run([sys.executable, "-m", "viewer", *argv], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if not line.startswith("boneviewer: warning")]
    assert len(lines) == 1 and lines[0].startswith("boneviewer: error: "), result.stderr
    assert message.replace("MISSING", str(files["MISSING"])) in lines[0]
    assert not any(p.exists() for p in (files["OUT.png"], files["OUT.glb"], files["DIR"]))
    assert MIX.read_bytes() == before


def test_no_output_over_the_mix_file():
    import argparse

    from viewer.cli.common import input_files

    args = argparse.Namespace(model=str(ROBOT), mix=MIX)
    assert input_files(args)[MIX] == "the --mix file"


def test_a_motion_clip_is_one_the_mix_can_name(tmp_path):
    """--motion's retargeted clip is one of the scene's clips: a mix naming it plays it."""
    bvh = DATA / "bvh" / "wave_hello.bvh"
    scene = load_model(str(ROBOT))
    from viewer.model.retarget import retarget

    name = retarget(load_model(str(bvh)), scene).name
    data = json.loads(MIX.read_text())
    data["actions"][2]["clip"] = name  # the capture in place of Wave
    path = tmp_path / "motion.mix.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "out.glb"
    assert main(["export", str(ROBOT), "--motion", str(bvh), "--mix", str(path), "--time", "0.5",
                 "--out", str(out)]) == 0
    expected = load_model(str(ROBOT))
    retarget(load_model(str(bvh)), expected)
    expected.mixer.load(path)
    expected.mixer.time = 0.5
    same_pose(pose(load_model(str(out))), pose(expected), size_of(expected), 1e-6)
    without = tmp_path / "without.glb"
    assert main(["export", str(ROBOT), "--mix", str(path), "--out", str(without)]) == 2


def test_the_mixing_page_commands_run_in_order(tmp_path, cli):
    """docs/mixing.md's block of commands, in one folder as the page gives them (synth with 4
    images instead of 100): each writes what it says, and the baked file plays one clip, `mix`."""
    import re
    import shlex

    from PIL import Image

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "mixing.md").read_text()
    blocks = [block for block in re.findall(r"```sh\n(.*?)```", page, re.S) if "--mix" in block]
    assert len(blocks) == 1
    (tmp_path / "tests").symlink_to(root / "tests")
    for line in blocks[0].splitlines():
        words = shlex.split(line)[1:]
        if words[0] == "synth":
            words += ["--count", "4"]
        result = cli(*words, cwd=tmp_path, timeout=300)
        assert result.returncode == 0, (line, result.stderr[-2000:])
    with Image.open(tmp_path / "mixed.png") as still:
        pixels = np.asarray(still.convert("RGB")).astype(int)
    assert (np.abs(pixels - pixels[0, 0]).max(axis=2) > 40).mean() > 0.05  # the robot is drawn
    with Image.open(tmp_path / "mixed.gif") as gif:
        assert gif.n_frames > 10
    baked = load_model(tmp_path / "baked.glb")
    assert [clip.name for clip in baked.animations] == ["mix"]
    assert len(list((tmp_path / "robot-set").rglob("*.png"))) >= 4
