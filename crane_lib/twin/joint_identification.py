"""Joint-level identification of Sec. III-B on the twin: model (1) per axis, and our Table XIX.

Per axis, an open-loop record at the Fig. 1 posture (θ4 = -90°, others 0):

* the other seven axes are locked (held rigidly in the twin; on the arm their own position
  loops would hold them), so the record shows the one joint (1) describes;
* the input is a current: a square wave (two periods of ±A, 0.5 s per level: it fixes the
  behaviour down to DC), then a PRBS of 2047 one-millisecond bits (order-11 maximal-length
  sequence, 2.047 s: informative from 1/2.047 s = 0.49 Hz upward, the "about 2 s ... from
  roughly 0.5 Hz" of III-B); amplitudes 1 % (square wave) and 10 % (PRBS) of the axis current
  limit: the square wave must stay within the joint range, while a 1 ms PRBS bit must move
  the differenced velocity by more than the 12-bit encoder's 1.5 rad/s step;
* on top of it, the current that holds the joint against gravity at the measured angle, so
  the hanging arm does not swing as a pendulum: the gravity torque of the manufacturer's
  description (the prior a practitioner has) scaled to the holding current measured at the
  posture beforehand (a short position hold by the realization law, its M̂ from the prior).
  The prior alone, converted by the logged Kt, would be off by the true Kt's ±10 %, enough
  to make the hanging joint an inverted pendulum or to let it sag out of its range; the
  measured hold removes that. The fit's input is the excitation alone;
* the output is the velocity by encoder differencing over the measured read interval.

Model (1), K_p e^(-T_d s)/(T_p1 s + 1), is fitted by scipy least_squares on its simulated
response (the paper used MATLAB procest): the input torque is the excitation current times the
*catalogue* Kt, as in the paper; the response is the exact zero-order-hold discretization with
a fractional dead time. For Joint 7 a fourth-order ARX model is fitted to the same record by
linear least squares and compared in the frequency domain (Fig. 3): dead time and the
drivetrain resonance near 100 Hz.

``python -m crane_lib.twin.joint_identification`` runs all eight axes, writes
`data/realization_constants.csv` (our Table XIX: Joint 7 from the paper, the others fitted on
the twin) and prints the comparison.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, signal

from crane_lib.constants import ACTUATORS, CONTROL_PERIOD_S, CURRENT_UNIT_A, N_AXES
from crane_lib.model.controller import (
    K_I,
    K_P,
    K_V,
    KT_CATALOGUE,
    REALIZATION_CONSTANTS_CSV,
    JointModel,
    RealizationConstants,
    RealizationController,
    load_realization_constants,
    write_realization_constants,
)
from crane_lib.model.dynamics import model
from crane_lib.model.robot_description import description_standard_parameters
from crane_lib.paper_numbers import paper
from crane_lib.twin import recorder as twin
from crane_lib.twin.truth import FIG1_POSTURE, load_plant_settings, load_truth

JOINT_ID_SEED = 31  # seed of axis j's record: JOINT_ID_SEED * 100 + j
SQUARE_AMPLITUDE_FRACTION = 0.01  # of the current limit: a few rad/s within half a second
PRBS_AMPLITUDE_FRACTION = (
    0.10  # larger: 1 ms bits must move the velocity against the encoder's 1.5 rad/s step
)
SQUARE_LEVEL_S = 0.5
SQUARE_PERIODS = 2
PRBS_ORDER = 11  # 2^11 - 1 = 2047 bits
PRBS_BIT_S = 1e-3
REST_BEFORE_S = 0.3  # gravity hold only, before the excitation
REST_AFTER_S = 0.2
HOLD_MEASURE_S = (1.0, 0.5)  # static hold before the record: settle, then average the current over
HOLD_BANDWIDTH_HZ = 2.0  # the stiffness of that hold loop
MIN_GRAVITY_UNITS = (
    2.0  # below this prior gravity current (register units) the hold is not rescaled
)
ARX_ORDER = int(paper("arx_order").value)
PAPER_AXIS = 7  # Table XIX row taken from the paper (III-B)


def prbs(order: int = PRBS_ORDER) -> np.ndarray:
    """Maximal-length ±1 sequence of 2^order - 1 bits (Fibonacci LFSR, taps of x^11 + x^9 + 1)."""
    taps = {11: (11, 9), 10: (10, 7), 9: (9, 5), 7: (7, 6)}[order]
    state = [1] * order
    bits = np.empty(2**order - 1)
    for i in range(len(bits)):
        bits[i] = 1.0 if state[-1] else -1.0
        feedback = state[taps[0] - 1] ^ state[taps[1] - 1]
        state = [feedback] + state[:-1]
    return bits


def excitation_units(axis: int) -> np.ndarray:
    """Excitation current of one axis per 1 ms cycle, in register units (before rounding)."""
    limit = ACTUATORS[axis - 1].current_limit_units
    period = CONTROL_PERIOD_S
    level = int(round(SQUARE_LEVEL_S / period))
    square = (
        SQUARE_AMPLITUDE_FRACTION
        * limit
        * np.concatenate(
            [np.full(level, sign) for _ in range(SQUARE_PERIODS) for sign in (1.0, -1.0)]
        )
    )
    bits = PRBS_AMPLITUDE_FRACTION * limit * np.repeat(prbs(), int(round(PRBS_BIT_S / period)))
    rest_before = np.zeros(int(round(REST_BEFORE_S / period)))
    rest_after = np.zeros(int(round(REST_AFTER_S / period)))
    return np.concatenate([rest_before, square, bits, rest_after])


@dataclass(frozen=True)
class JointRecord:
    axis: int
    t: np.ndarray  # (n,) read times, s
    theta: np.ndarray  # (n,) measured angle of the axis, rad
    velocity: np.ndarray  # (n,) encoder difference / read interval, rad/s (0 at the first sample)
    input_torque: np.ndarray  # (n,) excitation current x catalogue Kt, N·m
    command_units: np.ndarray  # (n,) goal current sent (excitation + gravity hold), register units

    @property
    def period(self) -> float:
        """The record's median sample period (s)."""
        return float(np.median(np.diff(self.t)))


