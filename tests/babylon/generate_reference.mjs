// Generates tests/data/babylon_reference.json by driving the REAL Babylon.js
// (@babylonjs/core, version pinned in ./package.json) on seeded random skeletons.
//
// Usage:
//   cd tests/babylon && npm install && node generate_reference.mjs ../data/babylon_reference.json
//
// Output is deterministic (mulberry32 PRNG with fixed seeds): re-running gives an identical file.
//
// Number formatting (important for the Python side):
//   * INPUT values (bones[].local/bind/rest, node TRS, step values) are written with full double
//     precision. Input matrices are built with Babylon's Matrix.Compose, i.e. they are float32 values;
//     they are written as the exact double of that float32, so a float64 or a float32 reader both get
//     Babylon's exact input.
//   * EXPECTED matrices (snapshot local/absolute/final/bind/absolute_bind/absolute_inverse_bind/rest and
//     transform_matrices) come from Babylon Float32Array storage and are written with the SHORTEST decimal
//     that round-trips through float32: np.float32(value) reproduces Babylon's bits exactly.
//   * EXPECTED vectors/quaternions (position, rotation_quaternion, rotation, scaling) are float64 in
//     Babylon and written with full double precision.
//
// Snapshot protocol (per "snapshot" step):
//   skeleton.prepare(true); skeleton.computeAbsoluteMatrices(true);
//   then for each bone (creation order): getLocalMatrix(), getAbsoluteMatrix(),
//   final = getAbsoluteInverseBindMatrix().multiply(getAbsoluteMatrix()), getBindMatrix(),
//   absolute bind (bone._absoluteBindMatrix: no public getter in 9.x), getAbsoluteInverseBindMatrix(), getRestMatrix(),
//   then position, rotationQuaternion, rotation, scaling (getters on the Bone).
//   transform_matrices = first N*16 entries of skeleton.getTransformMatrices(null).
//
// NOTE (Babylon behaviour, not a harness bug): Skeleton.computeAbsoluteMatrices() only recurses from
// bones[0]; bones in other root trees keep a stale _absoluteMatrix (all zeros, never computed), so their
// "absolute"/"final" are zeros while transform_matrices (computed by prepare from getFinalMatrix()) are
// correct. The self-check below reports these.

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Rng as BaseRng } from "./rng.mjs";
import { NullEngine, Scene, Skeleton, Bone, Matrix, Vector3, Quaternion, TransformNode, Logger } from "@babylonjs/core";

const HERE = dirname(fileURLToPath(import.meta.url));
const outPath = process.argv[2];
if (!outPath) {
    console.error("usage: node generate_reference.mjs OUTPUT.json");
    process.exit(2);
}
const BABYLON_VERSION = JSON.parse(readFileSync(join(HERE, "node_modules", "@babylonjs", "core", "package.json"), "utf8")).version;

Logger.LogLevels = Logger.NoneLogLevel;
const engine = new NullEngine();
if (Matrix.Use64Bits) {
    throw new Error("expected Babylon's default float32 matrix storage");
}

// ---------------------------------------------------------------- PRNG (rng.mjs)
class Rng extends BaseRng {
    euler() {
        return this.vec3(-Math.PI, Math.PI);
    }
}

// ---------------------------------------------------------------- helpers
const V3 = (a) => new Vector3(a[0], a[1], a[2]);
const Q = (a) => new Quaternion(a[0], a[1], a[2], a[3]);
const M = (a) => Matrix.FromArray(a);
const composeArr = (s, q, t) => Array.from(Matrix.Compose(V3(s), Q(q), V3(t)).m); // exact float32 values as doubles
const randMatrix = (rng) => composeArr(rng.vec3(0.5, 2), rng.quat(), rng.vec3(-2, 2));
const axisAngleQuat = (axis, angle) => {
    const q = Quaternion.RotationAxis(V3(axis), angle);
    return [q.x, q.y, q.z, q.w];
};

