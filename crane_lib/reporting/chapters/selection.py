"""Chapter "Parameter clouds, the representative candidate, and what each stage is worth" (paper
Sec. VI-A, VI-B, VI-D, Appendix D-H; Fig. 6 and Table VIII): the clouds of the three stages, the
structural rule and its two checks, centrality, Table VIII and the run-to-run scale, as
DataFrames, styled tables and figures. Data: the twin's recordings, the CLIE sweep's records and
the accepted model's record."""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.acceptance import held_out, selection
from crane_lib.acceptance.selection import stage_scores
from crane_lib.constants import ENCODER_RESOLUTION_RAD
from crane_lib.excitation import design as excitation
from crane_lib.excitation.commands import segment_statistics
from crane_lib.identification import clie, metrics
from crane_lib.identification import condition as identify
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paper_numbers import paper
from crane_lib.reporting.chapters import clie as clie_study
from crane_lib.reporting.chapters import profile
from crane_lib.reporting.chapters.validation import twin_records
from crane_lib.reporting.tables import (
    Comparison,
    Count,
    ResultTable,
    Why,
    comparison_table,
    numbered,
    significant,
)
from crane_lib.twin.effects import BY_NAME as EFFECTS

VALIDATION = ("V01", "V02", "V03")
TABLE_VIII = selection.TABLE_VIII_TRAJECTORIES
PAPER_OLS = {
    "AG02": "heldout_rmse_pooled_ols_ag02",
    "AG01": "ag01_heldout_rmse",
    "AP01": "pi_alpha_heldout_rmse",
    "AP02": "pi_gamma_heldout_rmse",
    "AP04": "pi_gamma_heldout_rmse",
    "AP05": "pi_gamma_heldout_rmse",
    "AP03": "pi_beta_heldout_rmse",
    "PB07": "pb07_heldout_rmse",
}
SD_IDS = {"V01": "eval_rmse_sd_v01", "V02": "eval_rmse_sd_v02", "V03": "eval_rmse_sd_v03"}
MEASURE_IDS = {
    ("total variance", "OLS"): "cloud_variance_ols",
    ("total variance", "SDP"): "cloud_variance_sdp",
    ("total variance", "CLIE"): "cloud_variance_clie",
    ("median distance", "OLS"): "cloud_median_dist_ols",
    ("median distance", "SDP"): "cloud_median_dist_sdp",
    ("median distance", "CLIE"): "cloud_median_dist_clie",
    ("total variance without AP01", "OLS"): "cloud_variance_ols_no_ap01",
    ("total variance without AP01", "SDP"): "cloud_variance_sdp_no_ap01",
    ("total variance without AP01", "CLIE"): "cloud_variance_clie_no_ap01",
}
TESTED_INTERVALS = (0.010, 0.020, 0.040, 0.080)  # s, the identification intervals of Sec. V-B

RUN_DRIFT = EFFECTS["run_drift"]  # the twin's drift between executions


def ms(ts: float) -> str:
    """An interval in s as '40 ms'."""
    return format(ts * 1e3, "g") + " ms"


@dataclass(frozen=True)
class Clouds:
    """The CLIE records of the first executions as the three stages' clouds, and the candidate
    the structural rule names (Sec. VI-B): its trajectory, interval and row in the clouds."""

    records: list
    clouds: selection.StageClouds
    method: str
    named: list  # the trajectories whose block sequence holds every block of the design
    blocks: list  # the design's blocks, 'S(posture)' or the pair block's name
    ramps: np.ndarray  # s, every effective acceleration ramp of the identification commands
    intervals: list  # s, the intervals the rule considers
    interval: float  # s, the coarsest adequate one
    index: int  # the candidate's row in the clouds

    @property
    def candidate(self) -> str:
        """The trajectory the rule names."""
        return self.named[0]

    @property
    def n(self) -> int:
        """Conditions in the clouds."""
        return len(self.clouds.labels)

    @property
    def label(self) -> str:
        """'AG02 at 40 ms'."""
        return self.candidate + " at " + ms(self.interval)

    @property
    def labels(self) -> list[str]:
        """'AG02 40 ms' for every row of the clouds."""
        return [name + " " + ms(ts) for name, ts in self.clouds.labels]

    @property
    def subset(self) -> Why | None:
        """Why a profile's cloud is smaller than the paper's, or None with every condition."""
        whole = paper("identification_condition_count").value
        if self.n == whole:
            return None
        return Why.profile("%d of the paper's %g conditions in this profile" % (self.n, whole))

    def why(self, base: Why) -> Why:
        """`base`, with the profile's subset appended where there is one."""
        return base if self.subset is None else base + str(self.subset)


