// The Khronos glTF-Validator (npm gltf-validator, version pinned in ./package.json), the one way
// this project runs it. Two recordings use it:
//   - validate_written.mjs: the files boneviewer writes (scripts/record_written_references.sh),
//   - tests/make_validator_reference.py: the malformed corpus and the samples (for `boneviewer check`),
//     which runs this file as a command: `node validate.mjs FILE` prints one JSON object,
//     {"errors": [[code, pointer], ...], "warnings": [...], "infos": [...]}.
// External resources (buffers, images beside a .gltf) are read from the file's folder. One file per
// process on the command line: on some hostile files the validator throws from inside its own
// promises, which ends the process (the caller records that as the validator failing).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import validator from "gltf-validator";

/** The validator's full report on one file (rejects when the validator fails on it). */
export function validateFile(file) {
  return validator.validateBytes(new Uint8Array(fs.readFileSync(file)), {
    uri: path.basename(file),
    maxIssues: 0,
    externalResourceFunction: (uri) => new Promise((resolve, reject) => {
      const target = path.resolve(path.dirname(file), decodeURIComponent(uri));
      fs.readFile(target, (error, data) => (error ? reject(error.toString()) : resolve(new Uint8Array(data))));
    }),
  });
}

const SEVERITY = ["errors", "warnings", "infos", "hints"];

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error("usage: node validate.mjs FILE");
    process.exit(2);
  }
  let report;
  try {
    report = await validateFile(file);
  } catch (error) {
    console.error(String(error).slice(0, 200));
    process.exit(3);
  }
  const out = { errors: [], warnings: [], infos: [] };
  for (const message of report.issues.messages) {
    const kind = SEVERITY[message.severity];
    if (kind in out) out[kind].push([message.code, message.pointer ?? ""]);
  }
  process.stdout.write(JSON.stringify(out));
}
