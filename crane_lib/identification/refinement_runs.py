"""The refinements the CLIE comparisons run on one condition besides the CLIE sweep's: DIDIM from
its regular initialization, and CLIE (fast route) from the projection of the OLS estimate with
each ε of the ladder (Sec. IV-B). Computed once by the main job into two records per condition
(results/refinement_runs/), one per kind, since neither reads the other: DIDIM depends on the raw
log alone, the ladder also on the OLS estimate and the CLIE sweep's run; the pages read the
records and refine nothing.

A start whose constraints are inactive is the OLS point itself: it is refined once, and on route
O-C that run is the CLIE sweep's from the same start (deterministic, so not repeated).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from crane_lib.identification import clie
from crane_lib.identification import projection as sdp
from crane_lib.identification.condition import ROUTE_DIRECT, condition_bundle, identify_condition
from crane_lib.identification.ols import IdentificationError
from crane_lib.identification.refinement import same_refinement
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paths import RESULTS_DIR, recording_path

RUNS_DIR = RESULTS_DIR / "refinement_runs"


# the two records of a condition, by kind, with what each holds in words
KINDS = {"didim": "DIDIM", "epsilon": "the ε ladder"}


def record_path(kind: str, trajectory: str, ts: float, run: int = 1, directory=None) -> Path:
    """Where one kind of refinement run ("didim" or "epsilon") of one condition is recorded."""
    if kind not in KINDS:
        raise ValueError(f"refinement run kind {kind!r}: expected one of {tuple(KINDS)}")
    folder = RUNS_DIR if directory is None else Path(directory)
    return folder / f"{trajectory}_run{run}_{round(ts * 1e3):02d}ms_{kind}.json"


def report_entry(report: clie.RefinementReport) -> dict:
    """A refinement as the record keeps it: its summary, end point and start."""
    return {**report.as_dict(), "x0": np.asarray(report.x0, dtype=float).tolist()}


def report_of(entry: dict) -> clie.RefinementReport:
    """The refinement a record entry (`report_entry`) holds."""
    fields = {k: v for k, v in entry.items() if k not in ("x", "x0", "names", "history")}
    return clie.RefinementReport(
        names=list(entry["names"]),
        x0=np.asarray(entry["x0"]),
        x=np.asarray(entry["x"]),
        history=list(entry["history"]),
        **fields,
    )


def epsilon_ladder(
    bundle,
    result,
    problem: clie.CLIEProblem,
    model: DynamicModel,
    sweep_run: clie.RefinementReport | None,
) -> dict:
    """CLIE (fast route) from the projection of the OLS estimate with each ε of the ladder: per
    ε the projection (or why it failed), whether it moved and is PD on the record, and which
    run refined it; a start refined before (or the sweep's run on route O-C) is not refined
    again."""
    ols = result.ols.parameters
    poses = bundle.theta[sdp.constraint_poses(bundle.theta, bundle.dtheta)]
    runs, by_start, ladder = [], {}, []
    if result.route == ROUTE_DIRECT and sweep_run is not None:
        by_start[ols.values.tobytes()] = "sweep"
    for eps in sdp.EPSILON_LADDER:
        try:
            found = sdp.nearest_pd(model, ols.values, poses, eps)
        except sdp.ProjectionFailure as failure:
            ladder.append({"epsilon": eps, "failure": str(failure)})
            continue
        moved = bool(found.change_norm > 1e-9 * np.linalg.norm(ols.values))
        start = found.parameters if moved else ols
        key = start.values.tobytes()
        reused = key in by_start
        if not reused:
            runs.append(report_entry(clie.refine_fast(problem, start)))
            by_start[key] = len(runs) - 1
        pd_on_record = model.arm_min_eigenvalue(bundle.theta, found.parameters.values).min() > 0
        ladder.append(
            {
                "epsilon": eps,
                "failure": None,
                "active": moved,
                "change_norm": float(found.change_norm),
                "pd_on_record": bool(pd_on_record),
                "run": by_start[key],
                "reused": reused,
            }
        )
    lam_c = float(model.arm_min_eigenvalue(poses, ols.values).min())
    return {"lambda_min_constraint_poses": lam_c, "ladder": ladder, "runs": runs}


def didim_record(trajectory: str, ts: float, run: int) -> dict:
    """DIDIM from its regular initialization on the CLIE problem of the condition's raw 1 ms log
    (which the interval does not change), as one record."""
    problem = clie.recording_problem(recording_path(trajectory, run))
    return {
        "trajectory": trajectory,
        "ts": ts,
        "run": run,
        "didim": report_entry(clie.didim(problem)),
    }


def epsilon_record(trajectory: str, ts: float, run: int, sweep_record: dict | None) -> dict:
    """The ε ladder on one condition of the data set (its OLS/SDP start, the CLIE problem of its
    raw 1 ms log), as one record; `sweep_record`: the CLIE sweep's record of the condition (fast
    route), whose run from the OLS point is not repeated."""
    model = DynamicModel("reduced")
    bundle = condition_bundle(trajectory, ts, run)
    result = identify_condition(bundle, trajectory, model, run=run)
    if result.start is None:
        raise IdentificationError(
            f"{trajectory} at {ts * 1e3:g} ms could not be identified: {result.failure}"
        )
    problem = clie.recording_problem(recording_path(trajectory, run))
    sweep_run = same_refinement(sweep_record, "fast", result.start)
    return {
        "trajectory": trajectory,
        "ts": ts,
        "run": run,
        "route": result.route,
        "epsilon": epsilon_ladder(bundle, result, problem, model, sweep_run),
    }
