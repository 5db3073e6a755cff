"""Prediction metrics on held-out records (paper Sec. VI-C).

RMSE is taken over all eight axes and all samples of a record (pooled over records when
several are given); MNE is the per-axis RMSE divided by the peak-to-peak measured torque of
that axis on the same record, averaged over the eight axes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crane_lib.model.dynamics import DynamicModel


@dataclass
class PredictionError:
    rmse: float  # N·m, over all axes and samples
    per_axis_rmse: np.ndarray  # (8,) N·m
    mne: float  # dimensionless
    n_samples: int


def predicted_torque(model: DynamicModel, beta, bundle) -> np.ndarray:
    return model.inverse_dynamics(bundle.theta, bundle.dtheta, bundle.ddtheta, beta)


def prediction_error(model: DynamicModel, beta, bundle) -> PredictionError:
    error = bundle.tau - predicted_torque(model, beta, bundle)
    per_axis = np.sqrt(np.mean(error**2, axis=0))
    peak_to_peak = np.ptp(bundle.tau, axis=0)
    return PredictionError(
        rmse=float(np.sqrt(np.mean(error**2))),
        per_axis_rmse=per_axis,
        mne=float(np.mean(per_axis / peak_to_peak)),
        n_samples=len(error),
    )


def pooled_rmse(model: DynamicModel, beta, bundles) -> float:
    """RMSE over the concatenation of several records (Table VIII's pooled held-out RMSE)."""
    squared = np.concatenate([(b.tau - predicted_torque(model, beta, b)).ravel() ** 2 for b in bundles])
    return float(np.sqrt(squared.mean()))
