"""The view of the report "Your own arm" (chapters/your_arm.py): one recording through Algorithm
1, as a user reads it. Its tables read the accepted model's record (`accepted.accepted_record`:
the demonstration's from results/your_arm, or a practitioner's made by the page), its figure the
raw log and the recorder's cycle stamps."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.acceptance.held_out import HeldOut
from crane_lib.hardware.recorder import (
    CLAMP_HOLD_S,
    JOINT_LIMIT_MARGIN_DEG,
    cycles_path,
    safety_margins,
)
from crane_lib.logs.preprocessing import Bundle
from crane_lib.logs.raw_log import RawLog, read_raw_log
from crane_lib.reporting.tables import ResultTable, numbered


def cycle_figure(log_path, name: str):
    """Cycle-time distribution (all cycles, host time, from the stamps file) and measured vs
    reference angles of axes 1, 2 and 4."""
    stamps = np.load(cycles_path(Path(log_path)))
    cycle_ms = np.diff(stamps["read_start"]) * 1e3
    bus_ms = (stamps["write_end"] - stamps["read_start"]) * 1e3
    log = read_raw_log(log_path)
    lockstep = log.metadata.get("timing") == "lockstep"
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.4))
    bins = np.linspace(0, max(3.0, float(np.percentile(cycle_ms, 99.9))), 80)
    left.hist(cycle_ms, bins=bins, color="C0", alpha=0.8, label="cycle (read to read)")
    left.hist(bus_ms, bins=bins, color="C1", alpha=0.6, label="sync read + controller + sync write")
    left.axvline(1.0, color="k", lw=0.8, ls="--")
    title = (
        "host time per cycle (lockstep: not paced; the log's grid is 1 ms)"
        if lockstep
        else "cycle times (host clock)"
    )
    left.set(yscale="log", xlabel="ms", ylabel="cycles", title=title)
    left.legend(fontsize=8)
    for axis in (0, 1, 3):
        right.plot(
            log.t, np.degrees(log.theta[:, axis]), lw=1.0, label="θ" + str(axis + 1) + " measured"
        )
        right.plot(log.t, np.degrees(log.theta_ref[:, axis]), lw=0.8, ls="--", color="k")
    right.set(xlabel="log time (s)", ylabel="deg", title="measured angles and reference (dashed)")
    right.legend(fontsize=8, ncol=3)
    timing = "in lockstep timing" if lockstep else "in real time"
    figure.suptitle(
        "Data: the twin through the Protocol 2.0 emulator and dynamixel-sdk, "
        + timing
        + ", "
        + name,
        fontsize=9,
    )
    figure.tight_layout()
    return figure


def checks_table(log: RawLog, bundle: Bundle, source: str) -> ResultTable:
    """What preprocessing checked on the recording and how much of the recorder's limits it used."""
    steps_ms = np.diff(log.t) * 1e3
    margins = safety_margins(log)
    rows = [
        ("source", source),
        ("samples", log.n_samples),
        ("duration (s)", round(log.duration, 2)),
        (
            "stamp steps: median / 99th percentile / max (ms)",
            " / ".join(
                format(x, ".3f")
                for x in (np.median(steps_ms), np.percentile(steps_ms, 99), steps_ms.max())
            ),
        ),
        ("repairs", "; ".join(log.repairs) or "none"),
        ("samples at " + format(bundle.ts * 1e3, "g") + " ms", bundle.n_samples),
        ("clamp-masked share (%)", round(100 * float(bundle.clamp_mask.mean()), 2)),
        (
            "largest excursion beyond a joint limit (deg; the recorder stops at "
            + format(JOINT_LIMIT_MARGIN_DEG, "g")
            + ")",
            f"{margins['beyond_limit_deg']:.2f} (axis {margins['beyond_limit_axis']})",
        ),
        (
            "longest run at a current clamp (s; the recorder stops at "
            + format(CLAMP_HOLD_S, "g")
            + ")",
            format(margins["longest_clamp_s"], ".3f"),
        ),
    ]
    frame = pd.DataFrame(rows, columns=["check", "this recording"]).set_index("check")
    return numbered(
        frame,
        "The recording as preprocessing read it: look at the repairs, the clamp-masked "
        "share and how close the last two rows came to the recorder's limits",
    )


def parameter_table(record: dict) -> ResultTable:
    """The base parameters from OLS (with standard errors), refined, and in the model file."""
    ols, errors = np.asarray(record["ols"]), np.asarray(record["std_errors"])
    refine = record["refinement"].get("method", "none")
    frame = pd.DataFrame(
        {
            "OLS": ols,
            "standard error": errors,
            "relative error (%)": 100 * errors / np.maximum(np.abs(ols), 1e-12),
            "after " + refine: record["refined"],
            "model file": record["parameters"],
        },
        index=pd.Index(record["names"], name="parameter"),
    )
    return numbered(
        frame,
        "The base parameters at each stage: a large relative error marks a parameter the "
        "recording hardly determines",
    )


