// Generates tests/data/babylon_space_reference.json by driving the REAL Babylon.js Bone Space API
// (getPosition / setPosition / translate / rotate / setRotation* / setYawPitchRoll / setAxisAngle /
// getDirection / get*PositionFrom* / scale / setScale / ...) on seeded random single-root skeletons.
//
// Usage:
//   cd tests/babylon && npm install && npm run generate-space
//
// Output is deterministic (mulberry32 PRNG with fixed seeds): re-running gives an identical file.
//
// Each case: a single-root skeleton of 1-12 bones (local, rest and bind matrices given separately,
// rest differing from bind; some binds mirrored, so Babylon's _scalingDeterminant is -1), and a
// tNode (a TransformNode, sometimes under a parent TransformNode) or none. Then a random sequence of
// steps, each one method call on one bone, in a random space (0 LOCAL, 1 WORLD, 2 BONE), with the
// tNode or null. After a step that can change the pose, "state" holds every bone's local matrix
// (float32 shortest round-trip decimals) and position / rotationQuaternion / scaling; a getter step
// holds its return value in "result".
//
// "uniform" cases use uniform scales only (locals, rests, tNode, scale() arguments): every local
// matrix then stays a TRS matrix. "trs_exact" says, as checked here after every step, whether every
// local matrix equals Compose(decompose(local)); only such cases can be reproduced exactly by bones
// whose pose lives in a linked TransformNode (a node holds TRS, not a sheared matrix).
//
// Space.BONE for the rotation setters (setRotation, setRotationQuaternion, setRotationMatrix,
// setYawPitchRoll, setAxisAngle): Babylon computes something meaningful only for a root bone without
// a tNode, where it equals Space.WORLD. The Python API treats BONE as WORLD for these, so such steps
// are recorded with "space": 2 and run here with Space.WORLD.

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Rng as BaseRng, round9 } from "./rng.mjs";
import { NullEngine, Scene, Skeleton, Bone, Matrix, Vector3, Quaternion, TransformNode, Logger } from "@babylonjs/core";

const HERE = dirname(fileURLToPath(import.meta.url));
const outPath = process.argv[2];
if (!outPath) {
    console.error("usage: node generate_space_reference.mjs OUTPUT.json");
    process.exit(2);
}
const BABYLON_VERSION = JSON.parse(readFileSync(join(HERE, "node_modules", "@babylonjs", "core", "package.json"), "utf8")).version;

Logger.LogLevels = Logger.NoneLogLevel;
const engine = new NullEngine();
if (Matrix.Use64Bits) {
    throw new Error("expected Babylon's default float32 matrix storage");
}

// ---------------------------------------------------------------- PRNG (rng.mjs), inputs rounded
class Rng extends BaseRng {
    round(v) {
        return round9(v);
    }
    axis() {
        // a non-zero, non-normalized axis
        for (;;) {
            const a = this.vec3(-1, 1);
            if (Math.hypot(...a) > 0.2) return a;
        }
    }
    scale3(uniform, lo, hi) {
        if (uniform) {
            const s = this.uniform(lo, hi);
            return [s, s, s];
        }
        return this.vec3(lo, hi);
    }
}

// ---------------------------------------------------------------- helpers
const V3 = (a) => new Vector3(a[0], a[1], a[2]);
const Q = (a) => new Quaternion(a[0], a[1], a[2], a[3]);
const composeArr = (s, q, t) => Array.from(Matrix.Compose(V3(s), Q(q), V3(t)).m); // exact float32 values

function f32(v) {
    if (v === 0 || !Number.isFinite(v)) return v === 0 ? 0 : v;
    for (let p = 1; p <= 9; p++) {
        const n = Number(v.toPrecision(p));
        if (Math.fround(n) === v) return n;
    }
    return v;
}
const d8 = (v) => (v === 0 ? 0 : Number(v.toPrecision(8)));
const f32arr = (a) => Array.from(a, f32);
const vec = (v) => [v.x, v.y, v.z].map(d8);
const quat = (q) => [q.x, q.y, q.z, q.w].map(d8);

