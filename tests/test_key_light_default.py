"""--key-light's default is what its help says: with no environment and with a built-in one (no
.hdr sun), a render with no --key-light is the render with --key-light at the angles the help
gives (the shadows' edges and the simple light's key and fill alike), within the rasteriser's
tolerance; and the help's angles are RenderOptions.key_light's direction."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from PIL import Image

from viewer.cli import build_parser, main
from viewer.look import key_light_direction
from viewer.options import RenderOptions

COMMON = ["--shadows", "--size", "128x96", "--no-grid"]


def documented_default() -> str:
    """The AZIMUTH,ELEVATION render --help gives as --key-light's default."""
    render = next(action for action in build_parser()._subparsers._group_actions[0].choices.values()
                  if action.prog.endswith(" render"))
    (option,) = [a for a in render._actions if "--key-light" in a.option_strings]
    found = re.search(r"default (-?[\d.]+,-?[\d.]+)", " ".join(option.help.split()))
    assert found, option.help
    return found.group(1)


def test_the_documented_default_is_the_options_direction():
    azimuth, elevation = (float(v) for v in documented_default().split(","))
    default = np.asarray(RenderOptions.key_light) / np.linalg.norm(RenderOptions.key_light)
    angle = math.degrees(math.acos(min(1.0, float(np.dot(key_light_direction(azimuth, elevation), default)))))
    assert angle < 0.01, angle


def picture(path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"), dtype=np.int16)


@pytest.mark.parametrize("environment", ["none", "studio"])
def test_no_key_light_renders_as_the_documented_default(tmp_path, environment):
    default = tmp_path / "default.png"
    placed = tmp_path / "placed.png"
    assert main(["render", *COMMON, "--environment", environment, "--out", str(default)]) == 0
    assert main(["render", *COMMON, "--environment", environment, "--key-light", documented_default(),
                 "--out", str(placed)]) == 0
    differs = np.abs(picture(default) - picture(placed)).max(axis=2)
    assert (differs > 4).sum() <= 2, (differs > 4).sum()  # the rasteriser's tolerance: a pixel or two
