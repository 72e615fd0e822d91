#!/usr/bin/env bash
# Re-records what the node references make of the files boneviewer writes (tests/written_cases.py):
# the Khronos glTF-Validator's reports and Babylon.js's loader positions, into tests/data. Run it after
# any change to what save_gltf writes (tests/test_written_references.py fails until then).
# Needs node and npm (the packages are installed into tests/*/node_modules on first run).
set -euo pipefail
cd "$(dirname "$0")/.."
python=.venv/bin/python
[ -x "$python" ] || python=python3
rm -rf out/written
"$python" tests/written_cases.py out/written
[ -d tests/gltf_validator/node_modules ] || (cd tests/gltf_validator && npm ci --no-audit --no-fund)
[ -d tests/babylon/node_modules ] || (cd tests/babylon && npm install --no-audit --no-fund)
(cd tests/gltf_validator && node validate_written.mjs ../../out/written ../data/gltf_validator_reports.json)
(cd tests/babylon && node generate_written_reference.mjs ../../out/written ../data/babylon_written_reference.json)
