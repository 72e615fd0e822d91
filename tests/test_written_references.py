"""The files save_gltf writes, as the Khronos glTF-Validator and Babylon.js's loader judged them.

tests/data/gltf_validator_reports.json (tests/gltf_validator/validate_written.mjs) and
tests/data/babylon_written_reference.json (tests/babylon/generate_written_reference.mjs) were
recorded from the cases of tests/written_cases.py, with the sha256 of every file judged. Here
the cases are written again: the bytes must be the ones judged (a change to the writer's output
fails here until scripts/record_written_references.sh records it again), the validator found no
error in any of them, and Babylon's loader draws each file as boneviewer loads it.
"""

import json

import numpy as np
import pytest

from samples import DATA_DIR
from viewer import load_gltf
from written_cases import cases, write_case

VALIDATOR = json.loads((DATA_DIR / "gltf_validator_reports.json").read_text())
BABYLON = json.loads((DATA_DIR / "babylon_written_reference.json").read_text())
BABYLON_CASES = {entry["case"]: entry for entry in BABYLON["cases"]}
CASES = sorted(cases())


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """case -> (folder, {file: sha256}), each case written once."""
    root = tmp_path_factory.mktemp("written")
    result = {}
    for name in CASES:
        folder = root / name
        folder.mkdir()
        result[name] = (folder, write_case(name, folder))
    return result


def test_every_case_was_judged():
    assert set(VALIDATOR["reports"]) == set(CASES)
    assert set(BABYLON_CASES) == set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_the_bytes_are_those_judged(name, written):
    _, files = written[name]
    assert files == VALIDATOR["reports"][name]["sha256"], "re-record: scripts/record_written_references.sh"
    assert files == BABYLON_CASES[name]["sha256"], "re-record: scripts/record_written_references.sh"


@pytest.mark.parametrize("name", CASES)
def test_the_validator_found_no_error(name):
    report = VALIDATOR["reports"][name]
    errors = [m for m in report["messages"] if m["severity"] == 0]
    assert report["numErrors"] == 0, errors


@pytest.mark.parametrize("name", CASES)
def test_babylon_loads_what_boneviewer_loads(name, written):
    folder, _ = written[name]
    reference = BABYLON_CASES[name]
    scene = load_gltf(folder / reference["main"])
    rest = [(node, node.position.copy(), node.rotation_quaternion.copy(), node.scaling.copy()) for node in scene.nodes]
    weights = [(mesh, mesh.morph_weights.copy()) for mesh in scene.morph_meshes]
    meshes = {mesh.node_index: mesh for mesh in scene.skinned_meshes}
    checked = 0
    for sample in reference["samples"]:
        for node, position, rotation, scaling in rest:  # Babylon starts every sample from the file's pose
            node.assign_trs(position, rotation, scaling)
        for mesh, values in weights:
            mesh.morph_weights = values
        if sample["animation"] is not None:
            clip = scene.animations[sample["animation"]]
            assert clip.name == sample["animation_name"]
            clip.apply(sample["time"])
        for expected in sample["meshes"]:
            got = meshes[expected["node"]].skinned_positions()[:: expected["stride"]]
            want = np.asarray(expected["positions"], dtype=np.float64).reshape(-1, 3)
            assert got.shape == want.shape
            error = float(np.abs(got - want).max())
            assert error <= 1e-4 * reference["size"], f"{sample['animation_name']} at {sample['time']}: {error:.3g}"
            checked += 1
    assert checked >= 1
