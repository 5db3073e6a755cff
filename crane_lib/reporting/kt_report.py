"""The chapter "Kt sensitivity" as tables, figures and generated sentences (Sec. VII-D, Appendix
E-C): every paper-versus-book comparison through `reporting.tables`, every sentence that states a
result (and its direction) generated from that result.

`KtSensitivity(study, profile)` reads the draws of the profile's conditions file
(`papermill_params/kt_draws_<profile>.csv`) for the study's condition, and evaluates the
uniform-scaling check and the twin's own corrections on the study (`acceptance.kt_sensitivity`).
"""

from __future__ import annotations

from functools import cached_property

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from crane_lib.acceptance import kt_sensitivity as kt
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
)

TRUE_KT, TRUE_KT_EFFICIENCY = kt.TRUE_KT, kt.TRUE_KT_EFFICIENCY


def study_sentence(study: kt.KtStudy) -> str:
    nominal = study.nominal
    return (
        f"**{study.trajectory}, execution {study.run}, {study.ts * 1e3:g} ms (twin), logged constants:** route {nominal['route']} "
        f"(λmin at the visited configurations {significant(nominal['lambda_min_visited'], 3)} kg·m²); over Θ the OLS estimate is "
        f"{'PD' if nominal['audit']['passed'] else 'not PD'}, λmin = {significant(nominal['audit']['lambda_min'], 3)} kg·m²; "
        f"held-out MNE {significant(100 * nominal['heldout_mne'], 3)} %."
    )


def draws_sentence() -> str:
    """How the paper draws its errors, in its own numbers (by id)."""
    draws, spread = paper("kt_perturbation_draws"), paper("kt_perturbation_range")
    return (
        f"The paper draws {draws.value:g} such errors, each axis independently within {spread.value:g} to +{spread.value_hi:g} %: "
        f"draw $s$ here scales the torque of axis $j$ by $k_j = 1 + U({spread.value / 100:g}, {spread.value_hi / 100:g})$ from "
        "`numpy.random.default_rng(s)`, all eight axes, and refits."
    )


