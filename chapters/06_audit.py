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
#   mystnb:
#     render_markdown_format: myst
# ---

# %% [markdown]
# # The all-pose PD audit, the rescue, and what an infeasible model does
#
# *Paper Sec. IV-C, V-A, VI-B, VI-E, VII-C, Appendix D-E, D-G; Tables IX, X and XVIII.*
# Fitting a torque record well and being physically feasible are different criteria. The
# identified inertia matrix $\mathbf M(\boldsymbol\theta;\boldsymbol\varphi)$ is inverted by
# both uses the model is made for on this arm (acceleration-resolved control and the
# reaction-force observer), so the model is accepted only if it passes the **audit (11)**:
# $\lambda_\mathrm{min}(\mathbf M(\boldsymbol\theta))>0$ at every configuration of a stated,
# finite pose set over the domain $\Theta$ of Sec. V-A. If it fails, the **rescue (12)** moves
# it to the nearest parameter vector with $\mathbf M\succeq\epsilon_\mathrm{PD}\mathbf I$ on a
# constraint set $\Theta_\mathrm r$ that grows by constraint generation (D-E), and the audit is
# run again on a fresh draw; the audit, not the solver's exit, decides.
#
# The chapter follows the paper's order: the pose sets; the raw OLS estimate of the
# representative condition and the twin's true parameters; PD at the visited configurations
# against PD over $\Theta$ for every OLS estimate of the build; the model the rescue is shown
# on; the rescue, with the accepted margin and the earlier version's
# $\epsilon_\mathrm{PD}=0$; Table IX (two audits, every seed); Table XVIII (what the rescue
# moved); the manufacturer's box; Table X; where the violations lie; and, beyond the paper, a
# certified check over the continuous box.
#
# The paper tells this story on one model: the CLIE solution of its representative condition,
# which failed the audit, its rescue and the re-audit that accepted it. The main job runs the
# same Algorithm 1 on the twin's recording of that condition and records every stage
# (`results/accepted/`); this chapter reads that record. When the record's CLIE solution fails
# the audit, it is the model every table below rescues, and the rescued model, its passes and
# its audits are the record's. Only when the build has no failing estimate of the condition
# does the chapter show the rescue on a substitute, and then it says which one and why. The
# accepted model, wherever it appears here, is the record's.
#
# **Data: the digital twin's recordings, through the records of the main job**: the accepted
# model's record, the condition records of the OLS/SDP sweep (chapter "OLS and the conditional
# SDP projection") and the twin's true parameters, not the authors' arm. The twin has what the
# paper could not: the true parameters, whose own audit margin is shown beside every estimate.
# Every number below is computed in this build from those records (the page writes none); each
# table and sentence is the output of the folded code cell just above it, and every paper
# number shows its id on hover.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1
seeds = (1, 2, 3, 4, 5)

# %% tags=["remove-cell"]
import time

from IPython.display import display

from crane_lib.reporting.chapters import audit as report
from crane_lib.reporting.chapters import profile, quiet_solver_warnings, run_time_sentence

quiet_solver_warnings()
started = time.perf_counter()

# %% [markdown]
# ## The pose sets (Sec. VI-E, Appendix D-G)
#
# The dense audit holds a deterministic structured grid ($\theta_1$ at the centre of its range,
# since $\mathbf M$ does not depend on it), a uniform draw over $\Theta$ and a draw over the
# folded-arm region where the paper found violations to concentrate; the two random parts are
# redrawn per seed. The earlier version's sparse audit is a coarse grid over every joint plus a
# uniform draw over a narrower domain. Placement and draw order are recorded in the register
# ("the all-pose audit"); the counts are in {numref}`tab-audit-pose-sets`.

# %% tags=["hide-input"]
report.pose_sets_against_paper(seeds[0])

# %% [markdown]
# ## The representative condition and the twin's truth
#
# The raw OLS estimate of the condition named by the parameters (by default the paper's
# representative case, AG02 at 40 ms), as the OLS/SDP sweep recorded it, audited over
# $\Theta$ with the first seed; beside it the twin's true base parameters, which are known here
# and were not for the arm ({numref}`tab-audit-condition`). The same cell reads the accepted
# model's record of the condition.

# %%
study = report.study(trajectory, ts, run, seeds)

# %% tags=["hide-input"]
display(report.condition_table(study))
report.condition_sentence(study)

