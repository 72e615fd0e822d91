"""FBX in: what boneviewer draws of an FBX file equals what the authoring tool evaluates.

- Blender's own posed, skinned meshes (tests/data/fbx, recorded by scripts/record_fbx_references.sh
  with the sha256 of every input) against boneviewer's drawing of the FBX files Blender wrote,
  as point sets (nearest distances both ways, so vertex order does not matter);
- hand-written ASCII FBX that uses every FBX transform feature against the FBX SDK's documented
  transform chain, evaluated independently in numpy (tests/fbx_cases.py);
- the file's axes and units, kept or turned to glTF's; clips named as the stacks, at the file's
  own times; export to glTF keeps the skinning and the clips;
- bad files: one line naming the file, exit 2, no traceback; a reader that crashes is an error.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from pathlib import Path

import numpy as np
import pytest

import fbx_cases
from viewer.errors import ViewerError
from viewer.fbx import load_fbx, load_fbx_file, read_fbx
from viewer.loaders import load_model

DATA = Path(__file__).parent / "data" / "fbx"
REFERENCES = json.loads((DATA / "references.json").read_text())
FRAMES = [(case["case"], frame["array"]) for case in REFERENCES["cases"] for frame in case["frames"]]
# Within this fraction of the model's size at the frames Blender's exporter sampled (the FBX holds
# Blender's own numbers there, as float32 and Euler angles); between samples the FBX's Euler curves
# and Blender's quaternion curves differ by design, so there a looser bound.
ON_SAMPLE = 1e-4
BETWEEN_SAMPLES = 2e-3


def nearest(a: np.ndarray, b: np.ndarray, reach: float) -> np.ndarray:
    """For each point of ``a``, the distance to the nearest point of ``b`` when one lies within
    ``reach`` of it (any point nearer than ``reach`` is in the 27 grid cells of side ``reach``
    around it), else inf: exact below ``reach``, in linear time."""
    cell_a, cell_b = np.floor(a / reach).astype(np.int64), np.floor(b / reach).astype(np.int64)
    low = np.minimum(cell_a.min(axis=0), cell_b.min(axis=0)) - 1
    span = np.maximum(cell_a.max(axis=0), cell_b.max(axis=0)) - low + 2

    def key(cells):
        cells = cells - low
        return (cells[:, 0] * span[1] + cells[:, 1]) * span[2] + cells[:, 2]

    order = np.argsort(key(cell_b), kind="stable")
    sorted_keys = key(cell_b)[order]
    best = np.full(len(a), np.inf)
    for offset in np.array(np.meshgrid([-1, 0, 1], [-1, 0, 1], [-1, 0, 1])).reshape(3, -1).T:
        wanted = key(cell_a + offset)
        start, end = np.searchsorted(sorted_keys, wanted), np.searchsorted(sorted_keys, wanted, side="right")
        counts = end - start
        if not counts.any():
            continue
        query = np.repeat(np.arange(len(a)), counts)
        candidate = order[np.repeat(start, counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts,
                                                                                        counts))]
        distance = np.sqrt(((a[query] - b[candidate]) ** 2).sum(axis=1))
        np.minimum.at(best, query, distance)
    return best


def point_set_distance(got: np.ndarray, want: np.ndarray, tolerance: float = 1e-3) -> float:
    """The larger of the two one-way nearest distances, over the wanted points' size (inf when it
    is more than ``tolerance`` of the size: the comparisons only need to know it is within)."""
    size = float(np.linalg.norm(want.max(axis=0) - want.min(axis=0)))
    reach = tolerance * size
    return max(nearest(got, want, reach).max(), nearest(want, got, reach).max()) / size


def posed_points(scene) -> np.ndarray:
    return np.concatenate([mesh.skinned_positions() for mesh in scene.meshes])


@pytest.fixture(scope="module")
def blender_scenes():
    return {case["case"]: load_fbx(DATA / case["fbx"]) for case in REFERENCES["cases"]}


def test_the_recorded_files_are_the_ones_blender_posed():
    for case in REFERENCES["cases"]:
        for name, digest in ((case["fbx"], case["fbx_sha256"]), (case["posed"], case["posed_sha256"])):
            assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("case_name,array", FRAMES)
def test_posed_positions_equal_blenders(blender_scenes, case_name, array):
    case = next(c for c in REFERENCES["cases"] if c["case"] == case_name)
    frame = next(f for f in case["frames"] if f["array"] == array)
    scene = blender_scenes[case_name]
    clip = scene.find_animation(frame["stack"])
    assert clip is not None, f"no clip named as the stack {frame['stack']!r}: {[c.name for c in scene.animations]}"
    clip.apply(frame["fbx_time_s"])
    want = np.load(DATA / case["posed"])[array].astype(np.float64)
    assert len(want) == frame["vertex_count"]
    tolerance = ON_SAMPLE if frame["on_baked_sample"] else BETWEEN_SAMPLES
    assert point_set_distance(posed_points(scene), want, tolerance) < tolerance


def test_every_stack_is_a_clip_at_the_files_own_times(blender_scenes):
    for case in REFERENCES["cases"]:
        scene = blender_scenes[case["case"]]
        stacks = {stack["name"]: stack for stack in case["fbx_file"]["anim_stacks"]}
        assert [clip.name for clip in scene.animations] == list(stacks)
        for clip in scene.animations:
            # The clip's keys run over the stack's time span, in the file's own seconds.
            times = clip.key_times()
            assert times[-1] == pytest.approx(stacks[clip.name]["local_stop_s"], abs=1e-4)
    # The scene-wide stack of the transformed RiggedSimple starts at frame 10 at 30 fps.
    first = blender_scenes["riggedsimple_transformed"].animations[0].key_times()[0]
    assert first == pytest.approx(10 / 30, abs=1e-6)


# --- FBX's transform features, against the format's definition ---------------------------------
@pytest.fixture(scope="module")
def ascii_case(tmp_path_factory):
    path = tmp_path_factory.mktemp("fbx") / "features.fbx"
    path.write_text(fbx_cases.ascii_fbx())
    return path


@pytest.mark.parametrize("file_axes", [False, True])
def test_ascii_fbx_with_every_transform_feature_equals_the_fbx_definition(ascii_case, file_axes):
    doc, scene = load_fbx_file(ascii_case, file_axes)
    assert doc["ascii"] and doc["version"] == 7300
    (clip,) = scene.animations
    assert clip.name == "Bend"
    assert clip.key_times()[0] == pytest.approx(10 / 24)  # the take starts at frame 10 at 24 fps
    for seconds in (0.0, 10 / 24, 0.7, 22 / 24, 34 / 24, 2.0):  # before, on, between and after the keys
        clip.apply(seconds)
        want = fbx_cases.expected_points(seconds, file_axes)
        got = posed_points(scene)
        assert len(got) == len(want)
        assert point_set_distance(got, want) < 1e-6, seconds


def test_the_axes_and_units_are_said_and_can_be_kept(ascii_case):
    converted = load_fbx(ascii_case)
    kept = load_fbx(ascii_case, file_axes=True)
    assert converted.import_axes["up"] == "+z" and converted.import_axes["front"] == "-y"
    assert converted.import_axes["unit_meters"] == pytest.approx(0.0254)
    assert "turned to +Y up, front +Z, metres" in converted.import_axes["description"]
    assert "kept as the file has them" in kept.import_axes["description"]
    # Kept: the file's numbers (Z up, inches); converted: (x, y, z) -> (x, z, -y) in metres.
    a, b = posed_points(kept), posed_points(converted)
    turned = np.column_stack([a[:, 0], a[:, 2], -a[:, 1]]) * fbx_cases.INCH
    assert np.abs(np.sort(turned, axis=0) - np.sort(b, axis=0)).max() < 1e-6
    # The figure stands along +Z in the file: along +Y once converted.
    extent = b.max(axis=0) - b.min(axis=0)
    assert extent[1] == extent.max()


def test_info_tells_the_files_axes_version_and_stacks(cli):
    done = cli("info", DATA / "fox_zup_cm.fbx")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[:2]
    assert "FBX 7400 (binary)" in first[0]
    assert "up +z, front -y, 1 unit = 0.01 m: turned to +Y up, front +Z, metres" in first[1]
    assert "root|Walk_root" in done.stdout
    facts = json.loads(cli("info", DATA / "fox_zup_cm.fbx", "--json", "--keep-file-axes").stdout)
    assert facts["format"] == "fbx" and facts["fbx"]["axes"]["converted"] is False
    assert [s["name"] for s in facts["fbx"]["stacks"]] == ["root|Run_root", "root|Survey_root", "root|Walk_root"]


def test_export_to_gltf_keeps_the_skinning_and_the_clips(tmp_path, blender_scenes):
    out = tmp_path / "fox.glb"
    from viewer.gltf import save_gltf

    source = load_fbx(DATA / "fox_zup_cm.fbx")
    save_gltf(source, out)
    written = load_model(out)
    assert [clip.name for clip in written.animations] == [clip.name for clip in source.animations]
    for clip_name, seconds in (("root|Walk_root", 0.3), ("root|Survey_root", 2.0)):
        source.find_animation(clip_name).apply(seconds)
        written.find_animation(clip_name).apply(seconds)
        assert point_set_distance(posed_points(written), posed_points(source)) < 1e-5


# --- bad input -----------------------------------------------------------------------------------
def _lying_counts(data: bytes) -> bytes:
    """The binary FBX with its first Vertices array claiming ten times the values it holds."""
    at = data.index(b"Vertices") + len(b"Vertices")
    assert data[at:at + 1] == b"d"  # a float64 array: count, encoding, compressed length
    count = int.from_bytes(data[at + 1:at + 5], "little")
    return data[:at + 1] + (count * 10).to_bytes(4, "little") + data[at + 5:]


BAD_FILES = {
    "truncated.fbx": lambda data: data[:len(data) // 3],
    "random.fbx": lambda data: random.Random(7).randbytes(20000),
    "text.fbx": lambda data: b"this is not an FBX file\n",
    "empty.fbx": lambda data: b"",
    "lying-counts.fbx": _lying_counts,
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_bad_file_is_one_line_and_exit_2(cli, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(BAD_FILES[name]((DATA / "riggedsimple_transformed.fbx").read_bytes()))
    started = time.monotonic()
    done = cli("render", path, "--out", tmp_path / "out.png")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"boneviewer: error: {path}: ")
    assert time.monotonic() - started < 30  # a guard against a hang, not a timing
    assert not (tmp_path / "out.png").exists()


def test_damaged_files_never_take_the_process_down(tmp_path):
    """Bytes flipped and files cut anywhere: each is refused as a ViewerError or loads."""
    source = (DATA / "riggedsimple_transformed.fbx").read_bytes()
    rng = random.Random(1)
    outcomes = []
    for k in range(12):
        data = bytearray(source)
        if k % 3 == 0:
            data = data[:rng.randrange(len(data))]
        else:
            for _ in range(rng.randrange(1, 40)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        path = tmp_path / f"damaged{k}.fbx"
        path.write_bytes(bytes(data))
        try:
            load_fbx(path)
            outcomes.append("loaded")
        except ViewerError as error:
            assert str(error).startswith(f"{path}: ") and "\n" not in str(error)
            outcomes.append("refused")
    assert "refused" in outcomes


def test_a_reader_that_crashes_is_an_error_not_the_end(tmp_path, monkeypatch):
    import viewer.fbx as fbx

    crashing = tmp_path / "read.py"
    crashing.write_text("import os, signal\nimport protocol\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    monkeypatch.setattr(fbx, "READER", crashing)
    with pytest.raises(ViewerError, match=r"the FBX reader crashed \(SIGSEGV\) on this file"):
        read_fbx(DATA / "riggedsimple_transformed.fbx")


def test_without_ufbx_the_error_says_what_to_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ufbx" else real(name, *a))
    with pytest.raises(ViewerError, match=r"pip install 'boneviewer\[formats\]'"):
        load_fbx(DATA / "riggedsimple_transformed.fbx")


def test_check_reads_fbx_files(tmp_path):
    from viewer.checks import check_file

    report = check_file(DATA / "riggedfigure.fbx")
    assert report.loaded and report.errors == 0 and report.bones > 0
    assert report.clips and report.clips[0][0] == "Armature|Anim_0_Armature"
    bad = tmp_path / "bad.fbx"
    bad.write_bytes(b"\x00" * 100)
    report = check_file(bad)
    assert not report.loaded and [f.code for f in report.findings] == ["fbx-refused"]


def test_the_child_reads_without_numpy_or_the_viewer(tmp_path):
    """The reader is a script of its own: it imports neither numpy nor boneviewer."""
    source = (Path(__file__).parents[1] / "viewer" / "fbx" / "read.py").read_text()
    imports = [line.split()[1] for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert set(imports) <= {"__future__", "array", "sys", "protocol"}
    assert "import numpy" not in source and "from ." not in source and "viewer" not in "".join(imports)


def test_a_vertex_no_cluster_names_follows_the_meshs_node(tmp_path):
    """FBX lets a skinned mesh keep vertices no cluster moves: Maya, Blender and ufbx draw them
    where the mesh's own node puts them (ufbx 0.0.5's evaluate_scene with evaluate_skinning gives
    these same numbers for this file), while the others move with their bones alone, as FBX's
    definition says. Here the box's node moves along X while the spine bends."""
    path = tmp_path / "unweighted.fbx"
    path.write_text(fbx_cases.ascii_fbx(unweighted=15, body_moves=True))  # the top corner of the box
    scene = load_fbx(path, file_axes=True)
    body = next(mesh for mesh in scene.meshes if mesh.skeleton is not None)
    (clip,) = scene.animations
    for seconds in (0.0, 0.7, 34 / 24):
        clip.apply(seconds)
        got = body.skinned_positions()
        want = fbx_cases.expected_points(seconds, file_axes=True)[:16]
        want[15] = fbx_cases.BOX[15] + [fbx_cases.body_offset(seconds), 0.0, 0.0]
        assert point_set_distance(got, want) < 1e-6, seconds
    assert fbx_cases.body_offset(34 / 24) > 10  # it did move: 15 inches, a fifth of the box's size


