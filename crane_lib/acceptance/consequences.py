"""What an infeasible inertia model does once M is inverted (Sec. VII-C, Table X).

For an identified model M^ and a reference M_acc (the accepted model standing in for the
unmeasured true inertia), both in the reduced base-parameter set:

* non-PD fraction: share of the audit's UNIFORM draw (150,000 poses of `audit.audit_poses`)
  where lambda_min(M^) <= 0; the oversampled folded block is left out because it would
  overstate the share of the domain (Sec. VI-E).
* worst pose: the pose of the full dense audit set with the smallest lambda_min(M^).
* acceleration-resolved control: error dynamics A = M_acc^-1 M^; per eigenvalue mu of A the
  characteristic polynomial s^2 + mu Kd s + mu Kp (Kp = 1000 s^-2, Kd = 48 s^-1), unstable
  exactly when mu < 0; tau_grow = 1 / (largest real root), at the worst pose, and the fastest
  over every non-PD pose of the audit set.
* observer: acceleration-domain gain 1/lambda along each eigendirection of M^; reported at
  the worst pose, 1/lambda_min(M^).
* at the worst pose: the share of random unit torques whose acceleration M^-1 tau lies more
  than 90 deg from M_acc^-1 tau; the median over random unit accelerations of
  ||(M^ - M_acc) a|| / ||M_acc a||; the same ratio along the eigenvector of lambda_min(M^).

Random directions: `rng = numpy.random.default_rng(seed)`; first the torques
`rng.standard_normal((2000, 7))`, then the accelerations `rng.standard_normal((200, 7))`, each
row normalised (isotropic unit vectors). Counts, gains and the angle come from the paper's
numbers by id. Units: kg·m^2, s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crane_lib.acceptance.audit import UNIFORM, audit_poses
from crane_lib.errors import InputError
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.parameters import N_LINKS
from crane_lib.paper_numbers import paper


def default_gains() -> tuple[float, float]:
    """(Kp in s^-2, Kd in s^-1) of the acceleration-resolved loop of Sec. VII-C."""
    return paper("acc_resolved_kp").value, paper("acc_resolved_kd").value


def unstable_root(mu, kp: float, kd: float) -> np.ndarray:
    """Largest real part of the roots of s^2 + mu kd s + mu kp, elementwise over mu (s^-1)."""
    mu = np.asarray(mu, dtype=float)
    disc = (mu * kd) ** 2 - 4.0 * mu * kp
    real_disc = np.sqrt(np.maximum(disc, 0.0))
    # complex pair: real part -mu kd / 2; real roots: the larger one
    return np.where(disc >= 0.0, 0.5 * (-mu * kd + real_disc), -0.5 * mu * kd)


def growth_time_constant(mu, kp: float, kd: float) -> np.ndarray:
    """tau_grow = 1 / Re(unstable root) in s; inf where every root is in the closed left
    half-plane."""
    s = unstable_root(mu, kp, kd)
    with np.errstate(divide="ignore"):
        return np.where(s > 0.0, 1.0 / np.where(s > 0.0, s, 1.0), np.inf)


def error_dynamics_eigenvalues(m_hat: np.ndarray, m_acc: np.ndarray) -> np.ndarray:
    """Eigenvalues mu of A = M_acc^-1 M^ (real: M_acc is positive definite), ascending; (..., n)."""
    chol = np.linalg.cholesky(m_acc)
    inv = np.linalg.inv(chol)
    sym = inv @ m_hat @ np.swapaxes(inv, -1, -2)  # similar to A, symmetric
    return np.linalg.eigvalsh(0.5 * (sym + np.swapaxes(sym, -1, -2)))


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """`n` random unit rows of dimension `dim`."""
    rows = rng.standard_normal((n, dim))
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def misdirected_share(
    m_hat: np.ndarray, m_acc: np.ndarray, torques: np.ndarray, angle_deg: float = 90.0
) -> float:
    """Share of torques whose acceleration under m_hat^-1 lies more than `angle_deg` from
    m_acc^-1's."""
    a_hat = np.linalg.solve(m_hat, torques.T).T
    a_acc = np.linalg.solve(m_acc, torques.T).T
    cos = np.sum(a_hat * a_acc, axis=1) / (
        np.linalg.norm(a_hat, axis=1) * np.linalg.norm(a_acc, axis=1)
    )
    return float(np.mean(cos < np.cos(np.deg2rad(angle_deg))))


