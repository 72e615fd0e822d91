"""USD writer: a Scene as it is now, as .usda, .usdc or .usdz, through Pixar's usd-core.

What is written (``<Root>`` is the model's name made a valid identifier)::

    /<Root>                      SkelRoot (an Xform when nothing is skinned or animated): the
                                 default prim, kind "component"
      /<Root>/<Skeleton>         UsdSkel.Skeleton: joints (paths by the bone hierarchy), jointNames
                                 (the bones' own names), bindTransforms (each joint's bind in the
                                 skeleton's space: the inverse of its absolute inverse bind),
                                 restTransforms (the current pose's local matrices); its transform
                                 is the mesh world matrix that places the skeleton root;
                                 skel:animationSource: the first clip that moves it
      /<Root>/<Mesh>             Mesh: points, triangles, normals, primvars:st (V flipped: glTF's V
                                 runs down, USD's up), displayColor when the vertex colours are not
                                 all white; skinned meshes with UsdSkel.BindingAPI (jointIndices /
                                 jointWeights, elementSize = influences, geomBindTransform) and their
                                 morph targets as BlendShape children; a GeomSubset per submesh
                                 bound to its material when a mesh has several
      /<Root>/Looks/<Material>   UsdPreviewSurface (base colour, metallic, roughness, emissive,
                                 opacity; UsdUVTexture for each glTF texture slot)
      /<Root>/Animations/<Clip>  UsdSkel.Animation per clip (see below)

Static meshes are plain meshes with their world transform, except those a clip can move: a mesh
placed under a bone's node is bound rigidly to that bone (every vertex weight 1 on it), and one
whose own node a clip animates, or which has morph targets (blend shapes need a skeleton), gets a
skeleton of one joint that carries its world matrix. UsdSkel's own skinning of the file then
places every mesh where boneviewer draws it, at rest and through every clip. (A clip keying a node
that no bone and no such mesh depends on, the node placing a skeleton root among them, is written
at that node's current pose, with one warning naming the nodes.)

The pose at rest: restTransforms hold the current pose, and the SkelAnimation attributes hold it
too as their default (non-time-sampled) value, so the file read at the default time shows the pose
the export command applied; the time samples are the clip.

Time codes: timeCodesPerSecond (and framesPerSecond) is the frame rate the clips' keys sit on
(the first of 24, 25, 30, 48, 50, 60, 72, 90, 96, 100, 120, 144, 240 on which every key lands
within 1/1000 frame: glTF stores times as float32), so each key lands on an integer time code;
keys at arbitrary seconds get 60 and fractional time codes, seconds * 60, exactly. The keys are
written where they are, not resampled: a clip's LINEAR keys then play back exactly (USD
interpolates linearly, and slerps quaternions, between samples, as glTF does), between keys too.
Every joint is written at the union of the clip's key times (one array per time code holds all
joints). STEP keys get one more sample 1/1000 time code before each key (USD has no held
interpolation in the file); CUBICSPLINE is sampled at every integer time code between its keys
(exact at every frame, linear in between).

Clips: every clip is a SkelAnimation. The first one that moves a skeleton is its
skel:animationSource; a reader finds all of them as the children of ``/<Root>/Animations``, in the
scene's order, each named after its clip (made a valid identifier, made unique) with the original
name as its ``displayName`` and in its customData (``prim.GetCustomDataByKey("boneviewer:clip")``;
the length in seconds: ``"boneviewer:duration"``). When the scene has more than one skeleton prim,
``/<Root>/Animations/<Clip>`` is a Scope with the customData, holding one SkelAnimation per
skeleton the clip moves, named after that skeleton's prim. Morph weights are the animation's
blendShapeWeights. Scales are half floats in UsdSkel's schema (three significant digits): a clip
that scales by amounts a half float cannot hold is written to that precision, with one warning.

.usdz is an ARKit-style package: the .usdc root layer first, then its textures (PNG and JPEG as
the model has them, other images re-encoded as PNG), 64-byte aligned, uncompressed. A .usda or
.usdc file gets its textures beside it as ``<stem>_image<n>.png`` (or .jpg), the names save_gltf
gives a .gltf's images. Everything is checked
and built in memory and in a private temporary folder first; the files are then written whole or
not at all (viewer.files.write_files), never over a file the scene was loaded from nor one of
``inputs``, nor (without ``force``) over a texture file that is there already.
"""

from __future__ import annotations

import io
import logging
import tempfile
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from ..model.checks import OUT_OF_RANGE, first_bad_row, fits
from ..model.morph import MorphAnimationClip
from ..model.transforms import decompose_one
from ..model.unit_rotations import unit_rotations
from ..motion.constraints import written_as_drawn
from ..sources import texture_file_name

__all__ = ["SUFFIXES", "save_usd"]

log = logging.getLogger("boneviewer")

SUFFIXES = (".usda", ".usdc", ".usdz")
# Frame rates a clip's keys are looked for on (timeCodesPerSecond), in order.
RATES = (24, 25, 30, 48, 50, 60, 72, 90, 96, 100, 120, 144, 240)
DEFAULT_RATE = 60
ON_FRAME = 1e-3  # a key within this many frames of a frame is on it (float32 key times)
STEP_EPSILON = 1e-3  # time codes before a STEP key where the previous value is held
HALF_WARNING = 1e-4  # a scale that a half float changes by more than this (relative) is told
WRAP = {10497: "repeat", 33071: "clamp", 33648: "mirror"}


def save_usd(scene, path, inputs: dict | None = None, force: bool = False,
             apply_pose_as_bind: bool = False) -> Path:
    """Write ``scene`` as it is now to ``path`` (.usda, .usdc or .usdz) and return the path.

    Everything is checked before anything is written (NaN or infinite values refused); the
    files are written to temporary names and renamed into place, so an existing file stays
    whole if anything fails. No file written lands on a file the scene was loaded from (its
    model file, buffers and images) or on one of ``inputs`` ({path: what uses it}); a .usda's
    or .usdc's texture files (names not given) replace existing ones only with ``force``, which
    also lets the output replace the model's own file when ``path`` is the model. Rotations are
    written as unit quaternions (model.unit_rotations).

    ``apply_pose_as_bind``: the posed (and morphed) shape becomes the skinned meshes' points and
    the pose their bind, as save_gltf does (Blender's Apply Pose as Rest Pose).
    """
    from ..sources import write_model_files

    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise ViewerError(f"{path}: the output must be a .usda, .usdc or .usdz file")
    _require_usd_core(path)
    warnings: list[str] = []

    def build():
        files, said = usd_files(scene, path, apply_pose_as_bind)
        warnings.extend(said)
        return files

    write_model_files(scene, path, build, inputs, force)
    for warning in warnings:
        log.warning("%s: %s", path, warning)
    warning = written_as_drawn(scene)  # USD has no node constraints
    if warning:
        log.warning("%s: %s", path, warning)
    return path