def test_the_gpu_draws_the_vertices_no_bone_moves_where_the_cpu_puts_them(tmp_path):
    """The same rule in the skinning shader: the box, its top corner following its moving node,
    drawn by the GPU and by CPU skinning, pixel for pixel (within a rasteriser's edge)."""
    from viewer.camera import framed_camera
    from viewer.options import RenderOptions
    from viewer.render.headless import HeadlessRenderer
    from viewer.render.renderer import Renderer

    path = tmp_path / "unweighted.fbx"
    path.write_text(fbx_cases.ascii_fbx(unweighted=15, body_moves=True))
    scene = load_fbx(path)
    scene.animations[0].apply(34 / 24)
    camera = framed_camera(scene, yaw=30, pitch=10)
    plain = RenderOptions(show_skeleton=False, show_grid=False)
    with HeadlessRenderer((160, 160)) as headless:
        cpu = Renderer(headless.ctx, cpu_skinning=True)
        try:
            gpu_image = headless.render(scene, camera, plain)
            headless.target.framebuffer.use()
            cpu.render(scene, camera, headless.size, plain)
            cpu_image = headless.target.read()
        finally:
            cpu.release()
    drawn = (np.abs(gpu_image[:, :, :3].astype(int) - gpu_image[:1, :1, :3]).max(axis=2) > 30).mean()
    assert drawn > 0.02
    assert (np.abs(gpu_image[:, :, :3].astype(int) - cpu_image[:, :, :3]).max(axis=2) > 24).mean() < 0.005


