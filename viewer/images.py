"""Image files: the textures every reader hands over as stored (PNG or JPEG bytes, decoded by
Pillow when first drawn), and the one place that writes pixels to disk (Pillow, and
imageio-ffmpeg for MP4).

Every file is written whole or not at all: into a temporary file beside it (viewer.files), renamed
into place when complete, so Ctrl+C or a crash leaves no file under the final name and an existing one whole.
GIF and MP4 frames go to the encoder as they come (memory flat in the number of frames).
"""

from __future__ import annotations

import io
import logging
import os
import struct
import threading
import warnings
from pathlib import Path

import numpy as np

from .errors import ViewerError, symlink_fault
from .files import discard as _discard, final_path, open_atomically, place, temporary_path
from .model.material import DeferredImage
from .words import counted

log = logging.getLogger("boneviewer")


class EncodedImage(DeferredImage):
    """An image as a model file stores it (``data``, PNG or JPEG bytes; ``mime``), checked by its
    loader (glTF's GltfFile.image) and decoded once, when its pixels are first asked for:
    ``decode()`` gives (H, W, 4) uint8 RGBA, or None when the pixels do not decode; that is logged then, once, as
    one warning line in the loader's words, and the textures that use it are drawn without it."""

    def __init__(self, path: Path, index: int, data: bytes, mime: str, used_by: str = ""):
        self.path, self.index, self.data, self.mime, self.used_by = path, index, data, mime, used_by
        self._lock = threading.Lock()
        self._decoded = False
        self._pixels: np.ndarray | None = None

    def decode(self) -> np.ndarray | None:
        with self._lock:
            if not self._decoded:
                try:
                    self._pixels = decode_pixels(self.data)
                except Exception as error:  # Pillow's decoders raise many types on corrupt data
                    where = f" ({self.used_by})" if self.used_by else ""
                    log.warning("%s: image %d does not decode as PNG or JPEG (%s: %s)%s; drawn without it", self.path,
                                self.index, type(error).__name__, _short(error, 120), where)
                self._decoded = True
        return self._pixels


def decode_pixels(data: bytes) -> np.ndarray:
    """An encoded PNG or JPEG (checked by GltfFile.image) as (height, width, 4) uint8 RGBA."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        with _opened(data) as opened:
            return _rgba(opened)


def _opened(data: bytes):
    """Pillow's image of PNG or JPEG bytes, opened by that format's plugin alone where the bytes
    start as one (Image.open imports five plugins first: 20-40 ms of a first render), with
    Image.open's limit on pixels; anything else through Image.open, which says what is wrong."""
    from PIL import Image

    if data[:8] == b"\x89PNG\r\n\x1a\n":
        from PIL.PngImagePlugin import PngImageFile as kind
    elif data[:3] == b"\xff\xd8\xff":
        from PIL.JpegImagePlugin import JpegImageFile as kind
    else:
        return Image.open(io.BytesIO(data), formats=("PNG", "JPEG"))
    image = kind(io.BytesIO(data))
    limit = Image.MAX_IMAGE_PIXELS
    if limit and image.width * image.height > 2 * limit:
        image.close()
        raise Image.DecompressionBombError(f"{image.width}x{image.height} pixels, more than {2 * limit}")
    return image


def _rgba(opened) -> np.ndarray:
    """An opened PIL image decoded as (height, width, 4) uint8 RGBA: convert("RGBA")'s pixels.
    An RGB image (most textures) is read in Pillow's own 4-byte layout, whose fourth byte its
    decoders set to 255, with no conversion pass (checked; converted where it is not 255)."""
    if opened.mode == "RGB":
        width, height = opened.size
        pixels = np.frombuffer(opened.tobytes("raw", "RGBX"), np.uint8).reshape(height, width, 4)
        if (pixels.view("<u4") >= 0xFF000000).all():  # every fourth byte 255: one pass over words
            return pixels
    return np.asarray(opened.convert("RGBA"))


def _short(error: BaseException, limit: int) -> str:
    text = str(error)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_output_file(option: str, path: Path, suffix: str) -> None:
    """An output file named ``*suffix`` in an existing, writable folder, checked before any work
    (a window, a render) so a mistake costs nothing."""
    path = Path(path)
    if path.suffix.lower() != suffix:
        what = "the output must be a .png file" if suffix == ".png" else f"the file name must end in {suffix}"
        raise ViewerError(f"{option} {path}: {what}")
    check_output_folder(option, path)


