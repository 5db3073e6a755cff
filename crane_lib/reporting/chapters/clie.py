"""Chapter "CLIE" (paper Sec. IV-B, IV-C, VI-B, Appendix D-E, D-F; Fig. 4, Table VI, Table XII's
CLIE panel): tables and figures of the representative condition's refinement, Table VI stage by
stage, the fast route against the faithful one (also on every condition both refined: the
chapter "Parameter clouds" shows it), DIDIM, the runs from the four projections, and the cost
over the CLIE sweep. Data: the twin's recordings, the OLS/SDP and CLIE sweeps' records."""

from __future__ import annotations

import os
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import NullFormatter, ScalarFormatter

from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance.selection import standardize
from crane_lib.identification import clie, refinement_runs
from crane_lib.identification import condition as identify
from crane_lib.identification import projection as sdp
from crane_lib.identification.refinement import same_refinement
from crane_lib.model.parameters import ParameterSet
from crane_lib.paper_numbers import paper
from crane_lib.paths import REPO_ROOT
from crane_lib.records import read_json_record
from crane_lib.reporting.chapters import profile
from crane_lib.reporting.chapters.validation import twin_records
from crane_lib.reporting.diagrams import clie_block_diagram  # noqa: F401 (the page's Fig. 4)
from crane_lib.reporting.tables import Comparison, Count, Why, comparison_table, numbered

SHORT = "AP01"  # the short record on which both routes run
AUDIT_SEED = 1
VALIDATION = ("V01", "V02", "V03")
EPSILON_IDS = {
    0.001: "clie_iters_eps_0001",
    0.002: "clie_iters_eps_0002",
    0.005: "clie_iters_eps_0005",
    0.01: "clie_iters_eps_001",
}


def condition_label(trajectory: str, ts: float) -> str:
    """'AG02 at 40 ms': how tables and figures name a condition."""
    return f"{trajectory} at {ts * 1e3:g} ms"


def condition_record(trajectory: str, ts: float, run: int) -> dict:
    """The OLS/SDP sweep's record of one condition (OLS estimate, route, projection)."""
    return read_json_record(identify.condition_record_path(trajectory, ts, run))


def start_of(record: dict) -> ParameterSet:
    """CLIE's start as a condition record holds it: the projection on route O-S-C, else OLS."""
    return ParameterSet(record["names"], np.asarray(record.get("projected", record["ols"])))


def sweep_record(trajectory: str, ts: float, run: int, method: str) -> dict | None:
    """The CLIE sweep's record of one condition refined by `method` ("fast" or "clie")."""
    path = clie.record_path(trajectory, ts, run, method)
    return read_json_record(path) if path.is_file() else None


def sweep_refinement(record: dict, method: str) -> clie.RefinementReport | None:
    """The CLIE sweep's refinement by `method` of the condition a condition record describes,
    when the sweep of this build wrote one from the same start (the pipeline runs the sweep
    before the book, so in `make book` the record is this build's; a record from another start,
    e.g. older code, is not used)."""
    recorded = sweep_record(record["trajectory"], record["ts"], record["run"], method)
    return same_refinement(recorded, method, start_of(record))


def sweep_refinement_of(record: dict, method: str) -> clie.RefinementReport:
    """The CLIE sweep's refinement of this condition by `method` from the same start; a build
    without it (the sweep failed, or never ran this condition) is an error naming the record and
    the step that writes it (the page computes no refinement)."""
    reused = sweep_refinement(record, method)
    where = record["trajectory"], record["ts"], record["run"], method
    if reused is None:
        failure = clie.failure_path(*where)
        why = (
            "the sweep could not refine it: " + str(read_json_record(failure).get("failure"))
            if failure.is_file()
            else "no record from this start"
        )
        raise RuntimeError(
            f"{clie.record_path(*where)}: {why}; the CLIE sweep of `make book` "
            "(crane_book.pipeline) writes it"
        )
    return reused


def report_table(label: str, report: clie.RefinementReport) -> object:
    """One refinement: its objective at the start and the end, iterations, cost and exit."""
    frame = pd.DataFrame(
        {
            label: {
                "route (refine)": report.method,
                "objective at the start (N²·m²)": report.objective_start,
                "objective at the end (N²·m²)": report.objective_final,
                "iterations": report.iterations,
                "closed-loop simulations": report.simulations,
                "wall time (s)": report.wall_time_s,
                "exit": report.message,
            }
        }
    )
    frame.index.name = "refinement"
    return numbered(frame, "CLIE on " + label + " (twin)", "tab-clie-run", digits=6)


