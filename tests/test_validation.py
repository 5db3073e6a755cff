"""The held-out validation (chapter "Validation"): Table XVI's shares and moving joints, the
run-to-run spread, Table XX's ordering verdicts, Sec. VII-B's rank correlation and standing,
the link-7 condition of Sec. VII-E, the accepted model's record and its cached pipeline step,
and the errors a reader gets when a recording or the accepted model is missing."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from crane_book import pipeline
from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance import audit, consistency, held_out, selection
from crane_lib.errors import InputError
from crane_lib.identification import condition as identify
from crane_lib.identification import metrics
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet, standard_parameter_names
from crane_lib.reporting.chapters import validation
from crane_lib.reporting.tables import comparison_table

from .audit_cases import description_beta
from .conftest import random_link_inertials, standard_from_inertials


@pytest.fixture(scope="module")
def model():
    return shared_model("reduced")


def _motion(seed, n=400, ts=0.04, still_velocity=False, still_acceleration=False):
    """Sinusoidal joint motion; optionally with velocity or acceleration replaced by zeros."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * ts
    w = 2 * np.pi * rng.uniform(0.1, 0.5, 8)
    amp = np.deg2rad(rng.uniform(20, 60, 8))
    theta = amp * np.sin(np.outer(t, w))
    dtheta = np.zeros_like(theta) if still_velocity else amp * w * np.cos(np.outer(t, w))
    ddtheta = np.zeros_like(theta) if still_acceleration else -amp * w**2 * np.sin(np.outer(t, w))
    return SimpleNamespace(ts=ts, t=t, theta=theta, dtheta=dtheta, ddtheta=ddtheta)


def _rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


# ----------------------------------------------------------------------------- Table XVI


def test_the_inertia_share_is_m_times_acceleration_computed_independently(model):
    beta = description_beta()
    b = _motion(1)
    b.tau = model.inverse_dynamics(b.theta, b.dtheta, b.ddtheta, beta)
    shares = metrics.torque_shares(model, beta, b)
    m_qdd = np.einsum(
        "nij,nj->ni", model.inertia_matrix(b.theta, beta), b.ddtheta
    )  # M(θ) θ̈ from the inertia kernel
    assert shares.inertia == pytest.approx(_rms(m_qdd) / _rms(b.tau), rel=1e-9)
    gravity = model.gravity_torque(b.theta, beta)
    assert shares.gravity == pytest.approx(_rms(gravity) / _rms(b.tau), rel=1e-9)
    assert shares.both == pytest.approx(_rms(b.tau - gravity) / _rms(b.tau), rel=1e-9)
    assert shares.residual == pytest.approx(0.0, abs=1e-12)


def test_shares_vanish_with_the_motion_that_carries_them(model):
    beta = description_beta()
    still = _motion(2, still_velocity=True)
    still.tau = model.inverse_dynamics(still.theta, still.dtheta, still.ddtheta, beta)
    shares = metrics.torque_shares(model, beta, still)
    assert shares.velocity == 0.0 and shares.both == pytest.approx(shares.inertia, rel=1e-12)
    steady = _motion(3, still_acceleration=True)
    steady.tau = 2.0 * model.inverse_dynamics(steady.theta, steady.dtheta, steady.ddtheta, beta)
    shares = metrics.torque_shares(model, beta, steady)
    assert shares.inertia == 0.0 and shares.both == pytest.approx(shares.velocity, rel=1e-12)
    assert shares.residual == pytest.approx(0.5, rel=1e-12)  # measured twice the prediction


def test_moving_joints_count_arm_joints_above_the_threshold_only():
    threshold = metrics.MOVING_JOINT_THRESHOLD_RAD_S
    dtheta = np.zeros((4, 8))
    dtheta[1, :6] = 2 * threshold
    dtheta[2, :7] = -2 * threshold
    dtheta[3, :] = threshold  # at the threshold is not above it
    dtheta[0, 7] = 10.0  # the hand is not an arm joint
    assert metrics.moving_joint_counts(dtheta).tolist() == [0, 6, 7, 0]
    assert (
        metrics.share_moving_at_least(dtheta, 6) == 0.5
        and metrics.share_moving_at_least(dtheta, 7) == 0.25
    )


def test_spread_over_executions():
    s = metrics.spread([1.0, 2.0, 3.0])
    assert (s.n, s.mean, s.sd_relative, s.range_relative) == (3, 2.0, 0.5, 1.0)
    one = metrics.spread([0.2])
    assert (
        one.n == 1
        and one.mean == 0.2
        and np.isnan(one.sd_relative)
        and np.isnan(one.range_relative)
    )


