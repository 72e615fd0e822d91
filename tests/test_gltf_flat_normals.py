"""glTF primitives without NORMAL are drawn flat (glTF 2.0, 3.7.2.1: "client implementations MUST
calculate flat normals and the provided tangents (if present) MUST be ignored"; 3.7.2.2: "... MUST
calculate flat normals for each morph target"): each triangle's corners get its face normal, the
vertices split where faces meet at an angle with every per-vertex array copied along."""

from pathlib import Path

import numpy as np
import pygltflib as g
import pytest

from gltf_cases import UBYTE, USHORT, Builder, chain, inverse_binds
from gltf_reference import skinned_positions as reference_positions
from viewer.camera import OrbitCamera
from viewer.gltf import load_gltf, save_gltf
from viewer.images import write_png
from viewer.options import RenderOptions

OUT = Path(__file__).parents[1] / "out" / "flat_normals"
# A cube of 8 shared corners; each face two counter-clockwise triangles seen from outside.
CUBE_POSITIONS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float32)
CUBE_QUADS = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
CUBE_INDICES = np.array([i for a, b, c, d in CUBE_QUADS for i in (a, b, c, a, c, d)], np.int64)


def face_normals_of(points, indices):
    """Unit normals of a triangle list's faces, written out here (not the loader's)."""
    corners = np.asarray(points, np.float64)[np.asarray(indices).reshape(-1, 3)]
    face = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    return face / np.linalg.norm(face, axis=1, keepdims=True)


def cube_file(folder, *, material=None, colors=None, tangents=False, name="cube.gltf"):
    b = Builder()
    attributes = g.Attributes(POSITION=b.accessor(CUBE_POSITIONS, "VEC3"))
    if colors is not None:
        attributes.COLOR_0 = b.accessor(np.asarray(colors, np.float32), "VEC4")
    if tangents:  # a TANGENT the file gives without NORMAL: glTF says it is ignored
        attributes.TANGENT = b.accessor(np.tile(np.float32([0, 1, 0, 1]), (8, 1)), "VEC4")
    primitive = g.Primitive(attributes=attributes, indices=b.accessor(CUBE_INDICES.astype(np.uint16).reshape(-1, 1),
                                                                      "SCALAR", USHORT))
    if material is not None:
        b.gltf.materials = [material]
        primitive.material = 0
    b.gltf.meshes.append(g.Mesh(primitives=[primitive]))
    b.node("cube", root=True, mesh=0)
    return b.save(Path(folder) / name)


def test_a_cube_of_8_shared_vertices_gets_its_faces_normals(tmp_path):
    colors = np.c_[np.linspace(0, 1, 8), np.linspace(1, 0, 8), np.full(8, 0.5), np.ones(8)]
    mesh = load_gltf(cube_file(tmp_path, colors=colors, tangents=True)).meshes[0]
    corners = mesh.indices.reshape(-1, 3)
    want = face_normals_of(CUBE_POSITIONS, CUBE_INDICES)
    # every drawn corner: its face's normal, and the file vertex's position and colour
    np.testing.assert_allclose(mesh.normals[corners], np.repeat(want[:, None], 3, axis=1), atol=1e-6)
    np.testing.assert_array_equal(mesh.positions[mesh.indices], CUBE_POSITIONS[CUBE_INDICES])
    np.testing.assert_allclose(mesh.colors[mesh.indices], colors[CUBE_INDICES].astype(np.float32))
    assert len(mesh.positions) == 24, "one vertex per corner of each face: the faces' shared corners welded"
    np.testing.assert_array_equal(mesh.positions[:8], CUBE_POSITIONS)  # the file's vertices first, in order
    assert mesh.tangents is None, "the file's TANGENT is ignored without NORMAL"
    low, high = load_gltf(cube_file(tmp_path)).rest_bounds
    np.testing.assert_allclose([low, high], [[-1, -1, -1], [1, 1, 1]])