def refinement_figure(
    label: str, report: clie.RefinementReport, t: np.ndarray, torques: dict, axis: int = 2
):
    """The objective per iteration (left) and, for one axis, the band-limited measured torque
    against the simulated ones (right; `torques`: line -> (samples, axes) at the times t, s)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.2))
    axes[0].plot(
        np.arange(len(report.history) + 1), [report.objective_start, *report.history], "o-"
    )
    axes[0].set_xlabel("iteration")
    axes[0].set_ylabel("objective Σr² (N²·m²)")
    axes[0].set_title(label + ", twin data: objective per iteration (" + report.method + ")")
    for name, tau in torques.items():
        axes[1].plot(t, tau[:, axis - 1], lw=0.8, label=name)
    axes[1].set_xlabel("time from the first stamp (s)")
    axes[1].set_ylabel("axis " + str(axis) + " torque, band-limited (N·m)")
    axes[1].set_title(label + ", twin data: measured vs simulated")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def loop_gain_figure(label: str, t: np.ndarray, gains: dict, bound: float):
    """The velocity loop's gain g along the record for each parameter set (`gains`: line ->
    (samples,) at the times t, s), with the stability bound."""
    fig, ax = plt.subplots(figsize=(11, 3.0))
    for name, gain in gains.items():
        ax.plot(t, gain, lw=0.8, label=name)
    ax.axhline(bound, color="k", ls="--", lw=0.8, label="stability bound g = " + format(bound, "g"))
    ax.set_yscale("log")
    ax.set_yticks([0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0])
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    values = np.concatenate([np.ravel(g) for g in gains.values()])
    ax.set_ylim(0.8 * float(values.min()), 1.5 * max(bound, float(values.max())))
    ax.set_xlabel("time from the first stamp (s)")
    ax.set_ylabel("velocity loop gain g")
    ax.set_title(label + ", twin data: the simulated velocity loop's gain along the record")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- Table VI


@dataclass(frozen=True)
class Stages:
    """Table VI's stages: parameters, audit over Θ (seed 1), CLIE objective and pooled held-out
    RMSE per stage (OLS, SDP on route O-S-C, CLIE, the rescue when it ran), and the rescue's
    record (None when the CLIE solution passed)."""

    vectors: dict  # stage -> beta
    audits: dict  # stage -> AuditResult (passed, lambda_min, n_violations)
    objectives: dict
    rmse: dict
    rescue: dict | None = None


def accepted_record(trajectory: str, ts: float, run: int, refined: np.ndarray) -> dict | None:
    """The accepted model's record, when it was accepted from this very CLIE solution."""
    _, path = accepted_stage.accepted_paths(trajectory, ts, run)
    record = read_json_record(path) if path.is_file() else None
    if record is None or np.shape(record["refined"]) != np.shape(refined):
        return None
    scale = 1e-12 * np.abs(refined).max()
    return record if np.allclose(record["refined"], refined, rtol=0, atol=scale) else None


def stage_vectors(record: dict, refined: np.ndarray, accepted: dict | None) -> dict:
    """Each stage's parameters: OLS, the projection (route O-S-C), CLIE, and the rescued model
    when Algorithm 1's record rescued this CLIE solution."""
    vectors = {"OLS": np.asarray(record["ols"])}
    if record["route"] == identify.ROUTE_PROJECTED:
        vectors["SDP"] = np.asarray(record["projected"])
    vectors["CLIE"] = np.asarray(refined)
    if accepted_stage.rescued_by_record(accepted):
        vectors["rescue"] = np.asarray(accepted["parameters"])
    return vectors


def with_stage(vectors: dict, stage: str, beta) -> dict:
    """The stages with one more inserted before CLIE (the SDP row of another condition)."""
    items = list(vectors.items())
    at = next(i for i, (name, _) in enumerate(items) if name == "CLIE")
    return dict(items[:at] + [(stage, np.asarray(beta))] + items[at:])


