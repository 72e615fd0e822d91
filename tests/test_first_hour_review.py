"""A new user's hour with the merged commands: help texts that match what is read, and the
mistakes a user makes with the newer commands."""

import argparse

import pytest

from viewer import cli as cli_module


def _model_help(command: str) -> str:
    parser = cli_module.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub = commands.choices[command]
    return next(a for a in sub._actions if a.dest in ("model", "models")).help  # render and view: MODEL ...


@pytest.mark.parametrize("command", ["render", "view", "serve", "export"])
def test_model_help_names_every_format_the_command_opens(command):
    # These commands open MODEL through viewer.loaders.load_model, which reads .bvh too.
    text = _model_help(command)
    for suffix in (".gltf", ".glb", ".bvh"):
        assert suffix in text, (command, text)


def test_an_unknown_word_names_bvh_among_the_model_suffixes(capsys):
    with pytest.raises(SystemExit):
        cli_module.main(["frobnicate"])
    assert ".bvh" in capsys.readouterr().err


def test_a_missing_motion_file_is_named_as_the_motion_not_the_model(cli, tmp_path):
    result = cli("render", "--motion", "missing.bvh", "--out", "a.png", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == ["boneviewer: error: --motion missing.bvh: no such file"], result.stderr
    assert not (tmp_path / "a.png").exists()


def test_batch_given_a_file_says_it_takes_a_folder(cli, tmp_path):
    model = tmp_path / "one.glb"
    model.write_bytes(b"glTF")
    result = cli("batch", str(model), "--out", str(tmp_path / "report"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    line, = result.stderr.strip().splitlines()
    assert "is a file" in line and "boneviewer check" in line and "no such folder" not in line, line
    assert not (tmp_path / "report").exists()


def test_view_without_a_display_says_only_the_error_for_a_missing_model(cli, tmp_path):
    # No display: view renders a PNG instead; it must not announce a render that never happens.
    result = cli("view", "missing.glb", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == "", result.stdout
    assert result.stderr.strip().splitlines() == ["boneviewer: error: model missing.glb: no such file"]
    assert not (tmp_path / "boneviewer.png").exists()


def test_one_mesh_and_one_model_are_said_in_the_singular(cli, tmp_path):
    exported = cli("export", "--out", "one.glb", cwd=tmp_path)  # the built-in character: one mesh
    assert exported.returncode == 0, exported.stderr
    assert "(1 mesh, 0 clips)" in exported.stdout, exported.stdout
    library = tmp_path / "library"
    library.mkdir()
    (tmp_path / "one.glb").rename(library / "one.glb")
    batch = cli("batch", str(library), "--out", str(tmp_path / "report"), "--size", "32x32",
                "--gif-seconds", "0.1", cwd=tmp_path)
    assert batch.returncode == 0, batch.stderr
    assert "1 model: 1 processed" in batch.stdout, batch.stdout


def test_an_empty_bvh_file_is_said_empty_not_at_line_0(cli, tmp_path):
    (tmp_path / "empty.bvh").write_bytes(b"")
    result = cli("render", "empty.bvh", "--out", "a.png", cwd=tmp_path)
    assert result.returncode == 2
    line, = result.stderr.strip().splitlines()
    assert line.startswith("boneviewer: error: empty.bvh: the file is empty"), line
    assert "line 0" not in line
    assert not (tmp_path / "a.png").exists()
