// Generates tests/data/babylon_controllers_reference.json by driving the REAL Babylon.js
// BoneIKController and BoneLookController (@babylonjs/core, version pinned in ./package.json) on
// seeded random bone chains.
//
// Usage:
//   cd tests/babylon && npm install && npm run generate-controllers
//   (= node generate_controllers_reference.mjs ../data/babylon_controllers_reference.json)
//
// Output is deterministic (mulberry32 PRNG with fixed seeds).
//
// Numbers: INPUT matrices are built with Babylon's Matrix.Compose (float32 values, written as their exact
// doubles); input vectors (targets, axes, mesh TRS) are doubles. EXPECTED local matrices come from Babylon's
// Float32Array storage, written as the shortest decimal that round-trips through float32.
//
// A case:
//   bones:   [{name, parent, local, length}] (a chain of 3-6 bones, sometimes with a side branch)
//   mesh:    null, or the TRS of the TransformNode placing the skeleton in the world. Babylon's controllers
//            need a mesh (they read mesh.scaling and mesh.getWorldMatrix()), so "null" is run with an
//            identity TransformNode; the Python side passes tnode=None.
//   trs_exact: every scale in the chain and the mesh is uniform, so every local matrix Babylon produces is
//            a plain TRS (no shear): the case can also be replayed on bones linked to TransformNodes.
//   controller: "ik" or "look" and its options, as the Python constructor takes them (snake_case).
//   steps:   [{pose?, target, pole_target_position?, expect: [local matrix of every bone]}]: optionally set
//            one bone's local rotationQuaternion, then set the target (and pole), call update() once, and
//            record every bone's local matrix.
//   info:    what Babylon's constructor derived (IK: bend axis, adjust roll, handedness, lengths, reach).

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Rng as BaseRng } from "./rng.mjs";
import {
    NullEngine, Scene, Skeleton, Bone, Matrix, Vector3, Quaternion, TransformNode, Logger,
    BoneIKController, BoneLookController,
} from "@babylonjs/core";

const HERE = dirname(fileURLToPath(import.meta.url));
const outPath = process.argv[2];
if (!outPath) {
    console.error("usage: node generate_controllers_reference.mjs OUTPUT.json");
    process.exit(2);
}
const BABYLON_VERSION = JSON.parse(readFileSync(join(HERE, "node_modules", "@babylonjs", "core", "package.json"), "utf8")).version;

Logger.LogLevels = Logger.NoneLogLevel;
const engine = new NullEngine();
if (Matrix.Use64Bits) {
    throw new Error("expected Babylon's default float32 matrix storage");
}
const SPACE = { LOCAL: 0, WORLD: 1, BONE: 2 };

// ---------------------------------------------------------------- PRNG (rng.mjs)
class Rng extends BaseRng {
    unit() {
        for (;;) {
            const v = this.vec3(-1, 1);
            const n = Math.hypot(...v);
            if (n > 0.2 && n <= 1) return v.map((x) => x / n);
        }
    }
    smallQuat(maxAngle) {
        const q = Quaternion.RotationAxis(V3(this.unit()), this.uniform(-maxAngle, maxAngle));
        return [q.x, q.y, q.z, q.w];
    }
}

// ---------------------------------------------------------------- helpers
const V3 = (a) => new Vector3(a[0], a[1], a[2]);
const Q = (a) => new Quaternion(a[0], a[1], a[2], a[3]);
const composeArr = (s, q, t) => Array.from(Matrix.Compose(V3(s), Q(q), V3(t)).m);
function f32(v) {
    if (v === 0 || !Number.isFinite(v)) return v === 0 ? 0 : v;
    for (let p = 1; p <= 9; p++) {
        const n = Number(v.toPrecision(p));
        if (Math.fround(n) === v) return n;
    }
    return v;
}
const f32arr = (a) => Array.from(a, f32);
const vec = (v) => [v.x, v.y, v.z];
const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const scale = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const norm = (a) => Math.hypot(a[0], a[1], a[2]);
const angleBetween = (a, b) => Math.acos(Math.max(-1, Math.min(1, dot(a, b) / (norm(a) * norm(b)))));

