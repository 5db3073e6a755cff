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
# *Paper Algorithm 1, Sec. III-A (the control loop), Sec. IV-C, VI-E (audit and rescue), VI-C
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
# papermill your_arm.ipynb AG02_report.ipynb -p log AG02.csv \
#     -p trajectory trajectories/AG02.txt -p ts 0.04 -p refine fast -p out AG02_model.csv \
#     -p validation '["V01.csv", "V02.csv", "V03.csv"]'
# ```
#
# The report checks the recording, identifies it (OLS with κ and standard errors, the routing
# test, the projection), refines it, audits the inertia matrix over all poses on seeds 1–5,
# rescues it if a seed fails and audits again, and writes the model file, or a rejection
# naming the pose where the audit failed. `crane-id accept` does the same in one command; both
# check their inputs through one function, `crane_lib.cli.common.accept_inputs`, and then
# call one function, `crane_lib.acceptance.accepted.accept_recording`, the path of the main
# job too.
#
# **Data in this book: the digital twin, recorded through an emulator of the servos' DYNAMIXEL
# protocol in lockstep timing.** The book has no arm. With `log` left empty, the chapter starts the emulator (eight
# servos on a pseudo-terminal with the twin's plant integrating behind them), records the
# command file on it with the same recorder and the real dynamixel-sdk that an arm would get,
# and reports on that recording. It is short (AP01, the shortest identification trajectory) so
# that the book builds in minutes; the real-time recording of AG02 and the notebook on it are
# timed in `benchmarks/bench_hardware.py`.

# %% tags=["parameters"]
# your raw log (.csv, .csv.gz or .npz); "" records the demonstration through the emulator
log = ""
# the command file the recording executed: a path, or the name of one in trajectories/
trajectory = "AP01"
ts = 0.04  # sampling interval of the identification, s
refine = "fast"  # fast | clie | didim | none (crane-id identify --help explains each)
# the model file to write (never an input; an existing one only with force = True);
# "" writes this report's own _build/your_arm/<trajectory>_model.csv (replaced each run)
out = ""
force = False  # replace an existing `out`
# held-out recordings to score the model on (e.g. your V01-V03), optional: a list, or
# from papermill a JSON list '["V01.csv", "V02.csv"]' or one path
validation = []

# %% [markdown]
# The checks come first, before anything is computed or written, and they are those of
# `crane-id accept` (one function, `crane_lib.cli.common.accept_inputs`): the model file is
# none of the inputs and no folder, special file or pseudo-filesystem, and an existing one is
# replaced only with `force = True`; the recording's metadata carry the sha256 of the command
# file given as `trajectory`; the recording can support a model (samples per parameter, motion
# on every axis, condition number); each held-out recording is long enough to score and is not
# the recording identified. A refusal is one line naming the file and what was expected, and
# papermill exits non-zero with nothing written.

# %% tags=["hide-input"]
from pathlib import Path

from crane_lib.cli.common import accept_inputs
from crane_lib.paths import REPO_ROOT, TRAJECTORY_DIR

trajectory = (Path(trajectory) if Path(trajectory).suffix
              else TRAJECTORY_DIR / f"{trajectory}.txt")
demonstration = not log
# the demonstration's files and a report's default model file are this page's own output,
# beside the built book (the book's records under results/ are the main job's, and a page
# never writes one)
folder = REPO_ROOT / "_build" / "your_arm"
own_output = not out
if own_output:
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{trajectory.stem}_model.csv"
if not demonstration:  # the demonstration's recording is checked once it is made
    inputs = accept_inputs(log, trajectory, out, validation, ts, force or own_output,
                           repair=True, refine=refine, notebook=True)

# %% tags=["hide-input"]
import warnings

from IPython.display import Markdown, display

from crane_lib.acceptance.accepted import accept_recording, save_accepted
from crane_lib.acceptance.held_out import held_out
from crane_lib.hardware.emulated import demo_config, record_on_emulator
from crane_lib.logs.preprocessing import preprocess
from crane_lib.reporting import arm_report

# cvxpy on Clarabel's inexact exits; the audit decides
warnings.filterwarnings("ignore", message="Solution may be inaccurate")
source = f"your recording `{Path(log).name}`"

# %% [markdown]
# ## The recording
#
# In the demonstration the recorder runs as it does on the arm: it checks the command file
# against the joint limits and the current clamps, checks the port and every servo (ID, model
# number, firmware), puts them into current control with read-back, moves the arm from where
# it rests to the start posture, and runs the controller's loop until the command file ends,
# the torque off on every servo at the end. Each of its cycles is stamped.
#
# On the arm that loop runs once per control period of the host's clock, and a host that stalls
# longer than the cycle watchdog stops it with the torque off, as it must (a longer gap would
# also make the log unreadable). The book, though, is built on shared machines, where the emulator and the
# recorder compete for two cores with everything else: in real time a stall would stop the
# demonstration on some builds and not on others. The demonstration therefore runs in
# **lockstep timing**, a setting for tests and demonstrations that the recorder accepts only
# from the emulator: the emulator's clock is driven by the bus (each cycle's sync read starts
# the next control period of the arm's time, and within the cycle time passes as the packets
# would take on the bus), and the recorder stamps the log on the same grid. The
# controller, sequencer, packets, checks and log are those of a real-time recording by a host
# that never stalls, and they come out the same on every build. What lockstep cannot show is
# how punctual the loop is: the cycle times below are how long this machine took per cycle,
# not a measurement of the real-time loop, which `benchmarks/bench_hardware.py` makes. The
# settings, as this build has them:

# %% tags=["hide-input"]
display(Markdown(arm_report.recorder_sentence()))

# %%
if demonstration:
    log = folder / f"{trajectory.stem}_emulator.csv.gz"
    emulated = record_on_emulator(trajectory, log, config=demo_config(lockstep=True),
                                  lead_s=1.0, tail_s=1.0)

# %% tags=["hide-input"]
if demonstration:
    emulated.require_complete()
    inputs = accept_inputs(log, trajectory, out, validation, ts, force or own_output,
                           repair=True, refine=refine, notebook=True)
    display(Markdown(arm_report.emulator_sentence(emulated, inputs.command.name)))
    source = f"the twin through the emulator in lockstep timing, `{Path(log).name}`"

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-arm-cycles", "caption": "The recorder's cycle times (left) and three measured angles against their reference (right): look for cycles far beyond 1 ms and for an angle that leaves its reference. Data: named in the figure's title."}}
if demonstration:
    arm_report.cycle_figure(log, inputs.command.name)

# %% [markdown]
# ## Preprocessing checks (Appendix D-C)
#
# Reading the log checks what preprocessing relies on: the paper's column layout, strictly
# increasing stamps, no gap longer than the cycle watchdog, no NaN, a complete last line. A recording that
# fails any of these stops here with the file and the line named; `repair` drops a truncated
# last line or repeated stamps and lists what it dropped. The bundle at the chosen interval
# shows how much of the record the clamp rule masks (Appendix D-F), and the last two rows how
# much of the recorder's safety limits the recording used (register "the recorder on the
# arm"). A clamp-masked share above a few percent means the trajectory asks more than the arm
# gives at that speed; a lower speed factor is the remedy.

# %%
recording_log, command = inputs.log, inputs.command
bundle = preprocess(recording_log, ts)

# %% tags=["hide-input"]
display(Markdown(arm_report.log_format_sentence(recording_log)))
arm_report.checks_table(recording_log, bundle, source)

# %% [markdown]
# ## Algorithm 1
#
# One call runs the whole algorithm on the recording: OLS by QR on the 39-parameter model,
# the routing test at the configurations the record visits, the conditional SDP projection
# when that test fails, the refinement, the all-pose audit over Θ on seeds 1–5, the rescue
# SDP if any seed fails, and the re-audit that decides. The model file is written either way;
# its header says whether the model was accepted.

# %%
accepted = accept_recording(recording_log, command.name, ts, refine=refine)
model_file = save_accepted(out, accepted, new=not inputs.force)

# %% [markdown]
# ### OLS, route and projection
#
# The standard errors are OLS's, from the residual variance and $(\mathbf W^\top\mathbf W)^{-1}$;
# a large relative error marks a parameter the recording does not pin down, and a large κ a
# trajectory that excites the parameters unevenly (the paper's AG02 at 40 ms is the
# reference). The route is the routing test's: O-C when the OLS model is positive definite at
# every visited configuration (the refinement starts from it), O-S-C when it is projected
# first.

# %% tags=["hide-input"]
display(Markdown(arm_report.identification_sentence(accepted)))
arm_report.parameter_table(accepted)

# %% [markdown]
# ### Refinement, audit and rescue
#
# The refinement fits the closed-loop simulation of the same controller to the recorded
# torque (CLIE, Appendix D-F). The audit then checks the inertia matrix at every
# configuration of the dense pose set over Θ that each seed draws (chapter "The all-pose PD
# audit"); the model is accepted only if every seed finds it positive definite. A model that fails is moved to the nearest one that is positive definite
# with a margin on a growing constraint set (the rescue) and audited again on fresh draws.

# %% tags=["hide-input"]
display(Markdown(arm_report.refinement_sentence(accepted)))
display(arm_report.audit_table(accepted))
display(Markdown(arm_report.rescue_sentence(accepted)))

# %% [markdown]
# ### Held-out score
#
# Given validation recordings (the paper's V01–V03, recorded on your arm), the model's torque
# prediction on each is scored as in Sec. VI-C: RMSE over all axes and samples, and the MNE
# (each axis's RMSE over its peak-to-peak torque, averaged over the axes).

# %% tags=["hide-input"]
if inputs.validation:
    scores = held_out(accepted.parameters.values, inputs.validation, ts)
    display(arm_report.held_out_table(scores))
else:
    display(Markdown("No validation recording was given (`validation` is empty), "
                     "so there is no held-out score."))

# %% [markdown]
# ## The verdict
#
# A rejected model is not a failed run: the verdict names the seed, λmin and the joint angles
# where the audit found the inertia matrix not positive definite. Recording the trajectory
# again, or a richer one (AG02 excites every parameter; the shorter families leave some
# weakly determined), usually moves the estimate away from that region.

# %% tags=["hide-input"]
display(Markdown(arm_report.verdict_sentence(accepted, out, source)))
