"""Issue 29: a value finite in JSON or float64 but not in float32 (1e39), or past the range whose
products stay finite in float32 (checks.MAX_MAGNITUDE, 1e18), is refused by name at every entry
point, and nothing is half-applied."""

from __future__ import annotations

import numpy as np
import pytest

from viewer import Bone, Skeleton, TransformNode, ViewerError
from viewer.model.checks import MAX_MAGNITUDE, finite_array, finite_number

HUGE = 1e39  # finite in float64 and in JSON, infinite in float32
RANGE = "NaN or infinity or a magnitude above 1e18"


def test_the_limit_is_the_edge():
    assert finite_number(MAX_MAGNITUDE, "x") == MAX_MAGNITUDE
    assert finite_array([-MAX_MAGNITUDE, 0, 1], (3,), "x")[0] == -MAX_MAGNITUDE
    for bad in (np.nextafter(MAX_MAGNITUDE, np.inf), HUGE, np.inf, np.nan, 3e38):
        with pytest.raises(ViewerError, match="'arm' thing: .*magnitude up to 1e18"):
            finite_number(bad, "'arm' thing")
        with pytest.raises(ViewerError, match=f"'arm' thing: contains {RANGE}"):
            finite_array([0, bad, 0], (3,), "'arm' thing")


@pytest.fixture
def skeleton():
    skeleton = Skeleton("s")
    root = Bone("root", skeleton)
    Bone("arm", skeleton, root)
    return skeleton


@pytest.mark.parametrize("setter, field", [
    (lambda arm: setattr(arm, "position", [HUGE, 0, 0]), "'arm' position"),
    (lambda arm: setattr(arm, "rotation", [0, HUGE, 0]), "'arm' rotation"),
    (lambda arm: setattr(arm, "rotation_quaternion", [0, 0, HUGE, 1]), "'arm' rotation_quaternion"),
    (lambda arm: setattr(arm, "scaling", [1, 1, -HUGE]), "'arm' scaling"),
    (lambda arm: arm.set_bind_matrix(np.diag([1.0, 1.0, 1.0, HUGE])), "'arm' bind matrix"),
    (lambda arm: arm.set_rest_matrix(np.diag([1.0, 1.0, 1.0, HUGE])), "'arm' rest matrix"),
    (lambda arm: arm.set_position([0, 0, HUGE]), "'arm' set_position position"),
    (lambda arm: arm.set_yaw_pitch_roll(HUGE, 0, 0), "'arm' set_yaw_pitch_roll yaw"),
    (lambda arm: arm.scale(1, HUGE, 1), "'arm' scale y"),
    (lambda arm: setattr(arm, "length", HUGE), "'arm' length"),
])
def test_bone_setters_refuse_a_float32_infinity_by_name(skeleton, setter, field):
    arm = skeleton.get_bone("arm")
    before = arm.get_local_matrix()
    with pytest.raises(ViewerError, match=f"{field}.*(magnitude|{RANGE})"):
        setter(arm)
    np.testing.assert_array_equal(arm.get_local_matrix(), before)


def test_node_setters_and_set_pose_refuse_it_by_name(skeleton):
    node = TransformNode("hip")
    with pytest.raises(ViewerError, match=f"node 'hip' position: contains {RANGE}"):
        node.position = [0, 3e38, 0]  # finite in float32, but its products are not
    with pytest.raises(ViewerError, match=f"node 'hip' scaling: contains {RANGE}"):
        node.scaling = [HUGE, 1, 1]
    positions = np.zeros((2, 3))
    positions[1, 2] = HUGE
    with pytest.raises(ViewerError, match=f"set_pose positions: row 1 contains {RANGE}"):
        skeleton.set_pose(positions=positions)
    skeleton.prepare()
    assert np.isfinite(skeleton.get_transform_matrices()).all()
