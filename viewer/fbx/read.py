"""The FBX reading child (see ``viewer.isolated``): reads FILE with ufbx and writes what
boneviewer needs of it to stdout, or one line of error to stderr and exit 2.

This is the only module that imports ufbx. It runs in a process of its own (``viewer.fbx``
starts it), so that a fault in the compiled reader, or in its generated Python bindings, is an
error message and never the end of the viewer. It imports nothing but ufbx and the standard
library and ``protocol`` (not even numpy: the child starts in a tenth of a second), and hands
back the file's own arrays; ``viewer.fbx.meshes`` does the array work in the viewer's process.

The bindings (ufbx 0.0.5) free an element's wrapper while another wrapper of the same element
may still point at it, and fault at interpreter exit: every wrapper read here is kept alive in
``_KEEP`` until ``os._exit``, which skips the interpreter's teardown.

What is read, in the file's own units and axes:
- nodes: names, parents, local translation / rotation (xyzw) / scale with every FBX transform
  feature resolved by ufbx (pre/post rotation, rotation order, pivots and offsets); geometric
  transforms become helper nodes, and scale inheritance other than the normal one (Maya's
  segment scale compensate) is compensated or given helper nodes, so each node is a plain TRS
  under standard inheritance;
- meshes (one per node instance): control points, each polygon corner's indices (position,
  normal, UV, colour), the polygons and their materials, the skin clusters (their
  geometry-to-bone matrices: the deformer's bind, not a bind pose's) and blend shapes;
- materials: base colour factor and texture (its file name as written, or its embedded bytes);
- every animation stack, baked by ufbx at the file's frame rate: each node's translation,
  rotation and scale keys and each blend-shape channel's weight, at the file's own times.
"""

from __future__ import annotations

import array
import sys

import protocol
from protocol import FileProblem

_KEEP: list = []  # every ufbx wrapper read, alive until os._exit (see the module's docstring)

# Bounds on what one file may cost, checked on ufbx's counts before anything is gathered.
MAX_NODES = 200_000
MAX_CORNERS = 50_000_000  # polygon corners over all meshes (each mesh instance counted)
MAX_KEYS = 50_000_000  # baked keyframes over all stacks
MAX_MORPH_TARGETS = 256  # blend shape channels of one mesh (as viewer.model.morph)
MAX_DEPTH = 4096  # levels of the node hierarchy (as glTF's)
MAX_STACKS = 1000


def keep(value):
    _KEEP.append(value)
    return value


def items(collection) -> list:
    """The elements of a ufbx list, each kept alive."""
    keep(collection)
    return [keep(item) for item in collection]


class Blobs(protocol.Blobs):
    """The protocol's arrays, with ufbx's lists read in."""

    def vectors(self, name: str, collection, width: int) -> int:
        """A ufbx list of vectors as (n, width) float64 (by the buffer protocol where the bindings
        offer it); returns n."""
        keep(collection)
        count = len(collection)
        try:
            view = keep(memoryview(collection))
            self.buffer(name, view, [count, width])
            if view.nbytes != 8 * width * count:
                raise FileProblem(f"{name}: {view.nbytes} bytes for {count} vectors of {width}")
        except TypeError:
            letters = "xyzw"[:width]
            self.numbers(name, "d", [getattr(v, letter) for v in collection for letter in letters], width)
        return count

    def uints(self, name: str, collection) -> int:
        keep(collection)
        return self.numbers(name, "I", collection)

    def doubles(self, name: str, values: list, width: int | None = None) -> None:
        self.numbers(name, "d", values, width)


def matrix_rows(matrix) -> list:
    """A ufbx Matrix (3x4, column vectors) in boneviewer's row-vector 4x4 layout, as 16 numbers."""
    rows = []
    for column in (matrix.c0, matrix.c1, matrix.c2, matrix.c3):
        rows += [column.x, column.y, column.z, 0.0]
    rows[15] = 1.0
    return rows


def _product(a: list, b: list) -> list:
    """The product a @ b of two row-vector 4x4 matrices given as 16 numbers each (ufbx's own
    matrix_mul is not usable from its generated bindings)."""
    return [sum(a[4 * i + k] * b[4 * k + j] for k in range(4)) for i in range(4) for j in range(4)]


