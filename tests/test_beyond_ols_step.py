"""The Beyond OLS step of the main job (crane_book.pipeline.beyond_ols_step): the records that are
missing or stale are computed, each once, on worker processes when jobs > 1; cached ones are not;
a record that fails stops the step with its error. The records themselves are the chapter's
(built and checked by `make book`); here a stand-in job (tests/stand_in_jobs.py) writes a marker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crane_book import keys, pipeline
from crane_lib.export import beyond_ols

from .stand_in_jobs import write_marker


@pytest.fixture
def three_trajectories(monkeypatch, tmp_path):
    monkeypatch.setattr(beyond_ols, "trajectories", lambda profile: ["AG02", "AP01", "AP03"])
    monkeypatch.setattr(
        beyond_ols,
        "job_inputs",
        lambda job, representative, profile, directory: (
            Path(directory) / f"{job}.json",
            Path(__file__),
            {"job": job},
        ),
    )
    monkeypatch.setattr(
        keys.KeyStore,
        "stale",
        lambda self, name, key, outputs=(): [] if name == "AP01" else ["new"],
    )
    folder = tmp_path / "beyond_ols"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("jobs", [1, 2])
def test_each_stale_record_is_computed_once_and_cached_ones_are_not(three_trajectories, jobs):
    log = pipeline.beyond_ols_step("quick", three_trajectories, jobs=jobs, run_job=write_marker)
    assert (log.reused, log.recomputed) == (1, 3)
    written = {p.stem: p.read_text().split() for p in three_trajectories.glob("*.txt")}
    assert sorted(written) == ["AG02", "AP03", "invariance"]
    # the representative is the first trajectory; each job gets the path and key the step computed
    assert all(w[1:] == ["AG02", "quick", f"{job}.json"] for job, w in written.items())
    # each computed record's key is stored beside it, so the next build reuses it
    assert sorted(
        p.stem for p in (three_trajectories.parent / "keys" / "beyond_ols").glob("*.json")
    ) == sorted(written)
    in_this_process = {job for job, w in written.items() if int(w[0]) == os.getpid()}
    assert in_this_process == (set(written) if jobs == 1 else set())


def test_a_failing_record_stops_the_step_with_its_error(monkeypatch, three_trajectories):
    monkeypatch.setattr(beyond_ols, "trajectories", lambda profile: ["AG02", "FAILS"])
    with pytest.raises(ValueError, match="FAILS cannot be fitted"):
        pipeline.beyond_ols_step("quick", three_trajectories, jobs=2, run_job=write_marker)
