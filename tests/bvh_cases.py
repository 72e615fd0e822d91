"""Writes the small BVH test files in tests/data/bvh/ (run once; the files are committed).

Each hierarchy below is written by hand to show one reading rule or quirk; the MOTION rows are
smooth seeded curves, small enough to read. ``python tests/bvh_cases.py`` rewrites them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

FOLDER = Path(__file__).parent / "data" / "bvh"

# name -> (hierarchy text, frame count, frame time, {column: (base, amplitude)} overrides)
HUMAN_Y = """HIERARCHY
ROOT Hips
{
\tOFFSET 0.0 93.0 1.5
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Spine
\t{
\t\tOFFSET 0.0 12.0 0.0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tJOINT Neck
\t\t{
\t\t\tOFFSET 0.0 40.0 0.0
\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\tJOINT Head
\t\t\t{
\t\t\t\tOFFSET 0.0 10.0 1.0
\t\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\t\tEnd Site
\t\t\t\t{
\t\t\t\t\tOFFSET 0.0 15.0 0.0
\t\t\t\t}
\t\t\t}
\t\t}
\t\tJOINT LeftArm
\t\t{
\t\t\tOFFSET 18.0 35.0 0.0
\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\tJOINT LeftForeArm
\t\t\t{
\t\t\t\tOFFSET 28.0 0.0 0.0
\t\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\t\tEnd Site
\t\t\t\t{
\t\t\t\t\tOFFSET 25.0 0.0 0.0
\t\t\t\t}
\t\t\t}
\t\t}
\t\tJOINT RightArm
\t\t{
\t\t\tOFFSET -18.0 35.0 0.0
\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\tJOINT RightForeArm
\t\t\t{
\t\t\t\tOFFSET -28.0 0.0 0.0
\t\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\t\tEnd Site
\t\t\t\t{
\t\t\t\t\tOFFSET -25.0 0.0 0.0
\t\t\t\t}
\t\t\t}
\t\t}
\t}
\tJOINT LeftUpLeg
\t{
\t\tOFFSET 9.0 -4.0 0.0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tJOINT LeftLeg
\t\t{
\t\t\tOFFSET 0.0 -42.0 0.0
\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\tJOINT LeftFoot
\t\t\t{
\t\t\t\tOFFSET 0.0 -40.0 0.0
\t\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\t\tEnd Site
\t\t\t\t{
\t\t\t\t\tOFFSET 0.0 -5.0 14.0
\t\t\t\t}
\t\t\t}
\t\t}
\t}
\tJOINT RightUpLeg
\t{
\t\tOFFSET -9.0 -4.0 0.0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\tJOINT RightLeg
\t\t{
\t\t\tOFFSET 0.0 -42.0 0.0
\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\tJOINT RightFoot
\t\t\t{
\t\t\t\tOFFSET 0.0 -40.0 0.0
\t\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\t\tEnd Site
\t\t\t\t{
\t\t\t\t\tOFFSET 0.0 -5.0 14.0
\t\t\t\t}
\t\t\t}
\t\t}
\t}
}
"""

# Z-up, every joint XYZ, the ASF naming style (LeftHip is the thigh), about 26 units tall.
ASF_Z = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Xrotation Yrotation Zrotation
  JOINT Chest
  {
    OFFSET 0 0 4
    CHANNELS 3 Xrotation Yrotation Zrotation
    JOINT Neck
    {
      OFFSET 0 0 6
      CHANNELS 3 Xrotation Yrotation Zrotation
      JOINT Head
      {
        OFFSET 0 0 2
        CHANNELS 3 Xrotation Yrotation Zrotation
        End Site
        {
          OFFSET 0 0 2.5
        }
      }
    }
    JOINT LeftCollar
    {
      OFFSET 1 0 5
      CHANNELS 3 Xrotation Yrotation Zrotation
      JOINT LeftShoulder
      {
        OFFSET 2 0 0
        CHANNELS 3 Xrotation Yrotation Zrotation
        JOINT LeftElbow
        {
          OFFSET 4.5 0 0
          CHANNELS 3 Xrotation Yrotation Zrotation
          JOINT LeftWrist
          {
            OFFSET 4 0 0
            CHANNELS 3 Xrotation Yrotation Zrotation
            End Site
            {
              OFFSET 1.5 0 0
            }
          }
        }
      }
    }
    JOINT RightCollar
    {
      OFFSET -1 0 5
      CHANNELS 3 Xrotation Yrotation Zrotation
      JOINT RightShoulder
      {
        OFFSET -2 0 0
        CHANNELS 3 Xrotation Yrotation Zrotation
        JOINT RightElbow
        {
          OFFSET -4.5 0 0
          CHANNELS 3 Xrotation Yrotation Zrotation
          JOINT RightWrist
          {
            OFFSET -4 0 0
            CHANNELS 3 Xrotation Yrotation Zrotation
            End Site
            {
              OFFSET -1.5 0 0
            }
          }
        }
      }
    }
  }
  JOINT LeftHip
  {
    OFFSET 1.5 0 -1
    CHANNELS 3 Xrotation Yrotation Zrotation
    JOINT LeftKnee
    {
      OFFSET 0 0 -6.5
      CHANNELS 3 Xrotation Yrotation Zrotation
      JOINT LeftAnkle
      {
        OFFSET 0 0 -6.5
        CHANNELS 3 Xrotation Yrotation Zrotation
        End Site
        {
          OFFSET 0 -2 -1
        }
      }
    }
  }
  JOINT RightHip
  {
    OFFSET -1.5 0 -1
    CHANNELS 3 Xrotation Yrotation Zrotation
    JOINT RightKnee
    {
      OFFSET 0 0 -6.5
      CHANNELS 3 Xrotation Yrotation Zrotation
      JOINT RightAnkle
      {
        OFFSET 0 0 -6.5
        CHANNELS 3 Xrotation Yrotation Zrotation
        End Site
        {
          OFFSET 0 -2 -1
        }
      }
    }
  }
}
"""

