"""``python -m viewer``: the same as the ``boneviewer`` command (and ``python -m viewer.cli``)."""

import sys

from .cli import main

sys.exit(main())
