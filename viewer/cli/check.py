"""`boneviewer check`: every finding on model files, as lines or as one JSON document."""

from __future__ import annotations

import json
from pathlib import Path

from ..words import counted


def add_parser(commands, common):
    check = commands.add_parser("check", parents=[common], help="check model files for errors and rig problems",
                                description="Check model files (or every .gltf, .glb, .fbx, .usd, .usda, .usdc, .usdz and .bvh under folders, "
                                            "recursively) for what makes them invalid or undrawable (errors) and for "
                                            "rig problems (warnings, infos): weights, joints, inverse binds, scales, "
                                            "keyframes, exploding clips, extensions, textures. Exit 0 without "
                                            "errors, 2 with any.")
    check.add_argument("paths", nargs="+", metavar="PATH", type=Path, help="model files or folders")
    check.add_argument("--json", action="store_true",
                       help='print one JSON document: [{"file", "findings": [{"severity", "code", "message", '
                            '"pointer"}]}]')
    check.add_argument("--strict", action="store_true", help="warnings count as errors (exit 2)")
    check.set_defaults(run=run)


def run(args) -> int:
    from ..checks import check_file

    files = checked_files(args.paths)
    reports = [check_file(path) for path in files]
    if args.json:
        print(json.dumps([report.as_json() for report in reports], indent=1))
    else:
        for report in reports:
            print(f"{report.file}: {_counts(report)}")
            for f in report.findings:
                where = f" {f.pointer}" if f.pointer else ""
                print(f"  {f.severity} {f.code}{where}: {f.message}")
        failing = sum(report.fails(args.strict) for report in reports)
        print(f"checked {counted(len(reports), 'file')}: {failing} "
              f"{'fail' if failing != 1 else 'fails'}{' (--strict: warnings count)' if args.strict else ''}")
    return 2 if any(report.fails(args.strict) for report in reports) else 0


def checked_files(paths) -> list[Path]:
    """The model files named, folders expanded (recursively); a path that is neither, or a
    folder without models, is a user error."""
    from ..checks import MODEL_SUFFIXES, model_files
    from ..errors import ViewerError, why_missing

    files = []
    for path in paths:
        if path.is_dir():
            found = model_files(path)
            if not found:
                raise ViewerError(f"{path}: no model files ({', '.join(MODEL_SUFFIXES)}) in this folder")
            files += found
        elif path.is_file():
            if path.suffix.lower() not in MODEL_SUFFIXES:
                raise ViewerError(f"{path}: cannot check {path.suffix or 'extension-less'} files; "
                                  f"check reads {', '.join(MODEL_SUFFIXES)}")
            files.append(path)
        else:
            raise ViewerError(f"{path}: {why_missing(path, 'file or folder')}")
    return list(dict.fromkeys(files))  # a file named twice, or inside two folders given, is checked once


def _counts(report) -> str:
    from ..checks import SEVERITIES

    if not report.findings:
        return "ok"
    counts = [(report.count(s), s) for s in SEVERITIES]
    return ", ".join(counted(n, s) for n, s in counts if n)
