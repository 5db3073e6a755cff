"""Numba core of the screened audit (acceptance/screened.py). A template: `screened._core()` binds
it to the generated kernels of the "reduced" set, as the twin's and CLIE's cores are bound. Do not
import it directly.

For every pose, M(θ; β) is built by the generated inertia kernel and the 7x7 arm block is tested
with a Cholesky factorization of M - s I: when it succeeds, λmin(M) > s and nothing more is
computed (the pose's entry stays +inf); when it fails, λmin is computed exactly (LAPACK through
numpy.linalg.eigvalsh, as the audit's own kernel does). Building M dominates the cost, so the
screen is several times cheaper than an eigenvalue per pose.
"""

import math

import numba
import numpy as np

regressor_kernel = inertia_kernel = None  # @@KERNELS@@ (replaced by the import of the generated kernels)

N_ARM = 7
N_AX = 8


@numba.njit(cache=True)
def _cholesky_above(a, shift):
    """True when a[:7, :7] - shift I is positive definite (a is overwritten by the factor)."""
    for j in range(N_ARM):
        d = a[j, j] - shift
        for k in range(j):
            d -= a[j, k] * a[j, k]
        if not d > 0.0:
            return False
        d = math.sqrt(d)
        a[j, j] = d
        for i in range(j + 1, N_ARM):
            t = a[i, j]
            for k in range(j):
                t -= a[i, k] * a[j, k]
            a[i, j] = t / d
    return True


@numba.njit(parallel=True, cache=True)
def screened_lambda_min(C, S, b, shift, LAM):
    """LAM[i] = λmin of the arm block at pose i where it is at most `shift`, else +inf."""
    for i in numba.prange(C.shape[0]):
        m = np.zeros((N_AX, N_AX))
        inertia_kernel(C[i], S[i], b, m)
        a = np.empty((N_ARM, N_ARM))
        for r in range(N_ARM):
            for c in range(N_ARM):
                a[r, c] = m[r, c]
        if _cholesky_above(a, shift):
            LAM[i] = np.inf
        else:
            LAM[i] = np.linalg.eigvalsh(m[:N_ARM, :N_ARM])[0]