def test_half_skinned_mesh_as_blender_draws_it():
    """Blender's half-skinned grid (tests/fbx_blender/make_skeleton_cases.py): the half weighted to
    nothing where the mesh's node puts it, the other half on the bone, within 1e-4 of the size of
    what Blender drew (its OBJ), at three frames."""
    scene = load_fbx(DATA / "half_skinned.fbx")
    (clip,) = scene.animations
    posed = np.load(DATA / "half_skinned.posed.npz")
    for name in posed.files:
        clip.apply(int(name.split("@")[1]) / 24)  # the scene-wide stack keeps Blender's frame numbers
        assert point_set_distance(posed_points(scene), posed[name].astype(np.float64), ON_SAMPLE) < ON_SAMPLE, name


def test_an_fbx_6100_ascii_file():
    """FBX 6.1 (geometry inside the model, Properties60): a triangle moved 50 cm up, turned 90
    degrees about Z and scaled 2, in centimetres: by hand, (x, y) -> (-2y, 2x) + (0, 50) cm."""
    doc, scene = load_fbx_file(DATA / "triangle-6100.fbx")
    assert doc["version"] == 6100 and doc["ascii"]
    (mesh,) = scene.meshes
    want = np.array([[0.0, 0.5, 0.0], [0.0, 0.7, 0.0], [-0.2, 0.5, 0.0]])
    assert point_set_distance(mesh.skinned_positions(), want) < 1e-9


