"""Generated kernels for any arm: DynamicModel(arm=...) against Pinocchio built from the same
description, the CRANE-X7's description on its MDH path, the nested sets, gravity, bad input."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from crane_lib.errors import InputError
from crane_lib.model import arm_description, base_parameters, dynamics
from crane_lib.model.dynamics import DynamicModel, bind_template
from tests.arm_cases import (
    pinocchio_model,
    prior_with_drives,
    random_states,
    reference_dynamics,
    relative_error,
)

pin = pytest.importorskip("pinocchio")

RELATIVE_TOLERANCE = 1e-9
OTHER_ARMS = ("vx300s", "so101")


@pytest.fixture(scope="module")
def arms():
    return {name: arm_description.load_arm(name) for name in ("crane_x7", *OTHER_ARMS)}


# The CRANE-X7 through the chain recursion (general=True) is compared in bench_model: its
# kernels take half a minute of numba compile, and test_arm_models already checks the recursion
# and its grouping on the CRANE-X7 against Pinocchio and the MDH grouping.
@pytest.mark.parametrize("name", OTHER_ARMS)
def test_generated_kernels_match_pinocchio(name, arms, rng):
    """M, inverse dynamics, W beta and lambda_min of the arm block are Pinocchio's to 1e-9."""
    arm = arms[name]
    model = DynamicModel("full", arm=arm)
    assert (
        model._chain
        and model.n_axes == arm.n_axes
        and model._offsets.tolist() == [0.0] * (arm.n_joints)
    )
    phi = prior_with_drives(arm, rng)
    beta = model.base_from_standard(phi)
    q, qd, qdd = random_states(arm, rng)
    tau_ref, mass_ref = reference_dynamics(pinocchio_model(name, arm), arm, phi, q, qd, qdd)
    arm_block = mass_ref[:, : arm.n_joints, : arm.n_joints]
    lam_ref = np.linalg.eigvalsh(arm_block)[:, 0]
    lam = model.arm_min_eigenvalue(q, beta)
    errors = {
        "M": relative_error(model.inertia_matrix(q, beta), mass_ref),
        "RNEA": relative_error(model.inverse_dynamics(q, qd, qdd, beta), tau_ref),
        "W beta": relative_error(model.regressor(q, qd, qdd) @ beta.values, tau_ref),
        "lambda_min": float(np.max(np.abs(lam - lam_ref)) / np.max(np.abs(lam_ref))),
    }
    print(f"{name}: {model.n_parameters} base parameters; relative errors {errors}")
    assert max(errors.values()) < RELATIVE_TOLERANCE, errors


def test_the_comparison_sees_a_wrong_parameter(arms, rng):
    """One base parameter off by 1 % shows in the torques: the agreement above is not vacuous."""
    arm = arms["vx300s"]
    model = DynamicModel("full", arm=arm)
    phi = prior_with_drives(arm, rng)
    beta = model.base_from_standard(phi).values.copy()
    beta[model.names.index("MXR2")] *= 1.01
    q, qd, qdd = random_states(arm, rng, 50)
    tau_ref, _ = reference_dynamics(pinocchio_model("vx300s", arm), arm, phi, q, qd, qdd)
    assert relative_error(model.inverse_dynamics(q, qd, qdd, beta), tau_ref) > 1e-4


def test_the_crane_x7_description_is_the_mdh_path_bit_for_bit(arms, rng):
    """arm=load_arm("crane_x7") gives the default kernels (one module), so every result agrees."""
    arm = arms["crane_x7"]
    default, described = DynamicModel("full"), DynamicModel("full", arm=arm)
    assert described._module is default._module and not described._chain
    assert dynamics.model("full", arm=arm) is dynamics.model("full")
    assert dynamics.base_matrix("full", arm) is dynamics.base_matrix("full")
    beta = np.asarray(
        default.base_from_standard(prior_with_drives(arm, rng) | {"IA8": 1e-3}).values
    )
    q, qd, qdd = random_states(arm, rng, 50)
    np.testing.assert_array_equal(described.regressor(q, qd, qdd), default.regressor(q, qd, qdd))
    np.testing.assert_array_equal(
        described.inertia_matrix(q, beta), default.inertia_matrix(q, beta)
    )
    np.testing.assert_array_equal(
        described.arm_min_eigenvalue(q, beta), default.arm_min_eigenvalue(q, beta)
    )


