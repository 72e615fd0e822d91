#!/usr/bin/env bash
# Install what is needed, then run boneviewer with these arguments from the caller's folder, so
# model paths, --out, --screenshot and pose files are the caller's (with no display, `view`
# renders a PNG instead).
source "$(dirname "$0")/setup.sh"
exec "$BONEVIEWER_VENV/bin/boneviewer" "$@"
