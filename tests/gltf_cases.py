"""Small glTF files for edge cases, written with pygltflib.

Each case is a "worm": a strip of vertices along a chain of joints, so that every joint's
transform shows in the skinned positions. Variants add what real files do: decoy mesh node
transforms, skeletons under transformed parents, joints listed out of order, non-joint nodes
between joints, 8 influences, STEP and CUBICSPLINE samplers, shared and multiple skins.
"""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path

import numpy as np
import pygltflib as g

FLOAT, UBYTE, USHORT, UINT = 5126, 5121, 5123, 5125


def portable(values) -> np.ndarray:
    """Numbers computed here through BLAS, LAPACK or numpy's SIMD sin and cos, made the same on
    every machine: those differ in the last bits from one CPU to another (and leave noise such as
    1e-17 or -0.0 where the answer is 0), so the files these cases write would too. Rounded to 7
    decimals (and -0.0 made 0.0), a last-bit difference changes a written number only when it
    straddles a rounding boundary: about one number in 10^8."""
    return np.round(np.asarray(values, np.float64), 7) + 0.0


class Builder:
    def __init__(self):
        self.gltf = g.GLTF2(asset=g.Asset(version="2.0"), scene=0, scenes=[g.Scene(nodes=[])], nodes=[], meshes=[],
                            skins=[], accessors=[], bufferViews=[], buffers=[], animations=[])
        self.blob = bytearray()

    def node(self, name, parent=None, root=False, **fields):
        self.gltf.nodes.append(g.Node(name=name, **fields))
        index = len(self.gltf.nodes) - 1
        if parent is not None:
            self.gltf.nodes[parent].children = (self.gltf.nodes[parent].children or []) + [index]
        if root:
            self.gltf.scenes[0].nodes.append(index)
        return index

    def accessor(self, array, kind, component=FLOAT, normalized=None, stride=None):
        array = np.ascontiguousarray(array)
        while len(self.blob) % 4:
            self.blob.append(0)
        offset = len(self.blob)
        data = array.tobytes()
        if stride:  # interleave with padding to exercise byteStride
            item = array.itemsize * array.shape[1]
            padded = bytearray()
            for row in range(len(array)):
                padded += data[row * item:(row + 1) * item] + bytes(stride - item)
            data = bytes(padded)
        self.blob += data
        self.gltf.bufferViews.append(g.BufferView(buffer=0, byteOffset=offset, byteLength=len(data), byteStride=stride))
        count = len(array)
        extra = {}
        if kind in ("VEC3",) and component == FLOAT:
            extra = {"min": array.min(axis=0).tolist(), "max": array.max(axis=0).tolist()}
        self.gltf.accessors.append(g.Accessor(bufferView=len(self.gltf.bufferViews) - 1, componentType=component,
                                              count=count, type=kind, normalized=normalized, **extra))
        return len(self.gltf.accessors) - 1

    def save(self, path: Path, mode="embedded"):
        """mode: "embedded" (data: URI), "glb", or "external" (a .bin next to the .gltf)."""
        blob = bytes(self.blob)
        if mode == "glb":
            self.gltf.buffers = [g.Buffer(byteLength=len(blob))]
            self.gltf.set_binary_blob(blob)
            self.gltf.save_binary(str(path))
        elif mode == "external":
            bin_path = path.with_suffix(".bin")
            bin_path.write_bytes(blob)
            self.gltf.buffers = [g.Buffer(byteLength=len(blob), uri=bin_path.name)]
            self.gltf.save_json(str(path))
        else:
            uri = "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
            self.gltf.buffers = [g.Buffer(byteLength=len(blob), uri=uri)]
            self.gltf.save_json(str(path))
        return path


def quat(axis, degrees):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    half = np.radians(degrees) / 2
    return portable([*(axis * np.sin(half)), np.cos(half)]).tolist()


