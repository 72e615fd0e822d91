"""``python -m viewer.cli``: the same as the ``boneviewer`` command."""

from . import run

run()
