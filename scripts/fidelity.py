#!/usr/bin/env python3
"""How near boneviewer's pictures are to Babylon.js's: the fidelity table.

    .venv/bin/python scripts/fidelity.py [--only PATTERN ...] [--out out/fidelity] [--strict]

For each case of tests/fidelity_cases.py (the shared samples and the feature scenes of
tests/pbr_scenes.py, in the studio, the coloured and the outdoor environment) this renders

    boneviewer render MODEL --rest --camera CAM.json --background transparent --no-skeleton --no-grid
        --environment ENV --tone-mapping T --exposure X --size WxH --out ours.png

(leaving out the look's flags this checkout's CLI does not take yet, and saying so), scores it
(model-viewer's metric, tests/fidelity.py) against both recorded sets of Babylon.js's pictures:
tests/data/babylon_pictures (WebGL on SwiftShader, the issue's harness) and
tests/data/babylon_pictures_llvmpipe (WebGL on Mesa llvmpipe, the rasteriser boneviewer's headless
GL draws on, so the silhouettes' sub-pixel grid is the same), and against the SwiftShader set over
the pixels both pictures draw (tests/fidelity.py's shared_score_db: without the silhouette pixels
SwiftShader's coarser grid leaves empty). Where three.js 0.187's picture of the case is recorded
(tests/data/threejs_pictures, SwiftShader, tests/threejs_render/record_threejs.py), a further column
scores it against Babylon's SwiftShader picture the same way: the issue's yardstick, ours nearer to
Babylon than three.js is. It prints the table with these columns and writes OUT/table.md (Markdown,
for docs/look.md) and OUT/<case>.llvmpipe.png side by side, captioned: ours | Babylon's llvmpipe
picture | the difference (white equal, red most different), and, where three.js's picture is
recorded, OUT/<case>.threejs.png: ours | Babylon's SwiftShader picture | three.js's, each captioned
with its score.
--strict: exit 1 when a case scores above -20 dB against the llvmpipe set or, over the pixels both
draw, against the SwiftShader set (tests/test_fidelity.py's marks; it also holds the SwiftShader set
to -18 dB over all of ours, whose 1/16-pixel vertex grid alone moves Babylon against itself to -19
dB on the Fox).
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
from fidelity import PASS_DB, read_rgba, score_db, shared_score_db, side_by_side  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="PATTERN", help="cases whose name matches (e.g. 'Fox-*')")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "fidelity", help="folder for the pictures")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="renders at once")
    parser.add_argument("--strict", action="store_true", help=f"exit 1 when a case scores above {PASS_DB:g} dB")
    args = parser.parse_args(argv)

    records = {rasterizer: fc.recorded(rasterizer) for rasterizer in fc.RASTERIZERS}
    threejs_record = fc.recorded_threejs()
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
            """(case, {"swiftshader", "llvmpipe", "threejs" and their "-shared" scores: dB}, note)"""
            notes = [f"{r}: {p}" for r in fc.RASTERIZERS for p in fc.changed_inputs(case, records[r], scenes_dir)]
            threejs = {}
            if case.threejs_picture.exists() and case.picture_on("swiftshader").exists():
                notes += [f"three.js: {p}" for p in
                          fc.changed_inputs(case, threejs_record, scenes_dir, whose="three.js's")]
                pictures = read_rgba(case.threejs_picture), read_rgba(case.picture_on("swiftshader"))
                try:
                    threejs["threejs"] = score_db(*pictures)
                    threejs["threejs-shared"] = shared_score_db(*pictures)
                except ValueError as error:  # an empty or odd-sized recording: say so, score the rest
                    notes.append(f"three.js: {error}")
            present = [r for r in fc.RASTERIZERS if case.picture_on(r).exists()]
            if not present:
                return case, threejs, "no recorded picture"
            ours_path = args.out / "ours" / f"{case.name}.png"
            result = fc.render_ours(case, scenes_dir, ours_path, supported)
            if result.returncode != 0:
                return case, threejs, f"render failed: {(result.stderr or result.stdout).strip().splitlines()[-1:]}"
            ours = read_rgba(ours_path)
            scores = {**{r: score_db(ours, read_rgba(case.picture_on(r))) for r in present}, **threejs}
            if "swiftshader" in present:  # without the silhouette pixels only one rasteriser's grid covers
                scores["swiftshader-shared"] = shared_score_db(ours, read_rgba(case.picture_on("swiftshader")))
            if "llvmpipe" in present:
                picture = captioned(side_by_side(ours, read_rgba(case.picture_on("llvmpipe"))), ours.shape[1],
                                    (f"boneviewer: {case.name}", "Babylon.js 9.28, WebGL on llvmpipe",
                                     f"difference: {scores['llvmpipe']:.1f} dB"))
                picture.save(args.out / f"{case.name}.llvmpipe.png")
            if "threejs" in scores and "swiftshader" in scores:
                pictures = [ours, read_rgba(case.picture_on("swiftshader")), read_rgba(case.threejs_picture)]
                picture = captioned(in_a_row(pictures), ours.shape[1],
                                    (f"boneviewer ({scores['swiftshader']:.1f} dB)", "Babylon.js 9.28 (SwiftShader)",
                                     f"three.js {threejs_record.get('versions', {}).get('three', '')} "
                                     f"({scores['threejs']:.1f} dB)"))
                picture.save(args.out / f"{case.name}.threejs.png")
            return case, scores, "; ".join(notes)

        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            results = list(pool.map(one, cases))

    lines = ["| case | environment | tone mapping | exposure | ours against Babylon (SwiftShader) dB "
             "| the same where both draw | ours against Babylon (llvmpipe) dB "
             "| three.js against Babylon (SwiftShader) dB | pass (llvmpipe <= -20) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for case, scores, note in results:
        shown = [("-" if scores.get(r) is None else f"{scores[r]:.1f}")
                 for r in ("swiftshader", "swiftshader-shared", "llvmpipe", "threejs")]
        score, mark = scores.get("llvmpipe"), fc.llvmpipe_mark(case) if "llvmpipe" in scores else PASS_DB
        verdict = "-" if score is None else ("yes" if score <= mark else "no")
        if score is not None and mark > PASS_DB:
            verdict += f" (Babylon's own two pictures: {mark - 0.5:.1f})"
        lines.append(f"| {case.model} | {case.environment} | {case.tone_mapping} | {case.exposure:g} | "
                     f"{' | '.join(shown)} | {verdict}{' (' + note + ')' if note else ''} |")
    summary = []
    for rasterizer, label in (("llvmpipe", "llvmpipe"), ("swiftshader", "SwiftShader"),
                              ("swiftshader-shared", "SwiftShader, over the pixels both draw")):
        scores = [s[rasterizer] for _, s, _ in results if s.get(rasterizer) is not None]
        if scores:
            summary.append(f"against Babylon.js on {label}: {sum(s <= PASS_DB for s in scores)} of {len(results)} "
                           f"cases at or below {PASS_DB:g} dB; median {statistics.median(scores):.1f} dB, "
                           f"worst {max(scores):.1f} dB")
    apart = [(c, s["llvmpipe"]) for c, s, _ in results if c.model in fc.LLVMPIPE_APART and "llvmpipe" in s]
    if apart:
        summary[0] += (f" ({', '.join(c.name for c, _ in apart)}: Babylon draws "
                       f"{'these' if len(apart) > 1 else 'it'} as far apart on its own two rasterisers; "
                       f"{sum(score <= fc.llvmpipe_mark(c) for c, score in apart)} of {len(apart)} within that)")
    both = [s for _, s, _ in results if s.get("swiftshader") is not None and s.get("threejs") is not None]
    if both:
        threejs = [s["threejs"] for s in both]
        summary.append(f"three.js {threejs_record.get('versions', {}).get('three', '?')} against Babylon.js on "
                       f"SwiftShader: median {statistics.median(threejs):.1f} dB, worst {max(threejs):.1f} dB; ours "
                       f"nearer to Babylon's SwiftShader picture than three.js's in "
                       f"{sum(s['swiftshader'] < s['threejs'] for s in both)} of {len(both)} cases; over the pixels "
                       f"both pictures draw, three.js median "
                       f"{statistics.median([s['threejs-shared'] for s in both]):.1f} dB, ours nearer in "
                       f"{sum(s['swiftshader-shared'] < s['threejs-shared'] for s in both)} of {len(both)}")
    summary = ".\n".join(summary) + "." if summary else "no case scored."
    if missing:
        summary += f" (rendered without {', '.join(missing)})"
    table = "\n".join(lines)
    print(table)
    print(summary)
    (args.out / "table.md").write_text(table + "\n\n" + summary + "\n")
    print(f"pictures (ours | Babylon.js on llvmpipe | difference): {args.out}/<case>.llvmpipe.png; "
          f"(ours | Babylon.js on SwiftShader | three.js): {args.out}/<case>.threejs.png; table: {args.out}/table.md")
    failed = any(s.get("llvmpipe") is None or s["llvmpipe"] > fc.llvmpipe_mark(case)
                 or s.get("swiftshader-shared") is None or s["swiftshader-shared"] > PASS_DB for case, s, _ in results)
    return 1 if args.strict and failed else 0


def in_a_row(pictures, gap: int = 4):
    """RGBA pictures of one size, each on white, side by side: (H, n W + (n - 1) gap, 3) uint8."""
    import numpy as np
    from fidelity import on_white

    spacer = np.full((pictures[0].shape[0], gap, 3), 255, np.uint8)
    panels = [np.round(on_white(p)).astype(np.uint8) for p in pictures]
    return np.concatenate([part for panel in panels for part in (panel, spacer)][:-1], axis=1)


def captioned(picture, width: int, texts):
    """A row of three pictures (side_by_side's or in_a_row's layout) with a caption above each."""
    from PIL import Image, ImageDraw

    height = 18
    image = Image.new("RGB", (picture.shape[1], picture.shape[0] + height), (255, 255, 255))
    image.paste(Image.fromarray(picture), (0, height))
    draw = ImageDraw.Draw(image)
    step = width + (picture.shape[1] - 3 * width) // 2  # a third and its gap
    for column, text in enumerate(texts):
        draw.text((column * step + 4, 3), text, fill=(0, 0, 0))
    return image


if __name__ == "__main__":
    sys.exit(main())
