"""RemoteTarget.set_pose writes a streamed pose in one batched call (viewer/model/pose_writer.py):
the same pose targets, bone matrices and pixels as the public setters one bone after another
(the path before it, kept below as the reference), on RobotExpressive (two skins sharing their
joint nodes, every bone linked) and on the built-in character (bones without nodes). In-process:
what arrives over the wire is tests/test_remote.py's."""

from __future__ import annotations

import numpy as np
import pytest

from samples import ROBOT
from viewer.editing.editor import Editor
from viewer.loaders import load_model
from viewer.remote import protocol
from viewer.remote.server import _read_request
from viewer.remote.target import RemoteTarget

TRS_TOLERANCE = 1e-12     # the same float64 values, copied: any difference is a wrong row
MATRIX_TOLERANCE = 1e-6   # float32 final matrices from the same inputs


class PerBoneTarget(RemoteTarget):
    """The reference: set_pose as it was before the batched writer, each bone's pose target set
    through its public setters, one bone after another (a later row for the same target wins)."""

    def set_pose(self, pose) -> None:
        bones, index = self._bones()
        chosen = bones if pose.names is None else [bones[index[name]] for name in pose.names]
        rotations = None
        if pose.rotations is not None:
            rotations = pose.rotations.astype(np.float64)
            x, y, z, w = rotations.T
            rotations = rotations / np.sqrt(x * x + y * y + z * z + w * w)[:, None]
        positions = None if pose.positions is None else pose.positions.astype(np.float64)
        scalings = None if pose.scalings is None else pose.scalings.astype(np.float64)
        for i, bone in enumerate(chosen):
            target = bone.get_pose_target()
            if rotations is not None:
                target.rotation_quaternion = rotations[i]
            if positions is not None:
                target.position = positions[i]
            if scalings is not None:
                target.scaling = scalings[i]
        self.editor.pause()


def decoded(rotations=None, positions=None, scalings=None, names=None):
    """A SET_POSE as the server decodes it."""
    return _read_request(protocol.decode(protocol.set_pose(1, rotations, positions, scalings, names)))


def random_pose(rng, count, names=None, parts=("rotations",), dtype=np.float32):
    values = {"rotations": rng.normal(size=(count, 4)),
              "positions": rng.normal(scale=0.1, size=(count, 3)),
              "scalings": rng.uniform(0.5, 1.5, size=(count, 3))}
    return decoded(**{part: values[part].astype(dtype) for part in parts}, names=names)


def pair(model=ROBOT):
    """(batched target, reference target), each on its own copy of the model."""
    return RemoteTarget(Editor(load_model(model))), PerBoneTarget(Editor(load_model(model)))


def assert_same_pose(fast, reference):
    for skeleton_a, skeleton_b in zip(fast.scene.skeletons, reference.scene.skeletons, strict=True):
        for bone_a, bone_b in zip(skeleton_a.bones, skeleton_b.bones, strict=True):
            a, b = bone_a.get_pose_target(), bone_b.get_pose_target()
            for part in ("position", "rotation_quaternion", "scaling"):
                np.testing.assert_allclose(getattr(a, part), getattr(b, part), rtol=0, atol=TRS_TOLERANCE,
                                           err_msg=f"{bone_a.name} {part}")
    fast.scene.prepare()
    reference.scene.prepare()
    for skeleton_a, skeleton_b in zip(fast.scene.skeletons, reference.scene.skeletons, strict=True):
        np.testing.assert_allclose(skeleton_a.get_transform_matrices(), skeleton_b.get_transform_matrices(),
                                   rtol=0, atol=MATRIX_TOLERANCE, err_msg=skeleton_a.name)
    assert fast.editor.playback.playing == reference.editor.playback.playing


ROBOT_CASES = {
    # bones() lists both skins (86 rows, the second skin's bones linked to the first's nodes):
    # rows 43..85 write the same nodes as rows 0..42, later
    "every bone, both skins": lambda rng, names: random_pose(rng, len(names), parts=("rotations", "positions")),
    "one skin by name": lambda rng, names: random_pose(rng, 43, names[:43], ("rotations", "scalings")),
    "65 names, 22 of them twice": lambda rng, names: random_pose(rng, 65, names[:65]),
    "a bone named twice, float64": lambda rng, names: random_pose(rng, 3, ["Head", "Hips", "Head"],
                                                                  ("rotations", "positions", "scalings"), np.float64),
}


@pytest.mark.parametrize("case", ROBOT_CASES)
def test_a_pose_lands_as_the_setters_one_bone_after_another_with_shared_joint_nodes(case):
    fast, reference = pair()
    names = fast.bone_names()
    assert len(names) == 86 and names[:43] == names[43:]  # the two skins' bones, on the same nodes
    rng = np.random.default_rng(7)
    for _ in range(3):  # a stream: each pose over the last
        pose = ROBOT_CASES[case](rng, names)
        fast.set_pose(pose)
        reference.set_pose(pose)
        assert_same_pose(fast, reference)


