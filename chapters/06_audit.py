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
# representative condition and the twin's true parameters; the comparison over every OLS
# estimate of the build of PD at the visited configurations against PD over $\Theta$; the
# rescue with $\epsilon_\mathrm{PD}=0$ (the earlier version's) and $10^{-3}$ (the accepted
# one); Table IX (two audits × five seeds); Table XVIII (what the rescue moved); the
# manufacturer's box; Table X; and, beyond the paper, a certified check over the continuous
# box.
#
# **Data: the digital twin's recordings and the condition records the OLS/SDP sweep wrote**
# (chapter "OLS and the conditional SDP projection"), not the authors' arm. The twin has what
# the paper could not: the true parameters, whose own audit margin is shown beside every
# estimate.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1
seeds = (1, 2, 3, 4, 5)
# seconds the certified check may spend on the whole of Theta, margins 0 and eps/2 together (margin 0 first;
# it reports "undecided" when out of time)
certify_time_s = 180.0

# %%
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display
from matplotlib.colors import TwoSlopeNorm
from matplotlib.patches import Rectangle

from crane_lib.acceptance import audit
from crane_lib.acceptance import certified
from crane_lib.acceptance import consequences
from crane_lib.identification import condition as identify
from crane_lib.acceptance import rescue as rescue_stage
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paper_numbers import paper
from crane_lib.paths import RESULTS_DIR
from crane_lib.twin.truth import load_truth

pd.set_option("display.precision", 4)
# cvxpy warns on Clarabel's inexact exits; the rescue checks every constraint itself and reports the status
warnings.filterwarnings("ignore", message="Solution may be inaccurate")
model = DynamicModel("reduced")
truth_base = model.base_from_standard(load_truth())
seeds = tuple(int(s) for s in seeds)
EPS = paper("rescue_eps_pd").value  # the accepted rescue margin, kg·m²
EPS_EARLIER = paper("earlier_rescue_eps_pd").value  # the earlier version's margin
condition = f"{trajectory} at {ts * 1e3:g} ms"


def sci(x, digits=3):
    return "—" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}g}"


def span(values, digits=3):
    values = np.asarray(values, dtype=float)
    return sci(values.min(), digits) if np.isclose(values.min(), values.max(), rtol=1e-9, atol=0) else f"{sci(values.min(), digits)} to {sci(values.max(), digits)}"


# %% [markdown]
# ## The pose sets (Sec. VI-E, Appendix D-G)
#
# The dense audit holds a deterministic structured grid (θ1 at the centre of its range, since
# $\mathbf M$ does not depend on it), a uniform draw over $\Theta$ and a draw over the
# folded-arm region where the paper found violations to concentrate; the two random parts are
# redrawn per seed. The earlier version's sparse audit is a $3^7$ grid plus a uniform draw over
# a narrower domain. Placement and draw order are recorded in the register
# ("the all-pose audit").

# %%
dense_set, sparse_set = audit.audit_poses(seeds[0]), audit.sparse_audit_poses(seeds[0])
volume_pct = 100 * audit.volume_share(audit.folded_region(), audit.audit_domain())
pose_counts = pd.DataFrame(
    [
        ("dense: structured grid", "audit_grid_count", dense_set.counts()[audit.GRID]),
        ("dense: uniform draw over Θ", "audit_uniform_count", dense_set.counts()[audit.UNIFORM]),
        ("dense: folded-arm draw", "audit_focused_count", dense_set.counts()[audit.FOLDED]),
        ("dense: total", "audit_pose_count", len(dense_set)),
        ("folded region, % of Θ by volume", "folded_region_volume_share", round(volume_pct, 2)),
        ("sparse: 3^7 grid", "earlier_grid_count", sparse_set.counts()[audit.GRID]),
        ("sparse: uniform draw", "earlier_uniform_count", sparse_set.counts()[audit.UNIFORM]),
        ("sparse: total", "earlier_audit_total", len(sparse_set)),
    ],
    columns=["", "id", "this book"],
).set_index("")
pose_counts["paper"] = [f"{paper(i).value:g}" for i in pose_counts["id"]]
pose_counts["this book"] = [f"{v:g}" for v in pose_counts["this book"]]
pose_counts["why they differ"] = ""
pose_counts[["paper", "this book", "why they differ"]]

# %% [markdown]
# ## The representative condition and the twin's truth
#
# The raw OLS estimate of the condition named by the parameters (by default the paper's
# representative case, AG02 at 40 ms), audited over $\Theta$ with the first seed; beside it the
# twin's true base parameters, which are known here and were not for the arm.

# %%
bundle = identify.condition_bundle(trajectory, ts, run)
result = identify.identify_condition(bundle, trajectory, model, run=run)
if result.ols is None:
    raise RuntimeError(f"{condition} could not be identified: {result.failure}")
