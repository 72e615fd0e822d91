"""Benchmark of the remote connection (viewer.remote) on loopback, between two processes.

    .venv/bin/python scripts/bench_remote.py [--model PATH] [--messages N]

Prints: set_pose for 65 bones streamed (wait=False) in messages/s; the round trip of a
synchronous set_pose (median); render((256, 256)) through the connection against the same
render in-process; and the viewer's frame time (a ViewerSession with its panel, polling a
RemoteServer once a frame) with and without a client streaming poses at full rate.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ROBOT = ROOT / "tests" / "data" / "gltf-samples" / "RobotExpressive" / "RobotExpressive.glb"
BONES = 65
TOKEN = "bench-remote"

STREAMER = """
import json, sys, numpy as np
from viewer.remote import connect
client = connect(sys.argv[1], token=sys.argv[2])  # greeted by the socket thread: no frame needed
names = json.loads(sys.argv[3])
poses = np.random.default_rng(0).normal(size=(64, 65, 4)).astype(np.float32)
print("streaming", flush=True)
k = 0
try:
    while True:
        client.set_pose(rotations=poses[k % 64], bones=names, wait=False)
        k += 1
except Exception:
    pass
"""


def serve(model):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DISPLAY", None)
    process = subprocess.Popen([sys.executable, "-m", "viewer.cli", "serve", str(model), "--listen", "0",
                                "--token", TOKEN], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=env)
    line = process.stdout.readline().split()
    return process, line[2]


def median_ms(samples) -> float:
    return float(np.median(samples)) * 1e3


def bench_connection(model, messages: int) -> None:
    from viewer.remote import connect

    process, address = serve(model)
    try:
        with connect(address, token=TOKEN) as client:
            names = client.bones()
            chosen = names[:BONES]
            poses = np.random.default_rng(0).normal(size=(64, len(chosen), 4)).astype(np.float32)
            for k in range(2000):  # warm-up
                client.set_pose(rotations=poses[k % 64], bones=chosen, wait=False)
            client.bones()
            started = time.perf_counter()
            for k in range(messages):
                client.set_pose(rotations=poses[k % 64], bones=chosen, wait=False)
            client.bones()  # returns after the server read everything sent before it
            elapsed = time.perf_counter() - started
            size = len(__import__("viewer.remote.protocol", fromlist=["x"]).set_pose(0, poses[0], names=chosen))
            print(f"set_pose, {len(chosen)} named bones, streamed (wait=False): {messages / elapsed:,.0f} messages/s "
                  f"({messages} messages of {size} bytes in {elapsed:.2f} s)")
            everything = np.random.default_rng(1).normal(size=(64, len(names), 4)).astype(np.float32)
            started = time.perf_counter()
            for k in range(messages):
                client.set_pose(rotations=everything[k % 64], wait=False)
            client.bones()
            elapsed = time.perf_counter() - started
            print(f"set_pose, all {len(names)} bones in bones() order, streamed: {messages / elapsed:,.0f} messages/s")
            rounds = []
            for k in range(3000):
                started = time.perf_counter()
                client.set_pose(rotations=poses[k % 64], bones=chosen)
                rounds.append(time.perf_counter() - started)
            print(f"set_pose, {len(chosen)} bones, round trip (wait=True): median {median_ms(rounds):.3f} ms, "
                  f"p90 {np.percentile(rounds, 90) * 1e3:.3f} ms")
            client.set_pose(rotations=poses[0], bones=chosen)
            remote = []
            for _ in range(60):
                started = time.perf_counter()
                client.render((256, 256))
                remote.append(time.perf_counter() - started)
            pose = {"bones": {name: {"rotation_quaternion": [float(v) for v in q]} for name, q in zip(chosen, poses[0])}}
    finally:
        process.terminate()
        process.wait()
    local = render_in_process(model, pose)
    print(f"render((256, 256)): {median_ms(remote):.2f} ms through the connection, {median_ms(local):.2f} ms "
          f"in-process (framed camera + draw + read back): {median_ms(remote) - median_ms(local):+.2f} ms overhead")


def render_in_process(model, pose):
    from viewer.camera import framed_camera
    from viewer.editing.pose import apply_pose
    from viewer.loaders import load_model
    from viewer.options import RenderOptions
    from viewer.render.headless import HeadlessRenderer

    scene = load_model(model)
    scene.animations[0].apply(0.0) if scene.animations else None
    apply_pose(scene, pose)
    samples = []
    with HeadlessRenderer((256, 256)) as headless:
        for _ in range(60):
            started = time.perf_counter()
            headless.render(scene, framed_camera(scene, aspect=1.0), RenderOptions())
            samples.append(time.perf_counter() - started)
    return samples


def bench_frames(model, frames: int = 300) -> None:
    """A ViewerSession (panel included, 1280x720, offscreen) polling a RemoteServer each frame."""
    import logging

    from viewer.loaders import load_model
    from viewer.remote.server import RemoteServer
    from viewer.render.headless import OffscreenTarget, create_headless_context
    from viewer.ui.remote import SessionTarget
    from viewer.ui.session import ViewerSession

    logging.getLogger("boneviewer").addHandler(logging.NullHandler())
    size = (1280, 720)
    ctx = create_headless_context()
    offscreen = OffscreenTarget(ctx, size)
    session = ViewerSession(ctx, load_model(model), "bench", play=False)
    server = RemoteServer("127.0.0.1", 0, TOKEN).start()
    target = SessionTarget(session)

    def run(count):
        times = []
        for _ in range(count):
            started = time.perf_counter()
            server.poll(target)
            session.frame(size, 1 / 60, offscreen.framebuffer)
            ctx.finish()
            times.append(time.perf_counter() - started)
        return times

    run(30)
    quiet_cpu = time.thread_time()
    quiet = run(frames)
    quiet_cpu_ms = (time.thread_time() - quiet_cpu) / frames * 1e3
    # The same CPU taken by a process that only spins: what the client's own CPU costs on this machine.
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.3)
    run(30)
    spun = run(frames)
    spinner.terminate()
    spinner.wait()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    names = json.dumps(target.bone_names()[:BONES])
    streamer = subprocess.Popen([sys.executable, "-c", STREAMER, f"127.0.0.1:{server.address[1]}", TOKEN, names],
                                stdout=subprocess.PIPE, text=True, env=env)
    streamer.stdout.readline()
    run(30)
    applied_before, read_before = time.perf_counter(), server.messages_read
    socket_cpu, frame_cpu = thread_cpu(server._thread.native_id), time.thread_time()
    streaming = run(frames)
    elapsed = time.perf_counter() - applied_before
    socket_share = (thread_cpu(server._thread.native_id) - socket_cpu) / elapsed
    frame_cpu_ms = (time.thread_time() - frame_cpu) / frames * 1e3
    rate = (server.messages_read - read_before) / elapsed
    streamer.terminate()
    streamer.wait()
    server.close()
    print(f"viewer frame (1280x720, panel, {Path(model).name}): median {median_ms(quiet):.2f} ms with no client, "
          f"{median_ms(streaming):.2f} ms while a client streams set_pose at full rate ({rate:,.0f} messages/s) "
          f"({(median_ms(streaming) / median_ms(quiet) - 1) * 100:+.1f}%; {frames / elapsed:.0f} frames/s); "
          f"{median_ms(spun):.2f} ms beside a process that only spins a core "
          f"({(median_ms(spun) / median_ms(quiet) - 1) * 100:+.1f}%)")
    print(f"  the frame thread's own CPU per frame: {quiet_cpu_ms:.2f} ms with no client, {frame_cpu_ms:.2f} ms "
          f"while streaming; the socket thread used {socket_share * 100:.1f}% of a core reading the stream")


def thread_cpu(native_id: int) -> float:
    """CPU seconds (user + system) of one thread of this process."""
    fields = Path(f"/proc/self/task/{native_id}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROBOT)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--frames-only", action="store_true", help="only the viewer frame times")
    args = parser.parse_args()
    print(f"loopback, two processes, {os.cpu_count()} cores; model {args.model.name}")
    if not args.frames_only:
        bench_connection(args.model, args.messages)
    bench_frames(args.model)


if __name__ == "__main__":
    main()
