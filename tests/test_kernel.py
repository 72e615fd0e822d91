"""The compiled skeleton kernel (csrc/ckernel.c) against numpy's (batch.UpdateKernel), the
reference: the same random skeletons, groups, upload orders and poses through both, and the
fallback to numpy when the extension is missing, stale or switched off."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from viewer.errors import ViewerError
from viewer.model import Bone, Skeleton, SkeletonGroup, TransformNode, native
from viewer.model.transforms import compose

ROOT = Path(__file__).resolve().parents[1]

needs_c = pytest.mark.skipif(native.ckernel is None, reason=f"compiled kernel not available: {native.describe()}")


@contextlib.contextmanager
def kernel(which: str):
    """Kernels (and set_pose scatters) built inside use ``which``; they keep it afterwards."""
    saved = native.ckernel
    native.ckernel = saved if which == "C" else None
    try:
        yield
    finally:
        native.ckernel = saved


def random_skeleton(rng, n: int, order: str, name: str = "s", linked: bool = False) -> Skeleton:
    """Bone i under a random earlier bone, created in a shuffled order (so the batch re-sorts
    rows); ``order``: SAME (no indices), PERMUTED (indices a permutation) or PARTIAL (some -1)."""
    skeleton = Skeleton(name)
    parents = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
    if rng.random() < 0.5 and n > 3:
        parents[n // 2] = -1  # a second root
    quaternions = rng.normal(size=(n, 4))
    quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
    locals_ = compose(rng.uniform(0.5, 1.5, (n, 3)), quaternions, rng.normal(size=(n, 3)))
    binds = compose(rng.uniform(0.5, 1.5, (n, 3)), quaternions[::-1], rng.normal(size=(n, 3)))
    if order == "SAME":
        indices = [None] * n
    elif order == "PERMUTED":
        indices = [int(i) for i in rng.permutation(n)]
    else:
        indices = [int(i) for i in rng.permutation(n)]
        for k in rng.choice(n, size=max(1, n // 4), replace=False):
            indices[k] = -1
    bones = []
    for i in range(n):
        bone = Bone(f"b{i}", skeleton, bones[parents[i]] if parents[i] >= 0 else None, local_matrix=locals_[i],
                    bind_matrix=binds[i], index=indices[i])
        bones.append(bone)
        if linked and i % 3 == 1:
            node = TransformNode(f"n{i}")
            node.set_local_matrix(locals_[i])
            bone.link_transform_node(node)
    if order == "SAME":
        pass
    return skeleton


def poses(rng, count: int, n: int):
    q = rng.normal(size=(count, n, 4))
    q /= np.linalg.norm(q, axis=2, keepdims=True)
    return rng.normal(size=(count, n, 3)), q, rng.uniform(0.3, 2.0, (count, n, 3))


def drive(skeletons, group, frames, rng_seed: int) -> list[np.ndarray]:
    """A fixed script of edits and updates; the upload arrays after each step."""
    rng = np.random.default_rng(rng_seed)
    out = []
    for k, (positions, quaternions, scalings) in enumerate(frames):
        for s, skeleton in enumerate(skeletons):
            p, q, c = positions[s], quaternions[s], scalings[s]
            if k % 3 == 0:
                skeleton.set_pose(p, q, c)
            elif k % 3 == 1:
                skeleton.set_pose(rotation_quaternions=q)
            else:  # a few bones through their setters: only their rows compose
                bones = skeleton.bones
                for i in rng.choice(len(bones), size=min(3, len(bones)), replace=False):
                    bones[i].rotation_quaternion = q[i]
                    bones[i].position = p[i]
        if group is not None:
            group.prepare()
            out.append(group.get_transform_matrices().copy())
        else:
            for skeleton in skeletons:
                skeleton.prepare()
                out.append(skeleton.get_transform_matrices().copy())
    return out


def run_both(build, frames, seed=5):
    results = {}
    for which in ("numpy", "C"):
        with kernel(which):
            skeletons, group = build()
            results[which] = (drive(skeletons, group, frames, seed), skeletons)
    return results


def assert_same_uploads(numpy_uploads, c_uploads):
    """The same float32 uploads within 2**-21 of each matrix's largest entry (about 4 float32
    ulps), nearly all of them bit for bit. The C pass does numpy's arithmetic in numpy's order:
    Babylon's compose formula term for term (transforms.compose), each 4x4 product summed left to
    right from +0 (as a BLAS product; so an all-zero sum is +0, not -0), no FMA. numpy's matmul
    goes through BLAS, whose kernels differ by CPU: one that fuses or reorders its sums makes the
    float64s differ in the last bit and a float32 in about one case in 2**29, so a few differing
    values are allowed (one, or one in 2**16), never more."""
    assert len(numpy_uploads) == len(c_uploads)
    for a, b in zip(numpy_uploads, c_uploads):
        assert a.shape == b.shape and a.dtype == b.dtype == np.float32
        scale = np.abs(a).max(axis=(-2, -1), keepdims=True) + 1.0
        np.testing.assert_array_less(np.abs(a.astype(np.float64) - b) / scale, 2.0 ** -21)
        differ = int((a.view(np.uint32) != b.view(np.uint32)).sum())
        assert differ <= 1 + a.size // 2 ** 16, f"{differ} of {a.size} float32 values differ in their bits"


@needs_c
@pytest.mark.parametrize("order", ["SAME", "PERMUTED", "PARTIAL"])
@pytest.mark.parametrize("n", [1, 7, 60, 400])
def test_one_skeleton_both_kernels(order, n):
    rng = np.random.default_rng(n * 7 + len(order))
    frames = [tuple(a[None] for a in frame) for frame in zip(*poses(rng, 6, n))]
    seed = int(rng.integers(1 << 30))
    results = run_both(lambda: ([random_skeleton(np.random.default_rng(seed), n, order)], None), frames)
    assert_same_uploads(results["numpy"][0], results["C"][0])
    (np_skeleton,), (c_skeleton,) = results["numpy"][1], results["C"][1]
    for a, b in zip(np_skeleton.bones, c_skeleton.bones):
        np.testing.assert_allclose(a.get_final_matrix(), b.get_final_matrix(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a.rotation_quaternion, b.rotation_quaternion, rtol=0, atol=1e-15)


@needs_c
@pytest.mark.parametrize("alike", [True, False])
@pytest.mark.parametrize("order", ["SAME", "PERMUTED", "PARTIAL"])
def test_groups_both_kernels(alike, order):
    """Alike members (one repeated depth structure) and mixed ones (per-level index arrays)."""
    rng = np.random.default_rng(11 + alike)
    sizes = [12] * 5 if alike else [3, 12, 1, 30, 8]
    seeds = [int(rng.integers(1 << 30)) for _ in sizes]
    if alike:
        seeds = [seeds[0]] * len(sizes)
    orders = [order] * len(sizes) if alike else [order, "SAME", "PERMUTED", order, "PARTIAL"]

    def build():
        skeletons = [random_skeleton(np.random.default_rng(s), n, o, name=f"m{k}")
                     for k, (s, n, o) in enumerate(zip(seeds, sizes, orders))]
        return skeletons, SkeletonGroup(skeletons)

    frames = []
    for _ in range(5):
        parts = [poses(rng, 1, n) for n in sizes]
        frames.append(tuple([part[j][0] for part in parts] for j in range(3)))
    results = run_both(build, frames)
    assert_same_uploads(results["numpy"][0], results["C"][0])
    for np_member, c_member in zip(results["numpy"][1], results["C"][1]):
        assert_same_uploads([np_member.get_transform_matrices()], [c_member.get_transform_matrices()])


@needs_c
def test_linked_bones_and_matrices_set_directly_both_kernels():
    """Linked nodes (set_pose writes into them, prepare copies them back) and a local matrix set
    directly (the C scatter declines until numpy's path has decomposed it)."""
    rng = np.random.default_rng(3)
    n = 40
    frames = [tuple(a[None] for a in frame) for frame in zip(*poses(rng, 4, n))]
    uploads = {}
    for which in ("numpy", "C"):
        with kernel(which):
            skeleton = random_skeleton(np.random.default_rng(9), n, "PERMUTED", linked=True)
            got = drive([skeleton], None, frames[:2], 1)
            skeleton.bones[5].set_bind_matrix(compose((1, 2, 1), (0, 0, 0.6, 0.8), (1, 2, 3)))
            got += drive([skeleton], None, frames[2:], 2)
            uploads[which] = got
    assert_same_uploads(uploads["numpy"], uploads["C"])


BAD_INPUTS = {
    "NaN position": dict(positions=np.where(np.arange(15).reshape(5, 3) == 7, np.nan, 1.0)),
    "infinite scaling": dict(scalings=np.where(np.arange(15).reshape(5, 3) == 13, -np.inf, 1.0)),
    "zero quaternion": dict(rotation_quaternions=np.array([[0, 0, 0, 1.0]] * 3 + [[0.0] * 4] + [[0, 0, 0, 1.0]])),
    "negative zero quaternion": dict(rotation_quaternions=np.array([[0, 0, 0, 1.0]] * 4 + [[-0.0, 0, -0.0, 0]])),
    "NaN before a zero quaternion": dict(
        rotation_quaternions=np.array([[0.0] * 4] + [[0, 0, 0, 1.0]] * 3 + [[0, np.nan, 0, 1]])),
    "good positions, bad quaternions": dict(positions=np.ones((5, 3)), rotation_quaternions=np.zeros((5, 4))),
    "wrong shape": dict(positions=np.ones((4, 3))),
    "wrong width": dict(rotation_quaternions=np.ones((5, 3))),
    "not numbers": dict(positions=[["a", 1, 2]] * 5),
    "a list with NaN": dict(scalings=[[1, 1, float("nan")]] * 5),
    # Finite in float64, past checks.MAX_MAGNITUDE (1e39 is infinite in float32): refused by both.
    "a position infinite in float32": dict(positions=np.where(np.arange(15).reshape(5, 3) == 4, 1e39, 1.0)),
    "a scaling past the limit": dict(scalings=np.where(np.arange(15).reshape(5, 3) == 9, -2e18, 1.0)),
}


@needs_c
@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_set_pose_errors_are_numpys(case):
    """The same ViewerError text, and nothing written, whichever kernel validated."""
    messages, rows = {}, {}
    for which in ("numpy", "C"):
        with kernel(which):
            skeleton = random_skeleton(np.random.default_rng(2), 5, "PERMUTED")
            skeleton.prepare()
            before = skeleton.get_transform_matrices().copy()
            with pytest.raises(ViewerError) as error:
                skeleton.set_pose(**BAD_INPUTS[case])
            messages[which] = str(error.value)
            skeleton.prepare()
            np.testing.assert_array_equal(skeleton.get_transform_matrices(), before)
            rows[which] = [b.rotation_quaternion for b in skeleton.bones]
    assert messages["C"] == messages["numpy"]
    np.testing.assert_array_equal(rows["C"], rows["numpy"])


@needs_c
def test_set_pose_accepts_what_numpy_accepts():
    """Lists, float32 and strided arrays: the C scatter declines, numpy's path takes them."""
    rng = np.random.default_rng(4)
    q = rng.normal(size=(5, 8))[:, ::2]  # not contiguous
    inputs = dict(positions=rng.normal(size=(5, 3)).tolist(), rotation_quaternions=q,
                  scalings=rng.uniform(1, 2, (5, 3)).astype(np.float32))
    uploads = {}
    for which in ("numpy", "C"):
        with kernel(which):
            skeleton = random_skeleton(np.random.default_rng(2), 5, "PARTIAL")
            skeleton.set_pose(**inputs)
            skeleton.prepare()
            uploads[which] = [skeleton.get_transform_matrices().copy()]
    assert_same_uploads(uploads["numpy"], uploads["C"])


@needs_c
def test_the_compiled_kernel_runs_by_default():
    skeleton = random_skeleton(np.random.default_rng(0), 10, "SAME")
    skeleton.prepare()
    assert skeleton.batch._kernel.compiled is not None
    assert native.name() == "C" and native.describe().startswith("C")


def python(code: str, **env) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != native.ENV}
    environment.update({"PYTHONPATH": str(ROOT), **env})
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=120)


