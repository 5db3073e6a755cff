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
# # A consistent link-level model, exported as URDF and MJCF
#
# *Beyond the paper; it answers the question Sec. VII-E leaves open.* The book so far ends at 39
# base parameters. No controller framework, motion planner or simulator reads those: they read a
# mass, a centre of mass and an inertia tensor per link, a rotor inertia and friction per joint,
# in a URDF or an MJCF file. The paper notes that its accepted model is not link-level
# consistent (its ZZ7 is negative) and that a reconstruction "would have to move that entry and
# re-audit"; it does not carry one out. This page does, on the accepted model of the
# representative condition (AG02, first execution, 40 ms), and then checks that the exported files
# reproduce the model inside the tools users load them into.
#
# **The reconstruction** (`crane_lib.export.consistent`) looks for the 94 standard parameters that
# map onto the model through the project's own base matrix (β = Kφ, exactly, with every base
# parameter the reduced set leaves out held at zero, so that the links carry no products of
# inertia and the joints no Coulomb friction the model does not have), whose links are possible
# bodies (each link's 4×4 pseudo-inertia J = [[Σ, h], [hᵀ, m]], Σ = ∫ x xᵀ dm, positive
# definite with a margin), whose rotor inertias and friction are non-negative, and which is
# nearest to a prior, the manufacturer's description, in what the base parameters leave free.
# Two distances are compared: the log-det (Bregman) divergence of the pseudo-inertias, which does
# not depend on frames or units, and a Euclidean distance of the link parameters in each prior
# link's own scale. When no such vector exists, it reports the smallest change of the model, in
# the model's own OLS standard errors, that admits one, and the consistent model nearest to the
# description among changes that small. The problems are convex; Clarabel solves them.
#
# **Data: the digital twin.** The accepted model was identified on the twin's recordings, and the
# twin's links *are* the manufacturer's description (register "twin"). The prior therefore
# equals the truth in every direction the data cannot see: wherever a reconstruction lands close
# to the truth there, it is by construction, not a result. What the data decide is what this page
# reports.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1

# %% tags=["hide-input"]
import os
import time

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from crane_lib.acceptance.accepted import load_accepted
from crane_lib.export import artefacts, consistent, verify
from crane_lib.identification import metrics
from crane_lib.logs.preprocessing import to_even_grid
from crane_lib.logs.raw_log import read_raw_log
from crane_lib.model.dynamics import DynamicModel
from crane_lib.paths import recording_path
from crane_lib.reporting import consistent_model as view
from crane_lib.reporting import validation as v
from crane_lib.reporting.tables import comparison_table, formatted
from crane_lib.twin.truth import load_truth

started = time.perf_counter()
profile = os.environ.get("CRANE_PROFILE", "full")
model = DynamicModel("reduced")
accepted, accepted_record = load_accepted(trajectory, ts, run)
record, paths = artefacts.load_export(trajectory, ts, run)
result = artefacts.reconstruction_of(record)
prior, _ = consistent.prior_vector()
truth = model.base_from_standard(load_truth())
heldout = [b for (name, r), b in v.heldout_bundles(profile, ts).items() if r == run]

# %% [markdown]
# ## What the base parameters decide about the links
#
# Most of a link is invisible to the base parameters, but not all of it. The grouping of
# Appendix A mixes only the diagonal of the inertia tensors and the axial first moments (Sec.
# VII-E), and some combinations of base parameters turn out to be diagonal entries of a link's
# second moment Σ itself: Σxx = ∫ x² dm, the spread of the link's mass along its own x axis.
# Which ones is read from the base matrix (a linear form on the standard parameters is decided
# exactly when it lies in the row space of K), not assumed. A decided entry that is negative rules
# out every consistent link, whatever the free part is. The chapter "Validation" tests the one
# the paper names, link 7; the table has them all, for the accepted model and the twin's truth.

