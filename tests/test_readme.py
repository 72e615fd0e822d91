"""The README's Python examples run as written (from a folder laid out like the checkout)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_the_readme_has_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("number", range(len(EXAMPLES)))
def test_readme_example_runs(number, tmp_path):
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # the examples name test models by relative path
    result = subprocess.run([sys.executable, "-c", EXAMPLES[number]], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-2000:]


COMMANDS = [line.strip().split()[1:] for line in (ROOT / "README.md").read_text().splitlines()
            if line.startswith("    boneviewer render") and "[" not in line and "|" not in line]


def test_the_readme_has_render_commands():
    assert len(COMMANDS) >= 6


@pytest.mark.parametrize("number", range(len(COMMANDS)))
def test_readme_render_command_runs_as_written(number, tmp_path, cli):
    for folder in ("tests", "examples", "assets"):
        (tmp_path / folder).symlink_to(ROOT / folder)  # the README's paths are relative to the checkout
    result = cli(*COMMANDS[number], cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "wrote" in result.stdout
