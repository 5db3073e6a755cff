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
   level, and every coefficient dropped is charged to the allowance below.
2. A bound on one box B = c +- h. With A(theta) = M(theta) - margin*I, write
   A(c + d) = A0 + sum_i d_i G_i + R(d), G_i = dM/dtheta_i(c), and bound the Taylor
   remainder entrywise by |R_kl| <= 1/2 sum_ij h_i h_j H_ij,kl, where
   H_ij,kl = sum_k |coef_k| |k_i k_j| >= sup |d2 M_kl / dtheta_i dtheta_j| over ALL theta.
   Choose D = L^-1 with A0 = L L^T (Cholesky). A is positive definite wherever
   D A D^T is, and
        lambda_min(D A(c+d) D^T) >= min over the 64 vertices s of lambda_min(S0 + sum_i s_i h_i S_i)
                                    - lambda_max(|D| Rbound |D|^T) - fp,
   S0 = D A0 D^T (= I up to rounding), S_i = D G_i D^T: the linear part is concave in d
   (lambda_min of an affine matrix function), so its minimum over the box is at a vertex;
   |D R D^T| <= |D| Rbound |D|^T entrywise and the spectral norm is monotone on
   nonnegative matrices. A cheaper first try replaces the vertex minimum by
   lambda_min(S0) - sum_i h_i ||S_i||_2. If the bound ell is positive, the box is certified
   and A(theta) >= ell * A0 >= ell * lambda_min(A0) * I there, which gives a certified lower
   bound of lambda_min(M) on the box. Otherwise the box is split in two along the joint
   with the largest first- plus second-order contribution.
3. A box whose centre has lambda_min(M(c)) < margin ends the search: that pose is
   re-evaluated with the generated kernel and numpy's eigvalsh (independent of the Fourier
   form), refined by a bounded local minimisation, and returned as the witness.

What is proved, with what tolerance: for the trigonometric polynomial M~ whose coefficients
were extracted, every certified box satisfies M~(theta) >= (margin + ell*lambda_min(A0)) I
with every floating-point error of the box computation covered by `fp`, which charges
|| |D| ||^2 * tau_fp for absolute errors in the entries (tau_fp: an a priori bound
100 (T + 10) u sum|coef|(1 + pi sum_i |k_i|) for T terms, plus the coefficients dropped and
the extraction noise measured on the identically zero third harmonics times the number of
coefficients) and 1e3 * 7 * u times the size of the scaled matrices for the Cholesky
scaling, the products and eigvalsh. M and M~ are the same polynomial up to that extraction
noise, so "certified" means lambda_min(M(theta)) >= margin at every theta in the box, up to
a tolerance of tau_fp (reported, typically 1e-13 kg·m^2). Boxes are closed; theta1 is free.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np
from scipy.optimize import minimize

from .audit import _check_box, audit_domain, grid_poses, audit_grid_counts
from .dynamics import DynamicModel, model as shared_model
from .errors import InputError
from .parameters import N_LINKS

N_ANGLES = N_LINKS - 1  # theta2..theta7
SAMPLES_PER_ANGLE = 7  # resolves trigonometric degree 3; M has degree 2
MAX_DEGREE = 2
UNIT_ROUNDOFF = np.finfo(float).eps / 2
CERTIFIED, VIOLATED, BELOW_MARGIN, UNDECIDED = "certified", "violated", "below_margin", "undecided"


# ----------------------------------------------------------------------------- the polynomial


@dataclass
class TrigInertia:
    """Arm block of M(theta2..theta7) = sum over terms of Re(coef * exp(i k.theta)), half-space k with the factor 2 included."""

    freqs: np.ndarray  # (T, 6) int64, components in -2..2
    entry_ptr: np.ndarray  # (29,) CSR pointers over the 28 upper-triangle entries
    term_index: np.ndarray  # (nnz,) term of each coefficient
    coefs: np.ndarray  # (nnz,) complex128
    third_bound: np.ndarray  # (6, 6, 6, 7, 7): sup over all theta of |d3 M_kl / dtheta_i dtheta_j dtheta_m|
    tau_fp: float  # kg·m^2, allowance for rounding and extraction in one evaluation of A and its derivatives
    extraction_noise: float  # largest third-harmonic coefficient (zero in exact arithmetic)
    dropped: float  # sum of |coefficients| below the keep threshold


