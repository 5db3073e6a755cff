# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Your own arm: from a recording to an accepted model
#
# *Paper Algorithm 1, Sec. III-A (the 1 ms loop), Sec. IV-C, VI-E (audit and rescue), VI-C
# (held-out metrics).* This chapter is the report a CRANE-X7 owner gets for their own
# recording. Record a command file on the arm with the recorder of this project,
#
# ```bash
# crane-id record trajectories/AG02.txt --out AG02.csv --port /dev/ttyUSB0
# ```
#
# then run this notebook on it with papermill, naming the recording and the command file it
# executed (the parameters cell below lists every parameter):
#
# ```bash
# jupytext --to ipynb -o your_arm.ipynb chapters/your_arm.py
# papermill your_arm.ipynb AG02_report.ipynb -p log AG02.csv -p trajectory trajectories/AG02.txt \
#     -p ts 0.04 -p refine fast -p out AG02_model.csv -p validation '["V01.csv", "V02.csv", "V03.csv"]'
# ```
#
# The report checks the recording, identifies it (OLS with κ and standard errors, the routing
# test, the projection), refines it, audits the inertia matrix over all poses on seeds 1–5,
# rescues it if a seed fails and audits again, and writes the model file, or a rejection
# naming the pose where the audit failed. `crane-id accept` does the same in one command; both
# call one function, `crane_lib.acceptance.accepted.accept_recording`, the path of the main
# job too.
#
# **Data in this book: the digital twin, recorded through the Protocol 2.0 emulator.** The
# book has no arm. With `log` left empty, the chapter starts the emulator (eight servos on a
# pseudo-terminal with the twin's plant integrating behind them in real time), records the
# command file on it with the same recorder and the real dynamixel-sdk that an arm would get,
# and reports on that recording. It is short (AP01, the shortest identification trajectory) so
# that the book builds in minutes; the real-time recording of AG02 and the notebook on it are
# timed in `benchmarks/bench_hardware.py`.

# %% tags=["parameters"]
log = ""  # your raw log (.csv, .csv.gz or .npz); "" records the demonstration through the emulator
trajectory = "AP01"  # the command file the recording executed: a path, or the name of one in trajectories/
ts = 0.04  # sampling interval of the identification, s
refine = "fast"  # fast | clie | didim | none (crane-id identify --help explains each)
out = ""  # the model file to write; "" writes results/your_arm/<trajectory>_model.csv
validation = []  # held-out recordings to score the model on (e.g. your V01-V03), optional

# %% tags=["hide-input"]
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from crane_lib.acceptance.accepted import accept_recording, save_accepted
from crane_lib.acceptance.held_out import held_out
from crane_lib.excitation.commands import read_command_file
from crane_lib.hardware.emulated import record_on_emulator
from crane_lib.hardware.recorder import CLAMP_HOLD_S, JOINT_LIMIT_MARGIN_DEG, RecorderSettings, cycles_path, safety_margins
from crane_lib.logs.preprocessing import preprocess
from crane_lib.logs.raw_log import read_raw_log, write_raw_log
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paths import RESULTS_DIR, TRAJECTORY_DIR
from crane_lib.twin import recorder as twin

warnings.filterwarnings("ignore", message="Solution may be inaccurate")  # cvxpy on Clarabel's inexact exits; the audit decides
pd.set_option("display.precision", 4)
trajectory = Path(trajectory) if Path(trajectory).suffix else TRAJECTORY_DIR / f"{trajectory}.txt"
command = read_command_file(trajectory)
folder = RESULTS_DIR / "your_arm"
folder.mkdir(parents=True, exist_ok=True)
out = Path(out) if out else folder / f"{command.name}_model.csv"
demonstration = not log

# %% [markdown]
# ## The recording
#
# In the demonstration the recorder runs as it does on the arm: it checks the command file
# against the joint limits and the current clamps, checks the port and every servo (ID, model
# number, firmware), puts them into current control with read-back, moves the arm from where
# it hangs to the start posture, and runs the 1 ms loop until the command file ends. Each of
# its cycles is stamped; the distribution below is what this machine achieved. A host that
# stalls longer than the 20 ms watchdog stops the recording with the torque off, as it would
# on the arm, and the demonstration records again (at most three times); every attempt is
# listed.

# %%
if demonstration:
    log = folder / f"{command.name}_emulator.csv.gz"
    emulated = record_on_emulator(trajectory, log, settings=RecorderSettings(lead_s=1.0, tail_s=1.0))