raw = result.ols.parameters
raw_audit = audit.audit(raw.values, seeds[0], "dense", model)
truth_audit = audit.audit(truth_base, seeds[0], "dense", model)
first = pd.DataFrame(
    {
        f"raw OLS, {condition}": [raw_audit.passed, raw_audit.lambda_min, raw_audit.n_violations, np.round(np.rad2deg(raw_audit.worst_pose), 1)],
        "twin truth": [truth_audit.passed, truth_audit.lambda_min, truth_audit.n_violations, np.round(np.rad2deg(truth_audit.worst_pose), 1)],
    },
    index=["PD over Θ", "λmin over Θ (kg·m²)", "violating configurations", "worst pose (deg)"],
)
display(first)
raw_margin_ok = raw_audit.passed and raw_audit.lambda_min >= EPS
display(Markdown(
    f"On the twin the raw OLS estimate of {condition} is "
    + (f"**positive definite over Θ**, with λmin = {sci(raw_audit.lambda_min)} kg·m², "
       f"{raw_audit.lambda_min / EPS:.1f} times the rescue margin ε = {sci(EPS)} kg·m², "
       if raw_audit.passed else
       f"**not positive definite over Θ**: {raw_audit.n_violations:,} violating configurations, λmin = {sci(raw_audit.lambda_min)} kg·m², ")
    + f"against {sci(truth_audit.lambda_min)} kg·m² for the twin's own truth. "
    + ("The paper's OLS estimate of the same condition fails the audit (Sec. VII-D); the twin's record is cleaner than "
       "the arm's, and its true M has a margin the estimate inherits." if raw_audit.passed else
       "As on the arm (Sec. VII-D), the OLS estimate of this condition is infeasible.")
))

# %% [markdown]
# ## PD where the data were taken against PD over Θ (Sec. VI-E)
#
# The routing test of Table V asks whether $\mathbf M(\boldsymbol\theta;\hat{\boldsymbol\beta}_\mathrm{OLS})$
# is positive definite at the configurations the record visits. Re-evaluating every OLS
# estimate of this build on the audit of the first seed shows how much weaker that test is.
# This fills the place marked in the chapter "OLS and the conditional SDP projection".

# %%
records = [r for r in identify.load_condition_records(RESULTS_DIR / "conditions") if r.get("ols") is not None]
rows = []
for r in records:
    a = audit.audit(np.asarray(r["ols"]), seeds[0], "dense", model)
    rows.append({
        "trajectory": r["trajectory"], "Ts (ms)": round(r["ts"] * 1e3), "run": r["run"],
        "λmin visited": r["lambda_min_visited"], "PD visited": bool(r["pd_visited"]),
        "λmin over Θ": a.lambda_min, "PD over Θ": a.passed, "violations": a.n_violations,
        "_record": r, "_audit": a,
    })
sweep = pd.DataFrame(rows)
shown = sweep.drop(columns=["_record", "_audit"]).set_index(["trajectory", "Ts (ms)", "run"])
display(shown)
n_est = len(sweep)
n_pd_visited = int(sweep["PD visited"].sum()) if n_est else 0
n_pd_theta = int(sweep["PD over Θ"].sum()) if n_est else 0
n_routing_only = int((sweep["PD visited"] & ~sweep["PD over Θ"]).sum()) if n_est else 0
n_reverse = int((~sweep["PD visited"] & sweep["PD over Θ"]).sum()) if n_est else 0
profile = os.environ.get("CRANE_PROFILE", "full")
visited_vs_theta = pd.DataFrame(
    [
        ("OLS estimates", "identification_condition_count", n_est),
        ("PD at the configurations their record visits", "ols_pd_trajectory_count", n_pd_visited),
        ("PD over Θ", "ols_pd_domain_count", n_pd_theta),
        ("pass the routing test, fail over Θ", "ols_pass_routing_fail_audit", n_routing_only),
        ("PD over Θ but not on their own record", "ols_reverse_mismatch_count", n_reverse),
    ],
    columns=["", "id", "this book"],
).set_index("")
visited_vs_theta["paper"] = [paper(i).value for i in visited_vs_theta["id"]]
visited_vs_theta["why they differ"] = (
    f"profile `{profile}` has {n_est} of the paper's {paper('identification_condition_count').value:g} conditions; "
    "the twin's estimates are cleaner than the arm's (fewer non-PD)"
)
display(visited_vs_theta[["paper", "this book", "why they differ"]])
display(Markdown(
    f"Share PD over Θ among those PD at their own configurations: this book "
    f"{n_pd_theta}/{n_pd_visited}" + (f" ({100 * n_pd_theta / n_pd_visited:.0f} %)" if n_pd_visited else "")
    + f", paper {paper('ols_pd_domain_count').value:g}/{paper('ols_pd_trajectory_count').value:g} "
    f"({100 * paper('ols_pd_domain_count').value / paper('ols_pd_trajectory_count').value:.0f} %). "
    + ("As in the paper, the reverse never occurs." if n_reverse == 0 else
       f"Unlike the paper, {n_reverse} estimate(s) are PD over Θ's finite draw but not on their own record.")
))

# %% [markdown]
# ## Which model the rescue is shown on
#
# The paper rescues a model that fails the audit. The rescue of a model that is already PD
# over $\Theta$ with a margin of at least $\epsilon_\mathrm{PD}$ has nothing to do: the nearest
# point of the feasible set is the model itself. The cell below checks that on the condition's
# estimate (by running the rescue), and then picks the model the rest of the chapter rescues:
# the condition's own OLS estimate if it violates; otherwise the OLS estimate of this build
# that violates with the smallest λmin over $\Theta$ (preferring the same trajectory); and only
# if no estimate of the build violates, a **constructed** case, not a reproduction: the
# estimate with the smallest margin, pushed by the minimum-norm change that makes it non-PD
# at its worst pose (`audit.minimal_pd_break`).

