"""`boneviewer info` on BVH files: what the file says (joints, End Sites, channels and their
order, frames), counted here from the file's text; what the loader chose (scale, up axis, the
generated mesh); the top-level keys a glTF file's JSON has; hostile files refused as `render`
refuses them, quickly."""

import json
import re
from pathlib import Path

import pytest

from test_bvh import BAD
from test_info import info_refuses_as_render_does
from viewer.cli import main
from viewer.loaders import inspect_model

DATA = Path(__file__).parent / "data"
BVH = DATA / "bvh"
HUMAN = BVH / "human_zxy_root_offset.bvh"
CESIUM_MAN = DATA / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"


def from_text(path: Path) -> dict:
    """The file's joints, End Sites, CHANNELS lines and frames, read with regular expressions."""
    text = path.read_text()
    head, motion = text.split("MOTION", 1)
    channels = [line.split()[2:] for line in head.splitlines() if line.split()[:1] == ["CHANNELS"]]
    return {"joints": len(re.findall(r"^\s*(?:ROOT|JOINT)\s", head, re.M)),
            "end_sites": len(re.findall(r"^\s*End Site", head, re.M)),
            "channels": channels,
            "frames": int(re.search(r"Frames:\s*(\d+)", motion).group(1)),
            "frame_time": float(re.search(r"Frame Time:\s*(\S+)", motion).group(1))}


@pytest.mark.parametrize("name", sorted(p.name for p in BVH.glob("*.bvh") if p.stat().st_size < 100_000))
def test_info_agrees_with_the_files_text(name):
    path = BVH / name
    facts = inspect_model(path)
    scene = facts.pop("_scene")
    expected, bvh = from_text(path), facts["bvh"]
    assert (bvh["joints"], bvh["end_sites"]) == (expected["joints"], expected["end_sites"])
    assert facts["nodes"] == facts["skins"][0]["joints"] == expected["joints"] + expected["end_sites"]
    assert [j["channels"] for j in bvh["hierarchy"] if not j["end_site"]] == expected["channels"]
    assert all(j["channels"] == [] and j["order"] is None for j in bvh["hierarchy"] if j["end_site"])
    for joint in bvh["hierarchy"]:
        assert joint["order"] == ("".join(c[0] for c in joint["channels"] if c.endswith("rotation")) or None)
    assert bvh["channels"] == sum(len(c) for c in expected["channels"])
    assert (bvh["frames"], bvh["frame_time"]) == (expected["frames"], expected["frame_time"])
    assert bvh["duration"] == pytest.approx((expected["frames"] - 1) * expected["frame_time"])
    assert facts["animations"][0]["duration"] == bvh["duration"]
    assert bvh["scale"] == pytest.approx(scene.bvh_import["scale"]) and bvh["scale"] > 0
    assert facts["meshes"][0]["vertices"] == len(scene.meshes[0].positions) == facts["drawn"]["vertices"]
    lines = path.read_text().splitlines()
    for joint in bvh["hierarchy"]:  # the line that opens the joint
        assert ("End Site" if joint["end_site"] else joint["name"]) in lines[joint["line"] - 1]


def test_info_json_has_the_gltf_keys_and_what_the_loader_chose(cli):
    result = cli("info", BVH / "asf_zup_xyz.bvh", "--json", "--tree")
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout)
    gltf = inspect_model(CESIUM_MAN)
    gltf.pop("_scene")
    assert set(gltf) <= set(facts)
    for key in set(gltf) - {"version"}:  # a BVH has no format version (null)
        assert type(facts[key]) is type(gltf[key]), key
        if isinstance(gltf[key], list) and gltf[key] and facts[key]:
            assert set(gltf[key][0]) <= set(facts[key][0]), key  # the same fields in each entry
    assert (facts["format"], facts["version"], facts["materials"], facts["textures"]) == ("bvh", None, 0, 0)
    assert all(isinstance(facts["bvh"][k], int) for k in ("joints", "end_sites", "channels", "frames"))
    assert (facts["bvh"]["up"], facts["bvh"]["up_detected"]) == ("+z", True)  # Z-up, as the file's data says
    assert (facts["bvh"]["forward"], facts["bvh"]["facing"], facts["bvh"]["turn"]) == ("-y", "detected", 0)
    assert facts["bvh"]["rotation_orders"] == {"XYZ": 18}
    assert facts["meshes"][0]["generated"] is True and facts["meshes"][0]["influences"] == 1
    assert facts["animations"][0]["paths"] == {"translation": 1, "rotation": 18}
    assert len(facts["bones"]) == 23 and facts["bones"][0] == {"name": "Hips", "depth": 0,
                                                                "length": facts["bones"][0]["length"]}


def test_info_loads_a_bvh_with_the_options_given(capsys):
    from viewer.cli import main

    assert main(["info", str(BVH / "wave_hello.bvh"), "--json", "--bvh-up", "z", "--bvh-forward", "x",
                 "--bvh-scale", "0.5"]) == 0
    facts = json.loads(capsys.readouterr().out)["bvh"]
    assert (facts["scale"], facts["up"], facts["up_detected"]) == (0.5, "+z", False)
    assert (facts["forward"], facts["facing"], facts["turn"]) == ("+x", "given", -90)


def test_info_tables_on_a_terminal(capsys):
    assert main(["info", str(BVH / "all_orders_colon_names.bvh")]) == 0
    out = capsys.readouterr().out
    facts = inspect_model(BVH / "all_orders_colon_names.bvh")
    assert len(facts["bvh"]["rotation_orders"]) >= 6  # every order, as the file's name says
    for text in ("BVH motion capture", "End Site", "generated mesh", f"scale {facts['bvh']['scale']:.6g}",
                 f"{facts['bvh']['frames']} frames"):
        assert text in out
    for order in facts["bvh"]["rotation_orders"]:
        assert f"{order} (" in out


def test_scene_is_refused_for_a_bvh(capsys):
    assert main(["info", str(HUMAN), "--scene", "0"]) == 2
    assert "a BVH file has one skeleton" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["deep nesting", "many joints", "billion frames", "frames disagree", "nan",
                                  "not bvh"])
def test_info_refuses_a_hostile_bvh_as_render_does_in_under_a_second(case, tmp_path, capsys):
    text, line, _ = BAD[case]
    path = tmp_path / "hostile.bvh"
    path.write_text(text)
    info_error, elapsed = info_refuses_as_render_does(path, tmp_path, capsys)
    assert f"{path}: line {line}: " in info_error
    assert elapsed < 1.0, f"{elapsed:.2f} s"
    assert not (tmp_path / "x.png").exists()
