"""Refinement after OLS/SDP, by name: the one dispatcher that `crane-id identify --refine`, the
CLIE chapter and the accepted-model pipeline call.

    clie   CLIE as Appendix D-F: trust-region reflective with a forward-difference Jacobian
           (one closed-loop simulation per parameter per iteration: tens of minutes on AG02)
    fast   the same objective, solver, bounds and tolerance with the DIDIM Jacobian (one
           simulation per iteration: about a minute on AG02; reaches the faithful objective
           within 0.5 %, register "CLIE")
    exact  the same objective, start, bounds and divergence rule with the exact Jacobian
           (forward sensitivities of the simulation, `sensitivity.refine_exact`; register
           "CLIE", entry "Exact route")
    didim  DIDIM from its regular initialization (the OLS/SDP start is not used)
    none   stop at the OLS/SDP start

Another arm (a `DynamicModel` of an `arm_description` arm other than the CRANE-X7): the same
refinements, CLIE's closed loop sized from the log's arm (`clie.build_problem`); the start's
estimator is OLS there (`check_arm_options`), and the model file names the arm.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from crane_lib.errors import InputError
from crane_lib.identification import clie, clie_position, gate, sensitivity
from crane_lib.identification.condition import (
    ConditionResult,
    condition_bundle,
    identify_condition,
    model_file_meta,
)
from crane_lib.identification.ols import IdentificationError
from crane_lib.identification.weighted import DualMetricFailure
from crane_lib.logs.preprocessing import bundle_from_grid, grid_step, to_even_grid
from crane_lib.logs.raw_log import RawLog, read_raw_log
from crane_lib.model.dynamics import DynamicModel, is_crane_x7
from crane_lib.model.parameters import ParameterSet
from crane_lib.paths import portable, recording_path

REFINE_CHOICES = ("clie", "fast", "exact", "didim", "none")
DEFAULT_REFINE = "fast"


def crane_x7_model(model: DynamicModel | None) -> bool:
    """Whether `model` (None: the default) is the CRANE-X7's."""
    return model is None or is_crane_x7(model.arm)


def check_arm_options(model: DynamicModel | None, method: str, estimator: str = "ols") -> None:
    """An InputError when the refinement or the start's estimator does not run on the arm."""
    if method not in REFINE_CHOICES:
        raise InputError("--refine", repr(method), f"one of {', '.join(REFINE_CHOICES)}")
    if crane_x7_model(model):
        return
    if estimator != "ols":
        raise InputError(
            f"--method {estimator}",
            f"asked for the {model.arm.name}, whose "
            "weighted estimators are not sized for its axes yet",
            "--method ols",
        )


def refine(
    problem: clie.CLIEProblem, start, method: str, workers: int = 2
) -> clie.RefinementReport:
    """One refinement of `start` on the CLIE problem by the named method (not "none")."""
    if method == "clie":
        return clie.refine_faithful(problem, start, workers=workers)
    if method == "fast":
        return clie.refine_fast(problem, start)
    if method == "exact":
        return sensitivity.refine_exact(problem, start)
    if method == "didim":
        return clie.didim(problem)
    raise ValueError(f"refinement {method!r}: expected one of clie, fast, exact, didim")


# "the same start": the sweep's kernels run BLAS on one thread, so the OLS start they computed
# agrees with this process's to rounding (seen: 7e-18 on AG02), not always bit for bit
SAME_START_RTOL = 1e-12
REUSED = "the CLIE sweep's run from the same start"


# the refinements solved by scipy's trust-region reflective, and its gradient test's status
TRUST_REGION_METHODS = ("clie", "fast", "exact")
GRADIENT_TEST_STATUS = 1


def stopped_at_start(summary: dict) -> bool:
    """Whether a trust-region refinement (its report as a dict) accepted no step without its
    start passing the gradient test: trf accepts only a step that lowers the objective, so an
    end objective equal to the start's means every trial step raised it and x is the start."""
    return (
        summary.get("method") in TRUST_REGION_METHODS
        and summary.get("status") != GRADIENT_TEST_STATUS
        and summary.get("objective_final") == summary.get("objective_start")
    )