def record_joint(
    axis: int, seed: int | None = None, truth=None, plant_settings=None
) -> JointRecord:
    """Open-loop record of one axis on the twin at the Fig. 1 posture, the others locked."""
    core = twin._core()
    seed = JOINT_ID_SEED * 100 + axis if seed is None else seed
    rng = np.random.default_rng(seed)
    truth_set = load_truth() if truth is None else truth
    settings = load_plant_settings() if plant_settings is None else plant_settings
    plant = twin.run_to_run(twin.build_plant(truth_set, settings), rng)
    plant.free = np.zeros(N_AXES)
    plant.free[axis - 1] = 1.0
    excitation = np.zeros((len(excitation_units(axis)), N_AXES))
    excitation[:, axis - 1] = excitation_units(axis)
    n = len(excitation)
    # the prior for the gravity hold: the description's links (no drive parameters)
    prior = dict(truth_set.as_dict())
    for j in range(1, N_AXES + 1):
        for kind in ("IA", "FV", "FS"):
            prior[f"{kind}{j}"] = 0.0
    prior.update(description_standard_parameters())
    beta_prior = model("full").base_from_standard(prior).values
    hold_scale = _gravity_hold_scale(axis, plant, beta_prior, settings.kt_logged[axis - 1])
    x = twin.initial_state(FIG1_POSTURE.copy())
    si = np.zeros(core.SI_SIZE, dtype=np.int64)
    sf = np.zeros(core.SF_SIZE)
    sf[core.F_SWITCH] = -1.0
    sf[core.F_LAST_APPLY] = -1.0
    out_t = np.zeros(n)
    out_theta = np.zeros((n, N_AXES))
    out_units = np.zeros((n, N_AXES))
    limits = np.array([a.current_limit_units for a in ACTUATORS], dtype=float)
    completed = core.run_open_loop(
        excitation,
        out_t,
        out_theta,
        out_units,
        x,
        si,
        sf,
        np.zeros(N_AXES),
        np.zeros(N_AXES),
        *plant.core_arguments(),
        twin.timing_array(),
        twin.noise_array(),
        rng,
        hold_scale * beta_prior,
        np.array(settings.kt_logged, dtype=float),
        limits,
        CURRENT_UNIT_A,
    )
    if si[core.S_NOT_PD]:
        raise twin.PlantNotPositiveDefinite(
            f"joint record of axis {axis}: the plant's inertia matrix is not positive definite at "
            f"cycle {completed}"
        )
    theta = out_theta[:, axis - 1]
    velocity = np.zeros(n)
    velocity[1:] = np.diff(theta) / np.diff(out_t)
    input_torque = np.rint(excitation[:, axis - 1]) * CURRENT_UNIT_A * KT_CATALOGUE[axis - 1]
    return JointRecord(axis, out_t, theta, velocity, input_torque, out_units[:, axis - 1])


