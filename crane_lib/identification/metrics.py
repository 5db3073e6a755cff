"""Prediction metrics on held-out records (paper Sec. VI-C, Appendix B-G, E-A).

RMSE is taken over all eight axes and all samples of a record (pooled over records when
several are given); MNE is the per-axis RMSE divided by the peak-to-peak measured torque of
that axis on the same record, averaged over the eight axes.

Also here, what Table XVI measures about a record: the shares of predicted-torque RMS carried
by the inertia term, the velocity terms and both (the model evaluated with velocity,
acceleration or both zeroed at the same configurations), the residual's share of the measured
torque RMS, and how many arm joints move at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crane_lib.constants import N_ARM_JOINTS
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paper_numbers import paper

# Table XVI: a joint "moves" above this speed; "k >= 6" counts samples with at least this many arm
# joints moving
MOVING_JOINT_THRESHOLD_RAD_S = paper("moving_joint_threshold").value
K_GE_MOVING = int(paper("k_ge6_threshold").value)


@dataclass
class PredictionError:
    """How well a model predicts one recorded bundle's torque (Sec. VI-D, B-G).

    rmse           RMSE over all axes and samples, N·m
    per_axis_rmse  RMSE per axis, (8,), N·m
    mne            mean over the axes of per-axis RMSE divided by that axis's peak-to-peak measured
                   torque (dimensionless)
    n_samples      samples of the bundle
    """

    rmse: float
    per_axis_rmse: np.ndarray
    mne: float
    n_samples: int
    peak_to_peak: np.ndarray | None = None  # (8,) N·m, measured torque of each axis on the record

    @property
    def relative(self) -> np.ndarray:
        """(8,) per-axis RMSE over that axis's peak-to-peak measured torque (Table XX's last
        column)."""
        return self.per_axis_rmse / self.peak_to_peak


def predicted_torque(model: DynamicModel, beta, bundle) -> np.ndarray:
    """The inverse dynamics W(θ, θ̇, θ̈)β on the bundle's samples (N·m)."""
    return model.inverse_dynamics(bundle.theta, bundle.dtheta, bundle.ddtheta, beta)


def prediction_error(model: DynamicModel, beta, bundle) -> PredictionError:
    """RMSE, per-axis RMSE and MNE of the model's torque on a bundle."""
    error = bundle.tau - predicted_torque(model, beta, bundle)
    per_axis = np.sqrt(np.mean(error**2, axis=0))
    peak_to_peak = np.ptp(bundle.tau, axis=0)
    return PredictionError(
        rmse=float(np.sqrt(np.mean(error**2))),
        per_axis_rmse=per_axis,
        mne=float(np.mean(per_axis / peak_to_peak)),
        n_samples=len(error),
        peak_to_peak=peak_to_peak,
    )


def pooled_rmse(model: DynamicModel, beta, bundles) -> float:
    """RMSE over the concatenation of several records (Table VIII's pooled held-out RMSE)."""
    squared = np.concatenate(
        [(b.tau - predicted_torque(model, beta, b)).ravel() ** 2 for b in bundles]
    )
    return float(np.sqrt(squared.mean()))


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


@dataclass
class TorqueShares:
    """Table XVI for one record and one model, as fractions (not per cent).

    inertia   RMS of M(θ) θ̈ over RMS of the predicted torque: the model with velocity zeroed,
              minus the model with velocity and acceleration zeroed (gravity)
    velocity  the same for C(θ, θ̇) θ̇ + viscous friction: acceleration zeroed, minus gravity
    both      the same for both together: the predicted torque minus gravity
    gravity   the same for gravity alone (velocity and acceleration zeroed)
    residual  RMS of measured minus predicted torque over RMS of the measured torque

    RMS values are over all eight axes and all samples, as RMSE. The parts are not orthogonal,
    so the shares need not sum to 1 (the paper's caption says so too).
    """

    inertia: float
    velocity: float
    both: float
    gravity: float
    residual: float
    n_samples: int


def torque_shares(model: DynamicModel, beta, bundle) -> TorqueShares:
    """Table XVI's shares of one record (a bundle) under one model."""
    q, qd, qdd = bundle.theta, bundle.dtheta, bundle.ddtheta
    zeros = np.zeros_like(qd)
    predicted = model.inverse_dynamics(q, qd, qdd, beta)
    gravity = model.inverse_dynamics(q, zeros, zeros, beta)
    acceleration_only = model.inverse_dynamics(q, zeros, qdd, beta) - gravity
    velocity_only = model.inverse_dynamics(q, qd, zeros, beta) - gravity
    total = _rms(predicted)
    return TorqueShares(
        inertia=_rms(acceleration_only) / total,
        velocity=_rms(velocity_only) / total,
        both=_rms(predicted - gravity) / total,
        gravity=_rms(gravity) / total,
        residual=_rms(bundle.tau - predicted) / _rms(bundle.tau),
        n_samples=len(predicted),
    )


def moving_joint_counts(dtheta, threshold: float = MOVING_JOINT_THRESHOLD_RAD_S) -> np.ndarray:
    """(n,) how many of the seven arm joints move faster than `threshold` (rad/s) at each sample
    (the hand axis is not counted)."""
    dtheta = np.asarray(dtheta, dtype=float)
    return np.count_nonzero(np.abs(dtheta[:, :N_ARM_JOINTS]) > threshold, axis=1)


def share_moving_at_least(
    dtheta, k: int = K_GE_MOVING, threshold: float = MOVING_JOINT_THRESHOLD_RAD_S
) -> float:
    """Fraction of samples at which at least `k` arm joints move (Table XVI's "k >= 6")."""
    counts = moving_joint_counts(dtheta, threshold)
    return float(np.mean(counts >= k)) if counts.size else float("nan")


@dataclass
class Spread:
    """Run-to-run spread of a metric over the executions of one record (Sec. VI-D, Table XI)."""

    values: np.ndarray
    mean: float
    sd_relative: float  # sample standard deviation (ddof 1) over the mean; NaN with one execution
    range_relative: (
        float  # (largest - smallest) over the mean, Table XI's measure; NaN with one execution
    )

    @property
    def n(self) -> int:
        """The number of values."""
        return int(self.values.size)


def spread(values) -> Spread:
    """Mean, standard deviation and range of the values."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        raise ValueError("spread of no values")
    mean = float(values.mean())
    if values.size < 2:
        return Spread(values, mean, float("nan"), float("nan"))
    return Spread(values, mean, float(values.std(ddof=1) / mean), float(np.ptp(values) / mean))
