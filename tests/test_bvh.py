"""The BVH loader: three.js's BVHLoader's joint positions, the up axis and scale, the scene it
builds, and bad files (one line naming the file and the line, fast, nothing allocated for what a
file only declares)."""

from __future__ import annotations

import hashlib
import json
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest

from viewer import load_bvh
from viewer.bvh.parse import read_bvh
from viewer.errors import ViewerError
from viewer.model import native

DATA = Path(__file__).parent / "data"
BVH = DATA / "bvh"
REFERENCE = json.loads((DATA / "threejs_bvh_reference.json").read_text())["files"]
WAVE = BVH / "wave_hello.bvh"


def joint_positions(scene, t: float) -> np.ndarray:
    scene.animations[0].apply(t)
    scene.prepare()
    skeleton = scene.skeletons[0]
    return skeleton.get_absolute_matrices()[:, 3, :3] @ scene.meshes[0].world_matrix[:3, :3] \
        + scene.meshes[0].world_matrix[3, :3]


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_joint_positions_equal_threejs_bvhloader(name):
    """scale=1.0, up="y", forward="z": the joints where three.js's BVHLoader puts them (with the
    OFFSET it adds to position keys taken out, tests/threejs/generate_bvh_reference.mjs), at frames
    and between."""
    reference = REFERENCE[name]
    path = BVH / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == reference["sha256"], "file changed: re-record"
    scene = load_bvh(path, scale=1.0, up="y", forward="z")
    bones = scene.skeletons[0].bones
    assert len(bones) == len(reference["names"])
    for bone, three_name in zip(bones, reference["names"]):
        assert bone.name == three_name or (three_name == "ENDSITE" and bone.name.endswith("_end"))
    size = None
    for frame in reference["frames"]:
        expected = np.array(frame["positions"])
        size = size or float(np.linalg.norm(expected.max(axis=0) - expected.min(axis=0)))
        got = joint_positions(scene, frame["time"])
        assert np.abs(got - expected).max() < 1e-5 * size, (name, frame["time"])


def test_the_shared_capture_is_z_up_and_stands_1_7_units_tall(caplog):
    with caplog.at_level("INFO", logger="boneviewer"):
        scene = load_bvh(WAVE)
    assert scene.bvh_import["up"] == "+z" and scene.bvh_import["detected"]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "scale 0.04" in lines[0] and "up axis +z (detected)" in lines[0]
    # Its first frame faces the file's +Y, away from its rest's facing: turned half a turn to face +Z.
    assert "forward axis +y (detected) turned 180° to +Z" in lines[0]
    assert (scene.bvh_import["forward"], scene.bvh_import["facing"], scene.bvh_import["turn"]) == ("+y", "detected", 180)
    first = joint_positions(scene, 0.0)
    assert abs(np.ptp(first[:, 1]) - 1.7) < 1e-9
    bones = [b.name for b in scene.skeletons[0].bones]
    head, foot = first[bones.index("Head")], first[bones.index("LeftFoot")]
    assert head[1] - foot[1] > 1.3  # standing: the head well above the feet
    assert_faces_plus_z(first, bones)
    assert scene.animations[0].name == "wave_hello"
    assert scene.animations[0].duration == pytest.approx(838 * 0.008342)


@pytest.mark.parametrize("name,up", [("human_zxy_root_offset.bvh", "+y"), ("asf_zup_xyz.bvh", "+z"),
                                     ("lying_rest.bvh", "+y"), ("all_orders_colon_names.bvh", "+y")])
def test_up_axis_detected_from_the_first_frame(name, up):
    scene = load_bvh(BVH / name)
    assert scene.bvh_import["up"] == up
    first = joint_positions(scene, 0.0)
    assert abs(np.ptp(first[:, 1]) - 1.7) < 1e-9
    bones = [b.name.split(":")[-1] for b in scene.skeletons[0].bones]
    assert first[bones.index("Head"), 1] > first[bones.index("Hips"), 1] + 0.3