UPPER = [(k, l) for k in range(N_LINKS) for l in range(k, N_LINKS)]


def trig_inertia(beta, model: DynamicModel | None = None) -> TrigInertia:
    """Fourier coefficients of the arm inertia matrix for the base parameters `beta`."""
    model = shared_model("reduced") if model is None else model
    n = SAMPLES_PER_ANGLE
    angles = 2 * np.pi * np.arange(n) / n
    grid = np.stack(np.meshgrid(*([angles] * N_ANGLES), indexing="ij"), axis=-1).reshape(-1, N_ANGLES)
    poses = np.hstack([np.zeros((len(grid), 1)), grid])
    mass = model.inertia_matrix(poses, beta)[:, :N_LINKS, :N_LINKS].reshape((n,) * N_ANGLES + (N_LINKS, N_LINKS))
    coef = np.fft.fftn(mass, axes=tuple(range(N_ANGLES))) / n**N_ANGLES
    freq = np.rint(np.fft.fftfreq(n, 1.0 / n)).astype(np.int64)
    k = np.stack(np.meshgrid(*([freq] * N_ANGLES), indexing="ij"), axis=-1).reshape(-1, N_ANGLES)
    coef = coef.reshape(-1, N_LINKS, N_LINKS)
    high = np.abs(k).max(axis=1) > MAX_DEGREE
    scale = float(np.abs(coef).max())
    noise = float(np.abs(coef[high]).max())
    if noise > 1e-9 * scale:
        raise InputError("inertia matrix", f"harmonics of degree {MAX_DEGREE + 1} of size {noise:.3g}", f"a trigonometric polynomial of degree <= {MAX_DEGREE} per angle")
    # half space: first nonzero component positive; k and -k carry conjugate coefficients
    first = np.array([row[np.flatnonzero(row)[0]] if row.any() else 0 for row in k])
    keep_k = (~high) & (first >= 0)
    factor = np.where(first > 0, 2.0, 1.0)
    k_half, coef_half, factor = k[keep_k], coef[keep_k], factor[keep_k]
    threshold = 1e-15 * scale
    ptr, index, values = [0], [], []
    dropped = 0.0
    used = np.zeros(len(k_half), dtype=bool)
    for r, c in UPPER:
        entry = coef_half[:, r, c] * factor
        entry[np.all(k_half == 0, axis=1)] = entry[np.all(k_half == 0, axis=1)].real  # the mean is real
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
    tau = 100.0 * (max_terms + 10) * UNIT_ROUNDOFF * abs_sum * (1.0 + np.pi) ** 2 + dropped + 10.0 * n_coefficients * noise
    return TrigInertia(freqs, np.array(ptr, dtype=np.int64), term_index, coefs, third, float(tau), noise, dropped)


@numba.njit(cache=True)
def _evaluate(theta, freqs, entry_ptr, term_index, coefs, value, grad, hess):
    """M(theta) (7x7), dM/dtheta_i (6,7,7) and d2M/dtheta_i dtheta_j (6,6,7,7); theta are joints 2..7."""
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
    """True only if a - shift*I is positive definite: floating-point Cholesky of a - (shift + slack)*I
    completes, the slack covering its rounding (|dA| <= gamma_{n+1} |L||L^T|, Demmel) many times over."""
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
def _spectral_norm_sym(a):
    w = np.linalg.eigvalsh(a)
    return max(abs(w[0]), abs(w[-1]))


