"""Chapter "Validation: the accepted model on the held-out records" (paper Sec. VI-C, VI-D, VII-B,
VII-E, Appendix B-G and E-A; Fig. 2, Fig. 7, Tables VII, XVI, XX and the accepted panel of Table
XII): the accepted model of the main job read back, Table VII on every execution, Table XVI,
Table XX and Fig. 7, the parameter panel against the twin's truth, Sec. VII-B's conditioning
against held-out prediction and Sec. VII-E's (7,7) entry. Data: the twin's recordings, the
accepted model's record (results/accepted) and the OLS/SDP sweep's condition records.

The chapter's state is one `ValidationStudy` (`study(...)`); each section is one function of it
that displays the section's tables, figures and generated sentences, every number computed here
from the records (`crane_lib.reporting.validation` holds the tested table builders)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

from crane_lib.acceptance import consistency
from crane_lib.acceptance.accepted import load_accepted
from crane_lib.acceptance.audit import uniform_poses
from crane_lib.identification import condition as identify
from crane_lib.identification import metrics
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import unit_of
from crane_lib.paper_numbers import paper
from crane_lib.reporting import validation as v
from crane_lib.reporting.tables import Comparison, Prose, Why, comparison_table, numbered, span
from crane_lib.twin.truth import load_truth

M77_POSES = 2000  # random poses over Θ at which M(θ)₇₇ is evaluated (Sec. VII-E)
M77_SEED = 1
SIGNIFICANCE = 0.05  # the level at which Sec. VII-B's rank correlation is called significant


def _pct(x: float) -> str:
    return f"{100 * x:.2f} %"


@dataclass
class ValidationStudy:
    """The accepted model of one condition and the held-out records of the build's profile."""

    trajectory: str
    ts: float
    run: int
    profile: str
    model: DynamicModel
    accepted: object  # the accepted model's ParameterSet (values, std_errors)
    record: dict  # its JSON record (every stage of Algorithm 1)
    heldout: dict  # (trajectory, execution) -> 40 ms bundle of V01–V03
    stages: dict  # "OLS", "CLIE", "accepted" -> parameter vector
    started: float = field(default_factory=time.perf_counter)
    records: dict = field(default_factory=dict)  # Table XVI's records, once computed
    truth: np.ndarray | None = None  # the twin's true base parameters, once read
    candidates: pd.DataFrame | None = None  # Sec. VII-B's candidates, once scored

    @property
    def rescued(self) -> bool:
        return self.record["rescue"] is not None

    @property
    def first(self) -> list:
        """The first execution of each validation record (the pooled figures, as Table VIII)."""
        return [b for (_, r), b in self.heldout.items() if r == self.run]

    @property
    def label(self) -> str:
        return f"{self.trajectory} at {self.ts * 1e3:g} ms"


def study(trajectory: str, ts: float, run: int, profile: str) -> ValidationStudy:
    """Read the accepted model of (trajectory, ts, run) and the profile's held-out bundles."""
    started = time.perf_counter()
    model = DynamicModel("reduced")
    accepted, record = load_accepted(trajectory, ts, run)
    heldout = v.heldout_bundles(profile, ts)
    stages = {
        "OLS": np.array(record["ols"]),
        "CLIE": np.array(record["refined"]),
        "accepted": accepted.values,
    }
    return ValidationStudy(
        trajectory, ts, run, profile, model, accepted, record, heldout, stages, started
    )


def executions_sentence(s: ValidationStudy) -> Prose:
    counts = ", ".join(
        f"{sum(name == t for name, _ in s.heldout)} execution(s) of {t}"
        for t in v.VALIDATION_TRAJECTORIES
    )
    return Prose(f"This build (profile `{s.profile}`) has {counts}.")


# ----------------------------------------------------------------------------- the accepted model


def accepted_model(s: ValidationStudy) -> None:
    """The audits that decide (one column per seed), the stages in words, the paper's figures."""
    record, refinement = s.record, s.record["refinement"]
    display(
        numbered(
            v.audit_table(record),
            f"The audits of {s.label} (twin): one column per seed",
            "tab-validation-audits",
            digits=4,
        )
    )
    if s.rescued:
        rescue = record["rescue"]
        rescued = (
            f"It failed the audit and was rescued in {len(rescue['passes'])} pass(es) (|Δβ| = "
            f"{rescue['change_norm']:.3g}); the accepted model's worst pose is θ = "
            f"{v.worst_pose_deg(record['final_audits'][0])}°."
        )
    else:
        rescued = "It passes the audit on every seed, so no rescue runs: the accepted model *is* the CLIE solution."
    d = v.difference_from_sweep(record)
    sweep = (
        " The CLIE sweep has no record of this condition to compare with."
        if d is None
        else f" The CLIE solution on this path and the CLIE sweep's record of the same condition (one code path, run "
        f"twice) differ by at most {d:.2g}."
    )
    display(
        Prose(
            f"**{s.label} (twin), {record['verdict']}.** Route {record['route']}, κ(W_all) = {record['kappa']:.1f}; "
            f"CLIE ({refinement['method']}) ran {refinement['iterations']} iterations, objective "
            f"{refinement['objective_start']:.6g} → {refinement['objective_final']:.6g} N²·m². The CLIE solution's "
            f"worst pose (seed 1) is θ = {v.worst_pose_deg(record['first_audits'][0])}°. "
            + rescued
            + sweep
        )
    )
    display(
        comparison_table(
            v.accepted_comparisons(record),
            "The accepted model through Algorithm 1: paper / this book",
            name="tab-validation-accepted",
        )
    )


