"""Fuzzing the glTF loader: random edits of valid .gltf JSON and .glb bytes either load or
raise ViewerError, quickly, and never through the loader's generic fallback.

The loader wraps anything unexpected into ViewerError("... malformed glTF (Type: ...)") as
a last line of defence; these tests fail when that fallback fires, so a gap in the explicit
checks shows up here as the shrunk example that reaches it. Each test prints its own count
of each outcome (run with -s to see them) and checks it saw both: files that load and files
that are refused.
"""

from __future__ import annotations

import collections
import copy
import json
import math
import os
import random
import struct
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gltf_cases import build_base, make_case
from viewer import ViewerError
from viewer.gltf import FALLBACK, load_gltf

TIME_LIMIT = 5.0
# FUZZ_EXAMPLES=5000 FUZZ_RANDOM=1 explores further than CI does.
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 400)), deadline=None,
                derandomize=not os.environ.get("FUZZ_RANDOM"), database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz-bases")
    documents = [json.loads(build_base(folder).read_text()),
                 json.loads(make_case("cubicspline", folder).read_text()),
                 json.loads(make_case("non_joint_between_joints", folder).read_text())]
    glb = build_base(folder, "glb").read_bytes()
    return {"documents": documents, "glb": glb, "folder": tmp_path_factory.mktemp("fuzz")}


def _load_and_use(path) -> str:
    """Load, then use what loaded (animate and skin); the outcome's name."""
    start = time.monotonic()
    try:
        scene = load_gltf(path)
    except ViewerError as error:
        if error.__cause__ is not None or FALLBACK in str(error):
            raise AssertionError(f"the generic fallback fired: {error}") from error
        assert str(error).startswith(f"{path}: "), str(error)
        outcome = "ViewerError"
    else:
        outcome = "loaded"
        try:  # what loaded can be animated and skinned (a bad pose is the model's ViewerError)
            for clip in scene.animations:
                for fraction in (0.0, 0.4, 1.0):
                    clip.apply(clip.duration * fraction)
            for mesh in scene.skinned_meshes:
                mesh.skinned_positions()
        except ViewerError:
            outcome = "loaded, then ViewerError while animating"
    elapsed = time.monotonic() - start
    assert elapsed < TIME_LIMIT, f"took {elapsed:.1f} s"
    return outcome


def _fuzz(kind, write_file) -> None:
    """Run FUZZ examples of ``write_file(data) -> path`` through the loader; print the outcomes.

    Both outcomes must occur: edits that never load (a broken base) or never fail (edits
    that change nothing) would make the run a check of nothing.
    """
    outcomes = collections.Counter()

    @FUZZ
    @given(data=st.data())
    def examples(data):
        outcomes[_load_and_use(write_file(data))] += 1

    examples()
    print(f"\nfuzz {kind}: {sum(outcomes.values())} examples: {dict(outcomes)}")
    assert outcomes["loaded"] and outcomes["ViewerError"], dict(outcomes)


# --- JSON mutations --------------------------------------------------------------------------------
EXTREMES = [-1, 0, 1, 2, 3, 4, 5, 7, 255, 256, 5126, 2**31, 2**32, 2**63, 10**30, -(2**31), 1e308, -1e308, 1e-320,
            1.5, float("nan"), float("inf"), -float("inf"), "NaN", "Infinity", "-1", "0", "", "x" * 300, [], {},
            None, True, False, [0], [1, 2], [0.0] * 16, [float("nan")] * 4, {"a": 1}, "VEC3", "MAT4", "SCALAR",
            "CUBICSPLINE", "STEP", "rotation", "weights", "../x.bin", "/etc/passwd", "data:,", "http://x/y"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8)


