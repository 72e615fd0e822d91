"""`boneviewer synth`: labelled images checked against numpy references computed here from the
written cameras alone (the keypoints projected, the skinned triangles rasterised, a ray cast for
visibility), the same bytes from the pool, one worker and Ray, resuming, the labels module
without GL, and bad input as one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from viewer.synth import labels as L

SAMPLES = Path(__file__).parent / "data" / "gltf-samples"
BVH = Path(__file__).parent / "data" / "bvh"
SIZE = (512, 384)  # the character 190 to 350 pixels tall (--fill 0.5:0.9): see test_visibility_agrees_with_a_ray_cast
COUNT = 12
RANGES = ["--size", f"{SIZE[0]}x{SIZE[1]}", "--fill", "0.5:0.9"]
TOLERANCE_PX = 0.5


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """Two rigs: CesiumMan (one skin, its own walk) and RobotExpressive (two skins over one set of
    joints, rigid body parts under joint nodes, many clips); wave_hello.bvh retargets onto the robot."""
    folder = tmp_path_factory.mktemp("synth-models")
    shutil.copy(SAMPLES / "CesiumMan" / "CesiumMan.glb", folder)
    shutil.copy(SAMPLES / "RobotExpressive" / "RobotExpressive.glb", folder)
    return folder


@pytest.fixture(scope="module")
def dataset(library, tmp_path_factory):
    from conftest import run_cli

    out = tmp_path_factory.mktemp("synth") / "data"
    result = run_cli("synth", library, "--out", out, "--count", COUNT, *RANGES, "--workers", "2", "--seed", "7")
    assert result.returncode == 0, result.stderr
    return out, json.loads((out / "annotations.json").read_text()), result


# --- numpy references -------------------------------------------------------------------------------
_SCENES: dict = {}


def posed(library: Path, image: dict):
    """The scene of an image's model at its clip and time, posed by the model's own API."""
    from viewer.loaders import load_model
    from viewer.model.animation import clip_time

    scene = load_model(library / image["model"])
    if image["clip"] is not None:
        clip = next(c for i, c in enumerate(scene.animations) if (c.name or i) == image["clip"])
        clip.apply(clip_time(image["time"], clip.duration, loop=False))
    scene.prepare()
    return scene


def camera(image: dict):
    return np.array(image["camera"]["K"]), np.array(image["camera"]["world_to_camera"])


def world_to_pixels(points, K, world_to_camera):
    """(pixels (N, 2), camera-space points (N, 3)): the written camera applied as OpenCV does."""
    homogeneous = np.c_[points, np.ones(len(points))] @ world_to_camera.T
    camera_points = homogeneous[:, :3]
    uvw = camera_points @ K.T
    return uvw[:, :2] / uvw[:, 2:3], camera_points


def triangles_in_camera(scene, world_to_camera, culled: bool = False) -> np.ndarray:
    """(T, 3, 3) camera-space triangles of every mesh, skinned on the CPU; ``culled``: without
    the back faces of single-sided materials, as the renderer draws them (a front face winds
    counter-clockwise seen from the camera, clockwise under a mirroring world matrix)."""
    found = []
    for mesh in scene.meshes:
        positions = mesh.skinned_positions()
        triangles = positions[mesh.indices.reshape(-1, 3)]
        triangles = (np.c_[triangles.reshape(-1, 3), np.ones(triangles.size // 3)]
                     @ world_to_camera.T)[:, :3].reshape(-1, 3, 3)
        if culled:
            a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
            towards = np.einsum("ij,ij->i", np.cross(b - a, c - a), a) < 0  # the normal faces the camera (origin)
            if np.linalg.det(np.asarray(mesh.world_matrix, float)[:3, :3]) < 0:
                towards = ~towards
            keep = np.zeros(len(triangles), bool)
            for submesh in mesh.submeshes:
                rows = slice(submesh.first_index // 3, (submesh.first_index + submesh.index_count) // 3)
                keep[rows] = True if submesh.pbr.double_sided else towards[rows]
            triangles = triangles[keep]
        found.append(triangles)
    return np.concatenate(found)


def rasterise(triangles, K, size):
    """(coverage (H, W) bool, depth (H, W), 0 where uncovered): pixel centres tested against the
    projected triangles (edge functions), depth along the view axis interpolated perspective-
    correctly (1/z is affine on the image), the nearest kept."""
    width, height = size
    projected = triangles @ K.T
    xy = projected[..., :2] / projected[..., 2:3]  # (T, 3, 2)
    inverse_z = 1.0 / triangles[..., 2]
    coverage, depth = np.zeros((height, width), bool), np.full((height, width), np.inf)
    # The pixels whose centres (i + 0.5) may lie in each triangle's box, clipped to the image.
    low = np.maximum(np.ceil(xy.min(axis=1) - 0.5).astype(int), 0)
    high = np.minimum(np.floor(xy.max(axis=1) - 0.5).astype(int), [width - 1, height - 1])
    for t in np.flatnonzero(np.all(low <= high, axis=1)):  # most of a detailed model's triangles hold no centre
        (x0, y0), (x1, y1) = low[t], high[t]
        px, py = np.meshgrid(np.arange(x0, x1 + 1) + 0.5, np.arange(y0, y1 + 1) + 0.5)
        (ax, ay), (bx, by), (cx, cy) = xy[t]
        area = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        if abs(area) < 1e-12:
            continue
        w0 = ((bx - px) * (cy - py) - (by - py) * (cx - px)) / area
        w1 = ((cx - px) * (ay - py) - (cy - py) * (ax - px)) / area
        w2 = 1.0 - w0 - w1
        inside = (w0 >= 0) & (w1 >= 0) & (w2 >= 0)
        if not inside.any():
            continue
        z = 1.0 / (w0 * inverse_z[t, 0] + w1 * inverse_z[t, 1] + w2 * inverse_z[t, 2])
        window = depth[y0:y1 + 1, x0:x1 + 1]
        nearer = inside & (z < window)
        window[nearer] = z[nearer]
        coverage[y0:y1 + 1, x0:x1 + 1] |= inside
    return coverage, np.where(coverage, depth, 0.0)


def nearest_hits(directions, triangles) -> np.ndarray:
    """Distance along each unit ray from the camera centre to the nearest triangle (inf: none)
    (Moller-Trumbore, every ray against every triangle)."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    e1, e2 = b - a, c - a
    hits = np.full(len(directions), np.inf)
    for k, d in enumerate(directions):
        p = np.cross(d, e2)
        det = np.einsum("ij,ij->i", e1, p)
        ok = np.abs(det) > 1e-12
        inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
        s = -a
        u = np.einsum("ij,ij->i", s, p) * inv
        q = np.cross(s, e1)
        v = (q @ d) * inv
        t = np.einsum("ij,ij->i", e2, q) * inv
        good = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
        if good.any():
            hits[k] = t[good].min()
    return hits


