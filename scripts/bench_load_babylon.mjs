// Babylon.js's glTF loader timed live, for scripts/bench_load.py to print beside boneviewer's
// load_gltf (not part of the package).
//
//   node scripts/bench_load_babylon.mjs <path to node_modules> '<json spec>'
//
// spec: {"files": ["a.glb", ...], "runs": 5, "rounds": 1, "warmup": 1}. A load is what load_gltf does: read
// the file, then LoadAssetContainerAsync into a right-handed scene (NullEngine) with materials
// skipped and animations not started (as the fidelity references load), then the container is
// disposed. Each file is loaded `warmup` times first (the JIT, the loader's plugins); a round is
// the best of `runs` loads. Prints {"a.glb": [best ms per round, ...], ...}.
import { readFileSync, realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";

const modules = realpathSync(process.argv[2]);  // one copy of core, as the loaders import it
const core = await import(pathToFileURL(`${modules}/@babylonjs/core/index.js`).href);
await import(pathToFileURL(`${modules}/@babylonjs/loaders/glTF/index.js`).href);
const { NullEngine, Scene, LoadAssetContainerAsync, Logger } = core;
Logger.LogLevels = Logger.NoneLogLevel;
const spec = JSON.parse(process.argv[3]);

const engine = new NullEngine();
const scene = new Scene(engine);
scene.useRightHandedSystem = true;

async function load(file) {
    const isGlb = file.toLowerCase().endsWith(".glb");
    const bytes = readFileSync(file);
    const source = isGlb ? new Uint8Array(bytes) : "data:model/gltf+json;base64," + bytes.toString("base64");
    const container = await LoadAssetContainerAsync(source, scene, {
        pluginExtension: isGlb ? ".glb" : ".gltf",
        pluginOptions: { gltf: { animationStartMode: 0 /* NONE */, skipMaterials: true } },
    });
    container.dispose();
}

const result = {};
for (const file of spec.files) {
    for (let i = 0; i < (spec.warmup ?? 1); i++) await load(file);  // warm
    result[file] = [];
}
for (let r = 0; r < (spec.rounds || 1); r++) {
    for (const file of spec.files) {
        let best = Infinity;
        for (let i = 0; i < spec.runs; i++) {
            const start = process.hrtime.bigint();
            await load(file);
            best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
        }
        result[file].push(best);
    }
}
scene.dispose();
engine.dispose();
console.log(JSON.stringify(result));
