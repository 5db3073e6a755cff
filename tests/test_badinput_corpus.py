"""The bad-input corpus (crane_lib/cli/corpus.py): every case ends with its exit status and a
one-line message holding its fragment, and changes no file; a control writes exactly its output.

The cases are generated (no committed binaries); the corpus must stay large and span every
subcommand and every class, so that dropping cases fails here too.
"""

from __future__ import annotations

import os

import pytest

from crane_lib import cli
from crane_lib.cli.corpus import cases, run_case

CASES = cases()


def test_the_corpus_is_large_and_spans_every_subcommand_and_class():
    assert len([c for c in CASES if c.status != 0]) >= 120
    assert {c.command for c in CASES} == set(cli.SUBCOMMANDS)
    for command in cli.SUBCOMMANDS:
        assert sum(c.command == command and c.status == cli.EXIT_BAD_INPUT for c in CASES) >= 10, command
    classes = {c.klass for c in CASES}
    assert {"output path", "option out of range", "command file", "raw log", "model or truth file", "not identifiable",
            "interrupt", "control (accepted)"} <= classes


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case, tmp_path):
    if case.needs_non_root and os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    outcome = run_case(case, tmp_path)
    assert outcome.status == case.status, outcome.message
    assert case.fragment in outcome.message, outcome.message
    assert "Traceback" not in outcome.stderr
    if case.status == 0:
        assert outcome.changed == sorted(set(case.creates))
    else:
        assert outcome.changed == [], f"files changed: {outcome.changed}"
        # one line (a progress bar may precede it on a terminal; none here)
        assert len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
        assert len(outcome.stderr) < 600, f"{len(outcome.stderr)} characters"


def test_a_changed_file_is_noticed(tmp_path):
    """The no-change check can fail: a case whose command writes is reported as a change."""
    control = next(c for c in CASES if c.name == "identify-good")
    assert run_case(control, tmp_path).changed == ["m.csv"]