# %% tags=["hide-input"]
if demonstration:
    recording = emulated.recording
    attempts = ", ".join(f"{k + 1}: {a}" for k, a in enumerate(emulated.attempts))
    meta = recording.metadata
    if recording.fault is None:
        source = f"the twin through the emulator, `{Path(log).name}`"
        display(Markdown(
            f"The emulator recording of {command.name} took {emulated.wall_s:.0f} s of wall time "
            f"({len(emulated.attempts)} attempt{'s' if len(emulated.attempts) > 1 else ''}: {attempts}). "
            f"Over its {meta['cycles']} cycles the median cycle was {float(meta['cycle_ms_median']):.3f} ms, the 99th "
            f"percentile {float(meta['cycle_ms_p99']):.3f} ms and the longest {float(meta['cycle_ms_max']):.2f} ms; "
            f"{meta['cycles_late']} cycles were later than 1.5 ms ({meta['scheduling']} scheduling). "
            f"At the end the recorder read back Torque Enable = 0 on every servo ({meta['torque_off_read_back']})."))
    else:
        # no attempt completed on this host: say so, and go on with the twin's own recording of the file
        log = folder / f"{command.name}_twin.npz"
        samples, twin_meta = twin.record(command, seed=1)
        write_raw_log(log, samples, twin_meta)
        source = f"the twin's own recording `{Path(log).name}` (no emulator attempt completed here)"
        display(Markdown(
            f"**No attempt of the emulator recording completed on this machine** ({attempts}): its host stalled "
            f"longer than the recorder's 20 ms watchdog each time, and each time the recorder stopped the arm and kept "
            f"the log. The rest of this report therefore uses the twin's own recording of {command.name} (the twin's "
            f"recorder, no bus), which the same pipeline accepts in the same way."))
else:
    source = f"your recording `{Path(log).name}`"

# %% tags=["hide-input"]
if demonstration and emulated.recording.fault is None:
    stamps = np.load(cycles_path(Path(log)))
    cycle_ms = np.diff(stamps["read_start"]) * 1e3
    bus_ms = (stamps["write_end"] - stamps["read_start"]) * 1e3
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.4))
    bins = np.linspace(0, max(3.0, np.percentile(cycle_ms, 99.9)), 80)
    left.hist(cycle_ms, bins=bins, color="C0", alpha=0.8, label="cycle (read to read)")
    left.hist(bus_ms, bins=bins, color="C1", alpha=0.6, label="sync read + controller + sync write")
    left.axvline(1.0, color="k", lw=0.8, ls="--")
    left.set(yscale="log", xlabel="ms", ylabel="cycles", title="cycle times of the emulator recording")
    left.legend(fontsize=8)
    preview = read_raw_log(log)
    for axis in (0, 1, 3):
        right.plot(preview.t, np.degrees(preview.theta[:, axis]), lw=1.0, label=f"θ{axis + 1} measured")
        right.plot(preview.t, np.degrees(preview.theta_ref[:, axis]), lw=0.8, ls="--", color="k")
    right.set(xlabel="log time (s)", ylabel="deg", title="measured angle and reference (dashed)")
    right.legend(fontsize=8, ncol=3)
    figure.suptitle(f"Data: the twin through the Protocol 2.0 emulator and dynamixel-sdk, {command.name}", fontsize=9)
    figure.tight_layout()

# %% [markdown]
# ## Preprocessing checks (Appendix D-C)
#
# Reading the log checks what preprocessing relies on: 106 numeric columns, strictly
# increasing stamps, no gap longer than 20 ms, no NaN, a complete last line. A recording that
# fails any of these stops here with the file and the line named. The bundle at the chosen
# interval shows how much of the record the clamp rule masks, and the last two rows how much
# of the recorder's safety limits the recording used (register "the recorder on the arm").

# %%
recording_log = read_raw_log(log, repair=True)
bundle = preprocess(recording_log, ts)

# %% tags=["hide-input"]
steps_ms = np.diff(recording_log.t) * 1e3
margins = safety_margins(recording_log)
checks = pd.DataFrame({
    "": ["source", "samples", "duration (s)", "stamp steps: median / 99th percentile / max (ms)", "repairs",
         f"samples at {ts * 1e3:g} ms", "clamp-masked share (%)",
         f"largest excursion beyond a joint limit (deg; the recorder stops at {JOINT_LIMIT_MARGIN_DEG:g})",
         f"longest run at a current clamp (s; the recorder stops at {CLAMP_HOLD_S:g})"],
    "this recording": [source, recording_log.n_samples, round(recording_log.duration, 2),
                       f"{np.median(steps_ms):.3f} / {np.percentile(steps_ms, 99):.3f} / {steps_ms.max():.3f}",
                       "; ".join(recording_log.repairs) or "none", bundle.n_samples, round(100 * bundle.clamp_mask.mean(), 2),
                       f"{margins['beyond_limit_deg']:.2f} (axis {margins['beyond_limit_axis']})", f"{margins['longest_clamp_s']:.3f}"],
}).set_index("")
checks