def usd_files(scene, path, apply_pose_as_bind: bool = False) -> tuple[list[tuple[Path, bytes]], list[str]]:
    """((path, bytes) of every file save_usd writes for ``path``, the main one last; the
    warnings to tell), built in memory and in a private temporary folder; nothing written."""
    path = Path(path)
    suffix = path.suffix.lower()
    stem = path.stem
    document = _Document(scene, stem, bool(apply_pose_as_bind))
    try:
        with unit_rotations(scene):  # the poses, rest transforms and sampled clips from unit rotations
            document.build()
        with tempfile.TemporaryDirectory(prefix="boneviewer-usd-") as temporary:
            temporary = Path(temporary)
            layer_name = f"{stem}.usdc" if suffix == ".usdz" else f"{stem}{suffix}"
            layer_path = temporary / layer_name
            if not document.stage.GetRootLayer().Export(str(layer_path)):
                raise ViewerError(f"{path}: usd-core could not write the stage")
            if suffix != ".usdz":
                files = [(path.with_name(name), data) for name, data in document.images.files]
                return files + [(path, layer_path.read_bytes())], document.warnings
            from pxr import Sdf

            package = temporary / f"{stem}.usdz"
            writer = Sdf.ZipFileWriter.CreateNew(str(package))
            writer.AddFile(str(layer_path), layer_name)  # the root layer first
            for name, data in document.images.files:
                image = temporary / name
                image.write_bytes(data)
                writer.AddFile(str(image), name)
            writer.Save()
            return [(path, package.read_bytes())], document.warnings
    except ViewerError:
        raise
    except (RuntimeError, OSError) as error:  # usd-core's own (Tf.ErrorException), the temporary folder's
        text = " ".join(str(error).split())
        raise ViewerError(f"{path}: could not build the USD stage: {text[:300]}") from None


def _require_usd_core(path: Path) -> None:
    try:
        import pxr.Usd  # noqa: F401
    except ImportError:
        raise ViewerError(f"{path}: writing USD needs usd-core (pip install 'boneviewer[formats]')") from None


# --- names ------------------------------------------------------------------------------------
def _identifier(name, fallback: str) -> str:
    from pxr import Tf

    text = str(name or "").strip()
    return Tf.MakeValidIdentifier(text) if text else fallback


class _Names:
    """Unique valid prim names among one parent's children."""

    def __init__(self, taken=()):
        self.taken = set(taken)

    def take(self, name, fallback: str) -> str:
        base = _identifier(name, fallback)
        candidate, n = base, 1
        while candidate in self.taken:
            candidate = f"{base}_{n}"
            n += 1
        self.taken.add(candidate)
        return candidate


def _matrix(m):
    from pxr import Gf

    return Gf.Matrix4d(*np.asarray(m, dtype=np.float64).reshape(16).tolist())


def _is_identity(m) -> bool:
    return bool(np.array_equal(np.asarray(m, dtype=np.float64), np.eye(4)))


# --- rigs: the Skeleton prims -----------------------------------------------------------------
class _Binding:
    """How one mesh is written: its rig (None: a plain mesh), skinned by its own influences or
    rigidly on one joint, and the geomBindTransform."""

    def __init__(self, rig=None, joint: int | None = None, geom_bind=None):
        self.rig, self.joint = rig, joint
        self.geom_bind = np.eye(4) if geom_bind is None else geom_bind


