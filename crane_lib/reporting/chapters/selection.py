"""Chapter "Parameter clouds, the representative candidate, and what each stage is worth" (paper
Sec. VI-A, VI-B, VI-D, Appendix D-H; Fig. 6 and Table VIII): the clouds of the three stages, the
structural rule and its two checks, centrality, Table VIII and the run-to-run scale. Data: the
twin's recordings and the OLS/SDP and CLIE sweeps' records."""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.acceptance import selection
from crane_lib.acceptance.selection import stage_scores
from crane_lib.excitation import design as excitation
from crane_lib.excitation.commands import segment_statistics
from crane_lib.identification import clie, metrics
from crane_lib.identification import condition as identify
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paper_numbers import paper
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
    signed_percent,
    significant,
    span,
)

VALIDATION = ("V01", "V02", "V03")
TABLE_VIII = (
    "AG02",
    "AG01",
    "AP01",
    "AP02",
    "AP03",
    "AP04",
    "AP05",
    "PB07",
    "PC01",
)  # register: the text lists none
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


@dataclass
class Clouds:
    """The CLIE records of the first executions, as the three stages' clouds, and the candidate."""

    records: list
    clouds: selection.StageClouds
    method: str
    candidate: str = ""
    interval: float = float("nan")
    index: int = -1
    ramps: np.ndarray = None
    intervals: list = None

    @property
    def n(self) -> int:
        return len(self.clouds.labels)

    @property
    def label(self) -> str:
        return f"{self.candidate} at {self.interval * 1e3:g} ms"

    @property
    def subset(self) -> Why | None:
        whole = paper("identification_condition_count").value
        return (
            None
            if self.n == whole
            else Why.profile(f"{self.n} of the paper's {whole:g} conditions in this profile")
        )

    def why(self, base: Why) -> Why:
        return base if self.subset is None else base + str(self.subset)


def clouds(method: str = "fast") -> Clouds:
    records = [r for r in clie.load_records(method) if r["run"] == 1]
    return Clouds(records, selection.StageClouds.from_records(records), method)


def clouds_sentence(c: Clouds, profile: str) -> Prose:
    failed = "".join(
        f" {f['trajectory']} at {f['ts'] * 1e3:g} ms is not in the clouds: CLIE could not refine it (chapter "
        '"CLIE").'
        for f in clie.load_failures(c.method)
        if f["run"] == 1
    )
    trajectories = {name for name, _ in c.clouds.labels}
    return Prose(
        f"{c.n} conditions in the clouds (profile `{profile}`): {len(trajectories)} trajectories × "
        f"{len({ts for _, ts in c.clouds.labels})} sampling intervals; the paper's clouds have "
        f"{cite('identification_condition_count')}.{failed}"
    )


# ----------------------------------------------------------------------------- the structural rule


def structural_rule(c: Clouds) -> tuple[object, Prose]:
    """The rule names the candidate from the command files alone; the chapter stops if it does not
    name exactly one condition, or if that condition has no CLIE record."""
    specs = excitation.trajectory_specs()
    design = selection.blocks_of_design(specs)
    named = selection.structural_candidates(specs)
    c.ramps = np.concatenate(
        [segment_statistics(cmd).ramps_s for cmd in excitation.generate_identification().values()]
    )
    c.intervals = sorted({ts for _, ts in c.clouds.labels} | {0.010, 0.020, 0.040, 0.080})
    chosen = selection.coarsest_adequate_interval(c.ramps, c.intervals)
    if len(named) != 1 or chosen is None:
        raise RuntimeError(
            f"the structural rule does not name one condition: trajectories {named}, interval {chosen}"
        )
    c.candidate, c.interval = named[0], chosen
    try:
        c.index = c.clouds.index_of(c.candidate, c.interval)
    except KeyError:
        raise RuntimeError(f"{c.label} has no CLIE record in this build") from None
    frame = pd.DataFrame(
        {
            "samples on the shortest ramp": [
                int(np.floor(c.ramps.min() / ts + 1e-9)) for ts in c.intervals
            ],
            f"ramps with fewer than {selection.MIN_RAMP_SAMPLES} samples (%)": [
                100 * np.mean(np.floor(c.ramps / ts + 1e-9) < selection.MIN_RAMP_SAMPLES)
                for ts in c.intervals
            ],
        },
        index=pd.Index([f"{ts * 1e3:g} ms" for ts in c.intervals], name="interval"),
    )
    blocks = sorted(f"S({p})" if k == "S" else excitation.PAIR_BLOCKS[k].name for k, p in design)
    sentence = Prose(
        f"Blocks of the design: {joined(blocks)}. Trajectories containing all of them: **{joined(named)}** (paper: AG02, the "
        f"unique maximal element). Shortest effective ramp {c.ramps.min():.3f} s, so the coarsest adequate interval is "
        f"**{c.interval * 1e3:g} ms** (paper: {cite('accepted_sampling_interval')}, its shortest ramp being "
        f"{cite('ramp_duration_min')})."
    )
    return numbered(
        frame,
        "Samples per acceleration ramp at each interval, over every identification command file",
        "tab-selection-ramps",
        digits=3,
    ), sentence


