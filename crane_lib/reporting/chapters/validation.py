"""Chapter "Validation: the accepted model on the held-out records" (paper Sec. VI-C, VI-D,
VII-B, VII-E, Appendix B-G and E-A; Tables VII, XVI, XX, the accepted panel of Table XII, Fig.
7): the accepted model's record, its held-out scores on every execution of V01-V03, the shares
of Table XVI, the per-axis errors of Table XX, the candidates of Sec. VII-B and the (7,7) entry
of Sec. VII-E, as DataFrames, styled tables and figures.

The metrics are `identification.metrics` (RMSE, MNE, per-axis errors, torque shares) and
`acceptance.held_out` / `acceptance.selection` (the held-out data set, rank correlation); this
module gathers them over records and executions and states the paper's readings of its tables
as computed verdicts. Data: the twin's recordings (every execution the profile records), the
accepted model's record and the OLS/SDP sweep's condition records.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.acceptance import consistency, held_out, selection
from crane_lib.acceptance.accepted import load_accepted
from crane_lib.acceptance.held_out import (
    CANDIDATES,
    HAND_AXIS,
    K_COLUMN,
    VALIDATION_TRAJECTORIES,
    Claim,
    rescue_moves,
)
from crane_lib.identification import clie, metrics
from crane_lib.identification import condition as identify
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import unit_of
from crane_lib.paper_numbers import paper
from crane_lib.records import read_json_record
from crane_lib.reporting.tables import (
    Comparison,
    ResultTable,
    Why,
    comparison_table,
    numbered,
    span,
)
from crane_lib.twin.truth import load_plant_settings, load_truth

M77_POSES = 2000  # random poses over Θ at which M(θ)₇₇ is evaluated (Sec. VII-E)
M77_SEED = 1
SIGNIFICANCE = 0.05  # the level at which Sec. VII-B's rank correlation is called significant


# ----------------------------------------------------------------------------- the study


@dataclass(frozen=True)
class ValidationStudy:
    """The accepted model of one condition and the held-out records of the build's profile."""

    trajectory: str
    ts: float
    run: int
    profile: str
    model: DynamicModel
    accepted: object  # the accepted model's ParameterSet (values, std_errors)
    record: dict  # its JSON record (every stage of Algorithm 1)
    heldout: dict  # (trajectory, execution) -> bundle of V01–V03 at ts
    stages: dict  # "OLS", "CLIE", "accepted" -> parameter vector

    @property
    def rescued(self) -> bool:
        """Whether the CLIE solution was rescued (the record holds a rescue)."""
        return self.record["rescue"] is not None

    @property
    def first(self) -> list:
        """The first execution of each validation record (the pooled figures, as Table VIII)."""
        return [b for (_, r), b in self.heldout.items() if r == self.run]

    @property
    def label(self) -> str:
        """'AG02 at 40 ms'."""
        return self.trajectory + " at " + format(self.ts * 1e3, "g") + " ms"


def study(trajectory: str, ts: float, run: int, profile: str) -> ValidationStudy:
    """Read the accepted model of (trajectory, ts, run) and the profile's held-out bundles."""
    accepted, record = load_accepted(trajectory, ts, run)
    stages = {
        "OLS": np.array(record["ols"]),
        "CLIE": np.array(record["refined"]),
        "accepted": accepted.values,
    }
    heldout = held_out.heldout_bundles(profile, ts)
    model = DynamicModel("reduced")
    return ValidationStudy(trajectory, ts, run, profile, model, accepted, record, heldout, stages)


def audits(s: ValidationStudy) -> ResultTable:
    """The audits that decide, one column per seed (the CLIE solution's and the accepted's)."""
    caption = "The audits of " + s.label + " (twin): one column per seed"
    return numbered(audit_table(s.record), caption, "tab-validation-audits", digits=4)


def accepted_against_paper(s: ValidationStudy):
    """The accepted model's passage through Algorithm 1 against the paper's figures."""
    return comparison_table(
        accepted_comparisons(s.record),
        "The accepted model through Algorithm 1: paper / this book",
        name="tab-validation-accepted",
    )


# ----------------------------------------------------------------------------- Table VII


@dataclass(frozen=True)
class TableVII:
    """Table VII's frames: every execution, the means, the paper's figures, the pooled RMSE."""

    per_run: pd.DataFrame  # one row per (record, execution, model): RMSE (N·m), MNE (fraction)
    executions: ResultTable
    table: ResultTable
    against: object  # the comparison table
    pooled: dict  # model label -> pooled RMSE on the first executions, N·m
    by_rmse: list  # the records ordered by the accepted model's mean RMSE, best first
    by_mne: list  # and by its mean MNE


def table_vii_of(s: ValidationStudy) -> TableVII:
    """Held-out RMSE and MNE of every stage on every execution, and the paper's Table VII."""
    per_run = heldout_metrics(s.model, s.stages, s.heldout)
    pooled = {label: metrics.pooled_rmse(s.model, b, s.first) for label, b in s.stages.items()}
    # the rescue's gains on the first executions, the basis of the pooled rows and of the claims
    first = per_run[per_run["run"] == s.run]
    rows = table_vii_comparisons(
        per_run, pooled, s.rescued, run_to_run(per_run), s.profile, gains_frame=first
    )
    return TableVII(
        per_run,
        numbered(
            per_execution(per_run),
            "Held-out RMSE and MNE on every execution (twin)",
            "tab-validation-executions",
            digits=5,
        ),
        numbered(
            table_vii(per_run),
            "On the twin: mean over executions, run-to-run spread of the accepted model",
            "tab-validation-table-vii",
            digits=5,
            paper="VII",
        ),
        comparison_table(
            rows,
            "The paper's Table VII and Sec. VI-D beside this book (the rescue's gains and the "
            "pooled RMSE: the first execution of each record; the SD: over its executions)",
            name="tab-validation-table-vii-paper",
        ),
        pooled,
        *orders_agree(per_run, "accepted"),
    )


