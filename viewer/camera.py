"""Orbit camera: yaw/pitch/distance around a target (numpy, no GL).

Right-handed, Y up; at yaw 0 and pitch 0 the camera looks down -Z at the target, so +X is to
the right of the image. Matrices are in the project's row-vector layout, pyrr's, and built by
pyrr (``create_look_at``, ``create_perspective_projection``).

``framed_camera(scene)`` aims a camera at what is drawn: the posed, skinned model and its joints.
"""

from __future__ import annotations

import numpy as np
import pyrr

from .errors import ViewerError
from .model.arrays import distinct
from .model.checks import LIMIT_TEXT, MAX_MAGNITUDE, finite_array, finite_number

VIEW_YAW, VIEW_PITCH = 20.0, 10.0  # the viewer's three-quarter view: from the front-right, a little above
FRAME_MARGIN = 0.1  # of the half-width and half-height, left free around a framed model
# The closest a camera comes to its target: zooming and framing stop here, and a distance given
# below it is refused (the near plane, a hundredth of it with a floor of 1e-4, must stay in front
# of the far plane, and the eye apart from the target in float32). The farthest is
# checks.MAX_MAGNITUDE, as for every value that reaches float32.
MIN_DISTANCE = 1e-3
ORBIT_DEGREES_PER_PIXEL = 0.4   # a mouse drag's turn, in the window and the notebook alike
ZOOM_PER_WHEEL_STEP = 0.9       # the distance's factor per wheel step (a notch)


