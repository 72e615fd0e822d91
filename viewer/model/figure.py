"""A skeleton drawn as a figure: bones linked to nodes, and a capsule per bone segment, rigidly
skinned to its bone, so that a file with bones and no mesh (BVH, or an FBX, glTF or USD file
that holds only a skeleton and its motion) shades, picks and renders like any model."""

from __future__ import annotations

import numpy as np

from .bone import Bone
from .material import srgb_to_linear
from .mesh import SkinnedMesh
from .skeleton import Skeleton

BONE_COLOR = tuple(srgb_to_linear((0.80, 0.66, 0.52, 1.0)))  # a linear base colour factor: this display colour


def figure_of(name: str, joints: list):
    """The capsule mesh of a skeleton found in a file with no mesh: a bone per joint node (a
    TransformNode; FBX's LimbNodes, a glTF skin's joints) and per node between them and their
    nearest common ancestor, linked to the nodes, placed (its ``world_node``) at that ancestor's
    parent, as a skinned mesh is. None without joints."""
    if not joints:
        return None
    chains = []
    for joint in joints:
        chain, node = [], joint
        while node is not None:
            chain.append(node)
            node = node.parent
        chains.append(chain[::-1])  # top first
    common = 0
    while all(len(chain) > common for chain in chains) and len({id(chain[common]) for chain in chains}) == 1:
        common += 1
    seen: dict[int, tuple] = {}  # id -> (depth, first seen, node)
    for chain in chains:
        for depth, node in enumerate(chain):
            if depth >= common - 1 and id(node) not in seen:
                seen[id(node)] = (depth, len(seen), node)
    order = [node for _, _, node in sorted(seen.values(), key=lambda item: item[:2])]
    row = {id(node): k for k, node in enumerate(order)}
    parents = [row.get(id(node.parent), -1) for node in order]
    _, mesh = skeleton_figure(name, order, parents)
    placement = order[0].parent if common else None
    mesh.world_node = placement
    if placement is not None:
        mesh.world_matrix = placement.get_world_matrix()
    return mesh


def skeleton_figure(name: str, nodes: list, parents: list[int], local_matrices=None, positions=None):
    """(Skeleton, capsule mesh) of ``nodes`` (TransformNodes, parents first; ``parents[j]`` the
    index of node j's parent among them, -1 for a root): a bone per node, linked to it, bound
    where the node is now (``local_matrices``, default the nodes' own local matrices), and the
    capsules between the joints' ``positions`` (default: their places from those matrices,
    relative to the roots' parents, where the mesh is to be placed)."""
    local = np.array([node.get_local_matrix() for node in nodes]).reshape(-1, 4, 4) if local_matrices is None \
        else np.asarray(local_matrices, dtype=np.float64)
    if positions is None:
        absolute = np.empty_like(local)
        for j, parent in enumerate(parents):
            absolute[j] = local[j] if parent < 0 else local[j] @ absolute[parent]
        positions = absolute[:, 3, :3]
    skeleton = Skeleton(name)
    bones: list[Bone] = []
    for j, node in enumerate(nodes):
        bone = Bone(node.name, skeleton, None if parents[j] < 0 else bones[parents[j]],
                    local_matrix=local[j], bind_matrix=local[j], index=j)
        bone.link_transform_node(node)
        bones.append(bone)
    return skeleton, capsule_mesh(name, np.asarray(positions, dtype=np.float64), parents, skeleton)


def capsule_mesh(name: str, positions: np.ndarray, parents: list[int], skeleton: Skeleton) -> SkinnedMesh:
    """A capsule from each joint to each of its children, weighted 1 to the joint's bone."""
    segments = [(parent, j) for j, parent in enumerate(parents) if parent >= 0
                and np.linalg.norm(positions[j] - positions[parent]) > 0]
    extent = positions.max(axis=0) - positions.min(axis=0) if len(positions) else np.ones(3)
    size = float(np.linalg.norm(extent)) or 1.0
    if segments:
        owners, children = np.array(segments).T
        starts, ends = positions[owners], positions[children]
        lengths = np.array([np.linalg.norm(axis) for axis in ends - starts])
        radii = np.minimum(0.3 * lengths, 0.025 * size)
    else:  # a lone joint: a small ball
        owners, starts, radii = np.zeros(1, int), positions[:1], np.array([0.05])
        ends = starts + [0, 1e-3, 0]
    all_positions, all_normals, indices = capsules(starts, ends, radii)
    joints = np.zeros((len(all_positions), 4), dtype=np.int32)
    joints[:, 0] = np.repeat(owners, len(all_positions) // len(owners))
    weights = np.zeros(joints.shape, dtype=np.float32)
    weights[:, 0] = 1.0
    return SkinnedMesh(name, all_positions, indices, skeleton,
                       joints=joints, weights=weights, normals=all_normals, base_color=BONE_COLOR)


def capsules(starts, ends, radii, segments: int = 10, rings: int = 3):
    """(positions, normals, indices) of one capsule per row, its axis running from ``starts[k]``
    to ``ends[k]``, all in one mesh (capsule k's vertices after capsule k - 1's). Made at once,
    each capsule's numbers as it alone would get them."""
    starts, ends = np.asarray(starts, float).reshape(-1, 3), np.asarray(ends, float).reshape(-1, 3)
    radii = np.asarray(radii, float).reshape(-1)
    axes = ends - starts
    lengths = np.array([np.linalg.norm(axis) for axis in axes])  # a vector's norm, as for one
    d = axes / lengths[:, None]
    helper = np.where((np.abs(d[:, 2]) < 0.9)[:, None], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0])
    u = np.cross(helper, d)
    u /= np.array([np.linalg.norm(row) for row in u])[:, None]
    v = np.cross(d, u)
    # Latitudes from the start pole to the end pole; the end hemisphere is moved by the length.
    theta = np.concatenate([np.linspace(0, np.pi / 2, rings + 1), np.linspace(np.pi / 2, np.pi, rings + 1)])
    shift = np.zeros((len(starts), 2 * (rings + 1)))
    shift[:, rings + 1:] = lengths[:, None]
    phi = np.linspace(0, 2 * np.pi, segments + 1)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    d, u, v = d[:, None, None], u[:, None, None], v[:, None, None]  # (capsules, 1, 1, 3)
    unit = (-np.cos(t))[..., None] * d + (np.sin(t) * np.cos(p))[..., None] * u + (np.sin(t) * np.sin(p))[..., None] * v
    positions = starts[:, None, None] + radii[:, None, None, None] * unit + shift[:, :, None, None] * d
    rows = len(theta) - 1
    r, s = np.meshgrid(np.arange(rows), np.arange(segments), indexing="ij")
    a = r * (segments + 1) + s
    b = a + segments + 1
    indices = np.stack([a, a + 1, b, a + 1, b + 1, b], axis=-1).reshape(-1)
    vertices = len(theta) * (segments + 1)
    indices = (indices + vertices * np.arange(len(starts))[:, None]).reshape(-1)
    return positions.reshape(-1, 3), unit.reshape(-1, 3), indices
