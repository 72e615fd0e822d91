"""SkeletonGroup: many skeletons in one batch give exactly each skeleton's own results."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model_strategies import build, quaternion, trees, trs
from viewer import Bone, SkeletonGroup, TransformNode, ViewerError
from viewer.model import transforms


def pose_both(data, pair_a, pair_b, kind):
    """Apply the same random change to two copies of a skeleton."""
    (sk_a, bones_a), (sk_b, bones_b) = pair_a, pair_b
    n = len(bones_a)
    if kind == "set_pose":
        q = np.array([data.draw(quaternion) for _ in range(n)])
        p = np.array([data.draw(trs)[2] for _ in range(n)])
        sk_a.set_pose(positions=p, rotation_quaternions=q)
        sk_b.set_pose(positions=p, rotation_quaternions=q)
    elif kind == "bone":
        i = data.draw(st.integers(0, n - 1))
        s, q, p = data.draw(trs)
        for bone in (bones_a[i], bones_b[i]):
            bone.rotation_quaternion, bone.scaling = q, s
    elif kind == "sort":
        sk_a.sort_bones()
        sk_b.sort_bones()
    elif kind == "rest":
        sk_a.return_to_rest()
        sk_b.return_to_rest()


def assert_group_matches(group, singles):
    group.prepare()
    matrices = group.get_transform_matrices()
    assert matrices.dtype == np.float32 and matrices.shape == (sum(len(s.bones) for s, _ in singles), 4, 4)
    offsets = group.offsets
    for k, (skeleton, bones) in enumerate(singles):
        skeleton.prepare()
        np.testing.assert_allclose(matrices[offsets[k]:offsets[k + 1]], skeleton.get_transform_matrices(),
                                   rtol=1e-6, atol=1e-6)
        for bone, member_bone in zip(bones, group.skeletons[k].bones):
            np.testing.assert_allclose(member_bone.get_final_matrix(), bone.get_final_matrix(), atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(trees(max_bones=12), min_size=1, max_size=4), st.integers(1, 3), st.data())
def test_group_equals_each_skeletons_own_prepare(tree_list, copies, data):
    members, singles = [], []
    for tree in tree_list:
        for _ in range(copies):  # copies of a tree exercise the "all alike" batch
            members.append(build(*tree))
            singles.append(build(*tree))
    group = SkeletonGroup([sk for sk, _ in members])
    assert_group_matches(group, singles)
    for _ in range(data.draw(st.integers(1, 3))):
        k = data.draw(st.integers(0, len(members) - 1))
        kind = data.draw(st.sampled_from(["set_pose", "bone", "sort", "rest"]))
        pose_both(data, members[k], singles[k], kind)
        assert_group_matches(group, singles)
    # A member's own prepare keeps working on the shared storage.
    for (skeleton, _), (single, _) in zip(members, singles):
        skeleton.prepare()
        np.testing.assert_allclose(skeleton.get_transform_matrices(), single.get_transform_matrices(), atol=1e-6)


def test_homogeneous_crowd_and_linked_nodes():
    rng = np.random.default_rng(3)
    parents = [None, 0, 1, 1, 0, 4, 5]
    locals_ = [transforms.compose(rng.uniform(0.5, 1.5, 3), q / np.linalg.norm(q), rng.normal(size=3))
               for q in rng.normal(size=(len(parents), 4))]
    binds = [None] * len(parents)
    members = [build(parents, locals_, binds) for _ in range(5)]
    singles = [build(parents, locals_, binds) for _ in range(5)]
    nodes = []
    for (sk, bones), (single, single_bones) in zip(members, singles):
        for bone, single_bone in zip(bones, single_bones):
            node = TransformNode(bone.name)
            s, q, p = transforms.decompose(bone.get_local_matrix())
            node.set_trs(p, q, s)
            bone.link_transform_node(node)
            nodes.append((node, single_bone))
    group = SkeletonGroup([sk for sk, _ in members])
    assert_group_matches(group, singles)
    for node, single_bone in nodes:
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        node.rotation_quaternion = q
        single_bone.rotation_quaternion = q
    assert_group_matches(group, singles)
    # set_pose on a linked member writes its nodes, which the group copies in prepare.
    q = rng.normal(size=(len(parents), 4))
    members[2][0].set_pose(rotation_quaternions=q)
    singles[2][0].set_pose(rotation_quaternions=q)
    assert_group_matches(group, singles)


def test_adding_a_bone_to_a_member_regroups():
    members = [build([None, 0], [np.eye(4)] * 2, [None] * 2) for _ in range(3)]
    singles = [build([None, 0], [np.eye(4)] * 2, [None] * 2) for _ in range(3)]
    group = SkeletonGroup([sk for sk, _ in members])
    assert_group_matches(group, singles)
    matrix = transforms.compose([1, 2, 1], [0, 0, 0.6, 0.8], [1, 0, 0])
    for sk, bones in (members[1], singles[1]):
        bone = Bone("extra", sk, bones[1], local_matrix=matrix)
        bones.append(bone)
        bone.rotation_quaternion = [0.6, 0, 0, 0.8]
    assert_group_matches(group, singles)
    assert len(group.get_transform_matrices()) == 7


def test_group_rejects_non_skeletons_and_duplicates():
    sk, _ = build([None], [np.eye(4)], [None])
    with pytest.raises(ViewerError):
        SkeletonGroup([sk, sk])
    with pytest.raises(ViewerError):
        SkeletonGroup([sk, "no"])
    assert len(SkeletonGroup([]).get_transform_matrices()) == 0
