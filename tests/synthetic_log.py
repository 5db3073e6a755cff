"""A synthetic raw log whose every column is a known function of time, for preprocessing tests.

Each axis j moves as θ_j(t) = A_j sin(2π f_j t + φ_j) + c_j and commands a torque
τ_j(t) = B_j sin(2π g_j t); the log stores θ + π and the current τ / Kt_j, on uneven stamps
t_i = i · 1 ms + jitter, the jitter uniform in ±`jitter_s` (seeded). The reference columns hold
the exact θ, θ̇, θ̈ of the same sinusoids shifted earlier by `reference_lead_s`, so that a
reference cannot be mistaken for the measured angle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crane_lib.constants import CONTROL_PERIOD_S, KT, N_AXES
from crane_lib.logs.raw_log import ANGLE_OFFSET, COLUMN, N_COLUMNS, group

# one frequency per axis, spread from slow posture changes to well above the 80 ms corner (2.8 Hz)
DEFAULT_ANGLE_HZ = np.array([0.23, 0.61, 1.1, 1.7, 2.3, 3.1, 4.3, 5.9])
DEFAULT_TORQUE_HZ = np.array([0.37, 0.83, 1.3, 1.9, 2.7, 3.7, 4.9, 6.7])


@dataclass
class SyntheticTruth:
    amplitude: np.ndarray  # A_j (rad)
    angle_hz: np.ndarray  # f_j
    phase: np.ndarray  # φ_j (rad)
    offset: np.ndarray  # c_j (rad)
    torque_amplitude: np.ndarray  # B_j (N·m)
    torque_hz: np.ndarray  # g_j
    reference_lead_s: (
        float  # the reference leads the angle, θref(t) = θ(t + lead), as a tracking lag would
    )

    def theta(self, t):
        return (
            self.amplitude * np.sin(2 * np.pi * self.angle_hz * t[:, None] + self.phase)
            + self.offset
        )

    def dtheta(self, t):
        w = 2 * np.pi * self.angle_hz
        return self.amplitude * w * np.cos(w * t[:, None] + self.phase)

    def ddtheta(self, t):
        w = 2 * np.pi * self.angle_hz
        return -self.amplitude * w**2 * np.sin(w * t[:, None] + self.phase)

    def tau(self, t):
        return self.torque_amplitude * np.sin(2 * np.pi * self.torque_hz * t[:, None])


def uneven_stamps(duration_s: float, jitter_s: float, rng: np.random.Generator) -> np.ndarray:
    n = int(round(duration_s / CONTROL_PERIOD_S)) + 1
    t = np.arange(n) * CONTROL_PERIOD_S
    t[1:] += rng.uniform(-jitter_s, jitter_s, n - 1)  # the first stamp stays at 0, as a log starts
    return t


def synthetic_samples(
    duration_s: float = 12.0,
    seed: int = 7,
    jitter_s: float = 0.3e-3,
    angle_hz=DEFAULT_ANGLE_HZ,
    torque_hz=DEFAULT_TORQUE_HZ,
    amplitude=None,
    t: np.ndarray | None = None,
) -> tuple[np.ndarray, SyntheticTruth]:
    rng = np.random.default_rng(seed)
    truth = SyntheticTruth(
        amplitude=np.full(N_AXES, 0.5) if amplitude is None else np.asarray(amplitude, dtype=float),
        angle_hz=np.asarray(angle_hz, dtype=float),
        phase=rng.uniform(0, 2 * np.pi, N_AXES),
        offset=rng.uniform(-1.0, 1.0, N_AXES),
        torque_amplitude=rng.uniform(0.5, 3.0, N_AXES),
        torque_hz=np.asarray(torque_hz, dtype=float),
        reference_lead_s=0.05,
    )
    if t is None:
        t = uneven_stamps(duration_s, jitter_s, rng)
    samples = np.zeros((t.size, N_COLUMNS))
    samples[:, COLUMN["t"]] = t
    samples[:, group("theta_logged")] = truth.theta(t) + ANGLE_OFFSET
    lead = truth.reference_lead_s
    samples[:, group("theta_ref")] = truth.theta(t + lead)
    samples[:, group("dtheta_ref")] = truth.dtheta(t + lead)
    samples[:, group("ddtheta_ref")] = truth.ddtheta(t + lead)
    samples[:, group("current_command")] = truth.tau(t) / KT
    samples[:, COLUMN["segment"]] = (
        np.floor(t).astype(int) - 1
    )  # -1 during the first second, as if idle
    return samples, truth
