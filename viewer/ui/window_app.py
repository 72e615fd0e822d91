"""The ``app`` object of a script in the window: viewer.editing.script_app.App over a ViewerSession.

It reads the session at each call, so a model opened later (drop, Open) is what the script sees.
"""

from __future__ import annotations

from ..editing.script_app import App


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

    def _companions(self) -> list:
        return self._session.companions

    def _pose_companions(self) -> None:
        self._session.shown_companions(self._session.editor.playback.time)

    @property
    def window_size(self) -> tuple[int, int]:
        width, height = self._session.window_size
        return int(round(width)), int(round(height))
