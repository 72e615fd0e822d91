"""VRMC_springBone 1.0 (and VRMC_springBone_extended_collider's shapes): the spring chains a
glTF or VRM file holds, read into the scene's spring bones (viewer.motion.springs).

Read as @pixiv/three-vrm-springbone 3.5's loader reads them: each joint but a spring's last
swings towards the next; colliders are placed on their nodes with an offset; the extended
collider's shape (sphere or capsule with ``inside``, plane) replaces the core one. Bad data is
refused with one line when the file requires the extension, else the model opens without its
springs and a warning says why.
"""

from __future__ import annotations

from ..errors import ViewerError

EXTENSION = "VRMC_springBone"
EXTENDED = "VRMC_springBone_extended_collider"


def read_springs(file, scene, nodes) -> None:
    """Add the file's spring chains to ``scene.springs`` (nothing when it has none)."""
    document = file.document
    raw = getattr(file, "raw_extensions", None)
    spec = raw.get(EXTENSION) if isinstance(raw, dict) else None
    if spec is None:
        return
    try:
        _read(spec, scene, nodes)
    except ViewerError as error:
        if EXTENSION in document.get("extensionsRequired", ()):
            raise file.error(f"{EXTENSION}: {error}") from None
        scene.springs.__init__(scene)  # none of it: half a rig swings wrongly
        file.warn("springs", f"{EXTENSION} ignored: {error}")


def _node(nodes, index, what):
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(nodes):
        raise ViewerError(f"{what} names node {index!r}, which the file does not have")
    return nodes[index]


def _read(spec: dict, scene, nodes) -> None:
    from ..motion.springs import Collider, Joint

    if not isinstance(spec, dict):
        raise ViewerError("the extension is not an object")
    version = spec.get("specVersion")
    if version not in ("1.0", "1.0-beta"):
        raise ViewerError(f"specVersion {version!r} is not 1.0")
    colliders = []
    for i, c in enumerate(spec.get("colliders") or []):
        what = f"collider {i}"
        node = _node(nodes, c.get("node"), what)
        shape = (c.get("extensions") or {}).get(EXTENDED, {})
        shape = shape.get("shape") if shape.get("specVersion") == "1.0" else None
        inside_allowed = shape is not None
        shape = shape or c.get("shape") or {}
        if "sphere" in shape:
            s = shape["sphere"]
            colliders.append(Collider(node, "sphere", s.get("offset", (0, 0, 0)), s.get("radius", 0.0),
                                      inside=inside_allowed and bool(s.get("inside", False))))
        elif "capsule" in shape:
            s = shape["capsule"]
            colliders.append(Collider(node, "capsule", s.get("offset", (0, 0, 0)), s.get("radius", 0.0),
                                      s.get("tail", (0, 0, 0)), inside=inside_allowed and bool(s.get("inside", False))))
        elif "plane" in shape and inside_allowed:
            s = shape["plane"]
            colliders.append(Collider(node, "plane", s.get("offset", (0, 0, 0)), normal=s.get("normal", (0, 0, 1))))
        else:
            raise ViewerError(f"{what} has no sphere, capsule or plane shape")
    groups = []
    for i, g in enumerate(spec.get("colliderGroups") or []):
        members = []
        for k in g.get("colliders") or []:
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(colliders):
                raise ViewerError(f"collider group {i} names collider {k!r}, which the file does not have")
            members.append(colliders[k])
        groups.append(members)
    for i, s in enumerate(spec.get("springs") or []):
        used = []
        for k in s.get("colliderGroups") or []:
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(groups):
                raise ViewerError(f"spring {i} names collider group {k!r}, which the file does not have")
            used.extend(groups[k])
        center = None if s.get("center") is None else _node(nodes, s.get("center"), f"spring {i} center")
        joints = s.get("joints") or []
        name = s.get("name") or f"spring {i}"
        for k in range(len(joints) - 1):
            a, b = joints[k], joints[k + 1]
            bone = _node(nodes, a.get("node"), f"spring {i} joint {k}")
            child = _node(nodes, b.get("node"), f"spring {i} joint {k + 1}")
            if child.parent is not bone:
                raise ViewerError(f"spring {i} joint {k + 1} ({child.name!r}) is not a child of joint {k} ({bone.name!r})")
            scene.springs.add_joint(Joint(bone, child, a.get("stiffness", 1.0), a.get("gravityPower", 0.0),
                                          a.get("gravityDir", (0, -1, 0)), a.get("dragForce", 0.4),
                                          a.get("hitRadius", 0.0), used, center), name)