def read(path: str) -> tuple[dict, Blobs]:
    """(document, arrays) of the FBX file at ``path``."""
    import ufbx

    try:
        scene = keep(ufbx.load_file(
            path, geometry_transform_handling=ufbx.GeometryTransformHandling.HELPER_NODES,
            inherit_mode_handling=ufbx.InheritModeHandling.COMPENSATE, node_depth_limit=MAX_DEPTH,
            ignore_missing_external_files=True))
    except ufbx.UfbxError as error:
        raise FileProblem(_ufbx_message(error)) from None
    blobs = Blobs()
    metadata, settings = keep(scene.metadata), keep(scene.settings)
    axes = keep(settings.axes)
    doc = {
        "version": int(metadata.version), "ascii": bool(metadata.ascii),
        "creator": str(metadata.creator), "application": _application(metadata),
        "axes": {"right": int(axes.right), "up": int(axes.up), "front": int(axes.front)},
        "unit_meters": float(settings.unit_meters), "fps": float(settings.frames_per_second),
        "warnings": [str(keep(w).description) for w in items(metadata.warnings)],
    }
    nodes = items(scene.nodes)
    if len(nodes) > MAX_NODES:
        raise FileProblem(f"{len(nodes)} nodes, more than the {MAX_NODES} boneviewer reads")
    doc["nodes"] = [_node(node) for node in nodes]

    meshes = items(scene.meshes)
    corners = sum(int(mesh.num_indices) * max(1, len(mesh.instances)) for mesh in meshes)
    if corners > MAX_CORNERS:
        raise FileProblem(f"{corners} polygon corners, more than the {MAX_CORNERS} boneviewer reads")
    materials: dict[int, int] = {}  # ufbx element id -> index in doc["materials"]
    doc["materials"], doc["meshes"] = [], []
    for mesh in meshes:
        instances = items(mesh.instances)
        if instances:
            _mesh(mesh, instances, doc, blobs, materials)

    fps = doc["fps"] if doc["fps"] > 0 else 30.0
    stacks = items(scene.anim_stacks)
    if len(stacks) > MAX_STACKS:
        raise FileProblem(f"{len(stacks)} animation stacks, more than the {MAX_STACKS} boneviewer reads")
    doc["stacks"] = []
    channels = {c["element_id"] for m in doc["meshes"] for c in m["channels"]}
    total = 0
    for k, stack in enumerate(stacks):
        try:
            baked = keep(ufbx.bake_anim(scene, keep(stack.anim), resample_rate=fps, minimum_sample_rate=fps))
        except ufbx.UfbxError as error:
            raise FileProblem(f"animation stack {stack.name!r}: {_ufbx_message(error)}") from None
        record = {"name": str(stack.name), "begin": float(stack.time_begin), "end": float(stack.time_end),
                  "nodes": [], "weights": []}
        for baked_node in items(baked.nodes):
            node = int(baked_node.typed_id)
            for path, attribute, width in (("t", "translation_keys", 3), ("r", "rotation_keys", 4),
                                           ("s", "scale_keys", 3)):
                keys = items(getattr(baked_node, attribute))
                total += len(keys)
                if total > MAX_KEYS:
                    raise FileProblem(f"more than {MAX_KEYS} animation keys")
                name = f"stack{k}.node{node}.{path}"
                blobs.doubles(name + ".times", [key.time for key in keys])
                values = []
                for key in keys:
                    value = keep(key.value)
                    values += (value.x, value.y, value.z, value.w) if width == 4 else (value.x, value.y, value.z)
                blobs.doubles(name + ".values", values, width)
            record["nodes"].append(node)
        for element in items(baked.elements):
            channel = int(element.element_id)
            if channel not in channels:
                continue
            for prop in items(element.props):
                if prop.name != "DeformPercent":
                    continue
                keys = items(prop.keys)
                total += len(keys)
                if total > MAX_KEYS:
                    raise FileProblem(f"more than {MAX_KEYS} animation keys")
                name = f"stack{k}.weight{channel}"
                blobs.doubles(name + ".times", [key.time for key in keys])
                blobs.doubles(name + ".values", [keep(key.value).x for key in keys])
                record["weights"].append(channel)
        doc["stacks"].append(record)
    return doc, blobs