def stopped_at_start_note(summary: dict) -> str | None:
    """What `crane-id identify` and `accept` print when the refinement stopped at its start
    (`stopped_at_start`); None when it moved, passed the gradient test or did not run."""
    if not stopped_at_start(summary):
        return None
    method = summary["method"]
    note = (
        f"{method}: no step accepted: every trial step from the OLS/SDP start raised the "
        "objective, so the model is the start, not refined"
    )
    if method == "fast":
        note += (
            " (the DIDIM Jacobian, the regressor along the simulated trajectory, gave no "
            "direction that lowers the objective there; --refine exact forms the exact "
            "Jacobian of the simulation, minutes per recording, and refined such starts in the "
            'book\'s measurements: register "CLIE")'
        )
    return note


def same_refinement(record: dict | None, method: str, start) -> clie.RefinementReport | None:
    """The refinement a CLIE record (`clie.write_record`) holds, if it is `method`'s from `start`
    (to SAME_START_RTOL of its largest entry); else None. The refinements are deterministic, so
    such a record is the run itself."""
    if record is None or start is None or record.get("clie_method") != method:
        return None
    recorded = np.asarray(record.get("start", ()), dtype=float)
    if recorded.shape != start.values.shape or not np.all(
        np.abs(recorded - start.values) <= SAME_START_RTOL * np.abs(start.values).max()
    ):
        return None
    return clie.report_from_record(record)


def refine_condition(
    log_path,
    condition_result,
    method: str,
    workers: int = 2,
    log=None,
    previous: dict | None = None,
    model: DynamicModel | None = None,
    grid=None,
) -> tuple[ParameterSet, dict]:
    """Refine the condition's start on the raw log it came from; returns (parameters, report).

    The report holds the method, objectives (sums of squares), iterations, simulations, wall
    time and the solver's exit message; the parameters carry the stage in their meta and the
    OLS standard errors of the start. `log`: the RawLog already read, to skip reading it again.
    `previous`: a CLIE record of this condition (the CLIE sweep's); when it holds `method`'s
    refinement from the same start, that run is used instead of refining again. `model`: the
    base-parameter model of the start (default: the "reduced" set of the log's arm); the closed
    loop runs with the controller constants of the log's arm (`clie.build_problem`). `grid`:
    `log`'s even grid (`preprocessing.to_even_grid`) when the caller has it already.
    """
    if method not in REFINE_CHOICES:
        raise InputError("--refine", repr(method), f"one of {', '.join(REFINE_CHOICES)}")
    start = condition_result.start
    if method == "none":
        if start is None:
            raise InputError(
                str(log_path),
                f"no OLS/SDP model ({condition_result.failure})",
                "an identifiable condition",
            )
        return start, {"method": "none", "route": condition_result.route}
    if start is None and method != "didim":
        raise InputError(
            str(log_path),
            f"no OLS/SDP start for CLIE ({condition_result.failure})",
            "an identifiable condition",
        )
    report = same_refinement(previous, method, start)
    reused = report is not None
    if not reused:
        log = read_raw_log(Path(log_path)) if log is None else log
        # the loop the log was recorded with
        problem = clie_position.build_problem(log, model, grid=grid)
        try:
            report = refine(problem, start, method, workers)
        except clie.CLIEError as error:
            raise InputError(
                str(log_path), str(error), "a start whose closed-loop simulation stays bounded"
            ) from None
    parameters = report.parameters()
    std_errors = getattr(start, "std_errors", None) if start is not None else None
    meta = {
        **(start.meta if start is not None else {}),
        "stage": method,
        "route": condition_result.route or "",
        "objective": f"{report.objective_final:.9g}",
        "iterations": str(report.iterations),
    }
    summary = {k: v for k, v in report.as_dict().items() if k not in ("x", "names")}
    summary["route"] = condition_result.route
    if reused:
        summary["source"] = REUSED
    return ParameterSet(parameters.names, parameters.values, std_errors, meta), summary


