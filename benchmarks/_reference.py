"""The reference both audit-scale benchmarks measure against: Pinocchio crba + numpy eigvalsh."""

from __future__ import annotations

import time

import numpy as np


def product_free_arm(seed: int = 1):
    """(links, standard parameters, 39 base parameters) of a random arm without products of inertia
    about O_j (diagonal tensors, centres of mass on z), so the reduced model is exact for it."""
    from crane_lib.model.dynamics import DynamicModel
    from tests.conftest import random_link_inertials, standard_from_inertials

    rng = np.random.default_rng(seed)
    links = [
        (m, np.array([0.0, 0.0, c[2]]), np.diag(np.diag(i)))
        for m, c, i in random_link_inertials(rng)
    ]
    phi = standard_from_inertials(links, np.full(8, 5e-3), np.zeros(8), np.zeros(8))
    return links, phi, DynamicModel("reduced").base_from_standard(phi)


def pinocchio_lambda_min(links, phi, poses: np.ndarray) -> tuple[np.ndarray, float]:
    """lambda_min of the arm's M (CRBA plus rotor inertia) at every pose, in a Python loop; (values,
    seconds)."""
    import pinocchio as pin

    from tests.conftest import pinocchio_arm

    arm = pinocchio_arm(links, 9.80665)
    data = arm.createData()
    armature = np.diag([phi[f"IA{j}"] for j in range(1, 8)])
    reference = np.empty(len(poses))
    start = time.perf_counter()
    for i, q in enumerate(poses):
        mass = pin.crba(arm, data, q)
        reference[i] = np.linalg.eigvalsh(np.triu(mass) + np.triu(mass, 1).T + armature)[0]
    return reference, time.perf_counter() - start
