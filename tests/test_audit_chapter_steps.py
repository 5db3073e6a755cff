"""Chapter 06's computations are data steps of the main job (crane_book.pipeline), and the page
only reads their records. The certified check over Θ: one record per model the chapter
certifies, keyed by the model's record, the domain, the settings and the code closure of
`acceptance.certified`, never by a chapter or a view; a page whose record is missing says so
instead of computing. Every OLS estimate audited over Θ: the audits step's record holds what the
chapter shows (worst pose, where the violations lie), so the page screens nothing itself. The
fresh-set rescues of the record's CLIE solution: one record, which the page reads."""

from __future__ import annotations

import ast
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from crane_book import keys, pipeline
from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance import all_pose, audit, certified, folded, screen
from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.errors import InputError
from crane_lib.identification.projection import ProjectionFailure
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet, save_parameters
from crane_lib.paths import REPO_ROOT
from crane_lib.reporting.chapters import audit as report

from .audit_cases import description_beta

WORST_POSE = [0.0, 0.3, 0.0, -2.0, 0.0, 0.5, 0.0]


def _audit(passed: bool, lambda_min: float, seed: int = 1) -> dict:
    return {"passed": passed, "lambda_min": lambda_min, "worst_pose_rad": WORST_POSE, "seed": seed}


@pytest.fixture
def accepted_dir(tmp_path):
    """An accepted model of AG02 at 40 ms whose record rescued its failing CLIE solution."""
    names = shared_model("reduced").names
    folder = tmp_path / "results" / "accepted"
    folder.mkdir(parents=True)
    csv_path, json_path = accepted_stage.accepted_paths("AG02", 0.04, 1, folder)
    save_parameters(csv_path, ParameterSet(names, np.linspace(0.1, 1.0, len(names))))
    record = {
        "names": names,
        "refined": list(np.linspace(0.2, 1.1, len(names))),
        "first_audits": [_audit(False, -0.01)],
        "final_audits": [_audit(True, 7e-4)],
        "rescue": {"solved": True},
    }
    json_path.write_text(json.dumps(record), encoding="utf-8")
    return folder


@pytest.fixture
def certify_calls(monkeypatch):
    """certify_model stubbed: each call noted, one certified check over Θ per margin."""
    calls = []

    def fake(beta, theta_margins, max_boxes, near_pose=None, near_margins=(), **kwargs):
        calls.append((len(theta_margins), near_pose is not None))
        return [
            {
                "region": certified.THETA,
                "margin": m,
                "status": certified.CERTIFIED,
                "certified_lambda_min": m,
                "witness_lambda": None,
                "boxes_processed": 10,
                "boxes_certified": 10,
                "unresolved_boxes": 0,
                "tolerance": 1e-11,
                "implied_by": None,
                "elapsed_s": 1.0,
                "summary": "certified",
            }
            for m in theta_margins
        ]

    monkeypatch.setattr(pipeline.certified, "certify_model", fake)
    return calls


def _step(accepted_dir, profile="quick", **options):
    return pipeline.certified_step(
        profile, accepted_dir=accepted_dir, directory=accepted_dir.parent / "certified", **options
    )


def test_the_certified_step_is_keyed_by_certified_py_not_by_a_chapter_or_a_view(
    accepted_dir, certify_calls
):
    assert _step(accepted_dir).recomputed == 2  # the accepted model and its CLIE solution
    store = keys.KeyStore("certified", accepted_dir.parent)
    parts = store.stored("AG02_run1_40ms_accepted")
    code = {name.partition(" ")[2] for name in parts if name.startswith("code ")}
    assert "crane_lib/acceptance/certified.py" in code
    assert not [f for f in code if f.startswith(("chapters/", "crane_lib/reporting/", "book/"))]
    assert "crane_lib/identification/clie.py" not in code  # the model comes as a file
    inputs = {name for name in parts if name.startswith("input ")}
    assert {p.name for p in accepted_dir.iterdir()} == {n.rpartition("/")[2] for n in inputs}
    settings = json.loads(parts["parameters"])
    assert settings["domain_rad"] == np.asarray(certified.audit_domain()).tolist()
    assert settings["max_boxes"] == pipeline.CERTIFY_MAX_BOXES
    # the CLIE solution's record reads the accepted record only, not the accepted model file
    clie_inputs = [n for n in store.stored("AG02_run1_40ms_clie_solution") if "input" in n]
    assert [n.rpartition("/")[2] for n in clie_inputs] == ["AG02_run1_40ms.json"]


