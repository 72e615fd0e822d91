"""``python -m viewer.cli``: the same as the ``boneviewer`` command."""

import sys

from . import main

sys.exit(main())
