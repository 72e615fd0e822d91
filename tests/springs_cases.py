"""The spring-bone cases measured against @pixiv/three-vrm-springbone 3.5.5 (tests/test_springs.py,
recorded by tests/threejs_render/record_springs.py): the three-vrm spring examples (a sphere, a
plane and an inside collider; their root swung along a fixed path), the Fox's tail, added as
a chain with colliders, while its Walk clip plays, and RobotExpressive's neck and head as a chain
in the hips' space (a ``center``) while it runs. 120 steps of 1/60 s from the clip's start."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
STEPS = 120
DT = 1.0 / 60.0
FILES = {"sphere": "springs/sphere-collider.gltf", "plane": "springs/plane-collider.gltf",
         "inside": "springs/inside-collider.gltf"}
FOX = "gltf-samples/Fox/Fox.gltf"
ROBOT = "gltf-samples/RobotExpressive/RobotExpressive.glb"
CASES = [*FILES, "fox_tail", "robot_center"]
# the Fox's tail as one chain, as many tests drive it: as --spring-chain takes it, and as add_chain's keywords
FOX_TAIL = "b_Tail01_012:stiffness=1.5,drag=0.3,gravity=0.5,radius=4"
FOX_TAIL_CHAIN = {"root_bone": "b_Tail01_012", "stiffness": 1.5, "drag": 0.3, "gravity": 0.5, "radius": 4.0}


def inputs(name: str) -> dict:
    """sha256 of the files a case reads."""
    paths = [FILES[name]] if name in FILES else [FOX] if name == "fox_tail" else [ROBOT]
    return {p: hashlib.sha256((DATA / p).read_bytes()).hexdigest() for p in paths if (DATA / p).exists()}


def build(name: str):
    """(scene, pose_at, joint nodes to compare) for a case, springs in place, nothing stepped."""
    from viewer.loaders import load_model

    if name in FILES:
        scene = load_model(str(DATA / FILES[name]))
        root = scene.nodes[0]
        rest = np.array(root.position)

        def pose_at(t, root=root, rest=rest):
            # the examples' root swung as a hand drags it in three-vrm's demo
            root.assign_trs(position=rest + np.array([1.0 * math.sin(3.0 * t), 0.0, 0.2 * math.sin(2.0 * t)]))
    elif name == "robot_center":
        # the head and what hangs from it as a chain measured in the hips' space (``center``),
        # a sphere on the torso, while the robot runs
        scene = load_model(str(DATA / ROBOT))
        scene.springs.add_chain("Neck", stiffness=2.0, drag=0.5, gravity=1.0, radius=0.1, center="Hips",
                                colliders=[{"node": "Torso", "shape": "sphere", "radius": 0.5,
                                            "offset": (0.0, 0.0151, 0.004)}])  # Torso is scaled 100x
        mixer = scene.mixer
        mixer.action("Running").play()

        def pose_at(t, mixer=mixer):
            mixer.time = t
    else:
        scene = load_model(str(DATA / FOX))
        scene.springs.add_chain("b_Tail01_012", stiffness=1.5, drag=0.3, gravity=0.5, gravity_dir=(0, -1, 0),
                                radius=4.0, colliders=[
                                    # two where the swinging tail meets them, two on the legs
                                    {"node": "b_Hip_01", "shape": "sphere", "radius": 7.0, "offset": (-28, 26, 0)},
                                    {"node": "b_Hip_01", "shape": "capsule", "radius": 5.0, "offset": (-15, 30, -8),
                                     "tail": (-30, 30, 8)},
                                    {"node": "b_LeftLeg01_015", "shape": "capsule", "radius": 4.0,
                                     "tail": (0, 20, 0)},
                                    {"node": "b_RightLeg01_019", "shape": "capsule", "radius": 4.0,
                                     "tail": (0, 20, 0)}])
        mixer = scene.mixer
        mixer.action("Walk").play()

        def pose_at(t, mixer=mixer):
            mixer.time = t
    joints = [j.bone for j in scene.springs.joints]
    report = joints + [j.child for j in scene.springs.joints if j.child is not None and j.child not in joints]
    return scene, pose_at, report


def size(scene) -> float:
    low, high = scene.rest_bounds
    return float(np.linalg.norm(high - low))


def ours(name: str) -> np.ndarray:
    """Every reported node's world position after STEPS steps."""
    scene, pose_at, report = build(name)
    scene.springs.advance_to(STEPS * DT, pose_at, DT)
    return np.array([node.get_world_matrix()[3, :3] for node in report])


