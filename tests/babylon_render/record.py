"""Babylon.js's own picture of a model: the reference the fidelity tests compare boneviewer with.

    python tests/babylon_render/record.py --model M.glb --environment E.hdr --camera CAM.json \\
        --tone-mapping khr-neutral --exposure 1 --size 384 384 --out babylon.png [--rasterizer llvmpipe]

Babylon.js 9.28 (the UMD builds ``babylonjs`` and ``babylonjs-loaders``, installed with
``npm ci`` in this folder) draws in Debian's Chromium, headless, driven by Playwright, with WebGL2
on one of two software rasterisers (``--rasterizer``): ``swiftshader`` (the default, the issue's
harness: ANGLE on SwiftShader, whose vertices snap to a 1/16-pixel grid) or ``llvmpipe`` (ANGLE's
GL backend on EGL, so Mesa's llvmpipe, 1/256 pixel: the sub-pixel grid boneviewer's own headless GL
draws on, so the silhouettes' edge pixels agree too); the page (page.html) and the model's folder are served over loopback. The scene is
the one boneviewer draws: right-handed (``scene.useRightHandedSystem``: the glTF loader adds no
root conversion), the file's rest pose (the loader starts no animation), image-based light only
(``HDRCubeTexture(file, scene, 256)`` as the scene's environment, no lights added, no skybox),
Babylon's image processing with the tone mapping and exposure asked for (contrast 1, no
vignette), a transparent background, and boneviewer's camera: the camera file is read as
``boneviewer render --camera`` reads it (viewer.camera), and Babylon's TargetCamera is placed at
its eye, aimed at its target, with its vertical field of view and its near and far planes.
No antialiasing (boneviewer's headless renderer has none). The PNG is RGBA.

The camera file must place the camera (``distance`` and ``target`` given): a framed camera
depends on the model's bounds as boneviewer computes them; ``framed_camera.py`` writes one.
"""

from __future__ import annotations

import argparse
import base64
import http.server
import shutil
import sys
import threading
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's viewer, not an installed one

TONE_MAPPINGS = ("khr-neutral", "aces", "none")
RASTERIZERS = ("swiftshader", "llvmpipe")
CHROMIUM_ARGS = {  # per rasteriser; the renderer string the page reports must name it (RENDERER_NAMES)
    "swiftshader": ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                    "--ignore-gpu-blocklist", "--enable-webgl"],
    "llvmpipe": ["--no-sandbox", "--use-gl=angle", "--use-angle=gl-egl", "--ignore-gpu-blocklist", "--enable-webgl"],
}
RENDERER_NAMES = {"swiftshader": "SwiftShader", "llvmpipe": "llvmpipe"}
BABYLON_VERSION = "9.28.0"


class Problem(Exception):
    """A one-line reason the picture cannot be made."""


