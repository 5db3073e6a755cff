"""Dual-metric WLS (Yang & Hatton) and error-covariance WLS beside OLS (identification.weighted):
recovery of a known beta, coordinate invariance, M >= 0 at the data by construction, the
Theta_r option, an infeasible option reported with the solver status, and `--method` in the CLI."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.acceptance import audit
from crane_lib.identification import weighted
from crane_lib.identification.condition import identify_condition
from crane_lib.logs.preprocessing import preprocess
from crane_lib.logs.raw_log import read_raw_log, write_raw_log
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import load_parameters
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.twin import recorder as twin
from crane_lib.twin.truth import load_truth

AP01 = TRAJECTORY_DIR / "AP01.txt"


@pytest.fixture(scope="module")
def model():
    return DynamicModel("reduced")


@pytest.fixture(scope="module")
def truth(model):
    return model.base_from_standard(load_truth()).values


def synthetic_bundle(model, beta, n=120, noise=0.0, seed=3):
    """Random configurations, speeds and accelerations over the arm's range; tau = Y beta (+
    noise)."""
    rng = np.random.default_rng(seed)
    theta = rng.uniform(-1.5, 1.5, (n, 8))
    theta[:, 3] = rng.uniform(-2.5, 0.0, n)
    dtheta, ddtheta = rng.normal(0, 1.0, (n, 8)), rng.normal(0, 3.0, (n, 8))
    tau = model.inverse_dynamics(theta, dtheta, ddtheta, beta) + rng.normal(0, noise, (n, 8))
    return SimpleNamespace(
        theta=theta,
        dtheta=dtheta,
        ddtheta=ddtheta,
        tau=tau,
        ts=0.04,
        provenance={"log": "synthetic"},
    )


@pytest.fixture(scope="module")
def noisy(model, truth):
    return synthetic_bundle(model, truth, noise=0.05)


def test_recovers_a_known_beta_from_noise_free_data(model, truth):
    result = weighted.dual_metric_wls(synthetic_bundle(model, truth), model)
    assert result.status in weighted.ACCEPTED_STATUSES
    scale = np.abs(truth) + 1e-3 * np.abs(truth).max()
    assert np.max(np.abs(result.values - truth) / scale) < 1e-3
    assert result.info["objective"] < 1e-6 * len(result.residual)
    assert result.n_samples == 120 and result.n_rows == 8 * 120


def test_objective_and_psd_at_every_sample(model, noisy):
    """The solver's sum of t_k equals sum r^T M^-1 r computed directly (the LMIs are laid out as
    intended), and M(theta_k; beta) is positive semidefinite at every sample of the fit."""
    result = weighted.dual_metric_wls(noisy, model)
    info = result.info
    assert info["objective"] == pytest.approx(info["objective_solver"], rel=1e-5)
    lam = model.arm_min_eigenvalue(noisy.theta, result.values)
    assert lam.min() >= -1e-10 and lam.min() == pytest.approx(info["lambda_min_data"])
    assert model.inertia_matrix(noisy.theta[:1], result.values)[0, 7, 7] > 0  # IA8


@pytest.mark.parametrize("chart", ["degrees", "warped"])
def test_dual_metric_is_coordinate_independent_and_ols_is_not(model, noisy, chart):
    jac = (
        weighted.degrees_chart((2, 4, 6))
        if chart == "degrees"
        else weighted.warped_chart(noisy.theta, 0.5)
    )
    base = {name: weighted.fit(name, noisy, model) for name in weighted.METHODS}
    charted = {name: weighted.fit(name, noisy, model, chart=jac) for name in weighted.METHODS}

    def change(name):
        return np.linalg.norm(charted[name].values - base[name].values) / np.linalg.norm(
            base[name].values
        )

    assert change("dual-metric") < 1e-4  # solver tolerance; OLS moves by about 1e-2 here
    assert change("ols") > 1e-3
    if chart == "degrees":  # per-axis variance weights undo a constant rescaling of an axis, except
        assert change("wls") < 0.1 * change("ols")  # through the OLS first pass that sets them ...
    else:  # ... but not a configuration-dependent chart
        assert change("wls") > 1e-3


def test_theta_r_constraints_hold_their_margin(model, noisy):
    poses = audit.uniform_poses(40, seed=6)
    free = weighted.dual_metric_wls(noisy, model)
    epsilon = 1.5 * float(
        model.arm_min_eigenvalue(poses, free.values).min()
    )  # binding by construction
    result = weighted.dual_metric_wls(noisy, model, poses=poses, epsilon=epsilon)
    assert result.method == "dual-metric+Theta_r" and result.info["poses_active"] > 0
    assert audit.arm_lambda_min(result.values, poses, model).min() >= epsilon * (1 - 1e-6) - 1e-10
    assert result.info["objective"] > free.info["objective"]  # the constraint costs fit


def test_an_infeasible_option_set_raises_with_the_status(model, noisy):
    bounds = {"IA8": (None, -1e-4)}  # the hand's LMI needs IA8 >= 0: no beta satisfies both
    with pytest.raises(weighted.DualMetricFailure) as caught:
        weighted.dual_metric_wls(noisy, model, bounds=bounds, condition="AP01 at 40 ms")
    assert "Infeasible" in caught.value.status
    assert "AP01 at 40 ms" in str(caught.value) and caught.value.status in str(caught.value)


def test_a_solver_stop_is_an_error_not_ols(model, noisy):
    with pytest.raises(weighted.DualMetricFailure, match="MaxIterations"):
        weighted.dual_metric_wls(noisy, model, settings={"max_iter": 2})


def test_cli_method_selects_the_start(tmp_path, model):
    samples, metadata = twin.record(AP01, seed=11)
    log_path = write_raw_log(tmp_path / "AP01.npz", samples, metadata)
    out = tmp_path / "dm.csv"
    argv = [
        "identify",
        str(log_path),
        "--trajectory",
        str(AP01),
        "--ts",
        "0.08",
        "--refine",
        "none",
    ]
    assert cli.main([*argv, "--out", str(out), "--method", "dual-metric"]) == 0
    loaded = load_parameters(out, model.names)
    assert loaded.meta["method"] == "dual-metric"
    # the file holds the minimizer of the dual-metric objective on that bundle, not the OLS start
    bundle = preprocess(read_raw_log(log_path), 0.08)
    data = weighted.idim_data(bundle, model)
    ols_start = identify_condition(bundle, "AP01", model).start.values
    assert np.linalg.norm(loaded.values - ols_start) > 1e-6 * np.linalg.norm(ols_start)
    objective = weighted.dual_metric_objective
    assert objective(model, loaded.values, data).sum() < objective(model, ols_start, data).sum()


def test_consistent_links_option_gives_a_consistent_arm(model, noisy):
    """With the export's consistency constraints the estimate is K phi for a phi whose every link
    pseudo-inertia keeps the margin (to solver precision) and whose drive terms are >= 0; the
    constraint costs fit."""
    from crane_lib.export.consistent import consistency_constraints, link_margins

    constraints = consistency_constraints(model.parameter_set)
    result = weighted.dual_metric_wls(noisy, model, consistency=constraints)
    phi = np.array(result.info["standard"])
    np.testing.assert_allclose(constraints.base_matrix @ phi, result.values, atol=1e-8)
    assert link_margins(phi).min() >= 0.9 * constraints.margin > 0
    assert phi[constraints.nonnegative].min() >= -1e-8
    assert result.info["objective"] >= weighted.dual_metric_wls(noisy, model).info["objective"] * (
        1 - 1e-6
    )
