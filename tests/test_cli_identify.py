"""crane-id identify: one recording in, a model file out; bad input ends with exit code 2."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.logs.raw_log import write_raw_log
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import load_parameters
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.twin import recorder as twin

from .refinement_cases import refinement_report

AP01 = TRAJECTORY_DIR / "AP01.txt"


@pytest.fixture(scope="module")
def log_path(tmp_path_factory):
    samples, metadata = twin.record(AP01, seed=11)
    return write_raw_log(tmp_path_factory.mktemp("logs") / "AP01.npz", samples, metadata)


def test_identify_writes_a_model_that_predicts_the_recording(log_path, tmp_path, capsys):
    out = tmp_path / "model.csv"
    assert (
        cli.main(
            [
                "identify",
                str(log_path),
                "--trajectory",
                str(AP01),
                "--ts",
                "0.04",
                "--out",
                str(out),
                "--refine",
                "none",
            ]
        )
        == 0
    )
    model = DynamicModel("reduced")
    loaded = load_parameters(out, model.names)
    assert loaded.meta["trajectory"] == "AP01" and loaded.meta["route"] in ("O-C", "O-S-C")
    assert np.all(loaded.std_errors > 0)
    assert "route" in capsys.readouterr().out
    # the model file's parameters are those the library computes for the same bundle
    from crane_lib.identification.condition import identify_condition
    from crane_lib.logs.preprocessing import preprocess
    from crane_lib.logs.raw_log import read_raw_log

    result = identify_condition(preprocess(read_raw_log(log_path), 0.04), "AP01")
    np.testing.assert_allclose(loaded.values, result.start.values, rtol=0, atol=0)


@pytest.mark.parametrize(
    "argv_tail, fragment",
    [
        (["--trajectory", "nope.txt", "--out", "m.csv"], "nope.txt"),
        (["--trajectory", str(AP01), "--ts", "0.0155", "--out", "m.csv"], "0.0155"),
        (["--trajectory", str(AP01), "--out", "no/such/folder/m.csv"], "folder"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    log_path, tmp_path, monkeypatch, capsys, argv_tail, fragment
):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["identify", str(log_path), *argv_tail]) == cli.EXIT_BAD_INPUT
    assert fragment in capsys.readouterr().err
    assert not (tmp_path / "m.csv").exists()


def test_identify_with_the_fast_refinement_records_the_stage(log_path, tmp_path):
    out = tmp_path / "fast.csv"
    assert (
        cli.main(
            [
                "identify",
                str(log_path),
                "--trajectory",
                str(AP01),
                "--out",
                str(out),
                "--refine",
                "fast",
            ]
        )
        == 0
    )
    loaded = load_parameters(out, DynamicModel("reduced").names)
    assert loaded.meta["stage"] == "fast" and float(loaded.meta["objective"]) > 0
    assert loaded.meta["trajectory"] == "AP01"


def test_identify_says_when_the_refinement_accepted_no_step(
    log_path, tmp_path, monkeypatch, capsys
):
    """The refinement's report stands in for a start every trial step left uphill (register
    "CLIE": nine of the book's starts at 10 ms); the command says so, and so does the file."""
    from crane_lib.identification import refinement

    def no_step(problem, start, method, workers=2):
        return refinement_report(
            method=method,
            names=list(start.names),
            x0=start.values.copy(),
            x=start.values.copy(),
            objective_start=110.32,
            objective_final=110.32,
            simulations=12,
            trial_evaluations=11,
            status=3,
            message="`xtol` termination condition is satisfied.",
        )

    monkeypatch.setattr(refinement, "refine", no_step)
    out = tmp_path / "stuck.csv"
    argv = ["identify", str(log_path), "--trajectory", str(AP01), "--out", str(out)]
    assert cli.main([*argv, "--refine", "fast"]) == 0
    printed = capsys.readouterr().out
    assert "fast: no step accepted" in printed and "--refine exact" in printed
    assert "which accepted no step: the OLS/SDP start" in out.read_text(encoding="utf-8")
    start = load_parameters(out, DynamicModel("reduced").names)
    assert start.meta["stage"] == "fast"