def audit_table(record: dict) -> ResultTable:
    """The audit over Θ per seed: of the refined model and of the model that decides."""
    first, final = record["first_audits"], record["final_audits"]
    frame = pd.DataFrame(
        {
            "seed": [a["seed"] for a in first],
            "refined: λmin over Θ (kg·m²)": [a["lambda_min"] for a in first],
            "refined: violating poses": [sum(a["violations"].values()) for a in first],
            "deciding: λmin over Θ (kg·m²)": [a["lambda_min"] for a in final],
            "deciding: violating poses": [sum(a["violations"].values()) for a in final],
        }
    ).set_index("seed")
    return numbered(
        frame,
        "The audit over Θ per seed: a negative λmin or any violating pose fails it; the "
        "deciding columns are those of the model the file holds",
    )


def held_out_table(scores: HeldOut) -> ResultTable:
    """The model's error on each held-out recording and pooled over them."""
    table = pd.DataFrame(scores.rows()).set_index("recording")
    table.loc["pooled", "RMSE [N·m]"] = scores.pooled_rmse
    return numbered(
        table,
        "The model on the held-out recordings: the pooled RMSE is the score "
        "Table VIII gives each stage",
    )


# ------------------------------------------------------------------ the SO-101 path: the torque
# scale from a known weight and a payload (acceptance.payload.twin_study's record)


def gains_table(study: dict) -> ResultTable:
    """Per axis: the secret gain of the twin's unit, the calibrated gain with its standard error
    (fit and drift), the difference in standard errors, and the status."""
    secret = np.asarray(study["secret_gain"])
    rows = []
    for row, fit_error in zip(study["calibration"]["rows"], study["calibration"]["fit_std_error"]):
        axis = row["axis"] - 1
        loaded = row["std_error"] is not None
        rows.append(
            {
                "axis": f"{row['axis']} {row['joint']}",
                "secret gain": secret[axis],
                "calibrated gain": row["gain"],
                "standard error": row["std_error"] if loaded else np.nan,
                "of which the fit": fit_error if loaded else np.nan,
                "difference (SE)": (row["gain"] - secret[axis]) / row["std_error"]
                if loaded
                else np.nan,
                "status": row["status"],
            }
        )
    return numbered(
        pd.DataFrame(rows).set_index("axis"),
        "The torque scale from a known weight on the SO-101's twin, against the twin's secret "
        "gains (true torque over logged torque): an axis gravity cannot load keeps gain 1",
    )


def calibration_effect_table(study: dict) -> ResultTable:
    """Algorithm 1 on the same recording without and with the gains: verdict, held-out MNE and
    RMSE, and each well-determined parameter's relative error against the twin's truth."""
    runs = {"without the gains": study["runs"]["without"], "with the gains": study["runs"]["with"]}
    names = runs["with the gains"]["truth"]["names"]
    frame = pd.DataFrame(
        {
            label: {
                "accepted": run["accepted"],
                "held-out MNE": run["held_out_mne"],
                "held-out RMSE (N·m)": run["held_out_rmse"],
                "truth error, median (%)": 100 * run["truth"]["median"],
                **{
                    f"truth error {n} (%)": 100
                    * run["truth"]["relative"][run["truth"]["names"].index(n)]
                    if n in run["truth"]["names"]
                    else np.nan
                    for n in names
                },
            }
            for label, run in runs.items()
        }
    )
    frame.index.name = "measure"
    return numbered(
        frame,
        "Algorithm 1 on the secret unit's " + study["identification"] + " recording, without and "
        "with the gains, scored on its held-out " + study["held_out"] + " recording and against "
        "the twin's truth (well-determined parameters)",
    )


def payload_table(study: dict) -> ResultTable:
    """The payload's mass and centre of mass: the secret one, the estimate, its standard error
    and the difference in standard errors."""
    payload = study["payload"]
    estimate = payload["estimate"]
    secret = [payload["secret_mass_kg"], *payload["secret_com_m"]]
    values = [estimate["mass"], *estimate["com"]]
    errors = [estimate["mass_std_error"], *estimate["com_std_error"]]
    frame = pd.DataFrame(
        {
            "secret": secret,
            "identified": values,
            "standard error": errors,
            "difference (SE)": [(v - s) / e for v, s, e in zip(values, secret, errors)],
        },
        index=pd.Index(
            ["mass (kg)", "centre of mass x (m)", "centre of mass y (m)", "centre of mass z (m)"],
            name="payload",
        ),
    )
    return numbered(
        frame,
        "A payload nobody states, identified on the calibrated model held fixed ("
        + payload["block"]
        + " recorded again with it; frame of the last link)",
    )