def check_output_folder(option: str, path: Path) -> None:
    """``path`` is not a folder, and the folder it goes in is there and writable."""
    path = Path(path)
    folder = path.parent
    if not folder.is_dir():
        raise ViewerError(f"{option} {path}: folder {folder} {_not_a_folder(folder)}")
    if not os.access(folder, os.W_OK):
        raise ViewerError(f"{option} {path}: folder {folder} is not writable")
    if path.is_dir():
        raise ViewerError(f"{option} {path}: is a folder")


def _not_a_folder(folder: Path) -> str:
    fault = symlink_fault(folder)
    return f"is {fault}" if fault else "is a file" if folder.exists() else "does not exist"


def check_png_path(option: str, path: Path) -> None:
    check_output_file(option, path, ".png")


def write_png(path, pixels) -> None:
    """Write an (H, W, 4) uint8 RGBA array as a PNG, whole or not at all; an OS error becomes
    one ViewerError line."""
    path = Path(path)
    try:
        with open_atomically(path) as handle:
            handle.write(png_bytes(pixels))
    except OSError as error:
        raise ViewerError(f"cannot write {path}: {error.strerror or error}") from None


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_bytes(pixels) -> bytes:
    """An (H, W, 4) uint8 RGBA array as the bytes of a PNG file (8 bits a channel, every row
    filtered by Sub, deflated at zlib's level 6, Pillow's default).

    Written here with zlib rather than by Pillow: importing Pillow and its PNG plugin is 15-20 ms
    of a 0.3 s render (a process's fixed cost is most of what a small model's picture costs), and
    one Sub filter over the whole array in numpy compresses a render as well as Pillow's choice
    per row (within a few per cent) in less time. Pillow still reads every PNG (tests compare)."""
    import zlib

    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    if pixels.ndim != 3 or pixels.shape[2] != 4 or not pixels.shape[0] or not pixels.shape[1]:
        raise ValueError(f"a PNG is written from (H, W, 4) pixels, not {pixels.shape}")
    height, width = pixels.shape[:2]
    rows = pixels.reshape(height, width * 4)
    filtered = np.empty((height, width * 4 + 1), np.uint8)
    filtered[:, 0] = 1  # Sub: each byte less the byte of the pixel to its left (mod 256)
    filtered[:, 1:5] = rows[:, :4]
    np.subtract(rows[:, 4:], rows[:, :-4], out=filtered[:, 5:])
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, no interlace

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return b"".join((PNG_SIGNATURE, chunk(b"IHDR", header), chunk(b"IDAT", zlib.compress(filtered, 6)),
                     chunk(b"IEND", b"")))


# --- sequences: one writer per kind of output, fed frame by frame -----------------------------------
VIDEO_EXTRA = "pip install 'boneviewer[video]'"
GIF_MIN_DELAY = 2  # hundredths of a second: browsers show a delay of 0 or 1 as 10 (a slow GIF)


def gif_delay(fps: float) -> int:
    """The GIF frame delay, in hundredths of a second, nearest to ``fps`` (at most 50 fps)."""
    return max(GIF_MIN_DELAY, int(round(100.0 / fps)))


class PngSequence:
    """frame_00000.png, frame_00001.png, ... in a folder."""

    def __init__(self, folder: Path):
        self.folder, self.count = Path(folder), 0

    def write(self, pixels) -> None:
        write_png(self.folder / f"frame_{self.count:05d}.png", pixels)
        self.count += 1

    def close(self) -> str:
        return f"{counted(self.count, 'frame')} to {self.folder}/frame_00000.png .. frame_{self.count - 1:05d}.png"

    def abort(self) -> None:
        """Each frame is already whole; the ones written stay."""


