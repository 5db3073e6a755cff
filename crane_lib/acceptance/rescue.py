"""The rescue (12): the nearest model positive definite over Theta, found by constraint
generation, and Algorithm 1's last steps (audit, rescue if it fails, re-audit) (paper Sec.
IV-C, Appendix D-E).

The rescue solves the same nearest-point problem as the conditional projection
(`identification.projection.nearest_pd`) on a constraint set Theta_r that grows: after each
solve the solution is checked on a draw over Theta and the worst violators are appended.
Convergence of the rescue is not acceptance: the audit decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crane_lib.acceptance import audit
from crane_lib.identification.projection import (
    MARGIN_ABSOLUTE_TOLERANCE,
    ProjectionFailure,
    ProjectionResult,
    nearest_pd,
)
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import ParameterSet
from crane_lib.paper_numbers import paper
from crane_lib.paths import RESULTS_DIR

RESCUE_EPSILON = paper("rescue_eps_pd").value  # kg·m^2, the accepted margin (Sec. IV-C)
EARLIER_RESCUE_EPSILON = paper("earlier_rescue_eps_pd").value  # the earlier version's margin


@dataclass
class RescueResult:
    """What the rescue (12) with constraint generation hands to the re-audit (Appendix D-E).

    result            the last nearest-point projection (its parameters are the rescued model, with
                      epsilon, solver status, change and constraint counts); None only if no solve
                      ran
    passes            one dict per pass, in order: pass (1-based), constraint_poses (size of Theta_r
                      in that solve), active_poses (poses the final lazy round carried),
                      lambda_min_on_set and lambda_min_check (kg·m^2, over Theta_r and over the
                      check
                      draw), violators (check poses with lambda_min <= eps/2), appended (how many of
                      them joined Theta_r for the next pass), solve_time_s
    converged         the last check over the draw found no pose with lambda_min <= eps/2;
                      convergence
                      is not acceptance (the audit decides)
    reason            why it did not converge ("" when it did)
    constraint_poses  the final Theta_r, (m, 7) radians ((m, n_joints) on another arm)
    """

    result: ProjectionResult | None
    passes: list[dict]
    converged: bool
    reason: str = ""
    constraint_poses: np.ndarray | None = None


def rescue(
    model: DynamicModel,
    beta,
    initial_poses: np.ndarray,
    check_poses: np.ndarray,
    epsilon: float = RESCUE_EPSILON,
    max_added_per_pass: int = 500,
    max_passes: int = 5,
) -> RescueResult:
    """The rescue with constraint generation (Appendix D-E).

    Theta_r starts as `initial_poses`; after each solve the solution is checked over
    `check_poses` (a draw over Theta) and the worst violators, lambda_min <= eps/2, are
    appended, at most `max_added_per_pass` per pass, for at most `max_passes` passes.
    Convergence here is not acceptance: the audit decides that.
    """
    theta_r = np.asarray(initial_poses, dtype=float)
    check_poses = np.asarray(check_poses, dtype=float)
    passes = []
    result = None
    for pass_index in range(1, max_passes + 1):
        result = nearest_pd(model, beta, theta_r, epsilon)
        lam = model.arm_min_eigenvalue(check_poses, result.parameters.values)
        violators = np.flatnonzero(lam <= epsilon / 2 - MARGIN_ABSOLUTE_TOLERANCE)
        worst = violators[np.argsort(lam[violators])][:max_added_per_pass]
        passes.append(
            {
                "pass": pass_index,
                "constraint_poses": len(theta_r),
                "active_poses": result.n_active,
                "lambda_min_on_set": result.lambda_min_on_set,
                "lambda_min_check": float(lam.min()),
                "violators": int(len(violators)),
                "appended": int(len(worst)),
                "solve_time_s": result.solve_time_s,
            }
        )
        if len(violators) == 0:
            return RescueResult(result, passes, converged=True, constraint_poses=theta_r)
        theta_r = np.vstack([theta_r, check_poses[worst]])
    return RescueResult(
        result,
        passes,
        converged=False,
        reason=f"violators remain after {max_passes} passes",
        constraint_poses=theta_r,
    )


# ------------------------------------------------------------------ the rescue over Theta


RESCUE_RANDOM_POSES = 2000
# the acceptance audit draws with seeds 1-5; the rescue's own draws are kept apart from them
RESCUE_CHECK_SEED = 0
RESCUE_INITIAL_SEED = 6


def initial_theta_r(seed: int = RESCUE_INITIAL_SEED, arm=None) -> np.ndarray:
    """The rescue's starting Theta_r: 2,000 uniform poses over Theta (`seed`) and its 128 corners
    (another `arm`: over its Theta, with its 2^n_joints corners)."""
    if audit.other_arm(arm) is None:
        return np.vstack([audit.uniform_poses(RESCUE_RANDOM_POSES, seed), audit.box_corners()])
    return np.vstack(
        [audit.uniform_poses(RESCUE_RANDOM_POSES, seed, arm=arm), audit.box_corners(arm=arm)]
    )


def rescue_over_theta(
    model: DynamicModel,
    beta,
    epsilon: float = RESCUE_EPSILON,
    extra_poses: np.ndarray | None = None,
    initial_seed: int = RESCUE_INITIAL_SEED,
    check_seed: int = RESCUE_CHECK_SEED,
) -> RescueResult:
    """The rescue of D-E over the audit domain: Theta_r = 2,000 uniform poses + the 128
    corners of Theta (+ `extra_poses`, e.g. the audit's violators); each solution checked on
    an audit-size draw from `check_seed`, which the acceptance audits (seeds 1-5) never use.
    Theta is that of the model's arm (`model.arm`; the CRANE-X7's by default)."""
    arm = audit.other_arm(model)
    initial = [initial_theta_r(initial_seed, arm)]
    if extra_poses is not None and len(extra_poses):
        initial.append(np.asarray(extra_poses, dtype=float))
    check = audit.audit_poses(check_seed, arm).poses
    return rescue(model, beta, np.vstack(initial), check, epsilon=epsilon)


def rescues_path(trajectory: str, ts: float, run: int, directory=None) -> Path:
    """Where the fresh-set rescues of a condition's CLIE solution are recorded."""
    folder = RESULTS_DIR / "rescues" if directory is None else Path(directory)
    return folder / f"{trajectory}_run{run}_{round(ts * 1e3):02d}ms_clie_solution.json"


