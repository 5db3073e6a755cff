"""Nearest positive-definite parameter vectors: the conditional SDP projection (8) (paper
Sec. IV-B); the post-CLIE rescue (12) of `acceptance.rescue` solves the same problem.

Both are nearest-point problems

    minimize |beta - beta0|_2^2   subject to   M(theta_i; beta) >= eps I  for theta_i in a pose set,

solved with cvxpy and the Clarabel solver. M is linear in beta, M(theta; beta) =
sum_k beta_k B_k(theta), so each pose gives one 7x7 linear matrix inequality (n_joints x n_joints
on another arm: the arm block of `model.arm`). The text lost
which norm "nearest" uses; we take the Euclidean norm of the base parameters in SI units
(reconstruction register): parameters that do not enter M (viscous friction) then never move,
and the change lands on the entries the violated eigen-directions load, which is the localized
correction the paper reports for the rescue (Table XVIII).

Large pose sets are solved by activating constraints lazily: the solver first sees the poses
closest to violation, and any pose of the set still below eps afterwards is added and the
problem solved again. Because each round solves a relaxation of the full problem, the first
round whose solution satisfies every constraint of the set has found the full problem's
solution (same optimum, far smaller conic program).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from crane_lib.arithmetic import CLARABEL_OPTIONS
from crane_lib.constants import N_ARM_JOINTS
from crane_lib.errors import raise_if_interrupted
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import ParameterSet

EPSILON_LADDER = (0.001, 0.002, 0.005, 0.01)  # kg·m^2, pre-CLIE projection (Sec. IV-B)
# Clarabel often stops at "AlmostSolved" (cvxpy: optimal_inaccurate) on these LMIs with the
# duality gap near 1e-7 relative; such a point is used only after our own check that every
# constraint holds (nearest_pd), and its status is reported with the result.
ACCEPTED_STATUSES = ("optimal", "optimal_inaccurate")
MARGIN_RELATIVE_TOLERANCE = 1e-5


class ProjectionFailure(RuntimeError):
    """The solver did not return an optimal point; the message carries its status."""


@dataclass
class ProjectionResult:
    """One nearest-point projection onto M(theta) >= epsilon I on a pose set ((8) and (12)).

    parameters         the projected base parameters (names, values; meta says what they came from)
    epsilon            the margin, kg·m^2
    status             the solver's final status ("optimal", or "optimal_inaccurate" accepted only
                       after our own check of every constraint)
    n_poses            poses in the constraint set
    n_active           poses the final lazy-activation round carried
    rounds             lazy-activation rounds
    lambda_min_on_set  smallest eigenvalue of M over the whole constraint set after projection,
                       kg·m^2
    change             beta - beta0 in the model's order (SI units of each parameter)
    solve_time_s       wall time of all rounds
    change_norm        (property) Euclidean norm of `change`
    """

    parameters: ParameterSet
    epsilon: float
    status: str
    n_poses: int
    n_active: int
    rounds: int
    lambda_min_on_set: float
    change: np.ndarray
    solve_time_s: float

    @property
    def change_norm(self) -> float:
        """The Euclidean norm of the projection's change."""
        return float(np.linalg.norm(self.change))


def inertia_basis(model: DynamicModel, poses: np.ndarray, size: int | None = None) -> np.ndarray:
    """B_k(theta_i): the leading size x size block of M for the unit vector of each base parameter,
    (n, p, size, size); the default is the arm block (the CRANE-X7's 7x7), size n_axes adds the
    decoupled gripper axis."""
    poses = np.asarray(poses, dtype=float)
    size = model.n_joints if size is None else size
    basis = np.empty((len(poses), model.n_parameters, size, size))
    for k in range(model.n_parameters):
        unit = np.zeros(model.n_parameters)
        unit[k] = 1.0
        basis[:, k] = model.inertia_matrix(poses, unit)[:, :size, :size]
    return basis