class KtSensitivity:
    """The draws of one build and the checks on the study's condition."""

    def __init__(self, study: kt.KtStudy, profile: str):
        self.study = study
        self.profile = profile
        seeds = kt.seeds_of(read_conditions(f"kt_draws_{profile}.csv"))
        self.records, self.missing = kt.load_draws(study.trajectory, study.ts, study.run, seeds)
        self.result = kt.summarize(self.records, study.nominal)
        self.good = [r for r in self.records if "failure" not in r]
        if not self.good:
            raise RuntimeError(
                f"no Kt draw of the {profile} profile has a record for {study.trajectory} at {study.ts * 1e3:g} ms: run "
                f"`make book PROFILE={profile}` (or python -m crane_book.pipeline --profile {profile})"
            )

    # ------------------------------------------------------------------------- uniform error

    @cached_property
    def uniform(self) -> list[dict]:
        width = kt.half_width()
        return [kt.uniform_scaling(self.study, 1 + sign * width) for sign in (-1, 1)]

    def uniform_table(self) -> ResultTable:
        """Route, verdict, margins and MNE of the estimate when every torque constant errs alike."""
        table = (
            pd.DataFrame([{k: v for k, v in u.items() if k != "scaled"} for u in self.uniform])
            .set_index("factor")
            .T
        )
        table.columns = [f"every k = {c:g}" for c in table.columns]
        table.index.name = "quantity"
        return numbered(
            table,
            "One error on every torque constant (twin): the margins should scale by the "
            "factor, and route, verdict and MNE should stay",
            digits=3,
        )

    def uniform_sentence(self) -> str:
        worst = max(
            u["max |beta - factor x beta_nominal| / max |factor x beta_nominal|"]
            for u in self.uniform
        )
        unchanged = all(u["route unchanged"] and u["verdict unchanged"] for u in self.uniform)
        mne = max(abs(u["held-out MNE change"]) for u in self.uniform)
        return (
            f"The estimates equal the factor times the unperturbed ones to within {significant(worst, 2)} of their largest entry; "
            f"route and verdict {'are unchanged' if unchanged else 'CHANGE'}, and the held-out MNE moves by {significant(mne, 2)} "
            "(relative)"
            + (
                ": a uniform error is invisible to every check of Algorithm 1, and only an absolute calibration could "
                "reveal it."
                if unchanged and mne < 1e-9
                else "."
            )
        )

    # ------------------------------------------------------------------------- the draws

    def draws_note(self) -> str:
        result = self.result
        text = ""
        if self.missing:
            shown = ", ".join(map(str, self.missing[:10])) + ("…" if len(self.missing) > 10 else "")
            text += f"**{len(self.missing)} draws of the `{self.profile}` profile have no record** (seeds {shown}; `make book PROFILE={self.profile}` runs them). "
        text += "".join(f"Draw {seed} failed: {reason}. " for seed, reason in result["failed"])
        text += (
            f"{result['draws']} draws evaluated, {len(result['failed'])} failed. Routes: "
            + ", ".join(f"{route} {count}" for route, count in sorted(result["routes"].items()))
            + f" (unperturbed: {result['nominal_route']}); the route changed in {result['route_changes']} draws."
        )
        return text

    def comparison(self) -> ComparisonTable:
        result, n_paper = self.result, paper("kt_perturbation_draws").value
        fewer = (
            Why.profile(f"the {self.profile} profile draws {result['draws']}")
            if result["draws"] < n_paper
            else None
        )
        twin = Why.twin(
            "a different estimate and record: the twin's unmodelled friction and its AG02 differ from the arm's"
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

    def reading_sentence(self) -> str:
        """The paper's reading, checked on this build: parameters move by about the input's own spread."""
        result = self.result
        inputs = float(np.median(np.abs(np.array([r["factors"] for r in self.good]) - 1.0)))
        ratio = result["median_parameter_change"] / inputs
        return (
            f"Here the median parameter moves by {significant(100 * result['median_parameter_change'], 2)} % against a median input "
            f"error |k − 1| of {significant(100 * inputs, 2)} %, {significant(ratio, 2)} times the input's own spread; the held-out MNE "
            f"moves by at most {significant(100 * result['mne_change_max'], 2)} %, and {result['verdict_flips']} of {result['draws']} draws "
            f"flip the feasibility verdict of the OLS estimate."
        )

    def unscaled_sentence(self) -> str:
        return (
            f"Scored against the held-out torque as logged, unscaled (register R-13), the largest MNE change would be "
            f"{significant(100 * self.result['mne_unscaled_change_max'], 3)} % instead of {significant(100 * self.result['mne_change_max'], 3)} %."
        )

    def histograms(self):
        good, nominal = self.good, self.study.nominal
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
            f"{self.result['verdict_flips']} of {len(good)} draws flip the verdict "
            f"(paper: {paper('kt_verdict_flip_count').value:g} of {paper('kt_perturbation_draws').value:g})",
            fontsize=9,
        )
        fig.suptitle(
            f"{len(good)} per-axis Kt draws on {self.study.trajectory} at {self.study.ts * 1e3:g} ms (twin recording)"
        )
        fig.tight_layout()
        return fig

    # ------------------------------------------------------------------------- the twin's truth

    @cached_property
    def corrections(self) -> dict[str, np.ndarray]:
        return kt.twin_corrections()

    @cached_property
    def corrected(self) -> dict[str, dict]:
        return {
            label: kt.evaluate(self.study, factors, label)
            for label, factors in self.corrections.items()
        }

    def corrections_frame(self) -> ResultTable:
        """Distance to the truth, MNE, verdict and route of the logged and the corrected records."""
        nominal = self.study.nominal
        rows = [
            {
                "record": "logged constants (unperturbed)",
                "distance to the truth (N·m)": nominal["truth_distance"],
                "held-out MNE": nominal["heldout_mne"],
                "PD over Θ": nominal["audit"]["passed"],
                "route": nominal["route"],
            }
        ]
        for label, r in self.corrected.items():
            rows.append(
                {
                    "record": f"scaled by {label}",
                    "distance to the truth (N·m)": r["truth_distance"],
                    "held-out MNE": r["heldout_mne"],
                    "PD over Θ": r["audit"]["passed"],
                    "route": r["route"],
                }
            )
        return numbered(
            pd.DataFrame(rows).set_index("record"),
            "The estimate from the record as logged and "
            "corrected by the twin's own constants: compare the distance to the truth",
            digits=4,
        )

    def factors_frame(self) -> ResultTable:
        """The per-axis factors of each correction of the twin's record."""
        frame = pd.DataFrame(self.corrections, index=[f"axis {j}" for j in range(1, 9)]).T
        frame.index.name = "correction"
        return numbered(
            frame,
            "The factor each correction multiplies an axis's logged torque by (twin)",
            digits=4,
        )

    def corrections_sentence(self) -> str:
        true_kt = self.corrected[TRUE_KT]["truth_distance_change"]
        both = self.corrected[TRUE_KT_EFFICIENCY]["truth_distance_change"]
        text = (
            f"Correcting the record by the twin's true constants moves the estimate **{'toward' if true_kt < 0 else 'away from'}** the truth "
            f"(its distance {'falls' if true_kt < 0 else 'grows'} by {significant(100 * abs(true_kt), 2)} %). Including the gear train's "
            f"driving efficiency, the share of the motor's torque that reaches the link, moves it {'toward' if both < 0 else 'away from'} "
            f"the truth (by {significant(100 * abs(both), 2)} %)."
        )
        if true_kt > 0 and both < 0:
            text += (
                " The logged constant is therefore not the only uncalibrated factor between current and link torque on the twin: the "
                "gearbox takes its share too, and a constant that errs in the right direction can hide it."
            )
        return text

    def closeness_figure(self):
        change = 100 * np.array([r["truth_distance_change"] for r in self.good])
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
        for ax, (label, factors) in zip(axes[:2], self.corrections.items()):
            closeness = 100 * kt.closeness_to(self.good, factors)
            rho, p_value = spearmanr(closeness, change)
            ax.scatter(closeness, change, s=12)
            ax.axhline(0, color="k", lw=0.6)
            ax.axvline(0, color="k", lw=0.6)
            ax.set(
                xlabel=f"distance of the draw to {label}\nrelative to the logged constants' (%)",
                ylabel="change of distance to truth (%)",
                title=f"Spearman ρ = {rho:.2f} (p = {significant(p_value, 2)})",
            )
        axes[2].bar(np.arange(1, 9), kt.axis_sensitivity(self.good))
        axes[2].axhline(0, color="k", lw=0.6)
        axes[2].set(
            xlabel="axis",
            ylabel="d(distance change) / d(k_j − 1)",
            title="per-axis effect (least squares over the draws)",
        )
        fig.suptitle("Which draws move the estimate toward the twin's truth (twin recording)")
        fig.tight_layout()
        return fig

    def closeness_sentence(self) -> str:
        change = np.array([r["truth_distance_change"] for r in self.good])
        slopes = kt.axis_sensitivity(self.good)
        strongest = int(np.argmax(np.abs(slopes)))
        rho = {
            label: spearmanr(kt.closeness_to(self.good, f), change)[0]
            for label, f in self.corrections.items()
        }
        return (
            f"{self.result['toward_truth']} of {len(self.good)} draws move the estimate toward the truth. Whether a draw does is "
            f"{'better' if abs(rho[TRUE_KT_EFFICIENCY]) > abs(rho[TRUE_KT]) else 'no better'} predicted by its closeness to the true Kt "
            f"times the gear efficiency (ρ = {rho[TRUE_KT_EFFICIENCY]:.2f}) than by its closeness to the true Kt alone "
            f"(ρ = {rho[TRUE_KT]:.2f}). The axis whose error moves the distance most is axis {strongest + 1}: raising its torque "
            f"{'shortens' if slopes[strongest] < 0 else 'lengthens'} the distance."
        )
