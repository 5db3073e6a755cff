"""The tables, sentences and figure of the "Your own arm" report (chapters/your_arm.py): one
recording through Algorithm 1, as a user reads it. Every sentence is generated from the
result it states."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.acceptance.accepted import AcceptedModel
from crane_lib.acceptance.held_out import HeldOut
from crane_lib.hardware.emulated import EmulatedRecording
from crane_lib.hardware.recorder import (
    CLAMP_HOLD_S,
    JOINT_LIMIT_MARGIN_DEG,
    LATE_FACTOR,
    RecorderSettings,
    cycles_path,
    safety_margins,
)
from crane_lib.hardware.timing import LOCKSTEP, LOCKSTEP_BUS_BAUD
from crane_lib.logs.preprocessing import Bundle
from crane_lib.logs.raw_log import MAX_STAMP_GAP_S, N_COLUMNS, RawLog, read_raw_log
from crane_lib.paper_numbers import paper
from crane_lib.reporting.tables import ResultTable, numbered


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else ('es' if word.endswith('s') else 's')}"


def recorder_sentence() -> str:
    """The recorder's loop settings as this build has them: the defaults of `crane-id record`
    (real time) and the lockstep timing of the demonstration."""
    arm = RecorderSettings()
    period = paper("control_cycle_period")
    longest = MAX_STAMP_GAP_S * 1e3
    gap = (
        ", the longest stamp gap a log may have"
        if arm.watchdog == longest
        else f" (a log may have stamp gaps up to {longest:g} ms)"
    )
    return (
        f"The recorder's defaults, which `crane-id record` uses on the arm: a control period of "
        f"{arm.period_s * 1e3:g} ms (the paper's, Sec. {period.section}: {period.text()}), a cycle watchdog of "
        f"{arm.watchdog:g} ms{gap}, and the bus at {arm.baud / 1e6:g} Mbit/s. In lockstep "
        f"timing every sync read starts the next {LOCKSTEP.period_s * 1e3:g} ms period of the arm's "
        f"time, within a cycle the clock advances as the packets would take at "
        f"{LOCKSTEP_BUS_BAUD / 1e6:g} Mbit/s, and the log's stamps lie on the same "
        f"{LOCKSTEP.period_s * 1e3:g} ms grid."
    )


def emulator_sentence(emulated: EmulatedRecording, name: str) -> str:
    """What the demonstration's recording through the emulator was: its timing, its cycles, its stop."""
    meta = emulated.recording.metadata
    attempts = (
        ""
        if len(emulated.attempts) == 1
        else f" ({_plural(len(emulated.attempts), 'attempt')}: {', '.join(emulated.attempts)})"
    )
    stale = int(meta.get("bus_stale_packets_dropped", 0))
    stop = (
        f"At the end the recorder read back Torque Enable = 0 on every servo ({meta['torque_off_read_back']})"
        + (
            f" and had dropped {_plural(stale, 'late status packet')}."
            if stale
            else "; no status packet came late."
        )
    )
    if not emulated.complete:
        return (
            f"**The emulator recording of {name} stopped**{attempts}: {emulated.recording.fault.text()}, after "
            f"{meta['samples']} logged samples. {stop}"
        )
    period_ms = float(meta["target_period_ms"])
    if meta["timing"] == "lockstep":
        cycles = int(meta["cycles"])
        return (
            f"The emulator recording of {name} ran in lockstep timing: {cycles} cycles, {cycles * period_ms / 1e3:.1f} s of the "
            f"arm's time at {period_ms:g} ms per cycle, took {emulated.wall_s:.0f} s of wall time on this machine{attempts} (the host needed a median "
            f"{float(meta['cycle_ms_median']):.3f} ms per cycle, 99th percentile {float(meta['cycle_ms_p99']):.3f} ms, longest "
            f"{float(meta['cycle_ms_max']):.1f} ms; in lockstep a slow cycle only takes longer, it changes nothing in the log). {stop}"
        )
    return (
        f"The emulator recording of {name} ran in real time and took {emulated.wall_s:.0f} s of wall time{attempts}. Over its "
        f"{meta['cycles']} cycles the median cycle was {float(meta['cycle_ms_median']):.3f} ms, the 99th percentile "
        f"{float(meta['cycle_ms_p99']):.3f} ms and the longest {float(meta['cycle_ms_max']):.2f} ms; {meta['cycles_late']} cycles "
        f"were later than {LATE_FACTOR * period_ms:g} ms ({meta['scheduling']} scheduling). {stop}"
    )


def cycle_figure(log_path, name: str):
    """Cycle-time distribution (all cycles, host time, from the stamps file) and measured vs reference angles."""
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
        right.plot(log.t, np.degrees(log.theta[:, axis]), lw=1.0, label=f"θ{axis + 1} measured")
        right.plot(log.t, np.degrees(log.theta_ref[:, axis]), lw=0.8, ls="--", color="k")
    right.set(xlabel="log time (s)", ylabel="deg", title="measured angles and reference (dashed)")
    right.legend(fontsize=8, ncol=3)
    timing = "in lockstep timing" if lockstep else "in real time"
    figure.suptitle(
        f"Data: the twin through the Protocol 2.0 emulator and dynamixel-sdk, {timing}, {name}",
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
            f"{np.median(steps_ms):.3f} / {np.percentile(steps_ms, 99):.3f} / {steps_ms.max():.3f}",
        ),
        ("repairs", "; ".join(log.repairs) or "none"),
        (f"samples at {bundle.ts * 1e3:g} ms", bundle.n_samples),
        ("clamp-masked share (%)", round(100 * float(bundle.clamp_mask.mean()), 2)),
        (
            f"largest excursion beyond a joint limit (deg; the recorder stops at {JOINT_LIMIT_MARGIN_DEG:g})",
            f"{margins['beyond_limit_deg']:.2f} (axis {margins['beyond_limit_axis']})",
        ),
        (
            f"longest run at a current clamp (s; the recorder stops at {CLAMP_HOLD_S:g})",
            f"{margins['longest_clamp_s']:.3f}",
        ),
    ]
    frame = pd.DataFrame(rows, columns=["check", "this recording"]).set_index("check")
    return numbered(
        frame,
        "The recording as preprocessing read it: look at the repairs, the clamp-masked "
        "share and how close the last two rows came to the recorder's limits",
    )


