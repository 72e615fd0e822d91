"""Offscreen rendering on EGL (Mesa llvmpipe without a GPU): pixels as numpy, PNGs for CI.

The same Renderer draws here and in the window; only the context and framebuffer differ.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..camera import VIEW_PITCH, VIEW_YAW, OrbitCamera
from ..errors import ViewerError
from .renderer import Renderer, RenderOptions

DEFAULT_SIZE = (800, 600)
BOUNDS_SAMPLES = 100  # poses sampled at most to frame a sequence (evenly spread)


def create_headless_context():
    import moderngl

    try:
        return moderngl.create_standalone_context(backend="egl", require=330)
    except Exception as error:  # moderngl raises plain Exceptions from its loaders
        raise ViewerError(f"cannot create a headless OpenGL 3.3 context on EGL ({error}); on Debian install "
                          "libegl1 libegl-mesa0 libgl1-mesa-dri") from None


def release_egl_current() -> None:
    """Leave no EGL context current on this thread.

    moderngl's release() keeps the EGL context current, and a later GLX window in the same
    process then dies with X BadAccess (see shared/PLATFORM.md).
    """
    try:
        egl = ctypes.CDLL("libEGL.so.1")
    except OSError:
        return
    egl.eglGetCurrentDisplay.restype = ctypes.c_void_p
    egl.eglMakeCurrent.argtypes = [ctypes.c_void_p] * 4
    display = egl.eglGetCurrentDisplay()
    if display:
        egl.eglMakeCurrent(display, None, None, None)


class OffscreenTarget:
    """A color + depth framebuffer of a given size, read back top row first."""

    def __init__(self, ctx, size):
        width, height = _checked_size(size)
        self.ctx, self.size = ctx, (width, height)
        self.color = ctx.renderbuffer((width, height), 4)
        self.depth = ctx.depth_renderbuffer((width, height))
        self.framebuffer = ctx.framebuffer(color_attachments=[self.color], depth_attachment=self.depth)

    def read(self) -> np.ndarray:
        data = self.framebuffer.read(components=4, alignment=1)
        image = np.frombuffer(data, np.uint8).reshape(self.size[1], self.size[0], 4)
        return image[::-1].copy()

    def release(self) -> None:
        for resource in (self.framebuffer, self.color, self.depth):
            resource.release()


class HeadlessRenderer:
    """A standalone context, a Renderer and an offscreen target, reusable across frames.

    >>> with HeadlessRenderer((640, 480)) as headless:
    ...     pixels = headless.render(scene)            # (480, 640, 4) uint8 RGBA
    """

    def __init__(self, size=DEFAULT_SIZE, bone_storage: str = "auto", cpu_skinning: bool = False):
        self.ctx = create_headless_context()
        self.renderer = Renderer(self.ctx, bone_storage=bone_storage, cpu_skinning=cpu_skinning)
        self.target = OffscreenTarget(self.ctx, size)

    @property
    def size(self):
        return self.target.size

    def resize(self, size) -> None:
        if tuple(size) != self.size:
            self.target.release()
            self.target = OffscreenTarget(self.ctx, size)

    def render(self, scene, camera: OrbitCamera | None = None, options: RenderOptions | None = None) -> np.ndarray:
        camera = camera or framed_camera(scene, aspect=self.size[0] / self.size[1])
        self.target.framebuffer.use()
        self.renderer.render(scene, camera, self.size, options)
        return self.target.read()

    def render_crowd(self, crowd, camera: OrbitCamera, options: RenderOptions | None = None) -> np.ndarray:
        """A Crowd drawn with one instanced call (see Renderer.render_crowd), read back."""
        self.target.framebuffer.use()
        self.renderer.render_crowd(crowd, camera, self.size, options)
        return self.target.read()

    def release(self) -> None:
        self.renderer.release()
        self.target.release()
        self.ctx.release()
        release_egl_current()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()




def framed_camera(scene, yaw: float = VIEW_YAW, pitch: float = VIEW_PITCH, aspect: float = 1.0,
                  times=None, pose_at=None) -> OrbitCamera:
    """A camera, from a three-quarter view by default, that shows the whole model in an image
    of width / height ``aspect``: as posed now, or, with ``times`` and ``pose_at(time)`` (which
    poses the scene), in every pose of that sequence, so one camera serves every frame.

    Long sequences are bounded by an evenly spread subset of BOUNDS_SAMPLES times.
    """
    camera = OrbitCamera(yaw=yaw, pitch=pitch)
    if times is None:
        points = drawn_points(scene)
    else:
        times = list(times)
        if len(times) > BOUNDS_SAMPLES:
            picks = np.unique(np.linspace(0, len(times) - 1, BOUNDS_SAMPLES).round().astype(int))
            times = [times[i] for i in picks]
        deciding = []
        for time in times:
            pose_at(time)
            deciding.append(camera.deciding_points(drawn_points(scene), aspect))
        points = np.concatenate(deciding)
    camera.frame_points(points, aspect=aspect)
    return camera


def drawn_points(scene) -> np.ndarray:
    """World-space points of the model as posed now: the skinned vertices and the skeleton's
    joints (not the overlay's leaf tips, whose lengths are guesses)."""
    scene.prepare()
    points = [mesh.skinned_positions() for mesh in scene.meshes]
    points += [(mesh.skeleton.get_absolute_matrices() @ mesh.world_matrix)[:, 3, :3]
               for mesh in scene.skinned_meshes if mesh.skeleton is not None]
    return np.concatenate(points) if points else np.zeros((0, 3))


def render_image(model=None, pose=None, size=DEFAULT_SIZE, *, cpu_skinning: bool = False,
                 bone_texture: bool = False, skeleton: bool = True, grid: bool = True,
                 camera: OrbitCamera | None = None) -> np.ndarray:
    """Render a model (a Scene, a path, or None for the built-in character) with an optional
    pose (a dict or a pose file path) to an RGBA uint8 array of shape (height, width, 4)."""
    from ..loaders import load_model
    from ..pose import apply_pose

    scene = load_model(model)
    if pose is not None:
        apply_pose(scene, pose)
    options = RenderOptions(show_skeleton=skeleton, show_grid=grid)
    with HeadlessRenderer(size, bone_storage="texture" if bone_texture else "auto",
                          cpu_skinning=cpu_skinning) as headless:
        return headless.render(scene, camera, options)


def _checked_size(size):
    try:
        width, height = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ViewerError(f"image size must be two integers, got {size!r}") from None
    if not (1 <= width <= 16384 and 1 <= height <= 16384):
        raise ViewerError(f"image size {width}x{height} is outside 1..16384 pixels per side")
    return width, height