def test_uvs_vertex_colours_and_the_node_name_of_a_mesh(ascii_case):
    """The prop's corner UVs (FBX's V up, glTF's down) and colours, and its name: its node's, not
    its geometry's or the helper node's its geometric transform became."""
    scene = load_fbx(ascii_case)
    prop = next(mesh for mesh in scene.meshes if mesh.skeleton is None)
    assert prop.name == "Prop"
    order = [int(np.abs(prop.colors - colour).sum(axis=1).argmin()) for colour in fbx_cases.QUAD_COLORS]
    assert np.abs(prop.colors[order] - fbx_cases.QUAD_COLORS).max() < 1e-6
    flipped = np.column_stack([fbx_cases.QUAD_UV[:, 0], 1.0 - fbx_cases.QUAD_UV[:, 1]])
    assert np.abs(prop.texcoords[order] - flipped).max() < 1e-6


# --- a skeleton and its motion, no mesh --------------------------------------------------------
HUMANIK = DATA / "humanik_motion.fbx"
ONLY_A_NULL = """; FBX 7.3.0 project file
FBXHeaderExtension:  {
	FBXHeaderVersion: 1003
	FBXVersion: 7300
}
Objects:  {
	Model: 1001, "Model::Empty", "Null" {
		Version: 232
	}
}
Connections:  {
	C: "OO",1001,0
}
"""


