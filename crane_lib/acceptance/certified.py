"""Certified feasibility: positive definiteness of M(theta) over a whole continuous box.

Beyond the paper (its future work). The audit of `audit.py` checks lambda_min > 0 at finitely
many poses; this module either proves M(theta) - margin*I > 0 at EVERY theta of a box (by
default the audit domain Theta), or returns a concrete pose where lambda_min < margin, or
says "undecided" and hands back the boxes it could not resolve within its budget.

Method (branch and bound over theta2..theta7; M does not depend on theta1):

1. M as a trigonometric polynomial. Every entry of the arm block is a polynomial in the
   cos/sin of theta2..theta7 of degree at most 2 in each angle (a link's inertia enters as
   R I R^T). Sampling the generated kernel on a 7^6 grid of angles 2*pi*m/7 and taking the
   FFT gives its coefficients exactly up to rounding (7 points resolve degree 3); the
   third harmonics, identically zero in exact arithmetic, are checked to be at rounding
   level, and every coefficient dropped is charged to the allowance below. The result M~ is
   rewritten in the real basis (1, cos x, sin x, cos 2x, sin 2x) of each angle (5^6
   coefficients per entry). Entry (r, c) (0-based, r <= c) depends only on theta_{r+2..7}:
   the serial-chain structure, checked on the coefficients.
2. The bound on one box B = c +- h (default, `method="bernstein"`; every h_i <= 50 deg, wider
   boxes are split first). With t_i = tan(d_i / 2), d = theta - c, each basis function times
   (1 + t_i^2)^2 is a polynomial of degree 4 in t_i, so
        P(t) = prod_i (1 + t_i^2)^2 (M~(theta) - s I),   s = margin + 7 * allowance,
   is a matrix polynomial of degree 4 in each t_i on the box |t_i| <= tan(h_i / 2), and
   P = sum_beta B_beta b_beta(t) in the tensor Bernstein basis (5^6 coefficient matrices
   B_beta, basis functions b_beta >= 0 summing to 1). If every B_beta is positive
   semidefinite, P(t) is a convex combination of them and M~(theta) >= s I on the whole box.
   This is exact in the cross terms and in the first order (the corner coefficients are the
   values at the corners) and over-estimates only the curvature, so it certifies boxes some
   ten times wider per joint than a Taylor bound. The 15,625 matrices are tested by one
   nested reverse Cholesky factorization: by the serial-chain structure the trailing block of
   B_beta (rows >= r) is a positive multiple (the Bernstein coefficients of the weights of the
   angles before r) of a matrix that depends only on beta_r..beta_6, so its factor is
   computed once and shared, and each level adds one Schur complement pivot. A box fails at
   the first pivot that is not positive and is bisected on its widest joint.
   `method="taylor"` keeps the earlier bound (Taylor expansion at c in the frame D = L^-1,
   A(c) = M(c) - margin*I = L L^T: linear part exact at the 64 vertices, Hessian terms by
   norms, third-order remainder from global bounds of the third derivatives); it is sound but
   needs boxes about 10 deg wide and cannot decide the whole of Theta.
3. A box whose centre has lambda_min(M(c)) < margin ends the search: that pose is
   re-evaluated with the generated kernel and LAPACK, as the audit evaluates it (independent
   of the Fourier form), refined by a bounded local minimisation, and returned as the witness.

What is proved, with what tolerance (Bernstein bound): for every certified box,
lambda_min(M(theta)) >= margin at every theta of the closed box (theta1 free), with these
charges made explicitly rather than assumed away: (a) |M - M~| entrywise, bounded by the
dropped coefficients plus 10 * 7^6 times the largest third-harmonic coefficient, and the
rounding of the real-basis conversion (64 u sum|terms|), enter as 7x their sum in s (the
reported `tolerance`, typically 1e-11 kg·m^2); (b) the rounding of the Bernstein coefficients,
bounded a priori by 1e3 u times the same computation done on absolute values with entrywise
bounds of the transformation matrices (valid for every centre and half-width <= 50 deg);
(c) the rounding of the Cholesky factorization, 1e3 (n + 3) n u times the largest diagonal
(Demmel's backward error, many times over). (b) and (c) are subtracted from the diagonal of
every B_beta before it is factorized, divided by the smallest weight coefficient so that
the shift is at least their size in every row. Each box's half-widths are enlarged by
1e-12 relative plus 1e-13 rad before the bound, which covers the rounding of the bisected
centres, so the certified boxes cover the domain. The one assumption left is that of
step 1: that the kernel's M and the extracted M~ differ by no more than the charged
allowance (the aliasing noise is measured, not proved). The Taylor bound charges its
floating-point effects as documented at `_bound_boxes` (an a priori rounding bound tau_fp
scaled by || |D| ||^2, and 1e3 * 7 * u times the size of the scaled matrices).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numba
import numpy as np
from scipy.optimize import minimize

from crane_lib.acceptance.audit import audit_domain, audit_grid_counts, check_box, grid_poses
from crane_lib.errors import InputError
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import N_LINKS
from crane_lib.paths import RESULTS_DIR
from crane_lib.threads import in_threads

N_ANGLES = N_LINKS - 1  # theta2..theta7
SAMPLES_PER_ANGLE = 7  # resolves trigonometric degree 3; M has degree 2
MAX_DEGREE = 2
UNIT_ROUNDOFF = np.finfo(float).eps / 2
BOXES_PER_THREAD = 8  # fewer Taylor boxes than twice this are bounded in the calling thread
CERTIFIED, VIOLATED, BELOW_MARGIN, UNDECIDED = "certified", "violated", "below_margin", "undecided"


# ----------------------------------------------------------------------------- the polynomial


@dataclass(frozen=True)
class TrigInertia:
    """Arm block of M(theta2..theta7) = sum over terms of Re(coef * exp(i k.theta)), half-space k
    with the factor 2 included."""

    freqs: np.ndarray  # (T, 6) int64, components in -2..2
    entry_ptr: np.ndarray  # (29,) CSR pointers over the 28 upper-triangle entries
    term_index: np.ndarray  # (nnz,) term of each coefficient
    coefs: np.ndarray  # (nnz,) complex128
    third_bound: (
        np.ndarray
    )  # (6, 6, 6, 7, 7): sup over all theta of |d3 M_kl / dtheta_i dtheta_j dtheta_m|
    # kg·m^2, allowance for rounding and extraction in one evaluation of A and its derivatives
    tau_fp: float
    extraction_noise: float  # largest third-harmonic coefficient (zero in exact arithmetic)
    dropped: float  # sum of |coefficients| below the keep threshold
    extraction: float = (
        0.0  # kg·m^2, bound of sup |M - M~| per entry: dropped coefficients plus the aliasing noise
    )


UPPER = [(k, l) for k in range(N_LINKS) for l in range(k, N_LINKS)]


def trig_inertia(beta, model: DynamicModel | None = None) -> TrigInertia:
    """Fourier coefficients of the arm inertia matrix for the base parameters `beta`."""
    model = shared_model("reduced") if model is None else model
    beta = np.ascontiguousarray(beta, dtype=float)
    return _trig_inertia(model, beta.tobytes(), len(beta))


# one model is certified on several boxes (Theta and a box around its worst pose): its
# coefficients, the FFT of M on the whole angle grid, are computed once per process
@lru_cache(maxsize=4)
def _trig_inertia(model: DynamicModel, beta_bytes: bytes, n_beta: int) -> TrigInertia:
    beta = np.frombuffer(beta_bytes, dtype=float, count=n_beta)
    n = SAMPLES_PER_ANGLE
    angles = 2 * np.pi * np.arange(n) / n
    grid = np.stack(np.meshgrid(*([angles] * N_ANGLES), indexing="ij"), axis=-1).reshape(
        -1, N_ANGLES
    )
    poses = np.hstack([np.zeros((len(grid), 1)), grid])
    mass = model.inertia_matrix(poses, beta)
    # M is symmetric: only the upper triangle is transformed, each entry's samples contiguous
    # (the same one-dimensional transforms as on the whole matrix, a sixth of the time)
    rows, cols = np.array(UPPER).T
    upper = np.ascontiguousarray(mass[:, rows, cols].T).reshape((len(UPPER),) + (n,) * N_ANGLES)
    coef = np.fft.fftn(upper, axes=tuple(range(1, N_ANGLES + 1))).reshape(len(UPPER), -1).T
    coef /= n**N_ANGLES
    freq = np.rint(np.fft.fftfreq(n, 1.0 / n)).astype(np.int64)
    k = np.stack(np.meshgrid(*([freq] * N_ANGLES), indexing="ij"), axis=-1).reshape(-1, N_ANGLES)
    high = np.abs(k).max(axis=1) > MAX_DEGREE
    scale = float(np.abs(coef).max())
    noise = float(np.abs(coef[high]).max())
    if noise > 1e-9 * scale:
        raise InputError(
            "inertia matrix",
            f"harmonics of degree {MAX_DEGREE + 1} of size {noise:.3g}",
            f"a trigonometric polynomial of degree <= {MAX_DEGREE} per angle",
        )
    # half space: first nonzero component positive; k and -k carry conjugate coefficients
    nonzero = k != 0
    first = np.where(nonzero.any(axis=1), k[np.arange(len(k)), nonzero.argmax(axis=1)], 0)
    keep_k = (~high) & (first >= 0)
    factor = np.where(first > 0, 2.0, 1.0)
    k_half, coef_half, factor = k[keep_k], coef[keep_k], factor[keep_k]
    threshold = 1e-15 * scale
    ptr, index, values = [0], [], []
    dropped = 0.0
    used = np.zeros(len(k_half), dtype=bool)
    mean = np.all(k_half == 0, axis=1)
    for e in range(len(UPPER)):
        entry = coef_half[:, e] * factor
        entry[mean] = entry[mean].real  # the mean is real
        big = np.abs(entry) > threshold
        dropped = max(dropped, float(np.abs(entry[~big]).sum()))
        index.extend(np.flatnonzero(big).tolist())
        values.extend(entry[big].tolist())
        used |= big
        ptr.append(len(index))
    # renumber terms to the used ones
    remap = -np.ones(len(k_half), dtype=np.int64)
    remap[used] = np.arange(used.sum())
    term_index = remap[np.array(index, dtype=np.int64)]
    coefs = np.array(values, dtype=np.complex128)
    freqs = k_half[used].astype(np.int64)
    third = np.zeros((N_ANGLES, N_ANGLES, N_ANGLES, N_LINKS, N_LINKS))
    abs_sum = 0.0
    max_terms = 0
    for e, (r, c) in enumerate(UPPER):
        sl = slice(ptr[e], ptr[e + 1])
        kk = np.abs(freqs[term_index[sl]]).astype(float)
        mag = np.abs(coefs[sl])
        third[:, :, :, r, c] = third[:, :, :, c, r] = np.einsum("t,ti,tj,tm->ijm", mag, kk, kk, kk)
        # value, 6 first and 21 second derivatives at most |k_i k_j| <= 4 times |coef| each
        abs_sum = max(abs_sum, float(np.sum(mag * (1.0 + kk.sum(axis=1) + kk.sum(axis=1) ** 2))))
        max_terms = max(max_terms, sl.stop - sl.start)
    n_coefficients = n**N_ANGLES
    tau = (
        100.0 * (max_terms + 10) * UNIT_ROUNDOFF * abs_sum * (1.0 + np.pi) ** 2
        + dropped
        + 10.0 * n_coefficients * noise
    )
    extraction = dropped + 10.0 * n_coefficients * noise
    return TrigInertia(
        freqs,
        np.array(ptr, dtype=np.int64),
        term_index,
        coefs,
        third,
        float(tau),
        noise,
        dropped,
        float(extraction),
    )


@numba.njit(cache=True)
def _evaluate(theta, freqs, entry_ptr, term_index, coefs, value, grad, hess):
    """M(theta) (7x7), dM/dtheta_i (6,7,7) and d2M/dtheta_i dtheta_j (6,6,7,7); theta are joints
    2..7."""
    n_terms = freqs.shape[0]
    phase = np.empty((N_ANGLES, 5), dtype=np.complex128)
    for j in range(N_ANGLES):
        for m in range(-2, 3):
            phase[j, m + 2] = complex(np.cos(m * theta[j]), np.sin(m * theta[j]))
    term = np.empty(n_terms, dtype=np.complex128)
    for t in range(n_terms):
        p = complex(1.0, 0.0)
        for j in range(N_ANGLES):
            p *= phase[j, freqs[t, j] + 2]
        term[t] = p
    value[:, :] = 0.0
    grad[:, :, :] = 0.0
    hess[:, :, :, :] = 0.0
    e = 0
    for r in range(N_LINKS):
        for c in range(r, N_LINKS):
            acc = 0.0
            for q in range(entry_ptr[e], entry_ptr[e + 1]):
                t = term_index[q]
                v = coefs[q] * term[t]
                acc += v.real
                for i in range(N_ANGLES):
                    ki = freqs[t, i]
                    if ki != 0:
                        grad[i, r, c] -= ki * v.imag
                        for j in range(i, N_ANGLES):
                            kj = freqs[t, j]
                            if kj != 0:
                                hess[i, j, r, c] -= ki * kj * v.real
            value[r, c] = acc
            value[c, r] = acc
            for i in range(N_ANGLES):
                grad[i, c, r] = grad[i, r, c]
                for j in range(i, N_ANGLES):
                    hess[i, j, c, r] = hess[i, j, r, c]
                    hess[j, i, r, c] = hess[i, j, r, c]
                    hess[j, i, c, r] = hess[i, j, r, c]
            e += 1


@numba.njit(cache=True)
def _congruence(d, a):
    out = d @ a @ d.T
    return 0.5 * (out + out.T)


@numba.njit(cache=True)
def _definite_after_shift(a, shift):
    """True only if a - shift*I is positive definite: floating-point Cholesky of a - (shift +
    slack)*I
    completes, the slack covering its rounding (|dA| <= gamma_{n+1} |L||L^T|, Demmel) many times
    over."""
    n = a.shape[0]
    biggest = 0.0
    for j in range(n):
        biggest = max(biggest, abs(a[j, j]))
    total = shift + 1e3 * (n + 1) * n * 1.1102230246251565e-16 * (biggest + abs(shift))
    low = np.empty((n, n))
    for j in range(n):
        pivot = a[j, j] - total
        for p in range(j):
            pivot -= low[j, p] * low[j, p]
        if not pivot > 0.0:
            return False
        pivot = np.sqrt(pivot)
        low[j, j] = pivot
        for i in range(j + 1, n):
            x = a[i, j]
            for p in range(j):
                x -= low[i, p] * low[j, p]
            low[i, j] = x / pivot
    return True


@numba.njit(cache=True)
def _copy_into(out, a):
    """out[:, :] = a, element by element: a slice assignment from an array compiles numba's
    shape-mismatch message, about 4 s of this module's first compile."""
    for r in range(a.shape[0]):
        for c in range(a.shape[1]):
            out[r, c] = a[r, c]


