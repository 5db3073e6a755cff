"""The chapter "Reproducibility" as tables and figures (Sec. V-B, VII-D, Appendix E-B; Table XI,
Fig. 10).

The chapter reads the repeats sweep's records and computes the run-to-run table, the two
executions' differences, the audit's stability, the interval ladder and the ramp counts with
`acceptance.reproducibility`; each function here turns one of those frames into a table or a
figure. Where the profile lacks what a row needs (the quick profile repeats only AG02), the row
says so with a "profile runs a subset" reason.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.acceptance import reproducibility as repro
from crane_lib.paper_numbers import paper
from crane_lib.reporting.tables import (
    Comparison,
    ComparisonTable,
    ResultTable,
    Why,
    comparison_table,
    numbered,
    significant,
    span,
)

SHORTER_FILES = Why.reconstruction(
    'our command files are shorter than the paper\'s (chapter "Excitation")'
)
TWIN_SEEDS = Why.twin(
    "the twin's executions differ by their seeds (noise, friction, a 1 % Kt drift), "
    "not by days or weeks"
)


def _once(table: pd.DataFrame, profile: str) -> Why:
    repeated = ", ".join(table.index) or "nothing"
    return Why.profile(
        f"the {profile} profile repeats only {repeated} (papermill_params/recordings_{profile}.csv)"
    )


def _pair_reason(trajectory: str) -> Why:
    return Why.twin(
        "the twin's two " + trajectory + " executions differ by their seeds, not by a month, "
        "and its record is shorter"
    )


def _ms(ts: float) -> str:
    return format(ts * 1e3, "g") + " ms"


def spread_of(table: pd.DataFrame, name: str) -> float | None:
    """Table XI's spread (%) of one trajectory, None where it was not repeated."""
    return float(table.loc[name, "spread (%)"]) if name in table.index else None


# ----------------------------------------------------------------------------- Table XI


def table_xi_frame(table: pd.DataFrame) -> ResultTable:
    """Table XI on the twin: per repeated command file, its executions and their RMSE spread."""
    shown = table.drop(columns=["smallest (N·m)", "largest (N·m)"]) if len(table) else table
    return numbered(
        shown,
        "Repeated executions of one command file, each fitted at 40 ms and scored on V01–V03 "
        "(twin): the spread is the largest minus the smallest RMSE over their mean",
        digits={"spread (%)": 3},
        paper="XI",
    )


def _samples(part: pd.DataFrame) -> str | None:
    if not len(part):
        return None
    low, high = part["samples per axis, min"].min(), part["samples per axis, max"].max()
    return str(int(low)) + " to " + str(int(high))