// ---------------------------------------------------------------- cases
const ROTATION_SETTERS = new Set(["set_rotation", "set_rotation_quaternion", "set_rotation_matrix", "set_yaw_pitch_roll", "set_axis_angle"]);
const MUTATORS = new Set([
    "set_position", "set_absolute_position", "translate", "set_rotation", "set_rotation_quaternion",
    "set_rotation_matrix", "set_yaw_pitch_roll", "rotate", "set_axis_angle", "scale", "set_scale",
    "set_current_pose_as_rest", "return_to_rest",
]);
const OPS = [
    ["get_position", 3], ["get_absolute_position", 1], ["get_rotation", 2], ["get_rotation_quaternion", 2],
    ["get_rotation_matrix", 2], ["get_direction", 2], ["get_absolute_position_from_local", 1.5],
    ["get_local_position_from_absolute", 1.5], ["get_scale", 1],
    ["set_position", 3], ["set_absolute_position", 1.5], ["translate", 3], ["set_rotation", 2],
    ["set_rotation_quaternion", 2.5], ["set_rotation_matrix", 2], ["set_yaw_pitch_roll", 2], ["rotate", 3.5],
    ["set_axis_angle", 2.5], ["scale", 1.5], ["set_scale", 1.5], ["set_current_pose_as_rest", 0.5],
    ["return_to_rest", 0.7],
];

function randomCase(index) {
    const rng = new Rng(9000 + index * 7919);
    const n = index < 4 ? index + 1 : rng.int(1, 12);
    const uniform = index % 2 === 0;
    const bones = [];
    for (let i = 0; i < n; i++) {
        const parent = i === 0 ? null : rng.chance(0.6) ? i - 1 : rng.int(0, i - 1);
        const local = composeArr(rng.scale3(uniform, 0.6, 1.6), rng.quat(), rng.vec3(-2, 2));
        const rest = composeArr(rng.scale3(uniform, 0.6, 1.6), rng.quat(), rng.vec3(-2, 2));
        const bindScale = rng.scale3(!rng.chance(0.5), 0.6, 1.6);
        if (rng.chance(0.2)) bindScale[0] = -bindScale[0]; // mirrored bind: _scalingDeterminant -1
        const bind = composeArr(bindScale, rng.quat(), rng.vec3(-2, 2));
        bones.push({ name: `b${i}`, parent, local, rest, bind });
    }
    let tnode = null;
    if (rng.chance(0.75)) {
        tnode = {
            position: rng.vec3(-3, 3),
            rotation_quaternion: rng.quat(),
            scaling: rng.scale3(uniform, 0.5, 2),
            parent: rng.chance(0.3) ? { position: rng.vec3(-3, 3), rotation_quaternion: rng.quat(), scaling: rng.scale3(uniform, 0.5, 2) } : null,
        };
    }
    const stepCount = rng.int(14, 26);
    const steps = [];
    for (let k = 0; k < stepCount; k++) {
        const op = rng.weighted(OPS);
        const step = { op, bone: rng.int(0, n - 1), space: rng.int(0, 2), tnode: tnode !== null && rng.chance(0.75) };
        switch (op) {
            case "set_position":
            case "set_absolute_position":
                step.args = [rng.vec3(-3, 3)];
                break;
            case "translate":
                step.args = [rng.vec3(-1, 1)];
                break;
            case "set_rotation":
                step.args = [rng.vec3(-Math.PI, Math.PI)];
                break;
            case "set_rotation_quaternion":
                step.args = [rng.quat()];
                break;
            case "set_rotation_matrix": {
                const m = composeArr([1, 1, 1], rng.quat(), rng.chance(0.3) ? rng.vec3(-1, 1) : [0, 0, 0]);
                step.args = [m];
                break;
            }
            case "set_yaw_pitch_roll":
                step.args = [rng.uniform(-Math.PI, Math.PI), rng.uniform(-1.5, 1.5), rng.uniform(-Math.PI, Math.PI)];
                break;
            case "rotate":
            case "set_axis_angle":
                step.args = [rng.axis(), rng.uniform(-Math.PI, Math.PI)];
                break;
            case "get_direction":
                step.args = [rng.axis()];
                break;
            case "get_absolute_position_from_local":
            case "get_local_position_from_absolute":
                step.args = [rng.vec3(-2, 2)];
                break;
            case "scale": {
                const s = rng.scale3(uniform, 0.7, 1.4);
                step.args = [s[0], s[1], s[2], rng.chance(0.4)];
                break;
            }
            case "set_scale":
                step.args = [rng.scale3(uniform, 0.6, 1.6)];
                break;
            default:
                step.args = [];
        }
        if (["get_absolute_position", "set_absolute_position", "get_direction", "get_absolute_position_from_local",
            "get_local_position_from_absolute", "get_scale", "scale", "set_scale", "set_current_pose_as_rest",
            "return_to_rest"].includes(op)) {
            delete step.space; // these take no space
        }
        if (["get_scale", "scale", "set_scale", "set_current_pose_as_rest", "return_to_rest"].includes(op)) {
            delete step.tnode;
        }
        steps.push(step);
    }
    return { name: `space-${String(index).padStart(2, "0")}-${n}bones${uniform ? "-uniform" : ""}`, uniform, bones, tnode, steps };
}