def test_scale_and_up_given_keep_the_files_numbers():
    scene = load_bvh(BVH / "human_zxy_root_offset.bvh", scale=1.0, up="y", forward="z")
    row = [float(v) for v in (BVH / "human_zxy_root_offset.bvh").read_text().split("Frame Time:")[1]
           .splitlines()[1].split()[:3]]
    assert np.allclose(joint_positions(scene, 0.0)[0], row)  # position channels in place of the OFFSET
    turned = load_bvh(BVH / "human_zxy_root_offset.bvh", scale=2.0, up="-z")
    x, y, z = row
    assert np.allclose(joint_positions(turned, 0.0)[0], np.array([x, -z, y]) * 2.0)


@pytest.mark.parametrize("name", ["human_zxy_root_offset.bvh", "all_orders_colon_names.bvh", "wave_hello.bvh"])
def test_scale_1_up_y_forward_z_keep_the_files_numbers_bit_for_bit(name):
    """Given all three (scale 1, up y, forward z), nothing turns or scales: every OFFSET is a
    node's rest translation and every position channel a translation key, as parsed."""
    motion = read_bvh(BVH / name)
    scene = load_bvh(BVH / name, scale=1.0, up="y", forward="z")
    assert scene.bvh_import == {"scale": 1.0, "up": "+y", "detected": False, "forward": "+z", "facing": "given",
                                "turn": 0}
    nodes = {node.name: node for node in scene.nodes}
    keys = {channel.node.name: channel.values for channel in scene.animations[0].channels
            if channel.path == "translation"}
    assert keys
    for joint in motion.joints:
        assert np.array_equal(nodes[joint.name].position, joint.offset), joint.name
        columns = [joint.first_column + k for k, c in enumerate(joint.channels) if c.endswith("position")]
        if columns:
            axes = ["XYZ".index(c[0]) for c in joint.channels if c.endswith("position")]
            assert np.array_equal(keys[joint.name][:, axes], motion.values[:, columns]), joint.name


def assert_faces_plus_z(positions, names):
    """glTF's front: a figure facing +Z (Y up) has its left hip and shoulder at +X of its right ones,
    level across Z (within 0.3 of the width: a first frame need not stand square)."""
    plain = [name.split(":")[-1] for name in names]
    for left, right in (("LeftUpLeg", "RightUpLeg"), ("LeftArm", "RightArm")):
        across = positions[plain.index(left)] - positions[plain.index(right)]
        assert across[0] > 0 and abs(across[2]) < 0.3 * across[0], (left, across)


def figure(left: tuple, root_turn: float = 0.0) -> str:
    """A small Y-up figure whose left side is at ``left`` (a unit vector across Y) at rest; its
    root turns ``root_turn`` degrees about +Y in both frames."""
    l = np.array(left, dtype=float)
    def at(v):
        return " ".join(f"{c:g}" for c in v)
    text = "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 90 0\n  CHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation\n"
    text += "  JOINT Spine\n  {\n    OFFSET 0 20 0\n    CHANNELS 3 Yrotation Xrotation Zrotation\n"
    text += "    JOINT Head\n    {\n      OFFSET 0 30 0\n      CHANNELS 3 Yrotation Xrotation Zrotation\n"
    text += "      End Site\n      {\n        OFFSET 0 15 0\n      }\n    }\n"
    for side, sign in (("Left", 1), ("Right", -1)):
        text += f"    JOINT {side}Arm\n    {{\n      OFFSET {at(l * 18 * sign + [0, 25, 0])}\n"
        text += f"      CHANNELS 3 Yrotation Xrotation Zrotation\n      End Site\n      {{\n        OFFSET {at(l * 50 * sign)}\n      }}\n    }}\n"
    text += "  }\n"
    for side, sign in (("Left", 1), ("Right", -1)):
        text += f"  JOINT {side}UpLeg\n  {{\n    OFFSET {at(l * 9 * sign)}\n    CHANNELS 3 Yrotation Xrotation Zrotation\n"
        text += f"    JOINT {side}Foot\n    {{\n      OFFSET 0 -85 0\n      CHANNELS 3 Yrotation Xrotation Zrotation\n"
        text += "      End Site\n      {\n        OFFSET 0 -5 10\n      }\n    }\n  }\n"
    row = " ".join(["0 90 0", f"{root_turn:g} 0 0"] + ["0 0 0"] * 8)
    return text + f"}}\nMOTION\nFrames: 2\nFrame Time: 0.1\n{row}\n{row}\n"


