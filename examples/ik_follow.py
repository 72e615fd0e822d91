"""A glTF character whose left hand follows a moving target, with Babylon's BoneIKController.

    boneviewer view tests/data/gltf-samples/RobotExpressive/RobotExpressive.glb \\
        --script examples/ik_follow.py --watch
    boneviewer render tests/data/gltf-samples/RobotExpressive/RobotExpressive.glb \\
        --script examples/ik_follow.py --frames 0:3.3:0.1 --out-dir frames/

The robot plays its Idle clip; each frame, after the clip has posed it, the IK turns the upper
and lower arm so that the hand reaches a target (the blue ball) that goes round a circle once per
loop of the clip, so the motion loops with it. The controllers pose a glTF bone through its joint
node (the world-space setters do), so the clip and the IK share one pose.
"""

import math

import numpy as np

from viewer import BoneIKController
from viewer.character import marker_ball

CLIP = "Idle"
CENTRE = np.array([1.4, 3.0, 0.9])   # world units, in reach of the left shoulder (the robot is about 5 tall)
RADIUS = 0.5
BALL = "ik target"
state = {}


def setup(app):
    forearm = app.find_bone("LowerArm.L")   # the lower bone; its parent, UpperArm.L, is the upper one
    mesh = next(m for m in app.scene.skinned_meshes if m.skeleton is forearm.get_skeleton())
    if CLIP in [clip.name for clip in app.scene.animations]:
        app.animation = CLIP
        app.playing = True
    # pole_angle=pi: this rig's arms lie along +Y, so the elbow bends toward the pole (see the controller)
    state["mesh"] = mesh
    state["ik"] = BoneIKController(mesh, forearm, target_position=CENTRE, pole_angle=math.pi)
    app.scene.static_meshes[:] = [m for m in app.scene.static_meshes if m.name != BALL]  # one ball after reloads
    state["ball"] = marker_ball(radius=0.15, name=BALL)
    app.scene.static_meshes.append(state["ball"])
    app.selected_bone = forearm


def update(app, t, dt):
    duration = next((c.duration for c in app.scene.animations if c.name == app.animation), 4.0)
    angle = 2.0 * math.pi * t / duration
    target = CENTRE + RADIUS * np.array([0.0, math.sin(angle), math.cos(angle)])
    ik = state["ik"]
    ik.target_position = target
    ik.update()
    # The IK puts the palm joint on the target; draw the ball just beyond it, in the fist.
    shoulder = forearm_parent(app).get_absolute_position(state["mesh"])
    reach = (target - shoulder) / np.linalg.norm(target - shoulder)
    world = np.eye(4)
    world[3, :3] = target + 0.35 * reach   # row-major, translation in row 3
    state["ball"].world_matrix = world


def forearm_parent(app):
    return app.find_bone("LowerArm.L").get_parent()