def read(out: Path, name: str) -> np.ndarray:
    with Image.open(out / name) as image:
        return np.asarray(image)


# --- exactness -----------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning")
def test_the_files_and_the_coco_file_pycocotools_loads(dataset):  # (pycocotools 2.0 under numpy 2 warns)
    from pycocotools import mask as mask_utils
    from pycocotools.coco import COCO

    out, data, result = dataset
    coco = COCO(str(out / "annotations.json"))
    assert len(coco.getImgIds()) == COUNT and len(coco.getAnnIds()) == COUNT
    assert {c["name"] for c in data["categories"]} == {"CesiumMan.glb", "RobotExpressive.glb"}
    assert {"seed", "depth_scale", "ranges"} <= set(data["info"]) and data["info"]["seed"] == 7
    assert data["info"]["ranges"]["fill"] == [0.5, 0.9] and data["info"]["ranges"]["occlusion_distance"] == 0.08
    for image in data["images"]:
        name = image["file_name"]
        assert name == f"images/{image['id'] - 1:06d}.png"
        with Image.open(out / name) as png:
            assert png.mode == "RGB" and png.size == SIZE
        with Image.open(out / image["depth_file_name"]) as png:
            assert png.mode.startswith("I;16") and png.size == SIZE
        assert read(out, image["parts_file_name"]).dtype == np.uint8
        annotation = coco.loadAnns(coco.getAnnIds(imgIds=image["id"]))[0]
        category = coco.loadCats(annotation["category_id"])[0]
        assert len(annotation["keypoints"]) == 3 * len(category["keypoints"]) == len(annotation["keypoints_3d"])
        assert all(1 <= a <= len(category["keypoints"]) and 1 <= b <= len(category["keypoints"])
                   for a, b in category["skeleton"])
        mask = coco.annToMask(annotation)
        drawn = read(out, image["depth_file_name"]) > 0
        assert np.array_equal(mask.astype(bool), drawn)  # the RLE decodes to the drawn pixels
        assert annotation["area"] == drawn.sum() == mask_utils.area(coco.annToRLE(annotation))
        rows, columns = np.nonzero(drawn)
        assert annotation["bbox"] == [columns.min(), rows.min(), np.ptp(columns) + 1, np.ptp(rows) + 1]
        assert annotation["num_keypoints"] == sum(v > 0 for v in annotation["keypoints"][2::3])
        assert (out / "labels" / f"{image['id'] - 1:06d}.json").is_file()
    assert f"{COUNT} images, {COUNT} annotations" in result.stdout
    models = {image["model"] for image in data["images"]}
    assert models == {"CesiumMan.glb", "RobotExpressive.glb"}  # the draws reach both models


def test_keypoints_are_the_joints_projected_with_the_written_camera(dataset, library):
    from viewer.model.retarget import main_skeleton

    out, data, _ = dataset
    categories = {c["id"]: c for c in data["categories"]}
    for image, annotation in zip(data["images"], data["annotations"]):
        scene = posed(library, image)
        skeleton = main_skeleton(scene)
        assert [b.name for b in skeleton.bones] == categories[annotation["category_id"]]["keypoints"]
        mesh = next(m for m in scene.skinned_meshes if m.skeleton is skeleton)
        joints = (skeleton.get_absolute_matrices() @ mesh.world_matrix)[:, 3, :3]
        K, world_to_camera = camera(image)
        pixels, camera_points = world_to_pixels(joints, K, world_to_camera)
        points = np.array(annotation["keypoints"], float).reshape(-1, 3)
        inside = ((camera_points[:, 2] > 0) & (pixels[:, 0] >= 0) & (pixels[:, 0] < SIZE[0]) & (pixels[:, 1] >= 0)
                  & (pixels[:, 1] < SIZE[1]))
        assert np.array_equal(points[:, 2] > 0, inside)
        assert np.abs(points[inside, :2] - pixels[inside]).max() <= TOLERANCE_PX
        assert np.all(points[~inside] == 0)
        size = float(np.max(scene.rest_bounds[1] - scene.rest_bounds[0]))
        written = np.array(annotation["keypoints_3d"]).reshape(-1, 3)
        assert np.abs(written - camera_points).max() <= 1e-5 * size


def test_the_written_camera_drew_the_parts_and_the_depth(dataset, library):
    """The part image's non-zero pixels are the skinned triangles rasterised here with K and
    world_to_camera (IoU >= 0.98), and the 16-bit depth is their camera-space depth (within 0.5%
    of the character's size) where both see the surface."""
    out, data, _ = dataset
    scale = data["info"]["depth_scale"]
    for image in data["images"]:
        scene = posed(library, image)
        K, world_to_camera = camera(image)
        coverage, depth = rasterise(triangles_in_camera(scene, world_to_camera), K, SIZE)
        parts = read(out, image["parts_file_name"]) > 0
        drawn = read(out, image["depth_file_name"]).astype(float) / scale
        iou = (parts & coverage).sum() / (parts | coverage).sum()
        assert iou >= 0.98, (image["file_name"], iou)
        assert np.array_equal(parts, drawn > 0) or (parts & ~(drawn > 0)).sum() == 0
        size = float(np.max(scene.rest_bounds[1] - scene.rest_bounds[0]))
        both = coverage & (drawn > 0)
        # Pixels whose centre lies a hair from a silhouette edge may see another surface: 99% agree.
        agree = np.abs(drawn[both] - depth[both]) <= 0.005 * size
        assert agree.mean() >= 0.99, (image["file_name"], agree.mean())


def test_visibility_agrees_with_a_ray_cast(dataset, library):
    """Visible where the nearest surface drawn along the ray through the joint (front faces of
    single-sided materials, as drawn) lies within the occlusion distance of it, hidden where it
    is nearer or farther by more, or where the ray meets nothing drawn (the robot's pole targets
    in the air). The labeller reads the depth at the joint's pixel, the ray cast goes through
    the joint itself: they differ where a silhouette passes between the joint and its pixel's
    centre (a finger, a gap between the robot's rigid parts). With the character 190 pixels
    tall or more they agree for more than 99% of the keypoints (about 97% at 40 pixels)."""
    out, data, _ = dataset
    agree = total = 0
    for image, annotation in zip(data["images"], data["annotations"]):
        scene = posed(library, image)
        K, world_to_camera = camera(image)
        triangles = triangles_in_camera(scene, world_to_camera, culled=True)
        joints = np.array(annotation["keypoints_3d"]).reshape(-1, 3)
        points = np.array(annotation["keypoints"]).reshape(-1, 3)
        seen = points[:, 2] > 0
        distance = np.linalg.norm(joints[seen], axis=1)
        hits = nearest_hits(joints[seen] / distance[:, None], triangles)
        visible = np.abs(hits - distance) <= image["occlusion_distance"]  # inf: nothing drawn on the ray
        agree += int(np.sum(visible == (points[seen, 2] == 2)))
        total += int(seen.sum())
        assert image["occlusion_distance"] > 0
    assert total > 50 and agree >= 0.99 * total, (agree, total)
    states = [v for a in data["annotations"] for v in a["keypoints"][2::3]]
    assert states.count(1) > 0 and states.count(2) > 0  # both states occur in this set


