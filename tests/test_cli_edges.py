"""The command line's edges (issue 29): values that start with '-', on every command; a reader
that closes the pipe early."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from viewer.cli import CLOSED_PIPE_STATUS, COMMANDS, build_parser

ROOT = Path(__file__).resolve().parent.parent

# What each command needs besides the option under test, so that parsing gets to the end.
REQUIRED = {"check": ["a.glb"], "info": ["a.bvh"], "batch": ["library", "--out", "report"], "serve": ["--listen", "0"],
            "synth": ["library", "--out", "data", "--count", "1"]}


def parse(*words):
    return build_parser().parse_args([*words])


def refused(capsys, *words) -> str:
    """The one usage line (exit 2) that parsing ``words`` ends in."""
    with pytest.raises(SystemExit) as exit_:
        parse(*words)
    assert exit_.value.code == 2
    return capsys.readouterr().err


def value_options():
    """(command, option, dest) for every option of every command that takes exactly one value."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name in COMMANDS:
        for action in commands.choices[name]._actions:
            if action.option_strings and action.nargs in (None, 1):
                yield name, max(action.option_strings, key=len), action.dest


VALUE_OPTIONS = list(value_options())


def test_every_command_has_value_options_to_test():
    assert {command for command, _, _ in VALUE_OPTIONS} == set(COMMANDS) - {"bench"}
    assert ("render", "--bvh-up", "bvh_up") in VALUE_OPTIONS and ("view", "--target", "target") in VALUE_OPTIONS


@pytest.mark.parametrize("command, option, dest", VALUE_OPTIONS)
@pytest.mark.parametrize("value", ["-z", "-1,0,0", "-30"])
def test_a_value_starting_with_a_dash_reaches_its_option(capsys, command, option, dest, value):
    """Taken as the option's value, whatever its type then says of it: parsed, or refused by the
    option's own check (which names the option), never 'expected one argument'."""
    words = [command, *REQUIRED.get(command, []), option, value]
    try:
        args = parse(*words)
    except SystemExit:
        message = capsys.readouterr().err
        assert "expected one argument" not in message and "unrecognized" not in message, message
        assert f"argument {option}" in message, message
    else:
        assert getattr(args, dest) is not None


@pytest.mark.parametrize("command", ["render", "view", "export"])
def test_negative_values_as_the_readme_writes_them(command):
    args = parse(command, "model.bvh", "--bvh-up", "-z", "--bvh-scale", "0.5")
    assert args.bvh_up == "-z" and args.bvh_scale == 0.5
    if command != "export":
        args = parse(command, "--target", "-1,0,-2.5", "--yaw", "-30", "--pitch", "-.5", "--distance", "3")
        assert args.target == (-1.0, 0.0, -2.5) and args.yaw == -30.0 and args.pitch == -0.5


def test_the_equals_form_and_abbreviations_keep_working():
    args = parse("render", "--bvh-up=-z", "--target=-1,0,0", "--yaw=-30")
    assert (args.bvh_up, args.target, args.yaw) == ("-z", (-1.0, 0.0, 0.0), -30.0)
    assert parse("render", "--bvh-u", "-y").bvh_up == "-y"  # argparse's unique prefix, as without a dash
    assert parse("export", "--time", "-1.5", "--animation", "-1").time == -1.5
    assert parse("view", "--token", "-secret").token == "-secret"


def test_a_bad_dash_value_is_refused_by_its_option(capsys):
    assert "argument --bvh-up: expected an axis" in refused(capsys, "render", "--bvh-up", "-w")
    assert "argument --distance: -3: must be more than 0" in refused(capsys, "render", "--distance", "-3")
    assert "argument --pitch: -100: must be between -89 and 89" in refused(capsys, "view", "--pitch", "-100")


def test_unknown_options_and_missing_values_are_still_told(capsys):
    assert "unrecognized arguments: --nope" in refused(capsys, "render", "--nope", "--out", "a.png")
    assert "unrecognized arguments: --nope" in refused(capsys, "render", "--yaw", "-30", "--nope")
    # -z after an option that takes no value is no value
    assert "unrecognized arguments: -z" in refused(capsys, "render", "--rest", "-z")
    # an option is not taken for the value of the option before it
    assert "argument --out: expected one argument" in refused(capsys, "render", "--out", "--yaw", "3")
    assert "argument --out: expected one argument" in refused(capsys, "render", "--out", "--nope")
    # after '--' every word is a positional, as argparse has it
    assert parse("render", "--out", "a.png", "--", "-z").model == "-z"