class AnimationFile:
    """An animated GIF (Pillow) or an MP4 (imageio-ffmpeg, the ``video`` extra), written as the
    frames come, at ``fps`` frames per second, into a temporary file renamed into place by
    ``close()``; ``abort()`` (or an exception in ``write``) removes it.

    ``transparent``: pixels with alpha 0 become the GIF's transparent colour (MP4 has none).
    A GIF's delays are whole hundredths of a second: ``fps_written`` is the rate it plays at.
    """

    def __init__(self, path: Path, fps: float, transparent: bool = False):
        self.path, self.count, self.fps = Path(path), 0, float(fps)
        self.temporary = temporary_path(final_path(self.path))
        suffix = self.path.suffix.lower()
        if suffix == ".gif":
            self.delay = gif_delay(self.fps)
            self.fps_written = 100.0 / self.delay
            self.encoder = _GifStream(self.temporary, self.delay, transparent)
        else:
            if transparent:
                raise ViewerError(f"{self.path}: an MP4 video has no transparency: give --gif, or --out-dir for "
                                  "RGBA PNG frames")
            try:
                import imageio_ffmpeg  # noqa: F401  (the encoder MP4 needs)
            except ImportError:
                raise ViewerError(f"{self.path}: writing MP4 needs imageio-ffmpeg: {VIDEO_EXTRA}") from None
            self.fps_written = self.fps
            self.encoder = _Mp4Stream(self.temporary, self.fps)

    @property
    def rate_note(self) -> str | None:
        """One line when the file plays at another rate than asked (GIF delays), else None."""
        if abs(self.fps_written - self.fps) < 1e-6:
            return None
        return (f"{self.path}: GIF delays are whole hundredths of a second: {self.fps:g} fps written as "
                f"{self.fps_written:.4g} fps ({self.delay}/100 s a frame)")

    def write(self, pixels) -> None:
        try:
            self.encoder.write(np.asarray(pixels))
        except BaseException as error:
            self.abort()
            if isinstance(error, OSError):
                raise ViewerError(f"cannot write {self.path}: {error.strerror or error}") from None
            raise
        self.count += 1

    def close(self) -> str:
        try:
            self.encoder.close()
            place(self.temporary, self.path)
        except BaseException as error:
            self.abort()
            if isinstance(error, OSError):
                raise ViewerError(f"cannot write {self.path}: {error.strerror or error}") from None
            raise
        return f"{counted(self.count, 'frame')} to {self.path}"

    def abort(self) -> None:
        """Stop and leave nothing: no file under the final name (an existing one stays whole).
        The encoder's own failure to close (a full disk failing its last flush again) is not a
        second error: the temporary file goes either way."""
        try:
            self.encoder.abort()
        except OSError:
            pass
        finally:
            _discard(self.temporary)


class _GifStream:
    """An animated GIF written frame by frame: a header without a global palette, then each frame
    with its own palette (Pillow's median cut, as a single-frame GIF would have) and its delay.

    Pillow's own animated writer holds every frame until the end; this holds one.
    """

    def __init__(self, path: Path, delay: int, transparent: bool):
        self.path, self.delay, self.transparent = path, delay, transparent
        self.file = None

    def _start(self, width: int, height: int) -> None:
        self.file = open(self.path, "wb")
        self.size = (width, height)
        # Logical screen: no global colour table; then the NETSCAPE2.0 extension, loop for ever.
        self.file.write(b"GIF89a" + struct.pack("<HHBBB", width, height, 0, 0, 0))
        self.file.write(b"!\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", 0) + b"\x00")

    def write(self, pixels: np.ndarray) -> None:
        from PIL import GifImagePlugin, Image

        height, width = pixels.shape[:2]
        if self.file is None:
            self._start(width, height)
        elif (width, height) != self.size:
            raise ViewerError(f"GIF frames must all be {self.size[0]}x{self.size[1]}, got {width}x{height}")
        rgb = Image.fromarray(np.ascontiguousarray(pixels[..., :3]), "RGB")
        params = {"duration": self.delay * 10, "include_color_table": True}
        if self.transparent:
            # 255 colours for the picture, index 255 for what is transparent; each frame replaces the
            # last (disposal 2: back to the background), or transparent pixels would show the last one.
            frame = rgb.quantize(colors=255)
            indices = np.array(frame, dtype=np.uint8)
            indices[pixels[..., 3] == 0] = 255
            palette = (frame.getpalette() or [])[:255 * 3]
            frame = Image.fromarray(indices, "P")
            frame.putpalette(palette + [0] * (768 - len(palette)))
            params.update(transparency=255, disposal=2)
        else:
            frame = rgb.quantize(colors=256)
        for chunk in GifImagePlugin.getdata(frame, **params):  # extension, descriptor, palette, data
            self.file.write(chunk)
        self.file.flush()  # the frame is on its way to disk: nothing of it stays here

    def close(self) -> None:
        if self.file is None:
            raise ViewerError(f"{self.path}: no frames to write")
        self.file.write(b";")
        self.file.close()

    def abort(self) -> None:
        if self.file is not None:
            self.file.close()


class _Mp4Stream:
    """H.264 through imageio-ffmpeg's writer (a pipe to ffmpeg: one frame in memory at a time)."""

    def __init__(self, path: Path, fps: float):
        import imageio

        try:
            self.writer = imageio.get_writer(path, fps=fps, macro_block_size=1, quality=7)
        except OSError as error:
            raise ViewerError(f"cannot write {path}: {error}") from None

    def write(self, pixels: np.ndarray) -> None:
        self.writer.append_data(np.ascontiguousarray(pixels[..., :3]))

    def close(self) -> None:
        self.writer.close()

    def abort(self) -> None:
        try:
            self.writer.close()
        except Exception:  # already broken: the temporary file goes anyway
            pass
