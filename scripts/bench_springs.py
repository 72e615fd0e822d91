"""One spring update for 50 joints and 6 colliders, boneviewer's against @pixiv/three-vrm-springbone
3.5.5's in Node (tests/threejs_render: ``npm ci`` there first), on the same chains:

    python scripts/bench_springs.py

Five chains of ten joints hang from a body node that carries three spheres and three capsules
every joint collides with; both sides step 1/60 s from rest (best of 7 rounds; Node after a JIT
warm-up). Prints both times and their ratio (ours / three-vrm's)."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "threejs_render")]

import numpy as np  # noqa: E402


def build():
    from viewer.model import NodeTable, Scene, TransformNode

    table = NodeTable(64)
    body = TransformNode("body", table=table)
    body.position = (0.0, 1.5, 0.0)
    nodes = [body]
    for c in range(5):
        parent = body
        for k in range(11):
            node = TransformNode(f"hair{c}_{k}", parent, table=table)
            angle = 2 * math.pi * c / 5
            node.position = (0.12 * math.cos(angle), 0.0, 0.12 * math.sin(angle)) if k == 0 else (0.0, -0.05, 0.0)
            nodes.append(node)
            parent = node
    scene = Scene("bench", [], nodes=nodes, rest_bounds=(np.zeros(3) - 1, np.zeros(3) + 1))
    colliders = [{"node": "body", "shape": "sphere", "radius": 0.08, "offset": (0.1 * i - 0.1, -0.2, 0.05)}
                 for i in range(3)]
    colliders += [{"node": "body", "shape": "capsule", "radius": 0.05, "offset": (0.1 * i - 0.1, -0.3, -0.05),
                   "tail": (0.1 * i - 0.1, -0.5, 0.1)} for i in range(3)]
    for c in range(5):
        # the ten joints hair_0..hair_9 (hair_10 the last one's tail)
        joints = scene.springs.add_chain(f"hair{c}_0", stiffness=1.0, drag=0.4, gravity=1.0, radius=0.02,
                                         colliders=colliders)
        scene.springs.joints.remove(joints[-1])
        scene.springs._order = None
    return scene


def main() -> int:
    import springs_cases as sc
    from record_springs import answers

    scene = build()
    assert len(scene.springs) == 50 and len(scene.springs.joints[0].colliders) == 6
    case = sc.describe(scene, [])
    case["frames"] = [[]]
    theirs = answers({"bench": case}, "--bench")["bench"]
    springs = scene.springs
    springs.reset()
    for _ in range(20):
        springs.update(1 / 60)
    best = math.inf
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(50):
            springs.update(1 / 60)
        best = min(best, (time.perf_counter() - start) / 50)
    print(f"spring update, 50 joints, 6 colliders: boneviewer {best * 1e6:.1f} us, "
          f"three-vrm-springbone 3.5.5 (Node) {theirs * 1e6:.1f} us, ratio {best / theirs:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
