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
# fits the inverse-dynamics regressor; CLIE {eq}`eq-paper-9` refines it by reproducing the
# measured closed-loop realization: the raw record is simulated in closed loop with the same
# FF+FB controller {eq}`eq-paper-2` that realized the motion, and the simulated controller
# torque is compared with the measured one. CLIE must start from the OLS estimate (route O-C)
# or its SDP projection {eq}`eq-paper-8` (O-S-C): an arbitrary or non-PD start can make the
# simulation diverge. CLIE does not itself enforce positive definiteness over the domain, so its
# solution is audited, and rescued if it fails (chapter "The all-pose audit").
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
# Data: the digital twin's recordings (chapter "The realization layer, the twin and
# preprocessing"), the condition named by the parameters (by default AG02 at 40 ms) with its
# raw log, and every condition of the build's profile.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1
# refinement of the representative condition: "fast" (DIDIM Jacobian)
# or "clie" (finite-difference trust-region reflective, D-F)
refine = "fast"

# %% tags=["remove-cell"]
import dataclasses
import time

import numpy as np
from IPython.display import display

from crane_lib.acceptance import all_pose, audit
from crane_lib.identification import clie, metrics, refinement
from crane_lib.identification import condition as identify
from crane_lib.identification import projection as sdp
from crane_lib.logs import preprocessing
from crane_lib.model import controller
from crane_lib.model.dynamics import DynamicModel
from crane_lib.reporting.chapters import clie as view
from crane_lib.reporting.chapters import ols_sdp as ols_view
from crane_lib.reporting.chapters import profile, quiet_solver_warnings
from crane_lib.reporting.glued import glue, glue_md
from crane_lib.twin.truth import load_truth

quiet_solver_warnings()
started = time.perf_counter()
if refine not in ("fast", "clie"):
    raise ValueError(f"refine = {refine!r}: expected 'fast' or 'clie'")
label = view.condition_label(trajectory, ts)
model = DynamicModel("reduced")

# %% [markdown]
# ## Fig. 4: the block diagram
#
# What CLIE simulates and what it compares ({numref}`fig-clie-diagram`). The settings printed
# in the boxes are read from the code that runs them (`crane_lib.identification.clie`).

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-clie-diagram", "classes": "paper-4", "caption": "CLIE (9) as this book simulates it, its settings read from the code."}}
view.clie_block_diagram(f"CLIE (9) on the twin's records ({trajectory})");

# %% [markdown]
# ## The closed-loop simulation
#
# For a parameter vector $\boldsymbol\beta$, the record is replayed in simulation: the plant
# is the direct dynamics of the reduced model {eq}`eq-paper-3`, from rest at the first
# measured angles, on the record's own stamps (the paper's text lost the equation; our
# {ref}`reconstruction <reg-clie-eq-9-10>`):
#
# $$
# \ddot{\boldsymbol\theta}_s = \mathbf M(\boldsymbol\theta_s;\boldsymbol\beta)^{-1}
#   \big(\hat{\mathbf u}(\boldsymbol\beta)
#   - \mathbf c(\boldsymbol\theta_s,\dot{\boldsymbol\theta}_s;\boldsymbol\beta)
#   - \mathbf g(\boldsymbol\theta_s;\boldsymbol\beta)
#   - \mathbf F_v\dot{\boldsymbol\theta}_s\big),
# \qquad
# \boldsymbol\theta_s(t_0) = \boldsymbol\theta(t_0),\quad
# \dot{\boldsymbol\theta}_s(t_0) = \mathbf 0
# $$ (eq-paper-10)
#
# driven by the controller {eq}`eq-paper-2` closed around the simulated angles, with the
# reference the controller executed (the log's $\boldsymbol\theta_\mathrm{ref}$,
# $\dot{\boldsymbol\theta}_\mathrm{ref}$, $\ddot{\boldsymbol\theta}_\mathrm{ref}$), the
# integral term of the realization law and its current clamp:
#
# $$
# \hat{\mathbf u}(\boldsymbol\beta) = \operatorname{clamp}\Big(\hat{\mathbf M}\big[
#   \ddot{\boldsymbol\theta}_\mathrm{ref} + \hat{\mathbf D}\dot{\boldsymbol\theta}_\mathrm{ref}
#   + K_V(\dot{\boldsymbol\theta}_\mathrm{ref} - \dot{\boldsymbol\theta}_s)
#   + K_P(\boldsymbol\theta_\mathrm{ref} - \boldsymbol\theta_s)
#   + K_I\!\int(\boldsymbol\theta_\mathrm{ref} - \boldsymbol\theta_s)\,dt\big]\Big)
# $$ (eq-clie-controller)
#
# integrated by the explicit trapezoidal rule (Heun) in steps of at most
# {paper}`clie_integration_step`. Dead time is not modelled. From the condition's start:

