"""Raw log containers: lossless round trips, deterministic bytes, and bad input named by file and
line/sample."""

from __future__ import annotations

import gzip
import os

import numpy as np
import pytest

from crane_lib.constants import KT, N_AXES
from crane_lib.errors import InputError
from crane_lib.logs import npz_io, raw_log
from crane_lib.logs.raw_log import (
    COLUMN,
    MAX_STAMP_GAP_S,
    N_COLUMNS,
    group,
    read_raw_log,
    write_raw_log,
)
from crane_lib.paper_numbers import paper

from .synthetic_log import synthetic_samples

CONTAINERS = ("csv", "csv.gz", "npz")
METADATA = {"trajectory": "AG02", "seed": "3", "note": "twin: with spaces, colons: fine"}


@pytest.fixture(scope="module")
def samples():
    values, _ = synthetic_samples(duration_s=1.5, seed=11)
    values[:, group("clamped")] = 0.0
    return values


def header_lines() -> int:
    return len(METADATA)


def sample_lines(path) -> list[str]:
    """The lines of a text log (metadata lines included), without their newlines."""
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def write_lines(path, lines: list[str], final_newline: bool = True) -> None:
    path.write_text("\n".join(lines) + ("\n" if final_newline else ""), encoding="utf-8")


def line_of_sample(row: int) -> int:
    """1-based line number of sample `row` in a text log written with METADATA."""
    return header_lines() + row + 1


# ------------------------------------------------------------------------------------------
# round trips and determinism


@pytest.mark.parametrize("suffix", CONTAINERS)
def test_round_trip_is_lossless(tmp_path, samples, suffix):
    path = write_raw_log(tmp_path / f"log.{suffix}", samples, METADATA)
    log = read_raw_log(path)
    assert np.array_equal(log.samples, samples)  # bit for bit, not approximately
    assert log.metadata == METADATA
    assert log.repairs == ()


@pytest.mark.parametrize("suffix", CONTAINERS)
def test_rewrite_is_byte_identical(tmp_path, samples, suffix):
    first = write_raw_log(tmp_path / f"a.{suffix}", samples, METADATA).read_bytes()
    os.utime(tmp_path)  # a different clock reading between the writes
    second = write_raw_log(tmp_path / f"b.{suffix}", samples, METADATA).read_bytes()
    assert first == second  # also independent of the file name (gzip headers can carry it)


def test_npz_is_an_ordinary_numpy_archive(tmp_path, samples):
    path = write_raw_log(tmp_path / "log.npz", samples, METADATA)
    with np.load(path, allow_pickle=False) as archive:
        assert np.array_equal(archive["samples"], samples)
        assert archive["metadata"].shape == ()
    assert npz_io.npz_bytes({"x": np.arange(3)}) == npz_io.npz_bytes({"x": np.arange(3)})


def test_accessors_apply_the_offset_and_per_axis_kt(tmp_path, samples):
    log = read_raw_log(write_raw_log(tmp_path / "log.npz", samples))
    np.testing.assert_array_equal(log.theta, samples[:, 1:9] - np.pi)  # paper columns 2-9
    current = samples[:, 49:57]  # paper columns 50-57
    np.testing.assert_array_equal(log.current_command, current)
    np.testing.assert_allclose(log.torque_logged, current * KT, rtol=1e-15)
    # axis 2 carries the XM540's constant, the others the XM430's, as the paper prints them
    assert KT[1] == pytest.approx(paper("kt_effective_xm540").value, abs=5e-5)
    assert all(
        KT[a] == pytest.approx(paper("kt_effective_xm430").value, abs=5e-5)
        for a in range(N_AXES)
        if a != 1
    )
    assert log.segment.dtype == np.int64 and log.segment[0] == -1
    assert log.theta_ref.shape == log.ddtheta_ref.shape == (len(samples), N_AXES)


# ------------------------------------------------------------------------------------------
# bad text input: each names the file and the line


@pytest.fixture
def text_log(tmp_path, samples):
    return write_raw_log(tmp_path / "log.csv", samples, METADATA)


def corrupt_field(path, row: int, column: int, token: str) -> int:
    lines = sample_lines(path)
    line = line_of_sample(row)
    fields = lines[line - 1].split(",")
    fields[column] = token
    lines[line - 1] = ",".join(fields)
    write_lines(path, lines)
    return line


@pytest.mark.parametrize("token", ["nan", "inf", "-inf", ""])
def test_non_finite_value_names_line_and_column(text_log, token):
    line = corrupt_field(text_log, row=400, column=COLUMN["current_command_2"], token=token)
    with pytest.raises(InputError) as error:
        read_raw_log(text_log)
    assert error.value.where == f"{text_log}, line {line}"
    assert "current_command_2" in error.value.problem
    with pytest.raises(InputError):
        read_raw_log(text_log, repair=True)  # not repairable


