"""The viewer in Jupyter: ``from viewer.notebook import Viewer`` (``pip install boneviewer[notebook]``).

- ``widget``: ``Viewer``, a jupyter_rfb remote frame buffer drawn by the headless renderer;
- ``controls``: ``v.controls()``, the pose panel as ipywidgets;
- ``gl_thread``: the one thread that does a viewer's GL work.
"""

from ..errors import ViewerError

try:
    from .widget import Viewer
except ImportError as error:  # jupyter_rfb or ipywidgets missing: one line saying what to install
    raise ViewerError(f"the notebook viewer needs jupyter_rfb and ipywidgets (no module named {error.name!r}): "
                      "pip install boneviewer[notebook]") from None

__all__ = ["Viewer"]
