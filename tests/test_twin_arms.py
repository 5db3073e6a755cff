"""The twin of another arm (ViperX 300 S, SO-101): its truth, its constants, its recordings.

The bounds a recording must meet are those book/register_twin.md fixed before the first one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from crane_lib import cli
from crane_lib.constants import CONTROL_PERIOD_S, ENCODER_COUNTS
from crane_lib.errors import InputError
from crane_lib.excitation.arms import elbow_joint, read_arm
from crane_lib.excitation.commands import CommandFile
from crane_lib.logs import npz_io, preprocessing, raw_log
from crane_lib.model import controller
from crane_lib.model.arm_description import load_arm
from crane_lib.model.chain_model import ChainModel
from crane_lib.paper_numbers import paper
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.twin import recorder as twin
from crane_lib.twin import truth as twin_truth

ARMS = ("vx300s", "so101")
TRACKING_RMS_DEG = 2.0  # register: RMS position error over the arm axes
END_POSTURE_DEG = 1.0  # register: the end posture against the last target


def _short_command(arm: str) -> CommandFile:
    """The first three rows of the arm's PI_ALPHA: the first pair out and back to q̄0."""
    cmd = read_arm(arm)["PI_ALPHA"]
    return CommandFile(
        f"{cmd.name} (first three rows)",
        cmd.waypoints[:3],
        cmd.speed_percent[:3],
        command_format=cmd.command_format,
    )


@pytest.fixture(scope="module", params=ARMS)
def arm_log(request, tmp_path_factory):
    """(arm, command, samples, metadata, path of the written log) of a short recording."""
    arm = request.param
    cmd = _short_command(arm)
    # controller (2), whose tracking the register bounds (position mode: test_position_loop.py)
    samples, metadata = twin.record(cmd, seed=5, arm=arm, drive_mode="current")
    path = raw_log.write_raw_log(tmp_path_factory.mktemp(arm) / "log.npz", samples, metadata)
    return arm, cmd, samples, metadata, path


# ---------------------------------------------------------------- truth and drive settings


@pytest.mark.parametrize("arm", ARMS)
def test_the_truth_of_an_arm_follows_the_crane_x7_rules(arm):
    description = load_arm(arm)
    truth = twin_truth.truth_parameters(arm)
    assert truth.names == description.standard_parameter_names()
    twin_truth.check_physical(truth, arm, arm)
    for name, value in description.inertial_prior.items():  # the links are the description's prior
        assert truth[name] == value
    rotor, drag = paper("ia7_accepted").value, 1.3 / paper("joint7_gain").value
    for axis, actuator in enumerate(description.actuators, start=1):
        stall = twin_truth.STALL_TORQUE_N_M
        scale = stall[actuator.model] / stall["XM430-W350"] * actuator.servos
        gripper = 4.0 if axis > description.n_joints else 1.0
        assert truth[f"IA{axis}"] == pytest.approx(rotor * scale, rel=1e-12)
        total = truth[f"FV{axis}"] + truth[f"FS{axis}"]
        assert total == pytest.approx(drag * scale * gripper, rel=1e-12)
        assert truth[f"FS{axis}"] == pytest.approx(truth[f"FV{axis}"], rel=1e-12)


@pytest.mark.parametrize("arm", ARMS)
def test_the_drive_settings_of_an_arm(arm):
    description = load_arm(arm)
    truth = twin_truth.truth_parameters(arm)
    settings = twin_truth.compute_plant_settings(truth, arm)
    kt = np.array([a.kt * a.servos for a in description.actuators])
    np.testing.assert_array_equal(settings.kt_logged, kt)
    ratio = settings.kt_true / kt
    assert np.all(np.abs(ratio - 1.0) <= 0.10) and np.std(ratio) > 0.01
    # the two-mass resonance at the arm's Fig. 1 posture, M from an independent model (ChainModel)
    posture = twin_truth.resonance_posture(arm)
    rotors_off = {f"IA{a}": 0.0 for a in range(1, description.n_axes + 1)}
    link_only = dict(zip(truth.names, truth.values)) | rotors_off
    mass = ChainModel(description).inertia_matrix(posture[None, :], link_only)[0]
    link = np.diag(mass)[: description.n_joints]
    rotor = np.array([truth[f"IA{j}"] for j in range(1, description.n_joints + 1)])
    reduced = 1.0 / (1.0 / rotor + 1.0 / link)
    resonance = np.sqrt(settings.stiffness / reduced) / (2 * math.pi)
    np.testing.assert_allclose(resonance, 100.0, rtol=1e-9)
    assert settings.stiffness.shape == settings.efficiency_driving.shape == (description.n_joints,)
    for axis, actuator in enumerate(description.actuators):
        model_name = actuator.model
        assert settings.stall_current[axis] == twin_truth.STALL_CURRENT_A[model_name]
        no_load = twin_truth.NO_LOAD_SPEED_RPM[model_name] * math.pi / 30
        assert settings.no_load_speed[axis] == pytest.approx(no_load)


