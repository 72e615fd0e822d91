"""The remote connection's shadows (issue 45), skinning and spring bones (issue 46) against a live
`boneviewer serve` in another process: a client's render() with shadow settings equals
`boneviewer render` with the same options; set_skinning draws as `render --skinning`; springs
turned on and off, reset, and a paused clip's picture at time T simulated from the clip's start
(the same time, the same picture, as `render --time T`). Bad values are one ViewerError line and
the server keeps serving; a server older than the client is sent nothing it would refuse."""

from __future__ import annotations

import json

import numpy as np
import pytest

from samples import FOX, ROBOT
from springs_cases import FOX_TAIL
from test_remote import Server, _close, _differing, _rendered, raw, closed_by_server, still_serving
from viewer.errors import ViewerError
from viewer.remote import connect, protocol

SIZE = (128, 96)
TWIST = {"UpperArm.L": [0.0, 0.966, 0.0, 0.259], "LowerArm.L": [0.0, 0.966, 0.0, 0.259]}  # 150 degrees about Y


# --- shadows ------------------------------------------------------------------------------------------
def test_a_clients_render_chooses_the_shadows_for_its_picture(tmp_path, cli):
    plain = _rendered(cli, tmp_path, "plain")
    shadowed = _rendered(cli, tmp_path, "shadowed", "--shadows")
    placed = ["--shadows", "--shadow-intensity", "1", "--shadow-softness", "0", "--key-light", "90,30"]
    hard = _rendered(cli, tmp_path, "hard", *placed)
    placed_soft = _rendered(cli, tmp_path, "placed-soft", "--shadows", "--key-light", "90,30")
    assert _differing(plain, shadowed).sum() > 200 and _differing(shadowed, hard).sum() > 200
    assert _differing(hard, placed_soft).sum() > 100
    served = Server(tmp_path, ROBOT)  # serve: no shadows unless --shadows, as render
    try:
        with served.connect() as client:
            assert "shadows" in client.server_render
            assert _close(client.render(SIZE), plain)
            assert _close(client.render(SIZE, shadows=True), shadowed)
            assert _close(client.render(SIZE, shadows=True, shadow_intensity=1.0, shadow_softness=0.0,
                                        key_light=(90, 30)), hard)
            assert _close(client.render(SIZE), plain)  # this picture's only: the next is the server's again
            for bad, why in ((dict(shadow_intensity=1.5), "render: shadow_intensity must be from 0 to 1, got 1.5"),
                             (dict(shadow_intensity=-0.1), "render: shadow_intensity must be from 0 to 1"),
                             (dict(shadow_softness=float("nan")), "render: shadow_softness must be from 0 to 1, got nan"),
                             (dict(shadow_softness="soft"), "render: shadow_softness must be a number, got str"),
                             (dict(key_light=(30,)), r"render: key_light must be two finite angles in degrees"),
                             (dict(key_light=(30, float("inf"))), r"render: key_light must be two finite angles"),
                             (dict(key_light=(float("nan"), 40)), r"render: key_light must be two finite angles"),
                             (dict(key_light="30,40"), r"render: key_light must be two finite angles"),
                             (dict(key_light=(0, 120)), "render: key_light: the elevation must be from -90 to 90"),
                             (dict(shadows="yes"), "render: shadows must be True or False")):
                with pytest.raises(ViewerError, match=why) as refused:
                    client.render(SIZE, **bad)
                assert "\n" not in str(refused.value)
            still_serving(client)
            # a raw client's NaN on the wire: its connection is closed, the server serves on
            websocket = raw(served)
            block = protocol.SIZE.pack(*SIZE) + protocol.FRAME.pack(0, 0, 0, 0, 0, 0)
            websocket.send(protocol.encode(protocol.RENDER, 7, block + protocol.SHADOW.pack(2, 0, 0, float("nan"),
                                                                                            0, 0, 0)))
            assert closed_by_server(websocket)
            assert _close(client.render(SIZE, shadows=True), shadowed)
    finally:
        served.stop()
    served = Server(tmp_path, ROBOT, *placed)  # serve's options: every render's defaults
    try:
        with served.connect() as client:
            assert _close(client.render(SIZE), hard)
            assert _close(client.render(SIZE, shadows=False), plain)
            assert _close(client.render(SIZE, shadow_intensity=0.6, shadow_softness=0.3), placed_soft)  # over serve's
    finally:
        served.stop()
    assert not any("Traceback" in line for line in served.logged())


