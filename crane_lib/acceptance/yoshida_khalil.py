"""Yoshida & Khalil's sufficient condition for M(theta) > 0 at every theta, from base parameters.

Beyond the paper: the closest prior work on positive definiteness (K. Yoshida, W. Khalil,
IJRR 19(5), 2000). Their idea: M(theta) = sum_j J_j^T P_j J_j + diag(IA) is positive definite
at every configuration when the links' inertial parameters are physically meaningful; base
parameters do not determine the links' parameters, but any "virtual" standard parameters that
map onto them give the same M, so the base set is PD everywhere if SOME virtual set satisfies
the link condition. The condition implemented here (the exact statement of the paper could
not be read; see the register "the all-pose audit"):

    exists phi with  K phi = beta  (the full grouped set; the terms a smaller set leaves out
    are zero),  P_j(phi) > 0  for every arm link j,  IA_j(phi) >= 0  for every arm axis,

P_j = [[L_j, S(l_j)], [S(l_j)^T, m_j I]] the 6x6 spatial inertia of link j at O_j (L_j the
inertia tensor about O_j, l_j = (MX, MY, MZ), m_j = M). Sufficient: x^T M x = sum_j
|J_j x|^2_{P_j} + sum_j IA_j x_j^2 >= 0; if it is 0, every term is, and since J_j x involves
x_1..x_j only, with J_j x = x_j s_j once x_1..x_{j-1} = 0 (s_j the unit twist of joint j),
x_j^2 s_j^T P_j s_j = 0 forces x_j = 0 link by link (s_j^T P_j s_j > 0 as P_j > 0). It does
not depend on theta at all: it proves M > 0 on the whole torus, not only over Theta, and is
therefore conservative (a model PD over Theta only, or PD only thanks to the coupling of
links, is not certified).

Decided by one semidefinite program (maximize t with P_j >= t I, t <= 1); the solver's point
is then projected onto K phi = beta exactly (least squares) and the link matrices are checked
again with LAPACK, so a certificate does not rest on the solver's tolerance.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
from tqdm import tqdm

from crane_lib.acceptance import all_pose, audit, certified, screen
from crane_lib.arithmetic import CLARABEL_OPTIONS
from crane_lib.identification import clie
from crane_lib.model import base_parameters
from crane_lib.model.dynamics import DynamicModel, arm_parameter_set, base_matrix, is_crane_x7
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import split_name
from crane_lib.paths import RESULTS_DIR

INERTIAL_KINDS = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "IA")
# a link matrix counts as positive definite when its smallest eigenvalue exceeds LAPACK's
# backward error by a wide factor (1e3 * 6 * u * ||P||)
_EIG_SLACK = 1e3 * 6 * np.finfo(float).eps


@dataclass(frozen=True)
class YKResult:
    """The condition's verdict on one base-parameter vector."""

    certified: bool
    margin: float  # min over links of lambda_min(P_j) of the virtual parameters (SI, mixed)
    min_rotor: float  # smallest arm rotor inertia IA_j of the virtual parameters, kg·m^2
    residual: float  # max |K phi - beta| over the inertial base parameters after projection
    status: str  # the solver's status
    virtual: dict  # the virtual standard parameters found {name: value}


def spatial_inertia(xx, xy, xz, yy, yz, zz, mx, my, mz, m) -> np.ndarray:
    """P = [[L, S(l)], [S(l)^T, m I]]: a link's 6x6 spatial inertia at its frame origin."""
    s = np.array([[0.0, -mz, my], [mz, 0.0, -mx], [-my, mx, 0.0]])
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    return np.block([[inertia, s], [s.T, m * np.eye(3)]])


def _spatial_expr(phi, index: dict, j: int):
    """The same matrix as an affine cvxpy expression of phi (link j)."""
    v = {k: phi[index[f"{k}{j}"]] for k in INERTIAL_KINDS if k != "IA"}
    zero = cp.Constant(0.0)
    rows = [
        [v["XX"], v["XY"], v["XZ"], zero, -v["MZ"], v["MY"]],
        [v["XY"], v["YY"], v["YZ"], v["MZ"], zero, -v["MX"]],
        [v["XZ"], v["YZ"], v["ZZ"], -v["MY"], v["MX"], zero],
        [zero, v["MZ"], -v["MY"], v["M"], zero, zero],
        [-v["MZ"], zero, v["MX"], zero, v["M"], zero],
        [v["MY"], -v["MX"], zero, zero, zero, v["M"]],
    ]
    return cp.bmat(rows)


@dataclass(frozen=True)
class Problem:
    """The linear map from the arm's inertial standard parameters to its inertial base ones."""

    n_joints: int
    standard: list  # inertial standard names of the arm links (columns)
    base: list  # inertial base names of the full set (rows)
    matrix: np.ndarray  # K restricted to those rows and columns
    set_names: list  # the model's own base names (a subset of `base`, or friction)