# %%
violating_rows = sweep[~sweep["PD over Θ"]] if n_est else sweep
if not raw_audit.passed:
    case, bad_label = "reproduction", f"raw OLS, {condition}"
    bad_beta, bad_se = raw.values, raw.std_errors
elif len(violating_rows):
    same = violating_rows[violating_rows["trajectory"] == trajectory]
    pick = (same if len(same) else violating_rows).sort_values("λmin over Θ").iloc[0]
    r = pick["_record"]
    case, bad_label = "sweep", f"raw OLS, {r['trajectory']} at {r['ts'] * 1e3:g} ms"
    bad_beta, bad_se = np.asarray(r["ols"]), np.asarray(r["std_errors"])
else:
    candidates = [(raw_audit.lambda_min, raw.values, raw.std_errors, condition, raw_audit.worst_pose)]
    candidates += [(row["λmin over Θ"], np.asarray(row["_record"]["ols"]), np.asarray(row["_record"]["std_errors"]),
                    f"{row['trajectory']} at {row['Ts (ms)']} ms", row["_audit"].worst_pose) for _, row in sweep.iterrows()]
    lam0, base_beta, bad_se, base_name, worst = min(candidates, key=lambda c: c[0])
    bad_beta = audit.minimal_pd_break(base_beta, worst, EPS / 2, model)
    case, bad_label = "constructed", f"constructed: {base_name} pushed non-PD"

if raw_margin_ok:
    unchanged = rescue_stage.rescue_over_theta(model, raw.values, epsilon=EPS)
    change = np.linalg.norm(unchanged.result.parameters.values - raw.values)
    display(Markdown(
        f"**The rescue changes nothing on {condition}.** Its raw OLS estimate is PD over Θ with λmin = "
        f"{sci(raw_audit.lambda_min)} kg·m² ≥ ε = {sci(EPS)} kg·m²; the rescue run on it "
        f"({len(unchanged.passes)} pass(es), converged: {unchanged.converged}) moves it by |Δβ| = {change:.1e}, "
        f"solver precision. Its accepted model is its OLS estimate; Table IX below carries it as such."
    ))
if case == "reproduction":
    msg = "The rescue is shown on the condition's own raw OLS estimate, which fails the audit, as in the paper."
elif case == "sweep":
    msg = (f"**No reproduction on {condition}, so the rescue is shown on another estimate of this build:** "
           f"{bad_label}, which "
           + ("passes the routing test of its own record and fails over Θ, the paper's mechanism. " if r["pd_visited"] else
              "fails the routing test of its own record as well as over Θ. ")
           + "It is the violating OLS estimate with the smallest λmin over Θ "
           + ("of its trajectory " if len(same) else "")
           + f"among the {len(violating_rows)} of this build that violate.")
else:
    msg = (f"**No OLS estimate of this build violates over Θ.** To show what the rescue does, the chapter constructs a "
           f"non-PD model from {base_name} (the smallest margin, λmin = {sci(lam0)} kg·m²) by the minimum-norm change "
           f"that drives M to λmin ≤ −{sci(EPS / 2)} kg·m² at its worst pose. This is a constructed case, not a reproduction "
           "of the paper.")
display(Markdown(msg))

# %% [markdown]
# ## The rescue with ε = 0 and ε = 10⁻³ (Sec. IV-C, Appendix D-E)
#
# $\Theta_\mathrm r$ starts from random configurations and the corners of $\Theta$; after each
# solve the solution is checked on a separate audit-size draw (seed 0, never used by the
# acceptance audits of seeds 1–5) and the worst configurations with
# $\lambda_\mathrm{min}\le\epsilon_\mathrm{PD}/2$ are appended, up to the pass and per-pass
# caps. The rescue is run as the paper's timing re-run was (D-I): from the fresh set, without
# seeding the audit's violators, so the acceptance audits stay independent of $\Theta_\mathrm r$
# except where grid points coincide with its corners. The earlier version's margin
# $\epsilon_\mathrm{PD}=0$ is the "submitted" model of Table IX.

# %%
rescued = {eps: rescue_stage.rescue_over_theta(model, bad_beta, epsilon=eps) for eps in (EPS_EARLIER, EPS)}
pass_rows = []
for eps, res in rescued.items():
    for p in res.passes:
        pass_rows.append({"ε (kg·m²)": eps, **{k: p[k] for k in ("pass", "constraint_poses", "active_poses", "lambda_min_check", "violators", "appended")}})