def test_the_preview_page(dataset):
    out, data, _ = dataset
    page = (out / "index.html").read_text()
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page
    for image in data["images"]:
        assert image["file_name"] in page and image["parts_file_name"] in page and image["depth_file_name"] in page
    visible = sum(v == 2 for a in data["annotations"] for v in a["keypoints"][2::3])
    assert f'class="v2">{visible}<' in page


# --- determinism and resuming --------------------------------------------------------------------------
def files_of(out: Path) -> dict:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes_on_one_worker_and_ray_another_seed_other_images(dataset, library, tmp_path):
    from conftest import run_cli

    out, _, _ = dataset
    arguments = ["--count", COUNT, *RANGES, "--seed", "7"]
    one = tmp_path / "one"
    assert run_cli("synth", library, "--out", one, "--workers", "1", *arguments).returncode == 0
    assert files_of(one) == files_of(out)
    pytest.importorskip("ray")
    ray = tmp_path / "ray"
    result = run_cli("synth", library, "--out", ray, "--ray", *arguments, timeout=240)
    assert result.returncode == 0, result.stderr
    assert files_of(ray) == files_of(out)
    other = tmp_path / "other"
    assert run_cli("synth", library, "--out", other, "--workers", "2", *arguments[:-1], "8").returncode == 0
    for index in range(COUNT):
        assert read(other, f"images/{index:06d}.png").tobytes() != read(out, f"images/{index:06d}.png").tobytes()


def test_an_interrupted_run_resumes_without_redoing_whole_images(dataset, library, tmp_path):
    from conftest import run_cli

    out, _, _ = dataset
    resumed = tmp_path / "resumed"
    shutil.copytree(out, resumed)
    # As an interruption leaves it: no annotations.json yet, image 3's PNGs written but not its
    # label file, image 5 not started, a temporary file from a write in flight.
    (resumed / "annotations.json").unlink()
    (resumed / "labels" / "000003.json").unlink()
    for folder in ("images", "depth", "parts", "labels"):
        (resumed / folder / "000005.png").unlink(missing_ok=True)
    (resumed / "labels" / "000005.json").unlink()
    (resumed / "images" / ".000006.tmp123-0.png").write_bytes(b"half a PNG")
    kept = {p: p.stat().st_mtime_ns for p in (resumed / "images").glob("0*.png") if p.stem not in ("000003",)}
    result = run_cli("synth", library, "--out", resumed, "--count", COUNT, *RANGES, "--seed", "7", "--workers", "1")
    assert result.returncode == 0, result.stderr
    assert f"boneviewer: synth: resuming: {COUNT - 2} of {COUNT} images already written by an earlier run of the " \
           "same options and inputs\n" in result.stderr
    assert all(path.stat().st_mtime_ns == mtime for path, mtime in kept.items())  # not redone
    (resumed / "images" / ".000006.tmp123-0.png").unlink()
    assert files_of(resumed) == files_of(out)


# --- draws that show too little are drawn again -----------------------------------------------------------
def test_a_draw_that_shows_too_little_is_drawn_again_from_the_same_seed(tmp_path):
    """SimpleSkin is a single-sided plane: seen from behind it is culled and nothing is drawn
    (5 of the first 8 draws of seed 0). Each such image is drawn again from (seed, index,
    attempt): every image shows the plane and a visible keypoint on it, the count stays 8, and
    the redraws are the same bytes from one worker, two, and a resumed run."""
    from conftest import run_cli

    model = SAMPLES / "SimpleSkin" / "SimpleSkin.gltf"
    one, two = tmp_path / "one", tmp_path / "two"
    arguments = ["--count", 8, "--size", "64x48"]
    result = run_cli("synth", model, "--out", one, "--workers", "1", *arguments)
    assert result.returncode == 0, result.stderr
    data = json.loads((one / "annotations.json").read_text())
    assert len(data["images"]) == len(data["annotations"]) == 8
    for image, annotation in zip(data["images"], data["annotations"]):
        drawn = read(one, image["depth_file_name"]) > 0
        assert annotation["area"] == drawn.sum() >= 4 and annotation["bbox"][2] > 0  # 0.1% of 64x48, rounded up
        points = np.array(annotation["keypoints"]).reshape(-1, 3)
        assert (points[:, 2] == 2).sum() >= 1
        for x, y, v in points:
            if v == 2:
                assert drawn[int(y), int(x)]  # a visible keypoint lies on a drawn pixel
    assert data["info"]["ranges"]["min_visible"] == 1 and data["info"]["ranges"]["min_area"] == 0.001
    redrawn = [image["id"] - 1 for image in data["images"] if image["attempt"] > 0]
    assert len(redrawn) >= 2, "seed 0 draws the plane from behind for some images"
    assert f"({len(redrawn)} drawn again: their first draw showed too little)" in result.stdout
    # The first draw of a redrawn image, drawn again here (in a child process: GL) as the worker drew
    # it: the plane seen from behind, culled, nothing drawn, and its keypoints in the image hidden.
    script = ("import json, sys; from pathlib import Path; from viewer.synth.job import *; "
              "from viewer.synth.run import plan; options = SynthOptions(size=(64, 48)); "
              "catalogue, _ = plan(Path(sys.argv[1]), options, say=lambda line: None); "
              "first = Attempt(worker(options.size), int(sys.argv[2]), 0, options, catalogue); "
              "print(json.dumps([first.shortfall, first.area, first.points[:, 2].tolist()]))")
    import subprocess
    import sys

    shown = subprocess.run([sys.executable, "-c", script, str(model), str(redrawn[0])], capture_output=True, text=True,
                           cwd=Path(__file__).parent.parent, timeout=60)
    assert json.loads(shown.stdout) == ["nothing drawn", 0, [1, 1]], shown.stderr
    result = run_cli("synth", model, "--out", two, "--workers", "2", *arguments)
    assert result.returncode == 0, result.stderr
    assert files_of(two) == files_of(one)
    for index in redrawn[:2]:  # an interrupted run redraws them alike
        (two / "labels" / f"{index:06d}.json").unlink()
        (two / "images" / f"{index:06d}.png").unlink()
    result = run_cli("synth", model, "--out", two, "--workers", "1", *arguments)
    assert result.returncode == 0 and "resuming: 6 of 8 images" in result.stderr, result.stderr
    assert files_of(two) == files_of(one)