@pytest.mark.parametrize("name", OTHER_ARMS)
def test_parameter_sets_follow_the_crane_x7_rule(name, arms, rng):
    """Four nested sets; reduced drops exactly the products of inertia and Coulomb terms; every
    set's regressor is the full set's columns."""
    arm = arms[name]
    full = DynamicModel("full", arm=arm)
    sets = {s: dynamics.arm_parameter_set(arm, s) for s in base_parameters.PARAMETER_SETS}
    assert sets["full"] == list(dynamics.arm_grouping(arm)[1]) == full.names
    kinds = {s: {n.rstrip("0123456789") for n in names} for s, names in sets.items()}
    assert kinds["reduced"].isdisjoint({"XY", "XZ", "YZ", "FS"})
    assert kinds["reduced+poi"] - kinds["reduced"] == {"XY", "XZ", "YZ"}
    assert kinds["reduced+coulomb"] - kinds["reduced"] == {"FS"}
    q, qd, qdd = random_states(arm, rng, 20)
    w_full = full.regressor(q, qd, qdd)
    for s in ("reduced",):  # the set identification uses; the others differ only in names
        model = DynamicModel(s, arm=arm)
        assert model.names == sets[s]
        columns = [full.names.index(n) for n in model.names]
        np.testing.assert_allclose(
            model.regressor(q, qd, qdd), w_full[:, :, columns], rtol=1e-14, atol=1e-14
        )
        np.testing.assert_array_equal(model.base_matrix(), full.base_matrix()[columns])


def test_gravity_follows_the_arms_direction_and_mounting(arms, rng):
    """gz: the arm's own mounting pulls along its gravity direction, the other flips it, 0 none."""
    arm = arms["so101"]
    upright, hanging = DynamicModel("full", arm=arm), DynamicModel("full", "hanging", arm=arm)
    assert upright.mounting == arm.mounting == "upright" and upright.gravity_z == -hanging.gravity_z
    beta = upright.base_from_standard(prior_with_drives(arm, rng)).values
    q, _, _ = random_states(arm, rng, 20)
    g_up = upright.gravity_torque(q, beta)
    assert np.max(np.abs(g_up)) > 0.1
    np.testing.assert_allclose(hanging.gravity_torque(q, beta), -g_up, rtol=1e-15, atol=0)
    zeros = np.zeros_like(q)
    assert not upright.regressor(q, zeros, zeros, gravity=False).any()
    with pytest.raises(ValueError, match="mounting 'sideways'"):
        DynamicModel("full", "sideways", arm=arm)


def test_bad_input_is_refused_for_that_arm(arms):
    arm = arms["vx300s"]
    model = DynamicModel("reduced", arm=arm)
    crane_width = np.zeros((3, 8))
    with pytest.raises(InputError, match=r"q.*shape \(3, 8\).*\(samples, 7\) or \(samples, 6\)"):
        model.regressor(crane_width, crane_width, crane_width)
    q = np.zeros((4, 7))
    q[2, 4] = np.nan
    with pytest.raises(InputError, match=r"q sample 2, axis 5"):
        model.inertia_matrix(q, np.ones(model.n_parameters))
    with pytest.raises(InputError, match=r"base parameters.*\(33,\)"):
        model.arm_min_eigenvalue(np.zeros((1, 7)), np.ones(39))
    with pytest.raises(InputError, match=r"standard parameters.*missing \['XX1'"):
        model.base_from_standard({"ZZ1": 1.0})
    with pytest.raises(KeyError, match="unknown parameter set 'tiny'"):
        DynamicModel("tiny", arm=arm)
    with pytest.raises(ValueError, match="table_path"):
        DynamicModel("reduced", table_path="elsewhere.csv", arm=arm)