def node_case(name: str) -> dict:
    """The case as springs.mjs reads it (the driving motion recorded without springs running)."""
    scene, pose_at, report = build(name)
    case = describe(scene, report)
    if name in FILES:  # three-vrm reads the file's extension itself
        from viewer.gltf.container import GltfFile

        raw = GltfFile(DATA / FILES[name]).raw_extensions
        case["extension"] = {"VRMC_springBone": raw["VRMC_springBone"]}
        case["extensionsUsed"] = ["VRMC_springBone", "VRMC_springBone_extended_collider"]
        del case["joints"]
    case["frames"] = motion_frames(scene.nodes, pose_at, STEPS, DT)
    return case


def trs(node) -> list:
    """A node's local position, rotation quaternion and scaling, as the Node recorders read them."""
    return [*map(float, node.position), *map(float, node.rotation_quaternion), *map(float, node.scaling)]


def motion_frames(nodes, pose_at, steps: int, dt: float) -> list:
    """Per step k (``pose_at(k * dt)``), only what the motion changed: [node index, [position or
    None, rotation or None, scaling or None]] (three-vrm keeps a spring bone's rotation the motion
    leaves, and a constraint's destination the motion does not key)."""
    frames = []
    for k in range(steps + 1):
        before = [trs(n) for n in nodes]
        pose_at(k * dt)
        frame = []
        for i, n in enumerate(nodes):
            now = trs(n)
            parts = [now[a:b] if now[a:b] != before[i][a:b] else None for a, b in ((0, 3), (3, 7), (7, 10))]
            if any(part is not None for part in parts):
                frame.append([i, parts])
        frames.append(frame)
    return frames


def describe(scene, report) -> dict:
    """The nodes (rest TRS) and the joints of ``scene.springs`` as springs.mjs reads them."""
    nodes = scene.nodes
    index = {id(n): i for i, n in enumerate(nodes)}

    def trs(n):
        return [*map(float, n.position), *map(float, n.rotation_quaternion), *map(float, n.scaling)]

    spec = [{"name": n.name, "parent": -1 if n.parent is None else index[id(n.parent)], "trs": trs(n)} for n in nodes]
    case = {"nodes": spec, "dt": DT, "report": [index[id(n)] for n in report]}
    case["joints"] = [{
            "bone": index[id(j.bone)], "child": -1 if j.child is None else index[id(j.child)],
            "stiffness": j.stiffness, "gravityPower": j.gravity_power, "gravityDir": j.gravity_dir.tolist(),
            "dragForce": j.drag, "hitRadius": j.hit_radius, "center": -1 if j.center is None else index[id(j.center)],
            "colliders": [{"node": index[id(c.node)], "shape": c.shape, "offset": c.offset.tolist(),
                           "radius": c.radius, "tail": c.tail.tolist(), "normal": c.normal.tolist(),
                           "inside": c.inside} for c in j.colliders]} for j in scene.springs.joints]
    return case


# --- a model whose file holds spring chains and clips (the bake's tests) -------------------------
def robot_with_springs(folder: Path, required: bool = False) -> Path:
    """RobotExpressive.glb (its clips kept) with VRMC_springBone added to the JSON, the binary
    chunk unchanged, written into ``folder``: the neck and head as a spring measured in the
    hips' space with a sphere on the torso (robot_center's chain), and the left middle finger."""
    from make_vrm_cases import glb_bytes, read_glb

    document, binary = read_glb(DATA / ROBOT)
    neck, head, head_end, hips, torso = 11, 12, 14, 8, 10
    middle = (21, 22, 23)  # Middle1.L, Middle2.L, Middle2.L_end
    joint = {"stiffness": 2.0, "dragForce": 0.5, "gravityPower": 1.0, "gravityDir": [0, -1, 0], "hitRadius": 0.1}
    finger = {"stiffness": 1.0, "dragForce": 0.4, "gravityPower": 0.5, "gravityDir": [0, -1, 0], "hitRadius": 0.02}
    document["extensionsUsed"] = [*document.get("extensionsUsed", []), "VRMC_springBone"]
    if required:
        document["extensionsRequired"] = ["VRMC_springBone"]
    document.setdefault("extensions", {})["VRMC_springBone"] = {
        "specVersion": "1.0",
        "colliders": [{"node": torso, "shape": {"sphere": {"offset": [0.0, 0.0151, 0.004], "radius": 0.5}}}],
        "colliderGroups": [{"name": "torso", "colliders": [0]}],
        "springs": [{"name": "head", "center": hips, "colliderGroups": [0],
                     "joints": [{"node": n, **joint} for n in (neck, head, head_end)]},
                    {"name": "finger", "joints": [{"node": n, **finger} for n in middle]}]}
    path = Path(folder) / "RobotSprings.glb"
    path.write_bytes(glb_bytes(document, binary))
    return path