// ---------------------------------------------------------------- running Babylon
function makeNode(scene, spec, name) {
    const node = new TransformNode(name, scene);
    node.position = V3(spec.position);
    node.rotationQuaternion = Q(spec.rotation_quaternion);
    node.scaling = V3(spec.scaling);
    return node;
}

function isTrs(m) {
    const s = new Vector3(), q = new Quaternion(), t = new Vector3();
    m.decompose(s, q, t);
    const back = Matrix.Compose(s, q, t).m;
    const scale = Math.max(1, ...Array.from(m.m, Math.abs));
    return Array.from(m.m).every((v, i) => Math.abs(v - back[i]) <= 1e-5 * scale);
}

function run(caseSpec) {
    const scene = new Scene(engine);
    const skeleton = new Skeleton(caseSpec.name, "s", scene);
    const bones = [];
    for (const spec of caseSpec.bones) {
        const parent = spec.parent === null ? null : bones[spec.parent];
        bones.push(new Bone(spec.name, skeleton, parent, Matrix.FromArray(spec.local), Matrix.FromArray(spec.rest), Matrix.FromArray(spec.bind)));
    }
    let tnode = null;
    if (caseSpec.tnode) {
        tnode = makeNode(scene, caseSpec.tnode, "tnode");
        if (caseSpec.tnode.parent) {
            const parent = makeNode(scene, caseSpec.tnode.parent, "tnode_parent");
            tnode.parent = parent;
            parent.computeWorldMatrix(true);
        }
        tnode.computeWorldMatrix(true);
        caseSpec.tnode.world = f32arr(tnode.getWorldMatrix().m);
    }
    let trsExact = true;
    for (const step of caseSpec.steps) {
        const bone = bones[step.bone];
        const t = step.tnode ? tnode : null;
        let space = step.space;
        if (ROTATION_SETTERS.has(step.op) && space === 2) space = 1; // BONE treated as WORLD (see above)
        const a = step.args;
        let result;
        switch (step.op) {
            case "get_position": result = vec(bone.getPosition(space, t)); break;
            case "get_absolute_position": result = vec(bone.getAbsolutePosition(t)); break;
            case "get_rotation": result = vec(bone.getRotation(space, t)); break;
            case "get_rotation_quaternion": result = quat(bone.getRotationQuaternion(space, t)); break;
            case "get_rotation_matrix": result = f32arr(bone.getRotationMatrix(space, t).m); break;
            case "get_direction": result = vec(bone.getDirection(V3(a[0]), t)); break;
            case "get_absolute_position_from_local": result = vec(bone.getAbsolutePositionFromLocal(V3(a[0]), t)); break;
            case "get_local_position_from_absolute": result = vec(bone.getLocalPositionFromAbsolute(V3(a[0]), t)); break;
            case "get_scale": result = vec(bone.getScale()); break;
            case "set_position": bone.setPosition(V3(a[0]), space, t); break;
            case "set_absolute_position": bone.setAbsolutePosition(V3(a[0]), t); break;
            case "translate": bone.translate(V3(a[0]), space, t); break;
            case "set_rotation": bone.setRotation(V3(a[0]), space, t); break;
            case "set_rotation_quaternion": bone.setRotationQuaternion(Q(a[0]), space, t); break;
            case "set_rotation_matrix": bone.setRotationMatrix(Matrix.FromArray(a[0]), space, t); break;
            case "set_yaw_pitch_roll": bone.setYawPitchRoll(a[0], a[1], a[2], space, t); break;
            case "rotate": bone.rotate(V3(a[0]), a[1], space, t); break;
            case "set_axis_angle": bone.setAxisAngle(V3(a[0]), a[1], space, t); break;
            case "scale": bone.scale(a[0], a[1], a[2], a[3]); break;
            case "set_scale": bone.setScale(V3(a[0])); break;
            case "set_current_pose_as_rest": bone.setCurrentPoseAsRest(); break;
            case "return_to_rest": bone.returnToRest(); break;
            default: throw new Error(step.op);
        }
        if (result !== undefined) {
            step.result = result;
        }
        if (MUTATORS.has(step.op)) {
            step.state = bones.map((b) => ({
                local: f32arr(b.getLocalMatrix().m),
                position: vec(b.position),
                rotation_quaternion: quat(b.rotationQuaternion),
                scaling: vec(b.scaling),
            }));
            trsExact = trsExact && bones.every((b) => isTrs(b.getLocalMatrix()));
        }
    }
    caseSpec.trs_exact = trsExact;
    scene.dispose();
    return caseSpec;
}

