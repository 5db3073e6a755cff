"""The chapter "Kt sensitivity" as tables and figures (Sec. VII-D, Appendix E-C).

The draws are the Kt sweep's records (`acceptance.kt_sensitivity.load_draws`); the uniform
scalings and the twin's corrections are the Kt study step's record. Each function here turns
those results into one table or figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from crane_lib.acceptance import kt_sensitivity as kt
from crane_lib.paper_numbers import paper
from crane_lib.reporting.tables import (
    Comparison,
    ComparisonTable,
    ResultTable,
    Why,
    comparison_table,
    numbered,
    significant,
)

# the uniform-scaling check's quantities (`kt_sensitivity.uniform_scaling`), in reading order
UNIFORM_ROWS = (
    "factor",
    "max |beta - factor x beta_nominal| / max |factor x beta_nominal|",
    "routing lambda_min ratio",
    "audit lambda_min ratio",
    "route unchanged",
    "verdict unchanged",
    "held-out MNE change",
)


def uniform_table(uniform: list[dict]) -> ResultTable:
    """Route, verdict, margins and MNE of the estimate when every torque constant errs alike."""
    table = pd.DataFrame([{k: u[k] for k in UNIFORM_ROWS} for u in uniform]).set_index("factor").T
    table.columns = [f"every k = {c:g}" for c in table.columns]
    table.index.name = "quantity"
    return numbered(
        table,
        "One error on every torque constant (twin): the margins should scale by the "
        "factor, and route, verdict and MNE should stay",
        digits=3,
    )


def comparison(result: dict, profile: str) -> ComparisonTable:
    """Appendix E-C's four measures over the draws beside the paper's."""
    n_paper = paper("kt_perturbation_draws").value
    fewer = (
        Why.profile(f"the {profile} profile draws {result['draws']}")
        if result["draws"] < n_paper
        else None
    )
    twin = Why.twin(
        "a different estimate and record: the twin's unmodelled friction and its AG02 differ "
        "from the arm's"
    )
    flips = result["verdict_flips"]
    mne = 100 * result["mne_change_max"]
    rows = [
        Comparison("draws", "kt_perturbation_draws", result["draws"], why=fewer),
        Comparison(
            "median parameter change (39 parameters × draws)",
            "kt_param_median_shift",
            100 * result["median_parameter_change"],
            unit="%",
            why=twin,
        ),
        Comparison(
            "largest held-out MNE change",
            "kt_mne_change_max",
            mne,
            unit="%",
            why=None if mne <= paper("kt_mne_change_max").value else twin,
        ),
        Comparison(
            "draws that flip the audit verdict of the OLS estimate",
            "kt_verdict_flip_count",
            flips,
            why=fewer or twin,
        ),
        Comparison(
            "share of draws that flip it",
            None,
            100 * flips / max(result["draws"], 1),
            unit="%",
            paper_text=significant(100 * paper("kt_verdict_flip_count").value / n_paper, 2),
            why=twin,
        ),
    ]
    return comparison_table(rows, caption="Appendix E-C against the paper (twin recordings)")


def histograms(good: list[dict], nominal: dict, result: dict):
    """Every draw's median parameter change, MNE change, margin over Θ and truth-distance change."""
    paper_mark, black, green = "tab:red", "k", "tab:green"
    mne = paper("kt_mne_change_max").value
    values = {  # x label: (values, [(where, legend label or None, colour)])
        "median |Δβ| / |β| over the 39 parameters (%)": (
            100 * np.array([r["median_relative_change"] for r in good]),
            [(paper("kt_param_median_shift").value, "paper: median", paper_mark)],
        ),
        "held-out MNE change (%)": (
            100 * np.array([r["mne_change"] for r in good]),
            [(-mne, "paper: ± largest", paper_mark), (mne, None, paper_mark)],
        ),
        "λmin of M over Θ (kg·m²)": (
            np.array([r["audit"]["lambda_min"] for r in good]),
            [
                (0.0, "PD boundary", black),
                (nominal["audit"]["lambda_min"], "unperturbed estimate", green),
            ],
        ),
        "change of the distance to the twin's truth (%)": (
            100 * np.array([r["truth_distance_change"] for r in good]),
            [(0.0, None, black)],
        ),
    }
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    for ax, (label, (data, marks)) in zip(axes.ravel(), values.items()):
        ax.hist(data, bins=20, color="tab:blue", alpha=0.8)
        for x, text, color in marks:
            ax.axvline(x, color=color, ls="--", lw=1, label=text)
        ax.set(xlabel=label, ylabel="draws")
        if any(text for _, text, _ in marks):
            ax.legend(fontsize=8)
    axes[1, 0].set_title(
        f"{result['verdict_flips']} of {len(good)} draws flip the verdict", fontsize=9
    )
    fig.suptitle("Every per-axis Kt draw on one twin recording")
    fig.tight_layout()
    return fig


def corrections_frame(nominal: dict, corrected: dict[str, dict]) -> ResultTable:
    """Distance to the truth, MNE, verdict and route of the logged and the corrected records."""
    records = {"logged constants (unperturbed)": nominal}
    records.update({"scaled by " + label: r for label, r in corrected.items()})
    rows = [
        {
            "record": name,
            "distance to the truth (N·m)": r["truth_distance"],
            "held-out MNE": r["heldout_mne"],
            "PD over Θ": r["audit"]["passed"],
            "route": r["route"],
        }
        for name, r in records.items()
    ]
    return numbered(
        pd.DataFrame(rows).set_index("record"),
        "The estimate from the record as logged and "
        "corrected by the twin's own constants: compare the distance to the truth",
        digits=4,
    )


def factors_frame(corrections: dict[str, np.ndarray]) -> ResultTable:
    """The per-axis factors of each correction of the twin's record."""
    frame = pd.DataFrame(corrections, index=[f"axis {j}" for j in range(1, 9)]).T
    frame.index.name = "correction"
    return numbered(
        frame,
        "The factor each correction multiplies an axis's logged torque by (twin)",
        digits=4,
    )


def closeness_figure(good: list[dict], corrections: dict[str, np.ndarray]):
    """The change of the distance to the truth against each draw's closeness to a correction."""
    change = 100 * np.array([r["truth_distance_change"] for r in good])
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (label, factors) in zip(axes[:2], corrections.items()):
        closeness = 100 * kt.closeness_to(good, factors)
        rho, p_value = spearmanr(closeness, change)
        ax.scatter(closeness, change, s=12)
        ax.axhline(0, color="k", lw=0.6)
        ax.axvline(0, color="k", lw=0.6)
        ax.set(
            xlabel="distance of the draw to " + label + "\nrelative to the logged constants' (%)",
            ylabel="change of distance to truth (%)",
            title=f"Spearman ρ = {rho:.2f} (p = {significant(p_value, 2)})",
        )
    axes[2].bar(np.arange(1, 9), kt.axis_sensitivity(good))
    axes[2].axhline(0, color="k", lw=0.6)
    axes[2].set(
        xlabel="axis",
        ylabel="d(distance change) / d(k_j − 1)",
        title="per-axis effect (least squares over the draws)",
    )
    fig.suptitle("Which draws move the estimate toward the twin's truth (twin recording)")
    fig.tight_layout()
    return fig
