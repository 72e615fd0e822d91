"""Spring bones baked into a mix's clip (`export --mix FILE --bake`, `viewer.bake(scene, springs=...)`):
read back and played with no springs, the clip is what render evaluates with them at every baked
frame (the springs from rest at mix time 0, stepped at 1/60 s: --start is a pre-roll); one picture
per mix time in render (one --time or a sequence), synth and the bake; with --no-springs it is the
mix alone; the file holds no live springs (VRMC_springBone dropped); the Khronos glTF-Validator
finds no error in it (tests/data/mix/bake_springs_reference.json); bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import springs_cases as sc
from make_vrm_cases import read_glb
from samples import FOX, ROBOT
from viewer.cli import main
from viewer.errors import ViewerError
from viewer.loaders import load_model
from viewer.motion import bake

DATA = Path(__file__).resolve().parent / "data"
FOX_MIX = DATA / "mix" / "fox_walk.mix.json"
ROBOT_MIX = DATA / "mix" / "robot_walk.mix.json"
REFERENCE = DATA / "mix" / "bake_springs_reference.json"
STEP = 1.0 / 60.0
FPS, START, END = 20, 0.25, 1.25  # frame k at START + 3k steps of 1/60 s
FRAMES = 21


def world(scene) -> np.ndarray:
    """Every node's world position."""
    return np.array([node.get_world_matrix()[3, :3] for node in scene.nodes])


def expected_frames(scene, swing: bool) -> list[np.ndarray]:
    """What render evaluates at each baked frame, written out on its own. With springs: the mix
    at mix time 0 (mixer.time = 0), the springs reset there; then per 1/60 s step the mixer
    moved on and the springs stepped, START (15 steps) a pre-roll; frame k is every node after
    15 + 3k steps (FPS 20 is 3 steps a frame). Without springs: mixer.time = START, then
    update(1 / FPS) per frame, as the bake runs the mix."""
    mixer, springs, frames = scene.mixer, scene.springs, []
    if not swing:
        mixer.time = START
        for k in range(FRAMES):
            if k:
                mixer.update(1.0 / FPS)
            frames.append(world(scene))
        return frames
    mixer.time = 0.0
    springs.reset()
    first = round(START / STEP)
    for step in range(1, first + 3 * (FRAMES - 1) + 1):
        mixer.update(STEP)
        springs.update(STEP)
        if step >= first and (step - first) % 3 == 0:
            frames.append(world(scene))
    return frames


def played(path: Path) -> tuple[object, list[np.ndarray]]:
    """The exported file read back, its clip played at every baked frame (no springs in it)."""
    back = load_model(str(path))
    assert len(back.springs) == 0  # no live springs: nothing swings the baked joints again
    (clip,) = back.animations
    frames = []
    for k in range(FRAMES):
        clip.apply(k / FPS)
        frames.append(world(back))
    return back, frames


def fox_scene(chain: bool = True):
    scene = load_model(str(FOX))
    if chain:
        scene.springs.add_chain(**sc.FOX_TAIL_CHAIN)
    scene.mixer.load(FOX_MIX)
    return scene


def robot_scene(path: Path):
    scene = load_model(str(path))
    scene.mixer.load(ROBOT_MIX)
    return scene


def export(*args) -> int:
    return main(["export", *map(str, args)])


BAKE = ["--bake", "--fps", FPS, "--start", START, "--end", END]


# --- the baked clip is what render evaluates ----------------------------------------------------
def test_fox_tail_baked_is_the_springs_render_evaluates(tmp_path, capsys):
    out = tmp_path / "fox.glb"
    assert export(FOX, "--mix", FOX_MIX, "--spring-chain", sc.FOX_TAIL, *BAKE, "--out", out) == 0
    said = capsys.readouterr().out
    assert "the mix and its springs (1 chain, 3 joints) baked into 21 frames at 20 fps; no live springs" in said
    back, frames = played(out)
    scene = fox_scene()
    expected = expected_frames(scene, swing=True)
    assert [n.name for n in back.nodes] == [n.name for n in scene.nodes]
    size = sc.size(scene)
    for k in range(FRAMES):
        np.testing.assert_allclose(frames[k], expected[k], rtol=0, atol=1e-6 * size, err_msg=f"frame {k}")
    alone = expected_frames(fox_scene(chain=False), swing=False)
    assert max(np.abs(f - a).max() for f, a in zip(frames, alone)) > 0.02 * size  # the tail swung
    # the file at rest is the clip's first frame as baked: the springs swung up to --start
    np.testing.assert_allclose(world(load_model(str(out))), expected[0], rtol=0, atol=1e-6 * size)


