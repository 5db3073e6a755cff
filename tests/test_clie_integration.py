"""The fast route's integration (one Heun step per 1 ms control cycle, a cycle whose error
estimate is too large integrated again at 0.25 ms, a solution checked at 0.25 ms), its
block-mean DIDIM Jacobian, and the CLIE problem shared by an execution's conditions."""

from __future__ import annotations

import numpy as np
import pytest

from crane_lib.identification import clie
from crane_lib.logs.raw_log import group, write_raw_log
from tests.test_clie import rigid_case  # noqa: F401  (the fixture)


def _light_hand(problem, beta):
    """The truth with the hand's inertia a fiftieth: a stiff hand axis under its viscous term."""
    light = beta.copy()
    light[problem.names.index("IA8")] *= 0.02
    return light


def test_one_step_per_cycle_reproduces_the_paper_integration(rigid_case):  # noqa: F811
    _, problem, beta, _ = rigid_case
    paper, one = problem.simulate(beta), clie.integrated_at(problem).simulate(beta)
    assert paper.ok and one.ok
    torque_scale = np.abs(paper.tau).max()
    assert np.abs(one.tau - paper.tau).max() < 1e-3 * torque_scale
    objective_paper = problem.objective(beta)
    objective_one = clie.integrated_at(problem).objective(beta)
    assert abs(objective_one - objective_paper) < 1e-3 * objective_paper


def test_the_error_estimate_sends_stiff_cycles_back_to_the_paper_step(rigid_case):  # noqa: F811
    _, problem, beta, _ = rigid_case
    light = _light_hand(problem, beta)
    paper = problem.simulate(light)
    controlled = clie.integrated_at(problem).simulate(light)
    uncontrolled = clie.integrated_at(problem, error_tolerance=np.inf).simulate(light)
    assert controlled.refined_cycles > 0 and uncontrolled.refined_cycles == 0
    hand = 7
    error_controlled = np.abs(controlled.tau[:, hand] - paper.tau[:, hand]).max()
    error_uncontrolled = np.abs(uncontrolled.tau[:, hand] - paper.tau[:, hand]).max()
    assert error_controlled < 0.2 * error_uncontrolled


def test_the_fast_route_checks_its_solution_at_the_paper_step(rigid_case, monkeypatch):  # noqa: F811
    _, problem, beta, _ = rigid_case
    start = beta * (1.0 + 0.05 * np.random.default_rng(2).standard_normal(beta.size))
    report = clie.refine_fast(problem, start, max_iterations=3)
    assert report.integration_step_s == clie.FAST_INTEGRATION_STEP_S
    assert report.objective_final_paper_step == pytest.approx(
        problem.objective(report.x), rel=1e-12
    )
    gap = abs(report.objective_final - report.objective_final_paper_step)
    assert gap <= clie.FAST_STEP_OBJECTIVE_TOLERANCE * report.objective_final_paper_step
    # a solution the one-step integration gets wrong is refined again at 0.25 ms
    monkeypatch.setattr(clie, "FAST_STEP_OBJECTIVE_TOLERANCE", 0.0)
    again = clie.refine_fast(problem, start, max_iterations=3)
    assert again.integration_step_s == clie.INTEGRATION_STEP_S and "run again" in again.message
    assert again.objective_final_paper_step is None
    direct = clie.refine_fast(
        problem, start, max_iterations=3, integration_step=clie.INTEGRATION_STEP_S
    )
    np.testing.assert_array_equal(again.x, direct.x)
    assert again.simulations == direct.simulations + report.simulations


def test_the_block_mean_jacobian_is_the_whole_record_filtered(rigid_case):  # noqa: F811
    """The DIDIM Jacobian formed stamp by stamp over W's stored entries is, bit for bit, W of
    the whole record (every entry) through the sparse block means and the filter."""
    _, problem, beta, _ = rigid_case
    simulation = problem.simulate(beta)
    n, p = problem.t.size, len(problem.names)
    w = problem.regressor_along(simulation).reshape(n, 8 * p)
    whole = -problem.band_limit_for_jacobian(w).reshape(-1, 8, p)[problem.valid].reshape(-1, p)
    jacobian = problem.didim_jacobian(simulation)
    assert jacobian.tobytes() == whole.tobytes()
    stored = np.zeros(8 * p, dtype=bool)
    stored[problem.model.regressor_entries @ np.array([p, 1])] = True
    assert not np.any(w[:, ~stored]) and np.all(np.any(w[:, stored] != 0.0, axis=0))


def test_an_executions_conditions_share_its_problem_until_the_log_changes(rigid_case, tmp_path):  # noqa: F811
    log, _, _, _ = rigid_case
    path = write_raw_log(tmp_path / "CLIE_TEST_run1.npz", log.samples, log.metadata)
    first = clie.recording_problem(path)
    assert clie.recording_problem(path) is first
    np.testing.assert_array_equal(first.measured, clie.build_problem(log).measured)
    changed = log.samples.copy()
    changed[:, group("current_command")] *= 1.01
    write_raw_log(path, changed, log.metadata)
    second = clie.recording_problem(path)
    assert second is not first
    np.testing.assert_allclose(second.measured, 1.01 * first.measured, rtol=1e-9, atol=1e-12)


def test_a_start_only_the_paper_step_simulates_is_run_at_the_paper_step(rigid_case):  # noqa: F811
    _, problem, beta, _ = rigid_case
    steps = []

    def run(integrated):
        steps.append(integrated.max_step)
        if integrated.max_step > clie.INTEGRATION_STEP_S:
            raise clie.CLIEError("the start diverges one step per cycle")
        return clie.refine_fast(
            integrated, beta, max_iterations=1, integration_step=integrated.max_step
        )

    report = clie.one_step_per_cycle(problem, run)
    assert steps == [clie.FAST_INTEGRATION_STEP_S, clie.INTEGRATION_STEP_S]
    assert report.integration_step_s == clie.INTEGRATION_STEP_S
    assert "the start diverges one step per cycle" in report.message


def test_didim_integrates_as_the_fast_route_when_asked(rigid_case):  # noqa: F811
    _, problem, _, _ = rigid_case
    assert clie.didim(problem, max_iterations=1).integration_step_s == clie.INTEGRATION_STEP_S
    report = clie.didim(problem, max_iterations=2, integration_step=clie.FAST_INTEGRATION_STEP_S)
    assert report.integration_step_s == clie.FAST_INTEGRATION_STEP_S
    assert report.objective_final_paper_step == pytest.approx(
        problem.objective(report.x), rel=1e-12
    )
