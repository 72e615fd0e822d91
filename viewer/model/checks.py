"""Input validation shared by the model classes: finite numbers of the right shape."""

from __future__ import annotations

import numpy as np

from ..errors import ViewerError


def finite_array(value, shape, what: str) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` with finite entries, or a ViewerError."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ViewerError(f"{what}: expected numbers of shape {shape}, got {value!r}") from None
    if array.shape != shape:
        if array.size == int(np.prod(shape)) and shape == (4, 4):
            array = array.reshape(shape)  # a flat 16-number list, as Babylon's Matrix.m
        else:
            raise ViewerError(f"{what}: expected shape {shape}, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ViewerError(f"{what}: contains NaN or infinity: {array.tolist()}")
    return array


def read_only(array: np.ndarray) -> np.ndarray:
    """A read-only copy: writing into a returned vector must fail loudly, not silently."""
    copy = np.array(array, dtype=np.float64)
    copy.flags.writeable = False
    return copy