def test_the_shadows_block_travels_only_when_set_and_is_checked_when_read():
    plain = protocol.decode(protocol.render(3, (64, 48)))
    assert len(plain.payload) == 8
    message = protocol.decode(protocol.render(4, (64, 48), shadows=True, key_light=(-30, 60)))
    assert len(message.payload) == 8 + protocol.FRAME.size + protocol.SHADOW.size
    assert protocol.read_render(message.payload).frame == {"shadows": True, "key_light": (-30.0, 60.0)}
    message = protocol.decode(protocol.render(5, (64, 48), grid=False, shadow_intensity=1.0, shadow_softness=0.0))
    assert protocol.read_render(message.payload).frame == {"grid": False, "shadow_intensity": 1.0,
                                                           "shadow_softness": 0.0}
    head = protocol.SIZE.pack(64, 48) + protocol.FRAME.pack(0, 0, 0, 0, 0, 0)
    for given, on, values in ((0, 0, (0, 0, 0, 0)), (16, 0, (0, 0, 0, 0)), (0, 1, (0, 0, 0, 0)), (2, 2, (0, 0, 0, 0)),
                              (2, 0, (1.5, 0, 0, 0)), (4, 0, (0, float("nan"), 0, 0)),
                              (8, 0, (0, 0, float("inf"), 0)), (8, 0, (0, 0, 0, 91))):
        with pytest.raises(protocol.ProtocolError, match="render: "):
            protocol.read_render(head + protocol.SHADOW.pack(given, on, 0, *values))


def test_a_server_before_the_shadows_skinning_and_springs_is_sent_none_of_them():
    """A server before them lists neither the requests nor "shadows" in its OK to HELLO: the
    client says the server is older and sends nothing (it would close the connection)."""
    from viewer.remote.server import RemoteServer

    class MixServer(RemoteServer):  # as the servers with MIX answered the token
        def hello_reply(self, request_id):
            return protocol.ok(request_id, {"requests": ["bones", "set_pose", "set_pose_dict", "set_time", "play",
                                                         "set_camera", "render", "mix"]})

    class OldServer(RemoteServer):  # before MIX: an empty OK
        def hello_reply(self, request_id):
            return protocol.ok(request_id)

    for server_class in (MixServer, OldServer):
        with server_class("127.0.0.1", 0, "local").start() as old:
            with connect(f"127.0.0.1:{old.address[1]}", token="local") as client:
                assert client.server_render == [] and "springs" not in client.server_requests
                for call, why in ((lambda: client.render((8, 8), shadows=True), "^render: the server at .* is older"),
                                  (lambda: client.set_skinning("dq"), "^set_skinning: the server at .* is older"),
                                  (lambda: client.set_springs(False), "^set_springs: the server at .* is older"),
                                  (lambda: client.reset_springs(), "^reset_springs: the server at .* is older"),
                                  (lambda: client.set_skinning("linear"), "^set_skinning: mode must be lbs")):
                    with pytest.raises(ViewerError, match=why):
                        call()
                assert old.messages_read == 0


# --- skinning -----------------------------------------------------------------------------------------
def test_set_skinning_draws_as_render_skinning(tmp_path, cli):
    pose = tmp_path / "twist.json"
    pose.write_text(json.dumps({"version": 2, "bones": {name: {"rotation_quaternion": q} for name, q in TWIST.items()}}))
    linear = _rendered(cli, tmp_path, "lbs", "--pose", pose)
    dual = _rendered(cli, tmp_path, "dq", "--pose", pose, "--skinning", "dq")
    assert _differing(linear, dual).sum() > 30  # the twisted arm keeps its volume with dual quaternions
    served = Server(tmp_path, ROBOT)
    try:
        with served.connect() as client:
            client.set_pose(rotations=list(TWIST.values()), bones=list(TWIST))
            assert _close(client.render(SIZE), linear)
            client.set_skinning("dq")
            assert _close(client.render(SIZE), dual)
            assert _close(client.render(SIZE), dual)  # it stays until set again
            client.set_skinning("LBS")
            assert _close(client.render(SIZE), linear)
            for bad in ("both", "linear", 1, None):
                with pytest.raises(ViewerError, match="^set_skinning: mode must be lbs .linear blend. or dq .dual "
                                                      "quaternions., got ") as refused:
                    client.set_skinning(bad)
                assert "\n" not in str(refused.value)
            websocket = raw(served)  # a mode this build does not know, from a raw client: that connection closes
            websocket.send(protocol.encode(protocol.SET_SKINNING, 3, b"\x02"))
            assert closed_by_server(websocket)
            still_serving(client)
    finally:
        served.stop()


