"""SkinnedMesh: vertex data bound to a Skeleton, and CPU skinning (numpy only).

A vertex is morphed first (``base + sum_t weight_t * delta_t``, when the mesh has morph
targets), then skinned by ``sum_k w_k * final[j_k]`` (the final matrices are relative to the
skeleton root), then placed by the mesh's world matrix, as in Babylon's shader.
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from ..words import counted
from .checks import finite_array
from .dual_quaternions import bone_dual_quaternions, dq_skin_positions
from .material import Material, TextureSlot
from . import native
from .morph import MorphTargets
from .skeleton import Skeleton

# How a mesh's vertices follow its bones (SkinnedMesh.skinning): linear blend skinning (every
# web engine's, the default) or dual quaternions (Blender's "Preserve Volume", Maya's): the
# rigid part of each bone blended as dual quaternions, its scale and shear linearly.
SKINNINGS = ("lbs", "dq")


class Submesh:
    """A range of a mesh's triangle indices drawn with one material (a glTF primitive).

    ``pbr`` is the Material it is drawn with; without one, a plain dielectric of
    ``base_color`` and ``base_color_texture`` (Material.dielectric: meshes made in code).
    ``base_color`` and ``base_color_texture`` read and write that material's base colour
    factor and image.
    """

    def __init__(self, first_index: int, index_count: int, base_color=(1.0, 1.0, 1.0, 1.0),
                 base_color_texture=None, name: str = "", material=None, image_data=None,
                 pbr: Material | None = None):
        self.first_index, self.index_count = int(first_index), int(index_count)
        self.name = name
        if pbr is None:
            pbr = Material.dielectric(finite_array(base_color, (4,), f"submesh {name!r} base color"),
                                      base_color_texture)
        else:
            pbr.base_color_factor = finite_array(pbr.base_color_factor, (4,), f"submesh {name!r} base color")
        self.pbr = pbr
        # What a writer needs to give the material back as loaded: the glTF material's own
        # fields (a dict or None) and the base colour texture's image as its file had it,
        # (encoded bytes, MIME type) or None (written without re-encoding); ``texture_data``
        # the same for every texture slot, by Material field name ({} for images made in memory).
        self.material = material
        self.image_data = image_data
        self.texture_data: dict[str, tuple[bytes, str]] = {}

    @property
    def base_color(self) -> np.ndarray:
        """The base colour factor, (4,) linear RGBA."""
        return self.pbr.base_color_factor

    @base_color.setter
    def base_color(self, value) -> None:
        self.pbr.base_color_factor = finite_array(value, (4,), f"submesh {self.name!r} base color")

    @property
    def base_color_texture(self) -> np.ndarray | None:
        """The base colour image, (H, W, 4) uint8, or None."""
        slot = self.pbr.base_color_texture
        return None if slot is None else slot.image

    @base_color_texture.setter
    def base_color_texture(self, image) -> None:
        if image is None:
            self.pbr.base_color_texture = None
        elif self.pbr.base_color_texture is None:
            self.pbr.base_color_texture = TextureSlot(image)
        else:
            self.pbr.base_color_texture.image = image


class SkinnedMesh:
    """Triangles with joint indices and weights (4 or 8 per vertex) for one skeleton.

    Arrays: positions (V,3), normals (V,3; computed when absent), joints (V,4|8) ints,
    weights (V,4|8), indices (T*3,), texcoords (V,2) and texcoords1 (V,2) (TEXCOORD_0 and
    TEXCOORD_1 as the file has them; zeros when absent), colors (V,4), tangents (V,4) or None
    (xyz and the bitangent sign w, +1 or -1: glTF's TANGENT). Weights that do not sum
    to 1 are renormalized, as engines do for old exports; ``raw_weight_sums`` (V,) keeps each
    vertex's sum as given. ``extra_influences`` (V,) counts, per vertex, the weights beyond the
    8 influences the shader reads that a loader had to leave out (zeros by default).
    ``morph_targets``: a MorphTargets over the same vertices, or None (see ``morph_weights``).
    ``skinning``: "lbs" (linear blend skinning, the default) or "dq" (dual quaternions), on the
    GPU and the CPU alike.
    """

    def __init__(self, name: str, positions, indices, skeleton: Skeleton | None, joints=None, weights=None,
                 normals=None, texcoords=None, colors=None, world_matrix=None,
                 base_color=(1.0, 1.0, 1.0, 1.0), base_color_texture=None, submeshes=None,
                 node_index: int | None = None, world_node=None, morph_targets: MorphTargets | None = None,
                 extra_influences=None, texcoords1=None, tangents=None, *, checked: bool = False):
        """``checked=True``: arrays a loader has already checked (every number finite, the
        indices inside the vertices, the joints inside the skeleton where weighted, the weights
        not negative and not all zero on a vertex), taken without a second pass over them;
        their shapes are checked and the weights normalized as always."""
        self.name = str(name)
        what = f"mesh {self.name!r}"
        self.positions = _float_rows(positions, 3, f"{what} positions", checked)
        count = len(self.positions)
        self.indices = _indices(indices, count, what, checked)
        self.skeleton = skeleton
        if skeleton is not None:
            self.joints, self.weights, self.raw_weight_sums = _skin_data(joints, weights, count, len(skeleton.bones),
                                                                         what, checked)
            self.extra_influences = _extra_influences(extra_influences, count, what)
        else:
            self.joints = self.weights = self.raw_weight_sums = self.extra_influences = None
        # None: computed when first read (the normals property), a draw's or a writer's work.
        self._normals = None if normals is None else _float_rows(normals, 3, f"{what} normals", checked)
        self.texcoords = (np.zeros((count, 2), np.float32) if texcoords is None
                          else _float_rows(texcoords, 2, f"{what} texcoords", checked))
        self.texcoords1 = (np.zeros((count, 2), np.float32) if texcoords1 is None
                           else _float_rows(texcoords1, 2, f"{what} texcoords1", checked))
        self.colors = (np.ones((count, 4), np.float32) if colors is None
                       else _float_rows(colors, 4, f"{what} colors", checked))
        self.tangents = None if tangents is None else _tangent_rows(tangents, f"{what} tangents", checked)
        for label, array in (("normals", self._normals), ("texcoords", self.texcoords), ("texcoords1", self.texcoords1),
                             ("colors", self.colors), ("tangents", self.tangents)):
            if array is not None and len(array) != count:
                raise ViewerError(f"{what} {label}: {len(array)} rows for {count} vertices")
        self.world_matrix = np.eye(4) if world_matrix is None else world_matrix
        # Materials: one submesh per glTF primitive; by default one over all triangles.
        self.submeshes = submeshes or [Submesh(0, len(self.indices), base_color, base_color_texture, self.name)]
        self.node_index = node_index
        # When set, the world matrix follows this node's (updated by Scene.prepare()).
        self.world_node = world_node
        if morph_targets is not None:
            if not isinstance(morph_targets, MorphTargets):
                raise ViewerError(f"{what}: morph_targets must be a MorphTargets, got {type(morph_targets).__name__}")
            if morph_targets.vertex_count != count:
                raise ViewerError(f"{what}: morph targets over {morph_targets.vertex_count} vertices for {count}")
        self.morph_targets = morph_targets
        self._skinning = "lbs"

    @property
    def skinning(self) -> str:
        """"lbs" (linear blend skinning) or "dq" (dual-quaternion skinning): how the renderer
        (shader or CPU) and ``skinned()`` / ``skinned_positions()`` move this mesh's vertices."""
        return self._skinning

    @skinning.setter
    def skinning(self, value) -> None:
        self._skinning = skinning_mode(value, f"mesh {self.name!r} skinning")

    @property
    def normals(self) -> np.ndarray:
        """(V,3) float32 unit normals: the file's, or area-weighted smooth ones computed from
        the triangles when first read (a mesh made without normals: FBX and USD files, as their
        tools shade them; glTF's flat normals are the loader's, ``flat_normals``)."""
        if self._normals is None:
            self._normals = vertex_normals(self.positions, self.indices)
        return self._normals

    @property
    def world_matrix(self) -> np.ndarray:
        return self._world_matrix

    @world_matrix.setter
    def world_matrix(self, matrix) -> None:
        self._world_matrix = finite_array(matrix, (4, 4), f"mesh {self.name!r} world matrix")

    @property
    def base_color(self) -> np.ndarray:
        return self.submeshes[0].base_color

    @property
    def influences(self) -> int:
        return 0 if self.joints is None else self.joints.shape[1]

    # --- morph targets ---------------------------------------------------------------------------
    @property
    def morph_target_names(self) -> list[str]:
        """The targets' names (glTF extras.targetNames, else morphTarget<i>); [] without targets."""
        return [] if self.morph_targets is None else list(self.morph_targets.names)

    @property
    def morph_weights(self) -> np.ndarray:
        """The morph weights, (targets,) float64, read-only (assign a whole array, or use
        ``set_morph_weight``); an empty array for a mesh without targets."""
        return np.zeros(0) if self.morph_targets is None else self.morph_targets.weights

    @morph_weights.setter
    def morph_weights(self, values) -> None:
        if self.morph_targets is None:
            if np.size(values) == 0:
                return
            raise ViewerError(f"mesh {self.name!r} has no morph targets")
        self.morph_targets.weights = values

    def set_morph_weight(self, target, weight) -> None:
        """One target's weight; ``target`` is its name or index."""
        if self.morph_targets is None:
            raise ViewerError(f"mesh {self.name!r} has no morph targets")
        self.morph_targets.set_weight(target, weight)

    def morphed(self, tangents: bool = False) -> tuple:
        """(positions, normals) in mesh space with the current morph weights, before skinning;
        with ``tangents``, (positions, normals, tangents) (None for a mesh without tangents)."""
        if self.morph_targets is None:
            return (self.positions, self.normals, self.tangents) if tangents else (self.positions, self.normals)
        if tangents and self.tangents is not None:
            return self.morph_targets.apply(self.positions, self.normals, tangents=self.tangents)
        morphed = self.morph_targets.apply(self.positions, self.normals)
        return (*morphed, None) if tangents else morphed

    def morphed_positions(self) -> np.ndarray:
        """``morphed()``'s positions (the same numbers), without the normals."""
        if self.morph_targets is None:
            return self.positions
        return self.morph_targets.apply(self.positions)[0]

    def update_world_matrix(self, walked: dict | None = None) -> None:
        """Follow the placement node, when there is one (glTF: the skeleton root's parent);
        ``walked``: as TransformNode.get_world_matrix's, for many meshes at once."""
        if self.world_node is not None:
            self.world_matrix = self.world_node.get_world_matrix(walked)

    def skinned(self, matrices=None, tangents: bool = False) -> tuple:
        """World-space (positions, normals) morphed and skinned on the CPU with ``matrices``
        (default: the skeleton's current final matrices); with ``tangents``, (positions,
        normals, tangents): the tangents' xyz turned with the vertices, w kept (None for a
        mesh without tangents)."""
        self.update_world_matrix()
        positions, normals, vertex_tangents = self.morphed(tangents=True)
        if not tangents:
            vertex_tangents = None
        if self.skeleton is None:
            positions, normals = positions.astype(np.float64), normals.astype(np.float64)
        else:
            if matrices is None:
                self.skeleton.prepare()
                matrices = self.skeleton.get_transform_matrices()
            skinned = skin(positions, normals, self.joints, self.weights, matrices, vertex_tangents,
                           mode=self.skinning)
            positions, normals = skinned[:2]
            vertex_tangents = skinned[2] if vertex_tangents is not None else None
        moved = transform_points(positions, normals, self.world_matrix, vertex_tangents)
        if not tangents:
            return moved
        return moved if vertex_tangents is not None else (*moved, None)

    def skinned_positions(self) -> np.ndarray:
        """The positions of ``skinned()`` (the same numbers), without the normals (bounds)."""
        self.update_world_matrix()
        positions = self.morphed_positions()
        if self.skeleton is None:
            positions = positions.astype(np.float64)
        else:
            self.skeleton.prepare()
            positions = skin_positions(positions, self.joints, self.weights, self.skeleton.get_transform_matrices(),
                                       mode=self.skinning)
        return place_points(positions, self.world_matrix)


def skinning_mode(value, what: str = "skinning") -> str:
    """``value`` as one of SKINNINGS ("lbs", "dq"; any case), or one ViewerError line."""
    if isinstance(value, str) and value.strip().lower() in SKINNINGS:
        return value.strip().lower()
    raise ViewerError(f"{what}: expected lbs (linear blend) or dq (dual quaternions), got {value!r}")


def skin(positions, normals, joints, weights, matrices, tangents=None, mode: str = "lbs"):
    """Linear blend skinning (``mode`` "lbs"), or dual-quaternion skinning ("dq", see
    viewer/model/dual_quaternions.py): (positions, normals) in skeleton-root space; with
    ``tangents`` ((V,4): xyz and the bitangent sign w), (positions, normals, tangents).

    Blends one (V,4,4) matrix stack influence by influence, so memory stays at one stack
    however many influences there are. Normals use the inverse transpose of the blend;
    tangents (directions in the surface) the blend itself, renormalized, their w kept.
    """
    if mode == "dq":
        skinned_positions, blended = dq_skin_positions(positions, joints, weights, bone_dual_quaternions(matrices))
    else:
        skinned_positions, blended = _skin_positions(positions, joints, weights, matrices)
    skinned_normals = _transform_normals(normals, blended[:, :3, :3])
    if tangents is None:
        return skinned_positions, skinned_normals
    return skinned_positions, skinned_normals, _transform_tangents(tangents, blended[:, :3, :3])


def skin_positions(positions, joints, weights, matrices, mode: str = "lbs") -> np.ndarray:
    """Linear blend skinning of positions alone: each vertex through the weighted sum of its
    joints' matrices ((J,4,4), row vectors), as float64 (V,3); with ``mode`` "dq", dual-quaternion
    skinning. The compiled kernel's loop (csrc/ckernel.c's skin_points, skin_points_dq) where
    it is built and takes the arrays; ``_skin_positions`` or ``dq_skin_positions``, the
    references, otherwise."""
    module = native.ckernel
    if mode == "dq":
        packed = bone_dual_quaternions(matrices)
        if module is not None:
            out = np.empty((len(positions), 3))
            if module.skin_points_dq(positions, joints, weights, packed, out) == 0:
                return out
        return dq_skin_positions(positions, joints, weights, packed)[0]
    if module is not None:
        out = np.empty((len(positions), 3))
        if module.skin_points(positions, joints, weights, np.ascontiguousarray(matrices, dtype=np.float64), out) == 0:
            return out
    return _skin_positions(positions, joints, weights, matrices)[0]


def _skin_positions(positions, joints, weights, matrices):
    """(skinned positions, the blended (V,4,4) matrices) of ``skin``."""
    matrices = np.asarray(matrices, dtype=np.float64)
    blended = np.zeros((len(positions), 4, 4))
    for k in range(joints.shape[1]):
        blended += weights[:, k, None, None] * matrices[joints[:, k]]
    return np.einsum("vi,vij->vj", positions, blended[:, :3, :3]) + blended[:, 3, :3], blended


def place_points(points, matrix) -> np.ndarray:
    """(N,3) points (row vectors) through one affine (4,4) matrix, as float64."""
    matrix = np.asarray(matrix, dtype=np.float64)
    return points @ matrix[:3, :3] + matrix[3, :3]


def transform_points(positions, normals, matrix, tangents=None):
    """Positions and normals (row vectors) through one affine matrix; with ``tangents``
    ((V,4)), the tangents too (xyz turned and renormalized, w kept)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    moved = place_points(positions, matrix)
    if tangents is None:
        return moved, _transform_normals(normals, matrix[:3, :3])
    return moved, _transform_normals(normals, matrix[:3, :3]), _transform_tangents(tangents, matrix[:3, :3])


def _transform_tangents(tangents, linear):
    """(V,4) tangents' xyz @ L (L (3,3) or (V,3,3)), renormalized (zero stays zero), w kept."""
    tangents = np.asarray(tangents, dtype=np.float64)
    linear = np.asarray(linear, dtype=np.float64)
    if linear.ndim == 3:
        moved = np.einsum("vi,vij->vj", tangents[:, :3], linear)
    else:
        moved = tangents[:, :3] @ linear
    length = np.linalg.norm(moved, axis=-1, keepdims=True)
    moved = np.divide(moved, length, out=np.zeros_like(moved), where=length > 0)
    return np.concatenate([moved, tangents[:, 3:4]], axis=1)


def _transform_normals(normals, linear):
    """n @ inverse(L)^T, renormalized; L is (3,3) or (V,3,3). Singular blends keep n."""
    linear = np.asarray(linear, dtype=np.float64)
    det = np.linalg.det(linear)
    ok = np.abs(det) > 1e-12
    safe = np.where(ok[..., None, None], linear, np.eye(3)) if linear.ndim == 3 else (linear if ok else np.eye(3))
    inverse_transpose = np.swapaxes(np.linalg.inv(safe), -1, -2)
    if inverse_transpose.ndim == 3:
        moved = np.einsum("vi,vij->vj", normals, inverse_transpose)
    else:
        moved = normals @ inverse_transpose
    length = np.linalg.norm(moved, axis=-1, keepdims=True)
    return np.divide(moved, length, out=np.zeros_like(moved), where=length > 0)


def vertex_normals(positions, indices) -> np.ndarray:
    """Area-weighted smooth vertex normals."""
    corners = indices.reshape(-1, 3).T  # (3, triangles): each corner's vertex
    a, b, c = positions[corners[0]], positions[corners[1]], positions[corners[2]]
    u, v = (b - a).T, (c - a).T
    # np.cross(u, v)'s products and differences, in its order (so its numbers), without its
    # per-call overhead; each face summed into its three vertices in np.add.at's order (corner
    # 0 of every triangle, then 1, then 2), by one bincount per axis.
    face = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
    corners = corners.reshape(-1)
    normals = np.empty((len(positions), 3))
    for axis in range(3):
        normals[:, axis] = np.bincount(corners, np.tile(face[axis].astype(np.float64), 3), minlength=len(positions))
    length = np.sqrt(np.add.reduce(normals * normals, axis=1, keepdims=True))  # np.linalg.norm's sum
    normals = np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)
    return normals.astype(np.float32)


