"""``v.mixer``: the scene's mixer (viewer.motion) as the notebook sees it.

The same objects and the same one-line calls as a script (``v.mixer.action("Walking").weight = 0.5``,
``v.mixer.layers[0].mute = True``), each run on the viewer's GL thread (never beside a draw), and
after a call or a set the mix is written (``mixer.evaluate()``) and the picture redrawn.
"""

from __future__ import annotations

from ..motion import Action, Blend1D, Edit, Layer, Mixer

LIVE_TYPES = (Mixer, Action, Layer, Blend1D, Edit)


class Live:
    """A mixer object (the Mixer, an Action, a Layer, a Blend1D or an Edit) of a notebook Viewer:
    attributes read as the object's, calls and sets go through ``Viewer.edit`` and redraw."""

    __slots__ = ("_viewer", "_target")

    def __init__(self, viewer, target):
        object.__setattr__(self, "_viewer", viewer)
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        viewer, target = self._viewer, self._target
        value = viewer._gl.call(getattr, target, name)
        if not callable(value):
            return wrap(viewer, value)

        def call(*args, **kwargs):
            args = [unwrap(a) for a in args]
            kwargs = {k: unwrap(v) for k, v in kwargs.items()}
            result = []

            def run(editor):
                result.append(value(*args, **kwargs))
                editor.scene.mixer.evaluate()
            viewer.edit(run)
            return wrap(viewer, result[0])

        call.__name__ = name
        call.__doc__ = getattr(value, "__doc__", None)
        return call

    def __setattr__(self, name, value):
        target, value = self._target, unwrap(value)

        def run(editor):
            setattr(target, name, value)
            editor.scene.mixer.evaluate()
        self._viewer.edit(run)

    def __dir__(self):
        return [name for name in dir(self._target) if not name.startswith("_")]

    def __repr__(self) -> str:
        return repr(self._target)

    def __eq__(self, other) -> bool:
        return self._target is unwrap(other)

    def __hash__(self) -> int:
        return id(self._target)


def wrap(viewer, value):
    if isinstance(value, LIVE_TYPES):
        return Live(viewer, value)
    if isinstance(value, list):
        return [wrap(viewer, item) for item in value]
    if isinstance(value, tuple):
        return tuple(wrap(viewer, item) for item in value)
    return value


def unwrap(value):
    if isinstance(value, Live):
        return value._target
    if isinstance(value, list):
        return [unwrap(item) for item in value]
    if isinstance(value, tuple):
        return tuple(unwrap(item) for item in value)
    return value
