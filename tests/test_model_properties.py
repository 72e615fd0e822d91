"""Property tests: the batched Skeleton against a plain per-bone reference, on random trees."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from model_strategies import build, quaternion, scale3, trees, trs, vec3
from reference_model import reference_matrices, yaw_pitch_roll_matrix
from viewer import Bone, Skeleton, TransformNode
from viewer.model import transforms


def assert_matches_reference(skeleton, bones, parents):
    locals_ = [b.get_local_matrix() for b in bones]
    binds = [b.get_bind_matrix() for b in bones]
    absolute, absolute_bind, inverse_bind, final = reference_matrices(parents, locals_, binds)
    skeleton.prepare()
    uploaded = skeleton.get_transform_matrices()
    for i, bone in enumerate(bones):
        scale = max(1.0, np.abs(absolute[i]).max(), np.abs(inverse_bind[i]).max())
        tol = 1e-9 * scale * scale
        np.testing.assert_allclose(bone.get_absolute_matrix(), absolute[i], atol=tol)
        np.testing.assert_allclose(bone.get_absolute_bind_matrix(), absolute_bind[i], atol=tol)
        np.testing.assert_allclose(bone.get_absolute_inverse_bind_matrix(), inverse_bind[i], atol=tol)
        np.testing.assert_allclose(bone.get_final_matrix(), final[i], atol=tol)
        np.testing.assert_allclose(uploaded[bone.get_index()], final[i], atol=1e-5 * scale * scale)


@settings(max_examples=60, deadline=None)
@given(trees(), st.data())
def test_prepare_equals_per_bone_reference(tree, data):
    parents, locals_, binds = tree
    skeleton, bones = build(parents, locals_, [b if b is not None else locals_[i] for i, b in enumerate(binds)])
    assert_matches_reference(skeleton, bones, parents)
    # Pose some bones through each property, then compare again.
    for _ in range(data.draw(st.integers(1, 8))):
        bone = bones[data.draw(st.integers(0, len(bones) - 1))]
        which = data.draw(st.sampled_from(["position", "rotation_quaternion", "rotation", "scaling"]))
        value = data.draw({"position": vec3, "rotation_quaternion": quaternion,
                           "rotation": vec3, "scaling": scale3}[which])
        setattr(bone, which, value)
    assert_matches_reference(skeleton, bones, parents)


@settings(max_examples=40, deadline=None)
@given(trees(), st.lists(trs, min_size=24, max_size=24))
def test_rest_pose_gives_identity_finals_and_return_to_rest_restores(tree, poses):
    parents, locals_, _ = tree
    skeleton, bones = build(parents, locals_, [None] * len(parents))  # bind = rest = local
    skeleton.prepare()
    np.testing.assert_allclose(skeleton.get_transform_matrices(), np.broadcast_to(np.eye(4), (len(bones), 4, 4)), atol=1e-4)
    for bone, (s, q, p) in zip(bones, poses):
        bone.scaling, bone.rotation_quaternion, bone.position = s, q, p
    skeleton.prepare()
    skeleton.return_to_rest()
    skeleton.prepare()
    for bone, local in zip(bones, locals_):
        np.testing.assert_allclose(bone.get_local_matrix(), local, atol=1e-12)
        np.testing.assert_allclose(bone.get_final_matrix(), np.eye(4), atol=1e-6 * max(1, np.abs(local).max()) ** 2)


@settings(max_examples=40, deadline=None)
@given(trees(), st.data())
def test_single_bone_return_to_rest(tree, data):
    parents, locals_, _ = tree
    skeleton, bones = build(parents, locals_, [None] * len(parents))
    bone = bones[data.draw(st.integers(0, len(bones) - 1))]
    bone.rotation_quaternion = data.draw(quaternion)
    bone.position = data.draw(vec3)
    bone.return_to_rest()
    np.testing.assert_allclose(bone.get_local_matrix(), bone.get_rest_matrix(), atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.data())
def test_sort_bones_puts_parents_first_is_stable_and_idempotent(n, data):
    skeleton = Skeleton("s")
    bones = []
    for i in range(n):
        parent = data.draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        bones.append(Bone(f"b{i}", skeleton, None if parent is None else bones[parent]))
    # Re-parent some bones to later ones, so creation order is no longer parents-first.
    for _ in range(data.draw(st.integers(0, n))):
        child, parent = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, n - 1))
        try:
            bones[child].set_parent(bones[parent])
        except ValueError:
            pass  # a cycle, refused
    rows_before = {bone.name: bone.get_index() for bone in skeleton.bones}
    expected = babylon_sort(list(skeleton.bones))
    skeleton.sort_bones()
    order = list(skeleton.bones)
    assert sorted(b.name for b in order) == sorted(b.name for b in bones)
    position = {id(b): i for i, b in enumerate(order)}
    for bone in order:
        if bone.get_parent() is not None:
            assert position[id(bone.get_parent())] < position[id(bone)]
    # Stable in Babylon's sense: a bone moves only to bring a parent before its child.
    assert order == expected
    # Matrix rows do not move with sorting.
    assert {bone.name: bone.get_index() for bone in skeleton.bones} == rows_before
    skeleton.sort_bones()
    assert list(skeleton.bones) == order


def babylon_sort(bones):
    """Babylon's Skeleton.sortBones, transcribed: visit in order, placing parents first."""
    result, visited = [], set()

    def visit(bone):
        if id(bone) in visited:
            return
        visited.add(id(bone))
        if bone.get_parent() is not None:
            visit(bone.get_parent())
        result.append(bone)

    for bone in bones:
        visit(bone)
    return result


