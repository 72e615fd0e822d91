"""Retargeting: the measure (worst angle between each mapped target bone's direction and its source
bone's, at every frame) stays under 0.5 degrees; the naming schemes; the map; the CLI's --motion."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from viewer import load_bvh, load_model, retarget
from viewer.errors import ViewerError
from viewer.model.bone_names import body_parts
from viewer.model.retarget import Retargeting, placement_matrix, retarget_error

DATA = Path(__file__).parent / "data"
BVH = DATA / "bvh"
WAVE = BVH / "wave_hello.bvh"
ROBOT = DATA / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
CESIUM = DATA / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"
CESIUM_MAP = Path(__file__).parent.parent / "assets" / "bone-maps" / "CesiumMan.json"
WORST = 0.5  # degrees


@pytest.fixture(scope="module")
def wave():
    return load_bvh(WAVE)


@pytest.fixture(scope="module")
def robot_wave(wave):
    robot = load_model(ROBOT)
    return Retargeting(wave, robot)


def test_the_shared_capture_on_robotexpressive(robot_wave):
    worst, rows = retarget_error(robot_wave)
    assert worst < WORST
    matched = {a for a, _, _ in rows}
    assert {"UpperArm.L", "UpperArm.R", "UpperLeg.L", "UpperLeg.R", "Hips", "Torso", "LowerLeg.L"} <= matched
    # RobotExpressive's feet hang from its root (for IK), not from the shins: they are placed at the
    # shins' ends, so the shin's direction to its foot is measured too.
    assert ("LowerLeg.L", "Foot.L") in {(a, b) for a, b, _ in rows}
    assert robot_wave.bone_map["UpperArm.L"] == "LeftArm" and robot_wave.bone_map["LowerLeg.R"] == "RightLeg"


def test_the_shared_capture_on_cesiumman_with_the_shipped_map(wave):
    cesium = load_model(CESIUM)
    result = Retargeting(wave, cesium, bone_map=json.loads(CESIUM_MAP.read_text()))
    worst, rows = retarget_error(result, every=3)
    assert worst < WORST and len(rows) >= 14
    # Upright, and facing +Z (the camera) as the capture, turned to face +Z, does: its first frames
    # face the other way from its rest, and the character turns with it, not with its change from rest.
    at = posed_at(result, 1.0)
    assert at["Skeleton_arm_joint_L__2_"][0] > 0.3 > -0.3 > at["Skeleton_arm_joint_R__3_"][0]
    assert at["Skeleton_neck_joint_2"][1] > at["Skeleton_torso_joint_1"][1] > at["leg_joint_L_3"][1]


def test_cesiums_figures_map_by_their_joint_names(wave):
    """CesiumMan and RiggedFigure (glTF-Sample-Models) name their joints Cesium's way
    (torso_joint_1, arm_joint_L_1, leg_joint_R_5, CesiumMan's arms numbered otherwise): the
    naming schemes map them as the shipped map does, with no map given."""
    cesium = load_model(CESIUM)
    automatic = Retargeting(wave, cesium)
    assert automatic.bone_map == Retargeting(wave, cesium, bone_map=json.loads(CESIUM_MAP.read_text())).bone_map
    worst, rows = retarget_error(automatic, every=10)
    assert worst < WORST and len(rows) >= 14
    figure = Retargeting(wave, load_model(DATA / "gltf-samples" / "RiggedFigure" / "RiggedFigure.gltf"))
    assert figure.bone_map["arm_joint_L_1"] == "LeftArm" and figure.bone_map["leg_joint_R_5"] == "RightToeBase"
    assert len(figure.bone_map) == 19 and retarget_error(figure, every=10)[0] < WORST
    at = posed_at(figure, 1.0)  # the capture's T-pose: the left hand out to the figure's left (+X), upright
    assert at["arm_joint_L_3"][0] > 0.3 > -0.3 > at["arm_joint_R_3"][0]
    assert at["neck_joint_2"][1] > at["torso_joint_1"][1] > at["leg_joint_L_3"][1]


def posed_at(retargeting, time: float) -> dict:
    """{bone name: world position} of the target posed by the retargeted clip at ``time``."""
    retargeting.clip.apply(time)
    retargeting.target_skeleton.prepare()
    place = placement_matrix(retargeting.target_scene, retargeting.target_skeleton)
    return {b.name: (b.get_absolute_matrix() @ place)[3, :3] for b in retargeting.target_skeleton.bones}


@pytest.mark.parametrize("time", [0.0, 1.0, 4.1])
def test_robotexpressive_shows_its_front_under_the_capture(robot_wave, time):
    """glTF's front is +Z: the robot's left arm and hand at +X of its right ones, as the capture's are."""
    at = posed_at(robot_wave, time)
    assert at["UpperArm.L"][0] - at["UpperArm.R"][0] > 0.5 * abs(at["UpperArm.L"][2] - at["UpperArm.R"][2])
    assert at["UpperArm.L"][0] > at["UpperArm.R"][0]
    assert np.allclose(robot_wave.turn @ robot_wave.turn.T, np.eye(3)) and robot_wave.turn[1, 1] == 1.0


@pytest.mark.parametrize("source", ["asf_zup_xyz.bvh", "lying_rest.bvh", "all_orders_colon_names.bvh"])
@pytest.mark.parametrize("target", ["RobotExpressive", "human_zxy_root_offset.bvh"])
def test_every_test_capture_onto_a_glb_and_a_bvh(source, target):
    target_scene = load_model(ROBOT) if target == "RobotExpressive" else load_bvh(BVH / target)
    result = Retargeting(load_bvh(BVH / source), target_scene)
    worst, rows = retarget_error(result)
    assert worst < WORST and len(rows) >= 7


def test_asf_names_map_by_what_they_bend(robot_wave):
    result = Retargeting(load_bvh(BVH / "asf_zup_xyz.bvh"), robot_wave.target_scene)
    assert result.bone_map["UpperLeg.L"] == "LeftHip" and result.bone_map["LowerLeg.L"] == "LeftKnee"
    assert result.bone_map["UpperArm.R"] == "RightShoulder" and result.bone_map["LowerArm.R"] == "RightElbow"
    assert result.bone_map["Shoulder.L"] == "LeftCollar"


def test_a_lying_rest_pose_is_aligned_from_its_first_frame():
    lying, upright = load_bvh(BVH / "lying_rest.bvh"), load_bvh(BVH / "human_zxy_root_offset.bvh")
    result = Retargeting(lying, upright)
    assert result.source_reference is not result.source.rest_world
    assert np.degrees(np.arccos(np.clip((np.trace(result.align) - 1) / 2, -1, 1))) < 20


def test_root_translation_scaled_by_hip_heights(robot_wave):
    r = robot_wave
    hips_t, hips_s = r.target.index["Hips"], r.source.index["Hips"]
    source = r.source.world[:, hips_s, 3, :3] @ r.align
    target = r.target_world[:, hips_t, 3, :3]
    # Across the floor: the source's path from its first frame, scaled, from where the target stands.
    assert np.allclose(target[:, [0, 2]] - r.target.rest_world[hips_t, 3, [0, 2]],
                       (source[:, [0, 2]] - source[0, [0, 2]]) * r.hip_ratio, atol=1e-9)
    # Up: the height above each one's floor, scaled; the capture stands, so the robot's hips stay
    # near their rest height (RobotExpressive's legs hang from Body, not from Hips).
    assert np.allclose(target[:, 1] - r.target_floor, (source[:, 1] - r.source_floor) * r.hip_ratio, atol=1e-9)
    rest_height = r.target.rest_world[hips_t, 3, 1]
    assert np.abs(target[:, 1] - rest_height).max() < 0.1 * (rest_height - r.target_floor)
    assert 1.0 < r.hip_ratio < 1.6


def test_unmapped_bones_keep_their_rest_and_the_clip_is_added(wave):
    robot = load_model(ROBOT)
    robot.animations[0].apply(0.7)  # another clip's pose first
    clip = retarget(wave, robot, name="waving")
    assert robot.animations[-1] is clip and clip.name == "waving"
    assert retarget(wave, robot).name == "wave_hello"
    clip.apply(2.0)
    finger = robot.find_bone("Index2.L")
    assert np.allclose(finger.get_transform_node().get_local_matrix(), finger.get_rest_matrix())


def test_naming_schemes_recognised():
    cases = {
        "bvh": ["Hips", "Spine", "LeftUpLeg", "LeftLeg", "LeftArm", "LeftForeArm", "Head"],
        "mixamo": ["mixamorig:Hips", "mixamorig:Spine", "mixamorig:LeftUpLeg", "mixamorig:LeftArm", "mixamorig:Head"],
        "vrm": ["hips", "spine", "leftUpperLeg", "leftUpperArm", "head"],
        "unreal": ["pelvis", "spine_01", "thigh_l", "upperarm_l", "head"],
        "rigify": ["DEF-spine", "DEF-spine.001", "DEF-thigh.L", "DEF-upper_arm.L", "DEF-spine.006"],
        "robot": ["Hips", "Abdomen", "UpperLeg.L", "UpperArm.L", "Head"],
    }
    for style, names in cases.items():
        _, parts = body_parts(names)
        assert parts["leftUpperArm"] == names[-2 if style != "bvh" else 4], style
        assert parts["hips"] == names[0] and parts["leftUpperLeg"] in names, style
    # HumanIK (Maya, MotionBuilder): Mixamo's names after the character's own name; a name some
    # scheme knows whole keeps its prefix (Unreal's spine_01, CesiumMan's Skeleton_ joints).
    humanik = ["Character1_Reference", "Character1_Hips", "Character1_LeftUpLeg", "Character1_LeftLeg",
               "Character1_LeftFoot", "Character1_Spine", "Character1_Spine1", "Character1_Neck", "Character1_Head",
               "Character1_LeftShoulder", "Character1_LeftArm", "Character1_LeftForeArm", "Character1_LeftHand",
               "Bob_RightUpLeg", "ns:RightArm"]
    scheme, parts = body_parts(humanik)
    assert scheme == "bvh" and parts == {
        "hips": "Character1_Hips", "leftUpperLeg": "Character1_LeftUpLeg", "leftLowerLeg": "Character1_LeftLeg",
        "leftFoot": "Character1_LeftFoot", "spine": "Character1_Spine", "chest": "Character1_Spine1",
        "neck": "Character1_Neck", "head": "Character1_Head", "leftShoulder": "Character1_LeftShoulder",
        "leftUpperArm": "Character1_LeftArm", "leftLowerArm": "Character1_LeftForeArm",
        "leftHand": "Character1_LeftHand", "rightUpperLeg": "Bob_RightUpLeg", "rightUpperArm": "ns:RightArm"}
    assert body_parts(["spine_01", "pelvis", "thigh_l"])[1] == {"spine": "spine_01", "hips": "pelvis",
                                                                "leftUpperLeg": "thigh_l"}
    _, asf = body_parts(["Hips", "Chest", "LeftCollar", "LeftShoulder", "LeftElbow", "LeftHip", "LeftKnee", "Head"])
    assert asf["leftUpperArm"] == "LeftShoulder" and asf["leftUpperLeg"] == "LeftHip" and asf["leftShoulder"] == "LeftCollar"


def test_an_unknown_bone_in_a_map_is_one_line_listing_the_bones(wave):
    robot = load_model(ROBOT)
    with pytest.raises(ViewerError) as raised:
        retarget(wave, robot, bone_map={"UpperArm.L": "LeftArmm"})
    message = str(raised.value)
    assert "\n" not in message and "unknown source bone 'LeftArmm'" in message and "LeftForeArm" in message
    with pytest.raises(ViewerError, match="unknown target bone 'Nope'.*UpperArm.L"):
        retarget(wave, robot, bone_map={"Nope": "LeftArm"})
    with pytest.raises(ViewerError, match="no such animation"):
        retarget(wave, robot, clip="Dance")


def test_render_motion_on_both_characters(cli, tmp_path):
    for model, extra in ((ROBOT, []), (CESIUM, ["--bone-map", CESIUM_MAP])):
        out = tmp_path / f"{model.stem}.png"
        result = cli("render", model, "--motion", WAVE, *extra, "--time", "4.1", "--out", out, "--size", "160x160")
        assert result.returncode == 0, result.stderr
        assert "BVH scale 0.0443097, up axis +z (detected) turned to +Y" in result.stderr
        assert np.asarray(Image.open(out)).shape == (160, 160, 4)


def test_export_writes_the_retargeted_clip_and_a_capture_as_gltf(tmp_path):
    """`export --motion` keeps the retargeted clip (first, beside the model's own) and `export
    FILE.bvh` writes the capture's skeleton, capsules and clip: both load back as they were."""
    from viewer.cli import main
    from viewer.gltf import load_gltf

    out = tmp_path / "cesium-wave.glb"
    assert main(["export", str(CESIUM), "--motion", str(WAVE), "--bone-map", str(CESIUM_MAP), "--out", str(out)]) == 0
    written, scene = load_gltf(out), load_model(CESIUM)
    clip = retarget(load_bvh(WAVE), scene, bone_map=json.loads(CESIUM_MAP.read_text()))
    assert [c.name for c in written.animations] == ["wave_hello", "animation0"]
    for time in (0.0, 2.5, 4.1):
        clip.apply(time)
        written.animations[0].apply(time)
        np.testing.assert_allclose(world_positions(written), world_positions(scene), atol=1e-5)
    capture = tmp_path / "wave.glb"
    assert main(["export", str(WAVE), "--out", str(capture)]) == 0
    loaded, source = load_gltf(capture), load_bvh(WAVE)
    assert loaded.animations[0].duration == pytest.approx(source.animations[0].duration)
    for time in (0.0, 4.1):
        loaded.animations[0].apply(time)
        source.animations[0].apply(time)
        np.testing.assert_allclose(world_positions(loaded), world_positions(source), atol=1e-5)


def world_positions(scene) -> np.ndarray:
    """Every bone's absolute position, in the order of the bones' names."""
    positions = {}
    for skeleton in scene.skeletons:
        skeleton.prepare()
        positions.update((bone.name, bone.get_absolute_matrix()[3, :3]) for bone in skeleton.bones)
    return np.stack([positions[name] for name in sorted(positions)])


def test_bad_motion_options_are_one_line(cli, tmp_path):
    bad_map = tmp_path / "map.json"
    bad_map.write_text('{"UpperArm.L": "NoSuchBone"}')
    for args, message in ((["--motion", WAVE, "--bone-map", bad_map], "unknown source bone 'NoSuchBone'"),
                          (["--bone-map", bad_map], "goes with --motion FILE"),
                          (["--motion", WAVE, "--motion-clip", "Dance"], "no such animation"),
                          (["--motion", tmp_path / "x.txt"], "expected a .bvh, .glb, .gltf, .fbx or USD"),
                          (["--bvh-up", "w"], "expected an axis")):
        result = cli("render", ROBOT, *args, "--out", tmp_path / "a.png")
        lines = result.stderr.strip().splitlines()
        errors = [line for line in lines if line.startswith(("boneviewer: error:", "boneviewer render: error:"))]
        assert result.returncode == 2 and len(errors) == 1 and message in lines[-1] == errors[0], result.stderr


def test_the_measure_script_prints_the_worst_angle():
    import subprocess
    import sys

    script = Path(__file__).parent.parent / "scripts" / "measure_retarget.py"
    result = subprocess.run([sys.executable, script, BVH / "asf_zup_xyz.bvh", BVH / "human_zxy_root_offset.bvh"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("worst over every frame and bone: ") and last.endswith("degrees (under 0.5)")
    assert "LeftHip" not in result.stdout and "LeftUpLeg -> LeftLeg" in result.stdout


# --- what is drawn (issue 47) ------------------------------------------------------------------------
JACKS = BVH / "jumping_jacks_start.bvh"
LYING = DATA / "fbx" / "riggedfigure_bound_lying.fbx"


def test_the_measure_sees_a_target_drawn_on_its_side():
    """A retargeting whose alignment lies the target down (as one that took an FBX file's bind
    pose, lying, for the pose the file is drawn in) draws the capture on its side: the measure
    looks at the skeleton as drawn against the capture in its world, so it says so, where a
    measure taken against the retargeting's own alignment saw nothing wrong."""

    class OnItsSide(Retargeting):
        def _align(self):
            super()._align()
            side = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])  # +Y to +Z: lying
            self.align = self.align @ side

    figure = load_model(DATA / "gltf-samples" / "RiggedFigure" / "RiggedFigure.gltf")
    wreck = OnItsSide(load_bvh(WAVE), figure)
    worst, rows = retarget_error(wreck, every=20)
    assert worst > 80.0 and len(rows) >= 14
    assert retarget_error(Retargeting(load_bvh(WAVE), figure), every=20)[0] < WORST


def test_an_fbx_bound_lying_and_saved_standing_is_retargeted_standing(wave):
    """tests/data/fbx/riggedfigure_bound_lying.fbx (tests/fbx_blender/make_bound_lying.py): the skin's
    bind, the clusters' TransformLink, lies on its back; the joints are saved standing with the arms
    lowered, and that is what is drawn. The reader keeps the bind as the bones' rest (each joint's
    world at bind, from its own cluster) and the saved pose as what the file shows; retargeting starts
    from what is drawn, so the figure stands and does what the capture does."""
    scene = load_model(LYING)
    skeleton = scene.skeletons[0]
    skeleton.prepare()
    place = placement_matrix(scene, skeleton)
    bind = {b.name: (np.linalg.inv(b.get_absolute_inverse_bind_matrix()) @ place)[3, :3] for b in skeleton.bones}
    drawn = {b.name: (b.get_absolute_matrix() @ place)[3, :3] for b in skeleton.bones}
    height = drawn["neck_joint_2"][1] - drawn["leg_joint_L_5"][1]
    assert height > 0.8  # standing as drawn, about a metre tall
    lying = bind["neck_joint_2"] - bind["torso_joint_1"]  # at bind: head to hips along -Z (on its back)
    assert lying[2] < -0.3 * height and abs(lying[1]) < 0.05 * height
    rest = {}
    for bone in skeleton.bones:  # the bones' rest, composed: the bind pose (as drawn at bind)
        parent = bone.get_parent()
        rest[bone.name] = bone.get_rest_matrix() @ (rest[parent.name] if parent is not None else place)
    assert np.allclose([rest[n][3, :3] for n in bind], list(bind.values()), atol=1e-6)
    result = Retargeting(wave, scene)
    assert retarget_error(result, every=10)[0] < WORST
    at = posed_at(result, 1.0)  # the capture's T-pose: upright, the left hand out to the figure's left
    assert at["neck_joint_2"][1] - at["leg_joint_L_5"][1] > 0.8 * height
    assert at["arm_joint_L_3"][0] > 0.3 > -0.3 > at["arm_joint_R_3"][0]
    # The file's pose is not the rest (the bind) until a rest is set anew (the current pose, here).
    again = load_model(LYING).skeletons[0]
    root = again.bones[0]
    assert not np.allclose(root.get_file_pose_matrix(), root.get_rest_matrix(), atol=1e-3)
    again.set_current_pose_as_rest()
    assert np.array_equal(root.get_file_pose_matrix(), root.get_rest_matrix())


@pytest.mark.parametrize("target", ["glb", "usdz"])
def test_jumping_jacks_on_cesiumman_put_the_arms_where_the_capture_has_them(target, tmp_path):
    """At 1.0 s of a jumping jack (tests/data/bvh/jumping_jacks_start.bvh, CMU's) the capture's upper
    arms point up and out and its forearms up and in, hands 0.85 m apart over 0.45 m of shoulders.
    CesiumMan's arms start beside its neck (its shoulder joints 0.18 m apart) and its forearms are
    short beside its big head, so the same directions bring its hands together above the head: that
    is what matching directions does with CesiumMan's proportions, on the .glb and its .usdz alike.
    The capture's zero-length joints (lowerback at the hips) have no direction: the measure leaves
    them out."""
    from viewer.usd.writer import save_usd

    model = CESIUM
    if target == "usdz":
        model = save_usd(load_model(CESIUM), tmp_path / "CesiumMan.usdz")
    capture = load_bvh(JACKS)
    result = Retargeting(capture, load_model(model))
    worst, rows = retarget_error(result)
    assert worst < WORST and len(rows) == 13
    assert ("Skeleton_torso_joint_1", "Skeleton_torso_joint_2") not in {(a, b) for a, b, _ in rows}
    at = posed_at(result, 1.0)
    capture.animations[0].apply(1.0)
    skeleton = capture.skeletons[0]
    skeleton.prepare()
    source = {b.name: (b.get_absolute_matrix() @ placement_matrix(capture, skeleton))[3, :3] for b in skeleton.bones}
    for side in "LR":
        upper = {"L": "Skeleton_arm_joint_L__4_", "R": "Skeleton_arm_joint_R"}[side]
        fore = {"L": "Skeleton_arm_joint_L__3_", "R": "Skeleton_arm_joint_R__2_"}[side]
        hand = {"L": "Skeleton_arm_joint_L__2_", "R": "Skeleton_arm_joint_R__3_"}[side]
        name = {"L": "Left", "R": "Right"}[side]
        for (a, b), (sa, sb) in (((upper, fore), (f"{name}Shoulder", f"{name}Elbow")),
                                 ((fore, hand), (f"{name}Elbow", f"{name}Wrist"))):
            drawn = (at[b] - at[a]) / np.linalg.norm(at[b] - at[a])
            wanted = (source[sb] - source[sa]) / np.linalg.norm(source[sb] - source[sa])
            assert np.degrees(np.arccos(np.clip(drawn @ wanted, -1, 1))) < WORST
    apart = lambda p, a, b: abs(p[a][0] - p[b][0])  # noqa: E731
    assert apart(source, "LeftWrist", "RightWrist") > 1.5 * apart(source, "LeftShoulder", "RightShoulder")
    assert apart(at, "Skeleton_arm_joint_L__4_", "Skeleton_arm_joint_R") < 0.5 * apart(source, "LeftShoulder",
                                                                                        "RightShoulder")
    assert at["Skeleton_arm_joint_L__2_"][1] > at["Skeleton_neck_joint_2"][1]  # the hands above the neck