# ----------------------------------------------------------------------------- Table VII and XX


def test_per_axis_errors_and_the_relative_error(model):
    beta = description_beta()
    b = _motion(4)
    b.tau = model.inverse_dynamics(b.theta, b.dtheta, b.ddtheta, beta)
    offset = np.arange(1, 9) * 0.01
    b.tau = (
        b.tau + offset * np.where(np.arange(len(b.t)) % 2 == 0, 1.0, -1.0)[:, None]
    )  # ±offset: per-axis RMSE = offset
    frame = held_out.per_axis_errors(model, beta, {("V01", 1): b})
    np.testing.assert_allclose(frame["RMSE"], offset, rtol=1e-12)
    np.testing.assert_allclose(frame["relative"], offset / np.ptp(b.tau, axis=0), rtol=1e-12)
    error = metrics.prediction_error(model, beta, b)
    assert error.mne == pytest.approx(frame["relative"].mean(), rel=1e-12)


def _table_xx(rmse, p2p):
    rows = [
        {
            "record": "V01",
            "run": 1,
            "axis": a + 1,
            "RMSE": rmse[a],
            "peak-to-peak": p2p[a],
            "relative": rmse[a] / p2p[a],
        }
        for a in range(8)
    ]
    return held_out.table_xx(pd.DataFrame(rows))


def test_the_papers_orderings_are_verdicts_that_can_fail():
    #           axis 1     2     3     4     5      6      7      8
    rmse = np.array([0.10, 0.40, 0.12, 0.20, 0.05, 0.055, 0.04, 0.02])
    p2p = np.array([3.00, 8.00, 1.50, 3.00, 0.60, 0.50, 0.30, 0.40])
    verdicts = {c.claim: c.holds for c in held_out.ordering_claims(_table_xx(rmse, p2p))}
    assert all(verdicts.values()), verdicts
    swapped = rmse.copy()
    swapped[[1, 3]] = swapped[[3, 1]]  # axis 4 now has the largest error
    p2p_flat = p2p.copy()
    p2p_flat[5] = (
        4.0  # axis 6's range no longer small: its relative error drops, the ratio claim fails
    )
    verdicts = {c.claim: c.holds for c in held_out.ordering_claims(_table_xx(swapped, p2p_flat))}
    assert not verdicts["largest absolute error"]
    assert not verdicts["rank of axis 6 by relative error"]
    assert not next(v for k, v in verdicts.items() if k.startswith("from axis 2 to axis 6"))


def test_gains_and_run_to_run_over_executions():
    frame = pd.DataFrame(
        [
            {"record": "V01", "run": r, "model": m, "RMSE": v, "MNE": v / 10}
            for r, (clie, acc) in enumerate([(0.20, 0.19), (0.22, 0.21)], start=1)
            for m, v in (("CLIE", clie), ("accepted", acc))
        ]
    )
    gain = validation.gains(frame, "accepted", "CLIE")
    assert gain.loc["V01", "RMSE"] == pytest.approx(1 - 0.20 / 0.21)
    spread = validation.run_to_run(frame).set_index("model")
    assert spread.loc["CLIE", "executions"] == 2 and spread.loc[
        "CLIE", "range_relative"
    ] == pytest.approx(0.02 / 0.21)


# ----------------------------------------------------------------------------- Sec. VII-B


def test_rank_correlation_is_spearmans_rho():
    x = np.array([31.6, 45.0, 52.0, 80.0, 120.0, 172.2])
    y = np.array([0.20, 0.17, 0.19, 0.18, 0.16, 0.15])
    ranks_x, ranks_y = x.argsort().argsort(), y.argsort().argsort()
    expected = 1 - 6 * np.sum((ranks_x - ranks_y) ** 2) / (len(x) * (len(x) ** 2 - 1))
    result = selection.rank_correlation(x, y)
    assert result.rho == pytest.approx(expected) and result.n == 6 and 0 < result.p_value < 1
    assert selection.rank_correlation(x[:2], y[:2]) is None


def test_heldout_standing_is_the_rank_and_the_gap_to_the_best():
    standing = selection.heldout_standing([0.30, 0.10, 0.20], 0)
    assert standing == {"rank": 3, "of": 3, "best": 1, "gap": pytest.approx(2.0)}


