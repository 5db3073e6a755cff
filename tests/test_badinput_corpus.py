"""The bad-input corpus (crane_book/corpus.py): every case ends with its exit status and a
one-line message holding its fragment, and changes no file; a control writes exactly its output.
The new-recording report's cases run through the papermill CLI, a kernel each (about 5 s apiece).

The cases are generated (no committed binaries); the corpus must stay large and span every
subcommand and every class, so that dropping cases fails here too.
"""

from __future__ import annotations

import dataclasses

import pytest

from crane_book.corpus import (
    CRANE_ID,
    PROGRAMS,
    cases,
    notebook_cases,
    notebook_problems,
    problems,
    run_case,
    run_notebook_case,
    skipped_reason,
)
from crane_lib import cli

CASES = cases()


def test_the_corpus_is_large_and_spans_every_subcommand_and_class():
    assert len([c for c in CASES if c.status != 0]) >= 120
    crane_id = [c for c in CASES if c.program == CRANE_ID]
    assert {c.command for c in crane_id} == set(cli.SUBCOMMANDS)
    for command in cli.SUBCOMMANDS:
        assert (
            sum(c.command == command and c.status == cli.EXIT_BAD_INPUT for c in crane_id) >= 10
        ), command
    # the book's own command lines too: every program of the corpus has a refusal
    assert {c.program for c in CASES if c.status == cli.EXIT_BAD_INPUT} == set(PROGRAMS)
    classes = {c.klass for c in CASES}
    assert {
        "output path",
        "option out of range",
        "command file",
        "raw log",
        "model or truth file",
        "not identifiable",
        "interrupt",
        "arm description",
        "control (accepted)",
    } <= classes


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case, tmp_path):
    reason = skipped_reason(case)
    if reason:
        pytest.skip(reason)
    outcome = run_case(case, tmp_path)
    assert problems(case, outcome) == [], outcome.message


def test_the_checks_can_fail(tmp_path):
    """A control run as if it were a refusal fails every check that applies: status, fragment,
    the written file; and a refusal run as a control fails for what it did not write."""
    control = next(c for c in CASES if c.name == "identify-good")
    outcome = run_case(control, tmp_path / "a")
    assert outcome.changed == ["m.csv"]
    as_refusal = dataclasses.replace(control, status=2, fragment="no such text")
    found = problems(as_refusal, outcome)
    assert (
        any("exit status 0" in p for p in found)
        and any("lacks" in p for p in found)
        and any("files changed" in p for p in found)
    )
    refusal = next(c for c in CASES if c.name == "identify-out-exists")
    as_control = dataclasses.replace(refusal, status=0, creates=("m.csv",))
    assert any(
        "changed [], expected ['m.csv']" in p
        for p in problems(as_control, run_case(refusal, tmp_path / "b"))
    )


NOTEBOOK_CASES = notebook_cases()


def test_the_report_refuses_at_least_ten_kinds_of_bad_input():
    assert len(NOTEBOOK_CASES) >= 10
    assert len({c.name for c in NOTEBOOK_CASES}) == len(NOTEBOOK_CASES)
    classes = {c.klass for c in NOTEBOOK_CASES}
    assert {"output path", "not identifiable", "held-out recording", "report parameter"} <= classes


@pytest.mark.parametrize("case", NOTEBOOK_CASES, ids=[c.name for c in NOTEBOOK_CASES])
def test_report_case(case, tmp_path):
    """papermill exits non-zero, the executed notebook shows the refusal as one line, and the
    recording's folder is unchanged."""
    outcome = run_notebook_case(case, tmp_path / "scratch", tmp_path / "report.ipynb")
    assert notebook_problems(case, outcome) == [], outcome.stderr[-2000:]


def test_the_report_notebooks_temporary_folder_goes_with_its_process():
    """The report converted for the papermill cases lives in a temporary folder of the process
    that converted it; the folder is gone once that process exits (a suite leaves none behind)."""
    import subprocess
    import sys
    from pathlib import Path

    script = "from crane_book.corpus import report_notebook; print(report_notebook())"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    report = Path(done.stdout.strip())
    assert report.name == "your_arm.ipynb" and report.parent.name.startswith("corpus-report-")
    assert not report.parent.exists()