def worm_mesh(b, joint_count, skin, influences=4, segments=None, joint_component=USHORT, weight_mode="float"):
    """A strip along +Y from 0 to joint_count, weighted to neighbouring joints."""
    segments = segments or joint_count * 4
    ys = np.linspace(0, joint_count, segments + 1)
    positions = np.array([[x, y, 0.0] for y in ys for x in (-0.2, 0.2)], np.float32)
    indices = []
    for i in range(segments):
        a = 2 * i
        indices += [a, a + 1, a + 2, a + 1, a + 3, a + 2]
    rows = len(positions)
    joints = np.zeros((rows, 8), np.int64)
    weights = np.zeros((rows, 8), np.float64)
    rng = np.random.default_rng(joint_count * 7 + influences)
    for v, (_, y, _) in enumerate(positions):
        j = min(int(y), joint_count - 1)
        joints[v, 0], weights[v, 0] = j, 1.0 - (y - j) * 0.5
        joints[v, 1], weights[v, 1] = min(j + 1, joint_count - 1), (y - j) * 0.5
        if influences == 8:  # spread some weight over the second set
            joints[v, 4:] = rng.integers(0, joint_count, 4)
            weights[v, 4:] = rng.uniform(0.05, 0.2, 4)
    weights /= weights.sum(axis=1, keepdims=True)
    attributes = g.Attributes(POSITION=b.accessor(positions, "VEC3"))
    jtype = {UBYTE: np.uint8, USHORT: np.uint16}[joint_component]
    attributes.JOINTS_0 = b.accessor(joints[:, :4].astype(jtype), "VEC4", joint_component)
    attributes.WEIGHTS_0 = _weights(b, weights[:, :4], weight_mode)
    if influences == 8:
        attributes.JOINTS_1 = b.accessor(joints[:, 4:].astype(jtype), "VEC4", joint_component)
        attributes.WEIGHTS_1 = _weights(b, weights[:, 4:], weight_mode)
    index_accessor = b.accessor(np.array(indices, np.uint16).reshape(-1, 1), "SCALAR", USHORT)
    b.gltf.meshes.append(g.Mesh(primitives=[g.Primitive(attributes=attributes, indices=index_accessor)]))
    return len(b.gltf.meshes) - 1


def _weights(b, weights, mode):
    if mode == "ubyte":
        return b.accessor(np.round(weights * 255).astype(np.uint8), "VEC4", UBYTE, normalized=True)
    if mode == "ushort":
        return b.accessor(np.round(weights * 65535).astype(np.uint16), "VEC4", USHORT, normalized=True, stride=12)
    return b.accessor(weights.astype(np.float32), "VEC4")


def chain(b, count, parent=None, root=False, base=(0.0, 0.0, 0.0), name="joint"):
    """Joints one unit apart along +Y, each turned a little so bind matters."""
    nodes = []
    for i in range(count):
        nodes.append(b.node(f"{name}{i}", parent=nodes[-1] if nodes else parent, root=root and not nodes,
                            translation=list(base) if i == 0 else [0.0, 1.0, 0.0],
                            rotation=quat([0, 0, 1], 5 * i)))
    return nodes


def inverse_binds(b, joints):
    """Inverse bind matrices from the joints' world transforms in the file's pose."""
    from gltf_reference import Document, world_matrix  # the independent evaluator

    with tempfile.TemporaryDirectory() as folder:  # a private folder: parallel test runs share no file
        doc = Document(b.save(Path(folder) / "bind_probe.gltf"))
    mats = [np.linalg.inv(world_matrix(doc, j, {})).T.reshape(-1) for j in joints]  # column-major
    return b.accessor(portable(mats).astype(np.float32), "MAT4")