def camera_parameters(camera_file, width: int, height: int) -> dict:
    """Eye, target, vertical fov (radians), near and far, as boneviewer's renderer uses them for
    ``--camera camera_file`` at this size."""
    from viewer.camera import CameraDescription

    description = CameraDescription.read(camera_file)
    if not description.complete:
        raise Problem(f"{camera_file}: give distance and target (a framed camera depends on boneviewer's "
                      "model bounds; framed_camera.py writes a complete one)")
    camera = description.camera(None, width / height)
    projection = camera.projection_matrix(width / height)  # pyrr's row-vector layout
    a, b = float(projection[2, 2]), float(projection[3, 2])  # -(f+n)/(f-n), -2fn/(f-n)
    return {"eye": [float(v) for v in camera.position], "target": [float(v) for v in camera.target],
            "fov": float(np.radians(camera.fov_y)), "near": b / (a - 1.0), "far": b / (a + 1.0)}


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves /page.html, /lib/<package>/... from node_modules (both in the recorder's folder) and
    /files/<n>/... from the folders registered for the pictures; nothing else."""

    routes: dict = {}
    folder: Path = HERE

    def translate_path(self, path):
        path = path.split("?", 1)[0].split("#", 1)[0]
        from urllib.parse import unquote

        parts = [p for p in unquote(path).split("/") if p]
        if ".." in parts:
            return "/nonexistent"
        if parts == ["page.html"]:
            return str(self.folder / "page.html")
        if len(parts) >= 2 and parts[0] == "lib":
            return str(self.folder / "node_modules" / Path(*parts[1:]))
        if len(parts) >= 3 and parts[0] == "files" and parts[1] in self.routes:
            return str(Path(self.routes[parts[1]]) / Path(*parts[2:]))
        return "/nonexistent"

    def log_message(self, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class Recorder:
    """A browser and a loopback server kept for many pictures (``with Recorder() as r: r.picture(...)``).
    Another library's recorder (tests/threejs_render) gives its own folder (page.html, node_modules),
    name, installed file and page options."""

    folder = HERE
    library = "Babylon.js"
    installed_file = "babylonjs/babylon.js"  # under node_modules

    def __init__(self, chromium: str | None = None, rasterizer: str = "swiftshader"):
        if rasterizer not in RASTERIZERS:
            raise Problem(f"rasterizer {rasterizer!r}: expected one of {', '.join(RASTERIZERS)}")
        self.chromium = chromium or shutil.which("chromium") or "/usr/bin/chromium"
        self.rasterizer = rasterizer
        self.routes: dict[str, str] = {}

    def __enter__(self):
        if not (self.folder / "node_modules" / self.installed_file).exists():
            raise Problem(f"{self.library} is not installed: run `npm ci` in {self.folder}")
        if not Path(self.chromium).exists():
            raise Problem("no chromium: apt-get install chromium")
        handler = type("Handler", (_Handler,), {"routes": self.routes, "folder": self.folder})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        from playwright.sync_api import sync_playwright

        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=self.chromium,
                                                        args=CHROMIUM_ARGS[self.rasterizer])
        return self

    def __exit__(self, *exc):
        try:
            self.browser.close()
            self.playwright.stop()
        finally:
            self.server.shutdown()
            self.server.server_close()

    def _url(self, path: Path) -> tuple[str, str]:
        """The URL of ``path``'s folder (served) and its name."""
        folder = str(path.resolve().parent)
        key = next((k for k, v in self.routes.items() if v == folder), None)
        if key is None:
            key = str(len(self.routes))
            self.routes[key] = folder
        return f"http://127.0.0.1:{self.server.server_address[1]}/files/{key}/", path.name

    def page_options(self) -> dict:
        """Options of the page's own, beyond the case's."""
        return {}

    def url(self, path) -> str:
        """The URL the page reads a file at (its folder served over loopback)."""
        from urllib.parse import quote

        root, name = self._url(Path(path))
        return root + quote(name)

    def evaluate(self, script: str, options: dict, what: str, size=(384, 384)):
        """Runs ``script`` (a JavaScript function of one argument, given ``options``) in a fresh page
        with the library loaded, and returns what it returns; Problem with the page's last console
        lines when it throws (``what``: what it was doing, for the message)."""
        page = self.browser.new_page(viewport={"width": max(size[0], 64), "height": max(size[1], 64)})
        messages = []
        page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
        try:
            page.goto(f"http://127.0.0.1:{self.server.server_address[1]}/page.html")
            page.wait_for_function("window.pageReady === true", timeout=60_000)
            try:
                return page.evaluate(script, options)
            except Exception as error:
                tail = "\n".join(messages[-10:])
                raise Problem(f"{self.library} could not {what}: {str(error).splitlines()[0]}\n{tail}") from None
        finally:
            page.close()

    def picture(self, model, environment, camera_file, tone_mapping: str = "khr-neutral", exposure: float = 1.0,
                size=(384, 384), shadows: dict | None = None) -> tuple[np.ndarray, dict]:
        """(H, W, 4) uint8 RGBA, rows top first, and what the page reports (the library's version, the
        WebGL renderer, meshes, materials). ``shadows``: the page's shadow settings (the file's
        directional light casts onto a ground; tests/shadow_cases.py), or None: no shadows."""
        from urllib.parse import quote

        model, environment = Path(model), Path(environment)
        for what, path in (("model", model), ("environment", environment), ("camera", Path(camera_file))):
            if not path.is_file():
                raise Problem(f"{what} {path}: no such file")
        if tone_mapping not in TONE_MAPPINGS:
            raise Problem(f"tone mapping {tone_mapping!r}: expected one of {', '.join(TONE_MAPPINGS)}")
        width, height = size
        options = camera_parameters(camera_file, width, height)
        model_root, model_file = self._url(model)
        environment_root, environment_file = self._url(environment)
        options.update(width=width, height=height, modelRoot=model_root, modelFile=quote(model_file),
                       environmentUrl=environment_root + quote(environment_file), toneMapping=tone_mapping,
                       exposure=float(exposure), **self.page_options())
        if shadows is not None:
            options["shadows"] = shadows
        result = self.evaluate("o => window.renderPicture(o)", options, f"draw {model}", (width, height))
        info = result["info"]
        if RENDERER_NAMES[self.rasterizer] not in str(info.get("renderer")):
            # a Chromium that fell back to another GL would record another rasteriser's pixels
            raise Problem(f"WebGL renderer is {info.get('renderer')!r}, not {RENDERER_NAMES[self.rasterizer]} "
                          f"(--rasterizer {self.rasterizer})")
        pixels = np.frombuffer(base64.b64decode(result["pixels"]), np.uint8).reshape(height, width, 4)
        return pixels[::-1].copy(), info  # readPixels gives rows bottom first


def write_png(path, pixels: np.ndarray) -> None:
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    Image.fromarray(pixels, "RGBA").save(tmp, format="PNG", optimize=True)
    tmp.replace(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, type=Path, help=".glb or .gltf")
    parser.add_argument("--environment", required=True, type=Path, help="equirectangular Radiance .hdr")
    parser.add_argument("--camera", required=True, type=Path, help="boneviewer camera JSON (distance and target given)")
    parser.add_argument("--tone-mapping", default="khr-neutral", choices=TONE_MAPPINGS)
    parser.add_argument("--exposure", type=float, default=1.0)
    parser.add_argument("--size", type=int, nargs=2, default=(384, 384), metavar=("WIDTH", "HEIGHT"))
    parser.add_argument("--rasterizer", default="swiftshader", choices=RASTERIZERS,
                        help="WebGL's rasteriser: SwiftShader (default, the issue's harness) or Mesa llvmpipe "
                             "(ANGLE's GL backend on EGL; boneviewer's sub-pixel grid)")
    parser.add_argument("--out", required=True, type=Path, help="PNG to write (RGBA)")
    args = parser.parse_args(argv)
    try:
        with Recorder(rasterizer=args.rasterizer) as recorder:
            pixels, info = recorder.picture(args.model, args.environment, args.camera, args.tone_mapping,
                                            args.exposure, tuple(args.size))
    except Problem as problem:
        print(f"record.py: {problem}", file=sys.stderr)
        return 2
    write_png(args.out, pixels)
    print(f"wrote {args.out} ({args.size[0]}x{args.size[1]}, Babylon.js {info['babylon']}, {info['renderer']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