def test_candidates_come_from_condition_records_at_the_interval(model):
    beta = description_beta()
    held = _motion(5)
    held.tau = model.inverse_dynamics(held.theta, held.dtheta, held.ddtheta, beta)
    worse = beta * 1.1
    records = [
        {"trajectory": "B", "ts": 0.04, "run": 1, "kappa": 50.0, "ols": worse.tolist()},
        {"trajectory": "A", "ts": 0.04, "run": 1, "kappa": 40.0, "ols": beta.tolist()},
        {"trajectory": "A", "ts": 0.02, "run": 1, "kappa": 30.0, "ols": worse.tolist()},
        {"trajectory": "C", "ts": 0.04, "run": 1, "kappa": 60.0, "ols": None},
    ]
    frame = held_out.candidate_heldout(model, records, [held])
    assert list(frame.index) == ["A", "B"] and frame.loc["A", "held-out RMSE"] == pytest.approx(
        0.0, abs=1e-12
    )
    assert frame.loc["B", "held-out RMSE"] > 0


# ----------------------------------------------------------------------------- Sec. VII-E


def test_link_seven_is_the_only_isolated_link(model):
    assert consistency.isolated_links(model) == [7]


def test_every_physically_consistent_link_seven_satisfies_the_condition(model, rng):
    names, grouping = standard_parameter_names(), model.base_matrix()
    for _ in range(50):
        links = random_link_inertials(rng)
        standard = standard_from_inertials(links, np.full(8, 5e-3), np.full(8, 0.1), np.zeros(8))
        beta = grouping @ np.array([standard[n] for n in names])
        (condition,) = consistency.necessary_conditions(model, beta)
        assert condition.holds and condition.margin > 0 and condition.violated_by() == []


def test_a_negative_zzr7_or_a_large_xxr7_breaks_link_seven(model):
    beta = description_beta().copy()
    zz, xx = model.names.index("ZZR7"), model.names.index("XXR7")
    beta[zz] = -3.7e-5
    (condition,) = consistency.necessary_conditions(model, beta)
    assert not condition.holds and condition.violated_by() == ["ZZR7"]
    beta[zz], beta[xx] = 1e-4, -2e-4
    (condition,) = consistency.necessary_conditions(model, beta)
    assert not condition.holds and condition.violated_by() == ["ZZR7", "XXR7"]
    assert min(condition.sigma_diagonal) < 0


def test_the_77_entry_of_m_is_ia7_plus_zzr7_everywhere(model):
    beta = description_beta()
    poses = audit.uniform_poses(200, seed=3)
    entry = consistency.inertia_entry(model, beta, 7, poses)
    expected = beta[model.names.index("IA7")] + beta[model.names.index("ZZR7")]
    np.testing.assert_allclose(entry, expected, rtol=1e-12)


# ----------------------------------------------------------------------------- the accepted model


@pytest.fixture(scope="module")
def accepted_model(model):
    """Algorithm 1's result for a synthetic condition, audited on a small pose set (the record's
    content, not the audit, is under test here)."""
    beta = description_beta()
    b = _motion(6, n=1500)
    b.tau = model.inverse_dynamics(b.theta, b.dtheta, b.ddtheta, beta) + np.random.default_rng(
        7
    ).normal(0, 0.01, (1500, 8))
    b.provenance = {"source": "synthetic"}
    condition = identify.identify_condition(b, "AG02", model)
    refined = ParameterSet(
        model.names, condition.start.values, condition.ols.parameters.std_errors, {"stage": "fast"}
    )
    poses = audit.PoseSet(
        audit.uniform_poses(300, 1), np.zeros(300, dtype=np.int8), (audit.UNIFORM,), 1, "test"
    )
    audits = [audit.audit_pose_set(refined.values, poses)]
    parameters = ParameterSet(
        model.names, refined.values, refined.std_errors, {"stage": "accepted", "accepted": "True"}
    )
    return accepted_stage.AcceptedModel(
        condition,
        {"method": "fast", "iterations": 3, "wall_time_s": 1.5},
        refined,
        audits,
        None,
        audits,
        parameters,
        {"log_sha256": "x"},
    )


