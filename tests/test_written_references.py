"""The files save_gltf writes, as the Khronos glTF-Validator and Babylon.js's loader judged them.

tests/data/gltf_validator_reports.json (tests/gltf_validator/validate_written.mjs) and
tests/data/babylon_written_reference.json (tests/babylon/generate_written_reference.mjs) were
recorded from the cases of tests/written_cases.py, with the sha256 of every file judged, and
tests/data/written_fingerprints.json with what those files hold (tests/written_numbers.py). Here
the cases are written again: what is written must be what was judged, its structure, integers
and images exactly and its floats within 1e-6 of each accessor's largest magnitude (the floats
pass through BLAS, LAPACK and numpy's SIMD loops, whose last bits differ between CPUs, so the
bytes cannot be compared across machines); a change to the writer's output fails here until
scripts/record_written_references.sh records it again. The validator found no error in any of
them, and Babylon's loader draws each file as boneviewer loads it.
"""

import copy
import json

import numpy as np
import pytest

from samples import DATA_DIR
from viewer import load_gltf
from written_cases import FINGERPRINTS, cases, write_case
from written_numbers import _read as written_numbers_read
from written_numbers import differences, fingerprint

VALIDATOR = json.loads((DATA_DIR / "gltf_validator_reports.json").read_text())
BABYLON = json.loads((DATA_DIR / "babylon_written_reference.json").read_text())
BABYLON_CASES = {entry["case"]: entry for entry in BABYLON["cases"]}
RECORDED = json.loads(FINGERPRINTS.read_text())["cases"]
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
    assert set(RECORDED) == set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_the_records_are_of_the_same_files(name):
    """The fingerprints describe the very bytes the validator and Babylon judged."""
    assert RECORDED[name]["sha256"] == VALIDATOR["reports"][name]["sha256"] == BABYLON_CASES[name]["sha256"]


@pytest.mark.parametrize("name", CASES)
def test_what_is_written_is_what_was_judged(name, written):
    folder, files = written[name]
    assert sorted(files) == sorted(RECORDED[name]["sha256"]), "re-record: scripts/record_written_references.sh"
    problems = differences(RECORDED[name]["fingerprint"], fingerprint(folder / BABYLON_CASES[name]["main"]))
    assert problems == [], f"re-record: scripts/record_written_references.sh ({'; '.join(problems[:5])})"


def test_the_comparison_tells_a_change_from_a_machines_last_bits(written):
    """Every float moved by a few float32 units in the last place is still the same file; the
    same model written without apply_pose_as_bind, a joint index changed, or one vertex moved
    by 0.1% of the model's size, is not."""
    folder, _ = written["CesiumMan-bind"]
    recorded = RECORDED["CesiumMan-bind"]["fingerprint"]
    noisy = copy.deepcopy(recorded)
    rng = np.random.default_rng(5)
    noisy["floats"] = [x * (1 + rng.uniform(-4, 4) * 2 ** -24) for x in noisy["floats"]]
    for accessor in noisy["accessors"]:
        if "scale" in accessor:
            jitter = 4 * 2 ** -24 * accessor["scale"]
            accessor["min"] = [x + rng.uniform(-jitter, jitter) for x in accessor["min"]]
            accessor["sums"] = [x + rng.uniform(-jitter, jitter) * 32 for x in accessor["sums"]]
    assert differences(recorded, noisy) == []

    unposed = folder / "unposed.glb"
    build, _, _ = cases()["CesiumMan-bind"]
    from viewer import save_gltf
    save_gltf(build(), unposed)
    assert differences(recorded, fingerprint(unposed)) != []

    document, buffers = written_numbers_read(folder / "CesiumMan-bind.glb")
    positions = document["meshes"][0]["primitives"][0]["attributes"]["POSITION"]
    moved = copy.deepcopy(recorded)
    size = recorded["accessors"][positions]["scale"]
    moved["accessors"][positions]["sums"][7] += 0.001 * size * 0.5  # one number, its weight 0.5
    assert any(f"accessor {positions}" in problem for problem in differences(recorded, moved))
    joints = document["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"]
    changed = copy.deepcopy(recorded)
    changed["accessors"][joints]["sha256"] = "0" * 64
    assert differences(recorded, changed) == [f"accessor {joints}: integers differ"]


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
    # a file with no skinned mesh (three-vrm's spring examples: a chain of static cubes) has no
    # skinned positions to compare; Babylon then recorded none either
    assert checked >= 1 or (not scene.skinned_meshes and not any(sample["meshes"] for sample in reference["samples"]))