def test_the_certified_step_computes_once_and_again_only_when_what_decides_it_changes(
    accepted_dir, certify_calls
):
    assert _step(accepted_dir).recomputed == 2
    again = _step(accepted_dir)
    assert (again.reused, again.recomputed) == (2, 0)
    assert len(certify_calls) == 2
    rebudgeted = _step(accepted_dir, max_boxes=1_000)
    assert rebudgeted.recomputed == 2 and "parameters changed" in rebudgeted.line()
    csv_path, _ = accepted_stage.accepted_paths("AG02", 0.04, 1, accepted_dir)
    csv_path.write_text(
        csv_path.read_text(encoding="utf-8").replace("0.1,", "0.15,", 1), encoding="utf-8"
    )
    edited = _step(accepted_dir, max_boxes=1_000)
    assert (edited.reused, edited.recomputed) == (1, 1)  # the CLIE solution is not in that file


def test_without_an_accepted_model_the_step_names_the_file_and_the_make_step(tmp_path):
    with pytest.raises(InputError, match="make book"):
        _step(tmp_path / "accepted")


def _study(folder, rescued: bool = True):
    """The chapter's view of the certified records `all_pose` gathers (a missing one named)."""
    found = all_pose.certified_records("AG02", 0.04, 1, rescued, folder)
    return SimpleNamespace(record={"certified": found}, bad_label="CLIE solution, AG02 at 40 ms")


def test_the_page_reads_the_records_and_a_missing_record_is_said_not_computed(
    accepted_dir, certify_calls, monkeypatch
):
    def no_computation(*args, **kwargs):
        raise AssertionError("the page computed a certified check")

    monkeypatch.setattr(certified, "certify", no_computation)
    folder = accepted_dir.parent / "certified"
    missing = _study(folder)
    assert report.certified_rows(missing) == [] and report.certified_table(missing) is None
    named = report.certified_missing(missing)
    assert len(named) == 2 and named[0].endswith("AG02_run1_40ms_accepted.json")
    _step(accepted_dir, "full")
    read = _study(folder)
    assert report.certified_missing(read) == []
    assert {c["record"]["max_boxes"] for c in read.record["certified"]} == {
        pipeline.CERTIFY_MAX_BOXES
    }
    assert [r["model and box"] for r in report.certified_rows(read)] == [
        "accepted, all of Θ",
        "accepted, all of Θ",
        "CLIE solution, AG02 at 40 ms, all of Θ",
    ]
    assert "tab-audit-certified" in report.certified_table(read).markdown()


def test_the_quick_profile_checks_the_accepted_model_near_its_worst_pose_only(
    accepted_dir, certify_calls
):
    """Quick: the accepted model's box around its worst pose, no check over Θ (the CLIE
    solution's still runs), so the page has no row of the accepted model over Θ (and says what
    the full profile adds)."""
    _step(accepted_dir, "quick")
    assert certify_calls == [(0, True), (1, False)]  # (margins over Θ, near box) per model
    near = {
        "region": certified.NEAR_WORST,
        "margin": 0.0,
        "status": certified.CERTIFIED,
        "certified_lambda_min": 0.0,
        "witness_lambda": None,
        "boxes_processed": 1,
        "boxes_certified": 1,
        "unresolved_boxes": 0,
        "tolerance": 1e-11,
        "implied_by": None,
        "elapsed_s": 1.0,
        "summary": "certified near",
    }
    record = {"half_width_deg": 5.0, "max_boxes": 60, "checks": [near]}
    study = SimpleNamespace(
        record={"certified": [{"model": certified.ACCEPTED_MODEL, "path": "", "record": record}]},
        bad_label="CLIE solution, AG02 at 40 ms",
    )
    rows = report.certified_rows(study)
    assert [r["model and box"] for r in rows] == ["accepted, ±5° box around its worst audit pose"]
    assert rows[0]["_summary"] == "certified near" and rows[0]["status"] == certified.CERTIFIED
    assert "accepted, all of Θ" not in [r["model and box"] for r in rows]