display(pd.DataFrame(pass_rows).set_index(["ε (kg·m²)", "pass"]))
submitted, accepted = (rescued[e].result.parameters.values for e in (EPS_EARLIER, EPS))
acc_res = rescued[EPS]
appended = sum(p["appended"] for p in acc_res.passes[:-1])
display(Markdown(
    f"With ε = {sci(EPS)} kg·m² the rescue of {bad_label} converged: {acc_res.converged}, in {len(acc_res.passes)} pass(es) "
    f"appending {appended} configurations (paper, the same fresh-set re-run: {paper('rescue_passes_unseeded').value:g} passes, "
    f"{paper('rescue_appended_unseeded').value:g} appended; cap {paper('rescue_max_passes').value:g} passes). "
    f"With ε = {sci(EPS_EARLIER)}: converged {rescued[EPS_EARLIER].converged} in {len(rescued[EPS_EARLIER].passes)} pass(es). "
    f"Final solver status: {rescued[EPS_EARLIER].result.status} (ε = {sci(EPS_EARLIER)}), {acc_res.result.status} (ε = {sci(EPS)}); "
    "the rescue checks every constraint of Θr itself whatever the solver reports."
))

# %% [markdown]
# ## Table IX: what the audit's pose sampling decides
#
# Each model under both audits and every seed: the verdict, λmin and the number of violating
# configurations (counts, not fractions, because the audits differ in size and the dense one
# oversamples on purpose).

# %%
models = {bad_label: bad_beta}
if case != "reproduction":
    models = {f"raw OLS, {condition}": raw.values, **models}
models.update({f"rescued, ε = {sci(EPS_EARLIER)} (\"submitted\")": submitted, f"rescued, ε = {sci(EPS)} (accepted)": accepted,
               "twin truth": model.parameter_vector(truth_base)})
audits = {(name, kind, s): audit.audit(beta, s, kind, model) for name, beta in models.items() for kind in ("sparse", "dense") for s in seeds}
cell = lambda a: ("PD" if a.passed else f"non-PD, {a.n_violations:,}") + f" | {a.lambda_min:.3g}"  # noqa: E731
table_ix = pd.DataFrame(
    [{"model": n, "audit": k, **{f"seed {s}": cell(audits[(n, k, s)]) for s in seeds}} for n in models for k in ("sparse", "dense")]
).set_index(["model", "audit"])
display(Markdown("Verdict (with the number of violating configurations) | λmin in kg·m², twin data:"))
display(table_ix)

# %%
def seeds_where(name, kind, test):
    return sum(bool(test(audits[(name, kind, s)])) for s in seeds)


sub_name, acc_name = list(models)[-3], list(models)[-2]
sub_dense = [audits[(sub_name, "dense", s)] for s in seeds]
acc_dense = [audits[(acc_name, "dense", s)] for s in seeds]
acc_lams = np.array([a.lambda_min for a in acc_dense])


def folded_rate_ratio(results):
    fold = sum(a.violations[audit.FOLDED] for a in results) / sum(a.pose_counts[audit.FOLDED] for a in results)
    uni = sum(a.violations[audit.UNIFORM] for a in results) / sum(a.pose_counts[audit.UNIFORM] for a in results)
    return "no violation" if fold == 0 and uni == 0 else ("∞ (none in the uniform draw)" if uni == 0 else f"{fold / uni:.1f}")


n_seeds = len(seeds)
why_model = {"reproduction": "twin vs real arm", "sweep": f"rescued model is {bad_label}, not AG02's CLIE solution", "constructed": "constructed case"}[case]
comparison_ix = pd.DataFrame(
    [
        ("seeds calling the ε = 0 model PD, sparse audit", f"{paper('submitted_sparse_pd_seeds').value:g} of {paper('audit_seed_count').value:g}",
         f"{seeds_where(sub_name, 'sparse', lambda a: a.passed)} of {n_seeds}"),
        ("seeds finding the ε = 0 model non-PD, dense audit", f"{paper('submitted_dense_nonpd_seeds').value:g} of {paper('audit_seed_count').value:g}",
         f"{seeds_where(sub_name, 'dense', lambda a: not a.passed)} of {n_seeds}"),
        ("violating configurations of the ε = 0 model, dense", paper("submitted_violation_count").text(), span([a.n_violations for a in sub_dense])),
        ("λmin of the ε = 0 model, dense (kg·m²)", "not stated", span([a.lambda_min for a in sub_dense])),
        ("seeds on which the accepted model passes both audits", f"{paper('accepted_pass_seeds').value:g} of {paper('audit_seed_count').value:g}",
         f"{sum(audits[(acc_name, 'dense', s)].passed and audits[(acc_name, 'sparse', s)].passed for s in seeds)} of {n_seeds}"),
        ("λmin of the accepted model over seeds, dense (kg·m²)", paper("audit_min_eig_accepted").text("{:.3g}"), span(acc_lams)),
        ("max/min of that margin over seeds", paper("audit_margin_seed_factor").text(), f"{acc_lams.max() / acc_lams.min():.2f}"),
        ("folded-block vs uniform violation rate, ε = 0 model", paper("oversample_rate_ratio_submitted").text(), folded_rate_ratio(sub_dense)),
        (f"folded-block vs uniform violation rate, {bad_label}", paper("oversample_rate_ratio_ols").text(),
         folded_rate_ratio([audits[(bad_label, "dense", s)] for s in seeds])),
    ],
    columns=["", "paper", "this book"],
).set_index("")
comparison_ix["why they differ"] = why_model
display(comparison_ix)
sub_worst = min(sub_dense, key=lambda a: a.lambda_min)
if not sub_worst.passed and abs(sub_worst.lambda_min) < 1e-9:
    display(Markdown(
        f"**The ε = 0 model fails the dense audit only at rounding level:** λmin = {sub_worst.lambda_min:.2g} kg·m², at "
        f"θ = {np.round(np.rad2deg(sub_worst.worst_pose), 1).tolist()} deg ({sub_worst.worst_component}). Its constrained "
        "eigenvalues sit at zero, as the paper says of that margin, and here the configurations where they sit are corners of Θ "
        "that the rescue constrains and the audit grid contains, so the strict criterion λmin > 0 rejects it at zero. On the arm "
        "the submitted model failed with genuinely negative eigenvalues at configurations Θr did not hold; the twin's ε = 0 "
        "model is a boundary case of the criterion, not an infeasible model, and its Table X row below is read as such."
    ))

