"""Numeric dynamics generated from the symbolic model (stage 3).

`DynamicModel(parameter_set)` holds per-sample kernels generated once from `symbolic_model` and
the exact grouping of `base_parameters`, cached on disk (`.cache/codegen/`): the regressor
W(theta, dtheta, ddtheta) of a base-parameter set, the inertia matrix M(theta; beta), and
from them the inverse dynamics, gravity, Coriolis/centrifugal and friction torques and the
direct dynamics. The generated source is compiled by numba (cached beside it) and run over
samples on all cores: the audit evaluates M and its smallest eigenvalue at 221,875 poses,
which numpy's per-operation passes over arrays made several times slower (see
benchmarks/). Arrays are (n, 8) for the eight axes (the hand is axis 8).

Gravity: the arm hangs from its desk mount, so gravity points along +z0 (the zero pose,
straight along z0, points down). `mounting="upright"` flips it; nothing else changes.

Any other arm: `DynamicModel(parameter_set, arm=description)` with an `arm_description` arm
generates the same kernels (same names, signatures and drivers, so `bind_template` binds them
unchanged) from `chain_model`'s fixed-transform recursion and exact grouping: arrays are
(n, n_axes), THETA_OFFSETS are zeros (the chain's transforms hold the offsets) and `gz` is the
gravity magnitude along the arm's exact gravity direction (the arm's own mounting: +g; the other
mounting: -g; 0: none). The CRANE-X7's description takes the MDH path above, so its kernels are
the same module. An arm's grouping and kernels are cached under a digest of its description.
"""

from __future__ import annotations

import json
import os
import re
from fractions import Fraction
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from crane_lib import fingerprint
from crane_lib.constants import GRAVITY, N_AXES
from crane_lib.errors import InputError, atomic_write
from crane_lib.model import base_parameters, codegen, robot_description
from crane_lib.model.base_parameters import PARAMETER_SETS, SYMBOLIC_MODEL_SOURCE
from crane_lib.model.parameters import N_LINKS, ParameterSet, standard_parameter_names

if TYPE_CHECKING:  # arm_description is imported where an arm is given (it loads pandas)
    from crane_lib.model.arm_description import ArmDescription

MOUNTINGS = {"hanging": +1.0, "upright": -1.0}
DEFAULT_CHUNK = 65536  # samples per regressor block in inverse_dynamics (bounds memory)
# arm_min_eigenvalue(exact_order=False), an audit's, takes numpy's eigvalsh (LAPACK) where a
# decision rests on rounding: at the EIGVALSH_SMALLEST smallest values (whose order picks an
# audit's worst poses) and at values within the margin of zero (whose sign is the verdict); the
# margin, relative to n_arm times the block's largest |entry| (>= ||A||_2), is over 50 times the
# compiled routine's error bound below (and 500 times the largest difference measured, 2.0e-15
# ||A||_2)
EIGVALSH_SMALLEST = 64
EIGVALSH_MARGIN = 1e-12


def _unpack_trig() -> dict[str, str]:
    unpack = {f"c{j}": f"c[{j - 1}]" for j in range(1, N_LINKS + 1)}
    unpack.update({f"s{j}": f"s[{j - 1}]" for j in range(1, N_LINKS + 1)})
    return unpack


# The generation below imports sympy and symbolic_model where it runs: a process that loads the
# cached kernels never imports them (bench_model's cached load)
def _regressor_source(table, names: list[str], pivots: list[str]) -> str:
    from crane_lib.model import symbolic_model

    program, entries = symbolic_model.derive_regressor(table, columns=pivots)
    column = {p: i for i, p in enumerate(pivots)}
    stores = [
        (f"out[{row}, {column[name]}]", expr)
        for (row, name), expr in sorted(entries.items(), key=lambda e: (e[0][0], column[e[0][1]]))
    ]
    unpack = _unpack_trig()
    unpack.update({f"QP{j}": f"qp[{j - 1}]" for j in range(1, N_AXES + 1)})
    unpack.update({f"QDP{j}": f"qdp[{j - 1}]" for j in range(1, N_AXES + 1)})
    unpack.update({f"SGN{j}": f"sgn[{j - 1}]" for j in range(1, N_AXES + 1)})
    unpack["GZ"] = "gz"
    header = f"# columns: {', '.join(names)}\n@numba.njit(cache=True)\n"
    kernel = codegen.emit_function(
        "regressor_kernel",
        ["c", "s", "qp", "qdp", "sgn", "gz"],
        unpack,
        program,
        stores,
        exact=False,
    )
    pattern = [(row, column[name]) for (row, name), _ in entries.items()]
    return header + kernel + "\n\n" + _net_torque_source(pattern, N_AXES)


def _net_torque_source(pattern: list[tuple[int, int]], n_axes: int) -> str:
    """Source of STORED_ENTRIES, the (row, column) entries of W that are not identically zero
    (`pattern`, the ones the regressor kernel writes), and of `net_torque_kernel(tau, w, b,
    out)`: out = tau - W b (N·m), the torque left to accelerate the axes when w = W(q, q̇, 0),
    summed over those entries in column order: the value of the loop over every column, whose
    other terms are exact zeros, at 41 % of its products for the CRANE-X7."""
    entries = ", ".join(f"({row}, {col})" for row, col in sorted(pattern))
    lines = [f"STORED_ENTRIES = ({entries},)", "", ""]
    lines += ["@numba.njit(cache=True)", "def net_torque_kernel(tau, w, b, out):"]
    for row in range(n_axes):
        columns = sorted(col for r, col in pattern if r == row)
        terms = "".join(f" - w[{row}, {col}] * b[{col}]" for col in columns)
        lines.append(f"    out[{row}] = tau[{row}]{terms}")
    return "\n".join(lines) + "\n"


def _inertia_source(table, pivots: list[str]) -> str:
    import sympy

    from crane_lib.model import symbolic_model

    program, entries = symbolic_model.derive_inertia_matrix(table, columns=pivots)
    beta = {p: sympy.Symbol(f"B{i}") for i, p in enumerate(pivots)}
    sums: dict[tuple[int, int], sympy.Expr] = {}
    for (row, col, name), expr in entries.items():
        sums[(row, col)] = sums.get((row, col), 0) + beta[name] * expr
    stores = [(f"out[{r}, {c}]", e) for (r, c), e in sorted(sums.items())]
    unpack = _unpack_trig()
    unpack.update({f"B{i}": f"b[{i}]" for i in range(len(pivots))})
    return "@numba.njit(cache=True)\n" + codegen.emit_function(
        "inertia_upper_kernel", ["c", "s", "b"], unpack, program, stores, exact=False
    )