def clouds(method: str = "fast") -> Clouds:
    """The clouds of the CLIE sweep's first executions and the condition the structural rule
    names; a rule that does not name one condition with a CLIE record stops the chapter."""
    records = [r for r in clie.load_records(method, profile()) if r["run"] == 1]
    stage_clouds = selection.StageClouds.from_records(records)
    specs = excitation.trajectory_specs()
    named = selection.structural_candidates(specs)
    commands = excitation.generate_identification().values()
    ramps = np.concatenate([segment_statistics(cmd).ramps_s for cmd in commands])
    intervals = sorted({ts for _, ts in stage_clouds.labels} | set(TESTED_INTERVALS))
    chosen = selection.coarsest_adequate_interval(ramps, intervals)
    if len(named) != 1 or chosen is None:
        raise RuntimeError(
            "the structural rule does not name one condition: trajectories %s, interval %s"
            % (named, chosen)
        )
    try:
        index = stage_clouds.index_of(named[0], chosen)
    except KeyError:
        raise RuntimeError(named[0] + " at " + ms(chosen) + " has no CLIE record") from None
    blocks = sorted(
        "S(" + p + ")" if k == "S" else excitation.PAIR_BLOCKS[k].name
        for k, p in selection.blocks_of_design(specs)
    )
    return Clouds(records, stage_clouds, method, named, blocks, ramps, intervals, chosen, index)


def failures(c: Clouds) -> list[str]:
    """'AP01 at 80 ms' for every first-execution condition CLIE could not refine."""
    failed = [f for f in clie.load_failures(c.method, profile()) if f["run"] == 1]
    return [f["trajectory"] + " at " + ms(f["ts"]) for f in failed]


# ----------------------------------------------------------------------------- the structural rule


def ramps_table(c: Clouds) -> ResultTable:
    """Samples on the shortest ramp and the share of too-short ramps at each interval."""
    short = "ramps with fewer than %d samples (%%)" % selection.MIN_RAMP_SAMPLES
    frame = pd.DataFrame(
        {
            "samples on the shortest ramp": [
                int(np.floor(c.ramps.min() / ts + 1e-9)) for ts in c.intervals
            ],
            short: [
                100 * np.mean(np.floor(c.ramps / ts + 1e-9) < selection.MIN_RAMP_SAMPLES)
                for ts in c.intervals
            ],
        },
        index=pd.Index([ms(ts) for ts in c.intervals], name="interval"),
    )
    return numbered(
        frame,
        "Samples per acceleration ramp at each interval, over every identification command file",
        "tab-selection-ramps",
        digits=3,
    )


# ----------------------------------------------------------------------------- Fig. 6


def clouds_figure(c: Clouds):
    """Fig. 6: the three clouds on their common PCA basis, and each condition's path."""
    basis, standardized = selection.common_pca(c.clouds)
    projected = {stage: basis.project(standardized[stage]) for stage in selection.STAGES}
    style = {
        "OLS": dict(marker="o", color="tab:blue"),
        "SDP": dict(marker="s", color="tab:orange"),
        "CLIE": dict(marker="^", color="tab:green"),
    }
    is_ap01 = np.array([name == "AP01" for name, _ in c.clouds.labels])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharex=True, sharey=True)
    for stage in selection.STAGES:
        xy = projected[stage]
        axes[0].scatter(xy[:, 0], xy[:, 1], s=16, alpha=0.75, label=stage, **style[stage])
        axes[0].scatter(
            *xy[c.index], s=170, edgecolors="k", lw=1.0, **{**style[stage], "marker": "*"}
        )
    axes[0].scatter(
        *projected["OLS"][is_ap01].T, s=70, facecolors="none", edgecolors="k", lw=0.8, label="AP01"
    )
    axes[0].set_title("twin data, %d conditions per stage; ★ %s" % (c.n, c.label))
    axes[0].legend()
    for i in range(c.n):
        path = np.array([projected[s][i] for s in selection.STAGES])
        axes[1].plot(path[:, 0], path[:, 1], color="0.6" if not is_ap01[i] else "k", lw=0.7)
        axes[1].scatter(*path[-1], s=12, **style["CLIE"])
    axes[1].set_title("per condition: OLS → SDP → CLIE (AP01 in black)")
    share = 100 * basis.variances / basis.variances.sum()
    for ax in axes:
        ax.set_xlabel("PC1 (%.1f %% of the pooled variance)" % share[0])
    axes[0].set_ylabel("PC2 (%.1f %%)" % share[1])
    fig.tight_layout()
    return fig


