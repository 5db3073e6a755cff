"""The direct dynamics' linear solve: M x = b by Cholesky over the free axes, both paths (every
axis free: A factored where it lies; locked axes: the free block gathered first) against numpy,
against each other bit for bit, the twin's linked solve against the inlined one bit for bit, and
the refusal of a matrix that is not positive definite."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.model.spd_solve import cholesky_factor, solve_spd, solve_spd_linked

N = 7  # the CRANE-X7's arm block; the arrays are 8 wide as the simulators' are (the hand)


def _spd(rng, n=8, smallest=0.05):
    """A random symmetric matrix with eigenvalues in [smallest, 3 + smallest]."""
    basis, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (basis * (smallest + 3.0 * rng.random(n))) @ basis.T


def _solve(a, rhs, free, n=N):
    """solve_spd with fresh scratch: (ok, out)."""
    out = np.full(a.shape[0], np.nan)
    scratch = np.zeros((a.shape[0], a.shape[0])), np.zeros(a.shape[0], dtype=np.int64)
    ok = solve_spd(a, rhs, free, n, scratch[0], out, scratch[1], np.zeros(a.shape[0]))
    return ok, out


@pytest.mark.parametrize("locked", [(), (2,), (0, 6), (1, 3, 4)])
def test_solve_matches_numpy_over_the_free_axes(locked, rng):
    """x[free] = A[free, free]^-1 b[free] to rounding, x = 0 on locked axes, beyond n untouched."""
    for _ in range(20):
        a, rhs = _spd(rng), rng.standard_normal(8)
        free = np.ones(8)
        free[list(locked)] = 0.0
        ok, out = _solve(a, rhs, free)
        assert ok
        keep = np.flatnonzero(free[:N] > 0.5)
        expected = np.zeros(N)
        expected[keep] = np.linalg.solve(a[np.ix_(keep, keep)], rhs[keep])
        np.testing.assert_allclose(out[:N], expected, rtol=1e-12, atol=1e-12)
        assert np.isnan(out[N])


def test_the_locked_path_gives_the_bits_of_the_free_one(rng):
    """Locking axes gives, bit for bit, the all-free solve of the gathered free block: the two
    paths run the same operations in the same order."""
    for _ in range(50):
        a, rhs = _spd(rng), rng.standard_normal(8)
        free = (rng.random(8) > 0.3).astype(float)
        free[0] = 1.0
        keep = np.flatnonzero(free[:N] > 0.5)
        if keep.size == N:
            continue
        ok, out = _solve(a, rhs, free)
        block = np.zeros((8, 8))
        block[: keep.size, : keep.size] = a[np.ix_(keep, keep)]
        gathered = np.zeros(8)
        gathered[: keep.size] = rhs[keep]
        ok_block, out_block = _solve(block, gathered, np.ones(8), n=keep.size)
        assert ok and ok_block
        assert out[keep].tobytes() == out_block[: keep.size].tobytes()


def test_the_linked_solve_is_the_inlined_one_bit_for_bit(rng):
    """solve_spd_linked (the twin's, compiled once) returns what solve_spd returns, to the bit,
    on both paths and on a refused matrix."""
    for trial in range(40):
        a, rhs = _spd(rng), rng.standard_normal(8)
        free = np.ones(8) if trial % 2 else (rng.random(8) > 0.3).astype(float)
        if trial % 10 == 9:
            a[3, 3] = -1.0
        results = []
        for solve in (solve_spd, solve_spd_linked):
            out = np.full(8, np.nan)
            work, index, y = np.zeros((8, 8)), np.zeros(8, dtype=np.int64), np.zeros(8)
            results.append((solve(a, rhs, free, N, work, out, index, y), out))
        (ok, out), (ok_linked, out_linked) = results
        assert ok == ok_linked
        if ok:
            assert out.tobytes() == out_linked.tobytes()


@pytest.mark.parametrize("locked", [(), (5,)])
def test_a_matrix_that_is_not_positive_definite_is_refused(locked, rng):
    """A negative or NaN diagonal entry (a PD matrix has neither) of the free block returns
    False; the same entry on a locked axis is not read."""
    free = np.ones(8)
    free[list(locked)] = 0.0
    for axis in (2, 5):
        for bad in (-1.0, np.nan):
            a = _spd(rng)
            a[axis, axis] = bad
            assert _solve(a, rng.standard_normal(8), free)[0] == (axis in locked)


def test_the_shifted_factor_exists_exactly_above_the_smallest_eigenvalue(rng):
    """cholesky_factor(A, n, shift) succeeds iff lambda_min(A[:n, :n]) > shift (the screen's
    test); it reads A's upper triangle only, and factoring in place gives the factor of a
    separate scratch bit for bit."""
    for _ in range(20):
        a = _spd(rng)
        smallest = np.linalg.eigvalsh(a[:N, :N])[0]
        work = np.zeros((8, 8))
        assert cholesky_factor(a, N, smallest * (1 - 1e-9), work)
        assert not cholesky_factor(a, N, smallest * (1 + 1e-9), np.zeros((8, 8)))
        assert cholesky_factor(a, N, 0.0, work)
        in_place = np.triu(a) + np.tril(np.full((8, 8), np.nan), -1)  # the lower is not read
        assert cholesky_factor(in_place, N, 0.0, in_place)
        lower = np.tril_indices(N)
        assert in_place[lower].tobytes() == work[lower].tobytes()
        factor = np.tril(work[:N, :N])
        np.testing.assert_allclose(factor @ factor.T, a[:N, :N], rtol=1e-12, atol=1e-12)
