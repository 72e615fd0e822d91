"""Retargeting looks at what is drawn, whatever the format: for every model of the suite's FBX and
USD sets, a capture retargeted onto the file equals the same capture retargeted onto the file's own
glTF export (boneviewer's), joint world positions within 1e-4 of the model's size at several times
and the pictures within the rasteriser's tolerance. An FBX file's joints are saved in a pose of
their own (Blender's: the frame it exported; Maya's: whatever pose the character was saved in),
which is what is drawn and what the glTF export keeps as its rest; the skin's bind is another pose
(tests/data/fbx/riggedfigure_bound_lying.fbx is bound lying down and saved standing)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from samples import CESIUM_MAN, DATA_DIR, FOX, ROBOT, SAMPLES_DIR
from viewer import load_bvh, load_model
from viewer.camera import framed_camera
from viewer.gltf.writer import glb_bytes
from viewer.model.retarget import Retargeting, placement_matrix
from viewer.options import RenderOptions

WAVE = DATA_DIR / "bvh" / "wave_hello.bvh"
FBX = DATA_DIR / "fbx"
TOLERANCE = 1e-4  # of the model's size
TIMES = (0.0, 1.0, 2.5, 4.1)  # the capture's T-pose, before and in the wave
# Maps for the skeletons no naming scheme knows (the Fox's legs as a person's arms and legs).
FOX_MAP = {"b_Hip_01": "Hips", "b_Spine01_02": "Spine", "b_Spine02_03": "Spine1", "b_Neck_04": "Neck",
           "b_Head_05": "Head", "b_LeftUpperArm_09": "LeftArm", "b_LeftForeArm_010": "LeftForeArm",
           "b_LeftHand_011": "LeftHand", "b_RightUpperArm_06": "RightArm", "b_RightForeArm_07": "RightForeArm",
           "b_RightHand_08": "RightHand", "b_LeftLeg01_015": "LeftUpLeg", "b_LeftLeg02_016": "LeftLeg",
           "b_LeftFoot01_017": "LeftFoot", "b_RightLeg01_019": "RightUpLeg", "b_RightLeg02_020": "RightLeg",
           "b_RightFoot01_021": "RightFoot"}
MAPS = {"fox_zup_cm.fbx": FOX_MAP, "Fox.usdz": FOX_MAP, "riggedsimple_transformed.fbx": {"Bone": "Hips", "Bone.001": "Spine"},
        "built-in.usdz": {"body": "Spine", "leftArm": "LeftArm", "rightArm": "RightArm"}}
FBX_SET = ["cesiumman.fbx", "fox_zup_cm.fbx", "riggedfigure.fbx", "riggedsimple_transformed.fbx", "robot_morphs.fbx",
           "riggedfigure_bound_lying.fbx"]
# The USD set: the stage tests/usd_cases.py makes, and the models the USD tests write as .usdz.
USD_SOURCES = {"CesiumMan": CESIUM_MAN, "Fox": FOX, "RobotExpressive": ROBOT,
               "RiggedFigure": SAMPLES_DIR / "RiggedFigure" / "RiggedFigure.gltf", "robot_morphs": FBX / "robot_morphs.fbx",
               "built-in": None}
USD_SET = ["character.usda"] + [f"{name}.usdz" for name in USD_SOURCES]


@pytest.fixture(scope="module")
def wave():
    return load_bvh(WAVE)


@pytest.fixture(scope="module")
def usd_folder(tmp_path_factory):
    from usd_cases import make_stage
    from viewer.usd.writer import save_usd

    folder = tmp_path_factory.mktemp("usd")
    make_stage(folder / "character.usda")
    for name, source in USD_SOURCES.items():
        save_usd(load_model(source), folder / f"{name}.usdz")
    return folder


@pytest.fixture(scope="module")
def headless():
    from viewer.render.headless import HeadlessRenderer

    with HeadlessRenderer((128, 128)) as renderer:
        yield renderer


def model_path(name: str, usd_folder: Path) -> Path:
    return FBX / name if name.endswith(".fbx") else usd_folder / name


def both(name: str, usd_folder: Path, tmp_path: Path, wave):
    """The capture retargeted onto the file and onto its glTF export (written as boneviewer's
    `export` writes it, from the model as loaded)."""
    path = model_path(name, usd_folder)
    exported = tmp_path / f"{path.stem}.glb"
    exported.write_bytes(glb_bytes(load_model(path)))
    bone_map = MAPS.get(name)
    return (Retargeting(wave, load_model(path), bone_map=bone_map),
            Retargeting(wave, load_model(exported), bone_map=bone_map))


def joint_positions(retargeting, time: float) -> dict:
    """{bone: world position} of the target as the retargeted clip poses it at ``time`` (the
    skeleton as drawn: placed by its meshes' world matrix)."""
    retargeting.clip.apply(time)
    retargeting.target_skeleton.prepare()
    place = placement_matrix(retargeting.target_scene, retargeting.target_skeleton)
    return {b.name: (b.get_absolute_matrix() @ place)[3, :3] for b in retargeting.target_skeleton.bones}


def size_of(scene) -> float:
    return float(np.linalg.norm(np.subtract(*scene.rest_bounds)))


def differing_fraction(a, b, threshold=24):
    return (np.abs(a[:, :, :3].astype(int) - b[:, :, :3]).max(axis=2) > threshold).mean()


@pytest.mark.parametrize("name", FBX_SET + USD_SET)
def test_a_capture_on_the_file_is_the_capture_on_its_gltf_export(name, usd_folder, tmp_path, wave, headless):
    on_file, on_export = both(name, usd_folder, tmp_path, wave)
    assert on_file.bone_map == on_export.bone_map and len(on_file.bone_map) >= 2
    size = size_of(on_export.target_scene)
    for time in TIMES:
        a, b = joint_positions(on_file, time), joint_positions(on_export, time)
        assert sorted(a) == sorted(b)
        worst = max(float(np.abs(a[n] - b[n]).max()) for n in a) / size
        assert worst < TOLERANCE, (name, time, worst)
    # The pictures: the same camera (framed on the export), the same frame of the clip.
    for retargeting in (on_file, on_export):
        retargeting.clip.apply(1.0)
    camera = framed_camera(on_export.target_scene)
    options = RenderOptions(show_grid=False)
    picture = headless.render(on_file.target_scene, camera, options)
    exported = headless.render(on_export.target_scene, camera, options)
    assert differing_fraction(picture, exported) < 0.005, name
    # Not vacuous: the capture moves the model away from the pose it was loaded in.
    loaded = load_model(model_path(name, usd_folder))
    assert differing_fraction(headless.render(loaded, camera, options), exported) > 0.01, name


def test_the_mocap_page_commands_run_in_order(tmp_path, cli):
    """docs/mocap.md's blocks that export, in one folder: each command writes what it says; the
    capture drawn on the Maya-style FBX is the capture drawn on its glTF export, and both differ
    from the figure as loaded (as the page's pictures show)."""
    import re
    import shlex

    from PIL import Image

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "mocap.md").read_text()
    blocks = [block for block in re.findall(r"```sh\n(.*?)```", page, re.S) if "boneviewer export" in block]
    assert len(blocks) == 2
    (tmp_path / "tests").symlink_to(root / "tests")
    for block in blocks:
        for line in block.splitlines():
            result = cli(*shlex.split(line)[1:], cwd=tmp_path, timeout=300)
            assert result.returncode == 0 and "wrote" in result.stdout, (line, result.stderr[-2000:])

    def picture(name):
        return np.asarray(Image.open(tmp_path / name))

    assert differing_fraction(picture("figure-wave.png"), picture("figure-glb-wave.png")) < 0.005
    assert differing_fraction(picture("figure-wave.png"), picture("figure.png")) > 0.01
    jacks = picture("jacks.png")[..., :3].astype(int)
    assert (np.abs(jacks - jacks[0, 0]).max(axis=2) > 40).mean() > 0.05  # CesiumMan is drawn
