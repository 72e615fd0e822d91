"""`boneviewer check`: findings as data, the rig checks, the CLI's exit codes and JSON, and
agreement with the Khronos glTF-Validator on the malformed-file corpus and the samples (its
reports recorded by tests/make_validator_reference.py into tests/data)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from make_validator_reference import REFERENCE, corpus_files, sample_files
from test_gltf_malformed import Doc, _png, _set, _textured
from viewer.checks import CODES, ERROR, INFO, MOTION_CODES, WARNING, check_file

# Validator errors that do not change what is drawn: bounds metadata (boneviewer measures the
# data itself), and a joint listed twice in one vertex (linear blending sums its weights, the
# same as one influence). Every other validator error changes what some engine draws.
DRAWING_NEUTRAL = {"ANIMATION_SAMPLER_INPUT_ACCESSOR_WITHOUT_BOUNDS", "MESH_PRIMITIVE_POSITION_ACCESSOR_WITHOUT_BOUNDS",
                   "ACCESSOR_MIN_MISMATCH", "ACCESSOR_MAX_MISMATCH", "ACCESSOR_JOINTS_INDEX_DUPLICATE"}


@pytest.fixture(scope="module")
def reference():
    return json.loads(REFERENCE.read_text())["files"]


@pytest.fixture(scope="module")
def judged(tmp_path_factory, reference):
    """(name, path) of every file the validator judged, written again here."""
    folder = tmp_path_factory.mktemp("corpus")
    files = list(corpus_files(folder)) + list(sample_files())
    assert sorted(name for name, _ in files) == sorted(reference)
    return files


def test_the_judged_bytes_are_still_written(judged, reference):
    changed = [name for name, path in judged
               if hashlib.sha256(path.read_bytes()).hexdigest() != reference[name]["sha256"]]
    assert changed == [], "rerun tests/make_validator_reference.py: these files changed since the validator judged them"


def test_every_validator_error_that_changes_the_drawing_is_a_check_error(judged, reference):
    missed, judged_errors = [], 0
    for name, path in judged:
        drawn = {code for code, _ in reference[name]["errors"]} - DRAWING_NEUTRAL
        if not drawn:
            continue
        judged_errors += 1
        report = check_file(path)
        if report.errors == 0:
            missed.append(f"{name}: validator {sorted(drawn)}, check {[f.code for f in report.findings]}")
    assert missed == []
    assert judged_errors > 100  # the corpus, and the samples the validator calls invalid


def test_samples_the_validator_passes_have_no_check_errors(judged, reference):
    samples = [(name, path) for name, path in judged if name.startswith("samples/") and not reference[name]["errors"]]
    assert len(samples) >= 5
    for name, path in samples:
        assert check_file(path).errors == 0, name


def test_samples_the_validator_fails_name_the_same_object(reference):
    root = Path(__file__).parent / "data" / "gltf-samples"
    cesium = check_file(root / "CesiumMan" / "CesiumMan.gltf")
    assert [(f.code, f.pointer) for f in cesium.findings if f.severity == ERROR] == [("weights-sum", "/meshes/0")]
    assert reference["samples/CesiumMan/CesiumMan.gltf"]["errors"][0][0] == "ACCESSOR_WEIGHTS_NON_NORMALIZED"
    fox = check_file(root / "Fox" / "Fox.gltf")
    assert [f.code for f in fox.findings if f.severity == ERROR] == ["accessor-stride"]
    assert {code for code, _ in reference["samples/Fox/Fox.gltf"]["errors"]} == {
        "ANIMATION_SAMPLER_ACCESSOR_WITH_BYTESTRIDE", "SKIN_IBM_ACCESSOR_WITH_BYTESTRIDE"}


# --- the rig checks, one flaw at a time on the valid worm of tests/gltf_cases.py -----------------
# Nodes 0-2 are the joints, node 3 the mesh; accessors: 2 WEIGHTS_0, 4 inverse binds, 5/6 the
# times and rotations of node 1, 9/10 the times and translations of node 1.
def _quaternion(accessor, key, q):
    return lambda doc: [doc.put(accessor, key, v, k) for k, v in enumerate(q)]


def _extra_joint(doc):
    doc.json["nodes"].append({"name": "tip", "translation": [0, 1, 0]})
    doc.json["nodes"][2]["children"] = [4]
    doc.json["skins"][0]["joints"].append(4)
    del doc.json["skins"][0]["inverseBindMatrices"]


RIG_CASES = [
    ("key-jump", _quaternion(6, 2, (1, 0, 0, 0)), "/animations/0/channels/0"),
    ("keyframe-quaternion", _quaternion(6, 1, (0, 0, 0, 2)), "/animations/0"),
    ("clip-explodes", lambda doc: doc.put(10, 2, 1000.0, 0), "/animations/0"),
    ("joint-scale-negative", _set(["nodes", 2, "scale"], [-1, 1, 1]), "/nodes/2"),
    ("joint-scale-non-uniform", _set(["nodes", 2, "scale"], [1, 2, 1]), "/nodes/2"),
    ("bone-zero-length", _set(["nodes", 2, "translation"], [0, 0, 0]), "/nodes/2"),
    ("joint-unused", _extra_joint, "/nodes/4"),
    ("no-inverse-binds", _extra_joint, "/skins/0"),
    ("bind-pose", lambda doc: doc.put(4, 2, 0.5, 12), "/nodes/"),
    ("inverse-bind-conditioning", lambda doc: [doc.put(4, 1, v, k) for k, v in ((0, 1e-8), (1, 0.0), (2, 0.0))],
     "/nodes/1"),
    ("weights-sum", lambda doc: doc.put(2, 0, 0.5, 0), "/meshes/0"),
    ("vertex-unweighted", lambda doc: doc.put(2, 0, 0.0, 0), "/meshes/0"),
    ("keyframe-times", lambda doc: doc.put(5, 2, 0.5), "/accessors/5"),
    ("node-rotation", _set(["nodes", 1, "rotation"], [0, 0, 0, 2]), "/nodes/1"),
    ("extension-unsupported", _set(["extensionsRequired"], ["EXT_made_up"]), ""),
    ("extension-ignored", _set(["extensionsUsed"], ["EXT_made_up"]), ""),
    ("texture-missing", _textured(uri="missing.png"), "/images/0"),
    ("texture-missing", _textured(_png(4, 4)), "/images/0"),
    ("accessor-stride", _set(["bufferViews", 5, "byteStride"], 4), "/accessors/5"),
    ("influences-dropped", lambda doc: doc.json["meshes"][0]["primitives"][0]["attributes"].update(
        JOINTS_1=1, WEIGHTS_1=2, JOINTS_2=1, WEIGHTS_2=2), "/meshes/0"),
    ("primitive-skipped", lambda doc: doc.json["meshes"][0]["primitives"].append(
        {**doc.json["meshes"][0]["primitives"][0], "mode": 0}), "/meshes/0/primitives/1"),
    ("inverse-bind-singular", lambda doc: [doc.put(4, 1, 0.0, k) for k in range(16)], "/skins/0"),
]


@pytest.mark.parametrize("code, mutate, pointer", RIG_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(RIG_CASES)])
def test_each_flaw_gives_its_code(code, mutate, pointer, tmp_path):
    doc = Doc(tmp_path)
    mutate(doc)
    report = check_file(doc.save())
    found = [f for f in report.findings if f.code == code]
    assert found, [(f.code, f.message) for f in report.findings]
    assert found[0].severity == CODES[code][0]
    assert found[0].pointer.startswith(pointer), found[0]
    assert found[0].message and "\n" not in found[0].message


@pytest.mark.parametrize("code, mutate, start", [
    ("joint-unused", _extra_joint, "1 joint of skeleton 'skin0' moves no vertex: 'tip'"),
    ("bind-pose", lambda doc: doc.put(4, 2, 0.5, 12),
     "1 joint of skeleton 'skin0' has an inverse bind that does not match its rest world matrix (off by"),
    ("weights-sum", lambda doc: doc.put(2, 0, 0.5, 0), "1 of 26 vertices has weights that do not sum to 1"),
])
def test_one_joint_or_vertex_is_said_in_the_singular(code, mutate, start, tmp_path):
    """Issue 29: "1 joint of skeleton 'skin0' have inverse binds ..." and its like."""
    doc = Doc(tmp_path)
    mutate(doc)
    found = [f.message for f in check_file(doc.save()).findings if f.code == code]
    assert len(found) == 1 and found[0].startswith(start), found


def test_the_valid_worm_has_no_findings_and_its_counts(tmp_path):
    report = check_file(Doc(tmp_path).save())
    assert report.findings == []
    assert (report.bones, report.vertices, report.clips) == (3, 26, [("linear", 2.0)])


def test_codes_are_stable_and_each_has_one_severity():
    assert all(severity in (ERROR, WARNING, INFO) for severity, _ in CODES.values())
    assert {"load-failed", "weights-sum", "key-jump", "clip-explodes", "bind-pose", "joint-unused"} <= set(CODES)


def test_cesiumman_checks_quickly():
    """A smoke bound (the figure is measured by scripts/bench_batch.py): well under a second."""
    import time

    path = Path(__file__).parent / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"
    check_file(path)
    start = time.perf_counter()
    check_file(path)
    assert time.perf_counter() - start < 1.0


# --- the command -------------------------------------------------------------------------------
def test_check_json_and_exit_codes(cli, tmp_path):
    (tmp_path / "good").mkdir()
    good = Doc(tmp_path / "good").save()
    bad_folder = tmp_path / "bad"
    bad_folder.mkdir()
    bad = Doc(bad_folder)
    bad.put(2, 0, 0.5, 0)
    bad = bad.save()
    result = cli("check", good, "--json")
    assert result.returncode == 0, result.stderr
    [document] = json.loads(result.stdout)
    assert document["file"] == str(good)
    # No rig finding; its clip's motion (a worm that stretches) has the motion checks' own.
    assert [f for f in document["findings"] if f["code"] not in MOTION_CODES] == []
    assert [clip["clip"] for clip in document["motion"]] == ["linear"]
    result = cli("check", tmp_path, "--json")
    assert result.returncode == 2
    documents = json.loads(result.stdout)
    assert [d["file"] for d in documents] == [str(bad), str(good)]
    finding = documents[0]["findings"][0]
    assert set(finding) == {"severity", "code", "message", "pointer"}
    assert (finding["severity"], finding["code"], finding["pointer"]) == ("error", "weights-sum", "/meshes/0")


def test_check_strict_counts_warnings(cli, tmp_path):
    doc = Doc(tmp_path)
    doc.json["nodes"][2]["scale"] = [1, 2, 1]
    path = doc.save()
    plain = cli("check", path)
    assert plain.returncode == 0, plain.stdout
    assert "warning joint-scale-non-uniform /nodes/2" in plain.stdout
    assert cli("check", path, "--strict").returncode == 2


def test_check_bad_paths_are_one_line(cli, tmp_path):
    for args, expected in (([tmp_path / "nope.glb"], "no such file or folder"),
                           ([tmp_path], "no model files"),
                           ([Path(__file__)], "cannot check .py files")):
        result = cli("check", *args)
        assert result.returncode == 2
        assert result.stderr.startswith("boneviewer: error:") and expected in result.stderr
        assert result.stderr.count("\n") == 1


def test_the_docs_list_every_code_with_its_severity():
    page = (Path(__file__).parents[1] / "docs" / "check-batch.md").read_text()
    for code, (severity, meaning) in CODES.items():
        assert f"| `{code}` | {severity} | {meaning} |" in page, code
