"""A condition before CLIE: routing by the PD test at visited configurations, projection, model
file."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from crane_lib.identification import condition as identify
from crane_lib.identification import metrics
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import load_parameters

from .conftest import description_model_beta


@pytest.fixture(scope="module")
def model():
    return DynamicModel("reduced")


@pytest.fixture(scope="module")
def true_beta():
    return description_model_beta(viscous=0.1)


def _bundle(model, beta, seed, n=1500, noise=0.0):
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 0.04
    w = 2 * np.pi * rng.uniform(0.05, 0.3, 8)
    amp = np.deg2rad(rng.uniform(30, 70, 8))
    theta = amp * np.sin(np.outer(t, w))
    dtheta = amp * w * np.cos(np.outer(t, w))
    ddtheta = -amp * w**2 * np.sin(np.outer(t, w))
    tau = model.inverse_dynamics(theta, dtheta, ddtheta, beta) + rng.normal(0, noise, (n, 8))
    return SimpleNamespace(
        ts=0.04,
        t=t,
        theta=theta,
        dtheta=dtheta,
        ddtheta=ddtheta,
        tau=tau,
        provenance={"source": "synthetic"},
    )


def test_pd_estimate_takes_the_direct_route(model, true_beta):
    result = identify.identify_condition(_bundle(model, true_beta, 1, noise=0.01), "SYN", model)
    assert result.route == identify.ROUTE_DIRECT and result.pd_visited and result.projection is None
    np.testing.assert_array_equal(result.start.values, result.ols.parameters.values)
    assert (
        metrics.prediction_error(model, result.start.values, _bundle(model, true_beta, 2)).rmse
        < 0.01
    )


def test_non_pd_estimate_is_projected_with_the_smallest_sufficient_epsilon(model, true_beta):
    bad = true_beta.copy()
    bad[model.names.index("ZZR6")] -= 0.006
    result = identify.identify_condition(_bundle(model, bad, 3), "SYN", model)
    assert result.route == identify.ROUTE_PROJECTED and not result.pd_visited
    assert result.projection.epsilon in (0.001, 0.002, 0.005, 0.01)
    assert model.arm_min_eigenvalue(_bundle(model, bad, 3).theta, result.start.values).min() > 0
    record = result.record()
    assert record["route"] == "O-S-C" and record["epsilon"] == result.projection.epsilon


def test_unidentifiable_condition_is_reported_not_raised(model, true_beta):
    bundle = _bundle(model, true_beta, 4)
    bundle.theta[:, 1:] = 0.2
    bundle.dtheta[:, 1:] = 0.0
    bundle.ddtheta[:, 1:] = 0.0
    result = identify.identify_condition(bundle, "SYN", model)
    assert result.route is None and "rank" in result.failure
    with pytest.raises(identify.IdentificationError, match="has no model"):
        identify.save_model("/nonexistent/never.csv", result)


def test_model_file_round_trip(model, true_beta, tmp_path):
    result = identify.identify_condition(_bundle(model, true_beta, 5, noise=0.01), "SYN", model)
    path = identify.save_model(tmp_path / "model.csv", result)
    loaded = load_parameters(path, model.names)
    np.testing.assert_array_equal(loaded.values, result.start.values)
    np.testing.assert_array_equal(loaded.std_errors, result.ols.parameters.std_errors)
    assert loaded.meta["route"] == "O-C" and loaded.meta["trajectory"] == "SYN"
    identify.write_condition_record(tmp_path / "rec.json", result)
    assert identify.load_condition_records(tmp_path)[0]["kappa"] == pytest.approx(result.ols.kappa)


def test_mne_normalizes_by_peak_to_peak(model, true_beta):
    bundle = _bundle(model, true_beta, 6)
    shifted = SimpleNamespace(**vars(bundle))
    shifted.tau = bundle.tau + 0.1  # a constant 0.1 N·m error on every axis
    err = metrics.prediction_error(model, true_beta, shifted)
    assert err.rmse == pytest.approx(0.1, rel=1e-6)
    assert err.mne == pytest.approx(np.mean(0.1 / np.ptp(bundle.tau, axis=0)), rel=1e-6)


def test_a_profile_reads_its_own_condition_records_from_a_shared_folder(tmp_path, monkeypatch):
    """One results folder may hold both profiles' condition records: with a profile, the reader
    and the record paths keep the conditions its OLS/SDP sweep lists; without one, all."""
    from crane_lib.records import write_json_record

    monkeypatch.setattr(identify, "CONDITIONS_DIR", tmp_path)
    # AG02 at 40 ms is in both profiles' sweep, AG01 at 40 ms only in the full one's
    for trajectory in ("AG01", "AG02"):
        record = {"trajectory": trajectory, "ts": 0.04, "run": 1, "ols": [1.0]}
        write_json_record(identify.condition_record_path(trajectory, 0.04), record)
    everything = [r["trajectory"] for r in identify.load_condition_records()]
    assert everything == ["AG01", "AG02"]
    assert [r["trajectory"] for r in identify.load_condition_records(profile="full")] == everything
    assert [r["trajectory"] for r in identify.load_condition_records(profile="quick")] == ["AG02"]
    assert identify.profile_record_paths("quick") == [tmp_path / "AG02_run1_40ms.json"]
    assert len(identify.profile_record_paths()) == len(identify.profile_record_paths("full")) == 2