def _gravity_hold_scale(
    axis: int, plant: twin.Plant, beta_prior: np.ndarray, kt_logged: float
) -> float:
    """Measured holding current at the posture over the prior's gravity current (1 if no gravity).

    The hold runs the realization law itself (K_P, K_V, K_I of controller.py scaled to a
    HOLD_BANDWIDTH_HZ loop) with M̂ from the prior: the description's link inertia plus the
    rotor inertia of the truth file (the paper's IA7 scaled by actuator size).
    """
    full = model("full")
    posture = FIG1_POSTURE
    gravity = full.inverse_dynamics(
        posture[None, :], np.zeros((1, N_AXES)), np.zeros((1, N_AXES)), beta_prior
    )[0, axis - 1]
    gravity_units = gravity / kt_logged / CURRENT_UNIT_A
    if abs(gravity_units) < MIN_GRAVITY_UNITS:
        return 1.0
    link_inertia = full.inertia_matrix(posture[None, :], beta_prior)[0, axis - 1, axis - 1]
    inertia_prior = (link_inertia + plant.ia[axis - 1]) / (kt_logged / KT_CATALOGUE[axis - 1])
    scale = (2 * math.pi * HOLD_BANDWIDTH_HZ) / math.sqrt(K_P)
    models = tuple(
        JointModel(1.0 / inertia_prior, 1.0, 0.0) for _ in range(N_AXES)
    )  # M̂ = inertia, D̂ = 1 (unused at rest)
    constants = RealizationConstants(
        models, ("hold",) * N_AXES, K_P * scale**2, K_V * scale, K_I * scale**3
    )
    hold = RealizationController(constants)
    x = twin.initial_state(posture.copy())
    steps = int(round(CONTROL_PERIOD_S / plant.step))
    settle, average = (int(round(t / CONTROL_PERIOD_S)) for t in HOLD_MEASURE_S)
    currents = []
    zero = np.zeros(N_AXES)
    for k in range(settle + average):
        theta = (
            np.round((x[:N_AXES] + math.pi) / twin.ENCODER_RESOLUTION_RAD)
            * twin.ENCODER_RESOLUTION_RAD
            - math.pi
        )
        units = hold.step(posture, zero, zero, theta, CONTROL_PERIOD_S)
        torque = np.zeros(N_AXES)
        torque[axis - 1] = plant.kt_true[axis - 1] * units[axis - 1] * CURRENT_UNIT_A
        twin.integrate(plant, x, torque, steps)
        if k >= settle:
            currents.append(units[axis - 1] * CURRENT_UNIT_A)
    return float(np.mean(currents)) / (gravity / kt_logged)


# ---------------------------------------------------------------- model (1)


def fopdt_response(
    u: np.ndarray, gain: float, time_constant: float, dead_time: float, period: float
) -> np.ndarray:
    """Output of K e^(-T_d s)/(T s + 1) to a zero-order-held input u (one value per period).

    With T_d = (d + f)·period, over one period the delayed input is u[k-d-1] for the first
    f·period and u[k-d] for the rest, which gives the exact recursion
    y[k+1] = a y[k] + K a^(1-f) (1 - a^f) u[k-d-1] + K (1 - a^(1-f)) u[k-d],  a = e^(-period/T).
    """
    delay = dead_time / period
    d = int(math.floor(delay))
    f = delay - d
    a = math.exp(-period / time_constant)
    b_late = gain * (1.0 - a ** (1.0 - f))
    b_early = gain * a ** (1.0 - f) * (1.0 - a**f)
    # y[k] = a y[k-1] + b_late u[k-1-d] + b_early u[k-2-d]
    numerator = np.zeros(d + 3)
    numerator[d + 1] = b_late
    numerator[d + 2] = b_early
    return signal.lfilter(numerator, [1.0, -a], u)