// ---------------------------------------------------------------- chains
// Bones point along +Y of their parent (Babylon's and most rigs' convention) or, for "arm" chains, +X
// (what glTF arms often look like, and what switches Babylon's IK to its adjustRoll branch).
function randomChain(rng, n, { axis, scales, mirror, branch }) {
    const bones = [];
    const lengths = [];
    for (let i = 0; i < n; i++) {
        const parent = i === 0 ? null : branch && i === n - 1 ? rng.int(0, n - 3) : i - 1;
        const length = rng.uniform(0.6, 2.0);
        lengths.push(length);
        let position;
        if (parent === null) {
            position = rng.vec3(-1, 1);
        } else {
            const l = lengths[parent];
            const jitter = rng.vec3(-0.15, 0.15).map((x) => x * l);
            position = axis === "x" ? [l, jitter[1], jitter[2]] : [jitter[0], l, jitter[2]];
        }
        const q = i === 0 ? rng.quat() : rng.smallQuat(1.2);
        let s;
        if (scales === "unit") s = [1, 1, 1];
        else if (scales === "uniform") s = Array(3).fill(rng.uniform(0.7, 1.4));
        else s = rng.vec3(0.7, 1.4);
        if (mirror !== null && i === mirror) s = [-s[0], s[1], s[2]];
        bones.push({ name: `b${i}`, parent, local: composeArr(s, q, position), length: null });
    }
    return { bones, lengths };
}

function randomMesh(rng, kind) {
    if (kind === "none") return null;
    if (kind === "yaw-only") {
        // turned about +Y only, unit scale: the up axis stays exactly (0, 1, 0) in the world
        const half = rng.uniform(-Math.PI, Math.PI) / 2;
        return { position: rng.vec3(-3, 3), rotation_quaternion: [0, Math.sin(half), 0, Math.cos(half)], scaling: [1, 1, 1] };
    }
    const s = kind === "uniform" ? Array(3).fill(rng.uniform(0.5, 2)) : kind === "unit" ? [1, 1, 1] : rng.vec3(0.6, 1.8);
    return { position: rng.vec3(-3, 3), rotation_quaternion: rng.quat(), scaling: s };
}

function build(spec) {
    const scene = new Scene(engine);
    const skeleton = new Skeleton(spec.name, spec.name, scene);
    const bones = [];
    spec.bones.forEach((b) => {
        const parent = b.parent === null ? null : bones[b.parent];
        const bone = new Bone(b.name, skeleton, parent, Matrix.FromArray(b.local));
        if (b.length !== null) bone.length = b.length;
        bones.push(bone);
    });
    const mesh = new TransformNode("mesh", scene);
    if (spec.mesh) {
        mesh.position = V3(spec.mesh.position);
        mesh.rotationQuaternion = Q(spec.mesh.rotation_quaternion);
        mesh.scaling = V3(spec.mesh.scaling);
    }
    mesh.computeWorldMatrix(true);
    skeleton.computeAbsoluteMatrices(true);
    return { scene, skeleton, bones, mesh };
}

const locals = (bones) => bones.map((b) => f32arr(b.getLocalMatrix().m));
const descendants = (spec, i) => {
    const out = new Set([i]);
    spec.bones.forEach((b, j) => {
        if (b.parent !== null && out.has(b.parent)) out.add(j);
    });
    return out;
};