# %% [markdown]
# ### The seed spread of the accepted model's margin
#
# The paper's accepted margin varies by a factor between seeds because its worst pose lies
# inside the domain, where each random draw comes closer or less close to it. Where the
# smallest eigenvalue of a model sits on the deterministic grid (a corner of $\Theta$, shared
# by every seed and by $\Theta_\mathrm r$), every seed returns the same margin.

# %%
acc_worst = acc_dense[int(np.argmin(acc_lams))]
truth_lams = np.array([audits[("twin truth", "dense", s)].lambda_min for s in seeds])
display(Markdown(
    f"Accepted model ({bad_label} rescued with ε = {sci(EPS)} kg·m²): λmin {span(acc_lams, 4)} kg·m² over seeds {list(seeds)}, "
    f"a factor {acc_lams.max() / acc_lams.min():.3f} (paper {paper('audit_min_eig_accepted').text('{:.3g}')}, factor "
    f"{paper('audit_margin_seed_factor').value:g}). Its worst configuration belongs to the **{acc_worst.worst_component}** "
    f"component, at θ = {np.round(np.rad2deg(acc_worst.worst_pose), 1).tolist()} deg. "
    + ("The minimum sits on the grid, so the margin cannot vary with the seed; it equals ε to solver precision because "
       "that corner is in Θr too." if acc_worst.worst_component == audit.GRID else
       "The minimum comes from a random component, so it varies with the draw as in the paper.")
    + f" The twin truth: λmin {span(truth_lams, 4)} kg·m² over the same seeds."
))

# %% [markdown]
# ## Table XVIII: which entries the rescue moved
#
# The rescue is a Euclidean nearest-point problem in the base parameters (register), so
# parameters that do not enter $\mathbf M$ (viscous friction) never move and the change lands
# on the entries the violated eigendirections load. An entry counts as moved here when its
# change is at least a tenth of the largest change. Each change is set against the OLS
# standard error of the estimate it was applied to; the twin's truth says, beyond the paper,
# whether the move went toward it.

# %%
delta = accepted - bad_beta
truth_vec = model.parameter_vector(truth_base)
moved = np.flatnonzero(np.abs(delta) >= 0.1 * np.abs(delta).max())
moved = moved[np.argsort(-np.abs(delta[moved]))]
table_xviii = pd.DataFrame(
    {
        "before rescue": bad_beta[moved], "rescued": accepted[moved], "change": delta[moved],
        "OLS std. error": bad_se[moved], "|change| / std. error": np.abs(delta[moved]) / bad_se[moved],
        "|estimate| / std. error": np.abs(bad_beta[moved]) / bad_se[moved],
        "twin truth": truth_vec[moved],
        "moved toward truth": np.abs(accepted[moved] - truth_vec[moved]) < np.abs(bad_beta[moved] - truth_vec[moved]),
        "share of |Δβ|² (%)": 100 * delta[moved] ** 2 / np.sum(delta**2),
    },
    index=pd.Index([model.names[i] for i in moved], name="parameter"),
)
display(table_xviii)
sub_se = int(np.sum(np.abs(delta[moved]) < bad_se[moved]))
zz6 = model.names.index("ZZR6")
comparison_xviii = pd.DataFrame(
    [
        ("entries moved", paper("rescue_changed_entries").text(), f"{len(moved)}"),
        ("largest change (kg·m², or kg·m for first moments)", f"≤ {paper('rescue_max_entry_change').text()}", sci(np.abs(delta).max())),
        ("moved entries changing by less than one std. error", paper("rescue_sub_se_entries").text(), f"{sub_se} of {len(moved)}"),
        ("ZZR6 estimate in std. errors from zero", f"≤ {paper('zzr6_se_ratio').text()}", f"{abs(bad_beta[zz6]) / bad_se[zz6]:.2f}"),
        ("entries that do not enter M (friction) moved by more than 1e-9", "—", f"{int(np.sum(np.abs(delta[[model.names.index(n) for n in model.names if n.startswith('FV')]]) > 1e-9))}"),
    ],
    columns=["", "paper", "this book"],
).set_index("")
comparison_xviii["why they differ"] = (
    f"{why_model}; the paper rescued a CLIE solution barely outside the feasible set, this model starts λmin = "
    f"{sci(audits[(bad_label, 'dense', seeds[0])].lambda_min)} kg·m² below it"
)
comparison_xviii

# %% [markdown]
# ## The manufacturer's box (Sec. V-A)
#
# $\Theta$ is wider than the manufacturer's joint limits on most joints. The same dense
# construction over the limits of the robot description in `data/`:

# %%
box, mfr = audit.audit_domain(), audit.manufacturer_box()
wider = int(np.sum((box[:, 0] < mfr[:, 0] - 1e-9) | (box[:, 1] > mfr[:, 1] + 1e-9)))
narrower_j2 = np.rad2deg(max(0.0, box[1, 0] - mfr[1, 0]) + max(0.0, mfr[1, 1] - box[1, 1]))
mfr_audits = {name: [audit.audit(models[name], s, "manufacturer", model) for s in seeds] for name in (acc_name, "twin truth")}
mfr_table = pd.DataFrame(
    [
        ("joints on which Θ is wider than the limits", paper("domain_wider_joint_count").text(), f"{wider}"),
        ("Θ narrower than the limits on joint 2 (deg)", paper("domain_narrower_j2").text(), f"{narrower_j2:g}"),
        ("accepted model: λmin over the manufacturer's box (kg·m²)", paper("accepted_min_eig_mfr_box").text("{:.3g}"),
         span([a.lambda_min for a in mfr_audits[acc_name]])),
        ("accepted model: violating configurations there", "none", f"{sum(a.n_violations for a in mfr_audits[acc_name])} over {n_seeds} seeds"),
        ("twin truth: λmin over the manufacturer's box (kg·m²)", "—", span([a.lambda_min for a in mfr_audits["twin truth"]])),
    ],
    columns=["", "paper", "this book"],
).set_index("")
mfr_table["why they differ"] = [
    "", "the robot description in data/ gives joint 2 the same ±90° as Θ, so there is no omitted strip (register)",
    why_model + ("; the accepted model's worst configuration over Θ lies outside the limits"
                 if not np.all((acc_worst.worst_pose[1:] >= mfr[1:, 0] - 1e-12) & (acc_worst.worst_pose[1:] <= mfr[1:, 1] + 1e-12)) else ""),
    "", "beyond the paper",
]
mfr_table

# %% [markdown]
# ## Table X: what an infeasible model does once M is inverted (Sec. VII-C)
#
# Against the accepted model standing in for the unmeasured true inertia: the non-PD share of
# the uniform draw; the growth time constant of the unstable root of
# $s^2+\mu K_d s+\mu K_p$ for the most negative eigenvalue μ of $\mathbf M_\mathrm{acc}^{-1}\hat{\mathbf M}$
# at the worst pose (and the fastest over every non-PD pose); and at the worst pose the
# share of random unit torques misdirected by more than 90°, the median torque-error ratio
# over random unit accelerations, the same ratio along the eigenvector of
# $\lambda_\mathrm{min}(\hat{\mathbf M})$, and the observer gain $1/\lambda$. On the twin the
# truth can stand in for $\mathbf M$ as well (last row, beyond the paper).

# %%
pairs = [(bad_label, bad_beta, accepted, "accepted"), (sub_name, submitted, accepted, "accepted"),
         (acc_name, accepted, accepted, "accepted"), (bad_label, bad_beta, truth_vec, "twin truth")]
table_x_rows = []
for name, beta_hat, beta_ref, ref in pairs:
    c = consequences.consequences(beta_hat, beta_ref, seeds[0], model)
    w = c.at_worst_pose
    table_x_rows.append({
        "model": name, "reference": ref, "non-PD (% of uniform draw)": 100 * c.non_pd_fraction,
        "τgrow at worst pose (ms)": 1e3 * w.tau_grow_s, "fastest τgrow (ms)": 1e3 * c.tau_grow_fastest_s,
        "misdirected torques (%)": 100 * w.misdirected_share, "median torque-error ratio (%)": 100 * w.median_torque_error_ratio,
        "along λmin eigenvector (%)": 100 * w.eigdir_torque_error_ratio, "sign reversed": w.eigdir_sign_reversed,
        "1/λ at worst pose (1/(kg·m²))": w.observer_gain,
    })
table_x = pd.DataFrame(table_x_rows).set_index(["model", "reference"])
display(table_x)

