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
import { NullEngine, Scene, LoadAssetContainerAsync, Vector3, Matrix, Logger } from "@babylonjs/core";
import "@babylonjs/loaders/glTF/index.js";
import { capture, depth, readGltfJson, restPose, round7 } from "./loader_common.mjs";

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
const TIME_FRACTIONS = [0, 0.37, 0.81, 1];

const CORE_VERSION = require("@babylonjs/core/package.json").version;
const LOADERS_VERSION = require("@babylonjs/loaders/package.json").version;

Logger.LogLevels = Logger.WarningLogLevel | Logger.ErrorLogLevel;

async function processModel(relFile) {
    const isGlb = relFile.endsWith(".glb");
    const bytes = readFileSync(join(SAMPLES, relFile));
    const gltf = readGltfJson(bytes, isGlb);

    const engine = new NullEngine();
    const scene = new Scene(engine);
    scene.useRightHandedSystem = true;
    capture.nodes = null;
    const source = isGlb ? new Uint8Array(bytes) : "data:model/gltf+json;base64," + bytes.toString("base64");
    const container = await LoadAssetContainerAsync(source, scene, {
        pluginExtension: isGlb ? ".glb" : ".gltf",
        pluginOptions: { gltf: { animationStartMode: 0 /* NONE */, skipMaterials: true } },
    });
    container.addAllToScene();
    if (!capture.nodes) throw new Error(`${relFile}: node capture extension did not run`);

    const allNodes = [...scene.transformNodes, ...scene.meshes].sort((a, b) => depth(a) - depth(b));
    const root = scene.meshes.find((m) => m.name === "__root__");
    const restoreRest = restPose(allNodes);

    // skinned glTF nodes
    const skinned = [];
    gltf.nodes.forEach((node, index) => {
        if (node.skin === undefined || node.mesh === undefined) return;
        const prims = gltf.meshes[node.mesh].primitives;
        const cap = capture.nodes[index];
        if (!cap.primitiveMeshes || cap.primitiveMeshes.length !== prims.length) {
            throw new Error(`${relFile}: node ${index}: expected ${prims.length} primitive meshes, got ${cap.primitiveMeshes?.length}`);
        }
        const accessorCounts = prims.map((p) => gltf.accessors[p.attributes.POSITION].count);
        cap.primitiveMeshes.forEach((m, i) => {
            const n = m.getTotalVertices();
            if (n !== accessorCounts[i]) {
                throw new Error(`${relFile}: node ${index} primitive ${i}: Babylon has ${n} vertices, POSITION accessor has ${accessorCounts[i]}`);
            }
            if (!m.skeleton) throw new Error(`${relFile}: node ${index} primitive ${i}: no skeleton attached`);
        });
        skinned.push({ index, name: node.name ?? `node${index}`, meshes: cap.primitiveMeshes, accessorCounts });
    });

    const snapshot = () => {
        for (const n of allNodes) n.computeWorldMatrix(true);
        for (const s of scene.skeletons) s.prepare(true);
        const rootWorld = root.computeWorldMatrix(true);
        if (!rootWorld.equals(Matrix.Identity())) throw new Error(`${relFile}: __root__ world matrix is not identity`);
        const tmp = new Vector3();
        return skinned.map((sk) => {
            const out = [];
            for (const m of sk.meshes) {
                const world = m.computeWorldMatrix(true);
                const data = m.getPositionData(true, true);
                for (let i = 0; i < data.length; i += 3) {
                    Vector3.TransformCoordinatesFromFloatsToRef(data[i], data[i + 1], data[i + 2], world, tmp);
                    out.push(tmp.x, tmp.y, tmp.z);
                }
            }
            return { node: sk.index, name: sk.name, vertex_count: out.length / 3, positions: out };
        });
    };

    const samples = [];
    restoreRest();
    const restMeshes = snapshot();
    samples.push({ animation: null, animation_name: null, duration: 0, time: 0, frame: 0, meshes: restMeshes });

    const groups = scene.animationGroups;
    const gltfAnims = gltf.animations || [];
    if (groups.length !== gltfAnims.length) throw new Error(`${relFile}: ${groups.length} animation groups vs ${gltfAnims.length} glTF animations`);
    for (let gi = 0; gi < groups.length; gi++) {
        const g = groups[gi];
        const anim = gltfAnims[gi];
        const duration = Math.max(...anim.samplers.map((s) => gltf.accessors[s.input].max[0]));
        const fps = g.targetedAnimations[0].animation.framePerSecond;
        for (const ta of g.targetedAnimations) {
            if (ta.animation.framePerSecond !== fps) throw new Error(`${relFile}: mixed frame rates in group ${gi}`);
        }
        // check the seconds -> frames mapping: the group's end frame is duration * fps
        if (Math.abs(g.to - duration * fps) > 1e-3 || g.from !== 0) {
            throw new Error(`${relFile}: group ${gi} from/to ${g.from}/${g.to} != 0/${duration * fps}`);
        }
        for (const frac of TIME_FRACTIONS) {
            const time = frac === 1 ? duration : frac * duration;
            // at t = D use the group's end frame (the last key, float32 input * fps) exactly; glTF's accessor
            // max in the JSON can differ from the float32 data by a rounding step
            const frame = frac === 1 ? g.to : time * fps;
            for (const other of groups) other.stop();
            restoreRest();
            g.start(false, 1.0, g.from, g.to);
            g.goToFrame(frame);
            g.pause();
            const meshes = snapshot();
            g.stop();
            samples.push({ animation: gi, animation_name: g.name, duration, time, frame, meshes });
        }
        restoreRest();
    }

    // size: diagonal of the bounding box of all skinned positions in the rest-pose sample (t = 0)
    const lo = [Infinity, Infinity, Infinity];
    const hi = [-Infinity, -Infinity, -Infinity];
    for (const m of restMeshes) {
        for (let i = 0; i < m.positions.length; i++) {
            lo[i % 3] = Math.min(lo[i % 3], m.positions[i]);
            hi[i % 3] = Math.max(hi[i % 3], m.positions[i]);
        }
    }
    const size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);

    for (const s of samples) for (const m of s.meshes) m.positions = m.positions.map(round7);

    container.dispose();
    scene.dispose();
    engine.dispose();
    return { file: relFile, size, samples };
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
