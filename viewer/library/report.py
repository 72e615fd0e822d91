"""The report's HTML: REPORT/index.html (one row per model, sorted and filtered by a little
plain JavaScript, no network fetches) and REPORT/<model>/index.html (its pictures, GIFs and
findings), from the templates beside this module and the rows of report.json."""

from __future__ import annotations

import json
import string
from html import escape
from pathlib import Path
from urllib.parse import quote

from ..words import counted

TEMPLATES = Path(__file__).parent


def _template(name: str) -> string.Template:
    return string.Template((TEMPLATES / name).read_text())


def _link(*parts: str) -> str:
    return "/".join(quote(part) for part in "/".join(parts).split("/"))


def index_html(rows: list, title: str) -> str:
    done = sum(row["status"] == "ok" for row in rows)
    totals = (f"{counted(len(rows), 'model')}: {done} rendered, {len(rows) - done} failed; "
              f"{counted(sum(row['errors'] for row in rows), 'error')}, "
              f"{counted(sum(row['warnings'] for row in rows), 'warning')} found")
    lines = [_row_html(row) for row in rows]
    return _template("index.html").substitute(title=escape(title), totals=escape(totals), rows="\n".join(lines))


def _row_html(row: dict) -> str:
    name, ok = row["file"], row["status"] == "ok"
    page = _link(name, "index.html")
    thumb = (f'<img class="thumb" src="{_link(name, "thumb.png")}" alt="{escape(name)}">'
             if "thumb.png" in row.get("outputs", []) else "")
    status = "ok" if ok else f'<span class="error">failed: {escape(row.get("error") or "")}</span>'
    cells = [f'<td data-value="{escape(name)}">{thumb}</td>', f'<td><a href="{page}">{escape(name)}</a></td>',
             f'<td data-value="{escape(row["status"])}">{status}</td>']
    for key in ("bones", "vertices"):
        cells.append(f'<td class="num">{row[key]}</td>')
    cells.append(f'<td class="num">{len(row["clips"])}</td>')
    cells.append(f'<td class="num{" error" if row["errors"] else ""}">{row["errors"]}</td>')
    cells.append(f'<td class="num{" warning" if row["warnings"] else ""}">{row["warnings"]}</td>')
    links = [f'<a href="{page}">page</a>']
    if "check.json" in row.get("outputs", []):
        links.append(f'<a href="{_link(name, "check.json")}">check.json</a>')
    if "turntable.gif" in row.get("outputs", []):
        links.append(f'<a href="{_link(name, "turntable.gif")}">turntable</a>')
    cells.append(f'<td>{" ".join(links)}</td>')
    return f'<tr class="{"ok" if ok else "failed"}">{"".join(cells)}</tr>'


def model_html(row: dict, findings: list) -> str:
    name = row["file"]
    depth = name.count("/") + 1
    outputs = row.get("outputs", [])
    pictures = []
    for file, caption in (("thumb.png", "three-quarter view"), ("turntable.gif", "turntable"),
                          ("bone-map.png", "bone map"), ("weight-check.png", "weight check")):
        if file in outputs:
            pictures.append(f'<figure><img src="{quote(file)}" alt="{caption}"><figcaption>{caption}</figcaption>'
                            f'</figure>')
    for clip in row["clips"]:
        gif = clip.get("gif")
        if gif in outputs:
            caption = f"{clip['name']} ({clip['duration']:g} s)"
            pictures.append(f'<figure><img src="{quote(gif)}" alt="{escape(caption)}"><figcaption>{escape(caption)}'
                            f'</figcaption></figure>')
    plots = [plot for plot in row.get("plots", []) if plot["file"] in outputs]
    for plot in plots:
        caption = f"{plot['clip']}: feet and jitter"
        pictures.append(f'<figure class="plot"><img src="{quote(plot["file"])}" alt="{escape(caption)}">'
                        f'<figcaption>{escape(caption)}</figcaption></figure>')
    if row.get("clips") and not plots and row["status"] == "ok":
        from .plots import available

        if not available():
            pictures.append("<p>The motion plots need matplotlib: pip install 'boneviewer[plots]'.</p>")
    facts = (f"{counted(row['bones'], 'bone')}, {counted(row['vertices'], 'vertex', 'vertices')}, "
             f"{counted(len(row['clips']), 'clip')}")
    failure = "" if row["status"] == "ok" else f'<p class="failed">Failed: {escape(row.get("error") or "")}</p>'
    if findings:
        lines = "".join(f'<tr><td class="{escape(f["severity"])}">{escape(f["severity"])}</td>'
                        f'<td><code>{escape(f["code"])}</code></td><td><code>{escape(f["pointer"])}</code></td>'
                        f'<td>{escape(f["message"])}</td></tr>' for f in findings)
        table = f"<table><thead><tr><th>Severity</th><th>Code</th><th>Pointer</th><th>Message</th></tr></thead>" \
                f"<tbody>{lines}</tbody></table>"
    else:
        table = "<p>No findings.</p>"
    return _template("model.html").substitute(name=escape(name), back="../" * depth + "index.html",
                                              facts=escape(facts), failure=failure, pictures="".join(pictures),
                                              findings=table)


def model_findings(folder: Path) -> list:
    try:
        return json.loads((folder / "check.json").read_text()).get("findings", [])
    except (OSError, ValueError, AttributeError):
        return []