def torque_error_ratio(
    m_hat: np.ndarray, m_acc: np.ndarray, accelerations: np.ndarray
) -> np.ndarray:
    """||(m_hat - m_acc) a|| / ||m_acc a|| per acceleration row a."""
    accelerations = np.atleast_2d(accelerations)
    return np.linalg.norm(accelerations @ (m_hat - m_acc).T, axis=1) / np.linalg.norm(
        accelerations @ m_acc.T, axis=1
    )


@dataclass
class PoseConsequences:
    """Table X's per-pose columns for one pair of 7x7 (or n x n) inertia matrices, the model's M^
    against the reference M_acc (the accepted model, or the twin's truth).

    lambda_min                 smallest eigenvalue of M^, kg·m^2
    observer_gain              1 / lambda_min(M^), 1/(kg·m^2) (inf at zero)
    mu_min                     smallest eigenvalue of M_acc^-1 M^ (negative: the loop is unstable)
    tau_grow_s                 growth time constant of the unstable root of s^2 + mu Kd s + mu Kp,
                               s;
                               inf when every mode is stable
    misdirected_share          share of random unit torques that M^ turns by more than the threshold
                               angle against M_acc (fraction, not %)
    median_torque_error_ratio  median over random unit accelerations of |(M^ - M_acc) a| / |M_acc a|
    eigdir_torque_error_ratio  the same ratio along the eigenvector of lambda_min(M^)
    eigdir_sign_reversed       v^T M^ v and v^T M_acc v have opposite signs along that eigenvector
    """

    lambda_min: float
    observer_gain: float
    mu_min: float
    tau_grow_s: float
    misdirected_share: float
    median_torque_error_ratio: float
    eigdir_torque_error_ratio: float
    eigdir_sign_reversed: bool


def pose_consequences(
    m_hat,
    m_acc,
    seed: int = 1,
    kp: float | None = None,
    kd: float | None = None,
    n_torques: int | None = None,
    n_accelerations: int | None = None,
    angle_deg: float | None = None,
) -> PoseConsequences:
    """What inverting an infeasible M does at one pose: torque, acceleration and loop errors."""
    m_hat, m_acc = np.asarray(m_hat, dtype=float), np.asarray(m_acc, dtype=float)
    if m_hat.shape != m_acc.shape or m_hat.ndim != 2 or m_hat.shape[0] != m_hat.shape[1]:
        raise InputError(
            "inertia matrices",
            f"shapes {m_hat.shape} and {m_acc.shape}",
            "two square matrices of the same size",
        )
    default_kp, default_kd = default_gains()
    kp = default_kp if kp is None else kp
    kd = default_kd if kd is None else kd
    n_torques = int(paper("torque_direction_samples").value) if n_torques is None else n_torques
    n_accelerations = (
        int(paper("accel_direction_samples").value) if n_accelerations is None else n_accelerations
    )
    angle_deg = paper("misdirection_angle_threshold").value if angle_deg is None else angle_deg
    rng = np.random.default_rng(seed)
    dim = m_hat.shape[0]
    torques = unit_rows(rng, n_torques, dim)
    accelerations = unit_rows(rng, n_accelerations, dim)
    eigenvalues, eigenvectors = np.linalg.eigh(m_hat)
    lam, v = float(eigenvalues[0]), eigenvectors[:, 0]
    mu = error_dynamics_eigenvalues(m_hat, m_acc)
    return PoseConsequences(
        lambda_min=lam,
        observer_gain=1.0 / lam if lam != 0.0 else float("inf"),
        mu_min=float(mu[0]),
        tau_grow_s=float(np.min(growth_time_constant(mu, kp, kd))),
        misdirected_share=misdirected_share(m_hat, m_acc, torques, angle_deg),
        median_torque_error_ratio=float(np.median(torque_error_ratio(m_hat, m_acc, accelerations))),
        eigdir_torque_error_ratio=float(torque_error_ratio(m_hat, m_acc, v)[0]),
        eigdir_sign_reversed=bool((v @ m_hat @ v) * (v @ m_acc @ v) < 0),
    )


