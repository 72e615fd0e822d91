"""VRM avatars (issue 46, item 3): .vrm files open as GLBs; VRM 1.0's humanoid map is the bone
map retargeting uses; expressions are named groups of morph weights, set as VRM 1.0's expression
update says; VRM 0.x models, which face -Z, are turned to face +Z as 1.0's do; bad input is one
line (exit 2) where the file requires the extension, a warning where it is optional.

The avatars are RobotExpressive with VRM's extension added (tests/make_vrm_cases.py; its joints
renamed as VRoid names them, which no naming scheme knows)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from make_vrm_cases import HEAD_NODE, explicit_bone_map, robot_vrm
from viewer.cli import main
from viewer.errors import ViewerError
from viewer.loaders import load_model
from viewer.model.retarget import placement_matrix, retarget

from samples import DATA_DIR as DATA

VRM = DATA / "vrm"
ROBOT, ROBOT_0X = VRM / "robot.vrm", VRM / "robot_0x.vrm"
WAVE = DATA / "bvh" / "wave_hello.bvh"


def test_the_files_are_what_the_script_writes():
    assert ROBOT.read_bytes() == robot_vrm("1.0")
    assert ROBOT_0X.read_bytes() == robot_vrm("0.x")


def _world_joints(scene) -> np.ndarray:
    """Every bone's world position (the mesh placement included), as drawn."""
    scene.prepare()
    return np.array([(bone.get_absolute_matrix() @ placement_matrix(scene, skeleton))[3, :3]
                     for skeleton in scene.skeletons for bone in skeleton.bones])


def _retargeted(path, bone_map=None, scene=None):
    scene = load_model(path) if scene is None else scene
    clip = retarget(load_model(WAVE), scene, bone_map=bone_map)
    frames = []
    for t in np.linspace(0.0, clip.duration, 9):
        clip.apply(t)
        frames.append(_world_joints(scene))
    return np.array(frames), scene


def _size(scene) -> float:
    low, high = scene.rest_bounds
    return float(np.linalg.norm(high - low))


def test_a_vrm_opens_with_its_humanoid_map_and_expressions():
    scene = load_model(ROBOT)
    assert scene.humanoid["hips"] == "J_Bip_C_Hips" and scene.humanoid["leftUpperLeg"] == "J_Bip_L_UpperLeg"
    assert len(scene.humanoid) == 19
    assert list(scene.expressions) == ["angry", "surprised", "sad", "happy", "blink", "grumpy"]
    assert scene.vrm.version == "1.0" and scene.vrm.springs == 1


def test_the_humanoid_map_drives_retargeting_as_an_explicit_bone_map_does():
    automatic, scene = _retargeted(ROBOT)
    explicit, _ = _retargeted(ROBOT, explicit_bone_map())
    size = _size(scene)
    assert np.abs(automatic - explicit).max() <= 1e-4 * size
    # The clip moves the avatar (the comparison is not of two rest poses).
    assert np.abs(automatic - automatic[0]).max() > 0.05 * size
    # The joint names alone mean nothing to the naming schemes: without the map there is no map.
    bare = load_model(ROBOT)
    bare.humanoid = {}
    with pytest.raises(ViewerError, match="give a bone map"):
        retarget(load_model(WAVE), bare)


def test_vrm_0x_faces_as_vrm_1_0_does_after_its_turn():
    one, zero = load_model(ROBOT), load_model(ROBOT_0X)
    size = _size(one)
    rest_one, rest_zero = _world_joints(one), _world_joints(zero)
    assert np.abs(rest_one - rest_zero).max() <= 1e-4 * size
    # Facing +Z, glTF's front: the character's left is at +X.
    names = [b.name for s in one.skeletons for b in s.bones]
    left, right = names.index("J_Bip_L_UpperLeg"), names.index("J_Bip_R_UpperLeg")
    assert rest_zero[left, 0] > rest_zero[right, 0]
    # The 0.x file itself faces -Z (its top node holds half a turn about +Y)...
    document = json.loads(ROBOT_0X.read_bytes()[20:20 + int.from_bytes(ROBOT_0X.read_bytes()[12:16], "little")])
    assert np.allclose(np.abs(document["nodes"][0]["rotation"]), (0, 1, 0, 0))
    # ... and retargeted, the two move alike.
    moved_one, _ = _retargeted(ROBOT)
    moved_zero, _ = _retargeted(ROBOT_0X)
    assert np.abs(moved_one - moved_zero).max() <= 1e-4 * size


def _head(scene):
    meshes = [m for m in scene.morph_meshes if m.node_index == HEAD_NODE]
    assert meshes
    return meshes


