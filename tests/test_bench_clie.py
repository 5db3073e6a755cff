"""The CLIE benchmark's rows file: a sweep stopped after hours keeps every condition it finished,
and a later run measures only the conditions whose row is not stored under the same key."""

import json

import pytest

from benchmarks import bench_clie

STEPS = {"one step": 0.01, "0.25 ms": 0.00025}


def _conditions(tmp_path, names=("AP01", "AP02", "AP03")):
    conditions = []
    for name in names:
        recording = tmp_path / f"{name}.npz"
        recording.write_bytes(name.encode() * 10)
        conditions.append((name, 0.04, recording))
    return conditions


def _measured(stop_at=None):
    """A stand-in for condition_row that notes which conditions it measured (and can stop)."""
    names = []

    def condition_row(trajectory, ts, path, steps, iterations, exact=False):
        if trajectory == stop_at:
            raise KeyboardInterrupt
        names.append(trajectory)
        return {
            "trajectory": trajectory,
            "ts_ms": round(ts * 1e3),
            "one step wall_s": 1.0,
            "0.25 ms wall_s": 2.0 + len(trajectory),
            "one step objective change": 1e-4 * len(names),
            "one step largest change (SE)": 0.01,
            "one step refined again": False,
            "one step simulations": 20,
            "one step jacobians": 9,
        }

    condition_row.names = names
    return condition_row


def _compare(conditions, rows_file, iterations=5):
    return bench_clie.sweep_comparison(
        conditions, iterations, step_sensitivity=False, rows_file=rows_file
    )


def test_a_stopped_sweep_keeps_its_rows_and_the_next_run_measures_only_the_rest(
    tmp_path, monkeypatch
):
    conditions, rows_file = _conditions(tmp_path), tmp_path / "rows" / "sweep.jsonl"
    stopped = _measured(stop_at="AP03")
    monkeypatch.setattr(bench_clie, "condition_row", stopped)
    with pytest.raises(KeyboardInterrupt):
        _compare(conditions, rows_file)
    assert stopped.names == ["AP01", "AP02"]
    lines = rows_file.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["row"]["trajectory"] for line in lines] == ["AP01", "AP02"]

    resumed = _measured()
    monkeypatch.setattr(bench_clie, "condition_row", resumed)
    summary = _compare(conditions, rows_file)
    assert resumed.names == ["AP03"]
    assert [r["trajectory"] for r in summary["conditions"]] == ["AP01", "AP02", "AP03"]
    # the stored rows are the first run's, as it wrote them
    assert summary["conditions"][1]["one step objective change"] == pytest.approx(2e-4)
    # what the one-step time is made of, summed over stored and measured rows alike
    assert (summary["one_step_s"], summary["one_step_simulations"]) == (3.0, 60)
    assert (summary["one_step_jacobians"], summary["refined_again_s"]) == (27, 0)
    assert "speedup_over_earlier" not in summary  # three conditions, not the full sweep

    again = _measured()
    monkeypatch.setattr(bench_clie, "condition_row", again)
    assert _compare(conditions, rows_file)["conditions"] == summary["conditions"]
    assert again.names == []


def test_a_row_is_measured_again_when_its_recording_or_options_change(tmp_path, monkeypatch):
    conditions, rows_file = _conditions(tmp_path), tmp_path / "sweep.jsonl"
    monkeypatch.setattr(bench_clie, "condition_row", _measured())
    _compare(conditions, rows_file)

    conditions[1][2].write_bytes(b"recorded again")
    measured = _measured()
    monkeypatch.setattr(bench_clie, "condition_row", measured)
    _compare(conditions, rows_file)
    assert measured.names == ["AP02"]

    measured = _measured()
    monkeypatch.setattr(bench_clie, "condition_row", measured)
    _compare(conditions, rows_file, iterations=6)
    assert measured.names == ["AP01", "AP02", "AP03"]

    code = bench_clie.code_key()
    # the key reads the functions that compute a row, not the ones that format or examine
    monkeypatch.setattr(bench_clie, "print_examination", lambda found: None)
    assert bench_clie.code_key() == code
    monkeypatch.setattr(bench_clie, "condition_problem", lambda trajectory, ts, path: None)
    assert bench_clie.code_key() != code
    arguments = (*conditions[0], STEPS, 5, False)
    assert bench_clie.row_key(arguments, code) != bench_clie.row_key(arguments, code + "0")
    assert bench_clie.row_key(arguments, code) != bench_clie.row_key(
        (*conditions[0], STEPS, 5, True), code
    )


