"""Replay Babylon.js's own Space API results: every Bone space method in every space.

tests/data/babylon_space_reference.json is made by tests/babylon/generate_space_reference.mjs
(``npm run generate-space`` in tests/babylon), which drives @babylonjs/core in Node: random
single-root skeletons (rest differing from bind, non-uniform scales and mirrored binds in some),
a tNode (a TransformNode, sometimes under a parent) or none, and random sequences of
get/set_position, translate, rotate, set_rotation*, set_yaw_pitch_roll, set_axis_angle,
get_direction, get_*_position_from_*, scale, set_scale, set_current_pose_as_rest and
return_to_rest, in LOCAL, WORLD and BONE. After each step that can pose, every bone's local
matrix and TRS; after each getter, its value.

Each case is replayed
- unlinked, with the tnode as a viewer.TransformNode;
- unlinked, with the tnode as Babylon's recorded world matrix, and as a SkinnedMesh (where the
  tnode has no parent: for a matrix or a mesh the scaling is decomposed from the world matrix,
  while Babylon reads a TransformNode's own local scaling);
- with every bone linked to a TransformNode (glTF joints): the space methods write the pose
  into the nodes, and after prepare() the result is Babylon's for the unlinked skeleton. Only
  cases whose local matrices stay TRS matrices (checked by the generator) can be held by nodes;
  a sheared local (a non-uniform scale under rotated children) has no TRS.

Babylon stores matrices in float32 and we compute in float64, repeating its arithmetic step
by step; the tolerance is TOLERANCE relative to the size of the compared value (at least 1).
Quaternions are compared up to sign (q and -q are one rotation, and decompose's branch can
flip in float32), Euler vectors as the rotations they describe (near gimbal lock the angles
themselves are ill-conditioned).
"""

import json
from pathlib import Path

import numpy as np
import pytest

from viewer import Bone, Skeleton, SkinnedMesh, Space, TransformNode
from viewer.model import transforms

FIXTURE = Path(__file__).parent / "data" / "babylon_space_reference.json"
REFERENCE = json.loads(FIXTURE.read_text())
CASES = REFERENCE["cases"]
TOLERANCE = 2e-5
WORST = {}  # label -> worst relative error seen, for the summary test


def as_matrix(values):
    return np.asarray(values, dtype=np.float64).reshape(4, 4)


def relative_error(actual, expected) -> float:
    expected = np.asarray(expected, dtype=np.float64)
    scale = max(1.0, float(np.abs(expected).max()))
    return float(np.abs(np.asarray(actual, dtype=np.float64) - expected).max()) / scale


def check(actual, expected, what, mode):
    error = relative_error(actual, expected)
    if error > TOLERANCE and len(np.ravel(expected)) == 4:  # a quaternion: -q is the same rotation
        error = min(error, relative_error(-np.asarray(actual), expected))
    WORST[mode] = max(WORST.get(mode, 0.0), error)
    assert error <= TOLERANCE, (f"{what}: relative error {error:.3g}\n"
                                f"ours    {np.ravel(actual)}\nbabylon {np.ravel(expected)}")


def euler_matrix(euler):
    return transforms.compose(np.ones(3), transforms.quaternion_from_yaw_pitch_roll(euler), np.zeros(3))


def make_node(spec, name, parent=None):
    node = TransformNode(name, parent)
    node.set_trs(spec["position"], spec["rotation_quaternion"], spec["scaling"])
    return node


def build(case, linked, tnode_kind):
    skeleton = Skeleton(case["name"])
    bones = []
    for spec in case["bones"]:
        parent = None if spec["parent"] is None else bones[spec["parent"]]
        bone = Bone(spec["name"], skeleton, parent, local_matrix=as_matrix(spec["local"]),
                    rest_matrix=as_matrix(spec["rest"]), bind_matrix=as_matrix(spec["bind"]))
        if linked:
            node = TransformNode(spec["name"] + "_joint")
            node.set_local_matrix(as_matrix(spec["local"]))
            bone.link_transform_node(node)
        bones.append(bone)
    skeleton.prepare()
    tnode = None
    spec = case["tnode"]
    if spec is not None:
        if tnode_kind == "node":
            parent = None if spec["parent"] is None else make_node(spec["parent"], "tnode_parent")
            tnode = make_node(spec, "tnode", parent)
        elif tnode_kind == "matrix":
            tnode = as_matrix(spec["world"])
        else:
            tnode = SkinnedMesh("mesh", np.zeros((3, 3)), [0, 1, 2], skeleton, joints=np.zeros((3, 4), int),
                                weights=np.tile([1.0, 0, 0, 0], (3, 1)), world_matrix=as_matrix(spec["world"]))
    return skeleton, bones, tnode