# --- spring bones ---------------------------------------------------------------------------------------
def test_springs_swing_in_a_served_picture_turn_off_and_on_and_the_same_time_is_the_same_picture(tmp_path, cli):
    options = ["--spring-chain", FOX_TAIL, "--no-grid"]
    swung = _rendered(cli, tmp_path, "swung", "--time", "0.9", *options, model=FOX)
    held = _rendered(cli, tmp_path, "held", "--time", "0.9", "--no-springs", *options, model=FOX)
    assert _differing(swung, held, 40).sum() > 20  # the tail swung away from where the clip alone holds it
    served = Server(tmp_path, FOX, *options)
    try:
        with served.connect() as client:
            client.set_time(0.9)
            first = client.render(SIZE)
            assert _close(first, swung)  # simulated from the clip's start at 1/60 s, as render --time
            client.set_time(0.3)
            assert _differing(client.render(SIZE), first).any()
            client.set_time(0.9)
            # the same server twice: the same picture but for the rasterizer's rounding
            assert not _differing(client.render(SIZE), first).any()  # the same time, the same picture
            assert not _differing(client.render(SIZE), first).any()
            state = client.set_springs(False)
            assert state == {"enabled": False, "chains": ["b_Tail01_012"], "joints": 3}
            assert _close(client.render(SIZE), held)  # the clip alone
            assert client.set_springs(True)["enabled"] is True
            assert not _differing(client.render(SIZE), first).any()
            assert client.reset_springs() == {"enabled": True, "chains": ["b_Tail01_012"], "joints": 3}
            assert not _differing(client.render(SIZE), first).any()  # paused: from the clip's start whatever came before
            with pytest.raises(ViewerError, match="^set_springs: flag must be True or False, got str"):
                client.set_springs("off")
            still = client.bones()
            assert len(still) > 20
    finally:
        served.stop()
    served = Server(tmp_path, ROBOT)  # no chains: on is refused in one line, off is nothing to do
    try:
        with served.connect() as client:
            with pytest.raises(ViewerError, match=r"^set_springs: this model has no spring chains \(serve "
                                                  r"--spring-chain BONE adds one\)$"):
                client.set_springs(True)
            assert client.set_springs(False) == {"enabled": False, "chains": [], "joints": 0}
            still_serving(client)
    finally:
        served.stop()


def test_the_server_side_target_resets_springs_of_a_playing_clip_to_their_rest():
    """What SPRINGS does on the frame loop's thread (in serve and in the window): while the clip
    plays, the springs swing live; a reset puts every joint at its rest with no motion left."""
    import springs_cases as sc
    from viewer.editing.editor import Editor
    from viewer.remote.target import RemoteTarget

    scene, _, _ = sc.build("fox_tail")
    target = RemoteTarget(Editor(scene))
    editor = target.editor
    editor.seek(0.0)
    editor.play()
    for _ in range(30):
        editor.advance(1 / 30)
    joints = scene.springs.joints
    assert max(np.abs(j.tail - j.prev).max() for j in joints) > 1e-3  # swinging
    assert target.springs("reset")["enabled"] is True
    for j in joints:
        np.testing.assert_array_equal(j.tail, j.prev)  # at rest: no motion carried
    target.before_render()  # playing: live, not simulated again
    for j in joints:
        np.testing.assert_array_equal(j.tail, j.prev)
    editor.advance(1 / 30)
    assert max(np.abs(j.tail - j.prev).max() for j in joints) > 0  # and it swings again from there
    with pytest.raises(ViewerError, match="^set_skinning: expected lbs"):
        target.set_skinning("both")
