"""The chapter "Reproducibility" as tables, figures and generated sentences (Sec. V-B, VII-D,
Appendix E-B; Table XI, Fig. 10): every paper-versus-book comparison through `reporting.tables`,
every sentence that states a result generated from that result.

`Reproducibility(profile)` reads the repeats sweep's records (`acceptance.reproducibility`) and
the OLS/SDP sweep's condition records (for the ladder) once; each method is one display of the
chapter. Where the profile lacks what a row needs (the quick profile repeats only AG02), the row
says so with a "profile runs a subset" reason.
"""

from __future__ import annotations

from functools import cached_property

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from crane_lib.acceptance import reproducibility as repro
from crane_lib.identification.condition import load_condition_records
from crane_lib.paper_numbers import paper
from crane_lib.parameter_sets import read_conditions
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


def execution_sentence(record: dict) -> str:
    """What one refitted execution gave; raises when the condition could not be identified."""
    where = f"{record['trajectory']}, execution {record['run']}, {record['ts'] * 1e3:g} ms (twin)"
    if record.get("failure"):
        raise RuntimeError(f"{where} could not be identified: {record['failure']}")
    found = record["audit"]
    verdict = (
        "PD" if found["passed"] else f"not PD ({found['n_violations']:,} violating configurations)"
    )
    text = (
        f"**{where}:** {record['n_samples']} samples per axis, κ = {significant(record['kappa'], 3)}, in-sample residual "
        f"{significant(record['residual_rms'], 4)} N·m, route {record['route']}; held-out RMSE {significant(record['heldout']['rmse'], 5)} N·m, "
        f"MNE {significant(100 * record['heldout']['mne'], 3)} %; the audit over Θ finds the OLS estimate {verdict}, "
        f"λmin = {significant(found['lambda_min'], 3)} kg·m²."
    )
    if "refined" in record:
        text += f" Refined ({record['refined']['method']}): held-out RMSE {significant(record['refined']['heldout']['rmse'], 5)} N·m."
    return text


def execution_record(profile: str, trajectory: str, ts: float, run: int, refine: str = "") -> dict:
    """The repeats sweep's record of one execution at one interval: of the refinement `refine`,
    or by default of the one the profile's repeats sweep ran for it (papermill_params)."""
    if not refine:
        rows = [
            c
            for c in read_conditions(f"repeats_{profile}.csv")
            if (str(c["trajectory"]), int(c["run"]), round(float(c["ts"]) * 1e3))
            == (trajectory, int(run), round(ts * 1e3))
        ]
        refine = str(rows[0]["refine"]) if rows else "none"
    return repro.load_record(trajectory, ts, run, refine)