# %%
bad_x, sub_x = table_x.iloc[0], table_x.iloc[1]
comparison_x = pd.DataFrame(
    [
        ("non-PD share, unrescued OLS (%)", paper("ols_nonpd_fraction").text(), f"{bad_x['non-PD (% of uniform draw)']:.3g}"),
        ("τgrow, unrescued OLS (ms)", paper("ols_divergence_tau").text(), f"{bad_x['fastest τgrow (ms)']:.3g}"),
        ("non-PD share, ε = 0 model (%)", paper("submitted_nonpd_fraction").text(), f"{sub_x['non-PD (% of uniform draw)']:.3g}"),
        ("τgrow, ε = 0 model (ms)", paper("submitted_divergence_tau").text(), sci(sub_x["fastest τgrow (ms)"])),
        ("misdirected torque directions at the worst pose (%)", paper("misdirected_torque_fraction").text(),
         f"OLS {bad_x['misdirected torques (%)']:.3g}; ε = 0 {sub_x['misdirected torques (%)']:.3g}"),
        ("median torque-error ratio, random accelerations (%)", paper("random_accel_torque_diff").text(),
         f"OLS {bad_x['median torque-error ratio (%)']:.3g}; ε = 0 {sub_x['median torque-error ratio (%)']:.3g}"),
        ("torque-error ratio along the λmin eigenvector (%)", paper("eigdir_torque_error").text(),
         f"OLS {bad_x['along λmin eigenvector (%)']:.3g}; ε = 0 {sub_x['along λmin eigenvector (%)']:.3g}"),
        ("sign reversed along that eigenvector", "every case",
         f"OLS {bool(bad_x['sign reversed'])}; ε = 0 {bool(sub_x['sign reversed'])}"),
    ],
    columns=["", "paper", "this book"],
).set_index("")
comparison_x["why they differ"] = (
    f"{why_model}; the paper's four infeasible models sit just outside the feasible set, the ε = 0 model here "
    "violates only at rounding level"
)
display(comparison_x)
vs_truth = table_x.iloc[3]
display(Markdown(
    f"Against the accepted model, {bad_label} misdirects {bad_x['misdirected torques (%)']:.3g} % of unit torques at its worst "
    f"configuration and errs by {bad_x['along λmin eigenvector (%)']:.3g} % along the offending eigendirection; against the "
    f"twin's **true** inertia (known here, not on the arm) the same numbers are {vs_truth['misdirected torques (%)']:.3g} % and "
    f"{vs_truth['along λmin eigenvector (%)']:.3g} %. The accepted model stands in for the true M in the paper's Table X; near "
    f"its own feasibility boundary (λmin = {sci(acc_lams.min())} kg·m² against the truth's {sci(truth_lams.min())} kg·m²) it "
    "is itself a soft reference, which the twin makes measurable. "
    + ("Both references give an unstable loop" if np.isfinite(bad_x["fastest τgrow (ms)"]) and np.isfinite(vs_truth["fastest τgrow (ms)"]) else "The references disagree on stability")
    + f": fastest τgrow {bad_x['fastest τgrow (ms)']:.3g} ms against the accepted model, {vs_truth['fastest τgrow (ms)']:.3g} ms against the truth."
))

# %% [markdown]
# ## Where the violations lie
#
# The smallest λmin in each cell of a grid over two joints, over the dense audit set of the
# first seed, for the model the chapter rescues; cells with a violation are outlined, and the
# dashed rectangle is the oversampled folded-arm region.

# %%
fold = np.rad2deg(audit.folded_region())
dense_first = audit.audit_poses(seeds[0])
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
for ax, joints in zip(axes, ((2, 4), (4, 6))):
    cells = audit.lambda_min_map(bad_beta, dense_first, joints, bins=30, model=model)
    ea, eb = (np.rad2deg(e) for e in cells["edges"])
    lam_map = cells["lambda_min"]
    norm = TwoSlopeNorm(vcenter=0.0, vmin=min(np.nanmin(lam_map), -1e-6), vmax=max(np.nanmax(lam_map), 1e-6))
    mesh = ax.pcolormesh(ea, eb, lam_map.T, cmap="RdBu", norm=norm, shading="flat")
    ax.contour(0.5 * (ea[1:] + ea[:-1]), 0.5 * (eb[1:] + eb[:-1]), (cells["violations"] > 0).T.astype(float), levels=[0.5], colors="k", linewidths=0.8)
    a, b = joints[0] - 1, joints[1] - 1
    ax.add_patch(Rectangle((fold[a, 0], fold[b, 0]), fold[a, 1] - fold[a, 0], fold[b, 1] - fold[b, 0], fill=False, ls="--", lw=1.2, ec="0.2"))
    ax.set_xlabel(f"θ{joints[0]} (deg)")
    ax.set_ylabel(f"θ{joints[1]} (deg)")
    fig.colorbar(mesh, ax=ax, label="smallest λmin in cell (kg·m²)")
fig.suptitle(f"Twin data: λmin of M over the dense audit set (seed {seeds[0]}), {bad_label}")
plt.tight_layout()
plt.show()

# %%
bad_first = audits[(bad_label, "dense", seeds[0])]
bad_all = audit.audit(bad_beta, seeds[0], "dense", model, worst_k=max(bad_first.n_violations, 1))
violators = bad_all.worst_poses[bad_all.worst_lambdas <= 0]
rate = {k: bad_first.violations[k] / bad_first.pose_counts[k] for k in (audit.UNIFORM, audit.FOLDED)}
if len(violators):
    display(Markdown(
        f"Every violating configuration of {bad_label} has θ4 ≤ {np.rad2deg(violators[:, 3].max()):.1f}° (the folded-arm region "
        f"spans θ4 from {fold[3, 0]:g}° to {fold[3, 1]:g}°); violation rate {100 * rate[audit.FOLDED]:.2f} % in the folded-arm block "
        f"against {100 * rate[audit.UNIFORM]:.2f} % in the uniform draw: "
        + ("the violations concentrate in the region the paper oversamples, as on the arm." if rate[audit.FOLDED] > rate[audit.UNIFORM] else
           "on the twin the estimate loses definiteness where the elbow is folded furthest, and the oversampled region finds them "
           "less often than the uniform draw does.")
    ))
