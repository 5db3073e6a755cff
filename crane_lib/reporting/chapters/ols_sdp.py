"""Chapter "OLS and the conditional SDP projection" (paper Sec. III-D, IV-A, IV-B, VI-B, Appendix
D-D, D-E; Tables III, V, XII's first panels and XVII): one condition through OLS, the routing test
and the projection, why the products of inertia go, the nested model classes, and the summary
over the conditions the sweep identified. Data: the twin's recordings and the sweep's records."""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.identification import condition as identify
from crane_lib.identification import model_classes
from crane_lib.identification import projection as sdp
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paper_numbers import paper
from crane_lib.reporting.tables import (
    Comparison,
    Count,
    Prose,
    Why,
    cite,
    comparison_table,
    joined,
    numbered,
    significant,
)
from crane_lib.twin.truth import load_truth

TABLE_III_TRAJECTORIES = (
    "PA01",
    "PB01",
    "PC01",
    "AP01",
    "AP03",
    "AG01",
    "AG02",
)  # register: the text names none
VALIDATION = ("V01", "V02", "V03")
SETS = ("reduced", "reduced+poi", "reduced+coulomb", "full")


def settings_sentence() -> Prose:
    """The settings of steps 2 and 3, read from the code and the paper's numbers."""
    ladder = joined([f"{e:g}" for e in sdp.EPSILON_LADDER], "and")
    return Prose(
        f"In this book: Θc holds {cite('theta_c_even_configs')} samples evenly along the record and the "
        f"{cite('theta_c_fast_configs')} fastest (at most {cite('theta_c_max_configs')}, duplicates merged), and ε runs "
        f"through {ladder} kg·m² (paper: {cite('eps_pd_ladder')}, {cite('eps_pd_ladder_size')} values)."
    )


@dataclass
class Condition:
    """One condition identified for the chapter's figures (its record is the sweep's)."""

    trajectory: str
    ts: float
    run: int
    bundle: object
    result: object  # ConditionResult
    model: DynamicModel

    @property
    def label(self) -> str:
        return f"{self.trajectory} at {self.ts * 1e3:g} ms"


def condition(trajectory: str, ts: float, run: int) -> Condition:
    """OLS, routing and projection of the condition, as its sweep record holds them (recomputed
    for the figures from the same bundle; the page writes nothing)."""
    model = DynamicModel("reduced")
    bundle = identify.condition_bundle(trajectory, ts, run)
    result = identify.identify_condition(bundle, trajectory, model, run=run)
    if result.ols is None:
        raise RuntimeError(
            f"{trajectory} at {ts * 1e3:g} ms could not be identified: {result.failure}"
        )
    return Condition(trajectory, ts, run, bundle, result, model)


def ols_sentence(c: Condition) -> Prose:
    ols = c.result.ols
    return Prose(
        f"**{c.label}, execution {c.run} (twin):** {ols.n_samples} samples × 8 axes, κ(W_all) = {ols.kappa:.1f}, "
        f"residual RMS {ols.residual_rms:.4f} N·m."
    )


def estimates_table(c: Condition) -> object:
    ols = c.result.ols
    truth = c.model.base_from_standard(load_truth())
    frame = pd.DataFrame(
        {
            "OLS": ols.parameters.values,
            "std. error": ols.parameters.std_errors,
            "|estimate| / std. error": ols.t_ratio,
            "twin truth": truth.values,
        },
        index=pd.Index(c.model.names, name="parameter"),
    )
    return numbered(
        frame,
        f"OLS estimates of {c.label} with their standard errors, and the twin's true base parameters",
        "tab-ols-estimates",
        digits=4,
    )


def routing_sentence(c: Condition) -> Prose:
    r = c.result
    route = (
        f"positive definite at every visited configuration, so the condition takes route **{r.route}**: CLIE starts "
        "from the OLS estimate"
        if r.pd_visited
        else f"not positive definite at every visited configuration, so the condition takes route **{r.route}**: the "
        "estimate is projected first"
    )
    chosen = (
        ""
        if r.projection is None or r.projection.chosen is None
        else f", with ε = {r.projection.epsilon:g} kg·m²"
    )
    failed = f" The projection failed: {r.failure}." if r.failure else ""
    return Prose(
        f"The smallest eigenvalue of M(θ; β_OLS) over the configurations {c.label} visits is "
        f"{significant(r.lambda_min_visited, 3)} kg·m²: {route}{chosen}.{failed}"
    )


def ladder_table(c: Condition) -> object | None:
    if c.result.projection is None:
        return None
    frame = pd.DataFrame(
        [
            {
                "ε (kg·m²)": a["epsilon"],
                "solver": a["status"],
                "PD on the whole record": a["pd_on_record"],
                "λmin on the record (kg·m²)": a.get("lambda_min_record", np.nan),
                "|Δβ|": a["result"].change_norm if "result" in a else np.nan,
                "poses carried by the last solve": a["result"].n_active
                if "result" in a
                else np.nan,
            }
            for a in c.result.projection.attempts
        ]
    ).set_index("ε (kg·m²)")
    return numbered(frame, f"The ε ladder on Θc for {c.label}", "tab-ols-ladder", digits=3)


