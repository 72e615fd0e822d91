"""Smoke test of `boneviewer bench --quick`: the table has its rows, every figure is measured
in the run (no quoted outside figures), and nothing is read from the tests folder (an
installed package has none). No claim about speed."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs the bench with an audit hook that records every file opened under tests/.
RUN_WATCHED = """
import os, sys
tests = sys.argv[1]
opened = []

def watch(event, args):
    if event == "open" and isinstance(args[0], (str, os.PathLike)):
        path = os.path.abspath(os.fspath(args[0]))
        if path.startswith(tests):
            opened.append(path)

sys.addaudithook(watch)
from viewer.cli import main
status = main(["bench", "--quick"])
print("opened under tests:", opened)
sys.exit(status)
"""


def test_bench_quick_prints_only_figures_it_measured(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DISPLAY", None)
    result = subprocess.run([sys.executable, "-c", RUN_WATCHED, str(ROOT / "tests")], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for row in ("20 bones", "100 bones", "1,000 bones", "10,000 bones", "crowd 100 x 100 bones", "Python loop",
                "512x512, posed", "1280x720, posed", "100 posed built-in characters 1280x720, instanced",
                "process start to first PNG", "interactive view with the panel"):
        assert row in out, f"missing {row!r} in:\n{out}"
    for word in ("babylon", "pygfx", "issue"):
        assert word not in out.lower(), f"{word!r} in:\n{out}"
    assert "opened under tests: []" in out
    # Every rendering row has a measured figure.
    rates = [line for line in out.splitlines() if line.rstrip().endswith((" fps", " s"))]
    assert len(rates) == 5, out