def plane_against_paper(c: Clouds):
    """The share of the pooled variance the plotted plane carries, against the paper's."""
    basis, _ = selection.common_pca(c.clouds)
    row = Comparison(
        "variance the plotted plane carries",
        "pca_plane_variance_share",
        100 * basis.share(2),
        why=c.why(
            twin_records()
            + Why.reconstruction("the basis is fitted to the three clouds pooled (register)")
        ),
    )
    return comparison_table(
        [row], "The plane of the paper's Fig. 6", name="tab-selection-pca-plane"
    )


# ----------------------------------------------------------------------------- measures


def measures(c: Clouds) -> dict:
    """(measure, stage) -> total variance or median distance in the OLS-standardized
    coordinates, and the total variance without AP01 where the clouds hold it."""
    out = {}
    for stage, v in selection.cloud_measures(c.clouds).items():
        out[("total variance", stage)] = v["total variance"]
        out[("median distance", stage)] = v["median distance"]
    if "AP01" in {name for name, _ in c.clouds.labels}:
        for stage, v in selection.cloud_measures(c.clouds.without("AP01")).items():
            out[("total variance without AP01", stage)] = v["total variance"]
    return dict(sorted(out.items(), key=lambda kv: list(MEASURE_IDS).index(kv[0])))


def paper_ratio(measure: str, stage: str) -> float:
    """The paper's `measure` of `stage` over its OLS cloud's."""
    return paper(MEASURE_IDS[(measure, stage)]).value / paper(MEASURE_IDS[(measure, "OLS")]).value


def measures_against_paper(c: Clouds, ours: dict):
    """Each stage's measures over OLS's beside the paper's ratios (its scale is unstated)."""
    why = c.why(twin_records() + Why.reconstruction("fast-route CLIE"))
    rows = [
        Comparison(
            measure + ", " + stage + " over OLS",
            None,
            ours[(measure, stage)] / ours[(measure, "OLS")],
            digits=3,
            paper_text=significant(paper_ratio(measure, stage), 3),
            why=why,
        )
        for measure, stage in ours
        if stage != "OLS"
    ]
    return comparison_table(
        rows,
        "The clouds' spread in all dimensions, each stage against OLS: ratios, because the paper's "
        "scale is not stated (the paper's ratios are of its `cloud_variance_*` and "
        "`cloud_median_dist_*` numbers)",
        name="tab-selection-cloud-measures",
    )


# ----------------------------------------------------------------------------- centrality


def centrality(c: Clouds) -> dict[str, pd.DataFrame]:
    """Stage -> the candidate's rank, central-fifth flag and most central condition under the
    six metrics, in that stage's cloud."""
    return {
        stage: pd.DataFrame(
            selection.centrality_table(c.clouds.vectors[stage], c.index, c.labels)
        ).set_index("metric")
        for stage in selection.STAGES
    }


def centrality_tables(c: Clouds, by_stage: dict) -> tuple[ResultTable, object]:
    """The CLIE cloud's ranks, and the comparison with the paper's AG02 at 40 ms."""
    table = by_stage["CLIE"]
    best, worst, top = selection.mahalanobis_rank_range(c.clouds.vectors["CLIE"], c.index)
    euclid = table.iloc[0]
    why = c.why(twin_records() + Why.reconstruction("fast-route CLIE"))
    rows = [
        Comparison(
            "Euclidean rank",
            "ag02_rank_euclidean",
            Count(int(euclid["rank"]), c.n),
            paper_whole="identification_condition_count",
            why=why,
        ),
        Comparison(
            "Mahalanobis ranks, 2 to %d components" % top,
            "ag02_rank_mahalanobis",
            [best, worst],
            why=why,
        ),
        Comparison(
            "distinct most-central candidates over the metrics",
            "most_central_distinct",
            table["most central"].nunique(),
            why=why + "the paper counts over four metrics, we over six",
        ),
        Comparison(
            "metrics placing the candidate in the central fifth",
            "centrality_metrics_passed",
            Count(int(table["central fifth"].sum()), len(table)),
            paper_whole="centrality_metric_count",
            why=why,
        ),
    ]
    shown = numbered(
        table,
        "Centrality of " + c.label + " in the CLIE cloud under each metric (twin)",
        "tab-selection-centrality",
    )
    against = comparison_table(
        rows,
        "Centrality of " + c.label + " against the paper's AG02 at 40 ms",
        name="tab-selection-centrality-paper",
    )
    return shown, against


