"""The servo's own position loop (position mode) and the joint torque it makes.

An arm in position mode (`arm.toml` `drive_mode = "position"`, the SO-101; the ViperX 300 S as
Interbotix ships it) is driven by goal positions: each servo closes its own loop on its own
encoder and drives its motor with a PWM duty; the host reads back the current the motor draws.
`position_loop_law` is that loop, one function for the twin, CLIE's closed-loop simulation and
the bus emulators; `duty_torque` turns its duty into the torque the joint receives.

Per axis j, every servo tick of period T (the loop's state: the profile's position p and
velocity v, the error sum Σ, the previous error e⁻):

    profile   v ← v + clamp(v* - v, ±a_max T),  v* = sgn(g - p) min(v_max, v_b(x), x/T),
              p ← p + v T,  v_b(x) = sqrt((a_max T / 2)² + 2 a_max x) - a_max T / 2,
              x = |g - p|
    error     e = p - θ                      (θ: the servo's encoder angle)
    duty      d = clamp(K_P e + K_I T Σ' + K_D (e - e⁻)/T, ±d_max),  Σ' = Σ + e

v_b is the speed from which a braking at a_max, in whole ticks, ends on the goal g: the
profile's trapezoid (the DYNAMIXEL's velocity-based profile; the STS's Acceleration register)
re-planned at every tick, so a goal streamed at 1 kHz is followed with the profile's lag. A
limit of 0 in the registers means none (v_max, a_max infinite here). Σ is not advanced on a tick
whose duty is clamped toward its error (anti-windup, as `controller.realization_law`).

Motor (the duty d switches the supply V across the winding, R i = d V - k_e ω, ω the rotor speed
at the link side):

    i = i_stall (d - ω/ω_nl),   τ = kt · i           (R = V/i_stall, k_e = V/ω_nl)

with the datasheet's stall current and no-load speed at V (`twin.truth.motor_line`, the same
torque-speed line as the current-mode twin's supply limit), kt the axis's torque constant (all
its servos). The current the servo reports is i.

The gains are the servo's registers, scaled by its firmware (`FIRMWARE_SCALES`):

* ``dynamixel_x`` (ROBOTIS e-Manual, X series, Position Controller diagram): the PID works in
  pulses (4096 per turn) and PWM units (885 = 100 % duty): KPP = P/128, KPI = I/65536,
  KPD = D/16. Per tick the duty is (KPP e + KPI Σe + KPD Δe)/885 with e in pulses, so
  K_P = (P/128)(4096/2π)/885 duty/rad, K_I = (I/65536)(4096/2π)/885/T, K_D = (D/16)(4096/2π)
  /885·T. The feed-forward gains (FF1, FF2) are 0 by default and not modelled.
* ``feetech_sts`` (Feetech STS memory table: P_Coefficient(21), D_Coefficient(22),
  I_Coefficient(23)): Feetech publishes no scale. Rhoban's BAM (Duclusaud & Passault, an
  oscilloscope measurement on STS3215 servos) gives duty = P · 0.166 · e(rad): K_P =
  0.166 P duty/rad. I and D take the DYNAMIXEL's ratios to P (KPI/KPP = 1/512 per tick,
  KPD/KPP = 8 per tick): a choice, book/register_twin.md.

Every magnitude and its source: book/register_twin.md ("The servo's position loop").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from crane_lib.errors import InputError

DRIVE_MODES = ("current", "position")
FIRMWARES = ("dynamixel_x", "feetech_sts")
ENCODER_PULSES_PER_RAD = 4096 / (2.0 * math.pi)
DYNAMIXEL_PWM_FULL = 885.0  # PWM Limit(36) maximum: 100 % duty
# BAM (Rhoban), bam/feetech/sts3215.py: "error_gain = 0.166": duty per rad of error per unit of
# the firmware's P, determined with an oscilloscope on STS3215 servos
STS_DUTY_PER_RAD_PER_P = 0.166


@dataclass(frozen=True)
class FirmwareScale:
    """Duty per register unit: K_P = p·P (duty/rad), K_I = i·I/T (duty/(rad·s)), K_D = d·D·T
    (duty·s/rad), T the loop's period; the register's largest value."""

    p: float
    i: float
    d: float
    register_max: int


_DX = ENCODER_PULSES_PER_RAD / DYNAMIXEL_PWM_FULL
FIRMWARE_SCALES = {
    "dynamixel_x": FirmwareScale(_DX / 128.0, _DX / 65536.0, _DX / 16.0, 16383),
    "feetech_sts": FirmwareScale(
        STS_DUTY_PER_RAD_PER_P,
        STS_DUTY_PER_RAD_PER_P * 128.0 / 65536.0,  # the DYNAMIXEL's KPI/KPP
        STS_DUTY_PER_RAD_PER_P * 128.0 / 16.0,  # the DYNAMIXEL's KPD/KPP
        254,
    ),
}

# rows of `gains` (per axis)
G_KP, G_KI, G_KD, G_DUTY_LIMIT, G_VELOCITY, G_ACCELERATION = range(6)
G_ROWS = 6
# rows of `state` (per axis)
S_POSITION, S_VELOCITY, S_SUM, S_ERROR = range(4)
S_ROWS = 4
# rows of `out` (per axis)
O_DUTY, O_ERROR, O_SATURATED = range(3)
O_ROWS = 3


@dataclass(frozen=True)
class PositionLoopSettings:
    """arm.toml's [position_loop]: the servo registers of every axis (SI where not a register)."""

    firmware: str  # a key of FIRMWARE_SCALES
    p_gain: int
    i_gain: int
    d_gain: int
    pwm_limit: float  # largest duty, a fraction of the supply
    profile_velocity: float  # rad/s, 0: none
    profile_acceleration: float  # rad/s^2, 0: none
    period: float  # s, the servo loop's tick
    source: str = ""

    def gains(self, n_axes: int) -> np.ndarray:
        """(G_ROWS, n_axes) SI gains of `position_loop_law`: K_P, K_I, K_D, d_max, v_max, a_max."""
        scale = FIRMWARE_SCALES[self.firmware]
        column = [
            scale.p * self.p_gain,
            scale.i * self.i_gain / self.period,
            scale.d * self.d_gain * self.period,
            self.pwm_limit,
            self.profile_velocity if self.profile_velocity > 0 else math.inf,
            self.profile_acceleration if self.profile_acceleration > 0 else math.inf,
        ]
        return np.ascontiguousarray(np.repeat(np.array(column)[:, None], n_axes, axis=1))