@numba.njit(cache=True)
def _spectral_norm_sym(a):
    w = np.linalg.eigvalsh(a)
    return max(abs(w[0]), abs(w[-1]))


@numba.njit(nogil=True, cache=True)
def _bound_box_rows(
    start,
    stop,
    centres,
    halfs,
    margin,
    freqs,
    entry_ptr,
    term_index,
    coefs,
    third,
    tau_fp,
    use_vertices,
    lower,
    centre_lambda,
    certified_lambda,
    split,
):
    """Per box: certified lower bound `lower` (scaled; > 0 means certified), lambda_min(M(centre)),
    the certified lower bound of lambda_min(M) on the box when certified, and the joint to split."""
    u = 1.1102230246251565e-16
    n_vertices = 1 << N_ANGLES
    for b in range(start, stop):
        c = centres[b]
        h = halfs[b]
        m0 = np.empty((N_LINKS, N_LINKS))
        g = np.empty((N_ANGLES, N_LINKS, N_LINKS))
        hs = np.empty((N_ANGLES, N_ANGLES, N_LINKS, N_LINKS))
        _evaluate(c, freqs, entry_ptr, term_index, coefs, m0, g, hs)
        lam_c = np.linalg.eigvalsh(m0)[0]
        centre_lambda[b] = lam_c
        certified_lambda[b] = -np.inf
        split[b] = int(np.argmax(h))
        if lam_c - margin <= 0.0:
            lower[b] = -np.inf
            continue
        a0 = m0.copy()
        for k in range(N_LINKS):
            a0[k, k] -= margin
        lam_a0 = np.linalg.eigvalsh(a0)[0]
        d = np.linalg.inv(
            np.linalg.cholesky(a0)
        )  # any nonsingular D: congruence keeps definiteness
        d_abs = np.abs(d)
        s0 = _congruence(d, a0)
        lam_s0 = np.linalg.eigvalsh(s0)[0]
        # first order: D G_i D^T
        s = np.empty((N_ANGLES, N_LINKS, N_LINKS))
        norms = np.empty(N_ANGLES)
        first_order = 0.0
        for i in range(N_ANGLES):
            _copy_into(s[i], _congruence(d, g[i]))
            norms[i] = _spectral_norm_sym(s[i])
            first_order += h[i] * norms[i]
        # second order at the centre, exactly: || 1/2 sum_ij d_i d_j D H_ij D^T || <= 1/2 sum_ij h_i
        # h_j ||D H_ij D^T||
        quadratic = 0.0
        weight = h * norms
        for i in range(N_ANGLES):
            for j in range(i, N_ANGLES):
                nij = _spectral_norm_sym(_congruence(d, hs[i, j]))
                pair = (0.5 if i == j else 1.0) * h[i] * h[j] * nij
                quadratic += pair
                weight[i] += 0.5 * pair
                weight[j] += 0.5 * pair
        # third-order Lagrange remainder, entrywise from the global bound on third derivatives
        r3 = np.zeros((N_LINKS, N_LINKS))
        share = np.zeros(N_ANGLES)
        for i in range(N_ANGLES):
            for j in range(N_ANGLES):
                for m in range(N_ANGLES):
                    term = (h[i] * h[j] * h[m] / 6.0) * third[i, j, m]
                    r3 += term
                    share[i] += term.sum()
        cubic = min(
            np.linalg.eigvalsh(_congruence(d_abs, r3))[-1],
            np.linalg.eigvalsh(r3)[-1] / (lam_a0 * (1.0 - 1e3 * N_LINKS * u)),
        )
        if share.sum() > 0.0:
            weight += cubic * share / share.sum()
        d_norm2 = np.linalg.eigvalsh(_congruence(d_abs, np.eye(N_LINKS)))[-1]
        fp = d_norm2 * tau_fp + 1e3 * N_LINKS * u * (
            abs(lam_s0) + first_order + quadratic + cubic + 1.0
        )
        split[b] = int(np.argmax(weight))
        rest = quadratic + cubic + fp
        bound = lam_s0 - first_order - rest
        if bound <= 0.0 and use_vertices and lam_s0 - rest > 0.0:
            # the linear part's lambda_min is concave in the offset, so its minimum is at one of the
            # 64 vertices: the box is certified if S0 + sum_i +-h_i S_i - rest*I is definite at all
            # of them
            every = True
            mat = np.empty((N_LINKS, N_LINKS))
            for v in range(n_vertices):
                _copy_into(mat, s0)
                for i in range(N_ANGLES):
                    if (v >> i) & 1:
                        mat += h[i] * s[i]
                    else:
                        mat -= h[i] * s[i]
                if not _definite_after_shift(mat, rest):
                    every = False
                    break
            if every:
                bound = 0.0  # certified, with no further room claimed
                lower[b] = np.finfo(np.float64).tiny
                certified_lambda[b] = margin
                continue
        lower[b] = bound
        if bound > 0.0:
            certified_lambda[b] = (
                margin + bound * lam_a0 * (1.0 - 1e-6) - tau_fp
            )  # A >= bound * D^-1 D^-T ~ bound * A0