// shortest decimal that round-trips through float32
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
const quat = (q) => [q.x, q.y, q.z, q.w];

// ---------------------------------------------------------------- case specs
function randomParents(rng, n) {
    const shape = rng.pick(["chain", "bushy", "mixed", "mixed"]);
    const extraRootP = rng.chance(0.35) ? rng.uniform(0.05, 0.2) : 0;
    const parents = [];
    for (let i = 0; i < n; i++) {
        if (i === 0 || rng.chance(extraRootP)) {
            parents.push(null);
            continue;
        }
        let p;
        if (shape === "chain") p = rng.chance(0.85) ? i - 1 : rng.int(0, i - 1);
        else if (shape === "bushy") p = rng.int(0, Math.min(i - 1, 3));
        else p = rng.chance(0.5) ? i - 1 : rng.int(0, i - 1);
        parents.push(p);
    }
    return parents;
}

function randomSetValue(rng, property) {
    switch (property) {
        case "position":
            return rng.vec3(-2, 2);
        case "scaling":
            return rng.vec3(0.5, 2);
        case "rotation_quaternion":
            return rng.quat();
        case "rotation":
            return rng.euler();
    }
    throw new Error(property);
}

function randomSteps(rng, n, linked, rounds) {
    const steps = [];
    for (let r = 0; r < rounds; r++) {
        const nOps = r === 0 && rng.chance(0.4) ? 0 : rng.int(1, Math.min(6, 1 + Math.ceil(n / 2)));
        for (let k = 0; k < nOps; k++) {
            const op = rng.weighted([
                [linked ? "set_node" : "set", 10],
                ["set_bind_matrix", 1.2],
                ["set_rest_matrix", 1.2],
                ["bone_return_to_rest", 1.2],
                ["return_to_rest", 0.8],
            ]);
            const bone = rng.int(0, n - 1);
            if (op === "set") {
                const property = rng.pick(["position", "rotation_quaternion", "rotation", "scaling"]);
                steps.push({ op, bone, property, value: randomSetValue(rng, property) });
            } else if (op === "set_node") {
                const property = rng.pick(["position", "rotation_quaternion", "scaling"]);
                steps.push({ op, bone, property, value: randomSetValue(rng, property) });
            } else if (op === "set_bind_matrix" || op === "set_rest_matrix") {
                steps.push({ op, bone, value: randMatrix(rng) });
            } else if (op === "bone_return_to_rest") {
                steps.push({ op, bone });
            } else {
                steps.push({ op });
            }
        }
        steps.push({ op: "snapshot" });
    }
    return steps;
}

function randomCase(name, seed, n, linked) {
    const rng = new Rng(seed);
    const parents = randomParents(rng, n);
    const nodeFromLocal = linked && rng.chance(0.5);
    const bones = parents.map((parent, i) => {
        const b = { name: `b${i}`, parent, local: null, bind: null, rest: null, node: null };
        if (linked) {
            b.node = { position: rng.vec3(-2, 2), rotation_quaternion: rng.quat(), scaling: rng.vec3(0.5, 2) };
        }
        b.local = nodeFromLocal ? composeArr(b.node.scaling, b.node.rotation_quaternion, b.node.position) : randMatrix(rng);
        b.bind = rng.chance(0.3) ? null : randMatrix(rng);
        b.rest = rng.chance(0.3) ? null : randMatrix(rng);
        return b;
    });
    const rounds = n >= 100 ? 2 : n >= 24 ? 3 : n >= 12 ? rng.int(3, 4) : rng.int(3, 6);
    return { name, linked, bones, steps: randomSteps(rng, n, linked, rounds) };
}