// A fixed, readable case: the docs character (body, two arms bound at the shoulders +-30deg about Z),
// placed by a mesh moved to (0, 1, 0) and turned 90deg about Y.
function docsCase() {
    const Z = [0, 0, 1];
    const deg = Math.PI / 180;
    const q = (axis, angle) => {
        const r = Quaternion.RotationAxis(V3(axis), angle);
        return [r.x, r.y, r.z, r.w];
    };
    const body = Array.from(Matrix.Identity().m);
    const left = composeArr([1, 1, 1], q(Z, 30 * deg), [0.5, 1.5, 0]);
    const right = composeArr([1, 1, 1], q(Z, -30 * deg), [-0.5, 1.5, 0]);
    return {
        name: "docs-character",
        uniform: true,
        bones: [
            { name: "body", parent: null, local: body, rest: body, bind: body },
            { name: "leftArm", parent: 0, local: left, rest: left, bind: left },
            { name: "rightArm", parent: 0, local: right, rest: right, bind: right },
        ],
        tnode: { position: [0, 1, 0], rotation_quaternion: q([0, 1, 0], 90 * deg), scaling: [1, 1, 1], parent: null },
        steps: [
            { op: "get_position", bone: 1, space: 1, tnode: true, args: [] },
            { op: "set_axis_angle", bone: 1, space: 0, tnode: false, args: [Z, 75 * deg] },
            { op: "get_direction", bone: 1, tnode: true, args: [[1, 0, 0]] },
            { op: "rotate", bone: 0, space: 1, tnode: true, args: [[0, 1, 0], 45 * deg] },
            { op: "get_rotation_quaternion", bone: 1, space: 1, tnode: true, args: [] },
            { op: "set_absolute_position", bone: 2, tnode: true, args: [[0, 3, 0]] },
            { op: "get_position", bone: 2, space: 1, tnode: true, args: [] },
            { op: "set_rotation", bone: 2, space: 1, tnode: true, args: [[0, 0, 0]] },
            { op: "get_rotation_matrix", bone: 2, space: 1, tnode: true, args: [] },
            { op: "translate", bone: 0, space: 0, tnode: false, args: [[0, 0.25, 0]] },
            { op: "get_absolute_position_from_local", bone: 1, tnode: true, args: [[1, 0, 0]] },
        ],
    };
}

const cases = [docsCase()];
for (let i = 0; i < 64; i++) cases.push(randomCase(i));
for (const c of cases) run(c);

const fixture = {
    babylon_version: BABYLON_VERSION,
    generator: "tests/babylon/generate_space_reference.mjs",
    spaces: { LOCAL: 0, WORLD: 1, BONE: 2 },
    cases,
};
const text = JSON.stringify(fixture);
writeFileSync(outPath, text + "\n");
const steps = cases.reduce((s, c) => s + c.steps.length, 0);
const exact = cases.filter((c) => c.trs_exact).length;
console.log(`wrote ${outPath}: ${cases.length} cases, ${steps} steps, ${exact} TRS-exact, ${(text.length / 1e6).toFixed(2)} MB`);
