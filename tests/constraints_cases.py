"""The node-constraint cases measured against @pixiv/three-vrm-node-constraint 3.5.5 (with
three-vrm-springbone 3.5.5 after it, as VRM.update runs them): tests/test_vrm_constraints.py,
recorded by tests/threejs_render/record_constraints.py.

Both cases are tests/data/vrm/robot_constraints.vrm (five constraints of every kind, depending on
each other; a spring chain on a finger below two of them):

- ``wave``: the BVH capture wave_hello retargeted onto it (by the humanoid map), played by the mixer;
- ``spin``: its sources turned by hand, far and about every axis (whole turns of the hips about the
  neck's roll axis, an arm twisted past half a turn, a foot swept round the shoulder aiming at it).

Each step of 1/60 s: the motion, the constraints, the springs. Reported at REPORT steps: every
constrained node's world rotation and the spring joints' world positions."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np

from springs_cases import motion_frames, trs

DATA = Path(__file__).resolve().parent / "data"
AVATAR = "vrm/robot_constraints.vrm"
WAVE = "bvh/wave_hello.bvh"
CASES = ["wave", "spin"]
STEPS = 120
DT = 1.0 / 60.0
REPORT = [1, 30, 60, 90, 120]


def inputs(name: str) -> dict:
    """sha256 of the files a case reads."""
    paths = [AVATAR, WAVE] if name == "wave" else [AVATAR]
    return {p: hashlib.sha256((DATA / p).read_bytes()).hexdigest() for p in paths}


def turn(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    return np.array([*(axis * math.sin(angle / 2)), math.cos(angle / 2)])


def product(a, b) -> np.ndarray:
    from viewer.model.transforms import quaternion_product

    return quaternion_product(np.asarray(a), np.asarray(b))


def build(name: str):
    """(scene, pose_at, constrained nodes, spring nodes), nothing stepped."""
    from viewer.loaders import load_model

    scene = load_model(str(DATA / AVATAR))
    if name == "wave":
        from viewer.model.retarget import retarget

        clip = retarget(load_model(str(DATA / WAVE)), scene)
        mixer = scene.mixer
        mixer.action(clip.name).play()

        def pose_at(t, mixer=mixer):
            mixer.time = t
    else:
        by_name = {n.name: n for n in scene.nodes}
        moved = {key: by_name[key] for key in ("J_Bip_C_Hips", "J_Bip_R_UpperArm", "J_Bip_L_LowerArm",
                                               "J_Bip_R_Foot")}
        rest = {key: (np.array(n.position), np.array(n.rotation_quaternion)) for key, n in moved.items()}

        def pose_at(t, moved=moved, rest=rest):
            hips = moved["J_Bip_C_Hips"]
            hips.assign_trs(rotation_quaternion=product(rest["J_Bip_C_Hips"][1], turn((1, 0.2, 0), 7.0 * t)))
            arm = moved["J_Bip_R_UpperArm"]
            arm.assign_trs(rotation_quaternion=product(rest["J_Bip_R_UpperArm"][1],
                                                        turn((0.3, 1, -0.2), 2.6 * math.sin(2.0 * t))))
            fore = moved["J_Bip_L_LowerArm"]
            fore.assign_trs(rotation_quaternion=product(rest["J_Bip_L_LowerArm"][1], turn((0, 0.4, 1), 4.0 * t)))
            foot = moved["J_Bip_R_Foot"]
            position = rest["J_Bip_R_Foot"][0]
            foot.assign_trs(position=position + 0.01 * np.array([math.sin(3 * t), 1 - math.cos(3 * t), math.cos(3 * t)]))
    constrained = [c.destination for c in scene.constraints]
    joints = [j.bone for j in scene.springs.joints]
    springs = joints + [j.child for j in scene.springs.joints if j.child is not None and j.child not in joints]
    return scene, pose_at, constrained, springs


def world_rotation(node) -> np.ndarray:
    """The node's world rotation as a matrix, its scale taken out (column vectors)."""
    m = np.array(node.get_world_matrix()[:3, :3], dtype=np.float64).T
    return m / np.linalg.norm(m, axis=0)


def rotation_matrix(q) -> np.ndarray:
    x, y, z, w = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def ours(name: str) -> dict:
    """{step: (constrained world rotations (n, 3, 3), spring world positions (m, 3))}."""
    scene, pose_at, constrained, springs = build(name)
    out = {}
    for k in REPORT:
        scene.springs.advance_to(k * DT, pose_at, DT)
        scene.prepare()  # as a frame is drawn
        out[k] = (np.array([world_rotation(n) for n in constrained]),
                  np.array([n.get_world_matrix()[3, :3] for n in springs]))
    return out


def node_case(name: str) -> dict:
    """The case as constraints.mjs reads it: the nodes at rest, the file's extensions, and per
    step what the motion alone changed (recorded with constraints and springs off)."""
    from viewer.gltf.container import GltfFile

    scene, pose_at, constrained, springs = build(name)
    nodes = scene.nodes
    index = {id(n): i for i, n in enumerate(nodes)}
    file = GltfFile(DATA / AVATAR)

    case = {"nodes": [{"name": n.name, "parent": -1 if n.parent is None else index[id(n.parent)], "trs": trs(n)}
                      for n in nodes],
            "dt": DT, "report_steps": REPORT, "constrained": [index[id(n)] for n in constrained],
            "springs": [index[id(n)] for n in springs],
            "node_constraints": {str(i): spec for i, spec in file.document["vrm"]["node_constraints"].items()},
            "extension": {"VRMC_springBone": file.raw_extensions["VRMC_springBone"]},
            "extensionsUsed": list(file.document["extensionsUsed"])}
    scene.constraints.enabled = False
    scene.springs.enabled = False
    case["frames"] = motion_frames(nodes, pose_at, STEPS, DT)
    return case