// ---------------------------------------------------------------- IK cases
function ikCase(name, seed, variant = {}) {
    const rng = new Rng(seed);
    const n = variant.n ?? rng.int(3, 6);
    const scales = variant.scales ?? rng.pick(["unit", "uniform", "uniform", "nonuniform"]);
    const meshKind = variant.mesh ?? rng.pick(["none", "unit", "uniform", "uniform", "nonuniform"]);
    const axis = variant.axis ?? (rng.chance(0.35) ? "x" : "y");
    const mode = variant.mode ?? rng.pick(["children", "children", "children", "lengths", "leaf"]);
    const branch = n >= 4 && rng.chance(0.3);
    // the lower bone (bone2): it needs a parent; "children" needs a child, "leaf" needs none
    let k;
    if (mode === "leaf") k = n - 1;
    else k = variant.k ?? rng.int(1, n - 2);
    const mirror = variant.mirror ? (variant.mirror === "bone1" ? k - 1 : 0) : null;
    const { bones: boneSpecs, lengths } = randomChain(rng, n, { axis, scales, mirror, branch: branch && mode !== "leaf" && k < n - 2 });
    if (mode === "lengths") {
        boneSpecs[k - 1].length = lengths[k - 1];
        boneSpecs[k].length = lengths[k];
    } else if (mode === "leaf") {
        boneSpecs[k].length = lengths[k];
    }
    const mesh = randomMesh(rng, meshKind);
    const spec = { name, bones: boneSpecs, mesh };
    const options = {};
    const ours = { bone: k };
    const poleMode = variant.pole ?? rng.pick(["default", "default", "bone", "position"]);
    const notMoved = [...Array(n).keys()].filter((j) => !descendants(spec, k - 1).has(j));
    if (poleMode === "bone" && notMoved.length) {
        const j = rng.pick(notMoved);
        options.poleTargetBone = j;
        ours.pole_target_bone = j;
        if (rng.chance(0.7)) {
            const offset = rng.vec3(-1.5, 1.5);
            options.poleTargetLocalOffset = offset;
            ours.pole_target_local_offset = offset;
        }
    }
    if (rng.chance(0.35)) {
        ours.pole_angle = options.poleAngle = rng.uniform(-Math.PI, Math.PI);
    }
    if (variant.bendAxis ?? rng.chance(0.25)) {
        const a = scale(rng.unit(), rng.chance(0.5) ? 1 : rng.uniform(0.5, 2)); // non-unit axes too
        ours.bend_axis = options.bendAxis = a;
    }
    if (rng.chance(0.3)) {
        ours.max_angle = options.maxAngle = rng.uniform(1.2, 2.8);
    }
    if (variant.slerp ?? rng.chance(0.3)) {
        ours.slerp_amount = options.slerpAmount = rng.uniform(0.25, 0.85);
    }

    const { scene, skeleton, bones, mesh: meshNode } = build(spec);
    const babylonOptions = { ...options };
    if (babylonOptions.poleTargetBone !== undefined) babylonOptions.poleTargetBone = bones[babylonOptions.poleTargetBone];
    if (babylonOptions.poleTargetLocalOffset) babylonOptions.poleTargetLocalOffset = V3(babylonOptions.poleTargetLocalOffset);
    if (babylonOptions.bendAxis) babylonOptions.bendAxis = V3(babylonOptions.bendAxis);
    const ik = new BoneIKController(meshNode, bones[k], babylonOptions);
    if (ik._notEnoughInformation) throw new Error(`${name}: Babylon refused the chain`);
    if (poleMode === "position") {
        ik.poleTargetBone = undefined;
        ours.pole_target_position = null; // set per step
    }
    const info = {
        bend_axis: vec(ik._bendAxis),
        adjust_roll: ik._adjustRoll,
        right_handed: ik._rightHandedSystem,
        bone1_length: ik._bone1Length,
        bone2_length: ik._bone2Length,
        max_reach: ik._maxReach,
        pole_target_bone: ik.poleTargetBone ? bones.indexOf(ik.poleTargetBone) : null,
    };

    const a = ik._bone1Length, b = ik._bone2Length;
    const lo = Math.abs(a - b), hi = ik._maxReach;
    const steps = [];
    const count = rng.int(3, 6);
    for (let s = 0; s < count; s++) {
        const step = {};
        if (s > 0 && rng.chance(0.3)) {
            // move something above the chain (or the chain itself) between updates
            const j = rng.int(0, k);
            const q = rng.smallQuat(0.6);
            bones[j].rotationQuaternion = Q(q);
            step.pose = { bone: j, rotation_quaternion: q };
        }
        skeleton.computeAbsoluteMatrices(true);
        const bonePos = vec(bones[k - 1].getAbsolutePosition(meshNode));
        if (poleMode === "position") {
            const p = add(bonePos, scale(rng.unit(), rng.uniform(0.5, 3)));
            step.pole_target_position = p;
            ik.poleTargetPosition.copyFrom(V3(p));
        }
        let pole;
        if (ik.poleTargetBone) pole = vec(ik.poleTargetBone.getAbsolutePositionFromLocal(ik.poleTargetLocalOffset, meshNode));
        else pole = vec(ik.poleTargetPosition);
        const up = sub(pole, bonePos);
        // a target well inside (or well outside) the reach, not in line with the pole: away from the
        // acos singularities at full extension and full fold, where float32 alone moves the angles
        let target;
        for (let tries = 0; ; tries++) {
            const reachable = rng.chance(0.7);
            const d = reachable ? lo + (hi - lo) * rng.uniform(0.15, 0.85) : hi * rng.uniform(1.15, 2);
            const dir = rng.unit();
            if (norm(up) > 1e-6) {
                const ang = angleBetween(dir, up);
                if (ang < 0.35 || ang > Math.PI - 0.35) continue;
            }
            target = add(bonePos, scale(dir, d));
            break;
        }
        step.target = target;
        ik.targetPosition.copyFrom(V3(target));
        ik.update();
        step.expect = locals(bones);
        steps.push(step);
    }
    skeleton.dispose();
    scene.dispose();
    const trsExact = scales !== "nonuniform" && meshKind !== "nonuniform";
    return { ...spec, trs_exact: trsExact, controller: "ik", options: ours, info, steps };
}

