// three-vrm-node-constraint 3.5.5's numbers for boneviewer's node-constraint cases
// (record_constraints.py writes the cases and reads the answers), with three-vrm-springbone
// 3.5.5 after it, in VRMCore.update's and VRM.update's order. A case: the nodes (name, parent,
// local TRS at rest), each node's VRMC_node_constraint and the VRMC_springBone extension as the
// file holds them (read by three-vrm's own loaders), and per step the local TRS the motion writes.
// Step 0: the pose set, matrices updated, the constraints, then the springs reset. Each later step:
// the pose set (updateMatrix, updateMatrixWorld), constraints.update(), the matrices updated again,
// springs.update(dt). (The springs read the scene's matrices brought up to date, as
// springs.mjs has them after the motion; without the update between, three-vrm's spring step
// reads a spring bone's child where it was before the constraints moved its ancestors.)
// Usage: node constraints.mjs cases.json > answers.json
import * as THREE from 'three';
import { VRMNodeConstraintLoaderPlugin } from '@pixiv/three-vrm-node-constraint';
import { VRMSpringBoneLoaderPlugin } from '@pixiv/three-vrm-springbone';
import { readFileSync } from 'node:fs';

function setTRS(o, t) {
  o.position.set(t[0], t[1], t[2]);
  o.quaternion.set(t[3], t[4], t[5], t[6]);
  o.scale.set(t[7], t[8], t[9]);
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
  const nodes = c.nodes.map((n) => { const o = new THREE.Object3D(); o.name = n.name; return o; });
  const root = new THREE.Scene();
  c.nodes.forEach((n, i) => {
    (n.parent >= 0 ? nodes[n.parent] : root).add(nodes[i]);
    setTRS(nodes[i], n.trs);
  });
  root.updateMatrixWorld(true);
  const json = {
    extensionsUsed: c.extensionsUsed, extensions: c.extension,
    nodes: c.nodes.map((n, i) => (c.node_constraints[i] ? { extensions: { VRMC_node_constraint: c.node_constraints[i] } } : {})),
  };
  const parser = { json, getDependencies: async () => nodes };
  const constraints = await new VRMNodeConstraintLoaderPlugin(parser)._import({ scene: root });
  const springs = await new VRMSpringBoneLoaderPlugin(parser)._import({ parser });
  drive(root, nodes, c.frames[0]);
  constraints.update();
  root.updateMatrixWorld(true);
  springs.reset();
  const out = {};
  const q = new THREE.Quaternion(), p = new THREE.Vector3(), s = new THREE.Vector3();
  for (let k = 1; k < c.frames.length; k++) {
    drive(root, nodes, c.frames[k]);
    constraints.update();
    root.updateMatrixWorld(true);
    springs.update(c.dt);
    if (c.report_steps.includes(k)) {
      root.updateMatrixWorld(true);
      out[k] = {
        rotations: c.constrained.map((i) => { nodes[i].matrixWorld.decompose(p, q, s); return q.toArray(); }),
        springs: c.springs.map((i) => nodes[i].getWorldPosition(new THREE.Vector3()).toArray()),
      };
    }
  }
  return out;
}

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const out = {};
for (const [name, c] of Object.entries(cases)) out[name] = await run(c);
process.stdout.write(JSON.stringify(out));
