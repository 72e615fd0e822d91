"""The camera's matrices are pyrr's look-at and perspective, in the row-vector layout."""

import numpy as np
import pyrr
import pytest

from viewer.camera import OrbitCamera, look_at, perspective


@pytest.mark.parametrize("seed", range(5))
def test_camera_matrices_equal_pyrrs(seed):
    rng = np.random.default_rng(seed)
    eye, target = rng.normal(size=3) * 5, rng.normal(size=3)
    np.testing.assert_allclose(look_at(eye, target, [0.0, 1.0, 0.0]),
                               pyrr.matrix44.create_look_at(eye, target, [0.0, 1.0, 0.0], dtype=np.float64),
                               rtol=0, atol=1e-14)
    fov, aspect, near, far = rng.uniform(20, 90), rng.uniform(0.5, 2.5), rng.uniform(0.01, 1), rng.uniform(10, 500)
    np.testing.assert_allclose(perspective(fov, aspect, near, far),
                               pyrr.matrix44.create_perspective_projection(fov, aspect, near, far, dtype=np.float64),
                               rtol=0, atol=1e-14)
    camera = OrbitCamera(target=target, distance=4.0, yaw=30.0, pitch=10.0)
    assert camera.view_matrix().shape == (4, 4) and camera.projection_matrix(1.5).shape == (4, 4)


def test_headless_render_imports_no_pygltflib_pil_for_textures_hypothesis_or_imgui():
    """A headless render stays light: pyrr is the camera's (it builds the view and projection),
    the rest are for loading files, tests and the window."""
    import subprocess
    import sys

    code = ("import sys, viewer; from viewer.app import render_image; render_image(size=(64, 48)); "
            "print(' '.join(sorted(m for m in ('pygltflib', 'PIL', 'hypothesis', 'imgui_bundle') "
            "if m in sys.modules)))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


@pytest.mark.parametrize("setting, value", [("target", (1.0, 2.0)), ("target", (0.0, float("inf"), 0.0)),
                                            ("distance", float("nan")), ("distance", 0.0), ("yaw", "left"),
                                            ("pitch", float("inf"))])
def test_the_camera_refuses_bad_settings_with_one_clear_error(setting, value):
    from viewer.errors import ViewerError

    camera = OrbitCamera()
    with pytest.raises(ViewerError, match=f"camera {setting}"):
        setattr(camera, setting, value)
    assert np.isfinite(camera.view_matrix()).all()  # unchanged and still usable
