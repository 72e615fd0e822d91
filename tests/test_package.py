"""The package as a user gets it: a wheel installed outside the checkout renders, and
scripts/view.sh works from the caller's folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from samples import FOX

ROOT = Path(__file__).resolve().parents[1]


def plain_env() -> dict:
    """The environment without a display or anything that points Python at the checkout."""
    env = dict(os.environ)
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


def run(args, cwd, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=plain_env(), capture_output=True, text=True,
                          timeout=timeout)


def character_pixels(path: Path) -> tuple[float, float]:
    """Fractions of the image that are the character's orange arms and its blue body."""
    r, g, b = np.asarray(Image.open(path).convert("RGB")).astype(int).transpose(2, 0, 1)
    orange = (r > 150) & (g > 70) & (g < 170) & (b < 100) & (r - g > 50)
    blue = (b > 100) & (b - r > 50)
    return orange.mean(), blue.mean()


def build_wheel(folder: Path, **env) -> subprocess.CompletedProcess:
    """The wheel built from a copy of the sources (so no build/ or egg-info lands in the
    checkout, nor an in-place build of the compiled kernel goes in), without build isolation:
    the test venv's setuptools, no download."""
    source = folder / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "tests", "docs", "build", "dist", "out", "*.egg-info", "__pycache__",
        ".pytest_cache", ".hypothesis", "*.so"))
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
                           "--no-index", "-w", folder / "dist", source], cwd=folder, env={**plain_env(), **env},
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    result = build_wheel(folder)
    assert result.returncode == 0, result.stdout + result.stderr
    wheels = list((folder / "dist").glob("boneviewer-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def compiled_kernels(wheel: Path) -> list[str]:
    return [name for name in zipfile.ZipFile(wheel).namelist() if name.startswith("viewer/model/_ckernel")]


def test_the_wheel_carries_every_module_and_shader(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shaders = sorted(path.name for path in (ROOT / "glsl").iterdir() if path.suffix in (".vert", ".frag", ".geom"))
    assert {".vert", ".frag", ".geom"} <= {Path(name).suffix for name in shaders}
    assert {f"viewer/glsl/{name}" for name in shaders} <= names
    # pyproject lists the packages by hand (glsl/ is mapped into viewer/): none may be left out.
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "viewer").rglob("*.py")}
    assert modules and modules <= names, sorted(modules - names)
    # With a C compiler (this machine has one) the wheel carries the compiled kernel too.
    if shutil.which(os.environ.get("CC", "cc")):
        assert len(compiled_kernels(wheel)) == 1, sorted(names)


def test_a_wheel_builds_without_a_c_compiler(tmp_path):
    """No compiler: the optional extension's build fails with a warning, the wheel is built
    without it (still tagged for this platform: setup.py declares an extension), and numpy's
    kernel runs from it."""
    result = build_wheel(tmp_path, CC="/nonexistent/cc")
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'building extension "viewer.model._ckernel" failed' in result.stdout + result.stderr
    (built,) = (tmp_path / "dist").glob("boneviewer-*.whl")
    assert compiled_kernels(built) == []
    names = set(zipfile.ZipFile(built).namelist())
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "viewer").rglob("*.py")}
    assert modules <= names
    install = tmp_path / "site"
    zipfile.ZipFile(built).extractall(install)
    env = {**plain_env(), "PYTHONPATH": str(install)}
    check = subprocess.run([sys.executable, "-c", "from viewer.model import native; print(native.describe())"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and check.stdout.startswith("numpy (the compiled kernel is not built"), check


def test_the_installed_wheel_renders_outside_the_checkout(wheel, tmp_path):
    venv = tmp_path / "venv"
    assert run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path).returncode == 0
    python = venv / "bin" / "python"
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    cwd=tmp_path).stdout.strip())
    # The dependencies come from the test venv, added after the fresh venv's own site-packages. A
    # path line in a .pth file does not run the .pth files there, so the checkout's editable
    # finder (__editable__*.pth in the test venv) is not installed and cannot shadow the wheel.
    (site / "test-venv-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    result = run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index",
                  wheel], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr

    where = run([python, "-c", "import viewer, viewer.render.shaders as s; print(viewer.__file__); print(s.GLSL_DIR)"],
                cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    module, shaders = map(Path, where.stdout.split("\n")[:2])
    assert module.is_relative_to(venv) and shaders.is_relative_to(venv), where.stdout
    assert not module.is_relative_to(ROOT), where.stdout

    result = run([venv / "bin" / "boneviewer", "render", "--out", "a.png", "--size", "400x300"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    orange, blue = character_pixels(tmp_path / "a.png")
    assert orange > 0.005 and blue > 0.02, (orange, blue)


def test_view_sh_keeps_the_callers_folder(tmp_path):
    shutil.copy(FOX, tmp_path / "Fox.glb")
    out = f"rel-{os.getpid()}.png"  # a name no earlier run can have left in the repository
    result = run(["bash", ROOT / "scripts" / "view.sh", "render", "Fox.glb", "--out", out, "--size", "320x240"],
                 cwd=tmp_path, timeout=600)  # setup.sh reinstalls when pyproject.toml changed
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (ROOT / out).exists()
    image = np.asarray(Image.open(tmp_path / out))
    assert image.shape[:2] == (240, 320)
    assert len(np.unique(image.reshape(-1, image.shape[-1]), axis=0)) > 50  # a picture, not a flat fill


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_test_portability_sh_help_prints_its_usage_and_runs_nothing(tmp_path, flag):
    """`--help` is the script's header (what it runs, its usage), not pytest's help under every
    condition reported as a passed run, and nothing is installed or run first."""
    result = run(["bash", ROOT / "scripts" / "test-portability.sh", flag], cwd=tmp_path, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Usage: bash scripts/test-portability.sh [--all] [PYTEST ARGS...]" in result.stdout
    assert not any(line.startswith(("ok ", "FAILED ")) for line in result.stdout.splitlines()), result.stdout
    assert result.stderr == "" and not (tmp_path / "out").exists()