# Per-sample kernels are generated; these drivers run them over many samples on all cores
# (compiled loops over a range of samples, side by side: crane_lib.threads.in_threads).
# Output arrays arrive zeroed: the kernels store only the entries that are not identically zero.
_DRIVERS = """
import math

from crane_lib.threads import in_threads

ROWS_PER_THREAD = 1024  # fewer samples than twice this run in the calling thread


@numba.njit(cache=True)
def inertia_kernel(c, s, b, out):
    inertia_upper_kernel(c, s, b, out)
    for r in range(OUT_SIZE):  # the module's constant: the compiler unrolls the mirror
        for k in range(r + 1, OUT_SIZE):
            out[k, r] = out[r, k]


@numba.njit(nogil=True, cache=True)
def _regressor_rows(start, stop, C, S, QP, QDP, SGN, gz, OUT):
    for i in range(start, stop):
        regressor_kernel(C[i], S[i], QP[i], QDP[i], SGN[i], gz, OUT[i])


def regressor_batch(C, S, QP, QDP, SGN, gz, OUT):
    '''The regressor at each sample (row of C) into OUT[i].'''
    in_threads(_regressor_rows, C.shape[0], C, S, QP, QDP, SGN, gz, OUT, grain=ROWS_PER_THREAD)


@numba.njit(nogil=True, cache=True)
def _inertia_rows(start, stop, C, S, b, OUT):
    for i in range(start, stop):
        inertia_kernel(C[i], S[i], b, OUT[i])


def inertia_batch(C, S, b, OUT):
    '''M at each sample (row of C) into OUT[i].'''
    in_threads(_inertia_rows, C.shape[0], C, S, b, OUT, grain=ROWS_PER_THREAD)


# lambda_min of the arm block by the two LAPACK steps numpy's eigvalsh (dsyevd) takes: dsytd2
# reduces the block to tridiagonal form, dsterf finds its eigenvalues. Called directly through
# scipy's function pointers on scratch that each thread's range of poses reuses: no allocation, no
# workspace query per pose. dsyevd itself takes a block it would rescale, so every value is the
# one eigvalsh returns. M is written as a C array with only its upper triangle filled: read as
# a column-major array with leading dimension OUT_SIZE, that is the lower triangle LAPACK reads.
_PTR = numba.types.voidptr
_dsytd2 = numba.types.ExternalFunction("crane_lapack_dsytd2", numba.types.void(*(_PTR,) * 8))
_dsterf = numba.types.ExternalFunction("crane_lapack_dsterf", numba.types.void(*(_PTR,) * 4))
_dsyevd = numba.types.ExternalFunction("crane_lapack_dsyevd", numba.types.void(*(_PTR,) * 11))
# dsyevd rescales when the largest |entry| lies outside [RMIN, RMAX] (its own bounds)
_SMLNUM = np.finfo(np.float64).tiny / np.finfo(np.float64).eps
_RMIN = float(np.sqrt(_SMLNUM))
_RMAX = float(np.sqrt(1.0 / _SMLNUM))
_LWORK = 1 + 6 * OUT_SIZE + 2 * OUT_SIZE * OUT_SIZE  # dsyevd's workspace for any job
_LIWORK = 3 + 5 * OUT_SIZE
EIGEN_CHUNK = 256  # fewer poses than twice this are decomposed in the calling thread
_LAPACK = []


def _bind_lapack():
    import llvmlite.binding
    from numba.extending import get_cython_function_address

    for name in ("dsytd2", "dsterf", "dsyevd"):
        address = get_cython_function_address("scipy.linalg.cython_lapack", name)
        llvmlite.binding.add_symbol("crane_lapack_" + name, address)
    _LAPACK.append(True)


@numba.njit(cache=True)
def _arm_block_at(Q, i, offsets, b, n_arm, c, s, m):
    '''M's upper triangle at pose i (row of Q) into m (c, s: scratch of the links' cosines and
    sines); returns the largest |entry| of its leading n_arm block, NaN if an entry is not
    finite.'''
    for j in range(offsets.shape[0]):
        angle = Q[i, j] + offsets[j]
        c[j] = np.cos(angle)
        s[j] = np.sin(angle)
    m[:] = 0.0
    inertia_upper_kernel(c, s, b, m)
    return _largest_upper(m, n_arm)


@numba.njit(cache=True)
def _largest_upper(a, n):
    '''Largest |entry| of the upper triangle of a's leading n x n block; NaN if one is not
    finite.'''
    largest = 0.0
    for r in range(n):
        for k in range(r, n):
            if not np.isfinite(a[r, k]):
                return np.nan
            largest = max(largest, abs(a[r, k]))
    return largest


# lambda_min of a symmetric block without a LAPACK call per pose (for a 7x7 block the ~30 BLAS
# and LAPACK calls of eigvalsh, and its finding all seven eigenvalues, cost more than the one
# wanted): the block A, scaled by a power of two (exact) so that its largest |entry| lies in
# [1/2, 1), is reduced to tridiagonal form T by Householder reflections (LAPACK's dsytd2,
# unblocked); then Laguerre's iteration on det(T - xI), which from below the smallest eigenvalue
# climbs to it monotonically (all roots real) and cubically, inside a bracket kept by Sturm counts
# (the signs of the leading minors of T - xI), which bisects where rounding misleads it, until the
# bracket is 8 eps ||T||_inf wide. Error: the reduction is backward stable (T is similar to A + E,
# ||E||_2 <= c n^2 eps ||A||_2) and each Sturm count is exact for a T with entries perturbed by a
# few eps, so by Weyl's theorem |result - lambda_min(A)| <= (c n^2 + 30) eps ||A||_2, the same
# form as eigvalsh's bound: the two agree to 1e-10 ||A||_2 (tests/test_arm_eigenvalue.py;
# measured at most 2.0e-15 ||A||_2 over the build's audits, tools/audit_eigenvalue_check.py;
# ||A||_2 = max |eigenvalue|).
EIGEN_MAX_EVALUATIONS = 200  # Sturm counts before giving up (about 6 taken; bisection alone: 160)


@numba.njit(cache=True)
def symmetric_min_eigenvalue(a, n, largest, d, e):
    '''Smallest eigenvalue of the symmetric n x n leading block of a, read from its upper triangle
    (a[r, k], k >= r), given largest = _largest_upper(a, n); a's lower triangle, d and e (length
    >= n) are overwritten. NaN where an entry is not finite or the iteration does not converge.'''
    if np.isnan(largest):
        return np.nan
    if largest == 0.0:
        return 0.0
    exponent = math.frexp(largest)[1]
    scale = math.ldexp(1.0, -exponent)
    for r in range(n):
        for k in range(r, n):
            a[k, r] = a[r, k] * scale
    # Householder: H_r = I - tau v v^T (v[r + 1] = 1, v stored in column r) zeroes a[r + 2:, r]
    for r in range(n - 2):
        alpha = a[r + 1, r]
        tail = 0.0
        for k in range(r + 2, n):
            tail += a[k, r] * a[k, r]
        d[r] = a[r, r]
        if tail == 0.0:
            e[r] = alpha
            continue
        beta = -math.copysign(math.sqrt(alpha * alpha + tail), alpha)
        tau = (beta - alpha) / beta
        inverse = 1.0 / (alpha - beta)
        a[r + 1, r] = 1.0
        for k in range(r + 2, n):
            a[k, r] *= inverse
        # p = tau A22 v into e[r + 1:], w = p - (tau/2)(p.v) v, A22 -= v w^T + w v^T (lower)
        for k in range(r + 1, n):
            total = 0.0
            for j in range(r + 1, k):
                total += a[k, j] * a[j, r]
            for j in range(k, n):
                total += a[j, k] * a[j, r]
            e[k] = tau * total
        pv = 0.0
        for k in range(r + 1, n):
            pv += e[k] * a[k, r]
        half = 0.5 * tau * pv
        for k in range(r + 1, n):
            e[k] -= half * a[k, r]
        for j in range(r + 1, n):
            for k in range(j, n):
                a[k, j] -= a[k, r] * e[j] + e[k] * a[j, r]
        e[r] = beta
    if n >= 2:
        d[n - 2] = a[n - 2, n - 2]
        e[n - 2] = a[n - 1, n - 2]
    d[n - 1] = a[n - 1, n - 1]
    e[n - 1] = 0.0
    # smallest eigenvalue of T: Laguerre's iteration on det(T - xI) from below, kept inside a
    # Sturm-count bracket [lo, hi] (every leading minor of T - lo I is > 0, some of T - hi I not)
    lo = d[0] - abs(e[0])
    hi = d[0] + abs(e[0])
    for k in range(1, n):
        lo = min(lo, d[k] - abs(e[k - 1]) - abs(e[k]))
        hi = max(hi, d[k] + abs(e[k - 1]) + abs(e[k]))
    norm = max(abs(lo), abs(hi))
    tolerance = 4.0 * np.finfo(np.float64).eps * norm
    lo -= tolerance
    hi += tolerance
    for k in range(n - 1):
        e[k] = e[k] * e[k]
    # the first count at zero decides definiteness and, for a definite block (the audit's
    # usual case), starts Laguerre nearer lambda_1 than the lower bound does
    x = 0.0 if lo < 0.0 < hi else lo
    step = 0.0
    probing = False
    started = False  # a count below lambda_1 was taken
    for evaluation in range(EIGEN_MAX_EVALUATIONS):
        # leading principal minors p_k of T - xI and their derivatives in x (three-term
        # recurrence, no division); all p_k > 0 iff no eigenvalue of T lies at or below x
        p, dp, ddp = d[0] - x, -1.0, 0.0
        p1, dp1, ddp1 = 1.0, 0.0, 0.0
        below = p > 0.0
        for k in range(1, n):
            if not below:
                break
            shift = d[k] - x
            p, p1 = shift * p - e[k - 1] * p1, p
            dp, dp1 = shift * dp - p1 - e[k - 1] * dp1, dp
            ddp, ddp1 = shift * ddp - 2.0 * dp1 - e[k - 1] * ddp1, ddp
            below = p > 0.0
        if below:
            lo = x
            g = dp / p  # (log det)' and h = -(log det)'' for Laguerre's step
            h = g * g - ddp / p
            step = n / (math.sqrt(max((n - 1) * (n * h - g * g), 0.0)) - g)
            if not step >= 0.0:  # NaN where a minor underflowed: fall back on the bracket
                step = 0.0
        else:
            hi = x
        if hi - lo <= 2.0 * tolerance:
            break
        started = started or below
        x = lo + max(step, tolerance)
        if not started:
            x = lo  # zero lies at or above lambda_1: from the lower bound
        elif below and x < hi:
            probing = False  # Laguerre's step from lo, which lands in (lo, lambda_1]
        elif not probing:
            x = hi - tolerance  # it landed past lambda_1 by rounding: lambda_1 is just below
            probing = True
        else:
            x = 0.5 * (lo + hi)
    else:
        return np.nan
    estimate = lo + step  # Laguerre's step from lo: the nearest to lambda_1 when in bracket
    return math.ldexp(estimate if estimate < hi else hi, exponent)


@numba.njit(nogil=True, cache=True)
def _symmetric_min_eigenvalue_rows(start, stop, A, n, LAM):
    for i in range(start, stop):
        a = A[i].copy()
        d = np.empty(n)
        e = np.empty(n)
        LAM[i] = symmetric_min_eigenvalue(a, n, _largest_upper(a, n), d, e)


def symmetric_min_eigenvalue_batch(A, n, LAM):
    '''Smallest eigenvalue of the leading n x n block (upper triangle read) of each A[i].'''
    in_threads(_symmetric_min_eigenvalue_rows, A.shape[0], A, n, LAM, grain=EIGEN_CHUNK)


@numba.njit(nogil=True, cache=True)
def _arm_min_eigenvalue_rows(start, stop, Q, offsets, b, n_arm, exact_order, LAM, SCALE):
    links = offsets.shape[0]
    # one set of scratch for the range: no allocation and no workspace query per pose
    c = np.empty(links)
    s = np.empty(links)
    m = np.empty((OUT_SIZE, OUT_SIZE))
    d = np.empty(OUT_SIZE)
    e = np.empty(OUT_SIZE)
    tau = np.empty(OUT_SIZE)
    work = np.empty(_LWORK)
    iwork = np.empty(_LIWORK, np.int32)
    jobz = np.array([ord("N")], np.uint8)
    uplo = np.array([ord("L")], np.uint8)
    order = np.array([n_arm], np.int32)
    lda = np.array([OUT_SIZE], np.int32)
    lwork = np.array([_LWORK], np.int32)
    liwork = np.array([_LIWORK], np.int32)
    info = np.zeros(1, np.int32)
    for i in range(start, stop):
        largest = _arm_block_at(Q, i, offsets, b, n_arm, c, s, m)
        SCALE[i] = largest
        if not exact_order:
            LAM[i] = symmetric_min_eigenvalue(m, n_arm, largest, d, e)
            continue
        if np.isnan(largest):
            LAM[i] = np.nan
            continue
        if 0.0 < largest < _RMIN or largest > _RMAX:
            _dsyevd(jobz.ctypes, uplo.ctypes, order.ctypes, m.ctypes, lda.ctypes, d.ctypes,
                    work.ctypes, lwork.ctypes, iwork.ctypes, liwork.ctypes, info.ctypes)
        else:
            _dsytd2(uplo.ctypes, order.ctypes, m.ctypes, lda.ctypes, d.ctypes, e.ctypes,
                    tau.ctypes, info.ctypes)
            _dsterf(order.ctypes, d.ctypes, e.ctypes, info.ctypes)
        LAM[i] = d[0] if info[0] == 0 else np.nan


def arm_min_eigenvalue_batch(Q, offsets, b, n_arm, exact_order, LAM, SCALE):
    '''Smallest eigenvalue of the leading n_arm x n_arm block of M at each pose (row of Q) into
    LAM, its largest |entry| into SCALE (NaN where M is not finite): with `exact_order` by
    LAPACK's dsytd2 and dsterf (eigvalsh's values, bit for bit), else by
    symmetric_min_eigenvalue; LAM is NaN where M is not finite or the method does not converge.'''
    if not _LAPACK:  # before the first call links the compiled loop against the symbols
        _bind_lapack()
    in_threads(_arm_min_eigenvalue_rows, Q.shape[0], Q, offsets, b, n_arm, exact_order, LAM, SCALE,
               grain=EIGEN_CHUNK)
"""


