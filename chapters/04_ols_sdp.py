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
# # OLS and the conditional SDP projection
#
# *Paper Sec. III-D, IV-A, IV-B, VI-B, Appendix D-D, D-E; Tables III, V, XII (first panels)
# and XVII.* Each identification condition, one trajectory at one sampling interval, goes
# through the same three steps before CLIE: ordinary least squares on the stacked inverse
# dynamic model, the routing test, and, where the test fails, the conditional SDP projection
# {eq}`eq-paper-8`.
#
# Data: the digital twin's recordings (chapter "The realization layer, the twin and
# preprocessing"), the condition named by the parameters (by default AG02 at 40 ms, the
# paper's representative case) and every condition of the build's profile.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1

# %% tags=["remove-cell"]
import numpy as np
from IPython.display import display

from crane_lib.acceptance import held_out
from crane_lib.identification import condition as identify
from crane_lib.identification import model_classes, ols
from crane_lib.identification import projection as sdp
from crane_lib.identification.weighted import idim_data
from crane_lib.model.base_parameters import PRODUCT_KINDS
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import split_name
from crane_lib.records import read_json_record
from crane_lib.reporting.chapters import ols_sdp as view
from crane_lib.reporting.chapters import profile, quiet_solver_warnings
from crane_lib.reporting.glued import glue, glue_md
from crane_lib.twin.truth import load_truth

quiet_solver_warnings()
label = view.condition_label(trajectory, ts)
record = view.condition_record(trajectory, ts, run)  # the OLS/SDP sweep's record
records = view.condition_records()

# %% [markdown]
# ## The inverse dynamic model stacked over the samples
#
# The reduced model {eq}`eq-paper-3` is linear in its base parameters. Written at every
# sample $i = 1,\dots,n$ of the condition's bundle and stacked axis by axis, it gives one
# overdetermined linear system (the paper's text lost this equation; our
# {ref}`reconstruction <reg-identification-eq-4>`):
#
# $$
# \mathbf W_\mathrm{all}\boldsymbol\beta = \boldsymbol\tau_\mathrm{all} + \boldsymbol\rho,
# \qquad
# \mathbf W_\mathrm{all} = \begin{bmatrix}
#   \mathbf W(\boldsymbol\theta_1,\dot{\boldsymbol\theta}_1,\ddot{\boldsymbol\theta}_1)\\
#   \vdots\\
#   \mathbf W(\boldsymbol\theta_n,\dot{\boldsymbol\theta}_n,\ddot{\boldsymbol\theta}_n)
# \end{bmatrix},
# \quad
# \boldsymbol\tau_\mathrm{all} = \begin{bmatrix}
#   \boldsymbol\tau_1\\ \vdots\\ \boldsymbol\tau_n\end{bmatrix}
# $$ (eq-paper-4)
#
# with $\boldsymbol\rho$ the residual of noise and unmodelled effects.

# %%
model = DynamicModel("reduced")
bundle = identify.condition_bundle(trajectory, ts, run)  # filtered, decimated record
data = idim_data(bundle, model)  # W(θ_i, θ̇_i, θ̈_i) and τ_i per sample
W_all, tau_all = ols.stack(data.regressor, data.torque)  # (8n, p) and (8n,)
assert W_all.shape == (8 * record["n_samples"], len(record["names"]))

