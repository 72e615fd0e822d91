"""Hand-written ASCII FBX files that use FBX's transform features (rotation order, pre/post
rotation, rotation and scaling pivots and offsets, segment scale compensate, geometric
transforms), a skin, an animation stack that starts at frame 10, Z-up axes and inches, and an
independent evaluation of what they mean: the FBX SDK's documented transform chain, written here
in numpy, so the reader's result is compared with the format's definition, not with itself.

FBX's chain for a node, column vectors (the SDK's "Computing transformation matrix" page):

    World = ParentWorld * T * Roff * Rp * Rpre * R * Rpost^-1 * Rp^-1 * Soff * Sp * S * Sp^-1

with R the Lcl Rotation in the node's rotation order, Rpre and Rpost in XYZ order, and for
InheritType 2 (Maya's segment scale compensate) the parent's own scaling taken back out after
the translation, as Maya's joint matrix does: ``ParentWorld * T * S_parent^-1 * (the rest)``. A mesh's geometric transform (GeometricTranslation,
-Rotation, -Scaling) applies to its vertices only. A skin cluster's Transform element is the
mesh's world at bind relative to the bone's (``TransformLink^-1 * MeshBind``, as Maya and
Blender write it), so a cluster moves a vertex to ``BoneWorld(t) * Transform * v``.
"""

from __future__ import annotations

import numpy as np

TICKS = 46186158000  # FBX KTime units in a second
FPS = 24.0
INCH = 0.0254

# Euler orders: FBX's enum value and the order the axes apply in (first to last).
ORDERS = {"XYZ": 0, "XZY": 1, "YZX": 2, "YXZ": 3, "ZXY": 4, "ZYX": 5}


def _axis(axis: int, degrees: float) -> np.ndarray:
    a = np.radians(degrees)
    c, s = np.cos(a), np.sin(a)
    m = np.eye(4)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def euler(degrees, order: str = "XYZ") -> np.ndarray:
    """The 4x4 (column vectors) of Euler angles applied in ``order`` (XYZ: X first)."""
    m = np.eye(4)
    for letter in order:
        k = "XYZ".index(letter)
        m = _axis(k, degrees[k]) @ m
    return m


def translate(v) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = v
    return m


def scale(v) -> np.ndarray:
    return np.diag([*v, 1.0])


class Node:
    def __init__(self, uid, name, kind, parent=None, t=(0, 0, 0), r=(0, 0, 0), s=(1, 1, 1), order="XYZ",
                 pre=(0, 0, 0), post=(0, 0, 0), rp=(0, 0, 0), roff=(0, 0, 0), sp=(0, 0, 0), soff=(0, 0, 0),
                 inherit=1, gt=(0, 0, 0), gr=(0, 0, 0), gs=(1, 1, 1)):
        self.uid, self.name, self.kind, self.parent = uid, name, kind, parent
        self.t, self.r, self.s, self.order = t, r, s, order
        self.pre, self.post, self.rp, self.roff, self.sp, self.soff = pre, post, rp, roff, sp, soff
        self.inherit, self.gt, self.gr, self.gs = inherit, gt, gr, gs

    def local(self, r=None) -> np.ndarray:
        r = self.r if r is None else r
        return (translate(self.t) @ translate(self.roff) @ translate(self.rp) @ euler(self.pre)
                @ euler(r, self.order) @ np.linalg.inv(euler(self.post)) @ translate(np.negative(self.rp))
                @ translate(self.soff) @ translate(self.sp) @ scale(self.s) @ translate(np.negative(self.sp)))

    def geometric(self) -> np.ndarray:
        return translate(self.gt) @ euler(self.gr) @ scale(self.gs)


def world(nodes: dict, name: str, rotations: dict | None = None) -> np.ndarray:
    """A node's world matrix (column vectors, file units) with some Lcl Rotations replaced."""
    node = nodes[name]
    local = node.local((rotations or {}).get(name))
    if node.parent is None:
        return local
    parent = world(nodes, node.parent, rotations)
    if node.inherit == 2:  # Maya's joint: T, then the parent's scale taken out, then the rest
        position = translate(node.t)
        return parent @ position @ np.linalg.inv(scale(nodes[node.parent].s)) @ np.linalg.inv(position) @ local
    return parent @ local


