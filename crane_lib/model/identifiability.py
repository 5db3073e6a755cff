"""Rank and conditioning of stacked regressors (used from excitation design to OLS)."""

from __future__ import annotations

import numpy as np


def stack(regressor: np.ndarray) -> np.ndarray:
    """(n, axes, p) regressor -> (n * axes, p) matrix W_all."""
    regressor = np.asarray(regressor)
    return regressor.reshape(-1, regressor.shape[-1])


def singular_values(matrix: np.ndarray) -> np.ndarray:
    return np.linalg.svd(np.asarray(matrix), compute_uv=False)


def numerical_rank(matrix: np.ndarray, rtol: float | None = None) -> int:
    """Rank with numpy's default tolerance: sigma > sigma_max * max(shape) * eps."""
    sv = singular_values(matrix)
    if rtol is None:
        rtol = max(np.shape(matrix)) * np.finfo(float).eps
    return int(np.sum(sv > sv[0] * rtol))


def condition_number(matrix: np.ndarray) -> float:
    """kappa = sigma_max / sigma_min of the matrix as it is (no column scaling)."""
    sv = singular_values(matrix)
    return float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")
