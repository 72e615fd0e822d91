#!/usr/bin/env bash
# Install what is needed, then run the whole test suite (headless: EGL, and Xvfb for windows)
# from the repository root, on every core (pytest-xdist; each worker starts its own Xvfb and
# servers on free ports). Arguments go to pytest: `-n 0` runs in one process.
BONEVIEWER_TESTS=1
source "$(dirname "$0")/setup.sh"
cd "$BONEVIEWER_ROOT"
exec "$BONEVIEWER_VENV/bin/python" -m pytest -n auto "$@"