# --- the case -----------------------------------------------------------------------------------
NODES = {
    "Hips": Node(1001, "Hips", "LimbNode", t=(0, 0, 40), r=(10, 20, 30), order="ZXY", pre=(0, 0, -90),
                 rp=(1, 2, 3), roff=(4, 0, 0), s=(1.5, 1.5, 1.5), sp=(0, 1, 0), soff=(0, 0, 1)),
    "Spine": Node(1002, "Spine", "LimbNode", parent="Hips", t=(0, 12, 0), r=(0, 0, 0), order="XYZ",
                  post=(0, 45, 0), inherit=2),
    "Prop": Node(1003, "Prop", "Mesh", parent="Spine", t=(3, 4, 0), r=(0, 90, 0), gt=(0, 0, 2), gr=(30, 0, 0),
                 gs=(2, 1, 1)),
    "Body": Node(1004, "Body", "Mesh"),
}
# The Spine's Lcl Rotation X: keyed 0 at frame 10 and 90 at frame 34, linear.
KEYS = ((10, 0.0), (34, 90.0))
# A box skinned half to each bone (points in file units, Z up: the character stands along +Z).
BOX = np.array([[x, y, z] for z in (30, 40, 52, 64) for y in (-4, 4) for x in (-6, 6)], dtype=np.float64)
# Prop: a small quad
QUAD = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], dtype=np.float64)


def spine_angle(seconds: float) -> float:
    (f0, a0), (f1, a1) = KEYS
    frame = min(max(seconds * FPS, f0), f1)
    return a0 + (a1 - a0) * (frame - f0) / (f1 - f0)


def box_weights() -> np.ndarray:
    """(points, 2) weights to Hips and Spine: low points on the hips, high ones on the spine."""
    z = BOX[:, 2]
    spine = np.clip((z - 35) / 20, 0.0, 1.0)
    return np.stack([1.0 - spine, spine], axis=1)


def expected_points(seconds: float, file_axes: bool = False) -> np.ndarray:
    """Every drawn vertex (box, then prop) in world space at ``seconds``, by FBX's definition,
    converted to glTF's axes and metres unless ``file_axes``."""
    rotations = {"Spine": (spine_angle(seconds), 0, 0)}
    bind = {name: world(NODES, name) for name in ("Hips", "Spine")}
    now = {name: world(NODES, name, rotations) for name in ("Hips", "Spine")}
    homogeneous = np.column_stack([BOX, np.ones(len(BOX))])
    weights = box_weights()
    skinned = sum(weights[:, k:k + 1] * (homogeneous @ (now[name] @ np.linalg.inv(bind[name])).T)
                  for k, name in enumerate(("Hips", "Spine")))
    prop = world(NODES, "Prop", rotations) @ NODES["Prop"].geometric()
    placed = np.column_stack([QUAD, np.ones(len(QUAD))]) @ prop.T
    points = np.concatenate([skinned[:, :3], placed[:, :3]])
    if file_axes:
        return points
    # Z up, front -Y (3ds Max's axes), inches -> +Y up, front +Z, metres: (x, y, z) -> (x, z, -y).
    return np.column_stack([points[:, 0], points[:, 2], -points[:, 1]]) * INCH


def _numbers(values) -> str:
    return ",".join(repr(float(v)) if not float(v).is_integer() else str(int(v)) for v in np.ravel(values))


def _array(name: str, values, integer: bool = False) -> str:
    values = np.ravel(values)
    text = ",".join(str(int(v)) for v in values) if integer else _numbers(values)
    return f"\t\t{name}: *{len(values)} {{\n\t\t\ta: {text}\n\t\t}}\n"


def _p(name, kind, label, flags, *values) -> str:
    return f'\t\t\tP: "{name}", "{kind}", "{label}", "{flags}",{_numbers(values)}\n'


def _model(node: Node) -> str:
    props = [_p("RotationActive", "bool", "", "", 1), _p("InheritType", "enum", "", "", node.inherit),
             _p("RotationOrder", "enum", "", "", ORDERS[node.order]),
             _p("PreRotation", "Vector3D", "Vector", "", *node.pre), _p("PostRotation", "Vector3D", "Vector", "", *node.post),
             _p("RotationPivot", "Vector3D", "Vector", "", *node.rp), _p("RotationOffset", "Vector3D", "Vector", "", *node.roff),
             _p("ScalingPivot", "Vector3D", "Vector", "", *node.sp), _p("ScalingOffset", "Vector3D", "Vector", "", *node.soff),
             _p("GeometricTranslation", "Vector3D", "Vector", "", *node.gt),
             _p("GeometricRotation", "Vector3D", "Vector", "", *node.gr),
             _p("GeometricScaling", "Vector3D", "Vector", "", *node.gs),
             _p("Lcl Translation", "Lcl Translation", "", "A", *node.t),
             _p("Lcl Rotation", "Lcl Rotation", "", "A", *node.r),
             _p("Lcl Scaling", "Lcl Scaling", "", "A", *node.s)]
    return (f'\tModel: {node.uid}, "Model::{node.name}", "{node.kind}" {{\n\t\tVersion: 232\n'
            f'\t\tProperties70:  {{\n{"".join(props)}\t\t}}\n\t\tShading: Y\n\t\tCulling: "CullingOff"\n\t}}\n')