def animate(b, targets, interpolation="LINEAR", duration=2.0, keys=5):
    """Rotate each target about Z (and translate the first) with the given sampler kind."""
    times = np.linspace(0, duration, keys).astype(np.float32)
    channels, samplers = [], []
    rng = np.random.default_rng(len(targets) + keys)
    for i, node in enumerate(targets):
        angles = rng.uniform(-50, 50, keys)
        rotations = np.array([quat([0.2, 0.1, 1.0], a) for a in angles], np.float32)
        if interpolation == "CUBICSPLINE":
            tangents = rng.uniform(-0.3, 0.3, (keys, 4)).astype(np.float32)
            rotations = np.stack([tangents, rotations, -tangents], axis=1).reshape(-1, 4)
        samplers.append(g.AnimationSampler(input=b.accessor(times.reshape(-1, 1), "SCALAR"),
                                           output=b.accessor(rotations, "VEC4"), interpolation=interpolation))
        channels.append(g.AnimationChannel(sampler=len(samplers) - 1,
                                           target=g.AnimationChannelTarget(node=node, path="rotation")))
    translations = portable([[0.3 * np.sin(k), 0.1 * k, 0.0] for k in range(keys)]).astype(np.float32)
    if interpolation == "CUBICSPLINE":
        tangents = rng.uniform(-0.5, 0.5, (keys, 3)).astype(np.float32)
        translations = np.stack([tangents, translations, tangents], axis=1).reshape(-1, 3)
    samplers.append(g.AnimationSampler(input=b.accessor(times.reshape(-1, 1), "SCALAR"),
                                       output=b.accessor(translations, "VEC3"), interpolation=interpolation))
    channels.append(g.AnimationChannel(sampler=len(samplers) - 1,
                                       target=g.AnimationChannelTarget(node=targets[0], path="translation")))
    b.gltf.animations.append(g.Animation(name=interpolation.lower(), channels=channels, samplers=samplers))


def build_base(folder: Path, mode: str = "embedded") -> Path:
    """The plain valid worm: a 3-joint chain, its skin and one animation; the base the
    malformed and fuzz tests break. ``mode`` as in Builder.save."""
    b = Builder()
    joints = chain(b, 3, root=True)
    b.node("mesh", root=True, mesh=worm_mesh(b, 3, 0), skin=0)
    b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=inverse_binds(b, joints), skeleton=joints[0]))
    animate(b, joints[1:])
    return b.save(folder / ("model.glb" if mode == "glb" else "model.gltf"), mode)


DECOY = dict(translation=[5.0, -3.0, 2.0], rotation=quat([1, 1, 0], 70), scale=[2.0, 0.5, 3.0])


