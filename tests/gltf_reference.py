"""An independent evaluation of glTF skinning: json + numpy, glTF's own conventions.

It shares nothing with viewer/: it parses the JSON itself, works with column vectors as the
glTF spec writes them (jointMatrix = globalTransform(joint) * inverseBindMatrix, the mesh
node's transform ignored), and samples animations with its own interpolation code.
"""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import numpy as np

DTYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}
SIZES = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}


class Document:
    def __init__(self, path):
        path = Path(path)
        raw = path.read_bytes()
        self.glb_bin = None
        if raw[:4] == b"glTF":
            json_length = struct.unpack_from("<I", raw, 12)[0]
            self.json = json.loads(raw[20:20 + json_length])
            rest = 20 + json_length
            if rest + 8 <= len(raw):
                bin_length = struct.unpack_from("<I", raw, rest)[0]
                self.glb_bin = raw[rest + 8: rest + 8 + bin_length]
        else:
            self.json = json.loads(raw)
        self.buffers = []
        for buffer in self.json.get("buffers", []):
            uri = buffer.get("uri")
            if uri is None:
                self.buffers.append(self.glb_bin)
            elif uri.startswith("data:"):
                self.buffers.append(base64.b64decode(uri.split(",", 1)[1]))
            else:
                self.buffers.append((path.parent / uri).read_bytes())
        nodes = self.json["nodes"]
        self.parent = {c: i for i, n in enumerate(nodes) for c in n.get("children", [])}

    def accessor(self, index):
        a = self.json["accessors"][index]
        dtype, width = np.dtype(DTYPES[a["componentType"]]), SIZES[a["type"]]
        view = self.json["bufferViews"][a["bufferView"]]
        data = self.buffers[view["buffer"]]
        stride = view.get("byteStride") or dtype.itemsize * width
        start = view.get("byteOffset", 0) + a.get("byteOffset", 0)
        out = np.empty((a["count"], width), dtype)
        for i in range(a["count"]):
            out[i] = np.frombuffer(data, dtype, count=width, offset=start + i * stride)
        if a.get("normalized"):
            out = out.astype(np.float64) / np.iinfo(dtype).max
        return out.astype(np.float64)

    def trs(self, index):
        n = self.json["nodes"][index]
        return (np.array(n.get("translation", [0, 0, 0]), float), np.array(n.get("rotation", [0, 0, 0, 1]), float),
                np.array(n.get("scale", [1, 1, 1]), float))


def rotation_matrix(q):
    """Column-vector rotation matrix of a quaternion (x, y, z, w), taken as stored: files
    round unit quaternions (0.707 for sqrt(0.5)) and engines use them as they are."""
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def local_matrix(doc, index, pose):
    node = doc.json["nodes"][index]
    if "matrix" in node and index not in pose:
        return np.array(node["matrix"], float).reshape(4, 4).T  # column-major in the file
    t, r, s = pose.get(index, doc.trs(index))
    m = np.eye(4)
    m[:3, :3] = rotation_matrix(r) * s  # T * R * S
    m[:3, 3] = t
    return m


def world_matrix(doc, index, pose):
    m = local_matrix(doc, index, pose)
    while index in doc.parent:
        index = doc.parent[index]
        m = local_matrix(doc, index, pose) @ m
    return m


def slerp(a, b, u):
    if a @ b < 0:
        b = -b
    angle = np.arccos(np.clip(a @ b, -1, 1))
    if angle < 1e-6:
        return (1 - u) * a + u * b
    return (np.sin((1 - u) * angle) * a + np.sin(u * angle) * b) / np.sin(angle)


