"""The notebook Viewer's shadows (issue 45: on by default, the render's keywords), skinning and
spring bones (issue 46): set from the constructor and from later cells, bad values one
ViewerError line naming the option; a paused clip's picture at time T simulates the springs from
the clip's start (the same time, the same picture), a playing one swings them live."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jupyter_rfb", reason="the notebook extra (pip install boneviewer[notebook])")

from samples import FOX, ROBOT  # noqa: E402
from springs_cases import FOX_TAIL_CHAIN  # noqa: E402
from viewer.errors import ViewerError  # noqa: E402
from viewer.notebook import Viewer  # noqa: E402

SIZE = (160, 120)
TWIST = {"UpperArm.L": {"rotation_quaternion": [0.0, 0.966, 0.0, 0.259]},
         "LowerArm.L": {"rotation_quaternion": [0.0, 0.966, 0.0, 0.259]}}  # 150 degrees about Y


def differing(a, b, tolerance=8) -> int:
    return int((np.abs(a.astype(int) - b.astype(int)) > tolerance).any(axis=2).sum())


def test_shadows_are_on_by_default_and_take_the_renders_keywords():
    v = Viewer(ROBOT, size=SIZE, skeleton=False)
    try:
        assert v.editor.display.shadows
        shadowed = v.snapshot()
        v.look(shadows=False)
        plain = v.snapshot()
        assert differing(shadowed, plain) > 200  # the ground under the robot darkens
        below = (np.abs(shadowed[60:, :, :3].astype(int) - plain[60:, :, :3]).max(axis=2) > 8).sum()
        assert below > 100
        v.look(shadows=True, shadow_intensity=1.0, shadow_softness=0.0, key_light=(90, 30))
        placed = v.snapshot()
        assert differing(placed, shadowed) > 100
        assert v.editor.display.key_light == pytest.approx((0.866, 0.5, 0.0), abs=1e-3)
        for bad, why in ((dict(shadow_intensity=1.5), "^shadow_intensity: must be from 0 to 1, got 1.5$"),
                         (dict(shadow_softness=float("nan")), "^shadow_softness: "),
                         (dict(key_light=(30,)), "^key_light: expected two finite angles"),
                         (dict(key_light=(30, float("inf"))), "^key_light: expected two finite angles"),
                         (dict(shadows="yes"), "^shadows: expected True or False")):
            with pytest.raises(ViewerError, match=why):
                v.look(**bad)
        assert differing(v.snapshot(), placed) == 0  # a refused value changed nothing
    finally:
        v.close()
    off = Viewer(ROBOT, size=SIZE, skeleton=False, shadows=False)
    try:
        assert differing(off.snapshot(), plain) == 0
    finally:
        off.close()
    with pytest.raises(ViewerError, match="^shadow_intensity: must be from 0 to 1, got 2$"):
        Viewer(ROBOT, size=SIZE, shadow_intensity=2)


def test_skinning_from_the_constructor_and_later_cells():
    v = Viewer(ROBOT, size=SIZE, skeleton=False, shadows=False)
    try:
        assert v.skinning == "lbs"
        v.pose(TWIST)
        linear = v.snapshot()
        v.skinning = "dq"
        assert v.skinning == "dq" and all(mesh.skinning == "dq" for mesh in v.scene.skinned_meshes)
        dual = v.snapshot()
        assert differing(linear, dual) > 15  # the twisted arm keeps its volume
        v.skinning = "both"  # side by side: linear blend left, dual quaternions right
        assert v.skinning == "both" and differing(v.snapshot(), dual) > 500
        for bad in ("linear", 2, None):
            with pytest.raises(ViewerError, match=r"^skinning: expected lbs \(linear blend\), dq \(dual quaternions\) "
                                                  r"or both \(side by side\), got "):
                v.skinning = bad
        assert v.skinning == "both"
        camera = v.camera
    finally:
        v.close()
    dq = Viewer(ROBOT, size=SIZE, skeleton=False, shadows=False, skinning="dq")
    try:
        assert dq.skinning == "dq"
        dq.pose(TWIST)
        dq.camera = camera  # framed on the rest pose as dual quaternions skin it: a hair apart
        assert differing(dq.snapshot(), dual) == 0
    finally:
        dq.close()
    with pytest.raises(ViewerError, match="^skinning: expected lbs"):
        Viewer(ROBOT, size=SIZE, skinning="quaternions")


TAIL = {key: value for key, value in FOX_TAIL_CHAIN.items() if key != "root_bone"}  # its settings


def fox_with_a_tail(**options):
    v = Viewer(FOX, size=SIZE, skeleton=False, grid=False, shadows=False, **options)
    v.edit(lambda editor: editor.scene.springs.add_chain("b_Tail01_012", **TAIL))
    return v


def test_springs_swing_at_a_time_the_same_time_is_the_same_picture_and_they_turn_off_and_on():
    v = fox_with_a_tail()
    try:
        assert v.springs is True
        v.time = 0.9
        swung = v.snapshot()
        v.time = 0.3
        assert differing(v.snapshot(), swung) > 20
        v.time = 0.9
        assert differing(v.snapshot(), swung) == 0  # simulated from the clip's start at 1/60 s both times
        v.springs = False
        held = v.snapshot()
        assert differing(held, swung, 40) > 20  # the tail where the clip alone holds it
        assert v.springs is False
        v.springs = True
        assert differing(v.snapshot(), swung) == 0
        with pytest.raises(ViewerError, match="^springs must be True or False, got 'off'$"):
            v.springs = "off"
    finally:
        v.close()
    off = fox_with_a_tail()
    try:
        off.springs = False
        off.time = 0.9
        assert differing(off.snapshot(), held) == 0
    finally:
        off.close()
    robot = Viewer(ROBOT, size=SIZE)
    try:
        with pytest.raises(ViewerError, match=r"^springs: this model has no spring chains"):
            robot.springs = True
    finally:
        robot.close()
    with pytest.raises(ViewerError, match="^Viewer: springs must be True or False"):
        Viewer(FOX, size=SIZE, springs="yes")


def test_a_paused_frame_the_page_draws_is_the_picture_at_the_playhead():
    """The frames the page asks for (get_frame) while the clip is paused do not step the springs
    on by the wall clock: the widget shows, and a later cell's snapshot gives, the picture at
    v.time (render --time's), however long the page waited between frames."""
    v = fox_with_a_tail()
    try:
        v.time = 0.9
        swung = v.snapshot()
        joints = v.scene.springs.joints
        held = [np.array(j.bone.rotation_quaternion) for j in joints]
        v._last_draw -= 0.2  # the page's next frame 0.2 s later (12 spring steps of wall-clock time)
        assert differing(v.get_frame(), swung) == 0
        for joint, rotation in zip(joints, held):
            np.testing.assert_array_equal(joint.bone.rotation_quaternion, rotation)
        assert differing(v.snapshot(), swung) == 0
    finally:
        v.close()


def test_playing_swings_them_live_and_a_reset_puts_every_joint_at_rest():
    v = fox_with_a_tail()
    try:
        v.play()
        joints = v.scene.springs.joints
        for _ in range(20):
            v.edit(lambda editor: editor.advance(1 / 30))  # frames as get_frame draws them, at 30 fps
        assert max(np.abs(j.tail - j.prev).max() for j in joints) > 1e-3  # swinging
        v.reset_springs()
        for j in joints:
            np.testing.assert_array_equal(j.tail, j.prev)  # at rest, no motion carried
        v.edit(lambda editor: editor.advance(1 / 30))
        assert max(np.abs(j.tail - j.prev).max() for j in joints) > 0  # and swinging again from there
    finally:
        v.close()


def test_a_chain_added_from_the_notebooks_thread_while_a_clip_plays_is_added_on_the_viewers():
    """v.add_spring_chain runs on the viewer's GL thread, where a playing clip's frames step the
    springs, and v.springs reads them there: nothing on the notebook's thread makes or changes
    scene.springs beside a frame. A bad bone or value comes back as one ViewerError."""
    import threading

    import viewer.motion.springs as spring_module

    v = Viewer(FOX, size=SIZE, skeleton=False, grid=False, shadows=False)
    made_on, added_on = [], []
    springs_of, add_chain = spring_module.springs_of, spring_module.SpringBones.add_chain

    def recording_springs_of(scene):
        made_on.append(threading.current_thread())
        return springs_of(scene)

    def recording_add_chain(self, *args, **kwargs):
        added_on.append(threading.current_thread())
        return add_chain(self, *args, **kwargs)

    stop, failures = threading.Event(), []

    def page():  # the browser asking for frames while the clip plays
        try:
            while not stop.is_set():
                v.get_frame()
        except BaseException as error:  # noqa: BLE001 - reported by the test
            failures.append(error)

    try:
        spring_module.springs_of, spring_module.SpringBones.add_chain = recording_springs_of, recording_add_chain
        v.play()
        frames = threading.Thread(target=page)
        frames.start()
        try:
            assert v.springs is True
            assert v.add_spring_chain("b_Tail01_012", **TAIL) == "b_Tail01_012"
            for root, options, why in (("no_such_bone", {}, r"^add_chain: no node or bone named 'no_such_bone'"),
                                       ("b_Tail01_012", {"drag": 2}, r"^spring joint 'b_Tail01_012' drag: 2 is above 1$")):
                with pytest.raises(ViewerError, match=why):
                    v.add_spring_chain(root, **options)
            assert v.springs is True
        finally:
            stop.set()
            frames.join(timeout=30)
        assert not failures, failures
        assert made_on and set(made_on) == {v._gl.thread}
        assert added_on and set(added_on) == {v._gl.thread}
        assert [c["name"] for c in v._gl.call(lambda: v.scene.springs.chains)] == ["b_Tail01_012"]  # refused: none
        joints = v._gl.call(lambda: list(v.scene.springs.joints))
        for _ in range(20):
            v.edit(lambda editor: editor.advance(1 / 30))  # frames at 30 fps
        assert max(np.abs(j.tail - j.prev).max() for j in joints) > 1e-3  # the chain swings
    finally:
        spring_module.springs_of, spring_module.SpringBones.add_chain = springs_of, add_chain
        stop.set()
        v.close()


def test_node_constraints_turn_off_and_on_and_a_model_without_them_refuses_them():
    from constraints_cases import AVATAR, DATA

    v = Viewer(str(DATA / AVATAR), size=SIZE, skeleton=False, grid=False, shadows=False, springs=False)
    try:
        assert v.constraints is True
        def turn_sources(editor):  # every source turned: every constraint turns its node
            for constraint in editor.scene.constraints:
                constraint.source.assign_trs(rotation_quaternion=np.array([0.0, 0.0, 0.5, 0.866]))
        v.edit(turn_sources)
        on = v.snapshot()
        v.constraints = False
        assert v.constraints is False
        off = v.snapshot()
        assert differing(on, off) > 20  # the constrained nodes (the head, the neck, ...) moved back
        v.constraints = True
        assert differing(v.snapshot(), on) == 0
        with pytest.raises(ViewerError, match="^constraints must be True or False, got 1$"):
            v.constraints = 1
    finally:
        v.close()
    fox = Viewer(FOX, size=SIZE)
    try:
        assert fox.constraints is True  # none to apply, on as the scene has them
        with pytest.raises(ViewerError, match=r"^constraints: this model has no node constraints"):
            fox.constraints = True
        fox.constraints = False
        assert fox.constraints is False
    finally:
        fox.close()
