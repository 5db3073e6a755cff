"""Weighted inverse-dynamics least squares beside OLS: error-covariance WLS and the dual-metric
WLS of Yang & Hatton ("Coordinate-Independent Robot Model Identification", arXiv 2603.14656).

All three estimators fit the same model, tau_k = Y_k beta + e_k with the 39-column IDIM
regressor Y_k (8 x p per sample, friction and rotor columns included), and return a
`WeightedFit` (estimate, residual, solver status, time, samples used):

ols_fit               the Euclidean residual sum_k |r_k|^2, r_k = Y_k beta - tau_k (QR, `ols.ols`)
error_covariance_wls  OLS first, then the per-axis residual variance sigma_j^2 (mean square of
                      axis j's OLS residual) and least squares on the rows divided by sigma_j
                      (the WLS of Sec. II-B1, W = diag(sigma_j^-2); QR again)
dual_metric_wls       sum_k r_k(beta)^T M(theta_k; beta)^-1 r_k(beta): the residual is a covector
                      (a generalized force) and is measured with the dual metric M^-1 of the
                      kinetic-energy metric M (Sec. III-A). M is linear in beta,
                      M(theta; beta) = sum_i beta_i B_i(theta) (`projection.inertia_basis`, the
                      basis the SDP projection and the rescue use; the rotor inertias IA3..IA7
                      sit in its arm block), so the problem is the convex SDP (26) by Schur
                      complements:

                          minimize sum_k t_k  s.t.  [[M(theta_k; beta), r_k(beta)], [r_k(beta)^T,
                          t_k]] >= 0

                      The hand axis is decoupled in M (M[7, 7] = IA8 at every pose, M[7, :7] = 0),
                      so its share of the sum, |r8|^2 / IA8, is one rotated second-order cone and
                      each sample's LMI is the 8 x 8 one of the seven arm axes: the same objective
                      as the 9 x 9 LMI, exactly, with smaller cones.

                      Each sample's LMI also forces M(theta_k; beta) >= 0 at the data: the
                      estimate is positive semidefinite at every visited configuration by
                      construction. Options: M(theta; beta) >= eps I on a pose set (the rescue's
                      Theta_r, passed in by the caller), bounds on named parameters, evenly spaced
                      subsampling of the record.

Coordinates. A change of joint coordinates q' = phi(q) with a diagonal Jacobian J = dq'/dq (a
rescaling such as degrees, a gear-side chart, or a configuration-dependent chart) changes the
data and the model but not beta: the torque covector becomes tau' = J^-1 tau, the regressor
rows Y' = J^-1 Y, and the metric M' = J^-1 M J^-1. The Euclidean residual |r'|^2 = |J^-1 r|^2
changes with J; the dual-metric residual r'^T M'^-1 r' = r^T M^-1 r does not. The `chart`
argument of every estimator is J, shape (8,) (constant) or (n, 8) (per sample).

The SDP is handed to Clarabel through its own Python interface (A x + s = b, s in a product of
PSD-triangle cones), built as one sparse matrix: thousands of small LMIs, which cvxpy would
canonicalize one by one, are assembled here in a few vectorized operations (register "beyond").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import clarabel
import numpy as np
import scipy.sparse as sp

from crane_lib.arithmetic import CLARABEL_OPTIONS
from crane_lib.constants import N_ARM_JOINTS, N_AXES
from crane_lib.identification.ols import IdentificationError, ols, stack
from crane_lib.identification.projection import MARGIN_ABSOLUTE_TOLERANCE, inertia_basis
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import ParameterSet

METHODS = ("ols", "wls", "dual-metric")
# Clarabel's "AlmostSolved" is accepted only after our own check of the LMIs it was asked for
ACCEPTED_STATUSES = ("Solved", "AlmostSolved")
SQRT2 = float(np.sqrt(2.0))
LINK_ROW_SCALE = 1e3  # rows of the link pseudo-inertia LMIs, scaled (see _consistency_rows)


class DualMetricFailure(IdentificationError):
    """The dual-metric SDP was not solved (solver status, or an infeasible constraint set); the
    message carries the status and the condition (trajectory, interval, option set)."""

    def __init__(self, status: str, condition: str, detail: str = ""):
        self.status = status
        self.condition = condition
        super().__init__(
            f"dual-metric WLS on {condition}: solver status {status!r}"
            + (f"; {detail}" if detail else "")
        )


@dataclass
class WeightedFit:
    """One estimate, OLS's sibling: what `ols.OLSResult` gives, plus how it was solved.

    method        "ols", "wls" or "dual-metric" (with "+Theta_r" when poses were constrained)
    parameters    the estimate (standard errors only where the method defines them: OLS, WLS)
    residual      Y beta - tau in the fit's chart, stacked over samples (8 n,), N·m in joint radians
    status        the solver's exit ("QR" for the least-squares methods)
    solve_time_s  wall time of the fit (assembly, solver, checks), s
    n_samples     samples used (after subsampling); n_rows = 8 n_samples
    info          method-specific: weights, objective, rounds, poses constrained, lambda_min at the
                  data ...
    """

    method: str
    parameters: ParameterSet
    residual: np.ndarray
    status: str
    solve_time_s: float
    n_samples: int
    n_rows: int
    info: dict = field(default_factory=dict)

    @property
    def values(self) -> np.ndarray:
        """The estimate's values."""
        return self.parameters.values

    @property
    def residual_rms(self) -> float:
        """The RMS of the residual (N·m)."""
        return float(np.sqrt(np.mean(self.residual**2)))


