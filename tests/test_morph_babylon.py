"""Morphed (and skinned) world positions against Babylon.js's own glTF loader.

tests/data/babylon_morph_reference.json is made by tests/babylon/generate_morph_reference.mjs:
RobotExpressive's Head (targets Angry / Surprised / Sad, weights set by hand, at rest and in
the Wave clip) and tests/data/morph-worms.gltf (tests/gltf_cases.py build_morph_case: skinned
worms whose weights animate with LINEAR, STEP and CUBICSPLINE samplers, one with node weights
overriding the mesh's), positions from mesh.getPositionData(applySkeleton, applyMorph) times
the mesh's world matrix. The acceptance bar is 1e-4 of the model's size.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from viewer.gltf import load_gltf

DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((DATA / "babylon_morph_reference.json").read_text())
CASES = [(model, sample) for model in REFERENCE["models"] for sample in model["samples"]]


@pytest.fixture(scope="module")
def scenes():
    return {}


def case_id(model, sample):
    when = "rest" if sample["animation"] is None else f"{sample['animation']}-{sample['time']:.3f}"
    weights = "" if not sample["set_weights"] else "-w" + "_".join(f"{w:g}" for v in sample["set_weights"].values()
                                                                    for w in v)
    return f"{Path(model['file']).stem}-{when}{weights}"


def replay(model, sample, scenes) -> float:
    """One recorded sample posed again; the worst position error, as a fraction of the model's
    size (``scenes`` caches each file's scene; every sample starts from the file's pose)."""
    if model["file"] not in scenes:
        scenes[model["file"]] = load_gltf(DATA / model["file"])
    scene = scenes[model["file"]]
    meshes = {mesh.node_index: mesh for mesh in scene.meshes}
    for mesh in scene.morph_meshes:  # the file's default weights, as Babylon starts each sample
        mesh.morph_weights = mesh.morph_targets.default_weights
    for skeleton in scene.skeletons:
        skeleton.return_to_rest()
    for node, node_spec in zip(scene.nodes, _rest_nodes(scenes, model["file"])):
        node.position, node.rotation_quaternion, node.scaling = node_spec
    if sample["animation"] is not None:
        clip = next(c for c in scene.animations if c.name == sample["animation"])
        clip.apply(sample["time"])
    for node, weights in (sample["set_weights"] or {}).items():
        meshes[int(node)].morph_weights = weights
    for node, weights in sample["babylon_weights"].items():  # the weights Babylon drew with
        np.testing.assert_allclose(meshes[int(node)].morph_weights, weights, atol=1e-6)
    worst = 0.0
    for expected in sample["meshes"]:
        got = meshes[expected["node"]].skinned_positions()[:: model["stride"]]
        want = np.asarray(expected["positions"], dtype=np.float64).reshape(-1, 3)
        assert got.shape == want.shape == (expected["vertex_count"], 3)
        worst = max(worst, float(np.abs(got - want).max()) / model["size"])
    return worst


@pytest.mark.parametrize("model, sample", CASES, ids=[case_id(m, s) for m, s in CASES])
def test_morphed_positions_match_babylon_loader(model, sample, scenes):
    error = replay(model, sample, scenes)
    assert error <= 1e-4, f"error {error:.2g} of the size"


def _rest_nodes(scenes, file):
    """Every node's TRS as loaded (a clip sample starts from the file's pose, as Babylon's)."""
    key = ("rest", file)
    if key not in scenes:
        fresh = load_gltf(DATA / file)
        scenes[key] = [(n.position.copy(), n.rotation_quaternion.copy(), n.scaling.copy()) for n in fresh.nodes]
    return scenes[key]


def test_the_reference_morphs_something():
    """The comparison is not vacuous: the weights move the recorded vertices, and the worms'
    three samplers (LINEAR, STEP, CUBICSPLINE) give weights outside 0..1 and between keys."""
    robot = next(m for m in REFERENCE["models"] if m["file"].endswith("RobotExpressive.glb"))
    angry, surprised = (np.asarray(s["meshes"][0]["positions"]) for s in robot["samples"][:2])
    assert np.abs(angry - surprised).max() > 0.05 * robot["size"]
    worms = next(m for m in REFERENCE["models"] if m["file"] == "morph-worms.gltf")
    weights = np.array([w for s in worms["samples"] for w in s["babylon_weights"].values()])
    assert weights.min() < 0 and weights.max() > 1
    scene = load_gltf(DATA / "morph-worms.gltf")
    assert sorted(c.interpolation for c in scene.animations[0].morph_channels) == ["CUBICSPLINE", "LINEAR", "STEP"]


def test_report_worst_error():
    """Every sample replayed here (the per-case tests may run in other processes under
    pytest-xdist), and the worst error per model reported (run with -s)."""
    worst, scenes = {}, {}
    for model, sample in CASES:
        worst[model["file"]] = max(worst.get(model["file"], 0.0), replay(model, sample, scenes))
    assert sorted(worst) == sorted(model["file"] for model in REFERENCE["models"])
    for file, error in worst.items():
        print(f"{file}: worst error {error:.2e} of the model size")
    assert max(worst.values()) <= 1e-4


def test_the_worms_file_is_what_the_builder_makes(tmp_path):
    """tests/data/morph-worms.gltf, which Babylon recorded, is build_morph_case's output: the
    same structure, integers and names, and every float within 1e-6 of its accessor's largest
    magnitude (tests/written_numbers.py: the builder's sines and inverses differ in the last bits
    from one CPU to another)."""
    from gltf_cases import build_morph_case
    from written_numbers import differences, fingerprint

    rebuilt = fingerprint(build_morph_case(tmp_path))
    assert differences(fingerprint(DATA / "morph-worms.gltf"), rebuilt) == []
