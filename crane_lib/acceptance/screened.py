"""The dense audit of Sec. VI-E with a Cholesky screen: the same verdict, margin, worst poses and
violation counts as `audit.audit_pose_set`, several times faster (for studies that audit hundreds
of estimates, issue 14).

The audit needs λmin exactly only where it is small. `screened_audit` therefore

1. computes λmin exactly on a probe of `PROBE_POSES` poses spread over the set (every n-th pose)
   and takes the k-th smallest of them, t_k (k = worst_k);
2. screens every pose with a Cholesky factorization of M(θ) - s I, s = max(t_k, 0) + `MARGIN`: where
   it succeeds λmin > s and the pose is done; where it fails λmin is computed exactly.

Every pose with λmin <= s is therefore known exactly. Because t_k is at least the k-th smallest
λmin of the whole set, the k worst poses are among them, and because s > 0 every violating pose
(λmin <= 0) is too: the verdict, the smallest λmin and its pose, the k worst poses and the
violation count of every component equal the full audit's (tested against it). What the screen
does not give is a component's smallest λmin when it is above s (reported as None).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from crane_lib.acceptance.audit import DEFAULT_WORST_K, UNIFORM, PoseSet
from crane_lib.model import robot_description
from crane_lib.model.dynamics import DynamicModel, bind_template
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import N_LINKS

PROBE_POSES = 2000
# kg·m²: the screen's threshold lies this far above max(t_k, 0), so every λmin <= 0 and every probe pose
# at or below t_k fail the Cholesky test whatever its rounding (λmin is of order 1e-3 on this arm)
MARGIN = 1e-9
CORE_TEMPLATE = Path(__file__).with_name("screened_core.py")


@lru_cache(maxsize=1)
def _core():
    return bind_template(CORE_TEMPLATE, "reduced")


@lru_cache(maxsize=1)
def _offsets() -> np.ndarray:
    return np.array([float(row.theta_offset) for row in robot_description.load_mdh_table()])


@dataclass
class TrigPoses:
    """cos and sin of the MDH joint angles of a pose set, computed once for many models."""

    pose_set: PoseSet
    cos: np.ndarray
    sin: np.ndarray


def trig_poses(pose_set: PoseSet) -> TrigPoses:
    angles = pose_set.poses[:, :N_LINKS] + _offsets()
    return TrigPoses(pose_set, np.ascontiguousarray(np.cos(angles)), np.ascontiguousarray(np.sin(angles)))


@dataclass
class ScreenedAudit:
    """The audit's outcome from the screen (radians, kg·m²); `exact` = poses whose λmin was computed."""

    passed: bool
    lambda_min: float
    worst_pose: np.ndarray
    worst_component: str
    violations: dict[str, int]
    pose_counts: dict[str, int]
    component_lambda_min: dict[str, float | None]  # None: above the screen's threshold (not computed)
    worst_poses: np.ndarray
    worst_lambdas: np.ndarray
    worst_components: list[str]
    threshold: float
    exact: int
    seed: int | None
    domain: str
    uniform_violating_poses: np.ndarray  # (m, 7) the violating poses of the uniform component (where they lie in Θ)

    @property
    def n_violations(self) -> int:
        return int(sum(self.violations.values()))


def screened_lambda(beta, trig: TrigPoses, shift: float, model: DynamicModel | None = None) -> np.ndarray:
    """λmin per pose where it is <= shift, +inf elsewhere."""
    model = shared_model("reduced") if model is None else model
    if model.parameter_set != "reduced":
        raise ValueError("the screened audit is bound to the reduced set's kernels")
    beta = model.parameter_vector(beta)
    out = np.empty(len(trig.cos))
    _core().screened_lambda_min(trig.cos, trig.sin, beta, float(shift), out)
    return out


def screened_audit(beta, trig: TrigPoses, model: DynamicModel | None = None, worst_k: int = DEFAULT_WORST_K) -> ScreenedAudit:
    """The dense audit of `trig.pose_set` through the screen (see the module text)."""
    model = shared_model("reduced") if model is None else model
    pose_set = trig.pose_set
    n = len(pose_set)
    probe = np.linspace(0, n - 1, min(PROBE_POSES, n)).astype(int)
    probe_lambda = model.arm_min_eigenvalue(pose_set.poses[probe], beta)
    k = max(1, min(int(worst_k), len(probe)))
    shift = max(float(np.partition(probe_lambda, k - 1)[k - 1]), 0.0) + MARGIN
    lam = screened_lambda(beta, trig, shift, model)
    exact = np.isfinite(lam)
    violations, counts, component_min = {}, {}, {}
    for i, name in enumerate(pose_set.names):
        part = pose_set.component == i
        counts[name] = int(part.sum())
        violations[name] = int(np.count_nonzero(part & (lam <= 0.0)))
        known = lam[part & exact]
        component_min[name] = float(known.min()) if known.size else None
    order = np.flatnonzero(exact)
    order = order[np.lexsort((order, lam[order]))][: int(worst_k)]
    i_min = int(order[0])
    return ScreenedAudit(
        passed=not bool(np.any(lam <= 0.0)),
        lambda_min=float(lam[i_min]),
        worst_pose=pose_set.poses[i_min].copy(),
        worst_component=pose_set.names[pose_set.component[i_min]],
        violations=violations,
        pose_counts=counts,
        component_lambda_min=component_min,
        worst_poses=pose_set.poses[order].copy(),
        worst_lambdas=lam[order].copy(),
        worst_components=[pose_set.names[c] for c in pose_set.component[order]],
        threshold=shift,
        exact=int(exact.sum()),
        seed=pose_set.seed,
        domain=pose_set.domain,
        uniform_violating_poses=(pose_set.poses[(lam <= 0.0) & (pose_set.component == pose_set.names.index(UNIFORM))]
                                 if UNIFORM in pose_set.names else np.zeros((0, N_LINKS))),
    )
