"""Picking, gizmo and mirror maths for posing in the viewport (numpy only: no GL, no ImGui).

The ui (viewer/ui/gestures.py) turns mouse and key events into calls on these functions and
on the model's public API; everything here is testable without a window.

Screen conventions: pixel coordinates x right, y down, origin at the top-left (as mouse events
and ``app.project``); ``size`` is (width, height) in those pixels. Matrices are the project's
row-vector layout (``v @ M``).
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

import numpy as np

from ..errors import ViewerError
from ..model.transforms import compose, quaternion_from_rotation_matrix
from ..model.weights import heaviest_joint, triangle_bone  # noqa: F401 (heaviest_joint: kept importable here)

PICK_PIXELS = 6.0        # a click this close to a drawn bone segment picks it
RING_PIXELS = 80.0       # the radius of the gizmo's axis rings on screen
VIEW_RING_PIXELS = 96.0  # the radius of the view ring (the axis facing the viewer)
ARROW_PIXELS = 110.0     # the length of a translate arrow
GIZMO_HIT_PIXELS = 7.0   # how close to a ring or an arrow a press grabs it
RING_SEGMENTS = 64
SNAP_DEGREES = 15.0
CLICK_PIXELS = 4.0       # a press that moves less than this before release is a click (else a drag)


# --- projection -------------------------------------------------------------------------------------
def view_projection(camera, size) -> np.ndarray:
    """The camera's world-to-clip matrix for an image of ``size`` (width, height)."""
    width, height = size
    return camera.view_matrix() @ camera.projection_matrix(width / max(height, 1))


def project(points, matrix, size) -> tuple[np.ndarray, np.ndarray]:
    """(pixels (N, 2), in_front (N,)) of world points through the world-to-clip ``matrix``."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    clip = np.c_[points, np.ones(len(points))] @ matrix
    w = clip[:, 3]
    in_front = w > 1e-9
    safe = np.where(in_front, w, 1.0)
    x = (clip[:, 0] / safe + 1.0) / 2.0 * size[0]
    y = (1.0 - clip[:, 1] / safe) / 2.0 * size[1]
    return np.c_[x, y], in_front


def pixel_ray(pixel, matrix, size) -> tuple[np.ndarray, np.ndarray]:
    """The world ray (origin on the near plane, unit direction) under a pixel."""
    x = 2.0 * pixel[0] / size[0] - 1.0
    y = 1.0 - 2.0 * pixel[1] / size[1]
    inverse = np.linalg.inv(matrix)
    near, far = np.array([x, y, -1.0, 1.0]) @ inverse, np.array([x, y, 1.0, 1.0]) @ inverse
    near, far = near[:3] / near[3], far[:3] / far[3]
    direction = far - near
    return near, direction / np.linalg.norm(direction)


def ray_plane(origin, direction, point, normal):
    """Where a ray meets a plane (a point and its normal), or None when it runs along it or away."""
    denominator = float(np.dot(direction, normal))
    if abs(denominator) < 1e-12:
        return None
    t = float(np.dot(np.asarray(point) - origin, normal)) / denominator
    return None if t < 0 else origin + t * np.asarray(direction)


# --- picking ----------------------------------------------------------------------------------------
def segment_distances(pixel, starts, ends) -> tuple[np.ndarray, np.ndarray]:
    """Distance (pixels) from ``pixel`` to each 2D segment, and where along it (0..1) the
    nearest point is."""
    p = np.asarray(pixel, dtype=np.float64)
    starts, ends = np.asarray(starts, np.float64).reshape(-1, 2), np.asarray(ends, np.float64).reshape(-1, 2)
    d = ends - starts
    length2 = np.einsum("ij,ij->i", d, d)
    t = np.clip(np.einsum("ij,ij->i", p - starts, d) / np.where(length2 > 0, length2, 1.0), 0.0, 1.0)
    nearest = starts + d * t[:, None]
    return np.linalg.norm(nearest - p, axis=1), t


def pick_segment(pixel, starts, ends, radius: float = PICK_PIXELS):
    """The index of the segment nearest ``pixel`` within ``radius`` pixels, or None. At a
    joint shared by a bone's segment (its start) and its parent's (its end), the bone whose
    segment starts there wins, so a click at a bone's projected position picks that bone."""
    if len(starts) == 0:
        return None
    distance, t = segment_distances(pixel, starts, ends)
    score = np.where(distance <= radius, distance + 0.5 * t, np.inf)
    index = int(np.argmin(score))
    return index if np.isfinite(score[index]) else None