def problem(model: DynamicModel | None = None) -> Problem:
    """The condition's data for `model`'s arm and parameter set (the CRANE-X7 by default)."""
    model = shared_model("reduced") if model is None else model
    arm = model.arm if (model.arm is not None and not is_crane_x7(model.arm)) else None
    full = base_matrix("full", arm)
    full_names = (
        base_parameters.grouping().parameter_set("full")
        if arm is None
        else arm_parameter_set(arm, "full")
    )
    n = model.n_joints

    def inertial(name: str) -> bool:
        kind, _, axis = split_name(name)
        return kind in INERTIAL_KINDS and axis <= n

    cols = [i for i, s in enumerate(model.standard_names) if inertial(s)]
    rows = [i for i, s in enumerate(full_names) if inertial(s)]
    outside = [i for i, s in enumerate(model.standard_names) if not inertial(s)]
    if np.any(full[np.ix_(rows, outside)]):
        raise ValueError("an inertial base parameter groups a friction or hand term")
    return Problem(
        n_joints=n,
        standard=[model.standard_names[i] for i in cols],
        base=[full_names[i] for i in rows],
        matrix=full[np.ix_(rows, cols)],
        set_names=list(model.names),
    )


def target(beta, prob: Problem) -> np.ndarray:
    """The inertial base parameters of the full set: `beta`'s where the set has them, else 0."""
    value = dict(zip(prob.set_names, np.asarray(beta, dtype=float)))
    return np.array([value.get(name, 0.0) for name in prob.base])


def check_virtual(phi, prob: Problem) -> tuple[float, float]:
    """(min_j lambda_min(P_j) less LAPACK's slack, min_j IA_j) of virtual parameters `phi`."""
    index = {name: i for i, name in enumerate(prob.standard)}
    margins = []
    for j in range(1, prob.n_joints + 1):
        p = spatial_inertia(*(phi[index[f"{k}{j}"]] for k in INERTIAL_KINDS if k != "IA"))
        lam = np.linalg.eigvalsh(p)
        margins.append(lam[0] - _EIG_SLACK * np.abs(lam).max())
    rotors = [phi[index[f"IA{j}"]] for j in range(1, prob.n_joints + 1)]
    return float(min(margins)), float(min(rotors))


def virtual_links(beta, model: DynamicModel | None = None, prob: Problem | None = None) -> YKResult:
    """Whether virtual standard parameters with K phi = beta and P_j > 0, IA_j >= 0 exist
    (module docstring): the Yoshida-Khalil certificate that M(theta) > 0 at every theta."""
    prob = problem(model) if prob is None else prob
    b = target(beta, prob)
    index = {name: i for i, name in enumerate(prob.standard)}
    phi, t = cp.Variable(len(prob.standard)), cp.Variable()
    constraints = [prob.matrix @ phi == b, t <= 1.0]
    for j in range(1, prob.n_joints + 1):
        p = _spatial_expr(phi, index, j)
        constraints.append(0.5 * (p + p.T) - t * np.eye(6) >> 0)
        constraints.append(phi[index[f"IA{j}"]] >= 0)
    task = cp.Problem(cp.Maximize(t), constraints)
    try:
        with warnings.catch_warnings():  # an inaccurate solution is judged below, not trusted
            warnings.simplefilter("ignore", UserWarning)
            task.solve(solver=cp.CLARABEL, **CLARABEL_OPTIONS)  # the deterministic KKT solver
    except cp.error.SolverError as failure:
        return YKResult(False, float("nan"), float("nan"), float("nan"), str(failure), {})
    if phi.value is None:
        return YKResult(False, float("nan"), float("nan"), float("nan"), task.status, {})
    # project onto K phi = b exactly, then judge with LAPACK, not with the solver's tolerance
    found = phi.value + np.linalg.lstsq(prob.matrix, b - prob.matrix @ phi.value, rcond=None)[0]
    residual = float(np.abs(prob.matrix @ found - b).max())
    margin, rotor = check_virtual(found, prob)
    scale = max(float(np.abs(b).max()), 1e-300)
    ok = margin > 0 and rotor >= 0 and residual <= 1e-12 * scale
    return YKResult(
        bool(ok), margin, rotor, residual, task.status, dict(zip(prob.standard, found.tolist()))
    )


RECORD_PATH = RESULTS_DIR / "audits" / "yoshida_khalil_seed1.json"


