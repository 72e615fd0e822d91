"""The batch report's motion plots, drawn from check.json's data (the motion checks' figures and
findings; nothing is measured here): per clip, each foot's height and speed over the frames with
the frames of foot-skating and ground-penetration findings shaded, and each joint's jitter.
matplotlib draws them (Agg, to PNG bytes); without it there are no plots, and the page says so.
"""

from __future__ import annotations

import io
import re

PLOT_CODES = {"foot-skating": ("#d62728", "foot skating"), "ground-penetration": ("#9467bd", "below the ground")}
FRAMES = re.compile(r"frames? (\d+)(?:-(\d+))?$")
JOINTS_SHOWN = 12  # the joints with the most jitter


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot_name(index: int) -> str:
    return f"motion-{index}.png"


def motion_plots(check: dict) -> dict:
    """{file name: PNG bytes}, one per clip of ``check`` (check.json's object: "findings" and
    "motion"); {} without matplotlib or motion figures."""
    motion = check.get("motion") or []
    if not motion or not available():
        return {}
    return {plot_name(i): _clip_png(clip, _shaded(check.get("findings", []), clip["clip"]))
            for i, clip in enumerate(motion)}


def _shaded(findings: list, clip: str) -> list:
    """(code, first frame, last frame) of the findings on ``clip`` that the plots shade."""
    spans = []
    for f in findings:
        if f["code"] not in PLOT_CODES or not f["pointer"].startswith(clip + "/"):
            continue
        match = FRAMES.search(f["pointer"])
        if match:
            first = int(match.group(1))
            spans.append((f["code"], first, int(match.group(2) or first)))
    return spans


def _clip_png(clip: dict, spans: list) -> bytes:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure  # a Figure of its own: no pyplot state, safe in workers

    figure = Figure(figsize=(7.0, 6.6), dpi=80, layout="constrained")
    height_axes, speed_axes, jitter_axes = figure.subplots(3, 1)
    figure.suptitle(f"{clip['clip']}: {clip['frames']} frames at {clip['fps']:.4g} frames/s", fontsize=11)
    feet = clip.get("feet") or []
    thresholds = clip.get("thresholds") or {}
    for foot in feet:
        height_axes.plot(range(len(foot["height"])), foot["height"], label=foot["bone"], linewidth=1.2)
        speed_axes.plot(range(len(foot["speed"])), foot["speed"], label=foot["bone"], linewidth=1.2)
    if clip.get("lowest"):
        height_axes.plot(range(len(clip["lowest"])), clip["lowest"], color="0.45", linewidth=0.8, linestyle="--",
                         label="mesh's lowest point")
    if "contact_height" in thresholds:
        height_axes.axhline(thresholds["contact_height"], color="0.6", linewidth=0.8, linestyle=":")
    if "contact_speed" in thresholds and feet:
        speed_axes.axhline(thresholds["contact_speed"], color="0.6", linewidth=0.8, linestyle=":")
    shown = set()
    for code, first, last in spans:
        colour, label = PLOT_CODES[code]
        for axes in (height_axes, speed_axes):
            axes.axvspan(first - 0.5, last + 0.5, color=colour, alpha=0.18, linewidth=0,
                         label=label if code not in shown and axes is height_axes else None)
        shown.add(code)
    height_axes.set_ylabel("height above ground")
    speed_axes.set_ylabel("speed along ground /s")
    speed_axes.set_xlabel("frame")
    ratio = clip.get("foot_skate_ratio")
    height_axes.set_title(f"feet (foot skate ratio {ratio:.3f})" if ratio is not None else
                          "no feet found (--feet names them)", fontsize=10)
    if feet or clip.get("lowest"):
        height_axes.legend(fontsize=7, loc="upper right")
    jitter = sorted((clip.get("jitter") or {}).items(), key=lambda item: -item[1])[:JOINTS_SHOWN]
    if jitter:
        names, values = zip(*jitter)
        jitter_axes.barh(range(len(names)), values, color="#1f77b4")
        jitter_axes.set_yticks(range(len(names)), names, fontsize=7)
        jitter_axes.invert_yaxis()
    jitter_axes.set_xlabel("jitter: mean third difference x fps^3 (units/s^3)")
    jitter_axes.set_title(f"jitter, the {len(jitter)} joints with the most", fontsize=10)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()