def ray_triangles(origin, direction, vertices, triangles):
    """The nearest triangle a ray hits (Moller-Trumbore, both faces): (index, distance) or None.

    ``vertices`` (V, 3) world points, ``triangles`` (T, 3) vertex indices."""
    v0 = vertices[triangles[:, 0]]
    e1 = vertices[triangles[:, 1]] - v0
    e2 = vertices[triangles[:, 2]] - v0
    p = np.cross(direction, e2)
    det = np.einsum("ij,ij->i", e1, p)
    ok = np.abs(det) > 1e-12
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = origin - v0
    u = np.einsum("ij,ij->i", s, p) * inv
    q = np.cross(s, e1)
    v = (q @ direction) * inv
    t = np.einsum("ij,ij->i", e2, q) * inv
    hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
    if not hit.any():
        return None
    t = np.where(hit, t, np.inf)
    index = int(np.argmin(t))
    return index, float(t[index])


def drawn_points(mesh) -> np.ndarray:
    """A mesh's world-space vertex positions as drawn now: morphed, skinned and placed
    (``mesh.skinned_positions()``; the compiled skinning where it is built)."""
    return mesh.skinned_positions()


def ray_meshes(origin, direction, meshes):
    """The nearest triangle of any of ``meshes`` that a ray hits: (mesh, triangle, distance) or None."""
    nearest = None
    for mesh in meshes:
        hit = ray_triangles(origin, direction, drawn_points(mesh), mesh.indices.reshape(-1, 3))
        if hit is not None and (nearest is None or hit[1] < nearest[2]):
            nearest = (mesh, hit[0], hit[1])
    return nearest


def mesh_bone_at(scene, pixel, matrix, size):
    """The bone a click at ``pixel`` on the mesh picks, by a numpy ray cast on the CPU-skinned
    meshes (every mesh of the scene, the nearest hit): the bone with the largest summed weight
    on the triangle hit, or the bone a mesh without a skin hangs from (``triangle_bone``); None
    off the mesh. The GPU ID pass (``Renderer.pick_bone``) answers the same question faster;
    this is its fallback without a GL context and its reference in the tests."""
    origin, direction = pixel_ray(pixel, matrix, size)
    hit = ray_meshes(origin, direction, scene.meshes)
    return None if hit is None else triangle_bone(hit[0], scene, hit[1])


def picked_mesh_bone(scene, pixel, matrix, size, gpu_pick=None):
    """``mesh_bone_at``'s answer through the GPU ID pass where there is one: ``gpu_pick(x, y)``
    (Renderer.pick_bone: (skeleton, index) or None); without it, or when it fails with a
    ViewerError (e.g. a forced uniform array that does not fit), the ray cast answers."""
    if gpu_pick is not None:
        try:
            picked = gpu_pick(float(pixel[0]), float(pixel[1]))
        except ViewerError:
            picked = False
        if picked is not False:
            return None if picked is None else picked[0].bones[picked[1]]
    return mesh_bone_at(scene, pixel, matrix, size)


def segment_bone_at(segments, pixel, matrix, size):
    """The bone whose drawn overlay segment (``segments``: render.geometry.skeleton_segments of
    the scene) passes within PICK_PIXELS of ``pixel``, the nearest (and nearer its head) first;
    None when none does."""
    best = None
    for entry in segments:
        starts, front_a = project(entry.starts, matrix, size)
        ends, front_b = project(entry.ends, matrix, size)
        keep = np.flatnonzero(front_a & front_b)
        index = pick_segment(pixel, starts[keep], ends[keep])
        if index is not None:
            distance, t = segment_distances(pixel, starts[keep][index], ends[keep][index])
            score = float(distance[0] + 0.5 * t[0])
            if best is None or score < best[0]:
                best = (score, entry.skeleton.bones[int(entry.owners[keep][index])])
    return None if best is None else best[1]


