"""Property tests of the text parsers: any byte string either parses to a valid object or raises
the project's InputError; nothing else (no ValueError, UnicodeDecodeError, IndexError, ...).

Examples mix raw bytes with mutations of valid files (bytes flipped, inserted, deleted, lines
duplicated or dropped, tokens replaced by odd numbers), so that most of them get past the first
line. The example count comes from the Hypothesis profile of tests/conftest.py ("crane": at
least 2,000 per parser, derandomized so CI is reproducible).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crane_book.corpus import command_file_bytes, log_text, model_bytes
from crane_lib.constants import N_AXES
from crane_lib.errors import InputError
from crane_lib.excitation.commands import CommandFile, read_command_file
from crane_lib.logs.raw_log import N_COLUMNS, RawLog, read_raw_log
from crane_lib.model.parameters import ParameterSet, load_parameters

ODD_TOKENS = [
    b"nan",
    b"inf",
    b"-inf",
    b"1e308",
    b"1e400",
    b"-0",
    b"",
    b" ",
    b"0x10",
    b"1_0",
    "\uff16".encode(),
    b"\xff",
    b"\x00",
    b"1e-400",
    b"+.5",
    b"5.",
    b".",
    b"e5",
    b"1e",
    b"--1",
    b"9" * 400,
    b",",
    b"\r",
    b"#",
    b'"1"',
]


def _mutated(valid: bytes):
    """Strategy: `valid` with a few random edits."""

    def apply(data: bytes, edits) -> bytes:
        for kind, position, payload in edits:
            if not data:
                data = payload
                continue
            i = position % len(data)
            if kind == 0:
                data = data[:i] + payload + data[i:]
            elif kind == 1:
                data = data[:i] + data[i + len(payload) + 1 :]
            elif kind == 2:
                data = data[:i] + payload + data[i + len(payload) :]
            elif kind == 3:  # replace the token at i by an odd token
                start = (
                    max(data.rfind(b",", 0, i), data.rfind(b" ", 0, i), data.rfind(b"\n", 0, i)) + 1
                )
                ends = [
                    e
                    for e in (data.find(b",", i), data.find(b" ", i), data.find(b"\n", i))
                    if e >= 0
                ]
                end = min(ends) if ends else len(data)
                data = data[:start] + ODD_TOKENS[position % len(ODD_TOKENS)] + data[end:]
            elif kind == 4:  # duplicate or drop a line
                lines = data.split(b"\n")
                k = position % len(lines)
                lines = (
                    lines[:k] + lines[k : k + 1] * (payload[:1] == b"d" and 2 or 0) + lines[k + 1 :]
                )
                data = b"\n".join(lines)
            else:  # cut the file short
                data = data[:i]
        return data

    edit = st.tuples(st.integers(0, 5), st.integers(0, 1 << 30), st.binary(min_size=0, max_size=8))
    return st.lists(edit, min_size=1, max_size=4).map(lambda edits: apply(valid, edits))


def _inputs(valid: bytes):
    return st.one_of(st.binary(max_size=2000), _mutated(valid), _mutated(valid))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """One file per parser, rewritten per example, in pytest's temporary folder (which pytest
    prunes, so even a killed worker's folder goes) and shared by the examples (module scope:
    Hypothesis runs every example of a test inside one call)."""
    return tmp_path_factory.mktemp("properties")


def _parse(scratch: Path, read, data: bytes, suffix: str):
    path = scratch / f"input{suffix}"
    path.write_bytes(data)
    try:
        return read(path)
    except InputError as error:
        assert str(error).strip()
        assert len(str(error)) < 1000, len(str(error))  # echoed tokens are cut short
        return None


@given(_inputs(command_file_bytes()))
def test_command_file_parser(scratch, data):
    cmd = _parse(scratch, read_command_file, data, ".txt")
    if cmd is not None:  # a valid object: angles in radians within a turn, speeds in [1, 100] %
        assert isinstance(cmd, CommandFile) and cmd.waypoints.shape == (cmd.n_waypoints, N_AXES)
        assert np.all(np.isfinite(cmd.waypoints)) and np.all(np.abs(cmd.waypoints) <= np.pi)
        assert np.all((cmd.speed_percent >= 1) & (cmd.speed_percent <= 100))
        assert cmd.sha256 == hashlib.sha256(data).hexdigest()


@given(_inputs(log_text()))
def test_raw_log_text_parser(scratch, data):
    log = _parse(scratch, read_raw_log, data, ".csv")
    if log is not None:
        assert (
            isinstance(log, RawLog)
            and log.samples.shape[1] == N_COLUMNS
            and log.samples.dtype == np.float64
        )
        assert np.all(np.isfinite(log.samples)) and np.all(np.diff(log.t) > 0)


@given(_inputs(model_bytes()))
def test_parameter_file_parser(scratch, data):
    params = _parse(scratch, load_parameters, data, ".csv")
    if params is not None:
        assert isinstance(params, ParameterSet) and np.all(np.isfinite(params.values))
        if params.std_errors is not None:
            assert np.all(params.std_errors >= 0)
