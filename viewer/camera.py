"""Orbit camera: yaw/pitch/distance around a target (numpy, no GL).

Right-handed, Y up; at yaw 0 and pitch 0 the camera looks down -Z at the target, so +X is to
the right of the image. Matrices are in the project's row-vector layout (pyrr's), built with pyrr's formulas
(``create_look_at``, ``create_perspective_projection``) in plain numpy, so that a headless
render does not import pyrr.
"""

from __future__ import annotations

import numpy as np

VIEW_YAW, VIEW_PITCH = 20.0, 10.0  # the viewer's three-quarter view: from the front-right, a little above
FRAME_MARGIN = 0.1  # of the half-width and half-height, left free around a framed model


class OrbitCamera:
    def __init__(self, target=(0.0, 0.0, 0.0), distance=5.0, yaw=0.0, pitch=0.0, fov_y=40.0):
        self.target = np.asarray(target, dtype=np.float64)
        self.distance = float(distance)
        self.yaw = float(yaw)        # degrees, about +Y
        self.pitch = float(pitch)    # degrees, positive looks down on the target
        self.fov_y = float(fov_y)    # degrees
        self.near_ratio = 0.01       # near plane as a fraction of the distance
        self.screen_offset = 0.0     # shift of the image centre, in NDC x (a side panel's room)

    @property
    def position(self) -> np.ndarray:
        yaw, pitch = np.radians(self.yaw), np.radians(self.pitch)
        offset = np.array([np.sin(yaw) * np.cos(pitch), np.sin(pitch), np.cos(yaw) * np.cos(pitch)])
        return self.target + self.distance * offset

    def view_matrix(self) -> np.ndarray:
        return look_at(self.position, self.target, np.array([0.0, 1.0, 0.0]))

    def projection_matrix(self, aspect: float) -> np.ndarray:
        near = max(self.distance * self.near_ratio, 1e-4)
        far = self.distance * 100.0
        projection = perspective(self.fov_y, aspect, near, far)
        if self.screen_offset:
            projection[:, 0] += self.screen_offset * projection[:, 3]  # x_clip += offset * w_clip
        return projection

    def frame(self, low, high, yaw=None, pitch=None, aspect: float = 1.0, margin: float = FRAME_MARGIN) -> None:
        """Frame a box (low and high corners): see ``frame_points``."""
        (x0, y0, z0), (x1, y1, z1) = low, high
        corners = [(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)]
        self.frame_points(corners, yaw, pitch, aspect, margin)

    def frame_points(self, points, yaw=None, pitch=None, aspect: float = 1.0, margin: float = FRAME_MARGIN) -> None:
        """Aim at world points from the nearest distance that shows them all, centred.

        ``aspect`` is the image's width / height; ``margin`` is the fraction of the
        half-width and half-height left free on each side. Exact for this view direction:
        a point is in view when |x - s| <= tan * depth along each image axis, which bounds the
        distance from below and leaves one centre s at that distance (the middle of the range).
        """
        if yaw is not None:
            self.yaw = float(yaw)
        if pitch is not None:
            self.pitch = float(pitch)
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        if len(points) == 0:
            points = np.zeros((1, 3))
        right, up, back = self.axes()
        tan_y = np.tan(np.radians(self.fov_y) / 2.0) * (1.0 - margin)
        depth = points @ back  # towards the camera
        eye_depth, centre = [], []
        for across, tan in ((points @ right, tan_y * aspect), (points @ up, tan_y)):
            far_side, near_side = np.max(across + tan * depth), np.min(across - tan * depth)
            eye_depth.append((far_side - near_side) / (2.0 * tan))
            centre.append((far_side + near_side) / 2.0)
        middle = (depth.min() + depth.max()) / 2.0  # orbit about the middle of the model's depth
        self.target = centre[0] * right + centre[1] * up + middle * back
        # Keep the near plane (a fraction of the distance) clear of the nearest point.
        self.distance = max(max(eye_depth) - middle, (depth.max() - middle) / (1.0 - 2.0 * self.near_ratio), 1e-3)

    def deciding_points(self, points, aspect: float = 1.0, margin: float = FRAME_MARGIN) -> np.ndarray:
        """The (at most six) points that decide ``frame_points`` for this view direction:
        framing them frames all, so a long sequence needs only these from each frame."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        if len(points) == 0:
            return points
        right, up, back = self.axes()
        tan_y = np.tan(np.radians(self.fov_y) / 2.0) * (1.0 - margin)
        depth = points @ back
        chosen = [np.argmin(depth), np.argmax(depth)]
        for across, tan in ((points @ right, tan_y * aspect), (points @ up, tan_y)):
            chosen += [np.argmax(across + tan * depth), np.argmin(across - tan * depth)]
        return points[chosen]

    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The view's right, up and back (towards the camera) directions, in world space."""
        view = look_at(self.position - self.target, np.zeros(3), np.array([0.0, 1.0, 0.0]))
        return view[:3, 0], view[:3, 1], view[:3, 2]

    # --- interaction (the window maps mouse motion onto these) ---------------------------------
    def orbit(self, d_yaw: float, d_pitch: float) -> None:
        self.yaw = (self.yaw + d_yaw) % 360.0
        self.pitch = float(np.clip(self.pitch + d_pitch, -89.0, 89.0))

    def pan(self, dx: float, dy: float) -> None:
        """Move the target in the view plane; dx, dy are fractions of the view height."""
        view = self.view_matrix()
        right, up = view[:3, 0], view[:3, 1]
        height = 2.0 * self.distance * np.tan(np.radians(self.fov_y) / 2.0)
        self.target = self.target + (-dx * right + dy * up) * height

    def zoom(self, factor: float) -> None:
        self.distance = float(np.clip(self.distance * factor, 1e-3, 1e6))

    def project(self, points, width: int, height: int) -> np.ndarray:
        """Pixel coordinates (x right, y down) of world points, for tests and picking."""
        points = np.atleast_2d(np.asarray(points, dtype=np.float64))
        clip = np.c_[points, np.ones(len(points))] @ self.view_matrix() @ self.projection_matrix(width / height)
        ndc = clip[:, :3] / clip[:, 3:4]
        return np.c_[(ndc[:, 0] + 1) / 2 * width, (1 - ndc[:, 1]) / 2 * height]


