#!/usr/bin/env bash
# Install what is needed, then run the whole test suite (headless: EGL, and Xvfb for windows).
source "$(dirname "$0")/setup.sh"
exec .venv/bin/python -m pytest "$@"