def _write_generated_module(
    target,
    origin: str,
    out_size: int,
    offsets: tuple,
    offsets_note: str,
    regressor: str,
    inertia: str,
) -> None:
    """Write a generated kernel module: its origin, sizes, the two kernels and the drivers."""
    source = (
        f'"""{origin}; do not edit."""\n\n'
        + f"import numba\nimport numpy as np\n\nOUT_SIZE = {out_size}\n"
        + f"THETA_OFFSETS = {offsets!r}  # {offsets_note}\n\n\n"
        + regressor
        + "\n\n"
        + inertia
        + "\n"
        + _DRIVERS
    )
    with atomic_write(target, encoding="utf-8") as handle:
        handle.write(source)


@lru_cache(maxsize=16)
def _kernels(parameter_set: str, table_path: str | None):
    path = robot_description.MDH_TABLE_CSV if table_path is None else table_path
    table_text = open(path, encoding="utf-8").read()
    group = base_parameters.grouping(table_path)
    names = group.parameter_set(parameter_set)
    pivots = [group.pivots[group.base_names.index(n)] for n in names]
    key = fingerprint.digest(
        table_text,
        parameter_set,
        fingerprint.source_digest(SYMBOLIC_MODEL_SOURCE, codegen, base_parameters, __file__),
        length=20,
    )
    target = codegen.CODEGEN_DIR / f"dynamics_{parameter_set.replace('+', '_')}_{key}.py"
    if not target.exists():
        table = robot_description.load_mdh_table(path)
        offsets = tuple(float(row.theta_offset) for row in table)
        name = path.name if hasattr(path, "name") else path
        _write_generated_module(
            target,
            f"Generated by crane_lib.model.dynamics from {name}",
            N_AXES,
            offsets,
            "the table's joint offsets (rad)",
            _regressor_source(table, names, pivots),
            _inertia_source(table, pivots),
        )
    module = codegen.load_module(
        target, f"crane_lib_generated_{parameter_set.replace('+', '_')}_{key}"
    )
    return names, pivots, module, np.array(module.THETA_OFFSETS)