def empty_values():
    """(command, name, words) for every option and positional whose value is a path."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name in COMMANDS:
        for action in commands.choices[name]._actions:
            if action.type is not Path:
                continue
            if action.option_strings:
                option = max(action.option_strings, key=len)
                yield name, option, [name, *REQUIRED.get(name, []), option, ""]
            else:  # the positional: '' in its place
                others = [w for w in REQUIRED.get(name, []) if w not in ("a.glb", "library")]
                yield name, action.metavar or action.dest, [name, "", *others]


@pytest.mark.parametrize("command, name, words", list(empty_values()), ids=lambda v: v if isinstance(v, str) else "")
def test_an_empty_path_or_value_is_refused_by_name(capsys, command, name, words):
    """Not read as '.' (Path('') is the current folder): `--out ''` said '--out .: ...'."""
    message = refused(capsys, *words)
    assert f"argument {name}: expected a path, got an empty one" in message, message


def test_an_empty_output_folder_writes_nothing_into_the_current_one(tmp_path, monkeypatch, capsys):
    from viewer.cli import main

    monkeypatch.chdir(tmp_path)
    for words in (["render", "--turntable", "2", "--size", "16x16", "--out-dir", ""],  # wrote frame_*.png here
                  ["batch", str(ROOT / "tests" / "data" / "bvh"), "--out", ""]):  # wrote the whole report here
        with pytest.raises(SystemExit) as exit_:
            main(words)
        assert exit_.value.code == 2
        assert "got an empty one" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_empty_model_path_names_no_file(tmp_path, monkeypatch, capsys):
    """The model is text until the loader reads it: `info ''` said "model .: is a folder"."""
    from viewer.cli import main

    monkeypatch.chdir(tmp_path)
    # `boneviewer ''` is view, which with no display renders boneviewer.png here: refused first
    for words in (["info", ""], ["render", "", "--out", "a.png"], ["export", "", "--out", "a.glb"], [""]):
        assert main(words) == 2
        assert capsys.readouterr().err == "boneviewer: error: model '': an empty path names no file\n"
    assert list(tmp_path.iterdir()) == []


def wide_bvh(path: Path, joints: int = 1500) -> Path:
    """A root and ``joints`` joints under it, each with an End Site, one frame; with 1500 joints,
    `info`'s table (about 230 KB) is far longer than a pipe's buffer (64 KB)."""
    children = "".join(f"  JOINT j{i}\n  {{\n    OFFSET {i % 7} 1 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
                       "    End Site\n    {\n      OFFSET 0 1 0\n    }\n  }\n" for i in range(joints))
    path.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition "
                    f"Zrotation Xrotation Yrotation\n{children}}}\nMOTION\nFrames: 1\nFrame Time: 0.033333\n"
                    + " ".join(["0"] * (6 + 3 * joints)) + "\n")
    return path


@pytest.mark.parametrize("options", [[], ["--json", "--tree"]])
def test_a_pipe_closed_after_the_first_line_ends_the_command_quietly(tmp_path, options):
    """`boneviewer info BIG | head -1`: the reader goes after one line while most of the output
    is still to be written; the command ends with 141 (128 + SIGPIPE) and says nothing."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen([sys.executable, "-m", "viewer.cli", "info", str(wide_bvh(tmp_path / "wide.bvh")),
                                *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    first = process.stdout.readline()
    process.stdout.close()
    status = process.wait(timeout=120)
    said = process.stderr.read().decode()
    process.stderr.close()
    assert first.strip(), "the command wrote nothing before the pipe closed"
    assert status == CLOSED_PIPE_STATUS == 141, said
    assert said == "", said  # no traceback, no "Exception ignored" from the interpreter's last flush


