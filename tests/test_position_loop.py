"""The servo's position loop (model/position_loop.py): its profile and PID against closed forms,
the motor's duty-to-torque line, and arm.toml's drive_mode and [position_loop] refusals."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from crane_lib.errors import InputError
from crane_lib.model import arm_description
from crane_lib.model import position_loop as pl
from crane_lib.paths import DATA_DIR


def _settings(**changes) -> pl.PositionLoopSettings:
    values = dict(
        firmware="feetech_sts",
        p_gain=16,
        i_gain=0,
        d_gain=0,
        pwm_limit=1.0,
        profile_velocity=0.0,
        profile_acceleration=0.0,
        period=1e-3,
    )
    values.update(changes)
    return pl.PositionLoopSettings(**values)


# ------------------------------------------------------------------ the loop against closed forms


def test_register_scales_follow_the_e_manual_and_the_sts_measurement():
    """K_P of DYNAMIXEL X = (P/128)(4096/2π)/885 duty/rad; of the STS 0.166 P (BAM); K_D of the
    STS takes the DYNAMIXEL's KPD/KPP = 8 per tick."""
    dx = _settings(firmware="dynamixel_x", p_gain=800, d_gain=16).gains(1)[:, 0]
    assert dx[pl.G_KP] == pytest.approx(800 / 128 * 4096 / (2 * math.pi) / 885, rel=1e-12)
    assert dx[pl.G_KD] == pytest.approx(16 / 16 * 4096 / (2 * math.pi) / 885 * 1e-3, rel=1e-12)
    sts = _settings(p_gain=16, d_gain=32).gains(1)[:, 0]
    assert sts[pl.G_KP] == pytest.approx(16 * 0.166)
    assert sts[pl.G_KD] == pytest.approx(32 * 0.166 * 8 * 1e-3)
    assert sts[pl.G_VELOCITY] == math.inf and sts[pl.G_ACCELERATION] == math.inf


def test_the_profile_is_the_trapezoid_of_its_limits():
    """A step of the goal from rest: the profile never exceeds v_max nor changes speed by more
    than a_max T per tick, ends on the goal, and takes the trapezoid's D/v + v/a to one tick."""
    v_max, a_max, period, distance = 2.0, 20.0, 1e-3, 1.0
    loop = pl.PositionLoop(
        _settings(profile_velocity=v_max, profile_acceleration=a_max, period=period), 1
    )
    loop.reset([0.0], [0.0])
    positions, speeds = [], []
    for _ in range(2000):
        loop.step([distance], [0.0])
        positions.append(loop.state[pl.S_POSITION, 0])
        speeds.append(loop.state[pl.S_VELOCITY, 0])
    speeds = np.array(speeds)
    assert speeds.max() <= v_max + 1e-12
    assert np.max(np.abs(np.diff(np.r_[0.0, speeds]))) <= a_max * period + 1e-12
    arrival = int(np.argmax(np.isclose(positions, distance, atol=1e-12, rtol=0))) + 1
    assert positions[-1] == pytest.approx(distance, abs=1e-12)
    assert abs(arrival * period - (distance / v_max + v_max / a_max)) <= 2 * period


def _closed_loop(kp_duty, inertia, kt, stall, no_load, goal, seconds, period, sub=20):
    """A servo (P only, no profile) on a pure inertia: the law every tick, the torque of the duty
    at the instantaneous speed inside it (semi-implicit Euler, `sub` steps a tick)."""
    loop = pl.PositionLoop(_settings(p_gain=1, period=period), 1)
    loop.gains[pl.G_KP] = kp_duty
    loop.reset([0.0], [0.0])
    q = v = 0.0
    trace = []
    for _ in range(int(round(seconds / period))):
        duty = loop.step([goal], [q])[0]
        for _ in range(sub):
            v += period / sub * pl.duty_torque(duty, v, kt, stall, no_load) / inertia
            q += period / sub * v
        trace.append(q)
    return np.array(trace)


