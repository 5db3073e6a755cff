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
# # Excitation
#
# The paper excites the arm with hand-designed joint-space waypoint sequences rather than
# optimized waveforms (Sec. V-A, Appendix B-A): a single-joint block $\mathcal{S}(\bar{q})$ of
# ten one-axis sweeps at a nominal posture, and three adjacent-pair blocks $\Pi_\alpha$,
# $\Pi_\beta$, $\Pi_\gamma$ that apply the pairs $(1,2),\dots,(6,7)$ and a hand primitive at
# their own home postures. Forty identification trajectories and three held-out validation
# trajectories V01–V03 are concatenations of these blocks, stored as command files
# (Appendix B-B) in `trajectories/`.
#
# The bodies of Tables XIII–XV were lost in the text we have. Everything below is generated
# by `crane_lib.excitation.design` from our reconstruction of them; each reading, with its evidence
# and what it gives against the paper's counts, is in the reconstruction register
# ([excitation section](../book/register_excitation.md)).

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from crane_lib.excitation import design as ex
from crane_lib.excitation.commands import (
    ACCEL_TIME_S,
    commanded_duration,
    interpolate,
    segment_statistics,
)
from crane_lib.constants import VELOCITY_CEILING_DEG_S
from crane_lib.paper_numbers import paper

identification = ex.generate_identification()
validation = ex.generate_validation()
counts = ex.set_counts(identification)

# %% [markdown]
# ## Command format and the 4-1-4 profile (Appendix B-B)
#
# Every file carries the same header: the per-axis velocity ceilings and nominal
# acceleration times below. Each waypoint row gives eight absolute angles in degrees and a
# speed factor in percent; the start posture $\bar{q}_A$ is assumed, and the file ends at
# $\bar{q}_0$ with a repeated $\bar{q}_0$ row at 20 % and a 1 s dwell. The interpolator runs
# every axis on its own profile (its own ceiling and nominal acceleration time, ramp shortened
# on short moves), all axes starting together and the segment ending when the slowest axis
# arrives; each profile is a quartic acceleration ramp, a constant-velocity cruise and a
# quartic deceleration ramp, our reading of "4-1-4". A ramp is one axis's acceleration phase
# in one segment, and it carries floor(r/Ts) samples at interval Ts (register E-3).

# %%
header = pd.DataFrame(
    {
        "velocity ceiling (°/s)": VELOCITY_CEILING_DEG_S,
        "at factor 0.90 (°/s)": 0.90 * VELOCITY_CEILING_DEG_S,
        "nominal acceleration time (s)": ACCEL_TIME_S,
    },
    index=pd.Index(range(1, 9), name="axis"),
)
header["paper at 0.90 (°/s)"] = [
    paper("vel_at_090_axis2" if axis == 2 else "vel_at_090_axes_1_3to8").value for axis in header.index
]
header.round(3)

# %% [markdown]
# ## Table IV: the trajectory families

# %%
composition = ex.table_composition()
families = pd.DataFrame(
    [
        ("PA01–PA11", "S(q̄A) followed by the pair blocks of rows 01–11", 11),
        ("PB01–PB11", "S(q̄B) followed by the same pair blocks", 11),
        ("PC01–PC11", "S(q̄C) followed by the same pair blocks", 11),
        ("AP01–AP05", "pair blocks alone; AP04/AP05 repeat AP02 at 0.30/0.60", 5),
        ("AG01–AG02", "all three pair blocks; AG02 adds S at A, B and C", 2),
    ],
    columns=["family", "content", "trajectories"],
).set_index("family")
assert families.trajectories.sum() == len(identification)
families

# %% [markdown]
# ## Table XIII: the single-joint block
#
# Ten primitives in the order executed; the angles each one visits from its start. Axis 4 is
# two-sided at Posture A and one-sided at B and C; at C the axis-2 sweep runs
# +60 → 0 → −60 → +60, and its return rides on the outbound leg of the axis-3 sweep. The hand
# primitive runs at $\bar{q}_A$ in the A block and at $\bar{q}_0$ in the B and C blocks.

