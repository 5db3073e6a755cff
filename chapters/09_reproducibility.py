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
# construction (every draw of this book takes a seed). Rerunning the same command file on the
# arm gives a new recording, and the paper measures what that changes: five trajectories were
# executed more than once, each execution is fitted on its own at 40 ms and predicts the
# held-out records, and the spread of that error across executions is the scale against which
# every comparison of the paper is read. Changing a processing choice, here the sampling
# interval, is the third level.
#
# Data: the twin's recordings, its repeated executions (the same command file recorded again
# with its own seed: new sensor noise, friction and a small torque-constant drift per run, but
# no weeks of wear or temperature between them) and the first execution of every trajectory
# of the build's profile. The quick profile repeats only AG02, at two of the four intervals.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1
# "none": OLS -> routing test -> projection; "fast": also the fast CLIE route;
# "": as the profile's repeats sweep ran this execution
refine = ""

# %% tags=["hide-input"]
import os

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display
from scipy.stats import spearmanr

from crane_lib.acceptance import reproducibility as repro
from crane_lib.excitation.commands import read_command_file, segment_statistics
from crane_lib.identification import metrics
from crane_lib.identification.condition import (
    ROUTE_DIRECT,
    ROUTE_PROJECTED,
    condition_bundle,
    load_condition_records,
)
from crane_lib.identification.ols import ols, stack
from crane_lib.model.dynamics import model as shared_model
from crane_lib.parameter_sets import read_conditions
from crane_lib.paths import TRAJECTORY_DIR
from crane_lib.reporting import claims
from crane_lib.reporting.chapters import reproducibility as view
from crane_lib.reporting.glued import glue, glue_md

profile = os.environ.get("CRANE_PROFILE", "full")
ts, run = float(ts), int(run)
conditions = read_conditions(f"repeats_{profile}.csv")
records = repro.profile_records(conditions)
frame = repro.records_frame(records)
table = repro.run_to_run_table(frame)
listed = {(c["trajectory"], int(c["run"]), round(float(c["ts"]) * 1e3)): c["refine"]
          for c in conditions}
refine = refine or listed.get((trajectory, run, round(ts * 1e3)), "none")
record = repro.load_record(trajectory, ts, run, refine)
if record.get("failure"):
    raise RuntimeError(f"{trajectory} could not be identified: {record['failure']}")
found = record["audit"]
glue("repro_samples", record["n_samples"])
glue("repro_kappa", record["kappa"])
glue("repro_residual", record["residual_rms"])
glue_md("repro_route", record["route"])
glue("repro_rmse", record["heldout"]["rmse"])
glue("repro_mne", 100 * record["heldout"]["mne"])
glue_md("repro_verdict", "PD" if found["passed"] else f"not PD ({found['n_violations']:,}"
        " violating configurations)")
glue("repro_lam", found["lambda_min"])

# %% [markdown]
# ## One execution through the pipeline
#
# Every execution goes through the pipeline's own steps: preprocessing to the interval, OLS
# {eq}`eq-paper-5`, the routing test {eq}`eq-paper-7` and, on route O-S-C, the projection
# {eq}`eq-paper-8`. Its OLS estimate then predicts the held-out records V01–V03 at 40 ms
# (pooled RMSE, exactly as Table VIII scores a model), and it is audited over $\Theta$ on the
# dense pose set (seed 1). The execution the parameters name has
# {glue:text}`repro_samples:,d` samples per axis, $\kappa$ = {glue:text}`repro_kappa:.3g`, an
# in-sample residual of {glue:text}`repro_residual:.4g` N·m and takes route
# {glue:md}`repro_route`; its held-out RMSE is {glue:text}`repro_rmse:.5g` N·m (MNE
# {glue:text}`repro_mne:.3g` %), and the audit over $\Theta$ finds it {glue:md}`repro_verdict`,
# $\lambda_\mathrm{min}$ = {glue:text}`repro_lam:.3g` kg·m². Its first steps, again from
# the recording:

# %%
model = shared_model("reduced")
bundle = condition_bundle(trajectory, ts, run)          # preprocessed to the interval
W, tau = stack(model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta), bundle.tau)
fit = ols(W, tau, model.names)                          # (eq-paper-5), by QR
np.testing.assert_allclose(fit.parameters.values, record["ols"], rtol=1e-9)
np.testing.assert_allclose(fit.kappa, record["kappa"], rtol=1e-9)
lam = model.arm_min_eigenvalue(bundle.theta, fit.parameters.values).min()  # (eq-paper-7)
assert (ROUTE_DIRECT if lam > 0 else ROUTE_PROJECTED) == record["route"]

# %% [markdown]
# (repro-table-xi-run-to-run-repeatability)=
# ## Table XI: run-to-run repeatability
#
# For each trajectory with more than one execution, every execution $r$ fitted on its own at
# 40 ms (OLS; register, "which fit Table XI scores") predicts the held-out set with pooled RMSE
# $e_r$, and the spread is
#
# $$
# \Delta = \frac{\max_r e_r - \min_r e_r}{\tfrac{1}{R}\sum_{r=1}^{R} e_r} .
# $$ (eq-repro-spread)
#
# The two AG02 executions' recorded estimates, scored again on the held-out records:

# %%
model, heldout = shared_model("reduced"), repro.heldout_bundles()
pair = [r for r in records
        if r["trajectory"] == trajectory and np.isclose(r["ts"], 0.040)]
e = [metrics.pooled_rmse(model, np.array(r["ols"]), heldout) for r in pair]
np.testing.assert_allclose(e, [r["heldout"]["rmse"] for r in pair], rtol=1e-9)
spread = 100 * (max(e) - min(e)) / np.mean(e)          # (eq-repro-spread), %
np.testing.assert_allclose(spread, table.loc[trajectory, "spread (%)"], rtol=1e-9)

# %% [markdown]
# In the paper the spread is {paper}`runtorun_rmse_change`, and sample count, not elapsed
# time, orders it: the three long trajectories, with {paper}`long_traj_samples_per_axis`
# samples per axis, stay within the spread of AG02 ({paper}`runtorun_ag02`), while the two
# short adjacent-pair ones, with about {paper}`short_traj_samples_per_axis`, are the two worst.
# Its reading is that this is estimation noise, not drift of the hardware, and that the spread
# of AG02, the trajectory behind the accepted model, is the precision against which every
# comparison of the paper is read. On the twin, estimation noise is all there is between
# executions (register R-8): a twin spread comparable to the arm's supports the paper's
# reading, a much smaller one would point at drift the twin does not have.

# %% tags=["hide-input"]
missing = repro.missing_recordings(conditions, profile)
glue_md("repro_missing", "**Not recorded:** " + " ".join(missing) if missing
        else "Every execution the conditions file lists is recorded.")
display(view.table_xi_frame(table))
display(view.table_xi_comparison(table, profile))
display(claims.show("run_to_run_scale", profile))
glue("repro_n_repeated", len(table))
glue("repro_spread", spread)
if len(table) >= 3:
    samples = table[["samples per axis, min", "samples per axis, max"]].mean(axis=1)
    rho = spearmanr(samples, table["spread (%)"])[0]
    short = table[table["pair blocks only"]]
    worst = set(table["spread (%)"].nlargest(len(short)).index) == set(short.index)
    glue_md("repro_order", f"The spread's rank correlation with the samples per axis is "
            f"ρ = {rho:.2f}, and the short adjacent-pair trajectories "
            f"{'are' if worst else 'are not'} the worst.")
else:
    glue_md("repro_order", "With one repeated trajectory, Table XI cannot say here what "
            "orders the spread (the full profile repeats five).")

# %% [markdown]
# {glue:md}`repro_missing` The twin repeats {glue:text}`repro_n_repeated:d` trajectories in
# this profile; AG02's spread is {glue:text}`repro_spread:.3g` %. {glue:md}`repro_order`
#
# In the full profile the two AG02 executions at 40 ms are also refined by the fast CLIE
# route. Their spread after refinement is set beside the OLS spread, because the paper reads
# the later stages' sub-percent held-out gains (Sec. VI-D) against exactly this scale:
# {glue:md}`repro_refined`

# %% tags=["hide-input"]
refined = (repro.run_to_run_table(frame, column="refined_heldout_rmse")
           if frame.get("refined_heldout_rmse", frame["ts"] * np.nan).notna().sum() >= 2
           else None)