def log_format_sentence(log: RawLog) -> str:
    """The reader's checks with their limits, and what this recording showed against them."""
    layout = paper("raw_log_columns")
    steps_ms = np.diff(log.t) * 1e3
    return (
        f"The reader required {N_COLUMNS} numeric columns per line (the paper's raw log, Appendix "
        f"{layout.section}: {layout.text()}) and no step between stamps above "
        f"{MAX_STAMP_GAP_S * 1e3:g} ms; this recording's longest step is {steps_ms.max():.3f} ms."
    )


def identification_sentence(accepted: AcceptedModel) -> str:
    condition = accepted.condition
    eps = (
        "no projection"
        if condition.projection is None
        else f"projected with ε = {condition.projection.epsilon:g} kg·m²"
    )
    weak = int(
        np.sum(condition.ols.parameters.std_errors > 0.5 * np.abs(condition.ols.parameters.values))
    )
    return (
        f"At {condition.ts * 1e3:g} ms the regressor's condition number is κ = {condition.ols.kappa:.1f} over {condition.ols.n_samples} "
        f"samples; {_plural(weak, 'parameter')} of {len(condition.ols.parameters.values)} {'has' if weak == 1 else 'have'} a standard error above half its value. "
        f"λmin of the OLS model over the visited configurations is {condition.lambda_min_visited:.3g} kg·m², so the route is "
        f"**{condition.route}** ({eps})."
    )


def parameter_table(accepted: AcceptedModel) -> ResultTable:
    """The base parameters from OLS (with standard errors), refined, and in the model file."""
    ols = accepted.condition.ols.parameters
    refine = accepted.refinement.get("method", "none")
    frame = pd.DataFrame(
        {
            "OLS": ols.values,
            "standard error": ols.std_errors,
            "relative error (%)": 100 * ols.std_errors / np.maximum(np.abs(ols.values), 1e-12),
            f"after {refine}": accepted.refined.values,
            "model file": accepted.parameters.values,
        },
        index=pd.Index(ols.names, name="parameter"),
    )
    return numbered(
        frame,
        "The base parameters at each stage: a large relative error marks a parameter the "
        "recording hardly determines",
    )


def refinement_sentence(accepted: AcceptedModel) -> str:
    report = accepted.refinement
    if report.get("method", "none") == "none":
        return 'No refinement was asked for (`refine = "none"`): the audit takes the OLS/SDP start as it is.'
    start, final = (
        report.get("objective_start", float("nan")),
        report.get("objective_final", float("nan")),
    )
    return (
        f"The {report['method']} refinement moved the closed-loop objective from {start:.5g} to {final:.5g} "
        f"({100 * (final - start) / start:+.1f} %) in {_plural(int(report.get('iterations', 0)), 'iteration')} "
        f"({report.get('wall_time_s', float('nan')):.0f} s)."
    )


def audit_table(accepted: AcceptedModel) -> ResultTable:
    """The audit over Θ per seed: of the refined model and of the model that decides."""
    frame = pd.DataFrame(
        {
            "seed": [a.seed for a in accepted.first_audits],
            "refined: λmin over Θ (kg·m²)": [a.lambda_min for a in accepted.first_audits],
            "refined: violating poses": [a.n_violations for a in accepted.first_audits],
            "deciding: λmin over Θ (kg·m²)": [a.lambda_min for a in accepted.final_audits],
            "deciding: violating poses": [a.n_violations for a in accepted.final_audits],
        }
    ).set_index("seed")
    return numbered(
        frame,
        "The audit over Θ per seed: a negative λmin or any violating pose fails it; the "
        "deciding columns are those of the model the file holds",
    )


def rescue_sentence(accepted: AcceptedModel) -> str:
    if accepted.rescue is None:
        return "Every seed passed the first audit: no rescue was needed, and the refined model is the model file."
    rescue = accepted.rescue
    change = rescue.result.change_norm if rescue.result is not None else float("nan")
    failed = sum(not a.passed for a in accepted.first_audits)
    return (
        f"{_plural(failed, 'seed')} of {len(accepted.first_audits)} failed the first audit, so the rescue SDP ran "
        f"({_plural(len(rescue.passes), 'constraint-generation pass')}, converged: {rescue.converged}); it moved the parameters by "
        f"{change:.3g} in the Euclidean norm, and the deciding audits are those of the rescued model."
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


def verdict_sentence(accepted: AcceptedModel, out: Path, source: str) -> str:
    return (
        f"**{accepted.verdict()}**. The model file `{Path(out).name}` holds the {len(accepted.parameters.values)} parameters with their OLS standard errors, "
        f"the route, the refinement, the audit margins per seed, the rescue if it ran, and this verdict in its header "
        f"(source: {source})."
    )
