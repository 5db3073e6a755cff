"""Algorithm 1 end to end on another arm (SO-101, ViperX 300 S), through the CRANE-X7's stages.

Each arm records its PI_ALPHA block file on its twin (`crane-id record --robot`; one block file
alone gives the base regressor full rank on both arms, `excitation.arms.excitation_rank`), and
`accept_recording` (the one path of `crane-id accept --robot`, checked value for value on the
SO-101) takes it to an accepted or rejected model with the default refinement (CLIE's fast
route). The verdict is checked against lambda_min of the arm block of M recomputed over the
arm's own dense audit set, and the well-determined base parameters against the twin's truth
(`acceptance.truth_score`).

Truth tolerances, the same on both arms: median relative error of the well-determined
parameters at most 0.15 and each at most 0.6 (a wrong truth mapping or a broken stage is off by
order one). Measured with the gains by rule (book/register_twin.md): SO-101 six parameters,
median 0.084, largest 0.52 (MYR2, whose truth is small: -0.0088 kg·m); ViperX 300 S five,
median 0.065, largest 0.43 (MXR2).
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from crane_book.corpus import log_npz
from crane_lib import cli
from crane_lib.acceptance import audit
from crane_lib.acceptance.accepted import AUDIT_SEEDS, accept_recording
from crane_lib.acceptance.held_out import held_out
from crane_lib.acceptance.truth_score import score_accepted, twin_truth_base
from crane_lib.errors import InputError
from crane_lib.identification import gate
from crane_lib.logs.raw_log import read_raw_log
from crane_lib.model.arm_description import load_arm
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import load_parameters
from crane_lib.paths import TRAJECTORY_DIR

# The ViperX 300 S runs the same path end to end in every book build (the data step "other
# arms", quick profile too: its record and the chapter's table fail the build if it breaks); the
# suite runs the SO-101 here to keep the CI budget (tests/test_clie_arms.py covers both arms' CLIE)
ARMS = ("so101",)
TS = 0.04
MEDIAN_TOLERANCE = {"so101": 0.15, "vx300s": 0.15}
EACH_TOLERANCE = {"so101": 0.6, "vx300s": 0.6}


def _command(arm: str):
    return TRAJECTORY_DIR / arm / "PI_ALPHA.txt"


@pytest.fixture(scope="module", params=ARMS)
def accepted(request, tmp_path_factory):
    """(arm key, model, log path, AcceptedModel, folder) of one arm's run."""
    arm = request.param
    folder = tmp_path_factory.mktemp(arm)
    log_path = folder / "pi_alpha.npz"
    assert cli.main(["record", str(_command(arm)), "--out", str(log_path), "--robot", arm]) == 0
    model = shared_model("reduced", arm=load_arm(arm))
    result = accept_recording(read_raw_log(log_path), "PI_ALPHA", TS, model=model)
    return arm, model, log_path, result, folder


@pytest.fixture(scope="module")
def so101_command_line(accepted):
    """The SO-101's `crane-id accept --robot so101 --validation PI_BETA`: (exit status, model
    file, what it printed, the held-out recording)."""
    arm, _, log_path, _, folder = accepted
    if arm != "so101":
        pytest.skip("the command line is run on the SO-101 (the CI budget)")
    out, held_out_path = folder / "model.csv", folder / "pi_beta.npz"
    assert (
        cli.main(
            [
                "record",
                str(TRAJECTORY_DIR / arm / "PI_BETA.txt"),
                "--out",
                str(held_out_path),
                "--robot",
                arm,
                "--seed",
                "2",
            ]
        )
        == 0
    )
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = cli.main(
            [
                "accept",
                str(log_path),
                "--trajectory",
                str(_command(arm)),
                "--out",
                str(out),
                "--robot",
                arm,
                "--validation",
                str(held_out_path),
            ]
        )
    return status, out, printed.getvalue(), held_out_path