def test_an_image_no_draw_shows_enough_of_is_one_error_line(capsys, tmp_path):
    status, err = run_in_process(capsys, SAMPLES / "SimpleSkin" / "SimpleSkin.gltf", "--out", tmp_path / "o",
                                 "--count", "2", "--size", "16x16", "--min-area", "1", "--workers", "1")
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1, err
    assert lines[0].startswith("boneviewer: error: image 0: none of 32 draws shows enough of the character for "
                               "--min-visible 1 and --min-area 1 (")
    assert "under 256 pixels drawn" in lines[0] and "nothing drawn" in lines[0]
    assert not (tmp_path / "o" / "annotations.json").exists()


def test_shortfall_says_why_an_image_shows_too_little():
    visible, hidden = [10.0, 10.0, 2], [10.0, 10.0, 1]
    assert L.shortfall([visible, hidden], 0, 1000, 1, 0.0) == "nothing drawn"
    assert L.shortfall([visible, hidden], 4, 1000, 1, 0.005) == "under 5 pixels drawn"
    assert L.shortfall([visible, hidden], 5, 1000, 1, 0.005) is None
    assert L.shortfall([hidden, hidden], 50, 1000, 1, 0.001) == "under 1 keypoints visible"
    assert L.shortfall([visible, hidden], 50, 1000, 2, 0.001) == "under 2 keypoints visible"
    assert L.shortfall([visible, visible], 50, 1000, 5, 0.001) is None  # a rig of 2: both are enough
    assert L.shortfall(np.zeros((0, 3)), 50, 1000, 3, 0.001) is None  # a rigid object: its area alone
    assert L.shortfall([hidden], 50, 1000, 0, 0.001) is None


def test_a_redraw_is_a_pure_function_of_seed_index_and_attempt():
    from viewer.synth.job import Catalogue, ClipEntry, ModelEntry, SynthOptions, draw

    catalogue = Catalogue((ModelEntry("/a.glb", "a.glb", (ClipEntry("walk", 0, None, 2.0),), 1, 1.7, 20),), 100.0)
    options = SynthOptions()
    assert draw(3, 5, options, catalogue) == draw(3, 5, options, catalogue, 0)  # attempt 0 is the first draw
    attempts = [draw(3, 5, options, catalogue, a) for a in range(4)]
    assert attempts == [draw(3, 5, options, catalogue, a) for a in range(4)]
    assert len({(d.yaw, d.pitch, d.time) for d in attempts}) == 4
    assert draw(3, 6, options, catalogue, 1) != attempts[1]


# --- an --out that holds an earlier run --------------------------------------------------------------------
def test_a_rerun_with_other_options_is_refused_by_name_and_force_clears_only_synths_files(capsys, tmp_path):
    """An earlier run of 4 images, then 2 with another seed: refused in one line naming --seed,
    nothing touched; with --force the earlier run's files go (the user's own files stay) and
    the folder holds exactly the images annotations.json lists."""
    model, out = SAMPLES / "SimpleSkin" / "SimpleSkin.gltf", tmp_path / "out"
    tiny = ["--size", "16x16", "--workers", "1"]
    status, _ = run_in_process(capsys, model, "--out", out, "--count", "4", *tiny)
    assert status == 0
    (out / "images" / "notes.txt").write_text("mine")
    (out / "README.md").write_text("mine")
    before = files_of(out)
    status, err = run_in_process(capsys, model, "--out", out, "--count", "2", "--seed", "1", *tiny)
    assert status == 2 and err.strip().splitlines() == [
        f"boneviewer: error: --out {out}: holds an earlier synth run with other options: --seed (0 there, 1 now); "
        "give the same options to resume it, or --force to remove its files and start over"]
    assert files_of(out) == before
    status, err = run_in_process(capsys, model, "--out", out, "--count", "2", "--seed", "1", "--fill", "0.5:0.8",
                                 "--size", "16x12", *tiny[2:])
    assert status == 2 and "--size (16x16 there, 16x12 now), --seed (0 there, 1 now), --fill (0.3:0.9 there, " \
                           "0.5:0.8 now);" in err
    status, err = run_in_process(capsys, model, "--out", out, "--count", "2", "--seed", "1", "--force", *tiny)
    assert status == 0 and f"boneviewer: synth: --force: removed the 19 files of an earlier run from {out}\n" in err
    data = json.loads((out / "annotations.json").read_text())
    listed = {image[key] for image in data["images"] for key in ("file_name", "depth_file_name", "parts_file_name")}
    listed |= {f"labels/{image['id'] - 1:06d}.json" for image in data["images"]}
    left = set(files_of(out)) - {"annotations.json", "index.html", "synth.json"}
    assert left == listed | {"images/notes.txt", "README.md"} and len(listed) == 8
    assert (out / "README.md").read_text() == "mine" and data["info"]["seed"] == 1
    assert json.loads((out / "synth.json").read_text())["options"]["--seed"] == 1


def test_the_same_options_resume_a_larger_count_adds_and_a_smaller_one_is_refused(capsys, tmp_path):
    model, out = SAMPLES / "SimpleSkin" / "SimpleSkin.gltf", tmp_path / "out"
    tiny = ["--size", "16x16", "--workers", "1"]
    assert run_in_process(capsys, model, "--out", out, "--count", "3", *tiny)[0] == 0
    first = files_of(out)
    status, err = run_in_process(capsys, model, "--out", out, "--count", "5", *tiny)
    assert status == 0 and "resuming: 3 of 5 images already written" in err
    assert all(files_of(out)[name] == data for name, data in first.items() if name.startswith(("images/", "labels/")))
    status, err = run_in_process(capsys, model, "--out", out, "--count", "2", *tiny)
    assert status == 2 and err.strip().splitlines() == [
        f"boneviewer: error: --out {out}: the earlier run of these options has images up to 000004; --count 2 "
        "would leave 3 of them out of annotations.json: give --count 5 or more to resume it, or --force to remove "
        "its files and start over"]


def test_changed_inputs_and_files_without_a_manifest_are_refused(capsys, tmp_path):
    folder, out = tmp_path / "models", tmp_path / "out"
    folder.mkdir()
    shutil.copy(SAMPLES / "SimpleSkin" / "SimpleSkin.gltf", folder)
    tiny = ["--size", "16x16", "--workers", "1"]
    assert run_in_process(capsys, folder / "SimpleSkin.gltf", "--out", out, "--count", "1", *tiny)[0] == 0
    with open(folder / "SimpleSkin.gltf", "a") as model:
        model.write("\n")  # the same model, other bytes
    status, err = run_in_process(capsys, folder / "SimpleSkin.gltf", "--out", out, "--count", "1", *tiny)
    assert status == 2 and "other options: the inputs changed since (SimpleSkin.gltf changed);" in err
    (out / "synth.json").unlink()  # as an older boneviewer left it
    status, err = run_in_process(capsys, folder / "SimpleSkin.gltf", "--out", out, "--count", "1", *tiny)
    assert status == 2 and err.strip().splitlines() == [
        f"boneviewer: error: --out {out}: holds files synth writes (annotations.json, depth/, images/, index.html, "
        "labels/, parts/) but no synth.json saying which run wrote them; give --force to remove them and start "
        "over, or another --out"]
    status, _ = run_in_process(capsys, folder / "SimpleSkin.gltf", "--out", out, "--count", "1", "--force", *tiny)
    assert status == 0 and sorted(files_of(out)) == ["annotations.json", "depth/000000.png", "images/000000.png",
                                                     "index.html", "labels/000000.json", "parts/000000.png",
                                                     "synth.json"]


