"""The files boneviewer writes that the node references judge (a plain module, not a test module).

``python tests/written_cases.py OUT_DIR`` writes every case into OUT_DIR with a manifest.json
(case -> its files and their sha256), and records in tests/data/written_fingerprints.json what
each case's file holds (tests/written_numbers.py: the structure exactly, the floats to compare
within a tolerance); tests/gltf_validator/validate_written.mjs (Khronos glTF-Validator) and
tests/babylon/generate_written_reference.mjs (Babylon.js's loader) read them and record their
verdicts in tests/data. tests/test_written_references.py writes the cases again and checks that
what is written is what the references judged, within the tolerance a machine's last bits need,
so any real change to the writer's output forces a new recording.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import gltf_cases  # noqa: E402
from viewer import load_model, save_gltf  # noqa: E402
from written_numbers import fingerprint  # noqa: E402

FINGERPRINTS = DATA / "written_fingerprints.json"
# Every model file under tests/data but the fuzzer's seeds (inputs to mutate, not references).
MODELS = sorted(p for p in DATA.rglob("*") if p.suffix in (".gltf", ".glb") and "fuzz" not in p.relative_to(DATA).parts)


def _posed(scene):
    """A pose on top of the model: two bones turned, the first morph target at 0.625."""
    bones = scene.skeletons[0].bones
    for bone, quaternion in zip(bones[1:3], ([0.2, 0.1, -0.3, 0.927], [-0.1, 0.25, 0.05, 0.961])):
        bone.get_pose_target().rotation_quaternion = quaternion
    for mesh in scene.morph_meshes:
        mesh.set_morph_weight(0, 0.625)
    return scene


def _case_name(path: Path) -> str:
    return str(path.relative_to(DATA)).replace("/", "__").replace(".", "_")


def cases() -> dict:
    """case name -> (a function that builds the scene, output file name, save_gltf keywords)."""
    table = {"character": (lambda: load_model(None), "character.glb", {})}
    for path in MODELS:
        table[_case_name(path)] = (lambda path=path: load_model(path), f"{_case_name(path)}.glb", {})
    table["CesiumMan-posed-gltf"] = (lambda: _posed(load_model(DATA / "gltf-samples/CesiumMan/CesiumMan.glb")),
                                     "CesiumMan-posed.gltf", {})
    table["RobotExpressive-posed"] = (lambda: _posed(load_model(DATA / "gltf-samples/RobotExpressive/"
                                                                "RobotExpressive.glb")),
                                      "RobotExpressive-posed.glb", {})
    for kind in gltf_cases.CASES:  # 8 influences, STEP and CUBICSPLINE, joints out of order, shared skins, ...
        table[f"case-{kind}"] = (lambda kind=kind: _edge_case(kind), f"case-{kind}.glb", {})
    table["Fox-keyed"] = (_keyed_fox, "Fox-keyed.glb", {})
    table["morph-worms-keyed"] = (_keyed_worms, "morph-worms-keyed.glb", {})
    table["character-keyed"] = (_keyed_character, "character-keyed.glb", {})
    for stem, model in (("CesiumMan", "gltf-samples/CesiumMan/CesiumMan.glb"),
                        ("RobotExpressive", "gltf-samples/RobotExpressive/RobotExpressive.glb"),
                        ("morph-worms", "morph-worms.gltf")):
        table[f"{stem}-bind"] = (lambda model=model: _posed(load_model(DATA / model)), f"{stem}-bind.glb",
                                 {"apply_pose_as_bind": True})
    return table


def _edge_case(kind: str):
    with tempfile.TemporaryDirectory() as folder:
        return load_model(gltf_cases.make_case(kind, Path(folder)))


def _keyed_fox():
    """Two clips authored on a loaded model: LINEAR and STEP keys, one of them into a loaded clip."""
    scene = load_model(DATA / "gltf-samples/Fox/Fox.glb")
    bones = scene.skeletons[0].bones
    scene.insert_keyframe("Nod", 0.0)
    bones[5].get_pose_target().rotation_quaternion = [0.0, 0.0, 0.3894, 0.9211]
    scene.insert_keyframe("Nod", 0.5, [bones[5]])
    scene.insert_keyframe("Nod", 1.0, [bones[5], bones[6]], interpolation="STEP")
    scene.insert_keyframe("Walk", 0.1, [bones[5]])
    return scene


def _keyed_worms():
    """Morph weights keyed beside the bones."""
    scene = load_model(DATA / "morph-worms.gltf")
    scene.insert_keyframe("Squash", 0.0)
    for mesh in scene.morph_meshes:
        mesh.set_morph_weight(0, 0.75)
    scene.skeletons[0].bones[1].get_pose_target().rotation_quaternion = [0.0, 0.2, 0.0, 0.98]
    scene.insert_keyframe("Squash", 0.8)
    return scene


def _keyed_character():
    """The built-in character (bones without nodes) waving."""
    scene = load_model(None)
    scene.insert_keyframe("Wave", 0.0)
    scene.find_bone("leftArm").rotate([0, 0, 1], 0.8)
    scene.insert_keyframe("Wave", 1.0, ["leftArm"])
    return scene


def write_case(name: str, folder: Path) -> dict:
    """Write case ``name`` into ``folder``; {file name: sha256} of every file it wrote."""
    build, file_name, options = cases()[name]
    before = set(folder.iterdir())
    save_gltf(build(), folder / file_name, **options)
    written = sorted(set(folder.iterdir()) - before) or [folder / file_name]
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in written}


def write_all(folder: Path) -> dict:
    """Every case into ``folder`` with its manifest.json, and the cases' fingerprints recorded
    into tests/data/written_fingerprints.json (the node references judge these same files)."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest, fingerprints = {}, {}
    for name, (_, file_name, _) in cases().items():
        case_folder = folder / name
        case_folder.mkdir(exist_ok=True)
        for old in case_folder.iterdir():
            old.unlink()
        manifest[name] = {"main": file_name, "files": write_case(name, case_folder)}
        fingerprints[name] = {"sha256": manifest[name]["files"], "fingerprint": fingerprint(case_folder / file_name)}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    FINGERPRINTS.write_text(json.dumps({"cases": fingerprints}, separators=(",", ":")) + "\n")
    return manifest


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/written_cases.py OUT_DIR")
    np.seterr(all="ignore")
    for case, entry in write_all(Path(sys.argv[1])).items():
        print(f"{case}: {', '.join(entry['files'])}")
