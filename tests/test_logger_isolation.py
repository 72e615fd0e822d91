"""The CLI's main() sets the "boneviewer" logger up for a terminal (a stderr line per warning, no
propagation); conftest's fresh_boneviewer_logger puts it back after each test, so what a test
hears of the loaders' warnings does not hang on which test ran main() before it in the process:
a later main()'s warnings reach that test's stderr (not an earlier test's captured stream), and
caplog hears them."""

from __future__ import annotations

import logging

from samples import ROBOT
from viewer.cli import main

# Two joints named Leg: the BVH loader renames the second and warns (one line).
TWIN_LEGS = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Leg
  {
    OFFSET 1 -1 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -1 0
    }
  }
  JOINT Leg
  {
    OFFSET -1 -1 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -1 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.0333333
0 0 0 0 0 0 0 0 0 0 0 0
0 0 0 0 0 0 0 10 0 0 0 0
"""


def test_a_main_run_gives_the_logger_its_stderr_line(capsys):
    logger = logging.getLogger("boneviewer")
    assert main(["info", str(ROBOT)]) == 0
    capsys.readouterr()
    assert logger.handlers and logger.propagate is False  # as a terminal run has it


def test_main_warns_on_this_tests_stderr_whatever_ran_before(tmp_path, capsys):
    path = tmp_path / "twins.bvh"
    path.write_text(TWIN_LEGS)
    assert main(["info", str(path)]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("boneviewer: warning:")]
    assert len(warnings) == 1 and "renamed" in warnings[0], warnings


def test_caplog_hears_a_boneviewer_warning_after_any_test(caplog):
    with caplog.at_level(logging.WARNING):
        logging.getLogger("boneviewer.gltf").warning("a tolerated flaw")
    assert [r.getMessage() for r in caplog.records] == ["a tolerated flaw"]