def table_vi(label: str, s: Stages) -> object:
    """Table VI: per stage the audit's verdict and λmin over Θ, the objective and the RMSE."""
    frame = pd.DataFrame(
        {
            stage: {
                "PD over Θ (seed 1)": "passes"
                if a.passed
                else "fails (" + format(a.n_violations, ",") + " poses)",
                "λmin over Θ (kg·m²)": a.lambda_min,
                "CLIE objective (N²·m²)": s.objectives[stage],
                "held-out RMSE, V01–V03 (N·m)": s.rmse[stage],
            }
            for stage, a in s.audits.items()
        }
    ).T
    frame.index.name = "stage"
    return numbered(
        frame,
        "The representative candidate " + label + " stage by stage (twin)",
        "tab-clie-table-vi",
        digits=5,
        paper="VI",
    )


def table_vi_against_paper(route: str, s: Stages) -> object:
    """The verdicts and held-out RMSEs of Table VI beside the paper's (its AG02 at 40 ms)."""
    why = twin_records()
    last = list(s.vectors)[-1]
    rows = [
        Comparison(
            "route (the paper's: Sec. VII-D)",
            None,
            route,
            paper_text="O-S-C",
            why=None if route == identify.ROUTE_PROJECTED else why,
        ),
        Comparison(
            "OLS estimate over Θ",
            None,
            "passes" if s.audits["OLS"].passed else "fails",
            paper_text="fails",
            why=None if not s.audits["OLS"].passed else why,
        ),
        Comparison(
            "CLIE solution over Θ",
            None,
            "passes" if s.audits["CLIE"].passed else "fails",
            paper_text="fails",
            why=None if not s.audits["CLIE"].passed else why,
        ),
        Comparison(
            "rescued model over Θ",
            None,
            ("passes" if s.audits["rescue"].passed else "fails")
            if "rescue" in s.vectors
            else "not run",
            paper_text="passes",
            why=None if "rescue" in s.vectors else Why.twin("no rescue needed on the twin"),
        ),
        Comparison("held-out RMSE, OLS", "heldout_rmse_pooled_ols_ag02", s.rmse["OLS"], why=why),
        Comparison(
            "held-out RMSE, accepted model", "heldout_rmse_pooled_accepted", s.rmse[last], why=why
        ),
        Comparison(
            "held-out gain, OLS to the accepted model",
            "pipeline_gain_vs_ols",
            100 * (1 - s.rmse[last] / s.rmse["OLS"]),
            unit="%",
            digits=3,
            why=why,
        ),
    ]
    return comparison_table(
        rows,
        "The verdicts of the paper's Table VI (its AG02 at 40 ms) and this book's",
        name="tab-clie-table-vi-paper",
    )


# ------------------------------------------------------------------------ fast against faithful

ROUTE_NAMES = {"fast": "fast (DIDIM Jacobian)", "clie": "faithful (finite differences, D-F)"}


def routes_table(label: str, reports: dict, rmse: dict) -> object:
    """The routes (method -> RefinementReport) from one start, with their held-out RMSE."""
    frame = pd.DataFrame(
        {
            ROUTE_NAMES[m]: {
                "objective at the start (N²·m²)": r.objective_start,
                "objective at the end (N²·m²)": r.objective_final,
                "iterations": r.iterations,
                "closed-loop simulations": r.simulations,
                "wall time (s)": r.wall_time_s,
                "held-out RMSE (N·m)": rmse[m],
                "exit": r.message,
            }
            for m, r in reports.items()
        }
    )
    frame.index.name = label
    routes = "The two routes" if len(reports) == 2 else "The fast route"
    return numbered(
        frame, routes + " from the same start on " + label + " (twin)", "tab-clie-routes", digits=5
    )


# ----------------------------------------------------------------------------- DIDIM


def refinement_runs_record(trajectory: str, ts: float, run: int, kind: str) -> dict:
    """The main job's record of one kind of refinement run ("didim" or "epsilon") on this
    condition; a build without it is an error naming the record and the step that writes it
    (the page refines nothing)."""
    path = refinement_runs.record_path(kind, trajectory, ts, run)
    if not path.is_file():
        raise RuntimeError(
            f"{path}: no record of {refinement_runs.KINDS[kind]} on "
            f"{condition_label(trajectory, ts)}; the main job of `make book` "
            "(crane_book.pipeline) writes it"
        )
    return read_json_record(path)


