"""The README's and every docs page's examples run as written, from a folder laid out like the
checkout: every ```python block, every `boneviewer` command of the ```sh blocks that runs here
(the ones that cannot, and why, are listed below), and every ```console block, whose printed
lines must be what the commands print now."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# docs/index.md is the README, written by scripts/make_docs.py: its examples are the README's.
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "index.md")]
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```\s*$", re.S | re.M)
# A ```python block whose fence says it is a fragment needs what a page cannot start (an open
# window, the reader's own data); it is compiled, not run.
FRAGMENT = 'title="a fragment'


def page_name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def blocks(language: str):
    """(page, fence info, text) of every fenced block in that language, in page order."""
    return [(page, match.group(2).strip(), match.group(3)) for page in PAGES
            for match in FENCE.finditer(page.read_text()) if match.group(1) == language]


def folder_like_the_checkout(path: Path) -> Path:
    for folder in ("tests", "examples", "assets"):
        (path / folder).symlink_to(ROOT / folder)  # the pages' paths are relative to the checkout
    return path


PYTHON = [(page, text) for page, info, text in blocks("python") if not info.startswith(FRAGMENT)]
FRAGMENTS = [(page, text) for page, info, text in blocks("python") if info.startswith(FRAGMENT)]


def test_the_pages_have_python_examples_and_few_fragments():
    assert len(PYTHON) >= 7
    assert {page_name(page) for page, _ in PYTHON} >= {"docs/bone-model.md", "docs/export.md", "docs/remote.md",
                                                        "docs/performance.md", "docs/gltf.md"}
    assert len(FRAGMENTS) <= 2, [page_name(page) for page, _ in FRAGMENTS]


@pytest.mark.parametrize("number", range(len(PYTHON)), ids=lambda n: f"{page_name(PYTHON[n][0])}-{n}")
def test_python_example_runs(number, tmp_path):
    folder_like_the_checkout(tmp_path)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    result = subprocess.run([sys.executable, "-c", PYTHON[number][1]], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("number", range(len(FRAGMENTS)))
def test_python_fragment_compiles(number):
    compile(FRAGMENTS[number][1], page_name(FRAGMENTS[number][0]), "exec")


# The `boneviewer` commands of ```sh blocks that the tests do not run as written here, by their
# first words, and why. Every other one runs (test_command_runs_as_written).
NOT_RUN = {
    ("batch", "tests/data/gltf-samples"): "about 10 s of both cores; tests/test_batch.py runs batch on a "
                                          "smaller library of the same samples",
    ("batch", "models/"): "a Ray cluster's head node (HEAD:6379) and a library of your own",
    ("synth", "rigs/"): "folders of your own rigs, captures and photos",
}
# Commands run with words added, to cost less, and why.
SHORTENED = {
    "bench": (["--quick", "--no-render"], "fewer repetitions, no GL benchmark"),
    "synth": (["--count", "4"], "4 images instead of 1000: the draws and labels are the same code"),
}
# The ```sh blocks whose commands run in order in one folder (later ones read what earlier ones
# wrote), with the pictures they make checked, by their own tests.
IN_ORDER = {
    "docs/export.md": "tests/test_export_readme.py",
    "docs/fbx-usd.md": "tests/test_usd.py (test_the_readme_conversion_commands_run_in_order)",
    "docs/mocap.md": "tests/test_retarget_formats.py (test_the_mocap_page_commands_run_in_order)",
    "docs/mixing.md": "tests/test_mix_commands.py (test_the_mixing_page_commands_run_in_order)",
}


def _commands():
    commands, in_order = [], []
    for page, _, text in blocks("sh"):
        lines = [line.split("  #")[0].strip() for line in text.splitlines()]
        words = [shlex.split(line)[1:] for line in lines if line.startswith("boneviewer ")]
        if any(w and w[0] == "export" for w in words):
            in_order.append(page_name(page))
            continue
        commands += [(page, w) for w in words if tuple(w[:2]) not in NOT_RUN]
    return commands, in_order


COMMANDS, IN_ORDER_PAGES = _commands()


def test_the_pages_commands_are_run_or_said_not_to_be():
    assert len(COMMANDS) >= 35
    assert {words[0] for _, words in COMMANDS} >= {"render", "info", "check", "bench", "synth", "view", "--help"}
    # Every block of export commands is one that its own test runs in order.
    assert sorted(set(IN_ORDER_PAGES)) == sorted(IN_ORDER)  # a page may hold several such blocks
    # Each command not run is still on a page (the list above is not stale).
    written = {tuple(shlex.split(line)[1:3]) for _, _, text in blocks("sh") for line in text.splitlines()
               if line.startswith("boneviewer ")}
    assert set(NOT_RUN) <= written


@pytest.mark.parametrize("number", range(len(COMMANDS)),
                         ids=lambda n: f"{page_name(COMMANDS[n][0])}: {' '.join(COMMANDS[n][1][:2])}")
def test_command_runs_as_written(number, tmp_path, cli):
    page, words = COMMANDS[number]
    folder_like_the_checkout(tmp_path)
    extra, _ = SHORTENED.get(words[0], ([], ""))
    result = cli(*words, *extra, cwd=tmp_path, timeout=300)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    if words[0] == "check" and "--compare" in words:
        # a comparison, not a report: exit 0 and, with --json, the comparison's own keys
        assert result.returncode == 0, result.stderr[-2000:]
        if "--json" in words:
            assert {"a", "b", "bones_in_common", "clips"} <= set(json.loads(result.stdout))
        return
    if words[0] == "check":
        # Exit status 0 without errors, 2 with any, as the page says: the status agrees with the report.
        if "--json" in words:
            errors = any(f["severity"] == "error" for file in json.loads(result.stdout) for f in file["findings"])
        else:
            failed = re.search(r"checked \d+ files?: (\d+) fail", result.stdout + result.stderr)
            assert failed, result.stdout[-2000:]
            errors = int(failed.group(1)) > 0
        assert result.returncode == (2 if errors else 0), result.stderr[-2000:]
        return
    assert result.returncode == 0, result.stderr[-2000:]
    if words[0] in ("render", "view") or words[0].endswith((".glb", ".gltf")):
        assert "wrote" in result.stdout  # without a display, view renders a PNG and says where
    else:
        assert result.stdout.strip()


CONSOLES = blocks("console")


def _session(text: str) -> tuple[list[str], list[str]]:
    """(the commands after '$ ', the lines printed after the last command) of a console block."""
    commands, printed = [], []
    for line in text.splitlines():
        if line.startswith("$ "):
            commands.append(line[2:])
            printed = []
        else:
            printed.append(line)
    return commands, printed


def test_the_pages_have_console_examples():
    assert len(CONSOLES) >= 4


@pytest.mark.parametrize("number", range(len(CONSOLES)), ids=lambda n: page_name(CONSOLES[n][0]))
def test_console_example_prints_what_the_page_shows(number, tmp_path):
    """Each `$ ` line runs in bash, in a folder like the checkout, with `boneviewer` the command of
    this checkout; what the last one prints (stdout and stderr) is the block's lines, in order."""
    folder_like_the_checkout(tmp_path)
    bin_folder = tmp_path / ".bin"
    bin_folder.mkdir()
    shim = bin_folder / "boneviewer"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m viewer.cli "$@"\n')
    shim.chmod(0o755)
    env = {key: value for key, value in os.environ.items() if key not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(PYTHONPATH=str(ROOT), PATH=f"{bin_folder}:/usr/bin:/bin")
    commands, expected = _session(CONSOLES[number][2])
    assert commands
    for command in commands[:-1]:
        subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, check=True, timeout=300)
    # stderr into stdout: the order a person sees (each line is written whole, stderr unbuffered).
    result = subprocess.run(["bash", "-c", f"{{ {commands[-1]}\n}} 2>&1"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.stdout.splitlines() == expected