def test_fox_tail_with_no_springs_is_the_mix_alone(tmp_path):
    out = tmp_path / "fox.glb"
    assert export(FOX, "--mix", FOX_MIX, "--spring-chain", sc.FOX_TAIL, "--no-springs", *BAKE, "--out", out) == 0
    _, frames = played(out)
    scene = fox_scene(chain=False)
    expected = expected_frames(scene, swing=False)
    for k in range(FRAMES):
        np.testing.assert_allclose(frames[k], expected[k], rtol=0, atol=1e-6 * sc.size(scene), err_msg=f"frame {k}")


def test_a_files_springs_are_baked_and_not_written_again(tmp_path, capsys):
    """RobotExpressive with VRMC_springBone in its file (a head chain in the hips' space with a
    torso collider, a finger): baked by default; the written file has no VRMC_springBone, in
    its extensions or extensionsUsed, and no warning says it was dropped."""
    source = sc.robot_with_springs(tmp_path)
    out = tmp_path / "robot.glb"
    assert export(source, "--mix", ROBOT_MIX, *BAKE, "--out", out) == 0
    captured = capsys.readouterr()
    assert "its springs (2 chains, 4 joints)" in captured.out and "no live springs" in captured.out
    assert "VRMC_springBone" not in captured.err
    document = read_glb(out)[0]
    assert "VRMC_springBone" not in document.get("extensions", {})
    assert "VRMC_springBone" not in document.get("extensionsUsed", [])
    back, frames = played(out)
    scene = robot_scene(source)
    expected = expected_frames(scene, swing=True)
    size = sc.size(scene)
    for k in range(FRAMES):
        np.testing.assert_allclose(frames[k], expected[k], rtol=0, atol=1e-6 * size, err_msg=f"frame {k}")
    plain = robot_scene(ROBOT)
    alone = expected_frames(plain, swing=False)
    assert max(np.abs(f - a).max() for f, a in zip(frames, alone)) > 0.01 * size  # the head swung

    off = tmp_path / "off.glb"
    assert export(source, "--mix", ROBOT_MIX, *BAKE, "--no-springs", "--out", off) == 0
    assert "no live springs" not in capsys.readouterr().out
    _, frames = played(off)
    for k in range(FRAMES):
        np.testing.assert_allclose(frames[k], alone[k], rtol=0, atol=1e-6 * size, err_msg=f"frame {k}")


def pngs(folder: Path) -> list[np.ndarray]:
    from PIL import Image

    return [np.asarray(Image.open(p).convert("RGB"), dtype=np.int16) for p in sorted(folder.glob("*.png"))]


def same_picture(a: np.ndarray, b: np.ndarray) -> bool:
    return (np.abs(a - b).max(axis=2) > 24).sum() <= 3  # the rasteriser's tolerance: edges may move a pixel


def test_render_draws_the_baked_clip(tmp_path):
    """One picture per mix time, from rest at mix time 0: render --mix --time 1 (one picture), the
    frame at 1 of a render --mix sequence from 0, and the clip baked with --start 0.25 read back
    and drawn with no springs at 0.75 are the same picture; the baked clip is every frame of the
    sequence from 0.25 on. One fixed camera (a sequence frames itself on all its poses)."""
    out = tmp_path / "fox.glb"
    assert export(FOX, "--mix", FOX_MIX, "--spring-chain", sc.FOX_TAIL, *BAKE, "--out", out) == 0
    common = ["--size", "96x72", "--no-grid", "--yaw", "90", "--target", "0,40,-10", "--distance", "320"]
    live = ["render", str(FOX), "--mix", str(FOX_MIX), "--spring-chain", sc.FOX_TAIL]
    assert main([*live, "--frames", "0:1.25:0.25", "--out-dir", str(tmp_path / "live"), *common]) == 0
    (tmp_path / "one").mkdir()
    assert main([*live, "--time", "1", "--out", str(tmp_path / "one" / "at1.png"), *common]) == 0
    assert main(["render", str(out), "--animation", "mix", "--frames", "0:1:0.25", "--out-dir",
                 str(tmp_path / "baked"), *common]) == 0
    assert main(["render", str(FOX), "--mix", str(FOX_MIX), "--frames", "0:1.25:0.25",
                 "--out-dir", str(tmp_path / "still"), *common]) == 0
    live, baked, still = pngs(tmp_path / "live"), pngs(tmp_path / "baked"), pngs(tmp_path / "still")
    (one,) = pngs(tmp_path / "one")
    assert len(live) == 6 and len(baked) == 5
    for k, (a, b) in enumerate(zip(live[1:], baked)):
        assert same_picture(a, b), f"mix time {0.25 + k / 4:g}"
    assert same_picture(one, live[4]) and same_picture(one, baked[3])  # mix time 1
    assert (np.abs(live[4] - still[4]).max(axis=2) > 40).sum() > 20  # the tail swung elsewhere