# ---------------------------------------------------------------- any arm description


def arm_key(arm: ArmDescription) -> str:
    """Digest of what an arm's kernels depend on: its name, every joint's exact fixed transform,
    the exact gravity direction and whether it has a gripper axis."""
    joints = [
        ([str(x) for row in joint.rotation for x in row], [str(x) for x in joint.translation])
        for joint in arm.joints
    ]
    gravity = [str(g) for g in arm.gravity_direction]
    return fingerprint.digest(
        arm.name, repr(joints), repr(gravity), arm.gripper is not None, length=20
    )


@lru_cache(maxsize=1)
def _crane_x7_key() -> str:
    from crane_lib.model import arm_description

    return arm_key(arm_description.crane_x7())


def is_crane_x7(arm: ArmDescription | None) -> bool:
    """True for None and for a description whose kernels are the CRANE-X7's (its MDH path)."""
    return arm is None or arm_key(arm) == _crane_x7_key()


def _arm_stem(arm: ArmDescription) -> str:
    return re.sub(r"[^a-z0-9]+", "_", arm.name.lower()).strip("_") or "arm"


@lru_cache(maxsize=1)
def _arm_generator_digest() -> str:
    from crane_lib.model import chain_model

    return fingerprint.source_digest(
        SYMBOLIC_MODEL_SOURCE, chain_model, codegen, base_parameters, __file__
    )


@lru_cache(maxsize=16)
def _arm_grouping_cached(key: str, arm: _Keyed):
    """(standard names, base names, pivots, relations) of an arm, cached on disk as JSON."""
    target = codegen.CODEGEN_DIR / f"grouping_{_arm_stem(arm.arm)}_{key}.json"
    if not target.exists():
        from crane_lib.model import chain_model

        group = chain_model.derive_grouping(arm.arm)
        data = {
            "standard_names": list(group.standard_names),
            "base_names": list(group.base_names),
            "pivots": list(group.pivots),
            "relations": [{s: str(k) for s, k in row.items()} for row in group.relations],
        }
        with atomic_write(target, encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
    data = json.loads(target.read_text(encoding="utf-8"))
    relations = tuple({s: Fraction(k) for s, k in row.items()} for row in data["relations"])
    names = tuple(data["standard_names"]), tuple(data["base_names"]), tuple(data["pivots"])
    return (*names, relations)


class _Keyed:
    """An arm description hashed by its kernel digest (descriptions hold arrays and dicts)."""

    def __init__(self, arm: ArmDescription):
        self.arm, self.key = arm, arm_key(arm)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Keyed) and other.key == self.key