def _weights(scene) -> np.ndarray:
    return np.array(_head(scene)[0].morph_targets.weights)


def test_an_expression_sets_exactly_its_bound_morph_weights():
    scene = load_model(ROBOT)
    before = {id(m): np.array(m.morph_targets.weights) for m in scene.morph_meshes if m.node_index != HEAD_NODE}
    scene.set_expression("angry", 0.7)
    assert np.allclose(_weights(scene), (0.7, 0.0, 0.0))
    for mesh in _head(scene):  # every primitive of the head's mesh: one node's weights
        assert np.allclose(mesh.morph_targets.weights, (0.7, 0.0, 0.0))
    # Binds that meet add up: grumpy adds 0.6 x 0.5 to Angry and 0.5 x 0.5 to Sad.
    scene.set_expression("grumpy", 0.5)
    assert np.allclose(_weights(scene), (0.7 + 0.3, 0.0, 0.25))
    # The value is clamped to 0..1 (not the sums): sad at 3 acts as 1, its bind weight 0.8.
    scene.set_expression("sad", 3.0)
    assert np.allclose(_weights(scene), (1.0, 0.0, 0.8 + 0.25))
    scene.set_expression("grumpy", 0.0)
    scene.set_expression("sad", -1.0)
    assert np.allclose(_weights(scene), (0.7, 0.0, 0.0))
    for mesh in scene.morph_meshes:
        if mesh.node_index != HEAD_NODE:
            assert np.array_equal(mesh.morph_targets.weights, before[id(mesh)])


def test_binary_expressions_and_overrides_as_vrm_1_0_says():
    scene = load_model(ROBOT)
    scene.set_expression("blink", 0.4)  # isBinary: 0.4 is 0
    assert np.allclose(_weights(scene), 0.0)
    scene.set_expression("blink", 0.6)  # ... 0.6 is 1, its bind 0.5 on Surprised
    assert np.allclose(_weights(scene), (0.0, 0.5, 0.0))
    scene.set_expression("happy", 0.1)  # happy blocks blink while it acts at all
    assert np.allclose(_weights(scene), (0.0, 0.0, 0.025))
    scene.set_expression("happy", 0.0)
    assert np.allclose(_weights(scene), (0.0, 0.5, 0.0))


def test_vrm_0x_blend_shape_groups_are_expressions_with_1_0_names():
    scene = load_model(ROBOT_0X)
    assert list(scene.expressions) == ["angry", "Surprised", "sad", "happy"]  # joy, sorrow: 1.0's names
    scene.set_expression("sad", 1.0)  # 0.x weights are 0..100: 80 is 0.8
    assert np.allclose(_weights(scene), (0.0, 0.0, 0.8))


def test_an_expression_that_does_not_exist(cli, tmp_path):
    scene = load_model(ROBOT)
    with pytest.raises(ViewerError, match="no such expression .*angry, surprised"):
        scene.set_expression("smile", 1.0)
    # in a process of its own: the error line alone, whatever an earlier test left in this one
    result = cli("render", ROBOT, "--expression", "smile=1", "--out", tmp_path / "never.png")
    assert result.returncode == 2 and not (tmp_path / "never.png").exists()
    err = result.stderr.strip().splitlines()
    assert err[-1].startswith("boneviewer: error: expression 'smile': no such expression")
    assert not any("Traceback" in line for line in err)


def _humanoid_missing_node(document):
    document["extensions"]["VRMC_vrm"]["humanoid"]["humanBones"]["head"]["node"] = 999


def _malformed(document):
    document["extensions"]["VRMC_vrm"]["expressions"] = ["angry"]


def _missing_target(document):
    document["extensions"]["VRMC_vrm"]["expressions"]["preset"]["angry"]["morphTargetBinds"][0]["index"] = 7


@pytest.mark.parametrize("edit, words", [(_humanoid_missing_node, "humanoid.humanBones head names node 999"),
                                         (_malformed, "expressions is not an object"),
                                         (_missing_target, "has no morph target 7")])
def test_bad_vrm_is_one_line_when_required_and_a_warning_when_optional(edit, words, tmp_path, capsys, caplog,
                                                                      monkeypatch):
    def required(document):
        edit(document)
        document["extensionsRequired"] = ["VRMC_vrm"]

    path = tmp_path / "required.vrm"
    path.write_bytes(robot_vrm("1.0", required))
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("boneviewer: error:") and words in err[0], err
    optional = tmp_path / "optional.vrm"
    optional.write_bytes(robot_vrm("1.0", edit))
    # main() above gave the "boneviewer" logger its stderr line and stopped it propagating:
    # caplog listens at the root, so the warning is let through to it for this load
    monkeypatch.setattr(logging.getLogger("boneviewer"), "propagate", True)
    with caplog.at_level(logging.WARNING):
        scene = load_model(optional)
    assert any(words in r.getMessage() and "shown without it" in r.getMessage() for r in caplog.records)
    assert scene.humanoid == {} and not scene.expressions and scene.vrm is None
    assert len(scene.meshes) == len(load_model(ROBOT).meshes)