# %%
record = view.condition_record(trajectory, ts, run)  # the OLS/SDP sweep's record
start = view.start_of(record)  # OLS on route O-C, the projection (8) on O-S-C
problem = clie.recording_problem(identify.recording_path(trajectory, run))  # raw 1 ms log
simulation = problem.simulate(start.values)  # (10) under the controller, Heun steps
assert simulation.ok, "the start's closed loop diverged"

# %% tags=["hide-input"]
glue("clie_label", label)
glue("clie_run", run)
glue("clie_route", record["route"])
glue("clie_lambda_visited", record["lambda_min_visited"])
glue("clie_stamps", problem.t.size)
glue("clie_duration", problem.t[-1] - problem.t[0])

# %% [markdown]
# **{glue:text}`clie_label`, execution {glue:text}`clie_run:d` (twin):** route
# **{glue:text}`clie_route`** (λmin of $\mathbf M(\boldsymbol\theta;\hat{\boldsymbol\beta})$
# over the visited configurations {glue:text}`clie_lambda_visited:.3g` kg·m², chapter "OLS and
# the conditional SDP projection"); the simulation runs over {glue:text}`clie_stamps:,d` stamps,
# {glue:text}`clie_duration:.1f` s. The paper's AG02 at 40 ms took route O-S-C (its OLS
# estimate is non-PD there, Sec. VII-D).
#
# ## The residual: filtered, decimated, masked
#
# The residual compares the measured controller torque $\boldsymbol\tau$ (commanded current
# × logged Kt, the identification's torque record) with the simulated one. Both are put on the
# preprocessing's even grid, low-passed by the zero-phase Butterworth filter $\mathcal F$ of
# the representative interval's bundle, and kept every $T_r$:
#
# $$
# \mathbf r_k(\boldsymbol\beta) = \big[\mathcal F\boldsymbol\tau\big](t_0 + kT_r)
#   - \big[\mathcal F\hat{\mathbf u}(\boldsymbol\beta)\big](t_0 + kT_r),
# \qquad k \in \mathcal K
# $$ (eq-clie-residual)
#
# where $\mathcal F$ runs the order-$N$ filter forwards and backwards, so its gain is the
# square of the Butterworth's and its phase zero:
#
# $$
# \lvert H_\mathcal F(f)\rvert = \frac{1}{1 + (f/f_c)^{2N}}
# $$ (eq-clie-filter)
#
# with $N$ = {glue:text}`clie_filter_order:d`, $f_c$ = {glue:text}`clie_corner:.3f` Hz and
# $T_r$ = {paper}`clie_residual_decimation` at every identification interval. $\mathcal K$
# drops the samples where any axis reached its torque clamp (the mask dilated by one window)
# and those within the filter's edge transients: {glue:text}`clie_kept:,d` of
# {glue:text}`clie_samples:,d` samples × axes remain.

# %%
r = problem.residual_of(simulation)  # the terms of (9) at the start
tau_sim = problem.band_limit(simulation.tau)  # F û on the T_r samples
np.testing.assert_allclose(r, (problem.measured - tau_sim)[problem.valid].ravel())
assert r.size == problem.valid.sum() * problem.n_axes

# %% tags=["hide-input"]
glue("clie_filter_order", preprocessing.FILTER_ORDER)
glue("clie_corner", preprocessing.corner_frequency_hz(clie.RESIDUAL_INTERVAL_S))
glue("clie_kept", r.size)
glue("clie_samples", problem.valid.size * problem.n_axes)