# %% [markdown]
# (audit-pd-where-the-data-were-taken)=
# ## PD where the data were taken against PD over Θ (Sec. VI-E)
#
# The routing test of Table V asks whether
# $\mathbf M(\boldsymbol\theta;\hat{\boldsymbol\beta}_\mathrm{OLS})$ is positive definite at the
# configurations the record visits. Re-evaluating every OLS estimate of this build on the audit
# of the first seed ({numref}`tab-audit-visited-theta`) shows whether, and by how much, that
# test
# is weaker ({numref}`tab-audit-visited-theta-paper`). This fills the place marked in the
# chapter "OLS and the conditional SDP projection".

# %% tags=["hide-input"]
report.audit_sweep(study)
display(report.sweep_table(study), report.visited_against_paper(study, profile()))
report.visited_sentence(study)

# %% [markdown]
# (audit-which-model-the-rescue-is-shown)=
# ## Which model the rescue is shown on
#
# The paper rescues the CLIE solution of its representative condition, which failed the audit.
# The cell below reads what Algorithm 1 did with this build's CLIE solution of the condition.
# If it failed the audit and was rescued, the rest of the chapter shows that model, that rescue
# and that re-audit. Otherwise (it passed, so nothing was rescued, or the build has no record)
# the chapter picks a **substitute** and says so: the condition's own OLS estimate if it
# violates; else the OLS estimate of this build that violates with the smallest λmin over
# $\Theta$ (preferring the same trajectory); and only if no estimate of the build violates, a
# **constructed** case, not a reproduction: the estimate with the smallest margin, pushed by the
# minimum-norm change that makes it non-PD at its worst pose.

# %% tags=["hide-input"]
report.choose_rescued_model(study)

# %% [markdown]
# ## The rescue with the earlier and the accepted margin (Sec. IV-C, Appendix D-E)
#
# $\Theta_\mathrm r$ starts from random configurations and the corners of $\Theta$; after each
# solve the solution is checked on a separate audit-size draw (a seed the acceptance audits
# never use) and the worst configurations with
# $\lambda_\mathrm{min}\le\epsilon_\mathrm{PD}/2$ are appended, up to the pass and per-pass
# caps. Algorithm 1's own rescue, in the accepted record, also seeds $\Theta_\mathrm r$ with the
# worst poses of the failing audits, as D-E's did with its violators. This chapter adds two
# rescues from the fresh set alone: with the accepted margin, as the paper's timing re-run was
# (D-I), and with the earlier version's $\epsilon_\mathrm{PD}=0$, which gives the "submitted"
# model of Table IX (the earlier version had only the sparse audit, so there were no dense
# violators to seed). Neither replaces the accepted model ({numref}`tab-audit-rescue-passes`,
# {numref}`tab-audit-rescue-paper`).

# %% tags=["hide-input"]
display(report.run_rescues(study), report.rescue_against_paper(study))
report.rescue_sentence(study)

# %% [markdown]
# (audit-table-ix-what-the-audit-s)=
# ## Table IX: what the audit's pose sampling decides
#
# Each model under both audits and every seed: the verdict, λmin and the number of violating
# configurations (counts, not fractions, because the audits differ in size and the dense one
# oversamples on purpose) ({numref}`tab-audit-table-ix`), and what the paper found with them
# ({numref}`tab-audit-table-ix-paper`). The dense audits of the CLIE solution and of the
# accepted model are the record's (the audits that decided); the rest are run here.

# %% tags=["hide-input"]
display(report.run_audits(study), report.table_ix_against_paper(study))
report.boundary_sentence(study)

# %% [markdown]
# ### The seed spread of the accepted model's margin
#
# The paper's accepted margin varies by a factor between seeds because its worst pose lies
# inside the domain, where each random draw comes closer or less close to it. Where the smallest
# eigenvalue of a model sits on the deterministic grid (shared by every seed), every seed
# returns the same margin. The margins below are the accepted record's.

# %% tags=["hide-input"]
report.margin_sentence(study)

# %% [markdown]
# ## Table XVIII: which entries the rescue moved
#
# The rescue is a Euclidean nearest-point problem in the base parameters (register), so
# parameters that do not enter $\mathbf M$ (viscous friction) never move and the change lands
# on the entries the violated eigendirections load. An entry counts as moved here when its
# change is at least a tenth of the largest change. Each change is set against the OLS
# standard error of the estimate it was applied to; the twin's truth says, beyond the paper,
# whether the move went toward it ({numref}`tab-audit-table-xviii`,
# {numref}`tab-audit-table-xviii-paper`).

# %% tags=["hide-input"]
display(report.table_xviii(study))
report.table_xviii_against_paper(study)

