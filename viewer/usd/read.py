"""The USD reading child (see ``viewer.isolated``): opens FILE (.usd, .usda, .usdc, .usdz) with
usd-core and writes what boneviewer needs of it to stdout, or one line of error to stderr and
exit 2. The only module that imports pxr; standard library and ``protocol`` besides (no numpy:
usd-core's arrays are handed over by the buffer protocol); ``viewer.usd.build`` does the
array work in the viewer's process.

What is read, in the stage's own units and up axis, at its default time unless said:
- the stage: metersPerUnit, upAxis, timeCodesPerSecond;
- each UsdSkel binding found by UsdSkel.Cache under each SkelRoot (the skeleton a mesh's
  skel:skeleton names, on it or inherited, as UsdSkel resolves it): the Skeleton's joints, rest
  and bind transforms, its prim's world transform, its bound animation and every other
  SkelAnimation under the same SkelRoot (each a clip, its joint transforms at every authored
  time sample), and each skinned mesh with its influences (in the skeleton's joint order),
  geomBindTransform and blend shapes;
- every other mesh with its world transform;
- a mesh's points authored at several time samples (a point cache, as DCCs and simulations bake
  them): its points (and time-sampled vertex normals) at each sample, played as a vertex
  animation (``_point_cache``);
- materials bound to meshes (UsdPreviewSurface:
  diffuse colour or texture, metallic, roughness, opacity, emissive), textures' bytes read
  through USD's resolver (so a .usdz's packed images are read from the package).
"""

from __future__ import annotations

import os
import sys

import protocol
from protocol import FileProblem

MAX_PRIMS = 1_000_000
MAX_CORNERS = 50_000_000
MAX_SAMPLES = 100_000  # time samples of one animation
MAX_JOINTS = 100_000
MAX_MORPH_TARGETS = 256
# A mesh's time-sampled points (a point cache) play as morph targets, one a sample after the
# first (viewer.model.morph.MAX_MORPH_TARGETS); the points read in all are bounded before any is.
MAX_CACHE_SAMPLES = MAX_MORPH_TARGETS + 1
MAX_CACHE_VALUES = 4_000_000  # points x time samples of one mesh's point cache
INTERPOLATIONS = ("faceVarying", "vertex", "varying", "uniform", "constant")
CLIP_FIELDS = ("translations", "rotations", "scales")  # a clip's arrays: <skeleton>.clip<c>.<field>


CRATE_MAGIC = b"PXR-USDC"
CRATE_SECTION = 32  # a table-of-contents entry: name (16 bytes), start, size (int64 each)


def check_crate(path: str) -> None:
    """A binary (crate) layer's table of contents must lie inside the file: usd-core sizes its
    reads by the section count first, so a damaged count had it spend tens of seconds on a
    4 KB file (found by scripts/fuzz.py usd --children) before it said 'out of bounds'."""
    import struct

    with open(path, "rb") as file:
        head = file.read(24)
        if not head.startswith(CRATE_MAGIC):
            return
        size = os.fstat(file.fileno()).st_size
        if len(head) < 24:
            raise FileProblem("its crate (.usdc) header is cut short")
        (toc,) = struct.unpack_from("<q", head, 16)
        if not 24 <= toc <= size - 8:
            raise FileProblem(f"its crate (.usdc) table of contents at byte {toc} is outside the file ({size} bytes)")
        file.seek(toc)
        (count,) = struct.unpack("<Q", file.read(8))
        if count * CRATE_SECTION > size - toc - 8:
            raise FileProblem(f"its crate (.usdc) table of contents claims {count} sections, more than the file's "
                              f"{size} bytes hold")
        for name, start, length in struct.iter_unpack("<16sqq", file.read(count * CRATE_SECTION)):
            if start < 0 or length < 0 or start + length > size:
                raise FileProblem(f"its crate (.usdc) section {name.rstrip(bytes(1)).decode('ascii', 'replace')!r} "
                                  f"(bytes {start} to {start + length}) runs outside the file ({size} bytes)")


def read(path: str):
    try:
        return _read(path)
    except TypeError as error:  # a value of another type than its schema's where the reader takes it as is
        raise FileProblem(f"a value in it is not of the type its schema gives it ({error})") from None


