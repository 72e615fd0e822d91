"""Records the Khronos glTF-Validator's judgement of the malformed-file corpus and the samples
into tests/data/gltf_validator_reference.json, so the suite needs no node at run time.

    (cd tests/gltf_validator && npm ci) && .venv/bin/python tests/make_validator_reference.py

Each corpus file is written deterministically by ``corpus_files`` (the cases of
tests/test_gltf_malformed.py); the recording keeps the sha256 of every file the validator
judged, and tests/test_check.py asserts the same bytes are still written before it compares.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

REFERENCE = TESTS / "data" / "gltf_validator_reference.json"
SAMPLES = TESTS / "data" / "gltf-samples"
VALIDATOR = TESTS / "gltf_validator"


def corpus_files(folder: Path):
    """(name, path) of every malformed file, each written in its own sub-folder of ``folder``."""
    from gltf_cases import build_base
    from test_gltf_malformed import GLB_CASES, JSON_CASES, MATERIAL_WARNING_CASES, Doc

    for case, mutate, _ in JSON_CASES + MATERIAL_WARNING_CASES:
        where = folder / f"json-{case}"
        where.mkdir()
        doc = Doc(where)
        mutate(doc)
        yield f"json/{case}", doc.save()
    for case, mutate, _ in GLB_CASES:
        where = folder / f"glb-{case}"
        where.mkdir()
        path = build_base(where, "glb")
        path.write_bytes(mutate(path.read_bytes()))
        yield f"glb/{case}", path


def sample_files():
    """(name, path) of every sample model (.gltf, .glb) under tests/data/gltf-samples."""
    for path in sorted(SAMPLES.rglob("*")):
        if path.suffix.lower() in (".gltf", ".glb"):
            yield f"samples/{path.relative_to(SAMPLES).as_posix()}", path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def validate(path: Path) -> dict:
    """The validator's report on one file; a validator that crashes on it reports the error
    VALIDATOR_CRASHED (the file is broken enough to stop it)."""
    result = subprocess.run(["node", "validate.mjs", str(path)], cwd=VALIDATOR, text=True, capture_output=True)
    if result.returncode != 0:
        return {"errors": [["VALIDATOR_CRASHED", ""]], "warnings": [], "infos": []}
    return json.loads(result.stdout)


def main() -> None:
    version = json.loads((VALIDATOR / "node_modules" / "gltf-validator" / "package.json").read_text())["version"]
    with tempfile.TemporaryDirectory() as temp:
        files = list(corpus_files(Path(temp))) + list(sample_files())
        with ThreadPoolExecutor(4) as pool:
            reports = list(pool.map(validate, [path for _, path in files]))
        recorded = {}
        for (name, path), report in zip(files, reports):
            recorded[name] = {"sha256": sha256(path),
                              # the distinct codes, each with its first pointer: enough to compare
                              **{kind: sorted({code: pointer for code, pointer in reversed(report[kind])}.items())
                                 for kind in ("errors", "warnings", "infos")}}
    REFERENCE.write_text(json.dumps({"validator": f"gltf-validator {version}", "files": recorded}, indent=1) + "\n")
    print(f"wrote {REFERENCE} ({len(recorded)} files)")


if __name__ == "__main__":
    main()
