"""The CLIE chapter shows the sweep's refinement of its condition instead of refining it again,
only when the record is of the same route and the same start."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from crane_lib import paths
from crane_lib.identification import clie
from crane_lib.model.parameters import ParameterSet
from crane_lib.reporting.chapters import clie as chapter


def _report(start):
    return clie.RefinementReport(method="fast", names=["ZZR1", "FV1"], x0=start, x=start + 1.0, objective_start=4.0, objective_final=1.0,
                                 iterations=3, simulations=5, trial_evaluations=4, jacobian_evaluations=3, diverged_evaluations=0,
                                 wall_time_s=12.5, status=2, message="xtol", history=[3.0, 2.0, 1.0])


def _condition(start):
    result = SimpleNamespace(trajectory="AG02", ts=0.04, run=1, route="O-C", projection=None, start=ParameterSet(["ZZR1", "FV1"], start),
                             ols=SimpleNamespace(kappa=10.0, parameters=ParameterSet(["ZZR1", "FV1"], start, [0.1, 0.1])))
    return SimpleNamespace(trajectory="AG02", ts=0.04, run=1, result=result, label="AG02 at 40 ms")


def test_the_sweeps_refinement_is_reused_only_from_the_same_start(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS_DIR", tmp_path)
    start = np.array([1.0, 2.0])
    c = _condition(start)
    assert chapter.sweep_refinement(c, "fast") is None  # no record yet
    written = _report(start)
    clie.write_record(clie.record_path("AG02", 0.04, 1, "fast"), c.result, written)
    reused = chapter.sweep_refinement(c, "fast")
    assert reused is not None and reused.as_dict() == written.as_dict()
    np.testing.assert_array_equal(reused.x0, start)
    assert chapter.sweep_refinement(c, "clie") is None  # another route
    assert chapter.sweep_refinement(_condition(start * (1 + 1e-9)), "fast") is None  # another start (e.g. changed code)
    # the same start to rounding (the sweep's kernels run BLAS on one thread, the page's on two)
    assert chapter.sweep_refinement(_condition(start * (1 + 1e-15)), "fast") is not None
    runs = chapter.Runs()
    assert chapter.refine_condition(c, "fast", runs, reuse_sweep=True).as_dict() == written.as_dict()
    assert runs.rows[0]["run"].endswith("the CLIE sweep's run") and runs.rows[0]["wall time (s)"] == 12.5