def bone_at(scene, display, pixel, matrix, size, segments, gpu_pick=None, mesh: bool = True):
    """The bone a click at ``pixel`` picks, as the window and the notebook pick: the nearest
    drawn bone segment (``segments``, see segment_bone_at) within a few pixels when ``display``
    (a RenderOptions) shows the skeleton, else the bone with the largest weight on the mesh
    triangle under it (``picked_mesh_bone``, with ``gpu_pick`` for the ID pass), else None."""
    if display.show_skeleton:
        bone = segment_bone_at(segments, pixel, matrix, size)
        if bone is not None:
            return bone
    if not mesh or not display.show_mesh:
        return None
    return picked_mesh_bone(scene, pixel, matrix, size, gpu_pick)


# --- the rotate and translate gizmo -----------------------------------------------------------------
def screen_angle(center, start, current) -> float:
    """The angle (radians) swept from ``start`` to ``current`` around ``center``, counter-
    clockwise as seen on screen positive (pixel y points down)."""
    a = np.asarray(start, float) - center
    b = np.asarray(current, float) - center
    # y down: flip it so that counter-clockwise on screen is positive.
    cross = a[0] * -b[1] - (-a[1]) * b[0]
    dot = a[0] * b[0] + a[1] * b[1]
    if not (np.any(a) and np.any(b)):
        return 0.0
    return math.atan2(cross, dot)


def unwrap(previous: float, angle: float) -> float:
    """``angle`` moved by whole turns to lie within half a turn of ``previous`` (so a drag
    that goes round the centre keeps counting)."""
    return angle + 2.0 * math.pi * round((previous - angle) / (2.0 * math.pi))


def snapped(angle: float, step_degrees: float = SNAP_DEGREES) -> float:
    step = math.radians(step_degrees)
    return round(angle / step) * step


def facing_sign(axis, to_camera) -> float:
    """+1 when the axis points towards the camera (a counter-clockwise sweep on screen is then
    a right-handed turn about it), else -1."""
    return 1.0 if float(np.dot(axis, to_camera)) >= 0.0 else -1.0


def ring_points(center, axis, radius: float, segments: int = RING_SEGMENTS) -> np.ndarray:
    """A closed polyline (segments + 1, 3) of a circle of world ``radius`` about ``axis``."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(axis, helper)
    u /= np.linalg.norm(u)
    v = np.cross(axis, u)
    angles = np.linspace(0.0, 2.0 * math.pi, segments + 1)
    return np.asarray(center, float) + radius * (np.cos(angles)[:, None] * u + np.sin(angles)[:, None] * v)


class Handle(NamedTuple):
    """One grabbable part of the gizmo: ``kind`` "ring" or "arrow", ``axis`` a world unit
    vector (for the view ring, towards the camera), ``name`` "X", "Y", "Z" or "view"."""

    kind: str
    name: str
    axis: np.ndarray
    points: np.ndarray   # world polyline (a ring) or (origin, tip) (an arrow)


def gizmo_handles(center, axes, to_camera, world_per_pixel: float, rings: bool = True,
                  arrows: bool = False, scale: float = 1.0) -> list[Handle]:
    """The gizmo at ``center``: three axis rings (``axes`` rows are the world X, Y, Z of the
    chosen space), a view ring facing the camera, and optionally three translate arrows,
    sized in pixels (``world_per_pixel`` at the centre) so they look the same at any zoom."""
    handles = []
    names = ("X", "Y", "Z")
    if arrows:
        for name, axis in zip(names, axes):
            tip = center + axis * ARROW_PIXELS * scale * world_per_pixel
            handles.append(Handle("arrow", name, axis, np.array([center, tip])))
    if rings:
        for name, axis in zip(names, axes):
            handles.append(Handle("ring", name, axis, ring_points(center, axis, RING_PIXELS * scale * world_per_pixel)))
        handles.append(Handle("ring", "view", to_camera,
                              ring_points(center, to_camera, VIEW_RING_PIXELS * scale * world_per_pixel)))
    return handles


def pick_handle(pixel, handles, matrix, size, radius: float = GIZMO_HIT_PIXELS):
    """The handle nearest ``pixel`` within ``radius`` pixels (arrows first), or None."""
    best, best_distance = None, radius
    for handle in handles:
        screen, front = project(handle.points, matrix, size)
        if not front.all():
            continue
        distance = float(segment_distances(pixel, screen[:-1], screen[1:])[0].min())
        if handle.kind == "arrow":
            distance -= 2.0  # arrows sit inside the rings: let them win near their shafts
        if distance <= best_distance:
            best, best_distance = handle, distance
    return best


def axis_drag(start_pixel, pixel, origin, axis, matrix, size, world_per_pixel: float) -> float:
    """How far (world units) a drag from ``start_pixel`` to ``pixel`` moves along a world
    ``axis`` through ``origin``: the mouse motion projected on the axis's screen direction."""
    reach = world_per_pixel * 100.0
    screen, _ = project([origin, origin + axis * reach], matrix, size)
    direction = screen[1] - screen[0]
    length = float(np.linalg.norm(direction))
    if length < 1e-6:
        return 0.0  # the axis points at the camera
    moved = float(np.dot(np.asarray(pixel, float) - start_pixel, direction / length))
    return moved / length * reach