# ----------------------------------------------------------------------------- Table XVI


@dataclass(frozen=True)
class TableXVI:
    """Table XVI over V01-V03 and every identification record of the profile."""

    table: pd.DataFrame  # shares as fractions, one row per record
    identification: list  # the identification records listed
    shown: ResultTable
    against: object
    claims: ResultTable


def table_xvi_of(s: ValidationStudy) -> TableXVI:
    """How demanding the held-out set is, beside every identification record of the profile."""
    ident = held_out.identification_executions(s.profile)
    records = {name: s.heldout[(name, s.run)] for name in VALIDATION_TRAJECTORIES}
    records.update({name: held_out.recorded_bundle(name, s.run, s.ts, s.profile) for name in ident})
    roles = {
        n: "held-out"
        if n in VALIDATION_TRAJECTORIES
        else "in sample"
        if n == s.trajectory
        else "identification"
        for n in records
    }
    table = held_out.table_xvi(s.model, s.accepted.values, records, roles)
    shares = ["M θ̈", "velocity terms", "both", "gravity", "residual", K_COLUMN]
    return TableXVI(
        table,
        ident,
        numbered(
            in_percent(table, shares),
            "On the twin: shares of predicted-torque RMS (%) under the accepted model",
            "tab-validation-table-xvi",
            digits=3,
            paper="XVI",
        ),
        comparison_table(
            table_xvi_comparisons(table, ident, s.profile),
            "The paper's Table XVI beside this book",
            name="tab-validation-table-xvi-paper",
        ),
        claims_frame(
            table_xvi_claims(table),
            "What the paper reads in Table XVI, computed on the "
            "twin: the verdict column says whether each holds",
        ),
    )


# ----------------------------------------------------------------------------- Table XX, Fig. 7


@dataclass(frozen=True)
class TableXX:
    """Table XX: the accepted model's error axis by axis, and the orderings the paper reads."""

    table: pd.DataFrame
    shown: ResultTable
    against: object
    claims: list  # of Claim
    verdicts: ResultTable


def table_xx_of(s: ValidationStudy) -> TableXX:
    """The error axis by axis, the paper's figures, and the orderings it reads in them."""
    per_axis = held_out.per_axis_errors(s.model, s.accepted.values, s.heldout)
    table = held_out.table_xx(per_axis)
    shown = in_percent(table, ["relative, mean"]).rename_axis("axis (8 = hand)")
    claims = held_out.ordering_claims(table)
    return TableXX(
        table,
        numbered(
            shown,
            "On the twin: the accepted model's error per axis",
            "tab-validation-table-xx",
            digits=3,
            paper="XX",
        ),
        comparison_table(
            table_xx_comparisons(table, per_axis),
            "The paper's Table XX beside this book",
            name="tab-validation-table-xx-paper",
        ),
        claims,
        claims_frame(
            claims,
            "The two orderings the paper reads in Table XX, computed on the twin: "
            "the verdict column says whether each holds",
        ),
    )


def fig_7(s: ValidationStudy, trajectory: str = "V03"):
    """Measured and predicted torque of the pitch axes on one held-out execution."""
    label = (
        trajectory
        + ", execution "
        + str(s.run)
        + " (twin data), "
        + format(s.ts * 1e3, "g")
        + " ms bundle, accepted model"
    )
    fig = torque_figure(s.model, s.accepted.values, s.heldout[(trajectory, s.run)], label)
    plt.show()
    return fig


# ----------------------------------------------------------------------------- Table XII's panel


def truth(s: ValidationStudy) -> np.ndarray:
    """The twin's true base parameters (the grouping of Appendix A on its standard ones)."""
    return s.model.base_from_standard(load_truth()).values


def panel_of(s: ValidationStudy) -> tuple[pd.DataFrame, ResultTable]:
    """The accepted values with their standard errors beside the twin's true base parameters."""
    names = s.model.names
    panel = parameter_panel(
        names, s.accepted.values, s.accepted.std_errors, truth(s), [unit_of(n) for n in names]
    )
    digits = {
        "accepted": 4,
        "OLS standard error": 3,
        "|value| / SE": 3,
        "twin truth": 4,
        "error / SE": 3,
    }
    return panel, numbered(
        panel,
        "The accepted panel on the twin: values, OLS standard errors and the twin's truth",
        "tab-validation-panel",
        digits=digits,
        paper="XII",
    )


# ----------------------------------------------------------------------------- Sec. VII-B


def candidates(s: ValidationStudy) -> pd.DataFrame:
    """Every candidate at ts: κ(W_all) and the pooled held-out RMSE of its OLS estimate."""
    records = identify.load_condition_records(profile=s.profile)
    return held_out.candidate_heldout(s.model, records, s.first, s.ts, s.run)