def _geometry(uid: int, name: str, points: np.ndarray, faces: list[list[int]], layers: str = "") -> str:
    indices = [i for face in faces for i in face[:-1] + [-face[-1] - 1]]
    return (f'\tGeometry: {uid}, "Geometry::{name}", "Mesh" {{\n' + _array("Vertices", points)
            + _array("PolygonVertexIndex", indices, integer=True) + "\t\tGeometryVersion: 124\n" + layers + "\t}\n")


# The prop's corners, in polygon order: UVs (FBX's V runs up) and vertex colours (RGBA).
QUAD_UV = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
QUAD_COLORS = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.5]])


def _quad_layers() -> str:
    """The prop's UV and colour layers, one value per polygon corner."""
    def layer(kind: str, values_name: str, values) -> str:
        return (f'\t\t{kind}: 0 {{\n\t\t\tVersion: 101\n\t\t\tName: ""\n'
                '\t\t\tMappingInformationType: "ByPolygonVertex"\n\t\t\tReferenceInformationType: "Direct"\n'
                + _array(values_name, values).replace("\t\t", "\t\t\t") + "\t\t}\n")

    return (layer("LayerElementUV", "UV", QUAD_UV) + layer("LayerElementColor", "Colors", QUAD_COLORS)
            + '\t\tLayer: 0 {\n\t\t\tVersion: 100\n'
            '\t\t\tLayerElement:  {\n\t\t\t\tType: "LayerElementUV"\n\t\t\t\tTypedIndex: 0\n\t\t\t}\n'
            '\t\t\tLayerElement:  {\n\t\t\t\tType: "LayerElementColor"\n\t\t\t\tTypedIndex: 0\n\t\t\t}\n'
            '\t\t}\n')


def _box_faces() -> list[list[int]]:
    """Quads around the box's four rings of four points (index = ring * 4 + corner)."""
    ring = [0, 1, 3, 2]  # corners around a ring
    faces = []
    for level in range(3):
        for k in range(4):
            a, b = ring[k], ring[(k + 1) % 4]
            faces.append([level * 4 + a, level * 4 + b, (level + 1) * 4 + b, (level + 1) * 4 + a])
    faces.append([ring[3], ring[2], ring[1], ring[0]])
    faces.append([12 + r for r in ring])
    return faces


def _matrix(m: np.ndarray) -> np.ndarray:
    """A 4x4 column-vector matrix as FBX stores it (column-major, so its transpose's rows)."""
    return m.T.reshape(-1)


# ``ascii_fbx(body_moves=True)``: the skinned box's own node keyed along X (file units), linear.
BODY_KEYS = ((10, 0.0), (34, 15.0))


def body_offset(seconds: float) -> float:
    """The Body node's Lcl Translation X at ``seconds`` with ``body_moves``."""
    (f0, a0), (f1, a1) = BODY_KEYS
    frame = min(max(seconds * FPS, f0), f1)
    return a0 + (a1 - a0) * (frame - f0) / (f1 - f0)