# %% tags=["hide-input"]
models = {"accepted": accepted, "twin truth": truth}
decided = view.decided_table(models)
negative = view.negative_entries(models)
display(formatted(decided, 4))
display(Markdown(
    f"The reduced set decides {len(decided)} diagonal entries of the links' second moments. "
    + (f"The accepted model makes {len(negative['accepted'])} of them negative ({', '.join(negative['accepted'])}): it has no "
       "physically consistent link-level model, and the reconstruction below has to change it. " if negative["accepted"] else
       "The accepted model makes none of them negative: this necessary test passes, and only the full reconstruction can "
       "say whether every link can be consistent at once. ")
    + ("The twin's truth, a set of real bodies, makes none negative, as it must." if not negative["twin truth"] else
       f"The twin's truth makes {', '.join(negative['twin truth'])} negative, which no set of bodies can: a bug to chase.")))

# %% [markdown]
# ## The reconstruction, and what it costs the model
#
# The main job runs the reconstruction once, as `crane-id export --nearest` does, and writes the
# files offered below (`results/export/`). When the model admits no consistent link-level model,
# the exported one is the nearest, and the question the paper leaves open is what that change
# costs: the table gives the change, the base parameters that move most (in their standard
# errors), the held-out RMSE on V01–V03 (first executions, pooled) before and after, and the
# all-pose audit of the changed model (seed 1), which a consistent model passes by construction
# (every link a body with positive mass and inertia makes M(θ) positive definite everywhere).

# %% tags=["hide-input"]
rmse = {"accepted": metrics.pooled_rmse(model, accepted.values, heldout),
        "exported": metrics.pooled_rmse(model, result.reproduced.values, heldout)}
audit_min = accepted_record["final_audits"][0]["lambda_min"] if record["audit"] is None else record["audit"]["lambda_min"]
display(comparison_table(view.sec_vii_e_comparisons(negative["accepted"], len(decided), result),
                         caption="Sec. VII-E: paper / this book"))
change = "" if result.exact else (
    f"The smallest change that admits a consistent model is {result.change_norm:.3g} ({result.change_metric}); it moves "
    + ", ".join(f"{n} by {x:+.2g}" for n, x in result.changed(4)) + ". ")
display(Markdown(
    ("The accepted model **has** an exact consistent link-level model. " if result.exact else
     "No consistent link-level model reproduces the accepted model exactly. ") + change
    + f"The pooled held-out RMSE is {rmse['accepted']:.4g} N·m for the accepted model and {rmse['exported']:.4g} N·m for the "
    f"exported one ({'lower' if rmse['exported'] < rmse['accepted'] else 'higher' if rmse['exported'] > rmse['accepted'] else 'the same'}); "
    f"the exported model's smallest λmin(M) over the audit's poses (seed 1) is {audit_min:.3g} kg·m² "
    f"({'positive definite' if audit_min > 0 else 'NOT positive definite'}). The links' smallest pseudo-inertia eigenvalue is "
    f"{result.link_margins.min():.3g} kg·m² against the margin {result.margin:g} kg·m²; the solver took {sum(1 for _ in result.solves)} "
    f"convex program(s), the {result.distance} distance to the description is {result.divergence:.4g}."))

# %% [markdown]
# ## Link by link, and the price of plausible links
#
# The nearest consistent model moves the base parameters as little as possible, and so its
# links sit on the edge of what is possible: what the data pin is kept, what they leave free is
# bent until the decided entries can be met. Whether those links look like the arm is a separate
# question, answered by comparing them with the manufacturer's description: mass, centre of mass
# in the MDH frame of the link, the principal moments of the central inertia, and the smallest
# eigenvalue of the pseudo-inertia (the consistency margin). The second distance gives a second
# reading of the same model: what differs between the two is what the prior, not the data,
# decided.

# %% tags=["hide-input"]
alternative = consistent.reconstruct(accepted, distance="euclidean" if result.distance == "bregman" else "bregman")
links = {"description": prior, f"exported ({result.distance})": result.standard.values,
         f"{alternative.distance} distance": alternative.standard.values}
