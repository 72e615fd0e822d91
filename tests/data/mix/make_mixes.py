"""Writes the mix files here (python tests/data/mix/make_mixes.py, from the repository root)."""

from pathlib import Path

import numpy as np

from viewer.loaders import load_model
from viewer.motion import BoneMask, quat

HERE = Path(__file__).resolve().parent
ROBOT = HERE.parent / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
FOX = HERE.parent / "gltf-samples" / "Fox" / "Fox.glb"
AVATAR = HERE.parent / "vrm" / "robot_constraints.vrm"
WAVE = HERE.parent / "bvh" / "wave_hello.bvh"


def turn(axis, degrees):
    half = np.radians(degrees) / 2
    return np.array([*(np.sin(half) * np.asarray(axis, float)), np.cos(half)])


def robot_walk():
    """Walking, Running at 0.5 and half speed, Wave added on the right arm at 0.5; the head
    turned 30 degrees over the whole clip and the left arm keyed at two times."""
    scene = load_model(ROBOT)
    mixer = scene.mixer
    mixer.action("Walking").play()
    running = mixer.action("Running")
    running.weight, running.speed = 0.5, 0.5
    running.play()
    wave = mixer.action("Wave")
    wave.mask, wave.additive, wave.weight = BoneMask.subtree("Shoulder.R"), True, 0.5
    wave.play()
    mixer.update(0.2)
    head = np.array(mixer.target("Head").rotation_quaternion)
    mixer.set_pose("Head", rotation_quaternion=quat.multiply(head, turn([0, 1, 0], 30)))
    for time, degrees in ((0.1, 20), (0.6, -25)):
        mixer.time = time
        arm = np.array(mixer.target("UpperArm.L").rotation_quaternion)
        mixer.key("UpperArm.L", rotation_quaternion=quat.multiply(arm, turn([1, 0, 0], degrees)))
    mixer.save(HERE / "robot_walk.mix.json")


def fox_walk():
    """The Fox's Walk with Run at 0.4 (the spring bake's mix: its tail swings as a chain)."""
    scene = load_model(FOX)
    mixer = scene.mixer
    mixer.action("Walk").play()
    run = mixer.action("Run")
    run.weight = 0.4
    run.play()
    mixer.save(HERE / "fox_walk.mix.json")


def avatar_wave():
    """The BVH capture wave_hello retargeted onto the node-constraint avatar (played with
    `--motion wave_hello.bvh`), its hips turned 40 degrees about +Y in a layer: the constraints'
    bake's mix (their sources move, so the constrained nodes do)."""
    from viewer.model.retarget import retarget

    scene = load_model(AVATAR)
    clip = retarget(load_model(WAVE), scene)
    mixer = scene.mixer
    mixer.action(clip.name).play()
    mixer.update(0.5)
    for time, degrees in ((0.5, -30), (2.5, 40)):
        mixer.time = time
        hips = np.array(mixer.target("J_Bip_C_Hips").rotation_quaternion)
        mixer.key("J_Bip_C_Hips", rotation_quaternion=quat.multiply(hips, turn([0, 1, 0], degrees)))
    mixer.save(HERE / "avatar_wave.mix.json")


if __name__ == "__main__":
    robot_walk()
    fox_walk()
    avatar_wave()
