"""Replay Babylon.js's own BoneIKController and BoneLookController results.

tests/data/babylon_controllers_reference.json is made by
tests/babylon/generate_controllers_reference.mjs (``npm run generate-controllers`` in
tests/babylon), which drives @babylonjs/core on seeded random chains: 3-6 bones, random
lengths and binds, some with non-uniform or mirrored scales, a random mesh world matrix or none,
several update() calls per case with moving targets (and sometimes a bone re-posed between
them), IK with default / bone / position pole targets, pole angles, bend axes, max angles and
slerp amounts, look-at with and without yaw/pitch limits, up axes in each space, custom yaw and
pitch axes, adjust angles and slerp. Every bone's local matrix is recorded after each update.

Each case is replayed on plain bones (with the mesh passed as a TransformNode, a (4, 4) matrix
or a SkinnedMesh in turn), and, where every scale is uniform (so Babylon's result has no shear
and a TRS can hold it), on bones linked to TransformNodes, compared after prepare(). Babylon
computes in float32; we compute in float64, so the tolerance is 2e-5 relative.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from viewer import Bone, BoneIKController, BoneLookController, Skeleton, SkinnedMesh, TransformNode
from viewer.model.space import Space

FIXTURE = Path(__file__).parent / "data" / "babylon_controllers_reference.json"
REFERENCE = json.loads(FIXTURE.read_text())
CASES = REFERENCE["cases"]
TOLERANCE = 2e-5
TNODE_KINDS = ("node", "matrix", "mesh")


def as_matrix(values):
    return np.asarray(values, dtype=np.float64).reshape(4, 4)


def matrix_error(actual, expected) -> float:
    """Largest difference relative to the matrix's size (at least 1)."""
    return float(np.abs(np.asarray(actual) - expected).max()) / max(1.0, float(np.abs(expected).max()))


def make_tnode(case, kind):
    spec = case["mesh"]
    if spec is None:
        return None
    node = TransformNode("mesh")
    node.set_trs(spec["position"], spec["rotation_quaternion"], spec["scaling"])
    if kind == "node":
        return node
    if kind == "matrix":
        return node.get_world_matrix()
    return SkinnedMesh("mesh", np.zeros((3, 3)), [0, 1, 2], None, world_matrix=node.get_world_matrix())


def build(case, linked=False):
    skeleton = Skeleton(case["name"])
    bones = []
    for spec in case["bones"]:
        parent = None if spec["parent"] is None else bones[spec["parent"]]
        bone = Bone(spec["name"], skeleton, parent, local_matrix=as_matrix(spec["local"]))
        if spec["length"] is not None:
            bone.length = spec["length"]
        if linked:
            node = TransformNode(spec["name"] + "_node")
            node.set_local_matrix(as_matrix(spec["local"]))
            bone.link_transform_node(node)
        bones.append(bone)
    skeleton.prepare()
    return skeleton, bones


def make_controller(case, bones, tnode):
    options = dict(case["options"])
    bone = bones[options.pop("bone")]
    if case["controller"] == "ik":
        if "pole_target_bone" in options:
            options["pole_target_bone"] = bones[options["pole_target_bone"]]
        if "pole_target_position" in options:
            options["pole_target_position"] = case["steps"][0]["pole_target_position"]
        return BoneIKController(tnode, bone, **options)
    if "up_axis_space" in options:
        options["up_axis_space"] = Space[options["up_axis_space"]]
    first_target = np.asarray(bone.get_absolute_position(tnode)) + (0.0, 0.0, 1.0)
    return BoneLookController(tnode, bone, first_target, **options)


def replay(case, linked=False, tnode_kind="node"):
    """Run the case; yield (label, bone, our local matrix, Babylon's) after every update."""
    skeleton, bones = build(case, linked)
    tnode = make_tnode(case, tnode_kind)
    controller = make_controller(case, bones, tnode)
    if case["controller"] == "ik":
        info = case["info"]
        np.testing.assert_allclose(controller.bend_axis, info["bend_axis"], atol=1e-6)
        np.testing.assert_allclose(controller.lengths, (info["bone1_length"], info["bone2_length"]), rtol=1e-5)
        np.testing.assert_allclose(controller.max_reach, info["max_reach"], rtol=1e-5)
        expected_pole = None if info["pole_target_bone"] is None else bones[info["pole_target_bone"]]
        if "pole_target_position" not in case["options"]:
            assert controller.pole_target_bone is expected_pole
    for number, step in enumerate(case["steps"]):
        if "pose" in step:
            bones[step["pose"]["bone"]].get_pose_target().rotation_quaternion = step["pose"]["rotation_quaternion"]
        if case["controller"] == "ik":
            controller.target_position = step["target"]
            if "pole_target_position" in step:
                controller.pole_target_position = step["pole_target_position"]
        else:
            controller.target = step["target"]
        controller.update()
        skeleton.prepare()
        for bone, expected in zip(bones, step["expect"]):
            yield f"{case['name']} update {number} bone {bone.name}", bone, bone.get_local_matrix(), as_matrix(expected)


def assert_replay(case, **kwargs):
    count = 0
    for label, _, ours, babylon in replay(case, **kwargs):
        error = matrix_error(ours, babylon)
        assert error <= TOLERANCE, f"{label}: error {error:.3g}\nours\n{ours}\nBabylon\n{babylon}"
        count += 1
    assert count > 0


def test_fixture_covers_both_controllers_and_their_branches():
    assert REFERENCE["babylon_version"].startswith("9.")
    ik = [c for c in CASES if c["controller"] == "ik"]
    look = [c for c in CASES if c["controller"] == "look"]
    assert len(ik) >= 40 and len(look) >= 40
    assert any(not c["info"]["right_handed"] for c in ik)
    assert any(c["info"]["adjust_roll"] for c in ik)
    assert any("slerp_amount" in c["options"] for c in ik) and any("slerp_amount" in c["options"] for c in look)
    assert any("min_yaw" in c["options"] and c["options"]["max_yaw"] - c["options"]["min_yaw"] > np.pi for c in look)
    assert {c["options"].get("up_axis_space", "LOCAL") for c in look} == {"LOCAL", "WORLD", "BONE"}
    assert sum(c["trs_exact"] for c in CASES) >= 40
    assert any(c["mesh"] is None for c in CASES)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c["name"] for c in CASES])
def test_replay_matches_babylon(index):
    case = CASES[index]
    assert_replay(case, tnode_kind=TNODE_KINDS[index % len(TNODE_KINDS)])


LINKED = [i for i, c in enumerate(CASES) if c["trs_exact"]]


@pytest.mark.parametrize("index", LINKED, ids=[CASES[i]["name"] for i in LINKED])
def test_linked_replay_matches_babylon_after_prepare(index):
    assert_replay(CASES[index], linked=True)