def table_xi_comparison(table: pd.DataFrame, profile: str) -> ComparisonTable:
    """Table XI's counts and spreads beside the paper's."""
    once, twin = _once(table, profile), TWIN_SEEDS
    long, short = (
        (table[~table["pair blocks only"]], table[table["pair blocks only"]])
        if len(table)
        else (table, table)
    )
    recorded = Why.profile("the executions with a record in this build")
    rows = [
        Comparison(
            "repeated trajectories",
            "repeated_traj_count",
            len(table),
            why=None if len(table) == paper("repeated_traj_count").value else once,
        )
    ]
    for name in ("AG02", "PB01", "AP03"):
        number_id = name.lower() + "_execution_count"
        count = int(table.loc[name, "executions"]) if name in table.index else None
        same = count is not None and count == paper(number_id).value
        rows.append(
            Comparison(
                "executions of " + name,
                number_id,
                count,
                why=once if count is None else None if same else recorded,
            )
        )
    for name, number_id in (
        ("AG02", "runtorun_ag02"),
        ("PB01", "pb01_rmse_spread"),
        ("AP03", "ap03_rmse_spread"),
    ):
        value = spread_of(table, name)
        rows.append(
            Comparison(
                "held-out RMSE spread, " + name,
                number_id,
                value,
                unit="%",
                why=twin if value is not None else once,
            )
        )
    long_max = float(long["spread (%)"].max()) if len(long) else None
    within = long_max is not None and long_max <= paper("long_traj_spread_max").value
    separation = paper("repeat_separation_min").text(), paper("repeat_separation_max").text()
    rows += [
        Comparison(
            "spread over the repeated trajectories",
            "runtorun_rmse_change",
            span(table["spread (%)"], 3) if len(table) else None,
            unit="%",
            why=twin if len(table) >= paper("repeated_traj_count").value else once,
        ),
        Comparison(
            "samples per axis at 40 ms, long trajectories",
            "long_traj_samples_per_axis",
            _samples(long),
            why=SHORTER_FILES if len(long) else once,
        ),
        Comparison(
            "largest spread of the long trajectories",
            "long_traj_spread_max",
            long_max,
            unit="%",
            why=once if long_max is None else None if within else twin,
        ),
        Comparison(
            "samples per axis at 40 ms, short trajectories",
            "short_traj_samples_per_axis",
            _samples(short),
            why=SHORTER_FILES if len(short) else once,
        ),
        Comparison(
            "time between executions",
            None,
            "none",
            paper_text=" to ".join(separation),
            why=Why.twin(
                "a twin repeat is the same command file recorded with the next seed (register R-8)"
            ),
        ),
    ]
    return comparison_table(
        rows,
        caption="Run-to-run repeatability: the paper's Table XI beside the twin's recordings",
    )


# ----------------------------------------------------------------------------- two executions


def parameter_comparison(
    differences: pd.DataFrame, losses: pd.DataFrame, trajectory: str
) -> ComparisonTable:
    """The parameters' relative differences, two t-ratios and the cross-execution loss."""
    pair_reason = _pair_reason(trajectory)
    n = differences["ts"].nunique()
    reason = Why.profile(f"{n} of the four intervals in this profile") if n < 4 else pair_reason
    rel = 100 * differences["relative_difference"]
    worst = differences.loc[differences["relative_difference"].idxmax()]
    at40 = differences[np.isclose(differences["ts"], 0.040)].set_index("parameter")
    zzr2 = 100 * differences.loc[differences["parameter"] == "ZZR2", "relative_difference"]
    worst_why = (
        "the worst here is "
        + worst["parameter"]
        + " at "
        + _ms(worst["ts"])
        + " (t-ratio "
        + significant(worst["t_ratio_first"], 2)
        + ")"
    )
    rows = [
        Comparison(
            "median relative difference, 39 parameters × intervals",
            "param_reldiff_median",
            float(np.median(rel)),
            unit="%",
            why=reason,
        ),
        Comparison(
            "90th percentile",
            "param_reldiff_p90",
            float(np.percentile(rel, 90)),
            unit="%",
            why=reason,
        ),
        Comparison(
            "worst case",
            "zzr3_reldiff",
            100 * worst["relative_difference"],
            unit="%",
            why=Why.twin(worst_why),
        ),
        Comparison(
            "ZZR2, relative difference over the intervals",
            "zzr2_reproducibility",
            span(zzr2, 2),
            unit="%",
            why=pair_reason,
        ),
        Comparison(
            "ZZR2, t-ratio at 40 ms",
            "zzr2_se_ratio",
            at40.loc["ZZR2", "t_ratio_first"],
            why=pair_reason,
        ),
        Comparison(
            "ZZR3, t-ratio at 40 ms",
            "zzr3_se_ratio",
            at40.loc["ZZR3", "t_ratio_first"],
            why=pair_reason,
        ),
        Comparison(
            "cross-execution RMSE loss",
            "cross_execution_rmse_loss",
            span(losses["loss (%)"], 2),
            unit="%",
            why=reason,
        ),
    ]
    return comparison_table(
        rows,
        caption=f"Parameter and prediction reproducibility of the two {trajectory} executions "
        "(twin)",
    )


