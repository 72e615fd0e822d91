"""Records tests/data/mix/bake_reference.json: the Khronos glTF-Validator's report on the file
`boneviewer export RobotExpressive.glb --mix tests/data/mix/robot_walk.mix.json --bake ...`
writes, and what that file holds (tests/written_numbers.py's fingerprint), so that
tests/test_mix_commands.py can check that the bake written today is the file the validator judged;
and tests/data/mix/bake_springs_reference.json, the same for the Fox's mix baked with a spring
chain on its tail (`--spring-chain ... --bake`: the swing in the clip; tests/test_spring_bake.py);
and tests/data/mix/bake_constraints_reference.json, the same for the node-constraint avatar's mix
baked (`robot_constraints.vrm --motion wave_hello.bvh --mix avatar_wave.mix.json --bake ...`: the
constraints and its finger's springs in the clip; tests/test_constraint_bake.py).

Run from the repository root (needs node; the validator is installed on first run):
    python tests/record_mix_bake_reference.py
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from viewer.cli import main  # noqa: E402
from springs_cases import FOX_TAIL  # noqa: E402
from written_numbers import fingerprint  # noqa: E402

ROBOT = HERE / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
MIX = HERE / "data" / "mix" / "robot_walk.mix.json"
OUT = HERE / "data" / "mix" / "bake_reference.json"
OPTIONS = ["--bake", "--fps", "15", "--start", "0.2", "--end", "1.4"]
FOX = HERE / "data" / "gltf-samples" / "Fox" / "Fox.glb"
FOX_MIX = HERE / "data" / "mix" / "fox_walk.mix.json"
SPRINGS_OUT = HERE / "data" / "mix" / "bake_springs_reference.json"
SPRINGS_OPTIONS = ["--spring-chain", FOX_TAIL, "--bake", "--fps", "20", "--start", "0.25", "--end", "1.25"]
AVATAR = HERE / "data" / "vrm" / "robot_constraints.vrm"
AVATAR_MIX = HERE / "data" / "mix" / "avatar_wave.mix.json"
AVATAR_MOTION = ["--motion", str(HERE / "data" / "bvh" / "wave_hello.bvh")]  # not recorded: a path here
CONSTRAINTS_OUT = HERE / "data" / "mix" / "bake_constraints_reference.json"
CONSTRAINTS_OPTIONS = ["--bake", "--fps", "20", "--start", "1.5", "--end", "2.5"]
VALIDATOR = HERE / "gltf_validator"


def main_() -> None:
    if not (VALIDATOR / "node_modules").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=VALIDATOR, check=True)
    record(ROBOT, MIX, OPTIONS, OUT)
    record(FOX, FOX_MIX, SPRINGS_OPTIONS, SPRINGS_OUT)
    record(AVATAR, AVATAR_MIX, CONSTRAINTS_OPTIONS, CONSTRAINTS_OUT, AVATAR_MOTION)


def record(model: Path, mix: Path, options: list, out: Path, given: tuple = ()) -> None:
    with tempfile.TemporaryDirectory() as folder:
        baked = Path(folder) / "baked.glb"
        if main(["export", str(model), *given, "--mix", str(mix), *options, "--out", str(baked)]) != 0:
            raise SystemExit("the export failed")
        report = json.loads(subprocess.run(["node", "validate.mjs", str(baked)], cwd=VALIDATOR, check=True,
                                           capture_output=True, text=True).stdout)
        version = json.loads((VALIDATOR / "node_modules" / "gltf-validator" / "package.json").read_text())["version"]
        entry = {"generator": "tests/record_mix_bake_reference.py", "validator_version": version,
                  "options": options, "sha256": hashlib.sha256(baked.read_bytes()).hexdigest(),
                  "validator": report, "fingerprint": fingerprint(baked)}
    out.write_text(json.dumps(entry, indent=1) + "\n")
    print(f"{out}: {len(report['errors'])} errors, {len(report['warnings'])} warnings")


if __name__ == "__main__":
    main_()
