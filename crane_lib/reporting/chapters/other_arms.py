"""The view of the chapter "Other arms": the records of `acceptance.other_arms` (one per shipped
arm) as the side-by-side tables, the CRANE-X7's counts against the paper, the torque figure, and
the frames the chapter's prose reads its numbers from."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.acceptance import other_arms
from crane_lib.errors import InputError
from crane_lib.formatting import DASH
from crane_lib.reporting.tables import Comparison, comparison_table, joined, numbered, significant

STEP = "the records written by `make book` (crane_book.pipeline, step 'other arms')"


def load_records(directory=None) -> list[dict]:
    """The record of every shipped arm, the CRANE-X7 first; a missing one is an InputError."""
    records = other_arms.read_arm_records(directory)
    found = {r["arm"] for r in records}
    missing = [k for k in other_arms.ARM_KEYS if k not in found]
    if missing:
        path = other_arms.record_path(missing[0], directory)
        raise InputError(str(path), "no record of this arm", STEP)
    return records


def load_stage_times(directory=None) -> dict[str, dict]:
    """The stage times of each arm whose record the build computed (may be none of them)."""
    return other_arms.read_stage_times(directory)


def _actuators(record: dict) -> str:
    models = record["description"]["actuators"]
    return ", ".join(f"{models.count(m)} × {m}" for m in dict.fromkeys(models))


def arms_frame(records: list[dict]) -> pd.DataFrame:
    """One row per arm: joints, actuators, parameter counts, excitation rank and conditioning."""
    rows = []
    for r in records:
        d, m, e = r["description"], r["model"], r["excitation"]
        share = np.asarray(e["peak_torque_share"])
        rows.append(
            {
                "arm": d["name"],
                "arm joints": d["n_joints"],
                "gripper axis": "yes" if d["gripper"] else "no",
                "actuators (per axis)": _actuators(r),
                "standard parameters": m["n_standard"],
                "base parameters": m["n_base"],
                "identification files": len(e["files"]),
                "commanded samples": e["samples"],
                "rank of W": f"{e['rank']} of {e['n_base']}",
                "κ(W)": e["condition_number"],
                "κ, unit columns": e["scaled_condition_number"],
                "peak torque / limit": f"{significant(share.max(), 2)} "
                f"(axis {int(share.argmax()) + 1})",
            }
        )
    return pd.DataFrame(rows).set_index("arm")


def _by_quantity(frame: pd.DataFrame, digits: dict[str, int]) -> pd.DataFrame:
    """Arms as columns, quantities as rows, every number printed to its row's digits."""
    shown = frame.copy().astype(object)
    for column, n in digits.items():
        shown[column] = [
            significant(v, n) if isinstance(v, (int, float, np.floating)) else v
            for v in frame[column]
        ]
    out = shown.T
    out.index.name = "quantity"
    return out.astype(str)


def arms_table(records: list[dict]):
    """The side-by-side table of the three arms (one column each), numbered."""
    return numbered(
        _by_quantity(
            arms_frame(records), {"κ(W)": 4, "κ, unit columns": 3, "commanded samples": 6}
        ),
        caption="The three arms side by side: the description, the exact base-parameter grouping "
        "of the arm's own Newton–Euler model, and the base regressor stacked over the commanded "
        "states of its identification files (sampled every 40 ms). Peak torque: the commanded "
        "motion's inverse dynamics from the description's link inertials, over the axis's torque "
        "limit.",
        name="tab-other-arms",
    )


def crane_x7_table(records: list[dict]):
    """The CRANE-X7 through the general model path against the paper's parameter count."""
    crane = {r["arm"]: r for r in records}["crane_x7"]
    return comparison_table(
        [
            Comparison(
                "base parameters of the full grouped model, from the arm described as data",
                "full_model_param_count",
                crane["model"]["n_base"],
            )
        ],
        caption="The CRANE-X7 through the same general path as the other arms.",
    )


def excitation_frame(records: list[dict]) -> pd.DataFrame:
    """One row per arm: identification files, rank of the base regressor, base parameters, κ
    and the base parameters left unexcited."""
    rows = []
    for r in records:
        e = r["excitation"]
        rows.append(
            {
                "arm": r["description"]["name"],
                "files": len(e["files"]),
                "rank": e["rank"],
                "base parameters": e["n_base"],
                "κ": e["condition_number"],
                "full rank": e["rank"] == e["n_base"],
                "unexcited": ", ".join(e["unexcited"]),
            }
        )
    return pd.DataFrame(rows).set_index("arm")


def torque_frame(records: list[dict]) -> pd.DataFrame:
    """One row per arm: the largest peak commanded torque over its servo's limit, and its axis."""
    rows = []
    for r in records:
        share = np.asarray(r["excitation"]["peak_torque_share"])
        rows.append(
            {
                "arm": r["description"]["name"],
                "peak / limit": float(share.max()),
                "axis": int(share.argmax()) + 1,
            }
        )
    return pd.DataFrame(rows).set_index("arm")


