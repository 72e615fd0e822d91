// What the glTF-loader reference generators share: reading a file's glTF JSON for bookkeeping,
// a loader extension that captures glTF node -> Babylon meshes before the loader forgets it,
// the rest pose of a loaded scene, and the rounding of recorded numbers.
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
