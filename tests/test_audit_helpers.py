"""Helpers of the audit chapter: the violation map, the constructed non-PD case, and the
rescue at epsilon = 0 (the earlier version's margin) with the solver fallback."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.acceptance import audit
from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.identification import projection as sdp
from crane_lib.model.dynamics import model as shared_model

from .audit_cases import description_beta


def test_lambda_min_map_is_the_cellwise_minimum():
    model = shared_model("reduced")
    beta = description_beta()
    poses = audit.sparse_audit_poses(1)
    cells = audit.lambda_min_map(beta, poses, (2, 4), bins=6, model=model)
    lam = model.arm_min_eigenvalue(poses.poses, beta)
    assert np.nanmin(cells["lambda_min"]) == pytest.approx(lam.min())
    assert cells["violations"].sum() == np.count_nonzero(lam <= 0)
    assert cells["lambda_min"].shape == (6, 6)


def test_minimal_pd_break_reaches_the_depth_at_the_pose_with_the_smallest_change():
    model = shared_model("reduced")
    beta = description_beta()
    worst = audit.audit(beta, 1, model=model).worst_pose
    broken = audit.minimal_pd_break(beta, worst, 5e-4, model)
    assert model.arm_min_eigenvalue(worst[None, :], broken)[0] <= -5e-4 + 1e-12
    assert not audit.audit(broken, 1, model=model).passed
    # along the eigenvector the Rayleigh quotient is exactly -depth (M is linear in beta)
    m_old = model.inertia_matrix(worst[None, :], beta)[0, :7, :7]
    v = np.linalg.eigh(m_old)[1][:, 0]
    assert v @ model.inertia_matrix(worst[None, :], broken)[0, :7, :7] @ v == pytest.approx(
        -5e-4, abs=1e-12
    )


def test_rescue_with_zero_margin_converges_at_solver_precision():
    model = shared_model("reduced")
    beta = description_beta().copy()
    beta[model.names.index("ZZR6")] -= 0.0058
    result = rescue_stage.rescue_over_theta(model, beta, epsilon=0.0)
    assert result.converged
    assert result.result.lambda_min_on_set >= -sdp.MARGIN_ABSOLUTE_TOLERANCE


def _result(folded_bad, uniform_bad, folded=50, uniform=150):
    return audit.AuditResult(
        passed=folded_bad + uniform_bad == 0,
        lambda_min=0.0,
        worst_pose=np.zeros(7),
        worst_component=audit.GRID,
        violations={audit.GRID: 0, audit.UNIFORM: uniform_bad, audit.FOLDED: folded_bad},
        pose_counts={audit.GRID: 10, audit.UNIFORM: uniform, audit.FOLDED: folded},
        component_lambda_min={},
        worst_poses=np.zeros((0, 7)),
        worst_lambdas=np.zeros(0),
        worst_components=[],
        non_pd_fraction_uniform=uniform_bad / uniform,
        seed=1,
        domain="Theta",
    )


def test_folded_rate_ratio_pools_the_seeds():
    # folded 6/100, uniform 3/300 over two seeds: the folded block finds them six times as often
    assert audit.folded_rate_ratio([_result(5, 1), _result(1, 2)]) == pytest.approx(6.0)
    assert audit.violation_rate([_result(5, 1), _result(1, 2)], audit.UNIFORM) == pytest.approx(
        0.01
    )
    assert np.isnan(audit.folded_rate_ratio([_result(0, 0)]))
    assert audit.folded_rate_ratio([_result(3, 0)]) == np.inf
