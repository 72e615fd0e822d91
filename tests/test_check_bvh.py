"""`boneviewer check` on BVH files: a file the loader refuses is one error naming its line; a
loaded file gets the rig checks (zero-length bones, key jumps, exploding clips) pointing at the
lines that define the joints; the recorded captures pass; folders recurse into .bvh."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from test_bvh import BAD, warnings_said  # noqa: F401 (a fixture)
from viewer.checks import ERROR, MOTION_CODES, WARNING, check_file

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


# Spine twice (lines 6 and 10) and a real joint named as Head's End Site is (lines 18 and 23).
RENAMED = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Spine
    {
      OFFSET 0 10 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT Head
      {
        OFFSET 0 10 0
        CHANNELS 3 Zrotation Xrotation Yrotation
        End Site
        {
          OFFSET 0 5 0
        }
      }
      JOINT Head_end
      {
        OFFSET 0 10 3
        CHANNELS 3 Zrotation Xrotation Yrotation
        End Site
        {
          OFFSET 0 5 0
        }
      }
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.1
""" + "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n" * 2


def test_renamed_joints_are_one_loader_warning_and_a_finding_each(tmp_path, warnings_said):
    from viewer import load_bvh

    path = tmp_path / "renamed.bvh"
    path.write_text(RENAMED)
    bones = [b.name for b in load_bvh(path).skeletons[0].bones]
    assert bones == ["Hips", "Spine", "Spine_2", "Head", "Head_end", "Head_end_2", "Head_end_2_end"]
    assert warnings_said == [f"{path}: 2 joint names taken already, renamed: line 10: joint 'Spine' renamed 'Spine_2' "
                             "(line 6 has the name); line 23: joint 'Head_end' renamed 'Head_end_2' (line 18 has the "
                             "name)"]
    report = check_file(path)
    assert report.loaded and len(warnings_said) == 1  # check says it as findings, not as a second line
    renamed = [(f.severity, f.pointer, f.message) for f in report.findings if f.code == "bvh-joint-renamed"]
    assert renamed == [(WARNING, "line 10", "joint 'Spine' has the name of the joint at line 6: renamed 'Spine_2'"),
                       (WARNING, "line 23", "joint 'Head_end' has the name of the End Site at line 18: renamed "
                                            "'Head_end_2'")]
    assert report.fails(strict=True) and not report.fails()


@pytest.mark.parametrize("name", sorted(p.name for p in BVH.glob("*.bvh")))
def test_the_recorded_captures_pass(name):
    report = check_file(BVH / name)
    assert report.loaded
    # CMU's skeleton has joints at their parent's place (LHipJoint, lowerback, the collars): said, as they are.
    expected = {"bone-zero-length"} if name == "jumping_jacks_start.bvh" else set()
    assert {f.code for f in report.findings if f.severity in (ERROR, WARNING)} == expected
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
    # The rig findings: none on these two (their generated motion has the motion checks' flaws).
    reports = {Path(r["file"]).name: [f for f in r["findings"] if f["code"] not in MOTION_CODES]
               for r in json.loads(result.stdout)}
    assert set(reports) == {"asf.bvh", "broken.bvh", "lying.BVH"}
    assert reports["asf.bvh"] == [] and reports["lying.BVH"] == []
    assert [(f["code"], f["pointer"]) for f in reports["broken.bvh"]] == [("bvh-refused", f"line {line}")]
    text_result = cli("check", library / "mocap" / "broken.bvh")
    assert text_result.returncode == 2
    assert f"error bvh-refused line {line}: Frames: 21 but the file has 20" in text_result.stdout
    assert text_result.stdout.count(f"line {line}") == 1, text_result.stdout
