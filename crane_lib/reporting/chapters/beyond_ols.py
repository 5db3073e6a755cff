"""The view of the chapter "Beyond OLS": the records of `export.beyond_ols` (OLS,
error-covariance WLS, dual-metric WLS with and without the rescue's Theta_r constraints on each
condition, and the invariance test) as the chapter's tables and figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from crane_lib.errors import InputError
from crane_lib.export.beyond_ols import LABELS, TS, invariance_path, record_path, trajectories
from crane_lib.records import read_json_record
from crane_lib.reporting.tables import ResultTable, numbered

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
    """The invariance test's record (the same motion fitted in three charts)."""
    path = invariance_path(directory)
    if not path.is_file():
        raise InputError(
            str(path),
            "no invariance record",
            "the record written by `make book` (crane_book.pipeline, step 'beyond OLS')",
        )
    return read_json_record(path)


def invariance_frame(record: dict) -> pd.DataFrame:
    """One row per (chart, method): relative change and residual RMS in radians."""
    return pd.DataFrame(record["rows"]).set_index(["chart", "method"])


def ranking(frame: pd.DataFrame, column: str) -> pd.Series:
    """Per trajectory, the method with the smallest value of `column`."""
    return frame[column].unstack("method").idxmin(axis=1)


# significant digits per column of the chapter's tables
DIGITS = {
    "held-out RMSE (N·m)": 4,
    "held-out MNE (%)": 3,
    "audit λmin (kg·m²)": 3,
    "median parameter error (%)": 3,
    "mean tr M / truth's": 3,
    "solve time (s)": 2,
}


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
