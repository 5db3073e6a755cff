"""The text reader's path for complete files (every line has its 106 numbers): it gives the same
samples as the checked path, and every file it cannot vouch for falls back to the checks that
name the line and the field (tests/test_raw_log.py holds those checks' own tests)."""

from __future__ import annotations

import pytest

from crane_lib.errors import InputError
from crane_lib.logs import raw_log
from crane_lib.logs.raw_log import COLUMN, N_COLUMNS, group, read_raw_log, write_raw_log

from .synthetic_log import synthetic_samples

METADATA = {"trajectory": "AG02", "seed": "3"}


@pytest.fixture(scope="module")
def samples():
    values, _ = synthetic_samples(duration_s=0.8, seed=5)
    values[:, group("clamped")] = 0.0
    return values


@pytest.fixture
def text_log(tmp_path, samples):
    return write_raw_log(tmp_path / "log.csv", samples, METADATA)


def _lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _write(path, lines: list[str], newline: str = "\n") -> None:
    path.write_bytes((newline.join(lines) + newline).encode("utf-8"))


def _line(row: int) -> int:
    return len(METADATA) + row + 1


def test_a_complete_file_reads_as_the_checked_path_reads_it(text_log, samples, monkeypatch):
    fast = read_raw_log(text_log)
    assert raw_log._parse_complete(text_log.read_bytes(), 0, 0, N_COLUMNS) is None  # '#' lines
    monkeypatch.setattr(raw_log, "_parse_complete", lambda *args: None)  # the checked path only
    checked = read_raw_log(text_log)
    assert fast.samples.tobytes() == checked.samples.tobytes() == samples.tobytes()
    assert fast.samples.flags.f_contiguous == checked.samples.flags.f_contiguous
    assert (fast.metadata, fast.repairs) == (checked.metadata, checked.repairs) == (METADATA, ())


def test_crlf_lines_read_as_lf_lines(text_log, samples, tmp_path):
    crlf = tmp_path / "crlf.csv"
    _write(crlf, _lines(text_log), "\r\n")
    assert read_raw_log(crlf).samples.tobytes() == samples.tobytes()


@pytest.mark.parametrize("rows", [(250,), "all"])
def test_a_trailing_comma_is_a_wrong_column_count(text_log, samples, rows):
    """pandas drops a trailing delimiter with index_col=False; the comma count does not."""
    lines = _lines(text_log)
    rows = range(len(samples)) if rows == "all" else rows
    for row in rows:
        lines[_line(row) - 1] += ","
    _write(text_log, lines)
    with pytest.raises(InputError) as error:
        read_raw_log(text_log)
    assert error.value.where == f"{text_log}, line {_line(min(rows))}"
    assert f"{N_COLUMNS + 1} fields: wrong column count" in error.value.problem


def test_a_short_and_a_long_line_that_balance_the_comma_count(text_log):
    lines = _lines(text_log)
    short, long = _line(40), _line(90)
    lines[short - 1] = lines[short - 1].rsplit(",", 1)[0]
    lines[long - 1] += ",0"
    _write(text_log, lines)
    with pytest.raises(InputError) as error:
        read_raw_log(text_log)
    assert error.value.where == f"{text_log}, line {short}"
    assert f"{N_COLUMNS - 1} fields" in error.value.problem


def test_a_missing_final_newline_is_still_a_truncation(text_log, samples):
    text_log.write_bytes(text_log.read_bytes()[:-1])
    with pytest.raises(InputError, match="truncated"):
        read_raw_log(text_log)
    assert read_raw_log(text_log, repair=True).n_samples == len(samples) - 1


@pytest.mark.parametrize("suffix", ["csv", "npz"])
def test_the_first_value_out_of_range_is_named_row_by_row(tmp_path, samples, suffix):
    bad = samples.copy()
    bad[60, COLUMN["dtheta_1"]] = 500.0  # out of range, earlier column, later row
    bad[50, COLUMN["position_ticks_3"]] += 0.5  # fractional register count
    bad[50, COLUMN["segment"]] = 1e6  # out of range, same row, later column
    path = write_raw_log(tmp_path / f"log.{suffix}", bad, METADATA)
    with pytest.raises(InputError) as error:
        read_raw_log(path)
    where = f"line {_line(50)}" if suffix == "csv" else "sample 50"
    assert error.value.where == f"{path}, {where}"
    assert "position_ticks_3" in error.value.problem and "integers in" in error.value.expected


def test_finite_values_whose_sum_overflows_are_finite(tmp_path, samples):
    bad = samples.copy()
    bad[10:12, COLUMN["u_feedback_4"]] = 1.5e308  # the sum is inf, every value finite
    path = write_raw_log(tmp_path / "log.npz", bad, METADATA)
    with pytest.raises(InputError) as error:
        read_raw_log(path)
    assert error.value.where == f"{path}, sample 10"
    assert "u_feedback_4" in error.value.problem and "is 1.5e+308" in error.value.problem
    assert "finite numbers" not in error.value.expected
