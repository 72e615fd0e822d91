"""Files with a skeleton and its motion but no mesh (glTF, USD; FBX's are in test_fbx.py) open as a
BVH file does: a bone per joint linked to its node, a capsule per bone segment skinned to it, the
clips played and listed; --motion takes them as a source for retargeting. A file with no mesh and
no skeleton is still refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gltf_cases import build_base
from viewer.errors import ViewerError
from viewer.loaders import load_model
from viewer.model.retarget import Retargeting, retarget_error

SAMPLES = Path(__file__).parent / "data" / "gltf-samples"
CESIUM = SAMPLES / "CesiumMan" / "CesiumMan.glb"


def _worm_without_its_mesh(folder: Path, keep_skin: bool) -> Path:
    """The 3-joint worm of gltf_cases with its mesh taken away (its skin kept, or not)."""
    path = build_base(folder)
    doc = json.loads(path.read_text())
    holder = next(node for node in doc["nodes"] if "mesh" in node)
    del holder["mesh"], holder["skin"]
    if not keep_skin:
        del doc["skins"]
    path.write_text(json.dumps(doc))
    return path


def _joint_positions(scene) -> dict:
    return {node.name: node.get_world_matrix()[3, :3] for node in scene.nodes}


@pytest.mark.parametrize("keep_skin", [True, False], ids=["skin", "animation only"])
def test_a_gltf_skeleton_without_a_mesh_is_drawn_and_played(tmp_path, keep_skin):
    scene = load_model(_worm_without_its_mesh(tmp_path, keep_skin))
    (figure,) = scene.meshes
    bones = [bone.name for bone in figure.skeleton.bones]
    # The skin's joints; without a skin, the nodes the animation moves (the worm's root is not keyed).
    assert bones == (["joint0", "joint1", "joint2"] if keep_skin else ["joint1", "joint2"])
    (clip,) = scene.animations
    before = figure.skinned_positions()
    clip.apply(1.3)
    after = figure.skinned_positions()
    assert np.abs(after - before).max() > 0.05  # the capsules move with the clip
    # Capsules end round the joints they join, wherever the clip put them.
    at = _joint_positions(scene)
    assert max(np.linalg.norm(after - at[name], axis=1).min() for name in bones) < 0.1


def test_a_gltf_with_no_mesh_and_no_skeleton_is_one_line(tmp_path, cli):
    path = build_base(tmp_path)
    doc = json.loads(path.read_text())
    holder = next(node for node in doc["nodes"] if "mesh" in node)
    del holder["mesh"], holder["skin"], doc["skins"], doc["animations"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ViewerError, match="no meshes to show in scene 0, and no skeleton"):
        load_model(path)
    done = cli("render", path, "--out", tmp_path / "out.png")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr


# HumanIK-named joints (name, parent, offset from the parent in metres, +Y up, facing +Z).
HUMANOID = [("Hips", None, (0, 1.0, 0)), ("Spine", "Hips", (0, 0.1, 0)), ("Spine1", "Spine", (0, 0.2, 0)),
            ("Neck", "Spine1", (0, 0.2, 0)), ("Head", "Neck", (0, 0.1, 0))]
for _side, _x in (("Left", 1), ("Right", -1)):
    HUMANOID += [(f"{_side}Shoulder", "Spine1", (0.05 * _x, 0.17, 0)), (f"{_side}Arm", f"{_side}Shoulder", (0.13 * _x, 0, 0)),
                 (f"{_side}ForeArm", f"{_side}Arm", (0.27 * _x, 0, 0)), (f"{_side}Hand", f"{_side}ForeArm", (0.25 * _x, 0, 0)),
                 (f"{_side}UpLeg", "Hips", (0.1 * _x, -0.05, 0)), (f"{_side}Leg", f"{_side}UpLeg", (0, -0.45, 0)),
                 (f"{_side}Foot", f"{_side}Leg", (0, -0.42, 0))]


def write_usd_skeleton(path: Path, prefix: str = "Character1_") -> Path:
    """A SkelRoot with a HumanIK-named Skeleton and a SkelAnimation bound to it (the left thigh
    swings 60 degrees forward from time 0 to 24, at 24 per second), and no mesh."""
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdSkel, Vt

    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    stage.SetTimeCodesPerSecond(24)
    stage.SetStartTimeCode(0)
    stage.SetEndTimeCode(24)
    UsdSkel.Root.Define(stage, "/Mocap")
    skeleton = UsdSkel.Skeleton.Define(stage, "/Mocap/Skeleton")
    paths, index = [], {}
    for name, parent, _ in HUMANOID:
        index[name] = len(paths)
        paths.append(f"{prefix}{name}" if parent is None else f"{paths[index[parent]]}/{prefix}{name}")
    local = [Gf.Matrix4d(1.0).SetTranslate(Gf.Vec3d(*offset)) for _, _, offset in HUMANOID]
    world = []
    for (name, parent, _), matrix in zip(HUMANOID, local):
        world.append(matrix if parent is None else matrix * world[index[parent]])
    skeleton.CreateJointsAttr(Vt.TokenArray(paths))
    skeleton.CreateRestTransformsAttr(Vt.Matrix4dArray(local))
    skeleton.CreateBindTransformsAttr(Vt.Matrix4dArray(world))
    animation = UsdSkel.Animation.Define(stage, "/Mocap/Skeleton/Swing")
    animation.CreateJointsAttr(Vt.TokenArray(paths))
    animation.CreateTranslationsAttr(Vt.Vec3fArray([Gf.Vec3f(*offset) for _, _, offset in HUMANOID]))
    animation.CreateScalesAttr(Vt.Vec3hArray([Gf.Vec3h(1, 1, 1)] * len(paths)))
    rotations = animation.CreateRotationsAttr()
    thigh = index["LeftUpLeg"]
    for time, degrees in ((0, 0.0), (24, -60.0)):
        values = [Gf.Quatf(1, 0, 0, 0)] * len(paths)
        values[thigh] = Gf.Quatf(Gf.Rotation(Gf.Vec3d(1, 0, 0), degrees).GetQuat())
        rotations.Set(Vt.QuatfArray(values), Usd.TimeCode(time))
    UsdSkel.BindingAPI.Apply(skeleton.GetPrim()).CreateAnimationSourceRel().SetTargets([Sdf.Path("/Mocap/Skeleton/Swing")])
    stage.GetRootLayer().Save()
    return path


def test_a_usd_skeleton_without_a_mesh_is_drawn_played_and_retargeted(tmp_path, cli):
    path = write_usd_skeleton(tmp_path / "mocap.usda")
    scene = load_model(path)
    (figure,) = scene.meshes
    assert len(figure.skeleton.bones) == len(HUMANOID)
    assert figure.skeleton.bones[0].name == "Character1_Hips"
    (clip,) = scene.animations
    clip.apply(1.0)
    at = _joint_positions(scene)
    # The left thigh turned 60 degrees about -X: the knee, 0.45 m below the hip, swung forward (+Z).
    hip, knee = at["Character1_LeftUpLeg"], at["Character1_LeftLeg"]
    np.testing.assert_allclose(knee - hip, [0, -0.45 * np.cos(np.radians(60)), 0.45 * np.sin(np.radians(60))],
                               atol=1e-5)
    # Capsules end round the joints they join: one round the swung knee now, none there at rest.
    assert np.linalg.norm(figure.skinned_positions() - knee, axis=1).min() < 0.08
    assert np.linalg.norm(figure.positions - knee, axis=1).min() > 0.2
    # As a --motion source, mapped by the naming schemes onto CesiumMan.
    worst, rows = retarget_error(Retargeting(load_model(path), load_model(CESIUM)))
    assert worst < 0.5 and len(rows) >= 10
    done = cli("render", CESIUM, "--motion", path, "--time", "0.8", "--out", tmp_path / "c.png", "--size", "64x64")
    assert done.returncode == 0, done.stderr
    info = cli("info", path)
    assert info.returncode == 0 and "Swing" in info.stdout, info.stdout + info.stderr


def test_a_usd_stage_with_no_mesh_and_no_skeleton_is_one_line(tmp_path):
    path = tmp_path / "empty.usda"
    path.write_text('#usda 1.0\n(\n    upAxis = "Y"\n)\n\ndef Xform "Nothing"\n{\n}\n')
    with pytest.raises(ViewerError, match="no meshes to show, and no skeleton"):
        load_model(path)
