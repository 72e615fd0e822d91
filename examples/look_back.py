"""The second of two models side by side turns its head from side to side while both play
their clips:

    boneviewer render tests/data/gltf-samples/CesiumMan/CesiumMan.glb tests/data/gltf-samples/RiggedFigure/RiggedFigure.gltf --script examples/look_back.py --time 0.2 --out look-back.png

app.scenes is every model shown (app.scene, the first, then the others); app.find_bone(name,
model=1) is a bone of the second. Each is posed by its clip before update, so the turn rides on
the clip's neck rotation and is what the frame shows.
"""

import math

import numpy as np

from viewer.model.transforms import quaternion_product


def update(app, t, dt):
    neck = app.find_bone("neck_joint_1", model=1).get_pose_target()  # RiggedFigure's, beside CesiumMan
    half = math.radians(50 * math.sin(2 * math.pi * t)) / 2
    turn = np.array([0.0, math.sin(half), 0.0, math.cos(half)])  # about the neck's own axis (its local y)
    neck.rotation_quaternion = quaternion_product(np.asarray(neck.rotation_quaternion), turn)
