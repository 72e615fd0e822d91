"""The labels of a synthetic image, computed in numpy from the posed skeleton and the camera: no
GL, so every function here is tested without a context.

Cameras are written as OpenCV's: ``world_to_camera`` (4x4, column vectors: x_cam = M @ [p, 1])
into axes x right, y down, z forward, and ``K`` (3x3) onto pixel coordinates from the image's
top-left corner, whose top-left pixel's centre is (0.5, 0.5). ``opencv_camera`` converts the
GL camera (pyrr's row-vector layout, y up, looking down -z, NDC to the viewport) exactly.
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError
from ..model.weights import dominant_joints, rigid_bone

# COCO's keypoint visibility.
OUTSIDE, HIDDEN, VISIBLE = 0, 1, 2
PART_8BIT_LIMIT = 254  # bones a part image stores in 8 bits (0 background, 1..255 bone + 1)
# GL's view axes (x right, y up, z back) to OpenCV's (x right, y down, z forward).
GL_TO_OPENCV = np.diag([1.0, -1.0, -1.0, 1.0])


# --- the camera ------------------------------------------------------------------------------------
def opencv_camera(view, projection, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """(K, world_to_camera) of a GL camera: ``view`` and ``projection`` in the row-vector layout
    (clip = [p, 1] @ view @ projection), drawing a ``width`` x ``height`` image.

    With the view-space point (x, y, z), OpenCV's is (X, Y, Z) = (x, -y, -z) and the perspective
    projection's w is Z, so NDC x = (P00 X - P10 Y - P20 Z) / Z (P[i, j]: row i, column j) and
    the pixel u = W (NDC x + 1) / 2, v = H (1 - NDC y) / 2 (the viewport maps NDC -1 to the
    image's edge, and row 0 of the written image is the top)."""
    view, projection = np.asarray(view, np.float64), np.asarray(projection, np.float64)
    if not np.allclose(projection[:, 3], [0.0, 0.0, -1.0, 0.0]):
        raise ViewerError("synthetic labels need a perspective camera (clip w = -z in view space)")
    world_to_camera = GL_TO_OPENCV @ view.T
    p = projection
    half_w, half_h = width / 2.0, height / 2.0
    K = np.array([
        [half_w * p[0, 0], -half_w * p[1, 0], half_w * (1.0 - p[2, 0])],
        [-half_h * p[0, 1], half_h * p[1, 1], half_h * (1.0 + p[2, 1])],
        [0.0, 0.0, 1.0],
    ])
    return K, world_to_camera


def to_camera(points, world_to_camera) -> np.ndarray:
    """(N, 3) world points in camera space (OpenCV axes)."""
    points = np.asarray(points, np.float64).reshape(-1, 3)
    return points @ world_to_camera[:3, :3].T + world_to_camera[:3, 3]


def project(camera_points, K) -> np.ndarray:
    """(N, 2) pixel coordinates of camera-space points (meaningful where z > 0)."""
    camera_points = np.asarray(camera_points, np.float64).reshape(-1, 3)
    z = camera_points[:, 2:3]
    with np.errstate(divide="ignore", invalid="ignore"):
        uvw = camera_points @ K.T
        return np.where(z > 0, uvw[:, :2] / np.where(z > 0, z, 1.0), 0.0)


# --- keypoints -------------------------------------------------------------------------------------
def keypoints(camera_points, K, depth, occlusion_distance: float) -> np.ndarray:
    """(N, 3) COCO keypoints [x, y, v] of camera-space joints over the drawn ``depth`` image
    ((H, W) camera-space depth along the view axis, 0 where nothing is drawn): v=0 behind the
    camera or outside the image (x = y = 0); v=2 visible, where the surface drawn at the joint's
    pixel lies within ``occlusion_distance`` of the joint in depth (the joint's own flesh); else
    v=1, hidden: that surface is nearer by more (something in front of it), farther by more (the
    joint's own surface is not drawn there: a helper bone in the air, a back face culled), or
    nothing is drawn at all. So a label never calls visible what the picture does not show."""
    camera_points = np.asarray(camera_points, np.float64).reshape(-1, 3)
    height, width = depth.shape
    uv = project(camera_points, K)
    inside = (camera_points[:, 2] > 0) & (uv[:, 0] >= 0) & (uv[:, 0] < width) & (uv[:, 1] >= 0) & (uv[:, 1] < height)
    result = np.zeros((len(camera_points), 3))
    columns = np.clip(np.floor(uv[:, 0]).astype(np.int64), 0, width - 1)
    rows = np.clip(np.floor(uv[:, 1]).astype(np.int64), 0, height - 1)
    surface = depth[rows, columns].astype(np.float64)
    shown = (surface > 0) & (np.abs(surface - camera_points[:, 2]) <= occlusion_distance)
    result[inside, :2] = uv[inside]
    result[inside, 2] = np.where(shown[inside], VISIBLE, HIDDEN)
    return result


def shortfall(points, area: int, pixels: int, min_visible: int, min_area: float) -> str | None:
    """Why an image shows too little to be labelled, or None when it shows enough: nothing of
    the character drawn, fewer than ``min_area`` of the image's ``pixels`` drawn, or fewer than
    ``min_visible`` keypoints visible (v=2; every keypoint, for a rig with fewer)."""
    if area == 0:
        return "nothing drawn"
    needed_area = max(1, int(np.ceil(min_area * pixels)))
    if area < needed_area:
        return f"under {needed_area} pixels drawn"
    points = np.asarray(points, np.float64).reshape(-1, 3)
    needed = min(int(min_visible), len(points))
    if int(np.count_nonzero(points[:, 2] == VISIBLE)) < needed:
        return f"under {needed} keypoints visible"
    return None


def joint_positions(scene, skeleton) -> np.ndarray:
    """(N, 3) world positions of the skeleton's joints in ``skeleton.bones`` order, as drawn: the
    skeleton-space placements times the world matrix of a mesh it skins (glTF: the mesh sits
    where the skeleton's root lives)."""
    mesh = next((m for m in scene.skinned_meshes if m.skeleton is skeleton), None)
    world = np.eye(4) if mesh is None else mesh.world_matrix
    return (skeleton.get_absolute_matrices() @ world)[:, 3, :3]


def skeleton_layout(skeleton) -> tuple[list, list]:
    """(bone names in ``skeleton.bones`` order, [parent, child] pairs numbered from 1 as COCO's
    ``skeleton``): a category's keypoints."""
    names = [bone.name for bone in skeleton.bones]
    parents = skeleton.get_parent_indices()
    pairs = [[int(parent) + 1, child + 1] for child, parent in enumerate(parents) if parent >= 0]
    return names, pairs


# --- parts -----------------------------------------------------------------------------------------
def vertex_parts(scene, skeleton) -> dict:
    """{id(mesh): (V,) int32} for every mesh of the scene: 1 + the position in ``skeleton.bones``
    of the bone that most influences each vertex (its largest weight; a mesh without a skin,
    the bone that moves it rigidly), 0 where that is no bone of ``skeleton``. A skin over other
    joints maps them onto ``skeleton`` through the nodes they are linked to (two glTF skins over
    one set of joints)."""
    position = {}  # id of a bone, or of the node it is linked to, -> 1 + its position in bones
    for number, bone in enumerate(() if skeleton is None else skeleton.bones, start=1):
        position[id(bone)] = number
        node = bone.get_transform_node()
        if node is not None:
            position.setdefault(id(node), number)

    def part_of(bone) -> int:
        if bone is None:
            return 0
        node = bone.get_transform_node()
        return position.get(id(bone), position.get(id(node), 0) if node is not None else 0)

    parts = {}
    for mesh in scene.meshes:
        count = len(mesh.positions)
        if mesh.skeleton is None:
            parts[id(mesh)] = np.full(count, part_of(rigid_bone(mesh, scene)), np.int32)
            continue
        row_part = np.zeros(len(mesh.skeleton.bones), np.int32)
        for bone in mesh.skeleton.bones:
            row_part[bone.get_index()] = part_of(bone)
        joints = dominant_joints(mesh)
        parts[id(mesh)] = row_part[np.clip(joints, 0, len(row_part) - 1)].astype(np.int32)
    return parts


def part_image(parts: np.ndarray, bone_count: int) -> np.ndarray:
    """The part index image as written: 8-bit while every bone + 1 fits, else 16-bit."""
    return parts.astype(np.uint8 if bone_count <= PART_8BIT_LIMIT else np.uint16)


# --- depth and masks -------------------------------------------------------------------------------
def depth_image(depth, depth_scale: float) -> np.ndarray:
    """The 16-bit depth image: camera-space depth times ``depth_scale``, rounded, 0 where
    nothing is drawn (a drawn depth that would round to 0 or past 65535 is clamped to 1..65535)."""
    scaled = np.rint(np.asarray(depth, np.float64) * depth_scale)
    return np.where(depth > 0, np.clip(scaled, 1, 65535), 0).astype(np.uint16)


def rle(mask) -> dict:
    """COCO's uncompressed RLE of a (H, W) bool mask: run lengths of 0s and 1s alternately, from
    a run of 0s, the pixels in column-major order (pycocotools' frPyObjects reads it)."""
    mask = np.asarray(mask, bool)
    flat = mask.reshape(-1, order="F")
    changes = np.flatnonzero(np.diff(flat.astype(np.int8))) + 1
    edges = np.concatenate([[0], changes, [flat.size]])
    counts = np.diff(edges).tolist()
    if flat.size and flat[0]:
        counts = [0] + counts
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": [int(c) for c in counts]}


def mask_box(mask) -> tuple[list, int]:
    """(COCO bbox [x, y, width, height] of the drawn pixels, their count); [0, 0, 0, 0] when none."""
    rows, columns = np.nonzero(mask)
    if len(rows) == 0:
        return [0, 0, 0, 0], 0
    x0, y0 = int(columns.min()), int(rows.min())
    return [x0, y0, int(columns.max()) + 1 - x0, int(rows.max()) + 1 - y0], int(len(rows))
