// The skeleton update of `boneviewer bench` in Babylon.js, timed live (used by
// scripts/bench_compare.py; not part of the package).
//
//   node scripts/bench_babylon.mjs <path to @babylonjs/core> '<json spec>'
//
// spec: {"sizes": [20, 100, ...], "reps": {"20": 2000, ...}, "crowd": [100, 100], "crowd_reps": 100,
//        "rounds": 1}
// A frame is what boneviewer's row measures: set every bone's rotationQuaternion (4 poses
// cycled), skeleton.prepare(true), getTransformMatrices(null). Bones form a random recursive
// tree (bone i under a uniformly chosen earlier bone) with random local matrices, as
// viewer.bench.random_tree. Prints {"20": [median us per round, ...], ..., "crowd": [...]}.
import { pathToFileURL } from "node:url";

const core = await import(pathToFileURL(process.argv[2] + "/index.js").href);
const { NullEngine, Scene, Skeleton, Bone, Matrix, Vector3, Quaternion, Logger } = core;
Logger.LogLevels = Logger.NoneLogLevel;
const spec = JSON.parse(process.argv[3]);

let seed = 12345;
function random() { // mulberry32
  seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
const unitQuaternion = () => {
  const q = new Quaternion(normal(), normal(), normal(), normal());
  q.normalize();
  return q;
};

const engine = new NullEngine();
const scene = new Scene(engine);

function randomTree(n, name) {
  const skeleton = new Skeleton(name, name, scene);
  const bones = [];
  for (let i = 0; i < n; i++) {
    const s = new Vector3(0.5 + random(), 0.5 + random(), 0.5 + random());
    const local = Matrix.Compose(s, unitQuaternion(), new Vector3(normal(), normal(), normal()));
    const parent = i ? bones[Math.floor(random() * i)] : null;
    bones.push(new Bone(`b${i}`, skeleton, parent, local));
  }
  skeleton.prepare(true);
  return skeleton;
}

function poses(n) {
  return [0, 1, 2, 3].map(() => Array.from({ length: n }, unitQuaternion));
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m] : 0.5 * (sorted[m - 1] + sorted[m]);
}

function time(frame, reps, warmup) {
  for (let i = 0; i < warmup; i++) frame(i);
  const times = new Array(reps);
  for (let i = 0; i < reps; i++) {
    const start = process.hrtime.bigint();
    frame(i);
    times[i] = Number(process.hrtime.bigint() - start) / 1000;
  }
  return median(times);
}

const result = {};
const rounds = spec.rounds || 1;
const cases = [];
for (const n of spec.sizes) {
  const skeleton = randomTree(n, `tree${n}`);
  const pose = poses(n);
  const bones = skeleton.bones;
  const frame = (i) => {
    const p = pose[i & 3];
    for (let k = 0; k < n; k++) bones[k].rotationQuaternion = p[k];
    skeleton.prepare(true);
    skeleton.getTransformMatrices(null);
  };
  cases.push([String(n), frame, spec.reps[String(n)]]);
}
if (spec.crowd) {
  const [count, n] = spec.crowd;
  const skeletons = Array.from({ length: count }, (_, k) => randomTree(n, `crowd${k}`));
  const pose = poses(count * n);
  const frame = (i) => {
    const p = pose[i & 3];
    for (let s = 0; s < count; s++) {
      const bones = skeletons[s].bones;
      for (let k = 0; k < n; k++) bones[k].rotationQuaternion = p[s * n + k];
      skeletons[s].prepare(true);
      skeletons[s].getTransformMatrices(null);
    }
  };
  cases.push(["crowd", frame, spec.crowd_reps]);
}
for (const [key] of cases) result[key] = [];
// JIT warm-up once, then the rounds
for (const [, frame, reps] of cases) time(frame, Math.min(reps, 200), 50);
for (let r = 0; r < rounds; r++)
  for (const [key, frame, reps] of cases) result[key].push(time(frame, reps, 10));
console.log(JSON.stringify(result));