# ----------------------------------------------------------------------------- the Bernstein bound

N_BASIS = 2 * MAX_DEGREE + 1  # 1, cos, sin, cos 2x, sin 2x per angle
N_COEF = N_BASIS**N_ANGLES
N_UPPER = len(UPPER)
UPPER_ROW = np.array([r for r, _ in UPPER], dtype=np.int64)
UPPER_COL = np.array([c for _, c in UPPER], dtype=np.int64)
ENTRY = np.full((N_LINKS, N_LINKS), -1, dtype=np.int64)
for _e, (_r, _c) in enumerate(UPPER):
    ENTRY[_r, _c] = ENTRY[_c, _r] = _e
BERNSTEIN_MAX_HALF = np.deg2rad(
    50.0
)  # boxes wider than 100 deg on some joint are split without a bound
# (1 + t^2)^2 times the local basis 1, cos d, sin d, cos 2d, sin 2d with t = tan(d/2), in powers
# t^0..t^4
_HALF_ANGLE = np.array(
    [[1, 0, 2, 0, 1], [1, 0, 0, 0, -1], [0, 2, 0, 2, 0], [1, 0, -6, 0, 1], [0, 4, 0, -4, 0]],
    dtype=float,
)


def _monomial_to_bernstein() -> np.ndarray:
    """E[p, k]: the degree-4 Bernstein coefficients of s^p on [-1, 1] (exact small rationals)."""
    from math import comb

    out = np.zeros((N_BASIS, N_BASIS))
    deg = N_BASIS - 1
    for p in range(N_BASIS):
        for i in range(p + 1):  # s = 2x - 1, x^i has coefficients C(k, i) / C(deg, i)
            a = comb(p, i) * 2**i * (-1) ** (p - i)
            for k in range(i, N_BASIS):
                out[p, k] += a * comb(k, i) / comb(deg, i)
    return out