def sample(doc, sampler, path, t):
    times = doc.accessor(sampler["input"])[:, 0]
    values = doc.accessor(sampler["output"])
    mode = sampler.get("interpolation", "LINEAR")
    if mode == "CUBICSPLINE":
        values = values.reshape(len(times), 3, -1)
    else:
        values = values.reshape(len(times), -1)
    if t <= times[0]:
        return values[0, 1] if mode == "CUBICSPLINE" else values[0]
    if t >= times[-1]:
        return values[-1, 1] if mode == "CUBICSPLINE" else values[-1]
    k = int(np.nonzero(times <= t)[0][-1])
    if mode == "STEP":
        return values[k]
    dt = times[k + 1] - times[k]
    u = (t - times[k]) / dt
    if mode == "CUBICSPLINE":
        p0, m0 = values[k, 1], values[k, 2] * dt
        p1, m1 = values[k + 1, 1], values[k + 1, 0] * dt
        h = [2 * u**3 - 3 * u**2 + 1, u**3 - 2 * u**2 + u, -2 * u**3 + 3 * u**2, u**3 - u**2]
        v = h[0] * p0 + h[1] * m0 + h[2] * p1 + h[3] * m1
        return v / np.linalg.norm(v) if path == "rotation" else v
    if path == "rotation":
        return slerp(values[k], values[k + 1], u)
    return values[k] + u * (values[k + 1] - values[k])


def animated_pose(doc, animation, t):
    """{node: (t, r, s)} for every node an animation touches, at time t."""
    pose = {}
    if animation is None:
        return pose
    spec = doc.json["animations"][animation]
    for channel in spec["channels"]:
        node, path = channel["target"]["node"], channel["target"]["path"]
        if path == "weights":
            continue
        if node not in pose:
            trs = doc.trs(node)
            if "matrix" in doc.json["nodes"][node]:  # a matrix node being animated: decompose it
                m = np.array(doc.json["nodes"][node]["matrix"], float).reshape(4, 4).T
                s = np.linalg.norm(m[:3, :3], axis=0)
                trs = (m[:3, 3], quaternion_of(m[:3, :3] / s), s)
            pose[node] = list(trs)
        value = sample(doc, spec["samplers"][channel["sampler"]], path, t)
        pose[node][{"translation": 0, "rotation": 1, "scale": 2}[path]] = np.asarray(value, float)
    return {k: tuple(v) for k, v in pose.items()}


def quaternion_of(r):
    w = np.sqrt(max(0.0, 1 + r[0, 0] + r[1, 1] + r[2, 2])) / 2
    if w > 1e-6:
        return np.array([(r[2, 1] - r[1, 2]) / (4 * w), (r[0, 2] - r[2, 0]) / (4 * w), (r[1, 0] - r[0, 1]) / (4 * w), w])
    raise ValueError("rotation too close to 180 degrees for this simple reference")


def skinned_positions(path, animation=None, t=0.0, pose=None):
    """{mesh node index: (V, 3) world positions}, primitives concatenated, for skinned nodes;
    ``pose``: {node: (t, r, s)} to use instead of an animation's."""
    doc = Document(path)
    pose = animated_pose(doc, animation, t) if pose is None else pose
    result = {}
    for index, node in enumerate(doc.json["nodes"]):
        if "mesh" not in node or "skin" not in node:
            continue
        skin = doc.json["skins"][node["skin"]]
        joints = skin["joints"]
        if "inverseBindMatrices" in skin:
            ibms = [m.reshape(4, 4).T for m in doc.accessor(skin["inverseBindMatrices"])]
        else:
            ibms = [np.eye(4)] * len(joints)
        joint_matrices = [world_matrix(doc, j, pose) @ ibm for j, ibm in zip(joints, ibms)]
        chunks = []
        for primitive in doc.json["meshes"][node["mesh"]]["primitives"]:
            attributes = primitive["attributes"]
            positions = doc.accessor(attributes["POSITION"])
            influence_sets = [(doc.accessor(attributes[f"JOINTS_{k}"]).astype(int), doc.accessor(attributes[f"WEIGHTS_{k}"]))
                              for k in (0, 1) if f"JOINTS_{k}" in attributes]
            out = np.zeros_like(positions)
            for v, p in enumerate(positions):
                total, point = 0.0, np.zeros(4)
                for joint_rows, weight_rows in influence_sets:
                    for j, w in zip(joint_rows[v], weight_rows[v]):
                        if w:
                            point += w * (joint_matrices[j] @ np.append(p, 1.0))
                            total += w
                out[v] = point[:3] / total  # weights renormalized
            chunks.append(out)
        result[index] = np.concatenate(chunks)
    return result