def _read(path: str):
    from pxr import Ar, Tf, Usd, UsdGeom, UsdShade, UsdSkel

    check_crate(path)
    try:
        stage = Usd.Stage.Open(path, Usd.Stage.LoadAll)
    except Tf.ErrorException as error:
        raise FileProblem(_tf_message(error, path)) from None
    if stage is None:
        raise FileProblem("usd-core could not open it")
    warnings = _time_rates(stage, Tf)
    blobs = protocol.Blobs()
    doc = {
        "meters_per_unit": float(UsdGeom.GetStageMetersPerUnit(stage)),
        "meters_authored": bool(UsdGeom.StageHasAuthoredMetersPerUnit(stage)),
        "up": str(UsdGeom.GetStageUpAxis(stage)).lower(),
        "tcps": float(stage.GetTimeCodesPerSecond()),
        "default_prim": str(stage.GetDefaultPrim().GetPath()) if stage.GetDefaultPrim() else "",
        "skeletons": [], "meshes": [], "materials": [], "warnings": warnings,
    }
    # Geometry and transforms authored only as time samples have no default value: they are
    # read at the stage's earliest time (the default value where there is one).
    first = Usd.TimeCode.EarliestTime()
    prims = 0
    cache = UsdSkel.Cache()
    skinned_meshes = set()
    materials: dict[str, int] = {}
    meshes = []
    roots = []
    for prim in stage.Traverse(Usd.TraverseInstanceProxies()):
        prims += 1
        if prims > MAX_PRIMS:
            raise FileProblem(f"more than {MAX_PRIMS} prims")
        if prim.IsA(UsdSkel.Root):
            roots.append(UsdSkel.Root(prim))
        elif prim.IsA(UsdGeom.Mesh):
            meshes.append(prim)
    try:
        for root in roots:
            cache.Populate(root, Usd.TraverseInstanceProxies())
            for binding in cache.ComputeSkelBindings(root, Usd.TraverseInstanceProxies()):
                skeleton = _skeleton(binding, cache, root, stage, doc, blobs, Usd, UsdGeom, UsdSkel, first)
                for query in binding.GetSkinningTargets():
                    prim = query.GetPrim()
                    if not prim.IsA(UsdGeom.Mesh):
                        doc["warnings"].append(f"{prim.GetPath()}: a skinned {prim.GetTypeName()} is not drawn")
                        continue
                    skinned_meshes.add(str(prim.GetPath()))
                    entry = _mesh(prim, doc, blobs, materials, Ar, Usd, UsdGeom, UsdShade, first)
                    if entry is None:
                        continue
                    _influences(query, skeleton, entry, doc, blobs, UsdSkel)
                    _blend_shapes(prim, query, entry, blobs, Usd, UsdSkel)
                    _point_cache(prim, entry, doc, blobs, Usd, UsdGeom)
        if not meshes:  # a skeleton and its motion, no mesh: every Skeleton under a SkelRoot
            for root in roots:
                for prim in Usd.PrimRange(root.GetPrim(), Usd.TraverseInstanceProxies()):
                    if prim.IsA(UsdSkel.Skeleton):
                        _skeleton(_Unbound(UsdSkel.Skeleton(prim)), cache, root, stage, doc, blobs, Usd, UsdGeom,
                                  UsdSkel, first)
        for prim in meshes:
            if str(prim.GetPath()) not in skinned_meshes:
                entry = _mesh(prim, doc, blobs, materials, Ar, Usd, UsdGeom, UsdShade, first)
                if entry is not None:
                    entry["world"] = _matrix(UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(first))
                    _moving(prim, entry["blob"], entry, blobs, Usd, UsdGeom)
                    _point_cache(prim, entry, doc, blobs, Usd, UsdGeom)
    except Tf.ErrorException as error:
        raise FileProblem(_tf_message(error, path)) from None
    return doc, blobs


class _Unbound:
    """A Skeleton no mesh binds, standing in for the binding ``_skeleton`` reads it from."""

    def __init__(self, skeleton):
        self.skeleton = skeleton

    def GetSkeleton(self):  # noqa: N802 (UsdSkel.Binding's name)
        return self.skeleton


def _time_rates(stage, Tf) -> list:
    """A layer whose timeCodesPerSecond is not a positive number is read at USD's default, 24, in
    memory (said in a warning): usd-core maps a sublayer's times by the ratio of the two rates,
    and on a root of 0 over a sublayer of 24 it never returns (tests/usd_edge_stages.py, rate_zero)."""
    import math

    said = []
    for layer in stage.GetUsedLayers():
        if not layer.HasTimeCodesPerSecond():
            continue
        rate = layer.timeCodesPerSecond
        if rate > 0 and math.isfinite(rate):
            continue
        try:
            layer.timeCodesPerSecond = 24.0
        except Tf.ErrorException:
            raise FileProblem(f"timeCodesPerSecond {rate:g} in {layer.identifier}: time codes need a positive rate") from None
        where = "" if layer == stage.GetRootLayer() else f" in its layer {layer.identifier}"
        said.append(f"timeCodesPerSecond {rate:g}{where}: read as 24 (USD's default)")
    return said


