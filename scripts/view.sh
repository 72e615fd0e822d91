#!/usr/bin/env bash
# Install what is needed, then run the viewer (with no display it renders a PNG instead).
source "$(dirname "$0")/setup.sh"
exec .venv/bin/boneviewer "$@"
