"""``boneviewer bench``: performance figures as a plain-text table (a script, not a test).

Every figure is a median over repetitions, measured in this run; the plain per-bone Python
loop runs side by side as a baseline. Only what ships with the package is used: generated
skeletons and the built-in character, so an installed package benchmarks the same as a
checkout; animated glTF files are timed when given (``--animation tests/data/gltf-samples/Fox/Fox.glb``).
The header names the skeleton kernel that ran (compiled or numpy, see model/native.py).
scripts/bench_compare.py runs both kernels and Babylon.js side by side.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SIZES = (20, 100, 1000, 10000)
CROWD = (100, 100)  # skeletons x bones
SWING_POSES = 16    # arm-swing poses per cycle of the posed character


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


REPETITIONS = {20: 2000, 100: 2000, 1000: 500, 10000: 60}  # per skeleton size, for steady medians


def skeleton_frame(n: int):
    """(frame(i), skeleton, poses): one frame of the skeleton update of an ``n``-bone tree,
    set_pose of every rotation, prepare() and the upload array (what the bench times)."""
    skeleton, poses = random_tree(n), random_rotations(n)

    def frame(i):
        skeleton.set_pose(rotation_quaternions=poses[i & 3])
        skeleton.prepare()
        skeleton.get_transform_matrices()

    return frame, skeleton, poses


def crowd_frame():
    """(frame(i), skeletons, poses): one frame of a CROWD of trees updated as one SkeletonGroup."""
    from .model import SkeletonGroup

    count, n = CROWD
    skeletons = [random_tree(n, seed=0, name=f"crowd{k}_") for k in range(count)]
    group = SkeletonGroup(skeletons)
    poses = random_rotations(count * n).reshape(4, count, n, 4)

    def frame(i):
        pose = poses[i & 3]
        for k, skeleton in enumerate(skeletons):
            skeleton.set_pose(rotation_quaternions=pose[k])
        group.prepare()
        group.get_transform_matrices()

    return frame, skeletons, poses


def skeleton_rows(quick: bool):
    rows = []
    for n in SIZES:
        frame, skeleton, poses = skeleton_frame(n)
        ours = _median_us(frame, max(REPETITIONS[n] // (20 if quick else 1), 3))
        loop = PythonLoop(skeleton)
        loop_reps = max(1, min(200, 20000 // n) // (20 if quick else 1))
        baseline = _median_us(lambda i: loop.frame(poses[i & 3]), loop_reps, warmup=1)
        rows.append((f"{n:,} bones", n, ours, baseline))
    count, n = CROWD
    frame, skeletons, poses = crowd_frame()
    ours = _median_us(frame, 5 if quick else 100)
    loops = [PythonLoop(s) for s in skeletons[: 2 if quick else count]]
    baseline = _median_us(lambda i: [loop.frame(poses[i & 3][k]) for k, loop in enumerate(loops)], 1 if quick else 5,
                          warmup=0) * count / len(loops)
    rows.append((f"crowd {count} x {n} bones", count * n, ours, baseline))
    return rows


def animation_rows(paths, quick: bool):
    """One animation frame of each model's first clip: apply(t), prepare(), the upload array;
    t walks the clip at 60 frames per second, looping."""
    from .loaders import load_model
    from .model.animation import clip_time

    rows = []
    for path in paths:
        scene = load_model(str(path))
        if not scene.animations or not scene.skeletons:
            rows.append((f"{Path(path).name}: no animated skeleton", None, 0, 0))
            continue
        clip, skeletons = scene.animations[0], scene.skeletons

        def frame(i, clip=clip, skeletons=skeletons):
            clip.apply(clip_time(i / 60.0, clip.duration))
            for skeleton in skeletons:
                skeleton.prepare()
                skeleton.get_transform_matrices()

        us = _median_us(frame, 50 if quick else 2000, warmup=20)
        bones = sum(len(s.bones) for s in skeletons)
        rows.append((f"{Path(path).name} ({bones} bones, {len(clip.channels)} channels)", us, bones,
                     len(clip.channels)))
    return rows


def arm_swing(skeleton, count: int = SWING_POSES) -> np.ndarray:
    """(count, bones, 4) rotation quaternions for the built-in character: from its rest pose,
    the arms swing forward and back in opposition over one cycle and the body turns a little."""
    from .model.transforms import quaternion_from_yaw_pitch_roll

    rest = np.array([bone.rotation for bone in skeleton.bones])  # (x, y, z): pitch, yaw, roll
    phase = np.linspace(0.0, 2.0 * np.pi, count, endpoint=False)
    angles = np.repeat(rest[None], count, axis=0)
    angles[:, 0, 1] += 0.15 * np.sin(phase)
    angles[:, 1, 0] += 0.6 * np.sin(phase)
    angles[:, 2, 0] -= 0.6 * np.sin(phase)
    return quaternion_from_yaw_pitch_roll(angles.reshape(-1, 3)).reshape(count, len(rest), 4)


def render_rows(quick: bool):
    from .camera import OrbitCamera
    from .character import build_character
    from .model import Crowd
    from .camera import framed_camera
    from .options import RenderOptions
    from .render.headless import HeadlessRenderer

    rows = []
    scene = build_character()
    mesh, skeleton = scene.skinned_meshes[0], scene.skeletons[0]
    poses = arm_swing(skeleton)
    what = f"built-in character ({len(mesh.positions):,} vertices, {len(mesh.indices) // 3:,} triangles)"
    frames = 5 if quick else 120
    with HeadlessRenderer((512, 512)) as headless:
        camera = framed_camera(scene)
        for size in ((512, 512), (1280, 720)):
            headless.resize(size)

            def frame(i):
                skeleton.set_pose(rotation_quaternions=poses[i % len(poses)])
                headless.render(scene, camera, RenderOptions())

            us = _median_us(frame, frames)
            rows.append((f"{what} {size[0]}x{size[1]}, posed, read back", 1e6 / us))
        renderer = headless.ctx.info.get("GL_RENDERER", "unknown")
        # 100 posed characters, instanced: each its own skeleton, pose and place.
        count = 100
        copies = [build_character().skeletons[0] for _ in range(count)]
        low, high = scene.rest_bounds
        spacing = float(np.max(high - low)) * 0.9
        places = np.tile(np.eye(4), (count, 1, 1))
        places[:, 3, 0] = [((k % 10) - 4.5) * spacing for k in range(count)]
        places[:, 3, 2] = [-(k // 10) * spacing for k in range(count)]
        crowd = Crowd(mesh, copies, places)
        crowd_camera = OrbitCamera()
        crowd_camera.frame(*crowd.bounds(), yaw=20.0, pitch=25.0, aspect=1280 / 720)
        headless.resize((1280, 720))

        def crowd_frame(i):
            for k, copy in enumerate(copies):
                copy.set_pose(rotation_quaternions=poses[(i + k) % len(poses)])
            headless.render_crowd(crowd, crowd_camera, RenderOptions())

        us = _median_us(crowd_frame, 3 if quick else 30, warmup=1)
        rows.append((f"{count} posed built-in characters 1280x720, instanced", 1e6 / us))
    return rows, renderer


def first_png_seconds(quick: bool) -> float:
    times = []
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "first.png"
        for _ in range(1 if quick else 5):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "viewer.cli", "render", "--out", str(out)], check=True,
                           stdout=subprocess.DEVNULL, cwd=folder)
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def interactive_rows(quick: bool) -> tuple[str, str, str | None]:
    """Frame rate of the interactive view with the panel (viewer.ui.session, drawn offscreen,
    each frame finished as a swap would), the scene's GPU time per frame as the panel shows it
    (timer queries), and why there is none (None: there is)."""
    try:
        if importlib.util.find_spec("viewer.ui.session") is None:
            return "n/a (window not built yet)", "n/a", None
        from .loaders import load_model
        from .render.headless import OffscreenTarget, create_headless_context, release_egl_current
        from .ui.session import ViewerSession
    except ImportError:
        return "n/a (window not built yet)", "n/a", None
    try:
        size = (1280, 720)
        ctx = create_headless_context()
        target = OffscreenTarget(ctx, size)
        session = ViewerSession(ctx, load_model(None))

        def frame(i):
            session.frame(size, 1.0 / 60.0, framebuffer=target.framebuffer)
            ctx.finish()

        us = _median_us(frame, 10 if quick else 120, warmup=3)
        times = session.timing.times()
        session.release()
        target.release()
        ctx.release()
        release_egl_current()
        gpu = "n/a" if times.gpu_ms is None else f"{times.gpu_ms:.2f} ms"
        return f"{1e6 / us:.1f} fps", gpu, times.gpu_note
    except Exception as error:  # one row of the table, not the whole run
        return f"n/a ({type(error).__name__}: {error})", "n/a", None


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
    from .model import native

    print(f"boneviewer bench{' --quick' if quick else ''}: medians measured in this run; numpy {np.__version__}, "
          f"Python {sys.version.split()[0]}")
    print(f"skeleton kernel: {native.describe()}")
    print()
    print("Skeleton update per frame (set_pose of every rotation_quaternion, prepare(), float32 upload array)")
    rows = []
    for label, joints, ours, baseline in skeleton_rows(quick):
        rows.append([label, _time(ours), f"{ours / joints * 1000:.1f} ns", _time(baseline), f"{baseline / ours:.0f}x"])
    print(_table(["skeleton", "boneviewer", "per joint", "Python loop", "loop/ours"], rows))
    print()
    paths = list(getattr(args, "animation", None) or [])
    if paths:
        print("One animation frame (first clip: apply(t), prepare(), float32 upload array)")
        rows = [[label, "n/a" if us is None else _time(us)] for label, us, _, _ in animation_rows(paths, quick)]
        print(_table(["model", "boneviewer"], rows))
    else:
        print("One animation frame: not measured (boneviewer bench --animation MODEL.glb measures it)")
    print()
    if getattr(args, "no_render", False):
        return 0
    render, renderer = render_rows(quick)
    print(f"Rendering (headless EGL, {renderer})")
    rows = [[label, f"{fps:.1f} fps"] for label, fps in render]
    rows.append(["process start to first PNG (boneviewer render)", f"{first_png_seconds(quick):.2f} s"])
    interactive, gpu, gpu_note = interactive_rows(quick)
    rows.append(["interactive view with the panel, 1280x720 (built-in character)", interactive])
    rows.append(["  its scene's GPU time per frame (timer queries, as the panel shows)", gpu])
    print(_table(["measure", "boneviewer"], rows))
    if gpu_note:
        print(f"GPU time: n/a: {gpu_note}.")
    return 0
