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
# # Reproducibility: repeated executions and the sampling interval
#
# *Paper Sec. V-B, VII-D, Appendix E-B; Table XI and Fig. 10.* What reproduces, and to what
# precision, differs at three levels. Rerunning the pipeline on the same recording is exact by
# construction (every draw of this book takes a seed, and a rerun writes byte-identical
# records). Rerunning the same command file on the arm gives a new recording, and the paper
# measures what that changes: five trajectories were executed more than once, each execution
# is fitted on its own at 40 ms and predicts the held-out records, and the spread of that
# error across executions is the scale against which every comparison of the paper is read.
# Changing a processing choice, here the sampling interval, is the third level.
#
# This chapter reproduces the second and third levels: Table XI (run-to-run spread of held-out
# RMSE), the two AG02 executions compared parameter by parameter and by what they predict,
# whether the all-pose audit gives the same verdict on both, and the sampling-interval ladder
# with the ramp-sample criterion that fixes 40 ms.
#
# **Data: the digital twin's recordings**, not the authors' arm. The twin's repeated executions
# are the same command file recorded again with its own seed: new sensor noise, friction and
# a small torque-constant drift per run (register "the digital twin"), but no weeks of
# wear or temperature between them. Each execution was refitted by the repeats sweep
# (`papermill_params/repeats_<profile>.csv`, its condition notebook once per row); the
# sections below read its records. The quick profile (CI) records only AG02 twice and refits it at two of the
# four intervals, so Table XI has one row there; the full profile (`make book`) records all
# five repeated trajectories and refits AG02 at every interval.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1
# "none": OLS -> routing test -> projection; "fast": also the fast CLIE route;
# "": as the profile's repeats sweep ran this execution
refine = ""

# %% tags=["remove-input"]
import os

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from crane_lib.reporting import claims
from crane_lib.reporting import reproducibility_report as report

profile = os.environ.get("CRANE_PROFILE", "full")
ts, run = float(ts), int(run)

# %% [markdown]
# ## One execution through the pipeline
#
# Every execution goes through the pipeline's own steps: preprocessing to the interval, OLS,
# the routing test and (on route O-S-C) the projection. Its OLS estimate then predicts the
# held-out records V01–V03 at 40 ms (pooled RMSE, exactly as Table VIII scores a model), and
# it is audited over $\Theta$ on the dense pose set (seed 1). The repeats sweep's condition
# notebook (`crane_book/conditions/repeats.py`) makes the one call, `repro.refit_execution`, and
# writes its record; the condition named by the parameters:

# %% tags=["remove-input"]
record = report.execution_record(profile, trajectory, ts, run, refine)
display(Markdown(report.execution_sentence(record)))
view = report.Reproducibility(profile, trajectory)

# %% [markdown]
# (repro-table-xi-run-to-run-repeatability)=
# ## Table XI: run-to-run repeatability
#
# For each trajectory with more than one execution, every execution fitted on its own at 40 ms
# (OLS; register, "which fit Table XI scores") predicts the held-out set, and the spread is the
# largest minus the smallest RMSE relative to their mean. In the paper the spread is a few
# per cent, and sample count, not elapsed time, orders it: the three long trajectories, with
# thousands of samples per axis, stay within the spread of AG02, while the two short
# adjacent-pair ones, with a few hundred, are the two worst. Its reading is that this is
# estimation noise, not drift of the hardware, and that the spread of AG02, the trajectory
# behind the accepted model, is the precision against which every comparison of the paper is
# read. The paper's numbers are in the comparison below the table.
#
# On the twin, estimation noise is all there is between executions (register R-8): a twin
# spread comparable to the arm's supports the paper's reading, a much smaller one would
# point at drift the twin does not have.

# %% tags=["remove-input"]
display(Markdown(view.missing_note()))
display(view.table_xi_frame())
display(view.table_xi_comparison())
display(Markdown(view.table_xi_sentence()))
display(claims.show("run_to_run_scale", profile))

# %% [markdown]
# In the full profile the two AG02 executions at 40 ms are also refined by the fast CLIE
# route (`refine = fast` in the conditions file). Their spread after refinement is set beside
# the OLS spread here, because the paper reads the later stages' sub-percent held-out gains
# (Sec. VI-D) against exactly this scale.

# %% tags=["remove-input"]
display(Markdown(view.refined_note()))