def test_flat_normals_welds_only_corners_whose_faces_agree():
    """flat_normals on a random closed surface and on a plane: every corner keeps its vertex's
    data (remap), gets its face's normal, and a plane keeps its shared vertices."""
    from viewer.model.mesh import flat_normals

    rng = np.random.default_rng(3)
    n = 12
    x, y = np.meshgrid(np.arange(n, dtype=float), np.arange(n, dtype=float))
    quads = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)[None]).reshape(-1)
    indices = np.c_[quads, quads + 1, quads + n + 1, quads, quads + n + 1, quads + n].reshape(-1)
    for z, vertices in ((np.zeros_like(x), n * n), (rng.normal(size=x.shape), None)):
        positions = np.c_[x.reshape(-1), y.reshape(-1), z.reshape(-1)].astype(np.float32)
        remap, drawn, normals, deltas = flat_normals(positions, indices)
        assert deltas is None
        np.testing.assert_array_equal(remap[drawn], indices)
        np.testing.assert_array_equal(remap[: n * n], np.arange(n * n))
        np.testing.assert_allclose(normals[drawn.reshape(-1, 3)],
                                   np.repeat(face_normals_of(positions, indices)[:, None], 3, axis=1), atol=1e-6)
        if vertices is not None:
            assert len(remap) == vertices
        else:
            assert len(remap) > 2 * len(indices) // 3  # curved: about a vertex per corner


def test_a_flat_cube_renders_flat_faces(tmp_path):
    """A white cube seen from a corner under the key light: each of its three faces one shade
    (the smooth normals of 8 shared vertices made each face a gradient), and the three differ."""
    from viewer.render.headless import HeadlessRenderer

    scene = load_gltf(cube_file(tmp_path, material=g.Material(pbrMetallicRoughness=g.PbrMetallicRoughness(
        baseColorFactor=[0.8, 0.8, 0.8, 1.0], metallicFactor=0.0, roughnessFactor=1.0))))
    camera = OrbitCamera(yaw=35.0, pitch=25.0, fov_y=40.0)
    camera.target, camera.distance = np.zeros(3), 6.5
    options = RenderOptions(show_skeleton=False, show_grid=False, environment="none", tone_mapping="none")
    size = (256, 256)
    with HeadlessRenderer(size) as headless:
        image = headless.render(scene, camera, options)
    OUT.mkdir(parents=True, exist_ok=True)
    write_png(OUT / "cube.png", image)
    from PIL import Image, ImageDraw

    shades = []
    for quad, normal in zip(CUBE_QUADS, face_normals_of(CUBE_POSITIONS, CUBE_INDICES)[::2]):
        centre = CUBE_POSITIONS[list(quad)].mean(axis=0)
        if normal @ (camera.position - centre) <= 0:  # faces away from the camera
            continue
        inner = centre + 0.8 * (CUBE_POSITIONS[list(quad)] - centre)  # the face less a margin at its edges
        outline = Image.new("L", size)
        ImageDraw.Draw(outline).polygon([tuple(p) for p in camera.project(inner, *size)], fill=255)
        pixels = image[np.asarray(outline) > 0][:, :3].astype(float)
        assert len(pixels) > 800, "the face is in view"
        shades.append((pixels.mean(axis=0), pixels.std(axis=0).max(), np.ptp(pixels, axis=0).max()))
    assert len(shades) == 3
    for mean, spread, span in shades:
        assert spread < 1.0 and span <= 3, f"a face shaded {mean} varies (std {spread:.2f}, range {span})"
    means = [mean.mean() for mean, _, _ in shades]
    assert min(abs(a - b) for i, a in enumerate(means) for b in means[i + 1:]) > 10, means


def skinned_box_file(folder):
    """A box (a square tube with caps) along a two-joint chain, without NORMAL: rings at y = 0,
    0.5, 1, 1.5 and 2, those below 1 weighted to joint 0, those above to joint 1, the middle one
    half and half."""
    b = Builder()
    joints = chain(b, 2, root=True)
    ring = np.array([[-0.3, -0.3], [0.3, -0.3], [0.3, 0.3], [-0.3, 0.3]])
    heights = (0.0, 0.5, 1.0, 1.5, 2.0)
    positions = np.array([[x, y, z] for y in heights for x, z in ring], np.float32)
    indices = []
    for level in range(len(heights) - 1):
        for k in range(4):
            a, c = level * 4 + k, level * 4 + (k + 1) % 4
            indices += [a, c, c + 4, a, c + 4, a + 4]
    indices += [0, 2, 1, 0, 3, 2, 16, 17, 18, 16, 18, 19]  # bottom and top caps
    joint_rows = np.zeros((len(positions), 4), np.uint8)
    joint_rows[:, 1] = 1
    weight_rows = np.zeros((len(positions), 4), np.float32)
    weight_rows[:8, 0], weight_rows[8:12, :2], weight_rows[12:, 1] = 1.0, 0.5, 1.0
    attributes = g.Attributes(POSITION=b.accessor(positions, "VEC3"), JOINTS_0=b.accessor(joint_rows, "VEC4", UBYTE),
                              WEIGHTS_0=b.accessor(weight_rows, "VEC4"))
    index_accessor = b.accessor(np.array(indices, np.uint16).reshape(-1, 1), "SCALAR", USHORT)
    b.gltf.meshes.append(g.Mesh(primitives=[g.Primitive(attributes=attributes, indices=index_accessor)]))
    b.node("box", root=True, mesh=0, skin=0)
    b.gltf.skins.append(g.Skin(joints=joints, inverseBindMatrices=inverse_binds(b, joints), skeleton=joints[0]))
    return b.save(Path(folder) / "box.gltf"), positions, np.array(indices), joint_rows, weight_rows