def record_refinement(trajectory: str, ts: float, run: int, method: str) -> clie.RefinementReport:
    """One condition of the data set refined by `method` from its OLS/SDP start on its raw log,
    written as its CLIE record (what the CLIE sweep computes per condition); a start whose
    simulation diverges is written as a failure record and raised."""
    result = identify_condition(condition_bundle(trajectory, ts, run), trajectory, run=run)
    if result.start is None:
        raise IdentificationError(
            f"{trajectory} at {ts * 1e3:g} ms could not be identified: {result.failure}"
        )
    problem = clie.recording_problem(recording_path(trajectory, run))
    try:
        report = refine(problem, result.start, method)
    except clie.CLIEError as failure:
        clie.write_failure(clie.failure_path(trajectory, ts, run, method), result, str(failure))
        raise
    clie.write_record(clie.record_path(trajectory, ts, run, report.method), result, report)
    return report


def identify_recording(
    log: RawLog,
    trajectory: str,
    ts: float,
    method: str = DEFAULT_REFINE,
    workers: int = 2,
    model: DynamicModel | None = None,
    run: int = 1,
    command_file=None,
    command_sha256: str | None = None,
    estimator: str = "ols",
    previous: dict | None = None,
    bundle=None,
    progress=None,
    grid=None,
) -> tuple[ConditionResult, ParameterSet, dict]:
    """A raw log to its refined model: preprocess at `ts`, OLS -> routing test -> projection, then
    the refinement `method`. The one path of `crane-id identify`, `crane-id accept` and the main
    job's accepted model. Returns (condition, refined parameters with the model file's meta,
    refinement report); an InputError names the log when it cannot be identified.

    The identifiability gate (`identification.gate`) runs first: with `command_file` (the
    --trajectory path) the log must have recorded that file's sha256; the bundle must hold
    enough samples per parameter and motion on every axis; the regressor's kappa must stay
    below the bound. Each refusal is a `gate.NotIdentifiable` with the reason. `estimator`
    (ols | wls | dual-metric) is the start's estimator; everything after it is unchanged.
    `previous`: a CLIE record of this condition, used as the refinement when it is `method`'s from
    the same start (`refine_condition`). `bundle` and `grid`: `preprocess(log, ts)` and the even
    grid it was made from (`to_even_grid(log)`) when the caller has them already; the grid is
    made once and shared with the refinement's problem. `progress(stage)` is told when the
    refinement starts."""
    try:
        grid_step(ts)
    except ValueError as err:
        raise InputError(
            f"--ts {ts:g}", str(err), "a whole number of milliseconds, in seconds (e.g. 0.04)"
        ) from None
    source = str(log.path) if log.path is not None else f"recording of {trajectory}"
    check_arm_options(model, method, estimator)
    gate.check_arm(log, model)
    if command_file is not None:
        gate.check_command_file(log, command_file, command_sha256)
    model = DynamicModel("reduced") if model is None else model
    if bundle is None:
        grid = to_even_grid(log) if grid is None else grid
        bundle = bundle_from_grid(grid, ts)
    gate.check_bundle(bundle, len(model.names), source)
    try:
        condition = identify_condition(bundle, trajectory, model, run=run, method=estimator)
    except DualMetricFailure as err:  # reported with its solver status, never replaced by OLS
        raise InputError(
            source, str(err), "a record the dual-metric SDP solves, or --method ols"
        ) from None
    condition.provenance.update({"log": portable(log.path) if log.path is not None else ""})
    if condition.ols is not None:
        gate.check_kappa(condition.ols.kappa, source, ts)
    if condition.start is None:
        raise InputError(source, f"not identifiable at {ts * 1e3:g} ms: {condition.failure}")
    if progress is not None:
        progress(f"refine ({method})")
    refined, report = refine_condition(
        log.path,
        condition,
        method,
        workers=workers,
        log=log,
        previous=previous,
        model=model,
        grid=grid,
    )
    meta = model_file_meta(condition, stage=method if method != "none" else "start")
    meta.update({k: v for k, v in refined.meta.items() if k != "stage"})
    meta["refine"] = method
    if not crane_x7_model(model):
        meta["arm"] = model.arm.name
    return (
        condition,
        ParameterSet(refined.names, refined.values, condition.ols.parameters.std_errors, meta),
        report,
    )