# %% [markdown]
# ## The CLIE objective (9)
#
# CLIE minimizes the sum of squares of that residual (lsqnonlin's resnorm) by a trust-region
# reflective solver with bounds around the start $\boldsymbol\beta_0$:
#
# $$
# \boldsymbol\beta_\mathrm{CLIE} = \arg\min_{\boldsymbol\beta_\mathrm{lo} \le \boldsymbol\beta
#   \le \boldsymbol\beta_\mathrm{hi}}
#   \sum_{k\in\mathcal K}\lVert\mathbf r_k(\boldsymbol\beta)\rVert_2^2,
# \qquad
# \boldsymbol\beta_\mathrm{lo,hi} = \boldsymbol\beta_0 \mp b\,\lvert\boldsymbol\beta_0\rvert
# $$ (eq-paper-9)
#
# with $b$ = {paper}`param_bound_multiplier` and the lower bound zero for ZZR1 and IA3–IA8
# (Appendix D-F). The fast route integrates {eq}`eq-paper-10` by one Heun step per control
# cycle and checks its solution at the paper's steps. One evaluation of the objective at the
# CLIE sweep's start and end points reproduces its record:

# %%
refined = view.sweep_refinement_of(record, refine)  # the CLIE sweep's run
stepped = clie.integrated_at(problem, refined.integration_step_s)  # as it ran
np.testing.assert_allclose(stepped.objective(refined.x0), refined.objective_start, 1e-9)
np.testing.assert_allclose(stepped.objective(refined.x), refined.objective_final, 1e-9)
end = problem.simulate(refined.x)  # at the paper's steps
paper_step = refined.objective_final_paper_step or refined.objective_final
np.testing.assert_allclose(np.sum(problem.residual_of(end)**2), paper_step, 1e-9)

# %% [markdown]
# ## CLIE on the representative condition
#
# The refinement by the route the parameters name, as the CLIE sweep of this build recorded it
# from the same start ({numref}`tab-clie-run`, {numref}`fig-clie-run`).
#
# The solution keeps to the bounds of {eq}`eq-paper-9`, and the objective per iteration ends
# where the table's does:

# %%
lower, upper = clie.clie_bounds(refined.names, refined.x0)  # β0 ∓ b|β0|, some lower at 0
assert np.all((lower <= refined.x) & (refined.x <= upper))  # the solution keeps to them
assert len(refined.history) == refined.iterations  # left panel: a point per iteration
np.testing.assert_allclose([refined.objective_start, *refined.history][-1],
                           refined.objective_final, rtol=1e-12)

# %% tags=["hide-input"]
view.report_table(label, refined)

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-clie-run", "caption": "The refinement of the representative condition: the objective per iteration (left) and the measured against the simulated band-limited torque of axis 2 (right). Data: a twin recording."}}
view.refinement_figure(label, refined, problem.keep * 1e-3, {
    "measured": problem.measured,
    "simulated, start": tau_sim,
    "simulated, CLIE": problem.band_limit(end.tau),
});

# %% [markdown]
# ## Table VI: the representative candidate stage by stage
#
# After each stage: the PD verdict of the audit {eq}`eq-paper-11` over $\Theta$ (the dense
# pose set, seed 1), its smallest eigenvalue, the CLIE objective of the stage's parameters on
# this record, and the pooled held-out RMSE on V01–V03 at the paper's interval, the metric of
# Table VIII ({numref}`tab-clie-table-vi`). The SDP row exists only on route O-S-C, the rescue
# only if the CLIE solution fails the audit (the rescued model is Algorithm 1's record);
# {numref}`tab-clie-table-vi-paper` sets the verdicts beside the paper's.
# {glue:md}`clie_sdp_row`
#
# The OLS row's audit, recomputed on the first seed's poses and set against the audits step's
# record of every OLS estimate of the build:

# %%
ols_audit = audit.audit(np.asarray(record["ols"]), view.AUDIT_SEED)  # (11), dense
ols_row = next(r for r in all_pose.sweep_rows(view.AUDIT_SEED)  # the record, seed 1
               if (r["trajectory"], r["ts"], r["run"]) == (trajectory, ts, run))
np.testing.assert_allclose(ols_audit.lambda_min, ols_row["λmin over Θ"], rtol=1e-12)
assert ols_audit.passed == ols_row["PD over Θ"]
assert ols_audit.n_violations == ols_row["violations"]

# %% tags=["hide-input"]
heldout = [identify.condition_bundle(v, 0.040) for v in view.VALIDATION]
accepted = view.accepted_record(trajectory, ts, run, refined.x)  # Algorithm 1's record
vectors = view.stage_vectors(record, refined.x, accepted)
recorded = {"CLIE": refined.objective_final}
if record["route"] == identify.ROUTE_DIRECT:
    recorded["OLS"] = refined.objective_start