def arm_grouping(arm: ArmDescription):
    """(standard names, base names, pivots, exact relations) of an arm, derived once per
    description and generating code (`chain_model.derive_grouping`), then read from the cache."""
    keyed = _Keyed(arm)
    key = fingerprint.digest(keyed.key, _arm_generator_digest(), length=20)
    return _arm_grouping_cached(key, keyed)


def arm_parameter_set(arm: ArmDescription, parameter_set: str) -> list[str]:
    """Base names of one of the four nested sets for `arm` (the CRANE-X7's membership rule)."""
    return base_parameters.parameter_set_members(arm_grouping(arm)[1], parameter_set)


def _arm_unpack(arm: ArmDescription) -> dict[str, str]:
    unpack = {f"c{j}": f"c[{j - 1}]" for j in range(1, arm.n_joints + 1)}
    unpack.update({f"s{j}": f"s[{j - 1}]" for j in range(1, arm.n_joints + 1)})
    return unpack


def _as_floats(program, stores):
    """The program and stores with every non-integer rational (and integer beyond 2^53) a float.

    A URDF's lengths are decimal fractions whose products the printer would write as integer
    numerator and denominator, larger than numba's 64-bit integers; the float of each exact
    constant is what the MDH path's printer writes for a lone rational."""
    import sympy

    from crane_lib.model.symbolic_model import StraightLineProgram

    def floated(expr):
        constants = [a for a in expr.atoms(sympy.Rational) if not a.is_Integer or abs(a) > 2**53]
        return expr.xreplace({a: sympy.Float(float(a)) for a in constants}) if constants else expr

    assignments = [(symbol, floated(expr)) for symbol, expr in program.assignments]
    return StraightLineProgram(assignments=assignments), [(t, floated(e)) for t, e in stores]


def _arm_regressor_source(arm: ArmDescription, names: list[str], pivots: list[str]) -> str:
    from crane_lib.model import chain_model

    program, entries = chain_model.derive_regressor(arm, columns=pivots)
    column = {p: i for i, p in enumerate(pivots)}
    ordered = sorted(entries.items(), key=lambda e: (e[0][0], column[e[0][1]]))
    stores = [(f"out[{row}, {column[name]}]", expr) for (row, name), expr in ordered]
    program, stores = _as_floats(program, stores)
    unpack = _arm_unpack(arm)
    for kind, argument in (("QP", "qp"), ("QDP", "qdp"), ("SGN", "sgn")):
        unpack.update({f"{kind}{j}": f"{argument}[{j - 1}]" for j in range(1, arm.n_axes + 1)})
    unpack["G"] = "gz"
    header = f"# columns: {', '.join(names)}\n@numba.njit(cache=True)\n"
    arguments = ["c", "s", "qp", "qdp", "sgn", "gz"]
    kernel = codegen.emit_function(
        "regressor_kernel", arguments, unpack, program, stores, exact=False
    )
    pattern = [(row, column[name]) for (row, name), _ in ordered]
    return header + kernel + "\n\n" + _net_torque_source(pattern, arm.n_axes)


def _arm_inertia_source(arm: ArmDescription, pivots: list[str]) -> str:
    import sympy

    from crane_lib.model import chain_model

    program, entries = chain_model.derive_inertia_matrix(arm, columns=pivots)
    beta = {p: sympy.Symbol(f"B{i}") for i, p in enumerate(pivots)}
    sums: dict[tuple[int, int], sympy.Expr] = {}
    for (row, col, name), expr in entries.items():
        sums[(row, col)] = sums.get((row, col), 0) + beta[name] * expr
    stores = [(f"out[{r}, {c}]", e) for (r, c), e in sorted(sums.items())]
    program, stores = _as_floats(program, stores)
    unpack = _arm_unpack(arm)
    unpack.update({f"B{i}": f"b[{i}]" for i in range(len(pivots))})
    return "@numba.njit(cache=True)\n" + codegen.emit_function(
        "inertia_upper_kernel", ["c", "s", "b"], unpack, program, stores, exact=False
    )


@lru_cache(maxsize=16)
def _arm_kernels_cached(parameter_set: str, arm: _Keyed):
    names = arm_parameter_set(arm.arm, parameter_set)
    _, base_names, group_pivots, _ = arm_grouping(arm.arm)
    pivots = [group_pivots[base_names.index(n)] for n in names]
    key = fingerprint.digest(arm.key, parameter_set, _arm_generator_digest(), length=20)
    stem = f"{_arm_stem(arm.arm)}_{parameter_set.replace('+', '_')}_{key}"
    target = codegen.CODEGEN_DIR / f"dynamics_{stem}.py"
    if not target.exists():
        _write_generated_module(
            target,
            f"Generated by crane_lib.model.dynamics from the arm description {arm.arm.name} "
            f"({arm.arm.source})",
            arm.arm.n_axes,
            (0.0,) * arm.arm.n_joints,
            "the chain's transforms hold them",
            _arm_regressor_source(arm.arm, names, pivots),
            _arm_inertia_source(arm.arm, pivots),
        )
    module = codegen.load_module(target, f"crane_lib_generated_{stem}")
    return names, pivots, module, np.array(module.THETA_OFFSETS)


def arm_kernels(parameter_set: str, arm: ArmDescription):
    """(names, pivots, module, offsets) of an arm's kernels generated by the chain recursion."""
    if parameter_set not in PARAMETER_SETS:
        raise KeyError(f"unknown parameter set {parameter_set!r}; expected one of {PARAMETER_SETS}")
    return _arm_kernels_cached(parameter_set, _Keyed(arm))


def _as_samples(array, name: str, width: int, n_axes: int = N_AXES) -> np.ndarray:
    array = np.asarray(array, dtype=float)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] not in (width, n_axes):
        raise InputError(name, f"shape {array.shape}", f"(samples, {n_axes}) or (samples, {width})")
    if not np.all(np.isfinite(array)):
        bad = np.argwhere(~np.isfinite(array))[0]
        raise InputError(
            f"{name} sample {bad[0]}, axis {bad[1] + 1}",
            f"value {array[tuple(bad)]}",
            "a finite number",
        )
    if array.shape[1] != n_axes:
        array = np.hstack([array, np.zeros((array.shape[0], n_axes - array.shape[1]))])
    return array


