"""Rank and conditioning of stacked regressors (used from excitation design to OLS), and the two
checks behind Appendix B-A's argument that motions of at most two joints excite every column."""

from __future__ import annotations

import numpy as np


def stack(regressor: np.ndarray) -> np.ndarray:
    """(n, axes, p) regressor -> (n * axes, p) matrix W_all."""
    regressor = np.asarray(regressor)
    return regressor.reshape(-1, regressor.shape[-1])


def singular_values(matrix: np.ndarray) -> np.ndarray:
    """Singular values, descending. A tall matrix W = QR shares them with its small triangular
    factor R (Q has orthonormal columns), so it is reduced by a QR first: far cheaper than an SVD
    of the stacked regressor, and backward stable."""
    matrix = np.asarray(matrix)
    if matrix.ndim == 2 and matrix.shape[0] > 2 * matrix.shape[1]:
        matrix = np.linalg.qr(matrix, mode="r")
    return np.linalg.svd(matrix, compute_uv=False)


def rank_and_condition(matrix: np.ndarray) -> tuple[int, float]:
    """(numerical rank, kappa) from one set of singular values (see numerical_rank,
    condition_number)."""
    sv = singular_values(matrix)
    rank = int(np.sum(sv > sv[0] * max(np.shape(matrix)) * np.finfo(float).eps))
    return rank, float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")


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


def polarization_violation(model, n_states: int = 600, seed: int = 7) -> float:
    """Largest violation (N·m) of the polarization identity of the regressor's velocity part on
    random states with three moving arm joints: Q(a+b+c) = Q(a+b) + Q(a+c) + Q(b+c) - Q(a) - Q(b) -
    Q(c).

    Q(v) is the regressor at velocity v with gravity and acceleration zero and the friction
    columns (FV, FS: linear in v and sign(v)) left out: the Coriolis/centrifugal part. The
    identity holds for every quadratic form, so the result is rounding error if and only if that
    part is quadratic in v, i.e. no entry is a product of three or more joint velocities.
    `model` is a crane_lib.model.dynamics.DynamicModel (anything with `names` and `regressor`)."""
    rng = np.random.default_rng(seed)
    n_arm = 7
    q = rng.uniform(-np.pi, np.pi, (n_states, n_arm + 1))
    parts = np.zeros((3, n_states, n_arm + 1))
    for i in range(n_states):
        joints = rng.choice(n_arm, size=3, replace=False)
        parts[np.arange(3), i, joints] = rng.normal(0.0, 2.0, 3)
    zeros = np.zeros((n_states, n_arm + 1))
    keep = np.array([name[:2] not in ("FV", "FS") for name in model.names])

    def quadratic(qd):
        return model.regressor(q, qd, zeros, gravity=False)[:, :, keep]

    a, b, c = parts
    sum_of_pairs = (
        quadratic(a + b)
        + quadratic(a + c)
        + quadratic(b + c)
        - quadratic(a)
        - quadratic(b)
        - quadratic(c)
    )
    return float(np.abs(quadratic(a + b + c) - sum_of_pairs).max())


def rank_with_two_joints_moving(model, n_states: int = 3000, seed: int = 7) -> int:
    """Numerical rank of a regressor stacked from random states in which at most two arm joints
    (adjacent or not) move, the others held at random angles, the hand moving on its own axis.
    Equal to `model.n_parameters` when two-joint motions leave no column unexcited (Mayeda's
    condition as Appendix B-A uses it)."""
    rng = np.random.default_rng(seed)
    n_arm = 7
    q = rng.uniform(-np.pi, np.pi, (n_states, n_arm + 1))
    qd, qdd = np.zeros((n_states, n_arm + 1)), np.zeros((n_states, n_arm + 1))
    for i in range(n_states):
        joints = rng.choice(n_arm, size=2, replace=False)
        qd[i, joints] = rng.normal(0.0, 2.0, 2)
        qdd[i, joints] = rng.normal(0.0, 5.0, 2)
    qd[:, n_arm], qdd[:, n_arm] = rng.normal(0.0, 2.0, n_states), rng.normal(0.0, 5.0, n_states)
    return numerical_rank(stack(model.regressor(q, qd, qdd)))