def test_info_lists_the_humanoid_map_expressions_and_spring_chains(capsys):
    assert main(["info", str(ROBOT)]) == 0
    out = capsys.readouterr().out
    for text in ("VRM 1.0: name Robot (VRM test)", "license https://vrm.dev/licenses/1.0/", "hips: J_Bip_C_Hips",
                 "expressions: angry, surprised, sad, happy, blink, grumpy (custom)", "spring chains: 1"):
        assert text in out
    assert main(["info", str(ROBOT_0X), "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["vrm"]["version"] == "0.x" and facts["vrm"]["turned"] and facts["vrm"]["spring_chains"] == 1
    assert facts["vrm"]["humanoid"]["rightFoot"] == "J_Bip_R_Foot"
    assert facts["vrm"]["meta"]["license"] == "CC0"
    assert facts["vrm"]["node_constraints"] == 0 and facts["node_constraints"] == []  # a count; the list at the top


def test_render_retargets_a_bvh_onto_a_vrm_with_an_expression(tmp_path, cli):
    plain, angry = tmp_path / "plain.png", tmp_path / "angry.png"
    for out, extra in ((plain, ()), (angry, ("--expression", "angry=1"))):
        result = cli("render", ROBOT, "--motion", WAVE, "--time", "2", "--size", "160x120", "--out", out, *extra)
        assert result.returncode == 0, result.stderr
    from PIL import Image

    a = np.asarray(Image.open(plain), dtype=np.float64)
    b = np.asarray(Image.open(angry), dtype=np.float64)
    assert a.shape == b.shape and np.abs(a - b).max() > 50  # the brows moved


def test_the_panel_has_a_slider_per_expression_and_a_drag_is_one_undo_step():
    from imgui_bundle import imgui

    from viewer.render.headless import OffscreenTarget, create_headless_context, release_egl_current
    from viewer.ui.session import ViewerSession

    size = (1024, 1400)
    ctx = create_headless_context()
    target = OffscreenTarget(ctx, size)
    session = ViewerSession(ctx, load_model(ROBOT))
    try:
        def run(frames=1):
            for _ in range(frames):
                session.frame(size, 1 / 60, target.framebuffer)

        run(2)
        editor, rects = session.editor, session.panel.rects
        assert {f"expression/{name}" for name in editor.scene.expressions} <= set(rects)
        x0, y0, x1, y1 = rects["expression/angry"]
        io = imgui.get_io()
        io.add_mouse_pos_event(x0 + 2, (y0 + y1) / 2)
        run()
        io.add_mouse_button_event(0, True)
        run()
        for k in range(1, 6):
            io.add_mouse_pos_event(x0 + 2 + (x1 - x0) * 0.75 * k / 5, (y0 + y1) / 2)
            run()
        io.add_mouse_button_event(0, False)
        run(2)
        angry = editor.scene.expressions.weights["angry"]
        assert 0.6 < angry < 0.85 and np.allclose(_weights(editor.scene), (angry, 0.0, 0.0))
        editor.undo()
        assert np.allclose(_weights(editor.scene), 0.0) and editor.scene.expressions.weights.get("angry", 0.0) == 0.0
        assert not editor.can_undo
    finally:
        session.release()
        target.release()
        ctx.release()
        release_egl_current()


def test_motion_checks_find_a_vrm_avatars_feet_by_its_humanoid_map():
    from viewer.checks.motion import find_feet
    from viewer.model.retarget import main_skeleton

    scene = load_model(ROBOT)
    skeleton = main_skeleton(scene)
    names = [b.name for b in skeleton.bones]
    assert [(side, names[i]) for side, i in find_feet(skeleton, None, scene)] == [("left", "J_Bip_L_Foot"),
                                                                                 ("right", "J_Bip_R_Foot")]


def test_view_with_no_display_renders_with_the_expressions(cli, tmp_path):
    """`view` with no display renders a PNG instead: with the --expression options too."""
    result = cli("view", ROBOT.resolve(), "--expression", "smile=1", cwd=tmp_path)
    assert result.returncode == 2 and "no such expression" in result.stderr
    assert not list(tmp_path.iterdir())
    result = cli("view", ROBOT.resolve(), "--expression", "angry=1", "--size", "160x120", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "boneviewer.png").exists()
