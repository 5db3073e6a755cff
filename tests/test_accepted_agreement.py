"""Every page that shows the accepted model shows the accepted record's: its λmin per seed, its
verdict, its parameters and the held-out change computed from them. The record is synthetic and
its audit numbers are made up (no audit of its parameters returns them), so a view that
recomputed the audits, or read another model, fails here. The chapter 06 view also writes nothing
under the results folder."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance import all_pose, audit, certified, screen
from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.acceptance.audit import AuditResult, audit_poses
from crane_lib.acceptance.rescue import RescueResult
from crane_lib.formatting import significant
from crane_lib.identification import condition as identify
from crane_lib.identification import metrics
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet
from crane_lib.records import read_json_record, write_json_record
from crane_lib.reporting.chapters import audit as audit_chapter
from crane_lib.reporting.tables import span

from .audit_cases import description_beta
from .conftest import sinusoid_bundle

SEEDS = (1, 2, 3, 4, 5)
CHAPTER_SEEDS = (1, 2)  # the chapter view on two seeds keeps the audits it runs short
# made-up margins of the accepted model, distinct per seed; no audit of its parameters gives them
FINAL_LAMBDAS = (7.12e-4, 6.93e-4, 7.31e-4, 8.05e-4, 7.77e-4)
FIRST_LAMBDAS = (-2.51e-3, -2.52e-3, -2.53e-3, -2.54e-3, -2.55e-3)


def _fake_audit(seed: int, lam: float) -> AuditResult:
    counts = audit_poses(seed).counts()
    failed = lam <= 0
    violations = {
        "grid": 3 if failed else 0,
        "uniform": 10 + seed if failed else 0,
        "folded": 7 if failed else 0,
    }
    poses = np.deg2rad(np.array([[0, 40, 10, -120, 5, 60, 0], [0, 50, 20, -130, 5, 70, 0]], float))
    return AuditResult(
        passed=not failed,
        lambda_min=lam,
        worst_pose=poses[0],
        worst_component="uniform",
        violations=violations,
        pose_counts=counts,
        component_lambda_min={k: lam for k in counts},
        worst_poses=poses,
        worst_lambdas=np.array([lam, lam + 1e-5]),
        worst_components=["uniform", "folded"],
        non_pd_fraction_uniform=violations["uniform"] / counts["uniform"],
        seed=seed,
        domain="Theta",
    )


def _models():
    model = shared_model("reduced")
    accepted = description_beta()
    clie = accepted.copy()
    clie[model.names.index("ZZR6")] -= 0.0058  # the wrist loses PD over part of Θ
    ols = accepted * 1.02
    se = 0.05 * np.abs(accepted) + 1e-4
    return model, accepted, clie, ols, se


def _write_build(directory, rescued: bool) -> dict:
    """A small build: the condition record of AG02 at 40 ms and its accepted model's record,
    through the writer the main job uses."""
    model, accepted, clie, ols, se = _models()
    names = model.names
    write_json_record(
        directory / "conditions" / "AG02_run1_40ms.json",
        {
            "trajectory": "AG02",
            "ts": 0.04,
            "run": 1,
            "failure": None,
            "route": "O-C",
            "pd_visited": True,
            "lambda_min_visited": 1e-3,
            "names": names,
            "ols": ols.tolist(),
            "std_errors": se.tolist(),
        },
    )
    first_lams = FIRST_LAMBDAS if rescued else FINAL_LAMBDAS
    first = [_fake_audit(seed, lam) for seed, lam in zip(SEEDS, first_lams)]
    final = [_fake_audit(seed, lam) for seed, lam in zip(SEEDS, FINAL_LAMBDAS)]
    start = ParameterSet(names, ols, se)
    condition = SimpleNamespace(
        trajectory="AG02",
        run=1,
        route="O-C",
        lambda_min_visited=1e-3,
        projection=None,
        start=start,
        ols=SimpleNamespace(parameters=start, kappa=34.0),
    )
    refined = ParameterSet(names, clie if rescued else accepted, se)
    rescue, meta = None, {"stage": "accepted"}
    if rescued:
        passes = [
            {
                "pass": 1,
                "constraint_poses": 2228,
                "active_poses": 64,
                "lambda_min_on_set": 1e-3,
                "lambda_min_check": 7.1e-4,
                "violators": 0,
                "appended": 0,
                "solve_time_s": 1.0,
            }
        ]
        result = SimpleNamespace(
            parameters=ParameterSet(names, accepted),
            epsilon=1e-3,
            change_norm=float(np.linalg.norm(accepted - clie)),
        )
        rescue = RescueResult(result, passes, True, constraint_poses=np.zeros((2228, 7)))
        meta["rescue_epsilon"] = "0.001"
    refinement = {"method": "fast", "iterations": 8, "objective_start": 2.0, "objective_final": 1.0}
    result = accepted_stage.AcceptedModel(
        condition,
        refinement,
        refined,
        first,
        rescue,
        final,
        ParameterSet(names, accepted, se, meta),
    )
    _, json_path = accepted_stage.write_accepted(result, 0.04, directory / "accepted")
    return read_json_record(json_path)


@pytest.fixture(params=[True, False], ids=["rescued", "passed"])
def build(request, tmp_path, monkeypatch):
    """(results folder, record) of a small build whose CLIE solution was rescued or passed."""
    monkeypatch.setattr(accepted_stage, "ACCEPTED_DIR", tmp_path / "accepted")
    monkeypatch.setattr(identify, "CONDITIONS_DIR", tmp_path / "conditions")
    monkeypatch.setattr(audit, "OLS_AUDITS_PATH", tmp_path / "audits" / "ols_dense_seed1.json")
    record = _write_build(tmp_path, request.param)
    # the main job's audit of every OLS estimate over Θ, which chapter 06 reads
    conditions = [read_json_record(p) for p in sorted((tmp_path / "conditions").glob("*.json"))]
    write_json_record(audit.OLS_AUDITS_PATH, screen.audit_estimates(conditions, seed=1))
    return tmp_path, record


def _files(directory) -> dict:
    return {p: p.stat().st_mtime_ns for p in sorted(directory.rglob("*")) if p.is_file()}


def _final(record) -> list[float]:
    return [a["lambda_min"] for a in record["final_audits"]]


def _not_rescued(epsilon: float) -> dict:
    return rescue_stage.rescue_entry(epsilon, None, "not run in this test")


def test_chapter_06_shows_the_records_accepted_model_and_writes_nothing(build, monkeypatch):
    directory, record = build
    monkeypatch.setattr(rescue_stage, "RESULTS_DIR", directory)
    monkeypatch.setattr(certified, "CERTIFIED_DIR", directory / "certified")
    monkeypatch.setattr(all_pose, "_rescue", lambda model, beta, epsilon: _not_rescued(epsilon))
    if record["rescue"] is not None:  # the rescues step's record of the CLIE solution
        entries = [_not_rescued(e) for e in (all_pose.EPS_EARLIER, all_pose.EPS)]
        write_json_record(rescue_stage.rescues_path("AG02", 0.04, 1), {"rescues": entries})
    before = _files(directory)
    found = all_pose.study_record("AG02", 0.04, 1, CHAPTER_SEEDS)  # the data step's study
    assert _files(directory) == before  # only the step writes, and the page reads
    write_json_record(all_pose.record_path("AG02", 0.04, 1, directory / "audit_study"), found)
    before = _files(directory)
    s = audit_chapter.study("AG02", 0.04, 1, directory / "audit_study")
    assert [a.lambda_min for a in s.dense(s.accepted_name)] == _final(record)[:2]
    assert _final(record) == list(FINAL_LAMBDAS)  # made up: no audit on the page returns them
    assert s.accepted_record["verdict"] == record["verdict"]
    assert s.accepted_record["accepted"] == record["accepted"]
    assert (s.accepted_record["rescue"] is not None) == (record["rescue"] is not None)
    np.testing.assert_array_equal(s.vector("accepted"), record["parameters"])
    if record["rescue"] is not None:
        # the model the chapter rescues is the record's CLIE solution, rescued as the record says
        assert s.case == audit_chapter.REPRODUCTION
        np.testing.assert_array_equal(s.vector("bad"), record["refined"])
        np.testing.assert_array_equal(s.vector("rescued"), record["parameters"])
        assert [a.lambda_min for a in s.dense(s.bad_label)] == list(FIRST_LAMBDAS[:2])
        violations = sum(record["first_audits"][0]["violations"].values())
        assert s.first_audit().n_violations == violations
    else:
        # a substitute, said so by its case, rescued by the study (here: not run)
        assert s.case != audit_chapter.REPRODUCTION and s.choice["case"] == s.case
        assert s.vector("rescued") is None
    assert s.submitted is None  # no rescue has run: the ε = 0 model is simply left out
    assert s.submitted_name not in s.record["models"]
    margins = audit_chapter.table_ix_against_paper(s)
    shown = {row.quantity: row.book for row in margins.rows}
    accepted = "λmin of the accepted model over the seeds, dense"
    assert list(shown[accepted]) == list(FINAL_LAMBDAS[:2])
    assert span(FINAL_LAMBDAS[:2], 4) == span(shown[accepted], 4)
    assert s.accepted_name in audit_chapter.table_ix(s).markdown()  # every model, both audits
    assert _files(directory) == before


def test_chapter_08_shows_the_records_accepted_model(build, monkeypatch):
    from crane_lib.acceptance import held_out
    from crane_lib.reporting.chapters import validation as v

    _, record = build
    monkeypatch.setattr(held_out, "heldout_bundles", lambda profile, ts=0.04: {})
    s = v.study("AG02", 0.04, 1, "quick")
    np.testing.assert_array_equal(s.accepted.values, record["parameters"])
    np.testing.assert_array_equal(s.stages["accepted"], record["parameters"])
    np.testing.assert_array_equal(s.stages["CLIE"], record["refined"])
    assert s.rescued == (record["rescue"] is not None)
    rows = {r.quantity: r.book for r in v.accepted_comparisons(s.record)}
    assert rows["λmin over Θ of the accepted model, smallest of the seeds"] == min(FINAL_LAMBDAS)
    assert rows["λmin over Θ of the accepted model, largest of the seeds"] == max(FINAL_LAMBDAS)
    table = v.audit_table(s.record)
    assert table.loc["accepted: λmin over Θ (kg·m²)"].tolist() == list(FINAL_LAMBDAS)


def test_the_claims_read_the_records_accepted_model(build):
    claims = pytest.importorskip("crane_book.claims")
    _, record = build
    results = claims.Results()
    assert results.accepted == record
    model = shared_model("reduced")
    truth = description_beta() * 0.97
    results.__dict__["heldout"] = [sinusoid_bundle(truth, seed, n=300) for seed in (1, 2, 3)]

    def rmse(beta):
        return metrics.pooled_rmse(model, np.asarray(beta), results.heldout)

    margins = claims.REGISTRY["audit_margin_seeds"].compute(results)
    low, high = min(FINAL_LAMBDAS), max(FINAL_LAMBDAS)
    assert f"λmin {significant(low, 3)} to {significant(high, 3)} kg·m²" in margins.number
    gain = claims.REGISTRY["pipeline_little_gain"].compute(results)
    ols, final = rmse(record["ols"]), rmse(record["parameters"])
    assert gain.number.startswith(f"{significant(ols, 5)} → {significant(final, 5)} N·m")
    rescue = claims.REGISTRY["rescue_costs_nothing"].compute(results)
    if record["rescue"] is None:
        assert rescue.verdict == claims.NOT_TESTABLE
    else:
        before, after = rmse(record["refined"]), rmse(record["parameters"])
        n = sum(record["first_audits"][0]["violations"].values())
        assert rescue.number.startswith(
            f"{n:,} violations before the rescue; held-out RMSE "
            f"{significant(before, 5)} → {significant(after, 5)} N·m"
        )


def test_chapter_05s_table_vi_takes_the_accepted_model_from_the_record(build):
    from crane_lib.reporting.chapters import clie as clie_chapter

    _, record = build
    refined = np.asarray(record["refined"])
    found = clie_chapter.accepted_record("AG02", 0.04, 1, refined)
    assert found == record
    condition = {"ols": record["ols"], "route": record["route"], "projected": record["start"]}
    vectors = clie_chapter.stage_vectors(condition, refined, found)
    np.testing.assert_array_equal(vectors["CLIE"], refined)
    assert ("rescue" in vectors) == accepted_stage.rescued_by_record(record)
    if "rescue" in vectors:
        np.testing.assert_array_equal(vectors["rescue"], record["parameters"])
    # another CLIE solution (a condition other than the accepted one) is not the record's
    assert clie_chapter.accepted_record("AG02", 0.04, 1, refined * (1 + 1e-6)) is None