def test_a_mix_time_is_one_pose_in_any_order():
    """viewer.motion.playback.mix_with_springs, what render --mix, synth and the bake pose with:
    times asked for out of order (the camera's spread first, then a sequence) give the pose a
    fresh one gives at each time."""
    from viewer.motion.playback import mix_with_springs

    scene = fox_scene()
    pose_at = mix_with_springs(scene)
    seen = {}
    for time in (1.25, 0.0, 0.6, 0.25, 0.5, 1.0, 1.25, 0.5):
        pose_at(time)
        seen.setdefault(time, []).append(world(scene))
    size = sc.size(scene)
    for time, poses in seen.items():
        fresh = fox_scene()
        mix_with_springs(fresh)(time)
        for pose in poses:
            np.testing.assert_allclose(pose, world(fresh), rtol=0, atol=1e-9 * size, err_msg=f"time {time:g}")


def test_synth_draws_the_picture_render_draws(tmp_path):
    """synth's worker poses a mix draw at 0.75 as render --mix --time 0.75 draws it (RobotExpressive
    with its file's springs, Running at half speed in the mix): every node as the mix played
    from 0 with the springs stepped from rest there (within 1e-6 of the model's size), and the
    pose written out and drawn with no springs is render's picture."""
    from viewer.editing.pose import save_pose
    from viewer.synth.job import Catalogue, ClipEntry, Draw, LoadedModel, ModelEntry

    source = sc.robot_with_springs(tmp_path)
    entry = ModelEntry(str(source), source.name, (ClipEntry("mix", None, None, 1.9, mix=ROBOT_MIX.read_text()),),
                       1, 1.0, 0)
    catalogue = Catalogue((entry,), 1.0)
    loaded = LoadedModel(entry, catalogue)
    assert len(loaded.scene.springs) == 4
    loaded.pose(Draw(0, 0, 0.75, 0, 0, 0.5, (0, 0), (0, 1, 0), None, (0, 0), 0, 0, 1), catalogue)
    scene = robot_scene(source)
    scene.mixer.time = 0.0
    scene.springs.reset()
    for _ in range(45):  # 0.75 s of 1/60 s steps
        scene.mixer.update(STEP)
        scene.springs.update(STEP)
    np.testing.assert_allclose(world(loaded.scene), world(scene), rtol=0, atol=1e-6 * sc.size(scene))
    posed = tmp_path / "synth.pose.json"
    save_pose(posed, loaded.scene)
    common = ["--size", "96x96", "--no-grid", "--yaw", "30", "--target", "0,2.2,0", "--distance", "9"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert main(["render", str(source), "--mix", str(ROBOT_MIX), "--time", "0.75", "--out",
                 str(tmp_path / "a" / "render.png"), *common]) == 0
    assert main(["render", str(ROBOT), "--rest", "--pose", str(posed), "--out", str(tmp_path / "b" / "synth.png"),
                 *common]) == 0
    (a,), (b,) = pngs(tmp_path / "a"), pngs(tmp_path / "b")
    assert same_picture(a, b)


# --- from code ----------------------------------------------------------------------------------
def test_bake_from_code_takes_the_same_choice():
    scene = fox_scene()
    joints = [j.bone for j in scene.springs.joints]
    tails = [(np.array(j.tail), np.array(j.prev)) for j in scene.springs.joints]
    pose = np.array([n.rotation_quaternion for n in scene.nodes])
    clock = scene.mixer.clock
    swung = bake(scene, fps=FPS, start=START, end=END)  # on: the scene has a chain and it is on
    held = bake(scene, fps=FPS, start=START, end=END, springs=False)
    # the mixer, the pose and the springs as they were
    assert scene.mixer.clock == clock
    np.testing.assert_array_equal(np.array([n.rotation_quaternion for n in scene.nodes]), pose)
    for j, (tail, prev) in zip(scene.springs.joints, tails):
        np.testing.assert_array_equal(j.tail, tail)
        np.testing.assert_array_equal(j.prev, prev)

    def rotations(clip, node):
        (channel,) = [c for c in clip.channels if c.node is node and c.path == "rotation"]
        return np.asarray(channel.values)

    apart = max(np.abs(rotations(swung, b) - rotations(held, b)).max() for b in joints)
    assert apart > 0.05
    plain = bake(fox_scene(chain=False), fps=FPS, start=START, end=END)
    by_name = {(c.node.name, c.path): np.asarray(c.values) for c in plain.channels}
    for channel in held.channels:  # springs=False: the mix alone
        np.testing.assert_allclose(np.asarray(channel.values), by_name[(channel.node.name, channel.path)], atol=1e-12)
    scene.springs.enabled = False  # the window's and notebook's toggle, --no-springs: the default follows it
    off = bake(scene, fps=FPS, start=START, end=END)
    assert max(np.abs(rotations(off, b) - rotations(held, b)).max() for b in joints) == 0
    on = bake(scene, fps=FPS, start=START, end=END, springs=True)
    assert scene.springs.enabled is False
    for b in joints:
        np.testing.assert_allclose(rotations(on, b), rotations(swung, b), atol=1e-12)


def test_a_chain_the_mix_does_not_drive_gets_channels():
    """A chain on bones no clip of the mix moves (the robot's left fingers, Wave masked to the
    right arm) is keyed all the same: the swing is the joints' only motion."""
    from viewer.motion import BoneMask

    scene = load_model(str(ROBOT))
    wave = scene.mixer.action("Wave")
    wave.mask = BoneMask.subtree("Shoulder.R")
    wave.play()
    scene.springs.add_chain("Middle1.L", stiffness=1.0, drag=0.4, gravity=0.5)
    names = {j.bone.name for j in scene.springs.joints}
    held = {(c.node.name, c.path) for c in bake(scene, fps=FPS, start=START, end=END, springs=False).channels}
    assert not {(name, "rotation") for name in names} & held  # the mix alone keys none of them
    clip = bake(scene, fps=FPS, start=START, end=END)
    swung = {c.node.name: np.asarray(c.values) for c in clip.channels if c.path == "rotation" and c.node.name in names}
    assert set(swung) == names
    assert max(np.ptp(values, axis=0).max() for values in swung.values()) > 1e-3  # and they move


@pytest.mark.parametrize("value", ["yes", 1.5, [True]])
def test_bad_springs_argument_is_one_line(value):
    scene = fox_scene()
    with pytest.raises(ViewerError, match="springs must be True, False or None"):
        bake(scene, fps=FPS, start=START, end=END, springs=value)


# --- bad input on the command line --------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["--spring-chain", sc.FOX_TAIL], "--spring-chain goes with --bake"),
    (["--no-springs"], "--no-springs goes with --bake"),
    (["--springs", "--spring-chain", sc.FOX_TAIL], "--springs and --spring-chain go with --bake"),
])
def test_springs_options_without_bake_are_one_line(tmp_path, capsys, args, message):
    out = tmp_path / "x.glb"
    assert export(FOX, "--mix", FOX_MIX, *args, "--out", out) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_bad_chain_in_a_bake_is_one_line(tmp_path, capsys):
    out = tmp_path / "x.glb"
    assert export(FOX, "--mix", FOX_MIX, "--spring-chain", "b_Nope:stiffness=1", *BAKE, "--out", out) == 2
    err = capsys.readouterr().err
    assert "b_Nope" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


