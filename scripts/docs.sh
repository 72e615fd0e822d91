#!/usr/bin/env bash
# Build the documentation site (mkdocs.yml, docs/) into site/ and say where it is: open
# site/index.html in a browser, no server needed (search works from the files too).
# `bash scripts/docs.sh serve` serves it on http://127.0.0.1:8000 instead, rebuilt on every save.
# Installs what is needed first (scripts/setup.sh: the venv with the `docs` extra).
source "$(dirname "$0")/setup.sh"
cd "$BONEVIEWER_ROOT"
export NO_MKDOCS_2_WARNING=1  # mkdocs-material's banner about its successor, on every build
if [ "${1:-}" = serve ]; then
    shift
    exec "$BONEVIEWER_VENV/bin/python" -m mkdocs serve --dev-addr 127.0.0.1:8000 "$@"
fi
"$BONEVIEWER_VENV/bin/python" -m mkdocs build --strict --quiet "$@"
echo "boneviewer docs: built the site in $BONEVIEWER_ROOT/site: open site/index.html"