function docsCharacterCase() {
    // Babylon docs (bonesSkeletons): body at origin, arms bound at the shoulders rotated +-30deg about Z.
    const Z = [0, 0, 1];
    const deg = Math.PI / 180;
    const body = Array.from(Matrix.Identity().m);
    const leftArm = composeArr([1, 1, 1], axisAngleQuat(Z, 30 * deg), [0.5, 1.5, 0]);
    const rightArm = composeArr([1, 1, 1], axisAngleQuat(Z, -30 * deg), [-0.5, 1.5, 0]);
    return {
        name: "docs-3-bone-character",
        linked: false,
        bones: [
            { name: "body", parent: null, local: body, bind: null, rest: null, node: null },
            { name: "leftArm", parent: 0, local: leftArm, bind: null, rest: null, node: null },
            { name: "rightArm", parent: 0, local: rightArm, bind: null, rest: null, node: null },
        ],
        steps: [
            { op: "snapshot" },
            { op: "set", bone: 1, property: "rotation_quaternion", value: axisAngleQuat(Z, 75 * deg) },
            { op: "snapshot" },
            { op: "set", bone: 2, property: "rotation", value: [0, 0, -75 * deg] },
            { op: "set", bone: 0, property: "position", value: [0, 0.25, 0] },
            { op: "snapshot" },
            { op: "bone_return_to_rest", bone: 1 },
            { op: "snapshot" },
            { op: "return_to_rest" },
            { op: "snapshot" },
        ],
    };
}

function gimbalCase() {
    // Quaternion.toEulerAnglesToRef switches to its singular branch when |qy*qz - qx*qw| > 0.4999999,
    // i.e. |pitch -+ pi/2| < ~6.3e-4 rad. Mix of exact, inside and just-outside values.
    const rng = new Rng(777);
    const n = 5;
    const bones = [];
    for (let i = 0; i < n; i++) {
        bones.push({ name: `g${i}`, parent: i === 0 ? null : i - 1, local: randMatrix(rng), bind: null, rest: null, node: null });
    }
    const H = Math.PI / 2;
    const rounds = [
        [[H, 0.3, 0.2], [-H, -1.1, 0.7], [H, 0, 0], [-H, 0, 0], [H, Math.PI, -Math.PI]],
        [[H - 1e-4, 0.5, -0.4], [-H + 1e-4, -2.5, 1.3], [H - 5e-4, 1.0, 2.0], [H - 7e-4, 1.0, 2.0], [-H + 1e-3, 0.25, -0.5]],
        [[H + 1e-4, 0.25, 0.5], [-H - 1e-7, 0.6, -0.9], [H + 6e-4, -3.0, 3.0], [-H - 6.5e-4, 2.0, -2.9], [H - 2e-3, -1.0, 0.1]],
        null, // quaternions sitting exactly / very close on the +-0.5 limit
        [[H, -0.3, 0.3], [-H + 6e-4, 0.1, 0.2], [-H + 6.4e-4, 0.1, 0.2], [H - 1e-7, 3.0, -3.0], [0.5, 0.5, 0.5]],
    ];
    const steps = [];
    rounds.forEach((eulers, r) => {
        if (eulers) {
            eulers.forEach((e, b) => steps.push({ op: "set", bone: b, property: "rotation", value: e }));
        } else {
            steps.push({ op: "set", bone: 0, property: "rotation_quaternion", value: axisAngleQuat([1, 0, 0], H) });
            steps.push({ op: "set", bone: 1, property: "rotation_quaternion", value: axisAngleQuat([1, 0, 0], -H) });
            steps.push({ op: "set", bone: 2, property: "rotation_quaternion", value: [0.5, 0.5, -0.5, 0.5] });
            steps.push({ op: "set", bone: 3, property: "rotation_quaternion", value: [-0.5, 0.5, 0.5, 0.5] });
            steps.push({ op: "set", bone: 4, property: "rotation_quaternion", value: [-0.5, -0.5, -0.5, -0.5] });
        }
        if (r === 2) {
            steps.push({ op: "set", bone: 0, property: "scaling", value: [1.5, 0.75, 1.25] });
            steps.push({ op: "set", bone: 3, property: "position", value: [0.1, -0.2, 0.3] });
        }
        steps.push({ op: "snapshot" });
    });
    return { name: "gimbal-lock-euler", linked: false, bones, steps };
}