def test_the_accepted_record_holds_what_the_chapter_reads_and_no_run_time(
    accepted_model, tmp_path, model
):
    csv_path, json_path = accepted_stage.write_accepted(accepted_model, 0.04, tmp_path)
    assert csv_path.name == "AG02_run1_40ms.csv" and json_path.name == "AG02_run1_40ms.json"
    parameters, record = accepted_stage.load_accepted("AG02", 0.04, 1, tmp_path)
    np.testing.assert_array_equal(parameters.values, accepted_model.parameters.values)
    np.testing.assert_array_equal(
        record["std_errors"], accepted_model.condition.ols.parameters.std_errors
    )
    assert record["first_audits"][0]["lambda_min"] == accepted_model.first_audits[0].lambda_min
    assert (
        record["route"] == accepted_model.condition.route
        and record["rescue"] is None
        and record["accepted"] is True
    )
    assert "wall_time_s" not in record["refinement"]
    first = json_path.read_bytes()
    accepted_stage.write_accepted(accepted_model, 0.04, tmp_path)
    assert json_path.read_bytes() == first  # same inputs, same bytes


def test_a_missing_accepted_model_names_the_file_and_the_make_step(tmp_path):
    with pytest.raises(InputError) as error:
        accepted_stage.load_accepted("AG02", 0.04, 1, tmp_path)
    assert str(tmp_path / "AG02_run1_40ms.csv") in str(error.value) and "make book" in str(
        error.value
    )


def test_the_accepted_step_reruns_only_when_an_input_changes(accepted_model, tmp_path, monkeypatch):
    log = tmp_path / "AG02_run1.npz"
    log.write_bytes(b"a recording")
    calls = []

    def fake_accept(raw_log, trajectory, ts, refine, **kwargs):
        calls.append((trajectory, ts, refine))
        return accepted_model

    monkeypatch.setattr(pipeline, "recording_path", lambda trajectory, run: log)
    monkeypatch.setattr(pipeline, "read_raw_log", lambda path: path)
    monkeypatch.setattr(pipeline.accepted_stage, "accept_recording", fake_accept)
    out = tmp_path / "accepted"
    assert pipeline.accepted_model_step("quick", directory=out).recomputed == 1
    assert pipeline.accepted_model_step("quick", directory=out).reused == 1
    log.write_bytes(b"another recording")
    rerun = pipeline.accepted_model_step("quick", directory=out)
    assert rerun.recomputed == 1 and f"{log} changed" in rerun.line()
    assert calls == [("AG02", 0.04, "fast")] * 2


def test_a_missing_recording_names_the_file_and_the_make_step(tmp_path, monkeypatch):
    missing = tmp_path / "V02_run3.npz"
    monkeypatch.setattr(held_out, "recording_path", lambda trajectory, run: missing)
    with pytest.raises(InputError) as error:
        held_out.recorded_bundle("V02", 3, 0.04, "full")
    assert str(missing) in str(error.value) and "crane_lib.twin.dataset --profile full" in str(
        error.value
    )
    monkeypatch.setattr(pipeline, "recording_path", lambda trajectory, run: missing)
    with pytest.raises(InputError, match="make book"):
        pipeline.accepted_model_step("full", directory=tmp_path)


def test_every_execution_of_the_validation_trajectories_is_listed():
    full = held_out.validation_executions("full")
    assert full == [(v, r) for v in validation.VALIDATION_TRAJECTORIES for r in (1, 2, 3)]
    assert held_out.validation_executions("quick") == [
        (v, 1) for v in validation.VALIDATION_TRAJECTORIES
    ]


def test_the_controller_diagram_states_the_gains_the_code_runs():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from crane_lib.model import controller
    from crane_lib.reporting.diagrams import controller_block_diagram

    fig = controller_block_diagram()
    text = " ".join(t.get_text() for t in fig.axes[0].texts)
    plt.close(fig)
    assert (
        f"K_P = {controller.K_P:g}" in text
        and f"K_V = {controller.K_V:.1f}" in text
        and f"K_I = {controller.K_I:.0f}" in text
    )


# ----------------------------------------------------------------------------- the comparison
# tables


def _audit_record(seed, lam, violations, component="uniform"):
    return {
        "seed": seed,
        "lambda_min": lam,
        "passed": violations == 0,
        "violations": {"grid": 0, "uniform": violations},
        "worst_component": component,
        "worst_pose_rad": [0.0] * 7,
    }


