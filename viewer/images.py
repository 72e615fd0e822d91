"""Image files: the one place that writes pixels to disk (Pillow)."""

from __future__ import annotations

from pathlib import Path

from .errors import ViewerError


def write_png(path, pixels) -> None:
    """Write an (H, W, 4) uint8 RGBA array as a PNG; an OS error becomes one ViewerError line."""
    from PIL import Image

    try:
        Image.fromarray(pixels, "RGBA").save(Path(path))
    except OSError as error:
        raise ViewerError(f"cannot write {path}: {error}") from None
