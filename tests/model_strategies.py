"""Hypothesis strategies for random skeletons, shared by the model property tests.

A plain helper module (test modules never import each other).
"""

import numpy as np
from hypothesis import strategies as st

from reference_model import trs_matrix
from viewer import Bone, Skeleton

finite = st.floats(-3.0, 3.0, allow_nan=False)
positive = st.floats(0.3, 2.5, allow_nan=False)
vec3 = st.tuples(finite, finite, finite)
scale3 = st.tuples(positive, positive, positive)
quaternion = st.tuples(finite, finite, finite, finite).filter(lambda q: np.linalg.norm(q) > 0.1).map(
    lambda q: tuple(np.asarray(q) / np.linalg.norm(q)))
trs = st.tuples(scale3, quaternion, vec3)


@st.composite
def trees(draw, max_bones=24):
    """Parents as indices into creation order (a parent is always created first)."""
    n = draw(st.integers(1, max_bones))
    parents = [None]
    for i in range(1, n):
        parents.append(draw(st.one_of(st.none(), st.integers(0, i - 1))))
    locals_ = [trs_matrix(*draw(trs)) for _ in range(n)]
    binds = [draw(st.one_of(st.none(), trs.map(lambda t: trs_matrix(*t)))) for _ in range(n)]
    return parents, locals_, binds


def build(parents, locals_, binds):
    skeleton = Skeleton("random")
    bones = []
    for i, parent in enumerate(parents):
        bones.append(Bone(f"b{i}", skeleton, None if parent is None else bones[parent],
                          local_matrix=locals_[i], bind_matrix=binds[i]))
    return skeleton, bones
