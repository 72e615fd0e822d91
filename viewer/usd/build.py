"""The Scene of a USD stage as ``read`` gives it.

UsdSkel's rule is glTF's: a skinned mesh's points, moved by its geomBindTransform, are skinned
in the Skeleton's space by ``inverse(bindTransform) x jointSkelTransform(t)`` per joint and then
placed at the Skeleton prim's world transform; the mesh's own transform is ignored. So each
Skeleton becomes a node at its prim's world transform with a node per joint under it, and a
boneviewer Skeleton whose bones are linked to the joint nodes, whose absolute binds are the
bindTransforms, whose rest is the restTransforms; the meshes are placed at the Skeleton node.
USD's layout is boneviewer's (row vectors, translation in row 3), so matrices pass unchanged.

Axes and units: the stage's upAxis (Y or Z; the front is +Z, or -Y for Z up, as Maya and
Blender have them) and metersPerUnit (USD's fallback, 0.01, when the file does not say) are
turned to glTF's by ``model.axes.FileAxes``, folded into the top-level nodes.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from ..model import Bone, NodeTable, Scene, Skeleton, SkinnedMesh, TransformNode
from ..model.animation import AnimationChannel, AnimationClip
from ..model.axes import FileAxes
from ..model.checks import OUT_OF_RANGE, fits
from ..model.material import Material, TextureSlot
from ..model.mesh import Submesh, vertex_normals
from ..model.morph import MorphAnimationClip, MorphTargets, MorphWeightChannel, PointCacheChannel
from ..model.figure import figure_of
from ..model.polygons import checked_indices, hold_unweighted, move_vertex_data, polygon_arrays, strongest_influences
from ..model.transforms import compose, decompose

log = logging.getLogger("boneviewer")
MAX_CACHE_VALUES = 4_000_000  # drawn vertices x samples of one point cache (the reader bounds its points alike)


def file_axes(doc: dict, keep: bool) -> FileAxes:
    up = doc["up"] if doc["up"] in ("y", "z") else "y"
    note = "" if doc["meters_authored"] else "metersPerUnit not in the file: USD's 0.01"
    return FileAxes(up, "+z" if up == "y" else "-y", doc["meters_per_unit"], converted=not keep, note=note)


def build_scene(doc: dict, arrays: dict, path: Path, keep_axes: bool = False) -> Scene:
    axes = file_axes(doc, keep_axes)
    table = NodeTable(16)
    nodes: list[TransformNode] = []
    materials = [_material(spec, arrays, path) for spec in doc["materials"]]
    skeletons = [_skeleton(k, spec, arrays, axes, table, nodes) for k, spec in enumerate(doc["skeletons"])]
    skinned, static, shapes_of, caches = [], [], {}, []
    # Prims whose world transform is animated: (their node, their arrays' prefix).
    moving = [(built.node, f"skeleton{k}") for k, (built, spec) in enumerate(zip(skeletons, doc["skeletons"]))
              if spec.get("moving")]
    for m, spec in enumerate(doc["meshes"]):
        what = f"mesh {spec['path']}"
        corner_points = arrays[f"mesh{m}.points.index"]
        faces = _faces(arrays[f"mesh{m}.counts"], len(corner_points), what)
        attributes = {}
        for label, interpolation in spec["attributes"].items():
            values = arrays[f"mesh{m}.{label}"].astype(np.float64)
            attributes[label] = (values, corner_indices(interpolation, arrays.get(f"mesh{m}.{label}.index"), len(values),
                                                        faces[:, 1], corner_points, f"{what}: {label}"))
        data = polygon_arrays(arrays[f"mesh{m}.points"].astype(np.float64), corner_points, attributes, faces,
                              arrays[f"mesh{m}.face_material"], what)
        if not len(data["indices"]):  # only points or lines: nothing to draw
            log.warning(f"{path}: {what}: no triangles to draw; left out")
            continue
        if spec["left_handed"]:  # USD's leftHanded orientation: the other winding
            data["indices"] = data["indices"].reshape(-1, 3)[:, ::-1].reshape(-1).copy()
        if spec.get("cache") and spec["channels"]:
            # Both would be weights of one set of targets, written by two channels.
            log.warning(f"{path}: {what}: its points are time-sampled and it has blend shapes; the blend shapes are "
                        "played, the points drawn at their first sample")
            spec["cache"] = None
        if spec["skeleton"] is not None:
            skeleton = skeletons[spec["skeleton"]]
            mesh = _skinned_mesh(m, spec, data, arrays, materials, skeleton, what)
            skinned.append(mesh)
            shapes_of.setdefault(spec["skeleton"], []).append((mesh, [c["token"] for c in spec["channels"]]))
        else:
            node = TransformNode(spec["name"], table=table)
            world = np.array(spec["world"], dtype=np.float64).reshape(4, 4)
            _set_matrix(node, world, axes, f"mesh {spec['path']}")
            nodes.append(node)
            if spec.get("moving"):
                moving.append((node, f"mesh{m}"))
            fields = _fields(spec, data, materials)
            if spec.get("cache"):
                fields["morph_targets"] = _cache_targets(m, spec, arrays, data, np.eye(4), what)
            mesh = SkinnedMesh(skeleton=None, world_matrix=node.get_world_matrix(), **fields)
            mesh.world_node = node
            static.append(mesh)
        if spec.get("cache"):
            caches.append((mesh, m, spec["cache"]))
    if not skinned and not static:
        # Skeletons and their motion, no mesh: drawn as a BVH file is (model.figure).
        for built, spec in zip(skeletons, doc["skeletons"]):
            name = path.name if len(skeletons) == 1 else f"{path.name} {spec['name']}"
            skinned.append(figure_of(name, built.joints))
        if not skinned:
            raise ViewerError("the stage has no meshes to show, and no skeleton")
    clips: dict[str, list] = {}
    for k, spec in enumerate(doc["skeletons"]):
        for c, clip in enumerate(spec["clips"]):
            channels, morph = _clip_channels(k, c, clip, skeletons[k], arrays, doc["tcps"], shapes_of.get(k, []))
            entry = clips.setdefault(clip["name"], [[], []])
            entry[0] += channels
            entry[1] += morph
    # Animated prim transforms play on the stage's one timeline: in every clip (one of their own,
    # "stage", when the stage has no SkelAnimation).
    # So do point caches (time-sampled points).
    placed = _placement_channels(moving, arrays, axes, doc["tcps"])
    cached = _cache_channels(caches, arrays, doc["tcps"])
    if (placed or cached) and not clips:
        clips["stage"] = [[], []]
    for entry in clips.values():
        entry[0] += placed
        entry[1] += cached
    animations = [MorphAnimationClip(name, channels, morph) if morph else AnimationClip(name, channels)
                  for name, (channels, morph) in clips.items() if channels or morph]
    scene = Scene(path.name, skinned, nodes=nodes, animations=animations, static_meshes=static)
    scene.file_path = path
    scene.import_axes = axes.as_dict()
    for warning in doc["warnings"] + [m["note"] for m in doc["materials"] if m["note"]]:
        log.warning(f"{path}: {warning}")
    return scene


def _faces(counts: np.ndarray, corners: int, what: str) -> np.ndarray:
    """(F, 2): each polygon's first corner and corner count, from faceVertexCounts."""
    counts = counts.astype(np.int64)
    if (counts < 0).any() or counts.sum() != corners:
        raise ViewerError(f"{what}: faceVertexCounts add up to {counts.sum()}, faceVertexIndices has {corners}")
    return np.column_stack([np.cumsum(counts) - counts, counts])