def test_accept_on_the_command_line_is_the_library_path_on_the_arms_model(
    accepted, so101_command_line
):
    arm, model, _, result, _ = accepted
    status, out, printed, held_out_path = so101_command_line
    assert status == (0 if result.accepted else 1)
    written = load_parameters(out, expected_names=model.names)
    # the command line and the library are one path: the same model, value for value
    np.testing.assert_array_equal(written.values, result.parameters.values)
    assert written.meta["refine"] == "fast" and written.meta["arm"] == "SO-101"
    assert written.meta["accepted"] == str(result.accepted)
    assert result.refinement["method"] == "fast"
    assert len(model.names) == model.n_parameters and model.n_joints == load_arm(arm).n_joints
    assert result.condition.ols.parameters.names == model.names
    # the held-out recording scored by the arm's model, as the library scores it
    scores = held_out(result.parameters.values, [read_raw_log(held_out_path)], TS, model)
    assert f"held out, pooled: RMSE {scores.pooled_rmse:.4f} N·m" in printed
    assert 0 < scores.pooled_rmse < 1.0 and len(scores.errors[0].per_axis_rmse) == model.n_axes


def test_the_verdict_is_lambda_min_over_the_arms_own_grid(accepted):
    arm, model, _, result, _ = accepted
    description = load_arm(arm)
    for checked in result.final_audits:
        poses = audit.audit_poses(checked.seed, description)
        assert poses.poses.shape[1] == description.n_joints
        assert poses.counts()[audit.GRID] == np.prod(audit.audit_grid_counts(description))
        lam = model.arm_min_eigenvalue(poses.poses, result.parameters.values)
        assert checked.lambda_min == lam.min()
        assert checked.passed == bool(lam.min() > 0)
    assert result.accepted == all(bool(a.passed) for a in result.final_audits)
    assert [a.seed for a in result.final_audits] == list(AUDIT_SEEDS)


def test_the_arms_grid_follows_the_rule_and_the_crane_x7s_stays_the_papers():
    so101, vx300s = load_arm("so101"), load_arm("vx300s")
    assert audit.audit_grid_counts(so101) == [1, 5, 7, 5, 5]
    assert audit.audit_grid_counts(vx300s) == [1, 5, 7, 5, 5, 5]
    assert audit.audit_grid_counts() == [1, 5, 5, 7, 5, 5, 5]
    crane = audit.audit_poses(1)
    assert len(crane) == 221_875 and crane.poses.shape[1] == 7
    # the CRANE-X7's description takes the CRANE-X7's own sets
    np.testing.assert_array_equal(audit.audit_poses(1, load_arm("crane_x7")).poses, crane.poses)
    region = audit.folded_region(vx300s)
    domain = vx300s.audit_domain
    inside = (region[:, 0] >= domain[:, 0]) & (region[:, 1] <= domain[:, 1])
    assert inside.all() and np.count_nonzero(region != vx300s.audit_domain) == 1


def test_the_well_determined_parameters_are_near_the_twins_truth(accepted):
    arm, model, _, result, _ = accepted
    score = score_accepted(result, model, arm)
    assert len(score.names) >= 2
    assert score.median <= MEDIAN_TOLERANCE[arm], score.to_dict()
    assert score.relative.max() <= EACH_TOLERANCE[arm], score.to_dict()
    # the truth really is the twin's, mapped by the model's base matrix
    truth = twin_truth_base(model, arm)
    assert truth.names == model.names
    by_name = truth.as_dict()
    np.testing.assert_array_equal(score.truth, [by_name[n] for n in score.names])


def test_a_log_of_another_arm_is_refused_naming_the_file_and_both_arms(accepted, tmp_path, capsys):
    arm, _, log_path, _, _ = accepted
    other = "vx300s" if arm == "so101" else "so101"
    capsys.readouterr()
    for robot in ([], ["--robot", other]):
        argv = [
            "accept",
            str(log_path),
            "--trajectory",
            str(_command(arm)),
            "--out",
            str(tmp_path / "x.csv"),
            *robot,
        ]
        assert cli.main(argv) == cli.EXIT_BAD_INPUT
        err = capsys.readouterr().err
        assert str(log_path) in err and arm in err and (robot[-1] if robot else "crane_x7") in err
    assert not (tmp_path / "x.csv").exists()
    with pytest.raises(InputError, match=arm):
        gate.check_arm(read_raw_log(log_path), shared_model("reduced"))
    argv = ["preprocess", str(log_path), "--out", str(tmp_path / "b")]
    assert cli.main(argv) == cli.EXIT_BAD_INPUT


