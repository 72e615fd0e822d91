"""World-space skinned positions against Babylon.js's own glTF loader.

tests/data/babylon_gltf_reference.json is made by tests/babylon/generate_gltf_reference.mjs:
@babylonjs/core + @babylonjs/loaders in Node (right-handed scene, so positions are in glTF's
own space), every sample at rest and at 0, 0.37, 0.81 and 1.0 of each animation, positions
from mesh.getPositionData(applySkeleton) times the mesh's world matrix. The acceptance bar is
1e-4 of the model's size.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from viewer.gltf import load_gltf

DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((DATA / "babylon_gltf_reference.json").read_text())
CASES = [(model, sample) for model in REFERENCE["models"] for sample in model["samples"]]


@pytest.fixture(scope="module")
def scenes():
    return {}


@pytest.mark.parametrize("model, sample", CASES, ids=[
    f"{m['file']}-{s['animation_name'] if s['animation'] is not None else 'rest'}-{s['time']:.3f}" for m, s in CASES])
def test_positions_match_babylon_loader(model, sample, scenes):
    if model["file"] not in scenes:
        scenes[model["file"]] = load_gltf(DATA / "gltf-samples" / model["file"])
    scene = scenes[model["file"]]
    if sample["animation"] is None:
        for skeleton in scene.skeletons:
            skeleton.return_to_rest()
    else:
        clip = scene.animations[sample["animation"]]
        assert clip.name == sample["animation_name"] or sample["animation_name"].startswith("animation")
        assert abs(clip.duration - sample["duration"]) < 1e-6
        clip.apply(sample["time"])
    meshes = {mesh.node_index: mesh for mesh in scene.skinned_meshes}
    for expected in sample["meshes"]:
        got = meshes[expected["node"]].skinned_positions()
        want = np.asarray(expected["positions"], dtype=np.float64).reshape(-1, 3)
        assert got.shape == want.shape == (expected["vertex_count"], 3)
        error = float(np.abs(got - want).max())
        assert error <= 1e-4 * model["size"], f"error {error:.3g} = {error / model['size']:.2g} of the size"


def test_reference_covers_every_sample_and_animation():
    files = {model["file"] for model in REFERENCE["models"]}
    assert files == {"SimpleSkin/SimpleSkin.gltf", "RiggedSimple/RiggedSimple.gltf", "RiggedFigure/RiggedFigure.gltf",
                     "CesiumMan/CesiumMan.gltf", "CesiumMan/CesiumMan.glb", "Fox/Fox.gltf", "Fox/Fox.glb"}
    fox = next(m for m in REFERENCE["models"] if m["file"] == "Fox/Fox.glb")
    assert {s["animation_name"] for s in fox["samples"] if s["animation"] is not None} == {"Survey", "Walk", "Run"}
