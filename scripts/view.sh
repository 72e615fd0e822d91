#!/usr/bin/env bash
# Install what is needed, then run boneviewer with these arguments from the caller's folder, so
# model paths, --out, --screenshot and pose files are the caller's (with no display, `view`
# renders a PNG instead: boneviewer.png, or the first of boneviewer-1.png, -2, ... not taken,
# and says where).
source "$(dirname "$0")/setup.sh"
exec "$BONEVIEWER_VENV/bin/boneviewer" "$@"