def corner_indices(interpolation: str, index, count: int, counts: np.ndarray, corner_points: np.ndarray,
                   what: str) -> np.ndarray:
    """Each polygon corner's index into an attribute's ``count`` values, by its interpolation
    (UsdGeom's: one value per corner, per point, per face, or one for all) through its own
    ``index`` when it is indexed."""
    corners = len(corner_points)
    if index is not None:
        index = index.astype(np.int64)
        if len(index) and (index.min() < 0 or index.max() >= count):
            raise ViewerError(f"{what}: an index past its {count} values")
    elements = count if index is None else len(index)  # the values the interpolation walks
    if interpolation == "faceVarying":
        per_corner = np.arange(elements) if index is None else index
    elif interpolation in ("vertex", "varying"):
        if corners and elements <= corner_points.max():
            raise ViewerError(f"{what}: {elements} values for its points ({interpolation})")
        per_corner = corner_points.astype(np.int64) if index is None else index[corner_points]
    elif interpolation == "uniform":
        if elements < len(counts):
            raise ViewerError(f"{what}: {elements} values for {len(counts)} faces (uniform)")
        per_face = np.arange(len(counts)) if index is None else index[:len(counts)]
        per_corner = np.repeat(per_face, counts)
    else:  # constant
        per_corner = np.full(corners, index[0] if index is not None and len(index) else 0, dtype=np.int64)
    if len(per_corner) != corners:
        raise ViewerError(f"{what}: {len(per_corner)} values for {corners} corners ({interpolation})")
    return per_corner