@numba.njit(parallel=True, cache=True)
def _bound_boxes(centres, halfs, margin, freqs, entry_ptr, term_index, coefs, third, tau_fp, use_vertices,
                 lower, centre_lambda, certified_lambda, split):
    """Per box: certified lower bound `lower` (scaled; > 0 means certified), lambda_min(M(centre)),
    the certified lower bound of lambda_min(M) on the box when certified, and the joint to split."""
    u = 1.1102230246251565e-16
    n_vertices = 1 << N_ANGLES
    for b in numba.prange(centres.shape[0]):
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
        d = np.linalg.inv(np.linalg.cholesky(a0))  # any nonsingular D: congruence keeps definiteness
        d_abs = np.abs(d)
        s0 = _congruence(d, a0)
        lam_s0 = np.linalg.eigvalsh(s0)[0]
        # first order: D G_i D^T
        s = np.empty((N_ANGLES, N_LINKS, N_LINKS))
        norms = np.empty(N_ANGLES)
        first_order = 0.0
        for i in range(N_ANGLES):
            s[i] = _congruence(d, g[i])
            norms[i] = _spectral_norm_sym(s[i])
            first_order += h[i] * norms[i]
        # second order at the centre, exactly: || 1/2 sum_ij d_i d_j D H_ij D^T || <= 1/2 sum_ij h_i h_j ||D H_ij D^T||
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
        cubic = min(np.linalg.eigvalsh(_congruence(d_abs, r3))[-1], np.linalg.eigvalsh(r3)[-1] / (lam_a0 * (1.0 - 1e3 * N_LINKS * u)))
        if share.sum() > 0.0:
            weight += cubic * share / share.sum()
        d_norm2 = np.linalg.eigvalsh(_congruence(d_abs, np.eye(N_LINKS)))[-1]
        fp = d_norm2 * tau_fp + 1e3 * N_LINKS * u * (abs(lam_s0) + first_order + quadratic + cubic + 1.0)
        split[b] = int(np.argmax(weight))
        rest = quadratic + cubic + fp
        bound = lam_s0 - first_order - rest
        if bound <= 0.0 and use_vertices and lam_s0 - rest > 0.0:
            # the linear part's lambda_min is concave in the offset, so its minimum is at one of the
            # 64 vertices: the box is certified if S0 + sum_i +-h_i S_i - rest*I is definite at all of them
            every = True
            mat = np.empty((N_LINKS, N_LINKS))
            for v in range(n_vertices):
                mat[:, :] = s0
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
            certified_lambda[b] = margin + bound * lam_a0 * (1.0 - 1e-6) - tau_fp  # A >= bound * D^-1 D^-T ~ bound * A0


# ----------------------------------------------------------------------------- the search


@dataclass
class CertificationResult:
    status: str  # certified | violated | below_margin | undecided
    margin: float  # kg·m^2: what was to be proved is M(theta) >= margin * I on the box
    box: np.ndarray  # (7, 2) radians (theta1 irrelevant)
    certified_lambda_min: float | None  # proved lower bound of lambda_min over the certified part
    observed_lambda_min: float  # smallest lambda_min(M) seen at any box centre
    witness_pose: np.ndarray | None  # (7,) radians, a pose with lambda_min < margin (eigvalsh)
    witness_lambda: float | None
    boxes_processed: int
    boxes_certified: int
    unresolved_lower: np.ndarray  # (u, 7) boxes left when undecided
    unresolved_upper: np.ndarray
    tolerance: float  # tau_fp, kg·m^2
    elapsed_s: float = field(compare=False, default=0.0)

    def summary(self) -> str:
        if self.status == CERTIFIED:
            head = f"certified: lambda_min(M(theta)) >= {self.certified_lambda_min:.4g} kg·m^2 (margin {self.margin:g}) at every theta in the box"
        elif self.status in (VIOLATED, BELOW_MARGIN):
            where = np.round(np.rad2deg(self.witness_pose), 3).tolist()
            kind = "violated" if self.status == VIOLATED else f"not certified (below the margin {self.margin:g}, positive there)"
            head = f"{kind}: lambda_min = {self.witness_lambda:.4g} kg·m^2 at theta = {where} deg"
        else:
            head = f"undecided: {len(self.unresolved_lower):,} boxes unresolved within the budget"
        return f"{head}; {self.boxes_processed:,} boxes processed, {self.elapsed_s:.1f} s, tolerance {self.tolerance:.1e} kg·m^2"

    def to_dict(self) -> dict:
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