# ----------------------------------------------------------------------------- Table VII


def table_vii(s: ValidationStudy) -> None:
    """Every execution, the means with the run-to-run spread, the paper's figures, and the orders."""
    per_run = v.heldout_metrics(s.model, s.stages, s.heldout)
    display(
        numbered(
            v.per_execution(per_run),
            "Held-out RMSE and MNE on every execution (twin)",
            "tab-validation-executions",
            digits=5,
        )
    )
    display(
        numbered(
            v.table_vii(per_run),
            "On the twin: mean over executions, run-to-run spread of the accepted model",
            "tab-validation-table-vii",
            digits=5,
            paper="VII",
        )
    )
    pooled = {
        label: metrics.pooled_rmse(s.model, beta, s.first) for label, beta in s.stages.items()
    }
    rows = v.table_vii_comparisons(per_run, pooled, s.rescued, v.run_to_run(per_run), s.profile)
    display(
        comparison_table(
            rows,
            "The paper's Table VII and Sec. VI-D beside this book "
            "(pooled: the first execution of each "
            "record)",
            name="tab-validation-table-vii-paper",
        )
    )
    by_rmse, by_mne = v.orders_agree(per_run, "accepted")
    orders = (
        "order them differently, as in the paper. "
        if by_rmse != by_mne
        else "order them alike here, where the paper's differ. "
    )
    moved = ""
    if s.rescued:
        largest = v.rescue_moves(s.record)["change / SE"].head(3)
        moved = (
            f"The rescue moved {', '.join(f'{n} by {x:+.1f}' for n, x in largest.items())} OLS standard errors "
            f"(the paper's moved none by more than {paper('rescue_max_entry_change').text()}). "
        )
    display(
        Prose(
            f"Ordered by the accepted model's RMSE the records read {', '.join(by_rmse)}; by MNE {', '.join(by_mne)}: the "
            f"two metrics {orders}{moved}The pipeline's pooled gain over OLS is "
            f"{_pct(1 - pooled['accepted'] / pooled['OLS'])} (negative: a loss), to be read against the run-to-run scale, "
            f"{paper('runtorun_ag02').text()} for AG02 in the paper."
        )
    )


# ----------------------------------------------------------------------------- Table XVI


def table_xvi(s: ValidationStudy) -> None:
    """How demanding the held-out set is, beside every identification record of the profile."""
    ident = v.identification_executions(s.profile)
    s.records = {
        **{name: s.heldout[(name, s.run)] for name in v.VALIDATION_TRAJECTORIES},
        **{name: v.recorded_bundle(name, s.run, s.ts, s.profile) for name in ident},
    }
    roles = {
        n: "held-out"
        if n in v.VALIDATION_TRAJECTORIES
        else "in sample"
        if n == s.trajectory
        else "identification"
        for n in s.records
    }
    table = v.table_xvi(s.model, s.accepted.values, s.records, roles)
    shares = ["M θ̈", "velocity terms", "both", "gravity", "residual", v.K_COLUMN]
    display(
        numbered(
            v.in_percent(table, shares),
            "On the twin: shares of predicted-torque RMS (%) under the accepted model",
            "tab-validation-table-xvi",
            digits=3,
            paper="XVI",
        )
    )
    display(
        comparison_table(
            v.table_xvi_comparisons(table, ident, s.profile),
            "The paper's Table XVI beside this book",
            name="tab-validation-table-xvi-paper",
        )
    )
    display(
        v.claims_frame(
            v.table_xvi_claims(table),
            "What the paper reads in Table XVI, computed on the "
            "twin: the verdict column says whether each holds",
        )
    )
    validation = table.loc[list(v.VALIDATION_TRAJECTORIES), v.K_COLUMN]
    display(
        Prose(
            f"V03's inertia share is {_pct(table.loc['V03', 'M θ̈'])} against {s.trajectory}'s "
            f"{_pct(table.loc[s.trajectory, 'M θ̈'])}. {metrics.K_GE_MOVING} or more arm joints move at once on "
            f"{span(100 * validation, 3)} % of the validation samples and on at most "
            f"{_pct(table.loc[ident, v.K_COLUMN].max())} of the identification samples."
        )
    )


