"""The exact Jacobian of CLIE's residual (forward sensitivities of the closed-loop simulation) and
the refinement that uses it (`--refine exact`).

Data: test_clie.py's rigid, noise-free 2.5 s twin record (three moves of every axis). Checked:
the sensitivity run integrates the same trajectory as CLIE's simulation bit for bit; the
direct dynamics' derivatives at random states against central differences; the residual's
Jacobian at random parameters against central differences, on both integrations (0.25 ms, and
one Heun step per cycle with cycles integrated again where the error estimate asks); the DIDIM
Jacobian as the limit the exact one approaches when feedback holds the trajectory; and the exact
route converging where the fast route stops short.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from crane_lib.identification import clie, refinement, sensitivity
from tests.test_clie import _noise_free, rigid_case  # noqa: F401 (the module's fixture)

# Central differences of the simulated residual: the simulated command is rounded to 1 pA, a
# torque quantum of ~2e-12 N·m, so the step must move the torque far above it; with h_j =
# 1e-5 max(|beta_j|, 1e-2) truncation and rounding leave ~1e-6 of a column (seen: 1.3e-6).
FD_RELATIVE_STEP = 1e-5
FD_SMALLEST_SCALE = 1e-2
JACOBIAN_TOLERANCE = 1e-5  # largest relative column error allowed
RNG_SEED = 7


def _random_parameters(beta: np.ndarray, seed: int = RNG_SEED, spread: float = 0.05):
    rng = np.random.default_rng(seed)
    return beta * (1.0 + spread * rng.standard_normal(beta.size))


def test_the_sensitivity_run_simulates_the_same_trajectory(rigid_case):  # noqa: F811
    _, problem, beta, _ = rigid_case
    b = _random_parameters(beta)
    one_step = clie.integrated_at(problem)
    for integrated in (problem, one_step):
        plain = integrated.simulate(b)
        simulation, s_tau = sensitivity.simulate(integrated, b)
        assert simulation.ok and plain.ok
        assert np.array_equal(simulation.tau, plain.tau)
        assert simulation.refined_cycles == plain.refined_cycles
        assert s_tau.shape == (integrated.t.size, integrated.n_axes, b.size)
    assert one_step.simulate(b).refined_cycles > 0  # the refinement branch is exercised


def test_direct_dynamics_derivatives_at_random_states(rigid_case):  # noqa: F811
    """S_a = d q̈/d(q, q̇, tau, beta) along random directions against central differences of the
    model's direct dynamics (numpy's solve), at random states and parameters."""
    _, problem, beta, _ = rigid_case
    core = sensitivity._core(problem.model)
    model = problem.model
    n, p = model.n_axes, beta.size
    rng = np.random.default_rng(RNG_SEED)
    offsets, gz = model._offsets, float(model.gravity_z)
    worst = 0.0
    for _ in range(5):
        b = _random_parameters(beta, int(rng.integers(1 << 30)), 0.1)
        q = rng.uniform(-1.5, 1.5, n)
        v = rng.uniform(-2.0, 2.0, n)
        tau = rng.uniform(-3.0, 3.0, n)
        s_q, s_v, s_tau = (rng.standard_normal((n, p)) for _ in range(3))
        ws_w, ws_m, ws_l = np.zeros((n, p)), np.zeros((n, n)), np.zeros((n, n))
        ws_v = np.zeros((6, n))
        ws_v[5] = 1.0
        a = np.zeros(n)
        assert core.acceleration(
            q, v, tau, b, offsets, gz, ws_w, ws_m, ws_l, ws_v, np.zeros(n, np.int64), a
        )
        assert np.allclose(a, model.direct_dynamics(q[None], v[None], tau[None], b)[0], atol=1e-9)
        n_arm = len(offsets)
        scratch = (
            *(np.zeros(size, complex) for size in (n_arm, n_arm, n, n, n, (n, p))),
            np.zeros((n, n_arm)),
            np.zeros((n, n)),
            np.zeros(n_arm),
            np.zeros(n_arm),
            np.zeros(n),
            np.zeros(n),
            np.zeros((n, p)),
            np.zeros((n, p)),
            sensitivity.angles_read(model),
        )
        out = np.zeros((n, p))
        core.acceleration_sensitivity(
            q, v, a, s_q, s_v, s_tau, b, offsets, gz, ws_m, ws_l, scratch, out
        )
        h = 1e-6
        for k in rng.choice(p, 6, replace=False):
            step = np.zeros(p)
            step[k] = h
            ends = [
                model.direct_dynamics(
                    (q + sign * h * s_q[:, k])[None],
                    (v + sign * h * s_v[:, k])[None],
                    (tau + sign * h * s_tau[:, k])[None],
                    b + sign * step,
                )[0]
                for sign in (1.0, -1.0)
            ]
            central = (ends[0] - ends[1]) / (2 * h)
            worst = max(worst, np.max(np.abs(central - out[:, k])) / np.max(np.abs(central)))
    assert worst < 1e-6, worst


@pytest.mark.parametrize("integration", ["0.25 ms", "one step per cycle"])
def test_jacobian_against_central_differences(rigid_case, integration):  # noqa: F811
    _, problem, beta, _ = rigid_case
    integrated = problem if integration == "0.25 ms" else clie.integrated_at(problem)
    b = _random_parameters(beta)
    residual, jacobian = sensitivity.residual_and_jacobian(integrated, b)
    assert np.array_equal(residual, integrated.residual(b))
    # every column one Heun step per cycle; a seeded third of them at 0.25 ms (4x the cost)
    columns = np.arange(b.size)
    if integration == "0.25 ms":
        columns = np.sort(np.random.default_rng(RNG_SEED).choice(b.size, 13, replace=False))
    jacobian = jacobian[:, columns]
    central = np.zeros_like(jacobian)
    for i, j in enumerate(columns):
        h = FD_RELATIVE_STEP * max(abs(b[j]), FD_SMALLEST_SCALE)
        up, down = b.copy(), b.copy()
        up[j] += h
        down[j] -= h
        central[:, i] = (integrated.residual(up) - integrated.residual(down)) / (2 * h)
    norms = np.linalg.norm(central, axis=0)
    assert norms.min() > 1e-3 * norms.max()  # every column carries signal on this record
    relative = np.linalg.norm(jacobian - central, axis=0) / norms
    assert relative.max() < JACOBIAN_TOLERANCE, (
        integrated.names[columns[np.argmax(relative)]],
        relative,
    )


def test_exact_jacobian_approaches_didim_as_feedback_holds_the_trajectory(rigid_case):  # noqa: F811
    """DIDIM's Jacobian assumes the simulated trajectory does not move with beta: true in the
    limit of stiff feedback. Raising the loop's bandwidth (K_P, K_V, K_I scaled as alpha^2,
    alpha, alpha^3) brings the exact Jacobian to DIDIM's; the rest at alpha = 3 is the loop's
    remaining response and DIDIM's 5 ms block means (0.13 % droop, register_clie.md)."""
    _, problem, beta, _ = rigid_case
    gaps = []
    for alpha in (1.0, 2.0, 3.0):
        c = problem.constants
        stiff = dataclasses.replace(
            problem, constants=c.with_gains(c.k_p * alpha**2, c.k_v * alpha, c.k_i * alpha**3)
        )
        simulation = stiff.simulate(beta)
        _, exact = sensitivity.residual_and_jacobian(stiff, beta)
        didim = stiff.didim_jacobian(simulation)
        gaps.append(np.linalg.norm(exact - didim) / np.linalg.norm(exact))
    assert gaps[0] > gaps[1] > gaps[2], gaps
    assert gaps[2] < 0.25 * gaps[0] and gaps[2] < 0.1, gaps