def test_a_skinned_primitive_without_normals_skins_as_its_file_says(tmp_path):
    path, positions, indices, joint_rows, weight_rows = skinned_box_file(tmp_path)
    scene = load_gltf(path)
    mesh = scene.skinned_meshes[0]
    assert len(mesh.positions) > len(positions), "the box's corners split"
    used = weight_rows[indices][:, :2] > 0  # (unused slots read bone 0)
    np.testing.assert_array_equal(mesh.joints[mesh.indices][:, :2], np.where(used, joint_rows[indices][:, :2], 0))
    np.testing.assert_allclose(mesh.weights[mesh.indices][:, :2], weight_rows[indices][:, :2])
    top = scene.nodes[1]  # the chain's second joint
    top.rotation_quaternion = [0.0, 0.0, np.sin(0.35), np.cos(0.35)]  # bent 40 degrees
    drawn, normals = mesh.skinned()
    # glTF's skinning of the file's own vertices, by the independent reference, at every corner
    pose = {1: (np.asarray(top.position, float), np.asarray(top.rotation_quaternion, float),
                np.asarray(top.scaling, float))}
    want = reference_positions(path, pose=pose)[2]
    np.testing.assert_allclose(drawn[mesh.indices], want[indices], atol=1e-5)
    assert np.abs(drawn - mesh.positions).max() > 0.3, "the pose moved the box"
    # a triangle on one joint alone turns rigidly: its skinned normal is its skinned face's normal
    triangles = indices.reshape(-1, 3)
    rigid = (weight_rows[triangles].max(axis=2) == 1.0).all(axis=1)
    one_joint = joint_rows[triangles, weight_rows[triangles].argmax(axis=2)]
    rigid &= (one_joint == one_joint[:, :1]).all(axis=1)
    assert rigid.sum() == 20, "the caps and the tube's two ends"
    corners = mesh.indices.reshape(-1, 3)
    np.testing.assert_allclose(normals[corners[rigid]],
                               np.repeat(face_normals_of(drawn, mesh.indices)[rigid][:, None], 3, axis=1), atol=1e-6)


def test_morph_targets_without_normals_get_each_targets_flat_normals(tmp_path):
    """A plane of two triangles whose target lifts one corner: at weight 1 each triangle shades
    with the face normal of the lifted shape (the file's target NORMAL, given for a base without
    NORMAL, ignored), at 0 with the plane's; the shared edge splits where the target bends it."""
    b = Builder()
    positions = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32)
    indices = np.array([0, 1, 2, 0, 2, 3])
    lift = np.zeros((4, 3), np.float32)
    lift[3, 2] = 1.0
    attributes = g.Attributes(POSITION=b.accessor(positions, "VEC3"))
    target = {"POSITION": b.accessor(lift, "VEC3"), "NORMAL": b.accessor(np.ones((4, 3), np.float32), "VEC3")}
    b.gltf.meshes.append(g.Mesh(primitives=[g.Primitive(attributes=attributes, targets=[target],
                                                        indices=b.accessor(indices.astype(np.uint16).reshape(-1, 1),
                                                                           "SCALAR", USHORT))]))
    b.node("plane", root=True, mesh=0)
    mesh = load_gltf(b.save(tmp_path / "plane.gltf")).meshes[0]
    assert len(mesh.positions) == 6, "0 and 2 split: their two faces part at the target"
    corners = mesh.indices.reshape(-1, 3)
    for weight, shape in ((0.0, positions), (1.0, positions + lift)):
        mesh.morph_weights = [weight]
        morphed, normals = mesh.morphed()
        np.testing.assert_allclose(morphed[mesh.indices], shape[indices], atol=1e-6)
        normals = normals / np.linalg.norm(normals, axis=1, keepdims=True)  # renormalized after blending
        np.testing.assert_allclose(normals[corners], np.repeat(face_normals_of(shape, indices)[:, None], 3, axis=1),
                                   atol=1e-6)