@dataclass(frozen=True)
class JointFit:
    model: JointModel
    fit_percent: float  # 100 (1 - |y - ŷ| / |y - mean y|), the NRMSE fit MATLAB reports
    record: JointRecord


DEAD_TIME_GRID_S = np.arange(0.0, 10.01e-3, 0.25e-3)  # start values for the dead time


def fit_joint_model(record: JointRecord, period: float | None = None) -> JointFit:
    """Least-squares fit of (1) to the record (velocity against catalogue-Kt torque).

    The response is not smooth in T_d where T_d crosses a whole number of periods, so a
    local search can stop there: (K_p, T_p1) are fitted at every T_d of a 0.25 ms grid first,
    and all three are then refined from the best grid point.
    """
    period = record.period if period is None else period
    u, y = record.input_torque, record.velocity
    active = np.abs(u) > 0
    gain0 = max(float(np.sum(y[active] * u[active]) / np.sum(u[active] ** 2)), 1e-3)
    scale = np.array([gain0, 0.1, 1e-3])  # the solver works on O(1) numbers
    lower, upper = np.array([1e-6, 1e-3, 0.0]) / scale, np.array([np.inf, 20.0, 20e-3]) / scale

    def residual(z):
        gain, time_constant, dead_time = z * scale
        return fopdt_response(u, gain, time_constant, dead_time, period) - y

    best = None
    for dead_time in DEAD_TIME_GRID_S:
        z_dead = dead_time / scale[2]
        partial = optimize.least_squares(
            lambda z: residual(np.array([z[0], z[1], z_dead])),
            np.ones(2),
            bounds=(lower[:2], upper[:2]),
            x_scale="jac",
        )
        if best is None or partial.cost < best.cost:
            best = partial
            best_start = np.array([partial.x[0], partial.x[1], z_dead])
    result = optimize.least_squares(residual, best_start, bounds=(lower, upper), x_scale="jac")
    gain, time_constant, dead_time = result.x * scale
    fitted = fopdt_response(u, gain, time_constant, dead_time, period)
    fit = 100.0 * (1.0 - np.linalg.norm(y - fitted) / np.linalg.norm(y - y.mean()))
    return JointFit(
        JointModel(float(gain), float(time_constant), float(dead_time)), float(fit), record
    )


# ---------------------------------------------------------------- ARX comparison (Fig. 3)


@dataclass(frozen=True)
class ArxModel:
    a: np.ndarray  # [1, a1..a_na]
    b: np.ndarray  # [0, b1..b_nb] (one sample of input delay)
    period: float

    def frequency_response(self, frequency_hz: np.ndarray) -> np.ndarray:
        """The ARX model's frequency response at `frequency_hz` (Hz)."""
        z_inv = np.exp(-2j * np.pi * np.asarray(frequency_hz) * self.period)
        powers = z_inv[:, None] ** np.arange(max(len(self.a), len(self.b)))[None, :]
        return (powers[:, : len(self.b)] @ self.b) / (powers[:, : len(self.a)] @ self.a)

    def poles(self) -> tuple[np.ndarray, np.ndarray]:
        """Continuous-equivalent pole frequencies (Hz) and damping ratios of A(z)."""
        roots = np.roots(self.a)
        s = np.log(roots.astype(complex)) / self.period
        return np.abs(s) / (2 * np.pi), -s.real / np.abs(s)


