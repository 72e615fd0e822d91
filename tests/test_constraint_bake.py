"""Node constraints (VRMC_node_constraint) baked into a mix's clip (`export --mix FILE --bake`,
`viewer.bake(scene, constraints=...)`): read back and played with no constraints and no springs,
every constrained node's world rotation is what a frame draws live (the mix, the constraints,
then the springs), with and without the springs; the file holds no live constraints
(VRMC_node_constraint dropped, no warning about it); the Khronos glTF-Validator finds no error in
it (tests/data/mix/bake_constraints_reference.json). A plain export (no --bake) writes the pose as
drawn, the constraints applied, and says so. The same to USD (.usda, .usdc), read back by the
USD loader."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from constraints_cases import world_rotation
from make_vrm_cases import read_glb
from springs_cases import size as size_of
from viewer.cli import main
from viewer.errors import ViewerError
from viewer.loaders import load_model
from viewer.model.retarget import retarget
from viewer.motion import bake

DATA = Path(__file__).resolve().parent / "data"
AVATAR = DATA / "vrm" / "robot_constraints.vrm"
WAVE = DATA / "bvh" / "wave_hello.bvh"
MIX = DATA / "mix" / "avatar_wave.mix.json"
REFERENCE = DATA / "mix" / "bake_constraints_reference.json"
FPS, START, END = 20, 1.5, 2.5
FRAMES = 21
BAKE = ["--bake", "--fps", FPS, "--start", START, "--end", END]


def avatar():
    """The avatar with the capture retargeted onto it and the mix loaded, as export --motion --mix makes it."""
    scene = load_model(str(AVATAR))
    retarget(load_model(str(WAVE)), scene)
    scene.mixer.load(MIX)
    return scene


def live(scene, springs: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per baked frame (mix time START + k / FPS), as a frame is drawn: the mix put at the time,
    the springs (from rest at mix time 0, stepped at 1/60 s) or not, then Scene.prepare() (the
    constraints on that pose): (every constrained node's world rotation, every node's world position)."""
    mixer, names = scene.mixer, [c.destination.name for c in scene.constraints]
    scene.springs.enabled = springs

    def pose_at(t):
        mixer.time = t

    frames = []
    for k in range(FRAMES):
        time = START + k / FPS
        if springs:
            scene.springs.advance_to(time, pose_at)
        else:
            pose_at(time)
        scene.prepare()
        frames.append(state(scene, names))
    return frames


def state(scene, names) -> tuple[np.ndarray, np.ndarray]:
    by_name = {n.name: n for n in scene.nodes}
    return (np.array([world_rotation(by_name[name]) for name in names]),
            np.array([n.get_world_matrix()[3, :3] for n in scene.nodes]))


def played(path: Path, names) -> list[tuple[np.ndarray, np.ndarray]]:
    """The exported file read back and its one clip played at every baked frame."""
    back = load_model(str(path))
    assert len(back.constraints) == 0 and len(back.springs) == 0  # nothing constrains or swings them again
    (clip,) = back.animations
    frames = []
    for k in range(FRAMES):
        clip.apply(k / FPS)
        back.prepare()
        frames.append(state(back, names))
    return frames


def export(*args) -> int:
    return main(["export", str(AVATAR), "--motion", str(WAVE), *map(str, args)])


