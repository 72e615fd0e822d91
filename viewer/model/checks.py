"""Input validation shared by the model classes: finite numbers of the right shape.

Every number a user hands the model (a pose, a morph weight, a keyframe, a camera setting)
ends up in float32: the GPU's matrices, glTF's accessors. float32 reaches 3.4e38, but the
numbers are multiplied together (a bone's scale by its child's position, a matrix by a
matrix), so a value is accepted only up to MAX_MAGNITUDE: any product of two accepted
values, summed four times over as a matrix product sums them, stays far inside float32.
These functions are the one place that rule lives; each error names the value refused.
"""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError

MAX_MAGNITUDE = 1e18  # (1e18)^2 * 4 = 4e36 < float32's 3.4e38
LIMIT_TEXT = f"{MAX_MAGNITUDE:.0e}".replace("e+", "e")  # "1e18", as error lines say it
# How an error line states the rule: "... contains NaN or infinity or a magnitude above 1e18".
OUT_OF_RANGE = f"NaN or infinity or a magnitude above {LIMIT_TEXT}"


def fits(value) -> bool:
    """Whether every number in ``value`` (a float or an array) is finite and within
    ±MAX_MAGNITUDE: one vectorized comparison (NaN compares False)."""
    return bool((np.abs(value) <= MAX_MAGNITUDE).all())  # the method: no np.all dispatch, a hot path


def first_bad_row(array: np.ndarray) -> int:
    """The index of the first row of a 2-d array that does not fit (call after ``fits`` failed)."""
    return int(np.argmax(~(np.abs(array) <= MAX_MAGNITUDE).all(axis=1)))


def finite_number(value, what: str) -> float:
    """``value`` as a float that fits (finite, within ±MAX_MAGNITUDE), or a ViewerError naming ``what``."""
    if isinstance(value, (bool, np.bool_)):
        raise ViewerError(f"{what}: must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ViewerError(f"{what}: must be a number, got {_shown(value)}") from None
    if not abs(number) <= MAX_MAGNITUDE:
        raise ViewerError(f"{what}: must be a finite number with a magnitude up to {LIMIT_TEXT}, got {_shown(value)}")
    return number


def finite_array(value, shape, what: str) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` whose entries fit, or a ViewerError naming ``what``."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ViewerError(f"{what}: expected numbers of shape {shape}, got {_shown(value)}") from None
    if array.shape != shape:
        if array.size == int(np.prod(shape)) and shape == (4, 4):
            array = array.reshape(shape)  # a flat 16-number list, as Babylon's Matrix.m
        else:
            raise ViewerError(f"{what}: expected shape {shape}, got shape {array.shape}")
    if not fits(array):
        raise ViewerError(f"{what}: contains {OUT_OF_RANGE}: {_shown(array.tolist())}")
    return array


def _shown(value, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_only(array: np.ndarray) -> np.ndarray:
    """A read-only copy: writing into a returned vector must fail loudly, not silently."""
    copy = np.array(array, dtype=np.float64)
    copy.flags.writeable = False
    return copy
