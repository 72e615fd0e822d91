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


# --- pose files, camera options and camera files through the CLI (in-process) ---------------------
import json  # noqa: E402
import warnings  # noqa: E402

from samples import CESIUM_MAN, ROBOT  # noqa: E402
from viewer.cli import main  # noqa: E402

JOINT = "Skeleton_torso_joint_1"  # CesiumMan's root joint


def run_main(capsys, *args) -> tuple[int, list[str], list]:
    """``boneviewer ARGS`` in this process: (exit status, stderr lines, warnings raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            status = main([str(a) for a in args])
        except SystemExit as exit:  # argparse's refusals
            status = exit.code
    return status, capsys.readouterr().err.strip().splitlines(), [w for w in caught]


@pytest.mark.parametrize("command", ["render", "export"])
@pytest.mark.parametrize("part, value", [("position", [HUGE, 0, 0]), ("scaling", [1, 3e38, 1]),
                                         ("rotation_quaternion", [0, 0, -HUGE, 1])])
def test_render_and_export_refuse_a_pose_file_value_by_name(tmp_path, capsys, command, part, value):
    pose = tmp_path / "bad.json"
    pose.write_text(json.dumps({"version": 1, "bones": {JOINT: {part: value}}}))
    out = tmp_path / ("out.png" if command == "render" else "out.glb")
    status, err, caught = run_main(capsys, command, CESIUM_MAN, "--pose", pose, "--out", out)
    assert status == 2 and len(err) == 1, err
    assert f"pose file {pose}: bone '{JOINT}' {part}: contains {RANGE}" in err[0]
    assert not caught, [str(w.message) for w in caught]
    assert not out.exists()


@pytest.mark.parametrize("option, value, name", [
    ("--target", "1e39,0,0", "--target"), ("--distance", "1e39", "--distance"), ("--yaw", "1e39", "--yaw"),
    ("--pitch", "1e39", "--pitch"), ("--fov", "1e39", "--fov"), ("--distance", "1e-30", "distance")])
def test_camera_options_refuse_a_value_by_name(tmp_path, capsys, option, value, name):
    out = tmp_path / "out.png"
    status, err, caught = run_main(capsys, "render", CESIUM_MAN, option, value, "--out", out)
    assert status == 2 and len(err) == 1 and name in err[0], err
    assert not caught and not out.exists()


@pytest.mark.parametrize("key, value", [("target", [0, HUGE, 0]), ("distance", HUGE), ("yaw", HUGE),
                                        ("pitch", -HUGE), ("fov", HUGE), ("distance", 1e-30)])
def test_camera_files_refuse_a_value_by_name(tmp_path, capsys, key, value):
    camera = tmp_path / "cam.json"
    camera.write_text(json.dumps({key: value}))
    status, err, caught = run_main(capsys, "render", CESIUM_MAN, "--camera", camera, "--out", tmp_path / "o.png")
    assert status == 2 and len(err) == 1 and f"--camera {camera}: {key} must be" in err[0], err
    assert not caught


def test_the_orbit_camera_refuses_by_name_and_keeps_tiny_and_far_views_finite():
    from viewer.camera import MIN_DISTANCE, OrbitCamera

    camera = OrbitCamera()
    for name, value in (("target", (HUGE, 0, 0)), ("distance", HUGE), ("yaw", HUGE), ("pitch", HUGE),
                        ("fov_y", HUGE), ("distance", 1e-30)):
        with pytest.raises(ViewerError, match=f"camera {name.removesuffix('_y')}"):
            setattr(camera, name, value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning either
        for target, distance in (((1e17, -1e17, 1e17), MIN_DISTANCE), ((0, 0, 0), MAX_MAGNITUDE)):
            camera = OrbitCamera(target=target, distance=distance, yaw=30, pitch=20)
            matrices = camera.view_matrix() @ camera.projection_matrix(1.0)
            # Finite where the old view (aimed from position - target) was NaN: the eye rounded onto the target.
            assert np.isfinite(matrices.astype(np.float32)).all()


# --- scripts ----------------------------------------------------------------------------------------
def test_script_values_are_refused_by_name():
    from viewer.character import build_character
    from viewer.editing.script_app import HeadlessApp

    app = HeadlessApp(build_character(), (64, 64))
    bone = app.scene.skeletons[0].bones[1]
    for set_value, name in ((lambda: setattr(app, "time", HUGE), "app.time"),
                            (lambda: setattr(app, "camera", {"distance": HUGE}), "app.camera: distance"),
                            (lambda: setattr(app, "camera", {"target": [0, 0, HUGE]}), "app.camera: target"),
                            (lambda: setattr(bone.get_pose_target(), "position", [0, HUGE, 0]),
                             f"'{bone.name}' position")):
        with pytest.raises(ViewerError, match=name):
            set_value()
    assert np.isfinite(app.camera.view_matrix()).all() and app.camera.distance == 5.0


# --- the remote connection: the messages' bytes, applied in-process, then a render -----------------
@pytest.fixture(scope="module")
def remote():
    """A RemoteTarget over the robot, rendering on EGL as `boneviewer serve` does, and ``send(bytes)``:
    a request decoded and applied as the server does (its reply decoded)."""
    from viewer.editing.editor import Editor
    from viewer.loaders import load_model
    from viewer.options import RenderOptions
    from viewer.remote import protocol, server
    from viewer.remote.target import RemoteTarget
    from viewer.render.headless import HeadlessRenderer

    with HeadlessRenderer((32, 32)) as headless:
        class Target(RemoteTarget):
            def render(self, size, frame):
                headless.resize(size)
                return headless.render(self.scene, self.camera_for(size), RenderOptions())

        target = Target(Editor(load_model(str(ROBOT))))

        def send(data: bytes):
            message = protocol.decode(data)
            try:
                return protocol.read_reply(server._apply(target, message.request_id, message.kind,
                                                         server._read_request(message)))
            except ViewerError as error:
                return error

        yield target, send


def test_remote_messages_refuse_a_float32_infinity_by_name_and_render_still_works(remote):
    from viewer.remote import protocol

    target, send = remote
    before = protocol.read_image(send(protocol.render(1, (32, 32))).payload)
    names = target.bone_names()
    rows = np.zeros((2, 3))
    rows[1, 0] = HUGE  # float64 on the wire: arrives as 1e39
    rotations = np.array([[0, 0, 0, 1.0], [0, 0, HUGE, 1.0]])
    morph_mesh = target.scene.morph_meshes[0]
    for request, expected in (
            (protocol.set_pose(2, positions=rows, names=names[:2]), f"position of bone '{names[1]}' contains {RANGE}"),
            (protocol.set_pose(3, scalings=rows[::-1].copy() + 1, names=names[:2]), f"scaling of bone '{names[0]}'"),
            (protocol.set_pose(4, rotations=rotations, names=names[:2]), f"rotation of bone '{names[1]}'"),
            (protocol.set_pose_dict(5, {"bones": {names[3]: {"position": [0, 0, HUGE]}}}),
             f"bone '{names[3]}' position: contains {RANGE}"),
            (protocol.set_pose_dict(6, {"version": 2, "bones": {}, "morph": {morph_mesh.name: {"0": HUGE}}}),
             f"morph '{morph_mesh.name}' target '0': the weight must be a finite number with a magnitude up to 1e18"),
            (protocol.set_camera(7, target=(0, HUGE, 0)), "set_camera: camera target: contains"),
            (protocol.set_camera(8, distance=HUGE), "set_camera: camera distance: .*magnitude up to 1e18"),
            (protocol.set_camera(9, distance=1e-30), "set_camera: camera distance: must be at least 0.001"),
            (protocol.set_camera(10, yaw=HUGE), "set_camera: camera yaw"),
            (protocol.set_time(11, HUGE), "set_time: seconds")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            reply = send(request)
            assert isinstance(reply, ViewerError), reply
            assert __import__("re").search(expected, str(reply)), (str(reply), expected)
            after = protocol.read_image(send(protocol.render(12, (32, 32))).payload)  # still renders, unchanged
        np.testing.assert_array_equal(after, before)
    assert target.camera_settings == {}


# --- BVH motion: finite in float64, refused as every value beyond the range is -----------------------
@pytest.mark.parametrize("kernel_on", [True, False])
def test_a_bvh_value_beyond_the_range_names_its_line(tmp_path, monkeypatch, kernel_on):
    from viewer.bvh import load_bvh
    from viewer.model import native

    if not kernel_on:
        monkeypatch.setattr(native, "ckernel", None)
    path = tmp_path / "huge.bvh"
    path.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Xposition Yposition Zposition\n"
                    "  End Site\n  {\n    OFFSET 0 1 0\n  }\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n0 0 0\n0 1e39 0\n")
    with pytest.raises(ViewerError, match=r"line 15: MOTION row 2: '1e39' is not a finite number up to 1e18"):
        load_bvh(path)
