"""The realization controller (2): the formula, the rounding and the clamp, the constants file."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crane_lib.constants import ACTUATORS, CURRENT_UNIT_A, N_AXES, REALIZATION_KP
from crane_lib.errors import InputError
from crane_lib.model.controller import (
    CURRENT_LIMIT_UNITS,
    K_I,
    K_V,
    KT_CATALOGUE,
    OUT_CLAMPED,
    OUT_FEEDBACK,
    OUT_FEEDFORWARD,
    OUT_GOAL_UNITS,
    OUT_ROWS,
    OUT_VELOCITY,
    JointModel,
    RealizationConstants,
    RealizationController,
    format_realization_constants,
    load_realization_constants,
    realization_law,
    velocity_loop_gain,
)
from crane_lib.paper_numbers import paper


def _constants(gain=20.0, time_constant=0.2):
    models = tuple(
        JointModel(gain * (1 + 0.1 * j), time_constant * (1 + 0.05 * j), 1e-3)
        for j in range(N_AXES)
    )
    return RealizationConstants(models, ("test",) * N_AXES)


def test_law_against_hand_computation():
    constants = _constants()
    theta_ref = np.linspace(-0.3, 0.4, N_AXES)
    dtheta_ref = np.linspace(0.5, -0.2, N_AXES)
    ddtheta_ref = np.linspace(-3.0, 2.0, N_AXES)
    theta_previous = theta_ref - 0.01
    theta = theta_ref - 0.008
    dt = 1.1e-3
    integral = np.linspace(-1e-4, 1e-4, N_AXES)
    start_integral = integral.copy()
    out = np.zeros((OUT_ROWS, N_AXES))
    realization_law(
        theta_ref,
        dtheta_ref,
        ddtheta_ref,
        theta,
        theta_previous,
        dt,
        integral,
        *constants.law_arguments(),
        out,
    )
    for j in range(N_AXES):
        m_hat = constants.models[j].time_constant / constants.models[j].gain
        d_hat = 1.0 / constants.models[j].time_constant
        velocity = (theta[j] - theta_previous[j]) / dt
        error = theta_ref[j] - theta[j]
        integral_j = start_integral[j] + error * dt
        feedforward = m_hat * (ddtheta_ref[j] + d_hat * dtheta_ref[j])
        feedback = m_hat * (
            K_V * (dtheta_ref[j] - velocity) + REALIZATION_KP * error + K_I * integral_j
        )
        units = round((feedforward + feedback) / KT_CATALOGUE[j] / CURRENT_UNIT_A)
        assert out[OUT_VELOCITY, j] == pytest.approx(velocity, rel=1e-12)
        assert out[OUT_FEEDFORWARD, j] == pytest.approx(feedforward, rel=1e-12)
        assert out[OUT_FEEDBACK, j] == pytest.approx(feedback, rel=1e-12)
        assert out[OUT_GOAL_UNITS, j] == units and abs(units) < CURRENT_LIMIT_UNITS[j]
        assert out[OUT_CLAMPED, j] == 0.0
        assert integral[j] == pytest.approx(integral_j, rel=1e-12)


def test_velocity_feedforward_sits_inside_the_bracket():
    """Torque-level velocity feedforward is M̂ D̂ θ̇ref = θ̇ref / K_p (III-B), not D̂ θ̇ref."""
    constants = _constants(gain=37.1, time_constant=0.136)
    out = np.zeros((OUT_ROWS, N_AXES))
    zero = np.zeros(N_AXES)
    realization_law(
        zero,
        np.ones(N_AXES),
        zero,
        zero,
        zero,
        1e-3,
        np.zeros(N_AXES),
        *constants.law_arguments(),
        out,
    )
    expected = (
        1.0 / np.array([m.gain for m in constants.models]) + constants.m_hat * K_V
    )  # feedforward + K_V (θ̇ref - 0)
    np.testing.assert_allclose(
        out[OUT_FEEDFORWARD], 1.0 / np.array([m.gain for m in constants.models]), rtol=1e-12
    )
    np.testing.assert_allclose(out[OUT_FEEDFORWARD] + out[OUT_FEEDBACK], expected, rtol=1e-12)


def test_clamp_and_anti_windup():
    constants = _constants()
    out = np.zeros((OUT_ROWS, N_AXES))
    zero = np.zeros(N_AXES)
    error = np.full(N_AXES, 10.0)  # 10 rad behind: far beyond what the current limit can push
    integral = np.zeros(N_AXES)
    realization_law(error, zero, zero, zero, zero, 1e-3, integral, *constants.law_arguments(), out)
    np.testing.assert_array_equal(out[OUT_GOAL_UNITS], CURRENT_LIMIT_UNITS.astype(float))
    np.testing.assert_array_equal(out[OUT_CLAMPED], np.ones(N_AXES))
    np.testing.assert_array_equal(integral, zero)  # not integrated while saturated toward the error
    realization_law(-error, zero, zero, zero, zero, 1e-3, integral, *constants.law_arguments(), out)
    np.testing.assert_array_equal(out[OUT_GOAL_UNITS], -CURRENT_LIMIT_UNITS.astype(float))
    # the limits are the actuators' current limits: 7.4385 / 17.2445 N·m with the logged Kt (D-F)
    limits_logged = CURRENT_LIMIT_UNITS * CURRENT_UNIT_A * np.array([a.kt for a in ACTUATORS])
    assert limits_logged[0] == pytest.approx(paper("clamp_torque_xm430").value, rel=1e-4)
    assert limits_logged[1] == pytest.approx(paper("clamp_torque_xm540").value, rel=1e-4)


def test_wrapper_keeps_state():
    controller = RealizationController(_constants())
    zero = np.zeros(N_AXES)
    controller.step(zero, zero, zero, np.full(N_AXES, -0.001), 1e-3)
    controller.step(zero, zero, zero, np.full(N_AXES, -0.002), 1e-3)
    np.testing.assert_allclose(controller.out[OUT_VELOCITY], -1.0)  # (-0.002 - -0.001) / 1 ms
    np.testing.assert_allclose(controller.integral, 0.003 * 1e-3)


def test_committed_table_xix():
    constants = load_realization_constants()
    joint7 = constants.models[6]
    assert joint7.gain == paper("joint7_gain").value
    assert joint7.time_constant == paper("joint7_time_constant").value
    assert joint7.dead_time == pytest.approx(paper("joint7_dead_time").value * 1e-3)
    assert "paper" in constants.sources[6]
    assert all("twin" in s for j, s in enumerate(constants.sources) if j != 6)
    assert K_V == pytest.approx(2 * math.sqrt(REALIZATION_KP))


def test_bad_constants_file_names_the_line(tmp_path):
    text = format_realization_constants(_constants().models, ("x",) * N_AXES, "comment")
    lines = text.splitlines()
    lines[3] = lines[3].replace(
        lines[3].split(",")[3], "-0.5", 1
    )  # negative time constant on axis 2
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"bad.csv:4"):
        load_realization_constants(path)
    with pytest.raises(InputError, match="no such file"):
        load_realization_constants(tmp_path / "missing.csv")


def test_velocity_loop_gain_is_T_KV_Mhat_over_M_on_one_axis_and_its_eigenvalues_on_several():
    """One axis: g = T K_V M̂ s / M. Two coupled axes: the spectral radius of T K_V M^-1
    diag(M̂ s), which the coupling raises above either axis's own ratio; M scaled by k divides
    g by k."""
    from crane_lib.constants import CONTROL_PERIOD_S

    one = velocity_loop_gain(np.array([[[0.02]]]), [0.05], K_V, 1.3)
    assert one == pytest.approx([CONTROL_PERIOD_S * K_V * 0.05 * 1.3 / 0.02], rel=1e-12)
    inertia = np.array([[0.04, 0.03], [0.03, 0.05]])
    m_hat = np.array([0.08, 0.02])
    loop = CONTROL_PERIOD_S * K_V * np.linalg.inv(inertia) @ np.diag(m_hat)
    expected = np.abs(np.linalg.eigvals(loop))
    assert velocity_loop_gain(inertia, m_hat, K_V) == pytest.approx(expected.max(), rel=1e-12)
    own = CONTROL_PERIOD_S * K_V * m_hat / np.diag(inertia)
    assert velocity_loop_gain(inertia, m_hat, K_V) > own.max()
    poses = np.stack([inertia, 2.0 * inertia])
    gains = velocity_loop_gain(poses, m_hat, K_V)
    assert gains.shape == (2,) and gains[1] == pytest.approx(gains[0] / 2.0, rel=1e-12)