function negativeDeterminantCase() {
    // Mirrored matrices: exercises Matrix.decompose's det <= 0 branch (scale.y negated).
    const rng = new Rng(4242);
    const mk = (s) => composeArr(s, rng.quat(), rng.vec3(-2, 2));
    const bones = [
        { name: "n0", parent: null, local: mk([1.2, -0.8, 1.1]), bind: null, rest: null, node: null },
        { name: "n1", parent: 0, local: mk([-1.0, 1.0, 1.0]), bind: mk([1, 1, 1]), rest: null, node: null },
        { name: "n2", parent: 1, local: mk([1.0, 1.5, 0.7]), bind: mk([-1.3, 0.9, 1.0]), rest: mk([0.9, 1.1, -1.2]), node: null },
        { name: "n3", parent: 0, local: mk([-0.6, -0.6, -0.6]), bind: null, rest: null, node: null },
    ];
    const steps = [
        { op: "snapshot" },
        { op: "set", bone: 0, property: "position", value: [0.5, -0.5, 1] },
        { op: "set", bone: 3, property: "rotation", value: [0.3, -0.2, 1.1] },
        { op: "snapshot" },
        { op: "bone_return_to_rest", bone: 2 },
        { op: "set", bone: 2, property: "scaling", value: [1.1, 1.2, 1.3] },
        { op: "snapshot" },
        { op: "set_bind_matrix", bone: 1, value: mk([1, -1, 1]) },
        { op: "return_to_rest" },
        { op: "snapshot" },
    ];
    return { name: "negative-determinant", linked: false, bones, steps };
}

function defaultsCase() {
    // Every bind/rest null/non-null combination; returnToRest right after construction
    // (rest defaults to a clone of the constructor LOCAL matrix, not of bind).
    const rng = new Rng(9001);
    const bones = [
        { name: "d0", parent: null, local: randMatrix(rng), bind: null, rest: null, node: null },
        { name: "d1", parent: 0, local: randMatrix(rng), bind: randMatrix(rng), rest: null, node: null },
        { name: "d2", parent: 1, local: randMatrix(rng), bind: null, rest: randMatrix(rng), node: null },
        { name: "d3", parent: 1, local: randMatrix(rng), bind: randMatrix(rng), rest: randMatrix(rng), node: null },
        { name: "d4", parent: 0, local: Array.from(Matrix.Identity().m), bind: null, rest: null, node: null },
    ];
    const steps = [
        { op: "snapshot" },
        { op: "return_to_rest" },
        { op: "snapshot" },
        { op: "set", bone: 1, property: "position", value: [1, 2, 3] },
        { op: "set", bone: 4, property: "rotation", value: [0.1, 0.2, 0.3] },
        { op: "bone_return_to_rest", bone: 3 },
        { op: "snapshot" },
        { op: "return_to_rest" },
        { op: "return_to_rest" },
        { op: "snapshot" },
    ];
    return { name: "constructor-defaults", linked: false, bones, steps };
}

function bindCascadeCase() {
    // setBindMatrix on an inner bone: also overwrites its LOCAL matrix and recomputes the absolute bind of the subtree.
    const rng = new Rng(9002);
    const bones = [];
    for (let i = 0; i < 6; i++) {
        bones.push({ name: `c${i}`, parent: i === 0 ? null : i < 4 ? i - 1 : 1, local: randMatrix(rng), bind: rng.chance(0.5) ? randMatrix(rng) : null, rest: randMatrix(rng), node: null });
    }
    const steps = [
        { op: "snapshot" },
        { op: "set", bone: 1, property: "scaling", value: [2, 0.5, 1.5] },
        { op: "set_bind_matrix", bone: 1, value: randMatrix(rng) },
        { op: "snapshot" },
        { op: "set", bone: 2, property: "rotation_quaternion", value: rng.quat() },
        { op: "set_bind_matrix", bone: 0, value: randMatrix(rng) },
        { op: "set_rest_matrix", bone: 2, value: randMatrix(rng) },
        { op: "snapshot" },
        { op: "return_to_rest" },
        { op: "set_bind_matrix", bone: 5, value: randMatrix(rng) },
        { op: "snapshot" },
    ];
    return { name: "bind-matrix-cascade", linked: false, bones, steps };
}