# ----------------------------------------------------------------------------- Fig. 6


def clouds_figure(c: Clouds):
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
    axes[0].set_title(f"twin data, {c.n} conditions per stage; ★ {c.label}")
    axes[0].legend()
    for i in range(c.n):
        path = np.array([projected[s][i] for s in selection.STAGES])
        axes[1].plot(path[:, 0], path[:, 1], color="0.6" if not is_ap01[i] else "k", lw=0.7)
        axes[1].scatter(*path[-1], s=12, **style["CLIE"])
    axes[1].set_title("per condition: OLS → SDP → CLIE (AP01 in black)")
    for ax in axes:
        ax.set_xlabel(
            f"PC1 ({100 * basis.variances[0] / basis.variances.sum():.1f} % of the pooled variance)"
        )
    axes[0].set_ylabel(f"PC2 ({100 * basis.variances[1] / basis.variances.sum():.1f} %)")
    fig.tight_layout()
    return fig


def plane_against_paper(c: Clouds) -> object:
    basis, _ = selection.common_pca(c.clouds)
    row = Comparison(
        "variance the plotted plane carries",
        "pca_plane_variance_share",
        100 * basis.share(2),
        why=c.why(
            Why.twin("the twin's clouds")
            + Why.reconstruction("the basis is fitted to the three clouds pooled (register)")
        ),
    )
    return comparison_table(
        [row], "The plane of the paper's Fig. 6", name="tab-selection-pca-plane"
    )


# ----------------------------------------------------------------------------- measures


def _measures(c: Clouds) -> dict:
    out = {
        ("total variance", s): v["total variance"]
        for s, v in selection.cloud_measures(c.clouds).items()
    }
    out.update(
        {
            ("median distance", s): v["median distance"]
            for s, v in selection.cloud_measures(c.clouds).items()
        }
    )
    if "AP01" in {name for name, _ in c.clouds.labels}:
        out.update(
            {
                ("total variance without AP01", s): v["total variance"]
                for s, v in selection.cloud_measures(c.clouds.without("AP01")).items()
            }
        )
    return out


def measures_against_paper(c: Clouds) -> tuple[object, Prose]:
    """Total variance and median distance in all dimensions, compared as ratios to OLS (the paper's
    scale is unstated, register), and the sentence on which way each stage moves the cloud."""
    ours = _measures(c)
    why = c.why(Why.twin("the twin's records") + Why.reconstruction("fast-route CLIE"))
    rows = []
    for measure, stage in ours:
        if stage == "OLS":
            continue
        mine = ours[(measure, stage)] / ours[(measure, "OLS")]
        theirs = (
            paper(MEASURE_IDS[(measure, stage)]).value / paper(MEASURE_IDS[(measure, "OLS")]).value
        )
        rows.append(
            Comparison(
                f"{measure}, {stage} over OLS",
                None,
                mine,
                digits=3,
                paper_text=significant(theirs, 3),
                why=why,
            )
        )
    table = comparison_table(
        rows,
        "The clouds' spread in all dimensions, each stage against OLS: ratios, because the paper's "
        "scale is not stated (the paper's ratios are of its `cloud_variance_*` and "
        "`cloud_median_dist_*` numbers)",
        name="tab-selection-cloud-measures",
    )

    def ratio(measure, stage, source):
        if source == "ours":
            return ours[(measure, stage)] / ours[(measure, "OLS")]
        return (
            paper(MEASURE_IDS[(measure, stage)]).value / paper(MEASURE_IDS[(measure, "OLS")]).value
        )

    sdp_tv, sdp_md, clie_md = (
        ratio(*k, "ours")
        for k in (
            ("total variance", "SDP"),
            ("median distance", "SDP"),
            ("median distance", "CLIE"),
        )
    )
    moved = sum(r == identify.ROUTE_PROJECTED for r in c.clouds.routes)
    sentence = Prose(
        f"SDP {compared(sdp_tv, 1, 'expands', 'contracts', 'leaves')} the cloud (total variance × {sdp_tv:.3f}, median "
        f"distance × {sdp_md:.3f}; paper × {ratio('total variance', 'SDP', 'paper'):.3f} and × "
        f"{ratio('median distance', 'SDP', 'paper'):.3f}); only the {moved} of {c.n} conditions on route O-S-C move at this "
        f"stage (the paper's {cite('ols_nonpd_routing_count')} of {cite('identification_condition_count')}). CLIE takes the "
        f"median distance to × {clie_md:.3f} of the OLS cloud's, {compared(clie_md, 1, 'above', 'below', 'equal to')} the "
        f"cloud it started from (paper × {ratio('median distance', 'CLIE', 'paper'):.3f}, "
        f"{compared(ratio('median distance', 'CLIE', 'paper'), 1, 'above', 'below', 'equal to')} it)."
    )
    return table, sentence