class Reproducibility:
    """Every measure of the chapter over the records of one build (`profile` names its conditions files)."""

    def __init__(self, profile: str, trajectory: str = "AG02"):
        self.profile = profile
        self.trajectory = trajectory
        conditions = read_conditions(f"repeats_{profile}.csv")
        self.records = repro.profile_records(conditions)
        self.missing = repro.missing_recordings(conditions, profile)
        if not self.records:
            raise RuntimeError(
                f"no records of the repeats sweep for the {profile} profile in {repro.REPEATS_DIR}: run "
                f"`make book PROFILE={profile}` (or python -m crane_book.pipeline --profile {profile})"
                + (". " + " ".join(self.missing) if self.missing else "")
            )
        self.frame = repro.records_frame(self.records)
        self.table_xi = repro.run_to_run_table(self.frame)
        repeated = ", ".join(self.table_xi.index) or "nothing"
        self.once = Why.profile(
            f"the {profile} profile repeats only {repeated} (papermill_params/recordings_{profile}.csv)"
        )
        self.twin = Why.twin(
            "the twin's executions differ by their seeds (noise, friction, a 1 % Kt drift), not by days or weeks"
        )
        self.pair_reason = Why.twin(
            f"the twin's two {trajectory} executions differ by their seeds, not by a month, and its record is shorter"
        )

    # ------------------------------------------------------------------------- Table XI

    def spread(self, name: str) -> float | None:
        return float(self.table_xi.loc[name, "spread (%)"]) if name in self.table_xi.index else None

    def executions(self, name: str) -> int | None:
        return int(self.table_xi.loc[name, "executions"]) if name in self.table_xi.index else None

    def missing_note(self) -> str:
        return (
            "**Not recorded:** " + " ".join(self.missing)
            if self.missing
            else "Every execution the conditions file lists is recorded."
        )

    def table_xi_frame(self) -> ResultTable:
        """Table XI on the twin: per repeated command file, its executions and their RMSE spread."""
        shown = (
            self.table_xi.drop(columns=["smallest (N·m)", "largest (N·m)"])
            if len(self.table_xi)
            else self.table_xi
        )
        return numbered(
            shown,
            "Repeated executions of one command file, each fitted at 40 ms and scored on V01–V03 "
            "(twin): the spread is the largest minus the smallest RMSE over their mean",
            digits={"spread (%)": 3},
            paper="XI",
        )

    def table_xi_comparison(self) -> ComparisonTable:
        table, once, twin = self.table_xi, self.once, self.twin
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
            number_id = f"{name.lower()}_execution_count"
            count = self.executions(name)
            rows.append(
                Comparison(
                    f"executions of {name}",
                    number_id,
                    count,
                    why=once
                    if count is None
                    else None
                    if count == paper(number_id).value
                    else recorded,
                )
            )
        for name, number_id in (
            ("AG02", "runtorun_ag02"),
            ("PB01", "pb01_rmse_spread"),
            ("AP03", "ap03_rmse_spread"),
        ):
            rows.append(
                Comparison(
                    f"held-out RMSE spread, {name}",
                    number_id,
                    self.spread(name),
                    unit="%",
                    why=twin if self.spread(name) is not None else once,
                )
            )

        def samples(part):
            return (
                f"{int(part['samples per axis, min'].min())} to {int(part['samples per axis, max'].max())}"
                if len(part)
                else None
            )

        long_max = float(long["spread (%)"].max()) if len(long) else None
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
                samples(long),
                why=SHORTER_FILES if len(long) else once,
            ),
            Comparison(
                "largest spread of the long trajectories",
                "long_traj_spread_max",
                long_max,
                unit="%",
                why=once
                if long_max is None
                else None
                if long_max <= paper("long_traj_spread_max").value
                else twin,
            ),
            Comparison(
                "samples per axis at 40 ms, short trajectories",
                "short_traj_samples_per_axis",
                samples(short),
                why=SHORTER_FILES if len(short) else once,
            ),
            Comparison(
                "time between executions",
                None,
                "none",
                paper_text=f"{paper('repeat_separation_min').text()} to {paper('repeat_separation_max').text()}",
                why=Why.twin(
                    "a twin repeat is the same command file recorded with the next seed (register R-8)"
                ),
            ),
        ]
        return comparison_table(
            rows,
            caption="Run-to-run repeatability: the paper's Table XI beside the twin's recordings",
        )

    def table_xi_sentence(self) -> str:
        """Does sample count order the spread, as the paper finds?"""
        table = self.table_xi
        if len(table) < 3:
            return f"With {len(table)} repeated trajectory in this profile, Table XI cannot say what orders the spread."
        samples = (table["samples per axis, min"] + table["samples per axis, max"]) / 2
        rho, p_value = spearmanr(samples, table["spread (%)"])
        short = set(table.index[table["pair blocks only"]])
        long_max, reference = (
            float(table.loc[~table["pair blocks only"], "spread (%)"].max()),
            self.spread(self.trajectory),
        )
        worst = set(table["spread (%)"].nlargest(len(short)).index)
        return (
            f"Across the {len(table)} repeated trajectories the spread {'falls' if rho < 0 else 'rises'} with the samples per axis "
            f"(Spearman ρ = {rho:.2f}, p = {significant(p_value, 2)}, {len(table)} points), and the short adjacent-pair "
            f"trajectories ({', '.join(sorted(short))}) {'are' if short == worst else 'are not'} the {len(short)} worst. "
            f"The long trajectories {'stay' if long_max <= reference else 'do not all stay'} within the spread of {self.trajectory} "
            f"({significant(reference, 3)} %; their largest is {significant(long_max, 3)} %)."
        )

    def refined_note(self) -> str:
        """Table XI's spread after the fast CLIE route, where the profile refined the executions (full: AG02 at 40 ms)."""
        if (
            "refined_heldout_rmse" not in self.frame
            or self.frame["refined_heldout_rmse"].notna().sum() < 2
        ):
            return f"No execution of the `{self.profile}` profile was refined."
        refined = repro.run_to_run_table(self.frame, column="refined_heldout_rmse")
        return " ".join(
            f"{name}, {int(row['executions'])} executions refined: held-out RMSE {row['held-out RMSE per execution (N·m)']} N·m, "
            f"spread {significant(row['spread (%)'], 3)} % (OLS: {significant(self.spread(name), 3) if self.spread(name) is not None else '—'} %)."
            for name, row in refined.iterrows()
        )

    # ------------------------------------------------------------------------- two executions

    @cached_property
    def differences(self):
        return repro.parameter_differences(self.records, self.trajectory)

    @cached_property
    def losses(self):
        return repro.cross_execution_losses(self.records, self.trajectory)

    def _fewer_intervals(self):
        n = self.differences["ts"].nunique()
        return Why.profile(f"{n} of the four intervals in this profile") if n < 4 else None

    def parameter_comparison(self) -> ComparisonTable:
        diffs, reason = self.differences, self._fewer_intervals() or self.pair_reason
        rel = 100 * diffs["relative_difference"]
        worst = diffs.loc[diffs["relative_difference"].idxmax()]
        at40 = diffs[np.isclose(diffs["ts"], 0.040)].set_index("parameter")
        zzr2 = 100 * diffs.loc[diffs["parameter"] == "ZZR2", "relative_difference"]
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
                why=Why.twin(
                    f"the worst here is {worst['parameter']} at {worst['ts'] * 1e3:g} ms (t-ratio {significant(worst['t_ratio_first'], 2)})"
                ),
            ),
            Comparison(
                "ZZR2, relative difference over the intervals",
                "zzr2_reproducibility",
                span(zzr2, 2),
                unit="%",
                why=self.pair_reason,
            ),
            Comparison(
                "ZZR2, t-ratio at 40 ms",
                "zzr2_se_ratio",
                at40.loc["ZZR2", "t_ratio_first"],
                why=self.pair_reason,
            ),
            Comparison(
                "ZZR3, t-ratio at 40 ms",
                "zzr3_se_ratio",
                at40.loc["ZZR3", "t_ratio_first"],
                why=self.pair_reason,
            ),
            Comparison(
                "cross-execution RMSE loss",
                "cross_execution_rmse_loss",
                span(self.losses["loss (%)"], 2),
                unit="%",
                why=reason,
            ),
        ]
        return comparison_table(
            rows,
            caption=f"Parameter and prediction reproducibility of the two {self.trajectory} executions (twin)",
        )

    def losses_frame(self) -> ResultTable:
        """What a model fitted on one execution loses when it predicts the other, per interval."""
        return numbered(
            self.losses.set_index(["ts", "model of execution"]),
            f"A model fitted on one {self.trajectory} execution predicting the other (twin): "
            "the loss column is how much RMSE it gives up against the other execution's own model",
            digits=4,
        )

    def t_ratio_figure(self):
        diffs = self.differences
        at40 = diffs[np.isclose(diffs["ts"], 0.040)].set_index("parameter")
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
        for t in sorted(diffs["ts"].unique()):
            part = diffs[np.isclose(diffs["ts"], t)]
            ax.scatter(
                part["t_ratio_first"],
                100 * part["relative_difference"],
                s=18,
                label=f"{t * 1e3:g} ms",
            )
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
            title=f"{self.trajectory}, twin executions 1 and 2: the 39 OLS parameters\n(dotted: the paper's ZZR2 and ZZR3 t-ratios)",
        )
        ax.legend(title="interval")
        fig.tight_layout()
        return fig

    def t_ratio_sentence(self) -> str:
        diffs = self.differences
        rho, p_value = spearmanr(diffs["t_ratio_first"], diffs["relative_difference"])
        median = float(np.median(100 * diffs["relative_difference"]))
        loss_max = float(self.losses["loss (%)"].max())
        return (
            f"Over the {len(diffs)} parameter-interval pairs, the relative difference {'falls' if rho < 0 else 'rises'} with the t-ratio "
            f"(Spearman ρ = {rho:.2f}, p = {significant(p_value, 2)}). The median relative difference is {significant(median, 2)} %, "
            f"while a model fitted on one execution loses {span(self.losses['loss (%)'], 2)} % of RMSE on the other: "
            + (
                "the parameters disagree far more than the predictions do, as on the arm."
                if median > 3 * loss_max
                else "here the parameters do not disagree much more than the predictions do."
            )
        )

    # ------------------------------------------------------------------------- the audit verdict

    @cached_property
    def stability(self):
        return repro.audit_stability(self.frame, self.trajectory)

    def stability_frame(self) -> ResultTable:
        """The audit's verdict and margin of each execution's OLS estimate, per interval."""
        shown = self.stability.copy()
        shown.index = pd.Index([f"{t * 1e3:g} ms" for t in shown.index], name="interval")
        return numbered(
            shown,
            f"The audit of the two {self.trajectory} executions' OLS estimates per interval "
            "(twin): look for a row whose verdicts differ",
            digits=3,
        )

    def stability_comparison(self) -> ComparisonTable:
        table = self.stability
        both_pd = [
            t
            for t in table.index
            if all(table.loc[t, c] for c in table.columns if c.endswith(": PD"))
        ]
        pd_text = ", ".join(f"{t * 1e3:g}" for t in both_pd) + " ms" if both_pd else "none"
        at80 = table.index[np.isclose(table.index, 0.080)]
        rows = [
            Comparison(
                "intervals at which both OLS estimates are PD over Θ",
                "ag02_ols_audit_pd_interval",
                pd_text,
                why=Why.twin(
                    f"on the twin both OLS estimates are PD at {pd_text}; the arm's lost PD in the folded-arm region (Sec. VI-E)"
                ),
            ),
            Comparison(
                "margin agreement at 80 ms",
                "ag02_ols_margin_agreement",
                float(table.loc[at80[0], "margin agreement (%)"]) if len(at80) else None,
                unit="%",
                why=self.pair_reason
                if len(at80)
                else Why.profile("80 ms is not in this profile's repeats"),
            ),
        ]
        return comparison_table(
            rows, caption=f"Audit-verdict stability of the {self.trajectory} OLS estimates"
        )

    def stability_sentence(self) -> str:
        table = self.stability
        differ = [f"{t * 1e3:g} ms" for t in table.index[~table["same verdict"].astype(bool)]]
        return (
            f"The two executions {'give the same verdict at every interval' if not differ else 'disagree at ' + ', '.join(differ)} "
            f"({len(table)} intervals); their margins differ by {span(table['margin agreement (%)'], 2)} %."
        )

    # ------------------------------------------------------------------------- the ladder (Fig. 10)

    @cached_property
    def ladder(self):
        return repro.interval_ladder(load_condition_records())

    @cached_property
    def ladder_changes(self):
        return repro.ladder_changes(self.ladder)

    def ladder_figure(self):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharex=True)
        columns = (
            ("in-sample residual (N·m)", "in-sample residual"),
            ("held-out RMSE (N·m)", "held-out RMSE on V01–V03 at 40 ms"),
        )
        for name, part in self.ladder.groupby("trajectory"):
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

    def ladder_frame(self) -> ResultTable:
        """Per trajectory, the in-sample residual's fall and the held-out gain along the ladder."""
        return numbered(
            self.ladder_changes,
            "The ladder per trajectory (twin, OLS): how far the in-sample residual "
            "falls from the finest to the coarsest interval, and how much the held-out "
            "RMSE gains beyond 40 ms (positive: smaller at the coarser interval)",
            digits=3,
        )

    def _columns(self, prefix: str) -> list[str]:
        return [c for c in self.ladder_changes.columns if c.startswith(prefix)]

    def ladder_comparison(self) -> ComparisonTable:
        changes, fall, gain = (
            self.ladder_changes,
            self._columns("in-sample"),
            self._columns("held-out"),
        )
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

    def ladder_sentence(self) -> str:
        gain, spread = self._columns("held-out"), self.spread(self.trajectory)
        if not gain:
            return "No trajectory of this build has both 40 and 80 ms records."
        gains = self.ladder_changes[gain[0]]
        better, worse = gains[gains > 0], -gains[gains < 0]
        text = (
            f"From 40 to 80 ms the held-out RMSE improves on {len(better)} of {len(gains)} trajectories"
            + (f" (by at most {significant(better.max(), 2)} %)" if len(better) else "")
            + f" and worsens on {len(worse)}"
            + (
                f" (by up to {significant(worse.max(), 2)} %: {', '.join(worse.index)})"
                if len(worse)
                else ""
            )
            + "."
        )
        if spread is not None and len(better):
            smaller = bool((better < spread).all())
            text += (
                f" Every improvement is {'smaller' if smaller else 'not smaller'} than the run-to-run spread of {self.trajectory} in this "
                f"build ({significant(spread, 2)} %)"
                + (
                    ": nothing is gained beyond 40 ms that a repeated recording would not change."
                    if smaller
                    else "."
                )
            )
        return text

    # ------------------------------------------------------------------------- the ramp criterion

    @cached_property
    def ramps(self):
        return repro.ramp_sampling()

    def ramps_frame(self) -> ResultTable:
        """Per command file, the share of ramps with too few samples at each interval."""
        return numbered(
            self.ramps,
            "The ramp-sample criterion per command file: the share of acceleration ramps "
            "with too few samples at each interval, and the coarsest interval with none",
            digits=3,
        )

    def ramps_comparison(self) -> ComparisonTable:
        ramps = self.ramps
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
                    'our 4-1-4 reading and ramp lengths (register "excitation", E-3); the paper\'s range is over '
                    'its whole set, chapter "Excitation" has ours'
                ),
            ),
        ]
        return comparison_table(rows, caption="The ramp-sample criterion")
