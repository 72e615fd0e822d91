"""Image files: the one place that writes pixels to disk (Pillow)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ViewerError


def check_output_file(option: str, path: Path, suffix: str) -> None:
    """An output file named ``*suffix`` in an existing, writable folder, checked before any work
    (a window, a render) so a mistake costs nothing."""
    path = Path(path)
    if path.suffix.lower() != suffix:
        what = "the output must be a .png file" if suffix == ".png" else f"the file name must end in {suffix}"
        raise ViewerError(f"{option} {path}: {what}")
    folder = path.parent
    if not folder.resolve().is_dir():
        raise ViewerError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise ViewerError(f"{option} {path}: folder {folder} is not writable")
    if path.is_dir():
        raise ViewerError(f"{option} {path}: is a folder")


def check_png_path(option: str, path: Path) -> None:
    check_output_file(option, path, ".png")


def write_png(path, pixels) -> None:
    """Write an (H, W, 4) uint8 RGBA array as a PNG; an OS error becomes one ViewerError line."""
    from PIL import Image

    try:
        Image.fromarray(pixels, "RGBA").save(Path(path))
    except OSError as error:
        raise ViewerError(f"cannot write {path}: {error}") from None


# --- sequences: one writer per kind of output, fed frame by frame -----------------------------------
VIDEO_EXTRA = "pip install 'boneviewer[video]'"


class PngSequence:
    """frame_00000.png, frame_00001.png, ... in a folder."""

    def __init__(self, folder: Path):
        self.folder, self.count = Path(folder), 0

    def write(self, pixels) -> None:
        write_png(self.folder / f"frame_{self.count:05d}.png", pixels)
        self.count += 1

    def close(self) -> str:
        return f"{self.count} frames to {self.folder}/frame_00000.png .. frame_{self.count - 1:05d}.png"


class AnimationFile:
    """An animated GIF (imageio, Pillow) or an MP4 (imageio-ffmpeg, the ``video`` extra),
    written as the frames come, at ``fps`` frames per second."""

    def __init__(self, path: Path, fps: float):
        import imageio

        self.path, self.count = Path(path), 0
        suffix = self.path.suffix.lower()
        try:
            if suffix == ".gif":
                # GIF stores durations in hundredths of a second; loop 0: for ever.
                self.writer = imageio.get_writer(self.path, mode="I", duration=round(1000.0 / fps, -1), loop=0)
            else:
                try:
                    import imageio_ffmpeg  # noqa: F401  (the encoder MP4 needs)
                except ImportError:
                    raise ViewerError(f"{self.path}: writing MP4 needs imageio-ffmpeg: {VIDEO_EXTRA}") from None
                self.writer = imageio.get_writer(self.path, fps=fps, macro_block_size=1, quality=7)
        except OSError as error:
            raise ViewerError(f"cannot write {self.path}: {error}") from None

    def write(self, pixels) -> None:
        self.writer.append_data(pixels[..., :3])
        self.count += 1

    def close(self) -> str:
        self.writer.close()
        return f"{self.count} frames to {self.path}"