@dataclass
class Consistency:
    """Physical consistency behind the base parameters, as constraints of the dual-metric SDP:
    beta = K phi for some standard-parameter vector phi (K the model's base matrix) whose link
    pseudo-inertias satisfy J_j(phi) >= margin I and whose listed entries (rotor inertias,
    friction) are >= 0. Built by `export.consistent.consistency_constraints` (the pseudo-inertia
    construction of the export), passed in so that this stage imports nothing downstream.

    base_matrix  (p, q): beta = K phi
    lmis         per link: (indices of its ten parameters in phi, (10, 4, 4) basis of J)
    nonnegative  indices in phi of the entries >= 0
    margin       kg·m^2 (SI, lengths in metres)
    scale        (q,) typical size of each phi entry; the solver works on phi / scale"""

    base_matrix: np.ndarray
    lmis: list
    nonnegative: np.ndarray
    margin: float = 0.0
    scale: np.ndarray | None = None

    @property
    def phi_scale(self) -> np.ndarray:
        """The scale of each coordinate φ (ones when unscaled)."""
        q = np.asarray(self.base_matrix).shape[1]
        return np.ones(q) if self.scale is None else np.asarray(self.scale, dtype=float)


# ----------------------------------------------------------------------------- data and charts


@dataclass
class IDIMData:
    """The samples one fit sees: regressor (n, 8, p), torque (n, 8), configurations (n, 8), all in
    the chart J (n, 8) (ones for the model's own joint radians), and which samples of the record."""

    regressor: np.ndarray
    torque: np.ndarray
    theta: np.ndarray
    jacobian: np.ndarray
    samples: np.ndarray


def subsample(n: int, max_samples: int | None) -> np.ndarray:
    """Indices of at most `max_samples` samples evenly spaced over a record of n (all when None)."""
    if max_samples is None or max_samples >= n:
        return np.arange(n)
    if max_samples < 1:
        raise ValueError(f"max_samples {max_samples}: expected a positive count")
    return np.unique(np.round(np.linspace(0, n - 1, int(max_samples))).astype(int))