def test_kernels_are_keyed_by_the_description(arms):
    """A moved joint origin is another model; the inertial prior or limits are not."""
    arm = arms["vx300s"]
    elbow = arm.joints[2]
    moved = dataclasses.replace(
        elbow, translation=(elbow.translation[0] + Fraction(1, 1000), *elbow.translation[1:])
    )
    other = dataclasses.replace(arm, joints=(*arm.joints[:2], moved, *arm.joints[3:]))
    assert dynamics.arm_key(other) != dynamics.arm_key(arm)
    same = dataclasses.replace(arm, inertial_prior={}, audit_domain=arm.audit_domain * 0.5)
    assert dynamics.arm_key(same) == dynamics.arm_key(arm)
    assert dynamics.is_crane_x7(arms["crane_x7"]) and not dynamics.is_crane_x7(arm)


def test_bind_template_binds_an_arms_kernels(arms, rng, tmp_path):
    """A numba template bound with arm= runs that arm's regressor kernel."""
    arm = arms["so101"]
    template = tmp_path / "templates" / "gravity_core.py"
    template.parent.mkdir()
    template.write_text(
        "import numba\nimport numpy as np\n\n"
        + dynamics.KERNEL_MARKER
        + "\n\n\n@numba.njit\ndef gravity_regressor(c, s, gz, out):\n"
        + "    zeros = np.zeros(out.shape[0])\n"
        + "    regressor_kernel(c, s, zeros, zeros, zeros, gz, out)\n",
        encoding="utf-8",
    )
    model = DynamicModel("reduced", arm=arm)
    bound = bind_template(template, "reduced", arm=arm)
    assert bound.regressor_kernel is model._module.regressor_kernel
    q, _, _ = random_states(arm, rng, 1)
    out = np.zeros((arm.n_axes, model.n_parameters))
    bound.gravity_regressor(np.cos(q[0, :5]), np.sin(q[0, :5]), model.gravity_z, out)
    zeros = np.zeros_like(q)
    np.testing.assert_array_equal(out, model.regressor(q, zeros, zeros)[0])


def test_direct_dynamics_inverts_inverse_dynamics_for_an_arm(arms, rng):
    """qdd -> tau -> qdd on the ViperX 300 S, and tau = M qdd + C qd + g + friction."""
    arm = arms["vx300s"]
    model = DynamicModel("full", arm=arm)
    beta = model.base_from_standard(prior_with_drives(arm, rng)).values
    q, qd, qdd = random_states(arm, rng, 50)
    tau = model.inverse_dynamics(q, qd, qdd, beta)
    assert relative_error(model.direct_dynamics(q, qd, tau, beta), qdd) < 1e-9
    parts = (
        np.einsum("nij,nj->ni", model.inertia_matrix(q, beta), qdd)
        + model.coriolis_torque(q, qd, beta)
        + model.gravity_torque(q, beta)
        + model.friction_torque(qd, beta)
    )
    assert relative_error(parts, tau) < 1e-12


@pytest.mark.parametrize("name", ("crane_x7", *OTHER_ARMS))
def test_net_torque_kernel_is_the_product_over_every_column(name, arms, rng):
    """tau - W(q, q̇, 0) beta over W's stored entries equals the loop over every column, bit for
    bit (the simulators' direct dynamics; a dropped stored entry would change the bits)."""
    arm = arms[name]
    model = dynamics.model("reduced") if name == "crane_x7" else DynamicModel("reduced", arm=arm)
    beta = model.base_from_standard(prior_with_drives(arm, rng)).values
    q, qd, _ = random_states(arm, rng, 20)
    regressors = model.regressor(q, qd, np.zeros_like(q))
    for w in regressors:
        tau = rng.standard_normal(arm.n_axes)
        out = np.zeros(arm.n_axes)
        model._module.net_torque_kernel(tau, np.ascontiguousarray(w), beta, out)
        expected = tau.copy()
        for r in range(arm.n_axes):
            for k in range(beta.size):
                expected[r] -= w[r, k] * beta[k]
        assert out.tobytes() == expected.tobytes()
