"""`boneviewer check` on BVH files: a file the loader refuses is one error naming its line; a
loaded file gets the rig checks (zero-length bones, key jumps, exploding clips) pointing at the
lines that define the joints; the recorded captures pass; folders recurse into .bvh."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from test_bvh import BAD
from viewer.checks import ERROR, WARNING, check_file

BVH = Path(__file__).parent / "data" / "bvh"

# Spine turns 170 degrees about Z in frame 1 and the root jumps 1000 units: a key jump and an
# exploding clip; Head sits where Spine is (OFFSET 0 0 0): a zero-length bone.
RIG = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Head
    {
      OFFSET 0 0 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 5 0
      }
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.1
0 0 0 0 0 0 0 0 0 0 0 0
1000 0 0 0 0 0 170 0 0 0 0 0
0 0 0 0 0 0 0 0 0 0 0 0
"""


@pytest.mark.parametrize("name", sorted(p.name for p in BVH.glob("*.bvh")))
def test_the_recorded_captures_pass(name):
    report = check_file(BVH / name)
    assert report.loaded
    assert [f for f in report.findings if f.severity in (ERROR, WARNING)] == []
    assert report.bones > 5 and report.vertices > 0 and len(report.clips) == 1


@pytest.mark.parametrize("case", ["frames disagree", "missing brace", "nan", "bad channel", "deep nesting"])
def test_a_refused_file_is_one_error_naming_its_line(tmp_path, case):
    text, line, message = BAD[case]
    path = tmp_path / "bad.bvh"
    path.write_text(text)
    started = time.perf_counter()
    report = check_file(path)
    assert time.perf_counter() - started < 1.0
    assert not report.loaded
    assert len(report.findings) == 1
    found = report.findings[0]
    assert (found.severity, found.code, found.pointer) == (ERROR, "bvh-refused", f"line {line}")
    # the line is the pointer's, not said again in the message (check printed "line 9: line 9: ...")
    assert message in found.message and not found.message.startswith("line "), found.message


def test_rig_findings_point_at_the_joints_lines(tmp_path):
    path = tmp_path / "rig.bvh"
    path.write_text(RIG)
    report = check_file(path)
    assert report.loaded and report.bones == 4 and report.clips == [("rig", 0.2)]
    by_code = {f.code: f for f in report.findings}
    assert set(by_code) == {"bone-zero-length", "key-jump", "clip-explodes"}, report.findings
    assert by_code["bone-zero-length"].pointer == "line 10"  # JOINT Head
    assert "'Head'" in by_code["bone-zero-length"].message
    assert by_code["key-jump"].pointer == "line 6"  # JOINT Spine
    assert "turns 170 degrees between keys 0 and 1" in by_code["key-jump"].message
    assert by_code["clip-explodes"].pointer == "rig"


def test_the_command_recurses_into_bvh_files(cli, tmp_path):
    library = tmp_path / "library"
    (library / "mocap").mkdir(parents=True)
    shutil.copy(BVH / "asf_zup_xyz.bvh", library / "mocap" / "asf.bvh")
    shutil.copy(BVH / "lying_rest.bvh", library / "lying.BVH")
    text, line, _ = BAD["frames disagree"]
    (library / "mocap" / "broken.bvh").write_text(text)
    result = cli("check", library, "--json")
    assert result.returncode == 2, result.stderr
    reports = {Path(r["file"]).name: r["findings"] for r in json.loads(result.stdout)}
    assert set(reports) == {"asf.bvh", "broken.bvh", "lying.BVH"}
    assert reports["asf.bvh"] == [] and reports["lying.BVH"] == []
    assert [(f["code"], f["pointer"]) for f in reports["broken.bvh"]] == [("bvh-refused", f"line {line}")]
    text_result = cli("check", library / "mocap" / "broken.bvh")
    assert text_result.returncode == 2
    assert f"error bvh-refused line {line}: Frames: 21 but the file has 20" in text_result.stdout
    assert text_result.stdout.count(f"line {line}") == 1, text_result.stdout
