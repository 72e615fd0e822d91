"""Several models side by side (issue 44, item 4): PlacedScenes, `render A B ...`,
`render MODEL --motion X --show-source`; each model drawn with the others is drawn as alone
(the same camera) wherever they do not overlap; bad input is one line and exit 2."""

from __future__ import annotations

import numpy as np
import pytest

from samples import CESIUM_MAN, DATA_DIR, FOX, SAMPLES_DIR
from viewer.camera import framed_camera
from viewer.loaders import load_model
from viewer.model.placed import Placed, PlacedScenes
from viewer.options import RenderOptions

FIGURE = SAMPLES_DIR / "RiggedFigure" / "RiggedFigure.gltf"
WAVE = DATA_DIR / "bvh" / "wave_hello.bvh"


def read_png(path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGBA"))


def drawn(image) -> np.ndarray:
    return image[..., 3] > 0  # transparent background: alpha is what the model covers


def test_row_stands_models_apart_on_one_ground():
    a, b, c = load_model(CESIUM_MAN), load_model(WAVE), load_model(FIGURE)
    row = PlacedScenes.row([a, b, c])
    assert np.allclose(row[0].offset, 0)  # the first stays where it is
    boxes = [placed.rest_bounds() for placed in row]
    for (low, high), (next_low, _) in zip(boxes, boxes[1:]):
        assert next_low[0] > high[0]  # each right of the one before, not overlapping
    grounds = [low[1] for low, _ in boxes]
    assert np.allclose(grounds, grounds[0], atol=1e-6)
    assert len(PlacedScenes.of(a)) == 1 and PlacedScenes.of(row) is row


def test_two_models_together_each_equal_their_render_alone(headless_renderer):
    a, b = load_model(CESIUM_MAN), load_model(FIGURE)
    a.animations[0].apply(0.4)
    row = PlacedScenes.row([a, b])
    camera = framed_camera(row, aspect=4 / 3)
    options = RenderOptions(show_grid=False, transparent_background=True)
    both = headless_renderer.render(row, camera, options).astype(int)
    first = headless_renderer.render(PlacedScenes([row[0]]), camera, options).astype(int)
    second = headless_renderer.render(PlacedScenes([Placed(b, row[1].offset)]), camera, options).astype(int)
    one, two = drawn(first), drawn(second)
    assert one.sum() > 2000 and two.sum() > 2000  # both are really in the picture
    apart = ~(one & two)
    expected = np.where(one[..., None], first, second)
    differing = (np.abs(both - expected).max(axis=-1) > 8) & apart
    assert differing.sum() <= 0.002 * apart.sum()
    # A single model through the list path draws as it always did.
    alone = headless_renderer.render(a, camera, options).astype(int)
    assert np.abs(alone - first).max() <= 8


@pytest.fixture(scope="module")
def headless_renderer():
    from viewer.render.headless import HeadlessRenderer

    with HeadlessRenderer((320, 240)) as renderer:
        yield renderer


def column_runs(mask) -> int:
    """How many separate runs of covered columns the picture has (figures apart on screen)."""
    columns = mask.any(axis=0).astype(int)
    return int(((np.diff(columns) == 1).sum()) + columns[0])


def test_render_several_files_writes_one_picture_of_all(cli, tmp_path):
    out = tmp_path / "row.png"
    result = cli("render", CESIUM_MAN, WAVE, FIGURE, "--time", "0.5", "--size", "480x240", "--out", out,
                 "--background", "transparent", "--no-grid", "--no-skeleton")
    assert result.returncode == 0, result.stderr
    assert column_runs(drawn(read_png(out))) == 3


def test_show_source_draws_the_capture_beside_the_character(cli, tmp_path):
    plain, both = tmp_path / "plain.png", tmp_path / "both.png"
    common = ("--time", "1", "--size", "400x240", "--background", "transparent", "--no-grid", "--no-skeleton")
    result = cli("render", CESIUM_MAN, "--motion", WAVE, *common, "--out", plain)
    assert result.returncode == 0, result.stderr
    result = cli("render", CESIUM_MAN, "--motion", WAVE, "--show-source", *common, "--out", both)
    assert result.returncode == 0, result.stderr
    assert column_runs(drawn(read_png(plain))) == 1
    assert column_runs(drawn(read_png(both))) == 2


def test_animation_by_name_where_each_has_it(cli, tmp_path):
    out = tmp_path / "run.png"
    result = cli("render", FOX, CESIUM_MAN, "--animation", "Run", "--out", out)
    assert result.returncode == 0, result.stderr
    assert out.is_file()


@pytest.mark.parametrize("words, said", [
    (("{bad}",), "not valid glTF"),
    (("{missing}",), "no such file"),
    (("--animation", "Nope"), "none of the models has an animation"),
    (("--pose", "{bad}"), "on one model"),
    (("--show-source",), "give --motion"),
])
def test_bad_input_is_one_line(cli, tmp_path, words, said):
    bad = tmp_path / "bad.glb"
    bad.write_text("not a model")
    words = [w.format(bad=bad, missing=tmp_path / "missing.glb") for w in words]
    out = tmp_path / "out.png"
    result = cli("render", CESIUM_MAN, FIGURE, *words, "--out", out)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in result.stderr
    assert not out.exists()


def test_the_viewer_shows_companions_beside_the_model_at_its_playhead():
    """view A B ...: the session draws the row, the model first at its own place (the panel,
    picking and gestures act on it as alone), each companion at the model's playhead."""
    from viewer.render.headless import OffscreenTarget, create_headless_context, release_egl_current
    from viewer.ui.session import ViewerSession

    a, b = load_model(CESIUM_MAN), load_model(WAVE)
    clip = b.animations[0]
    ctx = create_headless_context()
    size = (480, 240)
    target = OffscreenTarget(ctx, size)
    session = ViewerSession(ctx, a, companions=[(b, clip)])
    try:
        display = session.editor.display
        display.show_grid = display.show_skeleton = False
        display.transparent_background = True
        session.editor.seek(0.7)
        session.editor.pause()
        session.frame(size, 1 / 60, target.framebuffer, show_panel=False)
        assert column_runs(drawn(target.read())) == 2
        reference = load_model(WAVE)
        reference.animations[0].apply(0.7)
        reference.prepare()
        b.prepare()
        assert np.allclose(b.skeletons[0].get_absolute_matrices(), reference.skeletons[0].get_absolute_matrices(),
                           atol=1e-5)
        assert session.shown()[0].scene is a and np.allclose(session.shown()[0].offset, 0)
        assert session.open_model(None) and session.shown() is session.scene  # another model: alone
    finally:
        session.release()
        target.release()
        ctx.release()
        release_egl_current()


def test_view_several_models_without_a_display_renders_them_all(cli, tmp_path):
    out = tmp_path / "view.png"
    # (view draws shadows by default: on a transparent background they would join the two figures)
    result = cli("view", CESIUM_MAN, FIGURE, "--screenshot", out, "--frames", "1", "--size", "400x240",
                 "--background", "transparent", "--no-grid", "--no-skeleton", "--no-shadows")
    assert result.returncode == 0, result.stderr
    assert "2 models side by side" in result.stdout
    assert column_runs(drawn(read_png(out))) == 2


def test_render_image_takes_a_list_of_models():
    from viewer import render_image

    image = render_image([CESIUM_MAN, WAVE], size=(400, 240), skeleton=False, grid=False).astype(int)
    background = image[:, :1]  # the gradient runs top to bottom: each row's own
    covered = np.abs(image - background).max(axis=-1) > 30
    assert covered[:, :120].sum() > 1000 and covered[:, 200:].sum() > 1000  # one on each side
    one = render_image([CESIUM_MAN], size=(400, 240), skeleton=False, grid=False).astype(int)
    alone = render_image(CESIUM_MAN, size=(400, 240), skeleton=False, grid=False).astype(int)
    assert np.abs(one - alone).max() <= 8  # a list of one is the model alone


def test_no_output_over_a_file_any_of_the_models_reads(tmp_path):
    """A glTF's texture beside the second model is an input too: --out over it is refused."""
    import argparse
    import shutil

    from viewer.cli.common import input_files

    second = tmp_path / "second.gltf"
    shutil.copy(FIGURE, second)
    args = argparse.Namespace(model=str(CESIUM_MAN), models=[str(CESIUM_MAN), str(second)])
    assert second.resolve() in {path.resolve() for path in input_files(args)}
