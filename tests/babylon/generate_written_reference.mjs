// Generates tests/data/babylon_written_reference.json: what the REAL Babylon.js glTF loader
// (@babylonjs/core + @babylonjs/loaders, versions in ./package.json) makes of the files boneviewer
// writes (tests/written_cases.py): world-space CPU-skinned positions of every skinned node at rest
// and at 0.37 and 1.0 of each animation, by the protocol of generate_gltf_reference.mjs
// (sampleSkinnedModel in loader_common.mjs). A .gltf's .bin and images beside it are inlined as
// data: URIs first (the loader reads from memory here). To keep the recording small, every
// stride-th vertex is kept (stride = ceil(vertices / 64) per mesh, recorded).
//
// Usage (from the repository root):
//   .venv/bin/python tests/written_cases.py /tmp/boneviewer-written
//   cd tests/babylon && npm install && node generate_written_reference.mjs /tmp/boneviewer-written ../data/babylon_written_reference.json
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createRequire } from "node:module";
import { Logger } from "@babylonjs/core";
import { sampleSkinnedModel } from "./loader_common.mjs";

const require = createRequire(import.meta.url);
const [folder, outPath] = process.argv.slice(2);
if (!folder || !outPath) {
    console.error("usage: node generate_written_reference.mjs WRITTEN_DIR OUT.json");
    process.exit(2);
}
Logger.LogLevels = Logger.WarningLogLevel | Logger.ErrorLogLevel;

function inlined(dir, bytes) {
    const gltf = JSON.parse(bytes.toString("utf8"));
    const mime = (uri) => (uri.endsWith(".png") ? "image/png" : uri.endsWith(".jpg") ? "image/jpeg" : "application/octet-stream");
    for (const item of [...(gltf.buffers || []), ...(gltf.images || [])]) {
        if (item.uri && !item.uri.startsWith("data:")) {
            const data = readFileSync(join(dir, decodeURIComponent(item.uri)));
            item.uri = `data:${mime(item.uri)};base64,${data.toString("base64")}`;
        }
    }
    return Buffer.from(JSON.stringify(gltf));
}

const manifest = JSON.parse(readFileSync(join(folder, "manifest.json"), "utf8"));
const cases = [];
for (const [name, entry] of Object.entries(manifest)) {
    const dir = join(folder, name);
    for (const [file, sha] of Object.entries(entry.files)) {
        const digest = createHash("sha256").update(readFileSync(join(dir, file))).digest("hex");
        if (digest !== sha) throw new Error(`${name}/${file}: sha256 ${digest} is not the manifest's ${sha}`);
    }
    const isGlb = entry.main.endsWith(".glb");
    const raw = readFileSync(join(dir, entry.main));
    const model = await sampleSkinnedModel(isGlb ? raw : inlined(dir, raw), isGlb, `${name}/${entry.main}`, [0.37, 1]);
    for (const sample of model.samples) {
        for (const mesh of sample.meshes) {
            mesh.stride = Math.ceil(mesh.vertex_count / 64);
            mesh.positions = mesh.positions.filter((_, i) => Math.floor(i / 3) % mesh.stride === 0);
        }
    }
    console.log(`${name}: size ${model.size.toPrecision(6)}, ${model.samples.length} samples`);
    cases.push({ case: name, main: entry.main, sha256: entry.files, ...model });
}
const fixture = {
    babylon_version: require("@babylonjs/core/package.json").version,
    babylon_loaders_version: require("@babylonjs/loaders/package.json").version,
    generator: "tests/babylon/generate_written_reference.mjs",
    description: "World-space CPU-skinned positions the Babylon.js glTF loader gives for the files tests/written_cases.py writes " +
        "(sha256 of each file judged), at rest and at 0.37 and 1.0 of each animation; every stride-th vertex of each skinned " +
        "node; 7 significant digits.",
    cases,
};
writeFileSync(resolve(outPath), JSON.stringify(fixture) + "\n");
console.log(`wrote ${resolve(outPath)}`);