function forestCase() {
    // Three root trees: Babylon's Skeleton.computeAbsoluteMatrices only walks bones[0]'s tree.
    const rng = new Rng(9003);
    const parents = [null, 0, 1, null, 3, 3, null, 6];
    const bones = parents.map((parent, i) => ({ name: `f${i}`, parent, local: randMatrix(rng), bind: rng.chance(0.5) ? randMatrix(rng) : null, rest: null, node: null }));
    const steps = [
        { op: "snapshot" },
        { op: "set", bone: 3, property: "position", value: [0.5, 0.5, 0.5] },
        { op: "set", bone: 7, property: "rotation", value: [0.4, -0.4, 0.2] },
        { op: "set", bone: 1, property: "scaling", value: [1.2, 1.2, 1.2] },
        { op: "snapshot" },
        { op: "return_to_rest" },
        { op: "snapshot" },
    ];
    return { name: "forest-three-roots", linked: false, bones, steps };
}

function linkedRestCase() {
    // Linked bones: returnToRest decomposes the rest matrix into the NODE's TRS; the bone's local
    // matrix only changes at the next prepare() (compose of the decomposed TRS).
    const rng = new Rng(9004);
    const bones = [0, 1, 2, 3].map((i) => {
        const node = { position: rng.vec3(-2, 2), rotation_quaternion: rng.quat(), scaling: rng.vec3(0.5, 2) };
        return { name: `l${i}`, parent: i === 0 ? null : i === 3 ? 0 : i - 1, local: randMatrix(rng), bind: i === 2 ? null : randMatrix(rng), rest: i === 1 ? null : randMatrix(rng), node };
    });
    const steps = [
        { op: "snapshot" },
        { op: "bone_return_to_rest", bone: 2 },
        { op: "snapshot" },
        { op: "set_node", bone: 0, property: "rotation_quaternion", value: rng.quat() },
        { op: "set_rest_matrix", bone: 3, value: randMatrix(rng) },
        { op: "return_to_rest" },
        { op: "snapshot" },
        { op: "set_bind_matrix", bone: 1, value: randMatrix(rng) },
        { op: "set_node", bone: 1, property: "scaling", value: [1.5, 1.5, 0.5] },
        { op: "snapshot" },
    ];
    return { name: "linked-return-to-rest", linked: true, bones, steps };
}

function buildSpecs() {
    const specs = [docsCharacterCase(), gimbalCase(), negativeDeterminantCase()];
    specs.push(defaultsCase(), bindCascadeCase(), forestCase(), linkedRestCase());
    const sizesUnlinked = [1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 18, 20, 24, 30, 40, 200];
    const sizesLinked = [1, 2, 3, 4, 5, 7, 9, 12, 16, 22];
    let seed = 1000;
    sizesUnlinked.forEach((n, i) => specs.push(randomCase(`random-${i}`, seed++, n, false)));
    sizesLinked.forEach((n, i) => specs.push(randomCase(`linked-${i}`, seed++, n, true)));
    return specs;
}

// ---------------------------------------------------------------- run a case in Babylon
function matEq(a, b) {
    for (let i = 0; i < 16; i++) if (a[i] !== b[i]) return false;
    return true;
}

const stats = { cases: 0, snapshots: 0, boneSnapshots: 0, finalMismatch: 0, finalMismatchExplained: 0, finalMatrixMismatch: 0, getterChangedMatrices: 0 };