@pytest.mark.parametrize("springs", [True, False])
def test_baked_constraints_are_what_a_frame_draws(tmp_path, capsys, springs):
    out = tmp_path / "avatar.glb"
    assert export("--mix", MIX, *BAKE, *([] if springs else ["--no-springs"]), "--out", out) == 0
    captured = capsys.readouterr()
    assert "its 5 node constraints baked into 21 frames" in captured.out and "no live" in captured.out
    assert "VRMC_node_constraint" not in captured.err  # baked, not dropped
    document = read_glb(out)[0]
    assert "VRMC_node_constraint" not in document.get("extensionsUsed", [])
    assert "VRMC_node_constraint" not in json.dumps(document)  # on no node either
    scene = avatar()
    names = [c.destination.name for c in scene.constraints]
    assert len(names) == 5
    expected = live(scene, springs)
    frames = played(out, names)
    size = size_of(scene)
    for k in range(FRAMES):
        np.testing.assert_allclose(frames[k][0], expected[k][0], rtol=0, atol=1e-6, err_msg=f"frame {k}")
        np.testing.assert_allclose(frames[k][1], expected[k][1], rtol=0, atol=1e-6 * size, err_msg=f"frame {k}")
    # the constraints do something here: without them every constrained node is elsewhere at some frame
    plain = avatar()
    plain.constraints.enabled = False
    alone = live(plain, springs)
    moved = np.max([np.abs(f[0] - a[0]).max(axis=(1, 2)) for f, a in zip(frames, alone)], axis=0)
    assert (moved > 0.05).all(), moved


def test_bake_from_code_takes_the_scenes_choice():
    """viewer.bake keys every constrained node by default (on where the scene has them on), not with
    constraints=False or once scene.constraints.enabled is off; the scene is left as it was."""
    scene = avatar()
    names = {c.destination.name for c in scene.constraints}
    on = {c.node.name: np.asarray(c.values) for c in bake(scene, fps=FPS, start=START, end=END).channels
          if c.path == "rotation"}
    off = {c.node.name: np.asarray(c.values)
           for c in bake(scene, fps=FPS, start=START, end=END, constraints=False).channels if c.path == "rotation"}
    assert names <= set(on)
    assert scene.constraints.enabled  # put back
    scene.constraints.enabled = False
    held = {c.node.name: np.asarray(c.values) for c in bake(scene, fps=FPS, start=START, end=END).channels
            if c.path == "rotation"}
    assert not scene.constraints.enabled
    for name in names & set(off):
        np.testing.assert_allclose(held[name], off[name], atol=1e-12)
    assert max(np.abs(on[name] - off[name]).max() for name in names & set(off)) > 0.05


@pytest.mark.parametrize("value", ["yes", 0.5])
def test_bad_constraints_argument_is_one_line(value):
    with pytest.raises(ViewerError, match="constraints must be True, False or None"):
        bake(avatar(), fps=FPS, start=START, end=END, constraints=value)


def test_a_plain_export_writes_the_pose_as_drawn(tmp_path, capsys):
    """No --bake: the pose written is the one drawn, the constraints applied (the aim on the head
    turns it at rest), and a warning says so; the constraints themselves are not written."""
    out = tmp_path / "rest.glb"
    assert main(["export", str(AVATAR), "--out", str(out)]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "node constraints" in line]
    assert len(said) == 1 and said[0].startswith("boneviewer: warning: "), said  # what the user sees
    assert "the node constraints are written as the pose shows them (applied)" in said[0]
    assert "VRMC_node_constraint" not in json.dumps(read_glb(out)[0])
    scene = load_model(str(AVATAR))
    names = [c.destination.name for c in scene.constraints]
    scene.prepare()
    drawn = state(scene, names)[0]
    back = load_model(str(out))
    np.testing.assert_allclose(state(back, names)[0], drawn, rtol=0, atol=1e-6)
    bare = load_model(str(AVATAR))
    bare.constraints.enabled = False
    assert np.abs(state(bare, names)[0] - drawn).max() > 0.05  # the aim's turn at rest is in the file


def test_the_constraint_bake_is_what_the_validator_judged(tmp_path):
    """tests/data/mix/bake_constraints_reference.json (tests/record_mix_bake_reference.py): the Khronos
    glTF-Validator's report on this bake and what that file held; baked again, the file is the
    same within the written references' tolerance, and the validator found no error in it."""
    from written_numbers import differences, fingerprint

    reference = json.loads(REFERENCE.read_text())
    out = tmp_path / "baked.glb"
    assert export("--mix", MIX, *reference["options"], "--out", out) == 0
    assert differences(reference["fingerprint"], fingerprint(out)) == []
    assert reference["validator"]["errors"] == []
    assert "VRMC_node_constraint" not in json.dumps(reference["fingerprint"])


