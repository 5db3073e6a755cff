"""Algorithm 1 end to end for one recording (acceptance.accepted): identify, refine, audit on
seeds 1-5, rescue when an audit fails, re-audit, and the model file that records it all."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.acceptance import accepted as accepted_module
from crane_lib.acceptance.audit import audit_seeds
from crane_lib.logs.raw_log import read_raw_log, write_raw_log
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet, load_parameters
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.twin import recorder as twin

from .audit_cases import description_beta

AP01 = TRAJECTORY_DIR / "AP01.txt"
SEEDS = (1, 2)  # two of the five keep the test short; the rule is the same


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    samples, metadata = twin.record(AP01, seed=12)
    return read_raw_log(
        write_raw_log(tmp_path_factory.mktemp("logs") / "AP01.npz", samples, metadata)
    )


def _refined_as(beta):
    """identify_recording as it is, with the refined parameters replaced by `beta`."""
    real = accepted_module.identify_recording

    def replaced(*args, **kwargs):
        condition, refined, report = real(*args, **kwargs)
        return (
            condition,
            ParameterSet(refined.names, beta, refined.std_errors, dict(refined.meta)),
            report,
        )

    return replaced


def _infeasible_beta():
    model = shared_model("reduced")
    beta = description_beta().copy()
    beta[model.names.index("ZZR6")] -= 0.0058  # the wrist loses PD over part of Theta
    return beta


def test_a_feasible_model_is_accepted_without_a_rescue(log, monkeypatch, tmp_path):
    monkeypatch.setattr(accepted_module, "identify_recording", _refined_as(description_beta()))
    result = accepted_module.accept_recording(log, "AP01", 0.04, refine="none", seeds=SEEDS)
    assert [a.seed for a in result.final_audits] == list(SEEDS) and all(
        a.passed for a in result.first_audits
    )
    assert result.accepted and result.rescue is None
    np.testing.assert_array_equal(result.parameters.values, description_beta())
    path = accepted_module.save_accepted(tmp_path / "model.csv", result)
    loaded = load_parameters(path, shared_model("reduced").names)
    assert loaded.meta["stage"] == "accepted" and loaded.meta["accepted"] == "True"
    assert loaded.meta["refine"] == "none" and loaded.meta["trajectory"] == "AP01"
    assert len(loaded.meta["audit_seeds_lambda_min"].split()) == len(SEEDS)
    np.testing.assert_allclose(loaded.std_errors, result.condition.ols.parameters.std_errors)


def test_the_model_file_carries_what_identify_writes(log):
    """Without replacement, the accepted path's refined model is identify's model for the same
    log."""
    from crane_lib.identification.condition import identify_condition
    from crane_lib.logs.preprocessing import preprocess

    result = accepted_module.accept_recording(log, "AP01", 0.04, refine="none", seeds=SEEDS)
    expected = identify_condition(preprocess(log, 0.04), "AP01").start.values
    np.testing.assert_array_equal(result.refined.values, expected)
    assert result.accepted == all(a.passed for a in result.final_audits)


def test_an_infeasible_estimate_is_rescued_and_re_audited(log, monkeypatch, tmp_path):
    """The refined model is replaced by one that fails the audit: the rescue must run, and the
    verdict comes from the re-audit of the rescued model."""
    monkeypatch.setattr(accepted_module, "identify_recording", _refined_as(_infeasible_beta()))
    result = accepted_module.accept_recording(log, "AP01", 0.04, refine="none", seeds=SEEDS)
    assert not any(a.passed for a in result.first_audits)
    assert result.rescue is not None and result.accepted
    assert [a.lambda_min for a in result.final_audits] == [
        a.lambda_min for a in audit_seeds(result.parameters.values, SEEDS)
    ]
    assert (
        result.parameters.meta["stage"] == "accepted" and "rescue_epsilon" in result.parameters.meta
    )
    assert "after the rescue" in result.verdict()


def test_a_model_that_cannot_be_rescued_is_rejected_with_its_witness(log, monkeypatch):
    monkeypatch.setattr(accepted_module, "identify_recording", _refined_as(_infeasible_beta()))
    monkeypatch.setattr(
        accepted_module,
        "rescue_over_theta",
        lambda model, beta, epsilon, extra_poses: accepted_module.RescueResult(
            None, [], False, "solver failed"
        ),
    )
    result = accepted_module.accept_recording(log, "AP01", 0.04, refine="none", seeds=SEEDS)
    assert not result.accepted
    assert result.parameters.meta["stage"] == "rejected"
    witness = result.worst_audit
    assert (
        witness.lambda_min <= 0
        and "REJECTED" in result.verdict()
        and f"seed {witness.seed}" in result.verdict()
    )


def test_the_sweeps_record_of_the_same_start_is_used_as_the_refinement(log, monkeypatch, tmp_path):
    """The main job hands the CLIE sweep's record of the representative condition to the accepted
    model: used when it is the same route from the same start (the refinement is deterministic,
    so it is the run itself), refined again otherwise."""
    from crane_lib.identification import clie, refinement
    from crane_lib.identification.condition import identify_condition
    from crane_lib.logs.preprocessing import preprocess
    from crane_lib.records import read_json_record

    condition = identify_condition(preprocess(log, 0.04), "AP01")
    problem = clie.build_problem(log)
    report = clie.refine_fast(problem, condition.start)
    np.testing.assert_array_equal(
        clie.refine_fast(problem, condition.start).x, report.x
    )  # deterministic
    record = read_json_record(
        clie.write_record(tmp_path / "AP01_run1_40ms.json", condition, report)
    )

    def refined_again(*args, **kwargs):
        raise RuntimeError("refined again")

    monkeypatch.setattr(refinement, "refine", refined_again)
    result = accepted_module.accept_recording(
        log, "AP01", 0.04, refine="fast", seeds=SEEDS, previous=record
    )
    np.testing.assert_array_equal(result.refined.values, report.x)
    assert (
        result.refinement["iterations"] == report.iterations
        and result.refinement["source"] == refinement.REUSED
    )
    rounding = dict(
        record, start=(np.asarray(record["start"]) * (1 + 1e-15)).tolist()
    )  # another BLAS thread count
    np.testing.assert_array_equal(
        refinement.same_refinement(rounding, "fast", condition.start).x, report.x
    )
    moved = dict(record, start=(np.asarray(record["start"]) * (1 + 1e-9)).tolist())
    for other in (moved, dict(record, clie_method="clie")):
        with pytest.raises(RuntimeError, match="refined again"):
            accepted_module.accept_recording(
                log, "AP01", 0.04, refine="fast", seeds=SEEDS, previous=other
            )
