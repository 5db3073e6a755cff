"""What reproduces between executions of one command file, and what a processing choice changes
(paper Sec. V-B, VII-D, Appendix E-B; Table XI and Fig. 10).

The repeats sweep (`refit_execution` once per row of `papermill_params/repeats_<profile>.csv`,
through the book's condition notebook) refits every execution through the pipeline's own
functions: preprocessing to the condition's interval, OLS -> routing test -> SDP projection
(`identification.condition.identify_condition`), optionally a refinement
(`identification.refinement.refine_condition`), then scores the OLS estimate on the held-out
records and audits it over Theta (`acceptance.audit`, dense pose set, seed AUDIT_SEED). One
record per execution and interval (`crane_lib.records`). The functions below turn those records
into the paper's measures:

* Table XI: per repeated trajectory, the executions, samples per axis at 40 ms and the spread
  of held-out RMSE across executions, (largest - smallest) / mean;
* parameter reproducibility of two executions: the relative difference |b - a| / |a| of each
  parameter (a = the first execution's estimate) against its t-ratio |a| / s.e.(a);
* the cross-execution loss: a model fitted on execution i evaluated on the record of execution
  j, its RMSE relative to j's own fit;
* audit-verdict stability: verdict and margin of every execution at every interval;
* the sampling-interval ladder (Fig. 10): in-sample residual and held-out RMSE of the OLS fit
  against the interval, read from the OLS/SDP sweep's condition records, and the ramp-sample
  criterion (at least three samples on every acceleration ramp) on the command files.

Every reading of the paper these choices make is argued in book/register_reproducibility.md.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from crane_lib import fingerprint
from crane_lib.acceptance import audit
from crane_lib.acceptance.selection import MIN_RAMP_SAMPLES, coarsest_adequate_interval
from crane_lib.errors import InputError
from crane_lib.excitation.commands import read_command_file, segment_statistics
from crane_lib.excitation.design import trajectory_specs
from crane_lib.identification import metrics
from crane_lib.identification.condition import condition_bundle, identify_condition
from crane_lib.identification.refinement import REFINE_CHOICES, refine_condition
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.paths import PAPERMILL_PARAMS_DIR, RESULTS_DIR, TRAJECTORY_DIR, recording_path
from crane_lib.records import read_json_record, read_json_records, write_json_record
from crane_lib.twin import dataset

REPEATS_DIR = RESULTS_DIR / "repeats"
HELDOUT = (
    "V01",
    "V02",
    "V03",
)  # scored exactly as Table VIII: pooled RMSE over the three, first execution each
HELDOUT_TS = 0.040
AUDIT_SEED = 1
TABLE_XI_TS = 0.040
# Fig. 10's six trajectories are not named by the text: the five repeated ones of Table XI and PA01,
# which completes the three posture families (register, "the six trajectories of the ladder")
LADDER_TRAJECTORIES = ("AG02", "PA01", "PB01", "PC01", "AP01", "AP03")
INTERVALS = (0.010, 0.020, 0.040, 0.080)


# ----------------------------------------------------------------------------- the sweep's records


def record_path(trajectory: str, ts: float, run: int, refine: str = "none", directory=None) -> Path:
    """One record per execution, interval and refinement (profiles that refine differently do not
    share a file)."""
    return (
        Path(REPEATS_DIR if directory is None else directory)
        / f"{trajectory}_run{int(run)}_{round(ts * 1e3):02d}ms_{refine}.json"
    )


def heldout_bundles(ts: float = HELDOUT_TS) -> list:
    """The held-out recordings' bundles at interval `ts` (s), first execution."""
    return [condition_bundle(name, ts, 1) for name in HELDOUT]


def heldout_inputs() -> list[Path]:
    """The recordings every repeat condition reads besides its own (for the sweep's cache key)."""
    return [recording_path(name, 1) for name in HELDOUT]