_BERNSTEIN = _monomial_to_bernstein()


@dataclass
class BernsteinForm:
    """M~(theta) - shift*I in the real basis (1, cos x, sin x, cos 2x, sin 2x) of each of
    theta2..theta7.

    Entry e = (r, c) (r <= c, 0-based rows of the arm block) depends only on theta_{r+2}..theta7
    (the serial chain: joint r+1 and those before it do not move the links that entry sees),
    so it is stored over angles r..5 only, each with 1, 3 or 5 basis functions (the rest are
    exactly zero), flattened with the first of them slowest.
    """

    row_data: (
        np.ndarray
    )  # per row r, entries (r, r..6) over angles r..5 (5 basis functions each), entry innermost
    row_offset: np.ndarray  # (8,) start of each row in `row_data`
    shift: float  # kg·m^2 subtracted from the diagonal: margin + 7 * (extraction + conversion)
    fp_entry: (
        float  # a priori bound of the rounding error of any Bernstein coefficient (box independent)
    )
    diag_bound: (
        np.ndarray
    )  # (7,) max |coefficient of a diagonal entry's Bernstein form| bound, times the weights


@numba.njit(cache=True)
def _real_coefficients(freqs, entry_ptr, term_index, coefs, out, abs_out):
    """out[e, alpha] += the real-basis expansion of Re(coef * exp(i k.theta)); abs_out the same with
    |.|."""
    for e in range(entry_ptr.shape[0] - 1):
        for q in range(entry_ptr[e], entry_ptr[e + 1]):
            k = freqs[term_index[q]]
            z = coefs[q]
            nz = np.empty(N_ANGLES, dtype=np.int64)
            m = 0
            for j in range(N_ANGLES):
                if k[j] != 0:
                    nz[m] = j
                    m += 1
            for mask in range(1 << m):
                index = 0
                sign = 1.0
                n_sin = 0
                for j in range(N_ANGLES):
                    index *= N_BASIS
                for bit in range(m):
                    j = nz[bit]
                    a = abs(k[j])
                    stride = N_BASIS ** (N_ANGLES - 1 - j)
                    if (mask >> bit) & 1:
                        index += 2 * a * stride
                        sign *= 1.0 if k[j] > 0 else -1.0
                        n_sin += 1
                    else:
                        index += (2 * a - 1) * stride
                # Re(z * i^n_sin)
                r = n_sin % 4
                if r == 0:
                    v = z.real
                elif r == 1:
                    v = -z.imag
                elif r == 2:
                    v = -z.real
                else:
                    v = z.imag
                out[e, index] += sign * v
                abs_out[e, index] += abs(v)