def fit_arx(record: JointRecord, order: int = ARX_ORDER) -> ArxModel:
    """ARX(na = nb = order, nk = 1) by linear least squares on the record."""
    u, y = record.input_torque, record.velocity
    rows = np.arange(order, len(y))
    regressors = np.column_stack(
        [-y[rows - i] for i in range(1, order + 1)] + [u[rows - i] for i in range(1, order + 1)]
    )
    theta, *_ = np.linalg.lstsq(regressors, y[rows], rcond=None)
    return ArxModel(
        np.concatenate([[1.0], theta[:order]]),
        np.concatenate([[0.0], theta[order:]]),
        record.period,
    )


def fopdt_frequency_response(model: JointModel, frequency_hz: np.ndarray) -> np.ndarray:
    """The frequency response of model (1), K_p e^(-T_d s)/(T_p1 s + 1), at `frequency_hz`."""
    w = 2 * np.pi * np.asarray(frequency_hz)
    return model.gain * np.exp(-1j * w * model.dead_time) / (1j * w * model.time_constant + 1.0)


def arx_resonance(arx: ArxModel, minimum_hz: float = 20.0) -> tuple[float, float]:
    """(frequency Hz, damping ratio) of the ARX's complex pole pair above `minimum_hz`, the lightest
    damped."""
    frequency, damping = arx.poles()
    roots = np.roots(arx.a)
    candidates = [
        (z, f, d)
        for z, f, d in zip(roots, frequency, damping)
        if abs(z.imag) > 1e-9 and f > minimum_hz
    ]
    if not candidates:
        return math.nan, math.nan
    _, f, d = min(candidates, key=lambda c: c[2])
    return float(f), float(d)


def prbs_segment(record: JointRecord) -> slice:
    """Samples of the record that hold the PRBS part of the excitation (after the rest and the
    square wave)."""
    period = CONTROL_PERIOD_S
    start = int(round((REST_BEFORE_S + 2 * SQUARE_PERIODS * SQUARE_LEVEL_S) / period))
    return slice(start, start + len(prbs()) * int(round(PRBS_BIT_S / period)))


def empirical_frequency_response(
    record: JointRecord, nperseg: int = 512
) -> tuple[np.ndarray, np.ndarray]:
    """Non-parametric velocity/torque response of the PRBS part: cross spectrum over input spectrum
    (Welch, Hann).

    Unlike the ARX fit it is not biased by the white quantization noise of the differenced
    velocity (that noise is uncorrelated with the input and averages out of the cross spectrum).
    Returns (frequency Hz, complex response (rad/s)/(N·m)).
    """
    part = prbs_segment(record)
    u, y = record.input_torque[part], record.velocity[part]
    fs = 1.0 / record.period
    frequency, p_uu = signal.welch(u, fs=fs, nperseg=nperseg)
    _, p_uy = signal.csd(u, y, fs=fs, nperseg=nperseg)
    keep = frequency > 0
    return frequency[keep], p_uy[keep] / p_uu[keep]


def resonance_peak(
    frequency_hz: np.ndarray, response: np.ndarray, band_hz: tuple[float, float] = (50.0, 200.0)
) -> tuple[float, float]:
    """(frequency Hz, magnitude) of the largest |response| inside band_hz."""
    inside = (frequency_hz >= band_hz[0]) & (frequency_hz <= band_hz[1])
    i = int(np.argmax(np.abs(response[inside])))
    return float(frequency_hz[inside][i]), float(np.abs(response[inside][i]))


# ---------------------------------------------------------------- closed-loop bandwidth


CLOSED_LOOP_SEED = 4700  # seed of the closed-loop bandwidth experiment (plus the axis)
CLOSED_LOOP_AMPLITUDE_RAD = 0.05  # ±: some 30 encoder steps, far below any clamp
CLOSED_LOOP_BIT_S = 0.010  # position-PRBS bit: flat reference spectrum to ~40 Hz
CLOSED_LOOP_ORDER = 10  # 1023 bits per period
CLOSED_LOOP_PERIODS = 4


@dataclass(frozen=True)
class ClosedLoopRecord:
    axis: int
    t: np.ndarray  # (n,) s
    theta_ref: np.ndarray  # (n,) reference of the axis (rad)
    theta: np.ndarray  # (n,) encoder angle of the axis (rad)