glue_md("repro_refined", "no execution of this profile was refined." if refined is None
        else "; ".join(f"{name}, {int(row['executions'])} executions refined: "
                       f"spread {row['spread (%)']:.3g} %"
                       for name, row in refined.iterrows()) + ".")

# %% [markdown]
# ## Parameters against predictions: the two AG02 executions
#
# The paper compares the OLS estimates of the two AG02 executions at all four intervals and
# finds two things that are easy to conflate. Parameter by parameter, agreement is poor and
# uneven: a median relative difference of {paper}`param_reldiff_median`, but a long tail, its
# worst case ZZR3 at {paper}`zzr3_reldiff`. In what the models predict, agreement is good: a
# model identified on one execution loses {paper}`cross_execution_rmse_loss` of RMSE on the
# other execution's record. With $a_k$, $b_k$ the two executions' estimates of parameter $k$,
# $s_k$ the OLS standard error of $a_k$, and $e_j(\boldsymbol\beta)$ the RMSE of
# $\boldsymbol\beta$ on execution $j$'s record:
#
# $$
# d_k = \frac{|b_k - a_k|}{|a_k|}, \qquad t_k = \frac{|a_k|}{s_k}, \qquad
# L_{ij} = \frac{e_j(\hat{\boldsymbol\beta}_i)}{e_j(\hat{\boldsymbol\beta}_j)} - 1 \ge 0 .
# $$ (eq-repro-pair)
#
# The relative difference is taken against the first execution (register R-4: the paper's
# worst case rules out the symmetric forms, which are bounded); $L_{ij}$ is never negative
# because least squares makes execution $j$'s own fit the smallest possible (register R-6).
# At 40 ms, from the two records and execution 2's recording:

# %%
differences = repro.parameter_differences(records, trajectory)
losses = repro.cross_execution_losses(records, trajectory)
a, b = (np.array(r["ols"]) for r in sorted(pair, key=lambda r: r["run"]))
at40 = differences[np.isclose(differences["ts"], 0.040)]
np.testing.assert_allclose(abs(b - a) / abs(a), at40["relative_difference"], rtol=1e-12)
own = metrics.prediction_error(model, b, condition_bundle(trajectory, 0.040, 2)).rmse
cross = metrics.prediction_error(model, a, condition_bundle(trajectory, 0.040, 2)).rmse
row = losses[np.isclose(losses["ts"], 0.040) & (losses["record of execution"] == 2)]
np.testing.assert_allclose(100 * (cross / own - 1), row["loss (%)"], rtol=1e-9)

# %% tags=["hide-input"]
display(view.parameter_comparison(differences, losses, trajectory))
display(view.losses_frame(losses, trajectory))

# %% [markdown]
# The paper's explanation is identifiability. Parameter reproducibility tracks how well the
# excitation constrains a parameter: ZZR2, {paper}`zzr2_se_ratio` standard errors from zero,
# reproduces to {paper}`zzr2_reproducibility`, while ZZR3, {paper}`zzr3_se_ratio` standard
# errors from zero, does not reproduce at all. A base-parameter value should therefore be
# quoted with its t-ratio, and models compared through their predictions. The plot shows
# every parameter at every interval, the paper's two t-ratios dotted.

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-repro-t-ratio", "caption": "Each OLS parameter's relative difference between the two executions against its t-ratio, per interval: look at how the difference changes from left to right. Data: two twin executions."}}
view.t_ratio_figure(differences, trajectory)
plt.show()
rho, p_value = spearmanr(differences["t_ratio_first"], differences["relative_difference"])
median = np.median(100 * differences["relative_difference"])
loss_max = losses["loss (%)"].max()
glue("repro_pairs", len(differences))
glue("repro_t_rho", rho)
glue("repro_t_p", p_value)
glue("repro_median_diff", median)
glue("repro_loss_min", losses["loss (%)"].min())
glue("repro_loss_max", loss_max)
glue_md("repro_t_reading", "the parameters disagree far more than the predictions do, as "
        "on the arm" if median > 3 * loss_max else "here the parameters do not disagree "
        "much more than the predictions do")

