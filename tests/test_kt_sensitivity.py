"""The Kt study (acceptance.kt_sensitivity): a draw is the pipeline's OLS on the scaled record, a
uniform error scales the solution exactly, the audit per draw is the audit's, draws are seeded, and
a failing draw is listed with its reason while the others go on."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from crane_lib.acceptance import audit
from crane_lib.acceptance import kt_sensitivity as kt
from crane_lib.errors import InputError
from crane_lib.identification import condition as identify

from .conftest import description_model_beta, sinusoid_bundle


@pytest.fixture(scope="module")
def truth():
    return description_model_beta(viscous=0.1)


@pytest.fixture(scope="module")
def bundle(truth):
    return sinusoid_bundle(truth, 1, 1200)


@pytest.fixture(scope="module")
def study(bundle, truth):
    heldout = {f"H{i}": sinusoid_bundle(truth, 10 + i, 400) for i in range(3)}
    return kt.prepare_study(
        bundle, heldout, audit.sparse_audit_poses(2), truth, trajectory="SYN", ts=0.04
    )


def test_a_draw_is_the_pipelines_ols_on_the_scaled_record(study, bundle):
    factors = kt.draw_factors(5)
    scaled = copy.copy(bundle)
    scaled.tau = bundle.tau * factors
    expected = identify.identify_condition(scaled, "SYN", study.model)
    found = kt.evaluate(study, factors, 5)
    np.testing.assert_allclose(found["ols"], expected.ols.parameters.values, rtol=1e-10, atol=1e-14)
    assert found["lambda_min_visited"] == pytest.approx(expected.lambda_min_visited, rel=1e-9)
    assert found["route"] == expected.route
    assert found["residual_rms"] == pytest.approx(expected.ols.residual_rms, rel=1e-9)


def test_the_audit_of_a_draw_is_the_audit(study):
    found = kt.evaluate(study, kt.draw_factors(9), 9)
    expected = audit.audit_pose_set(np.array(found["ols"]), study.poses.pose_set)
    assert found["audit"]["passed"] == expected.passed
    assert found["audit"]["lambda_min"] == expected.lambda_min
    assert found["audit"]["n_violations"] == expected.n_violations
    assert found["verdict_flipped"] == (expected.passed != study.nominal["audit"]["passed"])


def test_a_uniform_error_scales_the_solution_and_changes_nothing_else(study):
    result = kt.uniform_scaling(study, 1.1)
    assert result["max |beta - factor x beta_nominal| / max |factor x beta_nominal|"] < 1e-13
    assert result["routing lambda_min ratio"] == pytest.approx(1.1, rel=1e-12)
    assert result["audit lambda_min ratio"] == pytest.approx(1.1, rel=1e-12)
    assert result["route unchanged"] and result["verdict unchanged"]
    assert abs(result["held-out MNE change"]) < 1e-12
    # an independent per-axis error does move the MNE: the check above is not vacuous
    assert abs(kt.evaluate(study, kt.draw_factors(3), 3)["mne_change"]) > 1e-6


def test_draws_are_seeded_and_inside_the_papers_range():
    np.testing.assert_array_equal(kt.draw_factors(7), kt.draw_factors(7))
    assert not np.array_equal(kt.draw_factors(7), kt.draw_factors(8))
    draws = np.array([kt.draw_factors(s) for s in range(1, 51)])
    assert draws.shape == (50, 8) and np.all(np.abs(draws - 1) <= kt.half_width())
    assert np.abs(draws - 1).max() > 0.8 * kt.half_width()  # the draws span the range


def test_a_failing_draw_is_listed_and_the_others_go_on(study, monkeypatch, tmp_path):
    monkeypatch.setattr(kt, "KT_DIR", tmp_path)
    real = kt.draw_factors
    monkeypatch.setattr(
        kt,
        "draw_factors",
        lambda seed, width=None: np.full(8, np.nan) if seed == 2 else real(seed, width),
    )
    kt.run_draws(study, [1, 2, 3], progress=False)
    records, missing = kt.load_draws("SYN", 0.04, 1, [1, 2, 3, 4])
    assert [r["seed"] for r in records] == [1, 2, 3] and missing == [4]
    assert "axis 1" in records[1]["failure"] and "failure" not in records[0]
    summary = kt.summarize(records, study.nominal)
    assert summary["draws"] == 2 and summary["failed"] == [(2, records[1]["failure"])]
    assert summary["verdict_flips"] == sum(
        bool(r["verdict_flipped"]) for r in (records[0], records[2])
    )


def test_a_rerun_writes_byte_identical_records(study, monkeypatch, tmp_path):
    monkeypatch.setattr(kt, "KT_DIR", tmp_path)
    kt.run_draws(study, [4], progress=False)
    first = kt.draw_record_path("SYN", 0.04, 1, 4).read_bytes()
    kt.run_draws(study, [4], progress=False)
    assert kt.draw_record_path("SYN", 0.04, 1, 4).read_bytes() == first


def test_seed_blocks_must_be_disjoint():
    assert kt.seeds_of([{"first_seed": 1, "n_draws": 3}, {"first_seed": 4, "n_draws": 2}]) == [
        1,
        2,
        3,
        4,
        5,
    ]
    with pytest.raises(InputError, match="two blocks"):
        kt.seeds_of([{"first_seed": 1, "n_draws": 10}, {"first_seed": 5, "n_draws": 3}])


def test_which_axes_move_a_quantity_is_recovered():
    rng = np.random.default_rng(3)
    slopes = np.array([0.5, -2.0, 0.0, 1.0, 0.0, 0.0, 0.3, 0.0])
    records = []
    for _ in range(40):
        factors = 1 + rng.uniform(-0.1, 0.1, 8)
        records.append(
            {"factors": factors.tolist(), "truth_distance_change": 0.01 + slopes @ (factors - 1)}
        )
    np.testing.assert_allclose(kt.axis_sensitivity(records), slopes, atol=1e-10)
    reference = np.full(8, 1.05)
    closeness = kt.closeness_to(
        [{"factors": reference.tolist()}, {"factors": [1.0] * 8}], reference
    )
    np.testing.assert_allclose(closeness, [-1.0, 0.0])