# ----------------------------------------------------------------------------- Table XX, Fig. 7


def table_xx(s: ValidationStudy) -> None:
    """The error axis by axis, the paper's figures, and the orderings it reads in them."""
    per_axis = v.per_axis_errors(s.model, s.accepted.values, s.heldout)
    table = v.table_xx(per_axis)
    shown = v.in_percent(table, ["relative, mean"]).rename_axis("axis (8 = hand)")
    display(
        numbered(
            shown,
            "On the twin: the accepted model's error per axis",
            "tab-validation-table-xx",
            digits=3,
            paper="XX",
        )
    )
    display(
        comparison_table(
            v.table_xx_comparisons(table, per_axis),
            "The paper's Table XX beside this book",
            name="tab-validation-table-xx-paper",
        )
    )
    claims = v.ordering_claims(table)
    display(
        v.claims_frame(
            claims,
            "The two orderings the paper reads in Table XX, computed on the twin: "
            "the verdict column says whether each holds",
        )
    )
    display(
        Prose(
            f"{sum(c.holds for c in claims)} of the {len(claims)} orderings the paper reads in Table XX hold "
            "on the twin."
        )
    )


def fig_7(s: ValidationStudy, trajectory: str = "V03"):
    """Measured and predicted torque of the pitch axes on one held-out execution."""
    label = f"{trajectory}, execution {s.run} (twin data), {s.ts * 1e3:g} ms bundle, accepted model"
    v.torque_figure(s.model, s.accepted.values, s.heldout[(trajectory, s.run)], label)
    plt.show()


# ----------------------------------------------------------------------------- Table XII's panel


def parameter_panel(s: ValidationStudy) -> None:
    """The accepted values with their standard errors beside the twin's true base parameters."""
    model = s.model
    s.truth = model.base_from_standard(load_truth()).values
    panel = v.parameter_panel(
        model.names,
        s.accepted.values,
        s.accepted.std_errors,
        s.truth,
        [unit_of(n) for n in model.names],
    )
    digits = {
        "accepted": 4,
        "OLS standard error": 3,
        "|value| / SE": 3,
        "twin truth": 4,
        "error / SE": 3,
    }
    display(
        numbered(
            panel,
            "The accepted panel on the twin: values, OLS standard errors and the twin's truth",
            "tab-validation-panel",
            digits=digits,
            paper="XII",
        )
    )
    worst = panel["error / SE"].abs().sort_values(ascending=False).index[:3]
    farthest = ", ".join(f"{n} ({x:+.0f} SE)" for n, x in panel.loc[worst, "error / SE"].items())
    display(
        Prose(
            f"{int((panel['error / SE'].abs() <= 2).sum())} of {len(panel)} estimates lie within two standard errors of "
            f"the twin's truth; the farthest are {farthest}. {int((panel['|value| / SE'] < 2).sum())} estimates are within "
            "two standard errors of zero, the kind Sec. VII-D finds does not reproduce between executions."
        )
    )


# ----------------------------------------------------------------------------- Sec. VII-B


def conditioning_figure(s: ValidationStudy) -> None:
    """κ(W_all) of every candidate against its held-out RMSE (OLS): the figure alone, so
    that its cell carries its caption."""
    s.candidates = v.candidate_heldout(
        s.model, identify.load_condition_records(), s.first, s.ts, s.run
    )
    label = f"twin data: {len(s.candidates)} candidates at {s.ts * 1e3:g} ms (profile {s.profile})"
    v.kappa_figure(s.candidates, s.trajectory, label)
    plt.show()


def conditioning(s: ValidationStudy) -> None:
    """κ(W_all) of every candidate against its held-out RMSE: the paper's reading and ours."""
    if s.candidates is None:
        s.candidates = v.candidate_heldout(
            s.model, identify.load_condition_records(), s.first, s.ts, s.run
        )
    candidates = s.candidates
    correlation = v.kappa_against_heldout(candidates)
    display(
        comparison_table(
            v.candidate_comparisons(candidates, correlation, s.trajectory, s.profile),
            "Sec. VII-B: paper / this book",
            name="tab-validation-kappa",
        )
    )
    rho = correlation["all"]
    if rho is None:
        stated = "not computed: fewer than three candidates."
    else:
        significant = "" if rho.p_value < SIGNIFICANCE else "not "
        stated = (
            f"ρ = {rho.rho:+.3f} (p = {rho.p_value:.2g}), {significant}significant at the "
            f"{100 * SIGNIFICANCE:g} % level."
        )
    subset = (
        ""
        if len(candidates) >= v.CANDIDATES
        else f" The {s.profile} profile has {len(candidates)} of the {v.CANDIDATES} candidates: the test needs the "
        "full profile."
    )
    display(
        Prose(
            f"Over the {len(candidates)} candidates of this build the rank correlation of κ with held-out RMSE "
            f"is {stated}{subset}"
        )
    )