display(formatted(view.link_table(links), 4))
spread = np.abs(alternative.standard.values - result.standard.values).max()
display(Markdown(
    f"Under the {alternative.distance} distance the same model {'has an exact' if alternative.exact else 'has a nearest'} "
    f"consistent reconstruction (change {alternative.change_norm:.3g}); the two reconstructions' base parameters agree to "
    f"{np.abs(alternative.reproduced.values - result.reproduced.values).max():.2g} and their link parameters differ by up to {spread:.3g} "
    f"(SI: kg, kg·m, kg·m²): that part of the links is the prior's choice, not the data's."))

# %% [markdown]
# How much more may the model move for its links to look like the arm? Allowing the change to
# grow beyond the smallest one (factors 1 to 3 of it) and asking, each time, for the consistent
# model nearest to the description traces the trade-off: the distance of the links from the
# description on the left, the held-out RMSE of the changed model on the right. On the twin the
# description is the truth of the links, so a model pulled towards it should not predict worse;
# on a real arm, where the description is only a CAD estimate, the same curve says how much
# prediction a plausible-looking URDF costs.

# %% tags=["hide-input"]
curve = consistent.tradeoff(accepted, factors=(1.0, 1.1, 1.25, 1.5, 2.0, 3.0)) if not result.exact else []
if curve:
    frame = view.tradeoff_frame(curve, model, heldout)
    view.tradeoff_figure(frame, rmse["accepted"], result.change_metric,
                         f"{trajectory} at {ts * 1e3:g} ms (twin data, profile {profile}): consistent models nearest to the description")
    plt.show()
    display(formatted(frame, 4))
    plausible = frame[frame["distance to the prior"] < 1.0]
    heaviest = max(consistent.link_inertials(prior), key=lambda body: body.mass)
    display(Markdown(
        f"At the smallest change the heaviest link weighs {frame['heaviest link (kg)'].iloc[0]:.3g} kg "
        f"(the description's heaviest, link {heaviest.link}, {heaviest.mass:.3g} kg). "
        + (f"The links come within a log-det distance of 1 of the description once the change reaches {plausible['change'].iloc[0]:.3g} "
           f"({result.change_metric}), where the held-out RMSE is {plausible['held-out RMSE (N·m)'].iloc[0]:.4g} N·m against the accepted "
           f"model's {rmse['accepted']:.4g} N·m." if len(plausible) else
           "Within three times the smallest change the links never come within a log-det distance of 1 of the description.")))
else:
    display(Markdown("The accepted model has an exact consistent reconstruction: there is no trade-off to trace."))

# %% [markdown]
# The picture puts each link's equivalent body on the arm: the uniform solid ellipsoid with the
# link's mass and central inertia, at its centre of mass, for the exported model (coloured) and,
# as grey wire, the manufacturer's description. The arm hangs (gravity points down the page) in a
# pose with shoulder and elbow bent, so that the links do not hide one another.

# %% tags=["hide-input"]
pictures = {"exported: " + ("exact" if result.exact else "nearest consistent"): result.standard.values}
if curve:
    pictures[f"consistent, change ×{2.0:g}"] = curve[4].standard.values
view.ellipsoid_figure(pictures, prior, f"{trajectory} at {ts * 1e3:g} ms, twin data: equivalent ellipsoids of the links "
                      "(coloured) and of the manufacturer's description (grey)")
plt.show()