def lambda_figure(c: Condition):
    r = c.result
    fig, ax = plt.subplots(figsize=(9, 3))
    ax.plot(
        c.bundle.t,
        c.model.arm_min_eigenvalue(c.bundle.theta, r.ols.parameters.values),
        lw=0.8,
        label="OLS",
    )
    if r.route == identify.ROUTE_PROJECTED and r.start is not None:
        ax.plot(
            c.bundle.t,
            c.model.arm_min_eigenvalue(c.bundle.theta, r.start.values),
            lw=0.8,
            label=f"SDP, ε = {r.projection.epsilon:g}",
        )
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("λmin(M) (kg·m²)")
    ax.set_title(f"{c.label}, twin recording: λmin of M along the record")
    ax.legend()
    fig.tight_layout()
    return fig


def torque_shares_against_paper(c: Condition) -> object:
    shares = model_classes.full_model_torque_shares(c.bundle)
    why = Why.twin(
        "the twin's unmodelled effects (quantization, compliance, Coulomb, supply limit) set the residual"
    )
    rows = [
        Comparison("the products of inertia", "poi_torque_rms_share", shares["products"], why=why),
        Comparison(
            "the terms the reduced set retains",
            "retained_terms_torque_rms_share",
            shares["retained"],
            why=why,
        ),
        Comparison(
            "residual of the full grouped model's fit",
            "full_model_residual_share",
            shares["residual"],
            why=why,
        ),
    ]
    return comparison_table(
        rows,
        f"Share of the torque RMS, full grouped model fitted by OLS to {c.label}",
        label="contribution",
        name="tab-ols-torque-shares",
    )


# ----------------------------------------------------------------------------- Table III


def model_classes_tables(heldout_ts: float = 0.040) -> tuple[object, object]:
    """Table III: each nested class fitted on each trajectory recorded in this profile, pooled
    held-out RMSE on V01-V03; and the comparison with the paper's statements about it."""
    available = [t for t in TABLE_III_TRAJECTORIES if identify.recording_path(t).exists()]
    fits = {t: identify.condition_bundle(t, heldout_ts) for t in available}
    heldout = [identify.condition_bundle(v, heldout_ts) for v in VALIDATION]
    classes = pd.DataFrame(model_classes.compare_model_classes(fits, heldout))
    table = classes.pivot_table(
        index="trajectory", columns="parameter set", values="held-out RMSE"
    ).reindex(available)[list(SETS)]
    by = {
        k: classes[classes["parameter set"] == k].set_index("trajectory").reindex(available)
        for k in SETS
    }
    insample = 100 * (1 - by["reduced+poi"]["in-sample RMS"] / by["reduced"]["in-sample RMS"])
    kappa = 100 * (by["reduced+poi"]["kappa"] / by["reduced"]["kappa"] - 1)
    heldout_change = 100 * (by["reduced+poi"]["held-out RMSE"] / by["reduced"]["held-out RMSE"] - 1)
    coulomb = 100 * (1 - by["reduced+coulomb"]["held-out RMSE"] / by["reduced"]["held-out RMSE"])
    n = len(available)
    why = Why.twin(
        "the twin's Coulomb friction and products of inertia are known and its residual floor differs"
    )
    if n < paper("table3_fit_traj_count").value:
        why = why + Why.profile(f"{n} of the seven trajectories in this profile")
    rows = [
        Comparison(
            "in-sample residual gain from adding the products of inertia, largest",
            "poi_insample_gain_max",
            insample.max(),
            unit="%",
            why=why,
        ),
        Comparison(
            "κ increase from adding the products of inertia",
            "poi_kappa_degradation",
            kappa.values,
            digits=2,
            why=why,
        ),
        Comparison(
            "held-out RMSE change from adding the products of inertia (positive: worse)",
            "poi_heldout_degradation",
            heldout_change.values,
            digits=2,
            why=why,
        ),
        Comparison(
            "trajectories where the full grouped model predicts worse than the reduced",
            "full_model_worse_count",
            Count(int((by["full"]["held-out RMSE"] > by["reduced"]["held-out RMSE"]).sum()), n),
            paper_whole="table3_fit_traj_count",
            why=why,
        ),
        Comparison(
            "trajectories where Coulomb terms improve held-out prediction",
            "coulomb_improve_count",
            Count(int((coulomb > 0).sum()), n),
            paper_whole="table3_fit_traj_count",
            why=why,
        ),
        Comparison(
            "largest held-out gain from Coulomb terms",
            "coulomb_improve_max",
            coulomb.max(),
            unit="%",
            why=why,
        ),
    ]
    held = numbered(
        table,
        f"Pooled held-out RMSE on V01–V03 (N·m) of each model class, fitted at "
        f"{heldout_ts * 1e3:g} ms (twin recordings)",
        "tab-ols-table-iii",
        digits=4,
        paper="III",
    )
    return held, comparison_table(
        rows, "What the paper found with Table III, and this book", name="tab-ols-table-iii-paper"
    )