def face_normals(positions, indices) -> np.ndarray:
    """(T,3) float32 unit normals of a triangle list's faces (counter-clockwise is the front),
    computed in float64; zeros for a triangle without area."""
    columns = np.asarray(positions, dtype=np.float64).T
    corners = np.asarray(indices).reshape(-1, 3).T
    a, b, c = (np.stack([axis[corner] for axis in columns]) for corner in corners)  # (3, T) each
    u, v = b - a, c - a
    face = np.stack([u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]])
    length = np.sqrt(face[0] * face[0] + face[1] * face[1] + face[2] * face[2])
    return np.ascontiguousarray(np.divide(face, length, out=np.zeros_like(face), where=length > 0).T, np.float32)


# flat_normals welds a vertex's corners whose faces have equal normals in rounds, each round one
# more group per vertex; it stops after this many, or when a round welds fewer corners (beside
# the groups' first) than this fraction of its groups (a curved surface: nothing left to weld).
# The corners left get a vertex each.
FLAT_WELD_ROUNDS = 8
FLAT_WELD_WORTH = 1 / 8


def flat_normals(positions, indices, position_deltas=None) -> tuple:
    """Flat shading for a triangle list (glTF's rule for a primitive without NORMAL): every
    triangle's corners get its face normal, and with morph targets ((K,V,3) position deltas)
    each target's face normal too, so a vertex is split where the faces meeting there disagree.

    Returns (remap (V',) int64, indices (T*3,) int64, normals (V',3) float32, normal deltas
    (K,V',3) float32 or None). ``remap[i]`` is the input vertex that output vertex ``i`` copies:
    ``arange(V)`` (each vertex keeps the normals of its first triangle), then the copies: one
    per further set of normals (base and every target, equal bit for bit) met at a vertex, so
    that a flat region keeps its shared vertices and a cube gets 24, while a curved surface ends
    with about one vertex per corner. Triangles without area take their vertices' normals (they
    cover no pixel); a vertex used by none (or only by those) gets a zero normal.
    """
    corners = np.asarray(indices, dtype=np.int64).reshape(-1)
    count = len(positions)
    faces = face_normals(positions, corners)
    shapes = [faces]
    if position_deltas is not None:
        base = np.asarray(positions, dtype=np.float64)
        shapes += [face_normals(base + delta, corners) for delta in position_deltas]
    columns = [np.ascontiguousarray(shape[:, axis]) for shape in shapes for axis in range(3)]
    new_indices = corners.copy()  # corners of triangles without area keep their vertex
    remap, source = [np.arange(count)], [np.full(count, -1)]  # per output row: its vertex, its face
    rows = count
    first = np.full(count, len(corners))
    vertex_row = np.arange(count)  # per vertex, the row of this round's group
    pending = np.flatnonzero(np.repeat((faces != 0).any(axis=1), 3))
    for round_ in range(FLAT_WELD_ROUNDS):
        vertices = corners[pending]
        first[vertices] = len(corners)
        np.minimum.at(first, vertices, pending)  # each vertex's first pending corner leads a group
        leader = first[vertices]
        mine, theirs = pending // 3, leader // 3  # the corners' triangles
        same = columns[0][mine] == columns[0][theirs]
        for column in columns[1:]:
            same &= column[mine] == column[theirs]
        leaders = pending[pending == leader]
        if round_ == 0:
            source[0][corners[leaders]] = leaders // 3
        else:
            vertex_row[corners[leaders]] = rows + np.arange(len(leaders))
            remap.append(corners[leaders])
            source.append(leaders // 3)
            rows += len(leaders)
        new_indices[pending[same]] = vertex_row[vertices[same]]
        welded = int(same.sum()) - len(leaders)
        pending = pending[~same]
        if not len(pending) or welded < FLAT_WELD_WORTH * len(leaders):
            break
    if len(pending):  # a vertex each
        new_indices[pending] = rows + np.arange(len(pending))
        remap.append(corners[pending])
        source.append(pending // 3)
    remap, source = np.concatenate(remap), np.concatenate(source)
    rows = [np.concatenate([shape, np.zeros((1, 3), np.float32)])[source] for shape in shapes]  # -1: zeros
    deltas = None if len(shapes) == 1 else np.stack([row - rows[0] for row in rows[1:]])
    return remap, new_indices, rows[0], deltas


def bounds(points) -> tuple[np.ndarray, np.ndarray]:
    """(min, max) of (N,3) points; zeros for none."""
    points = np.asarray(points)
    if len(points) == 0:
        return np.zeros(3), np.zeros(3)
    # numpy reduces a (N,3) array along its long axis 20x slower than each row of its transpose
    columns = np.ascontiguousarray(points.T)
    return columns.min(axis=1), columns.max(axis=1)


# --- validation ---------------------------------------------------------------------------------
def _float_rows(values, width, what, checked: bool = False) -> np.ndarray:
    """(N, width) float32, C-contiguous; its numbers checked finite unless ``checked``."""
    try:
        array = np.asarray(values, dtype=np.float32)
    except (TypeError, ValueError):
        raise ViewerError(f"{what}: expected numbers") from None
    if array.ndim != 2 or array.shape[1] != width:
        raise ViewerError(f"{what}: expected shape (N, {width}), got {array.shape}")
    if not checked and not np.isfinite(array).all():
        bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
        raise ViewerError(f"{what}: vertex {bad[0]} has NaN or infinity ({bad.size} bad rows)")
    return np.ascontiguousarray(array)


def _tangent_rows(values, what, checked: bool = False) -> np.ndarray:
    """(V,4) float32 tangents whose w is the bitangent sign: +1 or -1 (glTF's rule; a file's
    other values are read by their sign, 0 as +1)."""
    array = _float_rows(values, 4, what, checked)
    if not np.isin(array[:, 3], (-1.0, 1.0)).all():
        array = array.copy()
        array[:, 3] = np.where(array[:, 3] < 0, -1.0, 1.0)
    return array


def _indices(values, vertex_count, what, checked: bool = False) -> np.ndarray:
    indices = np.asarray(values).reshape(-1)
    if indices.size % 3 or not np.issubdtype(indices.dtype, np.integer):
        raise ViewerError(f"{what} indices: expected integer triangles, got {indices.size} {indices.dtype} values")
    if not checked and indices.size and (indices.min() < 0 or indices.max() >= vertex_count):
        bad = int(indices.max()) if indices.max() >= vertex_count else int(indices.min())
        raise ViewerError(f"{what} indices: index {bad} is outside the {vertex_count} vertices")
    return indices.astype(np.uint32)


def _skin_data(joints, weights, vertex_count, bone_count, what, checked: bool = False):
    if joints is None or weights is None:
        raise ViewerError(f"{what}: a skinned mesh needs joints and weights")
    joints = np.asarray(joints)
    if not np.issubdtype(joints.dtype, np.integer):
        raise ViewerError(f"{what} joints: expected integers, got {joints.dtype}")
    weights = _float_rows(weights, joints.shape[1] if joints.ndim == 2 else 4, f"{what} weights", checked)
    if joints.ndim != 2 or joints.shape[1] not in (4, 8) or joints.shape != weights.shape:
        raise ViewerError(f"{what}: joints {joints.shape} and weights {weights.shape} must both be (V, 4) or (V, 8)")
    if len(joints) != vertex_count:
        raise ViewerError(f"{what}: {len(joints)} joint rows for {vertex_count} vertices")
    used = weights > 0
    total = weights.sum(axis=1)
    if checked:
        return _normalized_skin(joints, weights, used, total)
    if used.any():
        bad = np.flatnonzero(((joints < 0) | (joints >= bone_count)) & used)
        if bad.size:
            v, k = divmod(int(bad[0]), joints.shape[1])
            raise ViewerError(f"{what}: vertex {v} uses joint {int(joints[v, k])}, but the skeleton has "
                              f"{counted(bone_count, 'bone')}")
    if (weights < 0).any():
        v = int(np.flatnonzero((weights < 0).any(axis=1))[0])
        raise ViewerError(f"{what}: vertex {v} has a negative weight")
    if (total <= 0).any():
        v = int(np.flatnonzero(total <= 0)[0])
        raise ViewerError(f"{what}: vertex {v} has no bone weight (all weights are 0)")
    return _normalized_skin(joints, weights, used, total)


def _normalized_skin(joints, weights, used, total):
    """(joints int32, weights float32 summing to 1, the sums as given float32)."""
    weights = weights / total[:, None]
    # Unused slots may hold any index; point them at bone 0 so no shader reads out of range.
    joints = np.where(used, joints, 0).astype(np.int32)
    return np.ascontiguousarray(joints), np.ascontiguousarray(weights, dtype=np.float32), total.astype(np.float32)


def _extra_influences(values, vertex_count, what) -> np.ndarray:
    if values is None:
        return np.zeros(vertex_count, np.int32)
    counts = np.asarray(values)
    if counts.shape != (vertex_count,) or not np.issubdtype(counts.dtype, np.integer) or (counts < 0).any():
        raise ViewerError(f"{what} extra_influences: expected {vertex_count} counts of 0 or more")
    return counts.astype(np.int32)
