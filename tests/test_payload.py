"""A payload identified on an accepted model (crane_lib.acceptance.payload, `crane-id payload`)
on the SO-101's twin with a secret payload on the last link."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.acceptance import payload
from crane_lib.acceptance import torque_scale as ts
from crane_lib.acceptance.accepted import accept_recording
from crane_lib.logs.raw_log import RawLog, group, read_raw_log, write_raw_log
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import ParameterSet, load_parameters, save_parameters
from crane_lib.twin import recorder
from crane_lib.twin import truth as twin_truth

KEY = "so101"
TRAJECTORY = "trajectories/so101/PI_ALPHA.txt"
SECRET_MASS = 0.2
SECRET_OFFSET = np.array([0.01, -0.006, 0.012])  # from the gripper's point, frame 5 (m)


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """The SO-101's twin with drives true to their logged conversion: a model identified on
    PI_ALPHA without payload (OLS, audited on one seed), and PI_ALPHA recorded again with the
    secret payload (the identification file again: the model's own errors are smallest on the
    motion it was fitted to)."""
    folder = tmp_path_factory.mktemp("payload")
    arm = twin_truth.twin_arm(KEY)
    model = shared_model("reduced", arm=arm)
    plain = twin_truth.with_gain_error(twin_truth.compute_plant_settings(None, KEY), 0.0, 1)
    samples, meta = recorder.record(TRAJECTORY, seed=1, arm=KEY, plant_settings=plain)
    accepted = accept_recording(
        RawLog(samples, meta, None), "PI_ALPHA", 0.04, refine="none", seeds=(1,), model=model
    )
    assert accepted.accepted
    model_file = folder / "model.csv"
    save_parameters(model_file, accepted.parameters)
    com = ts.tool_point(arm, KEY) + SECRET_OFFSET
    truth = twin_truth.with_payload(KEY, SECRET_MASS, com)
    settings = twin_truth.with_gain_error(twin_truth.compute_plant_settings(truth, KEY), 0.0, 1)
    samples, meta = recorder.record(
        TRAJECTORY, seed=7, arm=KEY, truth=truth, plant_settings=settings
    )
    assert meta["drive_mode"] == "position"  # the SO-101 as its owners drive it
    log = write_raw_log(folder / "carried.npz", samples, meta)
    return folder, model, model_file, log, com


def test_secret_payload_identified(case):
    """Mass and centre of mass within three of their standard errors of the secret payload's
    (the mass within 25 %), the estimate physically consistent (pseudo-inertia positive
    definite), the residual of the model held fixed cut by more than a factor of four."""
    folder, model, model_file, log, com = case
    parameters = load_parameters(model_file, model.names)
    estimate = payload.identify_payload(read_raw_log(log), parameters, model, 0.04)
    assert abs(estimate.mass - SECRET_MASS) < 3.0 * estimate.mass_std_error, estimate.mass
    assert abs(estimate.mass - SECRET_MASS) < 0.25 * SECRET_MASS
    assert np.all(np.abs(estimate.com - com) < 3.0 * estimate.com_std_error), estimate.com
    assert estimate.pseudo_inertia_min > 0.0
    assert np.all(np.linalg.eigvalsh(estimate.inertia_about_com) > -1e-12)
    assert estimate.residual_rms_after < 0.25 * estimate.residual_rms_before
    assert np.all(estimate.std_errors > 0)


def test_sdp_keeps_the_pseudo_inertia_positive(case):
    """A residual that asks for a negative mass gets the nearest consistent payload instead
    (the constraint binds: its estimate differs from the least-squares one, J stays PD)."""
    folder, model, model_file, log, _ = case
    parameters = load_parameters(model_file, model.names)
    recording = read_raw_log(log)
    light = recording.samples.copy()  # the record made to say the payload weighs less than 0
    light[:, group("current_command", recording.n_axes)] *= 0.6
    estimate = payload.identify_payload(
        RawLog(light, recording.metadata, recording.path, (), recording.arm),
        parameters,
        model,
        0.04,
    )
    assert estimate.ls_values[9] < 0.0
    assert estimate.pseudo_inertia_min > 0.0 and estimate.mass >= 0.0


def test_cli_payload_reaudits_and_writes(case, tmp_path, capsys):
    """`crane-id payload` prints the payload, audits the model with it over Theta and writes it
    with the payload's mass and centre of mass in its header."""
    folder, model, model_file, log, com = case
    out = tmp_path / "with_payload.csv"
    argv = ["payload", str(log), "--model", str(model_file), "--trajectory", TRAJECTORY]
    assert cli.main([*argv, "--robot", KEY, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "payload on link 5: mass" in printed and "ACCEPTED" in printed
    written = load_parameters(out, model.names)
    assert abs(float(written.meta["payload_mass_kg"]) - SECRET_MASS) < 0.25 * SECRET_MASS
    assert written.meta["accepted"] == "True"
    assert not np.allclose(written.values, load_parameters(model_file, model.names).values)


def test_model_of_another_arm_refused(case, tmp_path, capsys):
    """A model file of the ViperX given with an SO-101 recording: exit 2 naming the model file
    and both arms, before any computation; nothing written."""
    folder, model, model_file, log, _ = case
    other = tmp_path / "vx.csv"
    vx = shared_model("reduced", arm=twin_truth.twin_arm("vx300s"))
    vx_base = vx.base_from_standard(twin_truth.truth_parameters("vx300s"))
    save_parameters(other, ParameterSet(vx_base.names, vx_base.values, None, {"arm": "SO-101"}))
    out = tmp_path / "out.csv"
    argv = ["payload", str(log), "--model", str(other), "--trajectory", TRAJECTORY]
    assert cli.main([*argv, "--robot", KEY, "--out", str(out)]) == 2
    assert str(other) in capsys.readouterr().err
    assert not out.exists()
    renamed = tmp_path / "renamed.csv"  # the SO-101's parameters, but named another arm's
    text = model_file.read_text(encoding="utf-8").replace("# arm: SO-101", "# arm: ViperX 300 S")
    renamed.write_text(text, encoding="utf-8")
    argv = ["payload", str(log), "--model", str(renamed), "--trajectory", TRAJECTORY]
    assert cli.main([*argv, "--robot", KEY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(renamed) in err and "ViperX 300 S" in err
    assert not out.exists()


def test_recording_of_another_arm_refused(case, tmp_path, capsys):
    """A ViperX recording with the SO-101's model: exit 2 naming the recording; nothing
    written."""
    folder, model, model_file, log, _ = case
    samples, meta = recorder.record("trajectories/vx300s/PI_ALPHA.txt", seed=1, arm="vx300s")
    vx_log = write_raw_log(tmp_path / "vx.npz", samples, meta)
    out = tmp_path / "out.csv"
    argv = ["payload", str(vx_log), "--model", str(model_file), "--trajectory", TRAJECTORY]
    assert cli.main([*argv, "--robot", KEY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(vx_log) in err and "vx300s" in err
    assert not out.exists()


def test_model_missing_parameters_refused(case, tmp_path, capsys):
    """A model file without some of the arm's parameters: exit 2 naming the file and the
    missing names; nothing written."""
    folder, model, model_file, log, _ = case
    lines = model_file.read_text(encoding="utf-8").splitlines()
    short = tmp_path / "short.csv"
    short.write_text("\n".join(ln for ln in lines if not ln.startswith("MXR5,")) + "\n")
    out = tmp_path / "out.csv"
    argv = ["payload", str(log), "--model", str(short), "--trajectory", TRAJECTORY]
    assert cli.main([*argv, "--robot", KEY, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(short) in err and "MXR5" in err
    assert not out.exists()