def _matrix(matrix) -> list:
    """A Gf.Matrix4d as 16 numbers, row by row (USD's layout is boneviewer's: row vectors)."""
    return [float(matrix[i][j]) for i in range(4) for j in range(4)]


def _skeleton(binding, cache, root, stage, doc, blobs, Usd, UsdGeom, UsdSkel, first) -> int:
    skeleton = binding.GetSkeleton()
    path = str(skeleton.GetPrim().GetPath())
    for k, known in enumerate(doc["skeletons"]):
        if known["path"] == path:
            return k
    query = cache.GetSkelQuery(skeleton)
    if not query:
        raise FileProblem(f"skeleton {path}: UsdSkel finds it invalid (its joints or transforms do not agree)")
    joints = [str(joint) for joint in query.GetJointOrder()]
    if len(joints) > MAX_JOINTS:
        raise FileProblem(f"skeleton {path}: {len(joints)} joints, more than {MAX_JOINTS}")
    k = len(doc["skeletons"])
    name = f"skeleton{k}"
    rest = _array(skeleton.GetRestTransformsAttr(), Usd.TimeCode.Default(), "d", (4, 4))
    bind = _array(skeleton.GetBindTransformsAttr(), Usd.TimeCode.Default(), "d", (4, 4))
    if bind is None and skeleton.GetBindTransformsAttr().Get() is not None:
        raise FileProblem(f"skeleton {path}: bindTransforms "
                          f"{_authored_type(skeleton.GetBindTransformsAttr(), Usd.TimeCode.Default())}, not matrix4d[]")
    if bind is None or len(bind) != len(joints):
        count = 0 if bind is None else len(bind)
        raise FileProblem(f"skeleton {path}: {count} bindTransforms for {len(joints)} joints")
    if rest is None or len(rest) != len(joints):
        rest = memoryview(query.ComputeJointLocalTransforms(Usd.TimeCode.Default(), True))  # UsdSkel's own rest
        if len(rest) != len(joints):
            attribute = skeleton.GetRestTransformsAttr()
            kind = "no restTransforms" if attribute.Get() is None else f"restTransforms {_authored_type(attribute)}"
            raise FileProblem(f"skeleton {path}: {kind}, not matrix4d[] of its {len(joints)} joints: UsdSkel "
                              "computes no rest pose from it")
    blobs.buffer(name + ".rest", rest, [len(joints), 4, 4])
    blobs.buffer(name + ".bind", bind, [len(joints), 4, 4])
    world = UsdGeom.Xformable(skeleton.GetPrim()).ComputeLocalToWorldTransform(first)
    # Each joint's parent as UsdSkel has it (the nearest ancestor path among the joints), and its
    # name: the schema's jointNames where the file gives them, else its path's last part.
    parents = [int(i) for i in query.GetTopology().GetParentIndices()]
    names = skeleton.GetJointNamesAttr().Get() if skeleton.GetJointNamesAttr() else None
    names = [str(n) for n in names] if names is not None and len(names) == len(joints) else None
    entry = {"path": path, "name": skeleton.GetPrim().GetName(), "joints": joints, "world": _matrix(world),
             "clips": [], "parents": parents, "names": names}
    _moving(skeleton.GetPrim(), name, entry, blobs, Usd, UsdGeom)
    bound = query.GetAnimQuery()
    animations = []
    if bound:
        animations.append(bound.GetPrim())
    for prim in Usd.PrimRange(root.GetPrim(), Usd.TraverseInstanceProxies()):
        if prim.IsA(UsdSkel.Animation) and (not bound or prim != bound.GetPrim()) and _for_skeleton(prim, skeleton,
                                                                                                  UsdSkel):
            animations.append(prim)
    for animation in animations:
        _clip(animation, joints, entry, name, cache, blobs, Usd, UsdSkel)
    doc["skeletons"].append(entry)
    return k


