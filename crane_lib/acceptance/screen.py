"""The all-pose audit of many models on one pose set, with the audit's exact answer and a
fraction of its cost (the Kt study audits hundreds of estimates on the same 221,875 poses).

`audit.audit_pose_set` computes the eigenvalues of M at every pose. Most poses cannot
matter: the verdict needs only the poses with lambda_min <= 0, the margin only the pose with
the smallest lambda_min. The screen finds both sets exactly with a Cholesky attempt per pose
(it exists exactly when the shifted matrix is positive definite) and computes eigenvalues only
there, with the audit's own function:

1. probe: exact lambda_min at a few poses (the caller's, e.g. a related model's worst poses,
   else an even subsample); their minimum mu is an upper bound on the model's minimum;
2. screen every pose at the shift max(mu, 0) + TOLERANCE: the poses below it include every pose
   with lambda_min <= 0 and the pose with the smallest lambda_min;
3. exact lambda_min on those poses and the probes (`DynamicModel.arm_min_eigenvalue`): the
   violations are counted, and the minimum found, among exact values only.

TOLERANCE (1e-10 kg·m^2, far above the rounding of a Cholesky pivot of these matrices, about
1e-15) only enlarges the sets, so rounding cannot hide a pose from step 3. The result equals the
audit's: the same verdict, violation counts per component, lambda_min and worst pose (ties by
pose index, as the audit breaks them); `tests/test_screen.py` checks it against the audit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from crane_lib.acceptance import folded
from crane_lib.acceptance.audit import PoseSet, audit_poses
from crane_lib.model import robot_description, spd_solve
from crane_lib.model.dynamics import DynamicModel, bind_template
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import N_LINKS

TOLERANCE = 1e-10  # kg·m^2: the screen's sets are widened by this much (module docstring)
DEFAULT_PROBES = 256


@lru_cache(maxsize=1)
def _core():
    """screen_core.py bound to the generated kernels of the reduced set (cached on disk)."""
    return bind_template(Path(__file__).with_name("screen_core.py"), "reduced", spd_solve)


def compile_core() -> None:
    """Compile (or load from the code cache) the screen's numba loop once, before parallel workers
    use it."""
    one = np.ones((1, N_LINKS))
    _core().screen_batch(
        one,
        0.0 * one,
        np.zeros(shared_model("reduced").n_parameters),
        0.0,
        np.empty(1, dtype=np.bool_),
    )


@dataclass
class PreparedPoses:
    """A pose set with its trigonometric functions computed once, for many models."""

    pose_set: PoseSet
    cos: np.ndarray  # (n, 7) of the MDH joint angles (offsets included)
    sin: np.ndarray

    def __len__(self) -> int:
        return len(self.pose_set)


def prepare(pose_set: PoseSet, model: DynamicModel | None = None) -> PreparedPoses:
    """The pose set in the kernels' joint angles (MDH offsets applied), for many models."""
    model = shared_model("reduced") if model is None else model
    if model.parameter_set != "reduced":
        raise ValueError(
            f"the screen is bound to the reduced set's kernels, not {model.parameter_set!r}"
        )
    offsets = np.array([float(row.theta_offset) for row in robot_description.load_mdh_table()])
    angles = pose_set.poses[:, :N_LINKS] + offsets
    return PreparedPoses(
        pose_set, np.ascontiguousarray(np.cos(angles)), np.ascontiguousarray(np.sin(angles))
    )


@dataclass
class ScreenedAudit:
    """The audit's answer for one model: verdict, margin, worst pose, violation counts."""

    passed: bool
    lambda_min: float  # kg·m^2, smallest over the pose set
    worst_index: int
    worst_pose: np.ndarray  # (7,) radians
    worst_component: str
    violations: dict[str, int]  # per component, as the audit counts them (lambda_min <= 0)
    n_exact: int  # poses whose eigenvalues were computed
    violating_indices: (
        np.ndarray
    )  # (m,) ascending indices into the pose set of every pose with lambda_min <= 0

    @property
    def n_violations(self) -> int:
        """The number of violating poses over all components."""
        return int(sum(self.violations.values()))

    def to_dict(self) -> dict:
        """The screen's result as a JSON-ready dict."""
        return {
            "passed": self.passed,
            "lambda_min": self.lambda_min,
            "worst_pose_rad": self.worst_pose.tolist(),
            "worst_component": self.worst_component,
            "violations": self.violations,
            "n_violations": self.n_violations,
        }


def screened_audit(
    beta, prepared: PreparedPoses, model: DynamicModel | None = None, probes=None
) -> ScreenedAudit:
    """The audit (11) of `beta` over `prepared` (module docstring). `probes`: pose indices whose
    exact
    lambda_min bounds the minimum from above (default: an even subsample of DEFAULT_PROBES
    poses)."""
    model = shared_model("reduced") if model is None else model
    beta = model.parameter_vector(beta)
    poses = prepared.pose_set.poses
    n = len(poses)
    probes = np.unique(
        np.linspace(0, n - 1, min(DEFAULT_PROBES, n)).astype(np.int64)
        if probes is None
        else np.asarray(probes, dtype=np.int64)
    )
    upper = float(model.arm_min_eigenvalue(poses[probes], beta).min())
    below = np.empty(n, dtype=np.bool_)
    _core().screen_batch(prepared.cos, prepared.sin, beta, max(upper, 0.0) + TOLERANCE, below)
    below[probes] = True
    candidates = np.flatnonzero(below)
    lam = model.arm_min_eigenvalue(poses[candidates], beta)
    order = np.lexsort((candidates, lam))  # ascending lambda, ties by pose index (as the audit)
    worst = int(candidates[order[0]])
    bad = candidates[lam <= 0.0]
    component = prepared.pose_set.component
    names = prepared.pose_set.names
    violations = {name: int(np.count_nonzero(component[bad] == i)) for i, name in enumerate(names)}
    return ScreenedAudit(
        passed=bad.size == 0,
        lambda_min=float(lam[order[0]]),
        worst_index=worst,
        worst_pose=poses[worst].copy(),
        worst_component=names[component[worst]],
        violations=violations,
        n_exact=int(candidates.size),
        violating_indices=np.sort(bad),
    )


def audit_estimates(records: list[dict], seed: int = 1, model: DynamicModel | None = None) -> dict:
    """Sec. VI-E's re-evaluation: the OLS estimate of every condition record audited over Θ
    (dense set of `seed`, screened), with PD at its visited configurations (from its record),
    its worst pose, and how many violations of the uniform draw lie in the folded-arm region."""
    model = shared_model("reduced") if model is None else model
    pose_set = audit_poses(seed)
    prepared = prepare(pose_set, model)
    audits = []
    for r in records:
        if r.get("ols") is None:
            continue
        found = screened_audit(np.asarray(r["ols"]), prepared, model)
        where = folded.count(pose_set, found.violating_indices)
        audits.append(
            {
                "trajectory": r["trajectory"],
                "ts": r["ts"],
                "run": r["run"],
                "pd_visited": bool(r["pd_visited"]),
                **found.to_dict(),
                "uniform_violations": where.uniform_violations,
                "in_folded_region": where.in_region,
            }
        )
    return {"seed": seed, "pose_set": "dense", "n_poses": len(pose_set), "audits": audits}