# %% [markdown]
# ## OLS by QR (Appendix D-D)
#
# The estimate minimizes the squared residual; it is computed from a QR factorization
# $\mathbf W_\mathrm{all} = \mathbf Q\mathbf R$, as MATLAB's backslash does, and the normal
# equations are never formed ({ref}`reconstructed <reg-identification-eq-5>`):
#
# $$
# \hat{\boldsymbol\beta} = \arg\min_{\boldsymbol\beta}
#   \lVert \mathbf W_\mathrm{all}\boldsymbol\beta - \boldsymbol\tau_\mathrm{all} \rVert_2^2
#   = \mathbf R^{-1}\mathbf Q^\mathsf{T}\boldsymbol\tau_\mathrm{all}
# $$ (eq-paper-5)
#
# The conditioning the paper reports (Sec. VI-B, Table XVII) is that of the regressor as it
# stands, without column scaling; $\mathbf Q$ is orthonormal, so $\mathbf R$ has the same
# singular values:
#
# $$
# \kappa(\mathbf W_\mathrm{all}) = \frac{\sigma_\mathrm{max}(\mathbf W_\mathrm{all})}
#   {\sigma_\mathrm{min}(\mathbf W_\mathrm{all})}
#   = \frac{\sigma_\mathrm{max}(\mathbf R)}{\sigma_\mathrm{min}(\mathbf R)}
# $$ (eq-ols-kappa)
#
# and the standard errors are the textbook ones, a scale rather than a confidence statement
# (register), with $N$ the rows of $\mathbf W_\mathrm{all}$ (one per axis and sample) and
# $p$ the parameters:
#
# $$
# \hat\sigma^2 = \frac{\lVert\mathbf W_\mathrm{all}\hat{\boldsymbol\beta}
#   - \boldsymbol\tau_\mathrm{all}\rVert_2^2}{N - p},
# \qquad
# \mathrm{se}(\hat\beta_k) = \hat\sigma\,\sqrt{\big[(\mathbf R^\mathsf{T}\mathbf R)^{-1}\big]_{kk}}
# $$ (eq-ols-std-errors)

# %%
fit = ols.ols(W_all, tau_all, model.names)  # QR, never the normal equations
np.testing.assert_allclose(fit.parameters.values, record["ols"], rtol=1e-9)
np.testing.assert_allclose(fit.kappa, record["kappa"], rtol=1e-9)
np.testing.assert_allclose(fit.parameters.std_errors, record["std_errors"], rtol=1e-9)

# %% tags=["hide-input"]
glue("ols_label", label)
glue("ols_run", run)
glue("ols_samples", fit.n_samples)
glue("ols_axes", model.n_axes)
glue("ols_kappa", fit.kappa)
glue("ols_residual_rms", fit.residual_rms)
view.estimates_table(fit, model.base_from_standard(load_truth()), label)

# %% [markdown]
# **{glue:text}`ols_label`, execution {glue:text}`ols_run:d` (twin):**
# {glue:text}`ols_samples:,d` samples × {glue:text}`ols_axes:d` axes, $\kappa(\mathbf W_\mathrm{all})$ =
# {glue:text}`ols_kappa:.1f`, residual RMS {glue:text}`ols_residual_rms:.4f` N·m.
#
# The twin's truth is given in the same base parameters for comparison
# ({numref}`tab-ols-estimates`). It is not what OLS should return exactly: the twin's true
# torque constants differ per axis from the logged conversion (as the real arm's do, Sec.
# VII-D), so every row of the torque record is scaled, and the twin carries products of
# inertia, Coulomb friction and a drivetrain compliance the reduced model does not.
#
# ## The inertia matrix is linear in β
#
# Like the torque, the inertia matrix is a linear combination of the base parameters, each
# with its own pose-dependent matrix ({ref}`reconstructed <reg-identification-eq-6>`):
#
# $$
# \mathbf M(\boldsymbol\theta;\boldsymbol\beta) = \sum_{k=1}^{p} \beta_k\,
#   \mathbf M_k(\boldsymbol\theta),
# \qquad \mathbf M_k(\boldsymbol\theta) = \mathbf M(\boldsymbol\theta;\mathbf e_k)
# $$ (eq-paper-6)
#
# so a bound on its eigenvalues is a linear matrix inequality in $\boldsymbol\beta$. On five
# poses of the record, the sum rebuilds the arm's block of the inertia matrix:

# %%
poses = bundle.theta[:: len(bundle.theta) // 5][:5]
M_k = sdp.inertia_basis(model, poses)  # (poses, p, 7, 7): M(θ_i; e_k), the arm's block
M = np.einsum("k,ikab->iab", fit.parameters.values, M_k)
arm = slice(0, model.n_joints)
M_direct = model.inertia_matrix(poses, fit.parameters.values)[:, arm, arm]
np.testing.assert_allclose(M, M_direct, rtol=1e-9, atol=1e-12)

# %% [markdown]
# (ols-routing-test)=
# ## The routing test
#
# CLIE simulates the closed loop with $\mathbf M^{-1}$ (chapter "CLIE"), so it needs an
# estimate whose inertia matrix is positive definite where the record went. The test
# ({ref}`reconstructed <reg-identification-eq-7>`) runs over every configuration the bundle
# visits:
#
# $$
# \lambda_\mathrm{min}\big(\mathbf M(\boldsymbol\theta_i;\hat{\boldsymbol\beta})\big) > 0,
# \qquad i = 1,\dots,n
# $$ (eq-paper-7)
#
# Passed: route O-C, CLIE starts from $\hat{\boldsymbol\beta}$. Failed: route O-S-C, the
# estimate is projected first.

# %%
lam = model.arm_min_eigenvalue(bundle.theta, fit.parameters.values)  # along the record
np.testing.assert_allclose(lam.min(), record["lambda_min_visited"], rtol=1e-9)
route = identify.ROUTE_DIRECT if lam.min() > 0 else identify.ROUTE_PROJECTED
assert route == record["route"]

# %% tags=["hide-input"]
ROUTE_CLAUSES = {
    identify.ROUTE_DIRECT: "positive definite at every visited configuration, so the "
    "condition takes route **O-C**: CLIE starts from the OLS estimate",
    identify.ROUTE_PROJECTED: "not positive definite at every visited configuration, so "
    "the condition takes route **O-S-C**: the estimate is projected first",
}
glue("ols_lambda_visited", lam.min())
glue_md("ols_route_clause", ROUTE_CLAUSES[route])

# %% [markdown]
# The smallest eigenvalue of $\mathbf M(\boldsymbol\theta;\hat{\boldsymbol\beta})$ over the
# configurations {glue:text}`ols_label` visits is {glue:text}`ols_lambda_visited:.3g` kg·m²:
# {glue:md}`ols_route_clause`.
#
# ## The conditional SDP projection (8)
#
# On route O-S-C the estimate is replaced by the nearest parameter vector whose inertia matrix
# has at least a margin $\epsilon_\mathrm{PD}$ on a set $\Theta_c$ of the record's
# configurations (the norm "nearest" uses is lost from the text: we take the Euclidean norm of
# the base parameters in SI units, [register](../book/register_identification.md)):
#
# $$
# \boldsymbol\beta_{\epsilon_\mathrm{PD}} = \arg\min_{\boldsymbol\beta}
#   \lVert\boldsymbol\beta - \hat{\boldsymbol\beta}\rVert_2^2
# \quad\text{s.t.}\quad
# \mathbf M(\boldsymbol\theta_i;\boldsymbol\beta) \succeq \epsilon_\mathrm{PD}\,\mathbf I,
# \quad \boldsymbol\theta_i \in \Theta_c
# $$ (eq-paper-8)
#
# By {eq}`eq-paper-6` each pose is one linear matrix inequality, and the problem is a small
# semidefinite program (cvxpy, Clarabel). $\Theta_c$ holds {paper}`theta_c_even_configs`
# samples evenly along the record and the {paper}`theta_c_fast_configs` fastest (at most
# {paper}`theta_c_max_configs`, duplicates merged), and $\epsilon_\mathrm{PD}$ is the smallest
# margin of a short ladder $\mathcal E$ whose projection is positive definite on the whole
# record (Appendix D-E):
#
# $$
# \epsilon_\mathrm{PD}^\star = \min\big\{\epsilon_\mathrm{PD}\in\mathcal E :
#   \lambda_\mathrm{min}\big(\mathbf M(\boldsymbol\theta_i;\boldsymbol\beta_{\epsilon_\mathrm{PD}})\big) > 0,
#   \ i = 1,\dots,n\big\}
# $$ (eq-ols-epsilon)
#
# In this book $\mathcal E$ = {glue:text}`ols_ladder` kg·m² (paper: {paper}`eps_pd_ladder`,
# {paper}`eps_pd_ladder_size` values). The projection is shown on
# {glue:text}`ols_projected_label`, {glue:md}`ols_projected_why`:

# %%
sub = view.projected_condition(records, trajectory, ts, run)  # a condition on route O-S-C
sub_record, sub_bundle = view.condition_record(*sub), identify.condition_bundle(*sub)
beta_hat = np.asarray(sub_record["ols"])
projection = sdp.conditional_projection(  # (8) over the ε ladder
    model, beta_hat, sub_bundle.theta, sub_bundle.dtheta)
assert projection.epsilon == sub_record["epsilon"]
beta_eps = projection.chosen.parameters.values
np.testing.assert_allclose(beta_eps, sub_record["projected"], rtol=1e-7, atol=1e-10)

# %% tags=["hide-input"]
sub_label = view.condition_label(sub[0], sub[1])
sub_named = (sub[0], round(sub[1] * 1e3), sub[2]) == (trajectory, round(ts * 1e3), run)
glue("ols_projected_label", sub_label)
glue_md("ols_projected_why", "the condition this page names" if sub_named else
        "the first condition of this build on route O-S-C (the named one took O-C)")
glue("ols_ladder", "{" + ", ".join(f"{e:g}" for e in sdp.EPSILON_LADDER) + "}")
glue("ols_epsilon", projection.epsilon)
glue("ols_change_norm", projection.chosen.change_norm)
glue("ols_theta_c", projection.chosen.n_poses)
view.ladder_table(projection, sub_label)

# %% [markdown]
# The smallest margin that leaves the whole record positive definite is
# $\epsilon_\mathrm{PD}^\star$ = {glue:text}`ols_epsilon:g` kg·m², a change
# $\lVert\boldsymbol\beta_{\epsilon_\mathrm{PD}}-\hat{\boldsymbol\beta}\rVert_2$ =
# {glue:text}`ols_change_norm:.3g` with {glue:text}`ols_theta_c:d` poses in $\Theta_c$
# ({numref}`tab-ols-ladder`). {numref}`fig-ols-lambda-record` shows, along the records, the
# smallest eigenvalue of the arm's inertia matrix under the OLS estimate of
# {glue:text}`ols_label` and under the OLS estimate and its projection of
# {glue:text}`ols_projected_label`.

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-ols-lambda-record", "caption": "The smallest eigenvalue of M along the record under the OLS estimate (and its projection on route O-S-C). Data: a twin recording."}}
view.lambda_figure({
    label: (bundle.t, {"OLS": lam}),
    sub_label: (sub_bundle.t, {
        "OLS": model.arm_min_eigenvalue(sub_bundle.theta, beta_hat),
        f"SDP, ε = {projection.epsilon:g}":
            model.arm_min_eigenvalue(sub_bundle.theta, beta_eps),
    }),
});

# %% [markdown]
# (ols-sec-iii-d-why-the-products)=
# ## Sec. III-D: why the products of inertia are removed
#
# Fitting the full grouped model to the same condition, the torque contributions of the
# products of inertia, of the terms the reduced set retains and the residual are each taken as
# an RMS against the same total torque RMS (not proportions: they are not orthogonal)
# ({numref}`tab-ols-torque-shares`). The products' share, by hand and by the scorer the
# table uses:

# %%
full = DynamicModel("full")                                    # the full grouped set
W_full = full.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta)  # (n, 8, p_full)
beta_full = ols.ols(*ols.stack(W_full, bundle.tau), full.names).parameters.values
poi = np.array([split_name(n)[0] in PRODUCT_KINDS for n in full.names])
tau_poi = W_full[:, :, poi] @ beta_full[poi]                   # the products' torque
share = 100 * np.sqrt(np.mean(tau_poi**2) / np.mean(bundle.tau**2))  # % of torque RMS
scored = model_classes.full_model_torque_shares(bundle)        # the table's shares
np.testing.assert_allclose(share, scored["products"], rtol=1e-12)

