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
# # CLIE: closed-loop refinement of the OLS/SDP estimate
#
# *Paper Sec. IV-B, IV-C, VI-B, Appendix D-E, D-F; Fig. 4, Table VI and Table XII's CLIE
# panel; the clouds and Table VIII are in the chapter "Parameter clouds".* The OLS/SDP estimate
# fits the inverse-dynamics regressor; CLIE (9) refines it by reproducing the measured
# closed-loop realization. The raw record is simulated in closed loop with the same FF+FB
# controller (2) that realized the motion, driven by the reference the controller executed, on
# the record's own stamps, from rest at the first measured angles; the plant is the direct
# dynamics of the 39-parameter model. The residual, measured minus simulated controller
# torque, is low-passed by a zero-phase IIR at the corner of the representative interval's
# bundle, kept at that interval at every identification interval, and masked where any axis
# reached its torque clamp (the mask dilated by one window); a trust-region reflective solver
# with bounds minimizes its sum of squares. CLIE must start from the OLS estimate (route O-C) or
# its SDP projection (O-S-C): an arbitrary or non-PD start can make the simulation diverge. CLIE
# does not itself enforce positive definiteness over the domain, so its solution is audited,
# and rescued if it fails (chapter "The all-pose audit").
#
# Two solvers refine the same objective with the same bounds and tolerance (register "CLIE"):
# the **faithful** route of Appendix D-F, a forward-difference Jacobian of one closed-loop
# simulation per parameter and iteration (as lsqnonlin), and the **fast** route of this book,
# whose Jacobian is DIDIM's: minus the band-limited regressor evaluated on the simulated
# trajectory, one simulation per iteration. The parameter `refine` selects the route for the
# representative condition: `"fast"` (default, so the quick CI build stays short) or `"clie"`
# (the faithful route, minutes per AG02 run). The full profile's CLIE sweep also runs the
# faithful route on the short record AP01, to compare the two; the quick profile leaves it out.
#
# **Data: the digital twin's recordings** (chapter "The realization layer, the twin and
# preprocessing"), not the authors' arm.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1
# refinement of the representative condition: "fast" (DIDIM Jacobian)
# or "clie" (finite-difference trust-region reflective, D-F)
refine = "fast"

# %% tags=["remove-cell"]
import time

from IPython.display import display

from crane_lib.reporting.chapters import clie as report
from crane_lib.reporting.chapters import profile, quiet_solver_warnings, run_time_sentence
from crane_lib.reporting.diagrams import clie_block_diagram

quiet_solver_warnings()
started = time.perf_counter()
if refine not in ("fast", "clie"):
    raise ValueError(f"refine = {refine!r}: expected 'fast' or 'clie'")
runs = report.Runs()

# %% [markdown]
# ## Fig. 4: the block diagram
#
# What CLIE simulates and what it compares ({numref}`fig-clie-diagram`). The settings printed
# in the boxes are read from the code that runs them (`crane_lib.identification.clie`).

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-clie-diagram", "classes": "paper-4", "caption": "CLIE (9) as this book simulates it, its settings read from the code."}}
clie_block_diagram(f"CLIE (9) on the twin's records ({trajectory})");

# %% [markdown]
# ## The condition and its start
#
# OLS and the routing test of the chapter "OLS and the conditional SDP projection", then the
# CLIE problem built from the condition's raw log:

# %% tags=["hide-input"]
condition = report.condition(trajectory, ts, run)
report.start_sentence(condition)

# %% [markdown]
# ## CLIE on the representative condition
#
# The refinement by the route the parameters name, as the CLIE sweep of this build recorded it
# from the same start ({numref}`tab-clie-run`, {numref}`fig-clie-run`); the sweep's condition
# notebook (`crane_book/conditions/clie.py`) makes the one call that computes it.

# %%
refined = report.sweep_refinement_of(condition, refine, runs)

# %% tags=["hide-input"]
report.report_table(condition, refined)

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-clie-run", "caption": "The refinement of the representative condition: the objective per iteration (left) and the measured against the simulated band-limited torque of axis 2 (right). Data: a twin recording."}}
report.refinement_figure(condition, refined);