def test_a_skeleton_without_a_mesh_opens_as_a_bvh_does():
    """An armature with a take and no mesh (bones named as HumanIK names them): a bone per joint
    linked to its node, capsules skinned to them, the take as a clip; each joint where Blender
    put it at three frames (within a micrometre)."""
    scene = load_fbx(HUMANIK)
    (skeleton,) = scene.skeletons
    (figure,) = scene.meshes
    assert figure.skeleton is skeleton and len(skeleton.bones) == 19
    assert skeleton.bones[0].name == "Character1_Hips" and figure.world_node.name == "Character1_Reference"
    (clip,) = scene.animations
    joints = np.load(DATA / "humanik_motion.joints.npz")
    nodes = {node.name: node for node in scene.nodes}
    lowest = {}
    for frame in (1, 10, 20):
        clip.apply(frame / 24)  # the scene-wide stack keeps Blender's frame numbers
        for key in joints.files:
            bone, at = key.split("@")
            if int(at) == frame:
                np.testing.assert_allclose(nodes[bone].get_world_matrix()[3, :3], joints[key], atol=1e-6)
        points = figure.skinned_positions()  # the capsules follow their bones
        lowest[frame] = points[:, 1].min()
        assert np.abs(points - joints[f"Character1_Head@{frame}"]).sum(axis=1).min() < 0.1
    # The hips' key moved them 0.4 m along the hips bone's own Y, which points up, the capsules with them.
    assert joints["Character1_Hips@20"][1] - joints["Character1_Hips@1"][1] == pytest.approx(0.4, abs=1e-5)
    assert lowest[20] - lowest[1] > 0.1


def test_a_file_with_no_mesh_and_no_bones_is_still_one_line(cli, tmp_path):
    path = tmp_path / "empty-scene.fbx"
    path.write_text(ONLY_A_NULL)
    with pytest.raises(ViewerError, match="no meshes to show, and no skeleton"):
        load_fbx(path)
    done = cli("render", path, "--out", tmp_path / "out.png")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "no meshes to show" in lines[0], done.stderr
    assert not (tmp_path / "out.png").exists()


def test_render_info_and_motion_take_a_skeleton_only_fbx(cli, tmp_path):
    """render draws the skeleton, info lists its clip, and --motion retargets its take onto
    characters the naming schemes map (CesiumMan, RobotExpressive) as it does a BVH's."""
    from PIL import Image

    out = tmp_path / "skeleton.png"
    done = cli("render", HUMANIK, "--time", "0.4", "--out", out, "--size", "96x128")
    assert done.returncode == 0, done.stderr
    assert (np.asarray(Image.open(out))[..., 3] > 0).mean() > 0.01  # the figure is drawn
    info = cli("info", HUMANIK)
    assert info.returncode == 0 and "Scene" in info.stdout, info.stdout
    samples = Path(__file__).parent / "data" / "gltf-samples"
    for model in (samples / "CesiumMan" / "CesiumMan.glb", samples / "RobotExpressive" / "RobotExpressive.glb"):
        done = cli("render", model, "--motion", HUMANIK, "--time", "0.4", "--out", tmp_path / "r.png",
                   "--size", "64x64")
        assert done.returncode == 0, done.stderr
    from viewer.model.retarget import Retargeting, retarget_error

    worst, rows = retarget_error(Retargeting(load_fbx(HUMANIK), load_model(samples / "CesiumMan" / "CesiumMan.glb")))
    assert worst < 0.5 and len(rows) >= 10