def didim_run(trajectory: str, ts: float, run: int) -> clie.RefinementReport:
    """DIDIM from its regular initialization, as the main job recorded it."""
    recorded = refinement_runs_record(trajectory, ts, run, "didim")["didim"]
    return refinement_runs.report_of(recorded)


def didim_table(label: str, scores: dict) -> object:
    """DIDIM against the start and the CLIE solution: estimate -> (objective, RMSE, MNE %)."""
    frame = pd.DataFrame(
        {
            estimate: {
                "CLIE objective (N²·m²)": objective,
                "held-out RMSE (N·m)": rmse,
                "mean MNE (%)": mne,
            }
            for estimate, (objective, rmse, mne) in scores.items()
        }
    ).T
    frame.index.name = "estimate"
    return numbered(frame, "DIDIM against CLIE on " + label + " (twin)", "tab-clie-didim", digits=5)


# ------------------------------------------------------------------------ the four projections


@dataclass(frozen=True)
class EpsilonRuns:
    """CLIE from each projection of the ε ladder: the table, the comparison with the paper,
    λmin on Θc, the margins whose constraints are inactive, the final objectives' range, and the
    runs refined from a start of their own (run label, route, RefinementReport)."""

    table: object
    against_paper: object
    lambda_min_constraint_poses: float
    inactive: tuple
    objective_min: float
    objective_max: float
    runs: tuple = ()


def epsilon_runs(
    trajectory: str, ts: float, run: int, report: clie.RefinementReport
) -> EpsilonRuns:
    """CLIE from the projection of the OLS estimate with each ε of the ladder, as the main job
    recorded it; a start whose constraints are inactive is the OLS point itself, refined once."""
    label = condition_label(trajectory, ts)
    recorded = refinement_runs_record(trajectory, ts, run, "epsilon")["epsilon"]
    reports = [refinement_runs.report_of(entry) for entry in recorded["runs"]]
    rows, runs = [], []
    for step in recorded["ladder"]:
        eps = step["epsilon"]
        if step["failure"] is not None:
            rows.append(
                {
                    "ε (kg·m²)": eps,
                    "constraints active": True,
                    "|Δβ| of the projection": np.nan,
                    "PD on the record": False,
                    "objective at the end (N²·m²)": np.nan,
                    "iterations": np.nan,
                    "run": "projection failed: " + str(step["failure"]),
                }
            )
            continue
        # the OLS start's run on route O-C is the CLIE sweep's ("sweep"), else one of the record's
        r = report if step["run"] == "sweep" else reports[step["run"]]
        if not step["reused"]:
            runs.append((label + " from ε = " + format(eps, "g"), "from a projection", r))
        rows.append(
            {
                "ε (kg·m²)": eps,
                "constraints active": step["active"],
                "|Δβ| of the projection": step["change_norm"],
                "PD on the record": step["pd_on_record"],
                "objective at the end (N²·m²)": r.objective_final,
                "iterations": r.iterations,
                "run": "the OLS start's run, reused"
                if step["reused"]
                else "refined from this start",
            }
        )
    frame = pd.DataFrame(rows).set_index("ε (kg·m²)")
    frame.index = [format(e, "g") for e in frame.index]
    frame.index.name = "ε (kg·m²)"
    objectives = frame["objective at the end (N²·m²)"]
    spread = 100 * (objectives.max() - objectives.min()) / objectives.min()
    why = Why.twin("on the twin the margins barely move the start") + Why.reconstruction(
        "the fast route's iterations are not lsqnonlin's"
    )
    comparisons = [
        Comparison(
            "iterations from ε = " + format(eps, "g"),
            EPSILON_IDS[eps],
            _count(frame.loc[format(eps, "g"), "iterations"]),
            why=why,
        )
        for eps in sdp.EPSILON_LADDER
    ]
    comparisons.append(
        Comparison(
            "spread of the final objectives", "clie_objective_spread_eps", spread, unit="%", why=why
        )
    )
    table = numbered(
        frame,
        "CLIE from the four projections of " + label + "'s OLS estimate (fast route, twin)",
        "tab-clie-epsilon",
        digits={"|Δβ| of the projection": 3, "objective at the end (N²·m²)": 7, "iterations": 3},
    )
    return EpsilonRuns(
        table,
        comparison_table(
            comparisons, "The four runs against the paper's", name="tab-clie-epsilon-paper"
        ),
        recorded["lambda_min_constraint_poses"],
        tuple(frame.index[~frame["constraints active"].astype(bool)]),
        float(objectives.min()),
        float(objectives.max()),
        tuple(runs),
    )