def checks_against_paper(c: Clouds, by_stage: dict):
    """The two checks of D-H, κ within the lowest decile and centrality within the central
    fifth, against the paper's."""
    kappa = selection.kappa_check(c.clouds.kappas, c.index)
    euclid = by_stage["CLIE"].iloc[0]
    why = c.why(twin_records())
    if c.subset is not None:
        why = why + "a cloud of %d conditions: the decile is %.1f ranks wide" % (
            c.n,
            kappa["cut-off rank"],
        )
    rows = [
        Comparison("κ(W_all) of " + c.label, "ag02_kappa_40ms", c.clouds.kappas[c.index], why=why),
        Comparison(
            "its κ rank",
            "ag02_kappa_rank",
            Count(int(kappa["rank"]), c.n),
            paper_whole="identification_condition_count",
            why=why,
        ),
        Comparison(
            "κ check: within the lowest decile",
            None,
            "passes" if kappa["passes"] else "fails",
            paper_text="passes",
            why=None if kappa["passes"] else why,
        ),
        Comparison(
            "centrality check: Euclidean rank within the central fifth",
            None,
            "passes" if euclid["central fifth"] else "fails",
            paper_text="passes",
            why=None if euclid["central fifth"] else why,
        ),
    ]
    return comparison_table(
        rows, "The two checks of D-H (they check; they do not select)", name="tab-selection-checks"
    )


# ----------------------------------------------------------------------------- Table VIII


@dataclass(frozen=True)
class TableVIII:
    """Table VIII: each stage's pooled held-out RMSE per fit trajectory, and the paper's."""

    frame: pd.DataFrame  # one row per fit trajectory: OLS, SDP, CLIE, rescue (N·m), CLIE's gain
    shown: ResultTable
    against: object
    final: float  # N·m, the candidate's accepted model (rescued, or its CLIE solution)


def table_viii(c: Clouds, accepted, record: dict) -> TableVIII:
    """Every stage scored on V01–V03 at 40 ms; the candidate's rescue column is the accepted
    model of the pipeline's record (`accepted`: its parameter vector) when a rescue ran."""
    model = DynamicModel("reduced")
    heldout = [identify.condition_bundle(v, 0.040) for v in VALIDATION]
    by_name = {(r["trajectory"], round(r["ts"] * 1e3)): r for r in c.records}
    rows = []
    for name in TABLE_VIII:
        r = by_name.get((name, 40))
        if r is None:
            continue
        row = stage_scores(r, model, heldout)
        if name == c.candidate and record["rescue"] is not None:
            row["rescue"] = metrics.pooled_rmse(model, accepted, heldout)
        rows.append(row)
    frame = pd.DataFrame(rows).set_index("trajectory")
    why = c.why(twin_records() + Why.reconstruction("fast-route CLIE"))
    ranged = {
        "AP02": "the paper gives one range for AP02, AP04 and AP05",
        "AP04": "the paper gives one range for AP02, AP04 and AP05",
        "AP05": "the paper gives one range for AP02, AP04 and AP05",
        "PB07": "PB07's paper value is inferred from the range's low end",
    }
    comparisons = [
        Comparison(
            name + ", OLS",
            PAPER_OLS[name],
            frame.loc[name, "OLS"],
            digits=5,
            why=why + ranged.get(name, ""),
        )
        for name in frame.index
        if name in PAPER_OLS
    ]
    gains = frame["CLIE gain over its start (%)"]
    improved = gains[gains > 0]
    comparisons += [
        Comparison(
            "trajectories on which CLIE improves held-out prediction",
            "clie_improves_count",
            Count(len(improved), len(gains)),
            paper_whole="table8_fit_traj_count",
            why=why,
        ),
        Comparison(
            "CLIE's held-out gain where it improves",
            "clie_gain_range",
            improved.values,
            unit="%",
            digits=2,
            why=why,
        ),
    ]
    if "AP01" in gains:
        comparisons.append(
            Comparison(
                "AP01: held-out worsening from CLIE",
                "ap01_clie_degradation",
                -gains["AP01"],
                unit="%",
                digits=3,
                why=why,
            )
        )
    rescued = frame.loc[c.candidate, "rescue"]
    final = frame.loc[c.candidate, "CLIE"] if np.isnan(rescued) else rescued
    shown = numbered(
        frame,
        "Pooled held-out RMSE on V01–V03 at 40 ms (N·m) of each stage, per fit trajectory "
        "(twin; a dash: the stage does not occur)",
        "tab-selection-table-viii",
        digits=5,
        paper="VIII",
    )
    against = comparison_table(
        comparisons,
        "The paper's Table VIII values and this book's",
        name="tab-selection-table-viii-paper",
    )
    return TableVIII(frame, shown, against, float(final))