# Every rotation order, 1- and 2-channel joints, a channel-less joint, positions on a non-root
# joint (after its rotations), a root OFFSET repeated by its position channels, Mixamo's ':' names,
# and braces on the keyword's line.
ORDERS = """HIERARCHY
ROOT mixamorig:Hips {
 OFFSET 3.0 90.0 -2.0
 CHANNELS 6 Zrotation Yrotation Xrotation Xposition Yposition Zposition
 JOINT mixamorig:Spine {
  OFFSET 0.0 10.0 0.0
  CHANNELS 3 Xrotation Zrotation Yrotation
  JOINT mixamorig:Neck {
   OFFSET 0.0 45.0 0.0
   CHANNELS 3 Yrotation Zrotation Xrotation
   JOINT mixamorig:Head {
    OFFSET 0.0 10.0 0.0
    CHANNELS 2 Yrotation Xrotation
    End Site {
     OFFSET 0.0 15.0 0.0
    }
   }
  }
  JOINT mixamorig:LeftArm {
   OFFSET 15.0 40.0 0.0
   CHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation
   JOINT mixamorig:LeftForeArm {
    OFFSET 27.0 0.0 0.0
    CHANNELS 1 Zrotation
    End Site {
     OFFSET 24.0 0.0 0.0
    }
   }
  }
  JOINT mixamorig:RightArm {
   OFFSET -15.0 40.0 0.0
   CHANNELS 3 Zrotation Xrotation Yrotation
   JOINT mixamorig:RightForeArm {
    OFFSET -27.0 0.0 0.0
    CHANNELS 0
    End Site {
     OFFSET -24.0 0.0 0.0
    }
   }
  }
 }
 JOINT mixamorig:LeftUpLeg {
  OFFSET 9.0 -3.0 0.0
  CHANNELS 3 Xrotation Yrotation Zrotation
  JOINT mixamorig:LeftLeg {
   OFFSET 0.0 -43.0 0.0
   CHANNELS 3 Zrotation Yrotation Xrotation
   End Site {
    OFFSET 0.0 -44.0 3.0
   }
  }
 }
 JOINT mixamorig:RightUpLeg {
  OFFSET -9.0 -3.0 0.0
  CHANNELS 3 Yrotation Xrotation Zrotation
  JOINT mixamorig:RightLeg {
   OFFSET 0.0 -43.0 0.0
   CHANNELS 3 Xrotation Zrotation Yrotation
   End Site {
    OFFSET 0.0 -44.0 3.0
   }
  }
 }
}
"""