sub = None if "SDP" in vectors else ols_view.projected_condition(  # first O-S-C one
    ols_view.condition_records(), trajectory, ts, run)
if sub is not None:  # its projection is the SDP row; its objective is another record's
    sub_label = f"{ols_view.condition_label(sub[0], sub[1])}, run {sub[2]}"
    projected = ols_view.condition_record(*sub)["projected"]
    vectors = view.with_stage(vectors, "SDP on " + sub_label, projected)
    recorded["SDP on " + sub_label] = np.nan
stages = view.Stages(
    vectors,
    {s: audit.audit(b, view.AUDIT_SEED, "dense", model) for s, b in vectors.items()},
    {s: recorded[s] if s in recorded else problem.objective(b)
     for s, b in vectors.items()},
    {s: metrics.pooled_rmse(model, b, heldout) for s, b in vectors.items()},
    None if accepted is None else accepted.get("rescue"),
)
display(view.table_vi(label, stages))
display(view.table_vi_against_paper(record["route"], stages))
last = list(vectors)[-1]
gain = 1 - stages.rmse[last] / stages.rmse["OLS"]
glue_md("clie_sdp_row", "The condition takes route O-S-C: the SDP row is its own."
        if sub is None else f"{label} takes route O-C, so the SDP row is the projection "
        f"of the build's first condition on route O-S-C, {sub_label}, audited and scored "
        "on V01–V03 like the others; its CLIE objective is its own record's, left out.")
glue("clie_last_stage", last)
glue("clie_rmse_ols", stages.rmse["OLS"])
glue("clie_rmse_last", stages.rmse[last])
glue("clie_gain", gain)
glue("clie_gain_word", "a gain" if gain > 0 else "a loss" if gain < 0 else "no change")
rescue = stages.rescue if "rescue" in vectors else None
passes = 0 if rescue is None else len(rescue["passes"])
glue_md("clie_rescue", "The CLIE solution passes the audit, so no rescue runs."
        if rescue is None else f"The rescue took {passes} pass{'es' * (passes != 1)}, "
        f"converged: {rescue['converged']}.")

# %% [markdown]
# Held-out pooled RMSE from OLS to the last stage ({glue:text}`clie_last_stage`):
# {glue:text}`clie_rmse_ols:.5f` → {glue:text}`clie_rmse_last:.5f` N·m,
# {glue:text}`clie_gain:+.2%` ({glue:text}`clie_gain_word`); the paper's AG02 gains
# {paper}`pipeline_gain_vs_ols` from OLS to the accepted model, a difference it reads against
# the run-to-run spread of {paper}`runtorun_ag02`, not as an accuracy advantage.
# {glue:md}`clie_rescue` The CLIE objectives are not comparable with the paper's
# ({paper}`clie_objective_range_eps`): they are sums over the twin's own record, whose length,
# noise and unmodelled effects differ.
#
# ## The fast route against the faithful one, on a short record
#
# The faithful route of D-F costs one closed-loop simulation per parameter and iteration; on
# the short record AP01 both routes run from the same OLS/SDP start in the full profile's CLIE
# sweep, and this section shows the two runs ({numref}`tab-clie-routes`; the quick profile
# shows the fast route alone, and `benchmarks/bench_clie.py` compares them on AG02). The
# held-out RMSE also tests, on the twin, what the paper found for AP01 in Table VIII: that CLIE
# made its prediction worse.
#
# The fast route's objectives at its start and end on the short record, integrated as it ran:

# %%
short = view.condition_record(view.SHORT, 0.040, 1)  # AP01's OLS/SDP record
fast = view.sweep_refinement_of(short, "fast")  # the CLIE sweep's run from its start
short_problem = clie.integrated_at(  # AP01's raw log, integrated as the run was
    clie.recording_problem(identify.recording_path(view.SHORT, 1)),
    fast.integration_step_s)
np.testing.assert_allclose(short_problem.objective(fast.x0), fast.objective_start, 1e-9)
np.testing.assert_allclose(short_problem.objective(fast.x), fast.objective_final, 1e-9)

# %% tags=["hide-input"]
short = view.condition_record(view.SHORT, 0.040, 1)
routes = {m: r for m in ("fast", "clie")
          if (r := view.sweep_refinement(short, m)) is not None}