def run_into_a_closed_pipe(stream: str, *words):
    """The command with ``stream`` (stdout or stderr) a pipe whose reader is gone before it
    starts; the other stream captured."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("DISPLAY", None)
    read_end, write_end = os.pipe()
    os.close(read_end)
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, stream: write_end}
    try:
        return subprocess.run([sys.executable, "-m", "viewer.cli", *map(str, words)], env=env, timeout=120, **streams)
    finally:
        os.close(write_end)


def test_a_short_output_into_a_closed_pipe_ends_quietly():
    """A few lines stay in stdout's buffer until the interpreter's last flush, which used to
    print "Exception ignored ... BrokenPipeError" and exit 120."""
    result = run_into_a_closed_pipe("stdout", "info", SIMPLE_SKIN)
    assert (result.returncode, result.stderr) == (CLOSED_PIPE_STATUS, b"")


def test_render_progress_into_a_closed_pipe_ends_quietly_and_writes_nothing(tmp_path):
    """The progress lines go to stderr: a closed stderr ends the render as a closed stdout does,
    and the GIF is written whole or not at all."""
    gif = tmp_path / "turn.gif"
    result = run_into_a_closed_pipe("stderr", "render", "--turntable", "3", "--size", "16x16", "--gif", gif)
    assert (result.returncode, result.stdout) == (CLOSED_PIPE_STATUS, b"")
    assert list(tmp_path.iterdir()) == []


# --- counts in words ------------------------------------------------------------------------------
SIMPLE_SKIN = ROOT / "tests" / "data" / "gltf-samples" / "SimpleSkin" / "SimpleSkin.gltf"  # 1 mesh, skin, clip


def test_counted_agrees_with_its_count():
    from viewer.words import counted

    assert [counted(n, "joint") for n in (0, 1, 2)] == ["0 joints", "1 joint", "2 joints"]
    assert (counted(1, "mesh"), counted(3, "mesh"), counted(2, "End Site")) == ("1 mesh", "3 meshes", "2 End Sites")
    assert (counted(1, "vertex", "vertices"), counted(26, "vertex", "vertices")) == ("1 vertex", "26 vertices")


def test_info_and_export_say_one_thing_in_the_singular(capsys, tmp_path):
    from viewer.cli import main

    assert main(["info", str(SIMPLE_SKIN)]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "; 3 nodes, 1 mesh, 1 skin, 1 animation, 0 materials, 0 textures" in header, header
    assert main(["info", str(wide_bvh(tmp_path / "two.bvh", joints=1))]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "; 2 joints, 1 End Site, 9 channels, 1 frame at" in header, header
    assert main(["export", str(SIMPLE_SKIN), "--out", str(tmp_path / "out.glb")]) == 0
    assert capsys.readouterr().out.strip().endswith("out.glb (1 mesh, 1 clip)")



def test_a_bvh_file_a_row_short_says_it_in_the_singular(tmp_path):
    from viewer.errors import ViewerError
    from viewer.loaders import load_model

    path = wide_bvh(tmp_path / "short.bvh", joints=1)
    path.write_text(path.read_text().replace("Frames: 1", "Frames: 2"))
    with pytest.raises(ViewerError, match=r"Frames: 2 but the file has 1 MOTION row after line"):
        load_model(path)


# --- paths that lead nowhere ---------------------------------------------------------------------
@pytest.fixture
def links(tmp_path):
    """tmp_path with loop.glb and loop.bvh (each a symlink to its twin, which links back), loop.py,
    loopdir (a loop of folder links), dangling.glb (a link to a file that is not there) and lib,
    a folder with a model."""
    for name in ("loop.glb", "loop.bvh", "loop.py", "loopdir"):
        twin = tmp_path / f"twin-{name}"
        (tmp_path / name).symlink_to(twin.name)
        twin.symlink_to(name)
    (tmp_path / "dangling.glb").symlink_to("gone.glb")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.bvh").write_bytes((ROOT / "tests" / "data" / "bvh" / "lying_rest.bvh").read_bytes())
    return tmp_path


@pytest.mark.parametrize("words, says", [
    (["info", "{}/loop.glb"], "model {}/loop.glb: a symlink loop: it cannot be resolved"),
    (["render", "{}/loop.glb", "--out", "{}/a.png"], "model {}/loop.glb: a symlink loop"),
    (["export", "{}/loop.bvh", "--out", "{}/a.glb"], "model {}/loop.bvh: a symlink loop"),
    (["{}/loop.glb"], "model {}/loop.glb: a symlink loop"),
    (["render", "{}/dangling.glb", "--out", "{}/a.png"], "model {}/dangling.glb: a broken symlink to gone.glb"),
    (["check", "{}/loop.glb"], "{}/loop.glb: a symlink loop"),
    (["check", "{}/loopdir"], "{}/loopdir: a symlink loop"),
    (["batch", "{}/loopdir", "--out", "{}/report"], "{}/loopdir: a symlink loop"),
    (["render", "--script", "{}/loop.py", "--out", "{}/a.png"], "--script {}/loop.py: a symlink loop"),
    (["render", "--motion", "{}/loop.bvh", "--out", "{}/a.png"], "--motion {}/loop.bvh: a symlink loop"),
    # outputs: into a folder that is a loop, or that a loop is in the way of
    (["render", "--out", "{}/loopdir/a.png"], "--out {}/loopdir/a.png: folder {}/loopdir is a symlink loop"),
    (["export", "--out", "{}/loopdir/a.glb"], "--out {}/loopdir/a.glb: folder {}/loopdir is a symlink loop"),
    (["render", "--turntable", "2", "--gif", "{}/loopdir/a.gif"], "folder {}/loopdir is a symlink loop"),
    (["render", "--turntable", "2", "--out-dir", "{}/loopdir/frames"],
     "cannot create it: {}/loopdir is a symlink loop"),
    (["batch", "{}/lib", "--out", "{}/loopdir"], "--out {}/loopdir: cannot create it: {}/loopdir is a symlink loop"),
])
def test_a_symlink_loop_or_a_broken_link_is_said_as_such(capsys, links, words, says):
    """Not "no such file" (or a RuntimeError traceback from Path.resolve)."""
    from viewer.cli import main

    assert main([word.replace("{}", str(links)) for word in words]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says.replace("{}", str(links)) in err, err
    assert sorted(p.name for p in links.iterdir() if not p.name.startswith("twin-")) == [
        "dangling.glb", "lib", "loop.bvh", "loop.glb", "loop.py", "loopdir"]  # nothing written


def test_python_dash_m_viewer_is_the_command():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "viewer", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "render" in done.stdout and "synth" in done.stdout, done.stderr
