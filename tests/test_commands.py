"""Command files (Appendix B-B): format, checks, interpolation by the 4-1-4 profile."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.constants import VELOCITY_CEILING_DEG_S
from crane_lib.errors import InputError
from crane_lib.excitation.commands import (
    ACCEL_TIME_S,
    FINAL_DWELL_S,
    HEADER_LINES,
    CommandFile,
    format_command_file,
    interpolate,
    plan_segments,
    read_command_file,
    segment_statistics,
    write_command_file,
)
from crane_lib.excitation.design import build, build_validation, trajectory_specs
from crane_lib.paper_numbers import paper

CEILING_RAD_S = np.radians(VELOCITY_CEILING_DEG_S)


def _command(rows_deg, speeds, name="T"):
    return CommandFile(
        name, np.radians(np.array(rows_deg, dtype=float)), np.array(speeds, dtype=float)
    )


def _single_move(axis, angle_deg, speed_pct):
    """From q̄A, one axis moves, then q̄0 and its repeat."""
    start = np.array([0, 0, 0, -90, 0, 0, 0, 0], dtype=float)
    target = start.copy()
    target[axis - 1] += angle_deg
    return _command([target, np.zeros(8), np.zeros(8)], [speed_pct, speed_pct, 20.0])


@pytest.fixture(scope="module")
def samples():
    specs = trajectory_specs()
    return {name: build(specs[name]) for name in ("AP01", "AP04", "PB05", "PC01")} | {
        "V03": build_validation("V03")
    }


# ------------------------------------------------------------------ format


def test_header_constants_come_from_the_paper():
    ceilings = [paper("vel_ceiling_axes_1_3to8").value, paper("vel_ceiling_axis2").value] + [
        paper("vel_ceiling_axes_1_3to8").value
    ] * 6
    assert np.allclose(VELOCITY_CEILING_DEG_S, ceilings, atol=5e-4)
    assert np.allclose(ACCEL_TIME_S, [paper(f"accel_time_axis{j}").value for j in range(1, 9)])
    assert FINAL_DWELL_S == paper("final_dwell").value
    assert (
        f"VELOCITY_CEILING_DEG_S {paper('vel_ceiling_axes_1_3to8').value:.3f} "
        f"{paper('vel_ceiling_axis2').value:.3f}" in HEADER_LINES[1]
    )


def test_speed_factor_090_gives_the_papers_peak_velocities():
    assert 0.90 * VELOCITY_CEILING_DEG_S[0] == pytest.approx(
        paper("vel_at_090_axes_1_3to8").value, abs=0.05
    )
    assert 0.90 * VELOCITY_CEILING_DEG_S[1] == pytest.approx(
        paper("vel_at_090_axis2").value, abs=0.05
    )


def test_round_trip_is_exact(tmp_path, samples):
    for name, cmd in samples.items():
        path = write_command_file(tmp_path / f"{name}.txt", cmd)
        back = read_command_file(path)
        assert back.name == name
        assert np.allclose(back.waypoints, cmd.waypoints, atol=np.radians(5e-4))
        assert np.array_equal(back.speed_percent, cmd.speed_percent)
        assert back.comments == cmd.comments
        assert format_command_file(back) == path.read_text(encoding="utf-8")


# ------------------------------------------------------------------ bad input


def _good_text(samples):
    return format_command_file(samples["AP01"])


def _line_of(text, prefix):
    return next(i for i, line in enumerate(text.splitlines(), start=1) if line.startswith(prefix))


def _first_row_line(text):
    return _line_of(text, "WAYPOINTS") + 2  # the column-label comment sits in between


def _replace_line(text, number, new):
    lines = text.splitlines()
    lines[number - 1] = new
    return "\n".join(lines) + "\n"


def _expect_error(tmp_path, text, line):
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_command_file(path)
    assert f"bad.txt:{line}" in str(info.value), str(info.value)
    return str(info.value)


def test_wrong_format_line(tmp_path, samples):
    text = _good_text(samples)
    line = _line_of(text, "FORMAT")
    message = _expect_error(tmp_path, _replace_line(text, line, "FORMAT SOMETHING-ELSE 2"), line)
    assert "FORMAT CRANE-X7-COMMANDS 1" in message


def test_wrong_header_value(tmp_path, samples):
    text = _good_text(samples)
    line = _line_of(text, "ACCEL_TIME_S")
    message = _expect_error(
        tmp_path,
        _replace_line(text, line, "ACCEL_TIME_S 0.40 0.20 0.40 0.40 0.20 0.20 0.20 0.30"),
        line,
    )
    assert "ACCEL_TIME_S" in message


def test_missing_final_dwell(tmp_path, samples):
    text = _good_text(samples)
    dwell = _line_of(text, "FINAL_DWELL_S")
    lines = text.splitlines()
    del lines[dwell - 1]
    message = _expect_error(tmp_path, "\n".join(lines) + "\n", dwell)  # WAYPOINTS now sits there
    assert "FINAL_DWELL_S" in message


def test_wrong_number_of_fields(tmp_path, samples):
    text = _good_text(samples)
    line = _first_row_line(text)
    _expect_error(tmp_path, _replace_line(text, line, "60 60 0 0 0 0 0 75"), line)


def test_non_numeric_field(tmp_path, samples):
    text = _good_text(samples)
    line = _first_row_line(text) + 1
    message = _expect_error(tmp_path, _replace_line(text, line, "0 0 0 0 zero 0 0 0 75"), line)
    assert "zero" in message


def test_angle_outside_joint_limits(tmp_path, samples):
    text = _good_text(samples)
    line = _first_row_line(text) + 2
    message = _expect_error(
        tmp_path, _replace_line(text, line, "0 0 0 10 0 0 0 0 75"), line
    )  # axis 4 <= 0.001°
    assert "axis 4" in message


@pytest.mark.parametrize("speed", ["0", "-5", "100.5"])
def test_speed_factor_out_of_range(tmp_path, samples, speed):
    text = _good_text(samples)
    line = _first_row_line(text)
    message = _expect_error(tmp_path, _replace_line(text, line, f"60 60 0 0 0 0 0 0 {speed}"), line)
    assert "speed factor" in message


def test_missing_final_q0_row(tmp_path, samples):
    text = _good_text(samples)
    lines = text.splitlines()[:-1]  # drop the repeated q̄0 row
    count = _line_of(text, "WAYPOINTS")
    lines[count - 1] = f"WAYPOINTS {samples['AP01'].n_waypoints - 1}"
    # the last row is now the q̄0 row at 90 %, and the row before it is not q̄0
    message = _expect_error(tmp_path, "\n".join(lines) + "\n", len(lines))
    assert "q̄0" in message


def test_row_count_must_match_declaration(tmp_path, samples):
    text = _good_text(samples)
    lines = text.splitlines()
    lines.insert(_first_row_line(text) - 1, "60 60 0 0 0 0 0 0 75")
    _expect_error(tmp_path, "\n".join(lines) + "\n", len(lines))


def test_failed_write_leaves_no_file(tmp_path, samples):
    cmd = samples["AP01"]
    bad = CommandFile("bad", cmd.waypoints.copy(), cmd.speed_percent.copy())
    bad.waypoints[0, 3] = np.radians(30.0)  # axis 4 beyond its upper limit
    target = tmp_path / "bad.txt"
    with pytest.raises(InputError) as info:
        write_command_file(target, bad)
    assert "bad.txt" in str(info.value) and "waypoint 1" in str(info.value)
    assert list(tmp_path.iterdir()) == []
    # an existing good file survives a failed overwrite untouched
    write_command_file(target, cmd)
    before = target.read_bytes()
    with pytest.raises(InputError):
        write_command_file(target, bad)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]


# ------------------------------------------------------------------ the 4-1-4 profile


def test_long_move_keeps_the_nominal_ramp():
    # axis 2 at 100 %: 60° > v·ta = 35.2°, so the ramp is the nominal 0.20 s
    plan = plan_segments(_single_move(2, 60.0, 100.0))[0]
    v = CEILING_RAD_S[1]
    assert plan.ramp == pytest.approx(ACCEL_TIME_S[1])
    assert plan.duration == pytest.approx(np.radians(60.0) / v + ACCEL_TIME_S[1])


def test_short_move_shortens_the_ramp():
    # axis 1 at 100 %: 60° < v·ta = 109.9°, ramp sqrt(D·ta/v), no cruise
    plan = plan_segments(_single_move(1, 60.0, 100.0))[0]
    expected = np.sqrt(np.radians(60.0) * ACCEL_TIME_S[0] / CEILING_RAD_S[0])
    assert plan.ramp == pytest.approx(expected)
    assert plan.duration == pytest.approx(2 * expected)
    ref = interpolate(_single_move(1, 60.0, 100.0), dt=1e-4)
    assert np.abs(ref.qd[:, 0]).max() < CEILING_RAD_S[0]  # the peak is never reached


def test_each_axis_runs_its_own_profile_and_the_slowest_ends_the_segment():
    cmd = _command([[30, 60, 0, -90, 0, 0, 0, 0], np.zeros(8), np.zeros(8)], [50.0, 50.0, 20.0])
    plan = plan_segments(cmd)[0]
    ref = interpolate(cmd, dt=1e-4)
    # axis 2 (lower ceiling, longer travel) is the slowest: it ends the segment at its peak 0.5 x
    # ceiling
    v2 = 0.5 * CEILING_RAD_S[1]
    assert plan.duration == pytest.approx(np.radians(60.0) / v2 + ACCEL_TIME_S[1])
    assert plan.axis_ramp[1] == pytest.approx(ACCEL_TIME_S[1])
    assert np.abs(ref.qd[:, 1]).max() == pytest.approx(v2, rel=1e-3)
    # axis 1 moves 30° < v·ta: its own shortened ramp, no cruise, it arrives first and holds
    v1 = 0.5 * CEILING_RAD_S[0]
    r1 = np.sqrt(np.radians(30.0) * ACCEL_TIME_S[0] / v1)
    assert plan.axis_ramp[0] == pytest.approx(r1)
    assert plan.axis_duration[0] == pytest.approx(2 * r1)
    assert plan.ramp == pytest.approx(r1)  # the longest ramp of the segment
    held = (ref.t > plan.start_time + 2 * r1 + 1e-3) & (ref.t < plan.end_time)
    assert np.allclose(ref.q[held, 0], np.radians(30.0)) and np.allclose(ref.qd[held, 0], 0.0)
    # both start together
    early = (ref.t > 0) & (ref.t < 0.05)
    assert np.all(np.abs(ref.qd[early][:, :2]) > 0)


@pytest.mark.parametrize("name", ["AP01", "AP04", "PB05", "PC01", "V03"])
def test_interpolated_reference_properties(samples, name):
    cmd = samples[name]
    dt = 1e-3
    ref = interpolate(cmd, dt)
    plans = plan_segments(cmd)
    # segment boundaries are returned and contiguous
    assert np.allclose(ref.segment_start[1:], ref.segment_end[:-1])
    assert ref.t[-1] == pytest.approx(ref.segment_end[-1] + FINAL_DWELL_S, abs=dt)
    # positions hit every waypoint at the end of its segment
    for plan in plans:
        k = int(round(plan.end_time / dt))
        t_end = k * dt
        tol = (
            np.abs(plan.target - plan.start) * 0
            + 1e-9
            + (np.abs(ref.qd[k]) * abs(t_end - plan.end_time))
        )
        assert np.all(np.abs(ref.q[k] - plan.target) <= tol + 1e-6)
    assert np.allclose(ref.q[-1], 0.0)
    # velocity never exceeds factor x ceiling of its segment
    for plan in plans:
        inside = (ref.t >= plan.start_time) & (ref.t <= plan.end_time)
        limit = plan.speed_fraction * CEILING_RAD_S * (1 + 1e-9)
        assert np.all(np.abs(ref.qd[inside]) <= limit)
        # acceleration bounded by the quartic ramp's 1.5 x mean ramp acceleration
        assert np.all(
            np.abs(ref.qdd[inside])
            <= 1.5 * plan.speed_fraction * CEILING_RAD_S / ACCEL_TIME_S * (1 + 1e-9)
        )
    # continuity: position and velocity change by at most one step of their derivative bound
    assert np.all(np.abs(np.diff(ref.q, axis=0)) <= CEILING_RAD_S * dt * 1.0001)
    assert np.all(
        np.abs(np.diff(ref.qd, axis=0)) <= 1.5 * CEILING_RAD_S / ACCEL_TIME_S * dt * 1.0001
    )
    # the velocity integrates to the position (the three references are consistent)
    assert np.allclose(
        ref.q[0] + np.cumsum(ref.qd[:-1] + ref.qd[1:], axis=0) * dt / 2, ref.q[1:], atol=2e-4
    )


def test_segment_statistics_of_a_known_file():
    cmd = _command(
        [[30, 60, 0, -90, 0, 0, 0, 0], [0, 0, 0, -90, 0, 0, 0, 0], np.zeros(8), np.zeros(8)],
        [50, 50, 50, 20],
    )
    stats = segment_statistics(cmd)
    assert stats.n_segments == 4
    assert list(stats.segments.n_moving_arm_joints) == [2, 2, 1, 0]
    assert stats.segments.moving_arm_joints[0] == (1, 2)
    assert stats.segments.moving_arm_joints[2] == (4,)
    assert stats.segments.duration_s.iloc[3] == 0.0
    assert len(stats.ramps_s) == 10  # two ramps per moving axis and segment: 2 x (2 + 2 + 1)
    assert stats.commanded_duration_s == pytest.approx(
        stats.segments.duration_s.sum() + FINAL_DWELL_S
    )
    # samples per ramp: floor(r / Ts); axis 2's 0.200 s ramps span 20 intervals at 10 ms, 2 at 80 ms
    assert stats.ramp_samples(0.010).min() == 20
    assert stats.ramp_samples(0.080).min() == 2
    assert stats.share_of_ramps_below(0.040) == 0.0
