"""The small CSV readers (conditions of a sweep, executions of a profile): strict fields, a named
line for every fault, values that cannot reach outside their folders."""

from __future__ import annotations

import pytest

from crane_book import sweep
from crane_lib.errors import InputError
from crane_lib.twin import dataset


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("trajectory,ts\nAG02,0.04,1\n", "c.csv:2 (condition 1): 3 fields"),
        ("trajectory,ts\nAG02,０.04\n", "letters, digits"),
        ("trajectory,ts\n../../etc,0.04\n", "letters, digits"),
        ("trajectory,t s\nAG02,0.04\n", "column name 't s'"),
        ("ts,ts\n0.04,0.04\n", "repeats"),
        ("trajectory,ts\n", "no conditions"),
        (b"trajectory,ts\nAG02,\xff\n", "not UTF-8"),
    ],
)
def test_conditions_file_faults(tmp_path, text, fragment):
    path = tmp_path / "c.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        sweep.read_conditions(path)


def test_conditions_keep_the_types_pandas_gave_them(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("# comment\ntrajectory,ts,run,summary\nAG02,0.01,1,False\nAP01,0.04,2,True\n")
    rows = sweep.read_conditions(path)
    assert rows == [
        {"trajectory": "AG02", "ts": 0.01, "run": 1, "summary": False},
        {"trajectory": "AP01", "ts": 0.04, "run": 2, "summary": True},
    ]
    assert [type(v) for v in rows[0].values()] == [str, float, int, bool]


@pytest.mark.parametrize(
    "row, fragment",
    [
        ("../data/twin_truth,1,1", "a file stem in trajectories/"),
        ("AG02,1,-5", "non-negative seed"),
        ("AG02,0,5", "run number from 1"),
        ("AG02,１,5", "is not an integer"),
        ("NOPE,1,5", "no command file"),
    ],
)
def test_executions_file_faults(tmp_path, monkeypatch, row, fragment):
    (tmp_path / "recordings_quick.csv").write_text(f"trajectory,run,seed\n{row}\n")
    monkeypatch.setattr(dataset, "PAPERMILL_PARAMS_DIR", tmp_path)
    with pytest.raises(InputError, match=fragment):
        dataset.executions("quick")