// ---------------------------------------------------------------- look-at cases
function lookCase(name, seed, variant = {}) {
    const rng = new Rng(seed);
    const n = variant.n ?? rng.int(2, 5);
    const scales = variant.scales ?? rng.pick(["unit", "uniform", "uniform", "nonuniform"]);
    const meshKind = variant.mesh ?? rng.pick(["none", "unit", "uniform", "uniform", "nonuniform"]);
    const axis = rng.chance(0.3) ? "x" : "y";
    const { bones: boneSpecs } = randomChain(rng, n, { axis, scales, mirror: null, branch: false });
    const k = variant.k ?? rng.int(0, n - 1);
    const mesh = randomMesh(rng, meshKind);
    const spec = { name, bones: boneSpecs, mesh };
    const options = {};
    const ours = { bone: k };
    const limits = variant.limits ?? rng.pick(["none", "none", "yaw", "pitch", "both", "wide"]);
    if (limits === "yaw" || limits === "both") {
        ours.min_yaw = options.minYaw = rng.uniform(-1.4, -0.1);
        ours.max_yaw = options.maxYaw = rng.uniform(0.1, 1.4);
    }
    if (limits === "wide") {
        // a yaw range wider than pi: Babylon clamps to the nearer limit through its mid-angle logic
        ours.min_yaw = options.minYaw = rng.uniform(-2.9, -1.8);
        ours.max_yaw = options.maxYaw = rng.uniform(1.8, 2.9);
    }
    if (limits === "pitch" || limits === "both" || (limits === "wide" && rng.chance(0.5))) {
        ours.min_pitch = options.minPitch = rng.uniform(-1.2, -0.1);
        ours.max_pitch = options.maxPitch = rng.uniform(0.1, 1.2);
    }
    if (variant.slerp ?? rng.chance(0.3)) {
        ours.slerp_amount = options.slerpAmount = rng.uniform(0.25, 0.85);
    }
    const space = variant.space ?? rng.pick(["LOCAL", "LOCAL", "WORLD", "BONE"]);
    if (space !== "LOCAL") {
        ours.up_axis_space = space;
        options.upAxisSpace = SPACE[space];
    }
    const axes = variant.axes ?? rng.pick(["none", "none", "none", "yaw", "both"]);
    // With custom axes outside Space.BONE, the default up axis can be the limits' forward axis
    // (a degenerate frame, garbage in Babylon, an error here): give those a random up axis.
    if (variant.upAxis ?? (rng.chance(0.3) || (axes !== "none" && (space !== "BONE" || k === 0)))) {
        ours.up_axis = options.upAxis = rng.unit();
    }
    if (axes === "yaw") {
        ours.yaw_axis = options.yawAxis = rng.pick([[0, 0, 1], [0, 0, -1], [0, -1, 0]]); // not parallel to the default pitch axis X
    } else if (axes === "both") {
        // an orthogonal pair, not necessarily unit
        const y = rng.unit();
        let p = rng.unit();
        p = sub(p, scale(y, dot(p, y)));
        ours.yaw_axis = options.yawAxis = scale(y, rng.uniform(0.5, 2));
        ours.pitch_axis = options.pitchAxis = scale(p, 1 / norm(p));
    }
    for (const [key, ourKey] of [["adjustYaw", "adjust_yaw"], ["adjustPitch", "adjust_pitch"], ["adjustRoll", "adjust_roll"]]) {
        if (rng.chance(0.25)) ours[ourKey] = options[key] = rng.uniform(-1.5, 1.5);
    }
    if (variant.absoluteYaw) {
        ours.use_absolute_value_for_yaw = options.useAbsoluteValueForYaw = true;
    }

    const { scene, skeleton, bones, mesh: meshNode } = build(spec);
    const babylonOptions = { ...options };
    for (const key of ["upAxis", "yawAxis", "pitchAxis"]) if (babylonOptions[key]) babylonOptions[key] = V3(babylonOptions[key]);
    const first = vec(bones[k].getAbsolutePosition(meshNode));
    const look = new BoneLookController(meshNode, bones[k], V3(add(first, [0, 0, 1])), babylonOptions);

    const steps = [];
    const count = rng.int(3, 6);
    for (let s = 0; s < count; s++) {
        const step = {};
        if (s > 0 && rng.chance(0.3)) {
            const j = rng.int(0, n - 1);
            const q = rng.smallQuat(0.6);
            bones[j].rotationQuaternion = Q(q);
            step.pose = { bone: j, rotation_quaternion: q };
        }
        skeleton.computeAbsoluteMatrices(true);
        const bonePos = vec(bones[k].getAbsolutePosition(meshNode));
        const target = add(bonePos, scale(rng.unit(), rng.uniform(0.5, 4)));
        step.target = target;
        look.target = V3(target);
        look.update();
        step.expect = locals(bones);
        steps.push(step);
    }
    skeleton.dispose();
    scene.dispose();
    const trsExact = scales !== "nonuniform" && meshKind !== "nonuniform";
    return { ...spec, trs_exact: trsExact, controller: "look", options: ours, info: {}, steps };
}