function runCase(spec) {
    const scene = new Scene(engine);
    const skeleton = new Skeleton(spec.name, spec.name, scene);
    const bones = [];
    const nodes = [];
    spec.bones.forEach((b, i) => {
        if (b.parent !== null && !(b.parent < i)) throw new Error("parent index must be < own index");
        const parent = b.parent === null ? null : bones[b.parent];
        // Bone(name, skeleton, parentBone, localMatrix, restMatrix, bindMatrix)  -- NB: rest before bind
        const bone = new Bone(b.name, skeleton, parent, M(b.local), b.rest ? M(b.rest) : null, b.bind ? M(b.bind) : null);
        bones.push(bone);
        if (spec.linked) {
            const node = new TransformNode(`node_${b.name}`, scene);
            node.position = V3(b.node.position);
            node.rotationQuaternion = Q(b.node.rotation_quaternion);
            node.scaling = V3(b.node.scaling);
            if (b.parent !== null) node.parent = nodes[b.parent]; // mirrors the hierarchy; prepare() only uses local TRS
            nodes.push(node);
            bone.linkTransformNode(node);
        }
    });

    const rootTree = new Set(); // bones reachable from bones[0] (the only tree Skeleton.computeAbsoluteMatrices updates)
    spec.bones.forEach((b, i) => {
        if (i === 0 || (b.parent !== null && rootTree.has(b.parent))) rootTree.add(i);
    });

    const steps = spec.steps.map((s) => {
        switch (s.op) {
            case "set": {
                const bone = bones[s.bone];
                if (s.property === "position") bone.position = V3(s.value);
                else if (s.property === "rotation_quaternion") bone.rotationQuaternion = Q(s.value);
                else if (s.property === "rotation") bone.rotation = V3(s.value);
                else if (s.property === "scaling") bone.scaling = V3(s.value);
                else throw new Error(s.property);
                return s;
            }
            case "set_node": {
                const node = nodes[s.bone];
                if (s.property === "position") node.position = V3(s.value);
                else if (s.property === "rotation_quaternion") node.rotationQuaternion = Q(s.value);
                else if (s.property === "scaling") node.scaling = V3(s.value);
                else throw new Error(s.property);
                return s;
            }
            case "set_bind_matrix":
                bones[s.bone].setBindMatrix(M(s.value));
                return s;
            case "set_rest_matrix":
                bones[s.bone].setRestMatrix(M(s.value));
                return s;
            case "bone_return_to_rest":
                bones[s.bone].returnToRest();
                return s;
            case "return_to_rest":
                skeleton.returnToRest();
                return s;
            case "snapshot":
                return { op: "snapshot", expect: snapshot(skeleton, bones, rootTree, spec.name) };
        }
        throw new Error(s.op);
    });

    skeleton.dispose();
    scene.dispose();
    stats.cases++;
    return { name: spec.name, linked: spec.linked, bones: spec.bones, steps };
}

// Babylon 9.x has no public getAbsoluteBindMatrix(); the value lives in the (TS-private) _absoluteBindMatrix field.
const absBindOf = (bone) => (typeof bone.getAbsoluteBindMatrix === "function" ? bone.getAbsoluteBindMatrix() : bone._absoluteBindMatrix);

