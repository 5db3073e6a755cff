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
# # Other arms: the ViperX 300 S and the SO-101
#
# *Beyond the paper.* The paper's introduction places the CRANE-X7 among the low-cost arms built
# from smart actuators, naming ALOHA, whose ViperX 300 S arms run on the same DYNAMIXEL X-series
# servos, and its conclusion lists transfer to other platforms as further validation. This
# chapter points the book's stages at two such arms, each from its published description:
#
# - the **ViperX 300 S** (Trossen Robotics / Interbotix; six joints and a gripper, XM540-W270 and
#   XM430-W350 servos, the shoulder and elbow each driven by two servos), the ALOHA arm;
# - the **SO-101** (The Robot Studio / Hugging Face LeRobot; five joints and a gripper, Feetech
#   STS3215 servos), whose URDF ships in the `example-robot-data` wheel.
#
# A robot is data here (`crane_lib.model.arm_description`): joints as exact fixed transforms,
# limits, gravity, the links' inertials, the actuators per axis, the controller gains and the
# servo bus. The CRANE-X7 is one instance, loaded from the files the rest of the book uses, and
# goes through the same general path in this chapter.
#
# **What runs on every arm**: the Newton–Euler model of any serial chain and its exact
# base-parameter grouping, with generated kernels checked against Pinocchio in the test suite on
# all three arms; the paper's structured single-joint and adjacent-pair
# excitation blocks, generated from the arm's limits and servo speeds and checked for full rank
# before anything is recorded; the twin (the description's inertials as its truth, drive settings
# by the CRANE-X7's rules from the servos' datasheets); and Algorithm 1 through the same stage
# functions as the CRANE-X7's (OLS, PD routing, SDP, CLIE, the dense audit over the arm's own Θ,
# the rescue, the verdict), the path `crane-id accept --robot vx300s` runs. The choices that do
# not transfer from the CRANE-X7 (the other arms' controller gains, their Θ grid, their twin's
# drive settings) are in the register, with their sources.
# Data: the arms' descriptions and command files, and twin recordings of each arm.

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import numpy as np

from crane_lib.acceptance.held_out import held_out
from crane_lib.acceptance.other_arms import identification_commands, recording_file
from crane_lib.excitation.arms import excitation_rank
from crane_lib.identification.clie_position import goal_counts
from crane_lib.logs.raw_log import read_raw_log
from crane_lib.model.arm_description import load_arm
from crane_lib.model.chain_model import ChainModel
from crane_lib.model.dynamics import model as shared_model
from crane_lib.model.position_loop import G_KP
from crane_lib.reporting.chapters import other_arms as view
from crane_lib.reporting.glued import glue, glue_md
from crane_lib.twin.truth import motor_line

records = view.load_records()
record = {r["arm"]: r for r in records}

# %% [markdown]
# ## The model and the excitation, side by side
#
# Each arm's model is the Newton–Euler recursion of its own chain, evaluated in exact rational
# arithmetic at random points; the reduced row echelon form of the stacked rows gives the base
# parameters and every other parameter's exact combination of them, the matrix $\mathbf K$ of
#
# $$
# \boldsymbol\beta = \mathbf K\boldsymbol\phi, \qquad
# \mathbf W_\mathrm{std}(\mathbf q,\dot{\mathbf q},\ddot{\mathbf q})\,\boldsymbol\phi
#   = \mathbf W(\mathbf q,\dot{\mathbf q},\ddot{\mathbf q})\,\boldsymbol\beta, \qquad
# p_b = \operatorname{rank}\mathbf K ,
# $$ (eq-arms-grouping)
#
# from the arm's $n_s$ standard parameters $\boldsymbol\phi$ to its $p_b$ base parameters
# $\boldsymbol\beta$. On the smallest arm, the SO-101, the grouping {eq}`eq-arms-grouping` the
# record states:

# %%
so101 = ChainModel(load_arm("so101"))  # the exact grouping: sympy on rational points
K, counts = so101.grouping.base_matrix(), record["so101"]["model"]
assert K.shape == (counts["n_base"], counts["n_standard"])
assert np.linalg.matrix_rank(K) == counts["n_base"]

