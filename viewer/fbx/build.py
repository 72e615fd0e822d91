"""The Scene of an FBX file as ``read`` gives it: a TransformNode per FBX node, one Skeleton per
set of skins that agree on their bones' binds (bones linked to the nodes, as for glTF), the
meshes, the materials and a clip per animation stack.

Skinning follows FBX's rule, which is glTF's: a skinned vertex lands at
``v @ geometry_to_bone(cluster) @ world(bone)``, the cluster's geometry-to-bone matrix being
the inverse bind (taken from the skin deformer, never from a bind pose). So, as for glTF, a
joint's absolute inverse bind is that matrix and the mesh is placed at the world matrix of
its skeleton root's parent; the skinned mesh node's own transform is ignored.

Axes and units: the file's (up, front, unit) are turned to glTF's by ``model.axes`` and folded
into the top-level nodes and their keys (a rotation and a uniform scale fold into a TRS
exactly), so no node is added and a bone keeps its name; ``file_axes=True`` keeps the file's.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from ..model import Bone, NodeTable, Scene, Skeleton, SkinnedMesh, TransformNode
from ..model.animation import AnimationChannel, AnimationClip
from ..model.arrays import distinct
from ..model.axes import FileAxes, axis_vector
from ..model.figure import figure_of
from ..model.material import Material, TextureSlot
from ..model.mesh import Submesh
from ..model.morph import MorphAnimationClip, MorphTargets, MorphWeightChannel
from ..model.polygons import hold_unweighted, move_vertex_data
from .meshes import mesh_arrays

log = logging.getLogger("boneviewer")

# ufbx's CoordinateAxis values, in order.
AXIS_NAMES = ("+x", "-x", "+y", "-y", "+z", "-z")
PATHS = {"t": "translation", "r": "rotation", "s": "scale"}


class Conversion(FileAxes):
    """An FBX file's axes (ufbx's CoordinateAxes) and unit, and what the loader does with them."""

    def __init__(self, doc: dict, file_axes: bool):
        axes = doc["axes"]
        known = all(0 <= axes[k] < 6 for k in ("right", "up", "front"))
        up, front, right = (AXIS_NAMES[axes[k]] for k in ("up", "front", "right")) if known else ("+y", "+z", "+x")
        if axis_vector(up) @ axis_vector(front) != 0:  # not axes: kept as they are
            up, front, right, known = "+y", "+z", "+x", False
        unit = doc["unit_meters"] if doc["unit_meters"] > 0 else 0.01  # FBX's default: centimetres
        super().__init__(up, front, unit, converted=not file_axes)
        self.right = right
        # A left-handed file (right is not up x front) is drawn mirrored: FBX files practically
        # never are; said once.
        self.left_handed = known and not np.allclose(np.cross(axis_vector(up), axis_vector(front)), axis_vector(right))

    def as_dict(self) -> dict:
        return {**super().as_dict(), "right": self.right}


def build_scene(doc: dict, arrays: dict, path: Path, file_axes: bool = False) -> Scene:
    conversion = Conversion(doc, file_axes)
    specs = doc["nodes"]
    nodes = _transform_nodes(specs, conversion)
    world = {i: node.get_world_matrix() for i, node in nodes.items()}
    materials = [_material(spec, arrays, path) for spec in doc["materials"]]

    groups: list[dict] = []  # skeletons: {"binds": {node: inverse bind}, "skeleton", "rows", "placement"}
    built = []  # (spec, its arrays, its skeleton group or None)
    for m, spec in enumerate(doc["meshes"]):
        data = mesh_arrays(spec, arrays, f"mesh{m}")
        if not len(data["indices"]):  # no triangles: nothing to draw (points, lines or no polygons)
            spec["notes"].append("no triangles to draw; left out")
            built.append((spec, data, None))
            continue
        group = None
        if any(node in nodes for node in spec["clusters"]):
            place = _to_bind_world(data, conversion)
            group = _group_for(groups, spec["clusters"], data["binds"], nodes)
            _follow_mesh_nodes(group, spec, data, place, nodes)
        built.append((spec, data, group))
    for group in groups:
        _skeleton(group, specs, nodes, world, len(groups))
    for _, data, group in built:
        if group is not None:
            _to_placement(data, group)

    skinned, static, by_channel = [], [], {}
    for spec, data, group in built:
        for instance in spec["instances"]:
            if instance["node"] not in nodes or not len(data["indices"]):
                continue
            mesh = _mesh(instance["name"], spec, data, materials, group, world, instance["node"])
            if group is not None:
                mesh.world_node = None if group["placement"] is None else nodes[group["placement"]]
                skinned.append(mesh)
            else:
                mesh.world_node = nodes[instance["node"]]
                static.append(mesh)
            for k, channel in enumerate(spec["channels"]):
                by_channel.setdefault(channel["element_id"], []).append((mesh, k))
    if not skinned and not static:
        # A skeleton and no mesh (a take from MotionBuilder, Mixamo's "without skin", a mocap
        # delivery): drawn as a BVH file is, its joints the LimbNodes.
        try:
            figure = figure_of(path.name, [nodes[i] for i, spec in enumerate(specs) if spec.get("bone") and i in nodes])
        except ViewerError as error:
            raise ViewerError(f"the skeleton: {error}") from None
        if figure is None:
            raise ViewerError("the file has no meshes to show, and no skeleton")
        skinned.append(figure)
    animations = [_clip(k, stack, nodes, specs, arrays, conversion, by_channel)
                  for k, stack in enumerate(doc["stacks"])]
    animations = [clip for clip in animations if clip is not None]
    scene = Scene(path.name, skinned, nodes=list(nodes.values()), animations=animations, static_meshes=static)
    scene.file_path = path
    scene.import_axes = conversion.as_dict()
    for warning in _warnings(doc, built, conversion):
        log.warning(f"{path}: {warning}")
    return scene


def _warnings(doc: dict, built: list, conversion: Conversion) -> list[str]:
    said = list(dict.fromkeys(doc["warnings"]))  # ufbx's, each once
    if conversion.left_handed:
        said.append(f"left-handed axes (right {conversion.right}, up {conversion.up}, front {conversion.front}): "
                    "drawn mirrored")
    for spec, data, _ in built:
        notes = list(spec["notes"])
        if data["faces_skipped"]:
            notes.append(f"{data['faces_skipped']} points or lines not drawn")
        said += [f"mesh {spec['mesh_name']!r}: {note}" for note in notes]
    return said


def _transform_nodes(specs: list[dict], conversion: Conversion) -> dict[int, TransformNode]:
    """A TransformNode per FBX node but ufbx's root, parents first, keyed by the node's index."""
    table = NodeTable(len(specs))
    nodes: dict[int, TransformNode] = {}
    depth = _depths(specs)
    for i in sorted((i for i, spec in enumerate(specs) if not spec["root"]), key=depth.__getitem__):
        spec = specs[i]
        parent = spec["parent"]
        node = TransformNode(spec["name"] or f"node{i}", nodes.get(parent), table=table)
        t, r, s = (np.array(spec[k], dtype=np.float64) for k in ("t", "r", "s"))
        if parent < 0:
            t, r, s = conversion.fold(t, r, s)
        try:
            node.set_trs(t, r, s)
        except ViewerError as error:
            raise ViewerError(f"node {node.name!r}: {error}") from None
        nodes[i] = node
    return nodes


def _depths(specs: list[dict]) -> list[int]:
    depth = [-1] * len(specs)
    for i in range(len(specs)):
        chain, n = [], i
        while n >= 0 and depth[n] < 0:
            chain.append(n)
            n = specs[n]["parent"]
            if len(chain) > len(specs):
                raise ViewerError("the node hierarchy has a cycle")
        base = depth[n] if n >= 0 else -1
        for k in reversed(chain):
            base += 1
            depth[k] = base
    return depth


def _to_bind_world(data: dict, conversion: Conversion) -> None:
    """A skinned mesh's vertices placed where they were bound (the deformer's geometry-to-world,
    then the axis conversion) and its inverse binds taken back by as much: the same skinned
    points, now with glTF's meaning (vertices in the world at bind, inverse binds the inverses of
    the joints' world matrices at bind), so that the binds compare with the joints' rest pose and
    a character's meshes agree on their bones' binds."""
    place = data["bind_world"] @ conversion.matrix
    move_vertex_data(data, place)
    data["binds"] = np.linalg.inv(place) @ data["binds"]
    return place


def _follow_mesh_nodes(group: dict, spec: dict, data: dict, place: np.ndarray, nodes: dict) -> None:
    """A skinned mesh's vertices that no cluster moves (all weights zero, or only clusters without
    a bone) follow the mesh's own node, as Maya, Blender and ufbx draw them: each node that shows
    the mesh joins the skeleton as a joint whose bind is the mesh's world at bind (its inverse bind
    takes a vertex back into the mesh's own space), so that such a vertex lands at
    ``v @ world(mesh node)`` in every pose, on the GPU and the CPU alike. A node already a joint
    with another bind keeps its bind; the vertices then stay where they were bound (said once)."""
    valid = np.array([node in nodes for node in spec["clusters"]] + [False])
    joints = np.where(data["joints"] < len(spec["clusters"]), data["joints"], len(spec["clusters"]))
    data["unweighted"] = still = ~((data["weights"] > 0) & valid[joints]).any(axis=1)
    if not still.any():
        return
    bind = np.linalg.inv(place)
    followers = group.setdefault("followers", {})
    for instance in spec["instances"]:
        node = instance["node"]
        if node not in nodes:
            continue
        held = group["binds"].get(node, followers.get(node))
        if held is not None and not np.allclose(held, bind, rtol=1e-5, atol=1e-6 * _size(bind)):
            spec["notes"].append(f"node {nodes[node].name!r} is a bone too: the vertices no bone moves stay "
                                 "where they were bound")
            continue
        followers[node] = bind
        data.setdefault("follow", set()).add(node)


def _group_for(groups: list[dict], clusters: list[int], binds: np.ndarray, nodes: dict) -> dict:
    """The skeleton a skin joins: the first of the same armature (its bones under the same
    top-level node) whose bones it shares have the same binds (FBX keeps a skin per mesh; a
    character's meshes, an eye bound to the head bone alone among them, agree), else a new one."""
    mine = {node: bind for node, bind in zip(clusters, binds) if node in nodes}
    top = _top(nodes[next(iter(mine))]) if mine else None
    for group in groups:
        shared = [node for node in mine if node in group["binds"]]
        if group["top"] is top and all(np.allclose(mine[n], group["binds"][n], rtol=1e-5,
                                                   atol=1e-6 * _size(mine[n])) for n in shared):
            for node, bind in mine.items():
                group["binds"].setdefault(node, bind)
            return group
    group = {"binds": dict(mine), "top": top}
    groups.append(group)
    return group


def _top(node: TransformNode) -> TransformNode:
    while node.parent is not None:
        node = node.parent
    return node


def _size(matrix: np.ndarray) -> float:
    return float(np.abs(matrix).max()) or 1.0


def _skeleton(group: dict, specs: list[dict], nodes: dict, world: dict, count: int) -> None:
    """The group's Skeleton: its joints (every node a cluster names) and the nodes between them
    and their nearest common ancestor, bones linked to the nodes, parents first.

    The bones' rest and bind are the skin's bind pose (a joint's world at bind, from its
    cluster; a node between joints keeps its place under its parent), relative to the skeleton
    root's parent, where the meshes are placed; the nodes keep the file's own pose (Blender, for
    one, writes the pose at the frame it exported from, not the bind pose)."""
    followers = group.get("followers", {})
    for node, bind in followers.items():  # mesh nodes that vertices follow (see _follow_mesh_nodes)
        held = group["binds"].setdefault(node, bind)
        if held is not bind and not np.allclose(held, bind, rtol=1e-5, atol=1e-6 * _size(bind)):
            followers[node] = None  # a later skin's joint with another bind: its vertices stay where bound
    joints = list(group["binds"])
    parent_of = {i: spec["parent"] for i, spec in enumerate(specs)}
    depth = _depths(specs)
    chains = []
    for joint in joints:
        chain, n = [], joint
        while n >= 0 and not specs[n]["root"]:
            chain.append(n)
            n = parent_of[n]
        chains.append(chain[::-1])  # top first
    common = 0
    while all(len(chain) > common for chain in chains) and len({chain[common] for chain in chains}) == 1:
        common += 1
    root = chains[0][common - 1] if common else None
    members = {n for chain in chains for n in (chain[common - 1:] if common else chain)}
    order = sorted(members, key=lambda n: (depth[n], n))
    placement = None if root is None or parent_of[root] < 0 else parent_of[root]
    # The binds (world at bind -> bone) taken to the placement's space: that space -> bone.
    to_placement = np.eye(4) if placement is None else world[placement]
    group["from_world"] = np.linalg.inv(to_placement)
    rows = {node: k for k, node in enumerate(joints)}
    inverse_binds = to_placement @ np.array([group["binds"][node] for node in joints]).reshape(-1, 4, 4)
    try:
        absolute_binds = np.linalg.inv(inverse_binds)
    except np.linalg.LinAlgError:
        bad = next(node for node in joints if abs(np.linalg.det(group["binds"][node])) < 1e-300)
        raise ViewerError(f"bone {specs[bad]['name']!r}: its cluster's bind matrix is singular") from None
    absolute: dict[int, np.ndarray] = {}
    for n in order:  # a node between joints: at its place under its parent at bind
        parent = parent_of[n] if n != root else -1
        local = nodes[n].get_local_matrix()
        if n in rows:
            absolute[n] = absolute_binds[rows[n]]
        else:
            absolute[n] = local @ absolute[parent] if parent in absolute else local
    name = specs[root]["name"] if root is not None and count > 1 else "skeleton"
    skeleton = Skeleton(name)
    skeleton.batch.reserve(len(order))
    skeleton.inverse_bind_matrices = inverse_binds
    bones: dict[int, Bone] = {}
    for n in order:
        parent = parent_of[n] if n != root else -1
        bind = absolute[n] if parent not in bones else absolute[n] @ np.linalg.inv(absolute[parent])
        try:
            bone = Bone(nodes[n].name, skeleton, bones.get(parent), local_matrix=nodes[n].get_local_matrix(),
                        rest_matrix=bind, bind_matrix=bind, index=rows.get(n, -1))
        except (ViewerError, np.linalg.LinAlgError) as error:
            raise ViewerError(f"bone {nodes[n].name!r}: {error}") from None
        bone.link_transform_node(nodes[n])
        bone.set_file_pose_matrix(nodes[n].get_local_matrix())  # what is drawn as loaded (retargeting's reference)
        bones[n] = bone
    try:
        skeleton.batch.update_bind()  # a chain of binds that is singular is refused here, not when drawn
    except ViewerError as error:
        raise ViewerError(str(error)) from None
    group.update(skeleton=skeleton, rows=rows, placement=placement)


def _to_placement(data: dict, group: dict) -> None:
    """A skinned mesh's vertices (in the world at bind) in its skeleton's placement space."""
    if not np.array_equal(group["from_world"], np.eye(4)):
        move_vertex_data(data, group["from_world"])


def _mesh(name: str, spec: dict, data: dict, materials: list, group: dict | None, world: dict,
          node: int) -> SkinnedMesh:
    uv = data.get("uv")
    if uv is not None:
        uv = np.column_stack([uv[:, 0], 1.0 - uv[:, 1]])  # FBX's V runs up, glTF's down
    submeshes = []
    for first, count, slot in data["parts"]:
        material = materials[spec["materials"][slot]] if 0 <= slot < len(spec["materials"]) else Material()
        submeshes.append(Submesh(first, count, name=name, pbr=material))
    morph = None
    if "morph_positions" in data:
        morph = MorphTargets(data["morph_positions"], data["morph_normals"],
                             names=[channel["name"] for channel in spec["channels"]],
                             weights=[channel["weight"] for channel in spec["channels"]], what=f"mesh {name!r}")
    fields = dict(name=name, positions=data["positions"], indices=data["indices"], normals=data.get("normals"),
                  texcoords=uv, colors=data.get("colors"), submeshes=submeshes or None, morph_targets=morph)
    if group is None:
        return SkinnedMesh(skeleton=None, world_matrix=world[node], **fields)
    rows = np.array([group["rows"].get(n, -1) for n in spec["clusters"]], dtype=np.int64)
    joints = rows[data["joints"]]
    weights = np.where(joints < 0, 0.0, data["weights"])  # a cluster without a bone moves nothing
    joints = np.maximum(joints, 0)
    follows = node in data.get("follow", ()) and group["followers"][node] is not None
    row = group["rows"].get(node) if follows else None
    if row is not None:  # the vertices no bone moves follow the mesh's node
        still = data["unweighted"]
        joints[still, 0], weights[still, 0] = row, 1.0
    held = hold_unweighted(group["skeleton"], name, joints, weights)
    if held:
        log.info(f"mesh {name!r}: {held} vertices no bone moves stay where they were bound")
    placement = group["placement"]
    return SkinnedMesh(skeleton=group["skeleton"], joints=joints.astype(np.int32), weights=weights,
                       world_matrix=None if placement is None else world[placement],
                       extra_influences=data["extra"], **fields)


def _clip(k: int, stack: dict, nodes: dict, specs: list[dict], arrays, conversion: Conversion, by_channel: dict):
    """The clip of animation stack ``k``, named as the stack, at the file's own times."""
    channels = []
    for n in stack["nodes"]:
        if n not in nodes:
            continue
        keys = {p: (arrays[f"stack{k}.node{n}.{p}.times"], arrays[f"stack{k}.node{n}.{p}.values"]) for p in PATHS}
        if specs[n]["parent"] < 0 and not conversion.identity:
            keys = _folded_keys(keys, conversion)
        for p, (times, values) in keys.items():
            if len(times):
                times, values = _held_to(times, values, stack["end"])
                channels.append(AnimationChannel(nodes[n], PATHS[p], times, values))
    morph_channels = []
    by_mesh: dict[int, list] = {}
    for element in stack["weights"]:
        for mesh, target in by_channel.get(element, ()):
            by_mesh.setdefault(id(mesh), [mesh, []])[1].append(
                (target, arrays[f"stack{k}.weight{element}.times"], arrays[f"stack{k}.weight{element}.values"] / 100.0))
    for mesh, keyed in by_mesh.values():
        times = distinct(np.concatenate([t for _, t, _ in keyed]))
        values = np.tile(mesh.morph_weights, (len(times), 1))
        for target, t, v in keyed:
            values[:, target] = np.interp(times, t, v)
        times, values = _held_to(times, values, stack["end"])
        morph_channels.append(MorphWeightChannel([mesh], times, values, name=f"{stack['name']} weights"))
    if not channels and not morph_channels:
        return None
    if morph_channels:
        return MorphAnimationClip(stack["name"], channels, morph_channels)
    return AnimationClip(stack["name"], channels)


def _held_to(times: np.ndarray, values: np.ndarray, end: float):
    """Keys that end before the stack does held to its end (an FBX curve holds its last value), so
    the clip lasts as long as the stack and loops at its length. An end within a microsecond of
    the last key is that key (a stack end stored as a float32: a key added there would be a
    second key at the same time once written as glTF's float32 times)."""
    if not times[-1] < end - 1e-6:
        return times, values
    return np.append(times, end), np.concatenate([values, values[-1:]])


def _folded_keys(keys: dict, conversion: Conversion) -> dict:
    """A top-level node's keys with the conversion folded in, path by path (a rotation and a
    uniform scale fold into each alone)."""
    (tt, tv), (rt, rv), (st, sv) = keys["t"], keys["r"], keys["s"]
    t, _, _ = conversion.fold(tv, np.tile([0.0, 0.0, 0.0, 1.0], (len(tv), 1)), np.ones_like(tv))
    _, r, _ = conversion.fold(np.zeros((len(rv), 3)), rv, np.ones((len(rv), 3)))
    _, _, s = conversion.fold(np.zeros_like(sv), np.tile([0.0, 0.0, 0.0, 1.0], (len(sv), 1)), sv)
    return {"t": (tt, t), "r": (rt, r), "s": (st, s)}


def _material(spec: dict, arrays, path: Path) -> Material:
    color = np.clip(np.array(spec["color"], dtype=np.float64), 0.0, 1.0)
    material = Material.dielectric(color, name=spec["name"])
    image = _texture_image(spec, arrays, path)
    if image is not None:
        material.base_color_texture = TextureSlot(image)
        material.base_color_factor = np.array([1.0, 1.0, 1.0, color[3]])
    if color[3] < 1.0:
        material.alpha_mode = "BLEND"
    return material


def _texture_image(spec: dict, arrays, path: Path):
    """The base colour texture's image (deferred: decoded when first drawn): the file's embedded
    bytes, else the file it names, looked for as Blender and three.js look (its relative path,
    then its name beside the model), never outside the model's folder."""
    from ..images import EncodedImage

    texture = spec["texture"]
    if texture is None:
        return None
    used_by = f"material {spec['name']!r}"
    if spec["texture_embedded"]:
        return EncodedImage(path, 0, arrays[spec["texture_embedded"]].tobytes(), "", used_by)
    folder = path.parent.resolve()
    names = [texture["relative"], texture["filename"], texture["absolute"]]
    candidates = [folder / names[0]] + [folder / Path(name.replace("\\", "/")).name for name in names if name]
    for candidate in candidates:
        try:
            resolved = candidate.resolve()
        except OSError:
            continue
        if resolved.is_file() and folder in resolved.parents:
            try:
                return EncodedImage(path, 0, resolved.read_bytes(), "", used_by)
            except OSError:
                continue
    shown = texture["relative"] or texture["filename"]
    if shown and shown != ".":
        log.warning(f"{path}: {used_by}: texture {shown!r} not found in the model's folder; drawn without it")
    return None
