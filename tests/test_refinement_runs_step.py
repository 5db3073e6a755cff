"""DIDIM and the ε ladder of the CLIE chapter are data steps of the main job
(crane_book.pipeline): one record each per condition, keyed by the recording (the ε ladder also
by the CLIE sweep's record) and the code closure of `identification.refinement_runs`, never by a
chapter or a view; the page reads the records and refines nothing, and says which is missing."""

from __future__ import annotations

import numpy as np
import pytest

from crane_book import pipeline
from crane_lib.identification import clie, refinement_runs
from crane_lib.identification import projection as sdp
from crane_lib.records import write_json_record
from crane_lib.reporting.chapters import clie as report

from .refinement_cases import refinement_report


def _report(objective: float, iterations: int) -> clie.RefinementReport:
    return refinement_report(
        names=["a", "b"],
        x0=np.array([1.0, 2.0]),
        x=np.array([1.5, 2.5]),
        objective_start=2 * objective,
        objective_final=objective,
        iterations=iterations,
        simulations=3,
        trial_evaluations=2,
        status=1,
        message="done",
        history=[objective],
    )


def test_the_step_is_keyed_by_its_module_not_by_a_chapter_or_a_view():
    code = {
        n.partition(" ")[2]
        for n in pipeline.step_code()["refinement_runs"]
        if n.startswith("code ")
    }
    assert {
        "crane_lib/identification/refinement_runs.py",
        "crane_lib/identification/clie.py",
        "crane_lib/identification/projection.py",
    } <= code
    assert not [f for f in code if f.startswith(("chapters/", "crane_lib/reporting/"))]


def test_a_recorded_refinement_reads_back_as_it_was():
    original = _report(5.0, 7)
    again = refinement_runs.report_of(refinement_runs.report_entry(original))
    assert again.as_dict() == original.as_dict()
    np.testing.assert_array_equal(again.x0, original.x0)


def test_the_page_reads_the_ladder_and_refines_nothing(tmp_path, monkeypatch):
    def no_refinement(*args, **kwargs):
        raise AssertionError("the page refined a model")

    monkeypatch.setattr(clie, "refine_fast", no_refinement)
    monkeypatch.setattr(clie, "didim", no_refinement)
    monkeypatch.setattr(sdp, "nearest_pd", no_refinement)
    monkeypatch.setattr(refinement_runs, "RUNS_DIR", tmp_path / "refinement_runs")
    with pytest.raises(RuntimeError, match="make book") as missing:
        report.epsilon_runs("AG02", 0.04, 1, _report(5.0, 7))
    assert "AG02_run1_40ms_epsilon.json" in str(missing.value)
    # the two smallest margins leave the OLS point (the sweep's run), the others one new run
    ladder = [
        {
            "epsilon": eps,
            "failure": None,
            "active": i >= 2,
            "change_norm": 0.1 * i,
            "pd_on_record": True,
            "run": "sweep" if i < 2 else 0,
            "reused": i != 2,
        }
        for i, eps in enumerate(sdp.EPSILON_LADDER)
    ]
    record = {
        "epsilon": {
            "lambda_min_constraint_poses": 1e-3,
            "ladder": ladder,
            "runs": [refinement_runs.report_entry(_report(4.0, 9))],
        }
    }
    write_json_record(refinement_runs.record_path("epsilon", "AG02", 0.04, 1), record)
    ladder_runs = report.epsilon_runs("AG02", 0.04, 1, _report(5.0, 7))
    assert [label for label, _, _ in ladder_runs.runs] == ["AG02 at 40 ms from ε = 0.005"]
    assert (ladder_runs.objective_min, ladder_runs.objective_max) == (4.0, 5.0)
    assert ladder_runs.inactive == ("0.001", "0.002")
    assert ladder_runs.lambda_min_constraint_poses == 1e-3


def test_a_new_clie_sweep_record_reruns_the_ladder_and_not_didim(tmp_path, monkeypatch):
    """DIDIM's record is keyed by the recording and the code alone: a changed CLIE sweep record
    (which only the ladder reads) recomputes the ladder's record and leaves DIDIM's."""
    computed = []

    def didim(trajectory, ts, run):
        computed.append("didim")
        return {"didim": len(computed)}

    def ladder(trajectory, ts, run, sweep_record):
        computed.append("epsilon")
        return {"epsilon": sweep_record}

    recording, sweep = tmp_path / "AG02_run1.npz", tmp_path / "sweep.json"
    recording.write_bytes(b"a recording")
    write_json_record(sweep, {"objective": 1.0})
    monkeypatch.setattr(pipeline, "recording_path", lambda trajectory, run: recording)
    monkeypatch.setattr(clie, "record_path", lambda *args: sweep)
    monkeypatch.setattr(refinement_runs, "didim_record", didim)
    monkeypatch.setattr(refinement_runs, "epsilon_record", ladder)
    folder = tmp_path / "results" / "refinement_runs"
    for step in (pipeline.didim_step, pipeline.epsilon_ladder_step):
        step("quick", directory=folder)
    assert computed == ["didim", "epsilon"]
    write_json_record(sweep, {"objective": 2.0})
    for step in (pipeline.didim_step, pipeline.epsilon_ladder_step):
        step("quick", directory=folder)
    assert computed == ["didim", "epsilon", "epsilon"]
    recording.write_bytes(b"another recording")
    pipeline.didim_step("quick", directory=folder)
    assert computed[-1] == "didim"
    assert sorted(p.name for p in folder.iterdir()) == [
        "AG02_run1_40ms_didim.json",
        "AG02_run1_40ms_epsilon.json",
    ]
