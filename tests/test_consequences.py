"""Table X metrics on hand-made matrices with known answers, and on a model non-PD in a known
region."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.acceptance import audit, consequences

from .audit_cases import description_beta, elbow_strip_model

KP, KD = 1000.0, 48.0


def _largest_real_root(mu):
    return max(np.roots([1.0, mu * KD, mu * KP]).real)


def test_gains_come_from_the_paper():
    assert consequences.default_gains() == (KP, KD)


@pytest.mark.parametrize("mu", [-2.0, -0.3, -1e-3, 1e-3, 0.5, 1.0, 40.0])
def test_growth_time_constant_matches_the_characteristic_polynomial(mu):
    root = _largest_real_root(mu)
    tau = consequences.growth_time_constant(mu, KP, KD)
    if mu < 0:
        assert tau == pytest.approx(1.0 / root, rel=1e-10)
    else:
        assert root < 0 and np.isinf(tau)


def test_identical_models_do_nothing_wrong():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(7, 7))
    m = a @ a.T + 0.1 * np.eye(7)
    row = consequences.pose_consequences(m, m.copy(), seed=1)
    assert row.misdirected_share == 0.0
    assert row.median_torque_error_ratio == 0.0 and row.eigdir_torque_error_ratio == 0.0
    assert row.mu_min == pytest.approx(1.0) and np.isinf(row.tau_grow_s)
    assert row.observer_gain == pytest.approx(1.0 / np.linalg.eigvalsh(m)[0])
    assert not row.eigdir_sign_reversed
    scaled = consequences.pose_consequences(
        1.25 * m, m, seed=1
    )  # every acceleration mispredicted by exactly 25 %
    assert scaled.median_torque_error_ratio == pytest.approx(
        0.25
    ) and scaled.eigdir_torque_error_ratio == pytest.approx(0.25)
    assert scaled.misdirected_share == 0.0


def test_one_negative_eigenvalue_in_two_dimensions():
    """M_acc = I, M^ = diag(-a, 1): mu = -a; along e1 the torque error is 1 + a, sign reversed;
    a unit torque at angle psi is misdirected when tan^2 psi < 1/a, a share (2/pi)
    atan(1/sqrt(a))."""
    a = 0.5
    m_hat, m_acc = np.diag([-a, 1.0]), np.eye(2)
    row = consequences.pose_consequences(m_hat, m_acc, seed=7)
    assert row.lambda_min == -a and row.observer_gain == -1.0 / a
    assert row.mu_min == pytest.approx(-a)
    assert row.tau_grow_s == pytest.approx(1.0 / _largest_real_root(-a), rel=1e-10)
    assert row.eigdir_torque_error_ratio == pytest.approx(1.0 + a) and row.eigdir_sign_reversed
    expected = 2.0 / np.pi * np.arctan(1.0 / np.sqrt(a))
    assert row.misdirected_share == pytest.approx(
        expected, abs=4 * np.sqrt(expected * (1 - expected) / 2000)
    )
    # |(M^ - I) u| = (1 + a)|u_1| for unit u; the accelerations are the documented second draw of
    # default_rng(seed)
    rng = np.random.default_rng(7)
    rng.standard_normal((2000, 2))
    u = rng.standard_normal((200, 2))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    assert row.median_torque_error_ratio == pytest.approx(
        np.median((1 + a) * np.abs(u[:, 0])), rel=1e-12
    )
    # seeded: the same seed gives the same numbers
    assert consequences.pose_consequences(m_hat, m_acc, seed=7) == row


def test_table_x_row_for_a_model_non_pd_in_a_known_region():
    beta_hat, _ = elbow_strip_model()
    beta_acc = description_beta()
    row = consequences.consequences(beta_hat, beta_acc, seed=1)
    reference = audit.audit(beta_hat, seed=1)
    assert row.non_pd_count_uniform == reference.violations["uniform"] > 0
    assert row.non_pd_fraction == pytest.approx(reference.non_pd_fraction_uniform)
    np.testing.assert_array_equal(row.worst_pose, reference.worst_pose)
    assert (
        row.at_worst_pose.lambda_min == pytest.approx(reference.lambda_min, rel=1e-12)
        and row.at_worst_pose.lambda_min < 0
    )
    assert row.at_worst_pose.mu_min < 0 and np.isfinite(row.at_worst_pose.tau_grow_s)
    assert row.tau_grow_fastest_s <= row.at_worst_pose.tau_grow_s
    assert row.at_worst_pose.eigdir_sign_reversed and 0 < row.at_worst_pose.misdirected_share < 1
    assert row.at_worst_pose.eigdir_torque_error_ratio > row.at_worst_pose.median_torque_error_ratio
    feasible = consequences.consequences(beta_acc, beta_acc, seed=1)
    assert (
        feasible.non_pd_fraction == 0.0
        and np.isinf(feasible.tau_grow_fastest_s)
        and np.isinf(feasible.at_worst_pose.tau_grow_s)
    )