def test_a_small_step_follows_the_second_order_closed_form():
    """Unsaturated, P only: J q̈ = kt i_s (K_P (g - q) - q̇/ω_nl), a damped oscillator with
    ω_n² = kt i_s K_P / J and 2 ζ ω_n = kt i_s / (ω_nl J); the sampled loop follows its step
    response to within the hold's half-tick delay."""
    kp, inertia, kt, stall, no_load, goal, period = 4.0, 0.01, 1.09, 2.7, 4.71, 0.05, 1e-4
    trace = _closed_loop(kp, inertia, kt, stall, no_load, goal, 0.5, period)
    wn = math.sqrt(kt * stall * kp / inertia)
    zeta = kt * stall / (no_load * inertia) / (2 * wn)
    assert zeta < 1  # underdamped: the overshoot is a sharp check
    wd = wn * math.sqrt(1 - zeta**2)
    t = np.arange(1, trace.size + 1) * period
    exact = goal * (
        1
        - np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta**2) * np.sin(wd * t))
    )
    assert np.max(np.abs(trace - exact)) < 0.02 * goal
    overshoot = trace.max() / goal - 1
    assert overshoot == pytest.approx(math.exp(-zeta * math.pi / math.sqrt(1 - zeta**2)), rel=0.05)


def test_the_duty_clamps_and_the_motor_follows_its_torque_speed_line():
    """A large error saturates the duty at the PWM limit; at full duty the torque is the stall
    torque at rest and zero at the no-load speed."""
    loop = pl.PositionLoop(_settings(pwm_limit=0.8), 1)
    loop.reset([0.0], [0.0])
    assert loop.step([1.0], [0.0])[0] == pytest.approx(0.8)
    assert loop.out[pl.O_SATURATED, 0] == 1.0
    assert pl.duty_torque(1.0, 0.0, 1.09, 2.7, 4.71) == pytest.approx(1.09 * 2.7)
    assert pl.duty_torque(1.0, 4.71, 1.09, 2.7, 4.71) == pytest.approx(0.0, abs=1e-12)
    assert pl.duty_current(0.0, -4.71, 2.7, 4.71) == pytest.approx(2.7)  # back-driven


def test_the_integral_removes_a_constant_load_and_winds_up_no_further_when_clamped():
    """With I > 0 the duty under a held error grows tick by tick; with the duty clamped toward
    the error, the error sum stops."""
    loop = pl.PositionLoop(_settings(i_gain=100, pwm_limit=1.0), 1)
    loop.reset([0.0], [0.0])
    first = loop.step([0.01], [0.0])[0]
    second = loop.step([0.01], [0.0])[0]
    assert second > first  # the sum grows
    loop.reset([0.0], [0.0])
    for _ in range(5):
        loop.step([10.0], [0.0])  # saturated toward the error
    assert loop.state[pl.S_SUM, 0] == 0.0  # every tick clamped: nothing summed (else 50 rad)


# ------------------------------------------------------------------ arm.toml


def test_the_shipped_arms_drive_modes():
    """The SO-101 is driven in position mode, the ViperX in current mode with its loop at hand,
    the CRANE-X7 in current mode without one."""
    so101, vx300s = (arm_description.load_arm(k) for k in ("so101", "vx300s"))
    assert so101.drive_mode == "position" and so101.position_loop.firmware == "feetech_sts"
    assert (so101.position_loop.p_gain, so101.position_loop.d_gain) == (16, 32)
    assert vx300s.drive_mode == "current" and vx300s.position_loop.p_gain == 800
    assert vx300s.in_drive_mode("position").drive_mode == "position"
    crane = arm_description.crane_x7()
    assert crane.drive_mode == "current" and crane.position_loop is None
    with pytest.raises(InputError, match="no \\[position_loop\\]"):
        crane.in_drive_mode("position")
    with pytest.raises(InputError, match="one of current, position"):
        vx300s.in_drive_mode("torque")


def _folder(tmp_path: Path, key: str) -> Path:
    folder = tmp_path / key
    shutil.copytree(DATA_DIR / arm_description.ARMS[key], folder)
    return folder


