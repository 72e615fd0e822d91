"""The preview page OUT/index.html: every image with its keypoints and bones drawn over it
(coloured by visibility), its part and depth images a toggle away, and the label statistics; from
the template beside this module and the annotations, with no network fetches (it opens from the
file system)."""

from __future__ import annotations

import json
import string
from html import escape
from pathlib import Path

PAGE_IMAGES = 500  # images the page shows at most (the statistics count them all)


def _json_for_script(data) -> str:
    """JSON safe inside a <script> element (no "</script>", no HTML comment openers)."""
    return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e")


def index_html(annotations: dict, statistics: dict, title: str) -> str:
    categories = {c["id"]: {"keypoints": c["keypoints"], "skeleton": c["skeleton"]} for c in annotations["categories"]}
    by_image = {}
    for annotation in annotations["annotations"]:
        by_image.setdefault(annotation["image_id"], []).append(
            {"category": annotation["category_id"], "keypoints": annotation["keypoints"], "bbox": annotation["bbox"]})
    shown = [{"file": image["file_name"], "depth": image.get("depth_file_name"), "parts": image.get("parts_file_name"),
              "width": image["width"], "height": image["height"], "model": image["model"], "clip": image["clip"],
              "time": round(image["time"], 3), "annotations": by_image.get(image["id"], [])}
             for image in annotations["images"][:PAGE_IMAGES]]
    rows = []
    visibility = statistics["visibility"]
    rows.append(f"<tr><th>images</th><td>{statistics['images']}</td></tr>")
    rows.append(f"<tr><th>annotations</th><td>{statistics['annotations']}</td></tr>")
    for state, words in (("2", "visible (v=2)"), ("1", "hidden (v=1)"), ("0", "outside or behind (v=0)")):
        rows.append(f'<tr><th>keypoints {words}</th><td class="v{state}">{visibility[state]}</td></tr>')
    per = []
    for heading, counts in (("model", statistics["models"]), ("clip", statistics["clips"])):
        per.append(f"<tr><th colspan=2>images per {heading}</th></tr>")
        per += [f"<tr><td>{escape(str(name))}</td><td>{count}</td></tr>" for name, count in counts.items()]
    note = (f"showing the first {len(shown)} of {statistics['images']} images"
            if statistics["images"] > len(shown) else f"{len(shown)} images")
    template = string.Template((Path(__file__).parent / "index.html").read_text())
    return template.substitute(title=escape(title), totals="\n".join(rows), per="\n".join(per), note=escape(note),
                               data=_json_for_script({"images": shown, "categories": categories}))
