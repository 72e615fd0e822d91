# Sourced by view.sh and test.sh: installs what boneviewer needs on a Debian machine.
# System packages (Mesa EGL for headless GL, Xvfb for window tests, and for the tests alone
# (BONEVIEWER_TESTS=1, set by test.sh) Chromium for the batch report's page test) are installed
# with apt when missing and we are root; otherwise we say what is missing and go on.
# The caller's working directory is left alone: view.sh resolves the user's paths from it.
set -euo pipefail
BONEVIEWER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BONEVIEWER_VENV="$BONEVIEWER_ROOT/.venv"

APT_PACKAGES="python3-venv libegl1 libegl-mesa0 libgl1-mesa-dri libgl1 libx11-6 xvfb xauth xdotool"
if [ "${BONEVIEWER_TESTS:-0}" = 1 ]; then
    APT_PACKAGES="$APT_PACKAGES chromium"  # a real browser loads the batch report in the tests
fi
PYTHON="${PYTHON:-python3}"

missing=""
for pkg in $APT_PACKAGES; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
# python3-venv is only needed when the interpreter cannot make a venv by itself.
if python3 -c "import ensurepip, venv" 2>/dev/null; then
    missing="${missing/ python3-venv/}"
fi
# The optional compiled kernel (csrc/ckernel.c) needs a C compiler and the headers of the Python
# that runs boneviewer; without them pip installs the package without it (numpy's kernel runs).
build_missing=""
command -v cc >/dev/null 2>&1 || build_missing="$build_missing build-essential"
"$PYTHON" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null \
    || build_missing="$build_missing python3-dev"
if [ -n "$build_missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "boneviewer setup: installing build tools for the compiled kernel:$build_missing" >&2
        { DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $build_missing >/dev/null; } ||
            echo "boneviewer setup: could not install$build_missing; the numpy kernel will run" >&2
    else
        echo "boneviewer setup: missing$build_missing (the numpy kernel will run instead of the compiled one)" >&2
    fi
fi
if [ -n "${missing// /}" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "boneviewer setup: installing system packages:$missing" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    else
        echo "boneviewer setup: missing system packages:$missing (install them as root)" >&2
    fi
fi

"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    echo "boneviewer setup: Python >= 3.10 is required, $PYTHON is $("$PYTHON" --version 2>&1)" >&2
    exit 1
}
if [ ! -x "$BONEVIEWER_VENV/bin/python" ]; then
    "$PYTHON" -m venv "$BONEVIEWER_VENV"
fi
# Reinstall only when pyproject.toml, setup.py or the compiled kernel's source changed since the
# last install (an editable install builds the kernel in place; a stale one is not used).
stamp="$BONEVIEWER_VENV/.boneviewer-installed"
if [ ! -f "$stamp" ] || [ "$BONEVIEWER_ROOT/pyproject.toml" -nt "$stamp" ] || [ "$BONEVIEWER_ROOT/setup.py" -nt "$stamp" ] \
        || [ "$BONEVIEWER_ROOT/csrc/ckernel.c" -nt "$stamp" ]; then
    echo "boneviewer setup: installing the Python packages into $BONEVIEWER_VENV ..." >&2
    # pip's and setuptools' chatter (build banners, index notes) goes to a log, shown only when
    # the install fails, so a first run reads cleanly.
    log="$BONEVIEWER_VENV/.boneviewer-install.log"
    if ! { "$BONEVIEWER_VENV/bin/python" -m pip install -q --upgrade pip \
           && (cd "$BONEVIEWER_ROOT" && "$BONEVIEWER_VENV/bin/python" -m pip install -q -e ".[dev]"); } \
           >"$log" 2>&1; then
        cat "$log" >&2
        echo "boneviewer setup: installing the Python packages failed (log above, also in $log)" >&2
        exit 1
    fi
    touch "$stamp"
fi
# The tests re-record one of Babylon.js's and one of three.js's fidelity pictures in Chromium
# (tests/test_fidelity.py): Babylon.js 9.28 and three.js 0.187 from npm into
# tests/{babylon,threejs}_render/node_modules, once, when npm is on the PATH.
for harness in babylon_render:babylonjs threejs_render:three; do
    folder="$BONEVIEWER_ROOT/tests/${harness%%:*}"
    # installed once, and again when its package-lock.json is newer than what npm last installed
    if [ "${BONEVIEWER_TESTS:-0}" = 1 ] && command -v npm >/dev/null \
            && { [ ! -d "$folder/node_modules/${harness#*:}" ] \
                 || [ "$folder/package-lock.json" -nt "$folder/node_modules/.package-lock.json" ]; }; then
        echo "boneviewer setup: installing ${harness#*:} for the fidelity tests (npm ci in tests/${harness%%:*}) ..." >&2
        (cd "$folder" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) \
            || echo "boneviewer setup: npm ci in tests/${harness%%:*} failed; the re-recording test will say so" >&2
    fi
done
