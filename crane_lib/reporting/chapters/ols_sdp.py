"""Chapter "OLS and the conditional SDP projection" (paper Sec. III-D, IV-A, IV-B, VI-B,
Appendix D-D, D-E; Tables III, V, XII's first panels and XVII): tables and figures of one
condition's OLS fit, routing test and projection, the torque shares and nested model classes the
page computes, and the summary over the condition records the sweep wrote."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.identification import condition as identify
from crane_lib.identification import model_classes
from crane_lib.paper_numbers import paper
from crane_lib.reporting.chapters import profile
from crane_lib.reporting.tables import Comparison, Count, Why, comparison_table, numbered

# Table III's fitting trajectories (register: the text names none)
TABLE_III_TRAJECTORIES = model_classes.TABLE_III_TRAJECTORIES
VALIDATION = ("V01", "V02", "V03")
SETS = ("reduced", "reduced+poi", "reduced+coulomb", "full")


def condition_label(trajectory: str, ts: float) -> str:
    """'AG02 at 40 ms': how tables and figures name a condition."""
    return f"{trajectory} at {ts * 1e3:g} ms"


def condition_record(trajectory: str, ts: float, run: int) -> dict:
    """The OLS/SDP sweep's record of one condition (its OLS fit, routing test and projection)."""
    return next(
        r
        for r in identify.load_condition_records(profile=profile())
        if (r["trajectory"], round(r["ts"] * 1e3), r["run"]) == (trajectory, round(ts * 1e3), run)
    )


def projected_condition(records: pd.DataFrame, trajectory: str, ts: float, run: int) -> tuple:
    """The condition whose projection (8) the page shows: the named one if it took route O-S-C,
    else the build's first O-S-C condition at the named interval (or at any); None if none."""
    projected = records[records["route"] == identify.ROUTE_PROJECTED]
    named = projected[
        (projected["trajectory"] == trajectory)
        & (projected["Ts (ms)"] == round(ts * 1e3))
        & (projected["run"] == run)
    ]
    same_ts = projected[projected["Ts (ms)"] == round(ts * 1e3)]
    for rows in (named, same_ts, projected):
        if len(rows):
            r = rows.iloc[0]
            return r["trajectory"], r["Ts (ms)"] / 1e3, int(r["run"])
    return None


def estimates_table(fit, truth, label: str) -> object:
    """The OLS estimates with their standard errors beside the twin's true base parameters
    (`truth`: a ParameterSet in the same order)."""
    frame = pd.DataFrame(
        {
            "OLS": fit.parameters.values,
            "std. error": fit.parameters.std_errors,
            "|estimate| / std. error": fit.t_ratio,
            "twin truth": truth.values,
        },
        index=pd.Index(fit.parameters.names, name="parameter"),
    )
    caption = "OLS estimates of " + label
    return numbered(
        frame,
        caption + " with their standard errors, and the twin's true base parameters",
        "tab-ols-estimates",
        digits=4,
    )


def ladder_table(projection, label: str) -> object:
    """The ε ladder of one projection (8): per margin the solver's status, PD on the record,
    λmin on the record, the change and the poses the last solve carried."""
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
            for a in projection.attempts
        ]
    ).set_index("ε (kg·m²)")
    return numbered(frame, "The ε ladder on Θc for " + label, "tab-ols-ladder", digits=3)


def lambda_figure(panels: dict):
    """λmin of M along records, one panel per condition (title -> (t in s, {line: values}))."""
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.6 * len(panels)), squeeze=False)
    for ax, (title, (t, curves)) in zip(axes[:, 0], panels.items()):
        for name, values in curves.items():
            ax.plot(t, values, lw=0.8, label=name)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("λmin(M) (kg·m²)")
        ax.set_title(title + ", twin recording: λmin of M along the record")
        ax.legend()
    fig.tight_layout()
    return fig


def torque_shares_against_paper(shares: dict, label: str) -> object:
    """Sec. III-D: the RMS of each torque contribution of the full grouped model's OLS fit
    against the total torque RMS (model_classes.full_model_torque_shares), beside the paper."""
    why = Why.twin(
        "the twin's unmodelled effects (quantization, compliance, Coulomb, supply limit) set the "
        "residual"
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
        "Share of the torque RMS, full grouped model fitted by OLS to " + label,
        label="contribution",
        name="tab-ols-torque-shares",
    )


# ----------------------------------------------------------------------------- Table III


def model_classes_tables(classes: list[dict], heldout_ts: float) -> tuple[object, object]:
    """Table III from the page's fits (model_classes.compare_model_classes: one row per class and
    trajectory): pooled held-out RMSE on V01-V03, and the paper's statements about it."""
    classes = pd.DataFrame(classes)
    available = [t for t in TABLE_III_TRAJECTORIES if t in set(classes["trajectory"])]
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
        "the twin's links carry real products of inertia (the description's) and exact "
        "set-valued Coulomb friction on every axis; the Coulomb columns therefore remove a "
        "real bias, while no trajectory identifies the "
        "products of inertia (their estimates miss the true ones by several times their size, "
        "claim poi_removal on the claims page), so the 18 columns absorb unmodelled torque and "
        "help or hurt a held-out record by chance"
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
    """One row per condition record the OLS/SDP sweep wrote (results/conditions) for the build's
    profile."""
    records = identify.load_condition_records(profile=profile())
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


def table_v_against_paper(table: pd.DataFrame) -> object:
    """Table V: how many conditions pass the routing test, beside the paper's counts."""
    n, whole = len(table), paper("identification_condition_count").value
    non_pd, pd_ = int((table["PD"] == False).sum()), int((table["PD"] == True).sum())  # noqa: E712 (None: not identified)
    subset = Why.profile(f"{n} of the paper's {whole:g} conditions") if n != whole else None
    share = (
        Why.twin(
            "the routing test looks only at the configurations the record visited, and the "
            "twin's estimates, where they are not PD, lose definiteness away from those (chapter "
            '06, "PD where the data were taken against PD over Θ", counts the estimates that '
            "pass here and fail over Θ); the arm's estimates failed at their own configurations "
            'already, for a reason the register leaves open ("Why fewer OLS estimates fail the '
            'routing test than on the arm")'
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
    """Table XII's first panels: κ, route and ε per trajectory and interval (first executions)."""
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


def table_xvii(table: pd.DataFrame, ts_ms: int = 40) -> object:
    """Table XVII: AP01 against AG02 at the paper's interval by κ, route and SDP margin ε
    (first executions; ε only on route O-S-C)."""
    first = table[(table["run"] == 1) & (table["Ts (ms)"] == ts_ms)]
    frame = first[first["trajectory"].isin(["AP01", "AG02"])].set_index("trajectory")
    frame = frame.reindex([t for t in ("AP01", "AG02") if t in frame.index])
    frame = frame[["κ", "route", "ε"]].rename(columns={"ε": "ε (kg·m²)"})
    return numbered(
        frame,
        "AP01 against AG02 at " + format(ts_ms) + " ms: regressor condition number, route and "
        "SDP margin (first executions, twin)",
        "tab-ols-table-xvii",
        digits=4,
        paper="XVII",
    )


def kappa_against_paper(table: pd.DataFrame) -> object:
    """κ over the conditions and Table XVII's AP01 and AG02 at 40 ms, beside the paper."""
    first = table[table["run"] == 1]
    n, whole = len(first), paper("identification_condition_count").value
    why = Why.twin(
        "the twin's records differ from the arm's in noise and in length (our command files are "
        "shorter, "
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