def refit_execution(
    trajectory: str,
    run: int,
    ts: float,
    refine: str = "none",
    model: DynamicModel | None = None,
    heldout=None,
    audit_seed: int = AUDIT_SEED,
) -> dict:
    """One execution at one interval through the pipeline; the record the repeats sweep writes
    (`refit_bundle` on the execution's bundle, its log's digest added)."""
    if refine not in REFINE_CHOICES:
        raise InputError("refine", repr(refine), f"one of {', '.join(REFINE_CHOICES)}")
    log_path = recording_path(trajectory, run)
    bundle = condition_bundle(trajectory, ts, run)
    record = refit_bundle(
        bundle,
        trajectory,
        run,
        heldout_bundles() if heldout is None else heldout,
        model,
        audit_seed,
        refine=refine,
        log_path=log_path,
    )
    record["log_sha256"] = fingerprint.file_digest(log_path)
    return record


def refit_bundle(
    bundle,
    trajectory: str,
    run: int,
    heldout,
    model: DynamicModel | None = None,
    audit_seed: int = AUDIT_SEED,
    audit_kind: str = "dense",
    refine: str = "none",
    log_path=None,
) -> dict:
    """OLS with standard errors, kappa, samples and in-sample residual; the routing test and route
    (with the projection on route O-S-C, as the pipeline runs it); held-out RMSE and mean MNE of the
    OLS estimate; its audit over Theta; with `refine` other than "none" (which needs the raw log at
    `log_path`), the refined estimate and its held-out RMSE. A condition that cannot be identified
    is a record with its `failure` (the sweep goes on)."""
    model = shared_model("reduced") if model is None else model
    result = identify_condition(bundle, trajectory, model, run=run)
    record = result.record()
    record["refine"] = refine
    if result.ols is None:
        return record
    beta = result.ols.parameters.values
    record["heldout"] = _heldout_scores(model, beta, heldout)
    found = audit.audit(beta, audit_seed, audit_kind, model)
    record["audit"] = {
        "seed": audit_seed,
        "kind": audit_kind,
        "passed": found.passed,
        "lambda_min": found.lambda_min,
        "n_violations": found.n_violations,
        "worst_pose_rad": found.worst_pose.tolist(),
    }
    if refine != "none" and result.start is not None:
        refined, report = refine_condition(log_path, result, refine)
        record["refined"] = {
            "method": refine,
            "values": refined.values.tolist(),
            "heldout": _heldout_scores(model, refined.values, heldout),
            **{
                k: v
                for k, v in report.items()
                if k in ("objective_start", "objective_final", "iterations", "message")
            },
        }
    return record


def _heldout_scores(model: DynamicModel, beta, heldout) -> dict:
    return {
        "records": list(HELDOUT),
        "ts": HELDOUT_TS,
        "rmse": metrics.pooled_rmse(model, beta, heldout),
        "mne": float(np.mean([metrics.prediction_error(model, beta, b).mne for b in heldout])),
    }


def write_record(path, record: dict) -> Path:
    """Write one repeat's record atomically and return its path."""
    return write_json_record(path, record)


def load_record(trajectory: str, ts: float, run: int, refine: str = "none", directory=None) -> dict:
    """The repeats sweep's record of one execution at one interval; a missing one is an
    InputError naming the file and the step that writes it."""
    path = record_path(trajectory, ts, run, refine, directory)
    if not path.is_file():
        raise InputError(
            str(path),
            f"no record of {trajectory} run {run} at {ts * 1e3:g} ms ({refine})",
            "the record the repeats sweep of `make book` writes (crane_book.pipeline)",
        )
    return read_json_record(path)


def load_records(directory=None) -> list[dict]:
    """Every repeat record of the folder (the build's repeats by default)."""
    return read_json_records(REPEATS_DIR if directory is None else directory)


def profile_records(conditions: list[dict], directory=None) -> list[dict]:
    """The repeats records of the listed conditions only (a workspace may hold another
    profile's records too)."""
    listed = {
        (str(c["trajectory"]), int(c["run"]), round(float(c["ts"]) * 1e3), str(c["refine"]))
        for c in conditions
    }
    return [
        r
        for r in load_records(directory)
        if (r["trajectory"], int(r["run"]), round(float(r["ts"]) * 1e3), r.get("refine", "none"))
        in listed
    ]


