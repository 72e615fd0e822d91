"""`boneviewer bench`: performance figures, printed as tables (not a test)."""

from __future__ import annotations


def add_parser(commands, common):
    bench = commands.add_parser("bench", parents=[common], help="print performance figures (skeleton update, "
                                                                "rendering)",
                                description="Benchmarks, printed as a table; not a test.")
    bench.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    bench.add_argument("--animation", nargs="+", metavar="MODEL", default=[],
                       help="also time one animation frame (clip apply, prepare, upload array) of these glTF "
                            "files, e.g. tests/data/gltf-samples/Fox/Fox.glb")
    bench.add_argument("--no-render", action="store_true", help="skip the rendering table")
    bench.set_defaults(run=run)


def run(args) -> int:
    from ..bench import main as bench_main

    return bench_main(args)
