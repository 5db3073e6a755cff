"""The CLIE chapter shows the sweep's refinement of its condition (it refines nothing itself),
only when the record is of the same route and the same start."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from crane_lib import paths
from crane_lib.identification import clie
from crane_lib.model.parameters import ParameterSet
from crane_lib.reporting.chapters import clie as chapter

from .refinement_cases import refinement_report


def _report(start):
    return refinement_report(
        names=["ZZR1", "FV1"],
        x0=start,
        x=start + 1.0,
        objective_start=4.0,
        iterations=3,
        simulations=5,
        trial_evaluations=4,
        jacobian_evaluations=3,
        wall_time_s=12.5,
        message="xtol",
        history=[3.0, 2.0, 1.0],
    )


def _condition(start):
    """The OLS/SDP record the sweep writes (route O-C: CLIE starts from the OLS estimate)."""
    return {
        "trajectory": "AG02",
        "ts": 0.04,
        "run": 1,
        "route": "O-C",
        "epsilon": None,
        "kappa": 10.0,
        "names": ["ZZR1", "FV1"],
        "ols": list(start),
        "std_errors": [0.1, 0.1],
    }


def _result(record):
    """What clie.write_record reads of a condition (identification.condition.ConditionResult)."""
    start = ParameterSet(record["names"], np.asarray(record["ols"]), record["std_errors"])
    return SimpleNamespace(
        trajectory=record["trajectory"],
        ts=record["ts"],
        run=record["run"],
        route=record["route"],
        projection=None,
        start=start,
        ols=SimpleNamespace(kappa=record["kappa"], parameters=start),
    )


def test_the_sweeps_refinement_is_reused_only_from_the_same_start(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    start = np.array([1.0, 2.0])
    c = _condition(start)
    assert chapter.sweep_refinement(c, "fast") is None  # no record yet
    written = _report(start)
    clie.write_record(clie.record_path("AG02", 0.04, 1, "fast"), _result(c), written)
    reused = chapter.sweep_refinement(c, "fast")
    assert reused is not None and reused.as_dict() == written.as_dict()
    np.testing.assert_array_equal(reused.x0, start)
    assert chapter.sweep_refinement(c, "clie") is None  # another route
    assert (
        chapter.sweep_refinement(_condition(start * (1 + 1e-9)), "fast") is None
    )  # another start (e.g. changed code)
    # the same start to rounding (the sweep's kernels run BLAS on one thread, the page's on two)
    assert chapter.sweep_refinement(_condition(start * (1 + 1e-15)), "fast") is not None
    # on route O-S-C the start is the projection, not the OLS estimate
    projected = {**c, "route": "O-S-C", "ols": [9.0, 9.0], "projected": list(start)}
    assert chapter.sweep_refinement(projected, "fast") is not None
    assert chapter.sweep_refinement_of(c, "fast").as_dict() == written.as_dict()
    table = chapter.runs_table([("the CLIE sweep's run", "O-C", written)]).frame
    assert table.loc["the CLIE sweep's run", "wall time (s)"] == 12.5
    assert table.loc["the CLIE sweep's run", "simulations per iteration"] == 5 / 3


def test_without_the_sweeps_record_the_page_says_which_record_is_missing_and_refines_nothing(
    tmp_path, monkeypatch
):
    import pytest

    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    c = _condition(np.array([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="no record from this start"):
        chapter.sweep_refinement_of(c, "fast")
    clie.write_failure(
        clie.failure_path("AG02", 0.04, 1, "fast"), _result(c), "a state is not finite"
    )
    with pytest.raises(RuntimeError, match="a state is not finite"):
        chapter.sweep_refinement_of(c, "fast")
    assert not clie.record_path("AG02", 0.04, 1, "fast").exists()