def records_frame(records: list[dict]) -> pd.DataFrame:
    """One row per record: trajectory, run, ts, n_samples, kappa, in-sample residual, route,
    held-out RMSE and MNE of OLS (and of the refinement where one ran), audit verdict and margin."""
    rows = []
    for r in records:
        row = {
            "trajectory": r["trajectory"],
            "run": int(r["run"]),
            "ts": float(r["ts"]),
            "failure": r.get("failure") or "",
            "n_samples": r.get("n_samples"),
            "kappa": r.get("kappa"),
            "residual_rms": r.get("residual_rms"),
            "route": r.get("route"),
        }
        if "heldout" in r:
            row.update(heldout_rmse=r["heldout"]["rmse"], heldout_mne=r["heldout"]["mne"])
        if "audit" in r:
            row.update(
                audit_passed=r["audit"]["passed"],
                audit_lambda_min=r["audit"]["lambda_min"],
                audit_violations=r["audit"]["n_violations"],
            )
        if "refined" in r:
            row.update(
                refined_method=r["refined"]["method"],
                refined_heldout_rmse=r["refined"]["heldout"]["rmse"],
            )
        rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- bad input


def missing_recordings(conditions: list[dict], profile: str) -> list[str]:
    """A sentence for every execution a conditions file lists that has no recording, naming the step
    that records it (or the line to add to the profile's recordings list first)."""
    listed = {(e.trajectory, e.run) for e in dataset.executions(profile)}
    recordings = PAPERMILL_PARAMS_DIR / f"recordings_{profile}.csv"
    messages, seen = [], set()
    for c in conditions:
        key = (str(c["trajectory"]), int(c["run"]))
        if key in seen or recording_path(*key).exists():
            continue
        seen.add(key)
        if key in listed:
            step = (
                f"record it with `make book PROFILE={profile}` "
                f"(or `python -m crane_lib.twin.dataset --profile {profile}`)"
            )
        else:
            step = (
                f"it is not in {recordings.relative_to(PAPERMILL_PARAMS_DIR.parent)}: add a row "
                f"`{key[0]},{key[1]},<seed>` there, "
                f"then run `make book PROFILE={profile}` (or `python -m crane_lib.twin.dataset "
                f"--profile {profile}`)"
            )
        messages.append(
            f"{key[0]} execution {key[1]} is listed but not recorded ({recording_path(*key)} is "
            f"missing): {step}"
        )
    return messages


# ----------------------------------------------------------------------------- Table XI


def pair_blocks_only(trajectory: str) -> bool:
    """True for a trajectory without a single-joint block (the paper's "short adjacent-pair"
    ones)."""
    return all(block.kind != "S" for block in trajectory_specs()[trajectory].blocks)


def run_to_run_table(
    frame: pd.DataFrame, ts: float = TABLE_XI_TS, column: str = "heldout_rmse"
) -> pd.DataFrame:
    """Table XI: per trajectory with more than one execution at `ts`, the executions, samples per
    axis (smallest and largest), held-out RMSE per execution and its spread (largest - smallest)
    / mean, in percent."""
    at = frame[np.isclose(frame["ts"], ts) & (frame["failure"] == "")].dropna(subset=[column])
    rows = []
    for trajectory, group in at.groupby("trajectory", sort=False):
        if len(group) < 2:
            continue
        group = group.sort_values("run")
        values = group[column].to_numpy(float)
        rows.append(
            {
                "trajectory": trajectory,
                "pair blocks only": pair_blocks_only(trajectory),
                "executions": len(group),
                "samples per axis, min": int(group["n_samples"].min()),
                "samples per axis, max": int(group["n_samples"].max()),
                "held-out RMSE per execution (N·m)": ", ".join(f"{v:.5f}" for v in values),
                "smallest (N·m)": values.min(),
                "largest (N·m)": values.max(),
                "spread (%)": 100.0 * metrics.spread(values).range_relative,
            }
        )
    return pd.DataFrame(rows).set_index("trajectory") if rows else pd.DataFrame()


