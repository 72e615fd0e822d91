"""Hostile pose files: whatever the JSON, only ViewerError escapes and the pose is untouched."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viewer import ViewerError
from viewer.character import build_character
from viewer.editing.pose import apply_pose, pose_of

leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
                 st.text(max_size=8))
json_values = st.recursive(leaf, lambda children: st.one_of(st.lists(children, max_size=5),
                                                           st.dictionaries(st.text(max_size=8), children, max_size=5)),
                           max_leaves=25)
bone_names = st.sampled_from(["body", "leftArm", "rightArm", "tail", ""])
parts = st.dictionaries(st.sampled_from(["position", "rotation_quaternion", "scaling", "rotation"]),
                        st.one_of(json_values, st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=5)),
                        max_size=4)
poses = st.one_of(json_values, st.fixed_dictionaries({"bones": st.dictionaries(bone_names, st.one_of(parts, json_values),
                                                                               max_size=4)},
                                                     optional={"version": json_values}))


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(poses)
def test_any_json_pose_is_applied_or_refused_cleanly(tmp_path, data):
    path = tmp_path / "pose.json"
    path.write_text(json.dumps(data, allow_nan=True))
    scene = build_character()
    before = pose_of(scene)
    try:
        apply_pose(scene, path)
    except ViewerError as error:
        assert str(path) in str(error)
        assert pose_of(scene) == before


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage", b"", b"[]", b"null", b'{"bones": {"leftArm": {"position": [1e400, 0, 0]}}}'])
def test_binary_and_odd_pose_files(tmp_path, content):
    path = tmp_path / "pose.json"
    path.write_bytes(content)
    with pytest.raises(ViewerError, match="pose file"):
        apply_pose(build_character(), path)


def test_a_folder_as_pose_file(tmp_path):
    with pytest.raises(ViewerError, match="cannot read it"):
        apply_pose(build_character(), tmp_path)
