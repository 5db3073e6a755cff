"""The one linear solve of the direct dynamics, M(q) x = b, for every numba loop that needs it
(the twin's plant and CLIE's closed-loop simulator).

M's arm block is symmetric and, for a feasible model, positive definite: a Cholesky
factorization solves it and detects when it is not, which for an identified model means the
simulation cannot go on (CLIE's "not PD") and for the twin's truth cannot happen.
Scratch arrays are passed in, so the step loops allocate nothing.
"""

import math

import numba


@numba.njit(cache=True, nogil=True, error_model="numpy")
def cholesky_factor(a_matrix, index, m, shift, work):
    """Lower Cholesky factor of A[index[:m], index[:m]] - shift*I into work[:m, :m].

    Returns False when that block is not positive definite (a pivot <= 0 or NaN), i.e. when
    its smallest eigenvalue is at most `shift`."""
    for r in range(m):
        for c in range(r + 1):
            total = a_matrix[index[r], index[c]]
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


@numba.njit(cache=True, nogil=True, error_model="numpy")
def solve_spd(a_matrix, rhs, free, n, work, out, index, y):
    """out[:n] = A^-1 rhs over the axes j < n with free[j] > 0.5 (the others locked: out[j] = 0).

    Cholesky of A restricted to the free axes; returns False, leaving `out` undefined, when that
    block is not positive definite (a pivot <= 0 or NaN). work (n, n), index (int, >= n) and
    y (>= n) are scratch."""
    m = 0
    for j in range(n):
        if free[j] > 0.5:
            index[m] = j
            m += 1
    if not cholesky_factor(a_matrix, index, m, 0.0, work):
        return False
    for r in range(m):
        total = rhs[index[r]]
        for k in range(r):
            total -= work[r, k] * y[k]
        y[r] = total / work[r, r]
    for r in range(m - 1, -1, -1):
        total = y[r]
        for k in range(r + 1, m):
            total -= work[k, r] * y[k]
        y[r] = total / work[r, r]
    for j in range(n):
        out[j] = 0.0
    for r in range(m):
        out[index[r]] = y[r]
    return True