# --- the labels module, without GL -----------------------------------------------------------------------
def test_the_opencv_camera_of_a_gl_camera_puts_points_on_the_gl_pixels():
    from viewer.camera import OrbitCamera

    camera_ = OrbitCamera(target=(0.2, 1.0, -0.3), distance=4.0, yaw=35.0, pitch=20.0, fov_y=50.0)
    camera_.screen_offset = 0.1
    width, height = 200, 120
    view, projection = camera_.view_matrix(), camera_.projection_matrix(width / height)
    K, world_to_camera = L.opencv_camera(view, projection, width, height)
    points = np.random.default_rng(0).uniform(-1.0, 1.0, (20, 3)) + [0.2, 1.0, -0.3]
    pixels, _ = world_to_pixels(points, K, world_to_camera)
    assert np.abs(pixels - camera_.project(points, width, height)).max() < 1e-9
    assert np.allclose(world_to_camera[:3, :3] @ world_to_camera[:3, :3].T, np.eye(3))
    assert np.linalg.det(world_to_camera[:3, :3]) > 0  # a rotation: OpenCV's axes are right-handed too
    centred = L.opencv_camera(OrbitCamera().view_matrix(), OrbitCamera().projection_matrix(width / height), width,
                              height)[0]
    assert np.allclose(centred[:2, 2], [width / 2, height / 2])


def test_keypoint_visibility_rule():
    K = np.array([[100.0, 0, 50], [0, 100.0, 40], [0, 0, 1]])
    depth = np.zeros((80, 100), np.float32)
    depth[40:, :] = 2.0  # a surface at depth 2 over the bottom half
    joints = np.array([[0.0, 0.05, 3.0],    # bottom half, 1 behind the surface: hidden
                       [0.0, 0.05, 2.05],   # within the occlusion distance behind it: visible
                       [0.0, 0.05, 1.95],   # within it in front: visible
                       [0.0, 0.05, 1.5],    # 0.5 in front of the drawn surface, its own not drawn: hidden
                       [0.0, -0.05, 3.0],   # top half, nothing drawn there: hidden (the picture shows no joint)
                       [0.0, 0.0, -1.0],    # behind the camera
                       [1.0, 0.0, 1.0]])    # outside the image
    points = L.keypoints(joints, K, depth, occlusion_distance=0.1)
    assert points[:, 2].tolist() == [1, 2, 2, 1, 1, 0, 0]
    assert np.allclose(points[0, :2], [50.0, 40.0 + 100 * 0.05 / 3.0]) and np.all(points[5:, :2] == 0)


@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning")
def test_rle_and_box_of_a_mask_match_pycocotools():
    from pycocotools import mask as mask_utils

    mask = np.zeros((7, 9), bool)
    mask[0, 0] = mask[2:5, 3:7] = mask[6, 8] = True
    encoded = L.rle(mask)
    assert encoded["counts"][0] == 0  # starts with a run of ones: an empty run of zeros first
    decoded = mask_utils.decode(mask_utils.frPyObjects(encoded, 7, 9))
    assert np.array_equal(decoded.astype(bool), mask)
    assert L.mask_box(mask) == ([0, 0, 9, 7], 14)
    assert L.mask_box(np.zeros((3, 3), bool)) == ([0, 0, 0, 0], 0)


def test_depth_and_part_images():
    depth = np.array([[0.0, 1.0, 20.0], [1e-7, 0.5, 0.0]], np.float32)
    assert L.depth_image(depth, 1000.0).tolist() == [[0, 1000, 20000], [1, 500, 0]]
    assert L.depth_image(depth, 1e4).max() == 65535  # clamped, not wrapped
    assert L.part_image(np.array([[0, 254]]), 254).dtype == np.uint8
    assert L.part_image(np.array([[0, 300]]), 300).dtype == np.uint16


def test_vertex_parts_follow_the_largest_weight_and_rigid_parts():
    from viewer.loaders import load_model
    from viewer.model.retarget import main_skeleton
    from viewer.model.weights import rigid_bone

    robot = load_model(SAMPLES / "RobotExpressive" / "RobotExpressive.glb")
    skeleton = main_skeleton(robot)
    parts = L.vertex_parts(robot, skeleton)
    bones = list(skeleton.bones)
    torso = next(m for m in robot.static_meshes if m.name == "Torso")
    bone = rigid_bone(torso, robot)
    assert set(parts[id(torso)]) == {bones.index(next(b for b in bones if b.name == bone.name)) + 1}
    for mesh in robot.skinned_meshes:
        assert parts[id(mesh)].min() >= 1 and parts[id(mesh)].max() <= len(bones)
    # A skin over the labelled skeleton itself: the part is the largest weight's bone + 1.
    mesh = next(m for m in robot.skinned_meshes if m.skeleton is skeleton)
    vertex = int(np.argmax(mesh.weights.max(axis=1) < 1.0))  # a vertex with several influences
    joint = mesh.joints[vertex, np.argmax(mesh.weights[vertex])]
    assert parts[id(mesh)][vertex] == bones.index(next(b for b in bones if b.get_index() == joint)) + 1


def test_a_loaded_model_goes_back_to_its_loaded_pose_after_a_clip():
    from viewer.synth.job import Catalogue, LoadedModel, ModelEntry

    path = SAMPLES / "CesiumMan" / "CesiumMan.glb"
    loaded = LoadedModel(ModelEntry(str(path), path.name, (), 1, 1.0, 19), Catalogue((), 100.0))
    scene = loaded.scene
    nodes = list(scene.nodes)
    loaded_trs = [(n.position, n.rotation_quaternion, n.scaling) for n in nodes]
    scene.prepare()
    loaded_finals = np.array(scene.skeletons[0].get_transform_matrices(), copy=True)
    scene.animations[0].apply(0.7)
    scene.prepare()
    moved = np.array(scene.skeletons[0].get_transform_matrices(), copy=True)
    assert not np.allclose(moved, loaded_finals, atol=1e-3)  # the clip moved it
    versions = [n.version for n in nodes]
    loaded.reset()
    for node, (position, rotation, scaling), version in zip(nodes, loaded_trs, versions):
        np.testing.assert_array_equal(node.position, position)  # copies: the very numbers loaded
        np.testing.assert_array_equal(node.rotation_quaternion, rotation)
        np.testing.assert_array_equal(node.scaling, scaling)
        assert node.version > version  # linked bones and cached matrices see the change
    scene.prepare()
    np.testing.assert_allclose(scene.skeletons[0].get_transform_matrices(), loaded_finals, atol=1e-9)