def test_non_number_names_line_and_column(text_log):
    line = corrupt_field(text_log, row=17, column=COLUMN["theta_logged_3"], token="0.5x")
    with pytest.raises(InputError) as error:
        read_raw_log(text_log)
    assert error.value.where == f"{text_log}, line {line}"
    assert "theta_logged_3" in error.value.problem and "0.5x" in error.value.problem


@pytest.mark.parametrize("change", [-1, +1])
def test_wrong_column_count_in_the_middle(text_log, change):
    lines = sample_lines(text_log)
    line = line_of_sample(250)
    fields = lines[line - 1].split(",")
    lines[line - 1] = ",".join(fields[:change] if change < 0 else fields + ["0"])
    write_lines(text_log, lines)
    with pytest.raises(InputError) as error:
        read_raw_log(text_log, repair=True)  # a short line that is not the last is not a truncation
    assert error.value.where == f"{text_log}, line {line}"
    assert f"{N_COLUMNS + change} fields" in error.value.problem


def test_blank_line_in_the_middle(text_log):
    lines = sample_lines(text_log)
    line = line_of_sample(100)
    lines.insert(line - 1, "")
    write_lines(text_log, lines)
    with pytest.raises(InputError) as error:
        read_raw_log(text_log)
    assert error.value.where == f"{text_log}, line {line}"


def set_stamp(path, row: int, value: float) -> int:
    return corrupt_field(path, row, COLUMN["t"], repr(float(value)))


def test_duplicated_stamp(text_log, samples):
    line = set_stamp(text_log, 300, samples[299, 0])
    with pytest.raises(InputError) as error:
        read_raw_log(text_log)
    assert error.value.where == f"{text_log}, line {line}" and "repeats" in error.value.problem


def test_non_monotonic_stamp_is_not_repaired(text_log, samples):
    line = set_stamp(text_log, 300, samples[298, 0] - 1e-4)
    for repair in (False, True):
        with pytest.raises(InputError) as error:
            read_raw_log(text_log, repair=repair)
        assert (
            error.value.where == f"{text_log}, line {line}"
            and "non-monotonic" in error.value.problem
        )


def test_gap_over_20_ms_is_not_repaired(tmp_path, samples):
    gapped = samples.copy()
    gapped[700:, 0] += MAX_STAMP_GAP_S  # the step into sample 700 becomes about 21 ms
    path = write_raw_log(tmp_path / "gap.csv", gapped, METADATA)
    for repair in (False, True):
        with pytest.raises(InputError) as error:
            read_raw_log(path, repair=repair)
        assert (
            error.value.where == f"{path}, line {line_of_sample(700)}"
            and "gap" in error.value.problem
        )
    # just under the limit is accepted
    at_limit = samples.copy()
    at_limit[700:, 0] += MAX_STAMP_GAP_S - (samples[700, 0] - samples[699, 0]) - 1e-9
    read_raw_log(write_raw_log(tmp_path / "limit.csv", at_limit))


