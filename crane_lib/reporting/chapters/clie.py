"""Chapter "CLIE" (paper Sec. IV-B, IV-C, VI-B, Appendix D-E, D-F; Fig. 4, Table VI, Table XII's
CLIE panel): the refinement of the representative condition, Table VI stage by stage, the fast
route against the faithful one, DIDIM, the runs from the four projections, and the cost over the
CLIE sweep. Data: the twin's recordings, the OLS/SDP and CLIE sweeps' records."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.acceptance import accepted as accepted_stage
from crane_lib.acceptance import audit
from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.identification import clie, metrics, refinement_runs
from crane_lib.identification import condition as identify
from crane_lib.identification import projection as sdp
from crane_lib.identification.refinement import same_refinement
from crane_lib.logs.raw_log import read_raw_log
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paper_numbers import paper
from crane_lib.paths import REPO_ROOT
from crane_lib.records import read_json_record
from crane_lib.reporting.tables import (
    Comparison,
    Count,
    Prose,
    Why,
    cite,
    compared,
    comparison_table,
    joined,
    numbered,
    plural,
    signed_percent,
    significant,
)

SHORT = "AP01"  # the short record on which both routes run
AUDIT_SEED = 1
VALIDATION = ("V01", "V02", "V03")
EPSILON_IDS = {
    0.001: "clie_iters_eps_0001",
    0.002: "clie_iters_eps_0002",
    0.005: "clie_iters_eps_0005",
    0.01: "clie_iters_eps_001",
}


@dataclass
class Runs:
    """Every refinement the chapter makes, for the iteration table."""

    rows: list = field(default_factory=list)

    def add(self, label: str, route: str, report: clie.RefinementReport) -> clie.RefinementReport:
        self.rows.append(
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
        )
        return report


@dataclass
class Condition:
    trajectory: str
    ts: float
    run: int
    model: DynamicModel
    bundle: object
    result: object  # ConditionResult
    problem: clie.CLIEProblem
    heldout: list

    @property
    def label(self) -> str:
        return f"{self.trajectory} at {self.ts * 1e3:g} ms"


def condition(trajectory: str, ts: float, run: int, with_heldout: bool = True) -> Condition:
    """OLS and the routing test (chapter "OLS and the conditional SDP projection"), then the CLIE
    problem built from the condition's raw 1 ms log."""
    model = DynamicModel("reduced")
    bundle = identify.condition_bundle(trajectory, ts, run)
    result = identify.identify_condition(bundle, trajectory, model, run=run)
    if result.start is None:
        raise RuntimeError(
            f"{trajectory} at {ts * 1e3:g} ms could not be identified: {result.failure}"
        )
    problem = clie.build_problem(read_raw_log(identify.recording_path(trajectory, run)))
    heldout = [identify.condition_bundle(v, 0.040) for v in VALIDATION] if with_heldout else []
    return Condition(trajectory, ts, run, model, bundle, result, problem, heldout)


def start_sentence(c: Condition) -> Prose:
    r = c.result
    return Prose(
        f"**{c.label}, execution {c.run} (twin):** route **{r.route}**, λmin of M(θ; β_OLS) over the visited configurations "
        f"{significant(r.lambda_min_visited, 3)} kg·m²; the CLIE residual keeps {int(c.problem.valid.sum())} of "
        f"{c.problem.valid.size} samples × axes (clamp mask and filter edges). The paper's AG02 at 40 ms took route O-S-C "
        "(its OLS estimate is non-PD there, Sec. VII-D)."
    )


def sweep_refinement(c: Condition, method: str) -> clie.RefinementReport | None:
    """The CLIE sweep's refinement of this condition by `method`, when the sweep of this build
    wrote one from the same start (the pipeline runs the sweep before the book, so in `make book`
    the record is this build's; a record from another start, e.g. older code, is not used)."""
    path = clie.record_path(c.trajectory, c.ts, c.run, method)
    return (
        same_refinement(read_json_record(path), method, c.result.start) if path.is_file() else None
    )


