"""Smoke test of `boneviewer bench --quick`: the table has its rows (no claim about speed)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_quick_prints_the_table():
    result = subprocess.run([sys.executable, "-m", "viewer.cli", "bench", "--quick"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for row in ("20 bones", "100 bones", "1,000 bones", "10,000 bones", "crowd 100 x 100 bones",
                "CesiumMan 512x512", "CesiumMan 1280x720", "100 animated CesiumMen 1280x720",
                "process start to first PNG", "interactive view with the panel",
                "measured earlier on this machine, from the issue", "Python loop"):
        assert row in out, f"missing {row!r} in:\n{out}"
