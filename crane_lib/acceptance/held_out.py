"""The held-out score of a model on validation recordings (paper Sec. VI-C metrics): each
recording preprocessed at the model's sampling interval, its RMSE and MNE, and the RMSE pooled
over all of them. What `crane-id accept --validation` and the new-recording notebook report.
The scores chapter 08 and the claims share: per-axis errors (Table XX), the torque shares
(Table XVI), every candidate's held-out RMSE against κ (Sec. VII-B).

And the twin's held-out data set: "every execution" of a validation trajectory is every
execution the profile records (papermill_params/recordings_<profile>.csv), three of each in the
full profile, one in the quick profile; a missing recording is an InputError naming the file and
the step that makes it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from crane_lib.acceptance import selection
from crane_lib.errors import InputError
from crane_lib.identification import metrics
from crane_lib.identification.metrics import PredictionError, pooled_rmse, prediction_error
from crane_lib.logs.preprocessing import cached_bundles, preprocess
from crane_lib.logs.raw_log import RawLog
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.paper_numbers import paper
from crane_lib.paths import recording_path
from crane_lib.twin import dataset

VALIDATION_TRAJECTORIES = ("V01", "V02", "V03")


@dataclass
class HeldOut:
    names: list[str]  # one per recording (its file name)
    errors: list[PredictionError]
    pooled_rmse: float  # N·m, over every axis and sample of every recording

    def rows(self) -> list[dict]:
        """One row per held-out recording: samples, RMSE (N·m) and MNE."""
        return [
            {"recording": n, "samples": e.n_samples, "RMSE [N·m]": e.rmse, "MNE": e.mne}
            for n, e in zip(self.names, self.errors)
        ]


def held_out(beta, logs: list[RawLog], ts: float, model: DynamicModel | None = None) -> HeldOut:
    """Prediction errors of the base parameters `beta` on each validation log at interval `ts`."""
    model = shared_model("reduced") if model is None else model
    bundles = [preprocess(log, ts) for log in logs]
    names = [
        log.path.name if log.path is not None else f"recording {k + 1}"
        for k, log in enumerate(logs)
    ]
    return HeldOut(
        names,
        [prediction_error(model, beta, b) for b in bundles],
        pooled_rmse(model, beta, bundles),
    )


# ----------------------------------------------------------------------------- the twin's data set


def validation_executions(profile: str) -> list[tuple[str, int]]:
    """(trajectory, run) of every execution of V01-V03 the profile records, in file order."""
    return [
        (e.trajectory, e.run)
        for e in dataset.executions(profile)
        if e.trajectory in VALIDATION_TRAJECTORIES
    ]


def identification_executions(profile: str, run: int = 1) -> list[str]:
    """The identification trajectories the profile records (execution `run`), in file order."""
    return [
        e.trajectory
        for e in dataset.executions(profile)
        if e.trajectory not in VALIDATION_TRAJECTORIES and e.run == run
    ]


def recorded_bundle(trajectory: str, run: int, ts: float, profile: str):
    """The bundle of one execution at `ts`; a missing recording names the file and the make step."""
    path = recording_path(trajectory, run)
    if not path.is_file():
        raise InputError(
            str(path),
            f"no recording of {trajectory} run {run}",
            "the twin's recording written by `python -m crane_lib.twin.dataset "
            f"--profile {profile}` (the first step of `make book`)",
        )
    return cached_bundles(path, (float(ts),))[float(ts)]


def heldout_bundles(profile: str, ts: float = 0.040) -> dict[tuple[str, int], object]:
    """{(trajectory, run): bundle} for every execution of V01-V03 in the profile."""
    executions = validation_executions(profile)
    if not executions:
        raise InputError(
            f"papermill_params/recordings_{profile}.csv",
            "no execution of V01-V03",
            "the validation trajectories",
        )
    return {(v, run): recorded_bundle(v, run, ts, profile) for v, run in executions}


# ------------------------------------------------------------------- scores (chapter 08, claims)

K_COLUMN = (
    f"k ≥ {metrics.K_GE_MOVING}"  # Table XVI's share of samples with at least k arm joints moving
)
HAND_AXIS = 8
CANDIDATES = int(paper("id_candidate_count").value)  # the paper's identification trajectories


def per_axis_errors(model: DynamicModel, beta, bundles: dict) -> pd.DataFrame:
    """One row per (record, execution, axis): RMSE (N·m), peak-to-peak measured torque (N·m) and
    their ratio."""
    rows = []
    for (record, run), bundle in bundles.items():
        error = metrics.prediction_error(model, beta, bundle)
        for axis in range(len(error.per_axis_rmse)):
            rows.append(
                {
                    "record": record,
                    "run": run,
                    "axis": axis + 1,
                    "RMSE": error.per_axis_rmse[axis],
                    "peak-to-peak": error.peak_to_peak[axis],
                    "relative": error.relative[axis],
                }
            )
    return pd.DataFrame(rows)


def table_xvi(
    model: DynamicModel, beta, bundles: dict[str, object], roles: dict[str, str]
) -> pd.DataFrame:
    """Table XVI under one model: per record, the shares of predicted-torque RMS (inertia term,
    velocity terms, both, gravity), the residual's share of measured torque RMS, the share of
    samples with at least K_GE_MOVING arm joints moving, and the most arm joints moving at once."""
    rows = []
    for label, bundle in bundles.items():
        shares = metrics.torque_shares(model, beta, bundle)
        counts = metrics.moving_joint_counts(bundle.dtheta)
        rows.append(
            {
                "record": label,
                "role": roles[label],
                "samples": shares.n_samples,
                "M θ̈": shares.inertia,
                "velocity terms": shares.velocity,
                "both": shares.both,
                "gravity": shares.gravity,
                "residual": shares.residual,
                K_COLUMN: metrics.share_moving_at_least(bundle.dtheta),
                "most arm joints moving": int(counts.max()),
                "peak joint speed (rad/s)": float(np.abs(bundle.dtheta[:, :7]).max()),
            }
        )
    return pd.DataFrame(rows).set_index("record")


def candidate_heldout(
    model: DynamicModel, records: list[dict], heldout: list, ts: float = 0.040, run: int = 1
) -> pd.DataFrame:
    """The candidates at `ts` (execution `run`) from condition records that carry an OLS
    estimate and kappa: kappa(W_all) and the pooled held-out RMSE of the OLS estimate on
    `heldout` (the bundles of V01-V03), scored as Table VIII scores its OLS column."""
    rows = []
    for r in records:
        if r.get("run", 1) != run or not np.isclose(r["ts"], ts) or r.get("ols") is None:
            continue
        rows.append(
            {
                "trajectory": r["trajectory"],
                "kappa": float(r["kappa"]),
                "held-out RMSE": metrics.pooled_rmse(model, np.asarray(r["ols"]), heldout),
            }
        )
    frame = pd.DataFrame(rows, columns=["trajectory", "kappa", "held-out RMSE"])
    return frame.sort_values("trajectory").set_index("trajectory")


def kappa_against_heldout(
    candidates: pd.DataFrame, two_digit: float = selection.TWO_DIGIT_KAPPA
) -> dict:
    """Sec. VII-B: Spearman's rho of kappa against held-out RMSE over all candidates and over
    those with kappa below `two_digit` (None where fewer than three points)."""
    subset = candidates[candidates["kappa"] < two_digit]
    return {
        "all": selection.rank_correlation(candidates["kappa"], candidates["held-out RMSE"]),
        "two-digit": selection.rank_correlation(subset["kappa"], subset["held-out RMSE"]),
        "n_two_digit": int(len(subset)),
    }


def table_xx(per_axis: pd.DataFrame) -> pd.DataFrame:
    """Table XX: per axis, the RMSE on each record (mean over its executions), the peak-to-peak
    measured torque averaged over the records, and the relative error averaged over the records."""
    by_record = per_axis.groupby(["axis", "record"])[["RMSE", "peak-to-peak", "relative"]].mean()
    wide = by_record["RMSE"].unstack("record")
    wide.columns = [f"RMSE {c}" for c in wide.columns]
    wide["RMSE, mean over records"] = by_record["RMSE"].groupby("axis").mean()
    wide["peak-to-peak, mean"] = by_record["peak-to-peak"].groupby("axis").mean()
    wide["relative, mean"] = by_record["relative"].groupby("axis").mean()
    return wide


@dataclass(frozen=True)
class Claim:
    """One of the paper's statements about a table, with what this book computes for it."""

    claim: str
    paper: str
    book: str
    holds: bool


