"""The compiled batch loops run side by side: every item once, and the same values however the
items are split."""

from __future__ import annotations

import threading

import numba
import numpy as np
import pytest

import crane_lib  # noqa: F401  (the reference floating-point kernels, before the model)
from crane_lib.threads import in_threads
from tests.conftest import description_model_beta


@numba.njit(nogil=True)
def _count_rows(start, stop, counts):
    for i in range(start, stop):
        counts[i] += 1


@pytest.mark.parametrize("n_items", [0, 1, 7, 1000, 4097])
@pytest.mark.parametrize("grain", [1, 256, 5000])
def test_every_item_is_run_once_in_contiguous_ranges_of_at_least_the_grain(n_items, grain):
    expected = max(1, min(numba.get_num_threads(), n_items // grain))
    together = threading.Barrier(expected, timeout=10)  # broken unless all ranges run at once
    calls = []

    def loop(start, stop):
        calls.append((start, stop))
        together.wait()

    in_threads(loop, n_items, grain=grain)
    ranges = sorted(calls)
    assert ranges[0][0] == 0 and ranges[-1][1] == n_items
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))  # no gap, no overlap
    assert len(ranges) == expected
    if expected > 1:
        assert min(stop - start for start, stop in ranges) >= grain
    counts = np.zeros(n_items, dtype=np.int64)
    in_threads(_count_rows, n_items, counts, grain=grain)
    assert np.all(counts == 1)


def test_an_error_in_a_range_reaches_the_caller():
    def loop(start, stop):
        if stop == 10:  # the last range only
            raise ValueError(f"range {start}:{stop}")

    with pytest.raises(ValueError, match="range"):
        in_threads(loop, 10, grain=1)


def test_the_model_batches_give_the_same_values_on_one_thread_and_on_all():
    from crane_lib.model.dynamics import model

    dynamics = model("reduced")
    rng = np.random.default_rng(3)
    q = rng.uniform(-np.pi, np.pi, (3000, 8))
    qd, qdd = rng.normal(size=(3000, 8)), rng.normal(size=(3000, 8))
    beta = description_model_beta()
    threads = numba.get_num_threads()
    outputs = []
    for count in (1, threads):
        numba.set_num_threads(count)
        try:
            outputs.append(
                (
                    dynamics.regressor(q, qd, qdd),
                    dynamics.inertia_matrix(q, beta),
                    dynamics.arm_min_eigenvalue(q, beta),
                    dynamics.arm_min_eigenvalue(q, beta, exact_order=False),
                )
            )
        finally:
            numba.set_num_threads(threads)
    for one, every in zip(*outputs):
        assert np.array_equal(one, every)