UPDATE = """
import numpy as np
from viewer.model import native
from viewer.bench import random_tree, random_rotations
skeleton = random_tree(50)
skeleton.set_pose(rotation_quaternions=random_rotations(50)[0])
skeleton.prepare()
assert skeleton.batch._kernel.compiled is None
print(native.name(), "|", native.describe(), "|", float(np.abs(skeleton.get_transform_matrices()).sum()))
"""


@pytest.mark.parametrize("how", ["import fails", "stale", "switched off"])
def test_numpy_kernel_when_the_extension_is_missing_stale_or_off(how):
    prelude = {
        "import fails": "import sys; sys.modules['viewer.model._ckernel'] = None\n",  # ImportError on import
        "stale": "import sys, types; sys.modules['viewer.model._ckernel'] = types.SimpleNamespace(KERNEL_VERSION=-1)\n",
        "switched off": "",
    }[how]
    env = {"BONEVIEWER_KERNEL": "numpy"} if how == "switched off" else {}
    result = python(prelude + UPDATE, **env)
    assert result.returncode == 0, result.stderr
    name, why, total = result.stdout.strip().split(" | ")
    assert name == "numpy"
    assert {"import fails": "not built", "stale": "stale: version -1", "switched off": "BONEVIEWER_KERNEL=numpy"}[how] in why
    reference = python(UPDATE, BONEVIEWER_KERNEL="numpy")
    assert float(total) == float(reference.stdout.strip().split(" | ")[2])


def test_asking_for_the_compiled_kernel_without_it_is_an_error():
    result = python("import sys; sys.modules['viewer.model._ckernel'] = None\nimport viewer.model",
                    BONEVIEWER_KERNEL="c")
    assert result.returncode != 0 and "BONEVIEWER_KERNEL=c: the compiled kernel is not built" in result.stderr