def _count(value):
    """A count as an int (a median of two counts may be a half; NaN stays NaN: no run)."""
    value = float(value)
    return int(value) if np.isfinite(value) and value.is_integer() else value


# ------------------------------------------------------------------------- cost over the sweep


def runs_table(runs: list) -> object:
    """Every refinement the chapter shows ((label, route, RefinementReport) each): its counts,
    wall time and exit, and its simulations per iteration."""
    frame = pd.DataFrame(
        [
            {
                "run": label,
                "route": route,
                "method": report.method,
                "iterations": report.iterations,
                "closed-loop simulations": report.simulations,
                "trial evaluations": report.trial_evaluations,
                "Jacobian evaluations": report.jacobian_evaluations,
                "wall time (s)": report.wall_time_s,
                "exit": report.message,
            }
            for label, route, report in runs
        ]
    ).set_index("run")
    frame["simulations per iteration"] = frame["closed-loop simulations"] / frame[
        "iterations"
    ].clip(lower=1)
    return numbered(frame, "Every refinement this chapter ran", "tab-clie-chapter-runs", digits=4)


def sweep_records(method: str = "fast") -> pd.DataFrame:
    """The CLIE sweep's records of one route, one row per condition of the build's profile."""
    return pd.DataFrame(clie.load_records(method, profile()))


def sweep_against_paper(records: pd.DataFrame) -> object:
    """The cost of CLIE over the sweep (iterations, cap, time) beside the paper's (Sec. IV-C)."""
    n, whole = len(records), paper("identification_condition_count").value
    iterations = records["clie_iterations"].astype(int)
    by_route = records.groupby("route")["clie_iterations"].median()
    why = Why.reconstruction(
        "the fast route (one simulation per iteration, DIDIM Jacobian), not lsqnonlin"
    ) + Why.twin("twin records")
    if n != whole:
        why = why + Why.profile(f"{n} of {whole:g} conditions")
    rows = [
        Comparison(
            "median iterations, route O-C",
            "clie_iters_median_oc",
            _count(by_route.get("O-C", np.nan)),
            why=why,
        ),
        Comparison(
            "median iterations, route O-S-C",
            "clie_iters_median_osc",
            _count(by_route.get("O-S-C", np.nan)),
            why=why,
        ),
        Comparison(
            "median iterations",
            "clie_iters_median",
            _count(np.quantile(iterations, 0.5, method="inverted_cdf")),
            why=why,
        ),
        Comparison(
            "nine-tenths finish within (iterations)",
            "clie_iters_p90",
            _count(np.quantile(iterations, 0.9, method="inverted_cdf")),
            why=why,
        ),
        Comparison(
            f"stopped at the {clie.MAX_ITERATIONS}-iteration cap",
            "clie_capped_count",
            Count(int((iterations >= clie.MAX_ITERATIONS).sum()), n),
            paper_whole="identification_condition_count",
            why=why,
        ),
        Comparison(
            "total refinement time",
            "clie_total_solver_time",
            records["clie_wall_time_s"].sum() / 3600,
            why=Why.not_comparable(
                "wall time of the fast route on two cores against MATLAB solver time on "
                f"{paper('clie_concurrent_processes').value:g} processes"
            ),
        ),
    ]
    return comparison_table(
        rows, "The cost of CLIE over the sweep (Sec. IV-C)", name="tab-clie-cost"
    )


def clie_panel(records: pd.DataFrame) -> object:
    """Table XII's CLIE panel: iterations and end/start objective per condition."""
    records = records.assign(
        **{
            "Ts (ms)": (records["ts"] * 1e3).round().astype(int),
            "end / start objective": records["clie_objective_final"]
            / records["clie_objective_start"],
        }
    )
    panel = records.pivot_table(
        index="trajectory",
        columns="Ts (ms)",
        values=["clie_iterations", "end / start objective"],
        aggfunc="first",
    ).rename(columns={"clie_iterations": "iterations"})
    panel.columns = [f"{name}, {ts} ms" for name, ts in panel.columns]
    return numbered(
        panel,
        "CLIE panel: iterations per condition (fast route) and the objective at the end over "
        "the objective at the start (twin)",
        "tab-clie-panel",
        digits=3,
        paper="XII",
    )


