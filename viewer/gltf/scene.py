"""The Scene of a checked glTF file: a TransformNode per node, a Skeleton per skin whose bones
are linked to the joint nodes (Babylon's glTF mode), the meshes placed, and the clips.

Skinning follows the seed's rule, as Babylon's loader does: a bone's absolute matrix is its
joint's transform relative to the parent of the skeleton root, the absolute inverse bind of a
joint is its inverse bind matrix, and the mesh is placed at the world matrix of the skeleton
root's parent. So final x mesh world = inverseBind x world(joint), which is glTF's joint
matrix, and the skinned mesh node's own transform is ignored, as glTF requires.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import ViewerError
from ..model import Bone, NodeTable, Scene, Skeleton, TransformNode, transforms
from ..model.batch import SINGULAR_BIND
from ..model.checks import LIMIT_TEXT, MAX_MAGNITUDE, fits
from ..model.figure import figure_of
from ..model.light import PunctualLight
from ..model.mesh import bounds, place_points, skin_positions
from .animation import read_clips
from .constraints import read_constraints
from .container import GltfFile
from .meshes import read_mesh
from .springs import read_springs
from .validate import NodeHierarchy
from .vrm import read_vrm

IDENTITY_16 = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]


class Skin(NamedTuple):
    """A glTF skin as built: its Skeleton, the index of the node its meshes are placed at (the
    skeleton root's parent, None for the world origin) and its joint count."""

    skeleton: Skeleton
    placement: int | None
    joint_count: int


def build_scene(file: GltfFile, scene: int | None = None) -> Scene:
    """The Scene of ``file``: glTF scene ``scene``, else the file's default scene, else its
    first (all nodes when it has none). Meshes on nodes outside it are not shown. Tolerated
    flaws are logged once it is built."""
    document = file.document
    specs = document["nodes"]
    hierarchy = file.hierarchy
    chosen = _chosen_scene(file, scene)
    shown = None if chosen is None else _scene_nodes(file, chosen, hierarchy)
    nodes = _transform_nodes(file, specs, hierarchy)
    vrm = read_vrm(file)
    if vrm is not None and vrm.turn:  # VRM 0.x faces -Z: half a turn about +Y, folded into the top nodes
        _turn_half([nodes[i] for i in range(len(nodes)) if i not in hierarchy.parent])
    local = _local_matrices(nodes)
    world = _world_matrices(file, nodes, local, hierarchy)

    skeletons: dict[int, Skin] = {}
    skinned, static, skins_of = [], [], []
    for i, spec in enumerate(specs):
        mesh_index = spec.get("mesh")
        if mesh_index is None or (shown is not None and i not in shown):
            continue
        skin_index = spec.get("skin")
        if skin_index is not None:
            if skin_index not in skeletons:
                skeletons[skin_index] = _skeleton(file, skin_index, nodes, local, hierarchy)
            skeleton, placement, joint_count = skeletons[skin_index]
            mesh = read_mesh(file, mesh_index, i, skeleton, joint_count, skin_index,
                             world_matrix=None if placement is None else world[placement])
            mesh.world_node = None if placement is None else nodes[placement]
            skinned.append(mesh)
            skins_of.append(skin_index)
        else:
            mesh = read_mesh(file, mesh_index, i, world_matrix=world[i])
            mesh.world_node = nodes[i]
            static.append(mesh)
    figure = None
    if not skinned and not static:
        # A skeleton and its motion, no mesh: drawn as a BVH file is (model.figure), its joints
        # the skins' joints, else the nodes the animations move.
        figure = figure_of(file.path.name, [nodes[j] for j in _figure_joints(file.document, shown)])
        if figure is None:
            where = "" if chosen is None else f" in scene {chosen}"
            raise file.error(f"the file has no meshes to show{where}, and no skeleton")
        skinned.append(figure)
    morphed: dict[int, list] = {}
    for mesh in skinned + static:
        if mesh.morph_targets is not None:
            morphed.setdefault(mesh.node_index, []).append(mesh)
    animations = read_clips(file, nodes, morphed)
    if vrm is not None and vrm.turn:
        _turn_half_keys(animations, {id(nodes[i]) for i in range(len(nodes)) if i not in hierarchy.parent})
    rest_bounds = None if figure is not None else _rest_bounds(file, skinned, skins_of, static, world, skeletons)
    try:
        scene = Scene(file.path.name, skinned, nodes=nodes, animations=animations, static_meshes=static,
                      rest_bounds=rest_bounds)
    except ViewerError as error:  # the model's own checks
        raise file.error(str(error)) from None
    scene.file_scenes = [spec.get("name") or f"scene {i}" for i, spec in enumerate(document["scenes"])]
    scene.file_scene = chosen
    scene.file_path = file.path
    scene.file_extensions = list(document["extensionsUsed"])  # what a writer must say it drops
    scene.lights = _lights(file, nodes, shown)
    if vrm is not None:
        _vrm(scene, vrm, nodes, morphed)
    read_constraints(file, scene, nodes)
    read_springs(file, scene, nodes)
    file.log_warnings()
    return scene


HALF_TURN_Y = np.array([0.0, 1.0, 0.0, 0.0])  # xyzw: 180 degrees about +Y


def _turn_half(top: list[TransformNode]) -> None:
    """Each top-level node turned half a turn about +Y after its own transform (a VRM 0.x model
    faces -Z; glTF's face +Z), as the other readers fold their axis conversion: no node added."""
    for node in top:
        row, table = node.table_row, node.table
        position, quaternion, scaling = table.position[row].copy(), table.quaternion[row].copy(), table.scaling[row].copy()
        node.set_trs(position * (-1.0, 1.0, -1.0), transforms.quaternion_product(HALF_TURN_Y, quaternion), scaling)


def _turn_half_keys(clips: list, top: set[int]) -> None:
    """The keys of top-level nodes turned as ``_turn_half`` turns the nodes (tangents too: linear)."""
    for clip in clips:
        for channel in clip.channels:
            if id(channel.node) not in top or channel.path == "scale":
                continue
            values = np.array(channel.values, dtype=np.float64)
            if channel.path == "translation":
                values = values * (-1.0, 1.0, -1.0)
            else:
                values = transforms.quaternion_product(np.broadcast_to(HALF_TURN_Y, values.shape), values)
            channel.set_keys(channel.times, values, channel.interpolation)


def _vrm(scene: Scene, vrm, nodes: list[TransformNode], morphed: dict) -> None:
    """The VRM extension's meaning put where it lives: the humanoid map as {body part: bone name}
    (retargeting's bone map) and the expressions as morph groups. A bind on a node not shown
    (another glTF scene) binds nothing."""
    from ..model.morph import Expression, Expressions

    scene.vrm = vrm
    scene.humanoid = {part: nodes[node].name for part, node in vrm.humanoid.items()}
    expressions = []
    for spec in vrm.expressions:
        binds = [(morphed[node], index, weight) for node, index, weight in spec.binds if node in morphed]
        expressions.append(Expression(spec.name, binds, spec.is_binary, spec.preset, spec.overrides))
    scene.expressions = Expressions(expressions)


def _figure_joints(document: dict, shown: set[int] | None) -> list[int]:
    """The joints of a file with no mesh to show: its skins' joints, else the nodes its
    animations move (not their morph weights), in the scene shown, in node order."""
    joints = {j for skin in document["skins"] for j in skin["joints"]}
    if not joints:
        joints = {channel["target"]["node"] for animation in document["animations"]
                  for channel in animation["channels"]
                  if channel["target"].get("node") is not None and channel["target"]["path"] != "weights"}
    return sorted(j for j in joints if shown is None or j in shown)


def _rest_bounds(file: GltfFile, skinned: list, skins_of: list[int], static: list, world: list[np.ndarray],
                 skeletons: dict[int, Skin]) -> tuple[np.ndarray, np.ndarray]:
    """The world bounds of every mesh as built (Scene.rest_bounds), from the world matrices the
    loader has: a skinned vertex is placed by glTF's joint matrices, inverse bind x world(joint),
    which is the Skeleton's final x the mesh's world matrix (mesh.skinned_positions) without
    preparing the skeletons, a first draw's work."""
    joint_matrices = {}
    for skin_index, skin in skeletons.items():
        joints = file.document["skins"][skin_index]["joints"]
        ibm = skin.skeleton.inverse_bind_matrices
        joint_matrices[skin_index] = np.matmul(ibm, np.array([world[j] for j in joints]).reshape(-1, 4, 4))
    points = []
    with np.errstate(over="ignore", invalid="ignore"):  # Scene refuses an extent that is not finite
        for mesh, skin_index in zip(skinned, skins_of):
            points.append(skin_positions(mesh.morphed_positions(), mesh.joints, mesh.weights, joint_matrices[skin_index]))
        for mesh in static:
            points.append(place_points(mesh.morphed_positions(), mesh.world_matrix))
    return bounds(np.concatenate(points) if points else np.zeros((0, 3)))


def _lights(file: GltfFile, nodes: list[TransformNode], shown: set[int] | None) -> list[PunctualLight]:
    """The KHR_lights_punctual lights on the nodes shown, in node order. Values outside the
    extension's ranges are brought into them, with one warning."""
    lights, document = [], file.document
    for i, spec in enumerate(document["nodes"]):
        used = spec.get("extensions", {}).get("KHR_lights_punctual")
        if used is None or (shown is not None and i not in shown):
            continue
        index = used["light"]
        light = document["lights"][index]
        what = f"light {index}" + (f" ({light['name']!r})" if light.get("name") else "")
        fixed = []
        color = np.asarray(light.get("color", (1.0, 1.0, 1.0)), dtype=np.float64)
        if (color < 0).any():
            color, _ = np.maximum(color, 0.0), fixed.append("a negative color")
        intensity = float(light.get("intensity", 1.0))
        if intensity < 0:
            intensity, _ = 0.0, fixed.append("a negative intensity (0 used)")
        kind = light["type"]
        light_range = light.get("range")
        if light_range is not None and (light_range <= 0 or kind == "directional"):
            if light_range <= 0:
                fixed.append(f"range {light_range:g} (must be > 0; infinite used)")
            light_range = None
        spot = light.get("spot", {})
        inner, outer = float(spot.get("innerConeAngle", 0.0)), float(spot.get("outerConeAngle", math.pi / 4))
        if kind == "spot" and not 0.0 <= inner < outer <= math.pi / 2:
            fixed.append(f"cone angles {inner:g}..{outer:g} (need 0 <= inner < outer <= pi/2)")
            outer = min(max(outer, 1e-4), math.pi / 2)
            inner = min(max(inner, 0.0), outer * 0.999)
        if fixed:
            file.warn("light values", f"{what} (node {i}): {', '.join(fixed)}; corrected")
        lights.append(PunctualLight(kind, color, intensity, light_range, inner, outer, nodes[i], light.get("name", "")))
    return lights


def _chosen_scene(file: GltfFile, scene: int | None) -> int | None:
    count = len(file.document["scenes"])
    if scene is None:
        default = file.document["scene"]
        return default if default is not None else (0 if count else None)
    if isinstance(scene, bool) or not isinstance(scene, (int, np.integer)) or not 0 <= scene < count:
        have = f"its scenes are 0..{count - 1}" if count else "it has no scenes"
        raise file.error(f"scene {scene!r} does not exist ({have})")
    return int(scene)


def _scene_nodes(file: GltfFile, scene: int, hierarchy) -> set[int]:
    """The nodes of glTF scene ``scene``: its root nodes and everything under them."""
    children: dict[int, list[int]] = {}
    for child, parent in hierarchy.parent.items():
        children.setdefault(parent, []).append(child)
    shown, stack = set(), list(file.document["scenes"][scene].get("nodes", []))
    while stack:
        node = stack.pop()
        if node not in shown:
            shown.add(node)
            stack.extend(children.get(node, ()))
    return shown


def _transform_nodes(file: GltfFile, specs: list[dict], hierarchy: NodeHierarchy) -> list[TransformNode]:
    """A TransformNode per node, linked as the file says, children in the file's order."""
    table = NodeTable(len(specs))  # the scene's nodes as rows of one table
    # Made and linked at once (the hierarchy is a checked forest): _linked_nodes, node by node,
    # is the reference.
    nodes = TransformNode.forest([spec.get("name") or f"node{i}" for i, spec in enumerate(specs)], table,
                                 [spec.get("children") for spec in specs])
    _set_node_transforms(file, nodes, specs)
    return nodes


def _linked_nodes(specs: list[dict], hierarchy: NodeHierarchy, table: NodeTable) -> list[TransformNode]:
    """The nodes made and linked one by one, through TransformNode's own setters: what
    TransformNode.forest gives at once (the tests compare the two)."""
    nodes = [TransformNode(spec.get("name") or f"node{i}", table=table) for i, spec in enumerate(specs)]
    parent, depth = hierarchy.parent, hierarchy.depth
    # Link deepest first, so each link's cycle check in TransformNode stops at once; then
    # restore the children's order as the file lists it.
    for child in sorted(parent, key=depth.__getitem__, reverse=True):
        nodes[child].parent = nodes[parent[child]]
    position = {id(node): i for i, node in enumerate(nodes)}
    for node, spec in zip(nodes, specs):
        if len(node.children) > 1:
            rank = {child: k for k, child in enumerate(spec["children"])}
            node.children.sort(key=lambda c: rank[position[id(c)]])
    return nodes


def _set_node_transforms(file: GltfFile, nodes: list[TransformNode], specs: list[dict]) -> None:
    """Every node's TRS. The plain ones (TRS given or left out, a unit rotation, numbers in the
    model's range) are written into the table's rows at once; the rest (a matrix, a rotation
    to normalize or refuse, a number out of range) node by node, in the file's order, by
    ``_set_node_transform``, which warns and words the errors, as it does for every node alone."""
    count = len(specs)
    if not count:
        return
    translation = np.array([spec.get("translation") or (0.0, 0.0, 0.0) for spec in specs], dtype=np.float64)
    rotation = np.array([spec.get("rotation") or (0.0, 0.0, 0.0, 1.0) for spec in specs], dtype=np.float64)
    scale = np.array([spec.get("scale") or (1.0, 1.0, 1.0) for spec in specs], dtype=np.float64)
    # Clearly unit rotations only (the norm here may differ from np.linalg.norm's in the last bit:
    # a rotation near the 1e-3 tolerance goes node by node).
    with np.errstate(over="ignore", invalid="ignore"):
        plain = np.abs(np.sqrt(np.add.reduce(rotation * rotation, axis=1)) - 1.0) <= 0.999e-3
    plain &= (np.abs(translation) <= MAX_MAGNITUDE).all(axis=1) & (np.abs(scale) <= MAX_MAGNITUDE).all(axis=1)
    plain &= [spec.get("matrix") is None or spec["matrix"] == IDENTITY_16 for spec in specs]
    table = nodes[0].table
    rows = np.array([node.table_row for node in nodes])
    table.write(rows[plain], translation[plain], rotation[plain], scale[plain])
    others = np.flatnonzero(~plain).tolist()
    if others and _set_matrix_nodes(table, rows[others], [specs[i].get("matrix") for i in others]):
        return
    for i in others:
        _set_node_transform(file, nodes[i], specs[i], i)


def _set_matrix_nodes(table, rows: np.ndarray, matrices: list) -> bool:
    """The TRS of nodes given as matrices (CesiumMan's), decomposed in one call (transforms.
    decompose: each matrix's numbers as alone) and written into ``rows``, when every node
    has an affine matrix whose decomposition fits the model's range; False (nothing written)
    otherwise, for ``_set_node_transform`` to take them node by node and word the problem."""
    if any(matrix is None for matrix in matrices):
        return False
    matrices = np.array(matrices, dtype=np.float64).reshape(-1, 4, 4)
    if not (np.abs(matrices[:, :, 3] - (0, 0, 0, 1)).max(axis=1) <= 1e-5).all() or not fits(matrices):
        return False
    scaling, quaternion, position = transforms.decompose(matrices)
    if not (fits(scaling) and fits(quaternion) and fits(position) and quaternion.any(axis=1).all()):
        return False
    table.write(rows, position, quaternion, scaling)
    return True


def _local_matrices(nodes: list[TransformNode]) -> np.ndarray:
    """Each node's local matrix ((nodes, 4, 4), read-only), composed for all at once
    (transforms.compose: the same numbers as each node's get_local_matrix), and each kept by
    its node as its own."""
    if not nodes:
        return np.zeros((0, 4, 4))
    table = nodes[0].table
    rows = [node.table_row for node in nodes]
    local = transforms.compose(table.scaling[rows], table.quaternion[rows], table.position[rows])
    local.flags.writeable = False  # shared as meshes' world matrices, as get_local_matrix's are
    for node, matrix in zip(nodes, local):
        node.adopt_local_matrix(matrix)
    return local


def _set_node_transform(file: GltfFile, node: TransformNode, spec: dict, index: int) -> None:
    what = f"node {index} ({node.name!r})"
    matrix = spec.get("matrix")
    if matrix is not None and matrix != IDENTITY_16:
        matrix = np.asarray(matrix, dtype=np.float64).reshape(4, 4)
        if np.abs(matrix[:, 3] - (0, 0, 0, 1)).max() > 1e-5:
            raise file.error(f"{what}: matrix is not affine (its last row must be 0, 0, 0, 1)")
        try:
            # glTF matrices are column-major, which read row by row is our row-vector layout.
            node.set_local_matrix(matrix)
        except ViewerError as error:  # a matrix whose decomposition overflows
            raise file.error(f"{what}: {error}") from None
        return
    rotation = spec.get("rotation")
    quaternion = np.asarray(rotation if rotation is not None else (0, 0, 0, 1), dtype=np.float64)
    norm = float(np.linalg.norm(quaternion))
    if norm == 0 or not math.isfinite(norm):
        raise file.error(f"{what}: rotation {rotation} is not a rotation quaternion")
    if abs(norm - 1) > 1e-3:
        file.warn("node rotation", f"{what}: rotation is not a unit quaternion (length {norm:.4g}); normalized")
        quaternion = quaternion / norm
    translation, scale = spec.get("translation"), spec.get("scale")
    try:
        node.set_trs(translation if translation is not None else (0, 0, 0), quaternion,
                     scale if scale is not None else (1, 1, 1))
    except ViewerError as error:  # the model's own checks (the values are finite numbers already)
        raise file.error(f"{what}: {error}") from None


def _world_matrices(file: GltfFile, nodes: list[TransformNode], local: list[np.ndarray],
                    hierarchy: NodeHierarchy) -> list[np.ndarray]:
    """Every node's world matrix (parents first, each node once), refusing transforms that
    overflow (beyond the model's range, checks.py: each node's numbers fit, their product may
    not). Where meshes are placed; the Scene brings them up to date from the nodes."""
    world = [None] * len(nodes)
    order = sorted(range(len(nodes)), key=hierarchy.depth.__getitem__)
    for n in order:
        parent = hierarchy.parent.get(n)
        world[n] = local[n] if parent is None else local[n] @ world[parent]
    # Checked for all nodes at once; the first that does not fit, parents first, is refused
    # (an overflow shows first in the ancestor where it happens).
    fit = (np.abs(np.array(world).reshape(-1, 16)) <= MAX_MAGNITUDE).all(axis=1)
    if not fit.all():
        n = next(n for n in order if not fit[n])
        raise file.error(f"node {n} ({nodes[n].name!r}): its world transform overflows (the numbers in its "
                         f"transform or its ancestors' are too large: beyond {LIMIT_TEXT} together)")
    return world


def _skeleton(file: GltfFile, skin_index: int, nodes: list[TransformNode], local: list[np.ndarray],
              hierarchy: NodeHierarchy) -> Skin:
    """Skin ``skin_index`` as a Skeleton whose bones are linked to their nodes (``local``: each
    node's local matrix)."""
    skin = file.document["skins"][skin_index]
    parent_of, depth = hierarchy.parent, hierarchy.depth
    joints = skin["joints"]
    what = f"skin {skin_index}"
    accessor = skin.get("inverseBindMatrices")
    if accessor is not None:
        file.require_accessor_kind(accessor, f"{what} inverseBindMatrices", ("MAT4",), (5126,))
        ibm = file.accessor(accessor, f"{what} inverseBindMatrices")
        if len(ibm) < len(joints):
            raise file.error(f"{what}: inverseBindMatrices (accessor {accessor}) has {len(ibm)} MAT4s for "
                             f"{len(joints)} joints")
        # Column-major MAT4 read row by row is our row-vector layout.
        inverse_binds = ibm[: len(joints)].astype(np.float64).reshape(-1, 4, 4)
    else:
        file.warn("no inverse binds", f"{what} has no inverseBindMatrices; using identity")
        inverse_binds = np.broadcast_to(np.eye(4), (len(joints), 4, 4))

    declared_root = skin.get("skeleton")
    members = _below_root(joints, declared_root, parent_of, depth)
    if members is not None:  # skin.skeleton is a common root of the joints (most files)
        root = declared_root
    else:
        root, members = _common_root(joints, parent_of, depth)
        if declared_root is not None:
            file.warn("skeleton root", f"{what}: skeleton node {declared_root} is not a common root of its joints; "
                      f"using {root}")
    # Bones: every joint and every node between a joint and the root (index -1, not
    # uploaded), parents first.
    order = sorted(sorted(members), key=depth.__getitem__)  # by (depth, node): stable sorts without a Python key
    joint_row = {n: i for i, n in enumerate(joints)}
    # Each bone's absolute bind (the inverse of its joint's inverse bind matrix; identity for
    # the nodes between joints) and its inverse, for all bones in two batched inversions.
    absolute_binds = _inverses(inverse_binds)
    absolute = {n: absolute_binds[joint_row[n]] if n in joint_row else np.eye(4) for n in order}
    usable = np.array([absolute[n] if absolute[n] is not None else np.eye(4) for n in order]).reshape(-1, 4, 4)
    inverses = _inverses(usable)
    inverse_absolute = dict(zip(order, inverses))  # a singular one stops the loop below
    finite = dict(zip(order, np.isfinite(usable).all(axis=(1, 2)).tolist()))
    skeleton = Skeleton(f"skin{skin_index}" if skin.get("name") is None else skin["name"], capacity=len(order))
    # The file's own inverse binds (joint order), which a writer gives back exactly while the bind is unchanged.
    skeleton.inverse_bind_matrices = np.array(inverse_binds)
    # Each bone's bind first (a problem is raised once the bones before it are made, as when
    # each was made in turn), then the matrices checked for all bones at once: the bones that
    # pass are made without a second check; any other is made with Bone's own checks, which word
    # the error.
    # A bone's bind is its absolute bind, relative to its parent's when it has one among the
    # bones: absolute x inverse(parent's absolute), for all of them in one matmul.
    place = {n: k for k, n in enumerate(order)}
    parent_place, failure = [], None
    for n in order:
        parent = parent_of.get(n) if n != root else None
        if n in joint_row and (absolute[n] is None or not finite[n]):
            failure = file.error(f"{what} joint {joint_row[n]} (node {n}, {nodes[n].name!r}): its inverse "
                                 f"bind matrix is singular")
            break
        if parent is None or parent not in members:
            parent_place.append(-1)
        elif inverse_absolute[parent] is None:
            joint = f"joint {joint_row[n]} (node {n})" if n in joint_row else f"node {n}"
            failure = file.error(f"{what} {joint}: Singular matrix")
            break
        else:
            parent_place.append(place[parent])
    made = order[:len(parent_place)]
    binds = usable[:len(made)].copy()
    parent_place = np.array(parent_place, dtype=np.intp)
    child = np.flatnonzero(parent_place >= 0)
    if child.size:
        parents = parent_place[child]
        binds[child] = np.matmul(binds[child], inverses[parents] if isinstance(inverses, np.ndarray)
                                 else np.array([inverses[k] for k in parents.tolist()]))
    checked, near_singular = _usable_bone_matrices(local[made], binds, usable)
    if all(checked):  # every bone passed: made at once (the loop below is the reference)
        Bone.linked_checked(skeleton, [nodes[n].name for n in made], parent_place.tolist(), local[made], binds,
                            [joint_row.get(n, -1) for n in made], [nodes[n] for n in made])
        checked = ()
    bones = {}
    for n, bind, ok in zip(made, binds, checked):
        parent = parent_of.get(n) if n != root else None
        try:
            bone = Bone(nodes[n].name, skeleton, bones.get(parent), local_matrix=local[n], bind_matrix=bind,
                        index=joint_row.get(n, -1), checked=ok)
        except (ViewerError, np.linalg.LinAlgError) as error:
            joint = f"joint {joint_row[n]} (node {n})" if n in joint_row else f"node {n}"
            raise file.error(f"{what} {joint}: {error}") from None
        bone.link_transform_node(nodes[n])
        bones[n] = bone
    if failure is not None:
        raise failure
    # The skeleton is prepared when first drawn. Its absolute binds are the chains of the binds
    # above, these ``usable`` matrices again up to rounding: where one is anywhere near the
    # batch's singular limit, its binds are brought up to date now, so that a singular one is
    # refused while loading.
    if near_singular:
        try:
            skeleton.batch.update_bind()
        except ViewerError as error:
            raise file.error(str(error)) from None
    placement = None if root is None else parent_of.get(root)
    return Skin(skeleton, placement, len(joints))


def _below_root(joints: list[int], root: int | None, parent_of: dict, depth: list[int]) -> set[int] | None:
    """The nodes from ``root`` down to every joint (root and joints included) when ``root`` is
    an ancestor of every joint or one of them, else None: each joint walked up to the root or
    to a node already seen, never above the root (a skin deep in a big hierarchy)."""
    if root is None:
        return None
    inside, top = {root}, depth[root]
    for joint in joints:
        path, n = [], joint
        while n not in inside:
            if n is None or depth[n] <= top:
                return None
            path.append(n)
            n = parent_of.get(n)
        inside.update(path)
    return inside


def _common_root(joints: list[int], parent_of: dict, depth: list[int]) -> tuple[int | None, set[int]]:
    """(the nearest common ancestor of the joints, None when they lie in separate trees; every
    node from it down to each joint, or every ancestor of a joint when None)."""
    # Every ancestor of every joint (walks stop at nodes already seen: linear time), and how
    # many joints lie under each: the common ancestors are those above all of them.
    visited = set()
    for joint in joints:
        n = joint
        while n is not None and n not in visited:
            visited.add(n)
            n = parent_of.get(n)
    below = dict.fromkeys(visited, 0)
    for joint in joints:
        below[joint] += 1
    for n in sorted(visited, key=depth.__getitem__, reverse=True):  # deepest first
        parent = parent_of.get(n)
        if parent is not None:
            below[parent] += below[n]
    common = [n for n in visited if below[n] == len(joints)]
    root = max(common, key=depth.__getitem__, default=None)
    return root, (visited if root is None else {n for n in visited if depth[n] >= depth[root]})


def _usable_bone_matrices(local: np.ndarray, bind: np.ndarray, absolutes: np.ndarray) -> tuple[list[bool], bool]:
    """(per bone, whether its local and bind matrices pass Bone's checks, tested for all at
    once: numbers in the model's range and a bind clearly invertible (_singularity_screen,
    which may differ from Bone's own measure in the last bits: a bind near the limit is left to
    Bone); whether any of the bones' ``absolutes`` comes anywhere near the batch's singular
    limit), the two measured in one call."""
    if not len(bind):
        return [], False
    count = len(bind)
    usable = ((np.abs(local.reshape(count, 16)) <= MAX_MAGNITUDE).all(axis=1)
              & (np.abs(bind.reshape(count, 16)) <= MAX_MAGNITUDE).all(axis=1))
    quality = _singularity_screen(np.concatenate([bind, absolutes])) > 2 * SINGULAR_BIND
    return (usable & quality[:count]).tolist(), not quality[count:].all()


def _singularity_screen(m: np.ndarray) -> np.ndarray:
    """transforms.singularity of a stack of matrices (|det| of the 3x3 parts over the product of
    their row lengths) written out: the determinant by cofactors, not LAPACK's LU, so equal up
    to rounding (1e-15 relative). It only screens, with a margin of 2x around the limit: a
    matrix it passes or not is then checked, or taken, where the real measure would also pass."""
    a = m[:, :3, :3]
    with np.errstate(all="ignore"):  # overflow and NaN fail the screen (NaN > x is False)
        norms = np.sqrt((a * a).sum(axis=2)).prod(axis=1)
        x, y, z = a[:, 0], a[:, 1], a[:, 2]
        det = (x[:, 0] * (y[:, 1] * z[:, 2] - y[:, 2] * z[:, 1]) - x[:, 1] * (y[:, 0] * z[:, 2] - y[:, 2] * z[:, 0])
               + x[:, 2] * (y[:, 0] * z[:, 1] - y[:, 1] * z[:, 0]))
        return np.where(norms > 0, np.abs(det) / norms, 0.0)


def _inverses(matrices: np.ndarray) -> np.ndarray | list:
    """Each 4x4 matrix's inverse (numpy inverts a stack matrix by matrix, so the results are
    those of inverting each alone): the stack, or where one is singular a list with None for it."""
    if len(matrices) == 0:
        return []
    try:
        return np.linalg.inv(matrices)
    except np.linalg.LinAlgError:  # one is singular: find which, one by one
        inverses = []
        for matrix in matrices:
            try:
                inverses.append(np.linalg.inv(matrix))
            except np.linalg.LinAlgError:
                inverses.append(None)
        return inverses