def test_a_primitive_with_normals_keeps_them_beside_one_without(tmp_path):
    """Two primitives of one mesh: the one with NORMAL draws the file's normals (once replaced by
    smooth ones over the whole mesh), the one without gets flat ones."""
    b = Builder()
    given = np.tile(np.float32([0.0, 0.6, 0.8]), (8, 1))
    index_accessor = b.accessor(CUBE_INDICES.astype(np.uint16).reshape(-1, 1), "SCALAR", USHORT)
    with_normals = g.Attributes(POSITION=b.accessor(CUBE_POSITIONS, "VEC3"), NORMAL=b.accessor(given, "VEC3"))
    without = g.Attributes(POSITION=b.accessor(CUBE_POSITIONS + 3, "VEC3"))
    b.gltf.meshes.append(g.Mesh(primitives=[g.Primitive(attributes=with_normals, indices=index_accessor),
                                            g.Primitive(attributes=without, indices=index_accessor)]))
    b.node("two", root=True, mesh=0)
    mesh = load_gltf(b.save(tmp_path / "two.gltf")).meshes[0]
    np.testing.assert_array_equal(mesh.normals[:8], given)
    second = mesh.submeshes[1]
    corners = mesh.indices[second.first_index: second.first_index + second.index_count].reshape(-1, 3)
    np.testing.assert_allclose(mesh.normals[corners],
                               np.repeat(face_normals_of(CUBE_POSITIONS, CUBE_INDICES)[:, None], 3, axis=1), atol=1e-6)


def test_an_unlit_primitive_without_normals_keeps_its_vertices(tmp_path, monkeypatch):
    """KHR_materials_unlit shades without normals: its vertices stay shared, and the smooth
    normals a mesh without them has (as FBX and USD files) are computed only when first read."""
    from viewer.model import mesh as mesh_module

    calls = []
    computed = mesh_module.vertex_normals
    monkeypatch.setattr(mesh_module, "vertex_normals", lambda *a: calls.append(1) or computed(*a))
    unlit = g.Material(extensions={"KHR_materials_unlit": {}})
    mesh = load_gltf(cube_file(tmp_path, material=unlit)).meshes[0]
    lit = load_gltf(cube_file(tmp_path, material=g.Material(), name="lit.gltf")).meshes[0]
    assert len(mesh.positions) == 8 and len(lit.positions) == 24 and calls == []
    normals = mesh.normals
    assert calls == [1] and mesh.normals is normals and normals.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-6)
    assert (np.einsum("vi,vi->v", normals, CUBE_POSITIONS) > 1.0).all()  # smooth: out along the corners


def test_a_written_flat_model_loads_back_the_same(tmp_path):
    """save_gltf writes the flat normals as NORMAL; loaded back, the same vertices and normals."""
    import json
    import struct

    scene = load_gltf(skinned_box_file(tmp_path)[0])
    save_gltf(scene, tmp_path / "out.glb")
    raw = (tmp_path / "out.glb").read_bytes()
    document = json.loads(raw[20:20 + struct.unpack_from("<I", raw, 12)[0]])
    assert "NORMAL" in document["meshes"][0]["primitives"][0]["attributes"]
    first, again = scene.skinned_meshes[0], load_gltf(tmp_path / "out.glb").skinned_meshes[0]
    np.testing.assert_array_equal(again.indices, first.indices)
    np.testing.assert_allclose(again.positions, first.positions, atol=1e-6)
    np.testing.assert_allclose(again.normals, first.normals, atol=1e-6)
    np.testing.assert_array_equal(again.joints, first.joints)
    corners = again.indices.reshape(-1, 3)
    np.testing.assert_allclose(again.normals[corners],
                               np.repeat(face_normals_of(again.positions, again.indices)[:, None], 3, axis=1), atol=1e-6)


def test_picking_hits_the_split_cube(tmp_path):
    from viewer.editing.interaction import ray_meshes

    scene = load_gltf(cube_file(tmp_path))
    hit = ray_meshes(np.array([0.2, 0.1, 5.0]), np.array([0.0, 0.0, -1.0]), scene.meshes)
    assert hit is not None and hit[2] == pytest.approx(4.0)
    triangle = hit[0].indices.reshape(-1, 3)[hit[1]]
    assert (hit[0].positions[triangle][:, 2] == 1.0).all()  # a triangle of the +z face, drawn facing +z
    np.testing.assert_allclose(hit[0].normals[triangle], np.tile([0.0, 0.0, 1.0], (3, 1)), atol=1e-6)