def verdicts(records: list[dict]) -> pd.DataFrame:
    """One row per arm: whether Algorithm 1 accepted its model, whether the rescue ran, and the
    verdict."""
    rows = []
    for r in records:
        accepted = r["algorithm1"]["accepted"]
        rows.append(
            {
                "arm": r["description"]["name"],
                "accepted": bool(accepted["accepted"]),
                "rescued": accepted["rescue"] is not None,
                "verdict": accepted["verdict"],
            }
        )
    return pd.DataFrame(rows).set_index("arm")


def torque_share_figure(records: list[dict]):
    """Each axis's peak commanded torque over its limit, one group of bars per arm."""
    figure, ax = plt.subplots(figsize=(7, 3))
    width = 0.8 / len(records)
    for i, r in enumerate(records):
        share = np.asarray(r["excitation"]["peak_torque_share"])
        axes = np.arange(1, len(share) + 1)
        ax.bar(
            axes + (i - (len(records) - 1) / 2) * width,
            share,
            width,
            label=r["description"]["name"],
        )
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xlabel("axis (the last one is the gripper)")
    ax.set_ylabel("peak |τ| / torque limit")
    ax.set_title("Identification motion: peak torque against the servos' limits")
    ax.legend(fontsize=7)
    return figure


# ----------------------------------------------------------------------------- Algorithm 1


def _lambda_min(audits: list[dict]) -> float:
    return min(a["lambda_min"] for a in audits)


def algorithm1_frame(records: list[dict]) -> pd.DataFrame:
    """One row per arm: the recording, OLS conditioning, refinement, audit, rescue, verdict,
    held-out error and the truth score, from the records."""
    rows = []
    for r in records:
        a = r["algorithm1"]
        accepted, truth = a["accepted"], a["truth"]
        relative = np.asarray(truth["relative"])
        worst = (
            f"{significant(100 * relative.max(), 2)} % ({truth['names'][relative.argmax()]})"
            if len(relative)
            else "none well determined"
        )
        rows.append(
            {
                "arm": r["description"]["name"],
                "identified on": a["identification"]
                + " at "
                + significant(1e3 * accepted["ts"], 2)
                + " ms",
                "held out": ", ".join(a["held_out"]),
                "base parameters": len(accepted["names"]),
                "κ": accepted["kappa"],
                "route": accepted["route"],
                "refinement": accepted["refinement"].get("method", "none"),
                "first audit λmin (kg·m²)": _lambda_min(accepted["first_audits"]),
                "rescued": "yes" if accepted["rescue"] is not None else "no",
                "accepted": "yes" if accepted["accepted"] else "no",
                "final audit λmin (kg·m²)": _lambda_min(accepted["final_audits"]),
                "held-out RMSE (N·m)": a["held_out_rmse"],
                "held-out MNE (%)": 100 * float(np.mean(a["held_out_mne"])),
                "well determined": len(truth["names"]),
                "median error vs truth (%)": 100 * truth["median"] if len(relative) else np.nan,
                "largest error vs truth": worst,
            }
        )
    return pd.DataFrame(rows).set_index("arm")


def algorithm1_table(records: list[dict]):
    """Algorithm 1 on the three arms (one column each), numbered."""
    digits = {
        "κ": 3,
        "first audit λmin (kg·m²)": 3,
        "final audit λmin (kg·m²)": 3,
        "held-out RMSE (N·m)": 3,
        "held-out MNE (%)": 3,
        "median error vs truth (%)": 2,
    }
    return numbered(
        _by_quantity(algorithm1_frame(records), digits),
        caption="Algorithm 1 on each arm's twin recording: OLS (κ of the base regressor at the "
        "interval), the PD routing and the refinement, the dense audit over the arm's Θ on seeds "
        "1–5 (smallest λmin of the arm block of M), the rescue if the audit failed, the "
        "held-out "
        "prediction error, and the well-determined base parameters (OLS t-ratio at least 20, "
        "viscous terms left out) against the twin's truth.",
        name="tab-other-arms-algorithm1",
    )


# ----------------------------------------------------------------------------- time per stage