# ----------------------------------------------------------------------------- centrality


def centrality(c: Clouds) -> tuple[object, object, Prose]:
    labels = [f"{name} {ts * 1e3:g} ms" for name, ts in c.clouds.labels]
    by_stage = {
        stage: pd.DataFrame(
            selection.centrality_table(c.clouds.vectors[stage], c.index, labels)
        ).set_index("metric")
        for stage in selection.STAGES
    }
    table = by_stage["CLIE"]
    best, worst, top = selection.mahalanobis_rank_range(c.clouds.vectors["CLIE"], c.index)
    euclid = table.iloc[0]
    why = c.why(Why.twin("the twin's records") + Why.reconstruction("fast-route CLIE"))
    rows = [
        Comparison(
            "Euclidean rank",
            "ag02_rank_euclidean",
            Count(int(euclid["rank"]), c.n),
            paper_whole="identification_condition_count",
            why=why,
        ),
        Comparison(
            f"Mahalanobis ranks, 2 to {top} components",
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
    others = "; ".join(
        f"{stage}: Euclidean {by_stage[stage].iloc[0]['rank']}, most central "
        f"{by_stage[stage].iloc[0]['most central']}"
        for stage in ("OLS", "SDP")
    )
    sentence = Prose(
        f"The same ranks in the OLS and SDP clouds, for comparison: {others}. Centrality depends on the metric, "
        "which is why the paper demoted it from selector to check."
    )
    shown = numbered(
        table,
        f"Centrality of {c.label} in the CLIE cloud under each metric (twin)",
        "tab-selection-centrality",
    )
    return (
        shown,
        comparison_table(
            rows,
            f"Centrality of {c.label} against the paper's AG02 at 40 ms",
            name="tab-selection-centrality-paper",
        ),
        sentence,
    )


def checks_against_paper(c: Clouds) -> object:
    kappa = selection.kappa_check(c.clouds.kappas, c.index)
    labels = [f"{name} {ts * 1e3:g} ms" for name, ts in c.clouds.labels]
    euclid = pd.DataFrame(
        selection.centrality_table(c.clouds.vectors["CLIE"], c.index, labels)
    ).iloc[0]
    why = c.why(Why.twin("the twin's records"))
    if c.subset is not None:
        why = (
            why
            + f"a cloud of {c.n} conditions: the decile is {kappa['cut-off rank']:.1f} ranks wide"
        )
    rows = [
        Comparison(f"κ(W_all) of {c.label}", "ag02_kappa_40ms", c.clouds.kappas[c.index], why=why),
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


def table_viii(c: Clouds) -> tuple[object, object, Prose, object]:
    model = DynamicModel("reduced")
    heldout = [identify.condition_bundle(v, 0.040) for v in VALIDATION]
    by_name = {(r["trajectory"], round(r["ts"] * 1e3)): r for r in c.records}
    acceptance = rescue_stage.accept(model, c.clouds.vectors["CLIE"][c.index])
    rows = []
    for name in TABLE_VIII:
        r = by_name.get((name, 40))
        if r is None:
            continue
        row = stage_scores(r, model, heldout)
        if name == c.candidate and acceptance.rescue is not None:
            row["rescue"] = metrics.pooled_rmse(model, acceptance.parameters, heldout)
        rows.append(row)
    frame = pd.DataFrame(rows).set_index("trajectory")
    why = c.why(
        Why.twin("the twin's held-out records and unmodelled effects")
        + Why.reconstruction("fast-route CLIE")
    )
    comparisons = [
        Comparison(
            f"{name}, OLS",
            PAPER_OLS[name],
            frame.loc[name, "OLS"],
            digits=5,
            why=why
            + (
                "the paper gives one range for AP02, AP04 and AP05"
                if name in ("AP02", "AP04", "AP05")
                else "PB07's paper value is inferred from the range's low end"
                if name == "PB07"
                else ""
            ),
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
    final = (
        frame.loc[c.candidate, "rescue"]
        if not np.isnan(frame.loc[c.candidate, "rescue"])
        else frame.loc[c.candidate, "CLIE"]
    )
    gain = 1 - final / frame.loc[c.candidate, "OLS"]
    ap01 = (
        f"; on AP01 CLIE {compared(gains['AP01'], 0, 'improves', 'worsens', 'does not change')} held-out prediction by "
        f"{abs(gains['AP01']):.1f} % (paper: worsens by {cite('ap01_clie_degradation')})"
        if "AP01" in gains
        else ""
    )
    rescued = (
        "The candidate's CLIE solution passes the audit over Θ (seed 1), so no rescue runs: the rescue column is empty, "
        "where the paper's rescue gave its best value."
        if acceptance.rescue is None
        else f"Its CLIE solution fails the audit ({acceptance.first_audit.n_violations:,} poses) and is rescued; the rescued "
        f"model {'passes' if acceptance.accepted else 'fails'} the re-audit."
    )
    sentence = Prose(
        f"CLIE improves held-out prediction on {len(improved)} of {len(gains)} trajectories"
        + (f", by {span(improved.values, 3)} %" if len(improved) else "")
        + ap01
        + f". {c.candidate}: OLS {frame.loc[c.candidate, 'OLS']:.5f} → accepted {final:.5f} N·m, {signed_percent(gain)} (paper "
        f"{cite('heldout_rmse_pooled_ols_ag02')} → {cite('heldout_rmse_pooled_accepted')}, a gain of "
        f"{cite('pipeline_gain_vs_ols')}). {rescued}"
    )
    shown = numbered(
        frame,
        "Pooled held-out RMSE on V01–V03 at 40 ms (N·m) of each stage, per fit trajectory "
        "(twin; a dash: the stage does not occur)",
        "tab-selection-table-viii",
        digits=5,
        paper="VIII",
    )
    return (
        shown,
        comparison_table(
            comparisons,
            "The paper's Table VIII values and this book's",
            name="tab-selection-table-viii-paper",
        ),
        sentence,
        acceptance,
    )


def run_to_run(acceptance) -> object:
    """The accepted model on each execution of each validation trajectory: the scale on which
    Table VIII's differences are read."""
    model = DynamicModel("reduced")
    rows = []
    for v in VALIDATION:
        runs = [run for run in (1, 2, 3) if identify.recording_path(v, run).exists()]
        values = [
            metrics.pooled_rmse(
                model, acceptance.parameters, [identify.condition_bundle(v, 0.040, run)]
            )
            for run in runs
        ]
        if len(values) > 1:
            rows.append(
                Comparison(
                    f"{v}: RMSE spread over {len(values)} executions (SD / mean)",
                    SD_IDS[v],
                    100 * np.std(values, ddof=1) / np.mean(values),
                    unit="%",
                    digits=2,
                    why=Why.twin(
                        "the twin's run-to-run noise is seeded timing, quantization and noise, not "
                        "the arm's drift"
                    ),
                )
            )
        else:
            rows.append(
                Comparison(
                    f"{v}: RMSE spread over executions",
                    SD_IDS[v],
                    "one execution in this profile",
                    why=Why.profile("the quick profile records one execution"),
                )
            )
    return comparison_table(
        rows, "The run-to-run scale (Sec. VI-D)", name="tab-selection-run-to-run"
    )


def faithful_beside_fast():
    """Appendix D-F's faithful CLIE study beside the fast route, where this build holds its records
    (`crane_lib.reporting.clie_study`): the generated summary, then the per-condition table
    (nothing more when no faithful record exists); returns the study for its figure."""
    from IPython.display import display

    from crane_lib.reporting import clie_study

    study = clie_study.faithful_beside_fast()
    display(Prose(study.summary_text()))
    if not study.empty:
        display(
            numbered(
                study.table,
                "The faithful and the fast CLIE route on the conditions both refined "
                "(twin recordings)",
                "tab-selection-faithful",
                digits=4,
            )
        )
    return study


def faithful_clouds_figure(study) -> None:
    """The two routes' clouds on one plane (`clie_study.plot_clouds`); no figure without records."""
    from crane_lib.reporting import clie_study

    if not study.empty:
        clie_study.plot_clouds(study)
        plt.show()
