"""`boneviewer batch`: every model under a folder checked and rendered into an HTML report, by a
local pool of processes or by Ray."""

from __future__ import annotations

import os
from pathlib import Path

from ..words import counted
from .common import (add_shadow_options, shadow_options, Progress, add_look_options, add_pool_options, add_skinning_option, check_creatable_folder,
                     check_pool_options, look_options, positive_finite, size)


def add_parser(commands, common):
    batch = commands.add_parser("batch", parents=[common], help="check and render a library of models into a report",
                                description="For every model file under DIR (glTF, FBX, USD, BVH), write "
                                            "REPORT/<its path>/ with thumb.png, turntable.gif, one GIF per clip, bone-map.png, "
                                            "weight-check.png and check.json; then REPORT/index.html (a sortable, "
                                            "filterable table), a page per model and REPORT/report.json. Models "
                                            "whose bytes and options did not change since the last run are skipped. "
                                            "Exit 0 when every model was processed, 1 when some failed.")
    batch.add_argument("dir", type=Path, metavar="DIR", help="the library: a folder of models (searched recursively)")
    batch.add_argument("--out", type=Path, required=True, metavar="REPORT", help="the report's folder (created)")
    add_pool_options(batch, "run each model as a Ray task: on a local Ray runtime, or on the cluster at ADDRESS "
                            "(HOST:PORT of its head)")
    batch.add_argument("--size", type=size, default=(256, 256), metavar="WxH", help="WIDTHxHEIGHT of the pictures (default 256x256)")
    batch.add_argument("--gif-seconds", type=positive_finite, default=4.0, metavar="S",
                       help="each clip's GIF, and the turntable, last at most S seconds (default 4)")
    batch.add_argument("--timeout", type=positive_finite, metavar="S",
                       help="a model taking longer than S seconds gets a failed row (default: no limit)")
    batch.add_argument("--force", action="store_true", help="redo every model, changed or not")
    add_look_options(batch)
    add_shadow_options(batch, default=False)
    add_skinning_option(batch)
    batch.set_defaults(run=run)


def run(args) -> int:
    from ..checks import MODEL_SUFFIXES, model_files
    from ..errors import ViewerError, why_missing
    from ..files import write_file
    from ..library.job import BatchOptions
    from ..library.report import index_html, model_findings, model_html
    from ..look import environment_digest
    from ..library.run import REPORT_JSON, map_local, map_ray, plan, write_json, write_model

    if args.dir.is_file():
        raise ViewerError(f"{args.dir}: is a file; batch takes a folder of models "
                          f"(one file: boneviewer check {args.dir}, boneviewer render {args.dir})")
    if not args.dir.is_dir():
        raise ViewerError(f"{args.dir}: {why_missing(args.dir, 'folder')}")
    check_pool_options(args)
    look = look_options(args)
    look.update(shadow_options(args))
    check_creatable_folder("--out", args.out)  # first: resolve() raises on a symlink loop
    if args.dir.resolve() == args.out.resolve():
        raise ViewerError(f"--out {args.out}: the report needs its own folder, not the library's")
    if not model_files(args.dir):
        raise ViewerError(f"{args.dir}: no model files ({', '.join(MODEL_SUFFIXES)}) in this folder")
    check_report_outputs(args.dir, args.out)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ViewerError(f"--out {args.out}: cannot create it: {error.strerror}") from None
    options = BatchOptions(size=tuple(args.size), gif_seconds=args.gif_seconds, skinning=args.skinning, **look,
                           environment_sha256=environment_digest(look["environment"]))
    todo, kept = plan(args.dir, args.out, options, args.force)
    rows = {model.name: model.row for model in kept}
    if todo:
        if args.ray is not None:
            results = map_ray(todo, options, args.ray or None, args.timeout)
        else:
            results = map_local(todo, options, args.workers or os.cpu_count() or 1, args.timeout)
        progress = Progress(len(todo), "models")
        for done, (model, result) in enumerate(results, 1):
            rows[model.name] = write_model(args.out, model, result)
            progress.update(done)
        progress.close()
    ordered = [rows[name] for name in sorted(rows)]
    for row in ordered:
        folder = args.out / row["file"]
        folder.mkdir(parents=True, exist_ok=True)
        page = model_html(row, model_findings(folder))
        write_file(folder / "index.html", page)
    write_json(args.out / REPORT_JSON, {"options": options.as_json(), "models": ordered})
    index = args.out / "index.html"
    write_file(index, index_html(ordered, f"boneviewer report: {args.dir.name}"))
    failed = [row for row in ordered if row["status"] != "ok"]
    print(f"{counted(len(ordered), 'model')}: {len(todo)} processed, {len(kept)} unchanged (skipped), "
          f"{len(failed)} failed; report: {index}")
    for row in failed:
        print(f"  failed: {row['file']}: {row['error']}")
    return 1 if failed else 0


def check_report_outputs(library: Path, out: Path) -> None:
    """The report's files and each model's folder (replaced whole on a run) land on no file of
    the library (a model, its buffers, its images): `batch lib --out lib/sub` would otherwise
    replace lib/sub/a.glb with lib/a.glb's folder."""
    from ..checks import model_files
    from ..files import check_folder_outputs, check_outputs
    from ..library.run import REPORT_JSON
    from ..sources import source_files

    models, inputs = model_files(library), {}
    for path in models:
        inputs.update(source_files(path, "the library's model"))
    check_outputs([(f"--out {out}", out / "index.html"), (f"--out {out}", out / REPORT_JSON)], inputs)
    check_folder_outputs(f"--out {out}", (out / path.relative_to(library) for path in models), inputs)
