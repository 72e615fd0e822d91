"""The seed's worked examples ("Bone Class Internals"), number for number."""

import numpy as np
import pytest

from viewer import Bone, Skeleton
from viewer.model import transforms

SHOULDER = np.array([0.5, 1.5, 0.0])


def about_z(degrees):
    return transforms.quaternion_from_yaw_pitch_roll([0.0, 0.0, np.radians(degrees)])


def z_matrix(degrees, position=(0.0, 0.0, 0.0)):
    return transforms.compose([1, 1, 1], about_z(degrees), position)


def z_angle(matrix):
    """The rotation about Z of a row-major matrix (x axis is row 0)."""
    return np.degrees(np.arctan2(matrix[0, 1], matrix[0, 0]))


def character(left_bind):
    skeleton = Skeleton("character")
    body = Bone("body", skeleton)
    left = Bone("leftArm", skeleton, body, local_matrix=left_bind)
    right = Bone("rightArm", skeleton, body, local_matrix=z_matrix(-30, SHOULDER * [-1, 1, 1]))
    return skeleton, body, left, right


def test_natural_bind_local_75_gives_final_45():
    skeleton, _, left, _ = character(z_matrix(30, SHOULDER))
    left.rotation_quaternion = about_z(75)
    skeleton.prepare()
    final = left.get_final_matrix()
    assert z_angle(final) == pytest.approx(45.0, abs=1e-9)
    assert z_angle(left.get_local_matrix()) == pytest.approx(75.0, abs=1e-9)
    assert z_angle(left.get_bind_matrix()) == pytest.approx(30.0, abs=1e-9)
    # The arm turns about the shoulder: the shoulder point stays where it is.
    shoulder = np.append(SHOULDER, 1.0) @ final
    np.testing.assert_allclose(shoulder[:3], SHOULDER, atol=1e-12)


def test_local_equal_to_bind_gives_identity_final():
    skeleton, body, left, right = character(z_matrix(30, SHOULDER))
    skeleton.prepare()
    for bone in (body, left, right):
        np.testing.assert_allclose(bone.get_final_matrix(), np.eye(4), atol=1e-12)
    np.testing.assert_allclose(skeleton.get_transform_matrices(), np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-6)


def test_identity_bind_needs_local_45_plus_translation():
    skeleton = Skeleton("character")
    body = Bone("body", skeleton)
    left = Bone("leftArm", skeleton, body)  # bind = identity, at the origin
    translation = SHOULDER - SHOULDER @ z_matrix(45)[:3, :3]
    left.rotation_quaternion = about_z(45)
    left.position = translation
    skeleton.prepare()
    final = left.get_final_matrix()
    # The same final as with the natural bind: 45 degrees about the shoulder.
    natural_skeleton, _, natural_left, _ = character(z_matrix(30, SHOULDER))
    natural_left.rotation_quaternion = about_z(75)
    np.testing.assert_allclose(final, natural_left.get_final_matrix(), atol=1e-12)
    # The seed rounds this translation to (1.2, 0.08, 0).
    np.testing.assert_allclose(translation, [1.2, 0.08, 0.0], atol=0.01)
    np.testing.assert_allclose(translation, [0.5 + 1.5 * np.sin(np.pi / 4) - 0.5 * np.cos(np.pi / 4),
                                             1.5 - 1.5 * np.cos(np.pi / 4) - 0.5 * np.sin(np.pi / 4), 0.0])


def test_rest_defaults_to_local_and_return_to_rest():
    skeleton, _, left, _ = character(z_matrix(30, SHOULDER))
    np.testing.assert_array_equal(left.get_rest_matrix(), z_matrix(30, SHOULDER))
    left.rotation_quaternion = about_z(75)
    left.return_to_rest()
    np.testing.assert_allclose(left.get_local_matrix(), z_matrix(30, SHOULDER), atol=1e-15)
    np.testing.assert_allclose(left.rotation_quaternion, about_z(30), atol=1e-12)
    np.testing.assert_allclose(left.get_final_matrix(), np.eye(4), atol=1e-12)


def test_setting_one_part_keeps_the_other_two():
    skeleton = Skeleton("s")
    bone = Bone("b", skeleton, local_matrix=transforms.compose([2, 3, 4], about_z(20), [1, 2, 3]))
    bone.rotation_quaternion = about_z(-40)
    np.testing.assert_allclose(bone.position, [1, 2, 3], atol=1e-12)
    np.testing.assert_allclose(bone.scaling, [2, 3, 4], atol=1e-12)
    bone.position = [5, 6, 7]
    np.testing.assert_allclose(bone.rotation_quaternion, about_z(-40), atol=1e-12)
    np.testing.assert_allclose(bone.get_local_matrix(), transforms.compose([2, 3, 4], about_z(-40), [5, 6, 7]))
    bone.rotation = [0.1, 0.2, 0.3]
    np.testing.assert_allclose(bone.rotation, [0.1, 0.2, 0.3], atol=1e-12)
    np.testing.assert_allclose(bone.scaling, [2, 3, 4], atol=1e-12)


def test_returned_arrays_are_read_only():
    skeleton, _, left, _ = character(z_matrix(30, SHOULDER))
    with pytest.raises(ValueError):
        left.position[0] = 3.0
    with pytest.raises(ValueError):
        skeleton.get_transform_matrices()[0, 0, 0] = 2.0


def test_set_bind_matrix_updates_the_subtree():
    skeleton = Skeleton("s")
    root = Bone("root", skeleton, local_matrix=z_matrix(10, [1, 0, 0]))
    child = Bone("child", skeleton, root, local_matrix=z_matrix(20, [0, 1, 0]))
    grandchild = Bone("grandchild", skeleton, child, local_matrix=z_matrix(5, [0, 1, 0]))
    new_bind = z_matrix(-15, [0, 0, 2])
    root.set_bind_matrix(new_bind)
    expected = z_matrix(5, [0, 1, 0]) @ z_matrix(20, [0, 1, 0]) @ new_bind
    np.testing.assert_allclose(grandchild.get_absolute_bind_matrix(), expected, atol=1e-12)
    np.testing.assert_allclose(grandchild.get_absolute_inverse_bind_matrix(), np.linalg.inv(expected), atol=1e-12)
    assert child.get_parent() is root and child.children == [grandchild]


def test_leaf_length():
    skeleton, _, left, _ = character(z_matrix(30, SHOULDER))
    assert left.length is None
    left.length = 1.25
    assert left.length == 1.25
