"""Parameter clouds, centrality, the structural rule and the checks (Sec. VI-A, VI-B, D-H)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.spatial.distance import mahalanobis

from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.acceptance import selection
from crane_lib.excitation import design as excitation
from crane_lib.model.dynamics import model as shared_model

from .audit_cases import description_beta


def _cloud(n=60, d=39, seed=3):
    rng = np.random.default_rng(seed)
    scales = np.geomspace(1e-3, 10.0, d)  # SI parameters span four decades
    return rng.standard_normal((n, d)) @ np.diag(scales) + rng.standard_normal(d)


def _records(points_by_stage, names, routes=None):
    n = len(points_by_stage["OLS"])
    routes = routes or ["O-C"] * n
    return [
        {
            "trajectory": f"T{i:02d}",
            "ts": 0.04,
            "run": 1,
            "route": routes[i],
            "names": names,
            "ols": points_by_stage["OLS"][i].tolist(),
            "start": points_by_stage["SDP"][i].tolist(),
            "clie_x": points_by_stage["CLIE"][i].tolist(),
            "kappa": 30.0 + i,
        }
        for i in range(n)
    ]


def test_total_variance_is_the_trace_of_the_covariance():
    points = _cloud()
    assert selection.total_variance(points) == pytest.approx(np.trace(np.cov(points.T)), rel=1e-12)


def test_median_distance_of_a_known_cloud():
    points = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [-2.0, 0.0], [0.0, -2.0]])  # centre at 0
    assert selection.median_distance(points) == pytest.approx(2.0)
    assert selection.median_distance(points + 5.0) == pytest.approx(
        2.0
    )  # from the cloud's own centre


def test_common_standardization_puts_ols_at_39_and_keeps_the_other_stages_ratios():
    ols = _cloud()
    stages = {
        "OLS": ols,
        "SDP": ols * 1.0,
        "CLIE": ols.mean(axis=0) + 0.5 * (ols - ols.mean(axis=0)),
    }
    clouds = selection.StageClouds.from_records(_records(stages, [f"P{i}" for i in range(39)]))
    measures = selection.cloud_measures(clouds)
    assert measures["OLS"]["total variance"] == pytest.approx(39.0)
    assert measures["SDP"]["total variance"] == pytest.approx(39.0)
    # halving every deviation quarters the variance and halves the median distance, on the common
    # scale
    assert measures["CLIE"]["total variance"] == pytest.approx(39.0 / 4)
    assert measures["CLIE"]["median distance"] == pytest.approx(
        measures["OLS"]["median distance"] / 2
    )


def test_records_with_other_parameter_names_are_refused():
    stages = {s: _cloud(n=3) for s in selection.STAGES}
    records = _records(stages, [f"P{i}" for i in range(39)])
    records[1]["names"] = [f"Q{i}" for i in range(39)]
    with pytest.raises(ValueError, match="other parameter names"):
        selection.StageClouds.from_records(records)


def test_sdp_cloud_is_the_clie_start_and_without_drops_a_trajectory():
    stages = {"OLS": _cloud(n=5), "SDP": _cloud(n=5, seed=4), "CLIE": _cloud(n=5, seed=5)}
    clouds = selection.StageClouds.from_records(_records(stages, [f"P{i}" for i in range(39)]))
    np.testing.assert_array_equal(clouds.vectors["SDP"], stages["SDP"])
    smaller = clouds.without("T02")
    assert [name for name, _ in smaller.labels] == ["T00", "T01", "T03", "T04"]
    np.testing.assert_array_equal(smaller.vectors["CLIE"], np.delete(stages["CLIE"], 2, axis=0))
    np.testing.assert_array_equal(
        smaller.kappas, [30.0, 31.0, 33.0, 34.0]
    )  # kappa stays with its condition


def test_pca_variances_are_the_covariance_eigenvalues():
    points = _cloud(d=6)
    basis = selection.pca(points)
    expected = np.sort(np.linalg.eigvalsh(np.cov(points.T)))[::-1]
    np.testing.assert_allclose(basis.variances, expected, rtol=1e-8, atol=1e-12 * expected[0])
    assert basis.share(6) == pytest.approx(1.0)
    # projections along orthonormal axes: the scores' variances are the eigenvalues
    np.testing.assert_allclose(
        basis.project(points, 2).var(axis=0, ddof=1), expected[:2], rtol=1e-10
    )


def test_euclidean_distance_is_the_standardized_norm_and_the_centre_ranks_first():
    points = _cloud()
    points[7] = points.mean(axis=0)  # move one point to the centre (shifts the mean only slightly)
    d = selection.euclidean_distances(points)
    z = (points - points.mean(axis=0)) / points.std(axis=0, ddof=1)
    np.testing.assert_allclose(d, np.linalg.norm(z, axis=1))
    assert selection.rank_of(d, 7) == 1
    assert selection.rank_of(d, int(np.argmax(d))) == len(points)


def test_mahalanobis_on_all_components_equals_scipy_on_the_raw_cloud():
    points = _cloud(n=80, d=6)
    inverse = np.linalg.inv(np.cov(points.T))
    expected = [mahalanobis(p, points.mean(axis=0), inverse) for p in points]
    np.testing.assert_allclose(selection.mahalanobis_distances(points, 6), expected, rtol=1e-9)
    # fewer components: the distance can only shrink
    assert np.all(selection.mahalanobis_distances(points, 2) <= np.asarray(expected) + 1e-12)


def test_mahalanobis_refuses_more_components_than_the_cloud_supports():
    with pytest.raises(ValueError, match="supports 1..15"):
        selection.mahalanobis_distances(_cloud(n=16), 20)


def test_six_metrics_and_the_cap_for_a_small_cloud():
    assert [k for _, k in selection.centrality_metrics(160)] == [None, 2, 5, 10, 20, 39]
    assert [k for _, k in selection.centrality_metrics(16)] == [None, 2, 5, 10, 15, 15]
    rows = selection.centrality_table(_cloud(n=50), 0, [f"T{i}" for i in range(50)])
    assert len(rows) == 6 and all(1 <= r["rank"] <= 50 for r in rows)
    assert all(r["central fifth"] == (r["rank"] <= 10) for r in rows)


def test_structural_rule_names_ag02_and_only_it():
    specs = excitation.trajectory_specs()
    assert selection.structural_candidates(specs) == ["AG02"]
    # speed levels are not blocks: AG02 at a reduced level still contains every block
    slow = dict(specs)
    slow["AG02"] = dataclasses.replace(
        specs["AG02"],
        blocks=tuple(dataclasses.replace(b, level=0.30) for b in specs["AG02"].blocks),
    )
    assert selection.structural_candidates(slow) == ["AG02"]
    # without its S(C) block no trajectory contains every block
    partial = dict(specs)
    partial["AG02"] = dataclasses.replace(
        specs["AG02"], blocks=tuple(b for b in specs["AG02"].blocks if b.posture != "C")
    )
    partial.pop("PC01")  # keep S(C) in the design through the other PC files
    assert selection.structural_candidates(partial) == []


@pytest.mark.parametrize(
    ("shortest", "expected"),
    [(0.200, 0.040), (0.139, 0.040), (0.100, 0.020), (0.240, 0.080), (0.02, None)],
)
def test_coarsest_interval_with_three_samples_per_ramp(shortest, expected):
    ramps = np.array([0.4, shortest, 0.3])
    assert selection.coarsest_adequate_interval(ramps, (0.010, 0.020, 0.040, 0.080)) == expected


def test_kappa_check_is_the_lowest_decile():
    kappas = np.arange(1.0, 41.0)  # 40 conditions, rank = value
    assert selection.kappa_check(kappas, 3)["passes"]  # rank 4 <= 4
    assert not selection.kappa_check(kappas, 4)["passes"]  # rank 5 > 4


def test_accept_passes_a_pd_model_unchanged_and_rescues_an_infeasible_one():
    model = shared_model("reduced")
    good = description_beta()
    kept = rescue_stage.accept(model, good)
    assert kept.accepted and kept.rescue is None
    np.testing.assert_array_equal(kept.parameters, good)
    bad = good.copy()
    bad[model.names.index("ZZR6")] -= 0.0058  # the wrist loses PD over part of Theta (test_rescue)
    fixed = rescue_stage.accept(model, bad)
    assert not fixed.first_audit.passed
    assert fixed.rescue is not None and fixed.accepted
    assert fixed.final_audit.lambda_min > 0
    assert not np.array_equal(fixed.parameters, bad)
