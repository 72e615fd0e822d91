// Joint world positions of each test BVH file as three.js's BVHLoader reads it, played by
// three's AnimationMixer, for tests/test_bvh.py (loaded there with scale=1.0, up="y", forward="z").
//
// boneviewer reads position channels in place of the OFFSET (as Blender does); three adds the
// OFFSET to them. So before playing, the OFFSET is taken out of three's position keys for the
// components that have a channel (a component without one keeps the OFFSET in both readings).
// Names with ':' (mixamorig:Hips) cannot be bound by three's PropertyBinding until they pass
// through PropertyBinding.sanitizeNodeName, so bones and tracks are renamed that way first.
//
// three's parser wants each '{' on its own line: the text it gets has braces moved there.
//
// usage: node generate_bvh_reference.mjs OUT.json
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { AnimationMixer, LoopOnce, Object3D, PropertyBinding, Vector3 } from 'three';
import { BVHLoader } from 'three/examples/jsm/loaders/BVHLoader.js';

const folder = new URL('../data/bvh/', import.meta.url).pathname;
const out = process.argv[2] ?? '../data/threejs_bvh_reference.json';

// Per joint (file order, End Sites included): the position channel axes it has.
function positionAxes(text) {
  const result = [];
  for (const line of text.split(/\r?\n/)) {
    const words = line.trim().split(/\s+/);
    if (words[0] === 'ROOT' || words[0] === 'JOINT' || words[0] === 'End') result.push([]);
    if (words[0] === 'CHANNELS') {
      result[result.length - 1] = words.slice(2).filter((w) => w.endsWith('position')).map((w) => 'xyz'.indexOf(w[0].toLowerCase()));
    }
    if (words[0] === 'MOTION') break;
  }
  return result;
}

const files = {};
for (const name of readdirSync(folder).filter((f) => f.endsWith('.bvh')).sort()) {
  const bytes = readFileSync(join(folder, name));
  const text = bytes.toString('utf8');
  // three's parser wants each '{' on a line of its own; moving it there changes nothing else.
  const { skeleton, clip } = new BVHLoader().parse(text.replace(/[ \t]+\{[ \t]*$/gm, '\n{'));
  const bones = skeleton.bones;  // file order, End Sites included (named ENDSITE)
  const axes = positionAxes(text);
  if (axes.length !== bones.length) throw new Error(`${name}: ${axes.length} joints, three has ${bones.length}`);
  const fileNames = bones.map((b) => b.name);
  const sanitized = bones.map((b) => PropertyBinding.sanitizeNodeName(b.name));
  // Tracks come in bone order (End Sites have none): position then quaternion per joint.
  let track = 0;
  bones.forEach((bone, i) => {
    if (bone.name === 'ENDSITE') return;
    const position = clip.tracks[track++];
    const quaternion = clip.tracks[track++];
    for (let k = 0; k < position.values.length; k += 3) {
      for (const axis of axes[i]) position.values[k + axis] -= bone.position.getComponent(axis);
    }
    bone.name = sanitized[i];
    position.name = `${sanitized[i]}.position`;
    quaternion.name = `${sanitized[i]}.quaternion`;
  });
  const root = new Object3D();
  root.add(bones[0]);
  const mixer = new AnimationMixer(root);
  const action = mixer.clipAction(clip);
  action.setLoop(LoopOnce);
  action.clampWhenFinished = true;
  action.play();
  const frameTime = clip.tracks[0].times.length > 1 ? clip.tracks[0].times[1] - clip.tracks[0].times[0] : 0;
  const count = clip.tracks[0].times.length;
  const picks = [...new Set([0, 1, Math.floor(count / 2), count - 1])].filter((f) => f < count);
  const times = picks.map((f) => clip.tracks[0].times[f]);
  if (count > 2) times.push((Math.floor(count / 3) + 0.5) * frameTime);  // between two frames
  const frames = [];
  times.sort((a, b) => a - b);
  for (const t of times) {
    action.reset();  // a finished LoopOnce action stays where it stopped: start it again each time
    mixer.setTime(t);
    root.updateMatrixWorld(true);
    frames.push({ time: t, positions: bones.map((b) => new Vector3().setFromMatrixPosition(b.matrixWorld).toArray()) });
  }
  files[name] = {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    names: fileNames,
    frames,
  };
}
writeFileSync(out, JSON.stringify({ generator: 'tests/threejs/generate_bvh_reference.mjs', three: '0.187.0', files }, null, 1) + '\n');
console.log(`wrote ${out}: ${Object.keys(files).length} files`);