def idim_data(bundle, model: DynamicModel, chart=None, max_samples: int | None = None) -> IDIMData:
    """The regressor and torque of `bundle` (evenly subsampled to `max_samples`) in the chart J."""
    keep = subsample(len(bundle.theta), max_samples)
    theta, dtheta, ddtheta = (
        np.asarray(a, dtype=float)[keep] for a in (bundle.theta, bundle.dtheta, bundle.ddtheta)
    )
    regressor = model.regressor(theta, dtheta, ddtheta)
    torque = np.asarray(bundle.tau, dtype=float)[keep]
    jac = chart_jacobian(chart, len(keep), keep, model.n_axes)
    # tau' = J^-1 tau and Y' = J^-1 Y: a force covector's components scale inversely to the
    # coordinate
    return IDIMData(regressor / jac[:, :, None], torque / jac, theta, jac, keep)


def chart_jacobian(
    chart, n: int, keep: np.ndarray | None = None, n_axes: int = N_AXES
) -> np.ndarray:
    """J = dq'/dq as (n, 8): `chart` None (identity), (8,) constant, or (n_record, 8) per sample.
    Another arm (`n_axes` other than the CRANE-X7's 8) has the identity chart only."""
    if chart is None:
        return np.ones((n, n_axes))
    jac = np.asarray(chart, dtype=float)
    if jac.shape == (N_AXES,):
        jac = np.broadcast_to(jac, (n, N_AXES))
    elif (
        jac.ndim == 2
        and jac.shape[1] == N_AXES
        and keep is not None
        and len(jac) > int(np.max(keep))
    ):
        jac = jac[keep]
    if jac.shape != (n, N_AXES) or not np.all(np.isfinite(jac)) or np.any(jac == 0):
        raise ValueError(
            f"chart Jacobian of shape {np.shape(chart)}: expected finite, nonzero (8,) or one row "
            "of 8 per sample"
        )
    return np.array(jac)


def degrees_chart(axes=(1, 2, 3, 4, 5, 6, 7, 8)) -> np.ndarray:
    """J of measuring the listed axes (1-based) in degrees instead of radians."""
    jac = np.ones(N_AXES)
    jac[[a - 1 for a in axes]] = 180.0 / np.pi
    return jac


def warped_chart(theta: np.ndarray, amplitude: float = 0.5) -> np.ndarray:
    """J of the configuration-dependent chart q'_j = q_j + amplitude sin(q_j) on every axis
    (monotone for amplitude < 1): J = 1 + amplitude cos(q), (n, 8)."""
    if not 0 <= amplitude < 1:
        raise ValueError(
            f"amplitude {amplitude}: expected 0 <= a < 1 so that the chart is invertible"
        )
    return 1.0 + amplitude * np.cos(np.asarray(theta, dtype=float)[:, :N_AXES])


def _condition_text(bundle, condition: str | None) -> str:
    if condition:
        return condition
    provenance = getattr(bundle, "provenance", {}) or {}
    source = provenance.get("log") or provenance.get("source") or "a bundle"
    return f"{source} at {float(getattr(bundle, 'ts', float('nan'))) * 1e3:g} ms"


# ----------------------------------------------------------------------------- least squares


def ols_fit(
    bundle,
    model: DynamicModel,
    chart=None,
    max_samples: int | None = None,
    data: IDIMData | None = None,
) -> WeightedFit:
    """OLS (QR) on the bundle in the chart J, as a WeightedFit."""
    start = time.perf_counter()
    data = idim_data(bundle, model, chart, max_samples) if data is None else data
    w_all, y = stack(data.regressor, data.torque)
    result = ols(w_all, y, model.names)
    return WeightedFit(
        "ols",
        result.parameters,
        -result.residual,
        "QR",
        time.perf_counter() - start,
        len(data.samples),
        w_all.shape[0],
        {"kappa": result.kappa},
    )


