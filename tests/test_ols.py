"""OLS by QR: recovers known parameters, honest standard errors, refuses rank-deficient records."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.identification.ols import IdentificationError, ols, stack
from crane_lib.model.dynamics import DynamicModel

from .conftest import description_model_beta


@pytest.fixture(scope="module")
def model():
    return DynamicModel("reduced")


@pytest.fixture(scope="module")
def true_beta():
    return description_model_beta(viscous=lambda j: 0.05 * j)


def _states(rng, n):
    t = np.arange(n) * 0.04
    freqs = rng.uniform(0.05, 0.4, 8)
    phase = rng.uniform(0, 2 * np.pi, 8)
    amp = np.deg2rad(rng.uniform(30, 80, 8))
    w = 2 * np.pi * freqs
    q = amp * np.sin(np.outer(t, w) + phase)
    return q, amp * w * np.cos(np.outer(t, w) + phase), -amp * w**2 * np.sin(np.outer(t, w) + phase)


def test_ols_recovers_parameters_with_calibrated_standard_errors(model, true_beta):
    rng = np.random.default_rng(5)
    q, qd, qdd = _states(rng, 3000)
    w = model.regressor(q, qd, qdd)
    noise_sigma = 0.05
    estimates, errors = [], []
    for _ in range(60):
        tau = w @ true_beta + rng.normal(0, noise_sigma, (len(q), 8))
        result = ols(*stack(w, tau), model.names)
        estimates.append(result.parameters.values)
        errors.append(result.parameters.std_errors)
    estimates, errors = np.array(estimates), np.array(errors)
    # unbiased: the mean estimate is within 5 standard errors of the mean of the truth
    assert np.all(
        np.abs(estimates.mean(0) - true_beta) < 5 * errors.mean(0) / np.sqrt(len(estimates))
    )
    # calibrated: the predicted standard error matches the spread across noise draws within 30 %
    ratio = estimates.std(0, ddof=1) / errors.mean(0)
    assert np.all((ratio > 0.7) & (ratio < 1.3)), ratio
    assert result.info["sigma2"] == pytest.approx(noise_sigma**2, rel=0.05)


def test_kappa_is_the_condition_number_of_w_all(model):
    rng = np.random.default_rng(6)
    q, qd, qdd = _states(rng, 800)
    w_all, y = stack(model.regressor(q, qd, qdd), rng.normal(size=(800, 8)))
    assert ols(w_all, y, model.names).kappa == pytest.approx(np.linalg.cond(w_all), rel=1e-9)


def test_solution_equals_lstsq(model):
    rng = np.random.default_rng(7)
    q, qd, qdd = _states(rng, 500)
    w_all, y = stack(model.regressor(q, qd, qdd), rng.normal(size=(500, 8)))
    np.testing.assert_allclose(
        ols(w_all, y, model.names).parameters.values,
        np.linalg.lstsq(w_all, y, rcond=None)[0],
        rtol=1e-8,
        atol=1e-10,
    )


def test_a_record_that_moves_one_joint_is_refused(model):
    rng = np.random.default_rng(8)
    q, qd, qdd = _states(rng, 2000)
    q[:, 1:], qd[:, 1:], qdd[:, 1:] = 0.3, 0.0, 0.0  # only joint 1 moves
    with pytest.raises(IdentificationError, match="rank"):
        ols(*stack(model.regressor(q, qd, qdd), rng.normal(size=(2000, 8))), model.names)


def test_too_few_rows_is_refused(model):
    rng = np.random.default_rng(9)
    q, qd, qdd = _states(rng, 4)
    with pytest.raises(IdentificationError, match="too short"):
        ols(*stack(model.regressor(q, qd, qdd), rng.normal(size=(4, 8))), model.names)
