"""`boneviewer info` (issue 24): what a model file holds, from the Scene the viewer loads and the
file's own document; its counts agree with pygltflib's reading of every sample, and a hostile
file is refused as `render` refuses it, quickly."""

import json
import os
import time
from pathlib import Path

import pygltflib
import pytest

from viewer.cli import main
from viewer.loaders import inspect_model

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "gltf-samples"
MODELS = sorted({p for p in (*DATA.rglob("*.gltf"), *DATA.rglob("*.glb")) if "fuzz" not in p.relative_to(DATA).parts} |
                ({*SHARED.rglob("*.gltf"), *SHARED.rglob("*.glb")} if SHARED.is_dir() else set()))
CESIUM_MAN = DATA / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"
SIMPLE_SKIN = DATA / "gltf-samples" / "SimpleSkin" / "SimpleSkin.gltf"
KEYS = {"file", "scenes", "meshes", "skins", "animations", "materials", "textures", "extensions_used",
        "extensions_required"}


def test_there_are_models_to_compare():
    assert len(MODELS) >= 11


@pytest.mark.parametrize("path", MODELS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}")
def test_info_agrees_with_pygltflib(path):
    facts = inspect_model(path)
    facts.pop("_scene")
    gltf = pygltflib.GLTF2().load(str(path))
    assert [(s["name"], s["nodes"]) for s in facts["scenes"]] == [(s.name, len(s.nodes or [])) for s in gltf.scenes]
    assert facts["nodes"] == len(gltf.nodes)
    expected_meshes = []
    for mesh in gltf.meshes:
        names = (mesh.extras or {}).get("targetNames") or []
        targets = max(len(p.targets or []) for p in mesh.primitives)
        expected_meshes.append({
            "name": mesh.name, "primitives": len(mesh.primitives),
            "vertices": sum(gltf.accessors[p.attributes.POSITION].count for p in mesh.primitives),
            "influences": max(4 * sum(1 for key, value in vars(p.attributes).items()
                                      if key.startswith("JOINTS_") and value is not None) for p in mesh.primitives),
            "morph_targets": [names[i] if i < len(names) else f"target {i}" for i in range(targets)]})
    assert facts["meshes"] == expected_meshes
    assert [(s["name"], s["joints"]) for s in facts["skins"]] == [(s.name, len(s.joints)) for s in gltf.skins]
    for ours, theirs in zip(facts["animations"], gltf.animations, strict=True):
        assert (ours["name"], ours["channels"]) == (theirs.name, len(theirs.channels))
        duration = max(gltf.accessors[sampler.input].max[0] for sampler in theirs.samplers)
        assert ours["duration"] == pytest.approx(duration, rel=1e-6)
        assert ours["interpolations"] == sorted({s.interpolation or "LINEAR" for s in theirs.samplers})
    assert (facts["materials"], facts["textures"]) == (len(gltf.materials), len(gltf.textures))
    assert facts["extensions_used"] == (gltf.extensionsUsed or [])
    assert facts["extensions_required"] == (gltf.extensionsRequired or [])
    assert facts["size"]["file"] == path.stat().st_size


def test_info_json_has_the_keys_the_issue_lists(cli):
    result = cli("info", CESIUM_MAN, "--json", "--tree")
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout)
    assert KEYS <= set(facts)
    assert facts["file"] == str(CESIUM_MAN)
    assert facts["meshes"] == [{"name": "Cesium_Man", "primitives": 1, "vertices": 3273, "influences": 4,
                                "morph_targets": []}]
    assert facts["skins"][0] | {"depth": 0} == {"name": "Armature", "joints": 19, "root": "Skeleton_torso_joint_1",
                                                "depth": 0}
    animation = facts["animations"][0]
    assert (animation["duration"], animation["channels"]) == (2.0, 57)
    assert isinstance(facts["materials"], int) and isinstance(facts["textures"], int)
    bones = facts["bones"]
    assert len(bones) == 19 and bones[0]["depth"] == 0
    assert all(b["length"] is None or b["length"] > 0 for b in bones)
    assert sum(b["length"] is not None for b in bones) >= 12  # every bone with a child has one


def test_info_tables_and_tree_on_a_terminal(capsys):
    assert main(["info", str(DATA / "gltf-samples" / "Fox" / "Fox.glb"), "--tree"]) == 0
    out = capsys.readouterr().out
    for text in ("glTF 2.0 (glb)", "animations", "Survey", "3.4167", "b_Head_05", "size by part: geometry"):
        assert text in out
    # The tail hangs off the hip (three levels down), with its length after its name.
    assert any(line.startswith("      b_Tail01_012  ") and float(line.split()[-1]) > 0 for line in out.splitlines())


def test_info_on_cesium_man_is_quick():
    """A guard against a blow-up at 10 times or more the typical 20 ms (warm)."""
    inspect_model(CESIUM_MAN)  # imports and caches warm, as a second call in a session is
    started = time.perf_counter()
    best = min(_timed(CESIUM_MAN) for _ in range(5))
    assert best < 0.300, f"{best * 1000:.0f} ms"
    assert time.perf_counter() - started < 5


def _timed(path) -> float:
    started = time.perf_counter()
    inspect_model(path)
    return time.perf_counter() - started


def _hostile(tmp_path, name, edit) -> Path:
    document = json.loads(SIMPLE_SKIN.read_text())
    edit(document)
    path = tmp_path / f"{name}.gltf"
    path.write_text(json.dumps(document))
    return path


HOSTILE = {
    "huge-accessor": lambda d: d["accessors"].__setitem__(1, {"componentType": 5126, "count": 400_000_000,
                                                              "type": "VEC3"}),
    "deep-chain": lambda d: (d["nodes"].extend({"children": [len(d["nodes"]) + i + 1]} if i < 4999 else {}
                                               for i in range(5000)),
                             d["scenes"][0]["nodes"].append(3)),
    "node-cycle": lambda d: d["nodes"][2].__setitem__("children", [1]),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_info_refuses_a_hostile_file_as_render_does_in_under_a_second(case, tmp_path, capsys):
    path = _hostile(tmp_path, case, HOSTILE[case])
    info_error, elapsed = info_refuses_as_render_does(path, tmp_path, capsys)
    assert str(path) in info_error
    assert elapsed < 1.0, f"{elapsed:.2f} s"


def info_refuses_as_render_does(path, tmp_path, capsys) -> tuple[str, float]:
    """`info PATH` and `render PATH` both exit 2 with the same one error line: (that line, the
    seconds `info` took)."""
    started = time.perf_counter()
    assert main(["info", str(path)]) == 2
    elapsed = time.perf_counter() - started
    info_error = capsys.readouterr().err
    assert main(["render", str(path), "--out", str(tmp_path / "x.png")]) == 2
    render_error = capsys.readouterr().err
    assert info_error == render_error and len(info_error.strip().splitlines()) == 1
    return info_error, elapsed
    assert not (tmp_path / "x.png").exists()


def test_info_on_a_folder_or_a_missing_file(tmp_path, capsys):
    assert main(["info", str(CESIUM_MAN.parent)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["info", str(tmp_path / "none.glb")]) == 2
    assert "no such file" in capsys.readouterr().err