def _normalize(vector):
    return vector / np.sqrt(np.sum(vector * vector))


def look_at(eye, target, up) -> np.ndarray:
    """pyrr.matrix44.create_look_at: world to view, row-vector layout."""
    eye, target, up = (np.asarray(v, dtype=np.float64) for v in (eye, target, up))
    forward = _normalize(target - eye)
    side = _normalize(np.cross(forward, up))
    up = _normalize(np.cross(side, forward))
    return np.array(((side[0], up[0], -forward[0], 0.0),
                     (side[1], up[1], -forward[1], 0.0),
                     (side[2], up[2], -forward[2], 0.0),
                     (-np.dot(side, eye), -np.dot(up, eye), np.dot(forward, eye), 1.0)), dtype=np.float64)


def perspective(fov_y, aspect, near, far) -> np.ndarray:
    """pyrr.matrix44.create_perspective_projection (gluPerspective), row-vector layout."""
    ymax = near * np.tan(fov_y * np.pi / 360.0)
    xmax = ymax * aspect
    left, right, bottom, top = -xmax, xmax, -ymax, ymax
    a = (right + left) / (right - left)
    b = (top + bottom) / (top - bottom)
    c = -(far + near) / (far - near)
    d = -2.0 * far * near / (far - near)
    e = 2.0 * near / (right - left)
    f = 2.0 * near / (top - bottom)
    return np.array(((e, 0.0, 0.0, 0.0), (0.0, f, 0.0, 0.0), (a, b, c, -1.0), (0.0, 0.0, d, 0.0)), dtype=np.float64)