# %% tags=["hide-input"]
shares = model_classes.full_model_torque_shares(bundle)
view.torque_shares_against_paper(shares, label)

# %% [markdown]
# (ols-table-iii-the-four-nested-model)=
# ## Table III: the four nested model classes
#
# Each class (the reduced set; with the products of inertia; with the Coulomb coefficients;
# the full grouped set) is fitted by OLS at the paper's interval on each of seven
# identification trajectories spanning the five families and predicts the three held-out
# records V01–V03 (pooled RMSE). The text does not name the seven; we take PA01, PB01, PC01,
# AP01, AP03, AG01 and AG02 (register), of which the quick profile records only some
# ({numref}`tab-ols-table-iii`, {numref}`tab-ols-table-iii-paper`).

# %% tags=["hide-input"]
table_iii_ts = 0.040  # the paper's interval, whatever the page's condition
recorded = held_out.identification_executions(profile())  # not the folder's
fits = {t: identify.condition_bundle(t, table_iii_ts) for t in view.TABLE_III_TRAJECTORIES
        if t in recorded}
heldout = [identify.condition_bundle(v, table_iii_ts) for v in view.VALIDATION]
classes = model_classes.compare_model_classes(fits, heldout)
display(*view.model_classes_tables(classes, table_iii_ts))

