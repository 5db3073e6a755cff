"""The identifiability gate applies on every path that writes a model (identify_recording, and
through it accept_recording), and the output-path policy and option types refuse what they must."""

from __future__ import annotations

import argparse
import os

import pytest

from crane_book.corpus import command_file_bytes, log_npz
from crane_lib.acceptance.accepted import accept_recording
from crane_lib.cli import common
from crane_lib.errors import InputError
from crane_lib.identification import gate
from crane_lib.logs.raw_log import read_raw_log


def _log(tmp_path, **variant):
    path = tmp_path / "log.npz"
    path.write_bytes(log_npz(**variant))
    return read_raw_log(path)


def test_accept_recording_refuses_a_log_without_motion_before_any_audit(tmp_path):
    with pytest.raises(gate.NotIdentifiable, match="too little motion"):
        accept_recording(_log(tmp_path, still=True), "AP01", 0.04, refine="none")


def test_accept_recording_checks_the_command_file_when_given(tmp_path):
    other = tmp_path / "V01.txt"
    other.write_bytes(command_file_bytes("V01"))
    with pytest.raises(gate.NotIdentifiable, match="not from --trajectory"):
        accept_recording(_log(tmp_path), "V01", 0.04, refine="none", command_file=other)


def test_kappa_bound_sits_above_the_papers_largest_and_refuses_beyond():
    assert gate.KAPPA_MAX > gate.paper_largest_kappa()
    gate.check_kappa(gate.KAPPA_MAX, "log", 0.04)
    with pytest.raises(gate.NotIdentifiable, match="condition number"):
        gate.check_kappa(gate.KAPPA_MAX * 1.01, "log", 0.04)
    with pytest.raises(gate.NotIdentifiable):
        gate.check_kappa(float("nan"), "log", 0.04)


def test_output_path_policy(tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("x\n")
    os.link(source, tmp_path / "hard.csv")
    assert common.output_path(tmp_path / "new.csv", inputs=[source]) == tmp_path / "new.csv"
    for target, fragment in (
        (source, "is the input"),
        (tmp_path / "hard.csv", "is the input"),
        (tmp_path, "is a folder"),
        (tmp_path / "missing" / "x.csv", "does not exist"),
    ):
        with pytest.raises(InputError, match=fragment):
            common.output_path(target, inputs=[source], force=True)
    (tmp_path / "old.csv").write_text("keep\n")
    with pytest.raises(InputError, match="--force"):
        common.output_path(tmp_path / "old.csv", inputs=[source])
    assert (
        common.output_path(tmp_path / "old.csv", inputs=[source], force=True)
        == tmp_path / "old.csv"
    )


def test_option_types_name_the_allowed_range():
    ts = common.interval_seconds
    assert ts("0.04") == 0.04 and ts("0.001") == 0.001 and ts("0.1") == 0.1
    for bad in ("0.0155", "0", "0.101", "inf", "nan", "x"):
        with pytest.raises(
            argparse.ArgumentTypeError, match="whole number of milliseconds from 0.001 to 0.1"
        ):
            ts(bad)
    epsilon = common.bounded_float(1e-6, 0.01, "kg·m^2")
    assert epsilon("0.001") == 0.001
    with pytest.raises(argparse.ArgumentTypeError, match=r"\[1e-06, 0.01\] kg·m\^2"):
        epsilon("-1")
    count = common.bounded_int(1, 1000)
    with pytest.raises(argparse.ArgumentTypeError, match=r"\[1, 1000\]"):
        count("0")