def _axis_at(series: pd.Series, which: str) -> int:
    return int(series.idxmax() if which == "max" else series.idxmin())


def ordering_claims(table: pd.DataFrame) -> list[Claim]:
    """Sec. VI-C and E-A's orderings of Table XX, checked on `table_xx(...)`."""
    rmse, relative, p2p = (
        table["RMSE, mean over records"],
        table["relative, mean"],
        table["peak-to-peak, mean"],
    )
    relative_rank = relative.rank(ascending=False, method="min").astype(int)
    p2p_ratio = p2p.loc[2] / p2p.loc[6]
    rmse_ratio = rmse.loc[2] / rmse.loc[6]
    largest, smallest = _axis_at(rmse, "max"), _axis_at(rmse, "min")
    rel_largest, rel_smallest = _axis_at(relative, "max"), _axis_at(relative, "min")
    return [
        Claim("largest absolute error", "axis 2", f"axis {largest}", largest == 2),
        Claim(
            "smallest absolute error",
            "the hand (axis 8)",
            f"axis {smallest}",
            smallest == HAND_AXIS,
        ),
        Claim("largest relative error", "axis 7", f"axis {rel_largest}", rel_largest == 7),
        Claim("smallest relative error", "axis 1", f"axis {rel_smallest}", rel_smallest == 1),
        Claim(
            "rank of axis 6 by relative error",
            f"{paper('axis6_rel_error_rank').text()} of {len(relative)}",
            f"{relative_rank.loc[6]} of {len(relative)}",
            relative_rank.loc[6] == int(paper("axis6_rel_error_rank").value),
        ),
        Claim(
            "from axis 2 to axis 6 the torque range falls more than the error (part of the "
            "residual does not scale)",
            f"range ÷ {paper('torque_range_ratio_ax2_ax6').text()}, error ÷ "
            f"{paper('error_ratio_ax2_ax6').text()}",
            f"range ÷ {p2p_ratio:.3g}, error ÷ {rmse_ratio:.3g}",
            bool(p2p_ratio > rmse_ratio),
        ),
    ]


def rescue_moves(record: dict) -> pd.DataFrame:
    """What the rescue changed: per parameter, accepted minus CLIE solution and that change in OLS
    standard errors, largest first (empty when no rescue ran)."""
    change = np.asarray(record["parameters"]) - np.asarray(record["refined"])
    frame = pd.DataFrame(
        {"change": change, "change / SE": change / np.asarray(record["std_errors"])},
        index=pd.Index(record["names"], name="parameter"),
    )
    frame = frame[frame["change"] != 0]
    return frame.loc[frame["change / SE"].abs().sort_values(ascending=False).index]
