"""Spring bones against @pixiv/three-vrm-springbone 3.5.5 (tests/data/threevrm_springs_reference.json,
recorded by tests/threejs_render/record_springs.py), their determinism, their API and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import springs_cases as sc
from viewer.errors import ViewerError

REFERENCE = json.loads((Path(__file__).parent / "data" / "threevrm_springs_reference.json").read_text())


@pytest.mark.parametrize("name", sc.CASES)
def test_joints_match_three_vrm(name):
    case = REFERENCE["cases"][name]
    assert case["inputs"] == sc.inputs(name)  # the reference is of these files
    scene, _, _ = sc.build(name)
    theirs = np.array(case["positions"])
    ours = sc.ours(name)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5 * sc.size(scene))
    # the springs do something: the chain is away from where the motion alone puts it
    _, pose_at, report = sc.build(name)
    pose_at(sc.STEPS * sc.DT)
    driven = np.array([node.get_world_matrix()[3, :3] for node in report])
    assert np.abs(ours - driven).max() > 0.02 * sc.size(scene)


@pytest.mark.parametrize("name", sc.CASES)
def test_colliders_shape_the_reference(name):
    """Without its colliders a case ends elsewhere: the comparison covers the collisions."""
    scene, pose_at, report = sc.build(name)
    for joint in scene.springs.joints:
        joint.colliders = []
    scene.springs.advance_to(sc.STEPS * sc.DT, pose_at, sc.DT)
    free = np.array([node.get_world_matrix()[3, :3] for node in report])
    assert np.abs(free - np.array(REFERENCE["cases"][name]["positions"])).max() > 1e-3 * sc.size(scene)


def test_same_time_same_pose_whatever_the_frame_rate():
    scene, pose_at, report = sc.build("fox_tail")
    springs = scene.springs
    for t in np.arange(0.0, 1.5, 1 / 24):  # a 24 fps playback up to 1.5 s
        springs.advance_to(t, pose_at)
    springs.advance_to(1.5, pose_at)
    a = np.array([node.get_world_matrix()[3, :3] for node in report])
    springs.advance_to(0.3, pose_at)  # back in time: simulated again from 0
    springs.advance_to(1.5, pose_at)
    b = np.array([node.get_world_matrix()[3, :3] for node in report])
    other, pose_other, report_other = sc.build("fox_tail")
    other.springs.advance_to(1.5, pose_other)  # straight there
    c = np.array([node.get_world_matrix()[3, :3] for node in report_other])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_reset_returns_every_joint_to_rest():
    scene, pose_at, _ = sc.build("sphere")
    rest = [np.array(j.bone.rotation_quaternion) for j in scene.springs.joints]
    scene.springs.advance_to(1.0, pose_at)
    assert max(np.abs(np.array(j.bone.rotation_quaternion) - r).max() for j, r in zip(scene.springs.joints, rest)) > 1e-3
    scene.springs.reset()
    for joint, r in zip(scene.springs.joints, rest):
        np.testing.assert_allclose(joint.bone.rotation_quaternion, r, atol=1e-12)
        np.testing.assert_allclose(joint.tail, joint.prev)


def test_file_springs_are_read():
    from viewer.loaders import load_model

    scene = load_model(str(sc.DATA / "springs" / "plane-collider.gltf"))
    springs = scene.springs
    assert len(springs) == 4 and len(springs.chains) == 1
    assert [j.bone.name for j in springs.joints] == ["Spring A", "Spring B", "Spring C", "Spring D"]
    (collider,) = springs.joints[0].colliders
    assert collider.shape == "plane" and collider.node.name == "Collider"  # the extended collider's shape
    assert springs.joints[0].hit_radius == 0.25 and springs.joints[0].drag == 0.4


@pytest.mark.parametrize("kwargs, words", [({"radius": -1.0}, "hit radius"), ({"stiffness": math.nan}, "stiffness"),
                                           ({"drag": 2.0}, "drag"),
                                           ({"colliders": [{"node": "nope", "radius": 1.0}]}, "'nope'")])
def test_add_chain_refuses_bad_values(kwargs, words):
    scene, _, _ = sc.build("sphere")
    with pytest.raises(ViewerError, match=words):
        scene.springs.add_chain("Spring A", **kwargs)


def _broken(tmp_path, required: bool, change) -> Path:
    source = sc.DATA / "springs" / "sphere-collider.gltf"
    document = json.loads(source.read_text())
    change(document["extensions"]["VRMC_springBone"])
    if required:
        document["extensionsRequired"] = ["VRMC_springBone"]
    (tmp_path / "sphere_mesh.bin").write_bytes((sc.DATA / "springs" / "sphere_mesh.bin").read_bytes())
    path = tmp_path / "broken.gltf"
    path.write_text(json.dumps(document))
    return path


BREAKS = {
    "negative radius": (lambda e: e["springs"][0]["joints"][0].update(hitRadius=-1), "hit radius"),
    "NaN stiffness": (lambda e: e["springs"][0]["joints"][1].update(stiffness="NaN"), "stiffness"),
    "missing node": (lambda e: e["colliders"][0].update(node=99), "node 99"),
}


@pytest.mark.parametrize("name", BREAKS)
def test_bad_springs_required_is_one_line_exit_2(tmp_path, name):
    from conftest import run_cli  # noqa: F401  (the project's CLI runner)

    change, words = BREAKS[name]
    path = _broken(tmp_path, True, change)
    result = run_cli("info", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", BREAKS)
def test_bad_springs_optional_opens_with_a_warning(tmp_path, name, caplog):
    from viewer.loaders import load_model

    change, words = BREAKS[name]
    scene = load_model(str(_broken(tmp_path, False, change)))
    assert len(scene.springs) == 0 and len(scene.nodes) == 6
    assert any(words in record.getMessage() and "VRMC_springBone" in record.getMessage() for record in caplog.records)


FOX_GLB = sc.DATA / "gltf-samples" / "Fox" / "Fox.glb"


def _png(path: Path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB"), dtype=np.int16)


def test_render_simulates_the_same_picture_at_the_same_time(tmp_path):
    from conftest import run_cli

    common = ["render", FOX_GLB, "--animation", "Run", "--size", "160x120", "--no-grid"]
    for name, extra in (("a", ["--time", "0.9"]), ("b", ["--time", "0.9"]), ("off", ["--time", "0.9", "--no-springs"])):
        result = run_cli(*common, "--spring-chain", sc.FOX_TAIL, *extra, "--out", tmp_path / f"{name}.png")
        assert result.returncode == 0, result.stderr
    plain = run_cli(*common, "--time", "0.9", "--out", tmp_path / "plain.png")
    assert plain.returncode == 0, plain.stderr
    a, b, off, without = (_png(tmp_path / f"{n}.png") for n in ("a", "b", "off", "plain"))
    np.testing.assert_array_equal(a, b)  # simulated from 0 at 1/60 s both times
    np.testing.assert_array_equal(off, without)  # --no-springs: the clip alone
    assert (np.abs(a - off).max(axis=2) > 40).sum() > 20  # the tail swung elsewhere


@pytest.mark.parametrize("chain, words", [("b_Nope:stiffness=1", "b_Nope"), ("b_Tail01_012:radius=-1", "hit radius"),
                                          ("b_Tail01_012:stiffness=nan", "stiffness")])
def test_bad_spring_chain_is_one_line_exit_2(tmp_path, chain, words):
    from conftest import run_cli

    result = run_cli("render", FOX_GLB, "--spring-chain", chain, "--size", "64x48", "--out", tmp_path / "x.png")
    assert result.returncode == 2
    assert words in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("name", sc.CASES)
def test_compiled_step_equals_numpy(name, monkeypatch):
    """csrc/ckernel.c's spring_step against this module's numpy step, the reference."""
    from viewer.model import native

    if native.ckernel is None or not hasattr(native.ckernel, "spring_step"):
        pytest.fail(f"the compiled kernel is not built ({native.describe()}): pip install -e .")
    compiled = sc.ours(name)
    scene, _, _ = sc.build(name)
    assert scene.springs._plan is None
    monkeypatch.setattr(native, "ckernel", None)
    reference = sc.ours(name)
    np.testing.assert_allclose(compiled, reference, rtol=0, atol=1e-12 * sc.size(scene))


def test_the_window_loop_swings_after_the_mixer_and_the_toggle_holds_them():
    from viewer.editing.editor import Editor

    scene, _, _ = sc.build("fox_tail")
    editor = Editor(scene)
    editor.playback.clip_index = next(i for i, c in enumerate(scene.animations) if c.name == "Walk")
    editor.play()
    joint = scene.springs.joints[1]
    rest = np.array(joint.bone.rotation_quaternion)
    editor.advance(0.0)  # the first frame shows the clip
    for _ in range(30):
        editor.advance(1 / 30)  # 30 fps: two spring steps a frame
    assert np.abs(np.array(joint.bone.rotation_quaternion) - rest).max() > 1e-2
    assert np.abs(joint.tail - joint.prev).max() > 0  # it is moving
    editor.set_springs(False)
    held = np.array(joint.tail)
    for _ in range(5):
        editor.advance(1 / 30)
    np.testing.assert_array_equal(joint.tail, held)  # off: not stepped