def test_an_unfinished_last_line_is_left_out_and_cut_off_before_the_next_row(tmp_path, monkeypatch):
    conditions, rows_file = _conditions(tmp_path, ("AP01", "AP02")), tmp_path / "sweep.jsonl"
    monkeypatch.setattr(bench_clie, "condition_row", _measured(stop_at="AP02"))
    with pytest.raises(KeyboardInterrupt):
        _compare(conditions, rows_file)
    with open(rows_file, "a", encoding="utf-8") as handle:
        handle.write('{"key": "abc", "row": {"trajec')  # a run stopped while writing
    assert len(bench_clie.read_rows(rows_file)) == 1

    measured = _measured()
    monkeypatch.setattr(bench_clie, "condition_row", measured)
    _compare(conditions, rows_file)
    assert measured.names == ["AP02"]
    lines = rows_file.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["row"]["trajectory"] for line in lines] == ["AP01", "AP02"]


@pytest.mark.parametrize(
    "text, says",
    [
        ('{"key": "a", "row": null}\nnot json\n', "line 2: expected a stored row as JSON"),
        ('{"key": "a", "row": null}\n[1, 2]\n', 'line 2: expected {"key": string'),
        ('{"key": 3, "row": {}}\n', 'line 1: expected {"key": string'),
        ('{"key": "a", "row": 4}\n', 'line 1: expected {"key": string'),
    ],
)
def test_a_line_that_is_not_a_stored_row_is_named(text, says, tmp_path):
    rows_file = tmp_path / "sweep.jsonl"
    rows_file.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        bench_clie.read_rows(rows_file)
    assert str(refused.value).startswith(f"{rows_file} {says}"), refused.value


def test_a_row_waits_for_a_line_another_run_is_writing_instead_of_cutting_it(tmp_path):
    import fcntl
    import threading

    rows_file = tmp_path / "sweep.jsonl"
    with open(rows_file, "ab") as other_run:
        fcntl.flock(other_run, fcntl.LOCK_EX)
        other_run.write(b'{"key": "theirs", "row": ')
        other_run.flush()
        appending = threading.Thread(target=bench_clie.append_row, args=(rows_file, "ours", None))
        appending.start()
        appending.join(timeout=0.5)
        assert appending.is_alive()  # waiting for the lock, not cutting their line
        other_run.write(b"null}\n")
        other_run.flush()
    appending.join(timeout=10)
    assert not appending.is_alive()
    assert bench_clie.read_rows(rows_file) == {"theirs": None, "ours": None}


def test_the_census_names_the_conditions_whose_loop_clamps():
    """census_summary counts a condition as clamping where any axis clamps on any cycle, at
    the start and at the fast end separately."""

    def found(name, start, end, gains):
        return {
            "trajectory": name,
            "ts_ms": 40,
            "start clamped cycles": start,
            "fast end clamped cycles": end,
            "start velocity loop gain": gains[0],
            "fast end velocity loop gain": gains[1],
        }

    summary = bench_clie.census_summary(
        [
            found("AP01", [0, 0, 0], [0, 0, 0], (0.5, 1.99)),
            found("AP02", [0, 3, 0], [0, 0, 0], (2.0, 0.6)),
            found("AP03", [0, 0, 0], [10838, 0, 10480], (1.26, 4.53)),
            found("AP04", [1, 0, 0], [0, 0, 1], (1.5, 2.5)),
        ]
    )
    assert summary == {
        "conditions": 4,
        "start clamps": ["AP02:40", "AP04:40"],
        "start past the stable gain": ["AP02:40"],
        "fast end clamps": ["AP03:40", "AP04:40"],
        "fast end past the stable gain": ["AP03:40", "AP04:40"],
    }