def _set_matrix(node: TransformNode, matrix: np.ndarray, axes: FileAxes, what: str) -> None:
    """A top-level node's local matrix (a prim's world transform), the conversion folded in, as
    TRS: a shear (a turned child of a non-uniformly scaled parent) does not fit one, said once."""
    scaling, quaternion, position = decompose(matrix[None])
    back = compose(scaling, quaternion, position)[0]
    if np.abs(back - matrix).max() > 1e-6 * max(1.0, float(np.abs(matrix).max())):
        log.warning(f"{what}: its world transform is sheared (a turned prim under a non-uniform scale); "
                    "drawn without the shear")
    position, quaternion, scaling = axes.fold(position, quaternion, scaling)
    try:
        node.set_trs(position[0], quaternion[0], scaling[0])
    except ViewerError as error:
        raise ViewerError(f"{what}: {error}") from None


def _placement_channels(moving: list, arrays: dict, axes: FileAxes, tcps: float) -> list:
    """Translation, rotation and scale channels of the nodes placed at animated world transforms
    (each sample's matrix with the conversion folded in, as the node's own)."""
    channels = []
    for node, prefix in moving:
        times = arrays[prefix + ".world_times"] / (tcps if tcps > 0 else 24.0)
        worlds = arrays[prefix + ".world"].astype(np.float64).reshape(-1, 4, 4)
        if not fits(worlds) or not (np.diff(times) > 0).all():
            raise ViewerError(f"{node.name}: its animated transform holds {OUT_OF_RANGE} or times that do not increase")
        scaling, quaternion, position = decompose(worlds)
        position, quaternion, scaling = axes.fold(position, quaternion, scaling)
        _keep_hemisphere(quaternion[:, None])
        for path, values in (("translation", position), ("rotation", quaternion), ("scale", scaling)):
            channels.append(AnimationChannel.of_checked(node, path, times, np.ascontiguousarray(values), "LINEAR"))
    return channels


class _Skeleton:
    """A USD Skeleton as built: the boneviewer Skeleton, its node and its joints' nodes."""

    def __init__(self, skeleton: Skeleton, node: TransformNode, joints: list[TransformNode]):
        self.skeleton, self.node, self.joints = skeleton, node, joints


def _skeleton(k: int, spec: dict, arrays: dict, axes: FileAxes, table: NodeTable, nodes: list) -> _Skeleton:
    joints = spec["joints"]
    rest = arrays[f"skeleton{k}.rest"].astype(np.float64)
    bind = arrays[f"skeleton{k}.bind"].astype(np.float64)
    if not (np.isfinite(rest).all() and np.isfinite(bind).all()):
        raise ViewerError(f"skeleton {spec['path']}: its rest or bind transforms are not finite numbers")
    node = TransformNode(spec["name"], table=table)
    _set_matrix(node, np.array(spec["world"], dtype=np.float64).reshape(4, 4), axes, f"skeleton {spec['path']}")
    nodes.append(node)
    parents = spec["parents"]  # as UsdSkel's topology has them: the nearest ancestor among the joints
    if len(parents) != len(joints) or any(parent >= j for j, parent in enumerate(parents)):
        raise ViewerError(f"skeleton {spec['path']}: a joint comes before its parent in its joints")
    leaf = spec["names"] or [joint.rsplit("/", 1)[-1] for joint in joints]
    taken: dict[str, int] = {}
    for name in leaf:
        taken[name] = taken.get(name, 0) + 1
    names = [joint if taken[short] > 1 else short for joint, short in zip(joints, leaf)]
    skeleton = Skeleton(spec["name"])
    skeleton.batch.reserve(len(joints))
    skeleton.inverse_bind_matrices = np.linalg.inv(bind)  # a singular one: load_usd_file's one line
    scaling, quaternion, position = decompose(rest)
    joint_nodes, bones = [], []
    for j, name in enumerate(names):
        parent = parents[j]
        joint_node = TransformNode(name, node if parent < 0 else joint_nodes[parent], table=table)
        try:
            joint_node.set_trs(position[j], quaternion[j], scaling[j])
            relative = bind[j] if parent < 0 else bind[j] @ np.linalg.inv(bind[parent])
            bone = Bone(name, skeleton, None if parent < 0 else bones[parent], local_matrix=rest[j],
                        rest_matrix=rest[j], bind_matrix=relative, index=j)
        except (ViewerError, np.linalg.LinAlgError) as error:
            raise ViewerError(f"skeleton {spec['path']} joint {joints[j]!r}: {error}") from None
        bone.link_transform_node(joint_node)
        joint_nodes.append(joint_node)
        bones.append(bone)
        nodes.append(joint_node)
    try:
        skeleton.batch.update_bind()  # a chain of binds that is singular is refused here, not when drawn
    except ViewerError as error:
        raise ViewerError(f"skeleton {spec['path']}: {error}") from None
    return _Skeleton(skeleton, node, joint_nodes)