# %% [markdown]
# The excitation is the paper's block structure (single-joint sweeps at three postures,
# adjacent pairs from three postures) derived from each arm's limits for the ViperX and the
# SO-101, and the paper's identification trajectories for the CRANE-X7. Its base regressor,
# stacked over the commanded states $i$ of the files, must have full column rank, and its
# condition number says how evenly it excites:
#
# $$
# \operatorname{rank}\begin{bmatrix}\mathbf W(\mathbf q_1,\dot{\mathbf q}_1,\ddot{\mathbf q}_1)
#   \\ \vdots \\ \mathbf W(\mathbf q_N,\dot{\mathbf q}_N,\ddot{\mathbf q}_N)\end{bmatrix} = p_b,
# \qquad \kappa(\mathbf W) = \frac{\sigma_\mathrm{max}(\mathbf W)}{\sigma_\mathrm{min}(\mathbf W)} .
# $$ (eq-arms-rank)

# %%
commands = identification_commands("so101").values()
rank = excitation_rank(so101.arm, commands, model=so101)
assert rank.rank == record["so101"]["excitation"]["rank"] == rank.n_base
np.testing.assert_allclose(rank.condition_number,
                           record["so101"]["excitation"]["condition_number"], rtol=1e-9)

# %% [markdown]
# Over the commanded states of every arm: {glue:md}`arms_ranks`. {glue:md}`arms_full_rank`

# %% tags=["hide-input"]
excited = view.excitation_frame(records)
glue_md("arms_ranks", "; ".join(
    "the {}'s {} files give rank {} of {} (κ = {:.4g})".format(
        arm, row["files"], row["rank"], row["base parameters"], row["κ"])
    for arm, row in excited.iterrows()))
short = excited[~excited["full rank"]]
glue_md("arms_full_rank", "Every arm's base parameters are all excited." if short.empty
        else "Not full rank: " + "; ".join("{} ({} unexcited)".format(arm, row.unexcited)
                                           for arm, row in short.iterrows()) + ".")
view.arms_table(records)

# %% [markdown]
# The paper's argument for its blocks (Appendix B-A) is that no regressor column needs three
# joints moving at once, because the Coriolis and centrifugal terms are quadratic in the joint
# velocities. On two arms it was not designed for, six block files reach full rank
# {eq}`eq-arms-rank`: the argument transfers. The CRANE-X7's count through the general path is
# the paper's ({paper}`full_model_param_count`):

# %% tags=["hide-input"]
view.crane_x7_table(records)

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-other-arms-torque", "caption": "Peak commanded torque over each servo's limit, per axis and arm: look for any bar above the dashed line at 1. Data: the arms' identification command files, inverse dynamics of the description's link inertials."}}
view.torque_share_figure(records)
plt.show()

# %% [markdown]
# The commanded motions {glue:text}`arms_torque_verdict` on the link inertials alone; the
# highest is the {glue:text}`arms_torque_arm`'s axis {glue:text}`arms_torque_axis:d`, at
# {glue:text}`arms_torque_share:.2g` % of its limit. Rotor inertia, friction and the
# feedback's corrections come on top on the arm.

# %% tags=["hide-input"]
torque = view.torque_frame(records)
glue("arms_torque_verdict", "stay within every servo's torque limit"
     if (torque["peak / limit"] <= 1).all() else "exceed a servo's torque limit")
glue("arms_torque_arm", torque["peak / limit"].idxmax())
glue("arms_torque_axis", torque.loc[torque["peak / limit"].idxmax(), "axis"])
glue("arms_torque_share", 100 * torque["peak / limit"].max())

# %% [markdown]
# ## Algorithm 1 on each arm
#
# Each other arm records its PI_ALPHA block on its twin (the adjacent pairs moved from the zero
# posture; on both arms this one block reaches full rank) and identifies it at 40 ms, as the
# CRANE-X7's representative condition is; the held-out blocks are recorded with other seeds.
# The CRANE-X7's row is the book's accepted model (AG02 at 40 ms, {doc}`06_audit`) with its
# error on V01–V03. Held-out errors are comparable within an arm, not across arms: the motions
# differ. The SO-101's accepted model, scored again on its held-out block's twin recording:

# %%
so101_run = record["so101"]["algorithm1"]              # the Algorithm 1 step's record
beta = np.array(so101_run["accepted"]["parameters"])   # its accepted model
logs = [read_raw_log(recording_file("so101", block)) for block in so101_run["held_out"]]
scored = held_out(beta, logs, 0.040, shared_model("reduced", arm=so101.arm))
np.testing.assert_allclose(scored.pooled_rmse, so101_run["held_out_rmse"], rtol=1e-9)

# %% [markdown]
# On the twin, {glue:md}`arms_verdicts`.

# %% tags=["hide-input"]
said = {(True, True): "the {}'s model is accepted after the rescue",
        (True, False): "the {}'s model is accepted without a rescue"}
glue_md("arms_verdicts", ", ".join(
    said.get((row["accepted"], row["rescued"]), "the {}'s model is rejected ({})").format(
        arm, row["verdict"]) for arm, row in view.verdicts(records).iterrows()))
view.algorithm1_table(records)

# %% [markdown]
# ### Time per stage
#
# Where each arm's computation goes, stage by stage, as timed when its record was computed. The
# arms' generated model kernels are compiled once per machine and loaded from a cache after
# that; a record computed on a fresh machine includes that compilation in its first stages.

# %% tags=["hide-input"]
view.stage_times_table(records, view.load_stage_times())

# %% [markdown]
# ## Driven through the servo's own loop
#
# The realization layer of the paper commands current from the host, through controller (2).
# The SO-101's STS3215 servos have no current mode (their operating modes are position,
# velocity, PWM and step), and their owners drive them as LeRobot does: goal positions in, the
# servo's own loop closing on its own encoder, the current read back. Interbotix ships the
# ViperX 300 S the same way. An arm's description says how it is driven (`drive_mode` in its
# `arm.toml`, the loop's registers in `[position_loop]`): the SO-101 is described in position
# mode; the ViperX keeps current mode as its own (the book's numbers above) and is run here in
# both. Every tick $T$ each servo shapes the goal $g$ by its profile (speed $v_\max$,
# acceleration $a_\max$) into $p$ and drives its motor with a PWM duty $d$ (the ROBOTIS
# e-Manual's position controller; the STS's loop has the same gains):
#
# $$
# \begin{aligned}
# v &\leftarrow v + \operatorname{clamp}\big(v^* - v, \pm a_\max T\big),\quad
#   v^* = \operatorname{sgn}(g - p)\min\big(v_\max, v_b(|g - p|), |g - p|/T\big),\quad
#   p \leftarrow p + vT,\\
# d &= \operatorname{clamp}\Big(K_P\,(p - \theta) + K_I T \sum (p - \theta)
#   + K_D\,\frac{\Delta(p - \theta)}{T},\ \pm d_\max\Big),
# \end{aligned}
# $$ (eq-arms-position-loop)
#
# $v_b$ the speed from which braking at $a_\max$ stops on the goal, and the duty switches the
# supply across the winding, against the back-EMF of the joint speed $\omega$:
#
# $$
# i = i_\mathrm{stall}\Big(d - \frac{\omega}{\omega_\mathrm{nl}}\Big), \qquad \tau = k_t\, i .
# $$ (eq-arms-duty-torque)
#
# The gains are the servo's registers in its firmware's units (the SO-101's are the P, I and D
# LeRobot sets: $K_P$ = {glue:text}`arms_pos_kp:.4g` duty/rad); every magnitude and its
# source is in the register ([the servo's position loop](../book/register_twin.md)). One
# function computes {eq}`eq-arms-position-loop` for the twin, for CLIE's closed-loop simulation
# of a position-mode record and for the bus emulator. At rest the profile sits on the goal and
# the back-EMF vanishes, so the current the servo draws is its sag times a known gain,
# $i = i_\mathrm{stall} K_P (g - \theta)$. On the SO-101's identification recording, while it
# holds its posture before and after the motion:

# %%
loop = so101.arm.position_loop  # arm.toml's [position_loop]: LeRobot's registers
gains = loop.gains(so101.arm.n_axes)  # K_P, K_I, K_D, d_max, v_max, a_max per axis
stall = np.array([motor_line(a, "so101")[0] for a in range(1, so101.arm.n_axes + 1)])
so101_log = read_raw_log(recording_file("so101", "PI_ALPHA"))
goal = goal_counts(so101_log.theta_ref)  # the Goal Position the host wrote (whole counts)
rest = so101_log.segment < 0  # holding, before and after the motion
predicted = (stall * gains[G_KP] * (goal - so101_log.theta))[rest].mean(axis=0)
measured = so101_log.current_command[rest].mean(axis=0)  # the present current, as logged

# %% tags=["hide-input"]
glue("arms_pos_kp", gains[G_KP, 0])
glue("arms_pos_sag", abs(np.degrees((goal - so101_log.theta)[rest].mean(axis=0))[1]))
glue("arms_pos_measured", abs(measured[1]))
glue("arms_pos_predicted", abs(predicted[1]))
glue("arms_pos_worst_ma", 1e3 * np.abs(predicted - measured).max())
glue("arms_pos_unit_ma", 1e3 * so101.arm.actuators[1].current_unit)

# %% [markdown]
# The shoulder lift sags {glue:text}`arms_pos_sag:.2f`° and draws
# {glue:text}`arms_pos_measured:.3f` A where {eq}`eq-arms-position-loop` and
# {eq}`eq-arms-duty-torque` give {glue:text}`arms_pos_predicted:.3f` A; over the six axes the
# largest difference is {glue:text}`arms_pos_worst_ma:.1f` mA, against the current register's
# unit of {glue:text}`arms_pos_unit_ma:.1f` mA.

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-other-arms-position", "caption": "The SO-101's shoulder lift in position mode, the first three seconds of its identification motion: the goal streamed at 1 kHz and the angle the servo's loop reaches (above; the lag grows with speed, the back-EMF asking a duty the error must supply), and the current it draws as the servo reports it (below, whole 6.5 mA units). Data: the SO-101's PI_ALPHA twin recording in position mode."}}
start = so101_log.t[so101_log.segment >= 0][0]
view.position_trace_figure(so101_log, 1, (start, start + 3.0))
plt.show()

# %% [markdown]
# What the mode does to identification: each arm whose servos' loop is described, through
# Algorithm 1 in both modes on the same command files and seeds.

# %% tags=["hide-input"]
modes = view.drive_mode_frame(records)
for key, label in (
    ("so_pos", "SO-101, position (its own)"), ("so_cur", "SO-101, current"),
    ("vx_cur", "ViperX 300 S, current (its own)"), ("vx_pos", "ViperX 300 S, position"),
):
    row = modes.loc[label]
    verdict = "accepted" if row["accepted"] == "yes" else "rejected"
    rescue = " after the rescue" if row["rescued"] == "yes" else " without a rescue"
    glue_md(f"arms_{key}_verdict", verdict + rescue)
    glue(f"arms_{key}_mne", row["held-out MNE (%)"])
    glue(f"arms_{key}_determined", row["well determined"])
    glue(f"arms_{key}_median", row["median error vs truth (%)"])
glue("arms_so_pos_tracking", modes.loc["SO-101, position (its own)",
                                       "tracking error RMS, worst axis (°)"])
view.drive_mode_table(records)

# %% [markdown]
# In its own position mode the SO-101 is {glue:md}`arms_so_pos_verdict`, with a held-out MNE of
# {glue:text}`arms_so_pos_mne:.3g` % and {glue:text}`arms_so_pos_determined` well-determined
# parameters (median error {glue:text}`arms_so_pos_median:.2g` % against the truth), its servos
# trailing the goal by {glue:text}`arms_so_pos_tracking:.2g`° RMS on the worst axis while
# moving; driven by controller (2) in current mode on the same command files it is
# {glue:md}`arms_so_cur_verdict` ({glue:text}`arms_so_cur_mne:.3g` %,
# {glue:text}`arms_so_cur_determined` well determined, median error
# {glue:text}`arms_so_cur_median:.2g` %). The ViperX 300 S in current mode, the book's, is
# {glue:md}`arms_vx_cur_verdict` ({glue:text}`arms_vx_cur_mne:.3g` %,
# {glue:text}`arms_vx_cur_determined` well determined, median error
# {glue:text}`arms_vx_cur_median:.2g` %), in position mode {glue:md}`arms_vx_pos_verdict`
# ({glue:text}`arms_vx_pos_mne:.3g` %, {glue:text}`arms_vx_pos_determined` well determined,
# median error {glue:text}`arms_vx_pos_median:.2g` %).

