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


def part_colour_tables() -> tuple[str, str, str]:
    """The red, green and blue tableValues of the SVG filter that shows a part image's indices
    (grey levels 0..255) as distinct colours: 0 black, then hues spread by the golden ratio."""
    import colorsys

    rows = [(0.0, 0.0, 0.0)] + [colorsys.hsv_to_rgb((k * 0.618033988749895) % 1.0, 0.55 + 0.45 * ((k * 0.37) % 1.0),
                                                    0.7 + 0.3 * ((k * 0.71) % 1.0)) for k in range(1, 256)]
    return tuple(" ".join(f"{row[channel]:.3f}" for row in rows) for channel in range(3))


def depth_brightness(image: dict, annotations: list, depth_scale: float) -> float:
    """A CSS brightness that shows an image's 16-bit depth (which a browser shows by its top 8
    bits, dark for a near character) in mid greys: from its joints' mean depth."""
    depths = [z for annotation in annotations for z in annotation.get("keypoints_3d", [])[2::3] if z > 0]
    level = (sum(depths) / len(depths) if depths else 0.0) * depth_scale / 65535.0
    return round(min(max(0.6 / level, 1.0), 200.0), 3) if level > 0 else 4.0


def index_html(annotations: dict, statistics: dict, title: str) -> str:
    categories = {c["id"]: {"keypoints": c["keypoints"], "skeleton": c["skeleton"]} for c in annotations["categories"]}
    by_image = {}
    for annotation in annotations["annotations"]:
        by_image.setdefault(annotation["image_id"], []).append(
            {"category": annotation["category_id"], "keypoints": annotation["keypoints"], "bbox": annotation["bbox"]})
    keypoints_3d = {}
    for annotation in annotations["annotations"]:
        keypoints_3d.setdefault(annotation["image_id"], []).append(annotation)
    depth_scale = annotations["info"]["depth_scale"]
    shown = [{"file": image["file_name"], "depth": image.get("depth_file_name"), "parts": image.get("parts_file_name"),
              "width": image["width"], "height": image["height"], "model": image["model"], "clip": image["clip"],
              "time": round(image["time"], 3), "annotations": by_image.get(image["id"], []),
              "brightness": depth_brightness(image, keypoints_3d.get(image["id"], []), depth_scale)}
             for image in annotations["images"][:PAGE_IMAGES]]
    rows = []
    visibility = statistics["visibility"]
    rows.append(f"<tr><th>images</th><td>{statistics['images']}</td></tr>")
    rows.append(f"<tr><th>annotations</th><td>{statistics['annotations']}</td></tr>")
    rows.append(f"<tr><th>images drawn again (the first draw showed too little)</th>"
                f"<td>{statistics['redrawn']}</td></tr>")
    for state, words in (("2", "visible (v=2)"), ("1", "hidden (v=1)"), ("0", "outside or behind (v=0)")):
        rows.append(f'<tr><th>keypoints {words}</th><td class="v{state}">{visibility[state]}</td></tr>')
    per = []
    for heading, counts in (("model", statistics["models"]), ("clip", statistics["clips"])):
        per.append(f"<tr><th colspan=2>images per {heading}</th></tr>")
        per += [f"<tr><td>{escape(str(name))}</td><td>{count}</td></tr>" for name, count in counts.items()]
    note = (f"showing the first {len(shown)} of {statistics['images']} images"
            if statistics["images"] > len(shown) else f"{len(shown)} images")
    template = string.Template((Path(__file__).parent / "index.html").read_text())
    red, green, blue = part_colour_tables()
    return template.substitute(title=escape(title), totals="\n".join(rows), per="\n".join(per), note=escape(note),
                               red=red, green=green, blue=blue,
                               data=_json_for_script({"images": shown, "categories": categories}))