def test_the_resonance_posture_rule_gives_the_crane_x7s_fig1_posture():
    np.testing.assert_array_equal(twin_truth.resonance_posture("crane_x7"), twin_truth.FIG1_POSTURE)
    for arm in ARMS:
        posture = twin_truth.resonance_posture(arm)
        elbow = elbow_joint(load_arm(arm))
        assert np.count_nonzero(posture) == 1
        assert abs(posture[elbow - 1]) == pytest.approx(math.pi / 2)


@pytest.mark.parametrize("arm", ARMS)
def test_realization_constants_of_an_arm_are_its_inertia_at_zero_and_its_drag(arm):
    description = load_arm(arm)
    truth = twin_truth.truth_parameters(arm)
    constants = twin_truth.realization_constants(arm)
    zero = np.zeros((1, description.n_axes))
    mass = ChainModel(description).inertia_matrix(zero, dict(zip(truth.names, truth.values)))[0]
    # the chain model's M holds the rotor inertias IA on its diagonal: M̂_j = M_jj(0; prior) + IA_j
    np.testing.assert_allclose(constants.m_hat, np.diag(mass), rtol=1e-9)
    drag = np.array([truth[f"FV{a}"] + truth[f"FS{a}"] for a in range(1, description.n_axes + 1)])
    np.testing.assert_allclose(constants.d_hat, drag / constants.m_hat, rtol=1e-12)
    kt = [a.kt * a.servos for a in description.actuators]
    np.testing.assert_array_equal(constants.kt_command, kt)
    assert constants.current_unit == description.actuators[0].current_unit
    limits = np.round([a.current_limit / a.current_unit for a in description.actuators])
    np.testing.assert_array_equal(constants.limit_units, limits)
    gains = twin_truth.controller_gains(arm)
    assert (constants.k_p, constants.k_v, constants.k_i) == (gains.k_p, gains.k_v, gains.k_i)


@pytest.mark.parametrize("arm", ARMS)
def test_the_gains_of_an_arm_follow_the_encoder_noise_rule(arm):
    """The largest bandwidth (at most the paper's) for which one encoder count per period through
    K_V M̂ stays within the description's fraction of every torque limit; K_V = 2 sqrt(K_P)."""
    description = load_arm(arm)
    fraction = description.controller.fraction
    gains = twin_truth.controller_gains(arm)
    m_hat = twin_truth.realization_constants(arm).m_hat
    limits = np.array([a.torque_limit for a in description.actuators])
    step = math.tau / ENCODER_COUNTS / CONTROL_PERIOD_S  # rad/s of one count over one cycle
    ratio = gains.k_v * m_hat * step / limits
    assert ratio.max() == pytest.approx(fraction, rel=1e-12)  # the largest such K_V
    assert gains.k_v < controller.K_V
    assert gains.k_v == pytest.approx(2.0 * math.sqrt(gains.k_p), rel=1e-12)
    assert gains.k_i == pytest.approx(gains.k_p * math.sqrt(gains.k_p) / 5.0, rel=1e-12)


def test_the_crane_x7s_gains_meet_the_rule_and_stay_the_papers():
    """The paper's arm satisfies the rule at the fraction the other arms use (axis 2: 0.498),
    and the rule applied to it returns its K_P, K_V, K_I unchanged."""
    m_hat = controller.load_realization_constants().m_hat
    limits = np.array([a.torque_limit for a in load_arm("crane_x7").actuators])
    ratio = controller.encoder_count_torque(controller.K_V, m_hat) / limits
    fraction = load_arm("vx300s").controller.fraction
    assert 0.45 < ratio.max() <= fraction and np.argmax(ratio) == 1
    gains = controller.encoder_noise_gains(m_hat, limits, fraction)
    assert gains == (1000.0, controller.K_V, controller.K_I)


# ---------------------------------------------------------------- the core and the plant


