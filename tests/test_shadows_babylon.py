"""Shadows beside Babylon.js (issue 45): boneviewer's picture with --shadows against Babylon.js's own
picture of the same scene with a ShadowGenerator (percentage-closer filtering, the file's
directional light, a ground that receives), recorded by tests/babylon_render/record_shadows.py
into tests/data/babylon_shadows (the scene: tests/shadow_cases.py). No browser at test time: the
pictures are recorded with the sha256 of their inputs, and compared by the render-fidelity metric
(tests/fidelity.py) within its pass mark, never byte for byte.

boneviewer draws the scene as Babylon's has it: --no-contact-shadow (Babylon's ShadowGenerator
draws no contact shadow) and --shadow-softness 0.1 (an edge as wide as the PCF's, about half a
percent of the character's size).
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import shadow_cases as sc
from fidelity import PASS_DB, _decibels, color_delta, read_rgba, score_db
from fidelity_cases import _env, babylon_recorder

RECORD = sc.recorded()
SOFTNESS = 0.1


@pytest.fixture(scope="module")
def lit_models(tmp_path_factory):
    return tmp_path_factory.mktemp("lit_models")


def ground_pixels(ours, theirs) -> np.ndarray:
    """Where either picture draws the ground's shadow (black, partly transparent), not the character."""
    return ((ours[..., 3] > 0) & (ours[..., 3] < 250)) | ((theirs[..., 3] > 0) & (theirs[..., 3] < 250))


def render_ours(case, folder, out) -> np.ndarray:
    command = case.render_command(folder, out) + ["--shadow-softness", f"{SOFTNESS:g}", "--no-contact-shadow"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=sc.ROOT, env=_env(), timeout=300)
    assert result.returncode == 0, result.stderr
    return read_rgba(out)


@pytest.mark.parametrize("case", sc.CASES, ids=lambda c: c.name)
def test_babylon_s_picture_was_recorded_from_the_case_s_inputs(case, lit_models):
    was = RECORD["cases"].get(case.name)
    assert was is not None, f"{case.name}: no recorded picture; run {sc.RECORD_COMMAND}"
    assert case.picture.is_file()
    now = case.inputs(lit_models)
    changed = [key for key in ("model_files", "environment_sha256", "camera_sha256", "size", "shadows")
               if was["inputs"].get(key) != now[key]]
    assert not changed, f"{case.name}: {', '.join(changed)} changed since Babylon's picture was recorded; " \
                        f"run {sc.RECORD_COMMAND}"


@pytest.mark.parametrize("case", sc.CASES, ids=lambda c: c.name)
def test_ours_with_shadows_scores_within_the_pass_mark_of_babylon_s_shadow_generator(case, lit_models, tmp_path):
    theirs = read_rgba(case.picture)
    ours = render_ours(case, lit_models, tmp_path / "ours.png")
    ground = ground_pixels(ours, theirs)
    # Both draw a shadow on the ground, as dark where it is full (Babylon's darkness 1 - intensity).
    for picture in (ours, theirs):
        shadow = (picture[..., 3] > 0) & (picture[..., 3] < 250)
        assert shadow.sum() > 1000
        assert abs(int(picture[..., 3][shadow].max()) - round(255 * sc.SHADOW_INTENSITY)) <= 3
    # The whole picture (model-viewer's metric: the pixels boneviewer draws) and the ground's shadow
    # alone (where either draws it): within the pass mark.
    assert score_db(ours, theirs) <= PASS_DB
    assert _decibels(color_delta(ours[ground], theirs[ground])) <= PASS_DB


def test_without_the_light_s_shadow_the_ground_is_far_from_babylon_s(lit_models, tmp_path):
    """The comparison sees the shadow: with --no-shadows the same case's ground is bare, and where
    Babylon's shadow falls ours is white against its grey."""
    case = sc.CASES[0]
    command = case.render_command(lit_models, tmp_path / "bare.png") + ["--no-shadows"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=sc.ROOT, env=_env(), timeout=300)
    assert result.returncode == 0, result.stderr
    ours, theirs = read_rgba(tmp_path / "bare.png"), read_rgba(case.picture)
    ground = ground_pixels(ours, theirs)
    assert ground.sum() > 1000
    assert _decibels(color_delta(ours[ground], theirs[ground])) > PASS_DB + 10


def test_a_recorded_shadow_picture_is_what_babylon_draws_today(lit_models):
    """Re-records one case (the page's ShadowGenerator scene, tests/babylon_render/page.html) and
    compares within a tolerance: the recording is reproducible. Needs the browser and Babylon.js,
    as the fidelity tests' re-recording does."""
    record = babylon_recorder()
    case = sc.CASES[0]
    with record.Recorder() as recorder:
        pixels, info = recorder.picture(case.lit_model(lit_models), case.environment_file, case.camera, size=sc.SIZE,
                                        shadows=case.babylon_shadows())
        bare, _ = recorder.picture(case.lit_model(lit_models), case.environment_file, case.camera, size=sc.SIZE)
    assert score_db(read_rgba(case.picture), pixels) <= -35.0
    # without the shadow settings the page draws no ground: its shadow pixels are gone
    assert ((pixels[..., 3] > 0) & (pixels[..., 3] < 250)).sum() > 1000
    assert ((bare[..., 3] > 0) & (bare[..., 3] < 250)).sum() < 50