rmse = {m: metrics.pooled_rmse(model, r.x, heldout) for m, r in routes.items()}
start_rmse = metrics.pooled_rmse(model, view.start_of(short).values, heldout)
display(view.routes_table(view.condition_label(view.SHORT, 0.040), routes, rmse))
WORSE = {True: "worse", False: "better"}
fast = routes["fast"]
glue("clie_short", view.SHORT)
glue("clie_short_start_rmse", start_rmse)
glue("clie_short_fast_rmse", rmse["fast"])
glue("clie_short_fast_change", rmse["fast"] / start_rmse - 1)
glue("clie_short_fast_word", WORSE[bool(rmse["fast"] > start_rmse)])
if "clie" in routes:
    faithful = routes["clie"]
    apart = np.linalg.norm(fast.x - faithful.x) / np.linalg.norm(faithful.x - faithful.x0)
    change = rmse["clie"] / start_rmse - 1
    gap = fast.objective_final / faithful.objective_final - 1
    glue_md("clie_short_faithful", (
        f"By the faithful route the held-out RMSE is {rmse['clie']:.5f} N·m "
        f"({change:+.2%}), **{WORSE[bool(change > 0)]}**. The fast route ends at "
        f"an objective {gap:+.2%} from the faithful route's, "
        f"{faithful.wall_time_s / fast.wall_time_s:.1f} × faster in wall time "
        f"({faithful.simulations} against {fast.simulations} closed-loop "
        f"simulations); the two end points lie {apart:.0%} of the faithful route's "
        "step apart, so they reach nearly the same objective without being the "
        "same point."))
else:
    glue_md("clie_short_faithful", (
        "**The faithful route was not run in this build:** the quick profile leaves "
        f"it out (it costs {fast.x.size + 1} closed-loop simulations per iteration "
        f"against the fast route's {fast.simulations} in all); the full profile's "
        "CLIE sweep runs it (`papermill_params/clie_full.csv`), and "
        "`make clie-faithful PROFILE=quick` writes the record this section then shows."))

# %% [markdown]
# Held-out pooled RMSE of {glue:text}`clie_short`: start
# {glue:text}`clie_short_start_rmse:.5f` N·m, fast route {glue:text}`clie_short_fast_rmse:.5f`
# N·m ({glue:text}`clie_short_fast_change:+.2%`): CLIE by the fast route makes its held-out
# prediction **{glue:text}`clie_short_fast_word`** on the twin; the paper's CLIE worsened
# AP01's by {paper}`ap01_clie_degradation` (Table VIII). {glue:md}`clie_short_faithful`
#
# ## DIDIM, the related closed-loop method (Gautier, Janot and Vandanjon)
#
# DIDIM identifies from the closed-loop torque output too, but needs no OLS start: from a
# regular initialization (the realization layer's joint-level inertias and viscous terms, every
# other parameter zero) each Gauss–Newton step is an IDIM least-squares on the simulated
# trajectory (register "CLIE"). It is run once on the representative condition's record and
# scored on V01–V03 like the other stages ({numref}`tab-clie-didim`).
#
# Its start is that initialization, and its objective at the end is the record's:

# %%
didim = view.didim_run(trajectory, ts, run)  # the main job's DIDIM run
regular = clie.regular_initialization(  # joint inertias and viscous terms, the rest zero
    problem.names, problem.constants, problem.record_per_command())
np.testing.assert_array_equal(didim.x0, regular)
assert didim.integration_step_s == problem.max_step  # DIDIM ran at the paper's steps
np.testing.assert_allclose(problem.objective(didim.x), didim.objective_final, 1e-9)

# %% tags=["hide-input"]
didim = view.didim_run(trajectory, ts, run)
estimates = {"OLS/SDP start": (refined.objective_start, refined.x0),
             f"CLIE ({refined.method})": (refined.objective_final, refined.x),
             "DIDIM": (didim.objective_final, didim.x)}
display(view.didim_table(label, {
    name: (objective, metrics.pooled_rmse(model, b, heldout),
           100 * np.mean([metrics.prediction_error(model, b, h).mne for h in heldout]))
    for name, (objective, b) in estimates.items()}))
glue("clie_didim_iterations", didim.iterations)
glue("clie_didim_simulations", didim.simulations)
glue("clie_didim_wall", didim.wall_time_s)
glue("clie_didim_message", didim.message)
glue("clie_didim_gap", didim.objective_final / refined.objective_final - 1)

