"""model-viewer's render-fidelity metric: how far boneviewer's picture is from a reference's, in dB.

    python tests/fidelity.py OURS.png BABYLON.png      # prints the score, e.g. "-23.41 dB"

As model-viewer's render-fidelity-tools compute it (ImageComparator.analyze): per pixel,
pixelmatch's ``colorDelta`` (the YIQ difference of Kotsarenko and Ramos; both pixels alpha-blended
on white first) over the pixels where the candidate (boneviewer's picture, the first argument)
is not fully transparent; then

    score = 10 * log10( sqrt(mean(delta ** 2)) / 35215 )   dB

35215 is pixelmatch's largest colorDelta between two colours (black against white gives 32857).
colorDelta is already a squared colour distance, and the mean is of its square, as model-viewer
has it. Lower is closer: identical pictures score -inf; model-viewer fails a scenario above
-22 dB, this project above PASS_DB.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

MAX_COLOR_DISTANCE = 35215.0  # pixelmatch's largest colorDelta between two colours
FULL_RED = 0.3  # difference_image: full red from this fraction of the largest YIQ distance
PASS_DB = -20.0  # a case passes at or below this score

# pixelmatch's rgb2y / rgb2i / rgb2q rows and the weights of colorDelta's y, i, q terms
YIQ = np.array([[0.29889531, 0.58662247, 0.11448223],
                [0.59597799, -0.27417610, -0.32180189],
                [0.21147017, -0.52261711, 0.31114694]])
YIQ_WEIGHTS = np.array([0.5053, 0.299, 0.1957])


def read_rgba(path) -> np.ndarray:
    """A PNG as (H, W, 4) uint8 RGBA (an RGB file gets alpha 255)."""
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGBA"))


def on_white(rgba: np.ndarray) -> np.ndarray:
    """pixelmatch's blend: each channel 255 + (c - 255) * alpha, as float64 RGB."""
    rgba = np.asarray(rgba, dtype=np.float64)
    return 255.0 + (rgba[..., :3] - 255.0) * (rgba[..., 3:4] / 255.0)


def color_delta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """pixelmatch's colorDelta for every pixel of two RGBA images: (H, W) float64, 0 to 35215."""
    difference = (on_white(a) - on_white(b)) @ YIQ.T
    return (difference ** 2) @ YIQ_WEIGHTS


def _same_shape(ours: np.ndarray, theirs: np.ndarray) -> None:
    if ours.shape != theirs.shape or ours.ndim != 3 or ours.shape[2] != 4:
        raise ValueError(f"the pictures must be RGBA of one size, got {ours.shape} and {theirs.shape}")


def score_db(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The fidelity score of ``ours`` (boneviewer's RGBA picture) against ``theirs`` in dB; -inf
    when the model's pixels are identical. ValueError when ours draws nothing."""
    _same_shape(ours, theirs)
    model = ours[..., 3] != 0
    if not model.any():
        raise ValueError("boneviewer's picture is fully transparent: there is no model to compare")
    return _decibels(color_delta(ours[model], theirs[model]))


def shared_score_db(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The score over the pixels BOTH pictures draw (neither fully transparent): the shading alone.
    Two rasterisers whose sub-pixel grids differ (SwiftShader's 1/16 pixel, llvmpipe's 1/256) put a
    few silhouette pixels on different sides of an edge; score_db weighs each one the model draws and
    the reference leaves empty as a whole colour-against-white difference. ValueError when the two
    share no pixel."""
    _same_shape(ours, theirs)
    both = (ours[..., 3] != 0) & (theirs[..., 3] != 0)
    if not both.any():
        raise ValueError("the two pictures draw no pixel in common")
    return _decibels(color_delta(ours[both], theirs[both]))


def _decibels(delta: np.ndarray) -> float:
    """model-viewer's score of per-pixel colorDelta values: 10 log10(rms / 35215), -inf for none."""
    rms = float(np.sqrt(np.mean(delta ** 2)))
    return float("-inf") if rms == 0.0 else 10.0 * float(np.log10(rms / MAX_COLOR_DISTANCE))


def difference_image(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """A heat map of the difference over the model's pixels, (H, W, 3) uint8: white where equal,
    full red from a YIQ distance (sqrt of colorDelta) of FULL_RED of the largest on; one fixed scale,
    so pictures of different cases compare. Pixels ours leaves transparent (not scored) are light grey."""
    _same_shape(ours, theirs)
    distance = np.sqrt(color_delta(ours, theirs) / MAX_COLOR_DISTANCE)
    t = np.clip(distance / FULL_RED, 0.0, 1.0)
    out = np.empty(distance.shape + (3,), np.uint8)
    out[..., 0] = 255
    out[..., 1] = out[..., 2] = np.round(255.0 * (1.0 - t)).astype(np.uint8)
    out[ours[..., 3] == 0] = 235
    return out


def side_by_side(ours: np.ndarray, theirs: np.ndarray, gap: int = 4) -> np.ndarray:
    """ours | Babylon's | difference, each on white, as one (H, 3W + 2 gap, 3) uint8 picture."""
    panels = [np.round(on_white(ours)).astype(np.uint8), np.round(on_white(theirs)).astype(np.uint8),
              difference_image(ours, theirs)]
    height = ours.shape[0]
    spacer = np.full((height, gap, 3), 255, np.uint8)
    return np.concatenate([panels[0], spacer, panels[1], spacer, panels[2]], axis=1)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python tests/fidelity.py OURS.png BABYLON.png", file=sys.stderr)
        return 2
    ours, theirs = (read_rgba(Path(p)) for p in argv)
    try:
        score = score_db(ours, theirs)
    except ValueError as error:
        print(f"fidelity.py: {error}", file=sys.stderr)
        return 2
    verdict = "pass" if score <= PASS_DB else "fail"
    print(f"{score:.2f} dB ({verdict} at {PASS_DB:g} dB; {int((ours[..., 3] != 0).sum())} model pixels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