def _paths(node, prefix=()):
    """Every (container path, key) in a JSON document."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield prefix, key
        yield from _paths(value, prefix + (key,))


def _mutate(document, data):
    # The place is picked uniformly (hypothesis's own choices lean towards the first ones).
    paths = list(_paths(document))
    where, key = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed")).choice(paths)
    parent = document
    for step in where:
        parent = parent[step]
    value = parent[key]
    kind = data.draw(st.sampled_from(["extreme", "random", "delete", "swap", "nudge"]), label="kind")
    if kind == "delete":
        del parent[key]
    elif kind == "extreme":
        parent[key] = copy.deepcopy(data.draw(st.sampled_from(EXTREMES), label="value"))
    elif kind == "random":
        parent[key] = data.draw(json_values, label="value")
    elif kind == "swap":  # the same content in another type
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            parent[key] = data.draw(st.sampled_from([str(value), [value], float(value), bool(value)]), label="as")
        elif isinstance(value, str):
            parent[key] = data.draw(st.sampled_from([[value], {"v": value}, len(value), value.upper()]), label="as")
        elif isinstance(value, list):
            parent[key] = data.draw(st.sampled_from([{str(i): v for i, v in enumerate(value)}, value[:1],
                                                     value + value, value[::-1], len(value)]), label="as")
        elif isinstance(value, dict):
            parent[key] = data.draw(st.sampled_from([list(value.values()), list(value), {}]), label="as")
        else:
            parent[key] = [value]
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        parent[key] = value + data.draw(st.sampled_from([-2, -1, 1, 2, 4, 1000, 0.5]), label="delta")
    else:
        parent[key] = None


def test_mutated_gltf_json_loads_or_raises_viewer_error(bases):
    def write_file(data):
        document = copy.deepcopy(data.draw(st.sampled_from(bases["documents"]), label="base"))
        for _ in range(data.draw(st.integers(1, 3), label="mutations")):
            if isinstance(document, (dict, list)) and document:
                _mutate(document, data)
        path = bases["folder"] / "mutated.gltf"
        path.write_text(json.dumps(document))
        return path

    _fuzz("json", write_file)


# --- GLB byte mutations ----------------------------------------------------------------------------
def _glb_mutation(raw: bytearray, data) -> bytearray:
    kind = data.draw(st.sampled_from(["flip", "truncate", "length", "overwrite", "insert", "delete"]), label="kind")
    if not raw:
        return raw
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    position = rng.randrange(len(raw))
    if kind == "flip":
        for _ in range(data.draw(st.integers(1, 8), label="flips")):
            position = rng.randrange(len(raw))
            raw[position] ^= 1 << data.draw(st.integers(0, 7), label="bit")
    elif kind == "truncate":
        del raw[position:]
    elif kind == "length":  # the header length, the JSON chunk's length, or the BIN chunk's
        json_length = struct.unpack_from("<I", raw, 12)[0] if len(raw) >= 16 else 0
        field = data.draw(st.sampled_from([8, 12, 20 + json_length]), label="field")
        if field + 4 <= len(raw):
            old = struct.unpack_from("<I", raw, field)[0]
            new = data.draw(st.sampled_from([0, 1, 3, old - 4, old - 1, old + 1, old + 4, old * 2, 2**31, 2**32 - 1]),
                            label="length")
            struct.pack_into("<I", raw, field, new % 2**32)
    elif kind == "overwrite":
        chunk = data.draw(st.binary(min_size=1, max_size=16), label="bytes")
        raw[position:position + len(chunk)] = chunk
    elif kind == "insert":
        raw[position:position] = data.draw(st.binary(min_size=1, max_size=16), label="bytes")
    else:
        del raw[position:position + data.draw(st.integers(1, 16), label="count")]
    return raw


def test_mutated_glb_bytes_load_or_raise_viewer_error(bases):
    def write_file(data):
        raw = bytearray(bases["glb"])
        for _ in range(data.draw(st.integers(1, 3), label="mutations")):
            raw = _glb_mutation(raw, data)
        path = bases["folder"] / "mutated.glb"
        path.write_bytes(bytes(raw))
        return path

    _fuzz("glb", write_file)


def test_glb_with_mutated_json_chunk_loads_or_raises_viewer_error(bases):
    """JSON edits inside a GLB, with the chunk and header lengths kept consistent."""
    raw = bases["glb"]
    json_length = struct.unpack_from("<I", raw, 12)[0]

    def write_file(data):
        document = json.loads(raw[20:20 + json_length])
        for _ in range(data.draw(st.integers(1, 3), label="mutations")):
            if isinstance(document, (dict, list)) and document:
                _mutate(document, data)
        text = json.dumps(document).encode()
        text += b" " * (-len(text) % 4)
        body = struct.pack("<II", len(text), 0x4E4F534A) + text + raw[20 + json_length:]
        path = bases["folder"] / "mutated-json.glb"
        path.write_bytes(struct.pack("<III", 0x46546C67, 2, 12 + len(body)) + body)
        return path

    _fuzz("glb-json", write_file)