def _fields(spec: dict, data: dict, materials: list) -> dict:
    uv = data.get("uv")
    if uv is not None:
        uv = np.column_stack([uv[:, 0], 1.0 - uv[:, 1]])  # USD's t runs up, glTF's v down
    colors = data.get("colors")
    if colors is not None:
        colors = np.column_stack([colors, np.ones(len(colors))])
    submeshes = []
    for first, count, slot in data["parts"]:
        index = spec["materials"][slot] if 0 <= slot < len(spec["materials"]) else None
        material = materials[index] if index is not None else Material.dielectric()
        if spec["double_sided"] and not material.double_sided:
            material = _copy(material, double_sided=True)
        submeshes.append(Submesh(first, count, name=spec["name"], pbr=material))
    return dict(name=spec["name"], positions=data["positions"], indices=data["indices"], normals=data.get("normals"),
                texcoords=uv, colors=colors, submeshes=submeshes or None)


def _copy(material: Material, **changes) -> Material:
    from dataclasses import replace

    return replace(material, **changes)


def _skinned_mesh(m: int, spec: dict, data: dict, arrays: dict, materials: list, built: _Skeleton,
                  what: str) -> SkinnedMesh:
    """A skinned mesh: its points moved by the geomBindTransform into the Skeleton's space, its
    influences per vertex (the strongest: strongest_influences), blend shapes as morph targets."""
    influences = spec["influences"]
    geom_bind = np.array(influences["geom_bind"], dtype=np.float64).reshape(4, 4)
    move_vertex_data(data, geom_bind)
    points = len(arrays[f"mesh{m}.points"])
    size = influences["size"]
    indices = arrays[f"mesh{m}.joint_indices"].astype(np.int64)
    weights = arrays[f"mesh{m}.joint_weights"].astype(np.float64)
    if size < 1 or len(indices) != len(weights):
        raise ViewerError(f"{what}: {len(indices)} joint indices for {len(weights)} weights")
    if influences["rigid"]:  # constant interpolation: the same influences for every point
        indices, weights = np.tile(indices[:size], points), np.tile(weights[:size], points)
    if len(indices) != points * size:
        raise ViewerError(f"{what}: {len(indices)} joint influences for {points} points of {size} each")
    if not np.isfinite(weights).all():
        raise ViewerError(f"{what}: a joint weight is not a finite number")
    mapping = np.array(influences["map"], dtype=np.int64)
    if len(indices) and (indices.min() < 0 or indices.max() >= len(mapping)):
        bad = int(indices.max() if indices.max() >= len(mapping) else indices.min())
        raise ViewerError(f"{what}: joint index {bad} in primvars:skel:jointIndices, and it has {len(mapping)} joints")
    joint = mapping[indices]
    weights = np.where(joint < 0, 0.0, weights)  # a joint the skeleton does not have moves nothing
    joints, weights, extra = strongest_influences(np.repeat(np.arange(points), size), np.maximum(joint, 0), weights,
                                                  points)
    vertex = data["vertex_point"]
    fields = _fields(spec, data, materials)
    if spec["channels"]:
        fields["morph_targets"] = _morph_targets(m, spec, arrays, points, vertex, geom_bind, what)
    elif spec.get("cache"):  # the samples skinned as UsdSkel skins the points at each time
        fields["morph_targets"] = _cache_targets(m, spec, arrays, data, geom_bind, what)
    joints, weights = joints[vertex], weights[vertex]
    held = hold_unweighted(built.skeleton, spec["name"], joints, weights)
    if held:
        log.info(f"mesh {spec['path']}: {held} vertices no joint moves stay where they were bound")
    mesh = SkinnedMesh(skeleton=built.skeleton, joints=joints.astype(np.int32), weights=weights,
                       world_matrix=built.node.get_world_matrix(), extra_influences=extra[vertex], **fields)
    mesh.world_node = built.node
    return mesh


