"""The ``boneviewer`` command: wires the layers together; owns no maths.

User mistakes (ViewerError) print one line on stderr and exit 2; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import sys


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="boneviewer",
        description="GPU-skinned skeletal-mesh viewer and pose editor with Babylon.js bone semantics.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_subparsers(dest="command")
    return parser


def main(argv: list[str] | None = None) -> int:
    from .errors import ViewerError

    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        if args.version:
            from . import __version__

            print(f"boneviewer {__version__}")
            return 0
        parser.print_help()
        return 0
    except ViewerError as error:
        if args.debug:
            raise
        print(f"boneviewer: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
