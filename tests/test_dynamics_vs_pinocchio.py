"""Our generated model against an independent dynamics engine (Pinocchio's RNEA and CRBA)."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import N_LINKS

from .conftest import pinocchio_arm, random_link_inertials, standard_from_inertials

pin = pytest.importorskip("pinocchio")

N_STATES = 1000
RELATIVE_TOLERANCE = 1e-9


def _reference(model_pin, phi, q, qd, qdd):
    """Pinocchio RNEA/CRBA on the arm, plus rotor inertia and friction, plus the decoupled hand."""
    data = model_pin.createData()
    taus, masses = [], []
    ia = np.array([phi[f"IA{a}"] for a in range(1, 9)])
    fv = np.array([phi[f"FV{a}"] for a in range(1, 9)])
    fs = np.array([phi[f"FS{a}"] for a in range(1, 9)])
    for qi, qdi, qddi in zip(q, qd, qdd):
        arm = pin.rnea(model_pin, data, qi[:N_LINKS], qdi[:N_LINKS], qddi[:N_LINKS])
        tau = np.r_[arm, 0.0] + ia * qddi + fv * qdi + fs * np.sign(qdi)
        mass = np.zeros((8, 8))
        mass[:N_LINKS, :N_LINKS] = pin.crba(model_pin, data, qi[:N_LINKS])
        mass[:N_LINKS, :N_LINKS] = (
            np.triu(mass[:N_LINKS, :N_LINKS]) + np.triu(mass[:N_LINKS, :N_LINKS], 1).T
        )
        mass += np.diag(ia)
        taus.append(tau)
        masses.append(mass)
    return np.array(taus), np.array(masses)


def _states(rng, n):
    return rng.uniform(-np.pi, np.pi, (n, 8)), rng.normal(0, 2, (n, 8)), rng.normal(0, 5, (n, 8))


def _relative_error(ours, reference):
    scale = np.linalg.norm(reference.reshape(len(reference), -1), axis=1)
    return np.linalg.norm((ours - reference).reshape(len(reference), -1), axis=1) / scale


@pytest.mark.parametrize("mounting, gravity_z", [("hanging", 9.80665), ("upright", -9.80665)])
def test_full_set_matches_pinocchio(rng, mounting, gravity_z):
    """65 base parameters x our regressor, and M(theta; beta), equal RNEA/CRBA for random physical
    arms."""
    ours = DynamicModel("full", mounting=mounting)
    for _ in range(2):
        links = random_link_inertials(rng)
        phi = standard_from_inertials(
            links, rng.uniform(1e-3, 1e-2, 8), rng.uniform(0, 1, 8), rng.uniform(0, 1, 8)
        )
        beta = ours.base_from_standard(phi)
        q, qd, qdd = _states(rng, N_STATES)
        tau_ref, mass_ref = _reference(pinocchio_arm(links, gravity_z), phi, q, qd, qdd)
        tau = ours.regressor(q, qd, qdd) @ beta.values
        assert _relative_error(tau, tau_ref).max() < RELATIVE_TOLERANCE
        assert _relative_error(ours.inertia_matrix(q, beta), mass_ref).max() < RELATIVE_TOLERANCE
        assert (
            _relative_error(ours.inverse_dynamics(q, qd, qdd, beta), tau_ref).max()
            < RELATIVE_TOLERANCE
        )


def test_reduced_set_is_exact_without_products_and_coulomb(rng):
    """With the 18 products of inertia of links 2..7 and all Coulomb terms zero, the 39 suffice."""
    ours = DynamicModel("reduced")
    links = []
    for m, c, i_c in random_link_inertials(rng):
        # products about O_j vanish when the centre of mass lies on one frame axis (here z) and the
        # tensor is diagonal
        c = np.array([0.0, 0.0, c[2]])
        links.append((m, c, np.diag(np.diag(i_c))))
    phi = standard_from_inertials(
        links, rng.uniform(1e-3, 1e-2, 8), rng.uniform(0, 1, 8), np.zeros(8)
    )
    assert all(abs(phi[f"{k}{j}"]) == 0 for j in range(2, 8) for k in ("XY", "XZ", "YZ"))
    beta = ours.base_from_standard(phi)
    q, qd, qdd = _states(rng, N_STATES)
    tau_ref, mass_ref = _reference(pinocchio_arm(links, 9.80665), phi, q, qd, qdd)
    assert (
        _relative_error(ours.regressor(q, qd, qdd) @ beta.values, tau_ref).max()
        < RELATIVE_TOLERANCE
    )
    assert _relative_error(ours.inertia_matrix(q, beta), mass_ref).max() < RELATIVE_TOLERANCE


def test_reduced_set_misses_products_of_inertia(rng):
    """The check above can fail: with products of inertia present, the 39-parameter model is not
    exact."""
    ours = DynamicModel("reduced")
    links = random_link_inertials(rng)
    phi = standard_from_inertials(
        links, rng.uniform(1e-3, 1e-2, 8), rng.uniform(0, 1, 8), np.zeros(8)
    )
    beta = ours.base_from_standard(phi)
    q, qd, qdd = _states(rng, 200)
    tau_ref, _ = _reference(pinocchio_arm(links, 9.80665), phi, q, qd, qdd)
    assert _relative_error(ours.regressor(q, qd, qdd) @ beta.values, tau_ref).max() > 1e-4


def test_direct_dynamics_inverts_inverse_dynamics(rng):
    ours = DynamicModel("reduced")
    links = random_link_inertials(rng)
    phi = standard_from_inertials(
        links, rng.uniform(1e-3, 1e-2, 8), rng.uniform(0, 1, 8), np.zeros(8)
    )
    beta = ours.base_from_standard(phi)
    q, qd, qdd = _states(rng, 500)
    tau = ours.inverse_dynamics(q, qd, qdd, beta)
    np.testing.assert_allclose(ours.direct_dynamics(q, qd, tau, beta), qdd, rtol=1e-9, atol=1e-9)


def test_torque_decomposition_adds_up(rng):
    """M qdd + C qd + g + friction = inverse dynamics."""
    ours = DynamicModel("reduced")
    beta = ours.base_from_standard(
        standard_from_inertials(
            random_link_inertials(rng),
            rng.uniform(1e-3, 1e-2, 8),
            rng.uniform(0, 1, 8),
            np.zeros(8),
        )
    )
    q, qd, qdd = _states(rng, 300)
    parts = (
        np.einsum("nij,nj->ni", ours.inertia_matrix(q, beta), qdd)
        + ours.coriolis_torque(q, qd, beta)
        + ours.gravity_torque(q, beta)
        + ours.friction_torque(qd, beta)
    )
    np.testing.assert_allclose(
        parts, ours.inverse_dynamics(q, qd, qdd, beta), rtol=1e-10, atol=1e-10
    )