def _morph_targets(m, spec, arrays, points, vertex, geom_bind, what) -> MorphTargets:
    """The blend shapes as morph targets, their offsets moved by the geomBindTransform's linear
    part as the points are."""
    linear = geom_bind[:3, :3]
    normal_matrix = np.linalg.inv(linear).T
    count = len(spec["channels"])
    positions = np.zeros((count, points, 3))
    normals = np.zeros((count, points, 3))
    for t, channel in enumerate(spec["channels"]):
        k = channel["index"]
        offsets = arrays[f"mesh{m}.shape{k}.offsets"].astype(np.float64)
        where = arrays.get(f"mesh{m}.shape{k}.points")
        where = np.arange(len(offsets)) if where is None else checked_indices(where, points, what, "point")
        if len(where) != len(offsets):
            raise ViewerError(f"{what}: blend shape {channel['name']!r} has {len(offsets)} offsets for "
                              f"{len(where)} points")
        positions[t, where] = offsets @ linear
        if f"mesh{m}.shape{k}.normals" in arrays:
            normals[t, where] = arrays[f"mesh{m}.shape{k}.normals"].astype(np.float64) @ normal_matrix
    return MorphTargets(positions[:, vertex], normals[:, vertex], names=[c["name"] for c in spec["channels"]],
                        what=f"mesh {spec['name']!r}")


def _cache_targets(m: int, spec: dict, arrays: dict, data: dict, matrix: np.ndarray, what: str) -> MorphTargets:
    """A point cache's samples after the first as morph targets (PointCacheChannel): each drawn
    vertex's point at that sample moved by ``matrix`` (the geomBindTransform, as the points
    were), less the vertex's position; normal offsets from the sample's normals (the file's when
    they are time-sampled too, else, for a mesh drawn with computed normals, computed from the
    sample's triangles as they are for the first; the file's normals that do not change, none)."""
    samples = arrays[f"mesh{m}.cache"]
    times = arrays[f"mesh{m}.cache_times"]
    vertex = data["vertex_point"]
    if samples.ndim != 3 or samples.shape[1:] != (len(arrays[f"mesh{m}.points"]), 3) or len(times) != len(samples):
        raise ViewerError(f"{what}: its point cache's samples do not match its points")
    if (len(samples) - 1) * len(vertex) > MAX_CACHE_VALUES:  # corners split by normals or UVs: more vertices
        raise ViewerError(f"{what}: a point cache of {len(samples)} samples of {len(vertex)} drawn vertices, more than "
                          f"{MAX_CACHE_VALUES} in all")
    if not fits(samples):
        raise ViewerError(f"{what}: a time sample of its points holds {OUT_OF_RANGE}")
    linear = matrix[:3, :3].astype(np.float32)
    base = data["positions"].astype(np.float32)
    positions = samples[1:, vertex] @ linear + matrix[3, :3].astype(np.float32)
    normals = None
    if f"mesh{m}.cache_normals" in arrays and data.get("normals") is not None:
        sampled = arrays[f"mesh{m}.cache_normals"][1:, vertex] @ np.linalg.inv(matrix[:3, :3]).T.astype(np.float32)
        if not fits(sampled):
            raise ViewerError(f"{what}: a time sample of its normals holds {OUT_OF_RANGE}")
        length = np.linalg.norm(sampled, axis=-1, keepdims=True)
        normals = np.divide(sampled, length, out=np.zeros_like(sampled), where=length > 0) - data["normals"]
    elif data.get("normals") is None:
        first = vertex_normals(base, data["indices"])
        normals = np.stack([vertex_normals(sample, data["indices"]) - first for sample in positions])
    names = [f"time {time:g}" for time in times[1:]]
    return MorphTargets(positions - base, normals, names=names, what=what)


def _cache_channels(caches: list, arrays: dict, tcps: float) -> list:
    """A PointCacheChannel per mesh with a point cache, its samples at time code / timeCodesPerSecond."""
    rate = tcps if tcps > 0 else 24.0
    channels = []
    for mesh, m, _ in caches:
        times = arrays[f"mesh{m}.cache_times"] / rate
        if not (np.isfinite(times).all() and (np.diff(times) > 0).all()):
            raise ViewerError(f"mesh {mesh.name!r}: its point cache's time samples do not increase")
        # Linear between samples, the first held before and the last after, as USD reads points.
        channels.append(PointCacheChannel(mesh, times, "LINEAR", name=f"{mesh.name} point cache"))
    return channels


