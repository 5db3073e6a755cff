"""CLIE on other arms than the CRANE-X7 (the SO-101, the ViperX 300 S): the closed-loop simulator
sized from the arm's kernels, its controller constants and current register, the fast route and
DIDIM, the size checks; the CRANE-X7 through the same general rules (its sets, units and
constants unchanged).

Data: the arm's PI_ALPHA (every pair of axes out and back; 10 s of motion on the SO-101, 19 s on
the ViperX) recorded on the arm's twin with a fixed seed, rigid, noise-free, without the
supply-voltage limit, with the products of inertia and Coulomb friction removed from the truth
and the torque constant of the run put into the problem, so the arm's reduced model can
represent the plant (as tests/test_clie.py does for the CRANE-X7); what stays unmodelled is the
twin's dead time, encoder counts and current register.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from crane_lib.constants import KT, KT_CORRECTION
from crane_lib.errors import InputError
from crane_lib.excitation.arms import read_arm
from crane_lib.identification import clie
from crane_lib.logs.preprocessing import preprocess
from crane_lib.logs.raw_log import RawLog, group, n_columns
from crane_lib.model.controller import load_realization_constants
from crane_lib.model.dynamics import model as dynamic_model
from crane_lib.model.parameters import ParameterSet
from crane_lib.twin import recorder as twin
from crane_lib.twin import truth as twin_truth
from tests.test_clie import rigid_case as crane_case  # noqa: F401  (the CRANE-X7's fixture)

ARMS = ("so101", "vx300s")
SEED = 5
MARGIN_S = 0.5  # idle kept on each side of the motion in the truncated record
PERTURBATION = 0.2  # relative spread of the perturbed start
# The truth's objective against the perturbed start's, measured: SO-101 0.036 (0.045 and 1.25
# N²m²), ViperX 0.028 (2.7 and 98); its floor is what the simulator leaves out (the twin's dead
# time, encoder counts and current register: 6.5 mA on the SO-101, a sizeable step of its small
# torques).
TRUTH_OVER_PERTURBED = 0.1
# the truth's residual over the band-limited measured torque, root of sums of squares
# (measured: SO-101 0.020, ViperX 0.015)
TRUTH_RELATIVE_RESIDUAL = 0.05
OLS_INTERVAL_S = 0.04  # the OLS start's bundle: the paper's headline interval
# the fast route's objective over its OLS start's (measured: SO-101 0.68, ViperX 0.62)
FAST_OVER_OLS = 0.8
FAST_ITERATIONS = 4
# DIDIM from its regular start, three Gauss-Newton steps (measured: SO-101 100 to 0.030 N²m²,
# ViperX 11210 to 0.96, both at the fast route's level from OLS)
DIDIM_ITERATIONS = 3
DIDIM_OVER_START = 0.01


def _representable_truth(arm: str) -> ParameterSet:
    """The arm's truth without what the reduced model leaves out (products of inertia, Coulomb)."""
    standard = twin_truth.truth_parameters(arm)
    values = [
        0.0 if n[:2] in ("XY", "XZ", "YZ", "FS") else v
        for n, v in zip(standard.names, standard.values)
    ]
    return ParameterSet(standard.names, values)


@pytest.fixture(scope="module", params=ARMS)
def arm_case(request):
    """(arm, truncated log, problem, true base parameters) of the rigid recording."""
    return rigid_case(request.param)