# ----------------------------------------------------------------------------- two executions


def _pair(
    records: list[dict], trajectory: str, runs: tuple[int, int]
) -> dict[float, tuple[dict, dict]]:
    by = {
        (float(r["ts"]), int(r["run"])): r
        for r in records
        if r["trajectory"] == trajectory and "ols" in r
    }
    return {
        ts: (by[(ts, runs[0])], by[(ts, runs[1])])
        for ts in sorted({ts for ts, _ in by})
        if (ts, runs[0]) in by and (ts, runs[1]) in by
    }


def parameter_differences(
    records: list[dict], trajectory: str = "AG02", runs: tuple[int, int] = (1, 2)
) -> pd.DataFrame:
    """Per interval and parameter: the two OLS estimates, the relative difference |b - a| / |a| (a:
    the
    first execution) and the first execution's t-ratio |a| / s.e.(a), with the second's for
    reference."""
    rows = []
    for ts, (first, second) in _pair(records, trajectory, runs).items():
        a, b = np.array(first["ols"]), np.array(second["ols"])
        se_a, se_b = np.array(first["std_errors"]), np.array(second["std_errors"])
        for i, name in enumerate(first["names"]):
            rows.append(
                {
                    "ts": ts,
                    "parameter": name,
                    "estimate_first": a[i],
                    "estimate_second": b[i],
                    "relative_difference": abs(b[i] - a[i]) / abs(a[i]),
                    "t_ratio_first": abs(a[i]) / se_a[i],
                    "t_ratio_second": abs(b[i]) / se_b[i],
                }
            )
    return pd.DataFrame(rows)


def cross_execution_losses(
    records: list[dict],
    trajectory: str = "AG02",
    runs: tuple[int, int] = (1, 2),
    model: DynamicModel | None = None,
) -> pd.DataFrame:
    """Per interval and direction: RMSE of the model fitted on execution i over the record of
    execution j
    (the same interval's bundle), and its loss relative to j's own fit, (cross / own - 1), %."""
    model = shared_model("reduced") if model is None else model
    rows = []
    for ts, pair in _pair(records, trajectory, runs).items():
        fits = {int(r["run"]): np.array(r["ols"]) for r in pair}
        for own in runs:
            bundle = condition_bundle(trajectory, ts, own)
            own_rmse = metrics.prediction_error(model, fits[own], bundle).rmse
            for other in runs:
                if other == own:
                    continue
                cross = metrics.prediction_error(model, fits[other], bundle).rmse
                rows.append(
                    {
                        "ts": ts,
                        "model of execution": other,
                        "record of execution": own,
                        "RMSE, own fit (N·m)": own_rmse,
                        "RMSE, other execution's model (N·m)": cross,
                        "loss (%)": 100.0 * (cross / own_rmse - 1.0),
                    }
                )
    return pd.DataFrame(rows)


def audit_stability(frame: pd.DataFrame, trajectory: str = "AG02") -> pd.DataFrame:
    """Verdict and margin of the OLS estimate of every execution at every interval (rows:
    intervals),
    with the margins' agreement |m1 - m2| / mean(m1, m2) (%) and whether all verdicts agree."""
    at = (
        frame[(frame["trajectory"] == trajectory) & frame["audit_passed"].notna()]
        if "audit_passed" in frame
        else frame.iloc[0:0]
    )
    rows = []
    for ts, group in at.groupby("ts"):
        group = group.sort_values("run")
        row = {"ts": ts}
        for _, r in group.iterrows():
            row[f"execution {r['run']}: PD"] = bool(r["audit_passed"])
            row[f"execution {r['run']}: λmin (kg·m²)"] = r["audit_lambda_min"]
            row[f"execution {r['run']}: violations"] = int(r["audit_violations"])
        margins = group["audit_lambda_min"].to_numpy(float)
        row["same verdict"] = bool(group["audit_passed"].nunique() == 1)
        row["margin agreement (%)"] = (
            100.0 * (margins.max() - margins.min()) / abs(margins.mean())
            if len(margins) > 1
            else np.nan
        )
        rows.append(row)
    return pd.DataFrame(rows).set_index("ts") if rows else pd.DataFrame()


