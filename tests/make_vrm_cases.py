"""VRM test avatars made from RobotExpressive (CC0): its GLB with VRM's extension added to the
JSON, the binary chunk unchanged. No VRM sample can be fetched here, so these are written
instead; the same input gives the same bytes.

- ``robot.vrm``: VRM 1.0 (``VRMC_vrm``): the humanoid map on the robot's joints, renamed as
  VRoid Studio names them (``J_Bip_C_Hips``: names no naming scheme knows, so only the map can
  tell retargeting which bone is which); expressions binding the head's morph targets (Angry,
  Surprised, Sad), one custom expression overlapping two presets, a binary blink that happy
  blocks; meta with the licence fields; one spring chain (VRMC_springBone) on a finger.
- ``robot_constraints.vrm``: ``robot.vrm`` with VRMC_node_constraint on five nodes, each kind
  and several axes (``CONSTRAINTS``): the head aims at the right hand, the neck rolls with the
  hips, an upper arm rolls with the other, a forearm turns with the other, a shoulder aims at
  the right foot. They depend on each other (the aim's source hangs below the turned forearm,
  whose source hangs below the rolled arm, below the aimed shoulder), so the order they run in
  matters; the finger's spring chain hangs below two of them.
- ``robot_0x.vrm``: VRM 0.x (``VRM``): the same joints and morph targets, the model turned to
  face -Z as 0.x models do, blend shape groups with 0.x's presets and 0..100 weights.

Run ``python tests/make_vrm_cases.py`` to write them into tests/data/vrm/.
"""

from __future__ import annotations

import copy
import json
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
OUT = HERE / "data" / "vrm"

# VRM bone -> (RobotExpressive node, its VRoid-style name).
HUMANOID = {
    "hips": (8, "J_Bip_C_Hips"), "spine": (9, "J_Bip_C_Spine"), "chest": (10, "J_Bip_C_Chest"),
    "neck": (11, "J_Bip_C_Neck"), "head": (12, "J_Bip_C_Head"),
    "leftShoulder": (15, "J_Bip_L_Shoulder"), "leftUpperArm": (17, "J_Bip_L_UpperArm"),
    "leftLowerArm": (19, "J_Bip_L_LowerArm"), "leftHand": (20, "J_Bip_L_Hand"),
    "rightShoulder": (35, "J_Bip_R_Shoulder"), "rightUpperArm": (37, "J_Bip_R_UpperArm"),
    "rightLowerArm": (39, "J_Bip_R_LowerArm"), "rightHand": (40, "J_Bip_R_Hand"),
    "leftUpperLeg": (55, "J_Bip_L_UpperLeg"), "leftLowerLeg": (57, "J_Bip_L_LowerLeg"), "leftFoot": (3, "J_Bip_L_Foot"),
    "rightUpperLeg": (60, "J_Bip_R_UpperLeg"), "rightLowerLeg": (62, "J_Bip_R_LowerLeg"),
    "rightFoot": (67, "J_Bip_R_Foot"),
}
HEAD_NODE, HEAD_MESH = 13, 2  # the head's mesh, with morph targets Angry (0), Surprised (1), Sad (2)
SPRING_JOINTS = (21, 22, 23)  # Middle1.L, Middle2.L, Middle2.L_end

# node -> (kind, {source, axis, weight}): every kind, both axis fields, weights below 1.
CONSTRAINTS = {
    12: ("aim", {"source": 40, "aimAxis": "PositiveZ", "weight": 0.7}),      # Head looks at Palm2.R
    11: ("roll", {"source": 8, "rollAxis": "X", "weight": 1.0}),             # Neck rolls with Hips
    17: ("roll", {"source": 37, "rollAxis": "Y", "weight": 0.8}),            # UpperArm.L with UpperArm.R
    39: ("rotation", {"source": 19, "weight": 0.5}),                         # LowerArm.R with LowerArm.L
    15: ("aim", {"source": 67, "aimAxis": "NegativeY", "weight": 0.5}),      # Shoulder.L at Foot.R
}

EXPRESSIONS_1 = {
    "preset": {
        "angry": {"morphTargetBinds": [{"node": HEAD_NODE, "index": 0, "weight": 1.0}]},
        "surprised": {"morphTargetBinds": [{"node": HEAD_NODE, "index": 1, "weight": 1.0}]},
        "sad": {"morphTargetBinds": [{"node": HEAD_NODE, "index": 2, "weight": 0.8}]},
        "happy": {"morphTargetBinds": [{"node": HEAD_NODE, "index": 2, "weight": 0.25}], "overrideBlink": "block"},
        "blink": {"morphTargetBinds": [{"node": HEAD_NODE, "index": 1, "weight": 0.5}], "isBinary": True},
    },
    "custom": {
        "grumpy": {"morphTargetBinds": [{"node": HEAD_NODE, "index": 0, "weight": 0.6},
                                        {"node": HEAD_NODE, "index": 2, "weight": 0.5}]},
    },
}
META_1 = {"name": "Robot (VRM test)", "version": "1", "authors": ["Tomás Laulhé (RobotExpressive)", "boneviewer tests"],
          "licenseUrl": "https://vrm.dev/licenses/1.0/", "avatarPermission": "everyone",
          "commercialUsage": "corporation", "allowRedistribution": True, "modification": "allowModification"}


def read_glb(path: Path) -> tuple[dict, bytes]:
    data = path.read_bytes()
    length = struct.unpack_from("<I", data, 12)[0]
    document = json.loads(data[20:20 + length])
    binary_length = struct.unpack_from("<I", data, 20 + length)[0]
    return document, data[28 + length:28 + length + binary_length]


