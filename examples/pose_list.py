"""Play poses read from a JSON list (examples/pose_list.json), easing from one to the next.

    boneviewer view --script examples/pose_list.py --watch
    boneviewer render --script examples/pose_list.py --frames 0:4:0.1 --out-dir frames/

The JSON is a list of poses in the pose-file format ({"bones": {name: {"rotation_quaternion":
[x, y, z, w], "position": ..., "scaling": ...}}}), each held for HOLD seconds; the rotations are
slerped, positions and scalings blended. The list could as well come from a model or a mocap
file. Edit the JSON, then save this file to reload both.
"""

import json
import math
from pathlib import Path

import numpy as np

POSES = Path(__file__).with_name("pose_list.json")
HOLD = 1.0        # seconds per pose, easing included
poses = []


def setup(app):
    global poses
    poses = json.loads(POSES.read_text())
    for pose in poses:
        for name in pose["bones"]:
            app.find_bone(name)  # an unknown name stops here, with the model's bone names
    app.log(f"pose_list.py: {len(poses)} poses from {POSES.name}, {HOLD:g} s each")


def update(app, t, dt):
    if not poses:
        return
    step = t / HOLD
    index = int(math.floor(step)) % len(poses)
    amount = smoothstep(step - math.floor(step))
    now, after = poses[index]["bones"], poses[(index + 1) % len(poses)]["bones"]
    for name, parts in now.items():
        target = app.find_bone(name).get_pose_target()
        other = after.get(name, parts)
        if "rotation_quaternion" in parts:
            target.rotation_quaternion = slerp(parts["rotation_quaternion"],
                                               other.get("rotation_quaternion", parts["rotation_quaternion"]),
                                               amount)
        for part in ("position", "scaling"):
            if part in parts:
                a, b = np.array(parts[part]), np.array(other.get(part, parts[part]))
                setattr(target, part, a + (b - a) * amount)


def smoothstep(x):
    return x * x * (3.0 - 2.0 * x)


def slerp(a, b, amount):
    """Quaternions (x, y, z, w), the short way round."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    cos = float(np.dot(a, b))
    if cos < 0.0:
        b, cos = -b, -cos
    if cos > 0.9995:
        q = a + (b - a) * amount
    else:
        angle = math.acos(cos)
        q = (math.sin((1 - amount) * angle) * a + math.sin(amount * angle) * b) / math.sin(angle)
    return q / np.linalg.norm(q)