def stage_times_table(records: list[dict], timings: dict[str, dict]):
    """Wall seconds per stage and arm (one column each), as measured when each record was
    computed; a dash where the stage did not run there."""
    columns = {}
    for r in records:
        stages = timings.get(r["arm"], {}).get("stages_s", {})
        columns[r["description"]["name"]] = {
            name.replace("Theta", "Θ"): significant(seconds, 2) for name, seconds in stages.items()
        }
    frame = pd.DataFrame(columns, dtype=object).fillna(DASH)
    frame.index.name = "stage (wall s)"
    cores = sorted({str(t["cpu_count"]) for t in timings.values()})
    where = (
        f"on a machine with {joined(cores)} cores"
        if cores
        else "(none here: this results folder holds records it did not compute)"
    )
    return numbered(
        frame,
        caption="Wall time of each stage when the arm's record was computed (this build, or "
        f"an earlier one with the same inputs), {where}. It is measured, not part of the "
        "record: it differs at every run and between machines. The CRANE-X7's recording, "
        "refinement, "
        "audits and rescue are the book's own steps; its column holds what this chapter's "
        "step computes for it.",
        name="tab-other-arms-time",
    )


# ----------------------------------------------------------------------------- drive modes


def mode_runs(records: list[dict]) -> list[tuple[str, str, bool, dict]]:
    """(arm name, drive mode, whether it is the arm's own, Algorithm 1 run) of every arm run in
    both modes (its record has `algorithm1_other_mode`), the arm's own mode first."""
    runs = []
    for r in records:
        if "algorithm1_other_mode" not in r:
            continue
        for key, own in (("algorithm1", True), ("algorithm1_other_mode", False)):
            run = r[key]
            runs.append((r["description"]["name"], run.get("drive_mode", "current"), own, run))
    return runs


def drive_mode_frame(records: list[dict]) -> pd.DataFrame:
    """One row per arm and drive mode: what the servos' loop did (tracking, profile, duty limit)
    and Algorithm 1's conditioning, audit, verdict, held-out error and truth score."""
    rows = []
    for name, mode, own, run in mode_runs(records):
        accepted, truth = run["accepted"], run["truth"]
        loop = run.get("position_loop")
        relative = np.asarray(truth["relative"])
        rows.append(
            {
                "arm, drive mode": f"{name}, {mode}" + (" (its own)" if own else ""),
                "tracking error RMS, worst axis (°)": (
                    max(loop["tracking_rms_deg"]) if loop else DASH
                ),
                "commanded / profile acceleration, worst axis": (
                    max(loop["profile_acceleration_share"]) if loop else DASH
                ),
                "duty at its limit (share of samples)": (
                    max(loop["duty_limit_share"]) if loop else DASH
                ),
                "base parameters": len(accepted["names"]),
                "κ": accepted["kappa"],
                "route": accepted["route"],
                "first audit λmin (kg·m²)": _lambda_min(accepted["first_audits"]),
                "rescued": "yes" if accepted["rescue"] is not None else "no",
                "accepted": "yes" if accepted["accepted"] else "no",
                "held-out RMSE (N·m)": run["held_out_rmse"],
                "held-out MNE (%)": 100 * float(np.mean(run["held_out_mne"])),
                "well determined": len(truth["names"]),
                "median error vs truth (%)": 100 * truth["median"] if len(relative) else np.nan,
            }
        )
    return pd.DataFrame(rows).set_index("arm, drive mode")


def drive_mode_table(records: list[dict]):
    """The arms run in both drive modes side by side (one column per arm and mode), numbered."""
    digits = {
        "tracking error RMS, worst axis (°)": 2,
        "commanded / profile acceleration, worst axis": 2,
        "duty at its limit (share of samples)": 2,
        "κ": 3,
        "first audit λmin (kg·m²)": 3,
        "held-out RMSE (N·m)": 3,
        "held-out MNE (%)": 3,
        "median error vs truth (%)": 2,
    }
    return numbered(
        _by_quantity(drive_mode_frame(records), digits),
        caption="Each arm whose servos' position loop is described, through Algorithm 1 in both "
        "drive modes on the same command files and seeds: current mode (controller (2) on the "
        "host, the logged current its command) and position mode (goal positions streamed to "
        "the servos' own loops, the logged current the servos' reading). Tracking error: the "
        "identification recording while moving; profile: the identification file's commanded "
        "acceleration over the servos' profile acceleration. Held-out error and truth score as "
        "in the table of Algorithm 1.",
        name="tab-other-arms-drive-modes",
    )


def position_trace_figure(log, axis: int, seconds: tuple[float, float]):
    """One axis of a position-mode recording: goal streamed and measured angle (degrees) above,
    the present current (A) below, over the window `seconds` of the log's time."""
    inside = (log.t >= seconds[0]) & (log.t <= seconds[1])
    t = log.t[inside]
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(7, 4), sharex=True)
    top.plot(t, np.degrees(log.theta_ref[inside, axis]), lw=1.0, label="goal streamed")
    top.plot(t, np.degrees(log.theta[inside, axis]), lw=1.0, label="measured")
    top.set_ylabel("angle (°)")
    top.legend(fontsize=7)
    bottom.plot(t, log.current_command[inside, axis], lw=0.8, color="C2")
    bottom.set_ylabel("present current (A)")
    bottom.set_xlabel("time in the recording (s)")
    top.set_title(f"Axis {axis + 1} in position mode")
    return figure