# The change is solved for in units of CHANGE_SCALE: changes of ~1e-3 kg·m^2 then give an
# objective of order one, where the solver's absolute tolerances mean something.
CHANGE_SCALE = 1e-3
SOLVER_OPTIONS = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, **CLARABEL_OPTIONS}
FALLBACK_OPTIONS = {"eps": 1e-10, "max_iters": 200_000}
# Absolute precision of the solvers on the eigenvalues, kg·m^2: with epsilon = 0 (the rescue
# of the earlier version) a relative tolerance is no tolerance, and a constrained eigenvalue
# at -1e-13 is zero to solver precision, not a violation.
MARGIN_ABSOLUTE_TOLERANCE = 1e-10


def _solve(beta0: np.ndarray, basis: np.ndarray, epsilon: float) -> tuple[np.ndarray, str, float]:
    import cvxpy as cp  # here: a model that needs no projection (crane-id accept) never loads it

    delta = cp.Variable(len(beta0))
    constraints = []
    size = basis.shape[-1]  # the arm block: 7 on the CRANE-X7, n_joints on another arm
    for pose_basis in basis:
        flat = pose_basis.transpose(1, 2, 0).reshape(size * size, -1)
        offset = (flat @ beta0).reshape(size, size) - epsilon * np.eye(size)
        matrix = cp.reshape((CHANGE_SCALE * flat) @ delta, (size, size), order="C") + offset
        constraints.append(0.5 * (matrix + matrix.T) >> 0)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(delta)), constraints)
    with warnings.catch_warnings():
        # cvxpy warns on optimal_inaccurate; the status is checked and reported here instead
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        try:
            problem.solve(solver=cp.CLARABEL, **SOLVER_OPTIONS)
            status = problem.status
        except cp.error.SolverError as err:
            status = f"Clarabel failed: {err}"
        # Clarabel reports a Ctrl-C as a failure of its own: stop, do not fall back
        raise_if_interrupted()
        if status not in ACCEPTED_STATUSES or delta.value is None:
            # Clarabel can stall ("InsufficientProgress") on LMI sets with many nearly coincident
            # poses, as constraint generation produces; SCS at high accuracy solves the same
            # program, and nearest_pd checks every constraint of the result itself.
            try:
                problem.solve(solver=cp.SCS, **FALLBACK_OPTIONS)
            except cp.error.SolverError as err:
                raise_if_interrupted()
                raise ProjectionFailure(
                    f"{status}; SCS failed too: {err} (epsilon = {epsilon:g}, {len(basis)} poses)"
                ) from err
            if problem.status not in ACCEPTED_STATUSES or delta.value is None:
                raise ProjectionFailure(
                    f"{status}; SCS status {problem.status!r} (epsilon = {epsilon:g}, {len(basis)} "
                    "poses)"
                )
            status = f"{problem.status} (SCS fallback)"
    beta = beta0 + CHANGE_SCALE * np.asarray(delta.value, dtype=float)
    return beta, status, float(problem.solver_stats.solve_time or 0.0)