def test_bones_without_nodes_and_a_matrix_set_directly():
    fast, reference = pair(None)  # the built-in character: its bones have no linked nodes
    names = fast.bone_names()
    assert all(bone.get_transform_node() is None for bone in fast.scene.skeletons[0].bones)
    rng = np.random.default_rng(3)
    for target in (fast, reference):
        for bone in target.scene.skeletons[0].bones:  # a scaled rest pose: the local matrices set directly
            bone.set_rest_matrix(np.diag([1.5, 0.5, 2.0, 1.0]) @ bone.get_rest_matrix())
        target.scene.skeletons[0].return_to_rest()
    pose = random_pose(rng, 2, names[1:], ("rotations",))  # rotations only: the rest's scale stays
    fast.set_pose(pose)
    reference.set_pose(pose)
    assert_same_pose(fast, reference)
    np.testing.assert_allclose(fast.scene.skeletons[0].bones[1].scaling, [1.5, 0.5, 2.0], rtol=1e-12)
    for parts in (("positions", "scalings"), ("rotations", "positions", "scalings")):
        pose = random_pose(rng, len(names), parts=parts)
        fast.set_pose(pose)
        reference.set_pose(pose)
        assert_same_pose(fast, reference)


def test_a_kept_writer_follows_a_changed_skeleton():
    """A bone added (rows reordered by depth) or a bone linked to a node after the first pose:
    the next pose still lands on the named bones."""
    from viewer.model.bone import Bone
    from viewer.model.transform_node import TransformNode

    target = RemoteTarget(Editor(load_model(None)))
    skeleton = target.scene.skeletons[0]
    names = target.bone_names()
    rng = np.random.default_rng(5)
    target.set_pose(random_pose(rng, len(names), names))
    root = skeleton.bones[0]
    Bone("added", skeleton, parent=root, index=len(names))  # a new depth-1 row moves the deeper rows
    node = TransformNode("driver")
    skeleton.bones[-2].link_transform_node(node)
    pose = random_pose(rng, len(names), names, ("rotations", "positions"), np.float64)
    target.set_pose(pose)
    rotations = pose.rotations / np.linalg.norm(pose.rotations, axis=1)[:, None]
    for name, rotation, position in zip(names, rotations, pose.positions):
        posed = skeleton.get_bone(name).get_pose_target()
        np.testing.assert_allclose(posed.rotation_quaternion, rotation, rtol=0, atol=1e-12)
        np.testing.assert_allclose(posed.position, position, rtol=0, atol=1e-12)
    assert skeleton.bones[-2].get_pose_target() is node


def test_the_same_pixels_as_the_setters_one_bone_after_another():
    from viewer.options import RenderOptions
    from viewer.render.headless import HeadlessRenderer

    fast, reference = pair()
    names = fast.bone_names()
    size = (160, 120)
    rng = np.random.default_rng(11)
    with HeadlessRenderer(size) as headless:
        def draw(target):
            return headless.render(target.scene, target.camera_for(size), RenderOptions())

        rest = draw(fast)
        near_rest = [0.0, 0.0, 0.0, 1.0] + 0.3 * rng.normal(size=(len(names), 4))  # the figure stays framed
        pose = decoded(rotations=near_rest.astype(np.float32))
        for target in (fast, reference):
            target.set_pose(pose)
        batched, per_bone = draw(fast), draw(reference)
    assert (batched != rest).any(axis=2).sum() > 300  # the pose shows
    difference = np.abs(batched.astype(int) - per_bone.astype(int))
    assert difference.max() <= 1 and (difference.max(axis=2) > 0).sum() <= 4


@pytest.mark.parametrize("model", [ROBOT, None], ids=["RobotExpressive", "built-in character"])
def test_a_pose_dict_lands_as_set_bone_pose_one_bone_after_another(model):
    """set_pose_dict and pose files (apply_pose) write each part for all its bones at once: the
    same as set_bone_pose bone by bone, with bones giving different parts."""
    from viewer.editing.pose import set_bone_pose, validate_pose

    fast, reference = pair(model)
    names = list(dict.fromkeys(fast.bone_names()))  # a pose names each bone once
    rng = np.random.default_rng(13)
    for target in (fast, reference):  # bones without nodes: their local matrices set directly first
        for skeleton in target.scene.skeletons:
            skeleton.return_to_rest()
    for _ in range(2):
        pose = {"bones": {}}
        for k, name in enumerate(names):
            parts = {}
            if k % 3 != 2:
                parts["rotation_quaternion"] = rng.normal(size=4).tolist()
            if k % 2:
                parts["position"] = rng.normal(scale=0.1, size=3).tolist()
            if k % 4 == 1:
                parts["scaling"] = rng.uniform(0.5, 1.5, size=3).tolist()
            pose["bones"][name] = parts
        fast.set_pose_dict(pose)
        checked = validate_pose(pose)
        for name, parts in checked.items():
            set_bone_pose(reference.scene.find_bone(name), **parts)
        reference.editor.pause()
        assert_same_pose(fast, reference)
