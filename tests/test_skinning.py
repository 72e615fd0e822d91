"""CPU skinning against a per-vertex loop, and mesh validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_model import trs_matrix
from viewer import Skeleton, ViewerError
from viewer.model import Bone, SkinnedMesh
from viewer.model.mesh import skin


def reference_skin(positions, normals, joints, weights, matrices):
    out_p, out_n = [], []
    for p, n, js, ws in zip(positions, normals, joints, weights):
        blend = sum(w * matrices[j] for j, w in zip(js, ws))
        out_p.append((np.append(p, 1.0) @ blend)[:3])
        normal = n @ np.linalg.inv(blend[:3, :3]).T
        out_n.append(normal / np.linalg.norm(normal))
    return np.array(out_p), np.array(out_n)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([4, 8]))
def test_skin_matches_per_vertex_loop(seed, influences):
    rng = np.random.default_rng(seed)
    bones, vertices = 5, 40
    matrices = np.array([trs_matrix(rng.uniform(0.5, 2, 3), q / np.linalg.norm(q), rng.uniform(-1, 1, 3))
                         for q in rng.normal(size=(bones, 4))])
    positions = rng.uniform(-1, 1, (vertices, 3))
    normals = rng.normal(size=(vertices, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    joints = rng.integers(0, bones, (vertices, influences))
    weights = rng.dirichlet(np.ones(influences), vertices)
    got_p, got_n = skin(positions, normals, joints, weights, matrices)
    want_p, want_n = reference_skin(positions, normals, joints, weights, matrices)
    np.testing.assert_allclose(got_p, want_p, atol=1e-9)
    np.testing.assert_allclose(got_n, want_n, atol=1e-9)


def test_normals_stay_perpendicular_under_non_uniform_scale():
    # A surface tilted 45 degrees, squashed along Y: its normal must tilt towards Y.
    matrix = np.diag([1.0, 0.25, 1.0, 1.0])
    tangent = np.array([1.0, 1.0, 0.0])
    normal = np.array([[-1.0, 1.0, 0.0]]) / np.sqrt(2)
    _, skinned = skin(np.zeros((1, 3)), normal, np.zeros((1, 4), int), np.array([[1.0, 0, 0, 0]]), matrix[None])
    assert abs(skinned[0] @ (tangent @ matrix[:3, :3])) < 1e-12
    assert abs(np.linalg.norm(skinned[0]) - 1) < 1e-12


def one_bone():
    skeleton = Skeleton("s")
    Bone("root", skeleton)
    return skeleton


def test_weights_are_renormalized():
    mesh = SkinnedMesh("m", np.zeros((3, 3)), [0, 1, 2], one_bone(), joints=np.zeros((3, 4), int),
                       weights=[[0.18, 0, 0, 0]] * 3)
    np.testing.assert_allclose(mesh.weights.sum(axis=1), 1.0)


@pytest.mark.parametrize("joints, weights, message", [
    ([[0, 0, 0, 0], [0, 0, 0, 0], [3, 0, 0, 0]], [[1, 0, 0, 0]] * 3, "vertex 2 uses joint 3, but the skeleton has 1 bone"),
    ([[0, 0, 0, 0]] * 3, [[1, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]], "vertex 1 has no bone weight"),
    ([[0, 0, 0, 0]] * 3, [[1, 0, 0, 0], [1, -1, 0, 0], [1, 0, 0, 0]], "vertex 1 has a negative weight"),
    ([[0, 0, 0]] * 3, [[1, 0, 0]] * 3, r"must both be \(V, 4\) or \(V, 8\)"),
    ([[0, 0, 0, 0]] * 3, [[1, 0, 0, np.nan]] * 3, "NaN"),
])
def test_bad_skin_data_is_refused(joints, weights, message):
    with pytest.raises(ViewerError, match=message):
        SkinnedMesh("m", np.zeros((3, 3)), [0, 1, 2], one_bone(), joints=np.array(joints), weights=weights)


def test_unused_out_of_range_joint_is_harmless():
    mesh = SkinnedMesh("m", np.zeros((3, 3)), [0, 1, 2], one_bone(), joints=np.array([[0, 99, 0, 0]] * 3),
                       weights=[[1, 0, 0, 0]] * 3)
    assert mesh.joints.max() == 0


def test_bad_geometry_is_refused():
    with pytest.raises(ViewerError, match="index 5 is outside the 3 vertices"):
        SkinnedMesh("m", np.zeros((3, 3)), [0, 1, 5], None)
    with pytest.raises(ViewerError, match="vertex 1 has NaN"):
        SkinnedMesh("m", [[0, 0, 0], [np.inf, 0, 0], [0, 0, 0]], [0, 1, 2], None)