# %% [markdown]
# DIDIM: {glue:text}`clie_didim_iterations:d` Gauss–Newton iterations,
# {glue:text}`clie_didim_simulations:d` closed-loop simulations,
# {glue:text}`clie_didim_wall:.1f` s ({glue:text}`clie_didim_message`); its objective is
# {glue:text}`clie_didim_gap:+.2%` from the CLIE solution's. The paper does not run DIDIM;
# these rows have no paper value.
#
# ## The four CLIE runs from the four ε projections (Sec. IV-B, Appendix D-E)
#
# The paper ran CLIE on AG02 at its interval from each projection of the ε ladder. On the twin
# the OLS estimate of this condition may already be PD on the record (route O-C), so no
# projection is needed; we still project the OLS estimate by {eq}`eq-paper-8` with each ε.
# Where the constraints are inactive (λmin on $\Theta_c$ already at or above ε) the projection
# *is* the OLS point, and CLIE from it is the run above; each distinct start is refined once,
# by the fast route ({numref}`tab-clie-epsilon`, {numref}`tab-clie-epsilon-paper`).
#
# λmin of the OLS estimate on $\Theta_c$, which decides which margins leave the constraints
# inactive:

# %%
bundle = identify.condition_bundle(trajectory, ts, run)  # the filtered, decimated record
theta_c = bundle.theta[sdp.constraint_poses(bundle.theta, bundle.dtheta)]  # Θc of (8)
lam_c = model.arm_min_eigenvalue(theta_c, np.asarray(record["ols"])).min()
steps = view.refinement_runs_record(trajectory, ts, run, "epsilon")["epsilon"]
np.testing.assert_allclose(lam_c, steps["lambda_min_constraint_poses"], rtol=1e-9)
active = [s.get("active", True) for s in steps["ladder"]]  # a failed projection: active
assert active == [bool(lam_c < s["epsilon"]) for s in steps["ladder"]]

# %% tags=["hide-input"]
ladder = view.epsilon_runs(trajectory, ts, run, refined)
display(ladder.table, ladder.against_paper)
glue("clie_lambda_theta_c", ladder.lambda_min_constraint_poses)
glue_md("clie_inactive", " and ".join(ladder.inactive) or "none")
glue("clie_eps_objective_min", ladder.objective_min)
glue("clie_eps_objective_max", ladder.objective_max)

# %% [markdown]
# λmin of $\mathbf M(\boldsymbol\theta;\hat{\boldsymbol\beta})$ on $\Theta_c$ is
# {glue:text}`clie_lambda_theta_c:.3g` kg·m², so the constraints are inactive for ε =
# {glue:md}`clie_inactive`: those projections are the OLS point itself. Final objectives
# {glue:text}`clie_eps_objective_min:.7g` to {glue:text}`clie_eps_objective_max:.7g` (paper:
# {paper}`clie_objective_range_eps`).
#
# (clie-iterations-and-function-evaluations-sec-iv)=
# ## Iterations and function evaluations (Sec. IV-C, Appendix D-F)
#
# Cost as the paper reports it: iterations and function evaluations. The paper counts one
# evaluation per parameter plus the reference point in every iteration; our faithful route runs
# the same one simulation per Jacobian column plus scipy's trial points, our fast route one
# simulation per trial point. First the runs made in this chapter
# ({numref}`tab-clie-chapter-runs`), then the CLIE sweep: every condition of the build's profile
# refined by the fast route, against the paper ({numref}`tab-clie-cost`), per condition
# ({numref}`tab-clie-panel`), and the conditions it could not refine, if any.
#
# One entry of the panel, AP01 at 80 ms, recomputed from the start and end point its record
# holds:

# %%
coarse = view.sweep_refinement_of(view.condition_record(view.SHORT, 0.080, 1), "fast")
as_run = dataclasses.replace(short_problem, max_step=coarse.integration_step_s)
ratio = as_run.objective(coarse.x) / as_run.objective(coarse.x0)  # end / start objective
np.testing.assert_allclose(ratio, coarse.objective_final / coarse.objective_start, 1e-9)

# %% tags=["hide-input"]
sweep_records = view.sweep_records()
short_label = view.condition_label(view.SHORT, 0.040)
sweep_run = "the CLIE sweep's run"
display(view.runs_table([
    (f"{label} ({record['route']} start), {sweep_run}", record["route"], refined),
    *[(f"{short_label}, {sweep_run}", short["route"], r) for r in routes.values()],
    (f"{label} (DIDIM, regular initialization)", "none (no OLS start)", didim),
    *ladder.runs]))
