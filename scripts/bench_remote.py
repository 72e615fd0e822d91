"""Benchmark of the remote connection (viewer.remote) on loopback, between two processes.

    .venv/bin/python scripts/bench_remote.py [--model PATH] [--messages N]

Prints: set_pose of 43, 65 and all bones streamed (wait=False) in messages/s; the round trip of a
synchronous set_pose (median) for each, side by side with the transport's own round trip (a bare
websockets echo server in another process: the floor), in interleaved rounds; render((256, 256))
through the connection against the same render in-process; and the viewer's frame time (a
ViewerSession with its panel, polling a RemoteServer once a frame) with and without a client
streaming poses at full rate (--connection-only leaves that out).
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


ECHO = """
import asyncio, struct, sys
from websockets.asyncio.server import serve
OK = struct.Struct("<2sBBII")

async def echo(websocket):  # the transport alone: each message answered with a bare OK header
    async for data in websocket:
        await websocket.send(OK.pack(b"BV", 1, 128, OK.unpack_from(data)[3], 0))

async def main():
    async with serve(echo, "127.0.0.1", 0, compression=None, max_queue=4, write_limit=2**20,
                     max_size=2**22) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()

asyncio.run(main())
"""


def echo_server():
    """The transport's own round trip, the floor: a websockets server (as RemoteServer's, same
    options) in another process that answers each message at once, on its socket thread."""
    process = subprocess.Popen([sys.executable, "-c", ECHO], stdout=subprocess.PIPE, text=True)
    return process, int(process.stdout.readline())


def median_ms(samples) -> float:
    return float(np.median(samples)) * 1e3


def bench_connection(model, messages: int, rounds: int = 5, per_round: int = 400) -> None:
    from websockets.sync.client import connect as ws_connect

    from viewer.remote import connect, protocol

    process, address = serve(model)
    echo, echo_port = echo_server()
    try:
        with connect(address, token=TOKEN) as client, \
                ws_connect(f"ws://127.0.0.1:{echo_port}", compression=None, max_size=2**22) as bare:
            names = client.bones()
            counts = sorted({43, BONES, len(names)} & set(range(1, len(names) + 1)))
            rng = np.random.default_rng(0)
            poses = {n: rng.normal(size=(64, n, 4)).astype(np.float32) for n in counts}
            for n in counts:  # warm-up
                for k in range(1000):
                    client.set_pose(rotations=poses[n][k % 64], bones=names[:n], wait=False)
                client.bones()
            stream = {n: [] for n in counts}
            for _ in range(rounds):  # interleaved, best of the rounds: the machine is shared
                for n in counts:
                    chosen, these = names[:n], poses[n]
                    started = time.perf_counter()
                    for k in range(messages // rounds):
                        client.set_pose(rotations=these[k % 64], bones=chosen, wait=False)
                    client.bones()  # returns after the server read everything sent before it
                    stream[n].append((messages // rounds) / (time.perf_counter() - started))
            for n in counts:
                size = len(protocol.set_pose(0, poses[n][0], names=names[:n]))
                print(f"set_pose, {n} named bones, streamed (wait=False): {max(stream[n]):,.0f} messages/s "
                      f"(best of {rounds} rounds of {messages // rounds} messages of {size} bytes; "
                      f"median {np.median(stream[n]):,.0f})")
            trips = {"transport": [], **{n: [] for n in counts}}
            floor_message = protocol.set_pose(1, poses[BONES][0], names=names[:BONES])
            for _ in range(rounds):
                samples = []
                for _ in range(per_round):
                    started = time.perf_counter()
                    bare.send(floor_message)
                    bare.recv()
                    samples.append(time.perf_counter() - started)
                trips["transport"] += samples
                for n in counts:
                    chosen, these, samples = names[:n], poses[n], []
                    for k in range(per_round):
                        started = time.perf_counter()
                        client.set_pose(rotations=these[k % 64], bones=chosen)
                        samples.append(time.perf_counter() - started)
                    trips[n] += samples
            floor = median_ms(trips["transport"])
            print(f"round trip, median (p90) of {rounds} interleaved rounds of {per_round}:")
            print(f"  the transport alone (a websockets echo server, {len(floor_message)}-byte message): "
                  f"{floor:.3f} ms ({np.percentile(trips['transport'], 90) * 1e3:.3f} ms)")
            for n in counts:
                median = median_ms(trips[n])
                print(f"  set_pose(wait=True), {n} named bones: {median:.3f} ms "
                      f"({np.percentile(trips[n], 90) * 1e3:.3f} ms), {median / floor:.2f}x the transport's, "
                      f"+{median - floor:.3f} ms")
            chosen = names[:BONES]
            client.set_pose(rotations=poses[BONES][0], bones=chosen)
            pose = {"bones": {name: {"rotation_quaternion": [float(v) for v in q]}
                              for name, q in zip(chosen, poses[BONES][0])}}
            remote, local = [], []
            with LocalRender(model, pose) as render_here:
                for _ in range(60):  # alternately, so that both see the same load on the machine
                    started = time.perf_counter()
                    client.render((256, 256))
                    remote.append(time.perf_counter() - started)
                    local.append(render_here())
    finally:
        for running in (process, echo):
            running.terminate()
            running.wait()
    print(f"render((256, 256)): {median_ms(remote):.2f} ms through the connection, {median_ms(local):.2f} ms "
          f"in-process (framed camera + draw + read back): {median_ms(remote) - median_ms(local):+.2f} ms overhead")


class LocalRender:
    """The same render in this process, as `serve` draws it: a framed camera, the draw, the read back."""

    def __init__(self, model, pose):
        from viewer.editing.pose import apply_pose
        from viewer.loaders import load_model
        from viewer.render.headless import HeadlessRenderer

        self.scene = load_model(model)
        if self.scene.animations:
            self.scene.animations[0].apply(0.0)
        apply_pose(self.scene, pose)
        self.headless = HeadlessRenderer((256, 256))

    def __call__(self) -> float:
        from viewer.camera import framed_camera
        from viewer.options import RenderOptions

        started = time.perf_counter()
        self.headless.render(self.scene, framed_camera(self.scene, aspect=1.0), RenderOptions())
        return time.perf_counter() - started

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.headless.release()


def bench_frames(model, blocks: int = 8, frames: int = 40) -> None:
    """A ViewerSession (panel included, 1280x720, offscreen) polling a RemoteServer each frame,
    in alternate blocks of frames with the other process stopped (SIGSTOP) and running (SIGCONT),
    so both sides of each comparison see the same load on a shared machine."""
    import logging
    import signal

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
    socket_thread = server._thread.native_id

    from viewer.remote import protocol
    from viewer.remote.server import _read_request

    names = target.bone_names()[:BONES]
    rng = np.random.default_rng(0)
    local_poses = [_read_request(protocol.decode(protocol.set_pose(0, rng.normal(size=(BONES, 4)).astype(np.float32),
                                                                   names=names))) for _ in range(2)]

    def run(count, pose_here=False):
        times = []
        for frame in range(count):
            started = time.perf_counter()
            if pose_here:  # the same pose work with no connection: a new pose applied in this thread
                target.set_pose(local_poses[frame % 2])
            server.poll(target)
            session.frame(size, 1 / 60, offscreen.framebuffer)
            ctx.finish()
            times.append(time.perf_counter() - started)
        return times

    def alternate(process, pose_here=False):
        """{False: frame times with ``process`` stopped, True: running}, the frame thread's CPU
        per frame, the socket thread's CPU per second and the messages read per second, each way."""
        times, cpu, socket, read, wall = {False: [], True: []}, {False: 0.0, True: 0.0}, {False: 0.0, True: 0.0}, \
            {False: 0, True: 0}, {False: 0.0, True: 0.0}
        for block in range(2 * blocks):
            running = bool(block % 2)
            process.send_signal(signal.SIGCONT if running else signal.SIGSTOP)
            run(5)  # let what was in flight drain
            started, cpu0, socket0, read0 = time.perf_counter(), time.thread_time(), thread_cpu(socket_thread), \
                server.messages_read
            times[running] += run(frames, pose_here=pose_here and not running)
            wall[running] += time.perf_counter() - started
            cpu[running] += time.thread_time() - cpu0
            socket[running] += thread_cpu(socket_thread) - socket0
            read[running] += server.messages_read - read0
        process.send_signal(signal.SIGCONT)
        count = blocks * frames
        return (times, {k: v / count * 1e3 for k, v in cpu.items()}, socket[True] / wall[True],
                read[True] / wall[True])

    run(30)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    spin_times, spin_cpu, _, _ = alternate(spinner)
    spinner.kill()
    spinner.wait()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    names = json.dumps(names)
    streamer = subprocess.Popen([sys.executable, "-c", STREAMER, f"127.0.0.1:{server.address[1]}", TOKEN, names],
                                stdout=subprocess.PIPE, text=True, env=env)
    streamer.stdout.readline()
    times, cpu, socket_share, rate = alternate(streamer)
    posed_times, posed_cpu, _, _ = alternate(streamer, pose_here=True)
    streamer.kill()
    streamer.wait()
    server.close()
    quiet, streaming = median_ms(times[False]), median_ms(times[True])
    print(f"viewer frame (1280x720, panel, {Path(model).name}; {blocks} alternating blocks of {frames} frames): "
          f"median {quiet:.2f} ms with the client stopped, {streaming:.2f} ms while it streams set_pose at full rate "
          f"({rate:,.0f} messages/s read): {(streaming / quiet - 1) * 100:+.1f}%")
    print(f"  the frame thread's own CPU per frame: {cpu[False]:.2f} ms stopped, {cpu[True]:.2f} ms streaming "
          f"({(cpu[True] / cpu[False] - 1) * 100:+.1f}%); the socket thread used {socket_share * 100:.1f}% of a core")
    posed, streamed = median_ms(posed_times[False]), median_ms(posed_times[True])
    print(f"  against the same new pose each frame applied in-process (client stopped): {posed:.2f} ms vs "
          f"{streamed:.2f} ms streaming ({(streamed / posed - 1) * 100:+.1f}%); frame thread CPU {posed_cpu[False]:.2f} "
          f"vs {posed_cpu[True]:.2f} ms ({(posed_cpu[True] / posed_cpu[False] - 1) * 100:+.1f}%)")
    spun_quiet, spun = median_ms(spin_times[False]), median_ms(spin_times[True])
    print(f"  for scale, a process that only spins a core: {spun_quiet:.2f} ms stopped, {spun:.2f} ms spinning "
          f"({(spun / spun_quiet - 1) * 100:+.1f}%)")


def thread_cpu(native_id: int) -> float:
    """CPU seconds (user + system) of one thread of this process."""
    fields = Path(f"/proc/self/task/{native_id}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROBOT)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--frames-only", action="store_true", help="only the viewer frame times")
    parser.add_argument("--connection-only", action="store_true", help="no viewer frame times")
    args = parser.parse_args()
    print(f"loopback, two processes, {os.cpu_count()} cores; model {args.model.name}")
    if not args.frames_only:
        bench_connection(args.model, args.messages)
    if not args.connection_only:
        bench_frames(args.model)


if __name__ == "__main__":
    main()
