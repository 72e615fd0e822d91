"""The ``app`` object of a script in the window: viewer.app_api.App over a ViewerSession.

It reads the session at each call, so a model opened later (drop, Open) is what the script sees.
"""

from __future__ import annotations

from ..app_api import App


class WindowApp(App):
    __doc__ = App.__doc__

    def __init__(self, session):
        super().__init__()
        self._session = session

    @property
    def editor(self):
        return self._session.editor

    @property
    def camera(self):
        return self._session.camera

    @camera.setter
    def camera(self, value) -> None:
        self._session.camera = self._set_camera(self._session.camera, value)

    @property
    def window_size(self) -> tuple[int, int]:
        width, height = self._session.window_size
        return int(round(width)), int(round(height))
