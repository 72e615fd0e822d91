"""Scripts with several models side by side (issue 44, item 4): `render A B --script`, `view A B
--script` and `run_viewer([a, b], script=...)` give the script every model (`app.scenes`,
`app.find_bone(name, model=k)`), each posed by its clip at the shared time before `update`, so
what the script sets on any of them is what the frame shows."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from samples import CESIUM_MAN, SAMPLES_DIR
from viewer.editing.script_app import HeadlessApp
from viewer.errors import ViewerError
from viewer.loaders import load_model

FIGURE = SAMPLES_DIR / "RiggedFigure" / "RiggedFigure.gltf"
NECK = "neck_joint_1"  # RiggedFigure's: its head's bone


def neck_script(path, degrees):
    """Turns the second model's neck by ``degrees`` about y (None: leaves it); a fixed camera."""
    path.write_text(textwrap.dedent(f"""
        import math
        DEGREES = {degrees!r}

        def setup(app):
            app.camera = {{"yaw": 0, "pitch": 5, "distance": 6, "target": [1.2, 0.8, 0]}}

        def update(app, t, dt):
            if DEGREES is not None:
                app.find_bone("{NECK}", model=1).get_pose_target().rotation = [0, math.radians(DEGREES), 0]
            app.log(f"{{len(app.scenes)}} models, t={{t:.2f}}")
        """))
    return path


def covered(path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGBA")).astype(int)


def test_render_a_b_script_poses_the_second_model_and_leaves_the_first(cli, tmp_path):
    common = ("--time", "0.5", "--size", "400x240", "--background", "transparent", "--no-grid", "--no-skeleton")
    pictures = {}
    for name, degrees in (("still", None), ("turned", 90.0)):
        pictures[name] = tmp_path / f"{name}.png"
        result = cli("render", CESIUM_MAN, FIGURE, "--script", neck_script(tmp_path / f"{name}.py", degrees),
                     "--out", pictures[name], *common)
        assert result.returncode == 0, result.stderr
        assert "2 models, t=0.50" in result.stdout
    still, turned = covered(pictures["still"]), covered(pictures["turned"])
    columns = np.nonzero((still[..., 3] > 0).any(axis=0))[0]
    gaps = np.nonzero(np.diff(columns) > 1)[0]
    assert len(gaps) == 1  # two figures apart
    first_ends = columns[gaps[0]]
    changed = np.abs(still - turned).max(axis=2) > 8
    assert changed.sum() > 200  # the head turned
    assert np.nonzero(changed.any(axis=0))[0].min() > first_ends  # all of it on the second figure
    # the first model plays its clip at 0.5 s, as render A B draws it
    plain = tmp_path / "plain.png"
    assert cli("render", CESIUM_MAN, FIGURE, "--out", plain, "--yaw", "0", "--pitch", "5", "--distance", "6",
               "--target", "1.2,0.8,0", *common).returncode == 0
    left = np.zeros(still.shape[:2], bool)
    left[:, : first_ends + 1] = True
    assert (np.abs(covered(plain) - still).max(axis=2)[left] > 8).sum() <= 0.002 * left.sum()


def test_view_a_b_script_without_a_display_renders_them(cli, tmp_path):
    out = tmp_path / "view.png"
    result = cli("view", CESIUM_MAN, FIGURE, "--script", neck_script(tmp_path / "s.py", 90.0), "--screenshot", out,
                 "--frames", "1", "--size", "200x120")
    assert result.returncode == 0, result.stderr
    assert "2 models" in result.stdout and out.is_file()


def posed_reference(seconds: float, degrees: float | None):
    """RiggedFigure's neck's world matrix at ``seconds`` of its clip, turned by ``degrees`` about y."""
    reference = load_model(FIGURE)
    reference.animations[0].apply(seconds % reference.animations[0].duration)
    if degrees is not None:
        reference.require_bone(NECK, "test").get_pose_target().rotation = [0, math.radians(degrees), 0]
    reference.prepare()
    return reference.require_bone(NECK, "test").get_absolute_matrix()


def test_the_app_has_every_model_posed_at_the_time():
    a, b = load_model(CESIUM_MAN), load_model(FIGURE)
    app = HeadlessApp(a, (320, 240), clip_index=0, companions=[(b, b.animations[0])])
    assert app.scenes == [a, b]
    assert app.find_bone(NECK, model=1) is b.require_bone(NECK, "test")
    app.time = 0.3  # a seek poses the others too
    b.prepare()
    assert np.allclose(b.require_bone(NECK, "test").get_absolute_matrix(), posed_reference(0.3, None), atol=1e-6)
    for model in (2, -1, "1", True):
        with pytest.raises(ViewerError, match="from 0 to 1"):
            app.find_bone(NECK, model=model)
    alone = HeadlessApp(load_model(CESIUM_MAN), (320, 240))
    assert len(alone.scenes) == 1


def test_the_window_s_script_poses_a_model_beside_and_the_frame_keeps_it():
    """run_viewer([a, b], script=...) / view A B --script: the session poses the companions at the
    playhead before update, and draws what update left."""
    from viewer.render.headless import OffscreenTarget, create_headless_context, release_egl_current
    from viewer.ui.session import ViewerSession

    a, b = load_model(CESIUM_MAN), load_model(FIGURE)

    class Script:
        seen = None

        def update(self, app, t, dt):
            Script.seen = app.scenes
            app.find_bone(NECK, model=1).get_pose_target().rotation = [0, math.radians(60.0), 0]

    ctx = create_headless_context()
    size = (240, 160)
    target = OffscreenTarget(ctx, size)
    session = ViewerSession(ctx, a, companions=[(b, b.animations[0])])
    try:
        session.attach_script(Script())
        session.editor.seek(0.4)
        session.editor.pause()
        session.frame(size, 1 / 60, target.framebuffer, show_panel=False)
        assert Script.seen == [a, b]
        b.prepare()
        assert np.allclose(b.require_bone(NECK, "test").get_absolute_matrix(), posed_reference(0.4, 60.0), atol=1e-6)
    finally:
        session.release()
        target.release()
        ctx.release()
        release_egl_current()
