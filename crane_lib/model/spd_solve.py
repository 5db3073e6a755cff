"""The one linear solve of the direct dynamics, M(q) x = b, for every numba loop that needs it
(the twin's plant and CLIE's closed-loop simulator).

M's arm block is symmetric and, for a feasible model, positive definite: a Cholesky
factorization solves it and detects when it is not, which for an identified model means the
simulation cannot go on (CLIE's "not PD") and for the twin's truth cannot happen.
Scratch arrays are passed in, so the step loops allocate nothing.

The three functions are inlined where they are called (numba's inline="always"): CLIE's
simulators, the sweeps' hot loop, run about 3 % faster this way than with LLVM left to inline
them. The twin's plant calls `solve_spd_linked` instead, the same solve compiled once in this
module's numba cache: inlined into the plant's two call sites, numba's copies of its IR made the
twin's loop compile in 22 s instead of 12 s for each arm, and the recording's run time and bytes
are the same either way. Only A's upper triangle is read, the one the generated inertia kernel
writes, so a simulator need not mirror it. When every axis is free (CLIE's simulator always, the
twin's plant mostly) A is factored where it lies at the caller's compile-time size, which the
compiler unrolls: a 7 x 7 solve in about 120 ns against 220 ns through an index of the free axes
(an otherwise idle 2-core machine). Locked axes gather the free block into the scratch first.
Both paths run the same operations in the same order, so they give the same bits
(tests/test_spd_solve.py).
"""

import math

import numba


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def cholesky_factor(a_matrix, n, shift, work):
    """Lower Cholesky factor L of A[:n, :n] - shift*I into work's lower triangle, reading A's
    upper triangle only (the generated inertia kernel's; work may be A itself).

    Returns False when that block is not positive definite (a pivot <= 0 or NaN), i.e. when
    its smallest eigenvalue is at most `shift`."""
    for r in range(n):
        for c in range(r + 1):
            total = a_matrix[c, r]
            if r == c:
                total -= shift
            for k in range(c):
                total -= work[r, k] * work[c, k]
            if r == c:
                if not total > 0.0:  # also catches NaN
                    return False
                work[r, r] = math.sqrt(total)
            else:
                work[r, c] = total / work[c, c]
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def cholesky_substitute(factor, rhs, n, out):
    """out[:n] = (L L^T)^-1 rhs[:n] for the lower factor L = factor[:n, :n] (out may be rhs)."""
    for r in range(n):
        total = rhs[r]
        for k in range(r):
            total -= factor[r, k] * out[k]
        out[r] = total / factor[r, r]
    for r in range(n - 1, -1, -1):
        total = out[r]
        for k in range(r + 1, n):
            total -= factor[k, r] * out[k]
        out[r] = total / factor[r, r]


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def solve_spd(a_matrix, rhs, free, n, work, out, index, y):
    """out[:n] = A^-1 rhs over the axes j < n with free[j] > 0.5 (the others locked: out[j] = 0).

    A is symmetric and only its upper triangle is read. Cholesky of A restricted to the free
    axes; returns False, leaving `out` undefined, when that block is not positive definite (a
    pivot <= 0 or NaN). work (n, n), index (int, >= n) and y (>= n) are scratch."""
    m = 0
    for j in range(n):
        if free[j] > 0.5:
            index[m] = j
            m += 1
    if m == n:  # every axis free: A factored where it lies, at the caller's constant size
        if not cholesky_factor(a_matrix, n, 0.0, work):
            return False
        cholesky_substitute(work, rhs, n, out)
        return True
    for r in range(m):  # the free block's upper triangle and its right-hand side, gathered
        for c in range(r + 1):
            work[c, r] = a_matrix[index[c], index[r]]
        y[r] = rhs[index[r]]
    if not cholesky_factor(work, m, 0.0, work):
        return False
    cholesky_substitute(work, y, m, y)
    for j in range(n):
        out[j] = 0.0
    for r in range(m):
        out[index[r]] = y[r]
    return True


@numba.njit(cache=True, nogil=True, error_model="numpy")
def solve_spd_linked(a_matrix, rhs, free, n, work, out, index, y):
    """solve_spd compiled once here, for callers that should link it rather than copy its IR."""
    return solve_spd(a_matrix, rhs, free, n, work, out, index, y)
