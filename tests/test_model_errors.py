"""Bad calls get a ViewerError whose message names the bone and the problem."""

import numpy as np
import pytest

from viewer import Bone, Skeleton, TransformNode, ViewerError


@pytest.fixture
def skeleton():
    skeleton = Skeleton("s")
    root = Bone("root", skeleton)
    Bone("arm", skeleton, root)
    return skeleton


def test_unknown_parent_by_name(skeleton):
    with pytest.raises(ViewerError, match="no bone named 'leg'"):
        Bone("foot", skeleton, "leg")


def test_parent_of_wrong_type(skeleton):
    with pytest.raises(ViewerError, match="unknown parent"):
        Bone("foot", skeleton, 42)


def test_bone_from_another_skeleton(skeleton):
    other = Skeleton("other")
    stranger = Bone("stranger", other)
    with pytest.raises(ViewerError, match="'stranger' belongs to skeleton 'other'"):
        Bone("foot", skeleton, stranger)


def test_cycle_is_refused(skeleton):
    root, arm = skeleton.bones
    with pytest.raises(ViewerError, match="'root'.*cycle"):
        root.set_parent(arm)
    with pytest.raises(ViewerError, match="cycle"):
        root.set_parent(root)
    assert root.get_parent() is None and arm.get_parent() is root


def test_node_cycle_is_refused():
    a, b = TransformNode("a"), TransformNode("b")
    b.parent = a
    with pytest.raises(ViewerError, match="'a'.*cycle"):
        a.parent = b


def test_singular_bind_names_the_bone(skeleton):
    flat = np.diag([1.0, 0.0, 1.0, 1.0])
    with pytest.raises(ViewerError, match="'hand'.*singular"):
        Bone("hand", skeleton, "arm", bind_matrix=flat)
    with pytest.raises(ViewerError, match="'arm'.*singular"):
        skeleton.get_bone("arm").set_bind_matrix(flat)
    # A singular local without an explicit bind makes a singular bind too.
    with pytest.raises(ViewerError, match="'squashed'.*singular"):
        Bone("squashed", skeleton, local_matrix=np.zeros((4, 4)))


def test_tiny_but_valid_bind_is_accepted(skeleton):
    Bone("tiny", skeleton, bind_matrix=np.diag([1e-4, 1e-4, 1e-4, 1.0]))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_refused(skeleton, bad):
    arm = skeleton.get_bone("arm")
    with pytest.raises(ViewerError, match="'arm' rotation_quaternion.*NaN or infinity"):
        arm.rotation_quaternion = [0, 0, bad, 1]
    with pytest.raises(ViewerError, match="'arm' position"):
        arm.position = [bad, 0, 0]
    matrix = np.eye(4)
    matrix[3, 1] = bad
    with pytest.raises(ViewerError, match="'arm' bind matrix.*NaN or infinity"):
        arm.set_bind_matrix(matrix)
    with pytest.raises(ViewerError, match="'hand' local matrix"):
        Bone("hand", skeleton, arm, local_matrix=matrix)
    # Nothing was half-applied.
    np.testing.assert_array_equal(arm.position, [0, 0, 0])
    assert len(skeleton.bones) == 2


def test_wrong_shapes_and_zero_quaternion(skeleton):
    arm = skeleton.get_bone("arm")
    with pytest.raises(ViewerError, match="shape"):
        arm.position = [1, 2]
    with pytest.raises(ViewerError, match="numbers"):
        arm.scaling = "big"
    with pytest.raises(ViewerError, match="zero quaternion"):
        arm.rotation_quaternion = [0, 0, 0, 0]
    with pytest.raises(ViewerError, match="set_pose rotation_quaternions"):
        skeleton.set_pose(rotation_quaternions=np.zeros((3, 4)))


def test_unknown_bone_lookup(skeleton):
    assert skeleton.get_bone_index_by_name("nope") == -1
    assert skeleton.get_bone_index_by_name("arm") == 1
    with pytest.raises(ViewerError, match="no bone named 'nope'.*'root', 'arm'"):
        skeleton.get_bone("nope")


def test_duplicate_or_out_of_range_index(skeleton):
    Bone("extra", skeleton, index=0)
    with pytest.raises(ViewerError, match="both have index 0"):
        skeleton.prepare()
    other = Skeleton("o")
    Bone("far", other, index=5)
    with pytest.raises(ViewerError, match="index 5 is outside"):
        other.get_transform_matrices()
