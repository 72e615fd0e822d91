"""Write a complete camera file (yaw, pitch, distance, target, fov) with boneviewer's own framing
of MODEL in its rest pose, for record.py and `boneviewer render --camera`:

    python tests/babylon_render/framed_camera.py MODEL.glb --size 384 384 -o camera.json [--yaw 20 --pitch 10]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def framed_description(model, size=(384, 384), yaw=None, pitch=None, fov=None):
    """boneviewer's framing of ``model`` (rest pose, as `render --rest` frames it), every field given."""
    from viewer.camera import CameraDescription
    from viewer.loaders import load_model

    scene = load_model(str(model), None)
    camera = CameraDescription(yaw=yaw, pitch=pitch, fov=fov).camera(scene, size[0] / size[1])
    return CameraDescription.of(camera)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--size", type=int, nargs=2, default=(384, 384), metavar=("WIDTH", "HEIGHT"))
    parser.add_argument("--yaw", type=float)
    parser.add_argument("--pitch", type=float)
    parser.add_argument("--fov", type=float)
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args(argv)
    description = framed_description(args.model, tuple(args.size), args.yaw, args.pitch, args.fov)
    description.save(args.out)
    print(f"wrote {args.out}: {description.to_json()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