# %% [markdown]
# ## The manufacturer's box (Sec. V-A)
#
# $\Theta$ and the manufacturer's joint limits are not the same box. The same dense construction
# over the limits of the robot description in `data/` gives {numref}`tab-audit-manufacturer`.

# %% tags=["hide-input"]
report.manufacturer_against_paper(study)

# %% [markdown]
# (audit-table-x-what-an-infeasible-model)=
# ## Table X: what an infeasible model does once M is inverted (Sec. VII-C)
#
# Against the accepted model standing in for the unmeasured true inertia: the non-PD share of
# the uniform draw; the growth time constant of the unstable root of
# $s^2+\mu K_d s+\mu K_p$ for the most negative eigenvalue μ of
# $\mathbf M_\mathrm{acc}^{-1}\hat{\mathbf M}$ at the worst pose (and the fastest over every
# non-PD pose); and at the worst pose the share of random unit torques misdirected by more than
# a right angle, the median torque-error ratio over random unit accelerations, the same ratio
# along the eigenvector of $\lambda_\mathrm{min}(\hat{\mathbf M})$, and the observer gain
# $1/\lambda$. On the twin the truth can stand in for $\mathbf M$ as well (last row, beyond the
# paper) ({numref}`tab-audit-table-x`, {numref}`tab-audit-table-x-paper`).

# %% tags=["hide-input"]
table_x = report.table_x(study)
display(report.table_x_shown(table_x), report.table_x_against_paper(study, table_x))
report.table_x_sentence(study, table_x)

# %% [markdown]
# (audit-where-the-violations-lie)=
# ## Where the violations lie
#
# The smallest λmin in each cell of a grid over two joints, over the dense audit set of the
# first seed, for the model the chapter rescues; cells with a violation are outlined, and the
# dashed rectangle is the oversampled folded-arm region ({numref}`fig-audit-violation-map`).
# Whether the violations concentrate in that region is measured on the uniform draw, which
# samples $\Theta$ without the region's emphasis: the share of its violating configurations
# inside the region against the region's share of $\Theta$ by volume, "concentrated" from twice
# that share. The sentence states it for the model shown and for every OLS estimate of the
# build's first executions, by the same function as chapter "What makes an estimate fail the
# audit".

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-audit-violation-map", "caption": "Smallest eigenvalue of M per cell over two joint pairs, for the model the chapter rescues; violating cells outlined, the oversampled folded-arm region dashed. Data: a model identified from twin recordings."}}
report.violation_map(study);

# %% tags=["hide-input"]
report.violation_sentence(study)

# %% [markdown]
# ## Beyond the paper: a certified check over the continuous box
#
# The audit samples; `certified.certify` either proves
# $\mathbf M(\boldsymbol\theta)\succeq m\mathbf I$
# at every θ of a box (branch and bound with rigorous bounds from the trigonometric structure of
# $\mathbf M$: a Bernstein enclosure in the tangent half-angles, see the register), returns a
# configuration where it fails, or reports "undecided" with the boxes it could not resolve in
# its budget. Four uses: a small box around the accepted model's worst audit pose, with margin
# zero and with $\epsilon/2$; the whole of $\Theta$ for the accepted model at $\epsilon/2$ (the
# audit's violation threshold) and then at margin zero, which a certificate at $\epsilon/2$
# already proves (so it runs only when that one is not certified), the two sharing one budget
# of boxes, a count rather than seconds, so that every machine gets the same answer (the quick
# profile leaves these two to the full one; `benchmarks/bench_audit.py` measures both without
# that limit); and the whole of $\Theta$ for the model it was rescued
# from, where a violation should be found at once ({numref}`tab-audit-certified`). The main
# job's data step runs the checks once per model and records them (`results/certified/`, with
# the budget); this section reads those records.

# %% tags=["hide-input"]
checks = report.certified_checks(study)
display(report.certified_table(checks))
report.certified_sentence(checks)

# %% [markdown]
# What this proves, exactly: a "certified" box means
# $\lambda_\mathrm{min}(\mathbf M(\boldsymbol\theta))$
# is at least the margin at **every** configuration of that box, up to the stated tolerance (the
# charged difference between the generated kernel and its extracted polynomial; every rounding
# of the bound itself is charged inside it, not a sampling gap). "Undecided" proves nothing
# about
# the unresolved boxes. A "violated" result is a concrete configuration, re-evaluated with
# LAPACK as in the audit, where the model is not positive definite.

# %% tags=["hide-input"]
run_time_sentence(started, f"profile `{profile()}`, rescue shown on {study.bad_label}")