def run_to_run(accepted) -> object:
    """The accepted model (`accepted`: its parameter vector) on each execution of each
    validation trajectory in the build's profile: the scale on which Table VIII's differences
    are read."""
    model = DynamicModel("reduced")
    executions = held_out.validation_executions(profile())  # not what else the folder holds
    rows = []
    for v in VALIDATION:
        runs = [run for trajectory, run in executions if trajectory == v]
        values = [
            metrics.pooled_rmse(model, accepted, [identify.condition_bundle(v, 0.040, run)])
            for run in runs
        ]
        if len(values) > 1:
            rows.append(
                Comparison(
                    "%s: RMSE spread over %d executions (SD / mean)" % (v, len(values)),
                    SD_IDS[v],
                    100 * np.std(values, ddof=1) / np.mean(values),
                    unit="%",
                    digits=2,
                    why=Why.twin(
                        "the twin's executions differ by their seeded noise and timing, the "
                        "encoder's quantization of "
                        + format(1e3 * ENCODER_RESOLUTION_RAD, ".2g")
                        + " mrad and a run drift at "
                        + format(RUN_DRIFT.default, "g")
                        + " "
                        + RUN_DRIFT.unit
                        + "; the arm's own drift is not in the paper"
                    ),
                )
            )
        else:
            rows.append(
                Comparison(
                    v + ": RMSE spread over executions",
                    SD_IDS[v],
                    "one execution in this profile",
                    why=Why.profile("the quick profile records one execution"),
                )
            )
    return comparison_table(
        rows, "The run-to-run scale (Sec. VI-D)", name="tab-selection-run-to-run"
    )


# ----------------------------------------------------------------------------- the faithful route


def faithful() -> tuple[clie_study.FaithfulBesideFast, ResultTable | None]:
    """Appendix D-F's faithful CLIE study beside the fast route where this build holds its
    records (`clie_study.faithful_beside_fast`), and its per-condition table (None without)."""
    study = clie_study.faithful_beside_fast()
    if study.empty:
        return study, None
    shown = numbered(
        study.table,
        "The faithful and the fast CLIE route on the conditions both refined (twin recordings)",
        "tab-selection-faithful",
        digits=4,
    )
    return study, shown


def faithful_summary(study: clie_study.FaithfulBesideFast) -> dict:
    """The study's table in a few numbers: conditions, objective gaps (%), wall-time ratio and
    the median distance between the two routes' solutions (OLS-standardized)."""
    t = study.table
    gap = t["objective gap (%)"]
    ratio = (t["|fast - faithful|"] / t["|faithful - start|"]).replace([np.inf], np.nan)
    return {
        "conditions": len(t),
        "within": int((gap.abs() <= 100 * clie_study.OBJECTIVE_TOLERANCE).sum()),
        "tolerance": clie_study.OBJECTIVE_TOLERANCE,
        "lower": int((gap < 0).sum()),
        "gap_low": float(gap.min()),
        "gap_high": float(gap.max()),
        "gap_median": float(gap.median()),
        "speed": float(t["wall time faithful (s)"].sum() / t["wall time fast (s)"].sum()),
        "distance": float(t["|fast - faithful|"].median()),
        "distance_share": float(ratio.median()),
    }


def faithful_clouds_figure(study: clie_study.FaithfulBesideFast) -> None:
    """The two routes' clouds on one plane (`clie_study.plot_clouds`); none without records."""
    if not study.empty:
        clie_study.plot_clouds(study)
        plt.show()