@dataclass
class Consequences:
    """One row of Table X: what the model does once M is inverted, on the dense audit set of `seed`.

    non_pd_fraction        non-PD poses of the uniform draw over its size (fraction; the folded
                           block
                           oversamples on purpose and is left out)
    non_pd_count_uniform   those poses, counted
    uniform_count          size of the uniform draw
    worst_pose             (7,) rad, the pose of the smallest lambda_min(M^) over the audit set
    at_worst_pose          the PoseConsequences there
    tau_grow_fastest_s     smallest growth time constant over every non-PD pose (inf if none), s
    observer_gain_max_abs  largest |1 / lambda_min(M^)| over the audit set, 1/(kg·m^2)
    seed                   the audit seed of the pose set and of the random directions
    """

    non_pd_fraction: float
    non_pd_count_uniform: int
    uniform_count: int
    worst_pose: np.ndarray
    at_worst_pose: PoseConsequences
    tau_grow_fastest_s: float
    observer_gain_max_abs: float
    seed: int

    def to_dict(self) -> dict:
        """The consequences as one JSON-ready row."""
        row = {k: v for k, v in self.at_worst_pose.__dict__.items()}
        row.update(
            non_pd_fraction=self.non_pd_fraction,
            non_pd_count_uniform=self.non_pd_count_uniform,
            uniform_count=self.uniform_count,
            worst_pose_rad=self.worst_pose.tolist(),
            tau_grow_fastest_s=self.tau_grow_fastest_s,
            observer_gain_max_abs=self.observer_gain_max_abs,
            seed=self.seed,
        )
        return row


def consequences(
    beta_hat,
    beta_acc,
    seed: int = 1,
    model: DynamicModel | None = None,
    kp: float | None = None,
    kd: float | None = None,
) -> Consequences:
    """Table X for the model `beta_hat` against the reference `beta_acc` on the dense audit set of
    `seed`."""
    model = shared_model("reduced") if model is None else model
    pose_set = audit_poses(seed)
    lam = model.arm_min_eigenvalue(pose_set.poses, beta_hat)
    uniform = pose_set.component == pose_set.names.index(UNIFORM)
    non_pd = lam <= 0.0
    worst = int(np.argmin(lam))
    worst_pose = pose_set.poses[worst].copy()
    block = lambda q, beta: model.inertia_matrix(q, beta)[:, :N_LINKS, :N_LINKS]  # noqa: E731
    m_hat, m_acc = block(worst_pose[None, :], beta_hat)[0], block(worst_pose[None, :], beta_acc)[0]
    at_worst = pose_consequences(m_hat, m_acc, seed, kp, kd)
    default_kp, default_kd = default_gains()
    fastest = float("inf")
    if non_pd.any():
        q = pose_set.poses[non_pd]
        mu = error_dynamics_eigenvalues(block(q, beta_hat), block(q, beta_acc))[:, 0]
        fastest = float(
            growth_time_constant(
                mu, default_kp if kp is None else kp, default_kd if kd is None else kd
            ).min()
        )
    with np.errstate(divide="ignore"):
        gain = float(np.max(np.abs(1.0 / lam)))
    return Consequences(
        non_pd_fraction=float(np.count_nonzero(non_pd & uniform) / np.count_nonzero(uniform)),
        non_pd_count_uniform=int(np.count_nonzero(non_pd & uniform)),
        uniform_count=int(np.count_nonzero(uniform)),
        worst_pose=worst_pose,
        at_worst_pose=at_worst,
        tau_grow_fastest_s=fastest,
        observer_gain_max_abs=gain,
        seed=seed,
    )