def bernstein_form(poly: TrigInertia, margin: float) -> BernsteinForm:
    """The real-basis coefficients of M~ - (margin + 7 * allowance) I, compacted per entry."""
    real = np.zeros((N_UPPER, N_COEF))
    absolute = np.zeros((N_UPPER, N_COEF))
    _real_coefficients(poly.freqs, poly.entry_ptr, poly.term_index, poly.coefs, real, absolute)
    # the conversion adds at most 32 terms per coefficient: rounding <= 64 u sum|terms| per
    # coefficient,
    # and a function with coefficients bounded so is bounded by their sum
    conversion = 64.0 * UNIT_ROUNDOFF * float(absolute.sum(axis=1).max())
    allowance = poly.extraction + conversion  # entrywise sup |M - M~|, plus the conversion
    shift = float(margin) + N_LINKS * allowance  # a symmetric E with |E_kl| <= a has ||E||_2 <= 7a
    for k in range(N_LINKS):
        real[ENTRY[k, k], 0] -= shift
    tensor = real.reshape((N_UPPER,) + (N_BASIS,) * N_ANGLES)
    for e, (r, c) in enumerate(UPPER):
        # the nested factorization relies on the serial-chain structure: entry (r, c) is constant in
        # the
        # angles before r (only their constant basis function carries a nonzero coefficient)
        outside = tensor[e].reshape((N_BASIS**r, -1))[1:]
        if np.any(outside != 0.0):
            raise InputError(
                "inertia matrix",
                f"entry {(r + 1, c + 1)} depends on a joint before {r + 2}",
                "the serial-chain structure",
            )
    # a priori rounding bound: every Bernstein coefficient is sum_alpha C_alpha prod_j W_j[beta_j,
    # alpha_j];
    # |W_j| <= WBAR entrywise for every centre and every half-width up to BERNSTEIN_MAX_HALF
    wbar = _weight_bound()
    bound = np.abs(tensor)
    for j in range(N_ANGLES):
        bound = np.moveaxis(np.tensordot(bound, wbar, axes=([1 + j], [1])), -1, 1 + j)
    bound = bound.reshape(N_UPPER, -1)
    fp_entry = 1e3 * UNIT_ROUNDOFF * float(bound.max())
    diag_bound = np.array([bound[ENTRY[k, k]].max() for k in range(N_LINKS)])
    rows, row_offset = [], [0]
    for r in range(N_LINKS):  # row r: entries (r, r..6) over angles r..5, the entry index innermost
        block = np.stack([tensor[ENTRY[r, c]][(0,) * r] for c in range(r, N_LINKS)], axis=-1)
        rows.append(block.ravel())
        row_offset.append(row_offset[-1] + block.size)
    return BernsteinForm(
        np.concatenate(rows), np.array(row_offset, dtype=np.int64), shift, fp_entry, diag_bound
    )


def _weight_bound() -> np.ndarray:
    """Entrywise bound of |W(c, h)| over all c and all h <= BERNSTEIN_MAX_HALF (rotations have
    entries <= 1)."""
    pattern = np.zeros((N_BASIS, N_BASIS))
    pattern[0, 0] = 1.0
    pattern[1:3, 1:3] = pattern[3:5, 3:5] = 1.0
    tau = np.tan(0.5 * BERNSTEIN_MAX_HALF) * (1 + 1e-6)
    return (
        pattern @ np.abs(_HALF_ANGLE) @ np.diag(tau ** np.arange(N_BASIS)) @ np.abs(_BERNSTEIN)
    ).T


@numba.njit(cache=True)
def _local_weights(c, h, out):
    """out[beta, a]: Bernstein coefficient beta (over t = tan(d/2) in [-tau, tau]) of (1 + t^2)^2
    phi_a(c + d)."""
    tau = np.tan(0.5 * h)
    rot = np.zeros((N_BASIS, N_BASIS))
    rot[0, 0] = 1.0
    for k in range(1, MAX_DEGREE + 1):
        ck = np.cos(k * c)
        sk = np.sin(k * c)
        a = 2 * k - 1
        rot[a, a] = ck
        rot[a, a + 1] = -sk
        rot[a + 1, a] = sk
        rot[a + 1, a + 1] = ck
    powers = np.zeros((N_BASIS, N_BASIS))
    p = 1.0
    for i in range(N_BASIS):
        powers[i, i] = p
        p *= tau
    _copy_into(out, (rot @ _HALF_ANGLE @ powers @ _BERNSTEIN).T)


@numba.njit(cache=True)
def _row_bernstein(src, r, weights, buf_a, buf_b, out):
    """Bernstein coefficients of row r's entries (r, r..6) over angles r..5, entry index innermost,
    into out."""
    m = N_LINKS - r
    n = src.shape[0]
    for t in range(n):
        buf_a[t] = src[t]
    for j in range(r, N_ANGLES):
        before = N_BASIS ** (j - r)
        after = N_BASIS ** (N_ANGLES - 1 - j) * m
        for t in range(n):
            buf_b[t] = 0.0
        for a in range(before):
            for b in range(N_BASIS):
                yb = (a * N_BASIS + b) * after
                for k in range(N_BASIS):
                    w = weights[j, b, k]
                    xb = (a * N_BASIS + k) * after
                    for t in range(after):
                        buf_b[yb + t] += w * buf_a[xb + t]
        for t in range(n):
            buf_a[t] = buf_b[t]
    for t in range(n):
        out[t] = buf_a[t]


@numba.njit(cache=True)
def _bernstein_box(
    c, h, row_data, row_offset, fp_entry, diag_bound, weights, buf_a, buf_b, coef, fac_a, fac_b, z
):
    """True only if every Bernstein coefficient matrix of (prod_j (1 + t_j^2)^2)(M~ - shift I) on
    the box,
    less its rounding allowance, is positive definite (nested reverse Cholesky, see `certify`)."""
    u = 1.1102230246251565e-16
    for j in range(N_ANGLES):
        _local_weights(c[j], h[j] * (1.0 + 1e-12) + 1e-13, weights[j])
    w_min = 1.0  # smallest product of weights of the angles before a row
    w_max = 1.0
    for j in range(N_ANGLES):
        lo = np.inf
        hi = 0.0
        for b in range(N_BASIS):
            lo = min(lo, weights[j, b, 0])
            hi = max(hi, weights[j, b, 0])
        if not lo > 0.0:
            return False
        w_min *= min(lo, 1.0)
        w_max *= max(hi, 1.0)
    # the matrices factorized have diagonal <= max_r diag_bound (which includes the weights)
    biggest = 0.0
    for r in range(N_LINKS):
        biggest = max(biggest, diag_bound[r])
    n = N_LINKS
    sigma = (n * fp_entry + 1e3 * (n + 3) * n * u * biggest) / w_min
    for r in range(N_LINKS):
        _row_bernstein(
            row_data[row_offset[r] : row_offset[r + 1]],
            r,
            weights,
            buf_a,
            buf_b,
            coef[row_offset[r] : row_offset[r + 1]],
        )
        m = N_LINKS - r
        for t in range(0, row_offset[r + 1] - row_offset[r], m):
            coef[row_offset[r] + t] -= sigma
    # level 6: the constant M77 entry
    x = coef[row_offset[6]]
    if not x > 0.0:
        return False
    fac_a[0] = np.sqrt(
        x
    )  # factors of level r+1 in fac_a: count 5^(5-r), each (6-r)^2 row-major upper triangular
    for r in range(N_LINKS - 2, -1, -1):
        m_prev = N_LINKS - 1 - r  # size of the level r+1 factor
        m_new = m_prev + 1
        count = N_BASIS ** (N_ANGLES - r)
        inner = N_BASIS ** (N_ANGLES - 1 - r)
        for g in range(count):
            beta_r = g // inner
            gp = g - beta_r * inner
            w = weights[r, beta_r, 0]
            base = gp * m_prev * m_prev
            # solve F z = g (F upper triangular) by back substitution
            row = row_offset[r] + g * m_new
            for i in range(m_prev - 1, -1, -1):
                acc = coef[row + 1 + i]
                for k in range(i + 1, m_prev):
                    acc -= fac_a[base + i * m_prev + k] * z[k]
                z[i] = acc / fac_a[base + i * m_prev + i]
            s = 0.0
            for i in range(m_prev):
                s += z[i] * z[i]
            s = coef[row] - s / w
            if not s > 0.0:
                return False
            if r > 0:
                out = g * m_new * m_new
                sw = np.sqrt(w)
                fac_b[out] = np.sqrt(s)
                for k in range(m_prev):
                    fac_b[out + 1 + k] = z[k] / sw
                    fac_b[out + (1 + k) * m_new] = 0.0
                    for l in range(m_prev):
                        fac_b[out + (1 + k) * m_new + 1 + l] = sw * fac_a[base + k * m_prev + l]
        if r > 0:
            for t in range(count * m_new * m_new):
                fac_a[t] = fac_b[t]
    return True


