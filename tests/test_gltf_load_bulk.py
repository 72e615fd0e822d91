"""The glTF loader's bulk paths against the element-by-element references they replaced:
the same document, the same nodes, the same errors (scripts/bench_load.py times them).

Validation checks each top-level array one field at a time over all its objects and hands
anything off to the object-by-object walk (``checked_document(..., bulk=False)``), which words
the first problem: here both run on the samples and on hypothesis's mutations of them (values
of every wrong type, out of range, missing), and must agree on the document or the message.
"""

from __future__ import annotations

import copy
import json
import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gltf_cases import build_base
from samples import SAMPLES_DIR
from viewer.gltf.validate import checked_document

WRONG_VALUES = [None, -1, 0, 1, 2, 3, 4, 7, 255, 5126, 5125, 2**40, 10**400, -0.0, 0.5, 1e308, math.inf, math.nan,
                True, False, "", "x", "LINEAR", "rotation", "SCALAR", [], [0], [1.0, 2.0, 3.0], [0, 0, 0, 1],
                ["a"], {}, {"x": 1}, {"POSITION": 0}]


def _json_of(path) -> dict:
    raw = path.read_bytes()
    if raw[:4] == b"glTF":
        length = struct.unpack_from("<I", raw, 12)[0]
        raw = raw[20:20 + length]
    return json.loads(raw)


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    folder = SAMPLES_DIR
    paths = [folder / "CesiumMan" / "CesiumMan.glb", folder / "Fox" / "Fox.glb",
             folder / "RobotExpressive" / "RobotExpressive.glb", folder / "RiggedFigure" / "RiggedFigure.gltf",
             folder / "CesiumMan-Draco" / "CesiumMan.gltf", build_base(tmp_path_factory.mktemp("base"))]
    return [_json_of(path) for path in paths]


class Refused(Exception):
    pass


def _outcome(document, bulk: bool):
    """(clean document, hierarchy), or ("refused", the exception's type and message): a value
    the walk does not foresee either (a 400-digit integer) raises what load_gltf wraps."""
    try:
        clean, hierarchy = checked_document(document, Refused, bulk)
    except Exception as refused:
        return "refused", f"{type(refused).__name__}: {refused}"
    return clean, hierarchy


def test_bulk_validation_gives_the_walks_document_for_the_samples(documents):
    for document in documents:
        bulk, walk = _outcome(document, True), _outcome(document, False)
        assert bulk[0] != "refused", bulk
        assert bulk == walk
        assert json.dumps(bulk[0]) == json.dumps(walk[0])  # the same fields in the same order


def _places(node, prefix=()):
    """Every (container path, key) in a JSON document."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield prefix, key
        yield from _places(value, prefix + (key,))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_bulk_validation_refuses_as_the_walk_does(documents, data):
    document = copy.deepcopy(data.draw(st.sampled_from(documents), label="base"))
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        places = [place for place in _places(document) if place[0][:1] not in (("buffers",), ("images",))]
        where, key = data.draw(st.sampled_from(places), label="place")
        parent = document
        for step in where:
            parent = parent[step]
        if data.draw(st.booleans(), label="delete"):
            del parent[key]
        else:
            parent[key] = copy.deepcopy(data.draw(st.sampled_from(WRONG_VALUES), label="value"))
    bulk, walk = _outcome(document, True), _outcome(document, False)
    if walk[0] == "refused":
        assert bulk == walk
    else:
        assert bulk[0] != "refused", bulk
        assert json.dumps(bulk[0]) == json.dumps(walk[0]) and bulk[1] == walk[1]
