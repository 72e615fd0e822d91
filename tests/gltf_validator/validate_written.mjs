// Records tests/data/gltf_validator_reports.json: the Khronos glTF-Validator's report on every file
// boneviewer writes in tests/written_cases.py (through ./validate.mjs; version pinned in ./package.json).
//
// Usage (from the repository root):
//   .venv/bin/python tests/written_cases.py /tmp/boneviewer-written
//   cd tests/gltf_validator && npm ci && node validate_written.mjs /tmp/boneviewer-written ../data/gltf_validator_reports.json
//
// Per case: the sha256 of each file it wrote (from the manifest, checked here against the bytes
// judged) and the validator's issue counts and messages. tests/test_written_references.py writes
// the cases again, asserts the same bytes and that no report has an error.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createRequire } from "node:module";
import { validateFile } from "./validate.mjs";

const require = createRequire(import.meta.url);
const [folder, outPath] = process.argv.slice(2);
if (!folder || !outPath) {
    console.error("usage: node validate_written.mjs WRITTEN_DIR OUT.json");
    process.exit(2);
}
const manifest = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8"));
const reports = {};
for (const [name, entry] of Object.entries(manifest)) {
    const dir = join(folder, name);
    for (const [file, sha] of Object.entries(entry.files)) {
        const digest = createHash("sha256").update(readFileSync(join(dir, file))).digest("hex");
        if (digest !== sha) throw new Error(`${name}/${file}: sha256 ${digest} is not the manifest's ${sha}`);
    }
    const report = await validateFile(join(dir, entry.main));
    const issues = report.issues;
    reports[name] = {
        main: entry.main,
        sha256: entry.files,
        numErrors: issues.numErrors,
        numWarnings: issues.numWarnings,
        numInfos: issues.numInfos,
        numHints: issues.numHints,
        messages: issues.messages.slice(0, 20).map((m) => ({ code: m.code, severity: m.severity, pointer: m.pointer, message: m.message })),
    };
    console.log(`${name}: ${issues.numErrors} errors, ${issues.numWarnings} warnings, ${issues.numInfos} infos, ${issues.numHints} hints`);
}
const fixture = {
    validator_version: require("gltf-validator/package.json").version,
    generator: "tests/gltf_validator/validate_written.mjs",
    description: "The Khronos glTF-Validator's report on each file tests/written_cases.py writes, with the sha256 of the bytes it judged " +
        "(severity: 0 error, 1 warning, 2 info, 3 hint).",
    reports,
};
writeFileSync(resolve(outPath), JSON.stringify(fixture, null, 1) + "\n");
console.log(`wrote ${resolve(outPath)}`);
