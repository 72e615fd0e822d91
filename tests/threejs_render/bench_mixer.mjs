// three.js 0.187's AnimationMixer.update in Node, for scripts/bench_mixer.py: RobotExpressive with three actions
// (two blended, one additive), the same clips and weights the Python side mixes. Prints one JSON line:
// {"three": version, "update_us": mean microseconds per mixer.update(1/60), "updates": n}.
//
// Usage: node bench_mixer.mjs MODEL.glb [updates]
//        node bench_mixer.mjs MODEL.glb --serve
// --serve: prints {"three": version, "ready": true}, then for each line N read from stdin runs N updates and
// prints the mean microseconds per update (one line): scripts/bench_mixer.py takes turns with it round by round.
//
// GLTFLoader.parse runs on the file's bytes; the images (which need a browser's image decoding) and the
// materials that use them are dropped from the JSON first: the animation, the nodes and the morph targets
// the mixer drives are untouched.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { AnimationMixer, AnimationUtils, AdditiveAnimationBlendMode, REVISION } from "three";
import { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";

const [file, countText] = process.argv.slice(2);
if (!file) {
    console.error("usage: node bench_mixer.mjs MODEL.glb [updates]");
    process.exit(2);
}
const serve = countText === "--serve";
const updates = serve ? 0 : Number(countText ?? 20000);

function withoutImages(bytes) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const jsonLength = dv.getUint32(12, true);
    const json = JSON.parse(Buffer.from(bytes.subarray(20, 20 + jsonLength)).toString("utf8"));
    delete json.images;
    delete json.textures;
    delete json.samplers;
    delete json.materials;
    for (const mesh of json.meshes ?? []) for (const p of mesh.primitives) delete p.material;
    let text = JSON.stringify(json);
    while (text.length % 4) text += " ";
    const jsonBytes = Buffer.from(text, "utf8");
    const rest = bytes.subarray(20 + jsonLength);
    const out = Buffer.alloc(12 + 8 + jsonBytes.length + rest.length);
    out.writeUInt32LE(0x46546c67, 0);
    out.writeUInt32LE(2, 4);
    out.writeUInt32LE(out.length, 8);
    out.writeUInt32LE(jsonBytes.length, 12);
    out.writeUInt32LE(0x4e4f534a, 16);
    jsonBytes.copy(out, 20);
    out.set(rest, 20 + jsonBytes.length);
    return out.buffer.slice(out.byteOffset, out.byteOffset + out.length);
}

const bytes = new Uint8Array(readFileSync(file));
const gltf = await new Promise((resolve, reject) => new GLTFLoader().parse(withoutImages(bytes), "", resolve, reject));
const clip = (name) => {
    const found = gltf.animations.find((c) => c.name === name);
    if (!found) throw new Error(`no clip ${name}`);
    return found;
};
const mixer = new AnimationMixer(gltf.scene);
const walk = mixer.clipAction(clip("Walking"));
const run = mixer.clipAction(clip("Running"));
const waveClip = AnimationUtils.makeClipAdditive(clip("Wave").clone());
const wave = mixer.clipAction(waveClip, undefined, AdditiveAnimationBlendMode);
walk.setEffectiveWeight(0.4).play();
run.setEffectiveWeight(0.6).play();
wave.setEffectiveWeight(0.5).play();
for (let i = 0; i < 2000; i++) mixer.update(1 / 60); // warm up the JIT
if (serve) {
    console.log(JSON.stringify({ three: REVISION, ready: true }));
    for await (const line of createInterface({ input: process.stdin })) {
        const n = Number(line);
        if (!(n > 0)) break;
        const start = process.hrtime.bigint();
        for (let i = 0; i < n; i++) mixer.update(1 / 60);
        console.log(Number(process.hrtime.bigint() - start) / 1000 / n);
    }
    process.exit(0);
}
const best = [];
for (let round = 0; round < 5; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < updates; i++) mixer.update(1 / 60);
    best.push(Number(process.hrtime.bigint() - start) / 1000 / updates);
}
best.sort((a, b) => a - b);
console.log(JSON.stringify({ three: REVISION, update_us: best[0], median_us: best[2], updates }));