def lying(text: str) -> str:
    """The Y-up figure with its rest pose lying on its back (every OFFSET's Y and Z swapped and
    Z negated, so the body runs along -Z); the motion's root rotation stands it up."""
    out = []
    for line in text.splitlines():
        words = line.split()
        if words and words[0] == "OFFSET":
            x, y, z = (float(w) for w in words[1:])
            indent = line[: len(line) - len(line.lstrip())]
            line = f"{indent}OFFSET {x:g} {z:g} {-y:g}"
        out.append(line)
    return "\n".join(out) + "\n"


def motion(channels: list[tuple[int, str]], frames: int, seed: int, stand_up_root: bool = False,
           root_position=(0.0, 93.0, 1.5), up_axis=1) -> np.ndarray:
    """Smooth rows: rotations within +-35 degrees, the root walking a little forward."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, frames)[:, None]
    rows = []
    for column, (joint, name) in enumerate(channels):
        if name.endswith("rotation"):
            a, f, p = rng.uniform(10, 35), rng.uniform(0.5, 2.0), rng.uniform(0, 2 * np.pi)
            values = a * np.sin(2 * np.pi * f * t[:, 0] + p)
            if stand_up_root and joint == 0 and name == "Xrotation":
                values = values * 0.2 + 90.0
        else:
            axis = "XYZ".index(name[0])
            values = root_position[axis] + rng.uniform(-2, 2) * np.sin(2 * np.pi * t[:, 0]) if joint == 0 \
                else rng.uniform(-3, 3) + rng.uniform(-1, 1) * t[:, 0]
            if joint == 0 and axis == 2:
                values = values + 10 * t[:, 0]
        rows.append(values)
    return np.stack(rows, axis=1)


def channel_list(text: str) -> list[tuple[int, str]]:
    result, joint = [], -1
    for line in text.splitlines():
        words = line.split()
        if words and words[0] in ("ROOT", "JOINT"):
            joint += 1
        if words and words[0] == "CHANNELS":
            result += [(joint, w) for w in words[2:]]
    return result


def write(name: str, hierarchy: str, frames: int, frame_time: float, seed: int, **kw) -> None:
    rows = motion(channel_list(hierarchy), frames, seed, **kw)
    lines = [hierarchy.rstrip("\n"), "MOTION", f"Frames: {frames}", f"Frame Time: {frame_time:.6f}"]
    lines += [" ".join(f"{v:.4f}" for v in row) for row in rows]
    (FOLDER / name).write_text("\n".join(lines) + "\n")


def main() -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    write("human_zxy_root_offset.bvh", HUMAN_Y, 24, 1 / 30, seed=1)
    write("asf_zup_xyz.bvh", ASF_Z, 20, 1 / 120, seed=2, root_position=(0.0, 0.0, 14.0))
    write("all_orders_colon_names.bvh", ORDERS, 16, 1 / 24, seed=3, root_position=(3.0, 90.0, -2.0))
    write("lying_rest.bvh", lying(HUMAN_Y), 12, 1 / 30, seed=4, stand_up_root=True)


if __name__ == "__main__":
    main()