def test_exact_route_converges_where_the_fast_route_stops(rigid_case):  # noqa: F811
    """Noise-free data from the true parameters: from a 5 % perturbed start the exact route
    reaches the truth (objective 1e-10 of the start's), the fast route stops earlier."""
    _, problem, beta, _ = rigid_case
    data = _noise_free(problem, beta)
    start = _random_parameters(beta, 11)
    exact = refinement.refine(data, start, "exact")
    fast = clie.refine_fast(data, start)
    assert exact.method == "exact" and exact.status > 0
    assert exact.objective_final < 1e-10 * exact.objective_start
    assert exact.objective_final < 1e-3 * fast.objective_final
    _, jacobian = sensitivity.residual_and_jacobian(data, beta)
    assert np.linalg.norm(jacobian @ (exact.x - beta)) < 1e-5 * np.linalg.norm(
        jacobian @ (start - beta)
    )
    assert exact.jacobian_evaluations <= 15


def test_one_step_and_paper_step_end_at_the_same_point(rigid_case):  # noqa: F811
    """With the exact Jacobian the end point does not depend on the integration: from the same
    10 % perturbed start on the twin record, one Heun step per cycle and 0.25 ms steps end within
    0.1 % of each other's objective and 0.1 standard error (the least-squares SE of the end
    point, sigma^2 (J^T J)^-1 with the exact Jacobian), as the benchmark asks of the sweep."""
    _, problem, beta, _ = rigid_case
    start = _random_parameters(beta, 3, 0.1)
    one = sensitivity.refine_exact(problem, start)
    paper_step = sensitivity.refine_exact(problem, start, integration_step=problem.max_step)
    assert one.integration_step_s == clie.FAST_INTEGRATION_STEP_S
    assert paper_step.integration_step_s == clie.INTEGRATION_STEP_S
    objective = paper_step.objective_final
    assert abs(one.objective_final_paper_step - objective) < 1e-3 * objective
    residual, jacobian = sensitivity.residual_and_jacobian(problem, paper_step.x)
    sigma2 = residual @ residual / (residual.size - beta.size)
    standard_errors = np.sqrt(sigma2 * np.diag(np.linalg.inv(jacobian.T @ jacobian)))
    assert np.max(np.abs(one.x - paper_step.x) / standard_errors) < 0.1


def test_a_loop_the_sensitivities_do_not_model_is_refused(rigid_case, monkeypatch):  # noqa: F811
    """The exact route checks that its sensitivity run reproduces CLIE's simulation (a loop
    added to one simulator and not the other would give a wrong Jacobian silently)."""
    _, problem, beta, _ = rigid_case
    exact_simulate = sensitivity.simulate

    def drifted(integrated, b):
        simulation, s_tau = exact_simulate(integrated, b)
        simulation.tau[-1] += 1e-9
        return simulation, s_tau

    monkeypatch.setattr(sensitivity, "simulate", drifted)
    with pytest.raises(clie.CLIEError, match="does not reproduce"):
        sensitivity.refine_exact(problem, _random_parameters(beta), max_iterations=1)