def sweep_facts(records: pd.DataFrame) -> dict:
    """What the chapter's prose says of the CLIE sweep: records per route, how many ended within
    one per cent of their start, and how far the fast route's one Heun step per cycle moved the
    objective at each solution from the paper's 0.25 ms integration (its check), with how many
    runs were refined again at 0.25 ms."""
    if records.empty:
        return {"records": 0}
    routes = records["route"].value_counts()
    ratio = records["clie_objective_final"] / records["clie_objective_start"]
    facts = {
        "records": len(records),
        "route_oc": int(routes.get(identify.ROUTE_DIRECT, 0)),
        "route_osc": int(routes.get(identify.ROUTE_PROJECTED, 0)),
        "within_one_percent": int((ratio > 0.99).sum()),
    }
    if "clie_objective_final_paper_step" not in records:
        return facts
    steps = records["clie_integration_step_s"].astype(float)
    one_step = records[steps > clie.INTEGRATION_STEP_S]
    facts["one_step"] = len(one_step)
    facts["again"] = int((steps <= clie.INTEGRATION_STEP_S).sum())
    if len(one_step):
        check = one_step["clie_objective_final_paper_step"].astype(float)
        gap = (one_step["clie_objective_final"].astype(float) - check).abs() / check
        facts["gap_max"], facts["gap_median"] = float(gap.max()), float(gap.median())
    return facts


def failures_table(method: str = "fast") -> object | None:
    """The conditions the CLIE sweep could not refine, and why (None when it refined all)."""
    failures = pd.DataFrame(clie.load_failures(method, profile()))
    if failures.empty:
        return None
    failures["failure"] = failures["failure"].str.replace(f"{REPO_ROOT}{os.sep}", "", regex=False)
    failures["Ts (ms)"] = (failures["ts"] * 1e3).round().astype(int)
    return numbered(
        failures.set_index(["trajectory", "Ts (ms)"])[["route", "failure"]],
        "Conditions the CLIE sweep could not refine, and why",
        "tab-clie-failures",
    )


# ----------------------------------------------------------------------------- the faithful study
# The faithful route of Appendix D-F on many conditions is the study the paper ran for 307 h;
# here it runs on request (`make clie-faithful`) and writes its records beside the fast ones
# (results/clie/clie/ against results/clie/fast/). The chapter "Parameter clouds" pairs them.

FAST, FAITHFUL = "fast", "clie"  # the record folders of the two routes (results/clie/<method>)
# "the same objective": the fast route within 0.5 % (bench_clie's criterion)
OBJECTIVE_TOLERANCE = 0.005


def _key(record: dict) -> tuple:
    return record["trajectory"], round(float(record["ts"]) * 1e3), int(record["run"])


@dataclass(frozen=True)
class FaithfulBesideFast:
    """The conditions refined by both routes (rows of `table`, same order as the vectors)."""

    table: pd.DataFrame | None
    vectors: dict  # "OLS", "CLIE fast", "CLIE faithful" -> (n, 39)
    names: list
    n_fast: int
    n_faithful: int

    @property
    def empty(self) -> bool:
        """No condition was refined by both routes."""
        return self.table is None or self.table.empty

    def summary(self) -> dict:
        """The study's numbers for the page's prose (empty without a paired condition): the
        objective gap of the fast route against the faithful one (%), how many end within
        OBJECTIVE_TOLERANCE and below, the wall-time ratio, and the distance between the two
        solutions in the OLS cloud's standardized coordinates, alone and against the distance
        the faithful route moved from its start (medians over the conditions)."""
        if self.empty:
            return {}
        t = self.table
        gap = t["objective gap (%)"]
        ratio = (t["|fast - faithful|"] / t["|faithful - start|"]).replace([np.inf], np.nan)
        return {
            "conditions": len(t),
            "within": int((gap.abs() <= 100 * OBJECTIVE_TOLERANCE).sum()),
            "tolerance_percent": 100 * OBJECTIVE_TOLERANCE,
            "lower": int((gap < 0).sum()),
            "gap_min": float(gap.min()),
            "gap_max": float(gap.max()),
            "gap_median": float(gap.median()),
            "wall_time_ratio": float(
                t["wall time faithful (s)"].sum() / t["wall time fast (s)"].sum()
            ),
            "distance_median": float(t["|fast - faithful|"].median()),
            "distance_share_median": float(ratio.median()),
        }