# --- the validator ------------------------------------------------------------------------------
def test_the_spring_bake_is_what_the_validator_judged(tmp_path):
    """tests/data/mix/bake_springs_reference.json (tests/record_mix_bake_reference.py): the
    Khronos glTF-Validator's report on the Fox's spring bake and what that file held; baked
    again, the file is the same within the written references' tolerance, and the validator
    found no error in it."""
    from written_numbers import differences, fingerprint

    reference = json.loads(REFERENCE.read_text())
    out = tmp_path / "baked.glb"
    assert main(["export", str(FOX), "--mix", str(FOX_MIX), *reference["options"], "--out", str(out)]) == 0
    assert differences(reference["fingerprint"], fingerprint(out)) == []
    assert reference["validator"]["errors"] == []
    assert "VRMC_springBone" not in json.dumps(reference["fingerprint"])


def test_the_springs_page_bake_runs_as_shown(tmp_path, cli):
    """docs/springs.md's console block under "Baked into a clip": the command prints the line shown."""
    import re
    import shlex

    page = (Path(__file__).resolve().parents[1] / "docs" / "springs.md").read_text()
    block = re.search(r"## Baked into a clip.*?```console\n(.*?)```", page, re.S).group(1)
    command, shown = [line.strip() for line in block.strip().splitlines()]
    (tmp_path / "tests").symlink_to(Path(__file__).resolve().parent)
    words = shlex.split(command.removeprefix("$ "))
    assert words[:2] == ["boneviewer", "export"]
    result = cli(*words[1:], cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == shown
    assert result.stderr == ""
    assert len(load_model(str(tmp_path / "fox-tail-baked.glb")).animations[0].channels) > 0


def test_the_notebooks_bake_takes_the_same_choice():
    """v.bake() in a notebook: viewer.bake on the viewer's thread, the springs baked by default,
    and not once its Springs toggle (the editor's set_springs) is off."""
    from viewer.notebook import Viewer

    v = Viewer(str(FOX), size=(96, 72))
    try:
        v.edit(lambda editor: editor.scene.springs.add_chain(**sc.FOX_TAIL_CHAIN))
        v.mixer.load(str(FOX_MIX))
        swung = v.bake(fps=FPS, start=START, end=END)
        v.edit(lambda editor: editor.set_springs(False))
        held = v.bake(fps=FPS, start=START, end=END)
    finally:
        v.close()
    expected = {springs: {(c.node.name, c.path): np.asarray(c.values)
                          for c in bake(fox_scene(), fps=FPS, start=START, end=END, springs=springs).channels}
                for springs in (True, False)}
    for clip, springs in ((swung, True), (held, False)):
        got = {(c.node.name, c.path): np.asarray(c.values) for c in clip.channels}
        assert got.keys() == expected[springs].keys()
        for key, values in got.items():
            np.testing.assert_allclose(values, expected[springs][key], atol=1e-9, err_msg=str(key))
    tail = ("b_Tail02_013", "rotation")
    assert np.abs(expected[True][tail] - expected[False][tail]).max() > 0.05


def test_clear_drops_every_joint_and_keeps_the_pose():
    """SpringBones.clear() (what the bake leaves): no joint or chain, the bones where they were,
    nothing swung by a step, ``enabled`` as it was; a chain added after swings again."""
    scene = fox_scene()
    springs = scene.springs
    springs.update(STEP)  # a plan made, a time kept: clear() drops them too
    springs.advance_to(0.1, lambda t: setattr(scene.mixer, "time", t))
    springs.grab([springs.joints[1].bone])
    assert springs._held
    before = world(scene)
    same = springs.clear()
    assert same is None and scene.springs is springs
    assert len(springs) == 0 and springs.joints == [] and springs.chains == [] and springs.enabled
    assert not springs._held
    springs.update(STEP)
    np.testing.assert_array_equal(world(scene), before)
    joints = springs.add_chain(**sc.FOX_TAIL_CHAIN)
    assert len(springs) == len(joints) == 3 and [c["name"] for c in springs.chains] == ["b_Tail01_012"]


def test_a_bake_of_joints_with_no_chain_name_counts_joints_not_one_chain(tmp_path, capsys, monkeypatch):
    """Joints added with no chain name (SpringBones.add_joint(joint) from code) are said as joints,
    not as "1 chain"."""
    from viewer.motion.springs import SpringBones

    add_chain = SpringBones.add_chain

    def unnamed(self, *args, **kwargs):
        joints = add_chain(self, *args, **kwargs)
        self.chains.clear()  # as add_joint(joint) with no chain leaves them
        return joints

    monkeypatch.setattr(SpringBones, "add_chain", unnamed)
    out = tmp_path / "fox.glb"
    assert export(FOX, "--mix", FOX_MIX, "--spring-chain", sc.FOX_TAIL, *BAKE, "--out", out) == 0
    said = capsys.readouterr().out
    assert "the mix and its springs (3 joints) baked into 21 frames" in said, said
    assert len(load_model(str(out)).springs) == 0
