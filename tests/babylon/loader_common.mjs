// What the glTF-loader reference generators share: reading a file's glTF JSON for bookkeeping,
// a loader extension that captures glTF node -> Babylon meshes before the loader forgets it,
// the rest pose of a loaded scene, the rounding of recorded numbers, and the sampling of a file's
// skinned world positions at rest and through its clips (sampleSkinnedModel).
import { NullEngine, Scene, LoadAssetContainerAsync, Vector3, Matrix } from "@babylonjs/core";
import "@babylonjs/loaders/glTF/index.js";
import { registerGLTFExtension } from "@babylonjs/loaders/glTF/2.0/index.js";

export function readGltfJson(bytes, isGlb) {
    if (!isGlb) {
        return JSON.parse(bytes.toString("utf8"));
    }
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (dv.getUint32(0, true) !== 0x46546c67) throw new Error("not a GLB");
    const len0 = dv.getUint32(12, true);
    if (dv.getUint32(16, true) !== 0x4e4f534a) throw new Error("first GLB chunk is not JSON");
    return JSON.parse(bytes.subarray(20, 20 + len0).toString("utf8"));
}

// capture.nodes: for each glTF node of the last file loaded, its skin and primitive meshes
// (set to null before a load, to see that the extension ran).
export const capture = { nodes: null };
registerGLTFExtension("boneviewer_capture_nodes", false, (loader) => ({
    name: "boneviewer_capture_nodes",
    enabled: true,
    onReady() {
        capture.nodes = loader.gltf.nodes.map((n) => ({
            skin: n.skin,
            primitiveMeshes: n._primitiveBabylonMeshes ? n._primitiveBabylonMeshes.slice() : null,
        }));
    },
    dispose() {},
}));

export function round7(x) {
    if (x === 0 || !Number.isFinite(x)) return x === 0 ? 0 : x;
    const r = Number(x.toPrecision(7));
    return Object.is(r, -0) ? 0 : r;
}

export function depth(node) {
    let d = 0;
    for (let p = node.parent; p; p = p.parent) d++;
    return d;
}

// A function that puts every node back in the pose it has now (position, rotation or
// rotationQuaternion as it had, scaling).
export function restPose(nodes) {
    const rest = nodes.map((n) => ({
        n,
        position: n.position.clone(),
        rotationQuaternion: n.rotationQuaternion ? n.rotationQuaternion.clone() : null,
        rotation: n.rotation.clone(),
        scaling: n.scaling.clone(),
    }));
    return () => {
        for (const r of rest) {
            r.n.position.copyFrom(r.position);
            if (r.rotationQuaternion) {
                if (!r.n.rotationQuaternion) r.n.rotationQuaternion = r.rotationQuaternion.clone();
                else r.n.rotationQuaternion.copyFrom(r.rotationQuaternion);
            } else {
                r.n.rotationQuaternion = null;
                r.n.rotation.copyFrom(r.rotation);
            }
            r.n.scaling.copyFrom(r.scaling);
        }
    };
}

// World-space CPU-skinned positions of every skinned glTF node of a file (its bytes), at rest and at
// ``fractions`` (0, 0.37, 0.81 and 1.0) of each animation's duration: the protocol generate_gltf_reference.mjs describes.
// A glTF file (its bytes) loaded as every reference loads it: NullEngine, a right-handed scene,
// LoadAssetContainerAsync with animationStartMode NONE and skipMaterials, the node capture filled.
// The caller disposes container, scene and engine.
export async function loadCaptured(bytes, isGlb, relFile) {
    const engine = new NullEngine();
    const scene = new Scene(engine);
    scene.useRightHandedSystem = true;
    capture.nodes = null;
    const source = isGlb ? new Uint8Array(bytes) : "data:model/gltf+json;base64," + bytes.toString("base64");
    const container = await LoadAssetContainerAsync(source, scene, {
        pluginExtension: isGlb ? ".glb" : ".gltf",
        pluginOptions: { gltf: { animationStartMode: 0 /* NONE */, skipMaterials: true } },
    });
    container.addAllToScene();
    if (!capture.nodes) throw new Error(`${relFile}: node capture extension did not run`);
    return { engine, scene, container };
}