class OrbitCamera:
    def __init__(self, target=(0.0, 0.0, 0.0), distance=5.0, yaw=0.0, pitch=0.0, fov_y=40.0):
        self.target = target
        self.distance = distance
        self.yaw = yaw               # degrees, about +Y
        self.pitch = pitch           # degrees, positive looks down on the target
        self.fov_y = fov_y           # degrees
        self.near_ratio = 0.01       # near plane as a fraction of the distance
        self.screen_offset = 0.0     # shift of the image centre, in NDC x (a side panel's room)

    # Checked on every write: a script or a caller setting a bad value gets one clear error, not
    # a broken frame later.
    @property
    def target(self) -> np.ndarray:
        return self._target

    @target.setter
    def target(self, value) -> None:
        self._target = finite_array(value, (3,), "camera target")

    @property
    def distance(self) -> float:
        return self._distance

    @distance.setter
    def distance(self, value) -> None:
        distance = finite_number(value, "camera distance")
        if not distance >= MIN_DISTANCE:
            raise ViewerError(f"camera distance: must be at least {MIN_DISTANCE:g}, got {value!r}")
        self._distance = distance

    @property
    def yaw(self) -> float:
        return self._yaw

    @yaw.setter
    def yaw(self, value) -> None:
        self._yaw = finite_number(value, "camera yaw")

    @property
    def pitch(self) -> float:
        return self._pitch

    @pitch.setter
    def pitch(self, value) -> None:
        self._pitch = finite_number(value, "camera pitch")

    @property
    def fov_y(self) -> float:
        return self._fov_y

    @fov_y.setter
    def fov_y(self, value) -> None:
        fov_y = finite_number(value, "camera fov")
        if not FOV_RANGE[0] < fov_y < FOV_RANGE[1]:
            raise ViewerError(f"camera fov: must be between {FOV_RANGE[0]:g} and {FOV_RANGE[1]:g} degrees "
                              f"(both excluded), got {value!r}")
        self._fov_y = fov_y

    def offset(self) -> np.ndarray:
        """The eye's place relative to the target (distance along the yaw/pitch direction)."""
        yaw, pitch = np.radians(self.yaw), np.radians(self.pitch)
        return self.distance * np.array([np.sin(yaw) * np.cos(pitch), np.sin(pitch), np.cos(yaw) * np.cos(pitch)])

    @property
    def position(self) -> np.ndarray:
        return self.target + self.offset()

    def view_matrix(self) -> np.ndarray:
        # Aimed from the offset, not from position - target: far from the origin that difference
        # loses the offset's digits (or all of it, and the view turns NaN).
        view = look_at(self.offset(), np.zeros(3), np.array([0.0, 1.0, 0.0]))
        view[3, :3] -= self.target @ view[:3, :3]  # translate by -target first
        return view

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

    def frame_points(self, points, yaw=None, pitch=None, aspect: float = 1.0, margin: float = FRAME_MARGIN,
                     target=None, distance=None) -> None:
        """Aim at world points from the nearest distance that shows them all, centred.

        ``aspect`` is the image's width / height; ``margin`` is the fraction of the
        half-width and half-height left free on each side. Exact for this view direction:
        a point is in view when |x - s| <= tan * depth along each image axis, which bounds the
        distance from below and leaves one centre s at that distance (the middle of the range).

        ``target`` given: the camera keeps it and backs off until every point is in view;
        ``distance`` given: the camera keeps it and aims at the framed centre.
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
        if target is not None:
            self.target = target
            offsets = points - self.target
            depth = offsets @ back
            # In view from distance D when |across| <= tan * (D - depth) on both image axes.
            reach = np.maximum(np.abs(offsets @ right) / (tan_y * aspect), np.abs(offsets @ up) / tan_y)
            needed = float(np.max(depth + reach))
            self.distance = distance if distance is not None else _framing_distance(
                max(needed, float(depth.max()) / (1.0 - 2.0 * self.near_ratio), MIN_DISTANCE), points)
            return
        depth = points @ back  # towards the camera
        eye_depth, centre = [], []
        for across, tan in ((points @ right, tan_y * aspect), (points @ up, tan_y)):
            far_side, near_side = np.max(across + tan * depth), np.min(across - tan * depth)
            eye_depth.append((far_side - near_side) / (2.0 * tan))
            centre.append((far_side + near_side) / 2.0)
        middle = (depth.min() + depth.max()) / 2.0  # orbit about the middle of the model's depth
        self.target = centre[0] * right + centre[1] * up + middle * back
        if distance is not None:
            self.distance = distance
            return
        # Keep the near plane (a fraction of the distance) clear of the nearest point.
        self.distance = _framing_distance(max(max(eye_depth) - middle, (depth.max() - middle) /
                                              (1.0 - 2.0 * self.near_ratio), MIN_DISTANCE), points)

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
        view = look_at(self.offset(), np.zeros(3), np.array([0.0, 1.0, 0.0]))
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
        self.distance = float(np.clip(self.distance * factor, MIN_DISTANCE, 1e6))

    def mouse_drag(self, button: int, dx: float, dy: float, height: float) -> None:
        """A mouse drag of (dx, dy) pixels in a view ``height`` pixels high: button 0 (left)
        orbits, any other pans (the window's and the notebook's one mapping)."""
        if button == 0:
            self.orbit(-dx * ORBIT_DEGREES_PER_PIXEL, dy * ORBIT_DEGREES_PER_PIXEL)
        else:
            self.pan(dx / max(height, 1), dy / max(height, 1))

    def wheel(self, steps: float) -> None:
        """``steps`` wheel notches: positive (away from the user) comes closer."""
        self.zoom(ZOOM_PER_WHEEL_STEP ** steps)

    def project(self, points, width: int, height: int) -> np.ndarray:
        """Pixel coordinates (x right, y down) of world points, for tests and picking."""
        points = np.atleast_2d(np.asarray(points, dtype=np.float64))
        clip = np.c_[points, np.ones(len(points))] @ self.view_matrix() @ self.projection_matrix(width / height)
        ndc = clip[:, :3] / clip[:, 3:4]
        return np.c_[(ndc[:, 0] + 1) / 2 * width, (1 - ndc[:, 1]) / 2 * height]


def look_at(eye, target, up) -> np.ndarray:
    """World to view, row-vector layout."""
    return pyrr.matrix44.create_look_at(np.asarray(eye, np.float64), np.asarray(target, np.float64),
                                        np.asarray(up, np.float64), dtype=np.float64)


def perspective(fov_y, aspect, near, far) -> np.ndarray:
    """gluPerspective, row-vector layout."""
    return pyrr.matrix44.create_perspective_projection(fov_y, aspect, near, far, dtype=np.float64)


BOUNDS_SAMPLES = 100  # poses sampled at most to frame a sequence (evenly spread)


def framed_camera(scene, yaw: float = VIEW_YAW, pitch: float = VIEW_PITCH, aspect: float = 1.0,
                  times=None, pose_at=None, fov=None, target=None, distance=None, points=None) -> OrbitCamera:
    """A camera, from a three-quarter view by default, that shows the whole model in an image
    of width / height ``aspect``: as posed now, or, with ``times`` and ``pose_at(time)`` (which
    poses the scene), in every pose of that sequence, so one camera serves every frame.
    ``points``: world points already gathered (e.g. each recorded frame's deciding points).

    ``fov``, ``target`` and ``distance`` given are kept; what is not given is framed.
    Long sequences are bounded by an evenly spread subset of BOUNDS_SAMPLES times.
    """
    camera = OrbitCamera(yaw=yaw, pitch=pitch, fov_y=40.0 if fov is None else fov)
    if points is not None:
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    elif times is None:
        points = drawn_points(scene)
    else:
        times = list(times)
        if len(times) > BOUNDS_SAMPLES:
            picks = distinct(np.linspace(0, len(times) - 1, BOUNDS_SAMPLES).round().astype(int))
            times = [times[i] for i in picks]
        deciding = []
        for time in times:
            pose_at(time)
            deciding.append(camera.deciding_points(drawn_points(scene), aspect))
        points = np.concatenate(deciding)
    camera.frame_points(points, aspect=aspect, target=target, distance=distance)
    return camera


def turntable_cameras(scene, count: int, description, aspect: float):
    """``count`` cameras going once round the posed model from the description's yaw, all at one
    distance and aimed at one point, so the model turns in place and stays whole on every side;
    a target, distance or field of view the description gives is kept."""
    yaw = VIEW_YAW if description.yaw is None else description.yaw
    pitch = VIEW_PITCH if description.pitch is None else description.pitch
    fov_y = 40.0 if description.fov is None else description.fov
    yaws = [yaw + 360.0 * k / count for k in range(count)]
    if description.target is not None:
        target = np.array(description.target)
    else:
        low, high = scene.current_bounds()
        target = (low + high) / 2.0
    if description.distance is not None:
        distance = description.distance
    else:
        framed = [framed_camera(scene, yaw=y, pitch=pitch, aspect=aspect, fov=fov_y, target=description.target)
                  for y in yaws[:: max(1, count // 24)]]
        # Framing at each side aims at a slightly different point; from the box centre the model
        # may reach a little further from the middle of the image: keep 10% more distance.
        distance = 1.1 * max(camera.distance + float(np.linalg.norm(camera.target - target)) for camera in framed)
    return [OrbitCamera(target=target, distance=distance, yaw=y, pitch=pitch, fov_y=fov_y) for y in yaws]


# --- the camera description: render, view, the panel and scripts share it ----------------------------
CAMERA_KEYS = ("yaw", "pitch", "distance", "target", "fov")
FOV_RANGE = (1.0, 179.0)  # degrees, both excluded


class CameraDescription:
    """Where a camera is, as a user writes it: ``{"yaw", "pitch", "distance", "target", "fov"}``
    (degrees, world units, ``target`` an [x, y, z] point), any of them None: to be framed.

    ``--camera FILE.json``, ``--yaw/--pitch/--target/--distance/--fov``, the panel's "Copy
    camera" / "Save camera..." and ``app.camera = {...}`` all read or write this one shape;
    every value is checked here, so a bad one is one line before anything is drawn.
    """

    def __init__(self, yaw=None, pitch=None, distance=None, target=None, fov=None, source: str = "camera"):
        self.yaw = None if yaw is None else _checked(yaw, f"{source}: yaw")
        self.pitch = None if pitch is None else _checked(pitch, f"{source}: pitch", low=-89.0, high=89.0,
                                                         inclusive=True)
        self.distance = None if distance is None else _checked(distance, f"{source}: distance", low=MIN_DISTANCE,
                                                               inclusive=True)
        self.fov = None if fov is None else _checked(fov, f"{source}: fov", *FOV_RANGE)
        self.target = None
        if target is not None:
            if isinstance(target, (str, bytes)) or not hasattr(target, "__len__") or len(target) != 3:
                raise ViewerError(f"{source}: target must be 3 numbers [x, y, z], got {_shown(target)}")
            self.target = tuple(_checked(v, f"{source}: target") for v in target)

    @classmethod
    def from_dict(cls, data, source: str = "camera") -> "CameraDescription":
        if not isinstance(data, dict):
            raise ViewerError(f"{source}: expected a JSON object with {', '.join(CAMERA_KEYS)}, "
                              f"got {type(data).__name__}")
        unknown = sorted(set(data) - set(CAMERA_KEYS))
        if unknown:
            raise ViewerError(f"{source}: unknown key {unknown[0]!r} (the keys are {', '.join(CAMERA_KEYS)})")
        return cls(**{key: data.get(key) for key in CAMERA_KEYS}, source=source)

    @classmethod
    def read(cls, path, option: str = "--camera") -> "CameraDescription":
        """A camera JSON file, checked (a ViewerError names the file and what is wrong)."""
        import json
        from pathlib import Path

        path = Path(path)
        source = f"{option} {path}"
        if path.is_dir():
            raise ViewerError(f"{source}: is a folder, not a camera JSON file")
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ViewerError(f"{source}: no such file") from None
        except (OSError, UnicodeDecodeError) as error:
            raise ViewerError(f"{source}: cannot read it: {getattr(error, 'strerror', None) or error}") from None
        try:
            data = json.loads(text, parse_constant=lambda name: float(name))
        except json.JSONDecodeError as error:
            raise ViewerError(f"{source}: not valid JSON: {error.msg} at line {error.lineno} column "
                              f"{error.colno}") from None
        return cls.from_dict(data, source)

    @classmethod
    def of(cls, camera: OrbitCamera) -> "CameraDescription":
        """Where ``camera`` is now, every field given."""
        return cls(yaw=camera.yaw, pitch=float(np.clip(camera.pitch, -89.0, 89.0)), distance=camera.distance,
                   target=camera.target.tolist(), fov=camera.fov_y)

    def to_dict(self) -> dict:
        return {key: (list(value) if isinstance(value, tuple) else value)
                for key in CAMERA_KEYS if (value := getattr(self, key)) is not None}

    def to_json(self) -> str:
        import json

        return json.dumps({key: (round(v, 6) if isinstance(v, float) else [round(x, 6) for x in v])
                           for key, v in self.to_dict().items()})

    def save(self, path) -> None:
        """Write the JSON whole or not at all (a temporary file renamed into place)."""
        from .files import write_file

        write_file(path, self.to_json() + "\n")

    def updated(self, other: "CameraDescription") -> "CameraDescription":
        """This description with ``other``'s given fields over it."""
        merged = CameraDescription()
        for key in CAMERA_KEYS:
            value = getattr(other, key)
            setattr(merged, key, getattr(self, key) if value is None else value)
        return merged

    @property
    def complete(self) -> bool:
        return self.distance is not None and self.target is not None

    def camera(self, scene=None, aspect: float = 1.0, times=None, pose_at=None, points=None) -> OrbitCamera:
        """The camera: what is given, and the rest framed on the model (as ``framed_camera``);
        the viewer's three-quarter angle where yaw or pitch is not given."""
        yaw = VIEW_YAW if self.yaw is None else self.yaw
        pitch = VIEW_PITCH if self.pitch is None else self.pitch
        if self.complete:
            return OrbitCamera(target=self.target, distance=self.distance, yaw=yaw, pitch=pitch,
                               fov_y=40.0 if self.fov is None else self.fov)
        return framed_camera(scene, yaw=yaw, pitch=pitch, aspect=aspect, times=times, pose_at=pose_at, fov=self.fov,
                             target=self.target, distance=self.distance, points=points)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _checked(value, what: str, low: float | None = None, high: float | None = None, inclusive: bool = False) -> float:
    """A number (not a bool or a string) that fits float32 (checks.MAX_MAGNITUDE) within (low, high), or
    one ViewerError line."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ViewerError(f"{what} must be a number, got {_shown(value)}")
    number = float(value)
    if not abs(number) <= MAX_MAGNITUDE:
        raise ViewerError(f"{what} must be a finite number with a magnitude up to {LIMIT_TEXT}, got {_shown(value)}")
    too_low = low is not None and (number < low if inclusive else number <= low)
    too_high = high is not None and (number > high if inclusive else number >= high)
    if too_low or too_high:
        if low is not None and high is not None:
            bounds = f"between {low:g} and {high:g}" + (" degrees" if "fov" in what or "pitch" in what else "")
            if not inclusive:
                bounds += " (both excluded)"
        else:
            bounds = f"{'at least' if inclusive else 'more than'} {low:g}"
        raise ViewerError(f"{what} must be {bounds}, got {_shown(value)}")
    return number


def drawn_points(scene) -> np.ndarray:
    """World-space points of the model as posed now: the skinned vertices and the skeleton's
    joints (not the overlay's leaf tips, whose lengths are guesses). Placed scenes (several
    models side by side): every model's, moved by its offset."""
    placements = getattr(scene, "placements", None)
    if placements is not None:
        points = [drawn_points(placed.scene) + placed.offset for placed in placements]
        return np.concatenate(points) if points else np.zeros((0, 3))
    scene.prepare()
    points = [mesh.skinned_positions() for mesh in scene.meshes]
    points += [(mesh.skeleton.get_absolute_matrices() @ mesh.world_matrix)[:, 3, :3]
               for mesh in scene.skinned_meshes if mesh.skeleton is not None]
    return np.concatenate(points) if points else np.zeros((0, 3))


def _framing_distance(distance: float, points: np.ndarray) -> float:
    """``distance``, the camera's to frame ``points``; a model too large to frame (a pose or clip
    that sends a bone 1e18 units away) is said in the model's own numbers, not the camera's."""
    if np.isfinite(distance) and distance <= MAX_MAGNITUDE:
        return distance
    with np.errstate(over="ignore", invalid="ignore"):
        low, high = points.min(axis=0), points.max(axis=0)
        span = float(np.linalg.norm(high - low))
    corner = ", ".join(f"{v:.3g}" for v in (high if np.abs(high).max() >= np.abs(low).max() else low))
    raise ViewerError(f"the model is too large to frame: it spans {span:.3g} units, out to ({corner}) (a camera "
                      f"frames up to {LIMIT_TEXT}); a pose or clip may move a bone that far")