# %%
postures = pd.DataFrame(
    {name: q for name, q in (("q̄0", ex.Q0), ("q̄A", ex.QA), ("q̄B", ex.QB), ("q̄C", ex.QC), ("w", ex.W))},
    index=[f"θ{j}" for j in range(1, 8)] + ["hand"],
).T
postures

# %%
ex.table_single_joint_block()

# %% [markdown]
# ## Table XIV: the three pair blocks
#
# Each entry is the home posture $h$ and the direction $s$ of the primitive
# $\mathcal{P}_{j,j+1}(s; h)$, which moves both joints by $s\,\delta$, $\delta = 60°$, and
# back. "Entry merged" marks the two posture changes B-E describes as folded into the next
# outbound leg: the axis-4 retraction into (3,4) of $\Pi_\beta$ and $\Pi_\gamma$, and the
# axis-2 transit into (4,5) of $\Pi_\gamma$, the one that moves a third joint.

# %%
ex.table_pair_blocks()

# %% [markdown]
# ## Table XV: composition of the 40 trajectories
#
# The rows are one of 116 compositions that meet every constraint of the text and the paper's
# segment and duration totals (`tools/table_xv_search.py`, register E-11). What every one of
# them shares: six of the eleven rows run at 0.30, row 01 is long (PB01 is one of Table XI's
# long repeated trajectories) and rows 05/10/11 are one block sequence at three levels.

# %%
composition

# %% [markdown]
# ## Overview of the set (Fig. 5 style)
#
# Commanded duration, waypoints and the share of segments moving one, two or three arm
# joints, per trajectory.

# %%
stats = {name: segment_statistics(cmd) for name, cmd in identification.items()}
overview = pd.DataFrame(
    {
        "waypoints": [s.n_waypoints for s in stats.values()],
        "duration (s)": [s.commanded_duration_s for s in stats.values()],
        **{
            f"{k}-joint segments": [int((s.segments.n_moving_arm_joints == k).sum()) for s in stats.values()]
            for k in (1, 2, 3)
        },
    },
    index=pd.Index(list(stats), name="trajectory"),
)

fig, (ax_t, ax_k) = plt.subplots(2, 1, figsize=(11, 5.5), sharex=True)
x = np.arange(len(overview))
colours = ["C0" if n.startswith("PA") else "C1" if n.startswith("PB") else "C2" if n.startswith("PC") else "C3" for n in overview.index]
ax_t.bar(x, overview["duration (s)"], color=colours)
ax_t.set_ylabel("commanded duration (s)")
bottom = np.zeros(len(overview))
for k, colour in zip((1, 2, 3), ("0.75", "0.45", "k")):
    ax_k.bar(x, overview[f"{k}-joint segments"], bottom=bottom, color=colour, label=f"{k} arm joint{'s' if k > 1 else ''}")
    bottom += overview[f"{k}-joint segments"]
ax_k.set_ylabel("segments")
ax_k.legend(ncol=3, fontsize=8)
ax_k.set_xticks(x, overview.index, rotation=90, fontsize=7)
fig.suptitle("The 40 identification trajectories (PA blue, PB orange, PC green, AP/AG red)")
fig.tight_layout()

# %% [markdown]
# ## Fig. 8: commanded angles of all eight axes for the selected trajectory
#
# The single-joint blocks occupy roughly the first two thirds of AG02, the pair blocks the
# last third, where several axes move together.

# %%
def plot_commands(cmd, title):
    ref = interpolate(cmd, dt=0.01)
    fig, axes = plt.subplots(8, 1, figsize=(11, 9), sharex=True)
    for j, ax in enumerate(axes):
        ax.plot(ref.t, np.degrees(ref.q[:, j]), lw=0.9)
        ax.set_ylabel(f"θ{j + 1}" if j < 7 else "hand", rotation=0, labelpad=18, fontsize=8)
        ax.tick_params(labelsize=7)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(title + " (degrees)")
    fig.tight_layout()
    return fig


selected = {**identification, **validation}[trajectory]
plot_commands(selected, f"{trajectory}: commanded angles");

# %% [markdown]
# ## Fig. 9: V03 commands
#
# The validation trajectories do not use the block structure: V01 moves all seven arm joints
# together between ±45° about $\bar{q}_A$, V02 repeats those waypoints at three factors, and
# V03 runs four-joint groups, the wrist group and shoulder–wrist alternations at three factors.