def call(bone, step, tnode):
    args = list(step["args"])
    if step["op"] == "set_rotation_matrix":
        args[0] = as_matrix(args[0])
    if "space" in step:
        args.append(Space(step["space"]))
    if "tnode" in step:
        args.append(tnode if step["tnode"] else None)
    return getattr(bone, step["op"])(*args)


def replay(case, linked=False, tnode_kind="node"):
    mode = ("linked" if linked else "unlinked") + "/" + tnode_kind
    skeleton, bones, tnode = build(case, linked, tnode_kind)
    for number, step in enumerate(case["steps"]):
        where = f"{case['name']} step {number} {step['op']}"
        result = call(bones[step["bone"]], step, tnode)
        if "result" in step:
            expected = step["result"]
            if step["op"] == "get_rotation":
                check(euler_matrix(result), euler_matrix(expected), f"{where} (as a rotation)", mode)
            elif step["op"] == "get_rotation_matrix":
                check(result, as_matrix(expected), where, mode)
            else:
                check(result, expected, where, mode)
        if "state" in step:
            skeleton.prepare()
            for bone, want in zip(bones, step["state"]):
                label = f"{where}: bone {bone.name}"
                check(bone.get_local_matrix(), as_matrix(want["local"]), f"{label} local", mode)
                check(bone.position, want["position"], f"{label} position", mode)
                check(bone.rotation_quaternion, want["rotation_quaternion"], f"{label} rotation_quaternion", mode)
                check(bone.scaling, want["scaling"], f"{label} scaling", mode)
                if linked:
                    node = bone.get_transform_node()
                    np.testing.assert_allclose(node.position, bone.position, atol=1e-12)


def test_fixture_covers_every_method_and_space():
    assert REFERENCE["babylon_version"].startswith("9.")
    methods = {step["op"] for case in CASES for step in case["steps"]}
    assert methods == {
        "get_position", "get_absolute_position", "get_rotation", "get_rotation_quaternion", "get_rotation_matrix",
        "get_direction", "get_absolute_position_from_local", "get_local_position_from_absolute", "get_scale",
        "set_position", "set_absolute_position", "translate", "set_rotation", "set_rotation_quaternion",
        "set_rotation_matrix", "set_yaw_pitch_roll", "rotate", "set_axis_angle", "scale", "set_scale",
        "set_current_pose_as_rest", "return_to_rest"}
    spaced = {(step["op"], step["space"], step["tnode"]) for case in CASES for step in case["steps"] if "space" in step}
    for op in {op for op, _, _ in spaced}:
        for space in (0, 1, 2):
            assert (op, space, True) in spaced or op == "get_scale", (op, space)
    assert sum(case["trs_exact"] for case in CASES) >= 20
    assert any(case["tnode"] and case["tnode"]["parent"] for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_replay_unlinked(case):
    replay(case)


@pytest.mark.parametrize("case", [c for c in CASES if c["tnode"] and not c["tnode"]["parent"]],
                         ids=lambda c: c["name"])
def test_replay_with_the_tnode_as_a_matrix(case):
    replay(case, tnode_kind="matrix")


@pytest.mark.parametrize("case", [c for c in CASES if c["tnode"] and not c["tnode"]["parent"]][:8],
                         ids=lambda c: c["name"])
def test_replay_with_the_tnode_as_a_mesh(case):
    replay(case, tnode_kind="mesh")


@pytest.mark.parametrize("case", [c for c in CASES if c["trs_exact"]], ids=lambda c: c["name"])
def test_replay_linked_bones_match_unlinked_babylon(case):
    replay(case, linked=True)


def test_worst_error_summary():
    """Every case replayed in every mode here (the per-case tests may run in other processes under
    pytest-xdist), and the worst errors reported (run with -s)."""
    WORST.clear()
    tnode_cases = [c for c in CASES if c["tnode"] and not c["tnode"]["parent"]]
    for case in CASES:
        replay(case)
    for case in tnode_cases:
        replay(case, tnode_kind="matrix")
    for case in tnode_cases[:8]:
        replay(case, tnode_kind="mesh")
    for case in CASES:
        if case["trs_exact"]:
            replay(case, linked=True)
    assert len(WORST) >= 4, sorted(WORST)
    print("worst relative error per mode:", {k: f"{v:.2g}" for k, v in sorted(WORST.items())})
    assert max(WORST.values()) <= TOLERANCE