def closed_loop_record(
    axis: int = PAPER_AXIS, seed: int | None = None, constants=None
) -> ClosedLoopRecord:
    """Feedback-only step experiment on the twin: the realization law (2) with the integral term,
    θ̇ref = θ̈ref = 0, a position PRBS of ±CLOSED_LOOP_AMPLITUDE_RAD about the Fig. 1 posture.

    The plant is the twin's (rigid-body dynamics, drivetrain compliance, friction, true Kt,
    one run-to-run draw), the other axes locked as in `record_joint`. The loop runs here in
    Python at an exact 1 ms cycle and applies each command one cycle after its encoder read
    (about the twin's 0.9 ms latency plus the hold); the recording core's jitter is left out.
    """
    seed = CLOSED_LOOP_SEED + axis if seed is None else seed
    rng = np.random.default_rng(seed)
    plant = twin.run_to_run(twin.build_plant(load_truth(), load_plant_settings()), rng)
    plant.free = np.zeros(N_AXES)
    plant.free[axis - 1] = 1.0
    control = RealizationController(
        load_realization_constants() if constants is None else constants
    )
    bits = np.tile(prbs(CLOSED_LOOP_ORDER), CLOSED_LOOP_PERIODS)
    reference = CLOSED_LOOP_AMPLITUDE_RAD * np.repeat(
        bits, int(round(CLOSED_LOOP_BIT_S / CONTROL_PERIOD_S))
    )
    n = reference.size
    x = twin.initial_state(FIG1_POSTURE.copy())
    steps = int(round(CONTROL_PERIOD_S / plant.step))
    resolution = twin.ENCODER_RESOLUTION_RAD
    torque = np.zeros(N_AXES)
    zero = np.zeros(N_AXES)
    target = FIG1_POSTURE.copy()
    out_ref, out_theta = np.zeros(n), np.zeros(n)
    for k in range(n):
        theta = np.round((x[:N_AXES] + math.pi) / resolution) * resolution - math.pi
        target[axis - 1] = FIG1_POSTURE[axis - 1] + reference[k]
        units = control.step(target, zero, zero, theta, CONTROL_PERIOD_S)
        twin.integrate(plant, x, torque, steps)  # the previous command acts during this cycle
        torque = np.zeros(N_AXES)
        torque[axis - 1] = plant.kt_true[axis - 1] * units[axis - 1] * CURRENT_UNIT_A
        out_ref[k], out_theta[k] = reference[k], theta[axis - 1] - FIG1_POSTURE[axis - 1]
    return ClosedLoopRecord(axis, np.arange(n) * CONTROL_PERIOD_S, out_ref, out_theta)


def closed_loop_frequency_response(
    record: ClosedLoopRecord, nperseg: int = 2048
) -> tuple[np.ndarray, np.ndarray]:
    """θ/θref of the closed loop from the record: cross spectrum over reference spectrum (Welch)."""
    fs = 1.0 / CONTROL_PERIOD_S
    frequency, p_rr = signal.welch(record.theta_ref, fs=fs, nperseg=nperseg)
    _, p_ry = signal.csd(record.theta_ref, record.theta, fs=fs, nperseg=nperseg)
    keep = frequency > 0
    return frequency[keep], p_ry[keep] / p_rr[keep]


def nominal_closed_loop_response(
    model: JointModel, frequency_hz: np.ndarray, k_p: float, k_v: float, k_i: float
) -> np.ndarray:
    """θ/θref of the same feedback-only experiment when the axis is exactly its model (1), dead time
    included.

    Plant θ/u = K_p e^(-T_d s) / ((T_p1 s + 1) s); law u = M̂ [K_P e + K_I ∫e - K_V θ̇]:
    T = P C / (1 + P C + P M̂ K_V s), C = M̂ (K_P + K_I / s).
    """
    s = 2j * np.pi * np.asarray(frequency_hz)
    plant = model.gain * np.exp(-s * model.dead_time) / ((model.time_constant * s + 1.0) * s)
    c = model.m_hat * (k_p + k_i / s)
    return plant * c / (1.0 + plant * c + plant * model.m_hat * k_v * s)