def nearest_pd(
    model: DynamicModel,
    beta0,
    poses: np.ndarray,
    epsilon: float,
    initial_active: int = 64,
    max_rounds: int = 30,
    feasibility_tol: float = 1e-7,
) -> ProjectionResult:
    """Nearest beta with M(theta; beta) >= epsilon I on every pose of `poses`.

    `feasibility_tol` is relative to epsilon: a pose counts as satisfied at
    lambda_min >= epsilon (1 - feasibility_tol), the solver's precision.
    """
    names = model.names
    beta0 = model.parameter_vector(beta0)
    poses = np.asarray(poses, dtype=float)
    lam0 = model.arm_min_eigenvalue(poses, beta0)
    active = set(np.argsort(lam0)[: min(initial_active, len(poses))].tolist())
    basis_cache: dict[int, np.ndarray] = {}
    total_time = 0.0
    for round_index in range(1, max_rounds + 1):
        missing = sorted(i for i in active if i not in basis_cache)
        if missing:
            for i, b in zip(missing, inertia_basis(model, poses[missing])):
                basis_cache[i] = b
        order = sorted(active)
        beta, status, seconds = _solve(beta0, np.stack([basis_cache[i] for i in order]), epsilon)
        total_time += seconds
        lam = model.arm_min_eigenvalue(poses, beta)
        violated = np.flatnonzero(lam < epsilon * (1 - feasibility_tol) - MARGIN_ABSOLUTE_TOLERANCE)
        new = [i for i in violated.tolist() if i not in active]
        if not new:
            if lam.min() < epsilon * (1 - MARGIN_RELATIVE_TOLERANCE) - MARGIN_ABSOLUTE_TOLERANCE:
                raise ProjectionFailure(
                    f"solver status {status!r}: lambda_min {lam.min():.6g} on the constraint set "
                    f"is short of epsilon = {epsilon:g}"
                )
            return ProjectionResult(
                parameters=ParameterSet(names, beta),
                epsilon=epsilon,
                status=status,
                n_poses=len(poses),
                n_active=len(active),
                rounds=round_index,
                lambda_min_on_set=float(lam.min()),
                change=beta - beta0,
                solve_time_s=total_time,
            )
        # add the worst of the newly violated poses (all of them if few)
        new.sort(key=lambda i: lam[i])
        active.update(new[: max(64, len(new) // 2)])
    raise ProjectionFailure(f"lazy constraint activation did not converge in {max_rounds} rounds")


# ------------------------------------------------------------------ pre-CLIE projection (8)


def constraint_poses(
    theta: np.ndarray,
    dtheta: np.ndarray,
    n_even: int = 120,
    n_fastest: int = 80,
    n_joints: int = N_ARM_JOINTS,
) -> np.ndarray:
    """Indices of Theta_c: n_even samples evenly along the record and the n_fastest with the
    largest norm of the arm-joint speeds (the CRANE-X7's seven), duplicates merged (D-E)."""
    n = len(theta)
    even = np.unique(np.round(np.linspace(0, n - 1, min(n_even, n))).astype(int))
    speed = np.linalg.norm(np.asarray(dtheta)[:, :n_joints], axis=1)
    fastest = np.argsort(-speed, kind="stable")[: min(n_fastest, n)]
    return np.unique(np.concatenate([even, fastest]))


@dataclass
class ConditionalProjection:
    """The epsilon ladder on Theta_c (route O-S-C, Sec. IV-B).

    attempts  one dict per epsilon tried, in ladder order: epsilon, status, pd_on_record,
              lambda_min_record (kg·m^2 over every sample of the record) and, when the solve
              returned, result (the ProjectionResult)
    chosen    the projection with the smallest epsilon that is PD on the whole record; None if none
              is
    failure   why no epsilon worked, else None
    epsilon   (property) the chosen epsilon, None without a choice
    """

    attempts: list[dict] = field(default_factory=list)
    chosen: ProjectionResult | None = None
    failure: str | None = None

    @property
    def epsilon(self) -> float | None:
        """The chosen margin ε (kg·m²), or None when no rung succeeded."""
        return None if self.chosen is None else self.chosen.epsilon


def conditional_projection(
    model: DynamicModel, beta_ols, theta: np.ndarray, dtheta: np.ndarray, ladder=EPSILON_LADDER
) -> ConditionalProjection:
    """Project onto M >= eps I on Theta_c, eps from the ladder: the smallest whose solution is
    positive definite at every configuration of the record, not only at the constrained ones."""
    theta = np.asarray(theta, dtype=float)
    poses = theta[constraint_poses(theta, dtheta, n_joints=model.n_joints)]
    outcome = ConditionalProjection()
    for epsilon in ladder:
        try:
            result = nearest_pd(model, beta_ols, poses, epsilon)
        except ProjectionFailure as err:
            outcome.attempts.append({"epsilon": epsilon, "status": str(err), "pd_on_record": False})
            continue
        lam_record = model.arm_min_eigenvalue(theta, result.parameters.values)
        pd_on_record = bool(lam_record.min() > 0)
        outcome.attempts.append(
            {
                "epsilon": epsilon,
                "status": result.status,
                "pd_on_record": pd_on_record,
                "lambda_min_record": float(lam_record.min()),
                "result": result,
            }
        )
        if pd_on_record:
            outcome.chosen = result
            return outcome
    outcome.failure = (
        "no epsilon of the ladder gives a projection positive definite on the whole record"
    )
    return outcome