def glb_bytes(document: dict, binary: bytes) -> bytes:
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 4)
    binary += b"\0" * (-len(binary) % 4)
    total = 12 + 8 + len(text) + 8 + len(binary)
    return (b"glTF" + struct.pack("<II", 2, total) + struct.pack("<I", len(text)) + b"JSON" + text
            + struct.pack("<I", len(binary)) + b"BIN\0" + binary)


def robot_document(version: str = "1.0") -> tuple[dict, bytes]:
    """(the JSON, the binary chunk) of the VRM ``version`` ("1.0" or "0.x") robot."""
    document, binary = read_glb(SOURCE)
    document = copy.deepcopy(document)
    document.pop("animations", None)  # an avatar, as VRM files are: no clips of its own
    for node, name in HUMANOID.values():
        document["nodes"][node]["name"] = name
    if version == "1.0":
        document["extensionsUsed"] = ["VRMC_vrm", "VRMC_springBone"]
        # deep-copied: an edit of one case must not change the module's META_1 / EXPRESSIONS_1
        # that every later document shares (a bad-input test poisoned the next test's avatar)
        document["extensions"] = copy.deepcopy({
            "VRMC_vrm": {"specVersion": "1.0", "meta": META_1,
                         "humanoid": {"humanBones": {bone: {"node": node} for bone, (node, _) in HUMANOID.items()}},
                         "expressions": EXPRESSIONS_1},
            "VRMC_springBone": {"specVersion": "1.0", "colliders": [], "colliderGroups": [], "springs": [
                {"name": "finger", "joints": [{"node": n, "hitRadius": 0.02, "stiffness": 1.0, "dragForce": 0.4,
                                               "gravityPower": 0.0, "gravityDir": [0, -1, 0]} for n in SPRING_JOINTS]}]},
        })
        return document, binary
    # VRM 0.x: faces -Z. The robot faces +Z, so its top node is turned half a turn about +Y.
    root = document["nodes"][0]
    x, y, z, w = root.get("rotation", [0, 0, 0, 1])
    root["rotation"] = [z, w, -x, -y]  # (0, 1, 0, 0) * q: half a turn about +Y after the node's own
    tx, ty, tz = root.get("translation", [0, 0, 0])
    root["translation"] = [-tx, ty, -tz]
    document["extensionsUsed"] = ["VRM"]
    groups = [("Angry", "angry", [(0, 100)]), ("Surprised", "unknown", [(1, 100)]), ("Sorrow", "sorrow", [(2, 80)]),
              ("Joy", "joy", [(2, 25)])]
    document["extensions"] = {"VRM": {
        "exporterVersion": "boneviewer tests", "specVersion": "0.0",
        "meta": {"title": "Robot (VRM 0.x test)", "version": "1", "author": "Tomás Laulhé (RobotExpressive)",
                 "licenseName": "CC0", "commercialUssageName": "Allow", "allowedUserName": "Everyone"},
        "humanoid": {"humanBones": [{"bone": bone, "node": node, "useDefaultValues": True}
                                    for bone, (node, _) in HUMANOID.items()]},
        "blendShapeMaster": {"blendShapeGroups": [
            {"name": name, "presetName": preset, "isBinary": False, "materialValues": [],
             "binds": [{"mesh": HEAD_MESH, "index": index, "weight": weight} for index, weight in binds]}
            for name, preset, binds in groups]},
        "secondaryAnimation": {"boneGroups": [{"comment": "finger", "bones": [SPRING_JOINTS[0]], "stiffiness": 1.0,
                                               "dragForce": 0.4, "gravityPower": 0, "hitRadius": 0.02,
                                               "colliderGroups": []}], "colliderGroups": []},
    }}
    return document, binary


def constrained_document(required: bool = False) -> tuple[dict, bytes]:
    """The 1.0 robot with CONSTRAINTS on its nodes (``required``: the file says it needs them)."""
    document, binary = robot_document("1.0")
    for node, (kind, fields) in CONSTRAINTS.items():
        spec = document["nodes"][node]
        spec["extensions"] = {"VRMC_node_constraint": {"specVersion": "1.0", "constraint": {kind: dict(fields)}}}
    document["extensionsUsed"].append("VRMC_node_constraint")
    if required:
        document["extensionsRequired"] = ["VRMC_node_constraint"]
    return document, binary


def constrained_vrm(edit=None, required: bool = False) -> bytes:
    """robot_constraints.vrm's bytes; ``edit(document)`` changes the JSON first (the bad-input cases)."""
    document, binary = constrained_document(required)
    if edit is not None:
        edit(document)
    return glb_bytes(document, binary)


def robot_vrm(version: str = "1.0", edit=None) -> bytes:
    """The robot's .vrm bytes; ``edit(document)`` changes the JSON first (the bad-input cases)."""
    document, binary = robot_document(version)
    if edit is not None:
        edit(document)
    return glb_bytes(document, binary)


def explicit_bone_map() -> dict[str, str]:
    """The map the humanoid map means, written out: {the robot's bone: VRM's body part}."""
    return {name: bone for bone, (_, name) in HUMANOID.items()}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "robot.vrm").write_bytes(robot_vrm("1.0"))
    (OUT / "robot_0x.vrm").write_bytes(robot_vrm("0.x"))
    (OUT / "robot_constraints.vrm").write_bytes(constrained_vrm())
    (OUT / "robot_bone_map.json").write_text(json.dumps(explicit_bone_map(), indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
