"""The humanoid naming schemes retargeting recognises, as data: one table per scheme from a
body part to the names that scheme gives it.

Body parts follow VRM's humanoid names (hips, spine, chest, ..., leftUpperArm, leftLowerArm).
A skeleton is read with the scheme that recognises most of its bones; names are compared without
case and without the prefixes exporters add (``mixamorig:``, ``mixamorig_``, Rigify's ``DEF-``), and
a name no table knows is tried again without its first ``<word>_`` or ``<word>:``: the character's
name HumanIK (Maya, MotionBuilder) puts before every bone (``Character1_LeftUpLeg``), or a namespace.
Left/right pairs are written once with ``{L}`` / ``{R}`` placeholders, filled in per scheme side
spelling.
"""

from __future__ import annotations

import re

# Body parts, parents before children (the order the retargeting walks them in).
PARTS = ("hips", "spine", "chest", "upperChest", "neck", "head",
         "leftShoulder", "leftUpperArm", "leftLowerArm", "leftHand",
         "rightShoulder", "rightUpperArm", "rightLowerArm", "rightHand",
         "leftUpperLeg", "leftLowerLeg", "leftFoot", "leftToes",
         "rightUpperLeg", "rightLowerLeg", "rightFoot", "rightToes")

# A limb part and the part it hangs from: a rig whose foot or hand is not under its shin or
# forearm (RobotExpressive's feet hang from the root, for IK) still gets it placed at the limb's end.
LIMB_PARENT = {f"{side}{part}": f"{side}{parent}" for side in ("left", "right")
               for part, parent in (("Foot", "LowerLeg"), ("Hand", "LowerArm"))}

# scheme -> (left spelling, right spelling), {part: names}; a part's {S}-names use the side.
SCHEMES: dict[str, tuple[tuple[str, str], dict[str, tuple[str, ...]]]] = {
    # BVH conversions of CMU and most mocap exports, Mixamo (with mixamorig: stripped) and HumanIK
    # (Maya, MotionBuilder; with the character's name, Character1_, stripped).
    "bvh": (("Left", "Right"), {
        "hips": ("Hips", "Hip", "Pelvis", "Root"),
        "spine": ("Spine", "LowerBack", "Spine1_1", "Abdomen"),
        "chest": ("Spine1", "Chest", "Spine2_1"),
        "upperChest": ("Spine2", "Chest2", "UpperChest", "Spine3"),
        "neck": ("Neck", "Neck1"),
        "head": ("Head",),
        "Shoulder": ("{S}Shoulder", "{S}Collar", "{S}Clavicle"),
        "UpperArm": ("{S}Arm", "{S}UpperArm"),
        "LowerArm": ("{S}ForeArm", "{S}LowerArm"),
        "Hand": ("{S}Hand",),
        "UpperLeg": ("{S}UpLeg", "{S}UpperLeg", "{S}Thigh"),
        "LowerLeg": ("{S}Leg", "{S}LowerLeg", "{S}Shin"),
        "Foot": ("{S}Foot",),
        "Toes": ("{S}ToeBase", "{S}Toe", "{S}Toes"),
    }),
    # The ASF-derived style (CMU's older conversions): joints named by where they bend.
    "asf": (("Left", "Right"), {
        "hips": ("Hips", "Root", "Pelvis"),
        "spine": ("LowerBack", "Abdomen", "Spine"),
        "chest": ("Chest", "Thorax", "UpperBack"),
        "neck": ("Neck", "LowerNeck"),
        "head": ("Head",),
        "Shoulder": ("{S}Collar", "{S}Clavicle"),
        "UpperArm": ("{S}Shoulder", "{S}Humerus"),
        "LowerArm": ("{S}Elbow", "{S}Radius"),
        "Hand": ("{S}Wrist", "{S}Hand"),
        "UpperLeg": ("{S}Hip", "{S}Femur"),
        "LowerLeg": ("{S}Knee", "{S}Tibia"),
        "Foot": ("{S}Ankle", "{S}Foot"),
        "Toes": ("{S}Toe", "{S}Toes"),
    }),
    "vrm": (("left", "right"), {
        "hips": ("hips",), "spine": ("spine",), "chest": ("chest",), "upperChest": ("upperChest",),
        "neck": ("neck",), "head": ("head",),
        "Shoulder": ("{S}Shoulder",), "UpperArm": ("{S}UpperArm",), "LowerArm": ("{S}LowerArm",),
        "Hand": ("{S}Hand",), "UpperLeg": ("{S}UpperLeg",), "LowerLeg": ("{S}LowerLeg",),
        "Foot": ("{S}Foot",), "Toes": ("{S}Toes",),
    }),
    # Unreal's mannequin.
    "unreal": (("l", "r"), {
        "hips": ("pelvis",), "spine": ("spine_01",), "chest": ("spine_02",), "upperChest": ("spine_03",),
        "neck": ("neck_01",), "head": ("head",),
        "Shoulder": ("clavicle_{S}",), "UpperArm": ("upperarm_{S}",), "LowerArm": ("lowerarm_{S}",),
        "Hand": ("hand_{S}",), "UpperLeg": ("thigh_{S}",), "LowerLeg": ("calf_{S}",),
        "Foot": ("foot_{S}",), "Toes": ("ball_{S}",),
    }),
    # Blender's metarig and Rigify deform bones (DEF- stripped), and RobotExpressive-like .L/.R names.
    "blender": (("L", "R"), {
        "hips": ("spine", "Hips", "pelvis"), "spine": ("spine.001", "Abdomen", "Spine"),
        "chest": ("spine.002", "Torso", "Chest"), "upperChest": ("spine.003", "UpperChest"),
        "neck": ("spine.004", "neck", "Neck"), "head": ("spine.006", "head", "Head"),
        "Shoulder": ("shoulder.{S}", "Shoulder.{S}", "clavicle.{S}"),
        "UpperArm": ("upper_arm.{S}", "UpperArm.{S}", "upperarm.{S}"),
        "LowerArm": ("forearm.{S}", "LowerArm.{S}", "lowerarm.{S}"),
        "Hand": ("hand.{S}", "Hand.{S}"),
        "UpperLeg": ("thigh.{S}", "UpperLeg.{S}", "upperleg.{S}"),
        "LowerLeg": ("shin.{S}", "LowerLeg.{S}", "lowerleg.{S}"),
        "Foot": ("foot.{S}", "Foot.{S}"), "Toes": ("toe.{S}", "Toe.{S}", "toes.{S}"),
    }),
    # Cesium's sample figures (glTF-Sample-Models' RiggedFigure and CesiumMan): joints numbered
    # from the body out, legs at 1, 2, 3 and 5. CesiumMan's export prefixes most with Skeleton_ and
    # numbers its arms otherwise (the right arm's first joint bare, the left arm's counted down
    # from __4_), so its arms are written out side by side.
    "cesium": (("L", "R"), {
        "hips": ("torso_joint_1", "Skeleton_torso_joint_1"), "spine": ("torso_joint_2", "Skeleton_torso_joint_2"),
        "chest": ("torso_joint_3", "Skeleton_torso_joint_3"), "neck": ("neck_joint_1", "Skeleton_neck_joint_1"),
        "head": ("neck_joint_2", "Skeleton_neck_joint_2"),
        "UpperArm": ("arm_joint_{S}_1",), "LowerArm": ("arm_joint_{S}_2",), "Hand": ("arm_joint_{S}_3",),
        "UpperLeg": ("leg_joint_{S}_1",), "LowerLeg": ("leg_joint_{S}_2",), "Foot": ("leg_joint_{S}_3",),
        "Toes": ("leg_joint_{S}_5",),
        "rightUpperArm": ("Skeleton_arm_joint_R",), "rightLowerArm": ("Skeleton_arm_joint_R__2_",),
        "rightHand": ("Skeleton_arm_joint_R__3_",),
        "leftUpperArm": ("Skeleton_arm_joint_L__4_",), "leftLowerArm": ("Skeleton_arm_joint_L__3_",),
        "leftHand": ("Skeleton_arm_joint_L__2_",),
    }),
}