def sweep_refinement_of(c: Condition, method: str, runs: Runs) -> clie.RefinementReport:
    """The CLIE sweep's refinement of this condition by `method` from the same start, added to
    the chapter's runs; a build without it (the sweep failed, or never ran this condition) is an
    error naming the record and the step that writes it (the page computes no refinement)."""
    reused = sweep_refinement(c, method)
    if reused is None:
        path = clie.record_path(c.trajectory, c.ts, c.run, method)
        failure = clie.failure_path(c.trajectory, c.ts, c.run, method)
        why = (
            f"the sweep could not refine it: {read_json_record(failure).get('failure')}"
            if failure.is_file()
            else "no record from this start"
        )
        raise RuntimeError(
            f"{path}: {why}; the CLIE sweep of `make book` (crane_book.pipeline) writes it"
        )
    return runs.add(
        f"{c.label} ({c.result.route} start), the CLIE sweep's run", c.result.route, reused
    )


def report_table(c: Condition, report: clie.RefinementReport) -> object:
    frame = pd.DataFrame(
        {
            c.label: {
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
    return numbered(frame, f"CLIE on {c.label} (twin)", "tab-clie-run", digits=6)


def refinement_figure(c: Condition, report: clie.RefinementReport, axis: int = 2):
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.2))
    axes[0].plot(
        np.arange(len(report.history) + 1), [report.objective_start, *report.history], "o-"
    )
    axes[0].set_xlabel("iteration")
    axes[0].set_ylabel("objective Σr² (N²·m²)")
    axes[0].set_title(f"{c.label}, twin data: objective per iteration ({report.method})")
    start, final = c.problem.simulate(report.x0), c.problem.simulate(report.x)
    t = c.problem.keep * 1e-3
    j = axis - 1
    axes[1].plot(t, c.problem.measured[:, j], lw=0.8, label="measured")
    axes[1].plot(t, c.problem.band_limit(start.tau)[:, j], lw=0.8, label="simulated, start")
    axes[1].plot(t, c.problem.band_limit(final.tau)[:, j], lw=0.8, label="simulated, CLIE")
    axes[1].set_xlabel("time from the first stamp (s)")
    axes[1].set_ylabel(f"axis {axis} torque, band-limited (N·m)")
    axes[1].set_title(f"{c.label}, twin data: measured vs simulated")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- Table VI


@dataclass
class Stages:
    vectors: dict  # stage -> beta
    audits: dict  # stage -> AuditResult
    objectives: dict
    rmse: dict
    acceptance: object


def _accepted_record(c: Condition, report: clie.RefinementReport) -> dict | None:
    """The accepted model's record, when it was accepted from this very CLIE solution."""
    _, path = accepted_stage.accepted_paths(c.trajectory, c.ts, c.run)
    record = read_json_record(path) if path.is_file() else None
    if record is None or np.shape(record["refined"]) != np.shape(report.x):
        return None
    return (
        record
        if np.allclose(record["refined"], report.x, rtol=0, atol=1e-12 * np.abs(report.x).max())
        else None
    )


def _acceptance_of(record: dict):
    """Algorithm 1's audit (seed 1), rescue and re-audit as the accepted record holds them."""

    def seed_one(audits):
        return audit.AuditResult.from_dict(next(a for a in audits if a.get("seed") == AUDIT_SEED))

    rescue = record.get("rescue")
    return SimpleNamespace(
        first_audit=seed_one(record["first_audits"]),
        final_audit=seed_one(record["final_audits"]),
        rescue=None
        if rescue is None
        else SimpleNamespace(passes=rescue["passes"], converged=rescue["converged"]),
        parameters=np.asarray(record["parameters"]),
        rescued=accepted_stage.rescued_by_record(record),
    )


def stages(c: Condition, report: clie.RefinementReport) -> Stages:
    """Each stage's parameters, audited over Θ (seed 1), its CLIE objective and held-out RMSE.
    The CLIE solution's audit, the rescue and the accepted model are the accepted record's when
    it was accepted from this solution (the representative condition); otherwise (another
    condition named by the parameters) Algorithm 1 runs here on seed 1."""
    vectors = {"OLS": c.result.ols.parameters.values}
    if c.result.route == identify.ROUTE_PROJECTED:
        vectors["SDP"] = c.result.start.values
    vectors["CLIE"] = report.x
    record = _accepted_record(c, report)
    if record is not None:
        acceptance = _acceptance_of(record)
        rescued = acceptance.rescued
    else:
        acceptance = rescue_stage.accept(c.model, report.x, AUDIT_SEED)
        rescued = acceptance.rescue is not None and acceptance.rescue.result is not None
    if rescued:
        vectors["rescue"] = acceptance.parameters
    audits, objectives = {}, {}
    for stage, beta in vectors.items():
        audits[stage] = (
            acceptance.first_audit
            if stage == "CLIE"
            else acceptance.final_audit
            if stage == "rescue" and record is not None
            else audit.audit(beta, AUDIT_SEED, "dense", c.model)
        )
        objectives[stage] = (
            report.objective_start
            if stage == "OLS" and c.result.route == identify.ROUTE_DIRECT
            else report.objective_final
            if stage == "CLIE"
            else c.problem.objective(beta)
        )
    rmse = {stage: metrics.pooled_rmse(c.model, beta, c.heldout) for stage, beta in vectors.items()}
    return Stages(vectors, audits, objectives, rmse, acceptance)


def table_vi(c: Condition, s: Stages) -> object:
    frame = pd.DataFrame(
        {
            stage: {
                "PD over Θ (seed 1)": "passes" if a.passed else f"fails ({a.n_violations:,} poses)",
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
        f"The representative candidate {c.label} stage by stage (twin)",
        "tab-clie-table-vi",
        digits=5,
        paper="VI",
    )


def table_vi_against_paper(c: Condition, s: Stages) -> object:
    why = Why.twin(
        "the twin's estimate, its noise and its simulated held-out records are not the arm's"
    )
    rows = [
        Comparison(
            "route (the paper's: Sec. VII-D)",
            None,
            c.result.route,
            paper_text="O-S-C",
            why=None if c.result.route == identify.ROUTE_PROJECTED else why,
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
            ("passes" if s.acceptance.final_audit.passed else "fails")
            if "rescue" in s.vectors
            else "not run",
            paper_text="passes",
            why=None if "rescue" in s.vectors else Why.twin("no rescue needed on the twin"),
        ),
        Comparison("held-out RMSE, OLS", "heldout_rmse_pooled_ols_ag02", s.rmse["OLS"], why=why),
        Comparison(
            "held-out RMSE, accepted model",
            "heldout_rmse_pooled_accepted",
            s.rmse[list(s.vectors)[-1]],
            why=why,
        ),
        Comparison(
            "held-out gain, OLS to the accepted model",
            "pipeline_gain_vs_ols",
            100 * (1 - s.rmse[list(s.vectors)[-1]] / s.rmse["OLS"]),
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


def table_vi_sentence(c: Condition, s: Stages) -> Prose:
    last = list(s.vectors)[-1]
    gain = 1 - s.rmse[last] / s.rmse["OLS"]
    rescue = s.acceptance.rescue
    rescued = (
        f" The rescue took {plural(len(rescue.passes), 'pass', 'passes')}, converged: {rescue.converged}."
        if rescue is not None
        else " The CLIE solution passes the audit, so no rescue runs."
    )
    return Prose(
        f"Held-out pooled RMSE from OLS to the last stage ({last}): {s.rmse['OLS']:.5f} → {s.rmse[last]:.5f} N·m, "
        f"{signed_percent(gain)} ({compared(gain, 0, 'a gain', 'a loss', 'no change')}); the paper's AG02 gains "
        f"{cite('pipeline_gain_vs_ols')} from OLS to the accepted model, a difference it reads against the run-to-run "
        f"spread of {cite('runtorun_ag02')}, not as an accuracy advantage.{rescued} The CLIE objectives are not comparable "
        f"with the paper's ({cite('clie_objective_range_eps')}): they are sums over the twin's own record, whose length, "
        "noise and unmodelled effects differ."
    )


# ----------------------------------------------------------------------------- fast against faithful


@dataclass
class RouteComparison:
    condition: Condition
    reports: dict  # method -> RefinementReport
    start_rmse: float
    rmse: dict


def both_routes(c: Condition, runs: Runs, profile: str) -> RouteComparison:
    """Both routes from the same start, as the CLIE sweep recorded them: the fast route in every
    profile, the faithful one where the profile's sweep ran it (papermill_params/clie_full.csv);
    a route without a record is left out (the page refines nothing)."""
    reports = {}
    for m in ("fast", "clie"):
        reused = sweep_refinement(c, m)
        if reused is not None:
            reports[m] = runs.add(f"{c.label}, the CLIE sweep's run", c.result.route, reused)
    return RouteComparison(
        c,
        reports,
        metrics.pooled_rmse(c.model, c.result.start.values, c.heldout),
        {m: metrics.pooled_rmse(c.model, r.x, c.heldout) for m, r in reports.items()},
    )


ROUTE_NAMES = {"fast": "fast (DIDIM Jacobian)", "clie": "faithful (finite differences, D-F)"}


def routes_table(rc: RouteComparison) -> object:
    frame = pd.DataFrame(
        {
            ROUTE_NAMES[m]: {
                "objective at the start (N²·m²)": r.objective_start,
                "objective at the end (N²·m²)": r.objective_final,
                "iterations": r.iterations,
                "closed-loop simulations": r.simulations,
                "wall time (s)": r.wall_time_s,
                "held-out RMSE (N·m)": rc.rmse[m],
                "exit": r.message,
            }
            for m, r in rc.reports.items()
        }
    )
    frame.index.name = rc.condition.label
    routes = "The two routes" if len(rc.reports) == 2 else "The fast route"
    return numbered(
        frame,
        f"{routes} from the same start on {rc.condition.label} (twin)",
        "tab-clie-routes",
        digits=5,
    )


def routes_sentence(rc: RouteComparison) -> Prose:
    name = rc.condition.trajectory
    change = {m: rc.rmse[m] / rc.start_rmse - 1 for m in rc.reports}
    paper_said = f"the paper's CLIE worsened it by {cite('ap01_clie_degradation')} (Table VIII)."
    if "clie" not in rc.reports:
        fast = rc.reports["fast"]
        return Prose(
            f"**The faithful route was not run in this build:** the quick profile leaves it out (on {name} it costs one "
            f"closed-loop simulation per parameter and iteration, {fast.x.size + 1} per iteration against the fast route's "
            f"{fast.simulations} in all, minutes of CI time); the full profile's CLIE sweep runs it on {name} "
            "(`papermill_params/clie_full.csv`), and `make clie-faithful PROFILE=quick` writes the record this section "
            f"then shows. Held-out RMSE of {name}: start {rc.start_rmse:.5f}, fast {rc.rmse['fast']:.5f} N·m "
            f"({signed_percent(change['fast'])}): CLIE by the fast route makes {name}'s held-out prediction "
            f"**{compared(change['fast'], 0, 'worse', 'better', 'no different')}** on the twin; "
            + paper_said
        )
    fast, faithful = rc.reports["fast"], rc.reports["clie"]
    moved = np.linalg.norm(faithful.x - faithful.x0)
    apart = np.linalg.norm(fast.x - faithful.x) / moved if moved > 0 else np.nan
    return Prose(
        f"On {name} ({rc.condition.result.route}) the fast route ends at an objective "
        f"{signed_percent(fast.objective_final / faithful.objective_final - 1)} from the faithful route's, "
        f"{faithful.wall_time_s / fast.wall_time_s:.1f} × faster in wall time ({faithful.simulations} against "
        f"{fast.simulations} closed-loop simulations); the two end points lie {100 * apart:.0f} % of the faithful route's "
        "step apart, so they reach nearly the same objective without being the same point. "
        f"Held-out RMSE of {name}: start {rc.start_rmse:.5f}, fast {rc.rmse['fast']:.5f} "
        f"({signed_percent(change['fast'])}), faithful {rc.rmse['clie']:.5f} N·m ({signed_percent(change['clie'])}): "
        f"CLIE makes {name}'s held-out prediction **{compared(change['clie'], 0, 'worse', 'better', 'no different')}** on the "
        f"twin by the faithful route and **{compared(change['fast'], 0, 'worse', 'better', 'no different')}** by the fast one; "
        + paper_said
    )


# ----------------------------------------------------------------------------- DIDIM


def refinement_runs_record(c: Condition, kind: str) -> dict:
    """The main job's record of one kind of refinement run ("didim" or "epsilon") on this
    condition; a build without it is an error naming the record and the step that writes it
    (the page refines nothing)."""
    path = refinement_runs.record_path(kind, c.trajectory, c.ts, c.run)
    if not path.is_file():
        raise RuntimeError(
            f"{path}: no record of {refinement_runs.KINDS[kind]} on {c.label}; "
            "the main job of `make book` (crane_book.pipeline) writes it"
        )
    return read_json_record(path)


def didim_table(c: Condition, report: clie.RefinementReport, runs: Runs) -> tuple[object, Prose]:
    """DIDIM from its regular initialization against the CLIE solution (the main job's run)."""
    recorded = refinement_runs.report_of(refinement_runs_record(c, "didim")["didim"])
    didim = runs.add(f"{c.label} (DIDIM, regular initialization)", "none (no OLS start)", recorded)
    rows = {
        "OLS/SDP start": (report.objective_start, report.x0),
        f"CLIE ({report.method})": (report.objective_final, report.x),
        "DIDIM": (didim.objective_final, didim.x),
    }
    frame = pd.DataFrame(
        {
            label: {
                "CLIE objective (N²·m²)": objective,
                "held-out RMSE (N·m)": metrics.pooled_rmse(c.model, x, c.heldout),
                "mean MNE (%)": 100
                * np.mean([metrics.prediction_error(c.model, x, b).mne for b in c.heldout]),
            }
            for label, (objective, x) in rows.items()
        }
    ).T
    frame.index.name = "estimate"
    sentence = Prose(
        f"DIDIM: {didim.iterations} Gauss–Newton iterations, {didim.simulations} closed-loop simulations, "
        f"{didim.wall_time_s:.1f} s ({didim.message}); its objective is "
        f"{signed_percent(didim.objective_final / report.objective_final - 1)} from the CLIE solution's. The paper does not "
        "run DIDIM; these rows have no paper value."
    )
    return numbered(
        frame, f"DIDIM against CLIE on {c.label} (twin)", "tab-clie-didim", digits=5
    ), sentence


# ----------------------------------------------------------------------------- the four projections


def epsilon_runs(
    c: Condition, report: clie.RefinementReport, runs: Runs
) -> tuple[object, object, Prose]:
    """CLIE from the projection of the OLS estimate with each ε of the ladder, as the main job
    recorded it; a start whose constraints are inactive is the OLS point itself, refined once."""
    recorded = refinement_runs_record(c, "epsilon")["epsilon"]
    lam_c = recorded["lambda_min_constraint_poses"]
    reports = [refinement_runs.report_of(entry) for entry in recorded["runs"]]
    rows = []
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
                    "run": f"projection failed: {step['failure']}",
                }
            )
            continue
        # the OLS start's run on route O-C is the CLIE sweep's ("sweep"), else one of the record's
        r = report if step["run"] == "sweep" else reports[step["run"]]
        if not step["reused"]:
            runs.add(f"{c.label} from ε = {eps:g}", "from a projection", r)
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
    frame.index = [f"{e:g}" for e in frame.index]
    frame.index.name = "ε (kg·m²)"
    objectives = frame["objective at the end (N²·m²)"]
    spread = 100 * (objectives.max() - objectives.min()) / objectives.min()
    why = Why.twin("on the twin the margins barely move the start") + Why.reconstruction(
        "the fast route's iterations are not lsqnonlin's"
    )
    comparisons = [
        Comparison(
            f"iterations from ε = {eps:g}",
            EPSILON_IDS[eps],
            _count(frame.loc[f"{eps:g}", "iterations"]),
            why=why,
        )
        for eps in sdp.EPSILON_LADDER
    ]
    comparisons.append(
        Comparison(
            "spread of the final objectives", "clie_objective_spread_eps", spread, unit="%", why=why
        )
    )
    inactive = list(frame.index[~frame["constraints active"].astype(bool)])
    sentence = Prose(
        f"λmin of M(θ; β_OLS) on Θc is {significant(lam_c, 3)} kg·m², so the constraints are inactive for ε = "
        f"{joined(inactive, 'and') or 'none'}: those projections are the OLS point itself. Final objectives "
        f"{objectives.min():.7g} to {objectives.max():.7g} (paper: {cite('clie_objective_range_eps')})."
    )
    table = numbered(
        frame,
        f"CLIE from the four projections of {c.label}'s OLS estimate (fast route, twin)",
        "tab-clie-epsilon",
        digits={"|Δβ| of the projection": 3, "objective at the end (N²·m²)": 7, "iterations": 3},
    )
    return (
        table,
        comparison_table(
            comparisons, "The four runs against the paper's", name="tab-clie-epsilon-paper"
        ),
        sentence,
    )


def _count(value):
    """A count as an int (a median of two counts may be a half; NaN stays NaN: no run)."""
    value = float(value)
    return int(value) if np.isfinite(value) and value.is_integer() else value


# ----------------------------------------------------------------------------- cost over the sweep


def runs_table(runs: Runs) -> object:
    frame = pd.DataFrame(runs.rows).set_index("run")
    frame["simulations per iteration"] = frame["closed-loop simulations"] / frame[
        "iterations"
    ].clip(lower=1)
    return numbered(frame, "Every refinement this chapter ran", "tab-clie-chapter-runs", digits=4)


def sweep_records(method: str = "fast") -> pd.DataFrame:
    return pd.DataFrame(clie.load_records(method))


def sweep_against_paper(records: pd.DataFrame) -> object:
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


def integration_sentence(records: pd.DataFrame) -> Prose:
    """How far the fast route's one-step integration moved each sweep objective from the
    paper's 0.25 ms integration at its solution, and how many runs fell back to 0.25 ms."""
    if records.empty or "clie_objective_final_paper_step" not in records:
        return Prose("")
    steps = records["clie_integration_step_s"].astype(float)
    one_step = records[steps > clie.INTEGRATION_STEP_S]
    again = int((steps <= clie.INTEGRATION_STEP_S).sum())
    if one_step.empty:
        return Prose(f"All {len(records)} sweep refinements ran at the paper's 0.25 ms steps.")
    check = one_step["clie_objective_final_paper_step"].astype(float)
    gap = (one_step["clie_objective_final"].astype(float) - check).abs() / check
    return Prose(
        "The fast route integrates the closed loop in one Heun step per 1 ms control cycle, a "
        f"cycle whose error estimate exceeds {clie.FAST_ERROR_TOLERANCE:g} rad/s again at 0.25 ms "
        '(register "CLIE"). Checked at each solution against the paper\'s 0.25 ms integration, '
        f"the objective differed by at most {100 * gap.max():.4f} % "
        f"(median {100 * gap.median():.5f} %) over {len(one_step)} refinements; {again} of "
        f"{len(records)} were refined again at 0.25 ms because it differed by more than "
        f"{100 * clie.FAST_STEP_OBJECTIVE_TOLERANCE:g} %."
    )


def failures_table(method: str = "fast") -> object | None:
    failures = pd.DataFrame(clie.load_failures(method))
    if failures.empty:
        return None
    failures["failure"] = failures["failure"].str.replace(f"{REPO_ROOT}{os.sep}", "", regex=False)
    failures["Ts (ms)"] = (failures["ts"] * 1e3).round().astype(int)
    return numbered(
        failures.set_index(["trajectory", "Ts (ms)"])[["route", "failure"]],
        "Conditions the CLIE sweep could not refine, and why",
        "tab-clie-failures",
    )


def sweep_sentence(records: pd.DataFrame, profile: str) -> Prose:
    if records.empty:
        return Prose("No CLIE sweep records in this build (run `python -m crane_book.pipeline`).")
    routes = records["route"].value_counts()
    ratio = records["clie_objective_final"] / records["clie_objective_start"]
    return Prose(
        f"{len(records)} CLIE records (profile `{profile}`), {int(routes.get('O-C', 0))} on route O-C and "
        f"{int(routes.get('O-S-C', 0))} on O-S-C. CLIE is a local method: the objective of {int((ratio > 0.99).sum())} of "
        "them ends within one per cent of where it started."
    )
