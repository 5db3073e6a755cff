"""`crane-id accept`: the verdict, the exit status, the model file and the held-out score. The
algorithm itself is tests/test_accepted.py's; here its identification is replaced by known
models so that the command's own behaviour is what is tested, in seconds."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.acceptance import accepted as accepted_module
from crane_lib.cli import accept as accept_command
from crane_lib.excitation.commands import write_command_file
from crane_lib.logs.raw_log import write_raw_log
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet, load_parameters
from crane_lib.twin import recorder as twin

from .audit_cases import description_beta
from .hardware_cases import short_command


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    command = write_command_file(folder / "SHORT.txt", short_command())
    samples, metadata = twin.record(command, seed=12)
    return write_raw_log(folder / "SHORT.npz", samples, metadata), command


def _identified_as(beta):
    real = accepted_module.identify_recording

    def replaced(*args, **kwargs):
        condition, refined, report = real(*args, **kwargs)
        return condition, ParameterSet(refined.names, beta, refined.std_errors, dict(refined.meta)), report

    return replaced


def test_accept_prints_the_verdict_and_writes_the_model(files, tmp_path, monkeypatch, capsys):
    log_path, command = files
    monkeypatch.setattr(accepted_module, "identify_recording", _identified_as(description_beta()))
    monkeypatch.setattr(accept_command, "AUDIT_SEEDS", (2,))
    out = tmp_path / "model.csv"
    status = cli.main(["accept", str(log_path), "--trajectory", str(command), "--refine", "none", "--out", str(out),
                       "--validation", str(log_path)])
    printed = capsys.readouterr().out
    assert status == 0 and "ACCEPTED: PD over Theta on seeds 2," in printed
    assert "held out SHORT.npz: RMSE" in printed and "held out, pooled: RMSE" in printed
    model = load_parameters(out, shared_model("reduced").names)
    np.testing.assert_array_equal(model.values, description_beta())
    assert model.meta["accepted"] == "True" and model.meta["trajectory"] == "SHORT"


def test_a_rejection_exits_1_and_names_the_witness_pose(files, tmp_path, monkeypatch, capsys):
    log_path, command = files
    beta = description_beta().copy()
    beta[shared_model("reduced").names.index("ZZR6")] -= 0.0058  # not PD over part of Theta
    monkeypatch.setattr(accepted_module, "identify_recording", _identified_as(beta))
    monkeypatch.setattr(accepted_module, "rescue_over_theta",
                        lambda model, beta, epsilon, extra_poses: accepted_module.RescueResult(None, [], False, "solver failed"))
    monkeypatch.setattr(accept_command, "AUDIT_SEEDS", (1,))
    out = tmp_path / "model.csv"
    assert cli.main(["accept", str(log_path), "--trajectory", str(command), "--refine", "none", "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "REJECTED: seed 1 finds lambda_min" in printed and "at theta = [" in printed
    assert load_parameters(out, shared_model("reduced").names).meta["accepted"] == "False"


def test_accept_rejects_bad_input_before_computing(files, tmp_path, capsys):
    log_path, command = files
    cases = [
        (["accept", str(tmp_path / "missing.npz"), "--trajectory", str(command), "--out", str(tmp_path / "m.csv")], "missing.npz: no such file"),
        (["accept", str(log_path), "--trajectory", str(command), "--out", str(tmp_path / "m.csv"), "--validation", str(tmp_path / "v.csv")],
         "v.csv: no such file"),
        (["accept", str(log_path), "--trajectory", str(command), "--out", str(tmp_path / "none" / "m.csv")], "none does not exist"),
    ]
    for argv, expected in cases:
        assert cli.main(argv) == cli.EXIT_BAD_INPUT
        message = capsys.readouterr().err.strip()
        assert expected in message and "\n" not in message
    assert not (tmp_path / "m.csv").exists()