# ----------------------------------------------------------------------------- the sweep's summary


def condition_records() -> pd.DataFrame:
    """One row per condition record the OLS/SDP sweep wrote (results/conditions)."""
    records = identify.load_condition_records()
    return pd.DataFrame(
        [
            {
                "trajectory": r["trajectory"],
                "run": r["run"],
                "Ts (ms)": round(r["ts"] * 1e3),
                "κ": r.get("kappa", np.nan),
                "PD": r.get("pd_visited"),
                "route": r.get("route"),
                "ε": f"{r['epsilon']:g}" if r.get("epsilon") is not None else "—",
                "failure": r.get("failure") or "",
            }
            for r in records
        ],
        columns=["trajectory", "run", "Ts (ms)", "κ", "PD", "route", "ε", "failure"],
    )


def records_sentence(table: pd.DataFrame, profile: str) -> Prose:
    return Prose(
        f"{len(table)} condition records in this build (profile `{profile}`; the paper's study has "
        f"{cite('identification_condition_count')})."
    )


def table_v_against_paper(table: pd.DataFrame) -> object:
    n, whole = len(table), paper("identification_condition_count").value
    non_pd, pd_ = int((table["PD"] == False).sum()), int((table["PD"] == True).sum())  # noqa: E712 (None: not identified)
    subset = Why.profile(f"{n} of the paper's {whole:g} conditions") if n != whole else None
    share = (
        Why.twin(
            f"non-PD share {100 * non_pd / n:.0f} % against the paper's "
            f"{100 * paper('ols_nonpd_routing_count').value / whole:.0f} %"
        )
        if n
        else None
    )
    rows = [
        Comparison("conditions", "identification_condition_count", n, why=subset),
        Comparison(
            "OLS non-PD at the visited configurations (route O-S-C)",
            "ols_nonpd_routing_count",
            Count(non_pd, n),
            paper_whole="identification_condition_count",
            why=share if subset is None else share + str(subset),
        ),
        Comparison(
            "OLS PD at the visited configurations (route O-C)",
            "ols_pd_routing_count",
            Count(pd_, n),
            paper_whole="identification_condition_count",
            why=share if subset is None else share + str(subset),
        ),
    ]
    failed = int(table["route"].isna().sum())
    rows.append(
        Comparison(
            "not identified",
            None,
            "none" if failed == 0 else str(failed),
            paper_text="none",
            why=None
            if failed == 0
            else Why.twin("conditions whose OLS or projection failed on the twin"),
        )
    )
    return comparison_table(rows, "Routing before CLIE", name="tab-ols-table-v", paper="V")


def table_xii_panels(table: pd.DataFrame) -> object:
    first = table[table["run"] == 1]
    panels = {
        name: first.pivot_table(
            index="trajectory", columns="Ts (ms)", values=column, aggfunc="first"
        )
        for name, column in (("κ", "κ"), ("route", "route"), ("ε", "ε"))
    }
    frame = pd.concat(panels, axis=1)
    frame.columns = [f"{name}, {ts} ms" for name, ts in frame.columns]
    return numbered(
        frame,
        "First panels: κ, route and ε per condition (first executions, twin)",
        "tab-ols-table-xii-first",
        digits=4,
        paper="XII",
    )


def kappa_against_paper(table: pd.DataFrame) -> object:
    first = table[table["run"] == 1]
    n, whole = len(first), paper("identification_condition_count").value
    why = Why.twin(
        "the twin's records differ from the arm's in noise and in length (our command files are shorter, "
        'chapter "Excitation"), both of which move κ'
    )
    if n != whole:
        why = why + Why.profile(f"{n} of the paper's {whole:g} conditions")
    rows = [
        Comparison("κ over the conditions", "kappa_range_all", first["κ"].values, why=why),
        Comparison(
            "conditions with κ above 100",
            "kappa_over_100_count",
            Count(int((first["κ"] > 100).sum()), n),
            paper_whole="identification_condition_count",
            why=why,
        ),
    ]
    for name in ("AP01", "AG02"):
        match = first[(first["trajectory"] == name) & (first["Ts (ms)"] == 40)]
        if len(match):
            r = match.iloc[0]
            rows.append(
                Comparison(
                    f"κ of {name} at 40 ms (Table XVII; route {r['route']})",
                    f"{name.lower()}_kappa_40ms",
                    r["κ"],
                    why=Why.twin("the twin's record, not the arm's"),
                )
            )
    return comparison_table(
        rows, "Conditioning over the conditions, and Table XVII", name="tab-ols-kappa"
    )