def error_covariance_wls(
    bundle,
    model: DynamicModel,
    chart=None,
    max_samples: int | None = None,
    data: IDIMData | None = None,
) -> WeightedFit:
    """Error-covariance WLS: an OLS pass, sigma_j^2 = mean square of axis j's OLS residual, then
    least squares with every row of axis j divided by sigma_j (QR on the weighted stack).

    The per-axis weights undo any constant rescaling of an axis (its residual and its sigma scale
    together), not a configuration-dependent chart. Standard errors are those of the weighted
    fit."""
    start = time.perf_counter()
    data = idim_data(bundle, model, chart, max_samples) if data is None else data
    w_all, y = stack(data.regressor, data.torque)
    first = ols(w_all, y, model.names)
    sigma = np.sqrt(np.mean(first.residual.reshape(-1, N_AXES) ** 2, axis=0))
    if np.any(sigma <= 0):
        raise IdentificationError(
            f"axis {int(np.argmin(sigma)) + 1} has a zero OLS residual: no error covariance to "
            "weight by"
        )
    weights = np.tile(1.0 / sigma, len(data.samples))
    second = ols(w_all * weights[:, None], y * weights, model.names)
    beta = second.parameters.values
    residual = w_all @ beta - y
    return WeightedFit(
        "wls",
        second.parameters,
        residual,
        "QR",
        time.perf_counter() - start,
        len(data.samples),
        w_all.shape[0],
        {"sigma": sigma.tolist(), "kappa_weighted": second.kappa},
    )


# ----------------------------------------------------------------------------- dual-metric WLS