# the certificate over Θ gets the same budget of boxes on every estimate (a count, not seconds,
# so every machine gets the same answer): the quick profile's PD OLS estimates need 3,000 to
# 11,500 boxes; an undecided estimate costs the whole budget (about 2.3 ms a box on one core)
CERTIFY_MAX_BOXES = 15_000
# the certificate costs 7 to 35 s an estimate, so it runs on the estimates of these conditions
# (the quick profile's trajectories at the representative 40 ms, the same in both profiles);
# an estimate the dense audit fails needs none (its violating pose of Θ is the proof)
CERTIFIED_CONDITIONS = (("AG02", 0.04), ("AP01", 0.04), ("AP03", 0.04), ("PB01", 0.04))
DENSE_VIOLATION = "violated (a dense-audit pose)"
NOT_RUN = "not run"


def _theta_certificate(beta, model: DynamicModel, dense_passed: bool, condition) -> dict:
    """`certified.certify` over the whole of Θ at margin 0 within CERTIFY_MAX_BOXES boxes, where
    it can tell more than the dense audit (a passing estimate of CERTIFIED_CONDITIONS)."""
    if not dense_passed:
        return {"status": DENSE_VIOLATION, "boxes": 0}
    if (condition[0], round(float(condition[1]), 6)) not in CERTIFIED_CONDITIONS:
        return {"status": NOT_RUN, "boxes": 0}
    found = certified.certify(beta, 0.0, None, model, max_boxes=CERTIFY_MAX_BOXES)
    return {"status": found.status, "boxes": found.boxes_processed}


def comparison_record(
    seed: int = 1, model: DynamicModel | None = None, profile: str | None = None
) -> dict:
    """Every OLS and CLIE estimate of the build judged three ways: the Yoshida-Khalil condition,
    the certificate over Θ (margin 0, CERTIFY_MAX_BOXES boxes, on the dense-audit passes of
    CERTIFIED_CONDITIONS), and the dense audit of `seed` (the OLS audits' record for OLS;
    computed here, screened, for CLIE); the CLIE estimates of `profile`'s conditions (all when
    None)."""
    model = shared_model("reduced") if model is None else model
    prob = problem(model)
    rows = []
    for r in tqdm(all_pose.sweep_rows(seed), desc="OLS estimates", unit="estimate"):
        beta = np.asarray(r["ols"])
        condition = (r["trajectory"], r["ts"])
        found = virtual_links(beta, model, prob)
        theta = _theta_certificate(beta, model, bool(r["PD over Θ"]), condition)
        rows.append(_row("OLS", r["trajectory"], r["ts"], r["run"], found, r, theta))
    prepared = screen.prepare(audit.audit_poses(seed), model)
    for r in tqdm(clie.load_records("fast", profile), desc="CLIE estimates", unit="estimate"):
        beta = np.asarray(r["clie_x"])
        dense = screen.screened_audit(beta, prepared, model)
        row = {"PD over Θ": dense.passed, "λmin over Θ": dense.lambda_min}
        row["violations"] = dense.n_violations
        found = virtual_links(beta, model, prob)
        theta = _theta_certificate(beta, model, dense.passed, (r["trajectory"], r["ts"]))
        rows.append(_row("CLIE", r["trajectory"], r["ts"], r["run"], found, row, theta))
    return {"seed": seed, "pose_set": "dense", "estimates": rows}


def _row(stage, trajectory, ts, run, found: YKResult, dense: dict, theta) -> dict:
    """One estimate's line of the comparison record."""
    return {
        "stage": stage,
        "trajectory": trajectory,
        "ts": ts,
        "run": run,
        "yk_certified": found.certified,
        "yk_margin": found.margin,
        "yk_min_rotor": found.min_rotor,
        "yk_status": found.status,
        "dense_passed": bool(dense["PD over Θ"]),
        "dense_lambda_min": float(dense["λmin over Θ"]),
        "dense_violations": int(dense["violations"]),
        "theta_certificate": theta["status"],
        "theta_certificate_boxes": theta["boxes"],
    }


def counts(record: dict) -> list[dict]:
    """Per stage: estimates; certified by the condition; certified, violated and undecided by the
    certificate over Θ; PD on the dense audit; and the condition's certified ones that the
    audit fails (0 if the condition is sound)."""
    out = []
    for stage in ("OLS", "CLIE"):
        rows = [r for r in record["estimates"] if r["stage"] == stage]
        status = [r["theta_certificate"] for r in rows]
        out.append(
            {
                "stage": stage,
                "estimates": len(rows),
                "Yoshida–Khalil certifies": sum(r["yk_certified"] for r in rows),
                "certified over Θ": status.count(certified.CERTIFIED),
                "violated over Θ": status.count(certified.VIOLATED)
                + status.count(certified.BELOW_MARGIN)
                + status.count(DENSE_VIOLATION),
                "undecided over Θ": status.count(certified.UNDECIDED),
                "certificate not run": status.count(NOT_RUN),
                "dense audit passes": sum(r["dense_passed"] for r in rows),
                "certified, audit fails": sum(
                    r["yk_certified"] and not r["dense_passed"] for r in rows
                ),
            }
        )
    return out
