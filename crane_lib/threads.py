"""A compiled loop over many independent items, run on several threads side by side.

The batch loops (the dynamic model's regressor, inertia and λmin drivers, the audit screen, the
certified check's boxes) are compiled as plain loops over a range of items with the GIL released
(`numba.njit(nogil=True)`), and `in_threads` splits the items into one contiguous range per
thread. numba's `parallel=True` splits them the same way, but its parallel loops cost far more to
compile, on every fresh checkout and for every new arm's kernels (measured, empty cache: the
certified check's two box loops 36 s against 17 s, the λmin driver with its inertia kernel 9.2 s
against 6.1 s). Each item is computed by the same code either way: the same values, bit for bit.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba


def in_threads(loop, n_items: int, *args, grain: int = 1) -> None:
    """Run the compiled `loop(start, stop, *args)` over the items [0, n_items), split into one
    contiguous range per thread of numba's thread count (`numba.get_num_threads()`), at least
    `grain` items each; `loop` must release the GIL (nogil) and write only its own items."""
    threads = max(1, min(numba.get_num_threads(), n_items // max(1, grain)))
    if threads == 1:
        loop(0, n_items, *args)
        return
    bounds = [n_items * k // threads for k in range(threads + 1)]
    with ThreadPoolExecutor(threads) as pool:
        parts = [pool.submit(loop, bounds[k], bounds[k + 1], *args) for k in range(threads)]
        for part in parts:
            part.result()