// ---------------------------------------------------------------- main
const cases = [];
let seed = 5000;
for (let i = 0; i < 48; i++) cases.push(ikCase(`ik-${i}`, seed++));
// the branches every run must contain
cases.push(ikCase("ik-arm-x", seed++, { axis: "x", mode: "children", scales: "unit", mesh: "none", pole: "default" }));
cases.push(ikCase("ik-mirrored-left-handed", seed++, { mirror: "bone1", mode: "children", scales: "uniform", mesh: "uniform" }));
cases.push(ikCase("ik-mirrored-root", seed++, { mirror: "root", mode: "children", scales: "unit", mesh: "unit", k: 2 }));
cases.push(ikCase("ik-root-upper-bone", seed++, { k: 1, pole: "default", mode: "children", mesh: "uniform" }));
cases.push(ikCase("ik-lengths", seed++, { mode: "lengths", scales: "nonuniform", mesh: "nonuniform" }));
cases.push(ikCase("ik-leaf", seed++, { mode: "leaf", scales: "uniform", mesh: "uniform" }));
cases.push(ikCase("ik-slerp-bend-axis", seed++, { slerp: true, bendAxis: true, mesh: "uniform" }));
cases.push(ikCase("ik-pole-position", seed++, { pole: "position", scales: "uniform", mesh: "uniform" }));
for (let i = 0; i < 44; i++) cases.push(lookCase(`look-${i}`, seed++));
cases.push(lookCase("look-root-no-limits", seed++, { k: 0, limits: "none", space: "LOCAL", mesh: "none", upAxis: false, axes: "none" }));
cases.push(lookCase("look-root-limits-mesh", seed++, { k: 0, limits: "both", space: "LOCAL", mesh: "uniform", upAxis: false, axes: "none" }));
cases.push(lookCase("look-bone-space-limits", seed++, { k: 2, n: 4, limits: "both", space: "BONE", upAxis: false, axes: "none" }));
cases.push(lookCase("look-world-space-wide", seed++, { limits: "wide", space: "WORLD", slerp: true }));
cases.push(lookCase("look-wide-slerp", seed++, { limits: "wide", slerp: true, space: "LOCAL", axes: "none" }));
cases.push(lookCase("look-axes-limits", seed++, { limits: "both", axes: "both", space: "BONE", k: 1 }));
cases.push(lookCase("look-absolute-yaw", seed++, { limits: "yaw", absoluteYaw: true, space: "LOCAL" }));
cases.push(lookCase("look-slerp", seed++, { slerp: true, limits: "none" }));
// a root under a translated mesh, up exactly +Y: Babylon's limits frame is the mesh's whole world matrix
cases.push(lookCase("look-root-translated-mesh-frame", seed++, { k: 0, limits: "both", space: "LOCAL", mesh: "yaw-only", upAxis: false, axes: "none", slerp: false }));

const fixture = { babylon_version: BABYLON_VERSION, cases };
const text = JSON.stringify(fixture);
writeFileSync(outPath, text + "\n");
const ik = cases.filter((c) => c.controller === "ik");
const look = cases.filter((c) => c.controller === "look");
const updates = cases.reduce((t, c) => t + c.steps.length, 0);
console.log(`Babylon.js ${BABYLON_VERSION}: wrote ${outPath} (${(text.length / 1024).toFixed(0)} KiB)`);
console.log(`cases: ${ik.length} IK, ${look.length} look-at; ${updates} updates; trs_exact: ${cases.filter((c) => c.trs_exact).length}`);
console.log(`IK: left-handed ${ik.filter((c) => !c.info.right_handed).length}, adjust-roll ${ik.filter((c) => c.info.adjust_roll).length}, ` +
    `slerp ${ik.filter((c) => c.options.slerp_amount).length}, pole bone ${ik.filter((c) => c.info.pole_target_bone !== null).length}`);