@numba.njit(cache=True)
def braking_speed(distance, acceleration, period):
    """Speed (rad/s) from which braking at `acceleration` in whole ticks of `period` stops after
    `distance` (rad): sqrt((a T/2)² + 2 a x) - a T/2 (x/T for an infinite a)."""
    if acceleration == math.inf:
        return distance / period
    half = 0.5 * acceleration * period
    return math.sqrt(half * half + 2.0 * acceleration * distance) - half


@numba.njit(cache=True)
def position_loop_law(goal, theta, period, state, gains, out):
    """One tick of every axis's servo position loop (the module docstring's equations).

    goal: goal positions (rad); theta: the servos' encoder angles (rad); period: the tick (s);
    state (S_ROWS, n): profile position, profile velocity, error sum, previous error, updated in
    place; gains (G_ROWS, n): K_P, K_I, K_D, duty limit, profile velocity and acceleration
    (inf: none). out (O_ROWS, n): duty (fraction of the supply, clamped), error (rad), 1.0
    where the duty was clamped."""
    for j in range(theta.shape[0]):
        v_max = gains[G_VELOCITY, j]
        a_max = gains[G_ACCELERATION, j]
        remaining = goal[j] - state[S_POSITION, j]
        if v_max == math.inf and a_max == math.inf:
            state[S_VELOCITY, j] = remaining / period
            state[S_POSITION, j] = goal[j]
        else:
            distance = abs(remaining)  # the last tick lands on the goal, not past it
            speed = min(v_max, braking_speed(distance, a_max, period), distance / period)
            target = math.copysign(speed, remaining)
            change = target - state[S_VELOCITY, j]
            if a_max != math.inf:
                step = a_max * period
                change = min(max(change, -step), step)
            state[S_VELOCITY, j] += change
            state[S_POSITION, j] += state[S_VELOCITY, j] * period
        error = state[S_POSITION, j] - theta[j]
        total = state[S_SUM, j] + error
        requested = (
            gains[G_KP, j] * error
            + gains[G_KI, j] * period * total
            + gains[G_KD, j] * (error - state[S_ERROR, j]) / period
        )
        limit = gains[G_DUTY_LIMIT, j]
        duty = min(max(requested, -limit), limit)
        saturated = 1.0 if duty != requested else 0.0
        if not (saturated == 1.0 and error * requested > 0.0):
            state[S_SUM, j] = total
        state[S_ERROR, j] = error
        out[O_DUTY, j] = duty
        out[O_ERROR, j] = error
        out[O_SATURATED, j] = saturated


@numba.njit(cache=True)
def duty_current(duty, speed, stall_current, no_load_speed):
    """Winding current (A, one servo) under the PWM `duty` at rotor speed `speed` (rad/s, link
    side): (d V - k_e ω)/R = i_stall (d - ω/ω_nl)."""
    return stall_current * (duty - speed / no_load_speed)


@numba.njit(cache=True)
def duty_torque(duty, speed, kt, stall_current, no_load_speed):
    """Joint torque (N·m) of the duty: kt (all servos of the axis) times `duty_current`."""
    return kt * duty_current(duty, speed, stall_current, no_load_speed)


def initial_state(goal, theta) -> np.ndarray:
    """The loop's state holding `goal` at rest with the servo at `theta`: profile at the goal,
    no error sum, the previous error the present one (no derivative kick)."""
    goal = np.asarray(goal, dtype=float)
    state = np.zeros((S_ROWS, goal.size))
    state[S_POSITION] = goal
    state[S_ERROR] = goal - np.asarray(theta, dtype=float)
    return state


class PositionLoop:
    """Stateful wrapper of `position_loop_law` for Python callers (emulators, tests)."""

    def __init__(self, settings: PositionLoopSettings, n_axes: int):
        self.settings = settings
        self.gains = settings.gains(n_axes)
        self.state = np.zeros((S_ROWS, n_axes))
        self.out = np.zeros((O_ROWS, n_axes))

    def reset(self, goal, theta) -> None:
        """Hold `goal` from rest with the servos at `theta` (rad)."""
        self.state = initial_state(goal, theta)

    def step(self, goal, theta) -> np.ndarray:
        """The duty of every axis for this tick; `self.out` holds the error and saturation."""
        position_loop_law(
            np.asarray(goal, dtype=float),
            np.asarray(theta, dtype=float),
            float(self.settings.period),
            self.state,
            self.gains,
            self.out,
        )
        return self.out[O_DUTY].copy()


def check_drive_mode(mode: str, where: str = "drive mode") -> str:
    """`mode` if it is one of DRIVE_MODES, else an InputError."""
    if mode not in DRIVE_MODES:
        raise InputError(where, repr(mode), f"one of {', '.join(DRIVE_MODES)}")
    return mode