def _application(metadata) -> str:
    application = keep(metadata.latest_application)
    parts = (str(application.vendor), str(application.name), str(application.version))
    return " ".join(part for part in parts if part)


def _node(node) -> dict:
    transform = keep(node.local_transform)
    t, r, s = keep(transform.translation), keep(transform.rotation), keep(transform.scale)
    parent = keep(node.parent)
    return {
        "name": str(node.name), "parent": -1 if parent is None or parent.is_root else int(parent.typed_id),
        "root": bool(node.is_root), "t": [t.x, t.y, t.z], "r": [r.x, r.y, r.z, r.w], "s": [s.x, s.y, s.z],
        "helper": "geometry" if node.is_geometry_transform_helper else "scale" if node.is_scale_helper else "",
        "bone": keep(node.bone) is not None,  # a LimbNode (a skeleton's joint), mesh or not
    }


def _mesh(mesh, instances: list, doc: dict, blobs: Blobs, materials: dict) -> None:
    """A mesh's arrays (once), and an entry per node instance that shows it."""
    index = len(doc["meshes"])
    name = f"mesh{index}"
    faces = keep(mesh.faces)
    try:
        blobs.entries[name + ".faces"] = ("<u4", [len(faces), 2], keep(memoryview(faces)).tobytes())
    except TypeError:
        blobs.entries[name + ".faces"] = ("<u4", [len(faces), 2], array.array(
            "I", [n for face in faces for n in (keep(face).index_begin, face.num_indices)]).tobytes())
    position = keep(mesh.vertex_position)
    points = blobs.vectors(name + ".points", position.values, 3)
    blobs.uints(name + ".points.index", position.indices)
    attributes = []
    for label, attribute, width in (("normals", "vertex_normal", 3), ("uv", "vertex_uv", 2),
                                    ("colors", "vertex_color", 4)):
        data = keep(getattr(mesh, attribute))
        if data.exists:
            blobs.vectors(f"{name}.{label}", data.values, width)
            blobs.uints(f"{name}.{label}.index", data.indices)
            attributes.append(label)
    blobs.uints(name + ".face_material", mesh.face_material)
    mesh_materials = [_material(material, doc, blobs, materials) for material in items(mesh.materials)]
    entry = {"mesh_name": str(mesh.name), "instances": [{"name": _instance_name(node, mesh),
                                                         "node": int(node.typed_id)} for node in instances],
             "points": points, "attributes": attributes, "materials": mesh_materials,
             "clusters": [], "channels": [], "notes": []}
    _skin(mesh, entry, blobs, name)
    _blend_shapes(mesh, entry, blobs, name)
    doc["meshes"].append(entry)


def _instance_name(node, mesh) -> str:
    """A mesh instance's name: its node's (the node a geometric-transform helper stands under),
    else the mesh's."""
    if node.is_geometry_transform_helper and keep(node.parent) is not None:
        node = keep(node.parent)
    return str(node.name) or str(mesh.name)


def _skin(mesh, entry: dict, blobs: Blobs, name: str) -> None:
    deformers = items(mesh.skin_deformers)
    if not deformers:
        return
    if len(deformers) > 1:
        entry["notes"].append(f"{len(deformers)} skin deformers; the first is used")
    skin = deformers[0]
    method = keep(skin.skinning_method)
    if int(method) != 0:  # 0: linear; rigid, dual quaternion and blended are drawn linear
        entry["notes"].append(f"skinning method {method.name.lower()} drawn as linear blend skinning")
    clusters = items(skin.clusters)
    binds, counts = [], []
    point_lists, weight_lists = [], []
    for cluster in clusters:
        bone = keep(cluster.bone_node)
        entry["clusters"].append(-1 if bone is None else int(bone.typed_id))
        binds += matrix_rows(keep(cluster.geometry_to_bone))
        point_lists.append(array.array("I", keep(cluster.vertices)))
        weights = keep(cluster.weights)
        try:
            weight_lists.append(keep(memoryview(weights)).tobytes())
        except TypeError:
            weight_lists.append(array.array("d", weights).tobytes())
        counts.append(len(point_lists[-1]))
        if len(weight_lists[-1]) != 8 * counts[-1]:
            raise FileProblem(f"mesh {entry['mesh_name']!r}: skin cluster {cluster.name!r} has "
                              f"{len(weight_lists[-1]) // 8} weights for {counts[-1]} vertices")
    blobs.doubles(name + ".binds", binds, 16)
    # Where the mesh's geometry was in the world when it was bound: geometry to the first cluster's
    # bone, then that bone's world at bind (TransformLink). Not ufbx's geometry_to_world, which is
    # that bone's world now (the pose the file was saved in) after geometry-to-bone: with it the
    # whole bind pose came out moved as far as that bone had moved from its bind.
    blobs.doubles(name + ".bind_world", _product(binds[:16], matrix_rows(keep(clusters[0].bind_to_world)))
                  if clusters else [1.0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0], 16)
    blobs.entries[name + ".cluster_points"] = ("<u4", [sum(counts)], b"".join(p.tobytes() for p in point_lists))
    blobs.entries[name + ".cluster_weights"] = ("<f8", [sum(counts)], b"".join(weight_lists))
    blobs.entries[name + ".cluster_counts"] = ("<u4", [len(counts)], array.array("I", counts).tobytes())