def gravity_sign(mounting: str | None, own: str) -> tuple[str, float]:
    """(mounting, sign of gz): the arm's own mounting is +g along its gravity direction."""
    if mounting is None or mounting == own:
        return own, 1.0
    if mounting in MOUNTINGS and own in MOUNTINGS:
        return mounting, MOUNTINGS[mounting] * MOUNTINGS[own]
    raise ValueError(
        f"mounting {mounting!r}: expected one of {sorted(MOUNTINGS)} or the arm's {own!r}"
    )


class DynamicModel:
    """Inverse and direct dynamics of the CRANE-X7, or of any `arm`, in one base-parameter set.

    `mounting`: None is the arm's own ("hanging" for the CRANE-X7); the other one flips gravity.
    `general=True` generates the CRANE-X7's kernels by the chain recursion too (tests compare).
    """

    def __init__(
        self,
        parameter_set: str = "reduced",
        mounting: str | None = None,
        table_path=None,
        arm: ArmDescription | None = None,
        general: bool = False,
    ):
        self.arm = arm
        self._chain = arm is not None and (general or not is_crane_x7(arm))
        if not self._chain:
            mounting = "hanging" if mounting is None else mounting
            if mounting not in MOUNTINGS:
                raise ValueError(f"mounting {mounting!r}: expected one of {sorted(MOUNTINGS)}")
            self.parameter_set = parameter_set
            self.mounting = mounting
            self.gravity_z = MOUNTINGS[mounting] * GRAVITY
            table = None if table_path is None else str(table_path)
            self.names, self.pivots, self._module, self._offsets = _kernels(parameter_set, table)
            self.n_joints, self.n_axes = N_LINKS, N_AXES
            self.standard_names = standard_parameter_names()
            self._table_path = table_path
            return
        if table_path is not None:
            raise ValueError("table_path is the CRANE-X7's MDH table: pass either it or an arm")
        self.mounting, sign = gravity_sign(mounting, arm.mounting)
        self.parameter_set = parameter_set
        self.gravity_z = sign * GRAVITY
        self.names, self.pivots, self._module, self._offsets = arm_kernels(parameter_set, arm)
        self.n_joints, self.n_axes = arm.n_joints, arm.n_axes
        self.standard_names = arm.standard_parameter_names()
        self._table_path = None

    @cached_property
    def grouping(self):
        """The exact grouping (`base_parameters.Grouping`, or `chain_model.ChainGrouping`)."""
        if not self._chain:
            return base_parameters.grouping(self._table_path)
        from crane_lib.model import chain_model

        return chain_model.ChainGrouping(*arm_grouping(self.arm))

    @property
    def n_parameters(self) -> int:
        """The number of base parameters."""
        return len(self.names)

    def parameter_vector(self, beta) -> np.ndarray:
        """The parameters as a vector in the model's order, refusing a wrong shape or names.

        Always a new, writable array: numba compiles a kernel once per argument type, and a
        read-only array (np.frombuffer's) is another type, so a read-only β would compile the
        kernels a second time (8 s for the reduced set's inertia rows)."""
        if isinstance(beta, ParameterSet):
            return beta.ordered(self.names, source="base parameters")  # a new array
        beta = np.array(beta, dtype=float)
        if beta.shape != (self.n_parameters,):
            raise InputError(
                "base parameters",
                f"shape {beta.shape}",
                f"({self.n_parameters},) in the order {self.names}",
            )
        if not np.all(np.isfinite(beta)):
            raise InputError(
                f"base parameter {self.names[int(np.argmax(~np.isfinite(beta)))]}",
                "non-finite value",
                "a finite number",
            )
        return beta

    @property
    def regressor_entries(self) -> np.ndarray:
        """(row, column) of the regressor's entries that are not identically zero, (k, 2) int."""
        return np.array(self._module.STORED_ENTRIES, dtype=np.int64)

    def _trig(self, q: np.ndarray):
        angles = q[:, : self.n_joints] + self._offsets
        return np.ascontiguousarray(np.cos(angles)), np.ascontiguousarray(np.sin(angles))

    # ---------------------------------------------------------------- regressor and torques

    def regressor(self, q, qd, qdd, gravity: bool = True) -> np.ndarray:
        """W with tau = W beta, shape (n, n_axes, n_parameters) (8 axes for the CRANE-X7)."""
        q = _as_samples(q, "q", self.n_joints, self.n_axes)
        qd = _as_samples(qd, "qd", self.n_joints, self.n_axes)
        qdd = _as_samples(qdd, "qdd", self.n_joints, self.n_axes)
        if not (len(q) == len(qd) == len(qdd)):
            raise InputError(
                "regressor",
                f"{len(q)}, {len(qd)}, {len(qdd)} samples of q, qd, qdd",
                "equal sample counts",
            )
        out = np.zeros((len(q), self.n_axes, self.n_parameters))
        c, s = self._trig(q)
        self._module.regressor_batch(
            c, s, qd, qdd, np.sign(qd), self.gravity_z if gravity else 0.0, out
        )
        return out

    def inverse_dynamics(
        self, q, qd, qdd, beta, gravity: bool = True, chunk: int = DEFAULT_CHUNK
    ) -> np.ndarray:
        """The torque τ = W(q, q̇, q̈)β (N·m), without gravity when `gravity` is false."""
        beta = self.parameter_vector(beta)
        q = _as_samples(q, "q", self.n_joints, self.n_axes)
        qd = _as_samples(qd, "qd", self.n_joints, self.n_axes)
        qdd = _as_samples(qdd, "qdd", self.n_joints, self.n_axes)
        tau = np.empty((len(q), self.n_axes))
        for start in range(0, len(q), chunk):
            sl = slice(start, start + chunk)
            tau[sl] = self.regressor(q[sl], qd[sl], qdd[sl], gravity=gravity) @ beta
        return tau

    def gravity_torque(self, q, beta) -> np.ndarray:
        """The gravity torque g(q) = W(q, 0, 0)β (N·m)."""
        zeros = np.zeros_like(_as_samples(q, "q", self.n_joints, self.n_axes))
        return self.inverse_dynamics(q, zeros, zeros, beta)

    def friction_torque(self, qd, beta) -> np.ndarray:
        """Viscous (and, where the set carries them, Coulomb) friction torque."""
        beta = self.parameter_vector(beta)
        qd = _as_samples(qd, "qd", self.n_joints, self.n_axes)
        tau = np.zeros_like(qd)
        for i, name in enumerate(self.names):
            kind = name.rstrip("0123456789")
            axis = int(name[len(kind) :]) - 1
            if kind == "FV":
                tau[:, axis] += beta[i] * qd[:, axis]
            elif kind == "FS":
                tau[:, axis] += beta[i] * np.sign(qd[:, axis])
        return tau

    def coriolis_torque(self, q, qd, beta) -> np.ndarray:
        """Coriolis and centrifugal torque C(theta, dtheta) dtheta."""
        zeros = np.zeros_like(_as_samples(q, "q", self.n_joints, self.n_axes))
        return self.inverse_dynamics(q, qd, zeros, beta, gravity=False) - self.friction_torque(
            qd, beta
        )

    # ---------------------------------------------------------------- inertia matrix

    def inertia_matrix(self, q, beta) -> np.ndarray:
        """M(theta; beta), shape (n, n_axes, n_axes); the gripper axis is decoupled (M = IA)."""
        beta = self.parameter_vector(beta)
        q = _as_samples(q, "q", self.n_joints, self.n_axes)
        out = np.zeros((len(q), self.n_axes, self.n_axes))
        self._module.inertia_batch(*self._trig(q), beta, out)
        return out

    def arm_min_eigenvalue(self, q, beta, exact_order: bool = True) -> np.ndarray:
        """Smallest eigenvalue of the arm block of M (7x7 for the CRANE-X7) at each configuration
        (the audit's lambda_min).

        M is built and decomposed pose by pose, so memory stays O(poses) however many there are.
        `exact_order` (the default): every value is numpy's eigvalsh of its block, bit for bit
        (LAPACK's dsytd2 and dsterf called from the compiled loop). A ranking of many poses needs
        that: the rescue's worst violators and the projection's Theta_c are chosen by the order
        of values far from zero, where rounding decides between the audit grid's tied poses
        (theta = -180 and +180 deg). `exact_order=False`, for an audit's verdict: a compiled
        routine without LAPACK (Householder tridiagonalization, then Laguerre's iteration inside a
        Sturm-count bracket), within about n^2 eps ||A||_2 of the exact eigenvalue as eigvalsh's
        is (the two agree to 1e-10 ||A||_2; ||A||_2 = max |eigenvalue|). Where the difference
        could decide something, at the 64 smallest values (plus those within 1e-12 n max|A_ij| of
        the 64th: every pose an audit's worst poses can come from) and at values that close to
        zero (the verdict's sign), the value is eigvalsh's, so an audit's verdict, violations,
        worst poses and their lambda_min are those of the exact audit.
        """
        beta = self.parameter_vector(beta)
        q = np.ascontiguousarray(_as_samples(q, "q", self.n_joints, self.n_axes))
        n = self.n_joints
        result, scale = np.empty(len(q)), np.empty(len(q))
        self._module.arm_min_eigenvalue_batch(q, self._offsets, beta, n, exact_order, result, scale)
        if np.isnan(result).any():
            pose = int(np.argmax(np.isnan(result)))
            raise np.linalg.LinAlgError(
                f"arm inertia matrix at pose {pose}: not finite, or lambda_min did not converge"
            )
        if not exact_order:
            # within 2 margins of zero or of the K-th smallest value, the compiled value and
            # eigvalsh's may order differently: those poses (a few of an audit's) take eigvalsh's
            margin = EIGVALSH_MARGIN * n * scale.max(initial=0.0)
            near = np.abs(result) <= 2.0 * margin
            if len(result) > EIGVALSH_SMALLEST:
                kth = np.partition(result, EIGVALSH_SMALLEST - 1)[EIGVALSH_SMALLEST - 1]
                near |= result <= kth + 2.0 * margin
            else:
                near[:] = True
            if near.any():
                blocks = self.inertia_matrix(q[near], beta)[:, :n, :n]
                result[near] = np.linalg.eigvalsh(blocks)[:, 0]
        return result

    def direct_dynamics(self, q, qd, tau, beta) -> np.ndarray:
        """ddtheta = M^-1 (tau - C dtheta - g - friction), vectorized over samples."""
        beta = self.parameter_vector(beta)
        q = _as_samples(q, "q", self.n_joints, self.n_axes)
        qd = _as_samples(qd, "qd", self.n_joints, self.n_axes)
        tau = _as_samples(tau, "tau", self.n_axes, self.n_axes)
        bias = self.inverse_dynamics(q, qd, np.zeros_like(q), beta)
        mass = self.inertia_matrix(q, beta)
        return np.linalg.solve(mass, (tau - bias)[:, :, None])[:, :, 0]

    # ---------------------------------------------------------------- parameters

    def base_from_standard(self, standard) -> ParameterSet:
        """Map standard parameters (all the arm's, by name: 94 for the CRANE-X7) to base ones."""
        if isinstance(standard, ParameterSet):
            standard = dict(zip(standard.names, standard.values))
        names = self.standard_names
        missing = [n for n in names if n not in standard]
        unknown = [n for n in standard if n not in set(names)]
        if missing or unknown:
            raise InputError(
                "standard parameters",
                f"missing {missing}; unknown {unknown}",
                f"the {len(names)} names {names}",
            )
        return ParameterSet(
            self.names, self.base_matrix() @ np.array([standard[n] for n in names], dtype=float)
        )

    def base_matrix(self) -> np.ndarray:
        """K with beta = K phi for this set (rows: self.names; columns: self.standard_names)."""
        return base_matrix(self.parameter_set, self.arm if self._chain else None)


