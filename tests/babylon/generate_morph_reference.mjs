// Generates tests/data/babylon_morph_reference.json: world-space, morphed and CPU-skinned vertex positions
// from the REAL Babylon.js glTF loader (@babylonjs/core + @babylonjs/loaders, versions in ./package.json),
// for glTF morph targets (issue 15).
//
// Usage:
//   cd tests/babylon && npm install && node generate_morph_reference.mjs ../data/babylon_morph_reference.json
//
// Models (paths relative to tests/data/):
//   * gltf-samples/RobotExpressive/RobotExpressive.glb: its Head mesh (node 13, not skinned, three primitives,
//     targets Angry / Surprised / Sad) with its weights set by hand (morphTargetManager.getTarget(i).influence on
//     each primitive mesh), at rest and at 0.37 of the "Wave" clip (weights set after goToFrame, which drives
//     them to the clip's zeros). Every 4th vertex of the concatenated primitives is recorded (the file stays
//     small; "stride" says so).
//   * morph-worms.gltf (tests/gltf_cases.py build_morph_case): three skinned worms with two targets each, one
//     clip whose weights channels are LINEAR, STEP and CUBICSPLINE; at rest (the mesh's and, for worm_step,
//     the node's default weights) and at t = 0, 0.3, 0.74, 1.62 and 2.0 s. Every vertex is recorded.
//
// Protocol as generate_gltf_reference.mjs: NullEngine, scene.useRightHandedSystem = true (glTF's own space;
// __root__ is checked to be the identity), LoadAssetContainerAsync with animationStartMode NONE and
// skipMaterials; a loader extension maps glTF nodes to Babylon primitive meshes. A clip sample: restore every
// node's rest TRS, g.start(false, 1, g.from, g.to); g.goToFrame(t * 60) (t = D: g.to); g.pause(). Snapshot:
// computeWorldMatrix(true) on every node, skeleton.prepare(true), then mesh.getPositionData(true, true) (morph,
// then skinning, on the CPU) times the mesh's world matrix. size: the diagonal of the bounding box of every
// mesh's rest positions (default weights). Positions rounded to 7 significant digits.

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { Vector3, Matrix, Logger } from "@babylonjs/core";
import "@babylonjs/loaders/glTF/index.js";
import { capture, depth, loadCaptured, readGltfJson, restPose, round7 } from "./loader_common.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const outPath = process.argv[2];
if (!outPath) {
    console.error("usage: node generate_morph_reference.mjs OUT.json");
    process.exit(2);
}
const DATA = resolve(join(HERE, "..", "data"));
const CORE_VERSION = require("@babylonjs/core/package.json").version;
const LOADERS_VERSION = require("@babylonjs/loaders/package.json").version;
Logger.LogLevels = Logger.WarningLogLevel | Logger.ErrorLogLevel;

const CASES = [
    {
        file: "gltf-samples/RobotExpressive/RobotExpressive.glb",
        nodes: [13],
        stride: 4,
        samples: [
            { animation: null, time: 0, weights: { 13: [1, 0, 0] } },
            { animation: null, time: 0, weights: { 13: [0, 1, 0] } },
            { animation: null, time: 0, weights: { 13: [0, 0, 1] } },
            { animation: null, time: 0, weights: { 13: [0.3, 0.6, 0.8] } },
            { animation: "Wave", fraction: 0.37, weights: { 13: [0.5, 0.2, 0.7] } },
        ],
    },
    {
        file: "morph-worms.gltf",
        nodes: null, // every node with a mesh
        stride: 1,
        samples: [
            { animation: null, time: 0, weights: null },
            ...[0, 0.3, 0.74, 1.62, 2.0].map((time) => ({ animation: "morph", time, weights: null })),
        ],
    },
];