BAD_TOML = {
    # case: (arm, old text, new text, words of the message)
    "unknown drive mode": (
        "so101",
        'drive_mode = "position"',
        'drive_mode = "torque"',
        ["arm.toml", "'drive_mode'", "'torque'", "'current', 'position'"],
    ),
    "position without its loop": (
        "so101",
        "[position_loop]",
        "[unused_loop]",
        ["arm.toml", "unknown key 'unused_loop'"],
    ),
    "gain a string": (
        "so101",
        "p_gain = 16",
        'p_gain = "16"',
        ["arm.toml", "'position_loop.p_gain'", "is a string", "an integer"],
    ),
    "gain above the STS register": (
        "so101",
        "p_gain = 16",
        "p_gain = 800",
        ["arm.toml", "'position_loop.p_gain' = 800", "feetech_sts", "0..254"],
    ),
    "key missing": (
        "vx300s",
        "period_s = 0.001\n",
        "",
        ["arm.toml", "'position_loop.period_s' missing", "tick", "in s"],
    ),
    "duty limit above one": (
        "vx300s",
        "pwm_limit = 1.0",
        "pwm_limit = 1.5",
        ["arm.toml", "'position_loop.pwm_limit'", "out of range", "value <= 1"],
    ),
    "unknown firmware": (
        "vx300s",
        'firmware = "dynamixel_x"',
        'firmware = "herkulex"',
        ["arm.toml", "'position_loop.firmware'", "'dynamixel_x', 'feetech_sts'"],
    ),
    "negative acceleration": (
        "vx300s",
        "profile_acceleration_rad_s2 = 9.362687872629682",
        "profile_acceleration_rad_s2 = -1.0",
        ["arm.toml", "'position_loop.profile_acceleration_rad_s2'", "rad/s^2"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_TOML))
def test_a_bad_drive_mode_or_loop_is_refused_naming_file_and_key(tmp_path, case):
    """Each bad drive_mode / [position_loop] value: an InputError naming arm.toml and the key."""
    key, old, new, words = BAD_TOML[case]
    folder = _folder(tmp_path, key)
    path = folder / "arm.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        arm_description.load_urdf_arm(folder)
    for word in words:
        assert word in str(caught.value), (case, str(caught.value))


def test_position_mode_without_a_loop_is_refused(tmp_path):
    """drive_mode = "position" with no [position_loop] table: refused, naming both."""
    folder = _folder(tmp_path, "so101")
    path = folder / "arm.toml"
    text = path.read_text(encoding="utf-8")
    start = text.index("[position_loop]")
    end = text.index('"""', text.index('source = """') + 12) + 3
    path.write_text(text[:start] + text[end:], encoding="utf-8")
    with pytest.raises(InputError) as caught:
        arm_description.load_urdf_arm(folder)
    assert "arm.toml" in str(caught.value)
    assert "'drive_mode' = 'position' without [position_loop]" in str(caught.value)


# ------------------------------------------------------------------ the twin in position mode


@pytest.fixture(scope="module")
def so101_position_log():
    """The SO-101's twin (position mode, its description's) on a short command file."""
    from crane_lib.twin import recorder as twin
    from tests.hardware_cases import short_so101_command

    return twin.record(short_so101_command(), seed=1, arm="so101")


def test_the_position_mode_twin_tracks_draws_current_and_quantizes(so101_position_log):
    """The servos follow the streamed goal with a lag, hold it at rest with a small sag, draw
    current against gravity, and the logged current is whole 6.5 mA register units of the
    present-current reading, within the register's limit."""
    from crane_lib.logs import raw_log

    samples, metadata = so101_position_log
    assert metadata["drive_mode"] == "position" and metadata["position_loop"].startswith("feetech")

    def group(name):
        return samples[:, raw_log.group(name, 6)]

    error, current, units = (
        group("position_error"),
        group("current_command"),
        group("goal_current_units"),
    )
    moving = samples[:, -1] >= 0
    rest = ~moving
    assert np.all(np.abs(np.degrees(error[rest])) < 6.0)  # the sag of P = 16 under gravity
    assert np.degrees(np.sqrt(np.mean(error[moving] ** 2))) > 1.0  # a lag while moving
    assert np.all(units == np.rint(units)) and np.all(np.abs(units) <= 415)
    assert np.array_equal(current, units * 0.0065)
    assert np.array_equal(group("current_present"), current)
    assert np.mean(np.abs(current[rest, 1])) > 0.02  # the shoulder holds the arm up
    duty = group("u_feedback")
    assert np.all(np.abs(duty) <= 1.0) and np.any(np.abs(duty) > 0.1)


def test_the_drive_mode_parameter_switches_the_loop(so101_position_log):
    """The same command file in current mode (controller (2) on the host) logs another record."""
    from crane_lib.twin import recorder as twin
    from tests.hardware_cases import short_so101_command

    samples, metadata = twin.record(
        short_so101_command(), seed=1, arm="so101", drive_mode="current"
    )
    assert metadata["drive_mode"] == "current"  # said: the SO-101's own mode is position
    assert samples.shape[1] == so101_position_log[0].shape[1]
    assert not np.array_equal(samples[:100], so101_position_log[0][:100])
    with pytest.raises(InputError, match="no \\[position_loop\\]"):
        twin.record(short_so101_command(), seed=1, arm="crane_x7", drive_mode="position")


# ------------------------------------------------------------------ CLIE in position mode


@pytest.fixture(scope="module")
def position_problem():
    """A rigid, noise-free SO-101 record of PI_ALPHA in position mode (the reduced model's truth,
    the logged Kt true), its CLIE problem and true base parameters."""
    import dataclasses

    from crane_lib.excitation.arms import read_arm
    from crane_lib.identification import clie_position
    from crane_lib.logs.raw_log import RawLog
    from crane_lib.model.parameters import ParameterSet
    from crane_lib.twin import recorder as twin
    from crane_lib.twin import truth as twin_truth

    standard = twin_truth.truth_parameters("so101")
    kept = [0.0 if n[:2] in ("XY", "XZ", "YZ", "FS") else v for n, v in standard.as_dict().items()]
    truth = ParameterSet(standard.names, kept)
    settings = twin_truth.compute_plant_settings(truth, "so101")
    settings = dataclasses.replace(settings, kt_true=settings.kt_logged.copy())
    samples, metadata = twin.record(
        read_arm("so101")["PI_ALPHA"],
        seed=5,
        arm="so101",
        truth=truth,
        plant_settings=settings,
        compliant=False,
        noise_scale=0.0,
    )
    start = int(metadata["motion_start_sample"]) - 500
    end = int(metadata["motion_start_sample"]) + 3000
    log = RawLog(samples[start:end].copy(), metadata)
    problem = clie_position.build_problem(log)
    kt_true = np.array([float(v) for v in metadata["kt_true_this_run"].split()])
    problem.kt_record = kt_true
    problem.measured = problem.measured * kt_true / log.layout.kt
    return log, problem, problem.model.base_from_standard(truth).values


def test_clie_simulates_the_servos_loop_through_the_same_function(position_problem):
    """Every simulated torque is position_loop_law's duty, ticked on the simulation's own angles
    toward the logged goal, on the motor's line at the simulated velocity: the Python wrapper of
    the same law replays them to rounding."""
    from crane_lib.identification import clie_position

    log, problem, beta = position_problem
    assert isinstance(problem, clie_position.PositionCLIEProblem)
    simulation = problem.simulate(beta)
    assert simulation.ok
    settings = arm_description.load_arm("so101").position_loop
    loop = pl.PositionLoop(settings, log.n_axes)
    goal = clie_position.goal_counts(log.theta_ref)
    loop.reset(goal[0], log.theta[0])
    stall, no_load = problem.stall_current, problem.no_load_speed
    for k in range(problem.t.size):
        duty = loop.step(goal[k], simulation.q[k])
        replayed = [
            pl.duty_torque(d, v, kt, i, w)
            for d, v, kt, i, w in zip(duty, simulation.v[k], problem.kt_record, stall, no_load)
        ]
        np.testing.assert_allclose(simulation.tau[k], replayed, rtol=1e-12, atol=1e-12)
    with pytest.raises(Exception, match="position-mode record"):
        problem.law_arguments()  # the routes that simulate controller (2) are refused


def test_clie_of_a_position_record_reproduces_it_at_the_truth(position_problem):
    """At the true parameters the servos' simulated loop reproduces the record's torque (the
    twin's dead time, encoder counts and current register aside); controller (2) simulated on
    the same record does not."""
    from crane_lib.identification import clie

    log, problem, beta = position_problem
    measured = problem.measured[problem.valid]
    relative = np.sqrt(problem.objective(beta) / np.sum(measured**2))
    assert relative < 0.1, relative  # measured 0.020
    current_mode = clie.build_problem(log)
    current_mode.kt_record, current_mode.measured = problem.kt_record, problem.measured
    wrong = np.sqrt(current_mode.objective(beta) / np.sum(measured**2))
    assert wrong > 3 * relative, (wrong, relative)  # measured 0.64


# ------------------------------------------------------------------ excitation in position mode


def test_position_mode_excitation_is_checked_against_the_servos_profile():
    """The SO-101's blocks stay inside its servos' profile and keep full rank; the ViperX's ask
    21 rad/s² of a stock profile of 9.36 rad/s²: refused in position mode, naming axis and limit."""
    from crane_lib.excitation import arms

    so101 = arm_description.load_arm("so101")
    commands = arms.read_arm("so101").values()
    share = arms.check_profile(so101, commands)
    assert share.shape == (2, 6) and 0.5 < share.max() <= 1.0
    assert arms.check_excitation(so101, commands).full_rank
    vx300s = arm_description.load_arm("vx300s").in_drive_mode("position")
    with pytest.raises(InputError) as caught:
        arms.check_excitation(vx300s, arms.read_arm("vx300s").values())
    assert "axis 1" in str(caught.value) and "profile acceleration 9.363 rad/s^2" in str(
        caught.value
    )


# ------------------------------------------------------------------ the chapter's view


def test_the_drive_mode_table_puts_each_arms_modes_side_by_side():
    """An arm with a run in each mode gives two columns, its own mode first; the servos' facts
    appear for position mode only; an arm run in one mode gives none."""
    from crane_lib.formatting import DASH
    from crane_lib.reporting.chapters import other_arms as view

    audits = [{"lambda_min": 1e-3}]
    accepted = {
        "names": ["ZZR1"],
        "kappa": 50.0,
        "route": "O-C",
        "first_audits": audits,
        "rescue": None,
        "accepted": True,
    }

    def run(mode, loop=None):
        out = {
            "accepted": accepted,
            "held_out_rmse": 0.1,
            "held_out_mne": [0.02, 0.04],
            "truth": {"names": ["ZZR1"], "relative": [0.05], "median": 0.05},
        }
        if mode is not None:
            out["drive_mode"] = mode
        if loop is not None:
            out["position_loop"] = loop
        return out

    loop = {
        "tracking_rms_deg": [1.0, 3.0],
        "profile_acceleration_share": [0.5, 2.0],
        "duty_limit_share": [0.0, 0.1],
    }
    records = [
        {"description": {"name": "Arm A"}, "algorithm1": run(None)},
        {
            "description": {"name": "Arm B"},
            "algorithm1": run("position", loop),
            "algorithm1_other_mode": run("current"),
        },
    ]
    frame = view.drive_mode_frame(records)
    assert list(frame.index) == ["Arm B, position (its own)", "Arm B, current"]
    assert frame.iloc[0]["tracking error RMS, worst axis (°)"] == 3.0
    assert frame.iloc[0]["commanded / profile acceleration, worst axis"] == 2.0
    assert frame.iloc[1]["tracking error RMS, worst axis (°)"] == DASH
    assert frame.iloc[0]["held-out MNE (%)"] == pytest.approx(3.0)
    table = view.drive_mode_table(records)
    assert table.name == "tab-other-arms-drive-modes"
    assert "this book" not in " ".join(map(str, table.frame.columns))
