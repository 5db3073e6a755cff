"""Numba core of the audit screen (crane_lib.acceptance.screen).

This file is a template: `screen._core()` copies it into the code cache with the marked line
replaced by an import of the generated kernels of the "reduced" 39-parameter set, as the twin
and CLIE do with their cores. Do not import it directly.

Per pose: M(theta; beta) from the generated kernel, then a Cholesky attempt of the 7x7 arm
block minus shift*I. The factor exists exactly when the shifted block is positive definite,
i.e. when lambda_min > shift, and costs a fraction of an eigenvalue decomposition; the screen
uses it only to decide which poses need the exact eigenvalue, which
`DynamicModel.arm_min_eigenvalue` then computes.
"""

import numba
import numpy as np

from crane_lib.model.spd_solve import cholesky_factor
from crane_lib.threads import in_threads

# replaced by the import of the generated kernels (model.dynamics.bind_template)
regressor_kernel = inertia_kernel = inertia_upper_kernel = net_torque_kernel = None  # @@KERNELS@@

N_ARM = 7
N_AX = 8
CHUNK = 1024  # fewer poses than twice this are screened in the calling thread


@numba.njit(nogil=True, cache=True)
def _screen_rows(start, stop, C, S, b, shift, below):
    # the generated kernel writes the same entries at every call, so zeroing once suffices
    m = np.zeros((N_AX, N_AX))
    work = np.zeros((N_ARM, N_ARM))
    for i in range(start, stop):
        inertia_upper_kernel(C[i], S[i], b, m)  # the factor reads the upper triangle
        below[i] = not cholesky_factor(m, N_ARM, shift, work)


def screen_batch(C, S, b, shift, below):
    """below[i] = lambda_min(pose i) <= shift, decided by whether the shifted Cholesky factor
    exists."""
    in_threads(_screen_rows, C.shape[0], C, S, b, shift, below, grain=CHUNK)