# (left side at rest, root turn in the first frame) -> the file's forward axis and the turn to +Z
FACINGS = {"faces -z": ((-1, 0, 0), 0.0, "-z", 180), "faces +x": ((0, 0, -1), 0.0, "+x", -90),
           "rest faces +z, first frame +x": ((1, 0, 0), 90.0, "+x", -90),
           "faces +z": ((1, 0, 0), 0.0, "+z", 0)}


@pytest.mark.parametrize("case", sorted(FACINGS))
def test_a_capture_is_turned_to_face_plus_z_in_its_first_frame(case, tmp_path):
    left, root_turn, forward, turn = FACINGS[case]
    path = tmp_path / "figure.bvh"
    path.write_text(figure(left, root_turn))
    scene = load_bvh(path)
    assert (scene.bvh_import["forward"], scene.bvh_import["facing"], scene.bvh_import["turn"]) == (forward, "detected", turn)
    names = [b.name for b in scene.skeletons[0].bones]
    assert_faces_plus_z(joint_positions(scene, 0.0), names)
    # Given, the same forward axis makes the same figure; another one is obeyed as given.
    given = load_bvh(path, forward=forward)
    assert np.allclose(joint_positions(given, 0.0), joint_positions(scene, 0.0), atol=1e-9)
    kept = load_bvh(path, forward="z")
    assert kept.bvh_import["turn"] == 0 and kept.bvh_import["facing"] == "given"
    first, rest = joint_positions(kept, 0.0), kept.skeletons[0]
    across = first[names.index("LeftUpLeg")] - first[names.index("RightUpLeg")]
    expected_left = np.array(left, float) if not root_turn else np.array([0.0, 0.0, -1.0])  # +90 about Y: +X to -Z
    assert np.allclose(across / np.linalg.norm(across), expected_left, atol=1e-9)


def test_forward_along_up_and_unknown_axes_are_one_line(tmp_path):
    with pytest.raises(ViewerError, match="forward axis -z is along the up axis \\+z"):
        load_bvh(WAVE, up="z", forward="-z")
    with pytest.raises(ViewerError, match="forward axis 'w'"):
        load_bvh(WAVE, forward="w")
    with pytest.raises(ViewerError, match="forward axis \\+y is along the up axis \\+y"):  # up detected (+Y)
        load_bvh(BVH / "human_zxy_root_offset.bvh", forward="y")


def test_a_figure_without_known_hips_or_shoulders_keeps_its_facing(tmp_path):
    path = tmp_path / "chain.bvh"
    path.write_text(deep(4))
    scene = load_bvh(path)
    assert (scene.bvh_import["facing"], scene.bvh_import["turn"]) == ("not detected", 0)


def test_end_sites_are_leaf_bones_named_after_their_parent():
    scene = load_bvh(BVH / "asf_zup_xyz.bvh")
    bones = {b.name: b for b in scene.skeletons[0].bones}
    end = bones["LeftWrist_end"]
    assert end.get_parent() is bones["LeftWrist"] and not end.children
    assert len([n for n in bones if n.endswith("_end")]) == 5
    # The capsule mesh: every vertex rigidly on one bone, and it renders in the model's bounds.
    mesh = scene.skinned_meshes[0]
    assert (mesh.weights[:, 0] == 1).all() and mesh.weights[:, 1:].sum() == 0
    assert set(np.unique(mesh.joints[:, 0])) <= {i for i, b in enumerate(scene.skeletons[0].bones) if b.children}


