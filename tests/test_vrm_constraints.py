"""Node constraints (VRMC_node_constraint 1.0) against @pixiv/three-vrm-node-constraint 3.5.5
(tests/data/threevrm_constraints_reference.json, recorded by tests/threejs_render/record_constraints.py
with three-vrm-springbone 3.5.5 after it), where they run (the mixer, the window's frame loop,
render, the springs after them), what ``info`` lists, and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import constraints_cases as cc
from make_vrm_cases import CONSTRAINTS, constrained_vrm
from springs_cases import size as size_of
from viewer.errors import ViewerError

REFERENCE = json.loads((Path(__file__).parent / "data" / "threevrm_constraints_reference.json").read_text())
AVATAR = cc.DATA / cc.AVATAR


@pytest.mark.parametrize("name", cc.CASES)
def test_constrained_nodes_match_three_vrm(name):
    case = REFERENCE["cases"][name]
    assert case["inputs"] == cc.inputs(name)  # the reference is of these files
    scene, pose_at, constrained, springs = cc.build(name)
    assert sorted(n.name for n in constrained) == sorted(scene.nodes[i].name for i in CONSTRAINTS)
    ours = cc.ours(name)
    size = size_of(scene)
    for step in cc.REPORT:
        theirs = case["steps"][str(step)]
        rotations = np.array([cc.rotation_matrix(q) for q in theirs["rotations"]])
        np.testing.assert_allclose(ours[step][0], rotations, rtol=0, atol=1e-5, err_msg=f"step {step}")
        np.testing.assert_allclose(ours[step][1], np.array(theirs["springs"]), rtol=0, atol=1e-5 * size,
                                   err_msg=f"step {step}")
    # the constraints do something: the constrained nodes are away from where the motion alone puts them
    scene.constraints.enabled = False
    scene.springs.enabled = False
    pose_at(cc.REPORT[-1] * cc.DT)
    alone = np.array([cc.world_rotation(n) for n in constrained])
    moved = np.abs(alone - ours[cc.REPORT[-1]][0]).max(axis=(1, 2))
    assert (moved > 0.05).all(), moved


def _nodes(*specs):
    """Nodes from (name, parent index, position, quaternion)."""
    from viewer.model import TransformNode

    nodes = []
    for name, parent, position, quaternion in specs:
        node = TransformNode(name, None if parent is None else nodes[parent])
        node.assign_trs(position=np.array(position, float), rotation_quaternion=np.array(quaternion, float))
        nodes.append(node)
    return nodes


def test_rotation_constraint_follows_the_source_turn_by_weight():
    from viewer.motion.constraints import Constraint

    root, source, destination = _nodes(("root", None, (0, 0, 0), (0, 0, 0, 1)),
                                       ("source", 0, (1, 0, 0), cc.turn((0, 0, 1), 0.3)),
                                       ("destination", 0, (-1, 0, 0), cc.turn((1, 0, 0), 0.5)))
    half = Constraint("rotation", destination, source, 0.5)
    source.assign_trs(rotation_quaternion=cc.product(cc.turn((0, 0, 1), 0.3), cc.turn((0, 1, 0), 1.2)))
    half.apply()
    expected = cc.rotation_matrix(cc.product(cc.turn((1, 0, 0), 0.5), cc.turn((0, 1, 0), 0.6)))
    np.testing.assert_allclose(cc.world_rotation(destination), expected, atol=1e-12)


def test_roll_constraint_keeps_only_the_twist_about_its_axis():
    from viewer.motion.constraints import Constraint

    root, source, destination = _nodes(("root", None, (0, 0, 0), (0, 0, 0, 1)),
                                       ("source", 0, (1, 0, 0), (0, 0, 0, 1)),
                                       ("destination", 0, (-1, 0, 0), (0, 0, 0, 1)))
    roll = Constraint("roll", destination, source, 1.0, "Y")
    # a twist of 0.7 about Y after a swing about X: only the twist is kept
    source.assign_trs(rotation_quaternion=cc.product(cc.turn((1, 0, 0), 0.4), cc.turn((0, 1, 0), 0.7)))
    roll.apply()
    q = np.array(destination.rotation_quaternion)
    assert abs(q[0]) < 1e-12 and abs(q[2]) < 1e-12
    assert math.isclose(2 * math.atan2(q[1], q[3]), 0.7, abs_tol=1e-12)


@pytest.mark.parametrize("axis, vector", [("PositiveX", (1, 0, 0)), ("NegativeY", (0, -1, 0)), ("PositiveZ", (0, 0, 1))])
def test_aim_constraint_points_its_axis_at_the_source(axis, vector):
    from viewer.motion.constraints import Constraint

    root, source, destination = _nodes(("root", None, (0, 0, 0), cc.turn((0, 1, 1), 0.8)),
                                       ("source", 0, (2, 1, -3), (0, 0, 0, 1)),
                                       ("destination", 0, (-1, 0.5, 0), cc.turn((1, 0, 0), 0.5)))
    Constraint("aim", destination, source, 1.0, axis).apply()
    world = destination.get_world_matrix().T
    pointing = world[:3, :3] @ np.array(vector, float)
    towards = source.get_world_matrix()[3, :3] - world[:3, 3]
    np.testing.assert_allclose(pointing / np.linalg.norm(pointing), towards / np.linalg.norm(towards), atol=1e-12)


def test_constraints_in_a_circle_are_refused():
    from viewer.motion.constraints import Constraint, NodeConstraints

    root, a, b = _nodes(("root", None, (0, 0, 0), (0, 0, 0, 1)), ("a", 0, (1, 0, 0), (0, 0, 0, 1)),
                        ("b", 0, (-1, 0, 0), (0, 0, 0, 1)))
    constraints = NodeConstraints()
    constraints.add(Constraint("rotation", a, b))
    with pytest.raises(ViewerError, match="circle"):
        constraints.add(Constraint("rotation", b, a))
    assert len(constraints) == 1


def test_the_mixer_and_prepare_apply_them_without_springs():
    scene, pose_at, constrained, _ = cc.build("wave")
    scene.springs.enabled = False
    neck = next(c for c in scene.constraints if c.kind == "roll" and c.destination.name == "J_Bip_C_Neck")
    pose_at(1.0)
    scene.prepare()  # a frame drawn
    np.testing.assert_allclose(np.array(neck.destination.rotation_quaternion), neck.target(), atol=1e-12)
    hips = neck.source.rotation_quaternion.copy()
    pose_at(2.0)
    assert np.abs(neck.source.rotation_quaternion - hips).max() > 1e-3  # the capture moved the hips
    scene.prepare()
    np.testing.assert_allclose(np.array(neck.destination.rotation_quaternion), neck.target(), atol=1e-12)


def test_the_window_loop_applies_them_after_the_mixer():
    from viewer.editing.editor import Editor
    from viewer.loaders import load_model
    from viewer.model.retarget import retarget

    scene = load_model(str(AVATAR))
    retarget(load_model(str(cc.DATA / cc.WAVE)), scene)
    editor = Editor(scene)
    editor.play()
    editor.advance(0.0)
    for _ in range(20):
        editor.advance(1 / 30)
        scene.prepare()  # the frame's model update
        for constraint in scene.constraints:
            np.testing.assert_allclose(np.array(constraint.destination.rotation_quaternion),
                                       _slerped(constraint), atol=1e-12)


def _slerped(constraint):
    from viewer.motion.constraints import _slerp

    return _slerp(constraint.rest, constraint.target(), constraint.weight)


def test_info_lists_the_constraints():
    from conftest import run_cli

    result = run_cli("info", AVATAR)
    assert result.returncode == 0, result.stderr
    assert "node constraints: 5" in result.stdout
    assert "J_Bip_C_Head: aim from J_Bip_R_Hand, axis PositiveZ, weight 0.7" in result.stdout
    assert "J_Bip_R_LowerArm: rotation from J_Bip_L_LowerArm, weight 0.5" in result.stdout
    as_json = run_cli("info", AVATAR, "--json")
    facts = json.loads(as_json.stdout)
    listed = {c["node"]: c for c in facts["node_constraints"]}
    assert listed["J_Bip_C_Neck"] == {"node": "J_Bip_C_Neck", "kind": "roll", "source": "J_Bip_C_Hips",
                                      "weight": 1.0, "axis": "X"}
    # under "vrm" the count, as before the constraints were applied (scripts read it as a number)
    assert facts["vrm"]["node_constraints"] == 5 == len(facts["node_constraints"])


def _png(path: Path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB"), dtype=np.int16)


def test_render_draws_them(tmp_path):
    """The same capture on the avatar with and without its constraints: the head, neck and arms
    are elsewhere (render poses with the mixer's clip, then the constraints, then draws)."""
    from conftest import run_cli

    common = ["--motion", cc.DATA / cc.WAVE, "--time", "2.5", "--size", "160x160", "--no-grid", "--no-skeleton"]
    for name, path in (("on", AVATAR), ("plain", cc.DATA / "vrm" / "robot.vrm")):
        result = run_cli("render", path, *common, "--out", tmp_path / f"{name}.png")
        assert result.returncode == 0, result.stderr
    on, plain = (_png(tmp_path / f"{n}.png") for n in ("on", "plain"))
    assert (np.abs(on - plain).max(axis=2) > 40).sum() > 100


def _constraint_of(document, node):
    return next(iter(document["nodes"][node]["extensions"]["VRMC_node_constraint"]["constraint"].values()))


BREAKS = {
    "missing source": (lambda d: _constraint_of(d, 12).update(source=999), "source node 999"),
    "NaN weight": (lambda d: _constraint_of(d, 39).update(weight=math.nan), "weight nan"),
    "unknown roll axis": (lambda d: _constraint_of(d, 17).update(rollAxis="W"), "rollAxis 'W' is not one of X, Y, Z"),
    "unknown aim axis": (lambda d: _constraint_of(d, 15).update(aimAxis="Up"), "aimAxis 'Up'"),
    "circle": (lambda d: d["nodes"][37].setdefault("extensions", {}).update(VRMC_node_constraint={
        "specVersion": "1.0", "constraint": {"rotation": {"source": 17}}}), "circle"),
}


@pytest.mark.parametrize("name", BREAKS)
def test_bad_constraints_required_is_one_line_exit_2(tmp_path, name):
    from conftest import run_cli

    change, words = BREAKS[name]
    path = tmp_path / "broken.vrm"
    path.write_bytes(constrained_vrm(change, required=True))
    for command in (["info", path], ["render", path, "--size", "64x64", "--out", tmp_path / "x.png"]):
        result = run_cli(*command)
        assert result.returncode == 2
        assert "Traceback" not in result.stderr and words in result.stderr and "VRMC_node_constraint" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("name", BREAKS)
def test_bad_constraints_optional_opens_with_a_warning(tmp_path, name, caplog):
    from viewer.loaders import load_model

    change, words = BREAKS[name]
    path = tmp_path / "broken.vrm"
    path.write_bytes(constrained_vrm(change))
    scene = load_model(str(path))
    assert len(scene.constraints) == 0  # none of them: half a rig's constraints twist it wrongly
    assert scene.humanoid["hips"] == "J_Bip_C_Hips" and "angry" in scene.expressions and len(scene.springs) == 2
    warned = [r.getMessage() for r in caplog.records if "VRMC_node_constraint" in r.getMessage()]
    assert len(warned) == 1 and words in warned[0], warned


def test_a_node_of_another_spec_version_is_skipped_alone_as_three_vrm_does(tmp_path, caplog):
    """three-vrm-node-constraint's loader skips (with a warning) a node whose specVersion it does
    not know; the file's other constraints still apply, even when the file requires the extension."""
    from viewer.loaders import load_model

    def later(document):
        document["nodes"][12]["extensions"]["VRMC_node_constraint"]["specVersion"] = "2.0"

    whole = load_model(str(AVATAR))
    for required in (False, True):
        path = tmp_path / f"later_version_{required}.vrm"
        path.write_bytes(constrained_vrm(later, required=required))
        scene = load_model(str(path))
        kept = sorted(c.destination.name for c in scene.constraints)
        assert kept == sorted(c.destination.name for c in whole.constraints
                              if c.destination.name != scene.nodes[12].name)
        assert len(kept) == len(whole.constraints) - 1
    warned = [r.getMessage() for r in caplog.records if "specVersion '2.0'" in r.getMessage()]
    assert len(warned) == 2 and "not applied" in warned[0], warned


def test_the_editor_turns_the_node_constraints_off_and_on():
    """Editor.set_constraints (the panel's Constraints box): off puts every constrained node back at
    its rest (the sources turned by hand stay turned) and later frames leave it there; on turns
    them as before."""
    from viewer.editing.editor import Editor

    scene, pose_at, constrained, _ = cc.build("spin")
    scene.springs.enabled = False
    editor = Editor(scene)
    pose_at(0.5)
    scene.prepare()
    on = np.array([cc.world_rotation(n) for n in constrained])
    rests = [c.rest for c in scene.constraints]
    editor.set_constraints(False)
    assert not scene.constraints.enabled and "constraints off" in str(editor.status)
    for c, rest in zip(scene.constraints, rests):
        np.testing.assert_allclose(c.destination.rotation_quaternion, rest, atol=1e-12)
    scene.prepare()
    off = np.array([cc.world_rotation(n) for n in constrained])
    assert np.abs(off - on).max() > 0.05  # the sources are turned: the constraints did something
    for c, rest in zip(scene.constraints, rests):
        np.testing.assert_allclose(c.destination.rotation_quaternion, rest, atol=1e-12)
    editor.set_constraints(True)
    assert scene.constraints.enabled and "constraints on" in str(editor.status)
    np.testing.assert_allclose(np.array([cc.world_rotation(n) for n in constrained]), on, atol=1e-9)