@pytest.mark.parametrize("arm", ARMS)
def test_the_core_takes_its_sizes_from_the_arm(arm):
    description = load_arm(arm)
    core = twin.plant_core(arm)
    assert (core.N_ARM, core.N_AX) == (description.n_joints, description.n_axes)
    n_arm, n_ax = core.N_ARM, core.N_AX
    assert (core.XQ, core.XV, core.XQM, core.XVM) == (0, n_ax, 2 * n_ax, 2 * n_ax + n_arm)
    assert core.X_SIZE == 2 * (n_ax + n_arm)


@pytest.mark.parametrize("arm", ARMS)
def test_an_unforced_rigid_arm_keeps_its_energy(arm):
    """Zero friction and command, rigid drives: energy is kept to first order in the step, as for
    the CRANE-X7 (tests/test_twin.py); halving the step halves the drift."""
    truth = twin_truth.truth_parameters(arm)
    description = load_arm(arm)
    drifts = []
    for step in (0.5e-3, 0.25e-3):
        plant = twin.build_plant(truth, twin_truth.compute_plant_settings(truth, arm), arm)
        plant.compliant, plant.step, plant.voltage_limit = False, step, False
        plant.fv[:] = plant.fs[:] = 0.0
        q0 = np.zeros(description.n_axes)
        angles = [10.0, 25.0, -30.0, 15.0, 20.0, 5.0]
        q0[: description.n_joints] = np.radians(angles[: description.n_joints])
        x = twin.initial_state(q0, arm)
        e0 = twin.energy(x, plant)
        steps, idle = int(round(0.02 / step)), np.zeros(description.n_axes)
        energies = [twin.energy(twin.integrate(plant, x, idle, steps), plant) for _ in range(25)]
        drifts.append(np.max(np.abs(np.array(energies) - e0)) / (np.ptp(energies) + abs(e0)))
    assert drifts[1] < 0.01 and drifts[1] < 0.7 * drifts[0]


# ---------------------------------------------------------------- a recording


def test_a_short_recording_tracks_within_the_registered_bound(arm_log):
    arm, cmd, samples, metadata, _ = arm_log
    description = load_arm(arm)
    n, n_joints = description.n_axes, description.n_joints
    assert samples.shape[1] == raw_log.n_columns(n) == 2 + 13 * n
    assert np.all(np.isfinite(samples))
    error = samples[:, raw_log.group("position_error", n)][:, :n_joints]
    assert np.degrees(np.sqrt(np.mean(error**2))) < TRACKING_RMS_DEG
    theta = samples[:, raw_log.group("theta_logged", n)] - np.pi
    np.testing.assert_allclose(theta[-1], cmd.waypoints[-1], atol=math.radians(END_POSTURE_DEG))
    assert metadata["arm"] == arm and metadata["in_position_timeouts"] == "0"
    # the reference moved: the recording is the command file's motion, not a hold
    assert np.ptp(samples[:, raw_log.group("theta_ref", n)], axis=0).max() > math.radians(30.0)


def test_a_short_recording_is_not_clamped_at_rest(arm_log):
    """One encoder count through K_V M̂ stays within the torque limits: no axis chatters between
    its current limits while the reference stands still (the CRANE-X7's gains did on the ViperX)."""
    arm, _, samples, _, _ = arm_log
    n = load_arm(arm).n_axes
    rest = np.all(samples[:, raw_log.group("dtheta_ref", n)] == 0, axis=1)
    rest &= np.all(samples[:, raw_log.group("ddtheta_ref", n)] == 0, axis=1)
    assert rest.sum() > 1000
    clamped = samples[rest][:, raw_log.group("clamped", n)].astype(bool)
    assert clamped.mean(axis=0).max() < 0.01


def test_a_short_recording_respects_the_current_limits(arm_log):
    arm, _, samples, _, _ = arm_log
    description = load_arm(arm)
    n = description.n_axes
    limit = np.array([round(a.current_limit / a.current_unit) for a in description.actuators])
    units = samples[:, raw_log.group("goal_current_units", n)]
    np.testing.assert_array_equal(units, np.round(units))
    assert np.all(np.abs(units) <= limit)
    current = samples[:, raw_log.group("current_command", n)]
    unit = description.actuators[0].current_unit
    np.testing.assert_allclose(current, units * unit, rtol=0, atol=1e-15)
    clamped = samples[:, raw_log.group("clamped", n)].astype(bool)
    assert np.all(np.abs(units[clamped]) == np.broadcast_to(limit, units.shape)[clamped])