def make_case(kind: str, folder: Path) -> Path:
    b = Builder()
    if kind == "decoy_mesh_transform":
        joints = chain(b, 3, root=True)
        mesh = worm_mesh(b, 3, 0)
        b.node("mesh", root=True, mesh=mesh, skin=0, **DECOY)
        b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=inverse_binds(b, joints), skeleton=joints[0]))
        animate(b, joints[1:])
    elif kind == "skeleton_under_transformed_parent":
        armature = b.node("armature", root=True, translation=[1.0, 2.0, -1.0], rotation=quat([1, 0, 0], -90),
                          scale=[0.5, 0.5, 0.5])
        joints = chain(b, 3, parent=armature)
        holder = b.node("holder", root=True, rotation=quat([0, 1, 0], 30))
        b.node("mesh", parent=holder, mesh=worm_mesh(b, 3, 0), skin=0, **DECOY)
        b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=inverse_binds(b, joints), skeleton=joints[0]))
        animate(b, [armature, *joints[1:]])  # the parent of the skeleton moves too
    elif kind == "joints_out_of_order":
        joints = chain(b, 4, root=True)
        order = [joints[2], joints[0], joints[3], joints[1]]
        mesh = worm_mesh(b, 4, 0)
        # Re-map the mesh's joint indices to the shuffled list.
        remap = np.array([order.index(j) for j in joints], np.uint16)
        joint_accessor = b.gltf.meshes[mesh].primitives[0].attributes.JOINTS_0
        view = b.gltf.bufferViews[b.gltf.accessors[joint_accessor].bufferView]
        data = np.frombuffer(bytes(b.blob[view.byteOffset:view.byteOffset + view.byteLength]), np.uint16)
        b.blob[view.byteOffset:view.byteOffset + view.byteLength] = remap[data].astype(np.uint16).tobytes()
        b.node("mesh", root=True, mesh=mesh, skin=0)
        b.gltf.skins.append(g.Skin(joints=order, inverseBindMatrices=inverse_binds(b, order)))
        animate(b, joints[1:])
    elif kind == "non_joint_between_joints":
        root = b.node("hip", root=True, translation=[0.0, 0.5, 0.0])
        spacer = b.node("spacer", parent=root, translation=[0.2, 1.0, 0.0], rotation=quat([0, 0, 1], 20),
                        scale=[1.2, 1.2, 1.2])
        upper = chain(b, 2, parent=spacer, name="upper")
        joints = [root, *upper]
        b.node("mesh", root=True, mesh=worm_mesh(b, 3, 0), skin=0, **DECOY)
        b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=inverse_binds(b, joints)))  # no skeleton
        animate(b, [spacer, upper[1]])
    elif kind == "eight_influences":
        joints = chain(b, 6, root=True)
        b.node("mesh", root=True, mesh=worm_mesh(b, 6, 0, influences=8, weight_mode="ubyte",
                                                 joint_component=UBYTE), skin=0)
        b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=inverse_binds(b, joints), skeleton=joints[0]))
        animate(b, joints[1:])
    elif kind in ("step", "cubicspline"):
        joints = chain(b, 3, root=True)
        b.node("mesh", root=True, mesh=worm_mesh(b, 3, 0, weight_mode="ushort"), skin=0)
        b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=inverse_binds(b, joints), skeleton=joints[0]))
        animate(b, joints, interpolation=kind.upper())
    elif kind == "shared_and_multiple_skins":
        first = chain(b, 3, root=True, name="a")
        second = chain(b, 2, root=True, base=(3.0, 0.0, 0.0), name="b")
        mesh_a, mesh_b = worm_mesh(b, 3, 0), worm_mesh(b, 2, 1)
        b.node("mesh_a1", root=True, mesh=mesh_a, skin=0)
        b.node("mesh_a2", root=True, mesh=mesh_a, skin=0, translation=[9.0, 9.0, 9.0])  # shares skin 0
        b.node("mesh_b", root=True, mesh=mesh_b, skin=1)
        b.gltf.skins.append(g.Skin(joints=first, inverseBindMatrices=inverse_binds(b, first)))
        b.gltf.skins.append(g.Skin(joints=second, inverseBindMatrices=inverse_binds(b, second)))
        animate(b, [*first[1:], second[1]])
    else:
        raise ValueError(kind)
    return b.save(folder / f"{kind}.gltf")


CASES = ["decoy_mesh_transform", "skeleton_under_transformed_parent", "joints_out_of_order",
         "non_joint_between_joints", "eight_influences", "step", "cubicspline", "shared_and_multiple_skins"]


MORPH_WEIGHT_KEYS = [0.0, 0.5, 1.2, 2.0]  # seconds, the weights channels' keyframes