def rescue_entry(epsilon: float, found: RescueResult | None, failure: str | None = None) -> dict:
    """A rescue as a record keeps it: its passes, convergence and last projection, or why the
    solver gave no model (`failure`)."""
    entry = {"epsilon": float(epsilon), "failure": failure}
    if found is None:
        return entry
    projection = found.result
    return {
        **entry,
        "passes": found.passes,
        "converged": bool(found.converged),
        "reason": found.reason,
        "projection": None
        if projection is None
        else {
            "names": list(projection.parameters.names),
            "values": projection.parameters.values.tolist(),
            "epsilon": projection.epsilon,
            "status": projection.status,
            "n_poses": projection.n_poses,
            "n_active": projection.n_active,
            "rounds": projection.rounds,
            "lambda_min_on_set": projection.lambda_min_on_set,
            "change": np.asarray(projection.change).tolist(),
            "solve_time_s": projection.solve_time_s,
        },
    }


def rescue_of(entry: dict) -> RescueResult | None:
    """The rescue a record entry (`rescue_entry`) holds; None when it gave no model."""
    if entry["failure"] is not None:
        return None
    kept = entry["projection"]
    result = (
        None
        if kept is None
        else ProjectionResult(
            ParameterSet(kept["names"], np.asarray(kept["values"])),
            kept["epsilon"],
            kept["status"],
            kept["n_poses"],
            kept["n_active"],
            kept["rounds"],
            kept["lambda_min_on_set"],
            np.asarray(kept["change"]),
            kept["solve_time_s"],
        )
    )
    return RescueResult(result, entry["passes"], entry["converged"], entry["reason"])


def fresh_rescues(model: DynamicModel, beta, epsilons) -> list[dict]:
    """The rescue over Θ from the fresh set Θr (random poses and corners, no audit violators) at
    each margin of `epsilons`, as record entries (a solver failure is kept, said, not raised)."""
    entries = []
    for epsilon in epsilons:
        try:
            entries.append(rescue_entry(epsilon, rescue_over_theta(model, beta, epsilon)))
        except ProjectionFailure as error:
            entries.append(rescue_entry(epsilon, None, str(error)))
    return entries


@dataclass
class Acceptance:
    """Algorithm 1's last steps for one model: audit over Theta, rescue if it fails, re-audit.

    first_audit  audit.AuditResult of the model as given (dense pose set, the acceptance seed)
    rescue       the RescueResult when the first audit failed; None when it passed
    final_audit  the audit that decides: the re-audit of the rescued model, or the first audit
                 when no rescue was needed
    parameters   the accepted model's base parameters in the model's order or, when not
                 accepted, the last model audited
    accepted     (property) final_audit passed
    """

    first_audit: object
    rescue: RescueResult | None
    final_audit: object
    parameters: np.ndarray

    @property
    def accepted(self) -> bool:
        """Whether the rescued model passed the final audit."""
        return bool(self.final_audit.passed)


def accept(model: DynamicModel, beta, seed: int = 1, epsilon: float = RESCUE_EPSILON) -> Acceptance:
    """Audit `beta` over Theta (dense pose set, `seed`); if it fails, rescue it with the audit's
    worst poses added to Theta_r (D-E) and audit the rescued model with the same seed. The
    audit, not the solver's exit, decides acceptance."""
    beta = np.asarray(beta, dtype=float)
    first = audit.audit(beta, seed, "dense", model)
    if first.passed:
        return Acceptance(first, None, first, beta)
    rescued = rescue_over_theta(model, beta, epsilon=epsilon, extra_poses=first.worst_poses)
    if rescued.result is None:
        return Acceptance(first, rescued, first, beta)
    after = rescued.result.parameters.values
    return Acceptance(first, rescued, audit.audit(after, seed, "dense", model), after)