def losses_frame(losses: pd.DataFrame, trajectory: str) -> ResultTable:
    """What a model fitted on one execution loses when it predicts the other, per interval."""
    return numbered(
        losses.set_index(["ts", "model of execution"]),
        f"A model fitted on one {trajectory} execution predicting the other (twin): "
        "the loss column is how much RMSE it gives up against the other execution's own model",
        digits=4,
    )


def t_ratio_figure(differences: pd.DataFrame, trajectory: str):
    """Each parameter's relative difference against its t-ratio, per interval."""
    at40 = differences[np.isclose(differences["ts"], 0.040)].set_index("parameter")
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for t in sorted(differences["ts"].unique()):
        part = differences[np.isclose(differences["ts"], t)]
        ax.scatter(part["t_ratio_first"], 100 * part["relative_difference"], s=18, label=_ms(t))
    for name in ("ZZR2", "ZZR3"):
        ax.annotate(
            name,
            (at40.loc[name, "t_ratio_first"], 100 * at40.loc[name, "relative_difference"]),
            textcoords="offset points",
            xytext=(6, 4),
        )
    for number_id in ("zzr2_se_ratio", "zzr3_se_ratio"):
        ax.axvline(paper(number_id).value, color="0.6", ls=":", lw=1)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="|estimate| / standard error (execution 1)",
        ylabel="relative difference |b − a| / |a| (%)",
        title=trajectory + ", twin executions 1 and 2: the 39 OLS parameters\n"
        "(dotted: the paper's ZZR2 and ZZR3 t-ratios)",
    )
    ax.legend(title="interval")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- the audit verdict


def stability_frame(stability: pd.DataFrame, trajectory: str) -> ResultTable:
    """The audit's verdict and margin of each execution's OLS estimate, per interval."""
    shown = stability.copy()
    shown.index = pd.Index([_ms(t) for t in shown.index], name="interval")
    return numbered(
        shown,
        f"The audit of the two {trajectory} executions' OLS estimates per interval "
        "(twin): look for a row whose verdicts differ",
        digits=3,
    )


def both_pd_intervals(stability: pd.DataFrame) -> str:
    """The intervals at which every execution's OLS estimate is PD over Θ, as "40, 80 ms"."""
    both = [
        t
        for t in stability.index
        if all(stability.loc[t, c] for c in stability.columns if c.endswith(": PD"))
    ]
    return ", ".join(format(t * 1e3, "g") for t in both) + " ms" if both else "none"


def stability_comparison(stability: pd.DataFrame, trajectory: str) -> ComparisonTable:
    """Where both estimates are PD and their margins' agreement, beside the paper's."""
    pd_text = both_pd_intervals(stability)
    at80 = stability.index[np.isclose(stability.index, 0.080)]
    rows = [
        Comparison(
            "intervals at which both OLS estimates are PD over Θ",
            "ag02_ols_audit_pd_interval",
            pd_text,
            why=Why.twin(
                "on the twin both OLS estimates are PD at " + pd_text + "; the arm's lost PD "
                "in the folded-arm region (Sec. VI-E)"
            ),
        ),
        Comparison(
            "margin agreement at 80 ms",
            "ag02_ols_margin_agreement",
            float(stability.loc[at80[0], "margin agreement (%)"]) if len(at80) else None,
            unit="%",
            why=_pair_reason(trajectory)
            if len(at80)
            else Why.profile("80 ms is not in this profile's repeats"),
        ),
    ]
    return comparison_table(
        rows, caption=f"Audit-verdict stability of the {trajectory} OLS estimates"
    )


# ----------------------------------------------------------------------------- the ladder (Fig. 10)


