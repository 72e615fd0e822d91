"""``boneviewer bench``: performance figures as a plain-text table (a script, not a test).

Every figure is a median over repetitions, measured in this run; the plain per-bone Python
loop runs side by side as a baseline. The Babylon.js and pygfx figures are constants from
issue 7, measured earlier on this machine: compare ratios, not absolute times.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# Measured earlier on this machine, from the issue (issue 7).
BABYLON_US = {100: 10.0, 1000: 130.0, 10000: 8500.0, "crowd": 8000.0}  # prepare(true), every rotation changed
BABYLON_10K_RANGE = "7-10 ms"
PYGFX_US_PER_JOINT = 9.0          # 8-10 us per joint per frame
PYGFX_FPS = {(512, 512): 80.0, (1280, 720): 41.0}  # CesiumMan offscreen: 67-93 and 38-44 fps
PYGFX_FIRST_FRAME_S = 1.7

CESIUM_MAN = Path(__file__).resolve().parents[1] / "tests" / "data" / "gltf-samples" / "CesiumMan" / "CesiumMan.glb"
SIZES = (20, 100, 1000, 10000)
CROWD = (100, 100)  # skeletons x bones


def random_tree(n: int, seed: int = 0, name: str = "tree"):
    """A skeleton whose bone i hangs from a uniformly chosen earlier bone (a random recursive tree)."""
    from .model import Bone, Skeleton
    from .model.transforms import compose

    rng = np.random.default_rng(seed)
    skeleton = Skeleton(f"{name}{n}")
    bones = []
    quaternions = rng.normal(size=(n, 4))
    quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
    locals_ = compose(rng.uniform(0.5, 1.5, (n, 3)), quaternions, rng.normal(size=(n, 3)))
    for i in range(n):
        parent = bones[int(rng.integers(0, i))] if i else None
        bones.append(Bone(f"b{i}", skeleton, parent, local_matrix=locals_[i]))
    return skeleton


def random_rotations(n: int, count: int = 4, seed: int = 1):
    rng = np.random.default_rng(seed)
    poses = rng.normal(size=(count, n, 4))
    return poses / np.linalg.norm(poses, axis=2, keepdims=True)


def _median_us(frame, repetitions: int, warmup: int = 2) -> float:
    for i in range(warmup):
        frame(i)
    times = []
    for i in range(repetitions):
        start = time.perf_counter()
        frame(i)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


class PythonLoop:
    """The obvious implementation: per bone, parent first, compose, absolute, final."""

    def __init__(self, skeleton):
        from .model.transforms import compose

        self.compose = compose
        skeleton.prepare()
        bones = list(skeleton.bones)
        position = {id(b): i for i, b in enumerate(bones)}
        order, seen = [], set()
        for bone in bones:
            chain = []
            while bone is not None and id(bone) not in seen:
                seen.add(id(bone))
                chain.append(bone)
                bone = bone.get_parent()
            order.extend(reversed(chain))
        self.order = [(position[id(b)], -1 if b.get_parent() is None else position[id(b.get_parent())],
                       b.get_index()) for b in order]
        self.positions = [b.position for b in bones]
        self.scalings = [b.scaling for b in bones]
        self.inverse_binds = [b.get_absolute_inverse_bind_matrix() for b in bones]
        self.absolute = [None] * len(bones)
        self.upload = np.empty((len(bones), 4, 4), np.float32)

    def frame(self, quaternions) -> None:
        compose, absolute, upload = self.compose, self.absolute, self.upload
        for i, parent, index in self.order:
            local = compose(self.scalings[i], quaternions[i], self.positions[i])
            absolute[i] = local if parent < 0 else local @ absolute[parent]
            upload[index] = self.inverse_binds[i] @ absolute[i]


def skeleton_rows(quick: bool):
    from .model import SkeletonGroup

    rows = []
    for n in SIZES:
        skeleton = random_tree(n)
        poses = random_rotations(n)
        reps = {20: 2000, 100: 2000, 1000: 500, 10000: 60}[n] // (20 if quick else 1)

        def frame(i, skeleton=skeleton, poses=poses):
            skeleton.set_pose(rotation_quaternions=poses[i & 3])
            skeleton.prepare()
            skeleton.get_transform_matrices()

        ours = _median_us(frame, max(reps, 3))
        loop = PythonLoop(skeleton)
        loop_reps = max(1, min(200, 20000 // n) // (20 if quick else 1))
        baseline = _median_us(lambda i: loop.frame(poses[i & 3]), loop_reps, warmup=1)
        rows.append((f"{n:,} bones", n, ours, baseline, BABYLON_US.get(n)))
    count, n = CROWD
    skeletons = [random_tree(n, seed=0, name=f"crowd{k}_") for k in range(count)]
    group = SkeletonGroup(skeletons)
    poses = random_rotations(count * n).reshape(4, count, n, 4)

    def crowd_frame(i):
        pose = poses[i & 3]
        for k, skeleton in enumerate(skeletons):
            skeleton.set_pose(rotation_quaternions=pose[k])
        group.prepare()
        group.get_transform_matrices()

    ours = _median_us(crowd_frame, 5 if quick else 100)
    loops = [PythonLoop(s) for s in skeletons[: 2 if quick else count]]
    baseline = _median_us(lambda i: [loop.frame(poses[i & 3][k]) for k, loop in enumerate(loops)], 1 if quick else 5,
                          warmup=0) * count / len(loops)
    rows.append((f"crowd {count} x {n} bones", count * n, ours, baseline, BABYLON_US["crowd"]))
    return rows


def _copy_skeleton(source, name):
    """An unlinked copy of a skeleton: same bones, indices, binds and current local matrices."""
    from .model import Bone, Skeleton

    copy = Skeleton(name)
    made = {}
    for bone in source.bones:
        parent = bone.get_parent()
        made[id(bone)] = Bone(bone.name, copy, None if parent is None else made[id(parent)],
                              local_matrix=bone.get_local_matrix(), bind_matrix=bone.get_bind_matrix(),
                              index=bone.get_index())
    return copy


def render_rows(quick: bool):
    from .camera import OrbitCamera
    from .gltf import load_gltf
    from .model import Crowd
    from .model.transforms import compose
    from .render.headless import HeadlessRenderer, framed_camera
    from .render.renderer import RenderOptions

    rows = []
    scene = load_gltf(CESIUM_MAN)
    clip = scene.animations[0]
    frames = 5 if quick else 120
    with HeadlessRenderer((512, 512)) as headless:
        camera = framed_camera(scene)
        for size in ((512, 512), (1280, 720)):
            headless.resize(size)

            def frame(i):
                clip.apply((i / 60.0) % clip.duration)
                headless.render(scene, camera, RenderOptions())

            us = _median_us(frame, frames)
            rows.append((f"CesiumMan {size[0]}x{size[1]}, animated, read back", 1e6 / us, PYGFX_FPS[size]))
        # 100 animated CesiumMen, instanced: each its own skeleton, pose and place.
        count = 100
        skeleton = scene.skeletons[0]
        mesh = scene.skinned_meshes[0]
        scene.prepare()
        copies = [_copy_skeleton(skeleton, f"cesium{k}") for k in range(count)]
        nodes = [bone.get_transform_node() for bone in sorted(skeleton.bones, key=lambda b: b.get_index())]
        low, high = scene.rest_bounds
        spacing = float(np.max(high - low)) * 0.9
        offsets = [((k % 10) - 4.5) * spacing for k in range(count)], [-(k // 10) * spacing for k in range(count)]
        worlds = np.array([mesh.world_matrix @ compose([1, 1, 1], [0, 0, 0, 1], [x, 0.0, z])
                           for x, z in zip(*offsets)])
        crowd = Crowd(mesh, copies, worlds)
        crowd_camera = OrbitCamera()
        corners = np.array([[x, 0, z] for x, z in zip(*offsets)])
        crowd_camera.frame(corners.min(0) + low, corners.max(0) + high, yaw=20.0, pitch=25.0)
        phases = np.linspace(0.0, clip.duration, count, endpoint=False)
        headless.resize((1280, 720))

        def crowd_frame(i):
            for k, copy in enumerate(copies):
                clip.apply((i / 60.0 + phases[k]) % clip.duration)
                copy.set_pose(positions=[n._position for n in nodes],
                              rotation_quaternions=[n._quaternion for n in nodes],
                              scalings=[n._scaling for n in nodes])
            headless.render_crowd(crowd, crowd_camera, RenderOptions())

        us = _median_us(crowd_frame, 3 if quick else 30, warmup=1)
        rows.append(("100 animated CesiumMen 1280x720, instanced", 1e6 / us, None))
    return rows


def first_png_seconds(quick: bool) -> float:
    times = []
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "first.png"
        for _ in range(1 if quick else 5):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "viewer.cli", "render", "--out", str(out)], check=True,
                           stdout=subprocess.DEVNULL, cwd=Path(__file__).resolve().parents[1])
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def interactive_row(quick: bool) -> str:
    """Frame time of the interactive view with the panel (viewer.ui.session, drawn offscreen)."""
    try:
        if importlib.util.find_spec("viewer.ui.session") is None:
            return "n/a (window not built yet)"
        from .loaders import load_model
        from .render.headless import OffscreenTarget, create_headless_context, release_egl_current
        from .ui.session import ViewerSession
    except ImportError:
        return "n/a (window not built yet)"
    try:
        size = (1280, 720)
        ctx = create_headless_context()
        target = OffscreenTarget(ctx, size)
        session = ViewerSession(ctx, load_model(None))

        def frame(i):
            session.frame(size, 1.0 / 60.0, framebuffer=target.framebuffer)
            ctx.finish()

        us = _median_us(frame, 10 if quick else 120, warmup=3)
        session.release()
        target.release()
        ctx.release()
        release_egl_current()
        return f"{1e6 / us:.1f} fps"
    except Exception as error:  # the window is another engineer's work in progress
        return f"n/a ({type(error).__name__}: {error})"


def _table(header, rows) -> str:
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for k, row in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _time(us: float) -> str:
    return f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.1f} us"


def main(args) -> int:
    quick = bool(getattr(args, "quick", False))
    print(f"boneviewer bench{' --quick' if quick else ''}: medians; numpy {np.__version__}, Python "
          f"{sys.version.split()[0]}")
    print("Reference figures: measured earlier on this machine, from the issue (Babylon.js 9.28 in Node, "
          f"prepare(true): 100 bones {BABYLON_US[100]:.0f} us, 1,000 bones {BABYLON_US[1000]:.0f} us, 10,000 bones "
          f"{BABYLON_10K_RANGE}, 100 x 100 crowd {BABYLON_US['crowd'] / 1000:.0f} ms; pygfx 0.17: "
          f"{PYGFX_US_PER_JOINT:.0f} us per joint (8-10), CesiumMan 67-93 fps at 512x512, 38-44 fps at 1280x720, "
          f"{PYGFX_FIRST_FRAME_S} s to the first frame)")
    print()
    print("Skeleton update per frame (set_pose of every rotation_quaternion, prepare(), float32 upload array)")
    rows = []
    for label, joints, ours, baseline, babylon in skeleton_rows(quick):
        rows.append([label, _time(ours), f"{ours / joints * 1000:.1f} ns", _time(baseline),
                     f"{baseline / ours:.0f}x", "-" if babylon is None else _time(babylon),
                     "-" if babylon is None else f"{ours / babylon:.2f}x",
                     f"{PYGFX_US_PER_JOINT / (ours / joints):.0f}x"])
    print(_table(["skeleton", "boneviewer", "per joint", "Python loop", "loop/ours", "Babylon.js",
                  "ours/Babylon", "faster than pygfx/joint"], rows))
    print()
    print("Rendering (headless EGL, Mesa llvmpipe)")
    rows = []
    for label, fps, pygfx in render_rows(quick):
        rows.append([label, f"{fps:.1f} fps", "-" if pygfx is None else f"{pygfx:.0f} fps",
                     "-" if pygfx is None else f"{fps / pygfx:.2f}x"])
    seconds = first_png_seconds(quick)
    rows.append(["process start to first PNG (boneviewer render)", f"{seconds:.2f} s", f"{PYGFX_FIRST_FRAME_S} s",
                 f"{seconds / PYGFX_FIRST_FRAME_S:.2f}x"])
    rows.append(["interactive view with the panel, 1280x720 (built-in character)", interactive_row(quick),
                 "-", "-"])
    print(_table(["measure", "boneviewer", "pygfx", "ratio"], rows))
    return 0