def test_no_page_and_no_view_runs_the_certified_check():
    callers = []
    for path in [
        *(REPO_ROOT / "chapters").glob("*.py"),
        *(REPO_ROOT / "book").glob("*.py"),
        *(REPO_ROOT / "crane_lib" / "reporting").rglob("*.py"),
    ]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in (
                "certify",
                "certify_model",
            ):
                callers.append(path.relative_to(REPO_ROOT).as_posix())
    assert callers == []


def test_the_audits_step_is_keyed_by_the_screen_and_records_what_the_chapter_shows(monkeypatch):
    code = {n.partition(" ")[2] for n in pipeline.step_code()["audits"] if n.startswith("code ")}
    assert {"crane_lib/acceptance/screen.py", "crane_lib/acceptance/folded.py"} <= code
    assert not [f for f in code if f.startswith(("chapters/", "crane_lib/reporting/"))]
    monkeypatch.setattr(screen, "audit_poses", audit.sparse_audit_poses)  # small, same code
    model = shared_model("reduced")
    broken = description_beta().copy()
    broken[model.names.index("ZZR6")] -= 0.0058  # the wrist loses PD over much of the domain
    records = [
        {"trajectory": "AP01", "ts": 0.04, "run": 1, "pd_visited": True, "ols": list(b)}
        for b in (description_beta(), broken)
    ]
    found = screen.audit_estimates([*records, {"ols": None}], seed=3)["audits"]
    assert len(found) == 2
    pose_set = audit.sparse_audit_poses(3)
    for entry, beta in zip(found, (description_beta(), broken)):
        expected = audit.audit_pose_set(beta, pose_set)
        assert (entry["passed"], entry["lambda_min"]) == (expected.passed, expected.lambda_min)
        assert entry["worst_pose_rad"] == expected.worst_pose.tolist()
        where = folded.of_lambdas(pose_set, audit.arm_lambda_min(beta, pose_set.poses))
        assert (entry["uniform_violations"], entry["in_folded_region"]) == (
            where.uniform_violations,
            where.in_region,
        )
    assert not found[1]["passed"] and found[1]["uniform_violations"] > 0


def test_the_study_reads_the_audited_estimates_and_screens_nothing(tmp_path, monkeypatch):
    def no_computation(*args, **kwargs):
        raise AssertionError("the study audited an estimate")

    monkeypatch.setattr(screen, "screened_audit", no_computation)
    monkeypatch.setattr(audit, "audit", no_computation)
    monkeypatch.setattr(audit, "OLS_AUDITS_PATH", tmp_path / "audits" / "ols_dense_seed1.json")
    condition = {
        "trajectory": "AP01",
        "ts": 0.04,
        "run": 1,
        "pd_visited": True,
        "lambda_min_visited": 1e-3,
        "ols": [0.0],
        "std_errors": [1.0],
    }
    monkeypatch.setattr(all_pose.identify, "load_condition_records", lambda **_: [condition])
    with pytest.raises(InputError, match="make book") as missing:
        all_pose.sweep_rows(1)
    assert "ols_dense_seed1.json" in str(missing.value)
    entry = {
        "trajectory": "AP01",
        "ts": 0.04,
        "run": 1,
        "pd_visited": True,
        "passed": False,
        "lambda_min": -2e-3,
        "n_violations": 7,
        "worst_pose_rad": WORST_POSE,
        "uniform_violations": 5,
        "in_folded_region": 4,
    }
    audit.OLS_AUDITS_PATH.parent.mkdir()
    audit.OLS_AUDITS_PATH.write_text(json.dumps({"seed": 1, "audits": [entry]}), encoding="utf-8")
    rows = all_pose.sweep_rows(1)
    shown = [[r["λmin over Θ"], r["PD over Θ"], r["violations"]] for r in rows]
    assert shown == [[-2e-3, False, 7]]
    assert (rows[0]["uniform_violations"], rows[0]["in_folded_region"]) == (5, 4)
    with pytest.raises(InputError, match="seed 2"):
        all_pose.sweep_rows(2)
    # the view counts what the record holds
    frame = pd.DataFrame(rows, columns=report.SWEEP_COLUMNS)
    counts = report.visited_counts(SimpleNamespace(sweep=frame))
    assert counts == dict(n=1, visited=1, theta=0, routing_only=1, reverse=0)