def conditioning_figure(s: ValidationStudy, found: pd.DataFrame):
    """κ(W_all) of every candidate against its held-out RMSE (OLS), the candidate in bold."""
    label = (
        "twin data: "
        + str(len(found))
        + " candidates at "
        + format(s.ts * 1e3, "g")
        + " ms (profile "
        + s.profile
        + ")"
    )
    fig = kappa_figure(found, s.trajectory, label)
    plt.show()
    return fig


def conditioning(s: ValidationStudy, found: pd.DataFrame):
    """Sec. VII-B's comparison table: κ and held-out ranges, rank correlations, the standing."""
    correlation = held_out.kappa_against_heldout(found)
    return comparison_table(
        candidate_comparisons(found, correlation, s.trajectory, s.profile),
        "Sec. VII-B: paper / this book",
        name="tab-validation-kappa",
    )


# ----------------------------------------------------------------------------- Sec. VII-E


def link_7_of(s: ValidationStudy) -> tuple[dict, ResultTable]:
    """Link 7's necessary condition ZZR7 > |XXR7| for each stage and the twin's truth."""
    betas = {**s.stages, "twin truth": truth(s)}
    link7 = {
        label: consistency.necessary_conditions(s.model, beta)[0] for label, beta in betas.items()
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
    caption = "Link 7's necessary condition for each stage and the twin's truth"
    return link7, numbered(frame, caption, "tab-validation-link7", digits=4)


def vii_e_against_paper(s: ValidationStudy, m77: np.ndarray):
    """M(θ)₇₇ over the random poses, IA7 and ZZR7 against the paper's Sec. VII-E."""
    index = {n: i for i, n in enumerate(s.model.names)}
    zz7, ia7 = s.accepted.values[index["ZZR7"]], s.accepted.values[index["IA7"]]
    orders = int(np.floor(np.log10(ia7 / abs(zz7))))
    sign = twin_records()
    if zz7 > 0:
        sign = Why.finding(
            "ZZR7 comes out positive on the twin (standard error "
            + format(s.accepted.std_errors[index["ZZR7"]], ".2g")
            + ", truth "
            + format(truth(s)[index["ZZR7"]], ".2g")
            + " kg·m²), so M₇₇ lies above IA7 where the paper's lies below"
        )
    ia7_why = Why.reconstruction(
        "the twin's true IA7 is the paper's value (register \"twin\"): this row checks that "
        "identification recovers it"
    )
    rows = [
        Comparison(
            "M(θ)₇₇ over " + format(M77_POSES, ",") + " random poses",
            "m77_entry",
            span(m77, 4),
            unit="kg·m²",
            why=sign,
        ),
        Comparison("IA7", "ia7_accepted", ia7, why=ia7_why),
        Comparison("ZZR7 (the paper's ZZ7)", "zz7_accepted", zz7, digits=3, why=sign),
        Comparison(
            "orders of magnitude |ZZR7| lies below IA7",
            "zz7_below_ia7_orders",
            orders,
            why=why_unless_agrees(orders, "zz7_below_ia7_orders", twin_records()),
        ),
    ]
    return comparison_table(rows, "Sec. VII-E: paper / this book", name="tab-validation-vii-e")


# ----------------------------------------------------------------------------- Table VII


def heldout_metrics(
    model: DynamicModel, models: dict[str, np.ndarray], bundles: dict
) -> pd.DataFrame:
    """One row per (record, execution, model): RMSE (N·m) and MNE (fraction)."""
    rows = []
    for (record, run), bundle in bundles.items():
        for label, beta in models.items():
            error = metrics.prediction_error(model, beta, bundle)
            rows.append(
                {"record": record, "run": run, "model": label, "RMSE": error.rmse, "MNE": error.mne}
            )
    return pd.DataFrame(rows)


def run_to_run(frame: pd.DataFrame, metric: str = "RMSE") -> pd.DataFrame:
    """Per (record, model): executions, mean, relative SD (ddof 1) and relative range of
    `metric`."""
    rows = []
    for (record, label), group in frame.groupby(["record", "model"], sort=False):
        s = metrics.spread(group[metric].to_numpy())
        rows.append(
            {
                "record": record,
                "model": label,
                "executions": s.n,
                "mean": s.mean,
                "sd_relative": s.sd_relative,
                "range_relative": s.range_relative,
            }
        )
    return pd.DataFrame(rows)


def per_execution(frame: pd.DataFrame) -> pd.DataFrame:
    """`heldout_metrics` as a table: one row per (record, execution), RMSE (N·m) and MNE (%)
    per model."""
    shown = frame.assign(MNE=100.0 * frame["MNE"]).rename(
        columns={"RMSE": "RMSE (N·m)", "MNE": "MNE (%)"}
    )
    return shown.pivot_table(
        index=["record", "run"], columns="model", values=["RMSE (N·m)", "MNE (%)"], sort=False
    )


def table_vii(frame: pd.DataFrame, spread_of: str = "accepted") -> pd.DataFrame:
    """Table VII: per record, RMSE (N·m) and MNE (%) of each model averaged over the executions, the
    run-to-run RMSE SD (% of the mean) of model `spread_of` and the number of executions."""
    table = per_execution(frame).groupby(level="record", sort=False).mean()
    spreads = run_to_run(frame)
    spreads = spreads[spreads["model"] == spread_of].set_index("record")
    table[("RMSE SD (%)", spread_of)] = 100.0 * spreads["sd_relative"]
    table[("executions", "")] = spreads["executions"]
    return table


def in_percent(frame: pd.DataFrame, columns) -> pd.DataFrame:
    """A copy with `columns` (fractions) multiplied by 100 and labelled "(%)"."""
    out = frame.copy()
    out[list(columns)] = out[list(columns)] * 100.0
    return out.rename(columns={c: ("%s (%%)" % c) for c in columns})


def gains(frame: pd.DataFrame, better: str, than: str) -> pd.DataFrame:
    """Per record: relative improvement of model `better` over model `than`, 1 - better/than, of
    the RMSE and MNE averaged over the executions (positive: `better` predicts better)."""
    means = frame.groupby(["record", "model"], sort=False)[["RMSE", "MNE"]].mean()
    out = {}
    for record in frame["record"].unique():
        out[record] = {
            m: 1.0 - means.loc[(record, better), m] / means.loc[(record, than), m]
            for m in ("RMSE", "MNE")
        }
    return pd.DataFrame(out).T


def orders_agree(frame: pd.DataFrame, model_label: str) -> tuple[list[str], list[str]]:
    """The records ordered by mean RMSE and by mean MNE of one model (best first)."""
    means = (
        frame[frame["model"] == model_label].groupby("record", sort=False)[["RMSE", "MNE"]].mean()
    )
    return list(means["RMSE"].sort_values().index), list(means["MNE"].sort_values().index)


# ----------------------------------------------------------------------------- Table XX


def claims_frame(claims: list[Claim], caption: str) -> ResultTable:
    """The claims the paper reads in a table, each with its verdict on the twin, captioned."""
    frame = pd.DataFrame(
        [
            {
                "the paper's claim": c.claim,
                "paper": c.paper,
                "this book": c.book,
                "verdict": "holds" if c.holds else "does not hold",
            }
            for c in claims
        ]
    )
    return numbered(frame.set_index("the paper's claim"), caption)


# ------------------------------------------------------------------ Table XII, accepted panel


def parameter_panel(names: list[str], values, std_errors, truth, units: list[str]) -> pd.DataFrame:
    """The accepted parameters with their OLS standard errors, the value in standard errors from
    zero, the twin's true base parameter and the error (accepted - truth) in standard errors."""
    values, std_errors, truth = (np.asarray(a, dtype=float) for a in (values, std_errors, truth))
    return pd.DataFrame(
        {
            "unit": units,
            "accepted": values,
            "OLS standard error": std_errors,
            "|value| / SE": np.abs(values) / std_errors,
            "twin truth": truth,
            "error / SE": (values - truth) / std_errors,
        },
        index=pd.Index(names, name="parameter"),
    )


# ------------------------------------------------------------------ paper / this book / why
#
# Each builder returns the rows of one comparison table (reporting.tables); a reason is given
# only where the computed verdict is not agreement, and its wording follows the computed facts
# (a rescue that did not run, a gain with the other sign, a profile that records a subset).


@lru_cache(maxsize=1)
def twin_records() -> Why:
    """The twin's properties that make its records differ from the arm's, each with its size
    read from the twin's data files (data/twin_plant.csv, data/twin_truth.csv)."""
    plant, standard = load_plant_settings(), load_truth()
    kt_off = 100 * np.abs(plant.kt_true / plant.kt_logged - 1)  # % torque-record scale error
    coulomb = np.abs([v for n, v in zip(standard.names, standard.values) if n.startswith("FS")])
    return Why.twin(
        "the twin's records: its true torque constants differ from the logged ones by "
        + span(kt_off, 2)
        + " % (data/twin_plant.csv), its Coulomb friction, absent from the reduced model, is "
        + span(coulomb, 2)
        + " N·m per axis (data/twin_truth.csv), and its drivetrain resonances at the Fig. 1 "
        + "posture lie at "
        + span(plant.resonance_hz, 3)
        + " Hz; the arm's values of these are not known"
    )


def why_unless_agrees(book, number_id: str, why: Why) -> Why | None:
    """`why`, unless `book` agrees with the paper's number (then no reason is needed)."""
    return None if Comparison("", number_id, book).agreement() is not None else why


def audit_table(record: dict) -> pd.DataFrame:
    """The audits of the accepted model's record, one column per seed: lambda_min over Theta,
    violating configurations and the component of the worst pose, of the CLIE solution (first
    audit) and of the model that was accepted or rejected (final audit)."""
    columns = {}
    for first, final in zip(record["first_audits"], record["final_audits"]):
        columns[("seed %s" % first["seed"])] = {
            **{
                ("%s: %s" % (label, k)): v
                for label, audit in (("CLIE solution", first), ("accepted", final))
                for k, v in (
                    ("λmin over Θ (kg·m²)", audit["lambda_min"]),
                    ("violating poses", sum(audit["violations"].values())),
                    ("worst pose in", audit["worst_component"]),
                )
            }
        }
    return pd.DataFrame(columns)


def difference_from_sweep(record: dict) -> float | None:
    """Largest |difference| between the CLIE solution in the accepted model's record and the CLIE
    sweep's record of the same condition and route (None when the sweep has no such record):
    the two come from the same code path and must agree."""
    path = clie.record_path(
        record["trajectory"], record["ts"], record["run"], record["refinement"]["method"]
    )
    if not path.is_file():
        return None
    return float(
        np.max(np.abs(np.asarray(read_json_record(path)["clie_x"]) - np.asarray(record["refined"])))
    )


def worst_pose_deg(audit: dict) -> str:
    """The worst pose of one audit record, in degrees, as '[a, b, ...]'."""
    return "[" + ", ".join(("%.0f" % x) for x in np.rad2deg(audit["worst_pose_rad"])) + "]"


def accepted_comparisons(record: dict) -> list[Comparison]:
    """The accepted model's passage through Algorithm 1 against Sec. IV-C, VI-B, VI-E and D-E."""
    first, final = record["first_audits"], record["final_audits"]
    margins = np.array([a["lambda_min"] for a in final])
    passed = sum(bool(a["passed"]) for a in final)
    violations = sum(first[0]["violations"].values())
    rescue = record["rescue"]
    no_rescue = Why.finding(
        (
            "the twin's CLIE solution passes the audit on all %s seeds, "
            "so Algorithm 1 ends without a rescue; the paper's failed "
            "and was rescued" % (len(first),)
        )
    )
    deeper = Why.twin(
        (
            "a different model: the twin's CLIE solution reaches λmin = "
            "%.3g kg·m² (at a %s configuration of Θ)"
            % (first[0]["lambda_min"], first[0]["worst_component"])
        )
    )
    rows = [
        Comparison(
            "CLIE iterations on the accepted condition",
            "clie_iters_eps_0001",
            int(record["refinement"]["iterations"]),
            why=Why.reconstruction(
                "this book's fast route (DIDIM Jacobian, one simulation per iteration), "
                "not lsqnonlin's "
                "finite differences, on the twin's record"
            ),
        ),
        Comparison(
            ("violating audit configurations of the CLIE solution (seed %s)" % first[0]["seed"]),
            "clie_solution_violations",
            int(violations),
            why=no_rescue if violations == 0 else deeper,
        ),
        Comparison(
            "audit seeds the accepted model passes",
            "accepted_pass_seeds",
            int(passed),
            why=why_unless_agrees(
                passed,
                "accepted_pass_seeds",
                Why.finding(
                    ("the model is not accepted: it fails %s seed(s)" % (len(final) - passed,))
                ),
            ),
        ),
    ]
    on_grid = all(a["worst_component"] == "grid" for a in final)
    margin_why = (
        Why.finding(
            (
                "no rescue: the margin is the CLIE solution's own distance "
                "from the PD boundary, not the rescue's ε = %g kg·m² less "
                "the audit's gap" % (paper("rescue_eps_pd").value,)
            )
        )
        if rescue is None
        else Why.finding(
            "on every seed the smallest eigenvalue lies on the audit's deterministic grid, "
            "which all seeds share, "
            "so the margin does not move with the draw; the paper's did"
        )
        if on_grid
        else twin_records()
    )
    for label, value in (("smallest", margins.min()), ("largest", margins.max())):
        rows.append(
            Comparison(
                ("λmin over Θ of the accepted model, %s of the seeds" % label),
                "audit_min_eig_accepted",
                float(value),
                why=why_unless_agrees(float(value), "audit_min_eig_accepted", margin_why),
            )
        )
    if margins.min() > 0:
        ratio = float(margins.max() / margins.min())
        rows.append(
            Comparison(
                "largest over smallest λmin across the seeds",
                "audit_margin_seed_factor",
                ratio,
                why=why_unless_agrees(ratio, "audit_margin_seed_factor", margin_why),
            )
        )
    passes = "— (no rescue)" if rescue is None else int(len(rescue["passes"]))
    rows.append(
        Comparison(
            "rescue passes (seeded with the audit's violators)",
            "rescue_passes_seeded",
            passes,
            why=no_rescue
            if rescue is None
            else why_unless_agrees(passes, "rescue_passes_seeded", twin_records()),
        )
    )
    if rescue is not None:
        moves = rescue_moves(record)
        inertia = moves[[unit_of(n) == "kg·m^2" for n in moves.index]]
        if len(inertia):
            name = inertia["change"].abs().idxmax()
            largest = float(abs(inertia.loc[name, "change"]))
            bound = paper("rescue_max_entry_change").value
            rows.append(
                Comparison(
                    ("largest change of an inertia parameter by the rescue (%s)" % name),
                    "rescue_max_entry_change",
                    largest,
                    digits=2,
                    why=Why.finding(
                        (
                            "the twin's rescue moves %s by %.2g × the paper's bound, "
                            "%.2g standard errors"
                            % (name, largest / bound, abs(inertia.loc[name, "change / SE"]))
                        )
                    )
                    if largest > bound
                    else Why.twin("within the paper's bound"),
                )
            )
    return rows


def _gain_why(gain_percent: float, rescued: bool) -> Why:
    if not rescued:
        return Why.finding(
            "no rescue ran: the accepted model is the CLIE solution, "
            "so the gain is zero by construction"
        )
    if gain_percent < 0:
        return Why.finding(
            (
                "on the twin the rescue costs %.2g %% here instead of gaining: the twin's CLIE "
                "solution lies far outside the PD set, so the rescue, the nearest PD model in "
                "the plain norm of the parameters, moves well-determined ones by several of "
                "their standard errors (register: why the rescue costs held-out MNE)"
                % (abs(gain_percent),)
            )
        )
    return twin_records()


def table_vii_comparisons(
    frame: pd.DataFrame,
    pooled: dict[str, float],
    rescued: bool,
    spreads: pd.DataFrame,
    profile: str,
    gains_frame: pd.DataFrame | None = None,
) -> list[Comparison]:
    """Table VII and Sec. VI-D: the rescue's gain over the CLIE solution per record and metric
    (on `gains_frame`, default `frame`: the executions it holds), the pooled RMSE of OLS and of
    the accepted model, the pipeline's gain, the run-to-run SD."""
    rows = []
    basis = frame if gains_frame is None else gains_frame
    gain = gains(basis, "accepted", "CLIE") * 100.0
    single = bool(basis.groupby("record")["run"].nunique().max() == 1)
    for record in gain.index:
        for metric in ("RMSE", "MNE"):
            value = float(gain.loc[record, metric])
            rows.append(
                Comparison(
                    (
                        "%s gain of the accepted model over its CLIE solution, %s (%s)"
                        % (
                            metric,
                            record,
                            "first execution" if single else "mean over executions",
                        )
                    ),
                    "rescue_heldout_gain",
                    value,
                    digits=2,
                    why=why_unless_agrees(value, "rescue_heldout_gain", _gain_why(value, rescued)),
                )
            )
    rows.append(
        Comparison(
            "pooled held-out RMSE, accepted model",
            "heldout_rmse_pooled_accepted",
            pooled["accepted"],
            why=twin_records(),
        )
    )
    rows.append(
        Comparison(
            "pooled held-out RMSE, OLS",
            "heldout_rmse_pooled_ols_ag02",
            pooled["OLS"],
            why=twin_records(),
        )
    )
    pipeline_gain = 100.0 * (1.0 - pooled["accepted"] / pooled["OLS"])
    rows.append(
        Comparison(
            "pooled RMSE gain of the pipeline over OLS",
            "pipeline_gain_vs_ols",
            pipeline_gain,
            digits=2,
            why=why_unless_agrees(
                pipeline_gain,
                "pipeline_gain_vs_ols",
                twin_records()
                if pipeline_gain > 0
                else Why.finding(
                    ("on the twin the pipeline is %.2g %% worse than OLS" % (abs(pipeline_gain),))
                ),
            ),
        )
    )
    accepted_spread = spreads[spreads["model"] == "accepted"].set_index("record")
    for record, number_id in zip(
        VALIDATION_TRAJECTORIES, ("eval_rmse_sd_v01", "eval_rmse_sd_v02", "eval_rmse_sd_v03")
    ):
        if record not in accepted_spread.index:
            continue
        s = accepted_spread.loc[record]
        if s["executions"] < 2:
            rows.append(
                Comparison(
                    ("RMSE SD over the executions of %s" % record),
                    number_id,
                    "— (one execution)",
                    why=Why.profile(
                        (
                            "the %s profile records %s once; the full profile repeats it"
                            % (profile, record)
                        )
                    ),
                )
            )
        else:
            sd = 100.0 * float(s["sd_relative"])
            rows.append(
                Comparison(
                    ("RMSE SD over the %s executions of %s" % (int(s["executions"]), record)),
                    number_id,
                    sd,
                    digits=2,
                    why=why_unless_agrees(
                        sd,
                        number_id,
                        Why.twin(
                            "the twin's run-to-run variation is its seeded noise, "
                            "friction and Kt draws, not the arm's"
                        ),
                    ),
                )
            )
    return rows


def table_xvi_comparisons(
    table: pd.DataFrame, identification: list[str], profile: str
) -> list[Comparison]:
    """Table XVI's numbers the paper states: inertia shares, residual shares, the most arm joints
    moving at once in the identification records, and peak joint speeds."""
    rows = []
    for record, number_id in (
        ("V01", "inertia_share_v01"),
        ("V02", "inertia_share_v02"),
        ("AG02", "inertia_share_ag02"),
        ("PA07", "inertia_share_pa07"),
    ):
        if record in table.index:
            rows.append(
                Comparison(
                    ("M θ̈ share of predicted-torque RMS, %s" % record),
                    number_id,
                    100.0 * table.loc[record, "M θ̈"],
                    digits=3,
                    why=twin_records(),
                )
            )
        else:
            rows.append(
                Comparison(
                    ("M θ̈ share of predicted-torque RMS, %s" % record),
                    number_id,
                    "— (not recorded)",
                    why=Why.profile(("the %s profile does not record %s" % (profile, record))),
                )
            )
    for record, number_id, label in (
        ("V01", "residual_share_v01", "prediction"),
        ("AG02", "residual_share_ag02", "in-sample"),
    ):
        if record in table.index:
            rows.append(
                Comparison(
                    ("%s residual share of torque RMS, %s" % (label, record)),
                    number_id,
                    100.0 * table.loc[record, "residual"],
                    digits=3,
                    why=twin_records(),
                )
            )
    most = int(table.loc[identification, "most arm joints moving"].max())
    rows.append(
        Comparison(
            (
                "most arm joints moving at once, %s identification record(s)"
                % (len(identification),)
            ),
            "max_measured_joints_together",
            most,
            why=why_unless_agrees(
                most,
                "max_measured_joints_together",
                twin_records()
                if len(identification) >= CANDIDATES
                else Why.profile(
                    (
                        "%s of the %s identification records in the %s profile"
                        % (len(identification), CANDIDATES, profile)
                    )
                ),
            ),
        )
    )
    held = [v for v in VALIDATION_TRAJECTORIES if v in table.index]
    for label, value in (
        ("slowest", table.loc[held, "peak joint speed (rad/s)"].min()),
        ("fastest", table.loc[held, "peak joint speed (rad/s)"].max()),
    ):
        rows.append(
            Comparison(
                ("peak joint speed of the %s validation record" % label),
                "validation_peak_velocity",
                float(value),
                why=why_unless_agrees(float(value), "validation_peak_velocity", twin_records()),
            )
        )
    if "AG02" in table.index:
        value = float(table.loc["AG02", "peak joint speed (rad/s)"])
        rows.append(
            Comparison(
                "peak joint speed, AG02",
                "ag02_peak_velocity",
                value,
                why=why_unless_agrees(value, "ag02_peak_velocity", twin_records()),
            )
        )
    return rows


def table_xvi_claims(table: pd.DataFrame) -> list[Claim]:
    """Sec. VI-C and B-G's orderings of Table XVI that name records this build has."""
    share = table["M θ̈"]
    claims = []
    if {"V01", "V02", "AG02"} <= set(table.index):
        claims.append(
            Claim(
                "M θ̈ carries a larger share on V01 and V02 than on AG02",
                "yes",
                (
                    "V01 %.1f %%, V02 %.1f %%, AG02 %.1f %%"
                    % (100 * share["V01"], 100 * share["V02"], 100 * share["AG02"])
                ),
                bool(share["V01"] > share["AG02"] and share["V02"] > share["AG02"]),
            )
        )
    if {"V01", "V02", "AP01"} <= set(table.index):
        claims.append(
            Claim(
                "AP01 has a higher M θ̈ share than V01 and V02",
                "yes",
                ("AP01 %.1f %%" % (100 * share["AP01"],)),
                bool(share["AP01"] > max(share["V01"], share["V02"])),
            )
        )
    if {"V01", "AG02"} <= set(table.index):
        residual = table["residual"]
        claims.append(
            Claim(
                "the prediction residual share on V01 exceeds AG02's in-sample share",
                "yes",
                ("%.1f %% against %.1f %%" % (100 * residual["V01"], 100 * residual["AG02"])),
                bool(residual["V01"] > residual["AG02"]),
            )
        )
        speed = table["peak joint speed (rad/s)"]
        held = [v for v in VALIDATION_TRAJECTORIES if v in table.index]
        claims.append(
            Claim(
                "every validation record is slower than AG02 at its fastest joint",
                "yes",
                ("%.2f against %.2f rad/s" % (speed[held].max(), speed["AG02"])),
                bool(speed[held].max() < speed["AG02"]),
            )
        )
    return claims


def table_xx_comparisons(table: pd.DataFrame, per_axis: pd.DataFrame) -> list[Comparison]:
    """Table XX's numbers: axis 2 and the hand in absolute terms, axes 1 and 7 relative, axis 6
    on each record, and the axis-2/axis-6 ratios."""
    rmse, relative, p2p = (
        table["RMSE, mean over records"],
        table["relative, mean"],
        table["peak-to-peak, mean"],
    )
    rows = [
        Comparison(
            "RMSE, axis 2 (mean over records)",
            "axis2_heldout_rmse",
            float(rmse.loc[2]),
            why=twin_records(),
        ),
        Comparison(
            "RMSE, hand (mean over records)",
            "hand_heldout_rmse",
            float(rmse.loc[HAND_AXIS]),
            why=twin_records(),
        ),
        Comparison(
            "relative error, axis 1",
            "axis1_relative_error",
            100.0 * float(relative.loc[1]),
            digits=3,
            why=twin_records(),
        ),
        Comparison(
            "relative error, axis 7",
            "axis7_relative_error",
            100.0 * float(relative.loc[7]),
            digits=3,
            why=twin_records(),
        ),
    ]
    axis6 = (
        per_axis[per_axis["axis"] == 6]
        .groupby("record")[["RMSE", "relative", "peak-to-peak"]]
        .mean()
    )
    for record in axis6.index:
        for column, number_id, scale in (
            ("RMSE", "axis6_heldout_rmse", 1.0),
            ("relative", "axis6_relative_error", 100.0),
            ("peak-to-peak", "axis6_p2p_range", 1.0),
        ):
            value = scale * float(axis6.loc[record, column])
            rows.append(
                Comparison(
                    ("axis 6 %s, %s" % (column, record)),
                    number_id,
                    value,
                    digits=3,
                    why=why_unless_agrees(value, number_id, twin_records()),
                )
            )
    rank = int(relative.rank(ascending=False, method="min").loc[6])
    rows.append(
        Comparison(
            "rank of axis 6 by relative error",
            "axis6_rel_error_rank",
            rank,
            why=why_unless_agrees(rank, "axis6_rel_error_rank", twin_records()),
        )
    )
    for label, series, number_id in (
        ("torque range", p2p, "torque_range_ratio_ax2_ax6"),
        ("error", rmse, "error_ratio_ax2_ax6"),
    ):
        value = float(series.loc[2] / series.loc[6])
        rows.append(
            Comparison(
                ("%s, axis 2 over axis 6" % label),
                number_id,
                value,
                digits=2,
                why=why_unless_agrees(value, number_id, twin_records()),
            )
        )
    return rows


def candidate_comparisons(
    candidates: pd.DataFrame, correlation: dict, candidate: str, profile: str
) -> list[Comparison]:
    """Sec. VII-B over the candidates at 40 ms: kappa and held-out ranges, the two rank
    correlations, the two-digit count, the candidate's rank and gap to the best."""
    n = len(candidates)
    why = (
        twin_records()
        if n >= CANDIDATES
        else Why.profile(("%s of the %s candidates in the %s profile" % (n, CANDIDATES, profile)))
    )
    rows = [
        Comparison(
            "κ(W_all) over the candidates",
            "kappa_range_40ms",
            span(candidates["kappa"], 4),
            why=why,
        ),
        Comparison(
            "held-out RMSE (OLS) over the candidates",
            "heldout_rmse_range_40ms",
            span(candidates["held-out RMSE"], 5),
            unit="N·m",
            why=why,
        ),
        Comparison(
            "candidates with two-digit κ",
            "two_digit_kappa_count",
            int(correlation["n_two_digit"]),
            why=why_unless_agrees(correlation["n_two_digit"], "two_digit_kappa_count", why),
        ),
    ]
    for key, rho_id, p_id, label in (
        ("all", "spearman_rho_all", "spearman_p_all", "all candidates"),
        ("two-digit", "spearman_rho_subset", "spearman_p_subset", "two-digit κ"),
    ):
        result = correlation[key]
        if result is None:
            rows += [
                Comparison(
                    ("Spearman ρ, %s" % label), rho_id, "— (fewer than three candidates)", why=why
                ),
                Comparison(("p-value, %s" % label), p_id, "—", why=why),
            ]
            continue
        rows += [
            Comparison(
                ("Spearman ρ, %s (%s)" % (label, result.n)),
                rho_id,
                result.rho,
                digits=3,
                why=why_unless_agrees(result.rho, rho_id, why),
            ),
            Comparison(
                ("p-value, %s" % label),
                p_id,
                result.p_value,
                digits=2,
                why=why_unless_agrees(result.p_value, p_id, why),
            ),
        ]
    if candidate in candidates.index:
        index = list(candidates.index).index(candidate)
        standing = selection.heldout_standing(candidates["held-out RMSE"], index)
        best = candidates.index[standing["best"]]
        rows += [
            Comparison(
                ("%s's rank by held-out RMSE" % candidate),
                "ag02_heldout_rank",
                int(standing["rank"]),
                why=why_unless_agrees(standing["rank"], "ag02_heldout_rank", why),
            ),
            Comparison(
                ("%s's gap to the best candidate (%s; paper: PB07)" % (candidate, best)),
                "ag02_gap_to_pb07",
                100.0 * standing["gap"],
                digits=2,
                why=why_unless_agrees(100.0 * standing["gap"], "ag02_gap_to_pb07", why),
            ),
        ]
    return rows


# ----------------------------------------------------------------------------- figures


def torque_figure(
    model: DynamicModel, beta, bundle, label: str, axes=(2, 4, 6), window_s: float = 6.0
):
    """Fig. 7: measured and predicted torque of `axes` on one record, the residual, and a zoomed
    window of `window_s` seconds starting at the record's midpoint."""
    import matplotlib.pyplot as plt

    predicted = model.inverse_dynamics(bundle.theta, bundle.dtheta, bundle.ddtheta, beta)
    t = bundle.t - bundle.t[0]
    start = t[len(t) // 2]
    zoom = (t >= start) & (t <= start + window_s)
    fig, grid = plt.subplots(
        len(axes),
        2,
        figsize=(12, 2.4 * len(axes)),
        sharex="col",
        gridspec_kw={"width_ratios": [2.2, 1]},
    )
    for row, axis in enumerate(axes):
        j = axis - 1
        for col, mask in enumerate((np.ones_like(zoom), zoom)):
            ax = grid[row, col]
            ax.plot(t[mask], bundle.tau[mask, j], lw=0.8, label="measured (torque record)")
            ax.plot(t[mask], predicted[mask, j], lw=0.8, label="predicted, accepted model")
            ax.plot(
                t[mask],
                bundle.tau[mask, j] - predicted[mask, j],
                lw=0.6,
                color="0.45",
                label="residual",
            )
            ax.set_ylabel(("axis %s (N·m)" % axis))
        grid[row, 0].axvspan(start, start + window_s, color="0.9", zorder=0)
    grid[0, 0].legend(fontsize=7, ncol=3, loc="upper right")
    grid[0, 0].set_title(("%s: measured vs predicted torque" % label))
    grid[0, 1].set_title(("zoom: %g s from %.0f s" % (window_s, start)))
    grid[-1, 0].set_xlabel("time (s)")
    grid[-1, 1].set_xlabel("time (s)")
    fig.tight_layout()
    return fig


def kappa_figure(
    candidates: pd.DataFrame,
    candidate: str,
    label: str,
    two_digit: float = selection.TWO_DIGIT_KAPPA,
):
    """Sec. VII-B: held-out RMSE of every candidate's OLS estimate against its kappa."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.scatter(candidates["kappa"], candidates["held-out RMSE"], s=22)
    for name, row in candidates.iterrows():
        ax.annotate(
            name,
            (row["kappa"], row["held-out RMSE"]),
            fontsize=6.5,
            xytext=(3, 2),
            textcoords="offset points",
            fontweight="bold" if name == candidate else "normal",
        )
    ax.axvline(two_digit, color="0.6", ls="--", lw=0.8)
    ax.set_xlim(right=max(ax.get_xlim()[1], 1.08 * two_digit))
    top = ax.get_ylim()[1]
    ax.text(two_digit, top, "two-digit κ ", fontsize=7, va="top", ha="right", color="0.4")
    ax.text(two_digit, top, " three-digit κ", fontsize=7, va="top", ha="left", color="0.4")
    ax.set_xlabel("κ(W_all) at 40 ms")
    ax.set_ylabel("pooled held-out RMSE of the OLS estimate (N·m)")
    ax.set_title(label, fontsize=9)
    fig.tight_layout()
    return fig
