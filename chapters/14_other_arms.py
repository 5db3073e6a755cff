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
# **Data: the arms' descriptions and command files, and twin recordings of each arm.**

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from crane_lib.reporting import other_arms as view

records = view.load_records()

# %% [markdown]
# ## The model and the excitation, side by side
#
# Each arm's model is the Newton–Euler recursion of its own chain, evaluated in exact rational
# arithmetic at random points; the reduced row echelon form of the stacked rows gives the base
# parameters and every other parameter's exact combination of them. The excitation is the
# paper's block structure (single-joint sweeps at three postures, adjacent pairs from three
# postures) derived from each arm's limits for the ViperX and the SO-101, and the paper's
# identification trajectories for the CRANE-X7.

# %% tags=["hide-input"]
display(view.arms_table(records))
display(Markdown(view.rank_sentence(records)))

# %% [markdown]
# The paper's argument for its blocks (Appendix B-A) is that no regressor column needs three
# joints moving at once, because the Coriolis and centrifugal terms are quadratic in the joint
# velocities. On two arms it was not designed for, six block files reach full rank: the
# argument transfers. The CRANE-X7's count through the general path is the paper's:

# %% tags=["hide-input"]
display(view.crane_x7_table(records))

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-other-arms-torque", "caption": "Peak commanded torque over each servo's limit, per axis and arm: look for any bar above the dashed line at 1. Data: the arms' identification command files, inverse dynamics of the description's link inertials."}}
view.torque_share_figure(records)
plt.show()

# %% tags=["hide-input"]
display(Markdown(view.torque_sentence(records)))

# %% [markdown]
# ## Algorithm 1 on each arm
#
# Each other arm records its PI_ALPHA block on its twin (the adjacent pairs moved from the zero
# posture; on both arms this one block reaches full rank) and identifies it at 40 ms, as the
# CRANE-X7's representative condition is; the held-out blocks are recorded with other seeds. The
# CRANE-X7's row is the book's accepted model (AG02 at 40 ms, {doc}`06_audit`) with its error on
# V01–V03. Held-out errors are comparable within an arm, not across arms: the motions differ.

# %% tags=["hide-input"]
display(view.algorithm1_table(records))
display(Markdown(view.algorithm1_sentence(records)))

# %% [markdown]
# ### Time per stage
#
# Where each arm's computation goes, stage by stage, as timed when its record was computed. The
# arms' generated model kernels are compiled once per machine and loaded from a cache after
# that; a record computed on a fresh machine includes that compilation in its first stages.

# %% tags=["hide-input"]
display(view.stage_times_table(records, view.load_stage_times()))

# %% [markdown]
# ## On the real arms
#
# The SO-101's Feetech servos speak their own bus protocol, not DYNAMIXEL Protocol 2.0; a
# recorder for it is out of this book's scope, so the SO-101 runs on its twin only. The
# ViperX 300 S runs on DYNAMIXEL X-series servos like the CRANE-X7, with its shoulder and elbow each
# driven by two servos; its bus layout (IDs per axis, baud rate, which servo is a shadow and
# which is mounted reversed) is part of its description (`data/vx300s_description/arm.toml`),
# and the recorder and the Protocol 2.0 emulator of the chapter "Your own arm" take it from
# there: `crane-id record --robot vx300s --port PORT` writes the goals to each joint's primary
# servo, whose shadow follows it by its Secondary ID, and logs the joint's torque from both. At
# the ViperX's stock baud rate one cycle's packets do not fit in the control period; the
# recorder refuses that before opening the port and names the rate that fits, to be set on
# every servo and passed as `--baud` ([the register of the recorder](../book/register_hardware.md)
# gives the byte counts).
