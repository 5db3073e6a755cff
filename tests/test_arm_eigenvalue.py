"""The audit's lambda_min (LAPACK called pose by pose from the compiled loop) against numpy's
eigvalsh and, bit for bit, against scipy's dsyevd (the same LAPACK build the loop calls)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from crane_lib.acceptance import audit
from crane_lib.model.dynamics import DynamicModel

from .conftest import description_model_beta, random_link_inertials, standard_from_inertials

ULPS = 8  # tolerance in units of eps times the largest |entry| of each block


def _numpy_lambda_min(model, poses, beta) -> tuple[np.ndarray, np.ndarray]:
    """(smallest eigenvalue, largest |entry|) of each 7x7 arm block by numpy."""
    blocks = model.inertia_matrix(poses, beta)[:, :7, :7]
    return np.linalg.eigvalsh(blocks)[:, 0], np.abs(blocks).max(axis=(1, 2))


def _assert_matches_numpy(model, poses, beta, exact: int = 100) -> np.ndarray:
    """Within ULPS of numpy's eigvalsh at every pose, scipy's dsyevd's at the first `exact`."""
    ours = model.arm_min_eigenvalue(poses, beta)
    reference, scale = _numpy_lambda_min(model, poses, beta)
    assert ours.shape == (len(poses),)
    bound = ULPS * np.finfo(float).eps * scale + 1e-300
    np.testing.assert_array_less(np.abs(ours - reference), bound)
    blocks = model.inertia_matrix(poses[:exact], beta)[:, :7, :7]
    dsyevd = [scipy.linalg.eigh(b, lower=True, eigvals_only=True, driver="evd")[0] for b in blocks]
    np.testing.assert_array_equal(ours[:exact], dsyevd)
    return ours


@pytest.fixture(scope="module")
def model():
    return DynamicModel("reduced")


def test_random_poses_and_parameters_match_eigvalsh(model, rng):
    """Random arms (products of inertia included) at random poses, a partial chunk included."""
    poses = audit.uniform_poses(1_501, 11)
    for _ in range(3):
        standard = standard_from_inertials(
            random_link_inertials(rng), rng.uniform(1e-3, 1e-2, 8), np.zeros(8), np.zeros(8)
        )
        lam = _assert_matches_numpy(model, poses, model.base_from_standard(standard))
        assert lam.min() > 0  # physical inertials: PD everywhere
    assert model.arm_min_eigenvalue(poses[:1], description_model_beta()).shape == (1,)
    assert model.arm_min_eigenvalue(poses[:0], description_model_beta()).shape == (0,)


def test_indefinite_matrices_match_eigvalsh(model):
    """A wrist inertia lowered until M loses PD at some poses only, and -M (negative definite)."""
    beta = description_model_beta()
    poses = audit.uniform_poses(3_000, 12)
    beta[model.names.index("ZZR6")] -= 0.0042
    lam = _assert_matches_numpy(model, poses, beta)
    assert (lam < 0).any() and (lam > 0).any()
    # lambda_min(-M) = -lambda_max(M): the value comes from the other end of the spectrum
    negated = model.arm_min_eigenvalue(poses, -beta)
    blocks = model.inertia_matrix(poses, beta)[:, :7, :7]
    largest = np.linalg.eigvalsh(blocks)[:, -1]
    scale = np.abs(blocks).max(axis=(1, 2))
    np.testing.assert_array_less(np.abs(negated + largest), ULPS * np.finfo(float).eps * scale)


@pytest.mark.parametrize("factor", [1e-150, 1e150])
def test_blocks_that_lapack_rescales_match_eigvalsh(model, factor):
    """Entries outside dsyevd's safe range take its rescaling path (the two steps alone differ there
    by rounding), so the values stay dsyevd's."""
    poses = audit.uniform_poses(300, 13)
    _assert_matches_numpy(model, poses, description_model_beta() * factor, exact=300)


def test_non_finite_matrix_raises(model):
    beta = np.full(model.n_parameters, 1e308)
    with pytest.raises(np.linalg.LinAlgError, match="not finite"):
        model.arm_min_eigenvalue(audit.uniform_poses(10, 14), beta)
