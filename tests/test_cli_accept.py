"""`crane-id accept`: the verdict, the exit status, the model file and the held-out score. The
algorithm itself is tests/test_accepted.py's; here its identification is replaced by known
models so that the command's own behaviour is what is tested, in seconds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.acceptance import accepted as accepted_module
from crane_lib.cli import accept as accept_command
from crane_lib.cli import common
from crane_lib.errors import InputError
from crane_lib.excitation.commands import write_command_file
from crane_lib.logs.raw_log import write_raw_log
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet, load_parameters, save_parameters
from crane_lib.twin import recorder as twin

from .audit_cases import description_beta
from .hardware_cases import short_command


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    command = write_command_file(folder / "SHORT.txt", short_command())
    samples, metadata = twin.record(command, seed=12)
    return write_raw_log(folder / "SHORT.npz", samples, metadata), command


@pytest.fixture(scope="module")
def held_out_log(files, tmp_path_factory):
    """Another execution of the same command file (the held-out score refuses the training log)."""
    _, command = files
    samples, metadata = twin.record(command, seed=13)
    return write_raw_log(tmp_path_factory.mktemp("held_out") / "SHORT_2.npz", samples, metadata)


def _identified_as(beta):
    real = accepted_module.identify_recording

    def replaced(*args, **kwargs):
        condition, refined, report = real(*args, **kwargs)
        return (
            condition,
            ParameterSet(refined.names, beta, refined.std_errors, dict(refined.meta)),
            report,
        )

    return replaced


def test_accept_prints_the_verdict_and_writes_the_model(
    files, held_out_log, tmp_path, monkeypatch, capsys
):
    log_path, command = files
    monkeypatch.setattr(accepted_module, "identify_recording", _identified_as(description_beta()))
    monkeypatch.setattr(accept_command, "AUDIT_SEEDS", (2,))
    out = tmp_path / "model.csv"
    status = cli.main(
        [
            "accept",
            str(log_path),
            "--trajectory",
            str(command),
            "--refine",
            "none",
            "--out",
            str(out),
            "--validation",
            str(held_out_log),
        ]
    )
    printed = capsys.readouterr().out
    assert status == 0 and "ACCEPTED: PD over Theta on seeds 2," in printed
    assert "held out SHORT_2.npz: RMSE" in printed and "held out, pooled: RMSE" in printed
    model = load_parameters(out, shared_model("reduced").names)
    np.testing.assert_array_equal(model.values, description_beta())
    assert model.meta["accepted"] == "True" and model.meta["trajectory"] == "SHORT"


def test_accept_says_when_the_refinement_accepted_no_step(files, tmp_path, monkeypatch, capsys):
    """The report of a fast refinement that stopped at its start (every trial step uphill)
    stands in for the refinement; the verdict is printed with the note beside it."""
    log_path, command = files
    real = accepted_module.identify_recording

    def stuck(log, trajectory, ts, method, **kwargs):
        condition, start, _ = real(log, trajectory, ts, "none", **kwargs)
        report = {"method": method, "objective_start": 16.85, "objective_final": 16.85}
        report.update(iterations=1, status=3, message="`xtol` termination condition")
        return condition, ParameterSet(start.names, description_beta(), start.std_errors), report

    monkeypatch.setattr(accepted_module, "identify_recording", stuck)
    monkeypatch.setattr(accept_command, "AUDIT_SEEDS", (2,))
    argv = ["accept", str(log_path), "--trajectory", str(command), "--refine", "fast"]
    out = tmp_path / "model.csv"
    assert cli.main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "fast: objective 16.85 -> 16.85, 1 iterations" in printed
    assert "fast: no step accepted" in printed and "ACCEPTED" in printed
    assert "fast refinement accepted no step: the OLS/SDP start" in out.read_text(encoding="utf-8")


def test_a_rejection_exits_1_and_names_the_witness_pose(files, tmp_path, monkeypatch, capsys):
    log_path, command = files
    beta = description_beta().copy()
    beta[shared_model("reduced").names.index("ZZR6")] -= 0.0058  # not PD over part of Theta
    monkeypatch.setattr(accepted_module, "identify_recording", _identified_as(beta))
    monkeypatch.setattr(
        accepted_module,
        "rescue_over_theta",
        lambda model, beta, epsilon, extra_poses: accepted_module.RescueResult(
            None, [], False, "solver failed"
        ),
    )
    monkeypatch.setattr(accept_command, "AUDIT_SEEDS", (1,))
    out = tmp_path / "model.csv"
    assert (
        cli.main(
            [
                "accept",
                str(log_path),
                "--trajectory",
                str(command),
                "--refine",
                "none",
                "--out",
                str(out),
            ]
        )
        == 1
    )
    printed = capsys.readouterr().out
    assert "REJECTED: seed 1 finds lambda_min" in printed and "at theta = [" in printed
    assert load_parameters(out, shared_model("reduced").names).meta["accepted"] == "False"


def test_accept_rejects_bad_input_before_computing(files, tmp_path, capsys):
    log_path, command = files
    cases = [
        (
            [
                "accept",
                str(tmp_path / "missing.npz"),
                "--trajectory",
                str(command),
                "--out",
                str(tmp_path / "m.csv"),
            ],
            "missing.npz: no such file",
        ),
        (
            [
                "accept",
                str(log_path),
                "--trajectory",
                str(command),
                "--out",
                str(tmp_path / "m.csv"),
                "--validation",
                str(tmp_path / "v.csv"),
            ],
            "v.csv: no such file",
        ),
        (
            [
                "accept",
                str(log_path),
                "--trajectory",
                str(command),
                "--out",
                str(tmp_path / "none" / "m.csv"),
            ],
            "none does not exist",
        ),
    ]
    for argv, expected in cases:
        assert cli.main(argv) == cli.EXIT_BAD_INPUT
        message = capsys.readouterr().err.strip()
        assert expected in message and "\n" not in message
    assert not (tmp_path / "m.csv").exists()


def test_the_report_and_the_command_share_one_check(files, held_out_log, tmp_path):
    """accept_inputs reads every input and returns them checked; the papermill forms of
    `validation` (a JSON list, one path) name the same recordings as a list."""
    log_path, command = files
    for given in ([held_out_log], json.dumps([str(held_out_log)]), str(held_out_log)):
        inputs = common.accept_inputs(
            log_path, command, tmp_path / "m.csv", given, 0.04, notebook=True
        )
        assert [r.path for r in inputs.validation] == [held_out_log]
        assert inputs.command.name == "SHORT" and not inputs.force
    assert common.validation_paths("") == [] and common.validation_paths([]) == []
    with pytest.raises(InputError, match="names no file"):
        common.validation_paths('["a.npz", ""]')
    with pytest.raises(InputError, match="is no refinement"):
        common.accept_inputs(log_path, command, tmp_path / "m.csv", refine="fastest", notebook=True)
    assert not (tmp_path / "m.csv").exists()


def test_a_model_declared_new_is_not_written_over_a_file_that_appeared(tmp_path):
    """save_accepted(new=True) creates the file only if it is still absent (the report's
    exclusive create without force: another run's file that appeared meanwhile is kept)."""
    beta = description_beta()
    names = shared_model("reduced").names
    out = tmp_path / "m.csv"
    out.write_text("another run's model\n", encoding="utf-8")
    with pytest.raises(InputError, match="appeared while this command ran"):
        save_parameters(out, ParameterSet(names, beta, None, {}), new=True)
    assert out.read_text(encoding="utf-8") == "another run's model\n"
    save_parameters(out, ParameterSet(names, beta, None, {}))  # without `new` it replaces
    np.testing.assert_array_equal(load_parameters(out, names).values, beta)
    assert [p.name for p in tmp_path.iterdir()] == ["m.csv"]


@pytest.mark.parametrize(
    "fixture, fragment",
    [
        ({"still": True}, "too little motion"),
        ({"hand_amplitude": 0.15, "hand_hz": 0.02}, "condition number"),
    ],
)
def test_the_shared_check_runs_the_identifiability_gate_before_any_work(
    fixture, fragment, tmp_path
):
    from crane_book import corpus

    log = tmp_path / "log.npz"
    log.write_bytes(corpus.log_npz(**fixture))
    command = tmp_path / "AP01.txt"
    command.write_bytes(corpus.command_file_bytes())
    with pytest.raises(InputError, match=fragment):
        common.accept_inputs(log, command, tmp_path / "m.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["AP01.txt", "log.npz"]


def test_a_held_out_recording_without_torque_to_score_is_refused(tmp_path):
    from crane_book import corpus

    for name, content in (
        ("log.npz", corpus.log_npz()),
        ("still.npz", corpus.log_npz(still=True)),
        ("AP01.txt", corpus.command_file_bytes()),
    ):
        (tmp_path / name).write_bytes(content)
    with pytest.raises(InputError, match=r"still.npz: the torque of axis \d does not vary"):
        common.accept_inputs(
            tmp_path / "log.npz",
            tmp_path / "AP01.txt",
            tmp_path / "m.csv",
            [tmp_path / "still.npz"],
        )


def test_accept_timings_name_every_stage_and_the_log_is_preprocessed_once(
    files, tmp_path, monkeypatch, capsys
):
    """`--timings`: one line per stage, wall and CPU seconds; the even grid the gate's bundle was
    made from is the one identification and CLIE's problem use (the training log is put on the
    grid once), and the model file is the one written without the flag."""
    import re

    from crane_lib.identification import refinement
    from crane_lib.logs import preprocessing

    log_path, command = files
    real, calls = preprocessing.to_even_grid, []

    def counted(log):
        calls.append(log.path)
        return real(log)

    monkeypatch.setattr(preprocessing, "to_even_grid", counted)
    monkeypatch.setattr(refinement, "to_even_grid", counted)
    monkeypatch.setattr(accept_command, "AUDIT_SEEDS", (2,))
    outs, grids = [], []
    for refine, flags in (("none", []), ("none", ["--timings"]), ("fast", [])):
        outs.append(tmp_path / f"model{len(outs)}.csv")
        argv = ["accept", str(log_path), "--trajectory", str(command), "--refine", refine]
        before = len(calls)
        assert cli.main([*argv, "--out", str(outs[-1]), *flags]) in (0, 1)
        grids.append(calls[before:])
    printed = capsys.readouterr().out
    rows = re.findall(r"^timing: (.+): ([0-9.]+) s wall, ([0-9.]+) s CPU$", printed, re.M)
    stages = [stage for stage, _, _ in rows]
    assert stages[:3] == ["process start, imports", "arm, model", "read the log"]
    assert stages[3].startswith("check the inputs") and stages[-1] == "write the model"
    for stage in (
        "identify (OLS, routing, projection)",
        "refine (none)",
        "audit over Theta",
        "provenance (digests of the log and of the code)",
    ):
        assert stage in stages
    assert all(float(wall) >= 0 and float(cpu) >= 0 for _, wall, cpu in rows)
    # once per run: the gate's bundle, identification and (refined) CLIE's problem share it
    assert grids == [[log_path]] * 3
    assert "fast" in outs[2].read_text(encoding="utf-8")  # the third run did refine
    assert outs[0].read_bytes() == outs[1].read_bytes()