def test_a_recording_is_deterministic_and_reads_back_with_its_axis_count(arm_log, tmp_path):
    arm, cmd, samples, metadata, path = arm_log
    again = raw_log.write_raw_log(
        tmp_path / "again.npz", *twin.record(cmd, seed=5, arm=arm, drive_mode="current")
    )
    assert again.read_bytes() == path.read_bytes()
    log = raw_log.read_raw_log(path)
    assert log.arm == arm and log.n_axes == load_arm(arm).n_axes
    np.testing.assert_array_equal(log.samples, samples)
    assert log.theta.shape == (len(samples), log.n_axes)
    bundle = preprocessing.preprocess(log, 0.01)
    assert bundle.theta.shape[1] == bundle.tau.shape[1] == log.n_axes
    assert np.all(np.isfinite(bundle.theta)) and np.all(np.isfinite(bundle.tau))
    assert len(bundle.t) > 100
    other = twin.record(cmd, seed=6, arm=arm)[0]
    assert other.tobytes() != samples.tobytes()


def test_the_reader_refuses_a_log_of_an_unknown_arm_or_the_wrong_width(arm_log, tmp_path):
    arm, _, samples, metadata, _ = arm_log
    named = {**metadata, "arm": "crane_x9"}
    with pytest.raises(InputError, match="crane_x9"):  # the writer refuses it ...
        raw_log.write_raw_log(tmp_path / "unknown.npz", samples, named)
    unknown = npz_io.write_npz(
        tmp_path / "unknown.npz",
        {  # ... and so does the reader
            "samples": samples,
            "metadata": np.array("\n".join(f"{k}: {v}" for k, v in named.items())),
        },
    )
    with pytest.raises(InputError, match="crane_x9"):
        raw_log.read_raw_log(unknown)
    unnamed = {k: v for k, v in metadata.items() if k != "arm"}
    text = tmp_path / "unnamed.csv"
    written = raw_log.format_raw_log(samples[:50], metadata)
    text.write_text(written.replace(f"# arm: {arm}\n", ""), encoding="utf-8")
    with pytest.raises(InputError, match="wrong column count"):  # read as a CRANE-X7's 106 columns
        raw_log.read_raw_log(text)
    with pytest.raises(ValueError):
        raw_log.write_raw_log(tmp_path / "w.npz", samples, unnamed)


def test_a_command_file_of_another_arm_is_refused_on_the_crane_x7(arm_log):
    _, cmd, _, _, _ = arm_log
    with pytest.raises(InputError, match="axes"):
        twin.record(cmd, seed=1)


def test_the_command_line_records_another_arms_file_and_refuses_a_crane_x7_file(tmp_path, capsys):
    out = tmp_path / "so101.npz"
    command = TRAJECTORY_DIR / "so101" / "PI_ALPHA.txt"
    argv = ["record", str(command), "--out", str(out), "--seed", "2", "--robot", "so101"]
    assert cli.main(argv) == 0
    log = raw_log.read_raw_log(out)
    assert log.arm == "so101" and log.samples.shape[1] == raw_log.n_columns(6)
    crane_file = TRAJECTORY_DIR / "AP01.txt"
    argv = ["record", str(crane_file), "--out", str(tmp_path / "x.npz"), "--robot", "so101"]
    assert cli.main(argv) == cli.EXIT_BAD_INPUT
    assert "AP01.txt" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["so101.npz"]


def test_the_twin_effects_size_themselves_from_another_arm():
    from crane_lib.twin import effects

    arm = "so101"
    description = load_arm(arm)
    truth = twin_truth.truth_parameters(arm)
    settings = twin_truth.compute_plant_settings(truth, arm)
    default = effects.profile("default")
    profile = default.changed(backlash=0.25, encoder_error=0.5, gear_friction=0.95)
    chosen = effects.realization(profile, truth, settings, arm)
    assert chosen.backlash_half_gap.shape == (description.n_joints,)
    assert chosen.encoder_error.shape == (4, description.n_axes)
    np.testing.assert_allclose(chosen.settings.efficiency_driving, 0.95**4)
    unit = description.actuators[0].current_unit
    np.testing.assert_allclose(chosen.noise[[0, 2]], [unit, 2 * unit])
    cmd = _short_command(arm)
    with_effects, _ = twin.record(cmd, seed=5, arm=arm, effects=profile)
    as_default, _ = twin.record(cmd, seed=5, arm=arm, effects=default)
    plain, _ = twin.record(cmd, seed=5, arm=arm)
    assert np.all(np.isfinite(with_effects)) and with_effects.tobytes() != plain.tobytes()
    assert as_default.tobytes() == plain.tobytes()  # the default profile is the twin as it is