# %% [markdown]
# ## Parameters against predictions: the two AG02 executions
#
# The paper compares the OLS estimates of the two AG02 executions at all four intervals and
# finds two things that are easy to conflate. Parameter by parameter, agreement is poor and
# uneven: a median relative difference of a few per cent, but a long tail, its worst case ZZR3
# at several times its own value. In what the models predict, agreement is good: a model
# identified on one execution loses under a per cent of RMSE on the other execution's record.
#
# Per parameter, the relative difference is $|b-a|/|a|$, $a$ being the first execution's
# estimate (register R-4: the paper's worst case rules out the symmetric forms, which are bounded), and
# the *t-ratio* is $|a|$ over its OLS standard error. The cross-execution loss is the RMSE of
# execution $i$'s model on execution $j$'s record relative to $j$'s own fit, which least
# squares makes the smallest possible (register R-6).

# %% tags=["remove-input"]
display(view.parameter_comparison())
display(view.losses_frame())

# %% [markdown]
# The paper's explanation is identifiability. Parameter reproducibility tracks how well the
# excitation constrains a parameter: ZZR2, about a hundred standard errors from zero,
# reproduces to under a per cent, while ZZR3, within two standard errors, does not reproduce
# at all. A base-parameter value should therefore be quoted with its t-ratio, and models
# compared through their predictions. The plot shows every parameter at every interval, the
# paper's two t-ratios dotted.

# %% tags=["remove-input"] mystnb={"figure": {"name": "fig-repro-t-ratio", "caption": "Each OLS parameter's relative difference between the two executions against its t-ratio, per interval: look at how the difference changes from left to right. Data: two twin executions."}}
view.t_ratio_figure()
plt.show()

# %% tags=["remove-input"]
display(Markdown(view.t_ratio_sentence()))

# %% [markdown]
# (repro-does-the-audit-verdict-reproduce)=
# ## Does the audit verdict reproduce?
#
# The all-pose audit of the OLS estimate of each execution at each interval, on the dense pose
# set of Sec. VI-E (seed 1). The paper finds the same verdict on both executions at every
# interval, not PD at the three finer intervals and PD at 80 ms, with the two positive margins
# at 80 ms agreeing to a few per cent. Feasibility, it concludes, reproduces more sharply than
# either the parameters or the predictions: the verdict is a property of the trajectory and the interval,
# not an accident of one recording, which is what lets it serve as an acceptance criterion.

# %% tags=["remove-input"]
display(view.stability_frame())
display(view.stability_comparison())
display(Markdown(view.stability_sentence()))

# %% [markdown]
# (repro-fig-10-and-appendix-e-b)=
# ## Fig. 10 and Appendix E-B: the sampling-interval ladder
#
# The same trajectory identified at 10, 20, 40 and 80 ms separates two effects. The in-sample
# residual falls as the interval grows, because the anti-alias corner (a fixed fraction of the
# Nyquist frequency, Appendix D-C) descends and removes more of the measured torque's high-frequency content; the
# paper finds it between a quarter and a half lower at 80 ms than at 10 ms. The held-out error,
# scored on the same V01–V03 records at 40 ms whatever the fit's interval (register R-10),
# tells whether the model itself improves: in the paper, by less than the run-to-run
# variation from 40 ms to 80 ms on all six trajectories. The text does not name the six; this
# book takes the five repeated ones of Table XI and PA01 (register R-9). The ladder reads the
# OLS/SDP sweep's records (first execution), so the quick profile shows those of the six that
# it records.

# %% tags=["remove-input"] mystnb={"figure": {"name": "fig-repro-ladder", "classes": "paper-10", "caption": "The sampling-interval ladder on the twin: the in-sample residual per interval (left) and the held-out RMSE on V01–V03 (right); look at the step from 40 to 80 ms on the right. Data: twin recordings, OLS, first execution."}}
view.ladder_figure()
plt.show()

# %% tags=["remove-input"]
display(view.ladder_frame())
display(view.ladder_comparison())
display(Markdown(view.ladder_sentence()))

# %% [markdown]
# ### The ramp-sample criterion
#
# The interval is not chosen from the ladder but from the excitation. The information about
# the inertial parameters lives on the acceleration ramps of the 4-1-4 profile, and 40 ms is
# the coarsest interval tested at which every ramp still carries at least three samples; at
# 80 ms, the paper counts well over half of the ramps with fewer. A ramp of duration $r$ sampled
# every $T_s$ carries $\lfloor r/T_s \rfloor$ samples (register "excitation", E-3). The counts
# below come from the command files of the six trajectories. Neither this criterion nor the
# structural rule that names AG02 uses a held-out error, so the ladder above is a check of the
# choice, not its basis.

# %% tags=["remove-input"]
display(view.ramps_frame())
display(view.ramps_comparison())