# %% [markdown]
# Over the {glue:text}`repro_pairs:d` parameter-interval pairs, the rank correlation of the
# relative difference with the t-ratio is $\rho$ = {glue:text}`repro_t_rho:.2f` (p =
# {glue:text}`repro_t_p:.2g`). The median relative difference is
# {glue:text}`repro_median_diff:.2g` %, while a model fitted on one execution loses
# {glue:text}`repro_loss_min:.2g` to {glue:text}`repro_loss_max:.2g` % of RMSE on the other:
# {glue:md}`repro_t_reading`.
#
# (repro-does-the-audit-verdict-reproduce)=
# ## Does the audit verdict reproduce?
#
# The all-pose audit {eq}`eq-paper-11` of the OLS estimate of each execution at each interval,
# on the dense pose set of Sec. VI-E (seed 1). With $m_r = \min_{\boldsymbol\theta\in\Theta}
# \lambda_\mathrm{min}(\mathbf M(\boldsymbol\theta; \hat{\boldsymbol\beta}_r))$ the margin of
# execution $r$, the verdicts and the margins' agreement are
#
# $$
# \mathrm{PD}_r = [\,m_r > 0\,], \qquad
# \delta_m = \frac{|m_1 - m_2|}{|m_1 + m_2|/2} .
# $$ (eq-repro-margin)
#
# From the two recorded audits at each interval:

# %%
stability = repro.audit_stability(frame, trajectory)
for t, row in stability.iterrows():
    m = np.array([row[f"execution {r}: λmin (kg·m²)"] for r in (1, 2)])
    assert row["same verdict"] == ((m[0] > 0) == (m[1] > 0))
    np.testing.assert_allclose(100 * abs(m[0] - m[1]) / abs(m.mean()),
                               row["margin agreement (%)"], rtol=1e-12)

# %% [markdown]
# The paper finds the same verdict on both executions at every interval, not PD at the three
# finer intervals and PD at {paper}`ag02_ols_audit_pd_interval`, with the two positive margins
# there agreeing to {paper}`ag02_ols_margin_agreement`. Feasibility, it concludes, reproduces
# more sharply than either the parameters or the predictions: the verdict is a property of
# the trajectory and the interval, not an accident of one recording, which is what lets it
# serve as an acceptance criterion.

# %% tags=["hide-input"]
display(view.stability_frame(stability, trajectory))
display(view.stability_comparison(stability, trajectory))
differ = [f"{t * 1e3:g} ms"
          for t in stability.index[~stability["same verdict"].astype(bool)]]
glue_md("repro_same", "give the same verdict at every interval" if not differ
        else "disagree at " + ", ".join(differ))
glue("repro_n_intervals", len(stability))
glue("repro_agree_min", stability["margin agreement (%)"].min())
glue("repro_agree_max", stability["margin agreement (%)"].max())

# %% [markdown]
# On the twin the two executions {glue:md}`repro_same` ({glue:text}`repro_n_intervals:d`
# intervals in this profile); their margins differ by {glue:text}`repro_agree_min:.2g` to
# {glue:text}`repro_agree_max:.2g` %.
#
# (repro-fig-10-and-appendix-e-b)=
# ## Fig. 10 and Appendix E-B: the sampling-interval ladder
#
# The same trajectory identified at 10, 20, 40 and 80 ms separates two effects. The in-sample
# residual $r(T_s)$ falls as the interval grows, because the anti-alias corner (a fixed
# fraction of the Nyquist frequency, Appendix D-C) descends and removes more of the measured
# torque's high-frequency content. The held-out RMSE $e(T_s)$, scored on the same V01–V03
# records at 40 ms whatever the fit's interval (register R-10), tells whether the model itself
# improves. The ladder's two measures are
#
# $$
# F = 1 - \frac{r(T_\mathrm{coarse})}{r(T_\mathrm{fine})}, \qquad
# G = 1 - \frac{e(T_\mathrm{coarse})}{e(T_\mathrm{acc})} ,
# $$ (eq-repro-ladder)
#
# with $T_\mathrm{fine}$ = 10 ms, $T_\mathrm{acc}$ = 40 ms and $T_\mathrm{coarse}$ = 80 ms.
# The paper finds $F$ of {paper}`insample_residual_drop` and $G$ below
# {paper}`heldout_gain_beyond_40ms`, less than the run-to-run variation, on all six
# trajectories. The text does not name the six; this book takes the five repeated ones of
# Table XI and PA01 (register R-9). The ladder reads the OLS/SDP sweep's records (first
# execution). AG02's gain, its 80 ms estimate scored again on the held-out records:

# %%
swept = load_condition_records(profile=profile)  # the profile's, not the folder's
ladder = repro.interval_ladder(swept)
changes = repro.ladder_changes(ladder)
rung = ladder[(ladder["trajectory"] == trajectory) & np.isclose(ladder["ts"], 0.080)]
c80 = next(r for r in swept
           if (r["trajectory"], r["run"]) == (trajectory, 1)
           and np.isclose(r["ts"], 0.080))
e80 = metrics.pooled_rmse(model, np.array(c80["ols"]), heldout)
np.testing.assert_allclose(e80, rung["held-out RMSE (N·m)"], rtol=1e-12)
e40 = ladder.loc[(ladder["trajectory"] == trajectory) & np.isclose(ladder["ts"], 0.040)]
gain = view.columns_of(changes, "held-out")[0]
np.testing.assert_allclose(100 * (1 - e80 / e40["held-out RMSE (N·m)"].item()),
                           changes.loc[trajectory, gain], rtol=1e-9)

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-repro-ladder", "classes": "paper-10", "caption": "The sampling-interval ladder on the twin: the in-sample residual per interval (left) and the held-out RMSE on V01–V03 (right); look at the step from 40 to 80 ms on the right. Data: twin recordings, OLS, first execution."}}
view.ladder_figure(ladder)
plt.show()

# %% tags=["hide-input"]
display(view.ladder_frame(changes))
display(view.ladder_comparison(changes))
gains = changes[gain]
better, worse = gains[gains > 0], -gains[gains < 0]
glue("repro_better", len(better))
glue("repro_ladder_n", len(gains))
glue("repro_worse", len(worse))
glue_md("repro_worse_list", ", ".join(worse.index) or "none")
smaller = bool((better < spread).all())
glue_md("repro_smaller", "smaller" if smaller else "not always smaller")

# %% [markdown]
# From 40 ms to 80 ms the held-out RMSE improves on {glue:text}`repro_better:d` of
# {glue:text}`repro_ladder_n:d` trajectories and worsens on {glue:text}`repro_worse:d`
# ({glue:md}`repro_worse_list`). Every improvement is {glue:md}`repro_smaller` than the
# run-to-run spread of AG02 in this build ({glue:text}`repro_spread:.2g` %): where it is,
# nothing is gained beyond 40 ms that a repeated recording would not change.
#
# ### The ramp-sample criterion
#
# The interval is not chosen from the ladder but from the excitation. The information about
# the inertial parameters lives on the acceleration ramps of the 4-1-4 profile. A ramp of
# duration $r$ sampled every $T_s$ carries
#
# $$
# n(r, T_s) = \left\lfloor r / T_s \right\rfloor \;\ge\; n_\mathrm{min}
# $$ (eq-repro-ramps)
#
# samples (register "excitation", E-3), and {paper}`accepted_sampling_interval` is the
# coarsest interval tested at which every ramp still carries at least
# {paper}`min_samples_per_ramp`; at 80 ms, the paper counts
# {paper}`ramps_undersampled_80ms` of the ramps with fewer. On AG02's command file:

# %%
ramps = repro.ramp_sampling()
command = read_command_file(TRAJECTORY_DIR / "AG02.txt")
stats = segment_statistics(command)             # its segments and ramp durations r
n = np.floor(stats.ramps_s / 0.080 + 1e-9)             # (eq-repro-ramps) at 80 ms
share = 100 * np.mean(n < repro.MIN_RAMP_SAMPLES)
recorded = ramps.loc["AG02", "< 3 samples at 80 ms (%)"]
np.testing.assert_allclose(share, recorded, rtol=1e-12)

# %% [markdown]
# The counts below come from the command files of the six trajectories. Neither this
# criterion nor the structural rule that names AG02 uses a held-out error, so the ladder
# above is a check of the choice, not its basis.

# %% tags=["hide-input"]
display(view.ramps_frame(ramps))
display(view.ramps_comparison(ramps))