def _polish(model: DynamicModel, beta, pose: np.ndarray, box: np.ndarray) -> tuple[np.ndarray, float]:
    """Deepen a witness by a bounded local minimisation of lambda_min (the kernel + eigvalsh)."""
    lam = lambda x: float(model.arm_min_eigenvalue(np.r_[pose[0], x][None, :], beta)[0])  # noqa: E731
    start = lam(pose[1:])
    result = minimize(lam, pose[1:], method="L-BFGS-B", bounds=list(map(tuple, box[1:])), options={"maxiter": 200})
    if result.fun < start:
        refined = np.r_[pose[0], np.clip(result.x, box[1:, 0], box[1:, 1])]
        return refined, float(model.arm_min_eigenvalue(refined[None, :], beta)[0])
    return pose, start


def certify(beta, margin: float = 0.0, box=None, model: DynamicModel | None = None, max_boxes: int = 5_000_000,
            time_limit_s: float | None = None, batch: int = 4096, min_half_width: float = 1e-7, prescreen: bool = True) -> CertificationResult:
    """Prove M(theta) >= margin*I on the whole `box` (default Theta), or find a pose where it fails.

    Stops with "undecided" (and the unresolved boxes) after `max_boxes` boxes or `time_limit_s`
    seconds, or when a box shrinks below `min_half_width` rad without being decided.
    """
    start = time.perf_counter()
    model = shared_model("reduced") if model is None else model
    beta_vec = model.parameter_vector(beta)
    box = audit_domain() if box is None else _check_box(box)
    if margin < 0:
        raise InputError("margin", f"{margin}", "a margin >= 0 kg·m^2")
    poly = trig_inertia(beta_vec, model)
    args = (poly.freqs, poly.entry_ptr, poly.term_index, poly.coefs, poly.third_bound, poly.tau_fp)

    def result(status, witness=None, witness_lambda=None, certified_min=None, observed=np.inf, processed=0, n_certified=0, stack=None):
        lo = np.empty((0, N_LINKS)) if stack is None else stack[0]
        hi = np.empty((0, N_LINKS)) if stack is None else stack[1]
        return CertificationResult(status, float(margin), box, certified_min, float(observed), witness, witness_lambda,
                                   processed, n_certified, lo, hi, poly.tau_fp, time.perf_counter() - start)

    def witness_result(pose, processed=0, n_certified=0, observed=np.inf):
        pose, lam = _polish(model, beta_vec, pose, box)
        status = VIOLATED if lam < 0.0 else BELOW_MARGIN
        return result(status, pose, lam, None, min(observed, lam), processed, n_certified)

    if prescreen:  # the deterministic audit grid, clipped to the box: finds gross violations at once
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
        if processed >= max_boxes or (time_limit_s is not None and time.perf_counter() - start > time_limit_s):
            break
        take = min(batch, top, max_boxes - processed)
        c, h = centres[top - take:top].copy(), halfs[top - take:top].copy()
        top -= take
        n = len(c)
        lower, lam_c, lam_cert = np.empty(n), np.empty(n), np.empty(n)
        split = np.empty(n, dtype=np.int64)
        _bound_boxes(c, h, float(margin), *args, True, lower, lam_c, lam_cert, split)
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
    rest_c = np.vstack([centres] + [t[0] for t in tiny]) if (len(centres) or tiny) else np.empty((0, N_ANGLES))
    rest_h = np.vstack([halfs] + [t[1] for t in tiny]) if (len(halfs) or tiny) else np.empty((0, N_ANGLES))
    if len(rest_c) == 0:
        return result(CERTIFIED, certified_min=certified_min, observed=observed, processed=processed, n_certified=n_certified)
    lo = np.column_stack([np.full(len(rest_c), box[0, 0]), rest_c - rest_h])
    hi = np.column_stack([np.full(len(rest_c), box[0, 1]), rest_c + rest_h])
    return result(UNDECIDED, certified_min=certified_min if n_certified else None, observed=observed, processed=processed,
                  n_certified=n_certified, stack=(lo, hi))