@numba.njit(nogil=True, cache=True)
def _bernstein_box_rows(
    start, stop, centres, halfs, row_data, row_offset, fp_entry, diag_bound, certified
):
    for b in range(start, stop):
        weights = np.empty((N_ANGLES, N_BASIS, N_BASIS))
        buf_a = np.empty(N_COEF * N_LINKS)
        buf_b = np.empty(N_COEF * N_LINKS)
        coef = np.empty(row_offset[-1])
        fac_a = np.empty(N_COEF * 8)
        fac_b = np.empty(N_COEF * 8)
        z = np.empty(N_LINKS)
        certified[b] = _bernstein_box(
            centres[b],
            halfs[b],
            row_data,
            row_offset,
            fp_entry,
            diag_bound,
            weights,
            buf_a,
            buf_b,
            coef,
            fac_a,
            fac_b,
            z,
        )


def _bound_boxes(centres, *args):
    """Per box (row of `centres`), the Taylor bound of `_bound_box_rows`, boxes side by side."""
    in_threads(_bound_box_rows, centres.shape[0], centres, *args, grain=BOXES_PER_THREAD)


def _bernstein_boxes(centres, *args):
    """Per box (row of `centres`), whether `_bernstein_box` certifies it, boxes side by side."""
    in_threads(_bernstein_box_rows, centres.shape[0], centres, *args, grain=1)


def bernstein_matrices(form: BernsteinForm, centre, half) -> np.ndarray:
    """(5^6, 7, 7) Bernstein coefficient matrices B_beta of prod_i (1 + t_i^2)^2 (M~ - shift I) on
    the box
    centre +- half (6 angles), beta_0 (theta2) slowest, without any rounding allowance: for
    checking."""
    centre, half = np.asarray(centre, dtype=float), np.asarray(half, dtype=float)
    weights = np.empty((N_ANGLES, N_BASIS, N_BASIS))
    for j in range(N_ANGLES):
        _local_weights(centre[j], half[j], weights[j])
    out = np.zeros((N_COEF, N_LINKS, N_LINKS))
    buf_a, buf_b = np.empty(N_COEF * N_LINKS), np.empty(N_COEF * N_LINKS)
    for r in range(N_LINKS):
        coef = np.empty(form.row_offset[r + 1] - form.row_offset[r])
        _row_bernstein(
            form.row_data[form.row_offset[r] : form.row_offset[r + 1]],
            r,
            weights,
            buf_a,
            buf_b,
            coef,
        )
        coef = coef.reshape((N_BASIS,) * (N_ANGLES - r) + (N_LINKS - r,))
        scale = np.ones((N_BASIS,) * r)  # the weights of the angles before row r
        for j in range(r):
            scale = np.multiply.outer(scale, weights[j, :, 0]) if j else weights[j, :, 0].copy()
        block = np.multiply.outer(scale, coef) if r else coef
        block = block.reshape(N_COEF, N_LINKS - r)
        out[:, r, r:] = block
        out[:, r:, r] = block
    return out


# ----------------------------------------------------------------------------- the search


@dataclass
class CertificationResult:
    """What the certified check over a continuous box found (beyond the paper).

    status                "certified" (M(theta) >= margin I proved at every theta of the box),
                          "violated" (a pose with lambda_min < 0), "below_margin" (a pose with
                          0 <= lambda_min < margin) or "undecided" (budget spent, boxes left open)
    margin                kg·m^2, what was to be proved
    box                   (7, 2) radians, lower and upper bound per joint (theta1 irrelevant)
    certified_lambda_min  proved lower bound of lambda_min over the certified boxes, kg·m^2; None
                          unless certified
    observed_lambda_min   smallest lambda_min(M) seen at any box centre, kg·m^2
    witness_pose          (7,) radians, a pose below the margin (re-evaluated as in the audit); None
                          when there is none
    witness_lambda        lambda_min at the witness, kg·m^2
    boxes_processed       boxes bounded in the branch and bound
    boxes_certified       boxes proved
    unresolved_lower, unresolved_upper  (u, 7) bounds of the boxes left open when undecided
    tolerance             kg·m^2, the charged |M - M~| allowance (7x, Bernstein) or tau_fp (Taylor)
    elapsed_s             run time (left out of comparisons)
    """

    status: str
    margin: float
    box: np.ndarray
    certified_lambda_min: float | None
    observed_lambda_min: float
    witness_pose: np.ndarray | None
    witness_lambda: float | None
    boxes_processed: int
    boxes_certified: int
    unresolved_lower: np.ndarray
    unresolved_upper: np.ndarray
    tolerance: float
    elapsed_s: float = field(compare=False, default=0.0)

    def summary(self) -> str:
        """One line: the check's status, its bound or witness, and what it cost."""
        if self.status == CERTIFIED:
            head = (
                f"certified: lambda_min(M(theta)) >= {self.certified_lambda_min:.4g} kg·m^2 "
                f"(margin {self.margin:g}) at every theta in the box"
            )
        elif self.status in (VIOLATED, BELOW_MARGIN):
            where = np.round(np.rad2deg(self.witness_pose), 3).tolist()
            kind = (
                "violated"
                if self.status == VIOLATED
                else f"not certified (below the margin {self.margin:g}, positive there)"
            )
            head = f"{kind}: lambda_min = {self.witness_lambda:.4g} kg·m^2 at theta = {where} deg"
        else:
            head = f"undecided: {len(self.unresolved_lower):,} boxes unresolved within the budget"
        return (
            f"{head}; {self.boxes_processed:,} boxes processed, {self.elapsed_s:.1f} s, "
            f"tolerance {self.tolerance:.1e} kg·m^2"
        )

    def to_dict(self) -> dict:
        """The check as a JSON-ready dict."""
        return {
            "status": self.status,
            "margin": self.margin,
            "box_rad": self.box.tolist(),
            "certified_lambda_min": self.certified_lambda_min,
            "observed_lambda_min": self.observed_lambda_min,
            "witness_pose_rad": None if self.witness_pose is None else self.witness_pose.tolist(),
            "witness_lambda": self.witness_lambda,
            "boxes_processed": self.boxes_processed,
            "boxes_certified": self.boxes_certified,
            "unresolved_boxes": len(self.unresolved_lower),
            "tolerance": self.tolerance,
        }


