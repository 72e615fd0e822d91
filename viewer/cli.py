"""The ``boneviewer`` command: wires the layers together; owns no maths.

User mistakes (ViewerError) print one line on stderr and exit 2; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

DEFAULT_PNG = "boneviewer.png"


def _size(text: str):
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 800x600, got {text!r}") from None
    if not (1 <= width <= 16384 and 1 <= height <= 16384):
        raise argparse.ArgumentTypeError(f"{text}: each side must be 1..16384 pixels")
    return width, height


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit 2, like every other user error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="boneviewer",
        description="GPU-skinned skeletal-mesh viewer and pose editor with Babylon.js bone semantics.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--version", action="version", version=f"boneviewer {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    render = commands.add_parser("render", help="render a model to a PNG, headless",
                                 description="Render MODEL (default: the built-in character) to a PNG "
                                             "offscreen, on EGL; no display or GPU needed.")
    render.add_argument("model", nargs="?", help="model file (default: the built-in character)")
    render.add_argument("--out", required=True, type=Path, help="PNG file to write")
    render.add_argument("--size", type=_size, default=(800, 600), help="WIDTHxHEIGHT (default 800x600)")
    render.add_argument("--pose", type=Path, help="pose JSON file to apply before rendering")
    render.add_argument("--cpu-skinning", action="store_true", help="skin vertices in numpy instead of the shader")
    render.add_argument("--bone-texture", action="store_true", help="bone matrices in a texture, not a uniform array")
    render.add_argument("--no-skeleton", action="store_true", help="hide the skeleton overlay")
    render.add_argument("--no-grid", action="store_true", help="hide the ground grid")
    render.add_argument("--yaw", type=float, default=0.0, help="camera yaw in degrees (0: from the front)")
    render.add_argument("--pitch", type=float, default=8.0, help="camera pitch in degrees (positive: from above)")
    return parser


def _version() -> str:
    from . import __version__

    return __version__


def render_command(args) -> int:
    from .errors import ViewerError
    from .loaders import load_model
    from .pose import apply_pose
    from .render.headless import HeadlessRenderer, framed_camera
    from .render.renderer import RenderOptions

    out = args.out
    if out.suffix.lower() != ".png":
        raise ViewerError(f"--out {out}: the output must be a .png file")
    if not out.parent.resolve().is_dir():
        raise ViewerError(f"--out {out}: folder {out.parent} does not exist")
    scene = load_model(args.model)
    if args.pose is not None:
        apply_pose(scene, args.pose)
    options = RenderOptions(show_skeleton=not args.no_skeleton, show_grid=not args.no_grid)
    with HeadlessRenderer(args.size, bone_storage="texture" if args.bone_texture else "auto",
                          cpu_skinning=args.cpu_skinning) as headless:
        pixels = headless.render(scene, framed_camera(scene, yaw=args.yaw, pitch=args.pitch), options)
    write_png(out, pixels)
    print(f"wrote {out} ({args.size[0]}x{args.size[1]})")
    return 0


def write_png(path: Path, pixels) -> None:
    from PIL import Image

    from .errors import ViewerError

    try:
        Image.fromarray(pixels, "RGBA").save(path)
    except OSError as error:
        raise ViewerError(f"cannot write {path}: {error}") from None


def default_command(args) -> int:
    """`boneviewer` alone: the viewer; without a display, a PNG of the built-in character."""
    has_display = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    reason = "no display" if not has_display else "the interactive window is not built yet"
    args.model, args.out, args.size, args.pose = None, Path(DEFAULT_PNG), (800, 600), None
    args.cpu_skinning = args.bone_texture = args.no_skeleton = args.no_grid = False
    args.yaw, args.pitch = 0.0, 8.0
    print(f"boneviewer: {reason}; rendering the built-in character to {Path(DEFAULT_PNG).resolve()}")
    return render_command(args)


def main(argv: list[str] | None = None) -> int:
    from .errors import ViewerError

    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "render":
            return render_command(args)
        return default_command(args)
    except ViewerError as error:
        if args.debug:
            raise
        print(f"boneviewer: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
