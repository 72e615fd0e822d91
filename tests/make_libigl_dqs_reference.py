"""Records libigl's dual-quaternion skinning (``igl.dqs``, PyPI ``libigl`` 2.5.1: 2.6 dropped that
binding) of CesiumMan, the Fox and RobotExpressive at several frames into
tests/data/libigl_dqs_reference.npz, so the suite needs no libigl at run time.

    pip install --target /tmp/igl libigl==2.5.1 scipy   # once; any folder
    PYTHONPATH=/tmp/igl .venv/bin/python tests/make_libigl_dqs_reference.py

For every skinned mesh and frame it keeps what libigl was given: the rest vertices (the mesh's
positions as loaded), its joints and weights (libigl takes them as a dense (V, bones) matrix),
each bone's rotation quaternion (x, y, z, w) and translation (the rigid part of the final
matrix, found by scipy's Rotation.from_matrix, not by boneviewer's code), and what libigl
returned.

libigl 2.5.1's dqs sums the quaternions with the signs it is given; the check that negates a
quaternion on the other hemisphere from the sum so far came later (libigl pull request 2390,
2024, as dqs.cpp has it now). So the signs given here are made consistent first (each bone's
quaternion turned to the hemisphere of a bone it shares a vertex with, over the graph of bones
that share vertices), and checked: on every vertex, every two of its bones' quaternions have a
dot product of at least 0, where both versions of libigl give the same result. The sha256 of the rest vertices, joints and weights (bytes the loader writes without
arithmetic that differs between machines) lets tests/test_dual_quaternions.py check it compares
the same inputs; the bone transforms it compares with a tolerance.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS.parent))

REFERENCE = TESTS / "data" / "libigl_dqs_reference.npz"
# (model, clip index, times in seconds)
CASES = (("CesiumMan", 0, (0.3, 1.0, 1.7)), ("Fox", 0, (0.5, 1.5, 2.5)), ("RobotExpressive", 0, (0.5, 1.5, 2.5)))


def model_path(name: str) -> Path:
    return TESTS / "data" / "gltf-samples" / name / f"{name}.glb"


def input_digest(mesh) -> str:
    """sha256 over the rest vertices, joints and weights as the loader gives them."""
    digest = hashlib.sha256()
    for array in (mesh.positions, mesh.joints, mesh.weights):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def posed(name: str, clip: int, time: float):
    """The model loaded and posed at ``time`` of its clip ``clip``: (scene, [(index, mesh, finals)])."""
    from viewer.loaders import load_model

    scene = load_model(model_path(name))
    scene.animations[clip].apply(time)
    meshes = []
    for index, mesh in enumerate(scene.skinned_meshes):
        mesh.skeleton.prepare()
        meshes.append((index, mesh, np.array(mesh.skeleton.get_transform_matrices(), dtype=np.float64)))
    return scene, meshes


def hemisphere_consistent(quaternions, joints, weights) -> np.ndarray:
    """The quaternions with signs chosen so that every two bones sharing a vertex lie on one
    hemisphere (breadth first over the bones that share vertices); an error where none fits."""
    quaternions = quaternions.copy()
    neighbours = {bone: set() for bone in range(len(quaternions))}
    for row, weight in zip(joints, weights):
        used = [int(j) for j, w in zip(row, weight) if w > 0]
        for a in used:
            neighbours[a].update(b for b in used if b != a)
    seen = set()
    for start in range(len(quaternions)):
        if start in seen:
            continue
        seen.add(start)
        queue = [start]
        while queue:
            bone = queue.pop(0)
            for other in sorted(neighbours[bone] - seen):
                if quaternions[other] @ quaternions[bone] < 0:
                    quaternions[other] = -quaternions[other]
                seen.add(other)
                queue.append(other)
    for v, (row, weight) in enumerate(zip(joints, weights)):
        used = [int(j) for j, w in zip(row, weight) if w > 0]
        if any(quaternions[a] @ quaternions[b] < 0 for a in used for b in used):
            raise SystemExit(f"vertex {v}: its bones' quaternions fit no one hemisphere")
    return quaternions


def main() -> None:
    import igl
    from scipy.spatial.transform import Rotation

    record = {}
    for name, clip, times in CASES:
        for time in times:
            _, meshes = posed(name, clip, time)
            for index, mesh, finals in meshes:
                key = f"{name}/{time:g}/{index}"
                # Row vectors (v @ F): the rotation of column vectors is the transpose.
                quaternions = Rotation.from_matrix(np.swapaxes(finals[:, :3, :3], 1, 2)).as_quat()  # x, y, z, w
                quaternions = hemisphere_consistent(quaternions, mesh.joints, mesh.weights)
                translations = finals[:, 3, :3].copy()
                dense = np.zeros((len(mesh.positions), len(finals)))
                np.add.at(dense, (np.arange(len(mesh.positions))[:, None], mesh.joints), mesh.weights)
                rest = mesh.positions.astype(np.float64)
                result = igl.dqs(rest, dense, quaternions, translations)
                record[f"{key}/quaternions"] = quaternions
                record[f"{key}/translations"] = translations
                record[f"{key}/rest"] = rest
                record[f"{key}/joints"] = mesh.joints
                record[f"{key}/weights"] = mesh.weights
                record[f"{key}/result"] = np.asarray(result, dtype=np.float64)
                record[f"{key}/sha256"] = np.array(input_digest(mesh))
                print(key, len(rest), "vertices,", len(finals), "bones")
    record["libigl_version"] = np.array("2.5.1")
    partial = REFERENCE.with_name(REFERENCE.name + ".partial.npz")  # written whole, then renamed
    np.savez_compressed(partial, **record)
    partial.replace(REFERENCE)
    print(f"wrote {REFERENCE} ({REFERENCE.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
