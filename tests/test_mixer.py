"""The mixer (viewer/motion): a clip alone gives clip.apply's numbers exactly; layers (tweaks held or
keyed over a playing clip, additive and override, undo); the mix file; the bake and its glTF round
trip; 1-D blends; fades and warps; bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from viewer.errors import ViewerError
from viewer.loaders import load_model
from viewer.model.animation import clip_time
from viewer.motion import BoneMask, bake
from viewer.motion import quat

# every compiled step checked against numpy's blend (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("compiled_mixer_steps_checked")

DATA = Path(__file__).parent / "data"
SAMPLES = sorted(p for p in (DATA / "gltf-samples").glob("*/*") if p.suffix in (".glb", ".gltf"))
ROBOT = DATA / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
FBX = [DATA / "fbx" / "fox_zup_cm.fbx", DATA / "fbx" / "robot_morphs.fbx"]


def pose(scene):
    """Every node table row and every morph weight as they are now (copies)."""
    tables = {id(n.table): n.table for n in scene.nodes if hasattr(n, "table")}
    arrays = []
    for table in tables.values():
        n = table.count
        arrays += [table.position[:n].copy(), table.quaternion[:n].copy(), table.scaling[:n].copy()]
    arrays += [np.array(m.morph_weights) for m in scene.morph_meshes]
    return arrays


def same(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def rotation_of(scene, name):
    return np.array(scene.mixer.target(name).rotation_quaternion)


def kernel_switched_off() -> bool:
    """BONEVIEWER_KERNEL=numpy: the compiled kernel asked off, the numpy path is what runs (and passes)."""
    from viewer.model import native

    return os.environ.get(native.ENV, "").strip().lower() == "numpy"


@pytest.fixture(scope="module")
def robot_path():
    return str(ROBOT)


# --- a clip alone is clip.apply ------------------------------------------------------------------
@pytest.mark.parametrize("path", SAMPLES + FBX, ids=lambda p: p.name)
def test_a_clip_alone_gives_clip_apply_exactly(path):
    scene = load_model(str(path))
    if not scene.animations:
        pytest.fail(f"{path.name} has no clip to play")
    mixer = scene.mixer
    for clip in scene.animations[:4]:
        mixer.stop_all()
        action = mixer.action(clip)
        assert mixer.action(clip.name) is action  # the same action each time
        action.play()
        dt = clip.duration / 7.3 if clip.duration > 0 else 0.1
        for k in range(1, 12):  # past the end: wraps as clip_time does
            mixer.update(dt)
            mixed = pose(scene)
            assert abs(action.time - k * dt) < 1e-12
            clip.apply(clip_time(action.time, clip.duration))
            assert same(mixed, pose(scene)), f"{path.name} {clip.name} at step {k}"


def test_a_clip_alone_through_the_blend_path_is_exact_too():
    """The blend path (taken when a layer is on) gives one action at weight 1 unscaled: still exact."""
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    clip = scene.find_animation("Walking")
    mixer.action(clip).play()
    layer = mixer.add_layer("Unrelated", "additive")
    far = scene.mixer.target("Foot.L")
    layer.tracks[id(far)] = (far, {"translation": (None, np.zeros((1, 3)))})  # a zero offset: the blend path runs
    for k in range(1, 6):
        mixer.update(0.09)
        mixed = pose(scene)
        clip.apply(clip_time(mixer.action(clip).time, clip.duration))
        assert same(mixed, pose(scene))


def test_the_compiled_blend_gives_numpys_numbers():
    """csrc/ckernel.c's blend_rows and layer_rows against the numpy blend (the reference) on a mix
    of every kind: weights summing below and above 1, a mask, an additive clip, morph weights,
    layers additive and override; within 1e-12."""
    from viewer.model import native

    if native.ckernel is None and not kernel_switched_off():
        pytest.fail(f"the compiled kernel is not built: {native.describe()}")
    scenes = [load_model(str(ROBOT)) for _ in range(2)]
    for scene, compiled in zip(scenes, (None, False)):
        mixer = scene.mixer
        mixer.compiled = compiled
        for name, weight in (("Walking", 0.3), ("Running", 0.4), ("Idle", 0.6)):
            mixer.action(name).weight = weight
            mixer.action(name).play()
        wave = mixer.action("Wave")
        wave.additive, wave.weight, wave.mask = True, 0.7, BoneMask(exclude=["Head"])
        wave.play()
        mixer.action("Yes").weight = 0.2
        mixer.action("Yes").mask = BoneMask.subtree("Neck")
        mixer.action("Yes").play()
        # layers: additive held and keyed at weight 1 and 0.6, override at 0.5 (csrc's layer_rows against numpy)
        mixer.update(0.1)
        mixer.set_pose("Head", rotation_quaternion=R, position=[0, 0.1, 0])
        mixer.key("Neck", rotation_quaternion=R, time=0.2)
        mixer.key("Neck", rotation_quaternion=[0, 0, 0, 1.0], time=0.9)
        half = mixer.add_layer("Half", "additive", 0.6)
        mixer.set_pose("Hand.L", rotation_quaternion=R, scaling=[1.2, 1, 1], layer=half)
        hold = mixer.add_layer("Hold", "override", 1.0)
        mixer.set_pose("Hand.R", rotation_quaternion=R, position=[0.1, 0, 0], layer=hold)
        hold.weight = 0.5
    for _ in range(15):
        for scene in scenes:
            scene.mixer.update(0.07)
        for a, b in zip(pose(scenes[0]), pose(scenes[1])):
            assert np.abs(a - b).max() <= 1e-12


def test_the_compiled_step_follows_every_change_to_the_mix(compiled_mixer_steps_checked):
    """The step compiled once per structure of the mix (csrc/ckernel.c's Plan) against numpy's
    blend, within 1e-12 after every step, through changes to every part of that structure: actions
    started and stopped, additive set (by its setter and as a mix file sets it), masks, held, keyed
    and masked layers, a track put in by hand, a muted and a weightless layer, a clip's keys edited,
    a fade-out that stops an action."""
    from viewer.model import native

    if native.ckernel is None and not kernel_switched_off():
        pytest.fail(f"the compiled kernel is not built: {native.describe()}")
    scenes = [load_model(str(ROBOT)) for _ in range(2)]
    scenes[1].mixer.compiled = False
    changes = [
        lambda m: [setattr(m.action("Walking"), "weight", 0.4), m.action("Walking").play(),
                   setattr(m.action("Running"), "weight", 0.6), m.action("Running").play()],
        lambda m: [setattr(m.action("Wave"), "additive", True), setattr(m.action("Wave"), "weight", 0.5),
                   m.action("Wave").play()],
        lambda m: m.set_pose("Head", rotation_quaternion=R),
        lambda m: [m.key("Neck", rotation_quaternion=R, time=0.2), m.key("Neck", rotation_quaternion=[0, 0, 0, 1.0],
                                                                        time=0.9)],
        lambda m: [m.add_layer("Upper", "override", 0.7, mask=BoneMask.subtree("Neck")),
                   m.set_pose("Head", rotation_quaternion=R, position=[0, 0.05, 0], layer="Upper"),
                   m.set_pose("Hand.L", rotation_quaternion=R, layer="Upper")],
        lambda m: setattr(m.action("Walking"), "mask", BoneMask(exclude=["Head"])),
        lambda m: setattr(m.action("Wave"), "_additive", False),  # as a mix file sets it: no setter
        lambda m: m.layers[0].tracks.__setitem__(id(m.target("Foot.L")), (
            m.target("Foot.L"), {"translation": (None, np.array([[0.0, 0.01, 0.0]]))})),
        lambda m: setattr(m.layer("Upper"), "mute", True),
        lambda m: setattr(m.layer("Upper"), "mute", False),
        lambda m: setattr(m.layers[0], "weight", 0.0),
        lambda m: setattr(m.layers[0], "weight", 0.5),
        lambda m: m.scene.find_animation("Running").set_key(m.target("Head"), "rotation", 0.3, R),
        lambda m: m.action("Running").stop(),
        lambda m: m.action("Walking").fade_out(0.15),
        lambda m: setattr(m, "time", 0.3),
    ]
    for change in changes:
        for scene in scenes:
            change(scene.mixer)
        for _ in range(3):
            for scene in scenes:
                scene.mixer.update(0.07)
            for a, b in zip(pose(scenes[0]), pose(scenes[1])):
                assert np.abs(a - b).max() <= 1e-12
    assert not scenes[0].mixer.action("Walking").playing  # the fade-out ended it
    if native.ckernel is not None:
        assert scenes[0].mixer._plan is not None and len(compiled_mixer_steps_checked) >= 3 * len(changes)


def lone_bone_scene():
    """A skeleton of two bones posed by themselves (no TransformNode) and two clips turning them."""
    from viewer.model import Bone, Scene, Skeleton, SkinnedMesh
    from viewer.model.animation import AnimationChannel, AnimationClip

    skeleton = Skeleton("arm")
    root = Bone("root", skeleton)
    tip = Bone("tip", skeleton, root, local_matrix=np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 1, 0, 1.0]]))
    mesh = SkinnedMesh("m", np.zeros((3, 3)), np.array([0, 1, 2]), skeleton, joints=np.zeros((3, 4), dtype=np.int32),
                       weights=np.tile([1.0, 0, 0, 0], (3, 1)))
    times = [0.0, 1.0, 2.0]
    turn = [[0, 0, 0, 1], [0, 0, 0.5, 0.8660254], [0, 0, 0, 1]]
    bend = [[0, 0, 0, 1], [0.3826834, 0, 0, 0.9238795], [0.7071068, 0, 0, 0.7071068]]
    clips = [AnimationClip("turn", [AnimationChannel(root, "rotation", times, turn),
                                    AnimationChannel(tip, "translation", times, [[0, 1, 0], [0, 2, 0], [0, 1, 0]])]),
             AnimationClip("bend", [AnimationChannel(tip, "rotation", times, bend)])]
    return Scene("arm", [mesh], animations=clips), root, tip


def test_bones_posed_by_themselves_mix_too():
    scene, root, tip = lone_bone_scene()
    mixer = scene.mixer
    turn = mixer.action("turn").play()
    mixer.update(0.7)
    mixed = [root.rotation_quaternion.copy(), tip.position.copy()]
    scene.find_animation("turn").apply(0.7)
    assert np.array_equal(mixed[0], root.rotation_quaternion) and np.array_equal(mixed[1], tip.position)
    turn.weight = 0.5
    bend = mixer.action("bend")
    bend.weight = 0.5
    bend.play()
    mixer.update(0.3)  # turn at 1.0 s, bend at 0.3 s: the root half way from rest, the tip bent half way
    assert close_rotation(root.rotation_quaternion, quat.slerp(np.array([[0, 0, 0, 1.0]]), np.array([[0, 0, 0.5, 0.8660254]]), 0.5)[0], 1e-12)
    assert np.allclose(tip.position, [0, 1.5, 0])
    bent = scene.find_animation("bend").channels[0].sample(0.3)
    assert close_rotation(tip.rotation_quaternion, quat.slerp(np.array([[0, 0, 0, 1.0]]), bent[None], 0.5)[0], 1e-12)
    mixer.set_pose("tip", position=[0, 3.0, 0])
    assert np.allclose(tip.position, [0, 3.0, 0])


# --- layers ----------------------------------------------------------------------------------------
R = quat.normalize(np.array([0.2, -0.3, 0.1, 0.9]))


def clip_rotation(scene, clip, name, t):
    clip.apply(t)
    return rotation_of(scene, name)


def close_rotation(a, b, tol):
    return min(np.abs(a - b).max(), np.abs(a + b).max()) <= tol


def test_a_bone_turned_while_its_clip_plays_keeps_the_turn_and_undo_gives_the_clip_back():
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    clip = scene.find_animation("Walking")
    action = mixer.action(clip).play()
    assert [layer.name for layer in mixer.layers] == ["Tweaks"] and mixer.layers[0].mode == "additive"
    mixer.update(0.2)
    now = rotation_of(scene, "Head")
    edit = mixer.set_pose("Head", rotation_quaternion=quat.multiply(now, R))
    assert action.is_running  # editing does not pause the clip
    times = []
    for k in range(10):
        mixer.update(0.071)
        times.append(action.sample_time())
        got = rotation_of(scene, "Head")
        expected = quat.multiply(clip_rotation(scene, clip, "Head", times[-1]), R)
        mixer.evaluate()
        assert close_rotation(got, expected, 1e-6), (k, got, expected)
    edit.undo()
    for t in times[:3]:
        mixer.time = t
        mixed = pose(scene)
        clip.apply(action.sample_time())
        assert same(mixed, pose(scene))


def test_override_layer_at_half_weight_is_the_slerp_half_way():
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    clip = scene.find_animation("Walking")
    action = mixer.action(clip).play()
    layer = mixer.add_layer("Hold", "override", 1.0)
    mixer.update(0.1)
    mixer.set_pose("Head", rotation_quaternion=R, layer=layer)
    assert close_rotation(rotation_of(scene, "Head"), R, 1e-12)
    layer.weight = 0.5
    for k in range(10):
        mixer.update(0.083)
        got = rotation_of(scene, "Head")
        expected = quat.slerp(clip_rotation(scene, clip, "Head", action.sample_time())[None], R[None], 0.5)[0]
        mixer.evaluate()
        assert close_rotation(got, expected, 1e-6)
    mixer.clear_bone("Head", layer)
    mixed = pose(scene)
    clip.apply(action.sample_time())
    assert same(mixed, pose(scene))


def test_a_soloed_layer_mutes_the_others_and_survives_the_mix_file(tmp_path):
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    clip = scene.find_animation("Walking")
    action = mixer.action(clip).play()
    mixer.update(0.1)
    tweaks = mixer.layers[0]
    mixer.set_pose("Head", rotation_quaternion=quat.multiply(rotation_of(scene, "Head"), R))
    hold = mixer.add_layer("Hold", "override", 1.0)
    mixer.set_pose("UpperArm.L", rotation_quaternion=R, layer=hold)
    assert not tweaks.solo and tweaks.heard and hold.heard
    hold.solo = True
    assert not tweaks.heard and hold.heard and not tweaks.mute  # muted by the solo, its own flag untouched
    mixer.update(0.05)
    mixed_head, mixed_arm = rotation_of(scene, "Head"), rotation_of(scene, "UpperArm.L")
    head = clip_rotation(scene, clip, "Head", action.sample_time())  # (clip.apply writes the nodes)
    assert close_rotation(mixed_head, head, 1e-9)          # the tweak is silent
    assert close_rotation(mixed_arm, R, 1e-9)              # the soloed layer plays
    path = tmp_path / "solo.mix.json"
    mixer.save(path)
    assert [layer["solo"] for layer in json.loads(path.read_text())["layers"]] == [False, True]
    hold.solo = False
    mixer.load(path)
    assert [layer.solo for layer in mixer.layers] == [False, True]
    mixer.layers[1].solo = False
    mixer.evaluate()
    assert close_rotation(rotation_of(scene, "Head"), quat.multiply(head, R), 1e-6)  # heard again
    with pytest.raises(ViewerError, match="layer solo: expected True or False"):
        mixer.layers[0].solo = "yes"


def test_keyed_offsets_interpolate_between_keys_and_clearing_the_layer_restores_the_clip():
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    clip = scene.find_animation("Idle")
    action = mixer.action(clip).play()
    R2 = quat.normalize(np.array([-0.1, 0.25, 0.0, 0.95]))
    mixer.time = 0.5
    mixer.key("Head", rotation_quaternion=quat.multiply(rotation_of(scene, "Head"), R))
    mixer.time = 1.5  # the layer shows its first key's offset here: key the clip's rotation times R2
    mixer.key("Head", rotation_quaternion=quat.multiply(clip_rotation(scene, clip, "Head", 1.5), R2))
    assert np.allclose(mixer.active_layer.key_times(), [0.5, 1.5])
    mixer.time = 1.0
    got = rotation_of(scene, "Head")
    offset = quat.slerp(R[None], R2[None], 0.5)[0]
    assert close_rotation(got, quat.multiply(clip_rotation(scene, clip, "Head", 1.0), offset), 1e-6)
    mixer.time = 2.5  # after the last key: held
    got = rotation_of(scene, "Head")
    assert close_rotation(got, quat.multiply(clip_rotation(scene, clip, "Head", 2.5), R2), 1e-6)
    edit = mixer.clear_layer()
    mixed = pose(scene)
    clip.apply(action.sample_time())
    assert same(mixed, pose(scene))
    edit.undo()
    assert len(mixer.active_layer.key_times()) == 2


def test_a_key_at_another_time_is_an_offset_from_the_clip_there():
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    clip = scene.find_animation("Idle")
    mixer.action(clip).play()
    mixer.update(0.2)
    wanted = quat.multiply(clip_rotation(scene, clip, "Neck", 1.1), R)
    mixer.evaluate()
    mixer.key("Neck", rotation_quaternion=wanted, time=1.1)
    assert mixer.action(clip).time == pytest.approx(0.2)  # the playhead stays where it was
    mixer.time = 1.1
    assert close_rotation(rotation_of(scene, "Neck"), wanted, 1e-9)


def test_a_tweak_on_a_bone_no_clip_drives_goes_away_when_cleared():
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    before = pose(scene)
    target = mixer.target("Head")
    moved = np.array(target.position) + [0.0, 0.1, 0.0]
    edit = mixer.set_pose("Head", position=moved)
    assert np.allclose(target.position, moved)
    edit.undo()
    assert np.array_equal(target.position, before[0][target.table_row])


# --- mix file --------------------------------------------------------------------------------------
def setup_mix(scene):
    mixer = scene.mixer
    walk = mixer.action("Walking").play()
    wave = mixer.action("Wave")
    wave.additive, wave.weight, wave.mask = True, 0.5, BoneMask.subtree("Shoulder.R")
    wave.play()
    mixer.update(0.3)
    mixer.set_pose("Head", rotation_quaternion=quat.multiply(rotation_of(scene, "Head"), R))
    mixer.key("Neck", rotation_quaternion=quat.multiply(rotation_of(scene, "Neck"), R), time=0.2)
    walk.speed = 1.3
    return mixer


def test_a_mix_saved_and_loaded_gives_the_same_pose(tmp_path):
    scene = load_model(str(ROBOT))
    mixer = setup_mix(scene)
    path = tmp_path / "walk.mix.json"
    mixer.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["walk.mix.json"]
    mixer.update(0.25)
    expected = pose(scene)
    other = load_model(str(ROBOT))
    other.mixer.load(path)
    other.mixer.update(0.25)
    assert all(np.allclose(a, b, atol=1e-12) for a, b in zip(pose(other), expected))


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(actions="x"), "'actions' must be a list"),
    (lambda d: d["actions"][0].update(clip="Moonwalk"), "unknown clip 'Moonwalk'"),
    (lambda d: d["layers"][0]["tracks"][0].update(target="Tail"), "unknown bone 'Tail'"),
    (lambda d: d["actions"][0].update(weight=-1), "weight must be >= 0"),
    (lambda d: d["layers"][0]["tracks"][0].update(values=[[1, 2]]), "values must be rows of"),
    (lambda d: d.update(format="other"), "not a mix file"),
    (lambda d: d.update(blends=[{"name": "b", "entries": [["Idle", 1.0], ["Walking", 0.5]]}]), "strictly increasing"),
    (lambda d: d["actions"][1].update(mask={"subtree": ["Tail"]}), "unknown bone or node 'Tail'"),
])
def test_a_wrong_mix_file_is_one_error_and_the_mix_stays(tmp_path, change, message):
    scene = load_model(str(ROBOT))
    mixer = setup_mix(scene)
    path = tmp_path / "bad.json"
    mixer.save(path)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    before = mixer.snapshot()
    with pytest.raises(ViewerError, match=message) as error:
        mixer.load(path)
    assert "\n" not in str(error.value)
    assert mixer.snapshot() == before


# --- bake ------------------------------------------------------------------------------------------
def test_the_bake_equals_the_live_mix_and_survives_gltf(tmp_path):
    from viewer.gltf.writer import save_gltf

    scene = load_model(str(ROBOT))
    mixer = setup_mix(scene)
    fps = 30
    layers, state, before = list(mixer.layers), mixer.snapshot(), pose(scene)
    baked = bake(scene, fps=fps, start=0.1, end=0.9)
    assert baked.channels and len(baked.channels[0].times) == 25
    # the mix and the pose as they were, the same objects
    assert mixer.layers == layers and mixer.snapshot() == state and same(pose(scene), before)
    size = float(np.linalg.norm(scene.rest_bounds[1] - scene.rest_bounds[0]))
    mixer.time = 0.1
    live = []
    for k in range(25):
        if k:
            mixer.update(1 / fps)
        live.append(pose(scene))
    mixer.stop_all()
    for k in range(25):
        baked.apply(k / fps)
        for a, b in zip(pose(scene), live[k]):
            assert np.abs(a - b).max() <= 1e-6 * max(size, 1.0)
    # written with the baked clip as the scene's only clip, read back: the same numbers (float32 in the file)
    scene.animations = [baked]
    out = tmp_path / "baked.glb"
    save_gltf(scene, out)
    back = load_model(str(out))
    assert [c.name for c in back.animations] == [baked.name]
    names = [n.name for n in scene.nodes]
    assert [n.name for n in back.nodes] == names
    for k in range(0, 25, 4):
        baked.apply(k / fps)
        back.animations[0].apply(k / fps)
        for mine, theirs in zip(scene.nodes, back.nodes):
            assert np.abs(np.array(mine.position) - theirs.position).max() <= 1e-6 * size
            assert close_rotation(np.array(mine.rotation_quaternion), np.array(theirs.rotation_quaternion), 1e-6)
        for m, n in zip(scene.morph_meshes, back.morph_meshes):
            assert np.abs(np.array(m.morph_weights) - n.morph_weights).max() <= 1e-6


def test_after_a_bake_each_clip_still_has_its_one_action():
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    walk = mixer.action("Walking").play()
    walk.weight = 0.7
    bake(scene, fps=10, start=0.0, end=0.2)   # holds the mix and puts it back
    assert mixer.action("Walking") is walk and walk.weight == 0.7 and walk.playing
    assert mixer.actions == [walk]


def test_bake_is_viewer_bake():
    import viewer

    assert viewer.bake is bake and "bake" in viewer.__all__ and viewer.BoneMask is BoneMask


# --- blend_1d, fades, warps --------------------------------------------------------------------------
def test_blend_1d_picks_the_two_nearest_clips_in_step():
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    blend = mixer.blend_1d("locomotion", [("Idle", 0.0), ("Walking", 1.0), ("Running", 3.0)])
    blend.parameter = 2.0
    assert dict(blend.weights()) == {"Idle": 0.0, "Walking": 0.5, "Running": 0.5}
    walking, running, idle = mixer.action("Walking"), mixer.action("Running"), mixer.action("Idle")
    assert walking.weight == 0.5 and running.weight == 0.5 and not idle.enabled
    for _ in range(7):
        mixer.update(0.05)
        assert np.isclose(walking.time / walking.clip.duration, running.time / running.clip.duration)
    blend.parameter = 0.25
    assert dict(blend.weights()) == {"Idle": 0.75, "Walking": 0.25, "Running": 0.0}
    blend.parameter = -4
    assert dict(blend.weights())["Idle"] == 1.0


def test_crossfade_ramps_the_weights_and_a_warp_ends_where_it_started():
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    walk, run = mixer.action("Walking"), mixer.action("Running")
    walk.speed = 1.5
    walk.play()
    mixer.update(0.1)
    walk.crossfade_to(run, 0.5, warp=True)
    mixer.update(0.25)
    assert np.isclose(walk.effective_weight(mixer.clock), 0.5) and np.isclose(run.effective_weight(mixer.clock), 0.5)
    mixer.update(0.3)
    assert not walk.is_running and run.is_running and run.effective_weight(mixer.clock) == 1.0
    assert walk.speed == 1.5 and run.speed == 1.0  # three.js #11147: the speeds are as they were


def test_once_holds_the_last_frame():
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    jump = mixer.action("Jump")
    jump.loop = "once"
    jump.play()
    mixer.update(jump.clip.duration + 0.4)
    assert not jump.is_running and jump.time == jump.clip.duration
    mixed = pose(scene)
    jump.clip.apply(jump.clip.duration)
    assert same(mixed, pose(scene))


# --- bad input -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad, message", [
    (lambda m: m.action("Moonwalk"), "unknown clip 'Moonwalk'"),
    (lambda m: setattr(m.action("Walking"), "weight", float("nan")), "weight"),
    (lambda m: setattr(m.action("Walking"), "weight", -0.5), "weight: must be a finite number >= 0"),
    (lambda m: setattr(m.action("Walking"), "speed", float("inf")), "speed"),
    (lambda m: m.action("Walking").fade_in(-1), "fade_in: seconds must be >= 0"),
    (lambda m: m.action("Walking").fade_out(-0.1), "fade_out: seconds must be >= 0"),
    (lambda m: setattr(m.action("Walking"), "loop", "bounce"), "loop: expected one of"),
    (lambda m: setattr(m.action("Walking"), "mask", ["Tail"]), "unknown bone or node 'Tail'"),
    (lambda m: m.set_pose("Tail", position=[0, 0, 0]), "unknown bone 'Tail'"),
    (lambda m: m.set_pose("Head", rotation_quaternion=[0, 0, 0, 0]), "zero quaternion"),
    (lambda m: m.update(float("nan")), "dt"),
    (lambda m: m.blend_1d("b", [("Idle", 1.0), ("Walking", 0.5)]), "strictly increasing"),
    (lambda m: setattr(m.layers[0], "weight", -1), "layer weight"),
])
def test_bad_input_is_one_error_and_changes_nothing(bad, message):
    scene = load_model(str(ROBOT))
    mixer = scene.mixer
    mixer.action("Walking").play()
    mixer.update(0.1)
    before, state = pose(scene), mixer.snapshot()
    with pytest.raises(ViewerError, match=message) as error:
        bad(mixer)
    assert "\n" not in str(error.value)
    assert mixer.snapshot() == state and same(pose(scene), before)


def test_a_compiled_plan_refuses_buffers_that_do_not_fit_and_blends_what_it_samples():
    """csrc/ckernel.c's Plan on its own: a sampler writing past the rows, a buffer of the wrong size,
    a step before watch() are errors (nothing written); two lerped translations blended 0.25 / 0.75."""
    from viewer.model import _ckernel as module  # the built module, whatever BONEVIEWER_KERNEL says

    n = 2
    times = np.array([0.0, 1.0])
    values = np.array([[[0.0, 0, 0], [2.0, 0, 0]], [[4.0, 0, 0], [6.0, 0, 0]]])  # (keys, channels, 3)
    samplers = [module.Sampler(times, values * (1 + k), np.arange(n, dtype=np.int64), 3, 0, False) for k in range(2)]

    def parts(sampler=samplers[0], out_rows=n):
        base = (np.zeros((n, 3)), np.tile([0.0, 0, 0, 1], (n, 1)), np.ones((n, 3)), np.zeros(0))
        out = (np.zeros((out_rows, 3)), np.zeros((n, 4)), np.zeros((n, 3)), np.zeros(0))
        buffers = [(np.zeros((n, 3)), np.zeros((n, 4)), np.zeros((n, 3)), np.zeros(0)) for _ in range(2)]
        actions = tuple(((s, 0),) if k == 0 else ((samplers[1], 0),) for k, s in enumerate((sampler, None)))
        actions = tuple((samples, b, None) for samples, b in zip(actions, buffers))
        driven = (np.ones((2, n), bool), np.zeros((2, n), bool), np.zeros((2, n), bool), np.zeros((2, 0), bool))
        rows = (np.ones(n, bool), np.zeros(n, bool), np.zeros(n, bool))
        return (n, 0, base, out, actions, driven, np.zeros(2, bool), (), None, rows, ()), out

    args, out = parts()
    plan = module.Plan(*args)
    with pytest.raises(RuntimeError):
        plan.step({}, [], 0.0)
    plan.run([0.5, 0.5], [0.25, 0.75], 0.0, [])
    expected = 0.25 * np.array([[2.0, 0, 0], [4.0, 0, 0]]) + 0.75 * np.array([[4.0, 0, 0], [8.0, 0, 0]])
    assert np.allclose(out[0], expected, rtol=0, atol=1e-12)
    far = module.Sampler(times, values, np.array([0, 5], dtype=np.int64), 3, 0, False)  # row 5 of 2
    with pytest.raises(ValueError):
        module.Plan(*parts(sampler=far)[0])
    with pytest.raises(ValueError):
        module.Plan(*parts(out_rows=n + 1)[0])
    with pytest.raises(TypeError):
        plan.run([0.5], [0.25, 0.75], 0.0, [])  # one time for two actions
