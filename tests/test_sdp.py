"""The nearest-PD projection and the rescue: constraints hold, the change is minimal."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.identification import projection as sdp
from crane_lib.model.dynamics import DynamicModel

from .conftest import description_model_beta


@pytest.fixture(scope="module")
def model():
    return DynamicModel("reduced")


@pytest.fixture(scope="module")
def feasible_beta():
    return description_model_beta(viscous=0.1)


@pytest.fixture(scope="module")
def infeasible_beta(model, feasible_beta):
    beta = feasible_beta.copy()
    beta[model.names.index("ZZR6")] -= 0.006  # pushes lambda_min below zero over much of the domain
    return beta


def _poses(n, seed):
    return np.random.default_rng(seed).uniform(-np.pi, np.pi, (n, 7))


def test_projection_satisfies_constraints_and_equals_a_direct_solve(model, infeasible_beta):
    poses = _poses(600, 1)
    assert model.arm_min_eigenvalue(poses, infeasible_beta).min() < 0
    result = sdp.nearest_pd(model, infeasible_beta, poses, 1e-3)
    assert result.status == "optimal"
    lam = model.arm_min_eigenvalue(poses, result.parameters.values)
    assert lam.min() >= 1e-3 * (1 - 1e-6)
    assert lam.min() == pytest.approx(1e-3, rel=1e-4)  # minimal: the margin is active, not exceeded
    direct, status, _ = sdp._solve(infeasible_beta, sdp.inertia_basis(model, poses), 1e-3)
    assert status == "optimal"
    np.testing.assert_allclose(
        result.parameters.values, direct, atol=1e-5 * np.linalg.norm(direct - infeasible_beta)
    )
    assert result.n_active < len(poses)  # the lazy activation really carried fewer poses


def test_parameters_outside_m_do_not_move(model, infeasible_beta):
    result = sdp.nearest_pd(model, infeasible_beta, _poses(300, 2), 1e-3)
    for name in model.names:
        if name.startswith("FV"):
            assert result.change[model.names.index(name)] == pytest.approx(0.0, abs=1e-9)


def test_a_feasible_point_is_its_own_projection(model, feasible_beta):
    poses = _poses(300, 3)
    assert model.arm_min_eigenvalue(poses, feasible_beta).min() > 2e-3
    result = sdp.nearest_pd(model, feasible_beta, poses, 1e-3)
    assert result.change_norm < 1e-7


def test_constraint_poses_merge_duplicates():
    rng = np.random.default_rng(4)
    theta = rng.normal(size=(1000, 8))
    dtheta = rng.normal(size=(1000, 8))
    idx = sdp.constraint_poses(theta, dtheta)
    assert len(idx) == len(np.unique(idx)) <= 200
    speed = np.linalg.norm(dtheta[:, :7], axis=1)
    assert set(np.argsort(-speed)[:80]) <= set(idx.tolist())
    short = sdp.constraint_poses(theta[:50], dtheta[:50])
    assert len(short) == 50  # a short record is used whole


def test_conditional_projection_picks_the_smallest_sufficient_epsilon(model, infeasible_beta):
    rng = np.random.default_rng(5)
    theta = rng.uniform(-np.pi, np.pi, (2000, 8))
    dtheta = rng.normal(size=(2000, 8))
    outcome = sdp.conditional_projection(model, infeasible_beta, theta, dtheta)
    assert outcome.chosen is not None
    assert model.arm_min_eigenvalue(theta, outcome.chosen.parameters.values).min() > 0
    tried = [a["epsilon"] for a in outcome.attempts]
    assert tried == list(sdp.EPSILON_LADDER[: len(tried)])
    assert all(not a["pd_on_record"] for a in outcome.attempts[:-1])


def test_rescue_appends_violators_until_the_check_set_is_clean(model, infeasible_beta):
    check = _poses(5000, 7)
    candidates = _poses(2000, 6)
    # start from the least violated poses only, so the first solve leaves most of the domain
    # infeasible
    initial = candidates[np.argsort(-model.arm_min_eigenvalue(candidates, infeasible_beta))[:10]]
    outcome = rescue_stage.rescue(
        model, infeasible_beta, initial, check, epsilon=1e-3, max_added_per_pass=50
    )
    assert outcome.converged
    assert (
        len(outcome.passes) >= 2
    )  # the initial poses were not enough: constraint generation did work
    assert outcome.passes[0]["violators"] > 0 and outcome.passes[-1]["violators"] == 0
    assert model.arm_min_eigenvalue(check, outcome.result.parameters.values).min() > 0.5e-3