def _polish(
    model: DynamicModel, beta, pose: np.ndarray, box: np.ndarray
) -> tuple[np.ndarray, float]:
    """Deepen a witness by a bounded local minimisation of lambda_min, as the audit evaluates it."""
    lam = lambda x: float(model.arm_min_eigenvalue(np.r_[pose[0], x][None, :], beta)[0])  # noqa: E731
    start = lam(pose[1:])
    result = minimize(
        lam, pose[1:], method="L-BFGS-B", bounds=list(map(tuple, box[1:])), options={"maxiter": 200}
    )
    if result.fun < start:
        refined = np.r_[pose[0], np.clip(result.x, box[1:, 0], box[1:, 1])]
        return refined, float(model.arm_min_eigenvalue(refined[None, :], beta)[0])
    return pose, start


def certify(
    beta,
    margin: float = 0.0,
    box=None,
    model: DynamicModel | None = None,
    max_boxes: int = 5_000_000,
    time_limit_s: float | None = None,
    batch: int | None = None,
    min_half_width: float = 1e-7,
    prescreen: bool = True,
    method: str = "bernstein",
) -> CertificationResult:
    """Prove M(theta) >= margin*I on the whole `box` (default Theta), or find a pose where it fails.

    Stops with "undecided" (and the unresolved boxes) after `max_boxes` boxes or `time_limit_s`
    seconds, or when a box shrinks below `min_half_width` rad without being decided.
    `method`: "bernstein" (default) or "taylor" (the earlier bound, kept for comparison).
    `batch` boxes are bounded at a time (in parallel over numba's threads); default 256
    for the Bernstein bound, 4096 for the Taylor bound.
    """
    start = time.perf_counter()
    model = shared_model("reduced") if model is None else model
    beta_vec = model.parameter_vector(beta)
    box = audit_domain() if box is None else check_box(box)
    if margin < 0:
        raise InputError("margin", f"{margin}", "a margin >= 0 kg·m^2")
    if method not in ("bernstein", "taylor"):
        raise InputError("method", f"{method!r}", "'bernstein' or 'taylor'")
    poly = trig_inertia(beta_vec, model)
    args = (poly.freqs, poly.entry_ptr, poly.term_index, poly.coefs, poly.third_bound, poly.tau_fp)
    if batch is None:
        batch = 4096 if method == "taylor" else 256
    if method == "bernstein":
        form = bernstein_form(poly, margin)
        tolerance = form.shift - margin
    else:
        tolerance = poly.tau_fp

    def result(
        status,
        witness=None,
        witness_lambda=None,
        certified_min=None,
        observed=np.inf,
        processed=0,
        n_certified=0,
        stack=None,
    ):
        lo = np.empty((0, N_LINKS)) if stack is None else stack[0]
        hi = np.empty((0, N_LINKS)) if stack is None else stack[1]
        return CertificationResult(
            status,
            float(margin),
            box,
            certified_min,
            float(observed),
            witness,
            witness_lambda,
            processed,
            n_certified,
            lo,
            hi,
            tolerance,
            time.perf_counter() - start,
        )

    def witness_result(pose, processed=0, n_certified=0, observed=np.inf):
        pose, lam = _polish(model, beta_vec, pose, box)
        status = VIOLATED if lam < 0.0 else BELOW_MARGIN
        return result(status, pose, lam, None, min(observed, lam), processed, n_certified)

    if (
        prescreen
    ):  # the deterministic audit grid, clipped to the box: finds gross violations at once
        grid = grid_poses(box, audit_grid_counts())
        lam = model.arm_min_eigenvalue(grid, beta_vec)
        if lam.min() < margin:
            return witness_result(grid[int(np.argmin(lam))])

    theta1 = 0.5 * (box[0, 0] + box[0, 1])
    # the open boxes form a stack (depth first keeps it short) in arrays that grow by doubling
    centres = np.empty((1024, N_ANGLES))
    halfs = np.empty((1024, N_ANGLES))
    centres[0], halfs[0] = 0.5 * (box[1:, 0] + box[1:, 1]), 0.5 * (box[1:, 1] - box[1:, 0])
    top = 1
    processed = n_certified = 0
    certified_min = np.inf
    observed = np.inf
    tiny: list[tuple[np.ndarray, np.ndarray]] = []
    while top:
        if processed >= max_boxes or (
            time_limit_s is not None and time.perf_counter() - start > time_limit_s
        ):
            break
        take = min(batch, top, max_boxes - processed)
        c, h = centres[top - take : top].copy(), halfs[top - take : top].copy()
        top -= take
        n = len(c)
        lower, lam_c, lam_cert = np.empty(n), np.empty(n), np.empty(n)
        split = np.empty(n, dtype=np.int64)
        if method == "taylor":
            _bound_boxes(c, h, float(margin), *args, True, lower, lam_c, lam_cert, split)
        else:
            lam_c[:] = model.arm_min_eigenvalue(np.column_stack([np.full(n, theta1), c]), beta_vec)
            lower[:] = -np.inf
            lam_cert[:] = margin
            big = h.max(axis=1) > BERNSTEIN_MAX_HALF
            if np.any(~big) and lam_c.min() >= margin:
                ok = np.zeros(int((~big).sum()), dtype=np.bool_)
                _bernstein_boxes(
                    np.ascontiguousarray(c[~big]),
                    np.ascontiguousarray(h[~big]),
                    form.row_data,
                    form.row_offset,
                    form.fp_entry,
                    form.diag_bound,
                    ok,
                )
                lower[np.flatnonzero(~big)[ok]] = np.finfo(float).tiny
            split[:] = np.argmax(
                h, axis=1
            )  # the widest joint (measured: better than width x sensitivity)
        processed += n
        observed = min(observed, float(lam_c.min()))
        bad = np.flatnonzero(lam_c < margin)
        if len(bad):
            i = bad[np.argmin(lam_c[bad])]
            return witness_result(np.r_[theta1, c[i]], processed, n_certified, observed)
        done = lower > 0
        n_certified += int(done.sum())
        if done.any():
            certified_min = min(certified_min, float(lam_cert[done].min()))
        open_c, open_h, open_s = c[~done], h[~done], split[~done]
        small = open_h[np.arange(len(open_h)), open_s] < min_half_width
        if small.any():
            tiny.append((open_c[small], open_h[small]))
            open_c, open_h, open_s = open_c[~small], open_h[~small], open_s[~small]
        if len(open_c):
            rows = np.arange(len(open_c))
            child_h = open_h.copy()
            child_h[rows, open_s] *= 0.5
            left, right = open_c.copy(), open_c.copy()
            left[rows, open_s] -= child_h[rows, open_s]
            right[rows, open_s] += child_h[rows, open_s]
            need = top + 2 * len(open_c)
            if need > len(centres):
                grow = max(need, 2 * len(centres))
                centres = np.resize(centres, (grow, N_ANGLES))
                halfs = np.resize(halfs, (grow, N_ANGLES))
            centres[top:need] = np.vstack([left, right])
            halfs[top:need] = np.vstack([child_h, child_h])
            top = need
    centres, halfs = centres[:top], halfs[:top]
    rest_c = (
        np.vstack([centres] + [t[0] for t in tiny])
        if (len(centres) or tiny)
        else np.empty((0, N_ANGLES))
    )
    rest_h = (
        np.vstack([halfs] + [t[1] for t in tiny])
        if (len(halfs) or tiny)
        else np.empty((0, N_ANGLES))
    )
    if len(rest_c) == 0:
        return result(
            CERTIFIED,
            certified_min=certified_min,
            observed=observed,
            processed=processed,
            n_certified=n_certified,
        )
    lo = np.column_stack([np.full(len(rest_c), box[0, 0]), rest_c - rest_h])
    hi = np.column_stack([np.full(len(rest_c), box[0, 1]), rest_c + rest_h])
    return result(
        UNDECIDED,
        certified_min=certified_min if n_certified else None,
        observed=observed,
        processed=processed,
        n_certified=n_certified,
        stack=(lo, hi),
    )