# %% [markdown]
# ## Table VI: the representative candidate stage by stage
#
# After each stage: the PD verdict of the audit (11) over $\Theta$ (the dense pose set, seed 1),
# its smallest eigenvalue, the CLIE objective of the stage's parameters on this record, and the
# pooled held-out RMSE on V01–V03 at the paper's interval, the metric of Table VIII
# ({numref}`tab-clie-table-vi`). The SDP row exists only on route O-S-C, the rescue only if
# the CLIE
# solution fails the audit; {numref}`tab-clie-table-vi-paper` sets the verdicts beside the
# paper's.

# %% tags=["hide-input"]
stages = report.stages(condition, refined)
display(report.table_vi(condition, stages))
display(report.table_vi_against_paper(condition, stages))
display(report.table_vi_sentence(condition, stages))

# %% [markdown]
# ## The fast route against the faithful one, on a short record
#
# The faithful route of D-F costs one closed-loop simulation per parameter and iteration; on
# the short record AP01 both routes run from the same OLS/SDP start in the full profile's CLIE
# sweep, and this section shows the two runs ({numref}`tab-clie-routes`; the quick profile
# shows the fast route alone, and `benchmarks/bench_clie.py` compares them on AG02). The
# held-out RMSE also tests, on the twin, what the paper found for AP01 in Table VIII: that CLIE
# made its prediction worse.

# %% tags=["hide-input"]
routes = report.both_routes(report.condition(report.SHORT, 0.040, 1), runs, profile())
display(report.routes_table(routes), report.routes_sentence(routes))

# %% [markdown]
# ## DIDIM, the related closed-loop method (Gautier, Janot and Vandanjon)
#
# DIDIM identifies from the closed-loop torque output too, but needs no OLS start: from a
# regular initialization (the realization layer's joint-level inertias and viscous terms, every
# other parameter zero) each Gauss–Newton step is an IDIM least-squares on the simulated
# trajectory (register "CLIE"). The main job runs it once on the representative condition's
# record into a record of its own (`results/refinement_runs/`, beside the ε runs' below) and
# this page reads it; it is scored on V01–V03 like the other stages ({numref}`tab-clie-didim`).

# %% tags=["hide-input"]
display(*report.didim_table(condition, refined, runs))

# %% [markdown]
# ## The four CLIE runs from the four ε projections (Sec. IV-B, Appendix D-E)
#
# The paper ran CLIE on AG02 at its interval from each projection of the ε ladder. On the twin
# the OLS estimate of this condition may already be PD on the record (route O-C), so no
# projection is needed; we still project the OLS estimate onto
# $\mathbf M\succeq\epsilon\mathbf I$ on $\Theta_c$ with each ε. Where the constraints are
# inactive (λmin on $\Theta_c$ already at or above ε) the projection *is* the OLS point, and
# CLIE from it is the run above; each distinct start is refined once, by the fast route
# ({numref}`tab-clie-epsilon`, {numref}`tab-clie-epsilon-paper`).

# %% tags=["hide-input"]
display(*report.epsilon_runs(condition, refined, runs))

# %% [markdown]
# (clie-iterations-and-function-evaluations-sec-iv)=
# ## Iterations and function evaluations (Sec. IV-C, Appendix D-F)
#
# Cost as the paper reports it: iterations and function evaluations. The paper counts one
# evaluation per parameter plus the reference point in every iteration; our faithful route runs
# the same one simulation per Jacobian column plus scipy's trial points, our fast route one
# simulation per trial point. First the runs made in this chapter
# ({numref}`tab-clie-chapter-runs`),
# then the CLIE sweep: every condition of the build's profile refined by the fast route
# (`papermill_params/clie_<profile>.csv`, the condition notebook run once per condition), against the
# paper ({numref}`tab-clie-cost`), per condition ({numref}`tab-clie-panel`), and the
# conditions it could not refine, if any.

# %% tags=["hide-input"]
sweep = report.sweep_records()
display(report.runs_table(runs), report.sweep_sentence(sweep, profile()),
        report.integration_sentence(sweep))
if len(sweep):
    display(report.sweep_against_paper(sweep), report.clie_panel(sweep))
failed = report.failures_table()
display(failed) if failed is not None else None

# %% tags=["remove-input"]
run_time_sentence(started, f"refine = `{refine}`")