def _record(rescued: bool, model):
    beta = description_beta()
    refined = beta.copy()
    accepted_values = beta.copy()
    if rescued:
        accepted_values[model.names.index("ZZR4")] += 1e-3
    first = [
        _audit_record(s, -0.01 if rescued else 6e-4 + 1e-4 * s, 10 if rescued else 0)
        for s in (1, 2, 3, 4, 5)
    ]
    final = [_audit_record(s, 6e-4 + 1e-4 * s, 0) for s in (1, 2, 3, 4, 5)]
    rescue = {"passes": [{"pass": 1}], "change_norm": 1e-3} if rescued else None
    return {
        "names": model.names,
        "parameters": accepted_values.tolist(),
        "refined": refined.tolist(),
        "std_errors": np.full(len(beta), 1e-4).tolist(),
        "first_audits": first,
        "final_audits": final if rescued else first,
        "rescue": rescue,
        "refinement": {"iterations": 12},
    }


@pytest.mark.parametrize("rescued", [False, True])
def test_the_accepted_comparison_gives_a_computed_reason_for_every_difference(rescued, model):
    record = _record(rescued, model)
    frame = comparison_table(
        validation.accepted_comparisons(record)
    ).frame  # raises if a differing row has no reason
    reasons = " ".join(frame["why they differ"])
    assert ("no rescue" in reasons) != rescued
    assert any("ZZR4" in q for q in frame["quantity"]) == rescued
    assert validation.rescue_moves(record).index.tolist() == (["ZZR4"] if rescued else [])


def test_table_vii_and_its_comparisons_over_executions():
    rows = [
        {"record": r, "run": run, "model": m, "RMSE": 0.2 * f * (1 + 0.01 * run), "MNE": 0.05 * f}
        for r in validation.VALIDATION_TRAJECTORIES
        for run in (1, 2)
        for m, f in (("OLS", 1.0), ("CLIE", 1.005), ("accepted", 1.0))
    ]
    frame = pd.DataFrame(rows)
    table = validation.table_vii(frame)
    assert table.loc["V01", ("executions", "")] == 2
    assert table.loc["V01", ("RMSE SD (%)", "accepted")] == pytest.approx(
        100 * np.std([0.202, 0.204], ddof=1) / 0.203
    )
    assert table.loc["V02", ("MNE (%)", "CLIE")] == pytest.approx(100 * 0.05 * 1.005)
    rows = comparison_table(
        validation.table_vii_comparisons(
            frame, {"OLS": 0.2, "accepted": 0.19}, True, validation.run_to_run(frame), "full"
        )
    ).frame
    gains = rows[rows["quantity"].str.contains("gain of the accepted model")]
    assert (gains["why they differ"] == "inside the paper's range").all()  # 1 - 1/1.005 = 0.50 %
    one = frame[frame["run"] == 1].copy()
    clie = one["model"] == "CLIE"
    one.loc[clie, ["RMSE", "MNE"]] = one.loc[
        one["model"] == "accepted", ["RMSE", "MNE"]
    ].to_numpy()  # no rescue: accepted = CLIE
    rows = comparison_table(
        validation.table_vii_comparisons(
            one, {"OLS": 0.2, "accepted": 0.21}, False, validation.run_to_run(one), "quick"
        )
    ).frame
    assert rows["why they differ"].str.contains("quick profile records V02 once").any()
    assert rows["why they differ"].str.contains("no rescue ran").any()
    assert rows["why they differ"].str.contains("worse than OLS").any()


def test_the_other_comparison_tables_accept_what_a_quick_build_has(model):
    table = pd.DataFrame(
        {
            "M θ̈": [0.5, 0.5, 0.3, 0.3, 0.6],
            "residual": [0.4, 0.3, 0.2, 0.3, 0.2],
            "most arm joints moving": [7, 7, 6, 5, 4],
            "peak joint speed (rad/s)": [3.0, 3.2, 3.1, 4.4, 4.0],
        },
        index=["V01", "V02", "V03", "AG02", "AP01"],
    )
    rows = comparison_table(
        validation.table_xvi_comparisons(table, ["AG02", "AP01"], "quick")
    ).frame
    assert rows["why they differ"].str.contains("does not record PA07").any()
    assert {c.claim: c.holds for c in validation.table_xvi_claims(table)}[
        "AP01 has a higher M θ̈ share than V01 and V02"
    ]
    few = pd.DataFrame(
        {"kappa": [40.0, 120.0], "held-out RMSE": [0.2, 0.18]}, index=["AG02", "PB07"]
    )
    rows = comparison_table(
        validation.candidate_comparisons(few, held_out.kappa_against_heldout(few), "AG02", "quick")
    ).frame
    assert (
        rows["this book"].str.contains("fewer than three").any()
        and rows["quantity"].str.contains("gap to the best candidate \\(PB07").any()
    )