# ----------------------------------------------------------------------------- the
# sampling-interval ladder


def interval_ladder(
    condition_records: list[dict],
    trajectories=LADDER_TRAJECTORIES,
    model: DynamicModel | None = None,
    heldout=None,
) -> pd.DataFrame:
    """Fig. 10: for each trajectory and interval with an OLS record (first execution), the in-sample
    residual RMS and the held-out RMSE of that OLS estimate (held-out records at HELDOUT_TS)."""
    model = shared_model("reduced") if model is None else model
    heldout = heldout_bundles() if heldout is None else heldout
    rows = []
    for r in condition_records:
        if r["trajectory"] in trajectories and int(r["run"]) == 1 and "ols" in r:
            rows.append(
                {
                    "trajectory": r["trajectory"],
                    "ts": float(r["ts"]),
                    "n_samples": r["n_samples"],
                    "in-sample residual (N·m)": r["residual_rms"],
                    "held-out RMSE (N·m)": metrics.pooled_rmse(model, np.array(r["ols"]), heldout),
                }
            )
    frame = pd.DataFrame(rows)
    return frame.sort_values(["trajectory", "ts"]).reset_index(drop=True) if len(frame) else frame


def ladder_changes(
    ladder: pd.DataFrame, low: float = 0.010, high: float = 0.080, split: float = 0.040
) -> pd.DataFrame:
    """Per trajectory: the in-sample residual's fall from `low` to `high` and the held-out gain from
    `split` to `high`, both as % of the first value (positive = smaller at the coarser interval)."""
    rows = []
    for trajectory, group in ladder.groupby("trajectory", sort=False):
        at = group.set_index("ts")
        have = set(np.round(at.index, 6))
        row = {"trajectory": trajectory}
        if {round(low, 6), round(high, 6)} <= have:
            row["in-sample residual fall, %g→%g ms (%%)" % (low * 1e3, high * 1e3)] = 100.0 * (
                1.0
                - at.loc[_at(at, high), "in-sample residual (N·m)"]
                / at.loc[_at(at, low), "in-sample residual (N·m)"]
            )
        if {round(split, 6), round(high, 6)} <= have:
            row["held-out gain, %g→%g ms (%%)" % (split * 1e3, high * 1e3)] = 100.0 * (
                1.0
                - at.loc[_at(at, high), "held-out RMSE (N·m)"]
                / at.loc[_at(at, split), "held-out RMSE (N·m)"]
            )
        rows.append(row)
    return pd.DataFrame(rows).set_index("trajectory") if rows else pd.DataFrame()


def _at(frame: pd.DataFrame, ts: float) -> float:
    return frame.index[np.isclose(frame.index, ts)][0]


def ramp_sampling(
    trajectories=LADDER_TRAJECTORIES, intervals=INTERVALS, min_samples: int = MIN_RAMP_SAMPLES
) -> pd.DataFrame:
    """The ramp-sample criterion on the command files: per trajectory and interval, the share of
    acceleration ramps carrying fewer than `min_samples` samples (floor(ramp / ts)), %, and the
    coarsest interval at which none does."""
    rows = []
    for name in trajectories:
        stats = segment_statistics(read_command_file(TRAJECTORY_DIR / f"{name}.txt"))
        row = {
            "trajectory": name,
            "ramps": len(stats.ramps_s),
            "shortest ramp (s)": float(stats.ramps_s.min()),
        }
        row.update(
            {
                f"< {min_samples} samples at {ts * 1e3:g} ms (%)": 100.0
                * stats.share_of_ramps_below(ts, min_samples)
                for ts in intervals
            }
        )
        adequate = coarsest_adequate_interval(stats.ramps_s, intervals, min_samples)
        row["coarsest adequate interval (ms)"] = np.nan if adequate is None else adequate * 1e3
        rows.append(row)
    return pd.DataFrame(rows).set_index("trajectory")