function snapshot(skeleton, bones, rootTree, caseName) {
    stats.snapshots++;
    skeleton.prepare(true);
    skeleton.computeAbsoluteMatrices(true);
    const n = bones.length;
    const ta = skeleton.getTransformMatrices(null);
    const transform = Array.from(ta.subarray(0, n * 16));
    const out = [];
    const matricesBefore = [];
    bones.forEach((bone, i) => {
        const local = Array.from(bone.getLocalMatrix().m);
        const absolute = Array.from(bone.getAbsoluteMatrix().m);
        const final = Array.from(bone.getAbsoluteInverseBindMatrix().multiply(bone.getAbsoluteMatrix()).m);
        const bind = Array.from(bone.getBindMatrix().m);
        const absoluteBind = Array.from(absBindOf(bone).m);
        const absoluteInverseBind = Array.from(bone.getAbsoluteInverseBindMatrix().m);
        const rest = Array.from(bone.getRestMatrix().m);
        matricesBefore.push([local, absolute, bind, absoluteBind, absoluteInverseBind, rest, Array.from(bone.getFinalMatrix().m)]);

        // self-checks against the transform-matrices array
        stats.boneSnapshots++;
        const entry = transform.slice(i * 16, i * 16 + 16);
        if (!matEq(entry, final)) {
            stats.finalMismatch++;
            if (!rootTree.has(i)) stats.finalMismatchExplained++;
            else console.error(`UNEXPECTED: ${caseName} bone ${i}: transform entry != absInvBind x absolute`);
        }
        const viaFinalMatrix = Array.from(bone.getAbsoluteInverseBindMatrix().multiply(bone.getFinalMatrix()).m);
        if (!matEq(entry, viaFinalMatrix)) stats.finalMatrixMismatch++;

        // properties AFTER the matrices
        const position = vec(bone.position);
        const rotationQuaternion = quat(bone.rotationQuaternion);
        const rotation = vec(bone.rotation);
        const scaling = vec(bone.scaling);
        out.push({
            local: f32arr(local),
            absolute: f32arr(absolute),
            final: f32arr(final),
            bind: f32arr(bind),
            absolute_bind: f32arr(absoluteBind),
            absolute_inverse_bind: f32arr(absoluteInverseBind),
            rest: f32arr(rest),
            position,
            rotation_quaternion: rotationQuaternion,
            rotation,
            scaling,
        });
    });
    // property getters (lazy decompose) must not have changed any matrix
    bones.forEach((bone, i) => {
        const after = [bone.getLocalMatrix().m, bone.getAbsoluteMatrix().m, bone.getBindMatrix().m, absBindOf(bone).m, bone.getAbsoluteInverseBindMatrix().m, bone.getRestMatrix().m, bone.getFinalMatrix().m];
        if (!after.every((m, k) => matEq(Array.from(m), matricesBefore[i][k]))) stats.getterChangedMatrices++;
    });
    if (skeleton._isDirty) stats.getterChangedMatrices++; // getters must not mark the skeleton dirty
    return { bones: out, transform_matrices: f32arr(transform) };
}

// ---------------------------------------------------------------- main
const cases = buildSpecs().map(runCase);
const fixture = { babylon_version: BABYLON_VERSION, cases };
const text = JSON.stringify(fixture);
writeFileSync(outPath, text + "\n");

const linkedCount = cases.filter((c) => c.linked).length;
const boneCounts = cases.map((c) => c.bones.length);
console.log(`Babylon.js ${BABYLON_VERSION}: wrote ${outPath} (${(text.length / 1024).toFixed(0)} KiB)`);
console.log(`cases=${stats.cases} (linked=${linkedCount}) bones/case min=${Math.min(...boneCounts)} max=${Math.max(...boneCounts)} snapshots=${stats.snapshots} bone-snapshots=${stats.boneSnapshots}`);
console.log(
    `self-check: transform entry == absInvBind x getAbsoluteMatrix(): ${stats.boneSnapshots - stats.finalMismatch}/${stats.boneSnapshots} ` +
        `(mismatches ${stats.finalMismatch}, of which ${stats.finalMismatchExplained} are bones outside bones[0]'s tree, whose absolute matrix Babylon never computes)`
);
console.log(`self-check: transform entry == absInvBind x getFinalMatrix(): ${stats.boneSnapshots - stats.finalMatrixMismatch}/${stats.boneSnapshots}`);
console.log(`self-check: property getters changed matrices / dirtied skeleton: ${stats.getterChangedMatrices}`);
if (stats.finalMatrixMismatch || stats.getterChangedMatrices || stats.finalMismatch !== stats.finalMismatchExplained) {
    process.exitCode = 1;
}