def _moving(prim, name: str, entry: dict, blobs, Usd, UsdGeom) -> None:
    """A prim whose world transform is animated (its xformOps or an ancestor's have time
    samples): its world matrix at each of those samples (``<name>.world_times``, ``.world``)."""
    times: set = set()
    ancestor = prim
    while ancestor and not ancestor.IsPseudoRoot():
        if ancestor.IsA(UsdGeom.Xformable):
            times.update(UsdGeom.Xformable(ancestor).GetTimeSamples())
        ancestor = ancestor.GetParent()
    if len(times) < 2:
        entry["moving"] = False
        return
    if len(times) > MAX_SAMPLES:
        raise FileProblem(f"{prim.GetPath()}: more than {MAX_SAMPLES} transform time samples")
    ordered = sorted(times)
    xformable = UsdGeom.Xformable(prim)
    blobs.numbers(name + ".world_times", "d", ordered)
    blobs.numbers(name + ".world", "d", [v for t in ordered
                                         for v in _matrix(xformable.ComputeLocalToWorldTransform(Usd.TimeCode(t)))], 16)
    entry["moving"] = True


def _for_skeleton(prim, skeleton, UsdSkel) -> bool:
    """Whether an unbound SkelAnimation is one of this skeleton's clips: its joints are all the
    skeleton's, and where it sits beside other SkelAnimations (one per skeleton of a clip, as
    boneviewer writes them), it is the one named as the skeleton."""
    joints = set(str(joint) for joint in (skeleton.GetJointsAttr().Get() or ()))
    animated = UsdSkel.Animation(prim).GetJointsAttr().Get() or ()
    if not set(str(joint) for joint in animated) <= joints:
        return False
    siblings = [other for other in prim.GetParent().GetChildren() if other.IsA(UsdSkel.Animation)]
    named = [other for other in siblings if other.GetName() == skeleton.GetPrim().GetName()]
    return not named or prim in named


def _clip(prim, joints: list, entry: dict, name: str, cache, blobs, Usd, UsdSkel) -> None:
    """A SkelAnimation's joint transforms at every authored time sample, in the skeleton's joint
    order (joints it does not animate: absent, they keep their rest)."""
    query = cache.GetAnimQuery(UsdSkel.Animation(prim))
    if not query:
        return
    animated = [str(joint) for joint in query.GetJointOrder()]
    index = {joint: i for i, joint in enumerate(joints)}
    mapped = [index.get(joint, -1) for joint in animated]
    if animated and all(i < 0 for i in mapped):
        return  # another skeleton's animation
    times = list(query.GetJointTransformTimeSamples())
    weight_times = list(query.GetBlendShapeWeightTimeSamples())
    if len(times) > MAX_SAMPLES or len(weight_times) > MAX_SAMPLES:
        raise FileProblem(f"animation {prim.GetPath()}: more than {MAX_SAMPLES} time samples")
    samples = [(time, Usd.TimeCode(time)) for time in times]
    if not samples and animated:  # values without time samples: one pose, a key at 0
        samples = [(0.0, Usd.TimeCode.Default())]
    c = len(entry["clips"])
    label = f"{name}.clip{c}"
    # Each sample's translations, rotations and scales as UsdSkel reads them (the components of
    # ComputeJointLocalTransforms, which needs all three): no matrices composed here to be
    # decomposed again by the builder.
    components = ([], [], [])
    for time, code in samples:
        parts = query.ComputeJointLocalTransformComponents(code)
        if not parts or any(part is None or len(part) != len(animated) for part in parts):
            raise FileProblem(f"animation {prim.GetPath()}: its transforms at time {time:g} do not cover its joints")
        for values, part in zip(components, parts):
            values.append(memoryview(part).tobytes())
    if samples:
        blobs.numbers(label + ".times", "d", [time for time, _ in samples])
        for field, dtype, width, values in zip(CLIP_FIELDS, ("<f4", "<f4", "<f2"), (3, 4, 3), components):
            # quatf is stored as (i, j, k, real): x, y, z, w as boneviewer has them
            blobs.entries[f"{label}.{field}"] = (dtype, [len(samples), len(animated), width], b"".join(values))
    shapes = [str(shape) for shape in query.GetBlendShapeOrder()]
    weights = []
    for time in weight_times:
        weights.append(memoryview(query.ComputeBlendShapeWeights(Usd.TimeCode(time))).tobytes())
    if weight_times and shapes:
        blobs.numbers(label + ".weight_times", "d", weight_times)
        blobs.entries[label + ".weights"] = ("<f4", [len(weight_times), len(shapes)], b"".join(weights))
    # The clip's name: what boneviewer's writer kept (customData boneviewer:clip), else the
    # prim's display name, else its name.
    parent = prim.GetParent()
    shared = [other for other in parent.GetChildren() if other.IsA(UsdSkel.Animation)] if parent else []
    name = prim.GetCustomDataByKey("boneviewer:clip") or prim.GetDisplayName()
    if not name and len(shared) > 1:  # one SkelAnimation per skeleton of one clip: the clip is their parent
        name = parent.GetCustomDataByKey("boneviewer:clip") or parent.GetDisplayName() or parent.GetName()
    name = name or prim.GetName()
    entry["clips"].append({"name": str(name), "path": str(prim.GetPath()),
                           "joints": mapped, "samples": len(samples), "shapes": shapes if weight_times else []})