def faithful_beside_fast(run: int = 1) -> FaithfulBesideFast:
    """Pair the fast and faithful CLIE records of execution `run` by condition."""
    fast = {_key(r): r for r in clie.load_records(FAST, profile()) if int(r["run"]) == run}
    faithful = {_key(r): r for r in clie.load_records(FAITHFUL, profile()) if int(r["run"]) == run}
    common = sorted(set(fast) & set(faithful))
    if not common:
        return FaithfulBesideFast(None, {}, [], len(fast), len(faithful))
    names = list(fast[common[0]]["names"])
    ols = np.array([fast[k]["ols"] for k in common])
    x_fast = np.array([fast[k]["clie_x"] for k in common])
    x_faithful = np.array([faithful[k]["clie_x"] for k in common])
    start = np.array([faithful[k]["start"] for k in common])
    # one scale for all: the OLS cloud's (a single condition has no spread: its own magnitudes)
    reference = ols if len(common) > 1 else np.vstack([ols, -ols])
    z = {
        name: standardize(v, reference)
        for name, v in (("fast", x_fast), ("faithful", x_faithful), ("start", start))
    }
    rows = []
    for i, k in enumerate(common):
        f, s = fast[k], faithful[k]
        rows.append(
            {
                "trajectory": k[0],
                "Ts (ms)": k[1],
                "route": f["route"],
                "iterations fast": f["clie_iterations"],
                "iterations faithful": s["clie_iterations"],
                "wall time fast (s)": f["clie_wall_time_s"],
                "wall time faithful (s)": s["clie_wall_time_s"],
                "objective fast": f["clie_objective_final"],
                "objective faithful": s["clie_objective_final"],
                "objective gap (%)": 100
                * (f["clie_objective_final"] / s["clie_objective_final"] - 1),
                "|fast - faithful|": float(np.linalg.norm(z["fast"][i] - z["faithful"][i])),
                "|faithful - start|": float(np.linalg.norm(z["faithful"][i] - z["start"][i])),
            }
        )
    table = pd.DataFrame(rows).set_index(["trajectory", "Ts (ms)"])
    return FaithfulBesideFast(
        table,
        {"OLS": ols, "CLIE fast": x_fast, "CLIE faithful": x_faithful},
        names,
        len(fast),
        len(faithful),
    )


def plot_clouds(study: FaithfulBesideFast, ax=None):
    """OLS, fast-CLIE and faithful-CLIE clouds on the first two principal directions of the three
    pooled (OLS-standardized), each fast solution joined to the faithful one of its condition."""
    if study.empty:
        raise ValueError("no condition refined by both routes")
    ax = ax or plt.subplots(figsize=(6.5, 5))[1]
    ols = study.vectors["OLS"]
    reference = ols if len(study.table) > 1 else np.vstack([ols, -ols])
    z = {k: standardize(v, reference) for k, v in study.vectors.items()}
    pooled = np.vstack(list(z.values()))
    centre = pooled.mean(axis=0)
    _, _, axes = np.linalg.svd(pooled - centre, full_matrices=False)
    plane = {k: (v - centre) @ axes[:2].T for k, v in z.items()}
    for a, b in zip(plane["CLIE fast"], plane["CLIE faithful"]):
        ax.plot([a[0], b[0]], [a[1], b[1]], color="0.7", lw=0.6, zorder=1)
    for label, style in (
        ("OLS", dict(marker="o", color="tab:blue", alpha=0.4)),
        ("CLIE fast", dict(marker="^", color="tab:green")),
        ("CLIE faithful", dict(marker="v", color="tab:red")),
    ):
        points = plane[label]
        ax.scatter(
            points[:, 0],
            points[:, 1],
            s=22,
            label=label + " (" + str(len(points)) + ")",
            zorder=2,
            **style,
        )
    ax.set_xlabel("PC 1 (standardized)")
    ax.set_ylabel("PC 2 (standardized)")
    ax.set_title("twin recordings: CLIE by the fast and the faithful route")
    ax.legend(fontsize=8)
    return ax
