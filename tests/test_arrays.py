"""viewer.model.arrays: its fast paths give numpy's own answers (np.unique)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.model import arrays
from viewer.model.arrays import distinct, merged_rows

ROWS = st.lists(st.lists(st.sampled_from([0.0, -0.0, 1.0, 0.5, -2.25, 1e300, 3.0]), min_size=3, max_size=3),
                min_size=0, max_size=40)


def same_merge(rows: np.ndarray) -> None:
    unique, inverse = merged_rows(rows)
    assert np.array_equal(unique[inverse], rows)  # every row is its merged row (-0.0 == 0.0)
    reference = np.unique(rows, axis=0) if len(rows) else np.zeros((0, rows.shape[1]))
    assert len(unique) == len(reference)  # merged exactly as np.unique merges
    first = [int(np.flatnonzero(inverse == k)[0]) for k in range(len(unique))]
    assert first == sorted(first)  # in the order the rows first appear


@given(ROWS)
@settings(max_examples=150, deadline=None)
def test_merged_rows_merges_as_np_unique(rows):
    same_merge(np.array(rows, dtype=np.float64).reshape(-1, 3))


def test_a_hash_collision_takes_the_exact_path(monkeypatch):
    monkeypatch.setattr(arrays, "FNV_PRIME", np.uint64(0))  # every row hashes to 0
    same_merge(np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [0.0, -0.0], [-0.0, 0.0]]))


def test_rows_with_nan_are_merged_as_np_unique_merges_them():
    rows = np.array([[np.nan, 1.0], [np.nan, 1.0], [2.0, 3.0]])
    unique, inverse = merged_rows(rows)
    assert len(unique) == len(np.unique(rows, axis=0))
    assert np.array_equal(unique[inverse][2], rows[2])


@given(st.lists(st.integers(-5, 5) | st.floats(-1e9, 1e9), max_size=60))
@settings(max_examples=150, deadline=None)
def test_distinct_is_np_unique(values):
    values = np.array(values, dtype=np.float64)
    assert np.array_equal(distinct(values), np.unique(values))
    assert np.array_equal(distinct(values.astype(np.int64)), np.unique(values.astype(np.int64)))