def test_the_export_pages_constraint_bake_runs_as_shown(tmp_path, monkeypatch, capsys):
    """docs/export.md's console block for the constraints' bake: the command writes the line shown."""
    import re
    import shlex

    page = (Path(__file__).resolve().parents[1] / "docs" / "export.md").read_text()
    block = next(b for b in re.findall(r"```console\n(.*?)```", page, re.S) if "robot_constraints.vrm" in b)
    command, *_, shown = [line.strip() for line in block.strip().splitlines()]  # (the warnings between: test_readme)
    (tmp_path / "tests").symlink_to(Path(__file__).resolve().parent)
    monkeypatch.chdir(tmp_path)
    words = shlex.split(command.removeprefix("$ "))
    assert words[:2] == ["boneviewer", "export"]
    assert main(words[1:]) == 0
    assert shown in capsys.readouterr().out.splitlines()
    assert len(load_model(str(tmp_path / "avatar-baked.glb")).animations) == 1


def constrained_world(scene, names) -> tuple[np.ndarray, np.ndarray]:
    """(world rotations, world positions) of the named nodes (a USD file read back holds the
    skeleton's joints, not every node of the glTF)."""
    by_name = {n.name: n for n in scene.nodes}
    return (np.array([world_rotation(by_name[name]) for name in names]),
            np.array([by_name[name].get_world_matrix()[3, :3] for name in names]))


@pytest.mark.parametrize("suffix, springs", [(".usda", True), (".usdc", False)])
def test_baked_constraints_in_usd_are_what_a_frame_draws(tmp_path, capsys, suffix, springs):
    """export --bake to USD bakes the constraints as it does to glTF: the file read back by the
    USD loader and its one clip played gives every constrained node as a frame draws it live."""
    out = tmp_path / f"avatar{suffix}"
    assert export("--mix", MIX, *BAKE, *([] if springs else ["--no-springs"]), "--out", out) == 0
    captured = capsys.readouterr()
    assert "its 5 node constraints baked into 21 frames" in captured.out and "no live" in captured.out
    assert "node constraints are written as the pose shows them" not in captured.err  # baked, nothing to say
    scene = avatar()
    names = [c.destination.name for c in scene.constraints]
    scene.springs.enabled = springs
    expected = []
    for k in range(FRAMES):  # as live() draws it, for the constrained nodes
        time = START + k / FPS
        if springs:
            scene.springs.advance_to(time, lambda t: setattr(scene.mixer, "time", t))
        else:
            scene.mixer.time = time
        scene.prepare()
        expected.append(constrained_world(scene, names))
    back = load_model(str(out))
    assert len(back.constraints) == 0 and len(back.springs) == 0
    (clip,) = back.animations
    size = size_of(scene)
    for k in range(FRAMES):
        clip.apply(k / FPS)
        back.prepare()
        rotations, positions = constrained_world(back, names)
        # USD holds float32 quaternions and matrices: 1e-5, not the glb's 1e-6
        np.testing.assert_allclose(rotations, expected[k][0], rtol=0, atol=1e-5, err_msg=f"frame {k}")
        np.testing.assert_allclose(positions, expected[k][1], rtol=0, atol=1e-5 * size, err_msg=f"frame {k}")


def test_a_plain_usd_export_says_the_constraints_are_applied(tmp_path, capsys):
    """No --bake, to USD: one warning line says the pose is written as drawn, as the glTF export does."""
    out = tmp_path / "rest.usda"
    assert main(["export", str(AVATAR), "--out", str(out)]) == 0
    said = [line.removeprefix("boneviewer: warning: ") for line in capsys.readouterr().err.splitlines()
            if "node constraints" in line]
    assert said == [f"{out}: the node constraints are written as the pose shows them (applied)"]