# Prefixes exporters put before every bone name.
PREFIXES = re.compile(r"^(mixamorig\d*[:_]|def-|org-|bip01[ _]|armature[|:])", re.IGNORECASE)
# A prefix of the exporter's own choosing (HumanIK's character name, a Maya namespace): taken off
# only where the whole name is not known, so that ``spine_01`` or ``Skeleton_neck_joint_1`` stay.
NAMED_PREFIX = re.compile(r"^[^_:|\s]+[_:|]")


def _scheme_tables() -> dict[str, dict[str, str]]:
    """scheme -> {lower-case name: body part}, sides filled in (Blender's _L/_l too)."""
    tables = {}
    for scheme, ((left, right), parts) in SCHEMES.items():
        table: dict[str, str] = {}
        for part, names in parts.items():
            if part[0].isupper():  # a left/right pair
                for side, spelling in (("left", left), ("right", right)):
                    for name in names:
                        filled = name.replace("{S}", spelling).lower()
                        table.setdefault(filled, side + part)
                        if scheme == "blender":
                            table.setdefault(filled.replace(f".{spelling.lower()}", f"_{spelling.lower()}"),
                                             side + part)
            else:
                for name in names:
                    table.setdefault(name.lower(), part)
        tables[scheme] = table
    return tables


TABLES = _scheme_tables()


def plain_name(name: str) -> str:
    """The bone's name as the tables spell it: lower case, the exporter's prefix removed."""
    return PREFIXES.sub("", name.strip()).lower()


def body_parts(names) -> tuple[str | None, dict[str, str]]:
    """(scheme, {body part: bone name}) for the scheme that recognises most of ``names``;
    (None, {}) when none recognises a body part. The first bone of a part wins."""
    names = list(names)
    plain = [plain_name(n) for n in names]
    bare = [NAMED_PREFIX.sub("", key, count=1) for key in plain]
    best, best_parts = None, {}
    for scheme, table in TABLES.items():
        parts: dict[str, str] = {}
        for name, key, short in zip(names, plain, bare):
            part = table.get(key) or table.get(short)
            if part is not None and part not in parts:
                parts[part] = name
        if len(parts) > len(best_parts):
            best, best_parts = scheme, parts
    return best, best_parts


def scheme_names() -> dict[str, list[str]]:
    """For the docs (docs/mocap.md) and the panel: each scheme's names for the upper arm and the thigh."""
    return {scheme: sorted(n for n, p in table.items() if p in ("leftUpperArm", "leftUpperLeg"))
            for scheme, table in TABLES.items()}