async function processCase(spec) {
    const isGlb = spec.file.endsWith(".glb");
    const bytes = readFileSync(join(DATA, spec.file));
    const gltf = readGltfJson(bytes, isGlb);
    const { engine, scene, container } = await loadCaptured(bytes, isGlb, spec.file);

    const allNodes = [...scene.transformNodes, ...scene.meshes].sort((a, b) => depth(a) - depth(b));
    const root = scene.meshes.find((m) => m.name === "__root__");
    const restoreRest = restPose(allNodes);
    const meshNodes = gltf.nodes.map((n, i) => i).filter((i) => gltf.nodes[i].mesh !== undefined && capture.nodes[i].primitiveMeshes);
    const defaults = new Map();
    for (const i of meshNodes) {
        for (const m of capture.nodes[i].primitiveMeshes) {
            const manager = m.morphTargetManager;
            if (manager) defaults.set(m, Array.from({ length: manager.numTargets }, (_, t) => manager.getTarget(t).influence));
        }
    }
    const restoreWeights = () => {
        for (const [m, weights] of defaults) weights.forEach((w, t) => (m.morphTargetManager.getTarget(t).influence = w));
    };

    const positionsOf = (nodes, stride) => {
        for (const n of allNodes) n.computeWorldMatrix(true);
        for (const s of scene.skeletons) s.prepare(true);
        if (!root.computeWorldMatrix(true).equals(Matrix.Identity())) throw new Error(`${spec.file}: __root__ is not identity`);
        const tmp = new Vector3();
        return nodes.map((index) => {
            const out = [];
            let v = 0;
            for (const m of capture.nodes[index].primitiveMeshes) {
                const world = m.computeWorldMatrix(true);
                const data = m.getPositionData(true, true);
                for (let i = 0; i < data.length; i += 3, v++) {
                    if (v % stride) continue;
                    Vector3.TransformCoordinatesFromFloatsToRef(data[i], data[i + 1], data[i + 2], world, tmp);
                    out.push(tmp.x, tmp.y, tmp.z);
                }
            }
            return { node: index, name: gltf.nodes[index].name ?? `node${index}`, vertex_count: out.length / 3, positions: out };
        });
    };

    // size: every mesh at rest with its default weights
    restoreRest();
    restoreWeights();
    const lo = [Infinity, Infinity, Infinity];
    const hi = [-Infinity, -Infinity, -Infinity];
    for (const m of positionsOf(meshNodes, 1)) {
        for (let i = 0; i < m.positions.length; i++) {
            lo[i % 3] = Math.min(lo[i % 3], m.positions[i]);
            hi[i % 3] = Math.max(hi[i % 3], m.positions[i]);
        }
    }
    const size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);

    const nodes = spec.nodes ?? meshNodes;
    const samples = [];
    for (const sample of spec.samples) {
        for (const g of scene.animationGroups) g.stop();
        restoreRest();
        restoreWeights();
        let group = null;
        let time = sample.time ?? 0;
        let frame = 0;
        if (sample.animation !== null) {
            const gi = scene.animationGroups.findIndex((g) => g.name === sample.animation);
            if (gi < 0) throw new Error(`${spec.file}: no animation ${sample.animation}`);
            group = scene.animationGroups[gi];
            const anim = gltf.animations[gi];
            const duration = Math.max(...anim.samplers.map((s) => gltf.accessors[s.input].max[0]));
            if (sample.fraction !== undefined) time = sample.fraction * duration;
            frame = time >= duration ? group.to : time * 60;
            group.start(false, 1.0, group.from, group.to);
            group.goToFrame(frame);
            group.pause();
        }
        if (sample.weights) {
            for (const [node, weights] of Object.entries(sample.weights)) {
                for (const m of capture.nodes[Number(node)].primitiveMeshes) {
                    weights.forEach((w, t) => (m.morphTargetManager.getTarget(t).influence = w));
                }
            }
        }
        const weightsNow = {};
        for (const index of nodes) {
            const m = capture.nodes[index].primitiveMeshes.find((x) => x.morphTargetManager);
            if (m) weightsNow[index] = Array.from({ length: m.morphTargetManager.numTargets }, (_, t) => m.morphTargetManager.getTarget(t).influence);
        }
        const meshes = positionsOf(nodes, spec.stride);
        for (const m of meshes) m.positions = m.positions.map(round7);
        samples.push({ animation: sample.animation, time, frame, set_weights: sample.weights, babylon_weights: weightsNow, meshes });
        if (group) group.stop();
    }
    container.dispose();
    scene.dispose();
    engine.dispose();
    return { file: spec.file, size, stride: spec.stride, samples };
}

const models = [];
for (const spec of CASES) {
    const m = await processCase(spec);
    console.log(`${spec.file}: size ${m.size.toPrecision(6)}, ${m.samples.length} samples, ` +
        m.samples[0].meshes.map((x) => `node ${x.node} "${x.name}": ${x.vertex_count} verts`).join(", "));
    models.push(m);
}
writeFileSync(resolve(outPath), JSON.stringify({
    babylon_version: CORE_VERSION,
    babylon_loaders_version: LOADERS_VERSION,
    generator: "tests/babylon/generate_morph_reference.mjs",
    description:
        "World-space morphed and CPU-skinned vertex positions from the Babylon.js glTF loader (right-handed scene): per " +
        "glTF node, mesh.getPositionData(true, true) of each primitive (primitive order, accessor vertex order, every " +
        "stride-th vertex) times the mesh's world matrix. set_weights: the morph weights set by hand after the clip (by " +
        "node); babylon_weights: the influences Babylon had. size: bounding-box diagonal of every mesh at rest.",
    models,
}) + "\n");
console.log(`wrote ${resolve(outPath)}`);
