"""Reproducibility measures (acceptance.reproducibility): one execution refitted through the
pipeline,
Table XI's spread, parameter and prediction reproducibility, audit stability, the interval ladder,
the ramp criterion, and a repeat that is listed but not recorded."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from crane_lib.acceptance import audit
from crane_lib.acceptance import reproducibility as repro
from crane_lib.identification import condition as identify
from crane_lib.identification import metrics
from crane_lib.model.dynamics import model as shared_model

from .conftest import description_model_beta, sinusoid_bundle


@pytest.fixture(scope="module")
def truth():
    return description_model_beta(viscous=0.1)


@pytest.fixture(scope="module")
def executions(truth):
    """Two 'executions' of one trajectory: the same motion law, different noise draws."""
    return {run: sinusoid_bundle(truth, 1, noise=0.01 * run) for run in (1, 2)}


def test_an_execution_is_refitted_through_the_pipeline(executions, truth):
    model = shared_model("reduced")
    heldout = [sinusoid_bundle(truth, 20 + i, 300) for i in range(3)]
    record = repro.refit_bundle(executions[1], "SYN", 1, heldout, audit_kind="sparse")
    expected = identify.identify_condition(executions[1], "SYN", model)
    np.testing.assert_array_equal(record["ols"], expected.ols.parameters.values)
    assert record["route"] == expected.route and record["n_samples"] == expected.ols.n_samples
    assert record["heldout"]["rmse"] == metrics.pooled_rmse(
        model, expected.ols.parameters.values, heldout
    )
    found = audit.audit(expected.ols.parameters.values, 1, "sparse")
    assert (record["audit"]["passed"], record["audit"]["lambda_min"]) == (
        found.passed,
        found.lambda_min,
    )
    json.dumps(record)  # the record is what the one record writer can write


def _records(executions):
    model = shared_model("reduced")
    out = []
    for run, bundle in executions.items():
        result = identify.identify_condition(bundle, "SYN", model, run=run)
        out.append({**result.record(), "ts": 0.04})
    return out


def test_parameter_differences_are_relative_to_the_first_execution(executions):
    records = _records(executions)
    diffs = repro.parameter_differences(records, "SYN").set_index("parameter")
    a, b = np.array(records[0]["ols"]), np.array(records[1]["ols"])
    i = records[0]["names"].index("ZZR2")
    assert diffs.loc["ZZR2", "relative_difference"] == pytest.approx(abs(b[i] - a[i]) / abs(a[i]))
    assert diffs.loc["ZZR2", "t_ratio_first"] == pytest.approx(
        abs(a[i]) / records[0]["std_errors"][i]
    )


def test_the_other_executions_model_never_fits_better_than_the_own_fit(executions, monkeypatch):
    """OLS minimizes the RMSE on its own record, so the cross-execution loss cannot be negative."""
    monkeypatch.setattr(repro, "condition_bundle", lambda trajectory, ts, run: executions[run])
    losses = repro.cross_execution_losses(_records(executions), "SYN")
    assert len(losses) == 2 and (losses["loss (%)"] >= 0).all() and (losses["loss (%)"] > 0).any()
    model = shared_model("reduced")
    beta_2 = identify.identify_condition(executions[2], "SYN", model).ols.parameters.values
    row = losses[losses["record of execution"] == 1].iloc[0]
    assert row["RMSE, other execution's model (N·m)"] == pytest.approx(
        metrics.prediction_error(model, beta_2, executions[1]).rmse
    )


def test_table_xi_spread_and_its_groups():
    frame = pd.DataFrame(
        [
            {
                "trajectory": "AG02",
                "run": 1,
                "ts": 0.04,
                "failure": "",
                "n_samples": 3000,
                "heldout_rmse": 1.00,
            },
            {
                "trajectory": "AG02",
                "run": 2,
                "ts": 0.04,
                "failure": "",
                "n_samples": 3100,
                "heldout_rmse": 1.02,
            },
            {
                "trajectory": "AP03",
                "run": 1,
                "ts": 0.04,
                "failure": "",
                "n_samples": 500,
                "heldout_rmse": 1.20,
            },
            {
                "trajectory": "AP03",
                "run": 2,
                "ts": 0.04,
                "failure": "",
                "n_samples": 510,
                "heldout_rmse": 1.10,
            },
            {
                "trajectory": "AP03",
                "run": 2,
                "ts": 0.08,
                "failure": "",
                "n_samples": 250,
                "heldout_rmse": 9.0,
            },
            {
                "trajectory": "PB01",
                "run": 1,
                "ts": 0.04,
                "failure": "",
                "n_samples": 2900,
                "heldout_rmse": 1.05,
            },
        ]
    )
    table = repro.run_to_run_table(frame)
    assert list(table.index) == [
        "AG02",
        "AP03",
    ]  # PB01 has one execution; the 80 ms row is not Table XI's
    assert table.loc["AG02", "spread (%)"] == pytest.approx(100 * 0.02 / 1.01)
    assert table.loc["AP03", "spread (%)"] == pytest.approx(100 * 0.10 / 1.15)
    assert table.loc["AP03", "pair blocks only"] and not table.loc["AG02", "pair blocks only"]


def test_audit_stability_compares_verdicts_and_margins():
    frame = pd.DataFrame(
        [
            {
                "trajectory": "AG02",
                "run": r,
                "ts": ts,
                "audit_passed": ok,
                "audit_lambda_min": lam,
                "audit_violations": 0 if ok else 5,
            }
            for r, ts, ok, lam in (
                (1, 0.04, False, -1e-3),
                (2, 0.04, False, -2e-3),
                (1, 0.08, True, 1.00e-3),
                (2, 0.08, True, 1.02e-3),
            )
        ]
    )
    table = repro.audit_stability(frame)
    assert table["same verdict"].all()
    assert table.loc[0.08, "margin agreement (%)"] == pytest.approx(100 * 0.02e-3 / 1.01e-3)


def test_ladder_changes():
    ladder = pd.DataFrame(
        [
            {"trajectory": "X", "ts": ts, "in-sample residual (N·m)": r, "held-out RMSE (N·m)": h}
            for ts, r, h in (
                (0.01, 0.20, 0.190),
                (0.02, 0.19, 0.189),
                (0.04, 0.18, 0.188),
                (0.08, 0.15, 0.187),
            )
        ]
    )
    changes = repro.ladder_changes(ladder)
    assert changes.loc["X"].iloc[0] == pytest.approx(25.0)
    assert changes.loc["X"].iloc[1] == pytest.approx(100 * (1 - 0.187 / 0.188))


def test_the_ramp_criterion_names_the_coarsest_interval_with_no_short_ramp():
    ramps = repro.ramp_sampling(("AG02", "AP03"))
    shares = ramps[[c for c in ramps.columns if c.startswith("<")]]
    intervals = np.array([float(c.split(" at ")[1].split(" ms")[0]) for c in shares.columns])
    for name, row in shares.iterrows():
        assert (
            ramps.loc[name, "coarsest adequate interval (ms)"]
            == intervals[row.to_numpy() == 0].max()
        )
        assert np.all(
            np.diff(row.to_numpy()) >= 0
        )  # a coarser interval never samples a ramp better


def test_a_repeat_listed_but_not_recorded_names_the_step_that_records_it(monkeypatch, tmp_path):
    monkeypatch.setattr(
        repro, "recording_path", lambda trajectory, run=1: tmp_path / f"{trajectory}_run{run}.npz"
    )
    (tmp_path / "AG02_run1.npz").write_bytes(b"")
    conditions = [
        {"trajectory": "AG02", "run": 1},
        {"trajectory": "AG02", "run": 2},
        {"trajectory": "AP03", "run": 2},
        {"trajectory": "AP03", "run": 2},
    ]
    messages = repro.missing_recordings(conditions, "quick")
    assert len(messages) == 2  # AG02 run 1 exists; AP03 run 2 reported once
    assert "AG02 execution 2" in messages[0] and "make book PROFILE=quick" in messages[0]
    assert (
        "AP03 execution 2" in messages[1]
        and "recordings_quick.csv" in messages[1]
        and "add a row" in messages[1]
    )
