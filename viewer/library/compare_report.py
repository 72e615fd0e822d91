"""`boneviewer check --compare A B --report OUT.html`: the comparison as one self-contained HTML
page (no network: matplotlib's pictures are in the page as data: URIs, the style inline), per
pair of clips the per-bone rotation and position differences over time for the bones that differ
most, and the table `check --compare` prints."""

from __future__ import annotations

import base64
import io
from html import escape

from ..checks.compare import COMPARE_FPS
from ..words import counted

BONES_PLOTTED = 6  # per panel: the bones with the largest difference, in that order
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#393b79", "#637939")  # matplotlib's ten, and two more: two panels' bones

STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;border-bottom:1px solid #ddd}
td.num{text-align:right;font-variant-numeric:tabular-nums}code{font-size:12px}
figure{margin:0.6em 0}figcaption{color:#555;font-size:12px}"""


def ranked(clip, key: str) -> list:
    """The names of ``clip``'s bones (at most BONES_PLOTTED) with the largest ``key`` ("rotation"
    or "position") maximum, largest first; those under 1 % of the largest are left out (a flat
    line at 0 says nothing), and none when nothing differs."""
    order = sorted(clip.bones, key=lambda b: (-getattr(b, f"{key}_max"), -getattr(b, f"{key}_mean")))
    largest = getattr(order[0], f"{key}_max") if order else 0.0
    return [b.bone for b in order[:BONES_PLOTTED] if largest > 0 and getattr(b, f"{key}_max") >= 0.01 * largest]


def clip_png(clip, common: list, title: str) -> bytes:
    """Two panels: the rotation difference (degrees) and the position difference (over A's
    size) over the clip's time for its bones that differ most (one frame: bars instead)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure  # a Figure of its own: no pyplot state

    column = {name: k for k, name in enumerate(common)}
    shown = list(dict.fromkeys(ranked(clip, "rotation") + ranked(clip, "position")))
    colour = {name: COLOURS[k % len(COLOURS)] for k, name in enumerate(shown)}  # a bone's colour in both panels
    figure = Figure(figsize=(8.5, 6.0), dpi=80, layout="constrained")
    figure.suptitle(title, fontsize=11)
    times = [frame / COMPARE_FPS for frame in range(clip.frames)]
    for axes, key, curves, label in zip(figure.subplots(2, 1), ("rotation", "position"),
                                        (clip.rotation, clip.position),
                                        ("rotation difference (degrees)", "position difference / A's size")):
        names = ranked(clip, key)
        if clip.frames > 1:
            for name in names:
                axes.plot(times, curves[:, column[name]], color=colour[name], linewidth=1.4, label=name)
            axes.set_xlabel("time (s)")
            if names:
                axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="largest first",
                            title_fontsize=7)
        else:  # two poses as loaded: one frame, one bar per bone
            axes.barh(range(len(names)), [curves[0, column[name]] for name in names],
                      color=[colour[name] for name in names])
            axes.set_yticks(range(len(names)), names, fontsize=7)
            axes.invert_yaxis()
            axes.set_xlabel(label, fontsize=9)
        axes.set_ylabel(label if clip.frames > 1 else "", fontsize=9)
        most = "the bone that differs most" if len(names) == 1 else f"the {len(names)} bones that differ most"
        axes.set_title(f"{label}: {most}" if names else f"{label}: no bone differs", fontsize=10)
        top = max((float(curves[:, column[name]].max()) for name in names), default=0.0) * 1.08 or 1.0
        if clip.frames > 1:
            axes.set_ylim(0.0, top)  # room above the largest: a constant difference is not on the frame
        else:
            axes.set_xlim(0.0, top)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def clip_title(clip) -> str:
    if clip.clip_a is None:
        return "the poses as loaded (no clips)"
    names = f"clip {clip.clip_a!r}" if clip.clip_a == clip.clip_b else f"clip {clip.clip_a!r} (A) with {clip.clip_b!r} (B)"
    return f"{names}, 0 to {clip.end:.4g} s, {clip.frames} frames at {COMPARE_FPS:g} frames/s"


def compare_html(result, name_a: str, name_b: str) -> str:
    """The page: a heading naming A and B, then per pair of clips its plot and its table."""
    summary = (f"{counted(len(result.common), 'bone')} in common"
               + (f", {len(result.only_a)} only in A" if result.only_a else "")
               + (f", {len(result.only_b)} only in B" if result.only_b else "")
               + f"; positions relative to A's size, {result.size:.4g}")
    parts = [f"<h1>compare {escape(name_a)} (A) with {escape(name_b)} (B)</h1>", f"<p>{escape(summary)}</p>"]
    for index, clip in enumerate(result.clips):
        title = clip_title(clip)
        png = base64.b64encode(clip_png(clip, result.common, title)).decode("ascii")
        # the two panels' bones (clip_png plots each panel's own ranking): data-bones all of them,
        # rotation's first, and each panel's in its own attribute and in the caption
        by_rotation, by_position = ranked(clip, "rotation"), ranked(clip, "position")
        plotted = ", ".join(dict.fromkeys(by_rotation + by_position))
        said = "; ".join(f"{panel}: {', '.join(names) if names else 'no bone differs'}"
                         for panel, names in (("rotation", by_rotation), ("position", by_position)))
        parts.append(f'<section class="clip" id="clip-{index}"><h2>{escape(title)}</h2>')
        parts.append(f'<figure class="plot"><img src="data:image/png;base64,{png}" '
                     f'alt="{escape(title)}: rotation and position differences over time" '
                     f'data-bones="{escape(plotted)}" data-rotation-bones="{escape(", ".join(by_rotation))}" '
                     f'data-position-bones="{escape(", ".join(by_position))}"><figcaption>The bones whose '
                     f'difference is largest, largest first, in each panel: {escape(said)}</figcaption></figure>')
        rows = "".join(f'<tr><td><code>{escape(b.bone)}</code></td><td class="num">{b.rotation_max:.4f}</td>'
                       f'<td class="num">{b.rotation_mean:.4f}</td><td class="num">{b.position_max:.5f}</td>'
                       f'<td class="num">{b.position_mean:.5f}</td></tr>' for b in clip.bones)
        parts.append('<table class="bones"><thead><tr><th>bone</th><th>max deg</th><th>mean deg</th>'
                     f'<th>max pos</th><th>mean pos</th></tr></thead><tbody>{rows}</tbody></table></section>')
    for side, names in (("A", result.unmatched_a), ("B", result.unmatched_b)):
        if names:
            parts.append(f"<p>Clips only in {side}: {escape(', '.join(map(repr, names)))}</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>compare {escape(name_a)} with {escape(name_b)}</title><style>{STYLE}</style></head>"
            f"<body>{''.join(parts)}</body></html>\n")