display(Markdown(
    f"{bad_label}: {bad_first.n_violations:,} violating configurations of {bad_first.n_poses:,} "
    f"(grid {bad_first.violations[audit.GRID]:,}, uniform {bad_first.violations[audit.UNIFORM]:,}, folded {bad_first.violations[audit.FOLDED]:,}); "
    f"the worst at θ = {np.round(np.rad2deg(bad_first.worst_pose), 1).tolist()} deg ({bad_first.worst_component}). "
    "The paper locates its violations in the shoulder-up, elbow-folded region; the map shows where the twin's estimate loses "
    "definiteness, which is itself something to be measured rather than assumed (Sec. VI-E)."
))

# %% [markdown]
# ## Beyond the paper: a certified check over the continuous box
#
# The audit samples; `certified.certify` either proves $\mathbf M(\boldsymbol\theta)\succeq m\mathbf I$
# at every θ of a box (branch and bound with rigorous bounds from the trigonometric structure
# of $\mathbf M$: a Bernstein enclosure in the tangent half-angles, see the register), returns
# a configuration where it fails, or reports "undecided" with the boxes it could not resolve in
# its budget. Four uses: a small box around the accepted model's worst audit pose, with margin
# 0 and with ε/2; the whole of $\Theta$ for the accepted model at margin 0 and then at ε/2 (the
# audit's violation threshold), the two sharing `certify_time_s` (the quick build keeps it
# short; `benchmarks/bench_audit.py` measures both without that limit); and the whole of
# $\Theta$ for the model it was rescued from, where a violation should be found at once.

# %%
half = np.deg2rad(5.0)
near = np.column_stack([np.maximum(acc_worst.worst_pose - half, box[:, 0]), np.minimum(acc_worst.worst_pose + half, box[:, 1])])
checks = [
    ("accepted, ±5° box around its worst audit pose", accepted, 0.0, near, None),
    ("accepted, ±5° box around its worst audit pose", accepted, EPS / 2, near, None),
    ("accepted, all of Θ", accepted, 0.0, None, certify_time_s),
    ("accepted, all of Θ", accepted, EPS / 2, None, certify_time_s),
    (f"{bad_label}, all of Θ", bad_beta, 0.0, None, certify_time_s),
]
cert_rows = []
full_budget = float(certify_time_s)  # shared by the accepted model's two full-Θ runs
for name, beta, margin, region, limit in checks:
    if name == "accepted, all of Θ":
        limit = max(full_budget, 1.0)
    cr = certified.certify(beta, margin, region, model, time_limit_s=limit if limit is not None else 60.0)
    if name == "accepted, all of Θ":
        full_budget -= cr.elapsed_s
    cert_rows.append({"model and box": name, "margin (kg·m²)": margin, "status": cr.status,
                      "proved lower bound of λmin": cr.certified_lambda_min if cr.status == certified.CERTIFIED else None,
                      "witness λmin": cr.witness_lambda, "boxes processed": cr.boxes_processed, "boxes certified": cr.boxes_certified,
                      "unresolved boxes": len(cr.unresolved_lower), "time (s)": round(cr.elapsed_s, 1), "tolerance (kg·m²)": cr.tolerance,
                      "_summary": cr.summary()})
certs = pd.DataFrame(cert_rows)
display(certs.drop(columns="_summary").set_index(["model and box", "margin (kg·m²)"]))
for row in cert_rows:
    display(Markdown(f"*{row['model and box']}, margin {sci(row['margin (kg·m²)'])}:* {row['_summary']}."))

# %% [markdown]
# What this proves, exactly: a "certified" box means $\lambda_\mathrm{min}(\mathbf M(\boldsymbol\theta))$
# is at least the margin at **every** configuration of that box, up to the stated tolerance
# (the charged difference between the generated kernel and its extracted polynomial; every
# rounding of the bound itself is charged inside it, not a sampling gap). "Undecided" proves
# nothing about the unresolved boxes. A "violated" result is a concrete configuration,
# re-evaluated with `numpy.linalg.eigvalsh`, where the model is not positive definite.

# %%
full = [r for r in cert_rows if r["model and box"] == "accepted, all of Θ"]
said = []
for row in full:
    if row["status"] == certified.CERTIFIED:
        said.append(f"at margin {sci(row['margin (kg·m²)'])} kg·m² the whole of Θ is **certified** ({row['boxes processed']:,} boxes, "
                    f"{row['time (s)']:g} s)")
    elif row["status"] == certified.UNDECIDED:
        said.append(f"at margin {sci(row['margin (kg·m²)'])} kg·m² the check is **undecided** within {certify_time_s:g} s "
                    f"({row['unresolved boxes']:,} boxes open; nothing is claimed about them)")
    else:
        said.append(f"at margin {sci(row['margin (kg·m²)'])} kg·m² it returns a configuration below the margin "
                    f"(λmin = {sci(row['witness λmin'])} kg·m²)")
display(Markdown(
    "For the accepted model, " + "; ".join(said) + ". "
    + ("A certificate at ε/2 says more than the audit can: no configuration of the continuous box, sampled or not, "
       "would count as a violation. " if any(r["status"] == certified.CERTIFIED and r["margin (kg·m²)"] > 0 for r in full) else "")
    + "The audit's sampled verdict remains the acceptance criterion, as in the paper; the certificate is beyond it."
))