def base_matrix(parameter_set: str = "reduced", arm: ArmDescription | None = None) -> np.ndarray:
    """K with beta = K phi of a set (rows: its base names; columns: the arm's standard names)."""
    if is_crane_x7(arm):
        return _crane_x7_base_matrix(parameter_set)
    return _arm_base_matrix(parameter_set, _Keyed(arm))


@lru_cache(maxsize=8)
def _arm_base_matrix(parameter_set: str, arm: _Keyed) -> np.ndarray:
    standard, base_names, _, relations = arm_grouping(arm.arm)
    names = arm_parameter_set(arm.arm, parameter_set)
    matrix = np.zeros((len(names), len(standard)))
    for i, name in enumerate(names):
        for s, coefficient in relations[base_names.index(name)].items():
            matrix[i, standard.index(s)] = float(coefficient)
    return matrix


@lru_cache(maxsize=8)
def _crane_x7_base_matrix(parameter_set: str = "reduced") -> np.ndarray:
    group = base_parameters.grouping()
    numeric = group.numeric_coefficients()
    standard = list(group.standard_names)
    names = group.parameter_set(parameter_set)
    matrix = np.zeros((len(names), len(standard)))
    for i, name in enumerate(names):
        for s, coefficient in numeric[group.base_names.index(name)].items():
            matrix[i, standard.index(s)] = float(coefficient)
    return matrix