# %%
plot_commands(validation["V03"], "V03: commanded angles");

# %% [markdown]
# ## The counts of Appendix B against the paper
#
# "this book" is computed from the generated files. Where the two differ, the last column
# says why; the register gives the evidence.

# %%
val_total = sum(commanded_duration(c) for c in validation.values())
low80, high80 = counts.undersampled_share[0.080]
ag02 = stats["AG02"]
paper_ag02_rows, paper_ag02_s = paper("ag02_waypoints").value, paper("ag02_commanded_duration").value
paper_80 = paper("ramps_undersampled_80ms")
outside_80 = {n: v for n, v in counts.undersampled_by_file[0.080].items() if not paper_80.value <= 100 * v <= paper_80.value_hi}
why_80 = f"{len(counts.undersampled_by_file[0.080]) - len(outside_80)} of {counts.n_files} files inside the paper's range" + (
    "; outside: " + ", ".join(f"{n} {100 * v:.0f} %" for n, v in sorted(outside_80.items())) if outside_80 else "")
total_in_our_units = paper("id_motion_total").value * ag02.commanded_duration_s / paper_ag02_s
rows = [
    ("identification files", "id_candidate_count", counts.n_files, ""),
    ("commanded segments", "commanded_segment_count", counts.n_segments,
     f"per AG02 waypoint {counts.n_segments / ag02.n_waypoints:.2f} against the paper's "
     f"{paper('commanded_segment_count').value / paper_ag02_rows:.2f}: the gap follows AG02's missing rows"),
    ("segments moving three arm joints", "three_joint_segment_count", counts.n_three_joint_segments, ""),
    ("most arm joints in one segment", "max_commanded_joints_together", counts.max_moving_arm_joints, ""),
    ("files without a three-joint segment", "traj_without_three_joint", len(counts.files_without_three_joint), ""),
    ("AG02 waypoints", "ag02_waypoints", ag02.n_waypoints,
     f"{paper_ag02_rows - ag02.n_waypoints:.0f} posture-change rows the text does not place (E-8, E-9)"),
    ("AG02 commanded duration (s)", "ag02_commanded_duration", round(ag02.commanded_duration_s, 1),
     "the single-joint blocks run at 0.75, the only level bracketing the paper's duration; the missing rows (E-6)"),
    ("40 files, total (min)", "id_motion_total", round(counts.total_duration_s / 60, 1),
     f"the paper's total scaled by our AG02 duration over its own is {total_in_our_units:.1f} min; "
     "the paper's figure may also be realized rather than commanded time (E-11)"),
    ("slowest trajectory (lowest mean commanded speed)", None, counts.slowest,
     "the paper names PA07 the slowest (B-G, Table XVI)"),
    ("V01–V03 total (s)", "validation_motion_total", round(val_total, 1), "cycle counts chosen to come closest"),
    ("effective ramp, median (s)", "ramp_duration_median", round(counts.ramp_median_s, 3), ""),
    ("effective ramp, minimum (s)", "ramp_duration_min", round(counts.ramp_min_s, 3),
     "no move of ours is short enough to shorten a ramp below the nominal acceleration time (E-3)"),
    ("ramps < 3 samples at 80 ms (%, range over files)", "ramps_undersampled_80ms",
     f"{100 * low80:.0f}–{100 * high80:.0f}", why_80),
    ("ramps < 3 samples at 40 ms (%, max over files)", None,
     f"{100 * counts.undersampled_share[0.040][1]:.0f}", "the paper: none at 10, 20 and 40 ms"),
]
count_table = pd.DataFrame(
    [
        {
            "quantity": q,
            "paper": paper(pid).text() if pid else "",
            "this book": ours,
            "why they differ": why,
        }
        for q, pid, ours, why in rows
    ]
).set_index("quantity")
count_table

# %% [markdown]
# ## Identifiability on the commanded states: rank and κ
#
# Appendix B-A argues that motions of at most two joints leave no regressor monomial out,
# and checks it on the data: AP03, no segment of which moves more than two arm joints, gives
# a 39-column regressor of full rank. Here the 39-column reduced regressor is built on the
# COMMANDED references sampled at `ts`, the rows of all eight axes stacked, and κ is
# $\sigma_{\max}/\sigma_{\min}$ of that matrix as it stands (no column scaling, like the
# paper's $W_\mathrm{all}$). Recorded data will move these numbers; this is the first check.

