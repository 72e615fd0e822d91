// The Khronos glTF-Validator over the file named on the command line: prints one JSON object,
// {"errors": [[code, pointer], ...], "warnings": [...], "infos": [...]}. External resources
// (buffers, images beside a .gltf) are read from the file's folder. One file per process: on
// some hostile files the validator throws from inside its own promises, which ends the process
// (the caller records that as the validator failing).
import fs from "node:fs";
import path from "node:path";
import validator from "gltf-validator";

const file = process.argv[2];
const SEVERITY = ["errors", "warnings", "infos", "hints"];
{
  const bytes = new Uint8Array(fs.readFileSync(file));
  let report;
  try {
    report = await validator.validateBytes(bytes, {
      uri: path.basename(file),
      maxIssues: 0,
      externalResourceFunction: (uri) => new Promise((resolve, reject) => {
        const target = path.resolve(path.dirname(file), decodeURIComponent(uri));
        fs.readFile(target, (error, data) => (error ? reject(error.toString()) : resolve(new Uint8Array(data))));
      }),
    });
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