# ----------------------------------------------------------------------------- replay in MuJoCo

REPLAY_STEP = "the records written by `make book` (crane_book.pipeline, step 'replay')"
REPLAY_MODELS = {
    "identified": "identified (accepted model)",
    "prior": "prior (description)",
    "twin": "twin's truth",
}


def load_replays(directory=None) -> dict[str, dict]:
    """The replay record of every shipped arm by key; a missing one is an InputError."""
    from crane_lib.export import replay

    records = {r["arm"]: r for r in replay.read_replay_records(directory)}
    missing = [k for k in other_arms.ARM_KEYS if k not in records]
    if missing:
        raise InputError(str(replay.record_path(missing[0], directory)), "no replay", REPLAY_STEP)
    return records


def _errors(values, scale: float = 1.0) -> list[str]:
    return ["diverged" if v is None else significant(scale * v, 3) for v in values]


def replay_frame(record: dict) -> pd.DataFrame:
    """Rows (quantity, model), one column per axis: angle RMSE in degrees and torque RMSE in
    N·m of each model's replay, as the record holds them."""
    rows = {}
    for quantity, key, scale in (
        ("angle RMSE (°)", "angle_rmse_rad", 180.0 / np.pi),
        ("torque RMSE (N·m)", "torque_rmse_N_m", 1.0),
    ):
        for entry in record["models"]:
            rows[(quantity, REPLAY_MODELS[entry["model"]])] = _errors(entry[key], scale)
    frame = pd.DataFrame(rows).T
    frame.columns = [f"axis {j + 1}" for j in range(frame.shape[1])]
    frame.index.names = ["quantity", "model"]
    return frame


def replay_summary(replays: dict[str, dict], records: list[dict]) -> pd.DataFrame:
    """One row per arm and model: drive mode, held-out recording, largest angle RMSE (°) and
    largest torque RMSE (N·m) over the axes (None where the replay diverged)."""
    names = {r["arm"]: r["description"]["name"] for r in records}
    rows = []
    for key, record in replays.items():
        for entry in record["models"]:
            angle, torque = entry["angle_rmse_rad"], entry["torque_rmse_N_m"]
            rows.append(
                {
                    "arm": names.get(key, key),
                    "model": entry["model"],
                    "drive mode": record.get("drive_mode", "current"),
                    "held out": record["held_out"],
                    "largest angle RMSE (°)": None if entry["diverged"] else np.degrees(max(angle)),
                    "largest torque RMSE (N·m)": None if entry["diverged"] else max(torque),
                }
            )
    return pd.DataFrame(rows).set_index(["arm", "model"])


def replay_table(record: dict, name: str):
    """One arm's replay table (models as rows, axes as columns), numbered."""
    mode = record.get("drive_mode", "current")
    controller = (
        "the servos' position loop as MuJoCo position actuators, fed the goals streamed"
        if mode == "position"
        else "controller (2) around the MJCF's current-control motors"
    )
    return numbered(
        replay_frame(record),
        caption=f"{name}: the held-out {record['held_out']} recording replayed in MuJoCo under "
        f"{controller}, per axis (the last is the gripper). Each model exported as the same "
        "MJCF: the accepted model's nearest consistent link-level model, the description's link "
        "inertials without rotor inertia or friction, and the twin's own truth. Torque RMSE of "
        f"the torque records low-passed as the {significant(1e3 * record['ts'], 2)} ms bundle is.",
        name=f"tab-other-arms-replay-{record['arm'].replace('_', '-')}",
    )


def replay_figure(record: dict, name: str):
    """Measured against MuJoCo-simulated angle (°) and torque (N·m) on the record's held-out
    segment, one axis: the identified and the prior model."""
    segment = record["segment"]
    t = np.asarray(segment["t"])
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(7, 4), sharex=True)
    top.plot(t, np.degrees(segment["measured_angle"]), color="k", lw=1.2, label="measured")
    bottom.plot(t, segment["measured_torque"], color="k", lw=1.2, label="measured")
    for model, style in (("identified", "-"), ("prior", "--")):
        if f"{model}_angle" not in segment:
            continue
        label = f"MuJoCo, {REPLAY_MODELS[model]}"
        top.plot(t, np.degrees(segment[f"{model}_angle"]), ls=style, lw=1.0, label=label)
        bottom.plot(t, segment[f"{model}_torque"], ls=style, lw=1.0, label=label)
    top.set_ylabel("angle (°)")
    bottom.set_ylabel("torque (N·m)")
    bottom.set_xlabel("time from the motion's start (s)")
    top.set_title(f"{name}, axis {segment['axis']}, held-out {record['held_out']}")
    top.legend(fontsize=7)
    return figure
