"""Shared fixtures: random physical standard parameters and the same arm built in Pinocchio."""

from __future__ import annotations

import numpy as np
import pytest

# first, before numpy loads: crane_lib pins the reference floating-point kernels
# (crane_lib/arithmetic.py) where the Makefile has not already
import crane_lib  # noqa: F401, I001
from crane_lib.model import robot_description
from crane_lib.model.parameters import N_LINKS


def random_link_inertials(rng: np.random.Generator):
    """Per link: mass, centre of mass (frame j), inertia about the centre of mass (full tensor)."""
    links = []
    for _ in range(N_LINKS):
        mass = rng.uniform(0.1, 2.0)
        com = rng.uniform(-0.15, 0.15, 3)
        principal = rng.uniform(1e-4, 2e-2, 3)
        principal[2] = rng.uniform(
            abs(principal[0] - principal[1]) + 1e-5, principal[0] + principal[1]
        )  # triangle inequality
        axes, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        inertia = axes @ np.diag(principal) @ axes.T
        links.append((mass, com, inertia))
    return links


def standard_from_inertials(links, rotor, viscous, coulomb) -> dict[str, float]:
    """Standard parameters: inertia about O_j, first moments, mass, rotor inertia, friction."""
    phi = {}
    for j, (m, c, i_c) in enumerate(links, start=1):
        j_o = i_c + m * (c @ c * np.eye(3) - np.outer(c, c))
        phi.update(
            {
                f"XX{j}": j_o[0, 0],
                f"XY{j}": j_o[0, 1],
                f"XZ{j}": j_o[0, 2],
                f"YY{j}": j_o[1, 1],
                f"YZ{j}": j_o[1, 2],
                f"ZZ{j}": j_o[2, 2],
                f"MX{j}": m * c[0],
                f"MY{j}": m * c[1],
                f"MZ{j}": m * c[2],
                f"M{j}": m,
            }
        )
    for a in range(1, 9):
        phi[f"IA{a}"], phi[f"FV{a}"], phi[f"FS{a}"] = rotor[a - 1], viscous[a - 1], coulomb[a - 1]
    return phi


def description_model_beta(viscous=0.1, rotor_inertia=5e-3, parameter_set="reduced") -> np.ndarray:
    """Base parameters of the manufacturer's links with plausible rotor inertias and viscous
    friction."""
    from crane_lib.model.dynamics import model
    from crane_lib.model.parameters import standard_parameter_names

    standard = dict.fromkeys(standard_parameter_names(), 0.0)
    standard.update(robot_description.description_standard_parameters())
    standard.update({f"IA{j}": rotor_inertia for j in range(1, 9)})
    standard.update({f"FV{j}": viscous(j) if callable(viscous) else viscous for j in range(1, 9)})
    return model(parameter_set).base_from_standard(standard).values


def sinusoid_bundle(beta, seed, n=900, noise=0.02):
    """A synthetic 40 ms bundle: sinusoids on every axis, torques from `beta` plus white noise."""
    from types import SimpleNamespace

    from crane_lib.model.dynamics import model as shared_model

    model = shared_model("reduced")
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 0.04
    w = 2 * np.pi * rng.uniform(0.05, 0.3, 8)
    amp = np.deg2rad(rng.uniform(30, 70, 8))
    theta = amp * np.sin(np.outer(t, w) + rng.uniform(0, 2 * np.pi, 8))
    dtheta = amp * w * np.cos(np.outer(t, w))
    ddtheta = -amp * w**2 * np.sin(np.outer(t, w))
    tau = model.inverse_dynamics(theta, dtheta, ddtheta, beta) + rng.normal(0, noise, (n, 8))
    return SimpleNamespace(
        ts=0.04,
        t=t,
        theta=theta,
        dtheta=dtheta,
        ddtheta=ddtheta,
        tau=tau,
        provenance={"source": "synthetic"},
    )


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)


def pinocchio_arm(links, gravity_z: float):
    """The seven arm links in Pinocchio, joint frames placed by the MDH table, built from SE3
    primitives."""
    pin = pytest.importorskip("pinocchio")
    model = pin.Model()
    parent = 0
    for row, (m, c, i_c) in zip(robot_description.load_mdh_table(), links):
        alpha, d, _, r = row.as_floats()
        placement = (
            pin.SE3(pin.utils.rotate("x", alpha), np.zeros(3))
            * pin.SE3(np.eye(3), np.array([d, 0.0, 0.0]))
            * pin.SE3(np.eye(3), np.array([0.0, 0.0, r]))
        )
        parent = model.addJoint(parent, pin.JointModelRZ(), placement, f"joint{row.j}")
        model.appendBodyToJoint(
            parent, pin.Inertia(m, np.asarray(c), np.asarray(i_c)), pin.SE3.Identity()
        )
    model.gravity.linear = np.array([0.0, 0.0, gravity_z])
    return model


# Hypothesis: 2,000 examples per property, derandomized so that CI runs the same
# examples every time; no deadline (a shared CI machine's timing is not the property under test)
try:
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "crane",
        max_examples=2000,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.load_profile("crane")
except ImportError:  # the property tests are then skipped by their own import
    pass
