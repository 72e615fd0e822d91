"""The README's Python examples run as written (from a folder laid out like the checkout)."""

import re
import shlex
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


def _commands():
    """Every `boneviewer ...` line of the README's indented blocks that runs as written without a
    window: render, info and bench (synopses with [optional] parts or | choices are not commands)."""
    commands = []
    for line in (ROOT / "README.md").read_text().splitlines():
        if not line.startswith("    boneviewer ") or "[" in line or "|" in line:
            continue
        words = shlex.split(line.strip())
        if words[1] in ("render", "info", "bench"):
            commands.append(words[1:])
    return commands


COMMANDS = _commands()


def test_the_readme_has_render_commands():
    assert sum(words[0] == "render" for words in COMMANDS) >= 6
    assert {words[0] for words in COMMANDS} == {"render", "info", "bench"}


@pytest.mark.parametrize("number", range(len(COMMANDS)), ids=lambda n: " ".join(COMMANDS[n][:2]))
def test_readme_command_runs_as_written_from_the_repository_root(number, tmp_path, cli):
    for folder in ("tests", "examples", "assets"):
        (tmp_path / folder).symlink_to(ROOT / folder)  # the README's paths are relative to the checkout
    words = COMMANDS[number]
    if words[0] == "bench":
        words = [*words, "--quick", "--no-render"]  # the command as written, with fewer repetitions
    result = cli(*words, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    if words[0] == "render":
        assert "wrote" in result.stdout
    else:
        assert result.stdout.strip()