# %% [markdown]
# ## The files, in the tools that read them
#
# The URDF keeps the manufacturer's link and joint names, joint origins, axes and limits, so
# that its meshes and MoveIt configurations still fit; each arm link's `<inertial>` is the
# reconstruction expressed in that link's frame (the MDH frames are fixed in the manufacturer's
# link frames: the reconstruction register's Table I choice). Joint `<dynamics>` carry the
# viscous (and Coulomb) friction; URDF has no field for rotor inertia, so each joint's
# `<transmission>` records it as Drake's `drake:rotor_inertia` (gear ratio 1: the reflected
# inertia). The MJCF carries `armature`, `damping` and `frictionloss` on each hinge, the torque
# clamps as motor limits, and standard gravity; MuJoCo refuses a moving body without mass, so the
# hand axis, a rotor decoupled from the arm in the model, is its own body on a hinge fixed to the
# world. Both files say, in their header, whether they carry the model or its nearest consistent
# neighbour.
#
# Pinocchio's URDF parser and MuJoCo's compiler read them; M(θ) and the inverse dynamics (rigid
# body, rotor inertia, viscous friction) at 200 random states are set against the project's own
# base-parameter model of the exported parameters. Then MuJoCo simulates the arm from rest under
# the torque recorded on V01 (open loop, 2 s, RK4 at 1 ms), beside the same integration of the
# project's own direct dynamics. Without the feedback that realized the recording the arm drifts
# away from it, as any open-loop replay does, and runs into joint limits that the project's model
# does not have, so MuJoCo's limit (and dry-friction) constraints are switched off for this
# comparison; the two simulations must not drift from each other.

# %% tags=["hide-input"]
beta = result.reproduced.values
checks = [verify.pinocchio_check(paths["urdf"], model, beta, n=200, seed=1), verify.mujoco_check(paths["mjcf"], model, beta, n=200, seed=1)]
display(formatted(view.checks_frame(checks), 3))
grid = to_even_grid(read_raw_log(recording_path("V01", run)))
start = max(int(np.argmax(np.abs(grid.dtheta_ref).max(axis=1) > 0)) - 200, 0)
window = slice(start, start + 2000)
simulation = verify.simulate(paths["mjcf"], model, beta, grid.theta[start], grid.tau[window])
view.simulation_figure(simulation, grid.theta[start:], f"V01 execution {run} (twin data): open-loop replay of its recorded torque "
                       "on the exported model")
plt.show()
display(Markdown(
    f"Largest relative error: Pinocchio {max(checks[0].inertia_error, checks[0].torque_error):.1e}, MuJoCo "
    f"{max(checks[1].inertia_error, checks[1].torque_error):.1e} ({'both within' if all(c.passed for c in checks) else 'NOT within'} "
    f"{verify.TOLERANCE:g}). Over {simulation.t[-1]:.1f} s of simulation the two integrations differ by at most "
    f"{np.degrees(simulation.max_difference):.1e}°, while the open-loop arm drifts up to "
    f"{np.degrees(np.abs(simulation.own - grid.theta[start:start + len(simulation.t)]).max()):.3g}° from the recording."))

# %% [markdown]
# ## Download
#
# The files of this build (the accepted model of AG02 at 40 ms on the twin, in the
# reconstruction described above), and the 94 standard parameters and the record behind them:
#
# - {download}`URDF <../results/export/crane_x7_AG02_run1_40ms.urdf>`
# - {download}`MJCF (MuJoCo) <../results/export/crane_x7_AG02_run1_40ms.xml>`
# - {download}`standard parameters (CSV) <../results/export/crane_x7_AG02_run1_40ms.csv>`
# - {download}`the reconstruction's record (JSON) <../results/export/crane_x7_AG02_run1_40ms.json>`
#
# For your own arm: `crane-id export MODEL --urdf arm.urdf --mjcf arm.xml` on the model file of
# `crane-id identify` (add `--nearest` when it admits no consistent links, `--distance euclidean`
# for the other distance, `--prior FILE` for another prior). In Pinocchio, set `model.armature`
# from the transmissions (`crane_lib.export.files.read_urdf_joint_dynamics`) and
# `model.gravity` to 9.80665 m/s²; the joint damping is in `model.damping` but not in `rnea`.

# %%
display(Markdown(f"Chapter run time: {time.perf_counter() - started:.0f} s after the imports, {time.process_time():.0f} s of CPU "
                 f"with them (profile `{profile}`)."))