# %% [markdown]
# In position mode the torque record is the servos' current reading, not a command: its
# register unit and read noise enter the identification where the current-mode record carries
# the command's own rounding. The motion itself is the servos': the goal is streamed, the angle
# follows it with the loop's lag, and the identification sees the motion the arm made, as it
# does in current mode. On the ViperX the stock profile acceleration is below its blocks'
# ramps (the worst axis commanded {glue:text}`arms_pos_vx_share:.2g` times the profile's), so
# its servos reshape them; the SO-101's blocks stay inside its profile.

# %% tags=["hide-input"]
glue("arms_pos_vx_share", modes.loc["ViperX 300 S, position",
                                    "commanded / profile acceleration, worst axis"])

# %% [markdown]
# ## On the real arms
#
# The SO-101's Feetech servos speak their own bus protocol, not DYNAMIXEL Protocol 2.0:
# `crane-id record --robot so101 --port PORT` records it in position mode over that bus
# (`feetech-servo-sdk`), checked against an emulator of six STS3215 servos with the position-loop
# twin behind them; no real SO-101 has been recorded by it yet
# ([the register of the recorder](../book/register_hardware.md) says what that leaves unverified).
# The ViperX 300 S runs on DYNAMIXEL X-series servos like the CRANE-X7, with its shoulder and elbow each
# driven by two servos; its bus layout (IDs per axis, baud rate, which servo is a shadow and
# which is mounted reversed) is part of its description (`data/vx300s_description/arm.toml`),
# and the recorder and the Protocol 2.0 emulator of the chapter "Your own arm" take it from
# there: `crane-id record --robot vx300s --port PORT` writes the goals to each joint's primary
# servo, whose shadow follows it by its Secondary ID, and logs the joint's torque from both. At
# the ViperX's stock baud rate one cycle's packets do not fit in the control period; the
# recorder refuses that before opening the port and names the rate that fits, to be set on
# every servo and passed as `--baud` ([the register of the recorder](../book/register_hardware.md)
# gives the byte counts).

# %% [markdown]
# ## The exported model in MuJoCo, replayed against a held-out recording
#
# *Beyond the paper.* The accepted model leaves the book as an MJCF file (the chapter
# {doc}`12_consistent_model` builds its consistent links) with one actuator per axis as the arm
# is driven: in current mode a torque motor whose control is the servo's goal current (gear: the
# torque record's N·m/A, control and force range: the current limit), in position mode
# MuJoCo's position actuator with the servo loop's gains (`kp`, `kv`, `forcerange`); the
# identified dead time and control period are the file's custom numeric data. Whether the file
# reproduces the arm is checked the way a MuJoCo user would run it: the file simulated by
# `mujoco.mj_step` under the controller the recording used, on a recording the identification
# never saw. In current mode that is the realization controller (2), the same function the twin
# and the recorder run, called every control period $T$ on the simulated angle rounded to the
# encoder's counts, with the recording's reference; its goal current acts after the dead time.
# In position mode the goals the host streamed go through the servo's own profile into the
# position actuators, and the torque compared is the actuators' force against the logged present
# current. Per axis $j$, over the $N$ cycles of the held-out recording,
#
# $$
# \mathrm{RMSE}_{\theta,j} = \sqrt{\frac1N\sum_{k=1}^{N}\bigl(\theta^\mathrm{MuJoCo}_{kj}
#   - \theta_{kj}\bigr)^2}, \qquad
# \mathrm{RMSE}_{\tau,j} = \sqrt{\frac1N\sum_{k=1}^{N}\bigl(\bar\tau^\mathrm{MuJoCo}_{kj}
#   - \bar\tau_{kj}\bigr)^2},
# $$ (eq-arms-replay)
#
# $\bar\tau$ the torque record low-passed as the identification's 40 ms bundle is (at the control
# period both records carry the feedback's encoder-count chatter, which they do not share). Three files are
# replayed the same way: the accepted model's, the description's link inertials with no rotor
# inertia or friction (what the published description gives; the "before identification" row),
# and the twin's own truth (what a rigid-body file can reach against the twin's compliance, gear
# friction and torque-constant error). The choices (period, dead time, step, starting state) are
# in the register. The CRANE-X7's accepted model, replayed again on V01 from its file, and
# {eq}`eq-arms-replay` by hand against the record:

# %% tags=["hide-input"]
from crane_lib.export import replay  # noqa: E402

replays = view.load_replays()

# %%
crane_replay = replays["crane_x7"]                      # the replay step's record
held_out_log = read_raw_log(replay.held_out_log("crane_x7"))
identified_file = replay.model_paths("crane_x7")[0]  # results/replay: identified
again = replay.replay(identified_file, held_out_log, "identified")
by_hand = np.sqrt(np.mean((again.angle - again.measured_angle) ** 2, axis=0))
recorded = crane_replay["models"][0]
np.testing.assert_allclose(by_hand, recorded["angle_rmse_rad"], rtol=1e-9)
np.testing.assert_allclose(again.torque_rmse, recorded["torque_rmse_N_m"], rtol=1e-9)

# %% [markdown]
# Largest error over the axes, per arm and model: {glue:md}`replay_largest`

# %% tags=["hide-input"]
largest = view.replay_summary(replays, records)
glue_md("replay_largest", "; ".join(
    "the {} ({} mode, held-out {}): {}".format(arm, group["drive mode"].iloc[0],
                                                group["held out"].iloc[0], ", ".join(
        "{} {}".format(model, "diverged" if row["largest angle RMSE (°)"] is None else
                       "{:.3g}° and {:.3g} N·m".format(row["largest angle RMSE (°)"],
                                                       row["largest torque RMSE (N·m)"]))
        for (_, model), row in group.iterrows()))
    for arm, group in largest.groupby(level="arm", sort=False)) + ".")
names = {r["arm"]: r["description"]["name"] for r in records}

# %% tags=["hide-input"]
view.replay_table(replays["crane_x7"], names["crane_x7"])

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-other-arms-replay-crane-x7", "caption": "The CRANE-X7 on held-out V01: measured angle and torque record against the MuJoCo replay of the identified and the prior MJCF under controller (2), on the axis with the largest torque swing (torques low-passed as the 40 ms bundle). Data: results/replay/crane_x7.json."}}
view.replay_figure(replays["crane_x7"], names["crane_x7"])
plt.show()

# %% tags=["hide-input"]
view.replay_table(replays["vx300s"], names["vx300s"])

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-other-arms-replay-vx300s", "caption": "The ViperX 300 S on its held-out PI_BETA block: measured against the MuJoCo replay of the identified and the prior MJCF under controller (2), on the axis with the largest torque swing. Data: results/replay/vx300s.json."}}
view.replay_figure(replays["vx300s"], names["vx300s"])
plt.show()

# %% tags=["hide-input"]
view.replay_table(replays["so101"], names["so101"])

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-other-arms-replay-so101", "caption": "The SO-101 on its held-out PI_BETA block, in the drive mode of its record: measured against the MuJoCo replay of the identified and the prior MJCF, on the axis with the largest torque swing. Data: results/replay/so101.json."}}
view.replay_figure(replays["so101"], names["so101"])
plt.show()

# %% [markdown]
# What the rows say. Under controller (2) the description's file cannot be driven: without the
# servos' rotor inertia the small links' loops are far faster than the controller's period and
# oscillate, while the identified file follows the recording about as closely as the twin's
# own truth does; what is left is what no rigid-body file holds (the drivetrain's compliance and
# load-dependent friction, the torque-constant error the identified model absorbs and the truth
# does not). In position mode the servo's stiff loop tracks the goal with any of the three files,
# so the angles hardly tell them apart; the torque record does, most on the axes whose rotor
# inertia dwarfs their link's. The files are in `results/replay/` (`<arm>_identified.xml`),
# ready to load with `mujoco.MjModel.from_xml_path`; `crane-id accept ... --validation LOG`
# prints the same replay for a new recording.
