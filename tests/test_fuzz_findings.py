"""What scripts/fuzz.py found, kept: each input it turned up (saved small under
tests/data/fuzz/findings/) now ends in one ViewerError line; and its seeds (tests/data/fuzz/TARGET/)
still read whole, so the fuzzer starts from inputs that reach the builders, not from refusals.

The targets are the fuzzer's own functions of bytes (the script imported by path), so a test
here runs the input exactly as the fuzzer ran it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from viewer.errors import ViewerError
from viewer.remote.protocol import ProtocolError

ROOT = Path(__file__).resolve().parent.parent
FUZZ_DATA = ROOT / "tests" / "data" / "fuzz"
FINDINGS = FUZZ_DATA / "findings"


def _script():
    spec = importlib.util.spec_from_file_location("boneviewer_fuzz_script", ROOT / "scripts" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fuzz = _script()
_targets: dict = {}


def target(name: str):
    """The fuzzer's function of bytes for ``name``, made once."""
    if name not in _targets:
        _targets[name] = fuzz.MAKERS[name]()
    return _targets[name]


def refusal(name: str, data: bytes) -> Exception | None:
    """The ViewerError (or the remote protocol's ProtocolError) the target's reader raised on
    ``data``, None when it was read: the target swallows those, so their creation is noted."""
    caught = []
    originals = {kind: kind.__init__ for kind in (ViewerError, ProtocolError)}

    def noting(original):
        def noted(self, *args):
            caught.append(self)
            original(self, *args)
        return noted

    for kind, original in originals.items():
        kind.__init__ = noting(original)
    try:
        target(name)(data)  # anything else propagates: the finding itself
    finally:
        for kind, original in originals.items():
            kind.__init__ = original
    return caught[-1] if caught else None


@pytest.mark.parametrize("name", fuzz.TARGETS)
def test_every_seed_is_read_whole(name):
    seeds = sorted((FUZZ_DATA / name).iterdir())
    assert seeds, f"no seeds for {name}"
    for seed in seeds:
        assert seed.stat().st_size <= 8192, f"{seed}: seeds stay small"
        error = refusal(name, seed.read_bytes())
        assert error is None, f"{seed}: refused: {error}"


# --- findings ------------------------------------------------------------------------------------
# fbx: the child's answer, damaged (a part of the document or an array left out), reached the
# builder, whose KeyError escaped load_fbx as a traceback; now one line naming the file.
@pytest.mark.parametrize("finding, missing", [("fbx-answer-no-faces.bin", "'mesh0.faces'"),
                                              ("fbx-answer-no-nodes.bin", "'nodes'"),
                                              ("fbx-answer-no-stack-values.bin", "'stack0.node3.r.values'")])
def test_a_damaged_fbx_answer_is_one_error_line(finding, missing):
    data = (FINDINGS / finding).read_bytes()
    error = refusal("fbx", data)
    assert isinstance(error, ViewerError)
    assert str(error).startswith("fuzz.fbx: the FBX reader's answer is not what the builder reads (KeyError: ")
    assert missing in str(error) and "\n" not in str(error)


# usd (the child on mutated files): a .usdc whose table of contents claims 436,796,420 sections
# in a 4.7 KB file had usd-core spend 34-48 s (sizing its reads by the count) before it refused
# it; the reader now checks the table against the file's size first.
def test_a_crate_file_whose_table_of_contents_cannot_fit_is_refused_at_once():
    import time

    from viewer.usd import load_usd

    path = FINDINGS / "usd-crate-section-count.usdc"
    began = time.perf_counter()
    with pytest.raises(ViewerError) as caught:
        load_usd(path)
    took = time.perf_counter() - began
    assert str(caught.value) == (f"{path}: not a readable USD file: its crate (.usdc) table of contents claims "
                                 f"436796420 sections, more than the file's 4756 bytes hold")
    assert took < 10.0, f"{took:.1f} s"  # a child's start, not usd-core's tens of seconds
