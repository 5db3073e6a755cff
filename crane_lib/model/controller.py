"""The realization layer (paper Sec. III-B, Fig. 2, Table XIX): joint model (1) and controller (2).

Joint model (1), per axis j: velocity over torque = K_p,j exp(-T_d,j s) / (T_p1,j s + 1), the
torque being the commanded current times the *catalogue* torque constant (1.783 / 2.409 N·m/A).

Controller (2), per axis j, every 1 ms cycle:

    u_j = M̂_j [θ̈ref + D̂_j θ̇ref + K_V (θ̇ref - θ̇) + K_P (θref - θ) + K_I ∫(θref - θ) dt]

with M̂_j = T_p1,j / K_p,j and D̂_j = 1 / T_p1,j, so the velocity feedforward M̂_j D̂_j θ̇ref sits
inside the M̂ bracket as the firmware implements it (III-B, D-F). θ̇ is the encoder difference
over the cycle, divided by the measured time between the two encoder reads. Since M̂ is in
catalogue-torque units, the command is current = u / Kt_catalogue, rounded to the 2.69 mA
register unit and clamped at the axis current limit.

Choices the text leaves open (book/register_twin.md):

* K_P = 1000 s^-2 (constants.REALIZATION_KP; √K_P = 31.6 rad/s is the paper's bandwidth).
* K_V = 2 √K_P = 63.2 s^-1: the PD error dynamics s² + K_V s + K_P critically damped at the
  stated bandwidth. The text does not state K_V; it calls the acceleration-resolved
  K_d = 48 s^-1 of Sec. VII-C "of the same order as the realization gains of Table XIX".
* K_I: the integral term is *not* in (2). On the twin, (2) alone leaves a gravity-induced
  steady-state error of several degrees on the shoulder and elbow (the hanging arm's gravity
  torque divided by M̂ K_P), so the in-position wait never ends; the smallest element that
  removes it without a prior model is integral action. K_I places its zero a fifth of the
  bandwidth below √K_P (K_I = K_P √K_P / 5), leaving the PD poles nearly where K_P and K_V put
  them. Integration is suspended on an axis while its command is clamped in the direction of
  its error (anti-windup).

`realization_law` is the one implementation: a numba function the twin calls now, and the
CLIE simulator and the hardware recorder call later. `RealizationController` wraps it for
Python callers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np

from crane_lib.constants import (
    ACTUATORS,
    CONTROL_PERIOD_S,
    CURRENT_UNIT_A,
    ENCODER_RESOLUTION_RAD,
    N_AXES,
    REALIZATION_KP,
)
from crane_lib.errors import InputError, atomic_write, checked_csv_rows, parse_integer, parse_number
from crane_lib.paths import DATA_DIR

REALIZATION_CONSTANTS_CSV = DATA_DIR / "realization_constants.csv"

K_P = REALIZATION_KP  # s^-2, common to all axes
K_V = 2.0 * math.sqrt(K_P)  # s^-1, critical damping of s^2 + K_V s + K_P
INTEGRAL_ZERO_FRACTION = 0.2  # integral zero at this fraction of the bandwidth sqrt(K_P)
K_I = K_P * INTEGRAL_ZERO_FRACTION * math.sqrt(K_P)  # s^-3


def encoder_count_torque(k_v: float, m_hat: np.ndarray) -> np.ndarray:
    """Per-axis torque (N·m) of one encoder count differenced over a period: K_V·M̂_j·Δθ/T."""
    return k_v * np.asarray(m_hat, dtype=float) * ENCODER_RESOLUTION_RAD / CONTROL_PERIOD_S


def encoder_noise_gains(
    m_hat: np.ndarray, torque_limits: np.ndarray, fraction: float
) -> tuple[float, float, float]:
    """(K_P, K_V, K_I) of another arm: the largest bandwidth ω ≤ √K_P of the paper for which
    one encoder count per period costs at most `fraction` of every axis's torque limit.

    K_V = 2ω, K_P = ω², K_I = K_P ω / 5 (the CRANE-X7's shape); capped at the paper's bandwidth,
    where the CRANE-X7's K_P, K_V, K_I are returned as they are (book/register_twin.md).
    """
    limits = np.asarray(torque_limits, dtype=float)
    k_v = float(np.min(fraction * limits / encoder_count_torque(1.0, m_hat)))
    if k_v >= K_V:
        return K_P, K_V, K_I
    omega = k_v / 2.0
    return omega * omega, k_v, omega * omega * INTEGRAL_ZERO_FRACTION * omega


VELOCITY_LOOP_STABLE_BELOW = 2.0  # Jury's bound on velocity_loop_gain


def velocity_loop_gain(inertia, m_hat, k_v: float, torque_scale=1.0) -> np.ndarray:
    """Per pose, the gain g of (2)'s velocity feedback through a plant of inertia M(q) over one
    control period T: the spectral radius of T K_V M(q)^-1 diag(M̂ s), s = `torque_scale`, the
    plant's torque per commanded torque (kt_record / kt_command where M is in record units).

    With θ̇ the encoder difference over the last period, v_k+1 = v_k - g (v_k + v_k-1) / 2 for
    the feedback alone; Jury's test makes it stable for 0 < g < 2 (VELOCITY_LOOP_STABLE_BELOW).
    Past 2 a loop oscillates until its current clamps hold it. `inertia`: (n, N, N) kg·m² (or
    (N, N)); `m_hat`: (N,) N·m·s²/rad; `k_v`: 1/s. Returns (n,) (or a scalar array)."""
    scale = CONTROL_PERIOD_S * k_v * np.asarray(m_hat, dtype=float) * torque_scale
    root = np.sqrt(scale)
    weighted = root[:, None] * np.linalg.inv(np.asarray(inertia, dtype=float)) * root[None, :]
    # similar to T K_V M^-1 diag(M̂ s): the same eigenvalues (real where M is definite)
    return np.abs(np.linalg.eigvals(weighted)).max(axis=-1)


KT_CATALOGUE = np.array([a.kt_catalogue for a in ACTUATORS])  # N·m/A, the unit of M̂ (III-B)
CURRENT_LIMIT_UNITS = np.array([a.current_limit_units for a in ACTUATORS], dtype=np.int64)

# rows of the `out` array of realization_law
OUT_VELOCITY, OUT_FEEDFORWARD, OUT_FEEDBACK, OUT_GOAL_UNITS, OUT_CLAMPED = range(5)
OUT_ROWS = 5

CSV_COLUMNS = [
    "axis",
    "actuator",
    "K_p_rad_s_per_N_m",
    "T_p1_s",
    "T_d_s",
    "M_hat_kg_m2",
    "D_hat_per_s",
    "source",
]


@numba.njit(cache=True)
def realization_law(
    theta_ref,
    dtheta_ref,
    ddtheta_ref,
    theta,
    theta_previous,
    dt,
    integral,
    m_hat,
    d_hat,
    k_p,
    k_v,
    k_i,
    kt_command,
    current_unit,
    limit_units,
    out,
):
    """One control cycle of (2) for every axis.

    theta_ref, dtheta_ref, ddtheta_ref: reference of this cycle (rad, rad/s, rad/s^2);
    theta, theta_previous: encoder angles of this and the previous cycle (rad); dt: time
    between the two encoder reads (s); integral: ∫(θref - θ) dt per axis, updated in place.
    m_hat, d_hat: per-axis M̂ (N·m·s²/rad, catalogue-Kt torque) and D̂ (1/s); k_p, k_v, k_i:
    common gains; kt_command: N·m/A used to turn torque into current; current_unit: A per
    register unit; limit_units: current limit per axis in register units.
    out (5, n): velocity (rad/s), feedforward and feedback torque (N·m, before the clamp),
    goal current in register units (after rounding and the clamp), clamped flag (0/1).
    """
    for j in range(theta.shape[0]):
        velocity = (theta[j] - theta_previous[j]) / dt
        error = theta_ref[j] - theta[j]
        integral_candidate = integral[j] + error * dt
        u_ff = m_hat[j] * (ddtheta_ref[j] + d_hat[j] * dtheta_ref[j])
        u_fb = m_hat[j] * (
            k_v * (dtheta_ref[j] - velocity) + k_p * error + k_i * integral_candidate
        )
        requested = (u_ff + u_fb) / kt_command[j] / current_unit
        units = np.rint(requested)
        clamped = 0.0
        if units > limit_units[j]:
            units = float(limit_units[j])
            clamped = 1.0
        elif units < -limit_units[j]:
            units = -float(limit_units[j])
            clamped = 1.0
        # anti-windup: do not integrate an error the saturated actuator cannot act on
        if not (clamped == 1.0 and error * requested > 0.0):
            integral[j] = integral_candidate
        out[OUT_VELOCITY, j] = velocity
        out[OUT_FEEDFORWARD, j] = u_ff
        out[OUT_FEEDBACK, j] = u_fb
        out[OUT_GOAL_UNITS, j] = units
        out[OUT_CLAMPED, j] = clamped


# ---------------------------------------------------------------- per-axis constants (Table XIX)


@dataclass(frozen=True)
class JointModel:
    """Model (1) of one axis: K_p (rad/s)/(N·m), T_p1 (s), T_d (s)."""

    gain: float
    time_constant: float
    dead_time: float

    @property
    def m_hat(self) -> float:
        """M̂ = T_p1/K_p of controller (2) (N·m·s²/rad)."""
        return self.time_constant / self.gain

    @property
    def d_hat(self) -> float:
        """D̂ = 1/T_p1 of controller (2) (1/s)."""
        return 1.0 / self.time_constant


@dataclass(frozen=True)
class RealizationConstants:
    """Everything realization_law needs, for the eight axes."""

    models: tuple[JointModel, ...]
    sources: tuple[str, ...]
    k_p: float = K_P
    k_v: float = K_V
    k_i: float = K_I
    kt_command: np.ndarray = field(default_factory=KT_CATALOGUE.copy)
    current_unit: float = CURRENT_UNIT_A
    limit_units: np.ndarray = field(default_factory=CURRENT_LIMIT_UNITS.copy)

    @property
    def m_hat(self) -> np.ndarray:
        """M̂ of every axis (N·m·s²/rad)."""
        return np.array([m.m_hat for m in self.models])

    @property
    def d_hat(self) -> np.ndarray:
        """D̂ of every axis (1/s)."""
        return np.array([m.d_hat for m in self.models])

    def with_gains(
        self, k_p: float | None = None, k_v: float | None = None, k_i: float | None = None
    ) -> "RealizationConstants":
        """The same constants with other common gains K_P, K_V, K_I."""
        return RealizationConstants(
            self.models,
            self.sources,
            self.k_p if k_p is None else k_p,
            self.k_v if k_v is None else k_v,
            self.k_i if k_i is None else k_i,
            self.kt_command,
            self.current_unit,
            self.limit_units,
        )

    def law_arguments(self) -> tuple:
        """The constant arguments of realization_law, in its order after `integral`."""
        return (
            self.m_hat,
            self.d_hat,
            float(self.k_p),
            float(self.k_v),
            float(self.k_i),
            np.asarray(self.kt_command, dtype=float),
            float(self.current_unit),
            np.asarray(self.limit_units, dtype=np.int64),
        )


def load_realization_constants(path=REALIZATION_CONSTANTS_CSV) -> RealizationConstants:
    """Read our Table XIX; errors name the file and line."""
    path = Path(path)
    models: dict[int, JointModel] = {}
    sources: dict[int, str] = {}
    for where, row in checked_csv_rows(
        path, CSV_COLUMNS, "the realization constants (data/realization_constants.csv)"
    ):
        axis = parse_integer(row[0], where, "an axis number", field="axis")
        gain, time_constant, dead_time = (
            parse_number(x, where, "a number", field=name)
            for x, name in zip(row[2:5], CSV_COLUMNS[2:5])
        )
        if not (1 <= axis <= N_AXES) or axis in models:
            raise InputError(where, f"axis {axis}", f"each axis 1..{N_AXES} once")
        if not (
            gain > 0
            and time_constant > 0
            and dead_time >= 0
            and all(map(math.isfinite, (gain, time_constant, dead_time)))
        ):
            raise InputError(
                where,
                f"K_p={gain}, T_p1={time_constant}, T_d={dead_time}",
                "K_p > 0, T_p1 > 0, T_d >= 0",
            )
        model = JointModel(gain, time_constant, dead_time)
        for column, value in ((5, model.m_hat), (6, model.d_hat)):
            if not math.isclose(
                parse_number(row[column], where, "a number", field=CSV_COLUMNS[column]),
                value,
                rel_tol=1e-8,
            ):
                raise InputError(
                    where,
                    f"{CSV_COLUMNS[column]} = {row[column]} does not follow from K_p and T_p1",
                    f"{value:.6g}",
                )
        models[axis] = model
        sources[axis] = row[7]
    missing = [a for a in range(1, N_AXES + 1) if a not in models]
    if missing:
        raise InputError(str(path), f"no row for axes {missing}", f"one row per axis 1..{N_AXES}")
    return RealizationConstants(
        tuple(models[a] for a in range(1, N_AXES + 1)),
        tuple(sources[a] for a in range(1, N_AXES + 1)),
    )


def format_realization_constants(models, sources, comment: str) -> str:
    """The realization constants as the CSV text of our Table XIX."""
    lines = [f"# {line}" for line in comment.splitlines()]
    lines.append(",".join(CSV_COLUMNS))
    for axis, (model, source) in enumerate(zip(models, sources), start=1):
        fields = [
            str(axis),
            ACTUATORS[axis - 1].model,
            f"{model.gain:.10g}",
            f"{model.time_constant:.10g}",
            f"{model.dead_time:.10g}",
            f"{model.m_hat:.10g}",
            f"{model.d_hat:.10g}",
            source,
        ]
        lines.append(",".join(f'"{f}"' if "," in f else f for f in fields))
    return "\n".join(lines) + "\n"


def write_realization_constants(path, models, sources, comment: str) -> Path:
    """Write the realization constants' CSV atomically."""
    text = format_realization_constants(models, sources, comment)
    with atomic_write(path, encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    return Path(path)


# ---------------------------------------------------------------- Python wrapper


class RealizationController:
    """Stateful wrapper of realization_law: keeps the previous encoder angle and the integral."""

    def __init__(self, constants: RealizationConstants | None = None):
        self.constants = load_realization_constants() if constants is None else constants
        self._arguments = self.constants.law_arguments()
        self.integral = np.zeros(N_AXES)
        self.theta_previous: np.ndarray | None = None
        self.out = np.zeros((OUT_ROWS, N_AXES))

    def reset(self, theta) -> None:
        """Restart the controller at `theta` (rad): previous angle set, integral cleared."""
        self.theta_previous = np.array(theta, dtype=float)
        self.integral[:] = 0.0

    def step(self, theta_ref, dtheta_ref, ddtheta_ref, theta, dt: float) -> np.ndarray:
        """Goal current (register units, clamped) for this cycle; `self.out` holds the details."""
        theta = np.asarray(theta, dtype=float)
        if self.theta_previous is None:
            self.reset(theta)
        if not dt > 0:
            raise InputError(
                "controller step", f"dt = {dt!r}", "a positive time between encoder reads"
            )
        realization_law(
            np.asarray(theta_ref, dtype=float),
            np.asarray(dtheta_ref, dtype=float),
            np.asarray(ddtheta_ref, dtype=float),
            theta,
            self.theta_previous,
            float(dt),
            self.integral,
            *self._arguments,
            self.out,
        )
        self.theta_previous = theta.copy()
        return self.out[OUT_GOAL_UNITS].copy()
