"""The exact Jacobian of CLIE's residual, and the refinement that uses it (route "exact").

CLIE's residual r(beta) = measured - B tau_s(beta), B the linear band limit (raw stamps -> 1 ms
grid -> zero-phase Butterworth -> 40 ms samples, clamp-masked rows dropped). Its Jacobian is
-B dtau_s/dbeta, and dtau_s/dbeta is the forward sensitivity of the closed-loop simulation,
integrated beside the state by the same Heun steps (`sensitivity_core.py`), so it is the
derivative of the discrete simulation actually run, to rounding; the band limit is linear and is
applied to the sensitivities exactly as to the torque (the 1 ms grid, not the DIDIM Jacobian's
5 ms block means).

`refine_exact`: scipy's trust-region reflective with that Jacobian, from the same start, with the
same bounds and divergence rule as the fast route (`clie.refine_fast`), integrated one Heun step
per control cycle with the same 0.25 ms solution check (`clie.one_step_per_cycle`). Stopping rule
(book/register_clie.md, "Exact route"), scipy's three tests: the first-order optimality
||v ∘ g||_inf < EXACT_GRADIENT_TOLERANCE (g = J^T r, v the bound scaling of trf), a step
||dx|| < EXACT_STEP_TOLERANCE (1 + ||x||), or an objective decrease below EXACT_FUNCTION_TOLERANCE
of the objective at a step the model predicted well; the trust region in the parameters' own
units (x_scale 1, as the fast route).
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path

import numpy as np

from crane_lib.identification import clie
from crane_lib.model import controller, spd_solve
from crane_lib.model.dynamics import bind_template, is_crane_x7
from crane_lib.model.dynamics import model as dynamic_model

EXACT_GRADIENT_TOLERANCE = 1e-10
EXACT_STEP_TOLERANCE = 1e-10
EXACT_FUNCTION_TOLERANCE = 1e-10
# x_scale 1, as the fast route (x_scale="jac" ended AG02 no better: register)
# channels filtered per block when band-limiting the sensitivities (bounds memory on long records)
CHANNEL_BLOCK = 64

_CORES: dict[str, object] = {}


def _core(model=None):
    """sensitivity_core.py bound to the generated kernels of `model` (None: the CRANE-X7's
    reduced set), cached on disk and per process, as `clie._core`."""
    model = dynamic_model("reduced") if model is None else model
    name = model._module.__name__
    if name not in _CORES:
        arm = None if is_crane_x7(model.arm) else model.arm
        _CORES[name] = bind_template(
            Path(__file__).with_name("sensitivity_core.py"),
            model.parameter_set,
            controller,
            spd_solve,
            arm=arm,
        )
    return _CORES[name]


def angles_read(model) -> np.ndarray:
    """Which joint angles the model's generated regressor kernel reads (c[j] or s[j]), (n_arm,)
    bool; the others need no derivative (the CRANE-X7's first joint: its axis is gravity's)."""
    source = inspect.getsource(model._module.regressor_kernel.py_func)
    n_arm = len(model._offsets)
    return np.array([f"= c[{j}]" in source or f"= s[{j}]" in source for j in range(n_arm)])


def simulate(problem: clie.CLIEProblem, beta) -> tuple[clie.Simulation, np.ndarray]:
    """The closed loop of `problem.simulate(beta)` (the same torque, bit for bit) and the
    derivative of its simulated torque, d tau_s / d beta, (n, n_axes, p) in N·m per unit of
    each parameter. The Simulation carries no state (q, v, a are left empty)."""
    beta = np.ascontiguousarray(beta, dtype=float)
    if beta.shape != (len(problem.names),):
        raise ValueError(f"beta of shape {beta.shape}, expected ({len(problem.names)},)")
    n, n_axes, p = problem.t.size, problem.n_axes, beta.size
    tau = np.zeros((n, n_axes))
    s_tau = np.zeros((n, n_axes, p))
    code, cycles, refined = _core(problem.model).simulate(
        problem.t,
        problem.theta_ref,
        problem.dtheta_ref,
        problem.ddtheta_ref,
        problem.theta_start,
        problem.integral_start,
        beta,
        problem.model._offsets,
        float(problem.model.gravity_z),
        problem.kt_record,
        float(problem.max_step),
        clie.INTEGRATION_STEP_S,
        float(problem.error_tolerance),
        clie.DIVERGED_SPEED_RAD_S,
        *problem.law_arguments(),
        angles_read(problem.model),
        tau,
        s_tau,
    )
    empty = np.zeros((0, n_axes))
    simulation = clie.Simulation(int(code), int(cycles), tau, empty, empty, empty, int(refined))
    return simulation, s_tau


def band_limited_jacobian(problem: clie.CLIEProblem, s_tau: np.ndarray) -> np.ndarray:
    """d residual / d beta = -(band limit of d tau_s / d beta), valid rows only, (m, p): the
    residual's own operator (problem.band_limit) on every channel that is not identically zero
    (a zero channel filters to zero), a block of channels at a time."""
    n, n_axes, p = s_tau.shape
    flat = s_tau.reshape(n, n_axes * p)
    channels = np.flatnonzero(np.any(flat != 0.0, axis=0))
    out = np.zeros((problem.keep.size, n_axes * p))
    for first in range(0, channels.size, CHANNEL_BLOCK):
        block = channels[first : first + CHANNEL_BLOCK]
        out[:, block] = problem.band_limit(flat[:, block])
    return -out.reshape(-1, n_axes, p)[problem.valid].reshape(-1, p)


def residual_and_jacobian(problem: clie.CLIEProblem, beta) -> tuple[np.ndarray, np.ndarray]:
    """CLIE's residual at beta and its exact Jacobian (m, p); a diverged simulation gives the
    divergence residual (+inf) and a zero Jacobian."""
    simulation, s_tau = simulate(problem, beta)
    residual = problem.residual_of(simulation)
    if not simulation.ok:
        return residual, np.zeros((residual.size, len(problem.names)))
    return residual, band_limited_jacobian(problem, s_tau)


def refine_exact(
    problem: clie.CLIEProblem,
    x0,
    max_iterations: int = clie.MAX_ITERATIONS,
    integration_step: float = clie.FAST_INTEGRATION_STEP_S,
    error_tolerance: float = clie.FAST_ERROR_TOLERANCE,
) -> clie.RefinementReport:
    """CLIE's objective, solver, start, bounds and divergence rule with the exact Jacobian (one
    sensitivity simulation per Jacobian), one Heun step per control cycle with the fast route's
    0.25 ms solution check (`clie.one_step_per_cycle`; integration_step <= problem.max_step runs
    at the problem's step throughout)."""

    def run(integrated: clie.CLIEProblem) -> clie.RefinementReport:
        started = time.perf_counter()
        evaluator = clie._Evaluator(integrated)
        start, _ = clie._start(evaluator, x0)

        def jacobian(x):
            evaluator.simulations += 1  # the sensitivity run also simulates the state
            simulation, s_tau = simulate(integrated, x)
            plain, residual = evaluator.evaluate(x)  # trf evaluated x just before: cached
            if not np.array_equal(simulation.tau, plain.tau):  # a loop this core does not model
                raise clie.CLIEError(
                    f"{integrated.source}: the sensitivity run does not reproduce CLIE's "
                    "simulation (a closed loop the exact route does not model)"
                )
            if not simulation.ok:
                return np.zeros((residual.size, x.size))
            return band_limited_jacobian(integrated, s_tau)

        return clie.solve_trf(
            integrated,
            start,
            jacobian,
            evaluator,
            "exact",
            max_iterations,
            EXACT_FUNCTION_TOLERANCE,
            started,
            xtol=EXACT_STEP_TOLERANCE,
            gtol=EXACT_GRADIENT_TOLERANCE,
        )

    return clie.one_step_per_cycle(problem, run, integration_step, error_tolerance)
