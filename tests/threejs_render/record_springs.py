"""@pixiv/three-vrm-springbone 3.5.5's answers for the spring cases (tests/springs_cases.py):

    (cd tests/threejs_render && npm ci)     # once: three 0.187.0 and three-vrm-springbone 3.5.5
    python tests/threejs_render/record_springs.py

writes tests/data/threejs_springs_reference.json: per case, every joint's world position after
120 steps of 1/60 s in three-vrm (springs.mjs), and the sha256 of the files the case reads."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parents[1])]

import springs_cases as sc  # noqa: E402

OUT = HERE.parent / "data" / "threevrm_springs_reference.json"


def answers(cases: dict, *extra: str) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(cases, handle)
    try:
        done = subprocess.run(["node", str(HERE / "springs.mjs"), handle.name, *extra], cwd=HERE,
                              capture_output=True, text=True, check=True)
    finally:
        Path(handle.name).unlink()
    return json.loads(done.stdout)


def main() -> None:
    cases = {name: sc.node_case(name) for name in sc.CASES}
    result = answers(cases)
    record = {"three-vrm-springbone": "3.5.5", "three": "0.187.0", "steps": sc.STEPS, "dt": sc.DT,
              "cases": {name: {"inputs": sc.inputs(name), "positions": result[name]} for name in sc.CASES}}
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(OUT)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