if len(sweep_records):
    display(view.sweep_against_paper(sweep_records), view.clie_panel(sweep_records))
failed = view.failures_table()
display(failed) if failed is not None else None
facts = view.sweep_facts(sweep_records)
glue("clie_sweep_records", facts["records"])
glue("clie_profile", profile())
glue("clie_sweep_oc", facts.get("route_oc", 0))
glue("clie_sweep_osc", facts.get("route_osc", 0))
glue("clie_sweep_within", facts.get("within_one_percent", 0))
step = f"{clie.INTEGRATION_STEP_S * 1e3:g} ms"  # the paper's
if "one_step" not in facts:  # no sweep record, or records older than the check
    integration = ""
elif facts["one_step"] == 0:
    integration = (f"All {facts['records']} sweep refinements ran at the paper's "
                   f"{step} steps.")
else:
    integration = (
        "The fast route integrates the closed loop in one Heun step per control cycle, "
        f"a cycle whose error estimate exceeds {clie.FAST_ERROR_TOLERANCE:g} rad/s again "
        f"at {step} (register \"CLIE\"). Checked at each solution against the paper's "
        f"{step} integration, the objective differed by at most "
        f"{facts['gap_max']:.4%} (median {facts['gap_median']:.5%}) over "
        f"{facts['one_step']} refinements; {facts['again']} of {facts['records']} were "
        f"refined again at {step} because it differed by more than "
        f"{clie.FAST_STEP_OBJECTIVE_TOLERANCE:.1%}.")
glue_md("clie_integration", integration)

# %% [markdown]
# A trust-region step is accepted only where it lowers the objective. Where every trial step
# from the start raised it, the trust region collapses and the run ends at its start
# (`refinement.stopped_at_start`):

# %%
no_step = [view.condition_label(r["trajectory"], r["ts"])
           for r in sweep_records.to_dict("records")
           if refinement.stopped_at_start(clie.report_from_record(r).as_dict())]

# %% tags=["hide-input"]
if not no_step:
    stuck = "Every one of them accepted at least one step."
else:
    stuck = (
        f"{len(no_step)} of them accepted no step ({', '.join(no_step)}): "
        "under the DIDIM Jacobian every trial step from the OLS/SDP start "
        "raised the objective, so their CLIE estimate is that start, not "
        "refined. From such starts the exact Jacobian of the simulation does "
        "refine (register \"CLIE\", \"All forty trajectories at 10 ms\"), "
        "at a cost this build does not spend.")
glue_md("clie_no_step", stuck)

# %% [markdown]
# {glue:text}`clie_sweep_records:d` CLIE records (profile {glue:text}`clie_profile`),
# {glue:text}`clie_sweep_oc:d` on route O-C and {glue:text}`clie_sweep_osc:d` on O-S-C. CLIE is
# a local method: the objective of {glue:text}`clie_sweep_within:d` of them ends within one per
# cent of where it started. {glue:md}`clie_no_step` {glue:md}`clie_integration`

# %% [markdown]
# ## Is the simulated loop stable? (beyond the paper)
#
# The simulation {eq}`eq-paper-10` closes the controller {eq}`eq-clie-controller` around a
# plant whose inertia is the model's. Its velocity feedback alone, with
# $\dot{\boldsymbol\theta}_s$ the encoder difference over the last period $T$, moves the
# velocity by $\mathbf v_{k+1} = \mathbf v_k - \mathbf G\,(\mathbf v_k + \mathbf v_{k-1})/2$
# each cycle, with
#
# $$
# \mathbf G(\boldsymbol\theta;\boldsymbol\beta) = T K_V\,
#   \mathbf M(\boldsymbol\theta;\boldsymbol\beta)^{-1}\hat{\mathbf M}\mathbf S,
# \qquad
# g(\boldsymbol\theta;\boldsymbol\beta)
#   = \rho\big(\mathbf G(\boldsymbol\theta;\boldsymbol\beta)\big) < 2
# $$ (eq-clie-velocity-loop)
#
# where $\mathbf S$ turns the commanded torque into the record's (logged over catalogue Kt)
# and $\rho$ is the spectral radius. Jury's test makes that recursion stable for $g < 2$;
# beyond the bound the simulated loop oscillates until its current clamps hold it, chattering
# between them. The filter $\mathcal F$ of {eq}`eq-clie-residual` averages the chatter away, so
# the objective {eq}`eq-paper-9` does not see it, and nothing in CLIE keeps $g$ under the bound
# (register "CLIE", "Where the simulated loop is unstable"). The paper states no such check.
# On the representative condition, at the record's poses:

# %%
record_bundle = identify.condition_bundle(trajectory, ts, run)  # at its interval
assert list(refined.names) == list(model.names)
loop_gain = problem.velocity_loop_gain  # g of (eq-clie-velocity-loop) at each pose
gains = {"OLS/SDP start": loop_gain(refined.x0, record_bundle.theta),
         f"CLIE ({refined.method})": loop_gain(refined.x, record_bundle.theta),
         "twin's truth": loop_gain(model.base_from_standard(load_truth()).values,
                                   record_bundle.theta)}
clamped = {"OLS/SDP start": problem.clamped_cycles(simulation).sum(),  # at 0.25 ms
           f"CLIE ({refined.method})": problem.clamped_cycles(end).sum()}

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-clie-loop-gain", "caption": "The gain g of the simulated velocity loop along the representative record, at the OLS/SDP start, the CLIE solution and the twin's truth, against the stability bound. Data: a twin recording."}}
view.loop_gain_figure(label, record_bundle.t - record_bundle.t[0], gains,
                      controller.VELOCITY_LOOP_STABLE_BELOW);

# %% tags=["hide-input"]
glue("clie_loop_bound", controller.VELOCITY_LOOP_STABLE_BELOW)
glue("clie_loop_start", gains["OLS/SDP start"].max())
glue("clie_loop_end", gains[f"CLIE ({refined.method})"].max())
glue("clie_loop_truth", gains["twin's truth"].max())
glue("clie_loop_end_clamped", int(clamped[f"CLIE ({refined.method})"]))
glue("clie_loop_start_clamped", int(clamped["OLS/SDP start"]))

# %% [markdown]
# Largest $g$ along the record ({numref}`fig-clie-loop-gain`): the twin's truth
# {glue:text}`clie_loop_truth:.2f`, the OLS/SDP start {glue:text}`clie_loop_start:.2f`, the CLIE
# solution {glue:text}`clie_loop_end:.2f`; simulated at the paper's steps, the start's loop holds
# its command at a current clamp on {glue:text}`clie_loop_start_clamped:,d` cycles × axes, the
# solution's on {glue:text}`clie_loop_end_clamped:,d`. Over the CLIE sweep, each refinement's
# start and end at about a thousand poses of its record:

# %%
POSES = 1000  # evenly spaced poses of each record (g depends on the poses only)
past, records_poses = {"start": [], "end": []}, {}
for r in sweep_records.to_dict("records"):
    recording = (r["trajectory"], r["run"])
    if recording not in records_poses:
        theta = identify.condition_bundle(r["trajectory"], 0.040, r["run"]).theta
        records_poses[recording] = theta[:: max(1, len(theta) // POSES)]
    poses = records_poses[recording]
    report = clie.report_from_record(r)
    for where, beta in (("start", report.x0), ("end", report.x)):
        if loop_gain(beta, poses).max() >= controller.VELOCITY_LOOP_STABLE_BELOW:
            past[where].append(view.condition_label(r["trajectory"], r["ts"]))

# %% tags=["hide-input"]
glue("clie_loop_past_end", len(past["end"]))
glue("clie_loop_past_start", len(past["start"]))
glue_md("clie_loop_past_end_names", ", ".join(past["end"]) or "none")

# %% [markdown]
# Of the {glue:text}`clie_sweep_records:d` refinements, {glue:text}`clie_loop_past_end:d` end
# where $g$ reaches {glue:text}`clie_loop_bound:g` somewhere on their record
# ({glue:md}`clie_loop_past_end_names`), and {glue:text}`clie_loop_past_start:d` start there. By
# their own inertia the arm's controller would be unstable at those poses, which the twin's
# recorded loop is not (its truth's $g$ is {glue:text}`clie_loop_truth:.2f`); their band-limited
# torque fits the record all the same.

# %% tags=["hide-input"]
glue("clie_run_time", time.perf_counter() - started)
glue("clie_refine", refine)

# %% [markdown]
# *Chapter computed in {glue:text}`clie_run_time:.0f` s (refine = {glue:text}`clie_refine`).*
