"""The views of the chapter "Beyond OLS". The records (OLS, error-covariance WLS, dual-metric
WLS with and without the rescue's Theta_r constraints on each condition, and the invariance
test) are computed by `export.beyond_ols` in a data step of the main job; this module turns them
into the chapter's tables, figures and sentences.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from crane_lib.acceptance import audit, rescue
from crane_lib.errors import InputError
from crane_lib.export import consistent
from crane_lib.export.beyond_ols import (
    DEGREE_CHART,
    LABELS,
    MAX_SAMPLES,
    TS,
    WARP_AMPLITUDE,
    WARPED_CHART,
    WELL_DETERMINED_T,
    invariance_path,
    record_path,
    trajectories,
)
from crane_lib.records import read_json_record
from crane_lib.reporting.tables import ResultTable, numbered, significant

# ----------------------------------------------------------------------------- the chapter's views


def load_records(profile: str, directory=None) -> list[dict]:
    """The condition records of the profile's Table VIII trajectories, in Table VIII order."""
    out = []
    for trajectory in trajectories(profile):
        path = record_path(trajectory, directory=directory)
        if not path.is_file():
            raise InputError(
                str(path),
                "no Beyond-OLS record",
                "the record written by `make book` (crane_book.pipeline, step 'beyond OLS')",
            )
        out.append(read_json_record(path))
    return out


def comparison_frame(records: list[dict]) -> pd.DataFrame:
    """One row per (trajectory, method): held-out RMSE and MNE, audit, parameter error, time."""
    rows = []
    for record in records:
        for row in record["rows"]:
            rows.append(
                {
                    "trajectory": record["trajectory"],
                    "method": row["method"],
                    "held-out RMSE (N·m)": row["heldout_rmse"],
                    "held-out MNE (%)": 100 * row["heldout_mne"],
                    "audit passed": row["audit_passed"],
                    "audit λmin (kg·m²)": row["audit_lambda_min"],
                    "median parameter error (%)": 100 * row["parameter_error_median"],
                    "mean tr M / truth's": row["trace_ratio"],
                    "solve time (s)": row["solve_time_s"],
                    "samples": row["samples"],
                }
            )
    return pd.DataFrame(rows).set_index(["trajectory", "method"])


def load_invariance(directory=None) -> dict:
    path = invariance_path(directory)
    if not path.is_file():
        raise InputError(
            str(path),
            "no invariance record",
            "the record written by `make book` (crane_book.pipeline, step 'beyond OLS')",
        )
    return read_json_record(path)


def invariance_frame(record: dict) -> pd.DataFrame:
    return pd.DataFrame(record["rows"]).set_index(["chart", "method"])


def consistent_sentence(record: dict, rows: pd.DataFrame) -> str:
    """What the consistent-links variant did on this condition, from its record ("" when it did not run)."""
    row = next((r for r in record["rows"] if r["method"] == LABELS["dual-metric+consistent"]), None)
    if row is None:
        return ""
    plain = rows.loc[LABELS["dual-metric"], "held-out RMSE (N·m)"]
    binding = (
        row["link_margin_min"] < 1.1 * consistent.MARGIN
    )  # at the margin, to the solver's precision
    return (
        f"Requiring consistent links {'binds' if binding else 'does not bind'} (smallest link pseudo-inertia eigenvalue "
        f"{row['link_margin_min']:.2g} kg·m², margin {consistent.MARGIN:g}; β = Kφ to {row['base_mismatch']:.1g}); its held-out RMSE is "
        f"{row['heldout_rmse']:.4f} N·m against {plain:.4f} N·m for the plain dual-metric fit."
    )


def ranking(frame: pd.DataFrame, column: str) -> pd.Series:
    """Per trajectory, the method with the smallest value of `column`."""
    return frame[column].unstack("method").idxmin(axis=1)


# ----------------------------------------------------------------------------- the chapter's sentences

# significant digits per column of the chapter's tables
DIGITS = {
    "held-out RMSE (N·m)": 4,
    "held-out MNE (%)": 3,
    "audit λmin (kg·m²)": 3,
    "median parameter error (%)": 3,
    "mean tr M / truth's": 3,
    "solve time (s)": 2,
}


def representative_sentence(record: dict, frame: pd.DataFrame, trajectory: str) -> str:
    """What the table of the representative condition shows, generated from its record: samples,
    held-out RMSE against OLS, audit verdicts, Theta_r and the consistent-links row."""
    rows = frame.loc[trajectory]
    rmse = rows["held-out RMSE (N·m)"]
    dm, ols = rows.loc[LABELS["dual-metric"]], rows.loc[LABELS["ols"]]
    dm_rmse, ols_rmse = dm["held-out RMSE (N·m)"], ols["held-out RMSE (N·m)"]
    failed = rows.index[~rows["audit passed"].astype(bool)]
    text = (
        f"On {trajectory} the dual-metric fit used {record['samples_dual_metric']:,} of the record's "
        f"{record['samples_record']:,} samples. Its held-out RMSE is {significant(dm_rmse)} N·m, "
        f"{'lower' if dm_rmse < ols_rmse else 'higher'} than OLS's {significant(ols_rmse)} N·m "
        f"({100 * (dm_rmse / ols_rmse - 1):+.1f} %); the lowest of the {len(rmse)} is {rmse.idxmin()}, "
        f"the highest {rmse.idxmax()}. The dual-metric SDP took {dm['solve time (s)']:.1f} s against "
        f"{ols['solve time (s)']:.2f} s for OLS. "
        + (
            "Every estimate passes the audit over Θ. "
            if not len(failed)
            else f"Audit failures: {', '.join(failed)}. "
        )
        + theta_r_sentence(record)
        + (
            "The plain dual-metric estimate already has M ⪰ εI on all of Θr, so the Θr constraints are inactive "
            "and the Θr row is the same solution. "
            if record["theta_r_inactive"]
            else "The plain dual-metric estimate falls below ε on Θr, and the constrained program moves it. "
        )
        + f"Well determined means an OLS t-ratio |β̂|/SE of at least {WELL_DETERMINED_T:g}: "
        f"{len(record['well_determined'])} of the {len(record['names'])} parameters on this record. "
        + consistent_sentence(record, rows)
    )
    return text


