"""The retargeting measure, on what is drawn: for every mapped target bone whose mapped child is
matched, the angle between the target's bone direction as the new clip poses the model (joint to
mapped child: the skeleton as drawn, in the world after the reader's axis and unit conversion) and
the capture's in its own world, turned only about +Y to face where the target faces, at every
frame; prints the worst per bone and overall (issue 21: under 0.5 degrees). A target drawn tilted
or on its side from the capture counts, whatever the retargeting's own alignment says (issue 47:
the measure taken after that alignment said 0.0007 degrees of an FBX character drawn on its side);
a source pair of zero length (CMU's lowerback) has no direction and is left out.

    python scripts/measure_retarget.py SOURCE TARGET [--clip NAME] [--bone-map MAP.json] [--every N]
    python scripts/measure_retarget.py tests/data/bvh/wave_hello.bvh \\
        tests/data/gltf-samples/CesiumMan/CesiumMan.glb --bone-map assets/bone-maps/CesiumMan.json

SOURCE and TARGET are any model files boneviewer reads (.bvh, .glb, .gltf, .fbx, USD); exit status
1 when the worst angle is 0.5 degrees or more, 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from viewer.errors import ViewerError  # noqa: E402
from viewer.loaders import load_model  # noqa: E402
from viewer.model.retarget import Retargeting, retarget_error  # noqa: E402

LIMIT = 0.5


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("target")
    parser.add_argument("--clip", help="the source's clip (default: its first)")
    parser.add_argument("--bone-map", type=Path, metavar="MAP.json")
    parser.add_argument("--every", type=int, default=1, help="measure every N-th frame (default: every frame)")
    args = parser.parse_args(argv)
    try:
        source, target = load_model(args.source), load_model(args.target)
        started = time.perf_counter()
        result = Retargeting(source, target, args.clip, args.bone_map)
        elapsed = time.perf_counter() - started
        target.animations.append(result.clip)
        worst, rows = retarget_error(result, every=max(1, args.every))
    except ViewerError as error:
        print(f"measure_retarget: error: {error}", file=sys.stderr)
        return 2
    print(f"{result.source_clip.name!r} of {Path(args.source).name} onto {Path(args.target).name}: "
          f"{len(result.times)} frames, {len(result.bone_map)} bones mapped, retargeted in {elapsed * 1000:.1f} ms")
    print(f"{'target bone':>28} -> {'its mapped child':<28} worst angle (degrees)")
    for bone, child, angle in rows:
        print(f"{bone:>28} -> {child:<28} {angle:.6f}")
    verdict = "under" if worst < LIMIT else "NOT under"
    print(f"worst over every frame and bone: {worst:.6f} degrees ({verdict} {LIMIT})")
    return 0 if worst < LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