@settings(max_examples=20, deadline=None)
@given(trees())
def test_sort_bones_keeps_an_already_sorted_skeleton(tree):
    parents, locals_, _ = tree
    skeleton, bones = build(parents, locals_, [None] * len(parents))
    skeleton.sort_bones()
    assert list(skeleton.bones) == bones


@settings(max_examples=200, deadline=None)
@given(vec3)
def test_euler_setter_agrees_with_babylons_yaw_pitch_roll(rotation):
    skeleton = Skeleton("s")
    bone = Bone("b", skeleton)
    bone.rotation = rotation
    np.testing.assert_allclose(bone.get_local_matrix(), yaw_pitch_roll_matrix(rotation), atol=1e-12)
    # And the Euler getter gives back a rotation with the same matrix; within 6.4e-4 rad of a
    # pitch of +-90 degrees Babylon's toEulerAngles snaps the pitch to it (|qy qz - qx qw| >
    # 0.4999999), and the matrices then differ by up to that angle.
    qx, qy, qz, qw = bone.rotation_quaternion
    snapped = abs(qy * qz - qx * qw) > 0.4999999
    np.testing.assert_allclose(yaw_pitch_roll_matrix(bone.rotation), yaw_pitch_roll_matrix(rotation),
                               atol=7e-4 if snapped else 1e-6)


@settings(max_examples=200, deadline=None)
@given(trs)
def test_decompose_inverts_compose(parts):
    scaling, q, position = parts
    matrix = transforms.compose(scaling, q, position)
    s2, q2, p2 = transforms.decompose(matrix)
    np.testing.assert_allclose(s2, scaling, atol=1e-9)
    np.testing.assert_allclose(p2, position, atol=1e-12)
    assert min(np.abs(q2 - q).max(), np.abs(q2 + q).max()) < 1e-9


@settings(max_examples=30, deadline=None)
@given(trees(max_bones=12), st.data())
def test_linked_nodes_drive_bones_and_set_pose_matches_setters(tree, data):
    parents, locals_, _ = tree
    linked, bones_a = build(parents, locals_, [None] * len(parents))
    plain, bones_b = build(parents, locals_, [None] * len(parents))
    nodes = []
    for bone in bones_a:
        node = TransformNode(bone.name)
        s, q, p = transforms.decompose(bone.get_local_matrix())
        node.set_trs(p, q, s)
        bone.link_transform_node(node)
        nodes.append(node)
    poses = [data.draw(trs) for _ in bones_a]
    for node, bone, (s, q, p) in zip(nodes, bones_b, poses):
        node.set_trs(p, q, s)
        bone.scaling, bone.rotation_quaternion, bone.position = s, q, p
    linked.prepare()
    plain.prepare()
    np.testing.assert_allclose(linked.get_transform_matrices(), plain.get_transform_matrices(), atol=1e-5)
    # Editing a linked bone directly is overridden by its node in prepare (Babylon's rule).
    bones_a[0].position = (9.0, 9.0, 9.0)
    linked.prepare()
    np.testing.assert_allclose(bones_a[0].position, poses[0][2], atol=1e-12)
    # set_pose on the linked skeleton writes the nodes; on the plain one, the bones.
    n = len(parents)
    q = np.array([data.draw(quaternion) for _ in range(n)])
    linked.set_pose(rotation_quaternions=q)
    plain.set_pose(rotation_quaternions=q)
    np.testing.assert_allclose(nodes[-1].rotation_quaternion, q[bones_a[-1].get_index()])
    linked.prepare()
    plain.prepare()
    np.testing.assert_allclose(linked.get_transform_matrices(), plain.get_transform_matrices(), atol=1e-5)
    # return_to_rest writes the rest pose into the linked nodes.
    linked.return_to_rest()
    linked.prepare()
    for node, local in zip(nodes, locals_):
        np.testing.assert_allclose(node.get_local_matrix(), local, atol=1e-9)