def morph_worm(b, joint_count, skin, name):
    """A worm (worm_mesh) with NORMAL and two morph targets: 0 bulges it along Z (POSITION and
    NORMAL deltas), 1 widens it along X (POSITION only). extras.targetNames names them."""
    mesh = b.gltf.meshes[worm_mesh(b, joint_count, skin)]
    primitive = mesh.primitives[0]
    positions = np.frombuffer(_accessor_bytes(b, primitive.attributes.POSITION), np.float32).reshape(-1, 3)
    count = len(positions)
    primitive.attributes.NORMAL = b.accessor(np.tile(np.float32([0, 0, 1]), (count, 1)), "VEC3")
    y = positions[:, 1]
    bulge = portable(np.c_[np.zeros(count), np.zeros(count), 0.3 * np.sin(y * 1.3) + 0.1 * y]).astype(np.float32)
    tilt = portable(np.c_[0.2 * np.sin(y), np.zeros(count), 0.4 * np.ones(count)]).astype(np.float32)
    widen = np.c_[np.sign(positions[:, 0]) * (0.1 + 0.05 * y), 0.02 * y, np.zeros(count)].astype(np.float32)
    primitive.targets = [{"POSITION": b.accessor(bulge, "VEC3"), "NORMAL": b.accessor(tilt, "VEC3")},
                         {"POSITION": b.accessor(widen, "VEC3")}]
    mesh.name = name
    mesh.weights = [0.25, 0.0]
    mesh.extras = {"targetNames": ["bulge", "widen"]}
    return len(b.gltf.meshes) - 1


def _accessor_bytes(b, index):
    view = b.gltf.bufferViews[b.gltf.accessors[index].bufferView]
    return bytes(b.blob[view.byteOffset:view.byteOffset + view.byteLength])


def build_morph_case(folder: Path) -> Path:
    """Three skinned worms with morph targets, one animation: each worm's middle joint turns
    and its weights play with LINEAR, STEP and CUBICSPLINE samplers (weights beyond 0..1
    included); the STEP worm's node overrides the mesh's default weights. The case
    tests/babylon/generate_morph_reference.mjs records Babylon's positions of."""
    b = Builder()
    rng = np.random.default_rng(15)
    times = np.float32(MORPH_WEIGHT_KEYS).reshape(-1, 1)
    channels, samplers = [], []
    for w, interpolation in enumerate(("LINEAR", "STEP", "CUBICSPLINE")):
        joints = chain(b, 3, root=True, base=(3.0 * w, 0.0, 0.0), name=f"{interpolation.lower()}_joint")
        mesh = morph_worm(b, 3, w, f"worm_{interpolation.lower()}")
        b.node(f"worm_{interpolation.lower()}", root=True, mesh=mesh, skin=w)
        b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=inverse_binds(b, joints), skeleton=joints[0]))
        rotations = np.array([quat([0.3, 0.2, 1.0], a) for a in rng.uniform(-40, 40, len(times))], np.float32)
        samplers.append(g.AnimationSampler(input=b.accessor(times, "SCALAR"), output=b.accessor(rotations, "VEC4")))
        channels.append(g.AnimationChannel(sampler=len(samplers) - 1,
                                           target=g.AnimationChannelTarget(node=joints[1], path="rotation")))
        weights = rng.uniform(-0.2, 1.3, (len(times), 2)).astype(np.float32)
        if interpolation == "CUBICSPLINE":
            tangents = rng.uniform(-2.0, 2.0, (len(times), 2, 2)).astype(np.float32)
            weights = np.stack([tangents[:, 0], weights, tangents[:, 1]], axis=1)
        samplers.append(g.AnimationSampler(input=b.accessor(times, "SCALAR"),
                                           output=b.accessor(weights.reshape(-1, 1), "SCALAR"),
                                           interpolation=interpolation))
        channels.append(g.AnimationChannel(sampler=len(samplers) - 1,
                                           target=g.AnimationChannelTarget(node=len(b.gltf.nodes) - 1, path="weights")))
    for sampler in samplers:  # glTF wants min and max on keyframe times
        b.gltf.accessors[sampler.input].min, b.gltf.accessors[sampler.input].max = [float(times.min())], [float(times.max())]
    b.gltf.animations.append(g.Animation(name="morph", channels=channels, samplers=samplers))
    path = b.save(folder / "morph-worms.gltf")
    document = json.loads(path.read_text())
    step_node = next(n for n in document["nodes"] if n.get("name") == "worm_step")
    step_node["weights"] = [0.5, 0.1]  # pygltflib's Node has no weights
    path.write_text(json.dumps(document))
    return path