def ladder_figure(ladder: pd.DataFrame):
    """In-sample residual and held-out RMSE per interval, one line per trajectory."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharex=True)
    columns = (
        ("in-sample residual (N·m)", "in-sample residual"),
        ("held-out RMSE (N·m)", "held-out RMSE on V01–V03 at 40 ms"),
    )
    for name, part in ladder.groupby("trajectory"):
        for ax, (column, _) in zip(axes, columns):
            ax.plot(1e3 * part["ts"], part[column], marker="o", label=name)
    for ax, (_, title) in zip(axes, columns):
        ax.set(xscale="log", xlabel="sampling interval (ms)", ylabel="N·m", title=title)
        ax.minorticks_off()
        ax.set_xticks([10, 20, 40, 80], ["10", "20", "40", "80"])
    axes[1].legend(fontsize=8)
    fig.suptitle("Data: the twin's recordings (OLS, first execution)")
    fig.tight_layout()
    return fig


def ladder_frame(changes: pd.DataFrame) -> ResultTable:
    """Per trajectory, the in-sample residual's fall and the held-out gain along the ladder."""
    return numbered(
        changes,
        "The ladder per trajectory (twin, OLS): how far the in-sample residual "
        "falls from the finest to the coarsest interval, and how much the held-out "
        "RMSE gains beyond 40 ms (positive: smaller at the coarser interval)",
        digits=3,
    )


def columns_of(changes: pd.DataFrame, prefix: str) -> list[str]:
    """The ladder's columns that start with `prefix` ("in-sample" or "held-out")."""
    return [c for c in changes.columns if c.startswith(prefix)]


def ladder_comparison(changes: pd.DataFrame) -> ComparisonTable:
    """The ladder's trajectories, residual fall and largest held-out gain beside Fig. 10's."""
    fall, gain = columns_of(changes, "in-sample"), columns_of(changes, "held-out")
    n = len(changes)
    largest = float(changes[gain[0]].max()) if gain else None
    subset = (
        Why.profile(f"{n} of the six trajectories are recorded in this profile")
        if n < paper("ladder_traj_count").value
        else None
    )
    rows = [
        Comparison("trajectories on the ladder", "ladder_traj_count", n, why=subset),
        Comparison(
            "in-sample residual fall, 10 → 80 ms",
            "insample_residual_drop",
            span(changes[fall[0]], 2) if fall else None,
            unit="%",
            why=Why.twin(
                "the twin's residual spectrum differs from the arm's (chapter \"Preprocessing\")"
            )
            if fall
            else subset,
        ),
        Comparison(
            "largest held-out gain, 40 → 80 ms",
            "heldout_gain_beyond_40ms",
            largest,
            unit="%",
            why=subset
            if largest is None
            else None
            if largest <= paper("heldout_gain_beyond_40ms").value
            else Why.twin(
                "the twin's held-out error keeps falling beyond 40 ms on this trajectory"
            ),
        ),
    ]
    return comparison_table(
        rows, caption="The sampling-interval ladder's numbers beside the paper's Fig. 10"
    )


# ----------------------------------------------------------------------------- the ramp criterion


def ramps_frame(ramps: pd.DataFrame) -> ResultTable:
    """Per command file, the share of ramps with too few samples at each interval."""
    return numbered(
        ramps,
        "The ramp-sample criterion per command file: the share of acceleration ramps "
        "with too few samples at each interval, and the coarsest interval with none",
        digits=3,
    )


def ramps_comparison(ramps: pd.DataFrame) -> ComparisonTable:
    """The ramp criterion's threshold, accepted interval and 80 ms shortfall beside the paper's."""
    at80 = [c for c in ramps.columns if "80 ms" in c][0]
    rows = [
        Comparison("samples a ramp must carry", "min_samples_per_ramp", repro.MIN_RAMP_SAMPLES),
        Comparison(
            "coarsest interval adequate for all six",
            "accepted_sampling_interval",
            float(ramps["coarsest adequate interval (ms)"].min()),
        ),
        Comparison(
            "ramps with fewer than three samples at 80 ms, range over the six",
            "ramps_undersampled_80ms",
            span(ramps[at80], 2),
            unit="%",
            why=Why.reconstruction(
                'our 4-1-4 reading and ramp lengths (register "excitation", E-3); the paper\'s '
                'range is over its whole set, chapter "Excitation" has ours'
            ),
        ),
    ]
    return comparison_table(rows, caption="The ramp-sample criterion")