def ascii_fbx(unweighted: int | None = None, body_moves: bool = False) -> str:
    """The case as an FBX 7.3 ASCII file; ``unweighted``: a box point no cluster names (FBX allows
    it: the point follows the mesh's node, as Maya, Blender and ufbx draw it); ``body_moves``: the
    box's node keyed along X (``BODY_KEYS``), which moves no vertex a bone moves."""
    bind = {name: world(NODES, name) for name in ("Hips", "Spine")}
    weights = box_weights()
    if unweighted is not None:
        weights[unweighted] = 0.0
    objects = "".join(_model(node) for node in NODES.values())
    objects += _geometry(2001, "BodyGeometry", BOX, _box_faces())
    objects += _geometry(2002, "PropGeometry", QUAD, [[0, 1, 2, 3]], _quad_layers())
    objects += '\tDeformer: 3001, "Deformer::Skin", "Skin" {\n\t\tVersion: 101\n\t\tLink_DeformAcuracy: 50\n\t}\n'
    for k, (uid, name) in enumerate(((3002, "Hips"), (3003, "Spine"))):
        used = np.flatnonzero(weights[:, k] > 0)
        objects += (f'\tDeformer: {uid}, "SubDeformer::{name}", "Cluster" {{\n\t\tVersion: 100\n'
                    + _array("Indexes", used, integer=True) + _array("Weights", weights[used, k])
                    + _array("Transform", _matrix(np.linalg.inv(bind[name]))) + _array("TransformLink", _matrix(bind[name]))
                    + "\t}\n")
    start, stop = (int(round(KEYS[0][0] / FPS * TICKS)), int(round(KEYS[1][0] / FPS * TICKS)))
    objects += (f'\tAnimationStack: 4001, "AnimStack::Bend", "" {{\n\t\tProperties70:  {{\n'
                f'\t\t\tP: "LocalStart", "KTime", "Time", "",{start}\n\t\t\tP: "LocalStop", "KTime", "Time", "",{stop}\n'
                f'\t\t\tP: "ReferenceStart", "KTime", "Time", "",{start}\n\t\t\tP: "ReferenceStop", "KTime", "Time", "",{stop}\n'
                '\t\t}\n\t}\n')
    objects += '\tAnimationLayer: 4002, "AnimLayer::BaseLayer", "" {\n\t}\n'
    objects += ('\tAnimationCurveNode: 4003, "AnimCurveNode::R", "" {\n\t\tProperties70:  {\n'
                '\t\t\tP: "d|X", "Number", "", "A",0\n\t\t\tP: "d|Y", "Number", "", "A",0\n'
                '\t\t\tP: "d|Z", "Number", "", "A",0\n\t\t}\n\t}\n')
    times = [int(round(frame / FPS * TICKS)) for frame, _ in KEYS]
    objects += ('\tAnimationCurve: 4004, "AnimCurve::", "" {\n\t\tDefault: 0\n\t\tKeyVer: 4009\n'
                + _array("KeyTime", times, integer=True) + _array("KeyValueFloat", [value for _, value in KEYS])
                + _array("KeyAttrFlags", [4], integer=True)  # linear interpolation
                + _array("KeyAttrDataFloat", [0, 0, 0, 0]) + _array("KeyAttrRefCount", [len(KEYS)], integer=True)
                + "\t}\n")
    if body_moves:
        objects += ('\tAnimationCurveNode: 4005, "AnimCurveNode::T", "" {\n\t\tProperties70:  {\n'
                    '\t\t\tP: "d|X", "Number", "", "A",0\n\t\t\tP: "d|Y", "Number", "", "A",0\n'
                    '\t\t\tP: "d|Z", "Number", "", "A",0\n\t\t}\n\t}\n')
        objects += ('\tAnimationCurve: 4006, "AnimCurve::", "" {\n\t\tDefault: 0\n\t\tKeyVer: 4009\n'
                    + _array("KeyTime", [int(round(frame / FPS * TICKS)) for frame, _ in BODY_KEYS], integer=True)
                    + _array("KeyValueFloat", [value for _, value in BODY_KEYS])
                    + _array("KeyAttrFlags", [4], integer=True) + _array("KeyAttrDataFloat", [0, 0, 0, 0])
                    + _array("KeyAttrRefCount", [len(BODY_KEYS)], integer=True) + "\t}\n")
    connections = [("OO", 1001, 0), ("OO", 1002, 1001), ("OO", 1003, 1002), ("OO", 1004, 0),
                   ("OO", 2001, 1004), ("OO", 2002, 1003), ("OO", 3001, 2001), ("OO", 3002, 3001), ("OO", 3003, 3001),
                   ("OO", 1001, 3002), ("OO", 1002, 3003), ("OO", 4002, 4001), ("OO", 4003, 4002)]
    links = "".join(f'\tC: "{kind}",{a},{b}\n' for kind, a, b in connections)
    links += '\tC: "OP",4003,1002, "Lcl Rotation"\n\tC: "OP",4004,4003, "d|X"\n'
    if body_moves:
        links += '\tC: "OO",4005,4002\n\tC: "OP",4005,1004, "Lcl Translation"\n\tC: "OP",4006,4005, "d|X"\n'
    settings = "".join([_p("UpAxis", "int", "Integer", "", 2), _p("UpAxisSign", "int", "Integer", "", 1),
                        _p("FrontAxis", "int", "Integer", "", 1), _p("FrontAxisSign", "int", "Integer", "", -1),
                        _p("CoordAxis", "int", "Integer", "", 0), _p("CoordAxisSign", "int", "Integer", "", 1),
                        _p("UnitScaleFactor", "double", "Number", "", 2.54),
                        _p("TimeMode", "enum", "", "", 11)])
    return ("; FBX 7.3.0 project file\n; written by boneviewer's tests (tests/fbx_cases.py)\n\n"
            "FBXHeaderExtension:  {\n\tFBXHeaderVersion: 1003\n\tFBXVersion: 7300\n"
            '\tCreator: "boneviewer tests"\n}\n'
            f"GlobalSettings:  {{\n\tVersion: 1000\n\tProperties70:  {{\n{settings}\t}}\n}}\n"
            f"Objects:  {{\n{objects}}}\nConnections:  {{\n{links}}}\n")