# %% [markdown]
# The reduced class fitted on AG02 at the paper's interval is the OLS/SDP sweep's estimate of
# that condition; its row of {numref}`tab-ols-table-iii`, from the sweep's record:

# %%
ag02 = read_json_record(identify.condition_record_path("AG02", table_iii_ts))
row = next(r for r in classes
           if (r["trajectory"], r["parameter set"]) == ("AG02", "reduced"))
np.testing.assert_allclose(row["kappa"], ag02["kappa"], rtol=1e-9)  # the same fit
beta_ag02 = np.asarray(ag02["ols"])
e = [b.tau - model.inverse_dynamics(b.theta, b.dtheta, b.ddtheta, beta_ag02)
     for b in heldout]                                         # residuals on V01–V03
rmse = np.sqrt(np.mean(np.concatenate(e) ** 2))               # pooled RMSE
np.testing.assert_allclose(rmse, row["held-out RMSE"], rtol=1e-9)

# %% [markdown]
# ## Summary over the conditions of this build
#
# {glue:text}`ols_records:d` condition records in this build (profile
# {glue:text}`ols_profile`; the paper's study has
# {paper}`identification_condition_count`). In the quick profile (CI) only a handful of
# conditions exist, so counts are not comparable with the paper's; the full profile runs all of
# them.

# %% tags=["hide-input"]
glue("ols_records", len(records))
glue("ols_profile", profile())

# %% [markdown]
# (ols-table-v-routing-before-clie)=
# ### Table V: routing before CLIE
#
# How many OLS estimates pass the routing test {eq}`eq-paper-7` ({numref}`tab-ols-table-v`).
# The paper itself gives two counts of the estimates PD where their record visits:
# {paper}`ols_pd_routing_count` here, the routing as it ran, and
# {paper}`ols_pd_trajectory_count` in Sec. VI-E, a re-evaluation of the stored three-digit
# estimates, which it says disagrees with the run-time routing on two marginal conditions
# (Appendix C). The routing test {eq}`eq-paper-7` on each record's stored smallest
# eigenvalue gives its route and the counts of the table:

# %%
swept = [r for r in identify.load_condition_records(profile=profile()) if r.get("route")]
passed = [r["lambda_min_visited"] > 0 for r in swept]  # (7) on each condition's record
assert [r["route"] for r in swept] == [
    identify.ROUTE_DIRECT if p else identify.ROUTE_PROJECTED for p in passed]
assert sum(passed) == (records["PD"] == True).sum()  # noqa: E712, route O-C in Table V

# %% tags=["hide-input"]
view.table_v_against_paper(records) if len(records) else None

# %% [markdown]
# (ols-table-xii-first-panels-and-table)=
# ### Table XII, first panels, and Table XVII
#
# $\kappa$ {eq}`eq-ols-kappa`, route and $\epsilon$ per condition
# ({numref}`tab-ols-table-xii-first`), Table XVII's AP01 against AG02 at the paper's interval
# by $\kappa$, route and SDP margin $\epsilon$ ({numref}`tab-ols-table-xvii`; $\epsilon$ exists
# only on route O-S-C), and the conditioning against the paper's range with the two
# condition numbers beside the paper's ({numref}`tab-ols-kappa`).

# %% tags=["hide-input"]
if len(records):
    display(view.table_xii_panels(records), view.table_xvii(records),
            view.kappa_against_paper(records))

# %% [markdown]
# ### PD at the visited configurations against PD over Θ (Sec. VI-E)
#
# The chapter "The all-pose audit" re-evaluates every OLS estimate of this build over the audit
# domain Θ and fills this comparison there (section "PD where the data were taken against PD
# over Θ"), beside the paper's counts.