# ----------------------------------------------------------------------------- Sec. VII-E


def link_7(s: ValidationStudy) -> None:
    """M(θ)₇₇ over random poses, ZZR7 and IA7 against the paper's, and whether link 7 can exist."""
    model, values = s.model, s.accepted.values
    truth = s.truth if s.truth is not None else model.base_from_standard(load_truth()).values
    m77 = consistency.inertia_entry(model, values, 7, uniform_poses(M77_POSES, seed=M77_SEED))
    index = {n: i for i, n in enumerate(model.names)}
    zz7, ia7 = values[index["ZZR7"]], values[index["IA7"]]
    link7 = {
        label: consistency.necessary_conditions(model, beta)[0]
        for label, beta in {**s.stages, "twin truth": truth}.items()
    }
    frame = pd.DataFrame(
        {
            label: {
                "ZZR7 (kg·m²)": c.zzr,
                "XXR7 (kg·m²)": c.xxr,
                "ZZR7 − |XXR7| (kg·m²)": c.margin,
                "link 7 can be consistent": c.holds,
            }
            for label, c in link7.items()
        }
    ).T
    display(
        numbered(
            frame,
            "Link 7's necessary condition for each stage and the twin's truth",
            "tab-validation-link7",
            digits=4,
        )
    )
    orders = int(np.floor(np.log10(ia7 / abs(zz7))))
    if zz7 > 0:
        sign = Why.finding(
            f"ZZR7 comes out positive on the twin (standard error "
            f"{s.accepted.std_errors[index['ZZR7']]:.2g}, truth {truth[index['ZZR7']]:.2g} kg·m²), so "
            "M₇₇ lies above IA7 where the paper's lies below"
        )
    else:
        sign = v.TWIN_RECORDS
    display(
        comparison_table(
            [
                Comparison(
                    f"M(θ)₇₇ over {M77_POSES:,} random poses",
                    "m77_entry",
                    span(m77, 4),
                    unit="kg·m²",
                    why=sign,
                ),
                Comparison(
                    "IA7",
                    "ia7_accepted",
                    ia7,
                    why=Why.reconstruction(
                        "the twin's true IA7 is the paper's value (register \"twin\"): this row checks that identification "
                        "recovers it"
                    ),
                ),
                Comparison("ZZR7 (the paper's ZZ7)", "zz7_accepted", zz7, digits=3, why=sign),
                Comparison(
                    "orders of magnitude |ZZR7| lies below IA7",
                    "zz7_below_ia7_orders",
                    orders,
                    why=v.why_unless_agrees(orders, "zz7_below_ia7_orders", v.TWIN_RECORDS),
                ),
            ],
            "Sec. VII-E: paper / this book",
            name="tab-validation-vii-e",
        )
    )
    verdict = link7["accepted"]
    if verdict.holds:
        ours = (
            f"The accepted model satisfies ZZR7 > |XXR7| (margin {verdict.margin:.3g} kg·m²): link 7 passes this "
            "necessary test, and only a full reconstruction can say whether every link can be made consistent at "
            "once. "
        )
    else:
        ours = (
            f"The accepted model breaks ZZR7 > |XXR7| through {' and '.join(verdict.violated_by())}: no physically "
            "consistent link 7 has these base parameters, whatever a reconstruction does with the rest. "
        )
    theirs = paper("zz7_accepted").value
    display(
        Prose(
            f"M(θ)₇₇ of the accepted model is {span(m77, 6)} kg·m² over {M77_POSES:,} random poses, IA7 + ZZR7 to within "
            f"{np.abs(m77 - ia7 - zz7).max():.1e} kg·m². "
            + ours
            + f"The paper's own ZZ7 = {theirs:g} kg·m² breaks it whatever its XXR7 is: "
            f"{', '.join(consistency.LinkCondition(7, theirs, 0.0).violated_by())} alone decides."
        )
    )


def run_time(s: ValidationStudy) -> Prose:
    return Prose(
        f"*Chapter computed in {time.perf_counter() - s.started:.0f} s, {time.process_time():.0f} s of CPU "
        f"with the imports (profile `{s.profile}`, {len(s.heldout)} validation executions, "
        f"{len(s.records)} records in Table XVI).*"
    )
