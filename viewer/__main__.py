"""``python -m viewer``: the same as the ``boneviewer`` command (and ``python -m viewer.cli``)."""

from .cli import run

run()