def _mesh(prim, doc, blobs, materials: dict, Ar, Usd, UsdGeom, UsdShade, first) -> dict | None:
    """The mesh's arrays and entry; None (said once) for a mesh without points or faces."""
    mesh = UsdGeom.Mesh(prim)
    k = len(doc["meshes"])
    name = f"mesh{k}"
    what = str(prim.GetPath())
    # An attribute holds what the file authored, whatever type the schema gives it (points as int,
    # double[], a single point3f...: tests/usd_edge_stages.py): points are any array of 3
    # floats, doubles or halves (point3f[], float3[], point3d[], color3f[]...: the numbers are the same),
    # counts and indices int[]; a mesh with anything else is left out, said in a warning.
    points = _array(mesh.GetPointsAttr(), first, "fde", 3)
    counts = _array(mesh.GetFaceVertexCountsAttr(), first, "i")
    indices = _array(mesh.GetFaceVertexIndicesAttr(), first, "i")
    wrong = [f"{attribute.GetName()} {_authored_type(attribute, first)}, not {wanted}"
             for attribute, value, wanted in ((mesh.GetPointsAttr(), points, "point3f[]"),
                                              (mesh.GetFaceVertexCountsAttr(), counts, "int[]"),
                                              (mesh.GetFaceVertexIndicesAttr(), indices, "int[]"))
             if value is None and attribute.Get(first) is not None]
    if wrong:
        doc["warnings"].append(f"mesh {what}: {'; '.join(wrong)}; left out")
        return None
    if points is None or counts is None or indices is None or not len(points) or not len(counts):
        doc["warnings"].append(f"mesh {what}: no points or faces; left out")
        return None
    corners = len(indices)
    if corners > MAX_CORNERS:
        raise FileProblem(f"mesh {what}: {corners} polygon corners, more than {MAX_CORNERS}")
    # Arrays as usd-core holds them, element by element nothing in Python here (an element is a
    # call through the bindings): the builder checks the counts and maps corners with numpy.
    blobs.buffer(name + ".points", points, [len(points), 3])
    blobs.buffer(name + ".points.index", indices)
    blobs.buffer(name + ".counts", counts)
    attributes = {}
    normals = mesh.GetNormalsAttr()
    primvars = UsdGeom.PrimvarsAPI(prim)
    normal_primvar = primvars.GetPrimvar("normals")
    if normal_primvar and normal_primvar.HasAuthoredValue():
        _primvar(normal_primvar, "normals", 3, name, blobs, attributes, what, first, doc["warnings"])
    elif normals.HasAuthoredValue():
        _attribute(normals.Get(first), mesh.GetNormalsInterpolation(), None, "normals", 3, name, blobs, attributes, what,
                   doc["warnings"])
    for candidate in ("st", "st0", "UVMap", "uv"):
        uv = primvars.GetPrimvar(candidate)
        if uv and uv.HasAuthoredValue():
            _primvar(uv, "uv", 2, name, blobs, attributes, what, first, doc["warnings"])
            break
    # displayColor is what a renderer shows when no material is bound (it does not tint one).
    color = primvars.GetPrimvar("displayColor")
    bound = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial()[0]
    if color and color.HasAuthoredValue() and not bound:
        _primvar(color, "colors", 3, name, blobs, attributes, what, first, doc["warnings"])
    # Materials: the mesh's, or its GeomSubsets' (familyName materialBind), each a slot.
    slots, face_slots = [], None
    subsets = UsdGeom.Subset.GetGeomSubsets(mesh, UsdGeom.Tokens.face, "materialBind")
    if subsets:
        face_slots = [0] * len(counts)
        slots.append(_material(prim, doc, blobs, materials, Ar, UsdShade))
        for s, subset in enumerate(subsets, start=1):
            slots.append(_material(subset.GetPrim(), doc, blobs, materials, Ar, UsdShade))
            for face in subset.GetIndicesAttr().Get() or ():
                if 0 <= face < len(counts):
                    face_slots[face] = s
    else:
        slots.append(_material(prim, doc, blobs, materials, Ar, UsdShade))
    blobs.numbers(name + ".face_material", "i", face_slots or [])
    entry = {"name": prim.GetName(), "path": what, "attributes": attributes, "materials": slots,
             "double_sided": bool(mesh.GetDoubleSidedAttr().Get()),
             "left_handed": str(mesh.GetOrientationAttr().Get()) == "leftHanded",
             "skeleton": None, "channels": [], "world": None, "blob": name}
    doc["meshes"].append(entry)
    return entry


