"""Ordinary least squares on the stacked IDIM regressor (paper Sec. IV-B, Appendix D-D).

The eight axes are stacked over all samples into W_all (8n x p) and y (8n); the solution is
obtained by a QR factorization of W_all, as MATLAB's backslash does: the normal equations are
never formed. Standard errors use the residual variance sigma^2 = |r|^2 / (8n - p) and
(R^T R)^-1 = R^-1 R^-T. The condition number is that of W_all as it is, without column
scaling: kappa = sigma_max / sigma_min (paper Sec. VI-B).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from crane_lib.model.parameters import ParameterSet


class IdentificationError(RuntimeError):
    """A condition cannot be identified (e.g. a record too short for full rank); the reason is the
    message."""


@dataclass
class OLSResult:
    """The OLS fit of one stacked regressor (Appendix D-D), what routing, CLIE and the tables read.

    parameters  the estimates in the model's order, with the textbook standard errors
                sigma^2 (R^T R)^-1 (register: a scale, not a confidence statement)
    residual    y - W_all beta, stacked axis by axis per sample, (8n,), N·m
    kappa       sigma_max / sigma_min of W_all as it stands (no column scaling)
    n_samples   samples of the bundle (rows / 8)
    n_rows      rows of W_all
    rank        numerical rank of W_all (always the column count: a deficient regressor raises)
    info        extras: sigma2, the residual variance estimate (N·m)^2
    t_ratio, residual_rms  (properties) |estimate| / std. error; RMS of `residual`, N·m
    """

    parameters: ParameterSet
    residual: np.ndarray
    kappa: float
    n_samples: int
    n_rows: int
    rank: int
    info: dict = field(default_factory=dict)

    @property
    def t_ratio(self) -> np.ndarray:
        """|estimate| / standard error, per parameter."""
        return np.abs(self.parameters.values) / self.parameters.std_errors

    @property
    def residual_rms(self) -> float:
        """The RMS of the residual (N·m)."""
        return float(np.sqrt(np.mean(self.residual**2)))


def stack(
    regressor: np.ndarray, torque: np.ndarray, sample_mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(n, 8, p) regressor and (n, 8) torque -> W_all (8n', p), y (8n'), keeping the masked-in
    samples."""
    if sample_mask is not None:
        regressor, torque = regressor[sample_mask], torque[sample_mask]
    return regressor.reshape(-1, regressor.shape[-1]), torque.reshape(-1)


def ols(w_all: np.ndarray, y: np.ndarray, names: list[str]) -> OLSResult:
    """Least squares by QR; raises IdentificationError if W_all has not full column rank."""
    n_rows, n_params = w_all.shape
    if n_rows <= n_params:
        raise IdentificationError(
            f"{n_rows} regressor rows for {n_params} parameters: record too short"
        )
    q_factor, r_factor = scipy.linalg.qr(w_all, mode="economic")
    # W = Q R with orthonormal Q: W and the small R share their singular values, so rank and
    # kappa come from R without a second factorization of the stacked matrix
    sv = np.linalg.svd(r_factor, compute_uv=False)
    rank = int(np.sum(sv > sv[0] * max(w_all.shape) * np.finfo(float).eps))
    if rank < n_params:
        raise IdentificationError(
            f"regressor rank {rank} < {n_params} parameters: the record does not excite every base "
            "parameter"
        )
    beta = scipy.linalg.solve_triangular(r_factor, q_factor.T @ y)
    residual = y - w_all @ beta
    sigma2 = float(residual @ residual) / (n_rows - n_params)
    r_inv = scipy.linalg.solve_triangular(r_factor, np.eye(n_params))
    std_errors = np.sqrt(sigma2 * np.sum(r_inv**2, axis=1))
    return OLSResult(
        parameters=ParameterSet(names, beta, std_errors),
        residual=residual,
        kappa=float(sv[0] / sv[-1]),
        n_samples=n_rows // 8,
        n_rows=n_rows,
        rank=rank,
        info={"sigma2": sigma2},
    )
