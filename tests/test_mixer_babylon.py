"""The mixer's blend against Babylon.js's own (tests/data/babylon_mixer_reference.json, recorded by
tests/babylon/generate_mixer_reference.mjs from weighted AnimationGroups): every case replayed with
scene.mixer through the same steps; every animated node's local translation (relative to the model's
size), rotation (q and -q are one rotation) and scale, and every morph weight, within 1e-5."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from viewer.loaders import load_model
from viewer.motion import BoneMask

# every compiled step checked against numpy's blend (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("compiled_mixer_steps_checked")

DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((DATA / "babylon_mixer_reference.json").read_text())
TOLERANCE = 1e-5
_SCENES: dict = {}


def _checked(file: str) -> Path:
    path = DATA / file
    assert hashlib.sha256(path.read_bytes()).hexdigest() == REFERENCE["sha256"][file], f"{file} changed since the reference"
    return path


def _scene(file: str):
    """The model a case mixes; ``retarget:BVH>MODEL``: MODEL with BVH's clip retargeted onto it."""
    if file.startswith("retarget:"):
        from viewer import load_bvh, retarget

        bvh, model = file.removeprefix("retarget:").split(">")
        scene = load_model(str(_checked(model)))
        retarget(load_bvh(str(_checked(bvh))), scene)
        return scene
    return load_model(str(_checked(file)))


def replay(case, compiled=None):
    """The case's actions played through scene.mixer (``compiled=False``: numpy's blend, the
    reference); yields (step index, scene) after every step."""
    scene = _scene(case["source"] or case["file"])  # an FBX case: Babylon read its glTF export, we the FBX
    mixer = scene.mixer
    mixer.compiled = compiled
    for spec in case["groups"]:
        action = mixer.action(spec["clip"])
        action.weight, action.speed, action.loop = spec["weight"], spec["speed"], spec["loop"]
        if spec["additive"]:
            action.additive = True
            action.reference_time = spec["reference_time"]
        if spec["mask_subtree"]:
            action.mask = BoneMask.subtree(spec["mask_subtree"])
        action.play()
    fade = case["crossfade"]
    for k in range(case["steps"]):
        if fade and k + 1 == fade["at_step"]:
            mixer.action(fade["from"]).crossfade_to(fade["to"], fade["seconds"])
        mixer.update(case["dt"])
        yield k, scene


@pytest.mark.parametrize("compiled", [None, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("case", REFERENCE["cases"], ids=[c["name"] for c in REFERENCE["cases"]])
def test_mixer_matches_babylon(case, compiled):
    from viewer.model import native

    if compiled is None and native.ckernel is None and os.environ.get(native.ENV, "").strip().lower() != "numpy":
        pytest.fail(f"the compiled kernel is not built: {native.describe()}")
    nodes = None
    for k, scene in replay(case, compiled):
        if nodes is None:
            size = float(np.linalg.norm(scene.rest_bounds[1] - scene.rest_bounds[0]))
            # the file's node order where it is ours (a glTF file, boneviewer's own export of the scene), else
            # the names (an FBX or USD file: Babylon read our glTF export of it), which must then be unique
            in_order = all(int(index) < len(scene.nodes) and scene.nodes[int(index)].name == name
                           for index, name in case["node_names"].items())
            if in_order:
                nodes = {index: scene.nodes[int(index)] for index in case["node_names"]}
            else:
                assert case["source"], case["name"]
                by_name = {node.name: node for node in scene.nodes}
                assert len(by_name) == len(scene.nodes), "node names are not unique: cannot match them"
                nodes = {index: by_name[name] for index, name in case["node_names"].items()}
            by_node = {mesh.node_index: mesh for mesh in scene.morph_meshes}
        for index, node in nodes.items():
            paths = {path: values[k] for path, values in case["tracks"].get(index, {}).items()}
            paths.update(case["constant"].get(index, {}))
            assert paths, index
            for path, expected in paths.items():
                expected = np.array(expected)
                if path == "translation":
                    got, error = node.position, np.abs(node.position - expected).max() / size
                elif path == "rotation":
                    got = node.rotation_quaternion
                    error = min(np.abs(got - expected).max(), np.abs(got + expected).max())
                else:
                    got, error = node.scaling, np.abs(node.scaling - expected).max()
                assert error <= TOLERANCE, (f"{case['name']} step {k + 1}: node {node.name!r} {path} {got} "
                                            f"vs Babylon {expected}")
        for index, values in case["morph"].items():
            error = np.abs(np.asarray(by_node[int(index)].morph_weights) - np.array(values[k])).max()
            assert error <= TOLERANCE, f"{case['name']} step {k + 1}: morph weights of node {index}"
    assert len(case["times"]) >= 20 and k + 1 == len(case["times"])


def test_reference_covers_the_issue_cases():
    names = {c["name"] for c in REFERENCE["cases"]}
    for needed in ("two_clips", "three_below_one", "additive_over_walk", "upper_body_mask", "negative_speed",
                   "pingpong", "once", "crossfade", "retargeted_bvh_with_walk"):
        assert any(name.endswith(needed) for name in names), needed
    files = {c["source"] or c["file"] for c in REFERENCE["cases"]}
    assert any("RobotExpressive" in f for f in files) and any("Fox" in f for f in files)
    assert any(f.endswith(".fbx") for f in files) and any(f.endswith(".usdc") for f in files)
