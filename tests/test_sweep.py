"""The papermill sweep driver: runs each condition, caches by content, isolates failures."""

from __future__ import annotations

import json

import pytest

from crane_lib.errors import InputError
from crane_lib.reporting import sweep

CHAPTER = '''# %% tags=["parameters"]
value = 1
fail = 0
out = ""

# %%
import json, pathlib
if fail:
    raise RuntimeError("deliberate failure of this condition")
pathlib.Path(out).write_text(json.dumps({"square": value * value}))
'''


@pytest.fixture
def chapter(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep, "RESULTS_DIR", tmp_path / "results")
    # the code digest is pinned so edits elsewhere in crane_lib while the test runs cannot interfere
    monkeypatch.setattr(sweep, "source_digest", lambda: "code-v1")
    path = tmp_path / "tiny_chapter.py"
    path.write_text(CHAPTER)
    return path


def test_runs_caches_and_reruns_on_change(chapter, tmp_path):
    conditions = [{"value": v, "fail": 0, "out": str(tmp_path / f"r{v}.json")} for v in (2, 3)]
    first = sweep.run_sweep(chapter, conditions, "tiny", workers=2, show_progress=False)
    assert [o.status for o in first] == ["ran", "ran"]
    assert json.loads((tmp_path / "r3.json").read_text()) == {"square": 9}
    second = sweep.run_sweep(chapter, conditions, "tiny", workers=2, show_progress=False)
    assert [o.status for o in second] == ["cached", "cached"]
    # an input file the condition names changes -> that condition reruns
    data = tmp_path / "input.txt"
    data.write_text("a")
    third = sweep.run_sweep(chapter, conditions, "tiny", inputs_of=lambda p: [data] if p["value"] == 2 else [], show_progress=False)
    assert [o.status for o in third] == ["ran", "cached"]
    data.write_text("b")
    fourth = sweep.run_sweep(chapter, conditions, "tiny", inputs_of=lambda p: [data] if p["value"] == 2 else [], show_progress=False)
    assert [o.status for o in fourth] == ["ran", "cached"]


def test_a_code_change_reruns_every_condition(chapter, tmp_path, monkeypatch):
    conditions = [{"value": 6, "fail": 0, "out": str(tmp_path / "r6.json")}]
    assert sweep.run_sweep(chapter, conditions, "tiny_code", show_progress=False)[0].status == "ran"
    assert sweep.run_sweep(chapter, conditions, "tiny_code", show_progress=False)[0].status == "cached"
    monkeypatch.setattr(sweep, "source_digest", lambda: "code-v2")
    assert sweep.run_sweep(chapter, conditions, "tiny_code", show_progress=False)[0].status == "ran"


def test_a_failing_condition_does_not_stop_the_others(chapter, tmp_path):
    conditions = [
        {"value": 4, "fail": 1, "out": str(tmp_path / "r4.json")},
        {"value": 5, "fail": 0, "out": str(tmp_path / "r5.json")},
    ]
    outcomes = sweep.run_sweep(chapter, conditions, "tiny_fail", workers=2, show_progress=False)
    assert outcomes[0].status == "failed" and "deliberate failure" in outcomes[0].error
    assert outcomes[1].status == "ran"
    # a failed condition is not cached: it runs again next time
    again = sweep.run_sweep(chapter, conditions, "tiny_fail", show_progress=False)
    assert [o.status for o in again] == ["failed", "cached"]


def test_conditions_file_errors(tmp_path):
    bad = tmp_path / "c.csv"
    bad.write_text("trajectory,ts\nAG02,0.04\nAP01,\n")
    with pytest.raises(InputError, match="condition 2"):
        sweep.read_conditions(bad)
    with pytest.raises(InputError, match="no such"):
        sweep.read_conditions(tmp_path / "missing.csv")
