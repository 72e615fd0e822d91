"""The glTF loader's cost on large files: a RecursiveSkeletons-like model (about 900 nodes in
many nested skins, 1,800 accessors) loads in a fraction of a second, and a 200,000-node chain
is refused with one ViewerError before anything is built from it.

The files are written here with plain json + numpy. The limits asserted are loose (a loaded
2-core CI machine); the figures are printed (run with -s to see them).
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import numpy as np
import pytest

from viewer import ViewerError
from viewer.gltf import load_gltf

FLOAT, USHORT = 5126, 5123


class _Blob:
    """One buffer and its bufferViews/accessors, written as plain glTF JSON."""

    def __init__(self):
        self.data = bytearray()
        self.views, self.accessors = [], []

    def accessor(self, array: np.ndarray, kind: str, component: int = FLOAT) -> int:
        array = np.ascontiguousarray(array)
        while len(self.data) % 4:
            self.data.append(0)
        self.views.append({"buffer": 0, "byteOffset": len(self.data), "byteLength": array.nbytes})
        self.data += array.tobytes()
        self.accessors.append({"bufferView": len(self.views) - 1, "componentType": component,
                               "count": len(array), "type": kind})
        return len(self.accessors) - 1

    def document(self, **fields) -> dict:
        uri = "data:application/octet-stream;base64," + base64.b64encode(bytes(self.data)).decode()
        return {"asset": {"version": "2.0"}, "scene": 0, **fields, "accessors": self.accessors,
                "bufferViews": self.views, "buffers": [{"byteLength": len(self.data), "uri": uri}]}


def _quaternions_about_z(degrees: np.ndarray) -> np.ndarray:
    half = np.radians(degrees) / 2
    return np.stack([np.zeros_like(half), np.zeros_like(half), np.sin(half), np.cos(half)], axis=1)


def recursive_skeletons(folder: Path, segments: int = 28, joints: int = 32) -> Path:
    """Like Khronos' RecursiveSkeletons: skins nested in each other's hierarchy. The segments
    form a binary tree (segment s hangs under the last joint of segment (s - 1) // 2, five
    levels, 160 nodes deep), each segment a chain of joints with its own skin, and each skin's
    mesh node sits under the joint its skeleton hangs from. One clip turns every joint and
    moves most. 28 x 32 joints + 28 mesh nodes = 924 nodes, 1,764 accessors."""
    blob = _Blob()
    nodes, meshes, skins, channels, samplers, roots = [], [], [], [], [], []
    times = np.linspace(0, 2, 6, dtype=np.float32).reshape(-1, 1)
    vertex_y = np.repeat(np.linspace(0, joints, 2 * joints + 1), 2)
    strip = np.stack([np.tile([-0.2, 0.2], 2 * joints + 1), vertex_y, np.zeros_like(vertex_y)], 1)
    lower = np.minimum(vertex_y.astype(int), joints - 1)
    fraction = (vertex_y - lower) * 0.5
    joint_rows = np.stack([lower, np.minimum(lower + 1, joints - 1), lower * 0, lower * 0], 1).astype(np.uint16)
    weight_rows = np.stack([1 - fraction, fraction, fraction * 0, fraction * 0], 1).astype(np.float32)
    indices = (np.arange(2 * joints)[:, None] * 2 + np.array([0, 1, 2, 1, 3, 2])).reshape(-1, 1).astype(np.uint16)
    normals = np.tile(np.float32([0.0, 0.0, 1.0]), (len(strip), 1))
    rng = np.random.default_rng(7)
    last_joint, last_world = [], []  # per segment: its last joint's node index and world position
    mesh_parents = []
    for s in range(segments):
        parent = None if s == 0 else last_joint[(s - 1) // 2]
        offset = np.array([0.0, 0.0, 0.0] if s == 0 else [1.0 if s % 2 else -1.0, 1.0, 0.0])
        base = offset if s == 0 else last_world[(s - 1) // 2] + offset
        first = len(nodes)
        for j in range(joints):
            translation = offset.tolist() if j == 0 else [0.0, 1.0, 0.0]
            nodes.append({"name": f"s{s}j{j}", "translation": translation, "rotation": [0.0, 0.0, 0.0, 1.0]})
            if parent is not None:
                nodes[parent].setdefault("children", []).append(len(nodes) - 1)
            else:
                roots.append(len(nodes) - 1)
            parent = len(nodes) - 1
        last_joint.append(parent)
        last_world.append(base + [0.0, joints - 1, 0.0])
        mesh_parents.append(None if s == 0 else last_joint[(s - 1) // 2])
        # Every joint's world transform is a translation: joint j of this segment sits at base + j * Y.
        ibm = np.tile(np.eye(4, dtype=np.float32), (joints, 1, 1))
        ibm[:, 3, :3] = -(base + np.arange(joints)[:, None] * [0.0, 1.0, 0.0])  # column-major, read row by row
        skin_joints = list(range(first, first + joints))
        skins.append({"name": f"skin{s}", "joints": skin_joints, "skeleton": first,
                      "inverseBindMatrices": blob.accessor(ibm.reshape(-1, 16), "MAT4")})
        attributes = {"POSITION": blob.accessor((strip + base).astype(np.float32), "VEC3"),
                      "NORMAL": blob.accessor(normals, "VEC3"),
                      "JOINTS_0": blob.accessor(joint_rows, "VEC4", USHORT),
                      "WEIGHTS_0": blob.accessor(weight_rows, "VEC4")}
        meshes.append({"primitives": [{"attributes": attributes, "indices": blob.accessor(indices, "SCALAR", USHORT)}]})
        input_accessor = blob.accessor(times, "SCALAR")
        for j, node in enumerate(skin_joints):
            rotations = _quaternions_about_z(rng.uniform(-30, 30, len(times))).astype(np.float32)
            samplers.append({"input": input_accessor, "output": blob.accessor(rotations, "VEC4")})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": "rotation"}})
            if j % 4:
                moves = np.c_[np.zeros(len(times)), 1 + 0.1 * rng.uniform(-1, 1, len(times)), np.zeros(len(times))]
                samplers.append({"input": input_accessor, "output": blob.accessor(moves.astype(np.float32), "VEC3")})
                channels.append({"sampler": len(samplers) - 1, "target": {"node": node, "path": "translation"}})
    for s, parent in enumerate(mesh_parents):
        nodes.append({"name": f"mesh{s}", "mesh": s, "skin": s})
        if parent is None:
            roots.append(len(nodes) - 1)
        else:
            nodes[parent].setdefault("children", []).append(len(nodes) - 1)
    document = blob.document(scenes=[{"nodes": roots}], nodes=nodes, meshes=meshes, skins=skins,
                             animations=[{"name": "wave", "channels": channels, "samplers": samplers}])
    path = folder / "recursive_skeletons.gltf"
    path.write_text(json.dumps(document))
    return path


def deep_chain(folder: Path, count: int = 200_000) -> Path:
    """A chain of ``count`` named nodes, each the only child of the one before, under a scene."""
    nodes = [{"name": f"n{i}", "translation": [0.0, 1.0, 0.0], "children": [i + 1]} for i in range(count - 1)]
    nodes.append({"name": f"n{count - 1}"})
    path = folder / "deep_chain.gltf"
    path.write_text(json.dumps({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
                                "nodes": nodes}))
    return path


def _best_of(runs: int, load, path):
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = load(path)
        best = min(best, time.perf_counter() - start)
    return best, result


@pytest.mark.timeout(60)
def test_a_recursive_skeletons_like_file_loads_quickly(tmp_path):
    path = recursive_skeletons(tmp_path)
    document = json.loads(path.read_text())
    assert len(document["nodes"]) == 924 and len(document["accessors"]) == 1764 and len(document["skins"]) == 28
    seconds, scene = _best_of(3, load_gltf, path)
    print(f"\nRecursiveSkeletons-like file (924 nodes, 28 skins, 1,764 accessors): {seconds * 1000:.0f} ms")
    assert len(scene.skinned_meshes) == 28 and len(scene.nodes) == 924
    assert len(scene.animations) == 1 and len(scene.animations[0].channels) == 28 * 32 + 28 * 24
    # Nested skins: each mesh is placed at the joint its skeleton hangs from (the skeleton
    # root's parent), and in the rest pose every mesh skins to its file positions.
    for mesh in scene.skinned_meshes:
        np.testing.assert_allclose(mesh.skinned_positions(), mesh.positions, atol=2e-4)
    assert seconds < 2.0, f"took {seconds:.2f} s"  # a guard: about 0.15 s (scripts/bench_load.py measures it)


@pytest.mark.timeout(60)
def test_a_200000_node_chain_is_refused_quickly(tmp_path):
    path = deep_chain(tmp_path)
    start = time.perf_counter()
    with pytest.raises(ViewerError) as caught:
        load_gltf(path)
    seconds = time.perf_counter() - start
    print(f"\n200,000-node chain refused in {seconds * 1000:.0f} ms: {caught.value}")
    assert str(caught.value).startswith(f"{path}: ")
    assert "levels deep; the limit is 4096" in str(caught.value)
    assert seconds < 15.0, f"took {seconds:.2f} s"  # a guard against a walk per level: about 1 s