def test_the_rescues_step_is_keyed_by_the_rescue_and_the_page_reads_its_record(
    accepted_dir, monkeypatch
):
    code = {n.partition(" ")[2] for n in pipeline.step_code()["rescues"] if n.startswith("code ")}
    assert "crane_lib/acceptance/rescue.py" in code
    assert not [f for f in code if f.startswith(("chapters/", "crane_lib/reporting/"))]
    calls = []

    def fake_rescue(model, beta, epsilon):
        calls.append(epsilon)
        if epsilon == 0:
            raise ProjectionFailure("infeasible")
        projection = rescue_stage.ProjectionResult(
            ParameterSet(["ZZR1"], np.array([1.0])),
            epsilon,
            "optimal",
            5,
            2,
            1,
            epsilon,
            np.array([0.5]),
            0.1,
        )
        return rescue_stage.RescueResult(projection, [{"pass": 1, "appended": 0}], True)

    monkeypatch.setattr(pipeline.rescue_stage, "rescue_over_theta", fake_rescue)
    folder = accepted_dir.parent / "rescues"
    step = pipeline.rescues_step(accepted_dir=accepted_dir, directory=folder)
    assert (
        step.recomputed == 1
        and pipeline.rescues_step(accepted_dir=accepted_dir, directory=folder).reused == 1
    )
    assert calls == [report.EPS_EARLIER, report.EPS]
    recorded = all_pose.recorded_rescues("AG02", 0.04, 1, folder)
    rescues = {report.EARLIER: recorded[report.EPS_EARLIER], report.FRESH: recorded[report.EPS]}
    study = report.AuditStudy({"rescues": rescues}, folder, {}, pd.DataFrame())
    assert study.rescued(report.EARLIER) is None
    assert recorded[report.EPS_EARLIER]["failure"] == "infeasible"
    assert study.rescued(report.FRESH).tolist() == [1.0]
    assert calls == [report.EPS_EARLIER, report.EPS]  # the study rescued nothing itself
    with pytest.raises(InputError, match="make book"):
        all_pose.recorded_rescues("AG02", 0.04, 1, accepted_dir.parent / "elsewhere")


def test_the_population_chapter_reads_the_same_audits_record(tmp_path, monkeypatch):
    from crane_lib.acceptance import all_pose
    from crane_lib.reporting.chapters import audit_failure as population

    def no_computation(*args, **kwargs):
        raise AssertionError("the page audited an estimate")

    monkeypatch.setattr(screen, "screened_audit", no_computation)
    monkeypatch.setattr(audit, "OLS_AUDITS_PATH", tmp_path / "ols_dense_seed1.json")
    condition = {"trajectory": "AP01", "ts": 0.04, "run": 1, "pd_visited": True, "ols": [0.0],
                 "lambda_min_visited": 1e-3}  # fmt: skip
    second = {**condition, "run": 2}  # a second execution: not in the population
    monkeypatch.setattr(
        all_pose.identify, "load_condition_records", lambda *a, **k: [condition, second]
    )
    with pytest.raises(InputError, match="make book"):
        all_pose.sweep_rows(1)
    entry = {
        "trajectory": "AP01",
        "ts": 0.04,
        "run": 1,
        "passed": False,
        "lambda_min": -2e-3,
        "n_violations": 5,
        "violations": {"uniform": 5},
        "uniform_violations": 5,
        "worst_pose_rad": [0.0] * 7,
        "in_folded_region": 4,
    }
    audits = [entry, {**entry, "run": 2}]
    audit.OLS_AUDITS_PATH.write_text(json.dumps({"seed": 1, "audits": audits}), encoding="utf-8")
    frame = population.population_frame(all_pose.sweep_rows(1))
    shown = frame[["pd_theta", "violations_uniform", "violations_uniform_in_folded"]]
    assert shown.values.tolist() == [[False, 5, 4]]
    assert population.counts(frame)["pd_visited_not_theta"] == 1


