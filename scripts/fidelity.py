#!/usr/bin/env python3
"""How near boneviewer's pictures are to Babylon.js's: the fidelity table.

    .venv/bin/python scripts/fidelity.py [--only PATTERN ...] [--out out/fidelity] [--strict]

For each case of tests/fidelity_cases.py (the shared samples and the feature scenes of
tests/pbr_scenes.py, in the studio and the coloured environment) this renders

    boneviewer render MODEL --rest --camera CAM.json --background transparent --no-skeleton --no-grid
        --environment ENV --tone-mapping T --exposure X --size WxH --out ours.png

(leaving out the look's flags this checkout's CLI does not take yet, and saying so), scores it
against Babylon.js's recorded picture (tests/data/babylon_pictures; model-viewer's metric,
tests/fidelity.py), prints the table and writes OUT/<case>.png side by side (ours | Babylon's |
the difference, white equal, red most different) and OUT/table.md. --strict: exit 1 when a case
scores above the pass mark (-20 dB).
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

import fidelity_cases as fc  # noqa: E402
from fidelity import PASS_DB, read_rgba, score_db, side_by_side  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="PATTERN", help="cases whose name matches (e.g. 'Fox-*')")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "fidelity", help="folder for the pictures")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="renders at once")
    parser.add_argument("--strict", action="store_true", help=f"exit 1 when a case scores above {PASS_DB:g} dB")
    args = parser.parse_args(argv)

    record = fc.recorded()
    cases = [c for c in fc.all_cases() if not args.only or any(fnmatch.fnmatchcase(c.name, p) for p in args.only)]
    if not cases:
        print("no case matches", file=sys.stderr)
        return 2
    supported = fc.render_flags_supported()
    missing = [flag for flag, ok in supported.items() if not ok]
    if missing:
        print(f"note: `boneviewer render` here has no {', '.join(missing)}: rendered without them "
              "(today's look), scored against Babylon's pictures as recorded")
    (args.out / "ours").mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory() as scenes_dir:
        import pbr_scenes

        pbr_scenes.write_all(scenes_dir)

        def one(case):
            stale = fc.changed_inputs(case, record, scenes_dir)
            if not case.picture.exists():
                return case, None, "no recorded picture"
            ours_path = args.out / "ours" / f"{case.name}.png"
            result = fc.render_ours(case, scenes_dir, ours_path, supported)
            if result.returncode != 0:
                return case, None, f"render failed: {(result.stderr or result.stdout).strip().splitlines()[-1:]}"
            ours, theirs = read_rgba(ours_path), read_rgba(case.picture)
            from PIL import Image

            Image.fromarray(side_by_side(ours, theirs)).save(args.out / f"{case.name}.png")
            return case, score_db(ours, theirs), "; ".join(stale)

        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            results = list(pool.map(one, cases))

    header = "| case | environment | tone mapping | exposure | dB | pass (<= -20) |"
    lines = [header, "|---|---|---|---|---|---|"]
    for case, score, note in results:
        shown = "-" if score is None else f"{score:.1f}"
        verdict = "-" if score is None else ("yes" if score <= PASS_DB else "no")
        lines.append(f"| {case.model} | {case.environment} | {case.tone_mapping} | {case.exposure:g} | {shown} | "
                     f"{verdict}{' (' + note + ')' if note else ''} |")
    scores = [s for _, s, _ in results if s is not None]
    summary = (f"{sum(s <= PASS_DB for s in scores)} of {len(results)} cases at or below {PASS_DB:g} dB"
               + (f"; median {statistics.median(scores):.1f} dB, worst {max(scores):.1f} dB" if scores else ""))
    if missing:
        summary += f" (rendered without {', '.join(missing)})"
    table = "\n".join(lines)
    print(table)
    print(summary)
    (args.out / "table.md").write_text(table + "\n\n" + summary + "\n")
    print(f"pictures (ours | Babylon.js | difference): {args.out}/<case>.png")
    failed = len(scores) < len(results) or any(s > PASS_DB for s in scores)
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
