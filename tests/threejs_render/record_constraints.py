"""@pixiv/three-vrm-node-constraint 3.5.5's answers (three-vrm-springbone 3.5.5 after it) for the
node-constraint cases (tests/constraints_cases.py):

    (cd tests/threejs_render && npm ci)     # once: three 0.187.0, three-vrm-springbone and -node-constraint 3.5.5
    python tests/threejs_render/record_constraints.py

writes tests/data/threevrm_constraints_reference.json: per case and reported step, every
constrained node's world rotation and the spring joints' world positions in three-vrm
(constraints.mjs), and the sha256 of the files the case reads."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parents[1])]

import constraints_cases as cc  # noqa: E402

OUT = HERE.parent / "data" / "threevrm_constraints_reference.json"


def main() -> None:
    cases = {name: cc.node_case(name) for name in cc.CASES}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(cases, handle)
    try:
        done = subprocess.run(["node", str(HERE / "constraints.mjs"), handle.name], cwd=HERE,
                              capture_output=True, text=True, check=True)
    finally:
        Path(handle.name).unlink()
    result = json.loads(done.stdout)
    record = {"three-vrm-node-constraint": "3.5.5", "three-vrm-springbone": "3.5.5", "three": "0.187.0",
              "dt": cc.DT, "cases": {name: {"inputs": cc.inputs(name), "steps": result[name]} for name in cc.CASES}}
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(OUT)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