def test_what_does_not_run_on_another_arm_is_refused(accepted, tmp_path, capsys):
    arm, _, log_path, _, _ = accepted
    model_file = tmp_path.parent / "model.csv"  # never read: each is refused before
    refusals = [
        [
            "identify",
            str(log_path),
            "--trajectory",
            str(_command(arm)),
            "--out",
            str(tmp_path / "x.csv"),
            "--robot",
            arm,
            "--method",
            "wls",
        ],
        ["audit", str(model_file), "--robot", arm, "--sparse"],
        [
            "record",
            str(_command(arm)),
            "--out",
            str(tmp_path / "x.npz"),
            "--robot",
            arm,
            "--port",
            "/dev/null",
        ],
    ]
    for argv in refusals:
        assert cli.main(argv) == cli.EXIT_BAD_INPUT, argv
        err = capsys.readouterr().err
        if argv[0] == "record" and arm == "so101":
            # the SO-101 records over its Feetech bus: refused at the port, which is no serial port
            assert "/dev/null: cannot open the port" in err, err
        else:
            assert f"--robot {arm}" in err or "--method wls" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_held_out_recording_of_another_arm_is_refused(accepted, tmp_path, capsys):
    """`accept --validation` scores with the arm's model: a CRANE-X7 log beside an SO-101 one is
    refused before any computation, naming the file and both arms, and nothing is written."""
    arm, _, log_path, _, _ = accepted
    crane_log = tmp_path / "crane.npz"
    crane_log.write_bytes(log_npz())
    out = tmp_path / "model.csv"
    status = cli.main(
        [
            "accept",
            str(log_path),
            "--trajectory",
            str(_command(arm)),
            "--out",
            str(out),
            "--robot",
            arm,
            "--validation",
            str(crane_log),
        ]
    )
    err = capsys.readouterr().err
    assert status == cli.EXIT_BAD_INPUT
    assert f"{crane_log}: was recorded on the arm crane_x7, not on --robot {arm}" in err, err
    assert not out.exists()


def test_the_audit_command_audits_the_arms_model_over_its_theta(
    accepted, so101_command_line, capsys
):
    arm, _, _, result, _ = accepted
    out = so101_command_line[1]
    status = cli.main(["audit", str(out), "--robot", arm, "--seed", "2", "--json"])
    assert status == (0 if result.final_audits[1].passed else 1)
    assert "Theta" in capsys.readouterr().out


def test_the_export_command_writes_the_arms_own_robot(accepted, so101_command_line, tmp_path):
    arm, _, _, _, _ = accepted
    out = so101_command_line[1]
    urdf = tmp_path / "arm.urdf"
    argv = ["export", str(out), "--robot", arm, "--urdf", str(urdf), "--nearest"]
    assert cli.main(argv) == 0
    text = urdf.read_text(encoding="utf-8")
    assert load_arm(arm).name in text and "shoulder_pan" in text


def test_identify_and_rescue_commands_run_on_the_arm(accepted, so101_command_line, tmp_path):
    arm, model, log_path, result, _ = accepted
    out = so101_command_line[1]
    identified = tmp_path / "start.csv"
    argv = [
        "identify",
        str(log_path),
        "--trajectory",
        str(_command(arm)),
        "--out",
        str(identified),
        "--robot",
        arm,
        "--refine",
        "none",
    ]
    assert cli.main(argv) == 0
    start = load_parameters(identified, expected_names=model.names)
    # the OLS/SDP start of the same stage functions the accepted model came from
    np.testing.assert_array_equal(start.values, result.condition.start.values)
    rescued = tmp_path / "rescued.csv"
    status = cli.main(["rescue", str(out), "--out", str(rescued), "--robot", arm])
    kept = load_parameters(rescued, expected_names=model.names)
    margins = [float(v) for v in kept.meta["audit_seeds_1_5_lambda_min"].split(", ")]
    lam = [
        model.arm_min_eigenvalue(audit.audit_poses(s, load_arm(arm)).poses, kept.values).min()
        for s in AUDIT_SEEDS
    ]
    np.testing.assert_allclose(margins, lam, rtol=1e-2)
    assert status == (0 if kept.meta["accepted"] == "True" else 1)


def test_robot_names_a_shipped_arm_or_its_folder_and_refuses_anything_else(tmp_path):
    from crane_lib.cli.common import robot_of
    from crane_lib.paths import DATA_DIR

    assert robot_of(None).crane_x7 and robot_of("crane_x7").key == "crane_x7"
    folder = robot_of(str(DATA_DIR / "so101_description"))
    assert folder.key == "so101" and folder.arm.n_joints == 5 and not folder.crane_x7
    with pytest.raises(InputError, match="--robot"):
        robot_of("ur5")
    with pytest.raises(InputError, match="--robot"):
        robot_of(str(tmp_path / "missing"))