export async function sampleSkinnedModel(bytes, isGlb, relFile, fractions = [0, 0.37, 0.81, 1]) {
    const gltf = readGltfJson(bytes, isGlb);
    const { engine, scene, container } = await loadCaptured(bytes, isGlb, relFile);

    const allNodes = [...scene.transformNodes, ...scene.meshes].sort((a, b) => depth(a) - depth(b));
    const root = scene.meshes.find((m) => m.name === "__root__");
    const restoreRest = restPose(allNodes);

    // skinned glTF nodes
    const skinned = [];
    gltf.nodes.forEach((node, index) => {
        if (node.skin === undefined || node.mesh === undefined) return;
        const prims = gltf.meshes[node.mesh].primitives;
        const cap = capture.nodes[index];
        if (!cap.primitiveMeshes || cap.primitiveMeshes.length !== prims.length) {
            throw new Error(`${relFile}: node ${index}: expected ${prims.length} primitive meshes, got ${cap.primitiveMeshes?.length}`);
        }
        const accessorCounts = prims.map((p) => gltf.accessors[p.attributes.POSITION].count);
        cap.primitiveMeshes.forEach((m, i) => {
            const n = m.getTotalVertices();
            if (n !== accessorCounts[i]) {
                throw new Error(`${relFile}: node ${index} primitive ${i}: Babylon has ${n} vertices, POSITION accessor has ${accessorCounts[i]}`);
            }
            if (!m.skeleton) throw new Error(`${relFile}: node ${index} primitive ${i}: no skeleton attached`);
        });
        skinned.push({ index, name: node.name ?? `node${index}`, meshes: cap.primitiveMeshes, accessorCounts });
    });

    const snapshot = () => {
        for (const n of allNodes) n.computeWorldMatrix(true);
        for (const s of scene.skeletons) s.prepare(true);
        const rootWorld = root.computeWorldMatrix(true);
        if (!rootWorld.equals(Matrix.Identity())) throw new Error(`${relFile}: __root__ world matrix is not identity`);
        const tmp = new Vector3();
        return skinned.map((sk) => {
            const out = [];
            for (const m of sk.meshes) {
                const world = m.computeWorldMatrix(true);
                const data = m.getPositionData(true, true);
                for (let i = 0; i < data.length; i += 3) {
                    Vector3.TransformCoordinatesFromFloatsToRef(data[i], data[i + 1], data[i + 2], world, tmp);
                    out.push(tmp.x, tmp.y, tmp.z);
                }
            }
            return { node: sk.index, name: sk.name, vertex_count: out.length / 3, positions: out };
        });
    };

    const samples = [];
    restoreRest();
    const restMeshes = snapshot();
    samples.push({ animation: null, animation_name: null, duration: 0, time: 0, frame: 0, meshes: restMeshes });

    const groups = scene.animationGroups;
    const gltfAnims = gltf.animations || [];
    if (groups.length !== gltfAnims.length) throw new Error(`${relFile}: ${groups.length} animation groups vs ${gltfAnims.length} glTF animations`);
    for (let gi = 0; gi < groups.length; gi++) {
        const g = groups[gi];
        const anim = gltfAnims[gi];
        const duration = Math.max(...anim.samplers.map((s) => gltf.accessors[s.input].max[0]));
        const fps = g.targetedAnimations[0].animation.framePerSecond;
        for (const ta of g.targetedAnimations) {
            if (ta.animation.framePerSecond !== fps) throw new Error(`${relFile}: mixed frame rates in group ${gi}`);
        }
        // check the seconds -> frames mapping: the group's end frame is duration * fps
        if (Math.abs(g.to - duration * fps) > 1e-3 || g.from !== 0) {
            throw new Error(`${relFile}: group ${gi} from/to ${g.from}/${g.to} != 0/${duration * fps}`);
        }
        for (const frac of fractions) {
            const time = frac === 1 ? duration : frac * duration;
            // at t = D use the group's end frame (the last key, float32 input * fps) exactly; glTF's accessor
            // max in the JSON can differ from the float32 data by a rounding step
            const frame = frac === 1 ? g.to : time * fps;
            for (const other of groups) other.stop();
            restoreRest();
            g.start(false, 1.0, g.from, g.to);
            g.goToFrame(frame);
            g.pause();
            const meshes = snapshot();
            g.stop();
            samples.push({ animation: gi, animation_name: g.name, duration, time, frame, meshes });
        }
        restoreRest();
    }

    // size: diagonal of the bounding box of all skinned positions in the rest-pose sample (t = 0)
    const lo = [Infinity, Infinity, Infinity];
    const hi = [-Infinity, -Infinity, -Infinity];
    for (const m of restMeshes) {
        for (let i = 0; i < m.positions.length; i++) {
            lo[i % 3] = Math.min(lo[i % 3], m.positions[i]);
            hi[i % 3] = Math.max(hi[i % 3], m.positions[i]);
        }
    }
    const size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);

    for (const s of samples) for (const m of s.meshes) m.positions = m.positions.map(round7);

    container.dispose();
    scene.dispose();
    engine.dispose();
    return { size, samples };
}

