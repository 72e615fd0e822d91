// three-vrm-springbone 3.5.5's numbers for boneviewer's spring cases (record_springs.py writes
// the cases and reads the answers). A case: the nodes (name, parent, local TRS at rest), the
// springs (a VRMC_springBone extension as the file holds it, read by three-vrm's own loader;
// or joints listed as add_chain makes them), and per step the local TRS of the nodes the
// driving motion writes. Each step: those TRS set, every matrix brought up to date
// (updateMatrix, updateMatrixWorld), then manager.update(dt); step 0 sets the pose and resets.
// Usage: node springs.mjs cases.json > answers.json   (also: node springs.mjs --bench)
import * as THREE from 'three';
import { VRMSpringBoneLoaderPlugin, VRMSpringBoneManager, VRMSpringBoneJoint, VRMSpringBoneCollider,
         VRMSpringBoneColliderShapeSphere, VRMSpringBoneColliderShapeCapsule,
         VRMSpringBoneColliderShapePlane } from '@pixiv/three-vrm-springbone';
import { readFileSync } from 'node:fs';

function buildNodes(spec) {
  const nodes = spec.map((n) => { const o = new THREE.Object3D(); o.name = n.name; return o; });
  const root = new THREE.Scene();
  spec.forEach((n, i) => {
    (n.parent >= 0 ? nodes[n.parent] : root).add(nodes[i]);
    setTRS(nodes[i], n.trs);
  });
  root.updateMatrixWorld(true);
  return { root, nodes };
}

function setTRS(o, t) {
  o.position.set(t[0], t[1], t[2]);
  o.quaternion.set(t[3], t[4], t[5], t[6]);
  o.scale.set(t[7], t[8], t[9]);
}

function shape(c) {
  const v = (a, d) => new THREE.Vector3().fromArray(a ?? d);
  if (c.shape === 'sphere') return new VRMSpringBoneColliderShapeSphere({ offset: v(c.offset, [0, 0, 0]), radius: c.radius, inside: !!c.inside });
  if (c.shape === 'capsule') return new VRMSpringBoneColliderShapeCapsule({ offset: v(c.offset, [0, 0, 0]), radius: c.radius, tail: v(c.tail, [0, 0, 0]), inside: !!c.inside });
  return new VRMSpringBoneColliderShapePlane({ offset: v(c.offset, [0, 0, 0]), normal: v(c.normal, [0, 0, 1]) });
}

async function buildManager(c, nodes) {
  if (c.extension) {  // three-vrm's own reader of VRMC_springBone
    const json = { extensionsUsed: c.extensionsUsed, extensions: c.extension };
    const parser = { json, getDependencies: async () => nodes };
    const plugin = new VRMSpringBoneLoaderPlugin(parser);
    return await plugin._import({ parser });
  }
  const manager = new VRMSpringBoneManager();
  for (const j of c.joints) {
    const colliders = j.colliders.map((s) => {
      const col = new VRMSpringBoneCollider(shape(s));
      nodes[s.node].add(col);
      return col;
    });
    const joint = new VRMSpringBoneJoint(nodes[j.bone], j.child >= 0 ? nodes[j.child] : null, {
      hitRadius: j.hitRadius, stiffness: j.stiffness, gravityPower: j.gravityPower,
      gravityDir: new THREE.Vector3().fromArray(j.gravityDir), dragForce: j.dragForce,
    }, [{ colliders }]);
    if (j.center >= 0) joint.center = nodes[j.center];
    manager.addJoint(joint);
  }
  nodes[0].parent.updateMatrixWorld(true);
  manager.setInitState();
  return manager;
}

function drive(root, nodes, frame) {
  for (const [i, [p, q, s]] of frame) {
    if (p) nodes[i].position.fromArray(p);
    if (q) nodes[i].quaternion.fromArray(q);
    if (s) nodes[i].scale.fromArray(s);
  }
  root.traverse((o) => o.updateMatrix());
  root.updateMatrixWorld(true);
}

async function run(c) {
  const { root, nodes } = buildNodes(c.nodes);
  const manager = await buildManager(c, nodes);
  drive(root, nodes, c.frames[0]);
  manager.reset();
  for (let k = 1; k < c.frames.length; k++) {
    drive(root, nodes, c.frames[k]);
    manager.update(c.dt);
  }
  root.updateMatrixWorld(true);
  return c.report.map((i) => nodes[i].getWorldPosition(new THREE.Vector3()).toArray());
}

async function bench(c, count) {
  const { root, nodes } = buildNodes(c.nodes);
  const manager = await buildManager(c, nodes);
  drive(root, nodes, c.frames[0]);
  manager.reset();
  for (let k = 0; k < 200; k++) manager.update(c.dt);  // warm the JIT
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < count; k++) manager.update(c.dt);
  return Number(process.hrtime.bigint() - t0) / 1e9 / count;
}

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const out = {};
for (const [name, c] of Object.entries(cases)) {
  out[name] = process.argv[3] === '--bench' ? await bench(c, 2000) : await run(c);
}
process.stdout.write(JSON.stringify(out));