def rigid_case(arm: str):
    """The arm's rigid recording of PI_ALPHA, its CLIE problem and true parameters."""
    truth = _representable_truth(arm)
    settings = twin_truth.compute_plant_settings(truth, arm)
    settings = dataclasses.replace(settings, kt_true=settings.kt_logged.copy())
    samples, metadata = twin.record(
        read_arm(arm)["PI_ALPHA"],
        seed=SEED,
        arm=arm,
        truth=truth,
        plant_settings=settings,
        compliant=False,
        noise_scale=0.0,
        voltage_limit=False,
        drive_mode="current",  # controller (2)'s CLIE; position mode: tests/test_position_loop.py
    )
    start = int(metadata["motion_start_sample"]) - int(MARGIN_S * 1e3)
    end = int(metadata["motion_end_sample"]) + int(MARGIN_S * 1e3)
    log = RawLog(samples[start:end].copy(), metadata)
    problem = clie.build_problem(log)
    # the run-to-run torque-constant draw stays in the twin: compare in this run's true torque
    kt_true = np.array([float(v) for v in metadata["kt_true_this_run"].split()])
    problem.kt_record = kt_true
    problem.measured = problem.measured * kt_true / log.layout.kt
    beta = problem.model.base_from_standard(truth).values
    return arm, log, problem, beta


def _perturbed(beta: np.ndarray) -> np.ndarray:
    return beta * (1.0 + PERTURBATION * np.random.default_rng(3).standard_normal(beta.size))


def test_the_problem_and_its_simulator_are_the_arms(arm_case):
    arm, log, problem, _ = arm_case
    arm_model = clie.arm_model(arm)
    assert problem.model is arm_model and problem.n_axes == log.n_axes == arm_model.n_axes
    core = clie._core(problem.model)
    assert (core.N_ARM, core.N_AX) == (arm_model.n_joints, arm_model.n_axes)
    constants = twin_truth.realization_constants(arm)
    np.testing.assert_array_equal(problem.constants.m_hat, constants.m_hat)
    np.testing.assert_array_equal(problem.constants.limit_units, constants.limit_units)
    assert problem.constants.current_unit == constants.current_unit
    # the limit of the simulated register: the arm's own current limit, in 1 pA units
    limit_a = problem.law_arguments()[-1] * clie.SIMULATED_CURRENT_RESOLUTION_A
    np.testing.assert_allclose(limit_a, constants.limit_units * constants.current_unit, rtol=1e-12)
    # the CRANE-X7's core is a different one, sized seven joints and eight axes
    crane = clie._core()
    assert (crane.N_ARM, crane.N_AX) == (7, 8) and crane is not core


def test_true_parameters_reproduce_the_record_far_better_than_a_perturbed_start(arm_case):
    _, log, problem, beta = arm_case
    at_truth = problem.simulate(beta)
    assert at_truth.ok and at_truth.tau.shape == (problem.t.size, log.n_axes)
    objective_truth = problem.objective(beta)
    objective_perturbed = problem.objective(_perturbed(beta))
    assert objective_truth < TRUTH_OVER_PERTURBED * objective_perturbed
    measured = problem.measured[problem.valid]
    assert np.sqrt(objective_truth / np.sum(measured**2)) < TRUTH_RELATIVE_RESIDUAL
    # and the record is no hold: the simulated torque carries the motion on every axis
    assert np.all(np.ptp(at_truth.tau, axis=0) > 0.0)


def test_simulated_torque_is_the_inverse_dynamics_of_the_simulated_trajectory(arm_case):
    _, _, problem, beta = arm_case
    simulation = problem.simulate(beta)
    w = problem.regressor_along(simulation)
    np.testing.assert_allclose(w @ beta, simulation.tau, atol=1e-9 * np.abs(simulation.tau).max())


def test_the_fast_route_from_an_ols_start_lowers_the_objective(arm_case):
    _, log, problem, beta = arm_case
    bundle = preprocess(log, OLS_INTERVAL_S)
    w = problem.model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta)
    tau = bundle.tau * problem.kt_record / log.layout.kt  # the run's true torque, as the problem
    ols = np.linalg.lstsq(w.reshape(-1, w.shape[2]), tau.ravel(), rcond=None)[0]
    report = clie.refine_fast(problem, ols, max_iterations=FAST_ITERATIONS)
    assert np.isfinite(report.objective_start)
    assert report.objective_final < FAST_OVER_OLS * report.objective_start, report.message
    check = problem.objective(report.x)  # the fast route's check at 0.25 ms
    assert report.objective_final_paper_step == pytest.approx(check, rel=1e-12)
    assert report.x.shape == beta.shape and report.names == problem.model.names