def bandwidth_hz(
    frequency_hz: np.ndarray, response: np.ndarray, level: float = 1.0 / math.sqrt(2.0)
) -> float:
    """First frequency at which |response| falls below `level` (−3 dB) and stays there for the next
    bins; linear interpolation."""
    magnitude = np.abs(response)
    below = magnitude < level
    for i in range(1, len(magnitude)):
        if below[i] and not below[i - 1] and below[i : i + 3].all():
            f0, f1, m0, m1 = frequency_hz[i - 1], frequency_hz[i], magnitude[i - 1], magnitude[i]
            return float(f0 + (m0 - level) * (f1 - f0) / (m0 - m1))
    return math.nan


# ---------------------------------------------------------------- Table XIX


def paper_joint7_model() -> JointModel:
    """The paper's Joint-7 model (1): K_p, T_p1 and T_d of Sec. III-B."""
    return JointModel(
        paper("joint7_gain").value,
        paper("joint7_time_constant").value,
        paper("joint7_dead_time").value * 1e-3,
    )


def identify_all(truth=None, plant_settings=None) -> dict[int, JointFit]:
    """Model (1) fitted on the twin for every axis."""
    return {
        axis: fit_joint_model(record_joint(axis, truth=truth, plant_settings=plant_settings))
        for axis in range(1, N_AXES + 1)
    }


def table_xix(fits: dict[int, JointFit]) -> tuple[list[JointModel], list[str]]:
    """Our Table XIX: Joint 7 from the paper, the other axes from the fits on the twin."""
    models, sources = [], []
    for axis in range(1, N_AXES + 1):
        if axis == PAPER_AXIS:
            models.append(paper_joint7_model())
            sources.append("paper Sec. III-B (joint7_gain, joint7_time_constant, joint7_dead_time)")
        else:
            models.append(fits[axis].model)
            sources.append(
                "joint-level identification on the twin (crane_lib.twin.joint_identification, "
                f"seed {JOINT_ID_SEED * 100 + axis})"
            )
    return models, sources


# written verbatim as the data file's header, whose lines are the file's own
TABLE_XIX_COMMENT = """Realization-layer constants of the FF+FB controller (2): our Table XIX, written by python -m crane_lib.twin.joint_identification.
Model (1) per axis: K_p (rad/s)/(N·m) with the catalogue Kt, T_p1 (s), T_d (s); M_hat = T_p1/K_p (catalogue-Kt N·m·s²/rad), D_hat = 1/T_p1 (1/s).
Joint 7: the paper's values (Sec. III-B). Other axes: fitted on the digital twin as the paper did on the arm (Sec. III-B):
open-loop square wave + 2.047 s PRBS of current at the Fig. 1 posture, other axes locked, velocity by encoder differencing.
Common gains (crane_lib/model/controller.py): K_P = 1000 s^-2, K_V = 2 sqrt(K_P), K_I = K_P sqrt(K_P)/5 (integral action added; see book/register_twin.md)."""  # noqa: E501


def main(argv=None) -> None:
    """Identify the joint models on the twin and write our Table XIX."""
    parser = argparse.ArgumentParser(
        description="Joint-level identification on the twin; writes our Table XIX."
    )
    parser.add_argument("--out", default=str(REALIZATION_CONSTANTS_CSV))
    parser.add_argument("--dry-run", action="store_true", help="print the table, write nothing")
    args = parser.parse_args(argv)
    fits = identify_all()
    print(f"{'axis':>4} {'K_p':>9} {'T_p1 s':>8} {'T_d ms':>7} {'fit %':>6}")
    for axis, fit in fits.items():
        m = fit.model
        print(
            f"{axis:>4} {m.gain:9.3f} {m.time_constant:8.4f} {m.dead_time * 1e3:7.3f} "
            f"{fit.fit_percent:6.1f}"
        )
    arx = fit_arx(fits[PAPER_AXIS].record)
    f, zeta = arx_resonance(arx)
    print(f"Joint 7 ARX({ARX_ORDER}) resonance: {f:.1f} Hz, damping ratio {zeta:.3f}")
    models, sources = table_xix(fits)
    if not args.dry_run:
        write_realization_constants(args.out, models, sources, TABLE_XIX_COMMENT)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