def _blend_shapes(mesh, entry: dict, blobs: Blobs, name: str) -> None:
    in_betweens = 0
    for deformer in items(mesh.blend_deformers):
        for channel in items(deformer.channels):
            keyframes = items(channel.keyframes)
            if not keyframes:
                continue
            if len(entry["channels"]) >= MAX_MORPH_TARGETS:
                raise FileProblem(f"mesh {entry['mesh_name']!r}: more than {MAX_MORPH_TARGETS} blend shapes")
            in_betweens += len(keyframes) - 1
            shape = keep(keyframes[-1].shape)  # the full-weight shape; in-betweens are left out
            k = len(entry["channels"])
            count = blobs.uints(f"{name}.shape{k}.points", shape.offset_vertices)
            blobs.vectors(f"{name}.shape{k}.positions", shape.position_offsets, 3)
            normals = keep(shape.normal_offsets)
            if len(normals) == count:
                blobs.vectors(f"{name}.shape{k}.normals", normals, 3)
            entry["channels"].append({"element_id": int(channel.element_id), "name": str(channel.name),
                                      "weight": float(channel.weight),
                                      "target_weight": float(keyframes[-1].target_weight)})
    if in_betweens:
        entry["notes"].append(f"{in_betweens} in-between blend shapes left out (each channel's full-weight shape "
                              "is used)")


def _material(material, doc: dict, blobs: Blobs, materials: dict) -> int:
    key = int(material.element_id)
    if key in materials:
        return materials[key]
    pbr, fbx = keep(material.pbr), keep(material.fbx)
    base, base_factor, opacity_map = keep(pbr.base_color), keep(pbr.base_factor), keep(pbr.opacity)
    color = keep(base.value_vec4)
    factor = float(keep(base_factor.value_vec4).x) if base_factor.has_value else 1.0
    opacity = float(keep(opacity_map.value_vec4).x) if opacity_map.has_value else 1.0
    entry = {"name": str(material.name), "color": [color.x * factor, color.y * factor, color.z * factor, opacity],
             "texture": None, "texture_embedded": None}
    texture = keep(base.texture)
    if texture is None:
        texture = keep(keep(fbx.diffuse_color).texture)
    if texture is not None:
        content = bytes(texture.content)
        names = {"relative": str(texture.relative_filename), "absolute": str(texture.absolute_filename),
                 "filename": str(texture.filename)}
        if content or any(value not in ("", ".") for value in names.values()):
            entry["texture"] = names  # (Blender writes "." for an image it did not save: no file)
        if content:
            label = f"material{len(doc['materials'])}.texture"
            blobs.raw(label, content)
            entry["texture_embedded"] = label
    materials[key] = len(doc["materials"])
    doc["materials"].append(entry)
    return materials[key]


def _ufbx_message(error) -> str:
    """ufbx's error in words ("Failed to load" is all it says of a file cut short)."""
    text = " ".join(str(error).split()) or type(error).__name__
    if text == "Failed to load":
        return "it is damaged or cut short (ufbx: Failed to load)"
    return text[:300]


if __name__ == "__main__":
    protocol.serve(read, sys.argv[1:])