def test_didim_starts_from_the_arms_joint_models_and_lowers_the_objective(arm_case):
    _, _, problem, _ = arm_case
    names, constants = problem.names, problem.constants
    start = clie.regular_initialization(names, constants, problem.record_per_command())
    to_record = problem.kt_record / constants.kt_command
    for axis in range(1, problem.n_axes + 1):
        inertia = f"IA{axis}" if f"IA{axis}" in names else f"ZZR{axis}"
        expected = constants.m_hat[axis - 1] * to_record[axis - 1]
        assert start[names.index(inertia)] == pytest.approx(expected)
    assert np.count_nonzero(start) == 2 * problem.n_axes
    lower, _ = clie.clie_bounds(names, start + 1.0)
    nonnegative = [n for n in names if clie.is_nonnegative(n)]
    assert nonnegative == ["ZZR1"] + [n for n in names if n.startswith("IA")]
    assert all(lower[names.index(n)] == 0.0 for n in nonnegative)
    report = clie.didim(problem, max_iterations=DIDIM_ITERATIONS)
    np.testing.assert_array_equal(report.x0, start)
    assert report.objective_final < DIDIM_OVER_START * report.objective_start


def test_wrong_sizes_are_refused(arm_case):
    arm, log, problem, beta = arm_case
    with pytest.raises(InputError, match="model's arm"):
        clie.build_problem(log, dynamic_model("reduced"))  # the CRANE-X7's model
    with pytest.raises(InputError, match="realization constants"):
        clie.build_problem(log, constants=load_realization_constants())  # eight axes
    crane_log = RawLog(np.zeros((4, n_columns())), {})
    with pytest.raises(InputError, match="model's arm"):
        clie.build_problem(crane_log, clie.arm_model(arm))
    with pytest.raises(InputError, match="CLIE parameters"):
        problem.simulate(beta[:-1])
    with pytest.raises(InputError, match="CLIE parameters"):
        problem.simulate(np.concatenate([beta, [0.0]]))


def test_a_record_clamped_throughout_is_refused(arm_case):
    """Every residual sample clamp-masked: the objective would be zero for every beta."""
    _, log, _, _ = arm_case
    samples = log.samples.copy()
    current = group("current_command", log.n_axes)
    samples[:, current.start] = log.layout.clamp_torque[0] / log.layout.kt[0]  # axis 1 at its limit
    with pytest.raises(clie.CLIEError, match="clamp-masked"):
        clie.build_problem(RawLog(samples, log.metadata))


# ---------------------------------------------------------------- the CRANE-X7 by the same rules


def test_the_general_rules_give_the_crane_x7s_choices(crane_case):  # noqa: F811
    log, problem, _, _ = crane_case
    names = problem.names
    assert clie.arm_model("crane_x7") is dynamic_model("reduced") and problem.n_axes == 8
    table_xix, by_arm = load_realization_constants(), clie.arm_realization_constants("crane_x7")
    assert by_arm.models == table_xix.models
    for ours, theirs in zip(by_arm.law_arguments(), table_xix.law_arguments()):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(clie.build_problem(log).kt_record, KT)  # the logged Kt
    assert tuple(n for n in names if clie.is_nonnegative(n)) == clie.NONNEGATIVE_PARAMETERS
    constants = problem.constants
    start = clie.regular_initialization(names, constants, problem.record_per_command())
    diagonal = ["ZZR1", "ZZR2"] + [f"IA{j}" for j in range(3, 9)]
    for axis, name in enumerate(diagonal):
        assert start[names.index(name)] == constants.m_hat[axis] * KT_CORRECTION
        viscous = constants.m_hat[axis] * constants.d_hat[axis] * KT_CORRECTION
        assert start[names.index(f"FV{axis + 1}")] == viscous
    assert np.count_nonzero(start) == 16