class _SkeletonRig:
    """A boneviewer Skeleton as a UsdSkel.Skeleton, placed by the world matrix of its meshes."""

    def __init__(self, skeleton, world: np.ndarray, apply_pose_as_bind: bool):
        self.skeleton, self.world = skeleton, np.array(world, dtype=np.float64)
        self.name = skeleton.name
        self.meshes: list = []
        bones = skeleton.bones
        parents = skeleton.get_parent_indices()
        children: dict[int, list[int]] = {}
        for position, parent in enumerate(parents.tolist()):
            children.setdefault(parent, []).append(position)
        order: list[int] = []
        stack = list(reversed(children.get(-1, [])))
        while stack:  # parents before children, siblings in skeleton order
            position = stack.pop()
            order.append(position)
            stack.extend(reversed(children.get(position, [])))
        self.bones = [bones[p] for p in order]
        self.slots = np.array([bone.slot for bone in self.bones], dtype=np.int64)
        # The joint names: paths of valid identifiers by hierarchy; jointNames: the bones' names.
        paths: dict[int, str] = {}
        siblings: dict[int, _Names] = {}
        self.joint_paths = []
        for position in order:
            parent = int(parents[position])
            name = siblings.setdefault(parent, _Names()).take(bones[position].name, "joint")
            paths[position] = name if parent < 0 else f"{paths[parent]}/{name}"
            self.joint_paths.append(paths[position])
        self.joint_names = [bone.name for bone in self.bones]
        # The vertex joint indices read rows by bone index (position when unset); -1: not uploaded.
        self.joint_of_index: dict[int, int] = {}
        for joint, position in enumerate(order):
            bone = bones[position]
            index = position if bone.index is None else bone.index
            if index >= 0:
                self.joint_of_index[index] = joint
        skeleton.prepare()
        batch = skeleton.batch
        batch.compose_stale()
        rows = batch.rows
        self.rest = np.array(rows.local[self.slots], dtype=np.float64)
        self.absolute = np.array(rows.absolute[self.slots], dtype=np.float64)
        if apply_pose_as_bind:
            self.bind = self.absolute.copy()
        else:
            batch.update_bind()
            self.bind = _inverse(rows.absolute_inverse_bind[self.slots], self.bones, "absolute inverse bind")
        self.targets = {id(bone.get_pose_target()): joint for joint, bone in enumerate(self.bones)}

    def pose(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The joints' current local (translations, rotations (x, y, z, w), scales)."""
        batch = self.skeleton.batch
        batch.decompose_stale()
        rows = batch.rows
        return (np.array(rows.position[self.slots]), np.array(rows.quaternion[self.slots]),
                np.array(rows.scaling[self.slots]))

    def moved_by(self, clip) -> bool:
        return any(id(channel.node) in self.targets for channel in clip.channels) or _moves_morphs(clip, self.meshes)

    def nodes(self) -> set[int]:
        return set(self.targets)

    def finals(self) -> np.ndarray:
        """The final matrices by bone index (the vertex joints' rows), as drawn now."""
        return np.array(self.skeleton.get_transform_matrices(), dtype=np.float64)


class _NodeRig:
    """One joint carrying the world matrix of static meshes that a clip moves or that have morph
    targets (UsdSkel's blend shapes need a skeleton)."""

    def __init__(self, name: str, node, meshes: list):
        self.name, self.node = name, node
        self.meshes = list(meshes)
        self.world = np.eye(4)
        self.joint_paths = [_identifier(name, "node")]
        self.joint_names = [name]
        current = np.array(meshes[0].world_matrix, dtype=np.float64)
        self.rest = current[None].copy()
        self.bind = np.eye(4)[None]
        chain, node = [], self.node
        while node is not None:
            chain.append(id(node))
            node = node.parent
        self.chain = set(chain)

    def pose(self):
        scaling, quaternion, position = decompose_one(self.meshes[0].world_matrix)
        return position[None].copy(), quaternion[None].copy(), scaling[None].copy()

    def moved_by(self, clip) -> bool:
        return any(id(channel.node) in self.chain for channel in clip.channels) or _moves_morphs(clip, self.meshes)

    def nodes(self) -> set[int]:
        return self.chain


def _moves_morphs(clip, meshes) -> bool:
    if not isinstance(clip, MorphAnimationClip):
        return False
    ids = {id(mesh) for mesh in meshes}
    return any(id(mesh) in ids for channel in clip.morph_channels for mesh in channel.meshes)


def _inverse(matrices: np.ndarray, bones, what: str) -> np.ndarray:
    matrices = np.asarray(matrices, dtype=np.float64)
    try:
        inverse = np.linalg.inv(matrices)
    except np.linalg.LinAlgError:
        inverse = None
    if inverse is None or not fits(inverse):
        bad = 0 if inverse is None else int(np.flatnonzero(~np.isfinite(inverse).all(axis=(1, 2)))[0])
        raise ViewerError(f"bone {bones[bad].name!r}: its {what} matrix is singular; nothing was written")
    return inverse


# --- the document -----------------------------------------------------------------------------
class _Images:
    """The texture files: each image once, PNG or JPEG, named as save_gltf names a .gltf's
    (sources.texture_file_name: <stem>_image<n>.png|.jpg)."""

    def __init__(self, stem: str):
        self.stem = stem
        self.files: list[tuple[str, bytes]] = []
        self.names: dict[int, str] = {}
        self.keep: list = []  # the keys' objects, alive while their ids are keys

    def asset(self, submesh, slot_name: str, slot) -> str:
        data = submesh.image_data if slot_name == "base_color_texture" else submesh.texture_data.get(slot_name)
        source = data[0] if data is not None else slot.image
        key = id(source)
        if key not in self.names:
            if data is not None and data[1] in ("image/png", "image/jpeg"):
                encoded, extension = data[0], "png" if data[1] == "image/png" else "jpg"
            else:  # another format, or an image made in memory: PNG of the decoded pixels
                from PIL import Image

                buffer = io.BytesIO()
                Image.fromarray(np.asarray(slot.image, dtype=np.uint8)).save(buffer, "PNG")
                encoded, extension = buffer.getvalue(), "png"
            name = texture_file_name(self.stem, len(self.files), extension)
            self.files.append((name, bytes(encoded)))
            self.names[key] = name
            self.keep.append(source)
        return "./" + self.names[key]


class _Document:
    def __init__(self, scene, stem: str, apply_pose_as_bind: bool):
        self.scene, self.stem, self.apply_pose_as_bind = scene, stem, apply_pose_as_bind
        self.images = _Images(stem)
        self.warnings: list[str] = []
        self.stage = None

    # --- the whole ---------------------------------------------------------------------------
    def build(self) -> None:
        from pxr import Kind, Usd, UsdGeom, UsdSkel

        scene = self.scene
        scene.prepare()
        self._check_finite()
        rigs, bindings = self._rigs()
        self.stage = stage = Usd.Stage.CreateInMemory(f"{self.stem}.usda")
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
        UsdGeom.SetStageMetersPerUnit(stage, 1.0)
        stage.GetRootLayer().customLayerData = {"creator": "boneviewer"}
        root_name = _identifier(Path(str(scene.name)).stem if str(scene.name).lower().endswith(
            (".glb", ".gltf", ".bvh", ".fbx", ".usd", ".usda", ".usdc", ".usdz")) else scene.name, "Model")
        self.root = root_path = f"/{root_name}"
        if rigs:
            root = UsdSkel.Root.Define(stage, root_path).GetPrim()
        else:
            root = UsdGeom.Xform.Define(stage, root_path).GetPrim()
        stage.SetDefaultPrim(root)
        Usd.ModelAPI(root).SetKind(Kind.Tokens.component)
        names = _Names(["Looks", "Animations"])
        self.looks: dict[int, str] = {}
        self.look_names = _Names()
        for rig in rigs:
            rig.path = f"{root_path}/{names.take(rig.name, 'Skeleton')}"
            self._skeleton(rig)
        self.blend_tokens = self._blend_tokens()
        for mesh in scene.meshes:
            self._mesh(mesh, f"{root_path}/{names.take(mesh.name, 'Mesh')}", bindings[id(mesh)])
        self._animations(rigs)

    def _check_finite(self) -> None:
        scene = self.scene
        for skeleton in scene.skeletons:
            batch = skeleton.batch
            batch.decompose_stale()
            rows, slots = batch.rows, [bone.slot for bone in skeleton.bones]
            for array in (rows.position[slots], rows.quaternion[slots], rows.scaling[slots], rows.local[slots]):
                if not fits(array):
                    position = first_bad_row(array.reshape(len(slots), -1))
                    raise ViewerError(f"bone {skeleton.bones[position].name!r}: its pose holds {OUT_OF_RANGE}; "
                                      "nothing was written")
        for mesh in scene.meshes:
            if not fits(mesh.world_matrix):
                raise ViewerError(f"mesh {mesh.name!r}: its world matrix holds {OUT_OF_RANGE}; nothing was written")
            if mesh.morph_targets is not None and not fits(mesh.morph_weights):
                raise ViewerError(f"mesh {mesh.name!r}: its morph weights hold {OUT_OF_RANGE}; nothing was written")

    def _rigs(self):
        """The Skeleton prims to write and, per mesh (by id), its _Binding."""
        scene = self.scene
        rigs: list = []
        by_key: dict = {}
        bindings: dict[int, _Binding] = {}
        for mesh in scene.skinned_meshes:
            if mesh.skeleton is None:
                continue
            world = np.asarray(mesh.world_matrix, dtype=np.float64)
            key = (id(mesh.skeleton), world.tobytes())
            rig = by_key.get(key)
            if rig is None:
                rig = by_key[key] = _SkeletonRig(mesh.skeleton, world, self.apply_pose_as_bind)
                rigs.append(rig)
            rig.meshes.append(mesh)
            bindings[id(mesh)] = _Binding(rig)
        joints_of_node: dict[int, tuple] = {}
        for rig in rigs:
            for node_id, joint in rig.targets.items():
                joints_of_node.setdefault(node_id, (rig, joint))
        animated = {id(channel.node) for clip in scene.animations for channel in clip.channels}
        node_rigs: dict = {}
        for mesh in scene.meshes:
            if id(mesh) in bindings:
                continue
            bound = self._rigid_binding(mesh, joints_of_node)
            if bound is not None:
                bound.rig.meshes.append(mesh)
                bindings[id(mesh)] = bound
                continue
            chain, node = [], mesh.world_node
            while node is not None:
                chain.append(id(node))
                node = node.parent
            if mesh.morph_targets is not None or animated.intersection(chain):
                key = ("node", id(mesh.world_node)) if mesh.world_node is not None else ("mesh", id(mesh))
                rig = node_rigs.get(key)
                if rig is None:
                    name = mesh.world_node.name if mesh.world_node is not None else mesh.name
                    rig = node_rigs[key] = _NodeRig(name, mesh.world_node, [mesh])
                    rigs.append(rig)
                else:
                    rig.meshes.append(mesh)
                bindings[id(mesh)] = _Binding(rig, joint=0)
            else:
                bindings[id(mesh)] = _Binding()
        return rigs, bindings

    @staticmethod
    def _rigid_binding(mesh, joints_of_node):
        """A static mesh under a bone's node, bound to that bone with weight 1: geomBindTransform
        G with p @ G @ inverse(bind) @ absolute @ skeleton world = p @ world matrix, now."""
        node = mesh.world_node
        while node is not None and id(node) not in joints_of_node:
            node = node.parent
        if node is None:
            return None
        rig, joint = joints_of_node[id(node)]
        absolute = rig.absolute[joint]
        try:
            to_skeleton = np.linalg.inv(absolute) @ rig.bind[joint]
            geom_bind = np.asarray(mesh.world_matrix, dtype=np.float64) @ np.linalg.inv(rig.world) @ to_skeleton
        except np.linalg.LinAlgError:
            return None
        if not fits(geom_bind):
            return None
        return _Binding(rig, joint=joint, geom_bind=geom_bind)

    # --- skeletons ---------------------------------------------------------------------------
    def _skeleton(self, rig) -> None:
        from pxr import UsdGeom, UsdSkel, Vt

        skeleton = UsdSkel.Skeleton.Define(self.stage, rig.path)
        skeleton.CreateJointsAttr(rig.joint_paths)
        skeleton.CreateJointNamesAttr(rig.joint_names)
        for what, matrices in (("bind", rig.bind), ("rest", rig.rest)):
            if not fits(matrices):
                raise ViewerError(f"skeleton {rig.name!r}: its {what} transforms hold {OUT_OF_RANGE}; "
                                  "nothing was written")
        skeleton.CreateBindTransformsAttr(Vt.Matrix4dArray.FromNumpy(np.ascontiguousarray(rig.bind)))
        skeleton.CreateRestTransformsAttr(Vt.Matrix4dArray.FromNumpy(np.ascontiguousarray(rig.rest)))
        if not _is_identity(rig.world):
            UsdGeom.Xformable(skeleton).AddTransformOp().Set(_matrix(rig.world))
        prim = skeleton.GetPrim()
        prim.SetCustomDataByKey("boneviewer:skeleton", str(rig.name))
        UsdSkel.BindingAPI.Apply(prim)

    # --- meshes ------------------------------------------------------------------------------
    def _blend_tokens(self) -> dict[int, list[str]]:
        """Per mesh with morph targets (by id), the blend shape names its rig's animations use:
        the meshes on one node share them (they share its weights)."""
        tokens: dict[int, list[str]] = {}
        names = _Names()
        for meshes in self.scene.morph_groups():
            first = meshes[0]
            base = first.world_node.name if first.world_node is not None and len(meshes) > 1 else first.name
            group = [names.take(f"{base}_{target}", "shape") for target in first.morph_target_names]
            for mesh in meshes:
                tokens[id(mesh)] = group
        return tokens

    def _mesh(self, mesh, path: str, binding: _Binding) -> None:
        from pxr import Sdf, UsdGeom, UsdShade, Vt

        stage = self.stage
        usd_mesh = UsdGeom.Mesh.Define(stage, path)
        prim = usd_mesh.GetPrim()
        prim.SetCustomDataByKey("boneviewer:mesh", str(mesh.name))
        rig = binding.rig
        positions, normals = mesh.positions, mesh.normals
        targets = mesh.morph_targets
        deltas = None if targets is None else (targets.positions, targets.normals)
        skinned = rig is not None and binding.joint is None
        if skinned and self.apply_pose_as_bind:
            from ..gltf.writer import _posed

            positions, normals, _, moved = _posed(mesh, rig.finals())
            deltas = None if moved is None else (moved[0], moved[1])
        points = np.ascontiguousarray(positions, dtype=np.float32)
        if not fits(points):
            raise ViewerError(f"mesh {mesh.name!r}: its points hold {OUT_OF_RANGE}; nothing was written")
        usd_mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(points))
        triangles = len(mesh.indices) // 3
        usd_mesh.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(triangles, 3, dtype=np.int32)))
        usd_mesh.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(np.ascontiguousarray(mesh.indices,
                                                                                         dtype=np.int32)))
        usd_mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
        if len(points):
            usd_mesh.CreateExtentAttr(Vt.Vec3fArray.FromNumpy(np.stack([points.min(axis=0), points.max(axis=0)])))
        normals = np.ascontiguousarray(normals, dtype=np.float32)
        if len(normals) and np.isfinite(normals).all():
            usd_mesh.CreateNormalsAttr(Vt.Vec3fArray.FromNumpy(normals))
            usd_mesh.SetNormalsInterpolation(UsdGeom.Tokens.vertex)
        primvars = UsdGeom.PrimvarsAPI(prim)
        sets = {slot.texcoord for submesh in mesh.submeshes for slot in submesh.pbr.textures().values()}
        for k, (name, texcoords) in enumerate((("st", mesh.texcoords), ("st1", mesh.texcoords1))):
            if k in sets or (k == 0 and texcoords.any()):
                st = np.array(texcoords, dtype=np.float32)
                st[:, 1] = 1.0 - st[:, 1]  # glTF's V runs down the image, USD's up
                primvars.CreatePrimvar(name, Sdf.ValueTypeNames.TexCoord2fArray, UsdGeom.Tokens.vertex).Set(
                    Vt.Vec2fArray.FromNumpy(st))
        colors = mesh.colors
        if not (colors == 1).all():
            usd_mesh.CreateDisplayColorPrimvar(UsdGeom.Tokens.vertex).Set(
                Vt.Vec3fArray.FromNumpy(np.ascontiguousarray(colors[:, :3], dtype=np.float32)))
            if not (colors[:, 3] == 1).all():
                usd_mesh.CreateDisplayOpacityPrimvar(UsdGeom.Tokens.vertex).Set(
                    Vt.FloatArray.FromNumpy(np.ascontiguousarray(colors[:, 3], dtype=np.float32)))
        if any(submesh.pbr.double_sided for submesh in mesh.submeshes):
            usd_mesh.CreateDoubleSidedAttr(True)
        if rig is None:
            if not _is_identity(mesh.world_matrix):
                UsdGeom.Xformable(usd_mesh).AddTransformOp().Set(_matrix(mesh.world_matrix))
        else:
            self._bind(mesh, usd_mesh, binding, deltas)
        # Materials: the mesh's own when it has one submesh, else one GeomSubset per submesh.
        binder = UsdShade.MaterialBindingAPI.Apply(prim)
        if len(mesh.submeshes) == 1 and mesh.submeshes[0].index_count >= 3 * triangles:
            binder.Bind(self._material(mesh.submeshes[0]))
        else:
            subsets = _Names()
            for submesh in mesh.submeshes:
                first, count = submesh.first_index // 3, submesh.index_count // 3
                subset = binder.CreateMaterialBindSubset(subsets.take(submesh.name or submesh.pbr.name, "part"),
                                                         Vt.IntArray(list(range(first, first + count))))
                UsdShade.MaterialBindingAPI.Apply(subset.GetPrim()).Bind(self._material(submesh))

    def _bind(self, mesh, usd_mesh, binding: _Binding, deltas) -> None:
        from pxr import UsdSkel, Vt

        rig = binding.rig
        prim = usd_mesh.GetPrim()
        skel = UsdSkel.BindingAPI.Apply(prim)
        skel.CreateSkeletonRel().SetTargets([rig.path])
        count = len(mesh.positions)
        if binding.joint is None:
            joints = np.asarray(mesh.joints)
            weights = np.asarray(mesh.weights, dtype=np.float32)
            lookup = np.full(max(rig.joint_of_index, default=0) + 1, -1, dtype=np.int64)
            for index, joint in rig.joint_of_index.items():
                lookup[index] = joint
            used = weights > 0
            valid = (joints >= 0) & (joints < len(lookup))
            mapped = np.where(valid, lookup[np.clip(joints, 0, len(lookup) - 1)], -1)
            if (used & (mapped < 0)).any():
                raise ViewerError(f"mesh {mesh.name!r}: a vertex weighs a joint its skeleton does not upload; "
                                  "nothing was written")
            mapped[~used] = 0  # unused slots: joint 0, weight 0
            width = joints.shape[1]
            indices = np.ascontiguousarray(mapped, dtype=np.int32).reshape(-1)
            weights = np.where(used, weights, 0).astype(np.float32).reshape(-1)
        else:
            width = 1
            indices = np.full(count, binding.joint, dtype=np.int32)
            weights = np.ones(count, dtype=np.float32)
        skel.CreateJointIndicesPrimvar(False, width).Set(Vt.IntArray.FromNumpy(indices))
        skel.CreateJointWeightsPrimvar(False, width).Set(Vt.FloatArray.FromNumpy(weights))
        skel.CreateGeomBindTransformAttr(_matrix(binding.geom_bind))
        if deltas is None:
            return
        tokens = self.blend_tokens[id(mesh)]
        paths = []
        shape_names = _Names()
        positions, normals = deltas
        for t, token in enumerate(tokens):
            shape = UsdSkel.BlendShape.Define(self.stage, prim.GetPath().AppendChild(shape_names.take(token, "shape")))
            offsets = np.ascontiguousarray(positions[t], dtype=np.float32)
            moved = np.flatnonzero(np.abs(offsets).sum(axis=1) > 0)
            sparse = len(moved) < len(offsets) // 2
            if sparse:
                shape.CreatePointIndicesAttr(Vt.IntArray.FromNumpy(moved.astype(np.int32)))
                offsets = np.ascontiguousarray(offsets[moved])
            shape.CreateOffsetsAttr(Vt.Vec3fArray.FromNumpy(offsets))
            if normals is not None:
                normal_offsets = np.ascontiguousarray(normals[t], dtype=np.float32)
                if sparse:
                    normal_offsets = np.ascontiguousarray(normal_offsets[moved])
                shape.CreateNormalOffsetsAttr(Vt.Vec3fArray.FromNumpy(normal_offsets))
            shape.GetPrim().SetCustomDataByKey("boneviewer:target", mesh.morph_target_names[t])
            paths.append(shape.GetPath())
        skel.CreateBlendShapesAttr(tokens)
        skel.CreateBlendShapeTargetsRel().SetTargets(paths)

    # --- materials ---------------------------------------------------------------------------
    def _material(self, submesh):
        """The submesh's Material as a UsdPreviewSurface network, written once."""
        from pxr import Gf, Sdf, UsdShade

        material = submesh.pbr
        key = id(material)
        if key in self.looks:
            return UsdShade.Material.Get(self.stage, self.looks[key])
        if not hasattr(self, "looks_scope"):
            from pxr import UsdGeom

            self.looks_scope = UsdGeom.Scope.Define(self.stage, f"{self.root}/Looks").GetPath()
        path = self.looks_scope.AppendChild(self.look_names.take(material.name, "Material"))
        look = UsdShade.Material.Define(self.stage, path)
        if material.name:
            look.GetPrim().SetCustomDataByKey("boneviewer:material", str(material.name))
        surface = UsdShade.Shader.Define(self.stage, path.AppendChild("PreviewSurface"))
        surface.CreateIdAttr("UsdPreviewSurface")
        look.CreateSurfaceOutput().ConnectToSource(surface.ConnectableAPI(), "surface")
        textures = material.textures()
        readers: dict[int, object] = {}

        def texture(slot_name: str, name: str, color_space: str, scale, bias=None):
            slot = textures[slot_name]
            texcoord = 1 if slot.texcoord == 1 else 0
            if texcoord not in readers:
                reader = UsdShade.Shader.Define(self.stage, path.AppendChild(f"PrimvarReader_st{texcoord or ''}"))
                reader.CreateIdAttr("UsdPrimvarReader_float2")
                reader.CreateInput("varname", Sdf.ValueTypeNames.String).Set("st1" if texcoord else "st")
                readers[texcoord] = reader.CreateOutput("result", Sdf.ValueTypeNames.Float2)
            st_source = readers[texcoord]
            if slot.transform is not None and not np.array_equal(slot.transform, np.eye(3)):
                transform = UsdShade.Shader.Define(self.stage, path.AppendChild(f"{name}Transform"))
                transform.CreateIdAttr("UsdTransform2d")
                transform.CreateInput("in", Sdf.ValueTypeNames.Float2).ConnectToSource(st_source)
                rotation, scale2, translation = _usd_uv_transform(slot.transform)
                transform.CreateInput("rotation", Sdf.ValueTypeNames.Float).Set(rotation)
                transform.CreateInput("scale", Sdf.ValueTypeNames.Float2).Set(Gf.Vec2f(*scale2))
                transform.CreateInput("translation", Sdf.ValueTypeNames.Float2).Set(Gf.Vec2f(*translation))
                st_source = transform.CreateOutput("result", Sdf.ValueTypeNames.Float2)
            shader = UsdShade.Shader.Define(self.stage, path.AppendChild(name))
            shader.CreateIdAttr("UsdUVTexture")
            shader.CreateInput("file", Sdf.ValueTypeNames.Asset).Set(self.images.asset(submesh, slot_name, slot))
            shader.CreateInput("st", Sdf.ValueTypeNames.Float2).ConnectToSource(st_source)
            shader.CreateInput("wrapS", Sdf.ValueTypeNames.Token).Set(WRAP.get(slot.sampler.wrap_s, "repeat"))
            shader.CreateInput("wrapT", Sdf.ValueTypeNames.Token).Set(WRAP.get(slot.sampler.wrap_t, "repeat"))
            shader.CreateInput("sourceColorSpace", Sdf.ValueTypeNames.Token).Set(color_space)
            shader.CreateInput("scale", Sdf.ValueTypeNames.Float4).Set(Gf.Vec4f(*[float(v) for v in scale]))
            if bias is not None:
                shader.CreateInput("bias", Sdf.ValueTypeNames.Float4).Set(Gf.Vec4f(*[float(v) for v in bias]))
            return shader

        def connect(input_name: str, type_name, shader, output: str, output_type) -> None:
            surface.CreateInput(input_name, type_name).ConnectToSource(shader.ConnectableAPI(), output)
            shader.CreateOutput(output, output_type)

        base = np.asarray(material.base_color_factor, dtype=np.float64)
        float3, float1 = Sdf.ValueTypeNames.Float3, Sdf.ValueTypeNames.Float
        alpha = material.alpha_mode in ("BLEND", "MASK")
        if "base_color_texture" in textures:
            shader = texture("base_color_texture", "BaseColorTexture", "sRGB", base)
            connect("diffuseColor", Sdf.ValueTypeNames.Color3f, shader, "rgb", float3)
            if alpha:
                connect("opacity", float1, shader, "a", float1)
        else:
            surface.CreateInput("diffuseColor", Sdf.ValueTypeNames.Color3f).Set(Gf.Vec3f(*base[:3].tolist()))
            if alpha:
                surface.CreateInput("opacity", float1).Set(float(base[3]))
        if material.alpha_mode == "MASK":
            surface.CreateInput("opacityThreshold", float1).Set(float(material.alpha_cutoff))
        if "metallic_roughness_texture" in textures:
            shader = texture("metallic_roughness_texture", "MetallicRoughnessTexture", "raw",
                             (1.0, material.roughness_factor, material.metallic_factor, 1.0))
            connect("roughness", float1, shader, "g", float1)
            connect("metallic", float1, shader, "b", float1)
        else:
            surface.CreateInput("metallic", float1).Set(float(material.metallic_factor))
            surface.CreateInput("roughness", float1).Set(float(material.roughness_factor))
        emissive = np.asarray(material.emissive_factor, dtype=np.float64) * float(material.emissive_strength)
        if "emissive_texture" in textures:
            shader = texture("emissive_texture", "EmissiveTexture", "sRGB", (*emissive.tolist(), 1.0))
            connect("emissiveColor", Sdf.ValueTypeNames.Color3f, shader, "rgb", float3)
        elif emissive.any():
            surface.CreateInput("emissiveColor", Sdf.ValueTypeNames.Color3f).Set(Gf.Vec3f(*emissive.tolist()))
        if "normal_texture" in textures:
            s = float(textures["normal_texture"].scale)
            shader = texture("normal_texture", "NormalTexture", "raw", (2 * s, 2 * s, 2, 1), (-s, -s, -1, 0))
            connect("normal", Sdf.ValueTypeNames.Normal3f, shader, "rgb", float3)
        if "occlusion_texture" in textures:
            s = float(textures["occlusion_texture"].scale)
            shader = texture("occlusion_texture", "OcclusionTexture", "raw", (s, s, s, 1), (1 - s, 1 - s, 1 - s, 0))
            connect("occlusion", float1, shader, "r", float1)
        self.looks[key] = look.GetPath()
        return look

    # --- clips -------------------------------------------------------------------------------
    def _animations(self, rigs) -> None:
        from pxr import UsdGeom, UsdSkel

        scene, stage = self.scene, self.stage
        clips = list(scene.animations)
        rate, codes = _timeline(clips)
        stage.SetTimeCodesPerSecond(rate)
        stage.SetFramesPerSecond(rate)
        stage.SetStartTimeCode(0)
        if not rigs:
            if clips:
                self.warnings.append(f"{len(clips)} clip{'s' if len(clips) > 1 else ''} moving nothing written "
                                     "were left out")
            return
        current = {id(rig): self._sample_now(rig) for rig in rigs}
        # The nodes a clip moves that no skeleton prim carries (written still, at their pose now)
        carried = set().union(*(rig.nodes() for rig in rigs))
        still = {channel.node.name for clip in clips for channel in clip.channels if id(channel.node) not in carried}
        if still:
            listed = ", ".join(sorted(still)[:5]) + (", ..." if len(still) > 5 else "")
            self.warnings.append(f"clips move {len(still)} node{'s' if len(still) > 1 else ''} no skeleton or mesh "
                                 f"depends on, written still ({listed})")
        folder = None
        clip_names = _Names()
        bound: dict[int, str] = {}
        end = 0.0
        snapshot = _Snapshot(scene, clips)
        half_lossy = 0.0
        try:
            for clip, clip_codes in zip(clips, codes):
                moved = [rig for rig in rigs if rig.moved_by(clip)]
                if folder is None:
                    folder = UsdGeom.Scope.Define(stage, f"{self.root}/Animations").GetPath()
                name = clip_names.take(clip.name, "clip")
                several = len(rigs) > 1
                clip_path = folder.AppendChild(name)
                samples = self._sample(clip, clip_codes, moved, snapshot)
                if several:
                    holder = UsdGeom.Scope.Define(stage, clip_path).GetPrim()
                    paths = {id(rig): clip_path.AppendChild(_identifier(rig.path.rsplit("/", 1)[1], "skeleton"))
                             for rig in moved}
                else:
                    paths = {id(rig): clip_path for rig in moved}
                for rig in moved:
                    lossy = self._animation(rig, paths[id(rig)], current[id(rig)], samples[id(rig)])
                    half_lossy = max(half_lossy, lossy)
                    if id(rig) not in bound:
                        bound[id(rig)] = str(paths[id(rig)])
                        end = max(end, float(clip_codes[-1][0]) if clip_codes else 0.0)
                if not several:
                    holder = stage.GetPrimAtPath(clip_path)
                    if not holder:  # a clip that moves nothing here: an empty animation keeps its name and length
                        holder = UsdSkel.Animation.Define(stage, clip_path).GetPrim()
                holder.SetDisplayName(str(clip.name))
                holder.SetCustomDataByKey("boneviewer:clip", str(clip.name))
                holder.SetCustomDataByKey("boneviewer:duration", float(clip.duration))
        finally:
            snapshot.restore()
            scene.prepare()
        for rig in rigs:  # a rig with blend shapes that no clip moves: its weights as an animation
            if id(rig) not in bound and any(id(mesh) in self.blend_tokens for mesh in rig.meshes):
                path = f"{rig.path}/Pose"
                self._animation(rig, path, current[id(rig)], [])
                bound[id(rig)] = path
        for rig in rigs:
            if id(rig) in bound:
                UsdSkel.BindingAPI(stage.GetPrimAtPath(rig.path)).CreateAnimationSourceRel().SetTargets(
                    [bound[id(rig)]])
        stage.SetEndTimeCode(end)
        if half_lossy > HALF_WARNING:
            self.warnings.append(f"UsdSkel stores joint scales as half floats: the clips' scales are written to "
                                 f"three significant digits (changed by up to {half_lossy:.1e} of themselves)")

    def _sample_now(self, rig):
        """(translations, rotations, scales, blend shape weights) of the rig as it is now."""
        translations, rotations, scales = rig.pose()
        return translations, rotations, scales, self._weights(rig)

    def _weights(self, rig, clip=None) -> np.ndarray:
        """The rig's blend shape weights, its meshes' groups in order: as drawn now; at the
        default time (``clip`` None) a skinned mesh's are 0 when the pose is applied as bind (the
        morph is baked into its points), and stay so in a clip that does not key them."""
        weights, seen = [], set()
        for mesh in rig.meshes:
            tokens = self.blend_tokens.get(id(mesh))
            if tokens is None or id(tokens) in seen:
                continue
            seen.add(id(tokens))
            baked = self.apply_pose_as_bind and mesh.skeleton is not None
            if baked and (clip is None or not _moves_morphs(clip, [mesh])):
                weights.append(np.zeros(len(tokens)))
            else:
                weights.append(np.asarray(mesh.morph_weights, dtype=np.float64))
        return np.concatenate(weights) if weights else np.zeros(0)

    def _rig_tokens(self, rig) -> list[str]:
        tokens, seen = [], set()
        for mesh in rig.meshes:
            group = self.blend_tokens.get(id(mesh))
            if group is not None and id(group) not in seen:
                seen.add(id(group))
                tokens.extend(group)
        return tokens

    def _sample(self, clip, clip_codes, rigs, snapshot) -> dict:
        """Per rig (by id), [(time code, (translations, rotations, scales, weights))] of ``clip``
        played from the pose now at each of its time codes."""
        samples = {id(rig): [] for rig in rigs}
        if not rigs:
            return samples
        snapshot.restore()
        scene = self.scene
        for code, seconds in clip_codes:
            clip.apply(seconds)
            scene.prepare()
            for rig in rigs:
                translations, rotations, scales = rig.pose()
                samples[id(rig)].append((code, (translations, rotations, scales, self._weights(rig, clip))))
        return samples

    def _animation(self, rig, path, current, samples) -> float:
        """One SkelAnimation: the pose now as the default values, the samples as time samples.
        Returns the largest relative change a half float made to a scale of the clip.""" 
        from pxr import Vt, UsdSkel

        animation = UsdSkel.Animation.Define(self.stage, path)
        animation.CreateJointsAttr(rig.joint_paths)
        attributes = (animation.CreateTranslationsAttr(), animation.CreateRotationsAttr(),
                      animation.CreateScalesAttr())
        tokens = self._rig_tokens(rig)
        weights_attribute = None
        if tokens:
            animation.CreateBlendShapesAttr(tokens)
            weights_attribute = animation.CreateBlendShapeWeightsAttr()
        lossy = 0.0

        def put(values, time) -> float:
            translations, rotations, scales, weights = values
            if not (fits(translations) and fits(rotations) and fits(scales) and fits(weights)):
                raise ViewerError(f"skeleton {rig.name!r}: a clip's pose holds {OUT_OF_RANGE}; nothing was written")
            halves = np.asarray(scales, dtype=np.float16)
            if not np.isfinite(halves).all():
                raise ViewerError(f"skeleton {rig.name!r}: a scale is too large for USD's half floats; "
                                  "nothing was written")
            arrays = (Vt.Vec3fArray.FromNumpy(np.ascontiguousarray(translations, dtype=np.float32)),
                      Vt.QuatfArray.FromNumpy(np.ascontiguousarray(rotations, dtype=np.float32)),
                      Vt.Vec3hArray.FromNumpy(np.ascontiguousarray(halves)))
            for attribute, array in zip(attributes, arrays):
                attribute.Set(array, time)
            if weights_attribute is not None:
                weights_attribute.Set(Vt.FloatArray.FromNumpy(np.ascontiguousarray(weights, dtype=np.float32)), time)
            error = np.abs(halves.astype(np.float64) - scales) / np.maximum(np.abs(scales), 1e-30)
            return float(error.max(initial=0.0))

        from pxr import Usd

        put(current, Usd.TimeCode.Default())
        for code, values in samples:
            lossy = max(lossy, put(values, float(code)))
        return lossy