# %%
from crane_lib.model.dynamics import regressor

kappa_ids = {"AP01": "ap01_kappa_40ms", "AP02": "ap02_kappa_40ms", "AP03": "ap03_kappa_40ms", "AG02": "ag02_kappa_40ms"}
kappa_rows = []
for name, pid in kappa_ids.items():
    ref = interpolate(identification[name], dt=ts)
    w_all = regressor(ref.q, ref.qd, ref.qdd, parameter_set="reduced").reshape(-1, 39)
    sigma = np.linalg.svd(w_all, compute_uv=False)
    kappa_rows.append(
        {
            "trajectory": name,
            "rows (8N)": w_all.shape[0],
            "rank": int(np.linalg.matrix_rank(w_all)),
            "κ this book": round(sigma[0] / sigma[-1], 1),
            "κ paper (recorded, 40 ms)": paper(pid).value,
        }
    )
pd.DataFrame(kappa_rows).set_index("trajectory")

# %% [markdown]
# ## Mayeda's condition, shown on this regressor
#
# Appendix B-A's argument has two parts, and both can be checked on the model itself rather
# than asserted. First, the regressor is exactly quadratic in the joint velocities and linear
# in the accelerations, so every entry is a configuration-dependent function times one
# $\ddot\theta_k$, one product $\dot\theta_k\dot\theta_l$, or nothing: no entry needs three
# joints to move. For a quadratic form the polarization identity
# $Q(a+b+c) = Q(a+b) + Q(a+c) + Q(b+c) - Q(a) - Q(b) - Q(c)$ holds exactly; the first column
# below is its largest violation on random states with three moving joints (with gravity and
# accelerations zero), which is rounding error if and only if no cubic velocity term exists.
# Second, the configuration dependence only needs the other joints *placed*: a regressor
# stacked from random states in which at most two (adjacent or not) joints move, the rest
# held at random angles, already has the full rank of each parameter set.

# %%
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.identifiability import numerical_rank

rng = np.random.default_rng(7)
mayeda_rows = []
for set_name in ("reduced", "full"):
    model = DynamicModel(set_name)
    n = 600
    q = rng.uniform(-np.pi, np.pi, (n, 8))
    parts = np.zeros((3, n, 8))
    for i in range(n):
        joints = rng.choice(7, size=3, replace=False)
        parts[np.arange(3), i, joints] = rng.normal(0, 2, 3)
    zeros = np.zeros((n, 8))

    def quad(qd):
        # velocity part only: no gravity, no acceleration, friction removed (it is linear in qd)
        return model.regressor(q, qd, zeros, gravity=False) - model.regressor(q, zeros, zeros, gravity=False) - \
            (model.regressor(q, qd, zeros, gravity=False) - model.regressor(q, -qd, zeros, gravity=False)) / 2

    a, b, c = parts
    polarization = quad(a + b + c) - (quad(a + b) + quad(a + c) + quad(b + c) - quad(a) - quad(b) - quad(c))
    two_joint_q = rng.uniform(-np.pi, np.pi, (3000, 8))
    qd2, qdd2 = np.zeros((3000, 8)), np.zeros((3000, 8))
    for i in range(3000):
        joints = rng.choice(7, size=2, replace=False)
        qd2[i, joints] = rng.normal(0, 2, 2)
        qdd2[i, joints] = rng.normal(0, 5, 2)
    qd2[:, 7], qdd2[:, 7] = rng.normal(0, 2, 3000), rng.normal(0, 5, 3000)  # the hand moves on its own axis
    w_two = model.regressor(two_joint_q, qd2, qdd2).reshape(-1, model.n_parameters)
    mayeda_rows.append(
        {
            "parameter set": set_name,
            "columns": model.n_parameters,
            "max polarization violation (N·m)": float(np.abs(polarization).max()),
            "rank with at most two arm joints moving": numerical_rank(w_two),
        }
    )
pd.DataFrame(mayeda_rows).set_index("parameter set")