def test_a_position_channel_on_a_joint_replaces_its_offset():
    scene = load_bvh(BVH / "all_orders_colon_names.bvh", scale=1.0, up="y")
    arm = scene.find_bone("mixamorig:LeftArm").get_transform_node()
    text = (BVH / "all_orders_colon_names.bvh").read_text()
    row = [float(v) for v in text.split("Frame Time:")[1].splitlines()[1].split()]
    # Columns: Hips 6, Spine 3, Neck 3, Head 2, then LeftArm's Xposition Yposition Zposition.
    scene.animations[0].apply(0.0)
    assert np.allclose(arm.position, row[14:17])


# --- bad input --------------------------------------------------------------------------------
GOOD = (BVH / "asf_zup_xyz.bvh").read_text()
HEAD, MOTION = GOOD.split("MOTION\n")
ROWS = MOTION.splitlines()[2:]
MOTION_LINE = HEAD.count("\n") + 1  # the line number of MOTION


def motion(rows, frames=None, frame_time="0.008333"):
    frames = len(rows) if frames is None else frames
    return HEAD + f"MOTION\nFrames: {frames}\nFrame Time: {frame_time}\n" + "\n".join(rows) + "\n"


def deep(levels: int) -> str:
    text = "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
    for k in range(1, levels):
        text += f"JOINT j{k}\n{{\nOFFSET 0 1 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
    return text + "}\n" * levels + "MOTION\nFrames: 1\nFrame Time: 0.1\n" + " 0" * 3 * levels + "\n"


def wide(joints: int) -> str:
    text = "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
    text += "".join(f"JOINT j{k}\n{{\nOFFSET 0 1 0\nCHANNELS 0\n}}\n" for k in range(1, joints))
    return text + "}\nMOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0\n"


BAD = {
    "missing brace": (GOOD.replace("JOINT Neck\n    {", "JOINT Neck", 1), 11, "expected { after JOINT Neck, got 'OFFSET'"),
    "unclosed": (HEAD.rsplit("}", 1)[0] + "\n", HEAD.count("\n"), "the file ends before"),
    "channel count": (motion(ROWS[:1] + [ROWS[1] + " 1.0"] + ROWS[2:]), MOTION_LINE + 4, "MOTION row 2 has 58 values; the CHANNELS lines add up to 57"),
    "short and long rows": (motion([ROWS[0] + " 1", " ".join(ROWS[1].split()[:-1])] + ROWS[2:]),
                            MOTION_LINE + 3, "MOTION row 1 has 58 values"),
    "nan": (motion(ROWS[:2] + [ROWS[2].replace(ROWS[2].split()[5], "nan", 1)] + ROWS[3:]), MOTION_LINE + 5,
            "'nan' is not a finite number"),
    "word": (motion(ROWS[:3] + [ROWS[3].replace(ROWS[3].split()[4], "abc", 1)] + ROWS[4:]), MOTION_LINE + 6,
             "'abc' is not a number"),
    "frames disagree": (motion(ROWS, frames=len(ROWS) + 1), MOTION_LINE + 1, "Frames: 21 but the file has 20"),
    "billion frames": (motion(ROWS, frames=10 ** 9), MOTION_LINE + 1, "too many"),
    "zero frame time": (motion(ROWS, frame_time="0"), MOTION_LINE + 2, "Frame Time must be more than 0"),
    "negative frame time": (motion(ROWS, frame_time="-0.01"), MOTION_LINE + 2, "Frame Time must be more than 0"),
    "bad channel": (GOOD.replace("Xrotation Yrotation Zrotation", "Xrotation Yrotation Wrotation", 1), 5,
                    "unknown channel 'Wrotation'"),
    "offset word": (GOOD.replace("OFFSET 0 0 4", "OFFSET 0 zero 4", 1), 8, "expected a number, got 'zero'"),
    "deep nesting": (deep(300), 2 + 4 * 256, "nested deeper than 256"),
    "many joints": (wide(5000), 6 + 5 * 4095, "more than 4096 joints"),
    "not bvh": ("<html>\n", 1, "expected HIERARCHY"),
    "second root": (HEAD + "ROOT Again\n{\nOFFSET 0 0 0\n}\n", HEAD.count("\n") + 1, "a second ROOT"),
}