def model(
    parameter_set: str = "reduced", mounting: str | None = None, arm: ArmDescription | None = None
) -> DynamicModel:
    """The shared DynamicModel of a set, mounting and arm (None: the CRANE-X7), built once."""
    if is_crane_x7(arm):
        return _crane_x7_model(parameter_set, "hanging" if mounting is None else mounting)
    return _arm_model(parameter_set, gravity_sign(mounting, arm.mounting)[0], _Keyed(arm))


@lru_cache(maxsize=8)
def _crane_x7_model(parameter_set: str, mounting: str) -> DynamicModel:
    return DynamicModel(parameter_set, mounting)


@lru_cache(maxsize=16)
def _arm_model(parameter_set: str, mounting: str, arm: _Keyed) -> DynamicModel:
    return DynamicModel(parameter_set, mounting, arm=arm.arm)


def regressor(
    q,
    qd,
    qdd,
    parameter_set: str = "reduced",
    mounting: str | None = None,
    arm: ArmDescription | None = None,
) -> np.ndarray:
    """W(theta, dtheta, ddtheta) of a base-parameter set, shape (n, n_axes, n_parameters)."""
    return model(parameter_set, mounting, arm).regressor(q, qd, qdd)


# ---------------------------------------------------------------- numba loops over the kernels

# the templates' marker line, replaced by the import of the generated kernels
KERNEL_MARKER = (
    "regressor_kernel = inertia_kernel = inertia_upper_kernel = net_torque_kernel = None"
    "  # @@KERNELS@@"
)


def bind_template(template, parameter_set: str, *dependencies, arm: ArmDescription | None = None):
    """Load a numba module template (the twin's plant loop, CLIE's simulator) with its marker line
    replaced by an import of the generated kernels of `parameter_set` (of `arm`; None: the
    CRANE-X7).

    The bound module is written once to the codegen cache under a name that hashes its text
    and the source of every module it calls (`dependencies`), so numba, which does not notice
    a change in a called module, caches the compiled loop per version of all of them."""
    kernels = model(parameter_set, arm=arm)._module
    text = Path(template).read_text(encoding="utf-8")
    if KERNEL_MARKER not in text:
        raise RuntimeError(f"{template}: kernel marker line not found")
    source = text.replace(
        KERNEL_MARKER,
        f"from {kernels.__name__} import "
        "regressor_kernel, inertia_kernel, inertia_upper_kernel, net_torque_kernel",
    )
    key = fingerprint.digest(
        source, fingerprint.source_digest(*dependencies), kernels.__name__, length=20
    )
    stem = Path(template).stem
    target = codegen.CODEGEN_DIR / f"{Path(template).parent.name}_{stem}_{key}.py"
    if not target.exists():
        with atomic_write(target, encoding="utf-8") as handle:
            handle.write(source)
    return codegen.load_module(target, f"crane_lib_{Path(template).parent.name}_{stem}_{key}")


# the parameter sets of the other shipped arms that the book and the suite evaluate
OTHER_ARM_SETS = ("reduced", "full")


def warm_kernels(parameter_set: str, arm_name: str = "crane_x7") -> str:
    """Compile one set's kernels of one shipped arm (or load them from numba's cache): `make
    model` runs this before any parallel user, so that workers never compile the same kernel at
    once."""
    arm = None  # the CRANE-X7
    if arm_name != "crane_x7":  # imported here: the description loads pandas
        from crane_lib.model.arm_description import load_arm

        arm = load_arm(arm_name)
    warm = model(parameter_set, None, arm)
    zeros = np.zeros((1, warm.n_axes))
    warm.regressor(zeros, zeros, zeros)
    warm.arm_min_eigenvalue(zeros, np.ones(warm.n_parameters))
    # one pose is within the margin of the smallest: this also compiles the inertia rows
    warm.arm_min_eigenvalue(zeros, np.ones(warm.n_parameters), exact_order=False)
    return f"{arm_name} {parameter_set}"


if __name__ == "__main__":
    import multiprocessing
    import time
    from concurrent.futures import ProcessPoolExecutor

    from crane_lib.model.arm_description import ARMS

    start = time.perf_counter()
    # numba compiles one function on one core: the sets compile side by side (spawned, so no
    # worker inherits numba's state). The other shipped arms' kernels need nothing of the
    # CRANE-X7's: they go first, while this process derives the CRANE-X7's grouping once for
    # the workers (10 s on one core, when the second core idled); without them the suite's
    # workers compiled an arm's kernels at once, up to three times over
    other_arm_names = [name for name in ARMS if name != "crane_x7"]
    workers = max(1, min(len(PARAMETER_SETS), os.cpu_count() or 1))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        other_arms = [
            pool.submit(warm_kernels, parameter_set, name)
            for name in other_arm_names
            for parameter_set in OTHER_ARM_SETS
        ]
        base_names = base_parameters.grouping(None).base_names
        # the largest set first, since a set's compile time grows with its size (2 cores, empty
        # cache: 55-57 s when the two largest shared a process, 48-50 s so)
        largest_first = sorted(
            PARAMETER_SETS,
            key=lambda s: -len(base_parameters.parameter_set_members(base_names, s)),
        )
        list(pool.map(warm_kernels, largest_first))
        for done in other_arms:
            done.result()
    print(
        f"dynamic model kernels ready ({', '.join(PARAMETER_SETS)}; "
        f"{', '.join(other_arm_names)}: {', '.join(OTHER_ARM_SETS)}) in "
        f"{time.perf_counter() - start:.1f} s ({workers} processes); cache {codegen.CODEGEN_DIR}"
    )
