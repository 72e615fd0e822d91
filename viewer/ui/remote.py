"""The window's side of ``boneviewer view --listen``: remote messages applied to the session,
on the window's thread, once a frame (the server's socket thread never touches GL or the model)."""

from __future__ import annotations

from ..look import apply_frame
from ..options import RenderOptions
from ..remote.target import RemoteTarget
from ..render.headless import OffscreenTarget
from ..render.renderer import Renderer


class SessionTarget(RemoteTarget):
    """A RemoteTarget over a ViewerSession: poses go to its editor (the model it shows now),
    set_camera also moves the window's camera, and render() draws offscreen in the window's GL
    context, as ``boneviewer render`` draws (no panel, no selection)."""

    def __init__(self, session):
        self._session = session
        super().__init__(session.editor)
        self._renderer = None
        self._target = None
        self._drawn_scene = None

    @property
    def editor(self):
        return self._session.editor

    def set_camera(self, **settings) -> None:
        super().set_camera(**settings)
        camera = self._session.camera
        for name, value in settings.items():
            setattr(camera, name, value)

    def render(self, size, frame):
        ctx = self._session.ctx
        if self._renderer is None:
            self._renderer = Renderer(ctx)
        if self._drawn_scene is not None and self._drawn_scene is not self.scene:
            self._renderer.forget(self._drawn_scene)  # a model opened since: its GL objects go
        self._drawn_scene = self.scene
        if self._target is None or self._target.size != tuple(size):
            if self._target is not None:
                self._target.release()
            self._target = OffscreenTarget(ctx, size)
        self.scene.prepare()
        self._target.framebuffer.use()
        # As `boneviewer render` draws, in the look the window shows (its environment, exposure, ...),
        # with what the client set of the overlay, the grid and the background.
        options = apply_frame(RenderOptions(**self._session.editor.display.look()), **frame)
        self._renderer.render(self.scene, self.camera_for(size), tuple(size), options)
        pixels = self._target.read()
        ctx.screen.use()
        return pixels

    def release(self) -> None:
        if self._renderer is not None:
            self._renderer.release()
        if self._target is not None:
            self._target.release()