# ----------------------------------------------------------------------------- the book's checks

THETA, NEAR_WORST = "theta", "near_worst_pose"  # the two kinds of box a model is checked on
# the models of a condition the book certifies: the accepted one, and the CLIE solution it was
# rescued from (when Algorithm 1's record rescued it)
ACCEPTED_MODEL, CLIE_SOLUTION = "accepted", "clie_solution"
CERTIFIED_DIR = RESULTS_DIR / "certified"
NEAR_HALF_WIDTH_DEG = 5.0  # half-width of the box around a model's worst audit pose
NEAR_MAX_BOXES = 10_000  # each check of that small box (it decides in a handful)


def record_path(trajectory: str, ts: float, run: int, model_name: str, directory=None) -> Path:
    """Where the certified checks of one model of a condition are recorded (results/certified/)."""
    folder = CERTIFIED_DIR if directory is None else Path(directory)
    return folder / f"{trajectory}_run{run}_{round(ts * 1e3):02d}ms_{model_name}.json"


def theta_margins(profile: str, epsilon: float) -> tuple[float, ...]:
    """Margins of the accepted model's check over all of Θ: ε/2 (its certificate proves 0 too),
    then 0, in the full profile; none in the quick one, which checks the box around the worst
    audit pose only (over Θ the ε/2 run takes minutes on two cores, and even margin 0 took 44 s
    of CI's 15 minutes)."""
    return () if profile == "quick" else (epsilon / 2, 0.0)


def near_box(pose, half_width_deg: float = NEAR_HALF_WIDTH_DEG) -> np.ndarray:
    """The box of ±`half_width_deg` around `pose`, clipped to Θ (radians, (7, 2))."""
    domain, half = audit_domain(), np.deg2rad(half_width_deg)
    pose = np.asarray(pose, dtype=float)
    return np.column_stack(
        [np.maximum(pose - half, domain[:, 0]), np.minimum(pose + half, domain[:, 1])]
    )


def check_entry(region: str, result: CertificationResult) -> dict:
    """One check as a record stores it: the box's kind, the result, its run time and summary."""
    return {
        "region": region,
        **result.to_dict(),
        "implied_by": None,
        "elapsed_s": result.elapsed_s,
        "summary": result.summary(),
    }


def _implied_entry(margin: float, proved: dict) -> dict:
    """A margin below a certified one: proved by that certificate, not run again."""
    return {
        **proved,
        "margin": float(margin),
        "implied_by": proved["margin"],
        "boxes_processed": None,
        "boxes_certified": None,
        "elapsed_s": 0.0,
        "summary": f"certified: implied by the certificate at margin {proved['margin']:g} "
        "kg·m^2 (not run again)",
    }


def certify_model(
    beta,
    theta_margins: tuple,
    max_boxes: int,
    near_pose=None,
    near_margins: tuple = (),
    half_width_deg: float = NEAR_HALF_WIDTH_DEG,
    model: DynamicModel | None = None,
) -> list[dict]:
    """The certified checks of one model, as record entries: the box around `near_pose` at each
    of `near_margins`, then the whole of Θ at `theta_margins` in order, sharing `max_boxes`.

    The budgets count boxes, not seconds, so a check's status is the same on every machine."""
    model = shared_model("reduced") if model is None else model
    entries = []
    if near_pose is not None:
        region = near_box(near_pose, half_width_deg)
        for margin in near_margins:
            found = certify(beta, margin, region, model, max_boxes=NEAR_MAX_BOXES)
            entries.append(check_entry(NEAR_WORST, found))
    left, proved = int(max_boxes), None
    for margin in theta_margins:
        # a certificate at a margin proves every smaller one: those are not run again
        if proved is not None and margin <= proved["margin"]:
            entries.append(_implied_entry(margin, proved))
            continue
        found = certify(beta, margin, None, model, max_boxes=max(left, 1))
        left -= found.boxes_processed
        entries.append(check_entry(THETA, found))
        if found.status == CERTIFIED:
            proved = entries[-1]
    return entries