# %% [markdown]
# ## Algorithm 1
#
# One call runs the whole algorithm on the recording: OLS by QR on the 39 base parameters,
# the routing test at the configurations the record visits, the conditional SDP projection
# when that test fails, the refinement, the all-pose audit over Θ on seeds 1–5, the rescue
# SDP if any seed fails, and the re-audit that decides.

# %%
accepted = accept_recording(recording_log, command.name, ts, refine=refine)
save_accepted(out, accepted)

# %% [markdown]
# ### OLS, route and projection
#
# The standard errors are OLS's, from the residual variance and $(\mathbf W^\top\mathbf W)^{-1}$;
# the relative error says which parameters the recording does not pin down. The route is
# the routing test's: O-C when the OLS model is positive definite at every visited
# configuration (the refinement starts from it), O-S-C when it is projected first.

# %% tags=["hide-input"]
condition = accepted.condition
ols = condition.ols.parameters
eps = "no projection" if condition.projection is None else f"projected with ε = {condition.projection.epsilon:g} kg·m²"
display(Markdown(
    f"At {ts * 1e3:g} ms the regressor's condition number is κ = {condition.ols.kappa:.1f} over {condition.ols.n_samples} samples; "
    f"λmin of the OLS model over the visited configurations is {condition.lambda_min_visited:.3g} kg·m², so the route is "
    f"**{condition.route}** ({eps})."))
parameters = pd.DataFrame({
    "OLS": ols.values, "standard error": ols.std_errors,
    "relative error (%)": 100 * ols.std_errors / np.maximum(np.abs(ols.values), 1e-12),
    f"after {refine}": accepted.refined.values, "model file": accepted.parameters.values,
}, index=ols.names)
parameters

# %% [markdown]
# ### Refinement, audit and rescue

# %% tags=["hide-input"]
report = accepted.refinement
if refine != "none":
    display(Markdown(
        f"The {refine} refinement moved the closed-loop objective from {report.get('objective_start', float('nan')):.5g} to "
        f"{report.get('objective_final', float('nan')):.5g} in {report.get('iterations')} iterations "
        f"({report.get('wall_time_s', float('nan')):.0f} s)."))
audits = pd.DataFrame({
    "seed": [a.seed for a in accepted.first_audits],
    "refined: λmin over Θ (kg·m²)": [a.lambda_min for a in accepted.first_audits],
    "refined: violating poses": [a.n_violations for a in accepted.first_audits],
    "deciding: λmin over Θ (kg·m²)": [a.lambda_min for a in accepted.final_audits],
    "deciding: violating poses": [a.n_violations for a in accepted.final_audits],
}).set_index("seed")
display(audits)
if accepted.rescue is None:
    display(Markdown("Every seed passed the first audit: no rescue was needed, and the refined model is the model file."))
else:
    change = accepted.rescue.result.change_norm if accepted.rescue.result is not None else float("nan")
    display(Markdown(
        f"A seed failed the first audit, so the rescue SDP ran ({len(accepted.rescue.passes)} constraint-generation "
        f"pass{'es' if len(accepted.rescue.passes) != 1 else ''}, converged: {accepted.rescue.converged}); it moved the "
        f"parameters by {change:.3g} in the Euclidean norm, and the deciding audits are those of the rescued model."))

# %% [markdown]
# ### Held-out score
#
# Given validation recordings (the paper's V01–V03 on your arm), the model's torque
# prediction on each is scored as in Sec. VI-C: RMSE over all axes and samples, and the MNE
# (each axis's RMSE over its peak-to-peak torque, averaged over the axes).

# %% tags=["hide-input"]
if validation:
    scores = held_out(accepted.parameters.values, [read_raw_log(v, repair=True) for v in validation], ts, DynamicModel("reduced"))
    display(pd.DataFrame(scores.rows()).set_index("recording"))
    display(Markdown(f"Pooled over the {len(validation)} recordings the RMSE is {scores.pooled_rmse:.4f} N·m."))
else:
    display(Markdown("No validation recording was given (`validation` is empty), so there is no held-out score."))

# %% [markdown]
# ## The verdict

# %% tags=["hide-input"]
display(Markdown(f"**{accepted.verdict()}**. The model file `{out.name}` holds the 39 parameters with their OLS standard "
                 f"errors, the route, the refinement, the audit margins per seed, the rescue if it ran, and this verdict "
                 f"in its header (source: {source})."))
