"""Coverage-guided fuzzing of boneviewer's readers with atheris (libFuzzer for Python).

    python scripts/fuzz.py TARGET [TARGET ...] [--minutes M]     # coverage-guided, M minutes each
    python scripts/fuzz.py fbx usd --children 200                 # the real reader child, mutated files

Targets (each a function of bytes; every input must end in a result or a ViewerError):

    gltf    the glTF container (.glb chunks, .gltf JSON), validate, build (viewer.gltf)
    bvh     the BVH parser and builder (viewer.bvh)
    hdr     the Radiance .hdr decoder (viewer.hdr)
    pose    a pose file as `render --pose` reads and applies it (viewer.editing.pose)
    remote  the remote protocol's messages as the server decodes and applies them (a kind byte
            of 128 or more: a reply, as the client decodes it) (viewer.remote)
    fbx     the child's answer as the parent reads it (viewer.isolated) and the FBX builder
    usd     the same for USD

The FBX and USD readers themselves (ufbx, usd-core) run in a child process whose fault is an error
line already; ``--children N`` runs that child on N mutated sample files (not coverage-guided) and
counts what was refused and loaded, and the slowest.

A finding is any other exception, an input that takes over a second (libFuzzer's -timeout=1), or
one that takes the process over --rss-mb (libFuzzer's -rss_limit_mb). Each run starts from the
seeds in tests/data/fuzz/TARGET/ plus the corpus it grew last time (.fuzz/TARGET/corpus, not in the
repository); findings are written to .fuzz/TARGET/ (crash-*, timeout-*, oom-*). A finding ends
libFuzzer's run; this script records it and runs again from the grown corpus for the time left.

Needs atheris: pip install 'boneviewer[fuzz]'.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "tests" / "data" / "fuzz"
WORK = ROOT / ".fuzz"
TARGETS = ("gltf", "bvh", "hdr", "pose", "remote", "fbx", "usd")
# The modules under test: instrumented for coverage (only these; numpy and the standard library are not).
INSTRUMENTED = ["viewer"]

STATUS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)")
ARTIFACT = re.compile(r"Test unit written to (\S+)")


# --- the targets: each builds a function of bytes --------------------------------------------------
def _scratch() -> Path:
    """An empty folder on tmpfs where possible, for targets whose reader takes a path."""
    import atexit

    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    folder = tempfile.mkdtemp(prefix="boneviewer-fuzz-", dir=base)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return Path(folder)


def make_gltf():
    import numpy as np

    from viewer.errors import ViewerError
    from viewer.gltf import FALLBACK, load_file

    folder = _scratch()

    def one(data: bytes) -> None:
        path = folder / ("model.glb" if data[:4] == b"glTF" else "model.gltf")
        path.write_bytes(data)
        try:
            with np.errstate(all="ignore"):
                load_file(path)
        except ViewerError as error:
            # load_file's last line of defence wraps what the checks missed: that is a finding
            if FALLBACK in str(error) and error.__cause__ is not None:
                raise error.__cause__
    return one


def make_bvh():
    from viewer.bvh import load_bvh_motion
    from viewer.errors import ViewerError

    path = _scratch() / "motion.bvh"

    def one(data: bytes) -> None:
        path.write_bytes(data)
        try:
            load_bvh_motion(path)
        except ViewerError:
            pass
    return one


def make_hdr():
    from viewer.errors import ViewerError
    from viewer.hdr import decode_hdr

    def one(data: bytes) -> None:
        try:
            decode_hdr(data, "fuzz.hdr")
        except ViewerError:
            pass
    return one


def make_pose():
    from viewer.cli.common import apply_pose_data
    from viewer.editing.pose import PoseRecord, load_pose
    from viewer.errors import ViewerError
    from viewer.loaders import load_model

    # a model with morph targets, so the "morph" part of a pose reaches a mesh
    scene = load_model(ROOT / "tests" / "data" / "morph-worms.gltf")
    rest = PoseRecord(scene)
    path = _scratch() / "pose.json"

    def one(data: bytes) -> None:
        path.write_bytes(data)
        try:
            pose = load_pose(path)  # as `render --pose` reads it (cli.common.read_pose)
            apply_pose_data(scene, pose, path)
        except ViewerError:
            pass
        finally:
            rest.restore()
    return one


def make_remote():
    from viewer.editing.editor import Editor
    from viewer.errors import ViewerError
    from viewer.loaders import load_model
    from viewer.remote import protocol
    from viewer.remote.server import _apply, _read_request
    from viewer.remote.target import RemoteTarget

    target = RemoteTarget(Editor(load_model(ROOT / "tests" / "data" / "morph-worms.gltf")))

    def one(data: bytes) -> None:
        if data[3:4] >= bytes([min(protocol.REPLIES)]):
            return reply(data)
        try:  # the server's side: a client's request decoded and applied (render is the host's GL)
            message = protocol.decode(data)
            if message.kind == protocol.HELLO:
                protocol.read_hello(message.payload)
            else:
                request = _read_request(message)
                if message.kind != protocol.RENDER:
                    _apply(target, message.request_id, message.kind, request)
        except (protocol.ProtocolError, ViewerError):
            pass

    def reply(data: bytes) -> None:
        try:  # the client's side: a server's reply decoded
            message = protocol.read_reply(data)
            if message.kind == protocol.IMAGE:
                protocol.read_image(message.payload)
            elif message.kind == protocol.ERROR:
                protocol.read_error(message.payload)
        except protocol.ProtocolError:
            pass
    return one


def _make_answer(what: str, builder):
    from viewer.errors import ViewerError
    from viewer.isolated import build_answer, read_answer

    path = Path(f"fuzz.{what.lower()}")

    def one(data: bytes) -> None:
        try:
            doc, arrays = read_answer(data, path, what)
            build_answer(builder, doc, arrays, path, bool(len(data) & 1), what)  # file_axes both ways
        except ViewerError:
            pass
    return one


def make_fbx():
    from viewer.fbx.build import build_scene

    return _make_answer("FBX", build_scene)


def make_usd():
    from viewer.usd.build import build_scene

    return _make_answer("USD", build_scene)


MAKERS = {"gltf": make_gltf, "bvh": make_bvh, "hdr": make_hdr, "pose": make_pose, "remote": make_remote,
          "fbx": make_fbx, "usd": make_usd}


# --- the worker: one libFuzzer run in this process -------------------------------------------------
def worker(target: str, libfuzzer_args: list[str]) -> None:
    import atheris

    sys.path.insert(0, str(ROOT))
    with atheris.instrument_imports(include=INSTRUMENTED):
        one = MAKERS[target]()
    atheris.Setup([sys.argv[0], *libfuzzer_args], one)
    atheris.Fuzz()


# --- the driver: runs workers for the time given, collects the figures -----------------------------
def fuzz(target: str, minutes: float, rss_mb: int, keep: bool) -> dict:
    seeds = SEEDS / target
    home = WORK / target
    corpus = home / "corpus"
    if not keep and corpus.exists():
        shutil.rmtree(corpus)
    corpus.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + minutes * 60
    runs, executions, findings, last = 0, 0, [], None
    log = open(home / "log.txt", "w")
    while True:
        left = int(deadline - time.monotonic())
        if left < 5 or len(findings) >= 20:
            break
        command = [sys.executable, __file__, target, "--worker", "--", f"-max_total_time={left}", "-timeout=1",
                   f"-rss_limit_mb={rss_mb}", f"-artifact_prefix={home}/", "-print_final_stats=1",
                   str(corpus), str(seeds)]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 errors="replace", env={**os.environ, "PYTHONPATH": str(ROOT)})
        run_last, artifact, tail = None, None, []
        for line in child.stdout:
            log.write(line)
            tail = (tail + [line.rstrip()])[-200:]
            match = STATUS.match(line)
            if match:
                run_last = match
            found = ARTIFACT.search(line)
            if found:
                artifact = found.group(1)
        child.wait()
        runs += 1
        if run_last is not None:
            executions += int(run_last.group(1))
            last = run_last
        if artifact:
            findings.append({"artifact": artifact, "why": _why(tail)})
            print(f"  {target}: finding {len(findings)}: {findings[-1]['why']} -> {artifact}", flush=True)
        elif child.returncode != 0:
            print(f"  {target}: the worker ended with status {child.returncode}:\n    " + "\n    ".join(tail[-15:]))
            break
    log.close()
    return {"target": target, "minutes": minutes, "runs": runs, "executions": executions,
            "cov": int(last.group(2)) if last else 0, "ft": int(last.group(3)) if last else 0,
            "corpus": int(last.group(4)) if last else 0, "corpus_size": last.group(5) if last else "0b",
            "findings": findings}


def _why(tail: list[str]) -> str:
    """One line for a finding: the exception's last line, or libFuzzer's reason."""
    for line in reversed(tail):
        if "ALARM" in line or "timeout" in line.lower() and "libFuzzer" in line:
            return "over 1 s (timeout)"
        if "out-of-memory" in line:
            return line.strip()
    for i, line in enumerate(tail):
        if line.strip().startswith("=== Uncaught Python exception"):
            body = [t for t in tail[i + 1:] if t and not t.startswith(("  ", "Traceback", "==")) and "MS:" not in t]
            if body:
                where = [t.strip() for t in tail[i + 1:] if t.strip().startswith("File ")]
                return body[0][:200] + (f" at {where[-1][:160]}" if where else "")
    return tail[-1][:200] if tail else "?"


# --- the child readers on mutated files (fbx, usd): not coverage-guided ----------------------------
def mutate(data: bytes, rng: random.Random) -> bytes:
    """A few random edits: flipped bytes, set bytes, a cut, a copied run, a truncation."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not data:
            break
        edit = rng.random()
        i = rng.randrange(len(data))
        if edit < 0.4:
            data[i] ^= 1 << rng.randrange(8)
        elif edit < 0.6:
            data[i] = rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256)))
        elif edit < 0.75:
            del data[i:i + rng.randint(1, 64)]
        elif edit < 0.9:
            j = rng.randrange(len(data))
            data[i:i] = data[j:j + rng.randint(1, 64)]
        else:
            del data[i:]
    return bytes(data)


