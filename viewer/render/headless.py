"""Offscreen rendering on EGL (Mesa llvmpipe without a GPU): pixels as numpy, PNGs for CI.

The same Renderer draws here and in the window; only the context and framebuffer differ.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..camera import OrbitCamera, framed_camera
from ..errors import ViewerError
from ..options import RenderOptions
from .renderer import Renderer

DEFAULT_SIZE = (800, 600)


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


class LabelTarget:
    """The labelled draw's targets (boneviewer synth): the colour (RGBA8) and depth buffers of an
    OffscreenTarget, plus an R16UI part index and an R32F camera-space depth as render targets
    1 and 2 of one framebuffer, so one draw writes all three. Read back top row first."""

    def __init__(self, ctx, size):
        self.color_target = OffscreenTarget(ctx, size)
        self.ctx, self.size = ctx, self.color_target.size
        self.parts = ctx.texture(self.size, 1, dtype="u2")
        self.view_depth = ctx.texture(self.size, 1, dtype="f4")
        for texture in (self.parts, self.view_depth):
            texture.filter = (ctx.NEAREST, ctx.NEAREST)
        self.framebuffer = ctx.framebuffer(color_attachments=[self.color_target.color, self.parts, self.view_depth],
                                           depth_attachment=self.color_target.depth)
        width, height = self.size
        self._zeros = bytes(4 * width * height)  # "nothing": glClear does not clear an integer attachment

    def clear_labels(self) -> None:
        width, height = self.size
        self.parts.write(self._zeros[: 2 * width * height])
        self.view_depth.write(self._zeros)

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(colour (H, W, 4) uint8, part (H, W) uint16, depth (H, W) float32, 0 where nothing is drawn)."""
        width, height = self.size
        color = self.color_target.read()
        parts = np.frombuffer(self.parts.read(alignment=1), np.uint16).reshape(height, width)[::-1].copy()
        depth = np.frombuffer(self.view_depth.read(alignment=1), np.float32).reshape(height, width)[::-1].copy()
        return color, parts, depth

    def release(self) -> None:
        for resource in (self.framebuffer, self.parts, self.view_depth):
            resource.release()
        self.color_target.release()


class HeadlessRenderer:
    """A standalone context, a Renderer and an offscreen target, reusable across frames.

    >>> with HeadlessRenderer((640, 480)) as headless:
    ...     pixels = headless.render(scene)            # (480, 640, 4) uint8 RGBA
    """

    def __init__(self, size=DEFAULT_SIZE, bone_storage: str = "auto", cpu_skinning: bool = False):
        self.ctx = create_headless_context()
        self.renderer = Renderer(self.ctx, bone_storage=bone_storage, cpu_skinning=cpu_skinning)
        self.target = OffscreenTarget(self.ctx, size)
        self._labels = None  # the LabelTarget, made on the first render_labels

    @property
    def size(self):
        return self.target.size

    def _current(self) -> None:
        """This renderer's context made current on this thread: another HeadlessRenderer made or
        released since leaves its own or none current, and GL would refuse this one's calls."""
        self.ctx.__enter__()

    def resize(self, size) -> None:
        self._current()
        if tuple(size) != self.size:
            self.target.release()
            self.target = OffscreenTarget(self.ctx, size)

    def render(self, scene, camera: OrbitCamera | None = None, options: RenderOptions | None = None) -> np.ndarray:
        scene.prepare()  # one update per skeleton per frame, however many meshes share it
        camera = camera or framed_camera(scene, aspect=self.size[0] / self.size[1])
        self._current()
        self.target.framebuffer.use()
        self.renderer.render(scene, camera, self.size, options)
        return self.target.read()

    def render_labels(self, scene, camera: OrbitCamera, options: RenderOptions, parts: dict):
        """The colour, part index and depth images of one labelled draw (Renderer.render_labels),
        at this renderer's size: (colour, part, depth) as ``LabelTarget.read``."""
        scene.prepare()
        self._current()
        if self._labels is None or self._labels.size != self.size:
            if self._labels is not None:
                self._labels.release()
            self._labels = LabelTarget(self.ctx, self.size)
        target = self._labels
        target.clear_labels()
        self.renderer.render_labels(scene, camera, self.size, options, parts, target.color_target.framebuffer,
                                    target.framebuffer)
        return target.read()

    def render_crowd(self, crowd, camera: OrbitCamera, options: RenderOptions | None = None) -> np.ndarray:
        """A Crowd drawn with one instanced call (see Renderer.render_crowd), read back."""
        crowd.prepare()  # every copy's skeleton in one batch
        self._current()
        self.target.framebuffer.use()
        self.renderer.render_crowd(crowd, camera, self.size, options)
        return self.target.read()

    def release(self) -> None:
        self._current()
        self.renderer.release()
        self.target.release()
        if self._labels is not None:
            self._labels.release()
        self.ctx.release()
        release_egl_current()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()




def _checked_size(size):
    try:
        width, height = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ViewerError(f"image size must be two integers, got {size!r}") from None
    if not (1 <= width <= 16384 and 1 <= height <= 16384):
        raise ViewerError(f"image size {width}x{height} is outside 1..16384 pixels per side")
    return width, height