def test_a_motion_folder_gives_its_bvh_files_sorted_by_relative_path(tmp_path):
    from viewer.errors import ViewerError
    from viewer.synth.run import motion_inputs

    for name in ("b/walk.bvh", "a.BVH", "b/a.bvh", "model.glb", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "folder.bvh").mkdir()
    assert motion_inputs(tmp_path) == [tmp_path / "a.BVH", tmp_path / "b/a.bvh", tmp_path / "b/walk.bvh"]
    assert motion_inputs(tmp_path / "b/walk.bvh") == [tmp_path / "b/walk.bvh"]
    with pytest.raises(ViewerError, match="no .bvh captures"):
        motion_inputs(tmp_path / "folder.bvh")


def test_draws_depend_on_the_seed_and_index_alone():
    from viewer.synth.job import Catalogue, ClipEntry, ModelEntry, SynthOptions, draw

    clips = (ClipEntry("walk", 0, None, 2.0), ClipEntry("run", 1, None, 1.0))
    catalogue = Catalogue((ModelEntry("/a.glb", "a.glb", clips, 1, 1.7, 20), ModelEntry("/b.glb", "b.glb", (), 2, 1.0, 0)),
                          100.0)
    options = SynthOptions()
    first = [draw(3, i, options, catalogue) for i in range(40)]
    assert first == [draw(3, i, options, catalogue) for i in reversed(range(40))][::-1]
    assert first != [draw(4, i, options, catalogue) for i in range(40)]
    for choice in first:
        assert 0.0 <= choice.yaw < 360.0 and -10.0 <= choice.pitch <= 30.0 and 0.3 <= choice.fill <= 0.9
        if choice.model == 1:
            assert choice.clip is None and choice.time == 0.0
        else:
            assert 0.0 <= choice.time <= clips[choice.clip].duration
    assert {c.model for c in first} == {0, 1}


