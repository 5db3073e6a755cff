"""Replay verification on the SO-101's twin: an MJCF simulated in MuJoCo under controller (2)
against a held-out recording. A model identified from one block beats the description's prior on
another; the twin's own truth, exported, reproduces an idealized twin recording closely; the
controller's state starts where the recording's did."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from crane_lib.export import consistent, replay
from crane_lib.identification.refinement import identify_recording
from crane_lib.logs.raw_log import read_raw_log, write_raw_log
from crane_lib.model import controller
from crane_lib.model.arm_description import load_arm
from crane_lib.model.dynamics import model as shared_model
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.twin import recorder
from crane_lib.twin import truth as twin_truth

pytest.importorskip("mujoco")

KEY = "so101"
MOTION_CYCLES = 4000  # replayed cycles after the motion starts (4 s)


def _record(tmp_path, block: str, seed: int, mode: str = "current", **options):
    samples, metadata = recorder.record(
        TRAJECTORY_DIR / KEY / f"{block}.txt", seed=seed, arm=KEY, drive_mode=mode, **options
    )
    path = tmp_path / f"{block}_{seed}_{mode}.npz"
    return read_raw_log(write_raw_log(path, samples, metadata))


def _rows(log) -> int:
    return int(log.metadata["motion_start_sample"]) + MOTION_CYCLES


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    """(held-out log, the three MJCFs): OLS on PI_ALPHA (seed 1), held out PI_BETA (seed 2)."""
    folder = tmp_path_factory.mktemp("replay")
    arm = load_arm(KEY)
    identification = _record(folder, "PI_ALPHA", 1)
    model = shared_model("reduced", arm=arm)
    _, identified, _ = identify_recording(identification, "PI_ALPHA", 0.04, "none", model=model)
    assert set(identified.names) == set(model.names)
    paths = replay.model_files(KEY, identified, folder, drive_mode="current")
    return _record(folder, "PI_BETA", 2), paths


def test_the_identified_model_beats_the_prior(setting):
    log, paths = setting
    results = replay.replay_models(paths, log, rows=_rows(log))
    identified, prior = results["identified"], results["prior"]
    assert not identified.diverged
    arm = slice(0, load_arm(KEY).n_joints)  # the gripper keeps the identified terms in both
    assert identified.angle_rmse[arm].mean() < 0.5 * prior.angle_rmse[arm].mean()
    assert identified.torque_rmse[arm].mean() < 0.8 * prior.torque_rmse[arm].mean()
    # the replay follows the recording: within two degrees on every axis
    assert np.degrees(identified.angle_rmse).max() < 2.0


def test_the_twins_truth_exported_reproduces_an_ideal_twin(tmp_path, setting):
    _, paths = setting
    settings = twin_truth.compute_plant_settings(twin_truth.truth_parameters(KEY), KEY)
    ideal = dataclasses.replace(settings, kt_true=settings.kt_logged)  # no torque-constant error
    log = _record(
        tmp_path,
        "PI_BETA",
        3,
        plant_settings=ideal,
        compliant=False,
        load_friction=False,
        voltage_limit=False,
        noise_scale=0.0,
    )
    twin = replay.replay(paths["twin"], log, "twin", rows=_rows(log))
    peak = np.abs(twin.measured_torque).max(axis=0)
    assert np.degrees(twin.angle_rmse).max() < 0.1
    assert np.all(twin.torque_rmse <= 0.02 * peak)  # axes at rest: 0 and 0


def test_a_position_mode_recording_replays_on_position_actuators(tmp_path, setting):
    identification, current_paths = setting
    log = _record(tmp_path, "PI_BETA", 4, mode="position")
    truth = twin_truth.truth_parameters(KEY)
    paths = replay.model_files(KEY, truth, tmp_path, identified=truth, drive_mode="position")
    results = replay.replay_models({k: paths[k] for k in ("prior", "twin")}, log, rows=_rows(log))
    twin, prior = results["twin"], results["prior"]
    # the servo's loop tracks either model: the torque record tells them apart
    assert not twin.diverged and np.degrees(twin.angle_rmse).max() < 2.0
    assert twin.torque_rmse.mean() < 0.8 * prior.torque_rmse.mean()
    with pytest.raises(ValueError, match="current actuators for a recording in position mode"):
        replay.replay(current_paths["twin"], log, rows=10)


def test_the_replay_starts_with_the_recordings_feedback(setting):
    log, _ = setting
    constants = recorder.arm_constants(KEY)
    period = float(np.median(np.diff(log.t)))
    integral = replay.starting_integral(log, constants, period)
    out = np.zeros((controller.OUT_ROWS, log.n_axes))
    velocity = log.column_group("dtheta")[0]
    previous = log.theta[0] - velocity * period
    controller.realization_law(
        log.theta_ref[0],
        log.dtheta_ref[0],
        log.ddtheta_ref[0],
        log.theta[0],
        previous,
        period,
        integral,
        *constants.law_arguments(),
        out,
    )
    np.testing.assert_allclose(
        out[controller.OUT_FEEDBACK], log.column_group("u_feedback")[0], atol=1e-9
    )


def test_a_commands_lag_follows_the_dead_time():
    # 1 ms period, four steps: a 1.4 ms dead time acts 0.9 ms (four steps) after the read
    lags = replay.command_lags(np.array([0.0014, 0.0005, 0.0031]), 0.001, 4)
    assert lags[:, 0].tolist() == [1, 1, 1, 1]  # four steps late: the previous cycle's command
    assert lags[:, 1].tolist() == [0, 0, 0, 0]  # no delay beyond the hold
    assert lags[:, 2].tolist() == [3, 3, 2, 2]  # ten steps: two cycles and two steps


def test_a_standard_vector_of_the_prior_keeps_only_the_grippers_drive():
    arm = load_arm(KEY)
    identified = twin_truth.truth_parameters(KEY)
    prior = replay.prior_standard(arm, identified).as_dict()
    links, _ = consistent.arm_terms(arm).prior()
    assert all(prior[n] == v for n, v in links.items())
    gripper = arm.n_axes
    for axis in range(1, arm.n_axes + 1):
        for kind in consistent.DRIVE_KINDS:
            expected = identified[f"{kind}{axis}"] if axis == gripper else 0.0
            assert prior[f"{kind}{axis}"] == expected


def _replay(name: str, cycles: int, n: int = 3, rows: int = 200) -> replay.Replay:
    """A synthetic replay: simulated = measured + 0.01 rad and + 0.1 N·m on every axis."""
    t = np.arange(rows) * 1e-3
    measured = np.outer(np.sin(t), np.arange(1, n + 1))
    return replay.Replay(
        name, "PI_BETA", t, measured + 0.01, measured + 0.1, measured, measured, cycles
    )


def test_a_diverged_replay_has_no_finite_error_and_the_view_says_so():
    import matplotlib

    matplotlib.use("Agg")
    from crane_lib.reporting.chapters import other_arms as view

    done, diverged = _replay("identified", 200), _replay("prior", 50)
    np.testing.assert_allclose(done.angle_rmse, 0.01, rtol=1e-12)
    np.testing.assert_allclose(done.torque_rmse_raw, 0.1, rtol=1e-12)
    assert diverged.diverged and np.isinf(diverged.angle_rmse).all()
    record = {
        "arm": KEY,
        "held_out": "PI_BETA",
        "ts": replay.TS,
        "drive_mode": "current",
        "models": [done.to_dict(), diverged.to_dict()],
        "segment": {
            "axis": 1,
            "t": [0.0, 0.1],
            "measured_angle": [0, 1],
            "measured_torque": [0, 1],
        },
    }
    assert record["models"][1]["angle_rmse_rad"] == [None] * 3
    frame = view.replay_frame(record)
    assert list(frame.columns) == ["axis 1", "axis 2", "axis 3"]
    assert frame.loc[("angle RMSE (°)", view.REPLAY_MODELS["prior"])].tolist() == ["diverged"] * 3
    assert (
        frame.loc[("angle RMSE (°)", view.REPLAY_MODELS["identified"])].tolist() == ["0.573"] * 3
    )  # 0.01 rad in degrees, three digits
    view.replay_figure(record, "SO-101")