def test_the_audit_study_step_is_keyed_by_all_pose_and_the_page_reads_its_record(
    tmp_path, monkeypatch
):
    code = pipeline.step_code()["audit_study"]
    code = {n.partition(" ")[2] for n in code if n.startswith("code ")}
    science = ("all_pose.py", "audit.py", "consequences.py", "rescue.py", "certified.py")
    assert {f"crane_lib/acceptance/{name}" for name in science} <= code
    assert not [f for f in code if f.startswith(("chapters/", "crane_lib/reporting/"))]
    folder = tmp_path / "results" / "audit_study"
    with pytest.raises(InputError, match="make book") as missing:
        report.study("AG02", 0.04, 1, folder)
    assert "AG02_run1_40ms.json" in str(missing.value)
    calls = []

    def fake(*arguments):
        calls.append(arguments)
        return {"computed": len(calls)}

    monkeypatch.setattr(pipeline.all_pose, "input_files", lambda *arguments: [])
    monkeypatch.setattr(pipeline.all_pose, "study_record", fake)
    assert pipeline.audit_study_step(directory=folder).recomputed == 1
    again = pipeline.audit_study_step(directory=folder)
    assert (again.reused, again.recomputed) == (1, 0) and len(calls) == 1
    assert calls[0][:3] == ("AG02", 0.04, 1)
    assert json.loads((folder / "AG02_run1_40ms.json").read_text()) == {"computed": 1}


def test_theta_r_is_the_fresh_set_and_the_failing_audits_worst_poses():
    """The Θr the chapter checks the accepted model on is the one Algorithm 1 built: the fresh
    set (random configurations and corners) and the worst poses of every failing audit."""
    worst = [{"pose_rad": [0.1 * k] * 7, "lambda_min": -1e-3, "component": "grid"} for k in (1, 2)]
    first = [
        {"passed": False, "worst": worst},
        {"passed": True, "worst": [{"pose_rad": [9.0] * 7}]},  # a passing audit adds nothing
    ]
    found = all_pose.theta_r({"first_audits": first})
    fresh = rescue_stage.initial_theta_r()
    assert found.shape == (len(fresh) + 2, 7)
    np.testing.assert_array_equal(found[: len(fresh)], fresh)
    np.testing.assert_array_equal(found[len(fresh) :], [w["pose_rad"] for w in worst])


def _condition(trajectory, ms, run, route, projected=None):
    return {
        "trajectory": trajectory,
        "ts": ms / 1e3,
        "run": run,
        "route": route,
        "projected": projected,
    }


def test_table_x_takes_the_sdp_row_that_table_vi_shows(monkeypatch):
    records = [
        _condition("AG02", 40, 1, "O-C"),
        _condition("AP01", 80, 1, "O-S-C", [1.0]),
        _condition("PB01", 40, 1, "O-S-C", [2.0]),
        _condition("PB01", 40, 2, "O-S-C", [3.0]),
    ]
    monkeypatch.setattr(all_pose.identify, "load_condition_records", lambda **_: records)
    same_interval = all_pose.first_projected("AG02", 0.04, 1)
    assert same_interval["label"] == "SDP projection, PB01 at 40 ms, run 1"
    assert same_interval["beta"] == [2.0] and not same_interval["own"]
    own = all_pose.first_projected("PB01", 0.04, 2)
    assert own["beta"] == [3.0] and own["own"]
    assert all_pose.first_projected("AG02", 0.02, 1)["beta"] == [1.0]  # none at 20 ms: any
    monkeypatch.setattr(all_pose.identify, "load_condition_records", lambda **_: records[:1])
    assert all_pose.first_projected("AG02", 0.04, 1) is None