@pytest.mark.parametrize("cut", ["no_newline_short", "no_newline_full", "short_with_newline"])
def test_truncated_last_line_only_repaired_on_request(text_log, samples, cut):
    lines = sample_lines(text_log)
    last = len(lines)
    if cut == "no_newline_short":
        lines[-1] = lines[-1][: len(lines[-1]) // 2]
        write_lines(text_log, lines, final_newline=False)
    elif cut == "no_newline_full":
        write_lines(
            text_log, lines, final_newline=False
        )  # every field present, the last may be cut
    else:
        lines[-1] = ",".join(lines[-1].split(",")[:60])
        write_lines(text_log, lines)
    with pytest.raises(InputError) as error:
        read_raw_log(text_log)
    assert error.value.where == f"{text_log}, line {last}" and "truncated" in error.value.problem
    log = read_raw_log(text_log, repair=True)
    assert np.array_equal(log.samples, samples[:-1])
    assert len(log.repairs) == 1 and f"line {last}" in log.repairs[0]


def test_duplicated_stamps_repaired_on_request(tmp_path, samples):
    doubled = np.insert(
        samples, [100, 500, 500], samples[[99, 499, 499]], axis=0
    )  # one pair, one triple
    doubled[501, 5] += 1e-3  # a repeat whose other columns differ
    path = write_raw_log(tmp_path / "dup.csv", doubled, METADATA)
    with pytest.raises(InputError) as error:
        read_raw_log(path)
    assert error.value.where == f"{path}, line {line_of_sample(100)}"
    log = read_raw_log(path, repair=True)
    assert np.array_equal(log.samples, samples)
    assert len(log.repairs) == 1
    assert "dropped 3 samples" in log.repairs[0] and "1 of them differed" in log.repairs[0]
    assert f"line {line_of_sample(100)}" in log.repairs[0]


def test_empty_and_header_only_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(InputError) as error:
        read_raw_log(empty, repair=True)
    assert error.value.where == str(empty) and "empty" in error.value.problem
    header_only = tmp_path / "header.csv"
    header_only.write_text("# trajectory: AG02\n# seed: 1\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_raw_log(header_only)
    assert error.value.where == str(header_only) and "no samples" in error.value.problem


def test_truncated_gzip_repaired_on_request(tmp_path, samples):
    path = write_raw_log(tmp_path / "log.csv.gz", samples, METADATA)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(InputError) as error:
        read_raw_log(path)
    assert error.value.where == str(path) and "truncated" in error.value.problem
    log = read_raw_log(path, repair=True)
    kept = log.n_samples
    assert 0 < kept < len(samples)
    assert np.array_equal(log.samples, samples[:kept])
    assert len(log.repairs) == 2  # the cut stream, then the partial last line


def test_gzip_header_carries_no_name_or_time(tmp_path, samples):
    path = write_raw_log(tmp_path / "log.csv.gz", samples[:5])
    with gzip.open(path) as handle:
        handle.read()
    header = path.read_bytes()[:10]
    assert header[4:8] == b"\0\0\0\0"  # mtime 0
    assert header[3] & 0x08 == 0  # no FNAME field


# ------------------------------------------------------------------------------------------
# bad npz input: each names the file and the sample index


def npz_with(tmp_path, samples_array, name="bad.npz"):
    return npz_io.write_npz(tmp_path / name, {"samples": samples_array, "metadata": np.array("")})


def test_npz_wrong_column_count(tmp_path, samples):
    path = npz_with(tmp_path, samples[:, :105])
    with pytest.raises(InputError) as error:
        read_raw_log(path)
    assert error.value.where == str(path) and "wrong column count" in error.value.problem


@pytest.mark.parametrize("fault", ["nan", "inf", "duplicate", "backwards", "gap"])
def test_npz_faults_name_the_sample(tmp_path, samples, fault):
    bad = samples.copy()
    row = 321
    if fault == "nan":
        bad[row, COLUMN["theta_logged_5"]] = np.nan
    elif fault == "inf":
        bad[row, COLUMN["current_command_8"]] = np.inf
    elif fault == "duplicate":
        bad[row, 0] = bad[row - 1, 0]
    elif fault == "backwards":
        bad[row, 0] = bad[row - 1, 0] - 1e-5
    else:
        bad[row:, 0] += 0.05
    path = npz_with(tmp_path, bad)
    with pytest.raises(InputError) as error:
        read_raw_log(path)
    assert error.value.where == f"{path}, sample {row}"
    if fault == "duplicate":
        log = read_raw_log(path, repair=True)
        assert log.n_samples == len(samples) - 1 and "sample 321" in log.repairs[0]


def test_npz_empty_and_unreadable(tmp_path):
    path = npz_with(tmp_path, np.zeros((0, N_COLUMNS)))
    with pytest.raises(InputError) as error:
        read_raw_log(path)
    assert error.value.where == str(path) and "no samples" in error.value.problem
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(InputError) as error:
        read_raw_log(junk)
    assert error.value.where == str(junk)
    with pytest.raises(InputError):
        read_raw_log(tmp_path / "missing.csv")


# ------------------------------------------------------------------------------------------
# nothing half-written


def test_failed_write_leaves_nothing_behind(tmp_path, samples, monkeypatch):
    target = tmp_path / "log.csv"
    write_raw_log(target, samples[:10])
    before = target.read_bytes()

    def fail_halfway(handle, array, **kwargs):
        handle.write("0,1,2\n")  # part of the output is already written when the failure comes
        raise OSError("disk full")

    monkeypatch.setattr(raw_log.np, "savetxt", fail_halfway)
    for name in ("log.csv", "new.csv", "new.csv.gz"):
        with pytest.raises(OSError):
            write_raw_log(tmp_path / name, samples)
    assert target.read_bytes() == before  # the old file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.csv"]  # no new file, no temporary


def test_bad_shape_or_metadata_writes_nothing(tmp_path, samples):
    for name, values, metadata in (
        ("a.npz", samples[:, :50], None),
        ("b.csv", samples, {"bad\nkey": "x"}),
    ):
        with pytest.raises(ValueError):
            write_raw_log(tmp_path / name, values, metadata)
    assert list(tmp_path.iterdir()) == []


def test_column_groups_cover_the_106_columns_in_order():
    from crane_lib.logs.raw_log import N_COLUMNS, column_groups

    groups = column_groups()
    covered = [c for g in groups for c in range(int(g["first column"]), int(g["last column"]) + 1)]
    assert covered == list(range(1, N_COLUMNS + 1))
    by_name = {g["group"]: g for g in groups}
    assert (by_name["theta_logged"]["first column"], by_name["theta_logged"]["last column"]) == (
        "2",
        "9",
    )
    assert (
        by_name["current_command"]["first column"],
        by_name["current_command"]["last column"],
    ) == ("50", "57")
