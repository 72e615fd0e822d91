"""A mix survives a crash (viewer/motion/recovery.py): saved every 30 s and on exit to a recovery
file per model in the user's state folder, written whole; the next session of that model offers
it back ("Recover the mix saved at HH:MM", at the top of the window's panel) and loads it. And
File > Save mix in the panel, which writes what `render --mix` reads."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from viewer.errors import ViewerError
from viewer.loaders import load_model
from viewer.motion.recovery import MixRecovery, recovery_directory, recovery_path

ROOT = Path(__file__).resolve().parent.parent
ROBOT = ROOT / "tests" / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
FOX = ROOT / "tests" / "data" / "gltf-samples" / "Fox" / "Fox.glb"


class Clock:
    def __init__(self, now=1_700_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "boneviewer" / "recovery"


def mixed(scene):
    """A mix worked on in a session: a walk with a wave added at 0.5 and the head turned."""
    mixer = scene.mixer
    mixer.action("Walking").play()
    wave = mixer.action("Wave")
    wave.additive, wave.weight = True, 0.5
    wave.play()
    mixer.update(0.3)
    head = np.array(mixer.target("Head").rotation_quaternion)
    mixer.set_pose("Head", rotation_quaternion=head[[1, 0, 2, 3]] / np.linalg.norm(head))
    return mixer


def test_the_folder_is_the_users_state_folder_keyed_by_the_models_path(state, monkeypatch, tmp_path):
    assert recovery_directory() == state
    monkeypatch.chdir(ROBOT.parent)
    assert recovery_path("RobotExpressive.glb") == recovery_path(ROBOT)  # the same model, however named
    assert recovery_path(ROBOT) != recovery_path(FOX)
    assert recovery_path(ROBOT).parent == state and recovery_path(ROBOT).name.startswith("RobotExpressive-")
    monkeypatch.setenv("XDG_STATE_HOME", "relative")  # as the XDG spec says: ignored
    assert recovery_directory() == Path.home() / ".local" / "state" / "boneviewer" / "recovery"


def test_saved_every_30_s_and_on_exit_whole_and_offered_back(state):
    clock = Clock()
    scene = load_model(str(ROBOT))
    recovery = MixRecovery(scene, ROBOT, clock=clock)
    assert recovery.offer is None  # nothing saved before
    clock.now += 40
    assert not recovery.tick() and not recovery.path.exists()  # untouched: nothing to keep
    mixer = mixed(scene)
    clock.now += 10
    assert not recovery.tick()  # 10 s since the last look
    clock.now += 20
    assert recovery.tick()  # 30 s: saved
    saved = json.loads(recovery.path.read_text())
    assert saved["mix"] == mixer.snapshot() and saved["saved"] == clock.now
    assert [p.name for p in state.iterdir()] == [recovery.path.name]  # whole: no temporary file left
    clock.now += 30
    assert not recovery.tick()  # nothing changed since
    mixer.action("Wave").weight = 0.8
    assert recovery.close()  # on exit
    wanted = mixer.snapshot()

    # the next session of the model: offered, and loaded on request
    again = load_model(str(ROBOT))
    before = again.mixer.snapshot()
    offered = MixRecovery(again, ROBOT, clock=clock)
    offer = offered.offer
    assert offer is not None and offer.saved == clock.now
    assert offer.label == f"Recover the mix saved at {time.strftime('%H:%M', time.localtime(clock.now))}" or \
        offer.label.startswith("Recover the mix saved at ")
    assert again.mixer.snapshot() == before  # offering changes nothing
    offered.recover()
    assert again.mixer.snapshot() == wanted and offered.offer is None
    head = np.array(again.mixer.target("Head").rotation_quaternion)
    scene.mixer.evaluate()
    assert np.allclose(head, scene.mixer.target("Head").rotation_quaternion, atol=1e-12)


def test_an_untouched_session_leaves_the_offer_for_the_next(state):
    clock = Clock()
    scene = load_model(str(ROBOT))
    first = MixRecovery(scene, ROBOT, clock=clock)
    mixed(scene)
    first.close()
    kept = first.path.read_bytes()
    second = MixRecovery(load_model(str(ROBOT)), ROBOT, clock=clock)  # opened, looked at, closed
    assert second.offer is not None
    clock.now += 60
    second.tick()
    second.close()
    assert first.path.read_bytes() == kept
    assert MixRecovery(load_model(str(ROBOT)), ROBOT, clock=clock).offer is not None


def test_no_offer_from_another_model_a_damaged_file_or_a_mix_that_no_longer_fits(state):
    scene = load_model(str(ROBOT))
    recovery = MixRecovery(scene, ROBOT)
    mixed(scene)
    recovery.close()
    assert MixRecovery(load_model(str(FOX)), FOX).offer is None  # another model's file is another file
    good = recovery.path.read_text()
    data = json.loads(good)
    data["mix"]["layers"][0]["tracks"][0]["target"] = "Tail"  # a bone the model no longer has
    recovery.path.write_text(json.dumps(data))
    assert MixRecovery(load_model(str(ROBOT)), ROBOT).offer is None
    recovery.path.write_text(good[: len(good) // 2])  # cut short
    assert MixRecovery(load_model(str(ROBOT)), ROBOT).offer is None
    data = json.loads(good)
    data["model"] = str(FOX.resolve())
    recovery.path.write_text(json.dumps(data))
    assert MixRecovery(load_model(str(ROBOT)), ROBOT).offer is None
    with pytest.raises(ViewerError, match="no recovered mix"):
        MixRecovery(load_model(str(ROBOT)), ROBOT).recover()


def test_a_folder_that_cannot_be_written_does_not_stop_the_window(state):
    state.parent.mkdir(parents=True)
    state.write_text("a file where the folder goes")
    scene = load_model(str(ROBOT))
    recovery = MixRecovery(scene, ROBOT)
    mixed(scene)
    assert recovery.close() is False


# --- the window's part: the prompt at the top of the panel, File > Save mix -----------------------
@pytest.fixture
def session_of(state):
    from viewer.render.headless import OffscreenTarget, create_headless_context, release_egl_current
    from viewer.ui.session import ViewerSession

    made = []

    def make(scene):
        ctx = create_headless_context()
        target = OffscreenTarget(ctx, (1024, 640))
        session = ViewerSession(ctx, scene, recovery=True)
        session.target = target
        session.run = lambda frames=1: [session.frame((1024, 640), 1 / 60, target.framebuffer) for _ in range(frames)]
        session.run(2)
        made.append((session, target, ctx))
        return session

    yield make
    for session, target, ctx in made:
        if not getattr(session, "released", False):
            session.release()
        target.release()
        ctx.release()
    release_egl_current()


def test_the_window_offers_the_mix_back_and_loads_it_on_a_click(session_of):
    from panel_driver import click

    first = session_of(load_model(str(ROBOT)))
    mixed(first.scene)
    wanted = first.scene.mixer.snapshot()
    first.release()  # on exit: saved
    first.released = True
    second = session_of(load_model(str(ROBOT)))
    label = second.panel.recovery_label
    assert label is not None and label.startswith("Recover the mix saved at ")
    assert label in second.panel.rects and label in str(second.editor.status)
    click(second, label)
    second.run()
    assert second.scene.mixer.snapshot()["layers"] == wanted["layers"]
    # the actions the first window played: its Animation clip's (the editor plays it in the mixer) and the mix's
    assert [a["clip"] for a in second.scene.mixer.snapshot()["actions"]] == [a["clip"] for a in wanted["actions"]]
    assert {"Walking", "Wave"} <= {a["clip"] for a in wanted["actions"]}
    assert second.panel.recovery_label is None and label not in second.panel.rects


def test_file_save_mix_writes_what_render_mix_reads(session_of, tmp_path):
    from panel_driver import click

    session = session_of(load_model(str(ROBOT)))
    mixed(session.scene)
    for section in ("Display", "Morph targets", "Bones", "Selected bone", "Files"):  # make room, open Files
        if section in session.panel.rects:
            click(session, section)
    session.panel.mix_path = str(tmp_path / "saved.mix.json")
    click(session, "Save mix")
    assert "mix saved to" in str(session.editor.status)
    fresh = load_model(str(ROBOT))
    fresh.mixer.load(tmp_path / "saved.mix.json")
    assert fresh.mixer.snapshot()["layers"] == session.scene.mixer.snapshot()["layers"]
    session.panel.mix_path = str(ROBOT)  # never over the model
    click(session, "Save mix")
    assert session.editor.status.is_error and "RobotExpressive.glb" in str(session.editor.status)