def theta_r_sentence(record: dict) -> str:
    """The size of Theta_r and the margin epsilon the record's constrained fit used."""
    corners = len(audit.box_corners())
    total = record["theta_r_poses"]
    split = (
        f" ({rescue.RESCUE_RANDOM_POSES:,} uniform poses over Θ and its {corners} corners, the rescue's initial set)"
        if total == rescue.RESCUE_RANDOM_POSES + corners
        else ""
    )
    return f"Θr has {total:,} poses{split} and ε = {record['epsilon']:g} kg·m². "


def across_sentence(frame: pd.DataFrame, records: list[dict]) -> str:
    """Which estimator wins where, across the profile's Table VIII trajectories."""
    wins = ranking(frame, "held-out RMSE (N·m)").value_counts()
    closest = ranking(frame, "median parameter error (%)").value_counts()
    inactive = sum(r["theta_r_inactive"] for r in records)
    return (
        f"Lowest held-out RMSE, per trajectory: {', '.join(f'{m} on {n}' for m, n in wins.items())} of {len(records)}. "
        f"Closest to the twin's truth on the well-determined parameters: "
        f"{', '.join(f'{m} on {n}' for m, n in closest.items())}. "
        f"The Θr constraints were inactive on {inactive} of {len(records)} trajectories. "
        f"{int(frame['audit passed'].sum())} of {len(frame)} estimates pass the audit."
    )


def representative_table(frame: pd.DataFrame, trajectory: str) -> ResultTable:
    """The four estimators on the representative condition, captioned."""
    return numbered(
        frame.loc[trajectory],
        f"The four estimators on {trajectory} at {TS * 1e3:g} ms (twin): compare "
        "held-out error, the audit's verdict and the parameter error row by row",
        digits=DIGITS,
    )


def across_table(frame: pd.DataFrame) -> ResultTable:
    """The four estimators on every trajectory the profile records, captioned."""
    return numbered(
        frame.drop(columns=["samples"]),
        f"The four estimators on each Table VIII trajectory of this "
        f"build at {TS * 1e3:g} ms (twin, first execution): look for "
        "the lowest held-out RMSE per trajectory",
        digits=DIGITS,
    )


def invariance_table(invariance: pd.DataFrame) -> ResultTable:
    """Each estimate's change when the motion is measured in another chart, captioned."""
    return numbered(
        invariance,
        "The same motion in two other charts of the joint coordinates: a coordinate-free "
        "estimator's relative change stays at rounding level",
        digits={"relative change": 3, "RMSE in radians (N·m)": 5},
    )


def rmse_figure(frame: pd.DataFrame, profile: str):
    """Held-out RMSE per trajectory and estimator, as bars."""
    figure, ax = plt.subplots(figsize=(7, 3))
    rmse_by = frame["held-out RMSE (N·m)"].unstack("method")
    rmse_by[[m for m in LABELS.values() if m in rmse_by]].plot.bar(ax=ax, rot=0)
    ax.set_ylabel("held-out RMSE on V01–V03 (N·m)")
    ax.set_title(
        f"Twin recordings ({profile} profile), {TS * 1e3:g} ms: held-out RMSE per estimator"
    )
    ax.legend(fontsize=7)
    return figure


def size_sentence(frame: pd.DataFrame, records: list[dict]) -> str:
    """The estimates' inertia along the record against the truth's, OLS against the dual metric."""
    ratio = frame["mean tr M / truth's"].unstack("method")
    ols, dm = ratio[LABELS["ols"]], ratio[LABELS["dual-metric"]]
    return (
        f"Mean trace of M along each record over the truth's: OLS {significant(ols.min(), 3)}–"
        f"{significant(ols.max(), 3)}, dual-metric WLS {significant(dm.min(), 3)}–{significant(dm.max(), 3)} "
        f"across the {len(records)} trajectories; the dual-metric estimate's inertia is the larger on "
        f"{int((dm > ols).sum())} of them."
    )


def invariance_sentence(invariance: pd.DataFrame) -> str:
    """How far each estimate moved under the two charts, from the invariance record."""
    moved = invariance["relative change"].unstack("method").drop(index="joint radians")
    wls = moved[LABELS["wls"]]
    return (
        f"The warped chart's amplitude is a = {WARP_AMPLITUDE:g}. Across both charts the dual-metric estimate "
        f"moved at most {significant(moved[LABELS['dual-metric']].max(), 2)} (relative), the solver's tolerance; "
        f"OLS moved up to {significant(moved[LABELS['ols']].max(), 2)}. Error-covariance WLS moved "
        f"{significant(wls[DEGREE_CHART], 2)} under the constant rescaling (its per-axis weights undo it, "
        f"except through the OLS pass that sets them) and {significant(wls[WARPED_CHART], 2)} under the "
        "configuration-dependent chart, which no constant weight can undo. The same test, on synthetic "
        "data, is a unit test (`tests/test_dual_metric.py`)."
    )


def cap_sentence() -> str:
    """The sample cap of the dual-metric fits per profile (MAX_SAMPLES)."""
    parts = [
        f"at most {n:,} evenly spaced samples of a record in the {p} profile"
        if n
        else f"every sample in the {p} profile"
        for p, n in MAX_SAMPLES.items()
    ]
    return f"The dual-metric fits see {' and '.join(parts)}."