def rotation_about(axis, angle: float) -> np.ndarray:
    """A 3x3 right-handed rotation about a unit ``axis`` in the row-vector layout (v @ R)."""
    x, y, z = np.asarray(axis, float) / np.linalg.norm(axis)
    c, s = math.cos(angle), math.sin(angle)
    C = 1.0 - c
    column = np.array([[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
                       [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
                       [z * x * C - y * s, z * y * C + x * s, c + z * z * C]])
    return column.T


# --- IK handles -------------------------------------------------------------------------------------
HANDLE_NAME = re.compile(r"hand|foot|wrist|ankle|palm", re.IGNORECASE)


def is_ik_handle(bone) -> bool:
    """A chain end that the viewport marks for IK dragging: a bone with at least two
    ancestors named like a hand or a foot (hand, foot, wrist, ankle, palm)."""
    return _depth(bone) >= 2 and bool(HANDLE_NAME.search(bone.name))


def can_ik_drag(bone) -> bool:
    """Whether dragging ``bone`` can bend the two bones above it (it has two ancestors)."""
    return _depth(bone) >= 2


def _depth(bone) -> int:
    depth, parent = 0, bone.get_parent()
    while parent is not None and depth < 2:
        depth, parent = depth + 1, parent.get_parent()
    return depth


def pole_from_bend(shoulder, elbow, end, fallback) -> np.ndarray:
    """A pole point in the chain's current bend: the elbow pushed away from the shoulder-end
    line by the chain's length, so that IK keeps the elbow on the side it bends now (a
    straight chain keeps ``fallback``'s side)."""
    shoulder, elbow, end = (np.asarray(p, float) for p in (shoulder, elbow, end))
    line = end - shoulder
    length = float(np.linalg.norm(line))
    if length < 1e-12:
        return np.asarray(fallback, float)
    line /= length
    offset = (elbow - shoulder) - line * float(np.dot(elbow - shoulder, line))
    reach = np.linalg.norm(elbow - shoulder) + np.linalg.norm(end - elbow)
    if np.linalg.norm(offset) < 1e-4 * reach:
        offset = np.asarray(fallback, float) - shoulder
        offset -= line * float(np.dot(offset, line))
        if np.linalg.norm(offset) < 1e-12:
            return np.asarray(fallback, float)
    return elbow + offset / np.linalg.norm(offset) * reach


# --- mirror -----------------------------------------------------------------------------------------
def _swap_case(word: str, like: str) -> str:
    if like.isupper():
        return word.upper()
    if like[:1].isupper():
        return word.capitalize()
    return word


def side_of(name: str) -> str | None:
    """"L", "R" or None: the side a bone name says (Left/Right, L/R, .L/.R, _l/_r, l_/r_, ...)."""
    swapped = mirror_name(name)
    if swapped is None:
        return None
    lowered = name.lower()
    if "left" in lowered and "right" not in lowered:
        return "L"
    if "right" in lowered and "left" not in lowered:
        return "R"
    match = _side_token(name)
    return None if match is None else match[1].upper()


def _side_token(name: str):
    """(start, letter) of a lone L/R token: separated by . _ - space : digits or a name's ends,
    or a capital L/R starting a CamelCase word (``LHand``); the last such token wins."""
    found = None
    for match in re.finditer(r"(?:^|(?<=[._\-\s:|0-9]))([LlRr])(?=$|[._\-\s:|0-9])|(?:^|(?<=[._\-\s:|]))([LR])(?=[A-Z][a-z])",
                             name):
        start = match.start(1) if match.group(1) else match.start(2)
        found = (start, name[start])
    return found


def mirror_name(name: str) -> str | None:
    """The name of the bone on the other side, or None when the name says no side.

    Left <-> Right in any case (``leftArm``, ``b_LeftHand_011``, ``mixamorig:RightFoot``),
    else one lone L/R token (``Palm2.L``, ``UpperArm_l``, ``l_hand``, ``leg_joint_R_1``,
    ``LHand``), the case kept."""
    def word(match):
        text = match.group(0)
        other = "right" if text.lower() == "left" else "left"
        return _swap_case(other, text)

    swapped, count = re.subn(r"left|right", word, name, flags=re.IGNORECASE)
    if count:
        return swapped
    token = _side_token(name)
    if token is None:
        return None
    start, letter = token
    other = {"L": "R", "R": "L", "l": "r", "r": "l"}[letter]
    return name[:start] + other + name[start + 1:]


def rotation_part(matrices) -> np.ndarray:
    """The rotation of 4x4 or 3x3 row-vector matrices, with the (row) scale taken out."""
    m = np.asarray(matrices, dtype=np.float64)[..., :3, :3]
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def mirror_plane(names, bind_positions) -> tuple[np.ndarray, np.ndarray]:
    """(normal, point) of the model's left-right plane, from the bind positions of bones whose
    names pair up (the normal points from right to left); the world X plane through the
    middle of all joints when no name pairs."""
    index = {name: i for i, name in enumerate(names)}
    positions = np.asarray(bind_positions, float)
    differences, middles = [], []
    for name, i in index.items():
        if side_of(name) != "L":
            continue
        j = index.get(mirror_name(name))
        if j is not None:
            differences.append(positions[i] - positions[j])
            middles.append((positions[i] + positions[j]) / 2.0)
    if differences:
        differences = np.array(differences)
        reference = differences[np.argmax(np.linalg.norm(differences, axis=1))]
        signs = np.where(differences @ reference < 0, -1.0, 1.0)
        normal = (differences * signs[:, None]).sum(axis=0)
        if np.linalg.norm(normal) > 1e-12:
            return normal / np.linalg.norm(normal), np.mean(middles, axis=0)
    return np.array([1.0, 0.0, 0.0]), positions.mean(axis=0) if len(positions) else np.zeros(3)


def mirror_partners(names, bind_positions, normal, point) -> np.ndarray:
    """For each bone, the index of its mirror (itself when it has no side): by name, or, when
    the swapped name is missing (CesiumMan's ``arm_joint_L__4_`` / ``arm_joint_R``), the bone
    of the other side whose bind position is nearest the mirrored one."""
    names = list(names)
    positions = np.asarray(bind_positions, float)
    index = {name: i for i, name in enumerate(names)}
    sides = [side_of(name) for name in names]
    reflected = positions - 2.0 * ((positions - point) @ normal)[:, None] * normal
    partners = np.arange(len(names))
    for i, name in enumerate(names):
        if sides[i] is None:
            continue
        j = index.get(mirror_name(name))
        others = [k for k, side in enumerate(sides) if side not in (None, sides[i])]
        if others:
            # The name's partner, unless it sits far from the mirrored place and another bone
            # of the other side sits there (CesiumMan numbers its arms' joints crosswise).
            distances = np.linalg.norm(positions[others] - reflected[i], axis=1)
            nearest = others[int(np.argmin(distances))]
            reach = float(np.ptp(positions, axis=0).max()) if len(positions) > 1 else 1.0
            if j is None or np.linalg.norm(positions[j] - reflected[i]) > distances.min() + 0.02 * reach:
                j = nearest
        if j is not None:
            partners[i] = j
    return partners


def local_rotations_for(world_targets, world_now, local_now, parents) -> np.ndarray:
    """Local rotations (N, 3, 3) that give the bones ``world_targets`` once their parents have
    theirs: W = L @ P, where the frame above a bone, P, is what it is now (W_now = L_now @ P_now)
    carried along by the parent's change. ``parents`` are indices, parents before children."""
    above_now = np.swapaxes(local_now, -1, -2) @ world_now     # P_now = L_now^-1 @ W_now
    above = above_now.copy()
    has_parent = parents >= 0
    p = parents[has_parent]
    # P_new = P_now @ W_parent_now^-1 @ W_parent_new
    above[has_parent] = above_now[has_parent] @ np.swapaxes(world_now[p], -1, -2) @ world_targets[p]
    return world_targets @ np.swapaxes(above, -1, -2)


def quaternions(rotations) -> np.ndarray:
    """Unit quaternions (x, y, z, w) of 3x3 rotations (row-vector layout, Babylon's convention)."""
    q = quaternion_from_rotation_matrix(rotations)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def mirror_rotations(skeleton, world_matrix, sources=None) -> dict:
    """Mirror a pose across the model's left-right plane: {bone: (local rotation quaternion,
    local position or None)} for its pose target. ``sources`` None mirrors the whole pose:
    every bone takes its partner's turn, mirrored (a centre bone its own), and its partner's
    position reflected; else only the partners of ``sources`` change, each taking its
    source's turn. Reads the skeleton through its public API (call with the pose current;
    the caller writes the result, one undo step)."""
    skeleton.prepare()
    bones = list(skeleton.bones)
    count = len(bones)
    names = [bone.name for bone in bones]
    world4 = np.eye(4) if world_matrix is None else np.asarray(world_matrix, float)
    absolute = skeleton.get_absolute_matrices() @ world4
    bind = np.array([bone.get_absolute_bind_matrix() for bone in bones]) @ world4
    normal, point = mirror_plane(names, bind[:, 3, :3])
    partners = mirror_partners(names, bind[:, 3, :3], normal, point)
    world, bind_rotation = rotation_part(absolute), rotation_part(bind)
    if sources is None:
        chosen = np.arange(count)
    else:
        index = {id(bone): i for i, bone in enumerate(bones)}
        chosen = np.array(sorted({index[id(bone)] for bone in sources}), dtype=int)
    # Bone p = partner(i) takes i's turn away from its bind pose, reflected by S across the
    # plane: W'[p] = B[p] @ S @ (B[i]^-1 @ W[i]) @ S (rotations, row-vector layout).
    targets = world.copy()
    S = np.eye(3) - 2.0 * np.outer(normal, normal)
    delta = np.swapaxes(bind_rotation[chosen], -1, -2) @ world[chosen]
    targets[partners[chosen]] = bind_rotation[partners[chosen]] @ (S @ delta @ S)
    pose_targets = [bone.get_pose_target() for bone in bones]
    local_now = compose(np.array([t.scaling for t in pose_targets]), np.array([t.rotation_quaternion for t in pose_targets]),
                        np.array([t.position for t in pose_targets]))
    parents = np.asarray(skeleton.get_parent_indices())
    local = local_rotations_for(targets, world, rotation_part(local_now), parents)
    changed = sorted(set(int(i) for i in partners[chosen]))
    q = quaternions(local[changed])
    positions = [None] * len(changed)
    if sources is None:
        # The whole pose: each joint also goes where its partner's joint is, reflected
        # (translated bones: roots, IK targets). W = L @ A, A the frame above the bone.
        target4 = absolute.copy()
        target4[:, :3, :3] = targets * np.linalg.norm(absolute[:, :3, :3], axis=-1, keepdims=True)
        reflected = absolute[:, 3, :3] - 2.0 * ((absolute[:, 3, :3] - point) @ normal)[:, None] * normal
        target4[partners, 3, :3] = reflected
        above_now = np.linalg.inv(local_now) @ absolute
        above = above_now.copy()
        has_parent = parents >= 0
        p = parents[has_parent]
        above[has_parent] = above_now[has_parent] @ np.linalg.inv(absolute[p]) @ target4[p]
        local4 = target4 @ np.linalg.inv(above)
        positions = [local4[i, 3, :3] for i in changed]
    return {bones[i]: (q[k], positions[k]) for k, i in enumerate(changed)}
