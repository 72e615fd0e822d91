"""Array operations the readers and the model share, where numpy's own call is slow for them."""

from __future__ import annotations

import numpy as np


def distinct(values) -> np.ndarray:
    """The sorted distinct values of ``values`` (flattened), as np.unique(values) gives them for
    finite numbers. numpy 2's plain np.unique imports numpy.ma on its first call (20 ms of a
    process's first render); this is a sort and a comparison."""
    values = np.sort(np.asarray(values).reshape(-1))
    keep = np.empty(len(values), dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


FNV_PRIME = np.uint64(0x100000001B3)


def merged_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct rows of the float array ``rows``, in the order they first appear; each row's
    index into them). Rows equal in value are one (-0.0 and 0.0 too), as np.unique(axis=0) has
    them. Each row is hashed to 64 bits and the hashes sorted (5-10x faster than np.unique's sort
    of whole rows); every row is then compared with the first of its hash, and a collision (or a
    NaN) takes np.unique's exact path instead."""
    rows = np.ascontiguousarray(rows, dtype=np.float64) + 0.0  # -0.0 + 0.0 is 0.0: equal values, equal bits
    hashed = np.zeros(len(rows), dtype=np.uint64)
    for column in rows.view(np.uint64).T:
        hashed = (hashed ^ column) * FNV_PRIME  # FNV-1a over the row's 64-bit words, wrapping
    _, first, inverse = np.unique(hashed, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not (rows[first][inverse] == rows).all():
        _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rows[first[order]], rank[inverse]
