// Times three.js's BVHLoader.parse on one file (for scripts/bench_bvh.py): prints
// {"median_s": ..., "runs": N} after one warm-up parse.
//
// usage: node bench_bvh.mjs FILE.bvh [RUNS]
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { BVHLoader } from 'three/examples/jsm/loaders/BVHLoader.js';

const text = readFileSync(process.argv[2], 'utf8');
const runs = Number(process.argv[3] ?? 5);
new BVHLoader().parse(text);
const times = [];
for (let i = 0; i < runs; i++) {
  const start = performance.now();
  new BVHLoader().parse(text);
  times.push((performance.now() - start) / 1000);
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ median_s: times[Math.floor(runs / 2)], runs }));