def _point_cache(prim, entry: dict, doc: dict, blobs, Usd, UsdGeom) -> None:
    """A mesh whose points have several time samples: its points at each (``<mesh>.cache``,
    (samples, points, 3)), the sample times (``.cache_times``), and its normals at each when
    they are authored per point and time-sampled too (``.cache_normals``); entry["cache"] says
    how many. USD interpolates them linearly (held is a setting of an application's stage, not
    of a file), and holds the first before it and the last after. Points that
    change in number over time (a topology-changing simulation) cannot be interpolated: the mesh
    is drawn at its first sample, said once."""
    what = entry["path"]
    attribute = UsdGeom.Mesh(prim).GetPointsAttr()
    count = attribute.GetNumTimeSamples()  # counted before any is read: a hostile file claims millions
    if count < 2:
        return
    points = len(attribute.Get(Usd.TimeCode.EarliestTime()))
    if count > MAX_CACHE_SAMPLES:
        doc["warnings"].append(f"mesh {what}: its points have {count} time samples, more than the {MAX_CACHE_SAMPLES} "
                               "a point cache plays; drawn at the first")
        return
    if count * points > MAX_CACHE_VALUES:
        raise FileProblem(f"mesh {what}: a point cache of {count} time samples of {points} points, more than "
                          f"{MAX_CACHE_VALUES} points in all")
    times = [float(time) for time in attribute.GetTimeSamples()]
    values = []
    for time in times:
        sample = attribute.Get(time)
        if sample is None or len(sample) != points:
            doc["warnings"].append(f"mesh {what}: its points change in number over time ({points} at time {times[0]:g}, "
                                   f"{0 if sample is None else len(sample)} at {time:g}); drawn at the first sample")
            return
        values.append(memoryview(sample).tobytes())
    name = entry["blob"]
    blobs.numbers(name + ".cache_times", "d", times)
    blobs.entries[name + ".cache"] = ("<f4", [count, points, 3], b"".join(values))
    normals = UsdGeom.Mesh(prim).GetNormalsAttr()
    sampled_normals = False
    if (entry["attributes"].get("normals") in ("vertex", "varying") and normals.GetNumTimeSamples() > 1
            and not UsdGeom.PrimvarsAPI(prim).GetPrimvar("normals").HasAuthoredValue()):
        samples = [normals.Get(time) for time in times]  # USD's own interpolation of the normals' samples
        if all(sample is not None and len(sample) == points for sample in samples):
            blobs.entries[name + ".cache_normals"] = ("<f4", [count, points, 3],
                                                      b"".join(memoryview(sample).tobytes() for sample in samples))
            sampled_normals = True
    entry["cache"] = {"samples": count, "normals": sampled_normals}


def _array(attribute, time, formats: str, shape: int | tuple = ()):
    """The attribute's value at ``time`` as a memoryview when it is an array of numbers of one of
    ``formats`` (the buffer protocol's: "f", "d", "i"), each element of ``shape`` (3: three
    numbers, (4, 4): a matrix, (): one number); else None (not authored, or of another type)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    value = attribute.Get(time)
    if value is None:
        return None
    try:
        view = memoryview(value)
    except TypeError:  # a single number, a string, a token...
        return None
    if view.format not in tuple(formats) or view.ndim != 1 + len(shape) or tuple(view.shape[1:]) != shape:
        return None
    return view


def _authored_type(attribute, time=None) -> str:
    """The type of the attribute's value as the file wrote it ("int", "double[]", "float3")."""
    return _value_type(attribute.Get() if time is None else attribute.Get(time))


def _value_type(value) -> str:
    from pxr import Sdf

    return str(Sdf.GetValueTypeNameForValue(value) or type(value).__name__)


