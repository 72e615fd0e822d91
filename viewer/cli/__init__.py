"""The ``boneviewer`` command: one module per command, each a thin layer that wires the layers
together and owns no maths.

A command module has ``add_parser(commands, common)`` (its argparse sub-parser, which sets
``run``) and ``run(args) -> int``. User mistakes (ViewerError) print one line on stderr and exit
2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from ..loaders import MODEL_SUFFIXES
from .common import Parser

# The commands, in the order --help lists them: each names a module of this package.
COMMANDS = ("render", "view", "info", "export", "serve", "check", "batch", "synth", "bench")


def _version() -> str:
    from .. import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="boneviewer",
        description="GPU-skinned skeletal-mesh viewer and pose editor with Babylon.js bone semantics. "
                    "`boneviewer [MODEL]` opens the viewer (the `view` command).",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors (also after the command)")
    parser.add_argument("--version", action="version", version=f"boneviewer {_version()}")
    # --debug after the command too; SUPPRESS keeps a subcommand from resetting it to False.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks for errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f".{name}", __name__).add_parser(commands, common)
    return parser


def _default_to_view(argv: list[str], parser) -> list[str]:
    """`boneviewer` and `boneviewer MODEL` mean `boneviewer view [MODEL]`; any other first
    word that is not a command is a usage error (a typo must not be taken for a model)."""
    words = [a for a in argv if a != "--debug"]
    first = words[0] if words else None
    if first in COMMANDS or first in ("-h", "--help", "--version"):
        return argv
    if first is None or first.startswith("-") or _looks_like_model(first):
        return ["view", *argv]
    parser.error(f"unknown command {first!r}; the commands are {', '.join(COMMANDS)}, "
                 f"and a model is a file that exists or ends in {', '.join(MODEL_SUFFIXES)}")


def _looks_like_model(word: str) -> bool:
    return Path(word).exists() or word.lower().endswith(MODEL_SUFFIXES) or "/" in word or os.sep in word


def _show_warnings() -> None:
    """Loader warnings (tolerated flaws in a file) as one line each on stderr."""
    import logging

    logger = logging.getLogger("boneviewer")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("boneviewer: warning: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False


# The commands that load their MODEL argument first thing (an FBX or USD file is read ahead).
READS_THE_MODEL = ("render", "view", "info", "export", "serve")

def _read_ahead(argv: list[str]) -> None:
    """Start reading the model of a command that loads one first thing, when it is an FBX or USD
    file, before anything else is imported: its reader's process then runs beside the imports,
    the parser and the GL context. The model is the first word after the command that names such
    a file (a wrong guess costs a process that is stopped at exit)."""
    from ..loaders import read_ahead, reads_ahead

    words = argv[1:] if argv and argv[0] in READS_THE_MODEL else argv if argv and argv[0] not in COMMANDS else []
    for word in words:
        if not word.startswith("-") and reads_ahead(word):
            read_ahead(word)
            return


# The exit status after a closed pipe (`boneviewer check DIR | head -1`): 128 + SIGPIPE, what the
# shell reports for a Unix tool that the closed pipe ended.
CLOSED_PIPE_STATUS = 141


def main(argv: list[str] | None = None) -> int:
    """The command's exit status. A reader that closes the pipe early ends it quietly with
    CLOSED_PIPE_STATUS, as it ends a Unix tool: no traceback, nothing more written."""
    try:
        try:
            return _main(argv)
        finally:
            # What is still buffered, written here: a closed pipe then raises here, not in the
            # interpreter's final flush, where it could only print "Exception ignored".
            _flush(sys.stdout)
            _flush(sys.stderr)
    except BrokenPipeError:
        _discard_output()
        return CLOSED_PIPE_STATUS


# The one-shot commands whose process ends when the command does: out at once, without the
# interpreter's teardown (its modules, numpy's and the GL driver's objects and threads freed one by
# one: about 45 ms of a small model's 0.35 s render here, measured with and without).
QUICK_EXIT = ("render", "info", "export", "check")


def run() -> None:
    """The ``boneviewer`` command (and ``python -m viewer``): ``main()``, then, for the one-shot
    commands, ``quick_exit``; every other command ends as Python ends."""
    status = main()
    words = [word for word in sys.argv[1:] if not word.startswith("-")]
    if words and words[0] in QUICK_EXIT:
        quick_exit(status)
    sys.exit(status)


def quick_exit(status: int) -> None:
    """End the process with ``status`` once its work is out: the exit handlers run (the logging
    module's flush, read-ahead readers stopped, temporary folders removed), the standard streams
    are flushed, then ``os._exit`` skips freeing what the process holds, which the system frees."""
    import atexit

    try:
        atexit._run_exitfuncs()
        _flush(sys.stdout)
        _flush(sys.stderr)
    except BrokenPipeError:
        _discard_output()
        status = CLOSED_PIPE_STATUS
    os._exit(status)


def _flush(stream) -> None:
    if stream is not None:
        stream.flush()


def _discard_output() -> None:
    """stdout and stderr to /dev/null (the standard way, as Python's signal docs show): what is
    still buffered for the closed pipe is dropped there when the interpreter flushes at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            try:
                os.dup2(devnull, stream.fileno())
            except (AttributeError, OSError, ValueError):  # not a real file (an in-process capture)
                pass
    finally:
        os.close(devnull)


def _main(argv: list[str] | None) -> int:
    from ..errors import ViewerError

    argv = sys.argv[1:] if argv is None else list(argv)
    _read_ahead(argv)
    parser = build_parser()
    argv = _default_to_view(argv, parser)
    args = parser.parse_args(argv)
    _show_warnings()
    try:
        run = getattr(args, "run", None)
        if run is None:
            parser.print_help()
            return 0
        return run(args)
    except ViewerError as error:
        if args.debug:
            raise
        print(f"boneviewer: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