# --- bad input: one line, exit 2 ---------------------------------------------------------------------------
def run_in_process(capsys, *args) -> tuple[int, str]:
    from viewer.cli import main

    status = main(["synth", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.err


@pytest.mark.parametrize("count", ["0", "-3", "two"])
def test_a_count_that_is_not_positive(capsys, tmp_path, count):
    with pytest.raises(SystemExit) as exit_:
        run_in_process(capsys, SAMPLES / "CesiumMan" / "CesiumMan.glb", "--out", tmp_path / "o", "--count", count)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "--count" in err and len(err.strip().splitlines()) == 1


def test_a_size_over_the_gl_limit(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_:
        run_in_process(capsys, SAMPLES / "CesiumMan" / "CesiumMan.glb", "--out", tmp_path / "o", "--count", "1",
                       "--size", "20000x100")
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "16384" in err and len(err.strip().splitlines()) == 1


def test_a_folder_without_models(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    status, err = run_in_process(capsys, tmp_path / "empty", "--out", tmp_path / "o", "--count", "1")
    assert status == 2 and err.strip().splitlines() == [f"boneviewer: error: {tmp_path / 'empty'}: no model files "
                                                        "(.gltf, .glb, .vrm, .bvh, .fbx, .usd, .usda, .usdc, .usdz) in this "
                                                        "folder"]


def test_an_unwritable_out(capsys, tmp_path):
    (tmp_path / "file").write_text("not a folder")
    status, err = run_in_process(capsys, SAMPLES / "CesiumMan" / "CesiumMan.glb", "--out", tmp_path / "file" / "o",
                                 "--count", "1")
    assert status == 2 and len(err.strip().splitlines()) == 1 and "cannot create it" in err


@pytest.mark.parametrize("nested", [False, True])
def test_a_model_it_cannot_read_leaves_no_output_folder_and_a_folder_already_there_as_it_was(capsys, tmp_path, nested):
    """Issue 47: --out is made once the models are read; one that was there keeps what it held."""
    model = tmp_path / "broken.usda"
    model.write_text('#usda 1.0\ndef Xform "A"\n{\n    double3 xformOp:translate = (1, 2\n}\n')
    out = tmp_path / "made" / "o" if nested else tmp_path / "o"
    status, err = run_in_process(capsys, model, "--out", out, "--count", "1")
    assert status == 2 and len(err.strip().splitlines()) == 1 and f"{model}: not a readable USD file" in err
    assert not out.exists() and not (tmp_path / "made").exists()
    out.mkdir(parents=True)
    (out / "mine.txt").write_text("kept")
    status, err = run_in_process(capsys, model, "--out", out, "--count", "1")
    assert status == 2 and sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    assert (out / "mine.txt").read_text() == "kept"


def captures_with_a_broken_one(tmp_path) -> Path:
    """A --motion folder: wave_hello.bvh, and moves/broken.bvh that does not parse."""
    captures = tmp_path / "captures"
    (captures / "moves").mkdir(parents=True)
    shutil.copy(BVH / "wave_hello.bvh", captures)
    (captures / "moves" / "broken.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    return captures


def test_motion_retargets_what_fits_keeps_own_clips_and_says_what_was_left_out_in_one_line(tmp_path):
    """RiggedFigure (Cesium's joint names) takes the capture; SimpleSkin (node1, node2) and
    RiggedSimple (Bone, Bone.001) keep their own clips; a capture that does not parse is left
    out, not an error; one line says it all."""
    from viewer.synth.job import SynthOptions
    from viewer.synth.run import plan

    folder = tmp_path / "rigs"
    folder.mkdir()
    for name in ("SimpleSkin", "RiggedFigure", "RiggedSimple"):
        shutil.copy(SAMPLES / name / f"{name}.gltf", folder)
    captures = captures_with_a_broken_one(tmp_path)
    said = []
    catalogue, _ = plan(folder, SynthOptions(), captures, say=said.append)
    clips = {m.name: [(c.name, c.index, c.motion and Path(c.motion).name) for c in m.clips] for m in catalogue.models}
    assert clips["RiggedFigure.gltf"][-1][1:] == (None, "wave_hello.bvh") and clips["RiggedFigure.gltf"][0][1] == 0
    assert [c[2] for c in clips["SimpleSkin.gltf"]] == [None] and [c[2] for c in clips["RiggedSimple.gltf"]] == [None]
    summary = [line for line in said if line.startswith("boneviewer: synth: retargeted")]
    assert len(summary) == 1 and not any("skipped" in line for line in said), said
    assert summary[0].startswith("boneviewer: synth: retargeted 1 capture onto 1 of 3 models; left out: "
                                 "RiggedSimple.gltf x wave_hello.bvh (no bone of 'RiggedSimple.gltf' has a name the "
                                 "naming schemes know (Bone, Bone.001)), SimpleSkin.gltf x wave_hello.bvh (no bone of "
                                 "'SimpleSkin.gltf' has a name the naming schemes know (node1, node2)), "
                                 "moves/broken.bvh (does not load: ")
    assert summary[0].endswith(" (a --bone-map retargets onto bones no naming scheme knows); models with their own "
                               "clips instead: RiggedSimple.gltf, SimpleSkin.gltf")


def test_every_test_capture_retargets_onto_cesiumman(tmp_path):
    """`synth CesiumMan.glb --motion tests/data/bvh` stopped with exit 2 (no map for its joint
    names); now every capture of the folder is drawn from beside its own walk."""
    from viewer.synth.job import SynthOptions
    from viewer.synth.run import plan

    said = []
    catalogue, _ = plan(SAMPLES / "CesiumMan" / "CesiumMan.glb", SynthOptions(), BVH, say=said.append)
    motions = [Path(c.motion).name if c.motion else None for c in catalogue.models[0].clips]
    assert motions == [None] + sorted(p.name for p in BVH.glob("*.bvh"))
    assert said[-1] == "boneviewer: synth: retargeted 6 captures onto 1 of 1 model"


def test_a_bone_map_folder_maps_each_model_by_its_path_else_its_stem(tmp_path):
    from viewer.synth.job import SynthOptions
    from viewer.synth.run import plan

    folder = tmp_path / "rigs"
    for name in ("RiggedSimple", "SimpleSkin"):
        (folder / name).mkdir(parents=True)
        shutil.copy(SAMPLES / name / f"{name}.gltf", folder / name)
    maps = tmp_path / "maps"
    (maps / "SimpleSkin").mkdir(parents=True)
    (maps / "RiggedSimple.json").write_text(json.dumps({"Bone": "spine", "Bone.001": "chest"}))  # by its stem
    (maps / "SimpleSkin" / "SimpleSkin.json").write_text(json.dumps({"node1": "hips"}))  # by its path
    (maps / "SimpleSkin.json").write_text(json.dumps({"nope": "hips"}))  # the path's map comes first
    (maps / "Fox.json").write_text("{}")
    said = []
    catalogue, _ = plan(folder, SynthOptions(), BVH / "wave_hello.bvh", bone_map=maps, say=said.append)
    entries = {m.name: m for m in catalogue.models}
    assert entries["RiggedSimple/RiggedSimple.gltf"].bone_map == str((maps / "RiggedSimple.json").resolve())
    assert entries["SimpleSkin/SimpleSkin.gltf"].bone_map == str((maps / "SimpleSkin" / "SimpleSkin.json").resolve())
    for entry in entries.values():
        assert entry.clips[-1].motion.endswith("wave_hello.bvh")
    assert f"boneviewer: synth: warning: --bone-map {maps}: no model for Fox.json, SimpleSkin.json (a map is found by " \
           "the model's path under the input, or its file stem, with .json)" in said
    assert "boneviewer: synth: retargeted 1 capture onto 2 of 2 models" in said
    (maps / "RiggedSimple.json").write_text("{not JSON")
    from viewer.errors import ViewerError

    with pytest.raises(ViewerError, match=r"^--bone-map: bone map .*RiggedSimple.json: not JSON"):
        plan(folder, SynthOptions(), BVH / "wave_hello.bvh", bone_map=maps, say=said.append)


def test_one_model_keeps_its_clips_when_no_capture_fits_and_without_any_is_one_error_line(tmp_path):
    """`synth MODEL --motion DIR` runs with the captures that fit (here none: SimpleSkin's joints
    are node1 and node2) and the model's own clip; a model without clips of its own that no
    capture fits is one error line, naming every pair and why."""
    from conftest import run_cli

    captures = captures_with_a_broken_one(tmp_path)
    out = tmp_path / "out"
    result = run_cli("synth", SAMPLES / "SimpleSkin" / "SimpleSkin.gltf", "--out", out, "--count", "2", "--size",
                     "16x16", "--workers", "1", "--motion", captures)
    assert result.returncode == 0, result.stderr
    assert "boneviewer: synth: retargeted 0 captures onto 0 of 1 model; left out: SimpleSkin.gltf x wave_hello.bvh " \
           "(no bone of 'SimpleSkin.gltf' has a name" in result.stderr
    assert "; models with their own clips instead: SimpleSkin.gltf\n" in result.stderr
    data = json.loads((out / "annotations.json").read_text())
    assert {image["clip"] for image in data["images"]} == {"animation0"} and len(data["images"]) == 2
    assert {image["motion"] for image in data["images"]} == {None}
    still = json.loads((SAMPLES / "SimpleSkin" / "SimpleSkin.gltf").read_text())
    del still["animations"]
    (tmp_path / "still.gltf").write_text(json.dumps(still))
    result = run_cli("synth", tmp_path / "still.gltf", "--out", tmp_path / "o2", "--count", "1", "--motion", captures)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and lines[-1].startswith(
        f"boneviewer: error: --motion {captures}: no capture could be retargeted onto still.gltf, and it has no clips "
        "of its own (left out: still.gltf x wave_hello.bvh (no bone of 'still.gltf' has a name the naming schemes "
        "know (node1, node2)), moves/broken.bvh (does not load: ")
    assert not [line for line in lines if "error" in line and line is not lines[-1]]
    assert not (tmp_path / "o2" / "annotations.json").exists()


def test_a_model_without_a_skin_is_drawn_without_keypoints(tmp_path):
    from test_weights import static_model

    from viewer.synth.job import SynthOptions
    from viewer.synth.run import synth

    said = []
    out = tmp_path / "out"
    annotations = synth(static_model(tmp_path), out, 2, SynthOptions(size=(32, 32)), workers=1, say=said.append)
    assert said == ["boneviewer: synth: static.gltf has no skin: drawn as a rigid object, without keypoints"]
    assert annotations["categories"][0]["keypoints"] == []
    for annotation in annotations["annotations"]:
        assert annotation["keypoints"] == [] and annotation["num_keypoints"] == 0
    assert any(a["area"] > 0 for a in annotations["annotations"])  # drawn, boxed and masked all the same


def test_models_of_very_different_sizes_are_told_their_depth_is_coarse(tmp_path):
    """One depth_scale serves a run: the Fox (centimetres) beside CesiumMan (metres) leaves the
    man about 50 depth steps over his height, which synth says; two metre-sized rigs are fine."""
    from viewer.synth.job import SynthOptions
    from viewer.synth.run import plan

    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(SAMPLES / "CesiumMan" / "CesiumMan.glb", folder)
    shutil.copy(SAMPLES / "Fox" / "Fox.glb", folder)
    said = []
    catalogue, _ = plan(folder, SynthOptions(), say=said.append)
    man = next(m for m in catalogue.models if m.name == "CesiumMan.glb")
    assert man.height * catalogue.depth_scale < 100
    assert said == [line for line in said if "CesiumMan.glb's depth is coarse" in line] and len(said) == 1
    assert "the depth_scale fits Fox.glb" in said[0]
    shutil.copy(SAMPLES / "RobotExpressive" / "RobotExpressive.glb", folder)
    (folder / "Fox.glb").unlink()
    said.clear()
    catalogue, _ = plan(folder, SynthOptions(), say=said.append)
    assert said == [] and min(m.height for m in catalogue.models) * catalogue.depth_scale >= 1000


def test_backgrounds_are_composited_behind_the_character(tmp_path, capsys):
    from viewer.synth.job import SynthOptions
    from viewer.synth.run import synth

    folder = tmp_path / "backgrounds"
    folder.mkdir()
    Image.new("RGB", (50, 30), (10, 200, 30)).save(folder / "green.png")
    out = tmp_path / "out"
    options = SynthOptions(size=(48, 40), backgrounds=(str(folder / "green.png"),))
    annotations = synth(SAMPLES / "CesiumMan" / "CesiumMan.glb", out, 2, options, workers=1, say=lambda line: None)
    for image in annotations["images"]:
        assert image["background"] == "green.png"
        pixels, drawn = read(out, image["file_name"]), read(out, image["depth_file_name"]) > 0
        assert np.all(pixels[~drawn] == (10, 200, 30)) and drawn.any()
        assert not np.all(pixels[drawn] == (10, 200, 30), axis=1).any()  # the character over it, opaque
    (folder / "broken.jpg").write_bytes(b"not a JPEG")
    status, err = run_in_process(capsys, SAMPLES / "CesiumMan" / "CesiumMan.glb", "--out", tmp_path / "o", "--count",
                                 "1", "--backgrounds", folder)
    assert status == 2 and err.strip().splitlines() == [f"boneviewer: error: --backgrounds {folder / 'broken.jpg'}: not "
                                                        "an image Pillow can read"]


def test_ctrl_c_says_how_many_images_are_written_and_that_the_command_resumes(capsys, tmp_path, monkeypatch):
    import viewer.synth.run

    def interrupted(source, out, count, options, *args, progress=None, **kwargs):
        progress(8, count)  # one run of 8 images written, then Ctrl+C
        raise KeyboardInterrupt

    monkeypatch.setattr(viewer.synth.run, "synth", interrupted)
    status, err = run_in_process(capsys, SAMPLES / "CesiumMan" / "CesiumMan.glb", "--out", tmp_path / "o", "--count", "20")
    assert status == 130
    assert err.strip().splitlines()[-1] == ("boneviewer: synth: interrupted with 8 of 20 images written; the same "
                                            "command resumes")


def test_progress_off_a_terminal_shows_each_tenth_crossed_by_runs_of_images(capsys):
    """synth reports runs of 8 images: 8, 16, ... of 50 cross a tenth at every update but are
    multiples of a tenth (5) only at 40 and 50."""
    from viewer.cli.common import Progress

    progress = Progress(50, "images")
    for done in (8, 16, 24, 32, 40, 48, 50):
        progress.update(done)
    shown = [line.split("]")[1].split(",")[0].strip() for line in capsys.readouterr().err.splitlines()]
    assert shown == ["8/50 images", "16/50 images", "24/50 images", "32/50 images", "40/50 images", "48/50 images",
                     "50/50 images"]


def test_the_coarse_depth_of_several_models_is_one_line_and_a_flat_model_alone_is_not_told(tmp_path):
    from viewer.synth.job import SynthOptions
    from viewer.synth.run import plan

    folder = tmp_path / "mixed"
    folder.mkdir()
    for name in ("CesiumMan.glb", "Fox.glb", "RobotExpressive.glb"):
        shutil.copy(next(SAMPLES.glob(f"*/{name}")), folder)
    said = []
    plan(folder, SynthOptions(), say=said.append)
    assert len(said) == 1 and said[0].startswith("boneviewer: synth: warning: the depth of 2 models is coarse "
                                                 "(CesiumMan.glb, RobotExpressive.glb: one 16-bit step is 1/")
    assert "the depth_scale fits Fox.glb" in said[0]
    # A capture lying flat along Y is coarse over its own height, and running it alone would not help.
    said.clear()
    plan(BVH / "lying_rest.bvh", SynthOptions(), say=said.append)
    assert not [line for line in said if "coarse" in line], said


def test_each_bvh_file_says_its_scale_up_axis_and_facing_as_render_does(tmp_path):
    from viewer.synth.job import SynthOptions
    from viewer.synth.run import plan

    said = []
    plan(BVH / "wave_hello.bvh", SynthOptions(), motion=BVH / "wave_hello.bvh", load={"bvh_up": "z"},
         say=said.append)
    line = (f"boneviewer: {BVH / 'wave_hello.bvh'}: BVH scale 0.0443097, up axis +z (given) turned to +Y, forward axis "
            "+y (detected) turned 180° to +Z")
    assert said == [line, line, "boneviewer: synth: retargeted 1 capture onto 1 of 1 model"]  # the capture, the model


def test_motion_takes_an_fbx_take_without_a_mesh(tmp_path):
    """`synth CesiumMan.glb --motion humanik_motion.fbx`: an armature's take with no mesh (HumanIK's
    Character1_ names) is a capture like a BVH file's, retargeted and drawn from; a file that is no
    model at all is one line."""
    from conftest import run_cli

    take = Path(__file__).parent / "data" / "fbx" / "humanik_motion.fbx"
    out = tmp_path / "out"
    result = run_cli("synth", SAMPLES / "CesiumMan" / "CesiumMan.glb", "--out", out, "--count", "3", "--size",
                     "16x16", "--workers", "1", "--motion", take)
    assert result.returncode == 0, result.stderr
    assert "boneviewer: synth: retargeted 1 capture onto 1 of 1 model" in result.stderr
    data = json.loads((out / "annotations.json").read_text())
    drawn = {(image["clip"], image["motion"]) for image in data["images"]}
    assert ("Scene", "humanik_motion.fbx") in drawn and drawn <= {("Scene", "humanik_motion.fbx"), ("animation0", None)}
    (tmp_path / "notes.txt").write_text("not a capture")
    result = run_cli("synth", SAMPLES / "CesiumMan" / "CesiumMan.glb", "--out", tmp_path / "o2", "--count", "1",
                     "--motion", tmp_path / "notes.txt")
    assert result.returncode == 2 and "expected a .bvh capture (or an FBX, glTF or USD file" in result.stderr