def test_table_x_has_the_papers_four_kinds_with_substitutes_named(monkeypatch):
    records = [_condition("AP01", 80, 1, "O-S-C", [5.0, 5.0])]
    monkeypatch.setattr(all_pose.identify, "load_condition_records", lambda **_: records)
    raw = {"values": [1.0, 1.0], "std_errors": [0.1, 0.1]}
    passing = SimpleNamespace(passed=True)

    def sweep_row(trajectory, ts, run, pd_over_theta, lambda_min, ols):
        return {
            "trajectory": trajectory,
            "ts": ts,
            "run": run,
            "PD over Θ": pd_over_theta,
            "λmin over Θ": lambda_min,
            "ols": ols,
            "std_errors": [0.1, 0.1],
            "PD visited": True,
        }

    sweep = [
        sweep_row("AP01", 0.08, 1, False, -2.0, [2.0, 2.0]),
        sweep_row("AG02", 0.02, 2, False, -1.0, [3.0, 3.0]),
        sweep_row("PB01", 0.04, 1, True, 1.0, [4.0, 4.0]),
    ]
    clie = np.array([6.0, 6.0])
    found = all_pose._table_x_models(
        (raw, passing, "raw OLS, AG02 at 40 ms", sweep, "AG02", 0.04, 1),
        (all_pose.REPRODUCTION, "CLIE solution, AG02 at 40 ms", clie, {}, "CLIE"),
        "submitted",
        np.array([7.0, 7.0]),
    )
    assert [k for k, _, _ in found] == list(all_pose.TABLE_X_KINDS)
    names = [n for _, n, _ in found]
    # the condition's OLS passes: the build's failing one of the same trajectory stands in
    assert names == [
        "raw OLS, AG02 at 20 ms, run 2",
        "SDP projection, AP01 at 80 ms, run 1",
        "CLIE solution, AG02 at 40 ms",
        "submitted",
    ]
    assert [b[0] for _, _, b in found] == [3.0, 5.0, 6.0, 7.0]
    failing = SimpleNamespace(passed=False)  # the condition's own OLS fails: it is the row
    own = all_pose._table_x_models(
        (raw, failing, "raw OLS, AG02 at 40 ms", sweep, "AG02", 0.04, 1),
        (all_pose.REPRODUCTION, "CLIE solution, AG02 at 40 ms", clie, {}, "CLIE"),
        None,
        None,
    )
    assert [n for _, n, _ in own][0] == "raw OLS, AG02 at 40 ms" and len(own) == 3


def test_the_view_reads_table_xs_four_infeasible_rows_in_the_papers_order():
    def row(kind, name, reference="accepted"):
        return {
            "model": name,
            "reference": reference,
            "kind": kind,
            "non-PD (% of uniform draw)": 1.0,
        }

    rows = [
        row(all_pose.KIND_CLIE, "CLIE solution"),
        row(all_pose.ACCEPTED_KIND, "accepted"),
        row(all_pose.KIND_OLS, "raw OLS"),
        row(all_pose.KIND_SUBMITTED, "ε = 0"),
        row(all_pose.KIND_SDP, "SDP projection"),
        row(all_pose.RESCUED_KIND, "CLIE solution", report.TRUTH),
    ]
    frame = report.table_x(SimpleNamespace(record={"table_x": rows}))
    four = report.table_x_infeasible(frame)
    assert [n for n, _ in four.index] == ["raw OLS", "SDP projection", "CLIE solution", "ε = 0"]
    assert list(four["kind"]) == list(all_pose.TABLE_X_KINDS)
    assert report.table_x_kind(frame.drop(("ε = 0", "accepted")), all_pose.KIND_SUBMITTED) is None