def _clip_channels(k: int, c: int, clip: dict, built: _Skeleton, arrays: dict, tcps: float, shaped: list):
    """The channels of skeleton ``k``'s clip ``c``: each animated joint's translation, rotation and
    scale at every sample (seconds = time code / timeCodesPerSecond), and the meshes' blend-shape
    weights."""
    label = f"skeleton{k}.clip{c}"
    rate = tcps if tcps > 0 else 24.0
    channels, morph = [], []
    if label + ".times" in arrays:
        times = arrays[label + ".times"] / rate
        position, quaternion, scaling = (arrays[f"{label}.{field}"].astype(np.float64)
                                         for field in ("translations", "rotations", "scales"))
        if not (fits(position) and fits(quaternion) and fits(scaling)):
            raise ViewerError(f"animation {clip['path']}: a joint transform holds {OUT_OF_RANGE}")
        if not (np.isfinite(times).all() and (np.diff(times) > 0).all()):
            raise ViewerError(f"animation {clip['path']}: its time samples do not increase")
        length = np.linalg.norm(quaternion, axis=-1, keepdims=True)
        if not (length > 1e-6).all():
            raise ViewerError(f"animation {clip['path']}: a joint rotation is a zero quaternion")
        quaternion /= length  # as UsdSkel turns them into matrices: the rotation they stand for
        _keep_hemisphere(quaternion)
        # Joint-major copies, so that each joint's keys are a contiguous view (one copy a field).
        fields = [(path, np.ascontiguousarray(values.transpose(1, 0, 2)))
                  for path, values in (("translation", position), ("rotation", quaternion), ("scale", scaling))]
        for a, joint in enumerate(clip["joints"]):
            if joint < 0:
                continue
            node = built.joints[joint]
            for path, values in fields:
                # Checked above for the whole clip: finite, times increasing, one value a sample.
                channels.append(AnimationChannel.of_checked(node, path, times, values[a], "LINEAR"))
    if clip["shapes"] and label + ".weights" in arrays:
        times = arrays[label + ".weight_times"] / rate
        weights = arrays[label + ".weights"].astype(np.float64)
        for mesh, names in shaped:
            columns = [clip["shapes"].index(name) if name in clip["shapes"] else -1 for name in names]
            if all(column < 0 for column in columns):
                continue
            values = np.tile(mesh.morph_weights, (len(times), 1))
            for t, column in enumerate(columns):
                if column >= 0:
                    values[:, t] = weights[:, column]
            morph.append(MorphWeightChannel([mesh], times, values, name=f"{clip['name']} weights"))
    return channels, morph


def _keep_hemisphere(quaternions: np.ndarray) -> None:
    """Flip signs so each key is in the hemisphere of the one before (the same rotations, and
    the keys then slerp the short way, as UsdSkel interpolates them)."""
    if len(quaternions) < 2:
        return
    dots = np.einsum("fjk,fjk->fj", quaternions[1:], quaternions[:-1])
    flips = np.cumsum(dots < 0, axis=0) % 2
    quaternions[1:][flips.astype(bool)] *= -1.0


def _material(spec: dict, arrays: dict, path: Path) -> Material:
    from ..images import EncodedImage

    color = np.clip(np.array(spec["color"] + [spec["opacity"]], dtype=np.float64), 0.0, 1.0)
    material = Material(name=spec["name"], base_color_factor=color,
                        metallic_factor=float(np.clip(spec["metallic"], 0, 1)),
                        roughness_factor=float(np.clip(spec["roughness"], 0, 1)),
                        emissive_factor=np.clip(np.array(spec["emissive"], dtype=np.float64), 0.0, None))
    texture = spec["texture"]
    if texture is not None:
        if texture["bytes"]:
            material.base_color_texture = TextureSlot(EncodedImage(path, 0, arrays[texture["bytes"]].tobytes(), "",
                                                                   f"material {spec['name']!r}"))
            material.base_color_factor = np.array([1.0, 1.0, 1.0, color[3]])
        elif texture.get("outside"):
            log.warning(f"{path}: material {spec['name']!r}: texture {texture['path']!r} is outside the model's "
                        "folder; drawn without it")
        else:
            log.warning(f"{path}: material {spec['name']!r}: texture {texture['path']!r} not found; drawn without it")
    if color[3] < 1.0:
        material.alpha_mode = "BLEND"
    return material