def _material(prim, doc, blobs, materials: dict, Ar, UsdShade) -> int | None:
    """The index in doc["materials"] of the material bound to ``prim`` (None: none), read once:
    a UsdPreviewSurface's inputs, its diffuse texture's bytes through USD's resolver."""
    material, _ = UsdShade.MaterialBindingAPI(prim).ComputeBoundMaterial()
    if not material:
        return None
    key = str(material.GetPath())
    if key in materials:
        return materials[key]
    entry = {"name": material.GetPrim().GetName(), "color": [0.18, 0.18, 0.18], "opacity": 1.0, "metallic": 0.0,
             "roughness": 0.5, "emissive": [0.0, 0.0, 0.0], "texture": None, "note": ""}
    shader = material.ComputeSurfaceSource()[0]
    if shader and shader.GetIdAttr().Get() == "UsdPreviewSurface":
        for field, name in (("color", "diffuseColor"), ("opacity", "opacity"), ("metallic", "metallic"),
                            ("roughness", "roughness"), ("emissive", "emissiveColor")):
            put = shader.GetInput(name)
            if not put:
                continue
            source = put.GetConnectedSources()[0] if put.HasConnectedSource() else []
            if source:
                texture = UsdShade.Shader(source[0].source.GetPrim())
                if field == "color" and texture.GetIdAttr().Get() == "UsdUVTexture":
                    entry["texture"] = _texture(texture, blobs, len(doc["materials"]), Ar)
                continue
            value = put.Get()
            if value is None:
                continue
            try:
                read = [float(v) for v in value] if field in ("color", "emissive") else float(value)
            except (TypeError, ValueError):
                read = None
            if read is None or (isinstance(read, list) and len(read) != 3):
                said = f"material {key}: input {name} {_authored_type(put.GetAttr())}, not a number or colour; its default used"
                entry["note"] = entry["note"] or said
                continue
            entry[field] = read
    elif shader:
        entry["note"] = f"material {key}: shader {shader.GetIdAttr().Get()} is not UsdPreviewSurface; drawn grey"
    materials[key] = len(doc["materials"])
    doc["materials"].append(entry)
    return materials[key]


def _texture(shader, blobs, index: int, Ar) -> dict | None:
    """A UsdUVTexture's file, its bytes read through the resolver (a .usdz's from the package)."""
    put = shader.GetInput("file")
    asset = put.Get() if put else None
    if asset is None:
        return None
    found = {"path": str(asset.path), "bytes": None}
    resolved = asset.resolvedPath
    # As glTF's images: a texture is read from the stage's own package or folder, never from
    # elsewhere on the machine (a file naming "../../.ssh/id_rsa" as its texture reads nothing).
    stage_file = os.path.realpath(shader.GetPrim().GetStage().GetRootLayer().realPath or "")
    inside = os.path.dirname(stage_file) + os.sep
    outer = resolved.split("[", 1)[0] if resolved else ""
    if resolved and not (outer == stage_file or os.path.realpath(outer).startswith(inside)):
        found["outside"] = True
        return found
    if resolved:
        opened = Ar.GetResolver().OpenAsset(Ar.ResolvedPath(resolved))
        if opened:
            data = bytes(opened.GetBuffer())
            label = f"material{index}.texture"
            blobs.raw(label, data)
            found["bytes"] = label
    return found


def _primvar(primvar, label, width, name, blobs, attributes, what, first, warnings: list) -> None:
    values = primvar.Get(first)
    index = primvar.GetIndices(first) if primvar.IsIndexed() else None
    _attribute(values, primvar.GetInterpolation(), index, label, width, name, blobs, attributes, what, warnings)


def _attribute(values, interpolation, index, label, width, name, blobs, attributes, what, warnings: list) -> None:
    """An attribute's values, its interpolation and its indices when it has them (the builder
    maps them to polygon corners: viewer.usd.build.corner_indices). Values that are not an array
    of ``width`` numbers each (a single float3, int[], double[]) are left
    out, said in ``warnings``: the mesh is drawn without them (its own normals, no UVs)."""
    if values is None:
        return
    try:
        view = memoryview(values)
    except TypeError:  # a single value where the schema has an array
        view = None
    if view is not None and (len(view) == 0 or interpolation not in INTERPOLATIONS):
        return
    if view is None or view.ndim != 2 or view.shape[1] != width or view.format not in ("f", "d", "e"):
        warnings.append(f"mesh {what}: {label} {_value_type(values)}, not an array of {width} numbers each; left out")
        return
    blobs.buffer(f"{name}.{label}", view, [len(values), width])
    if index is not None:
        blobs.buffer(f"{name}.{label}.index", memoryview(index))
    attributes[label] = str(interpolation)


