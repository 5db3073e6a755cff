"""The view of the chapter "The same recordings through other tools": the records of
`export.peer_tools` (one per compared arm) as the comparison table per arm, the tools' versions,
options and calls, the failures, and the held-out torque figure."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.errors import InputError
from crane_lib.export import peer_tools
from crane_lib.formatting import DASH
from crane_lib.reporting.tables import ResultTable, numbered

STEP = "the records written by `make book` (crane_book.pipeline, step 'other tools')"
LABELS = {
    "algorithm1": "Algorithm 1 (accepted model)",
    "mujoco_prior": "MuJoCo sysid, from the prior",
    "mujoco_accepted": "MuJoCo sysid, from the accepted model",
    "figaroh_ols": "FIGAROH, OLS",
    "figaroh_consistent": "FIGAROH, physically consistent",
}
ARM_NAMES = {"crane_x7": "CRANE-X7", "so101": "SO-101"}
CAPTION = (
    ": the same recording through each tool, scored by one function: held-out torque, the "
    "well-determined base parameters against the twin's truth, the dense audit over Θ (seed 1), "
    "the links of the result's link-level model with a positive definite pseudo-inertia J and "
    "the smallest λmin J (an LMI fit's links sit on the boundary J ⪰ 0 up to the solver's "
    "tolerance), how many of the scored parameters' actual errors lie inside the tool's own 95 % "
    "interval (a dash: the tool states none), and the time of the tool's call when the record "
    "was computed (a dash: read from its record, not run there)"
)
DIGITS = {
    "held-out RMSE (N·m)": 3,
    "held-out MNE (%)": 3,
    "median error vs truth (%)": 3,
    "worst error vs truth (%)": 3,
    "audit λmin (kg·m²)": 3,
    "smallest link λmin J (kg·m²)": 3,
    "wall (s)": 2,
    "CPU (s)": 2,
}


def load_records(directory=None) -> list[dict]:
    """Every compared arm's record, in `peer_tools.COMPARED_ARMS` order; a missing one is an
    InputError naming it and the step."""
    records = peer_tools.read_comparisons(directory)
    found = {r["arm"] for r in records}
    for arm in peer_tools.COMPARED_ARMS:
        if arm not in found:
            raise InputError(str(peer_tools.record_path(arm, directory)), "no record", STEP)
    return records


def load_times(directory=None) -> dict[str, dict]:
    """The tools' wall and CPU times per arm, as measured when each record was computed."""
    return peer_tools.read_times(directory)


def comparison_frame(record: dict, times: dict | None = None) -> pd.DataFrame:
    """One row per tool: the scores of `peer_tools.score` and the tool's times (`times`: one
    arm's, by tool), or the failure."""
    times = times or {}
    rows = []
    for tool, label in LABELS.items():
        result = record["results"].get(tool)
        if result is None:
            continue
        if "failed" in result:
            rows.append({"result": label, "failed": result["failed"]})
            continue
        truth = np.asarray(result["truth"]["relative"])
        margins = result["link_margins"]
        rows.append(
            {
                "result": label,
                "held-out RMSE (N·m)": result["held_out_rmse"],
                "held-out MNE (%)": 100 * float(np.mean(result["held_out_mne"])),
                "median error vs truth (%)": 100 * result["truth"]["median"],
                "worst error vs truth (%)": 100 * float(truth.max()) if truth.size else None,
                "audit passed": "yes" if result["audit"]["passed"] else "NO",
                "audit λmin (kg·m²)": result["audit"]["lambda_min"],
                "links": None if margins is None else len(margins),
                "links with λmin J > 0": result["consistent_links"],
                "smallest link λmin J (kg·m²)": None if margins is None else min(margins),
                "scored parameters": len(truth),
                "errors within own 95 %": None
                if result["stated_vs_actual"] is None
                else result["stated_vs_actual"]["within_95"],
                "wall (s)": times.get(tool, {}).get("wall_s"),
                "CPU (s)": times.get(tool, {}).get("cpu_s"),
            }
        )
    frame = pd.DataFrame(rows).set_index("result")
    counts = ("links", "links with λmin J > 0", "scored parameters", "errors within own 95 %")
    for column in counts:
        if column in frame:  # counts: a dash where there is none
            frame[column] = pd.Series(
                [None if pd.isna(v) else int(v) for v in frame[column]], frame.index, object
            )
    if "failed" not in frame:
        frame["failed"] = None
    return frame


def comparison_table(record: dict, times: dict | None = None) -> ResultTable:
    """One arm's comparison table, captioned."""
    frame = comparison_frame(record, times)
    if frame["failed"].isna().all():
        frame = frame.drop(columns=["failed"])
    return numbered(
        frame,
        ARM_NAMES[record["arm"]] + CAPTION,
        name="tab-other-tools-" + record["arm"].replace("_", "-"),
        digits=DIGITS,
    )


def calls_frame(records: list[dict]) -> pd.DataFrame:
    """One row per (arm, tool): the exact call, its options, what it states as uncertainty and
    its notes (or its failure)."""
    rows = []
    for record in records:
        for tool, label in LABELS.items():
            result = record["results"].get(tool, {})
            options = result.get("options", {})
            rows.append(
                {
                    "arm": ARM_NAMES[record["arm"]],
                    "result": label,
                    "call": result.get("call", DASH),
                    "options": json.dumps(options, sort_keys=True) if options else DASH,
                    "stated uncertainty": result.get("stated", DASH),
                    "notes": result.get("failed") or "; ".join(result.get("notes", [])) or DASH,
                }
            )
    return pd.DataFrame(rows).set_index(["arm", "result"])


def calls_table(records: list[dict]) -> ResultTable:
    """Every tool's exact call, options and notes, captioned."""
    return numbered(
        calls_frame(records),
        "Each result's exact call, its options and what the tool states as its uncertainty, with "
        "its notes (a failure's message stands here)",
        name="tab-other-tools-calls",
    )


def versions_frame(records: list[dict]):
    """The versions the records were computed with (one row per package)."""
    versions = records[0]["versions"]
    return numbered(
        pd.DataFrame({"version": versions}).rename_axis("package"),
        "The versions of the tools and of the libraries they run on, as the records were computed",
        "tab-other-tools-versions",
    )


def failures(records: list[dict]) -> list[tuple[str, str, str]]:
    """(arm, result, message) of every result that failed."""
    return [
        (ARM_NAMES[r["arm"]], LABELS[tool], result["failed"])
        for r in records
        for tool, result in r["results"].items()
        if "failed" in result
    ]


def heldout_figure(records: list[dict]):
    """Measured and predicted torque of one axis on the first held-out recording, per arm."""
    figure, axes = plt.subplots(len(records), 1, figsize=(8, 2.6 * len(records)), squeeze=False)
    for ax, record in zip(axes[:, 0], records):
        t = np.asarray(record["trace_t"])
        ax.plot(t, record["trace_measured"], color="black", lw=1.2, label="measured", zorder=3)
        for tool, label in LABELS.items():
            result = record["results"].get(tool, {})
            if "trace" in result:
                ax.plot(t, result["trace"], lw=0.8, label=label)
        ax.set_title(
            f"{ARM_NAMES[record['arm']]}, axis {record['trace_axis']}, "
            f"held out: {record['held_out'][0]}",
            fontsize=9,
        )
        ax.set_ylabel("torque (N·m)")
    axes[-1, 0].set_xlabel("time (s)")
    axes[0, 0].legend(fontsize=7, ncol=2)
    figure.tight_layout()
    return figure