def children(target: str, count: int, seed: int) -> dict:
    from viewer.errors import ViewerError

    if target == "fbx":
        from viewer.fbx import load_fbx_file as load
        suffix = ".fbx"
    elif target == "usd":
        from viewer.usd import load_usd_file as load
        suffix = ".usda"
    else:
        raise SystemExit(f"--children is for fbx and usd, not {target}")
    samples = sorted((SEEDS / f"{target}-files").iterdir())
    rng = random.Random(seed)
    folder = _scratch()
    loaded = refused = 0
    findings, slowest, slow_input = [], (0.0, ""), None
    for n in range(count):
        sample = rng.choice(samples)
        path = folder / f"mutated{sample.suffix or suffix}"
        data = mutate(sample.read_bytes(), rng)
        path.write_bytes(data)
        began = time.perf_counter()
        try:
            load(path)
            loaded += 1
        except ViewerError:
            refused += 1
        except Exception as error:  # noqa: BLE001 - a finding, kept with its input
            kept = WORK / f"{target}-files" / f"crash-{n}{path.suffix}"
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(data)
            findings.append({"artifact": str(kept), "why": f"{type(error).__name__}: {str(error)[:160]}"})
            print(f"  {target}: finding: {findings[-1]['why']} -> {kept}", flush=True)
        took = time.perf_counter() - began
        if took > slowest[0]:
            slowest = (took, sample.name)
            slow_input = WORK / f"{target}-files" / f"slowest{path.suffix}"  # to look into
            slow_input.parent.mkdir(parents=True, exist_ok=True)
            slow_input.write_bytes(data)
    return {"target": f"{target} (child)", "inputs": count, "loaded": loaded, "refused": refused,
            "slowest_s": round(slowest[0], 3), "slowest_from": f"{slowest[1]}, kept as {slow_input}", "findings": findings}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("targets", nargs="+", choices=TARGETS, metavar="TARGET", help=", ".join(TARGETS))
    parser.add_argument("--minutes", type=float, default=10.0, help="coverage-guided minutes per target (10)")
    parser.add_argument("--rss-mb", type=int, default=2048, help="a finding when the process passes this (2048)")
    parser.add_argument("--fresh", action="store_true", help="start from the seeds alone, not last run's corpus")
    parser.add_argument("--children", type=int, metavar="N",
                        help="fbx, usd: run the real reader child on N mutated sample files instead")
    parser.add_argument("--seed", type=int, default=1, help="--children's random seed")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(argv)
    if args.worker:
        worker(args.targets[0], [a for a in rest if a != "--"])
        return 0
    sys.path.insert(0, str(ROOT))
    if args.children is None:
        try:
            import atheris  # noqa: F401
        except ImportError:
            print("fuzz.py needs atheris: pip install 'boneviewer[fuzz]' (or pip install atheris)", file=sys.stderr)
            return 2
    found = 0
    for target in args.targets:
        if args.children is not None:
            result = children(target, args.children, args.seed)
            print(f"{result['target']}: {result['inputs']} mutated files: {result['loaded']} loaded, "
                  f"{result['refused']} refused, slowest {result['slowest_s']} s (from {result['slowest_from']}), "
                  f"{len(result['findings'])} findings", flush=True)
        else:
            result = fuzz(target, args.minutes, args.rss_mb, keep=not args.fresh)
            print(f"{target}: {result['minutes']:g} min, {result['executions']} executions, cov {result['cov']} "
                  f"ft {result['ft']}, corpus {result['corpus']} inputs ({result['corpus_size']}), {len(result['findings'])} findings "
                  f"({result['runs']} libFuzzer runs)", flush=True)
        for finding in result["findings"]:
            print(f"  {finding['why']} -> {finding['artifact']}")
        found += len(result["findings"])
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