@pytest.fixture(params=["C", "numpy"])
def motion_reader(request, monkeypatch):
    """The MOTION rows read by the compiled reader (when built) and by numpy's, the reference."""
    if request.param == "numpy":
        monkeypatch.setattr(native, "ckernel", None)
    elif native.ckernel is None:
        pytest.skip("the compiled kernel is not built here")  # the package test builds without it too
    return request.param


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_files_get_one_line_naming_the_file_and_line(tmp_path, case, motion_reader):
    text, line, message = BAD[case]
    path = tmp_path / f"{case.replace(' ', '_')}.bvh"
    path.write_text(text)
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(ViewerError) as raised:
        load_bvh(path)
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    error = str(raised.value)
    assert "\n" not in error
    assert error.startswith(f"{path}: line {line}: "), error
    assert message in error, error
    assert elapsed < 5.0  # a guard against a blow-up: the slowest case ("many joints") takes 0.3 s
    assert peak < 20 * len(text) + 2_000_000  # in proportion to the file, never to what it declares


@pytest.mark.parametrize("name", [*sorted(REFERENCE), "wave_hello.bvh"])
def test_the_compiled_motion_reader_equals_numpys_bit_for_bit(name, monkeypatch):
    if native.ckernel is None:
        pytest.skip("the compiled kernel is not built here")
    compiled = read_bvh(BVH / name).values
    monkeypatch.setattr(native, "ckernel", None)
    reference = read_bvh(BVH / name).values
    assert compiled.dtype == reference.dtype and compiled.shape == reference.shape
    assert compiled.tobytes() == reference.tobytes()