def _influences(query, skeleton: int, entry: dict, doc: dict, blobs, UsdSkel) -> None:
    """The mesh's joint indices (mapped to the skeleton's joint order) and weights per point."""
    name = entry["blob"]
    entry["skeleton"] = skeleton
    influences = query.ComputeJointInfluences()
    if not influences:
        raise FileProblem(f"mesh {entry['path']}: its joint influences are missing or malformed")
    indices, weights = influences
    size = query.GetNumInfluencesPerComponent()
    joints = doc["skeletons"][skeleton]["joints"]
    order = query.GetJointOrder()
    mapping = list(range(len(joints)))
    if order:
        position = {joint: i for i, joint in enumerate(joints)}
        mapping = [position.get(str(joint), -1) for joint in order]
    blobs.buffer(name + ".joint_indices", memoryview(indices))
    blobs.buffer(name + ".joint_weights", memoryview(weights))
    entry["influences"] = {"size": int(size), "rigid": bool(query.IsRigidlyDeformed()), "map": mapping,
                           "geom_bind": _matrix(query.GetGeomBindTransform())}


def _blend_shapes(prim, query, entry: dict, blobs, Usd, UsdSkel) -> None:
    binding = UsdSkel.BindingAPI(prim)
    names = binding.GetBlendShapesAttr().Get() if binding.GetBlendShapesAttr() else None
    targets = binding.GetBlendShapeTargetsRel().GetTargets() if binding.GetBlendShapeTargetsRel() else []
    if not names:
        return
    if len(names) > MAX_MORPH_TARGETS:
        raise FileProblem(f"mesh {entry['path']}: {len(names)} blend shapes, more than {MAX_MORPH_TARGETS}")
    stage = prim.GetStage()
    mesh_name = entry["blob"]
    for k, (shape_name, target) in enumerate(zip(names, targets)):
        shape = UsdSkel.BlendShape(stage.GetPrimAtPath(target))
        if not shape:
            raise FileProblem(f"mesh {entry['path']}: blend shape target {target} is not a BlendShape")
        default = Usd.TimeCode.Default()
        offsets = _array(shape.GetOffsetsAttr(), default, "fde", (3,))
        points = _array(shape.GetPointIndicesAttr(), default, "i")
        for attribute, value, wanted in ((shape.GetOffsetsAttr(), offsets, "vector3f[]"),
                                         (shape.GetPointIndicesAttr(), points, "int[]")):
            if value is None and attribute.Get() is not None:
                raise FileProblem(f"mesh {entry['path']}: blend shape {target}: {attribute.GetName()} "
                                  f"{_authored_type(attribute, default)}, not {wanted}")
        if offsets is None:
            continue
        blobs.buffer(f"{mesh_name}.shape{k}.offsets", offsets, [len(offsets), 3])
        if points is not None and len(points):
            blobs.buffer(f"{mesh_name}.shape{k}.points", points)
        normals = _array(shape.GetNormalOffsetsAttr(), default, "fde", (3,))
        if normals is not None and len(normals) == len(offsets):
            blobs.buffer(f"{mesh_name}.shape{k}.normals", normals, [len(normals), 3])
        original = shape.GetPrim().GetCustomDataByKey("boneviewer:target")  # boneviewer's writer keeps it
        entry["channels"].append({"name": str(original or shape_name), "token": str(shape_name), "index": k})


def _tf_message(error, path: str = "") -> str:
    """usd-core's first error in one line, without the C++ function and source file it names
    ("Error in 'F' at line N in file X : 'what'"), the file named as the user named it (usd-core
    names it by its absolute path, between @s where it quotes an asset path)."""
    import re

    text = " ".join(str(error).split())
    said = re.search(r" : '(.*?)'(?= Error in '|$)", text)
    text = said.group(1) if said else text
    text = re.sub(r"PXR_INTERNAL_NS_\w+::\w+::|pxrInternal_\w+::", "", text)
    if path:
        for form in sorted({os.path.abspath(path), os.path.realpath(path), path}, key=len, reverse=True):
            text = text.replace(f"@{form}@", path)
        for form in sorted({os.path.abspath(path), os.path.realpath(path)} - {path}, key=len, reverse=True):
            # whole paths only: the user's relative path is also the tail of its absolute one
            text = re.sub(re.escape(form) + r"(?![\w.-])", lambda _: path, text)
    return text[:300] or "usd-core could not read it"


if __name__ == "__main__":
    protocol.serve(read, sys.argv[1:])