def _svec_pattern(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clarabel's PSD-triangle order: the upper triangle column by column, off-diagonals x
    sqrt(2)."""
    rows, cols = zip(*[(i, j) for j in range(size) for i in range(j + 1)])
    rows, cols = np.array(rows), np.array(cols)
    return rows, cols, np.where(rows == cols, 1.0, SQRT2)


def _coo_block(
    values: np.ndarray, row0: int, col0: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nonzeros of a dense (k, L, c) block stacked as rows row0 + k L + l, columns col0 + c."""
    k, length, ncol = values.shape
    idx = np.nonzero(values)
    return row0 + idx[0] * length + idx[1], col0 + idx[2], values[idx]


def _sample_cones(
    data: IDIMData, model: DynamicModel, scale: np.ndarray, row0: int, chunk: int = 512
):
    """A and b rows of the per-sample LMIs [[M'_k, r'_k], [r'_k^T, t_k]] >= 0 of the seven arm axes
    (size 8), in the chart. t_k is variable p + k."""
    n, p = len(data.samples), model.n_parameters
    size = N_ARM_JOINTS + 1
    rows, cols, weight = _svec_pattern(size)
    length = len(rows)
    off = np.flatnonzero(cols == N_ARM_JOINTS)[
        :N_ARM_JOINTS
    ]  # entries (a, 7), a < 7, in svec order
    parts_r, parts_c, parts_v = [], [], []
    b = np.zeros(n * length)
    for start in range(0, n, chunk):
        sl = slice(start, min(start + chunk, n))
        jac = data.jacobian[sl, :N_ARM_JOINTS]
        basis = inertia_basis(model, data.theta[sl])  # (k, p, 7, 7), the arm block
        basis = basis / jac[:, None, :, None] / jac[:, None, None, :]  # M' = J^-1 M J^-1
        gen = np.zeros((len(basis), p, size, size))
        gen[:, :, :N_ARM_JOINTS, :N_ARM_JOINTS] = basis
        column = np.transpose(
            data.regressor[sl, :N_ARM_JOINTS], (0, 2, 1)
        )  # (k, p, 7): Y'_k's column i
        gen[:, :, :N_ARM_JOINTS, N_ARM_JOINTS] = column
        gen[:, :, N_ARM_JOINTS, :N_ARM_JOINTS] = column
        svec = gen[:, :, rows, cols] * weight * scale[None, :, None]  # (k, p, L), x scaled to z
        r, c, v = _coo_block(-np.transpose(svec, (0, 2, 1)), row0 + start * length, 0)
        parts_r.append(r), parts_c.append(c), parts_v.append(v)
        tau = data.torque[sl, :N_ARM_JOINTS]  # offset [[0, -tau'], [-tau'^T, 0]]
        b_block = np.zeros((len(tau), length))
        b_block[:, off] = -tau[:, rows[off]] * SQRT2
        b[start * length : (start + len(tau)) * length] = b_block.ravel()
    # t_k enters entry (7, 7), the last of each cone
    t_rows = row0 + np.arange(n) * length + (length - 1)
    parts_r.append(t_rows), parts_c.append(p + np.arange(n)), parts_v.append(-np.ones(n))
    return (
        np.concatenate(parts_r),
        np.concatenate(parts_c),
        np.concatenate(parts_v),
        b,
        [clarabel.PSDTriangleConeT(size)] * n,
    )


def _hand_cone(data: IDIMData, model: DynamicModel, scale: np.ndarray, row0: int):
    """The hand axis, decoupled in M (M[7, 7] = IA8 at every pose): its dual-metric term is
    sum_k r8_k^2 / IA8 = |r8|^2 / IA8 <= T, one rotated second-order cone |r8|^2 <= IA8 T, i.e.
    |((IA8 - T) / 2, r8)| <= (IA8 + T) / 2. T is variable p + n. The term is the same in every
    chart (r8' = r8 / J8, IA8' = IA8 / J8^2), so it is built in the model's own radians."""
    n, p = len(data.samples), model.n_parameters
    hand = N_AXES - 1
    jac = data.jacobian[:, hand]
    y8 = (
        data.regressor[:, hand, :] * jac[:, None] * scale[None, :]
    )  # (n, p), back in radians, z-scaled
    tau8 = data.torque[:, hand] * jac
    ia8 = (
        np.array([model.inertia_matrix(data.theta[:1], unit)[0, hand, hand] for unit in np.eye(p)])
        * scale
    )  # (p,)
    # s = b - A x: s0 = (IA8 + T) / 2, s1 = (IA8 - T) / 2, s_{2+k} = r8_k = y8_k z - tau8_k
    dense = np.zeros((n + 2, p + n + 1))
    dense[0, :p], dense[0, p + n] = -ia8 / 2, -0.5
    dense[1, :p], dense[1, p + n] = -ia8 / 2, 0.5
    dense[2:, :p] = -y8
    a = sp.coo_matrix(dense)
    b = np.concatenate([[0.0, 0.0], -tau8])
    return row0 + a.row, a.col, a.data, b, [clarabel.SecondOrderConeT(n + 2)]


def _pose_cones(
    model: DynamicModel, poses: np.ndarray, epsilon: float, scale: np.ndarray, row0: int
):
    """A and b rows of M_arm(theta_j; beta) - eps I >= 0 (7x7) for each pose (joint radians: the
    audit's LMI, the same in every chart since J only rescales it by a congruence)."""
    rows, cols, weight = _svec_pattern(N_ARM_JOINTS)
    basis = inertia_basis(model, poses)  # (m, p, 7, 7)
    svec = basis[:, :, rows, cols] * weight * scale[None, :, None]
    r, c, v = _coo_block(-np.transpose(svec, (0, 2, 1)), row0, 0)
    b = np.tile(np.where(rows == cols, -epsilon, 0.0), len(poses))
    return r, c, v, b, [clarabel.PSDTriangleConeT(N_ARM_JOINTS)] * len(poses)


def _bound_rows(model: DynamicModel, bounds: dict, scale: np.ndarray, row0: int):
    """lo <= beta_i <= hi for the named parameters, as nonnegative-cone rows."""
    r, c, v, b = [], [], [], []
    for name, (lo, hi) in bounds.items():
        if name not in model.names:
            raise ValueError(
                f"bound on {name!r}: not a parameter of the model ({model.parameter_set})"
            )
        i = model.names.index(name)
        if hi is not None:  # s z_i + s = hi
            r.append(row0 + len(b)), c.append(i), v.append(scale[i]), b.append(float(hi))
        if lo is not None:  # -s z_i + s = -lo
            r.append(row0 + len(b)), c.append(i), v.append(-scale[i]), b.append(-float(lo))
    cones = [clarabel.NonnegativeConeT(len(b))] if b else []
    return (
        np.array(r, dtype=int),
        np.array(c, dtype=int),
        np.array(v, dtype=float),
        np.array(b, dtype=float),
        cones,
    )


def _consistency_rows(consistency: Consistency, scale: np.ndarray, col0: int, row0: int):
    """beta - K phi = 0 (zero cone), J_j(phi) - margin I >= 0 (4x4 PSD), phi_k >= 0; phi is
    variables col0 .. col0 + q."""
    phi_scale = consistency.phi_scale  # variables psi = phi / phi_scale
    k = np.asarray(consistency.base_matrix, dtype=float) * phi_scale[None, :]
    p, q = k.shape
    r, c, v, b, cones = [], [], [], [], []
    eq = np.hstack([np.diag(scale), -k])  # A x = 0 on (z, phi)
    idx = np.nonzero(eq)
    (
        r.append(row0 + idx[0]),
        c.append(np.where(idx[1] < p, idx[1], col0 + idx[1] - p)),
        v.append(eq[idx]),
        b.append(np.zeros(p)),
    )
    cones.append(clarabel.ZeroConeT(p))
    row = row0 + p
    rows4, cols4, weight4 = _svec_pattern(4)
    for indices, basis in consistency.lmis:
        # the cone is scaled by LINK_ROW_SCALE (the same set): the solver's feasibility tolerance is
        # absolute on the rows, and a link's J is small beside the residual cones' entries
        svec = (
            np.asarray(basis)[:, rows4, cols4]
            * weight4
            * phi_scale[np.asarray(indices)][:, None]
            * LINK_ROW_SCALE
        )
        nz = np.nonzero(svec)
        r.append(row + nz[1]), c.append(col0 + np.asarray(indices)[nz[0]]), v.append(-svec[nz])
        b.append(np.where(rows4 == cols4, -consistency.margin * LINK_ROW_SCALE, 0.0))
        cones.append(clarabel.PSDTriangleConeT(4))
        row += len(rows4)
    nonneg = np.asarray(consistency.nonnegative, dtype=int)
    if len(nonneg):
        (
            r.append(row + np.arange(len(nonneg))),
            c.append(col0 + nonneg),
            v.append(-phi_scale[nonneg]),
            b.append(np.zeros(len(nonneg))),
        )
        cones.append(clarabel.NonnegativeConeT(len(nonneg)))
    return np.concatenate(r), np.concatenate(c), np.concatenate(v), np.concatenate(b), cones


def _solve(
    data,
    model,
    scale,
    poses,
    epsilon,
    bounds,
    settings: dict,
    consistency: Consistency | None = None,
):
    n, p = len(data.samples), model.n_parameters
    q = 0 if consistency is None else np.asarray(consistency.base_matrix).shape[1]
    pieces, cones, row0 = [], [], 0
    for build in (
        lambda r0: (
            None if consistency is None else _consistency_rows(consistency, scale, p + n + 1, r0)
        ),
        lambda r0: _bound_rows(model, bounds or {}, scale, r0),
        lambda r0: _sample_cones(data, model, scale, r0),
        lambda r0: _hand_cone(data, model, scale, r0),
        lambda r0: (
            _pose_cones(model, poses, epsilon, scale, r0)
            if poses is not None and len(poses)
            else None
        ),
    ):
        piece = build(row0)
        if piece is None:
            continue
        r, c, v, b, k = piece
        pieces.append((r, c, v, b))
        cones.extend(k)
        row0 += len(b)
    a = sp.csc_matrix(
        (
            np.concatenate([x[2] for x in pieces]),
            (np.concatenate([x[0] for x in pieces]), np.concatenate([x[1] for x in pieces])),
        ),
        shape=(row0, p + n + 1 + q),
    )
    b = np.concatenate([x[3] for x in pieces])
    cost = np.concatenate(
        [np.zeros(p), np.ones(n + 1), np.zeros(q)]
    )  # sum_k t_k (arm) + T (hand); phi free
    opts = clarabel.DefaultSettings()
    opts.verbose = False
    for key, value in {**CLARABEL_OPTIONS, **settings}.items():
        setattr(opts, key, value)
    solver = clarabel.DefaultSolver(
        sp.csc_matrix((p + n + 1 + q, p + n + 1 + q)), cost, a, b, cones, opts
    )
    solution = solver.solve()
    status = str(solution.status)
    x = np.asarray(solution.x, dtype=float)
    phi = x[p + n + 1 :] * (consistency.phi_scale if consistency is not None else 1.0)
    return status, x[:p] * scale, x[p : p + n + 1], phi, solution


def dual_metric_objective(model: DynamicModel, beta, data: IDIMData) -> np.ndarray:
    """r_k^T M'_k^-1 r_k per sample, computed directly (numpy solve), in the data's chart."""
    mass = (
        model.inertia_matrix(data.theta, beta)
        / data.jacobian[:, :, None]
        / data.jacobian[:, None, :]
    )
    residual = data.regressor @ np.asarray(beta, dtype=float) - data.torque
    return np.einsum("ka,ka->k", residual, np.linalg.solve(mass, residual[:, :, None])[:, :, 0])


def dual_metric_wls(
    bundle,
    model: DynamicModel,
    *,
    chart=None,
    max_samples: int | None = None,
    poses: np.ndarray | None = None,
    epsilon: float = 0.0,
    bounds: dict | None = None,
    max_rounds: int = 8,
    max_added: int = 500,
    initial_active: int = 64,
    condition: str | None = None,
    settings: dict | None = None,
    data: IDIMData | None = None,
    reference: WeightedFit | None = None,
    consistency: Consistency | None = None,
) -> WeightedFit:
    """The dual-metric WLS (26) on `bundle`: minimize sum_k r_k^T M_k^-1 r_k by Schur-complement
    LMIs.

    poses      optional pose set (m, 7 or 8, radians) on which M's arm block must satisfy
               M >= epsilon I (the rescue's Theta_r), activated lazily: a round solves with the
               `initial_active` poses closest to violation under the OLS reference and the poses
               violated so far (the worst `max_added` new ones per round) until none of the
               set is below epsilon, at most `max_rounds` rounds (each round is a relaxation of
               the full problem, so the first round that satisfies the whole set is its solution)
    bounds     {name: (lo, hi)} (None for no bound on that side)
    consistency  a `Consistency`: beta must be the base parameters of physically consistent links
    max_samples  evenly spaced subsampling of the record (None: every sample)
    condition  text naming the condition for errors (default: from the bundle's provenance)
    reference  an OLS fit on the same data, for the variable scaling (computed when None)

    Raises DualMetricFailure with the solver status and the condition when Clarabel does not
    solve it, when the constraint set is infeasible, or when the solution misses its LMIs;
    it never falls back to another estimator.
    """
    start = time.perf_counter()
    data = idim_data(bundle, model, chart, max_samples) if data is None else data
    reference = ols_fit(bundle, model, data=data) if reference is None else reference
    beta_ref = reference.parameters.values
    se = (
        reference.parameters.std_errors
        if reference.parameters.std_errors is not None
        else np.zeros_like(beta_ref)
    )
    # variables z = beta / scale: each of order one, so the solver's tolerances mean the same for
    # all
    scale = np.abs(beta_ref) + se + 1e-9
    where = _condition_text(bundle, condition)
    poses = None if poses is None else np.asarray(poses, dtype=float)[:, :N_ARM_JOINTS]
    options = (
        (
            "no pose constraints"
            if poses is None
            else f"Theta_r of {len(poses)} poses, eps = {epsilon:g} kg·m^2"
        )
        + (f", bounds on {sorted(bounds)}" if bounds else "")
        + ("" if consistency is None else ", physically consistent links")
    )
    label = f"{where}, {len(data.samples)} samples, {options}"
    # start from the poses closest to violation under the reference fit, as nearest_pd does
    active = (
        np.zeros(0, dtype=int)
        if poses is None
        else np.sort(np.argsort(model.arm_min_eigenvalue(poses, beta_ref))[:initial_active])
    )
    rounds, solver_time, iterations = 0, 0.0, 0
    while True:
        rounds += 1
        status, beta, t, phi, solution = _solve(
            data,
            model,
            scale,
            None if poses is None else poses[active],
            epsilon,
            bounds,
            settings or {},
            consistency,
        )
        solver_time += float(solution.solve_time)
        iterations += int(solution.iterations)
        if status not in ACCEPTED_STATUSES:
            raise DualMetricFailure(status, label, f"round {rounds}, {len(active)} poses active")
        lam_data = model.arm_min_eigenvalue(data.theta, beta)
        ia8 = float(model.inertia_matrix(data.theta[:1], beta)[0, N_AXES - 1, N_AXES - 1])
        if lam_data.min() < -MARGIN_ABSOLUTE_TOLERANCE or ia8 < -MARGIN_ABSOLUTE_TOLERANCE:
            raise DualMetricFailure(
                status,
                label,
                f"the solution misses its LMIs: lambda_min at the data {lam_data.min():.3g}, IA8 "
                f"{ia8:.3g}",
            )
        if poses is None:
            break
        lam = model.arm_min_eigenvalue(poses, beta)
        violated = np.setdiff1d(
            np.flatnonzero(lam < epsilon * (1 - 1e-6) - MARGIN_ABSOLUTE_TOLERANCE), active
        )
        if len(violated) == 0:
            break
        if rounds >= max_rounds:
            raise DualMetricFailure(
                status,
                label,
                f"lazy pose activation left {len(violated)} poses below eps after {rounds} rounds",
            )
        active = np.union1d(active, violated[np.argsort(lam[violated])][:max_added])
    per_sample = dual_metric_objective(model, beta, data)
    info = {
        "objective": float(per_sample.sum()),
        "objective_solver": float(t.sum()),
        "iterations": iterations,
        "solver_time_s": solver_time,
        "rounds": rounds,
        "poses": 0 if poses is None else len(poses),
        "poses_active": int(len(active)),
        "epsilon": float(epsilon),
        "lambda_min_data": float(lam_data.min()),
        "condition": label,
    }
    if poses is not None:
        info["lambda_min_poses"] = float(model.arm_min_eigenvalue(poses, beta).min())
    if consistency is not None:
        info["standard"] = phi.tolist()
        info["link_margins"] = [
            float(
                np.linalg.eigvalsh(np.einsum("k,kab->ab", phi[np.asarray(i)], np.asarray(bas)))[0]
            )
            for i, bas in consistency.lmis
        ]
        info["base_mismatch"] = float(
            np.max(np.abs(np.asarray(consistency.base_matrix) @ phi - beta))
        )
    residual = (data.regressor @ beta - data.torque).ravel()
    method = ("dual-metric" if poses is None else "dual-metric+Theta_r") + (
        "" if consistency is None else "+consistent"
    )
    return WeightedFit(
        method,
        ParameterSet(model.names, beta),
        residual,
        status,
        time.perf_counter() - start,
        len(data.samples),
        residual.size,
        info,
    )


def fit(method: str, bundle, model: DynamicModel, **options) -> WeightedFit:
    """The estimator by name (`METHODS`): the one dispatcher of `crane-id identify --method`."""
    if method == "ols":
        return ols_fit(bundle, model, **options)
    if method == "wls":
        return error_covariance_wls(bundle, model, **options)
    if method == "dual-metric":
        return dual_metric_wls(bundle, model, **options)
    raise ValueError(f"method {method!r}: expected one of {', '.join(METHODS)}")