def test_the_compiled_motion_readers_fast_path_equals_numpys_bit_for_bit():
    """Plain decimals take the compiled reader's fast path (Clinger's: digits up to 2^53 over a
    power of ten up to 1e22), the rest strtod: every form either way reads as numpy reads it."""
    if native.ckernel is None:
        pytest.skip("the compiled kernel is not built here")
    rng = np.random.default_rng(30)
    magnitudes = 10.0 ** rng.uniform(-25, 18, 3000) * rng.choice([-1, 1], 3000)
    words = [f"{v:.{p}f}" for v, p in zip(magnitudes, rng.integers(0, 24, 3000))]  # up to 41 digits
    words += [repr(float(v)) for v in magnitudes[:600]]  # shortest round-trip forms, exponents included
    words += [f"{v:.{p}e}" for v, p in zip(magnitudes[600:1200], rng.integers(0, 18, 600))]
    words += ["0", "-0", "+0", "-0.0", "1.", "-.5", "+.25", "007", "0.1", "9007199254740992", "9007199254740993",
              "9007199254740992.5", "0.0000000000000000000001", "0.00000000000000000000001", "123456789.123456789",
              "1e22", "1E-5", "-2.5e+3", "4503599627370497.5"]
    words += ["0"] * (-len(words) % 7)
    text = "\n".join(" ".join(words[k:k + 7]) for k in range(0, len(words), 7))
    values = np.empty((len(words) // 7, 7))
    assert native.ckernel.parse_rows(text, values, 7) == -1
    reference = np.array([float(word) for word in words])  # Python's float(), correctly rounded as strtod
    assert values.reshape(-1).tobytes() == reference.tobytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.fromstring(text, dtype=np.float64, sep=" ").tobytes() == reference.tobytes()


@pytest.mark.parametrize("row, why", [("1 2", "short"), ("1 2 3 4", "long"), ("1 0x10 3", "hex"),
                                      ("1 inf 3", "infinite"), ("1 2e 3", "cut exponent"), ("1 2,5 3", "comma"),
                                      ("", "blank")])
def test_the_compiled_motion_reader_refuses_what_numpys_refuses(row, why):
    if native.ckernel is None:
        pytest.skip("the compiled kernel is not built here")
    values = np.zeros((3, 3))
    assert native.ckernel.parse_rows("\n".join(["1 2 3", row, "4 5 6"]), values, 3) == 1, why
    assert native.ckernel.parse_rows("1 2 3\n\t4 5 6 \r\n7 8 9", values, 3) == -1
    assert values.tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert native.ckernel.parse_rows("1 2 3\n4 5 6", values, 3) == 2  # a row missing at the end


def test_bad_arguments():
    with pytest.raises(ViewerError, match="up axis 'w'"):
        load_bvh(WAVE, up="w")
    with pytest.raises(ViewerError, match="scale must be a finite number more than 0"):
        load_bvh(WAVE, scale=0)


def test_the_command_line_says_the_line_and_exits_2(cli, tmp_path):
    text, line, _ = BAD["frames disagree"]
    path = tmp_path / "bad.bvh"
    path.write_text(text)
    result = cli("render", path, "--out", tmp_path / "a.png")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"boneviewer: error: {path}: line {line}: "), result.stderr
    assert not (tmp_path / "a.png").exists()


def test_bvh_options_on_the_command_line(cli, tmp_path):
    out = tmp_path / "asf.png"
    result = cli("render", BVH / "asf_zup_xyz.bvh", "--bvh-up", "z", "--bvh-scale", "0.1", "--bvh-forward=-y",
                 "--out", out, "--size", "120x120")
    assert result.returncode == 0, result.stderr
    assert (f"{BVH / 'asf_zup_xyz.bvh'}: BVH scale 0.1, up axis +z (given) turned to +Y, forward axis -y (given) "
            "faces +Z") in result.stderr
    assert out.is_file()


@pytest.mark.parametrize("command", [["render"], ["view"], ["export", "--out", "x.glb"], ["info"],
                                     ["serve", "--listen", "0"]])
def test_every_command_that_opens_a_model_takes_the_bvh_options(command):
    from viewer.cli import build_parser

    args = build_parser().parse_args([command[0], str(WAVE), *command[1:], "--bvh-scale", "2", "--bvh-up", "z",
                                      "--bvh-forward", "x"])
    assert (args.bvh_scale, args.bvh_up, args.bvh_forward) == (2.0, "z", "x")


@pytest.fixture
def warnings_said():
    """The lines the 'boneviewer' logger warns, collected (whatever handlers a command set up)."""
    import logging

    said = []

    class Collect(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                said.append(record.getMessage())

    handler = Collect()
    logging.getLogger("boneviewer").addHandler(handler)
    yield said
    logging.getLogger("boneviewer").removeHandler(handler)


def test_bvh_options_with_no_bvh_file_are_one_warning(warnings_said, capsys):
    import argparse

    from viewer.cli import main
    from viewer.cli.common import bvh_options

    fox = DATA / "gltf-samples" / "Fox" / "Fox.glb"
    assert main(["info", str(fox), "--bvh-up", "z", "--bvh-scale", "3"]) == 0
    assert warnings_said == [f"--bvh-scale, --bvh-up ignored: {fox} is not a BVH file (they apply to a .bvh model)"]
    # render/view/export: the same, unless --motion is a BVH file, which they then apply to.
    render = dict(model=str(fox), bvh_scale=None, bvh_up=None, bvh_forward="x", motion=None)
    assert bvh_options(argparse.Namespace(**render))["bvh_forward"] == "x"
    assert warnings_said[1] == (f"--bvh-forward ignored: {fox} is not a BVH file (it applies to a .bvh model or a "
                                "--motion FILE.bvh)")
    bvh_options(argparse.Namespace(**dict(render, motion=WAVE)))
    bvh_options(argparse.Namespace(**dict(render, model=str(WAVE))))
    bvh_options(argparse.Namespace(**dict(render, bvh_forward=None)))
    assert len(warnings_said) == 2
