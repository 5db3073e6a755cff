"""The rescue over Theta (D-E): constraint generation, minimal change, acceptance by the audit."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.acceptance import audit
from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.identification import projection as sdp
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet, load_parameters, save_parameters

from .audit_cases import description_beta


@pytest.fixture(scope="module")
def infeasible():
    """The description's model with ZZR6 lowered until the wrist loses PD over part of Theta."""
    model = shared_model("reduced")
    beta = description_beta().copy()
    beta[model.names.index("ZZR6")] -= 0.0058
    result = audit.audit(beta, seed=1, model=model)
    assert not result.passed  # the case is really infeasible
    return beta


@pytest.fixture(scope="module")
def rescued(infeasible):
    return rescue_stage.rescue_over_theta(shared_model("reduced"), infeasible)


def test_rescued_model_passes_the_audit_on_every_seed(rescued):
    assert rescued.converged
    for seed in (1, 2, 3, 4, 5):
        result = audit.audit(rescued.result.parameters.values, seed=seed)
        assert result.passed and result.lambda_min > 0


def test_margin_holds_on_the_constraint_set_to_solver_precision(rescued):
    assert rescued.result.lambda_min_on_set == pytest.approx(rescue_stage.RESCUE_EPSILON, rel=1e-5)


def test_change_is_the_minimum_the_final_constraints_require(infeasible):
    """A direct solve on the whole final Theta_r (no lazy activation) gives the same point.

    On a Theta_r started from 200 uniform poses and the corners (the rescue's own loop, checked on
    an audit-size draw), so that the direct solve stays a few hundred LMIs."""
    model = shared_model("reduced")
    initial = np.vstack(
        [audit.uniform_poses(200, rescue_stage.RESCUE_INITIAL_SEED), audit.box_corners()]
    )
    check = audit.audit_poses(rescue_stage.RESCUE_CHECK_SEED).poses
    rescued = rescue_stage.rescue(model, infeasible, initial, check)
    assert rescued.converged
    theta_r = rescued.constraint_poses
    assert len(theta_r) >= len(initial)
    direct, status, _ = sdp._solve(
        infeasible, sdp.inertia_basis(model, theta_r), rescue_stage.RESCUE_EPSILON
    )
    assert status in sdp.ACCEPTED_STATUSES
    change = rescued.result.change_norm
    assert np.linalg.norm(direct - infeasible) == pytest.approx(change, rel=1e-4)
    np.testing.assert_allclose(rescued.result.parameters.values, direct, atol=1e-3 * change)


def test_cli_rescue_writes_an_accepted_model(infeasible, tmp_path, capsys):
    model = shared_model("reduced")
    source = tmp_path / "clie.csv"
    save_parameters(
        source, ParameterSet(model.names, infeasible, np.full(39, 1e-4), {"stage": "clie"})
    )
    out = tmp_path / "rescued.csv"
    assert cli.main(["rescue", str(source), "--out", str(out)]) == 0
    loaded = load_parameters(out, model.names)
    assert loaded.meta["accepted"] == "True" and loaded.meta["stage"] == "rescued"
    assert "ACCEPTED" in capsys.readouterr().out
