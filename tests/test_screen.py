"""The audit screen gives the audit's exact answer (verdict, margin, worst pose, violation counts)
while computing eigenvalues at a fraction of the poses."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from crane_lib.acceptance import audit, screen
from crane_lib.model.dynamics import model as shared_model

from .audit_cases import description_beta


@pytest.fixture(scope="module")
def prepared():
    return screen.prepare(audit.sparse_audit_poses(3))


def _models():
    model = shared_model("reduced")
    base = description_beta()
    poses = audit.sparse_audit_poses(3).poses
    step = np.zeros(model.n_parameters)
    step[model.names.index("ZZR6")] = -1.0
    # lambda_min over the poses is concave in t along base + t step: find where it first reaches
    # zero,
    # then go 2 % past it, so that only the poses nearest that boundary lose PD
    boundary = brentq(
        lambda t: audit.arm_lambda_min(base + t * step, poses).min(), 0.0, 0.0058, xtol=1e-12
    )
    wide = base + 0.0058 * step  # the wrist loses PD over much of the domain
    return {"PD": base, "locally non-PD": base + 1.02 * boundary * step, "widely non-PD": wide}


@pytest.mark.parametrize("name", ["PD", "locally non-PD", "widely non-PD"])
def test_the_screen_returns_the_audits_answer(prepared, name):
    beta = _models()[name]
    expected = audit.audit_pose_set(beta, prepared.pose_set)
    found = screen.screened_audit(beta, prepared)
    assert found.passed == expected.passed
    assert (
        found.lambda_min == expected.lambda_min
    )  # the same eigenvalue routine at the same pose: bit for bit
    np.testing.assert_array_equal(found.worst_pose, expected.worst_pose)
    assert found.worst_component == expected.worst_component
    assert found.violations == expected.violations
    if name == "locally non-PD":
        assert 0 < found.n_violations < len(prepared) // 10  # the case the screen must not miss
    if name == "PD":
        assert found.n_exact < len(prepared) // 5  # it does skip most poses


def test_misleading_probes_only_cost_time(prepared):
    """Probes at the poses with the largest margins bound the minimum loosely; the answer is still
    exact."""
    beta = _models()["locally non-PD"]
    lam = audit.arm_lambda_min(beta, prepared.pose_set.poses)
    expected = audit.audit_pose_set(beta, prepared.pose_set)
    found = screen.screened_audit(beta, prepared, probes=np.argsort(lam)[-16:])
    assert (found.passed, found.lambda_min, found.violations) == (
        expected.passed,
        expected.lambda_min,
        expected.violations,
    )