class _Snapshot:
    """The pose the clips' nodes and morph meshes have now, to restore after sampling clips."""

    def __init__(self, scene, clips):
        self.scene = scene
        seen, self.nodes = set(), []
        for clip in clips:
            for channel in clip.channels:
                node = channel.node
                if id(node) not in seen:
                    seen.add(id(node))
                    self.nodes.append((node, np.array(node.position), np.array(node.rotation_quaternion),
                                       np.array(node.scaling)))
        self.weights = [(mesh, np.array(mesh.morph_weights)) for mesh in scene.morph_meshes]

    def restore(self) -> None:
        for node, position, rotation, scaling in self.nodes:
            node.position, node.rotation_quaternion, node.scaling = position, rotation, scaling
        for mesh, weights in self.weights:
            mesh.morph_weights = weights


def _timeline(clips) -> tuple[int, list[list[tuple[float, float]]]]:
    """(timeCodesPerSecond, per clip its sorted [(time code, seconds to sample the clip at)])."""
    channels_of = []
    all_times = []
    for clip in clips:
        channels = list(clip.channels) + list(getattr(clip, "morph_channels", ()))
        channels_of.append(channels)
        all_times.extend(np.asarray(channel.times, dtype=np.float64).reshape(-1) for channel in channels)
    times = np.concatenate(all_times) if all_times else np.zeros(0)
    rate, snapped = DEFAULT_RATE, False
    for candidate in RATES:
        frames = times * candidate
        if np.all(np.abs(frames - np.round(frames)) <= ON_FRAME):
            rate, snapped = candidate, True
            break
    result = []
    for channels in channels_of:
        codes: dict[float, float] = {}
        extra: dict[float, float] = {}
        for channel in channels:
            keys = np.asarray(channel.times, dtype=np.float64).reshape(-1)
            key_codes = np.round(keys * rate) if snapped else keys * rate
            for code, seconds in zip(key_codes.tolist(), keys.tolist()):
                codes.setdefault(code, seconds)
            if channel.interpolation == "STEP":
                for code in key_codes[1:].tolist():
                    extra.setdefault(code - STEP_EPSILON, (code - STEP_EPSILON) / rate)
            elif channel.interpolation == "CUBICSPLINE" and len(keys) > 1:
                first, last = int(np.floor(key_codes[0])) + 1, int(np.ceil(key_codes[-1]))
                for code in range(first, last):
                    extra.setdefault(float(code), code / rate)
        for code, seconds in extra.items():
            codes.setdefault(code, seconds)
        result.append(sorted(codes.items()))
    return rate, result


def _usd_uv_transform(matrix) -> tuple[float, tuple, tuple]:
    """UsdTransform2d's (rotation in degrees, scale, translation) of a KHR_texture_transform
    3x3 (for glTF's (u, v, 1), V down), in USD's st (t = 1 - v): F @ M @ F with F the flip."""
    flip = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 1.0], [0.0, 0.0, 1.0]])
    n = flip @ np.asarray(matrix, dtype=np.float64) @ flip
    linear = n[:2, :2]
    angle = float(np.arctan2(linear[1, 0], linear[0, 0]))
    c, s = np.cos(angle), np.sin(angle)
    scale = (float(np.hypot(linear[0, 0], linear[1, 0])), float(-s * linear[0, 1] + c * linear[1, 1]))
    return float(np.degrees(angle)), scale, (float(n[0, 2]), float(n[1, 2]))
