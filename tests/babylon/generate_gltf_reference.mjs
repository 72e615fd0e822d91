// Generates tests/data/babylon_gltf_reference.json: world-space, CPU-skinned vertex positions of the
// skinned glTF sample models in shared/gltf-samples/, as produced by the REAL Babylon.js glTF loader
// (@babylonjs/core + @babylonjs/loaders, versions pinned in ./package.json).
//
// Usage:
//   cd tests/babylon && npm install && node generate_gltf_reference.mjs ../data/babylon_gltf_reference.json
//   (optional 2nd argument: the gltf-samples directory; default ../../../shared/gltf-samples, i.e. the
//    `shared/` folder next to the repository checkout; override with env GLTF_SAMPLES_DIR too)
//
// Version note: @babylonjs/loaders has no 9.34.0 release on npm (latest is 9.28.0, peer dependency
// "@babylonjs/core": "^9.0.0"), so the loaders package is pinned to 9.28.0 while core stays 9.34.0.
// Both versions are recorded in the fixture.
//
// Protocol (per model file):
//   * fresh NullEngine + Scene with scene.useRightHandedSystem = true, so the loader's `__root__` node has an
//     identity transform (no left-handed Z flip): positions are in glTF's own right-handed world space.
//     The harness asserts that `__root__`'s world matrix is the identity.
//   * the file is loaded from its bytes (.gltf as a data: URL, .glb as a Uint8Array) with
//     LoadAssetContainerAsync(..., {pluginExtension, pluginOptions: {gltf: {animationStartMode: NONE,
//     skipMaterials: true}}}); materials/textures do not affect positions and need image decoding.
//   * a tiny loader extension captures, in onReady, every glTF node's Babylon primitive meshes, so meshes
//     are mapped to glTF node indices exactly (not by name).
//   * sample "rest": all nodes at the file's TRS, no animation applied, time 0 (animation: null).
//   * per animation group g and t in {0, 0.37 D, 0.81 D, D} (D = max sampler input time in glTF seconds):
//     restore the rest TRS of every node, g.start(false, 1, g.from, g.to); g.goToFrame(t * fps) (t = D: g.to,
//     i.e. the last key, clamped as glTF defines; a LOOPING Babylon playback reaching exactly D shows frame 0); g.pause();
//     (fps = the group's Animation.framePerSecond = loader targetFps = 60), then g.stop() and restore.
//   * snapshot: computeWorldMatrix(true) on every node (parents first), skeleton.prepare(true), then per
//     skinned glTF node: concat over its primitives of mesh.getPositionData(true, true) (CPU skinning +
//     morph) transformed by mesh.computeWorldMatrix(true) (Vector3.TransformCoordinates).
//   * positions are rounded to 7 significant digits.

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { Logger } from "@babylonjs/core";
import "@babylonjs/loaders/glTF/index.js";
import { sampleSkinnedModel } from "./loader_common.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const outPath = process.argv[2];
if (!outPath) {
    console.error("usage: node generate_gltf_reference.mjs OUT.json [GLTF_SAMPLES_DIR]");
    process.exit(2);
}
const SAMPLES = resolve(process.argv[3] || process.env.GLTF_SAMPLES_DIR || join(HERE, "..", "..", "..", "shared", "gltf-samples"));

const MODEL_FILES = [
    "SimpleSkin/SimpleSkin.gltf",
    "RiggedSimple/RiggedSimple.gltf",
    "RiggedFigure/RiggedFigure.gltf",
    "CesiumMan/CesiumMan.gltf",
    "CesiumMan/CesiumMan.glb",
    "Fox/Fox.gltf",
    "Fox/Fox.glb",
];

const CORE_VERSION = require("@babylonjs/core/package.json").version;
const LOADERS_VERSION = require("@babylonjs/loaders/package.json").version;

Logger.LogLevels = Logger.WarningLogLevel | Logger.ErrorLogLevel;

async function processModel(relFile) {
    const isGlb = relFile.endsWith(".glb");
    return { file: relFile, ...(await sampleSkinnedModel(readFileSync(join(SAMPLES, relFile)), isGlb, relFile)) };
}

const models = [];
for (const f of MODEL_FILES) {
    const m = await processModel(f);
    const counts = m.samples[0].meshes.map((x) => `node ${x.node} "${x.name}": ${x.vertex_count} verts`).join(", ");
    console.log(`${f}: size ${m.size.toPrecision(6)}, ${m.samples.length} samples, ${counts}`);
    models.push(m);
}

const fixture = {
    babylon_version: CORE_VERSION,
    babylon_loaders_version: LOADERS_VERSION,
    generator: "tests/babylon/generate_gltf_reference.mjs",
    description:
        "World-space CPU-skinned vertex positions from the Babylon.js glTF loader (scene.useRightHandedSystem = true, so glTF's " +
        "right-handed world space). Per skinned glTF node: mesh.getPositionData(true, true) of each primitive (primitive order, " +
        "accessor vertex order) transformed by the Babylon mesh's world matrix. frame = time * fps (fps = 60). size = diagonal " +
        "of the bounding box of all skinned positions in the rest-pose sample (animation null). Positions rounded to 7 " +
        "significant digits.",
    models,
};
writeFileSync(resolve(outPath), JSON.stringify(fixture) + "\n");
console.log(`wrote ${resolve(outPath)}`);
