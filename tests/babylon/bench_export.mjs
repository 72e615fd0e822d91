// Times Babylon.js's own glTF exporter (GLTF2Export.GLBAsync from @babylonjs/serializers) on models as
// Babylon's loader loads them, for scripts/bench_export.py to print beside boneviewer's save_gltf.
//
// Usage: node bench_export.mjs REPEATS FILE.glb [FILE.glb ...]
// Prints one JSON line per file: {"file", "nodes", "median_ms", "min_ms", "bytes"}.
import { readFileSync } from "node:fs";
import { NullEngine, Scene, LoadAssetContainerAsync, Logger } from "@babylonjs/core";
import "@babylonjs/loaders/glTF/index.js";
import { GLTF2Export } from "@babylonjs/serializers/glTF/2.0/index.js";

Logger.LogLevels = Logger.ErrorLogLevel;
const [repeats, ...files] = process.argv.slice(2);
for (const file of files) {
    const engine = new NullEngine();
    const scene = new Scene(engine);
    scene.useRightHandedSystem = true;
    const container = await LoadAssetContainerAsync(new Uint8Array(readFileSync(file)), scene, {
        pluginExtension: ".glb",
        pluginOptions: { gltf: { animationStartMode: 0 } },
    });
    container.addAllToScene();
    const times = [];
    let bytes = 0;
    for (let i = 0; i <= Number(repeats); i++) {
        const start = performance.now();
        const glb = await GLTF2Export.GLBAsync(scene, "bench");
        const elapsed = performance.now() - start;
        if (i > 0) times.push(elapsed); // the first run warms up
        bytes = Object.values(glb.files).reduce((n, blob) => n + (blob.size ?? blob.byteLength ?? 0), 0);
    }
    times.sort((a, b) => a - b);
    const nodes = scene.transformNodes.length + scene.meshes.length;
    console.log(JSON.stringify({ file, nodes, median_ms: times[times.length >> 1], min_ms: times[0], bytes }));
    scene.dispose();
    engine.dispose();
}
