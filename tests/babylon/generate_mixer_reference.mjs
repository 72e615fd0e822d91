// Generates tests/data/babylon_mixer_reference.json: the blend of weighted AnimationGroups as the REAL Babylon.js
// animation system computes it (late animation bindings: ProcessLateAnimationBindings and
// ProcessLateAnimationBindingsForQuaternions in @babylonjs/core's Animations/animatable.core.js), for the mixer
// of viewer/motion (issue 43). tests/test_mixer_babylon.py replays every case with scene.mixer and compares.
//
// Usage:
//   cd tests/babylon && npm install && node generate_mixer_reference.mjs ../data/babylon_mixer_reference.json
//
// Protocol (per case):
//   * the file is loaded as every reference loads it (loader_common.mjs loadCaptured: NullEngine, a right-handed
//     scene, animationStartMode NONE, skipMaterials); a loader extension maps glTF node index -> Babylon node.
//   * every node back at the file's TRS; additive groups made by AnimationGroup.MakeAnimationAdditive(group,
//     {referenceFrame: reference_time * fps, cloneOriginalAnimationGroup: true}); masks are AnimationGroupMask
//     (Include) of the names of a node's subtree (the node and its descendants); group.weight, group.speedRatio.
//   * groups start in the case's order (group.start(loop, speed)); scene._animate(0) then fixes each animatable's
//     clock at 0 (Babylon counts a started animatable's time from the first step that sees it); then each step is
//     scene._animate(dt * 1000) - Babylon's own clock: frame = from + (elapsed * fps * speedRatio / 1000) % range,
//     to + ... for negative ratios - followed by the record of that instant.
//   * "once" groups run on Babylon's clock until they end; Babylon then drops a finished group from the blend, the
//     mixer holds its last frame (as three.js's clampWhenFinished), so from the next step the group is started again
//     (from the rest pose, so its original values are the file's), paused, and given its last frame with its weight
//     (runtimeAnimation.goToFrame(to, weight)) before each step: the weighted value Babylon blends.
//   * "pingpong" groups: Babylon's yoyo loop mode is |sin(pi t / D)| * D (eased, one swing per duration), not a
//     ping-pong; the group is paused and handed the ping-pong's frame (forward over one duration, back over the
//     next: three.js's LoopPingPong) with its weight before each step, the late binding then blends it.
//     Both kinds are given before the step, so they come first in the blend's order: cases start them first.
//   * the cross-fade: the mixer's weights (linear ramps in mixer time, read after the clock moves, as three.js's
//     fades) are handed to the two groups before each step; the incoming group is started (and fixed at 0 by
//     scene._animate(0)) at the fade's start. The outgoing one is left at weight 0 when its fade ends, not stopped:
//     Babylon blends a weight-0 animatable once more (its nodes get their original values, as the mixer gives a node
//     no action drives any more) and skips it from then on; a stopped group would leave those nodes where its last
//     weighted step put them.
//   * the record at each step (`times`): per glTF node the case's groups animate, its position, rotationQuaternion
//     and scaling (the paths animated; `tracks[node][path][step]`), and per mesh node with morph targets its first
//     primitive's influences (`morph[node][step]`);
//     rounded to 7 significant digits; a path with the same value at every instant is recorded once, in the
//     case's `constant`. The sha256 of every input file is recorded.
import { readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { Logger, AnimationGroup, AnimationGroupMask } from "@babylonjs/core";
import "@babylonjs/loaders/glTF/index.js";
import { registerGLTFExtension } from "@babylonjs/loaders/glTF/2.0/index.js";
import { loadCaptured, readGltfJson, restPose, depth, round7 } from "./loader_common.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const outPath = process.argv[2];
if (!outPath) {
    console.error("usage: node generate_mixer_reference.mjs OUT.json");
    process.exit(2);
}
const DATA = resolve(join(HERE, "..", "data"));
Logger.LogLevels = Logger.WarningLogLevel | Logger.ErrorLogLevel;

const nodeMap = { nodes: null };
registerGLTFExtension("boneviewer_capture_transform_nodes", false, (loader) => ({
    name: "boneviewer_capture_transform_nodes",
    enabled: true,
    onReady() {
        nodeMap.nodes = loader.gltf.nodes.map((n) => ({
            node: n._babylonTransformNode ?? null,
            meshes: n._primitiveBabylonMeshes ? n._primitiveBabylonMeshes.slice() : null,
        }));
    },
    dispose() {},
}));

const ROBOT = "gltf-samples/RobotExpressive/RobotExpressive.glb";
const FOX = "gltf-samples/Fox/Fox.glb";
// fox_zup_cm.fbx (three clips) as boneviewer's glTF writer writes it (viewer.gltf.writer.save_gltf of the FBX scene
// just loaded): Babylon reads the glTF, tests/test_mixer_babylon.py mixes the FBX itself (nodes matched by name).
const FBX_FOX = "fbx/fox_zup_cm.mixer.glb";
// the same for a USD file with several clips: usd/fox_clips.usdc (boneviewer's USD of Fox.glb) as boneviewer writes it as glTF
const USD_FOX = "usd/fox_clips.mixer.glb";
// a retargeted BVH clip with the model's own: bvh/wave_hello.bvh retargeted onto RobotExpressive by boneviewer
// (viewer.retarget with its automatic bone map), written as glTF with the robot's nodes and two clips, Walking and
// wave_hello (no meshes: Babylon needs the nodes and the clips only). The test retargets the BVH itself.
const RETARGETED = "retarget_mix/robot_wave_hello.glb";
const DT = 1 / 30; // seconds per step unless the case gives its own dt

// group: {clip, weight, speed, loop: "repeat" | "once" | "pingpong", additive, reference_time, mask_subtree}
const g = (clip, weight, extra = {}) => ({ clip, weight, speed: 1, loop: "repeat", additive: false, reference_time: 0, mask_subtree: null, ...extra });
const CASES = [
    { name: "robot_two_clips", file: ROBOT, steps: 20, groups: [g("Walking", 0.3), g("Running", 0.7)] },
    { name: "robot_three_below_one", file: ROBOT, steps: 20, groups: [g("Idle", 0.2), g("Walking", 0.3), g("Wave", 0.25)] },
    { name: "robot_additive_over_walk", file: ROBOT, steps: 20, groups: [g("Walking", 1.0), g("Wave", 0.5, { additive: true, reference_time: 0.25 })] },
    { name: "robot_upper_body_mask", file: ROBOT, steps: 20, groups: [g("Walking", 1.0), g("Wave", 1.0, { mask_subtree: "Abdomen" })] },
    { name: "robot_negative_speed", file: ROBOT, steps: 20, groups: [g("Running", 0.6, { speed: -1.0 }), g("Idle", 0.4, { speed: 0.7 })] },
    { name: "robot_pingpong", file: ROBOT, steps: 20, groups: [g("Wave", 0.5, { loop: "pingpong", speed: 3.0 }), g("Walking", 0.5)] },
    { name: "robot_once", file: ROBOT, steps: 20, dt: 1 / 20, groups: [g("Jump", 0.6, { loop: "once" }), g("Idle", 0.4)] },
    { name: "robot_crossfade", file: ROBOT, steps: 20, groups: [g("Walking", 1.0)], crossfade: { from: "Walking", to: "Running", at_step: 4, seconds: 0.5 } },
    // morph weights: the worms' weights channels (LINEAR, STEP, CUBICSPLINE) over their meshes' own weights
    { name: "worms_morph_weight_below_one", file: "morph-worms.gltf", steps: 20, groups: [g("morph", 0.6, { speed: 1.3 })] },
    { name: "worms_morph_additive", file: "morph-worms.gltf", steps: 20, groups: [g("morph", 0.5, { additive: true, reference_time: 0.3 })] },
    { name: "robot_retargeted_bvh_with_walk", file: RETARGETED, source: "retarget:bvh/wave_hello.bvh>gltf-samples/RobotExpressive/RobotExpressive.glb",
      steps: 20, groups: [g("Walking", 0.5), g("wave_hello", 0.5, { speed: 1.5 })] },
    { name: "fox_two_clips", file: FOX, steps: 20, groups: [g("Walk", 0.3), g("Run", 0.7)] },
    { name: "fox_additive_over_walk", file: FOX, steps: 20, groups: [g("Walk", 1.0), g("Survey", 0.5, { additive: true })] },
    { name: "fbx_fox_two_clips_negative_speed", file: FBX_FOX, source: "fbx/fox_zup_cm.fbx", steps: 20, groups: [g("root|Walk_root", 0.3), g("root|Run_root", 0.7, { speed: -1.2 })] },
    { name: "usd_fox_two_clips_speed", file: USD_FOX, source: "usd/fox_clips.usdc", steps: 20, groups: [g("Walk", 0.4), g("Run", 0.6, { speed: 1.5 })] },
    { name: "usd_fox_additive_masked", file: USD_FOX, source: "usd/fox_clips.usdc", steps: 20, groups: [g("Walk", 1.0), g("Survey", 0.6, { additive: true, mask_subtree: "b_Spine02_03" })] },
    { name: "fbx_fox_pingpong_additive_below_one", file: FBX_FOX, source: "fbx/fox_zup_cm.fbx", steps: 20, groups: [g("root|Survey_root", 0.3, { loop: "pingpong", speed: 2.0 }), g("root|Walk_root", 0.25), g("root|Run_root", 0.4, { additive: true, reference_time: 0.5 })] },
];

const PATHS = { position: "translation", rotationQuaternion: "rotation", scaling: "scale" };

function pingpongTime(t, duration) {
    const u = ((t % (2 * duration)) + 2 * duration) % (2 * duration);
    return u <= duration ? u : 2 * duration - u;
}

async function runCase(spec) {
    const DT = spec.dt ?? 1 / 30;
    const bytes = readFileSync(join(DATA, spec.file));
    const isGlb = spec.file.endsWith(".glb");
    const gltf = readGltfJson(bytes, isGlb);
    nodeMap.nodes = null;
    const { engine, scene, container } = await loadCaptured(bytes, isGlb, spec.file);
    if (!nodeMap.nodes) throw new Error(`${spec.file}: node capture did not run`);
    const allNodes = [...scene.transformNodes, ...scene.meshes].sort((a, b) => depth(a) - depth(b));
    const restoreRest = restPose(allNodes);
    const indexOf = new Map();
    nodeMap.nodes.forEach((entry, i) => entry.node && indexOf.set(entry.node, i));
    const morphNodes = [];
    nodeMap.nodes.forEach((entry, i) => {
        const m = entry.meshes && entry.meshes.find((x) => x.morphTargetManager);
        if (m) morphNodes.push({ index: i, manager: m.morphTargetManager });
    });
    const findGroup = (name) => {
        const found = scene.animationGroups.find((x) => x.name === name);
        if (!found) throw new Error(`${spec.file}: no animation ${name}`);
        return found;
    };
    const fps = scene.animationGroups[0].targetedAnimations[0].animation.framePerSecond;
    for (const group of scene.animationGroups) group.stop();
    restoreRest();

    const subtreeNames = (name) => {
        const top = allNodes.find((n) => n.name === name);
        if (!top) throw new Error(`${spec.file}: no node ${name}`);
        return [top, ...top.getDescendants(false)].map((n) => n.name);
    };
    const groups = spec.groups.map((s) => {
        let group = findGroup(s.clip);
        if (s.additive) {
            group = AnimationGroup.MakeAnimationAdditive(group, {
                referenceFrame: s.reference_time * fps, cloneOriginalAnimationGroup: true, clonedAnimationGroupName: `${s.clip}_additive`,
            });
        }
        if (s.mask_subtree) group.mask = new AnimationGroupMask(subtreeNames(s.mask_subtree), 0);
        group.weight = s.weight;
        return { spec: s, group, duration: group.to / fps, explicit: s.loop === "pingpong", held: false, time: 0 };
    });
    const crossfade = spec.crossfade ? { ...spec.crossfade, from: groups.find((x) => x.spec.clip === spec.crossfade.from) } : null;
    if (crossfade) {
        const group = findGroup(crossfade.to);
        group.weight = 0;
        crossfade.to = { spec: g(crossfade.to, 1.0), group, duration: group.to / fps, explicit: false, held: false, time: 0 };
    }

    // what the case animates: glTF node -> paths, and the morph nodes
    const animated = new Map();
    const all = [...groups, ...(crossfade ? [crossfade.to] : [])];
    for (const entry of all) {
        for (const ta of entry.group.targetedAnimations) {
            const i = indexOf.get(ta.target);
            if (i === undefined) continue;
            const path = PATHS[ta.animation.targetProperty];
            if (!path) throw new Error(`${spec.file}: unexpected path ${ta.animation.targetProperty}`);
            if (!animated.has(i)) animated.set(i, new Set());
            animated.get(i).add(path);
        }
    }
    const nodes = [...animated.keys()].sort((a, b) => a - b);

    const startGroup = (entry) => {
        const s = entry.spec;
        entry.group.start(s.loop !== "once", s.speed, entry.group.from, entry.group.to);
        if (entry.explicit) entry.group.pause();
    };
    const handExplicit = () => {
        for (const entry of all) {
            if (!entry.explicit && !entry.held) continue;
            const frame = entry.held ? entry.group.to : pingpongTime(entry.time, entry.duration) * fps;
            for (const animatable of entry.group.animatables) {
                if (entry.group.mask && !entry.group.mask.retainsTarget(animatable.target.name)) continue;
                for (const ra of animatable.getAnimations()) ra.goToFrame(frame, entry.group.weight);
            }
        }
    };

    for (const entry of groups) startGroup(entry);
    scene._animate(0);
    const times = [], tracks = {}, morph = {};
    const weights = [];
    let clock = 0;
    for (let step = 1; step <= spec.steps; step++) {
        if (crossfade && step === crossfade.at_step) {
            crossfade.start = clock;
            startGroup(crossfade.to);
            scene._animate(0);
        }
        clock = step * DT;
        for (const entry of all) entry.time += DT * entry.spec.speed;
        if (crossfade && crossfade.start !== undefined) {
            const u = Math.min(Math.max((clock - crossfade.start) / crossfade.seconds, 0), 1);
            crossfade.to.group.weight = u;
            crossfade.from.group.weight = 1 - u;
        }
        handExplicit();
        scene._animate(DT * 1000);
        for (const entry of groups) {
            if (entry.spec.loop === "once" && !entry.held && !entry.group.isStarted) {
                // ended this step (its last frame is what this step shows); held from the next one on
                entry.held = true;
                const saved = allNodes.map((n) => [n, n.position.clone(), n.rotationQuaternion?.clone(), n.scaling.clone()]);
                restoreRest();
                entry.group.start(false, entry.spec.speed, entry.group.from, entry.group.to);
                entry.group.pause();
                for (const [n, p, q, s] of saved) {
                    n.position.copyFrom(p);
                    if (q) n.rotationQuaternion.copyFrom(q);
                    n.scaling.copyFrom(s);
                }
            }
        }
        weights.push(all.map((entry) => (entry.group.isStarted || entry.held ? round7(entry.group.weight) : 0)));
        times.push(round7(clock));
        for (const i of nodes) {
            const n = nodeMap.nodes[i].node;
            for (const path of animated.get(i)) {
                const v = path === "translation" ? n.position.asArray() : path === "rotation" ? n.rotationQuaternion.asArray() : n.scaling.asArray();
                ((tracks[i] ??= {})[path] ??= []).push(v.map(round7));
            }
        }
        for (const { index, manager } of morphNodes) {
            (morph[index] ??= []).push(Array.from({ length: manager.numTargets }, (_, t) => round7(manager.getTarget(t).influence)));
        }
    }
    // a path whose value is the same at every instant (a baked scale of 1, say) is recorded once, in `constant`
    const constant = {};
    for (const [i, paths] of Object.entries(tracks)) {
        for (const [path, values] of Object.entries(paths)) {
            const first = JSON.stringify(values[0]);
            if (values.every((v) => JSON.stringify(v) === first)) {
                (constant[i] ??= {})[path] = values[0];
                delete paths[path];
            }
        }
    }
    container.dispose();
    scene.dispose();
    engine.dispose();
    return {
        constant,
        name: spec.name, file: spec.file, source: spec.source ?? null, dt: DT, steps: spec.steps, fps,
        groups: spec.groups, crossfade: spec.crossfade ?? null,
        node_names: Object.fromEntries(nodes.map((i) => [i, gltf.nodes[i].name ?? `node${i}`])),
        weights, times, tracks, morph,
    };
}

const cases = [];
const sha256 = {};
for (const spec of CASES) {
    const sources = spec.source?.startsWith("retarget:") ? spec.source.slice(9).split(">") : [spec.source];
    for (const file of [spec.file, ...sources].filter(Boolean)) {
        sha256[file] = createHash("sha256").update(readFileSync(join(DATA, file))).digest("hex");
    }
    const result = await runCase(spec);
    console.log(`${spec.name}: ${result.times.length} instants, ${Object.keys(result.node_names).length} nodes`);
    cases.push(result);
}
writeFileSync(resolve(outPath), JSON.stringify({
    babylon_version: require("@babylonjs/core/package.json").version,
    babylon_loaders_version: require("@babylonjs/loaders/package.json").version,
    generator: "tests/babylon/generate_mixer_reference.mjs",
    description:
        "Local TRS of every glTF node the case's AnimationGroups animate, and the morph influences of every mesh node " +
        "with targets, after each scene._animate(dt) step of weighted (and additive, masked, ping-pong, once, " +
        "cross-faded) AnimationGroups, as the generator's header says. Rounded to 7 significant digits.",
    sha256,
    cases,
}) + "\n");
console.log(`wrote ${resolve(outPath)}`);
