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
# # Modeling
#
# *Paper Sec. III-A, III-C, III-D and Appendix A.* The CRANE-X7 is a serial arm of seven
# revolute joints plus a hand axis, numbered outward from the base, the hand last. This chapter
# rebuilds the model the paper generated with OpenSYMORO: the modified Denavit-Hartenberg table
# ({numref}`tab-modeling-mdh`) and its transform {eq}`eq-modeling-mdh`, the inverse dynamic
# model linear in the standard parameters, the grouping into base parameters in closed form
# {eq}`eq-modeling-grouping` (Appendix A), the reduced model in the Lagrangian form of the
# paper's {eq}`eq-paper-3`, the bookkeeping from the full grouped set down to the reduced one
# (Appendix A-B, {numref}`tab-modeling-bookkeeping`), and a check of the geometry against the
# manufacturer's description ({numref}`fig-modeling-geometry`).
#
# Data: the MDH table and the manufacturer's description in `data/`; the reduced model is
# checked on the twin's recording AG02 at 40 ms. The parameter values shown at the end are
# those the description implies, which is also where the digital twin's truth starts.

# %% tags=["parameters"]
# papermill parameters: the mounting reading (see the reconstruction register)
mounting = "hanging"
n_random_states = 2000
seed = 1

# %% tags=["hide-input"]
from collections import Counter

import numpy as np
import sympy
from IPython.display import Math, display
from scipy.spatial.transform import Rotation

from crane_lib.identification.condition import condition_bundle, condition_record_path
from crane_lib.model import identifiability, robot_description
from crane_lib.model.base_parameters import exact_regressor_function, grouping
from crane_lib.model.dynamics import DynamicModel
from crane_lib.model.parameters import CATEGORIES, category
from crane_lib.model.symbolic_model import derive_regressor
from crane_lib.paper_numbers import paper
from crane_lib.records import read_json_record
from crane_lib.reporting.chapters import modeling as view
from crane_lib.reporting.glued import glue, glue_md

# %% [markdown]
# ## Table I: the modified DH parameters
#
# OpenSYMORO's convention places frame $j$ relative to frame $j-1$ by a rotation and a
# translation about and along $x_{j-1}$, then a rotation and a translation about and along
# $z_j$:
#
# $$
# {}^{j-1}\mathbf T_j = \mathrm{Rot}_x(\alpha_j)\,\mathrm{Trans}_x(d_j)\,
#   \mathrm{Rot}_z(\theta_j)\,\mathrm{Trans}_z(r_j).
# $$ (eq-modeling-mdh)
#
# The text gives $\alpha_1 = 0$, the other twists $\pm\pi/2$ alternating, and the two equal
# offsets $RL_3 = RL_5$; the signs are our choice, made so that each joint turns the way the
# manufacturer's description turns it (register entry "Table I, the signs of α"). The table is
# read from `data/crane_x7_mdh.csv`. The library's transform is {eq}`eq-modeling-mdh`, its four
# factors multiplied out; here for joint 3, which carries $RL_3$, at an arbitrary angle:

# %%
def screw(axis, angle, shift):
    """Rot_axis(angle) Trans_axis(shift) as a 4x4 homogeneous transform (rad, m)."""
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler(axis, angle).as_matrix()
    T[:3, 3] = shift * np.eye(3)["xyz".index(axis)]
    return T


table = robot_description.load_mdh_table()
alpha, d, _, r = table[2].as_floats()
np.testing.assert_allclose(robot_description.mdh_transform(table[2], 0.7),
                           screw("x", alpha, d) @ screw("z", 0.7, r), atol=1e-15)
assert r == paper("dh_offset_rl3").value                  # RL3, as the text states it

# %% [markdown]
# The whole table, and what the text states about it ({numref}`tab-modeling-mdh-paper`):

# %% tags=["hide-input"]
display(view.table_i(table))
view.table_i_against_paper(table)

# %% [markdown]
# ## The geometry against the manufacturer's description
#
# The description (`data/crane_x7_description/`) places every joint at the zero pose along
# its parent's $z$ axis. Placing MDH frame 0 where the joint-1 axis meets the joint-2 axis and
# chaining {eq}`eq-modeling-mdh`, each MDH joint axis should coincide with the description's
# joint axis, as a line and in direction. {numref}`tab-modeling-geometry` measures it: the
# angle between the axes, the distance of the description's joint origin from the MDH axis,
# and how far along the axis that origin sits from $O_j$. The chapter stops if an axis does
# not match. Over the {glue:text}`modeling_n_joints:d` arm joints the largest angle between an
# MDH axis and the description's is {glue:text}`modeling_axis_angle:.2g`° and the largest
# distance of a description joint origin from its MDH axis
# {glue:text}`modeling_axis_distance:.2g` m: every axis coincides as a directed line, so a
# joint angle means the same on the model as on the arm.
#
# By hand from the placed frames, the distance of each description joint origin from its MDH
# axis and the cosine between the axes, against the rows of the table:

# %%
placement = robot_description.place_mdh_frames(table)   # MDH frames, description coords
rows = robot_description.geometry_check(table)           # the table's rows, one per joint
frames = placement.frames[: len(rows)]
z = np.array([T[:3, 2] for T in frames])                 # MDH joint axes at the zero pose
delta = np.array(placement.description_joint_origins) - [T[:3, 3] for T in frames]
off_axis = np.linalg.norm(delta - np.sum(delta * z, axis=1)[:, None] * z, axis=1)  # m
np.testing.assert_allclose(off_axis, [r["line_distance_m"] for r in rows], atol=1e-15)
np.testing.assert_allclose(np.sum(z * placement.description_joint_axes, axis=1), 1.0)

# %% tags=["hide-input"]
geometry = view.geometry(table)
glue("modeling_n_joints", len(geometry))
glue("modeling_axis_angle", geometry["axis_angle_deg"].max())
glue("modeling_axis_distance", geometry["line_distance_m"].max())
view.geometry_table(table)

# %% [markdown]
# Two offsets of the description are not in Table I. The rise from the description's
# `base_link` to $O_0$ lies along the joint-1 axis, parallel to gravity, and so changes no
# torque; the offset along $z_7$ puts the description's joint-7 frame away from $O_7$ and so
# enters only link 7's inertial parameters about $O_7$ (its first moment $MZ_7$, which the
# grouping absorbs into $MYR_6$, and $XX_7$, $YY_7$ by the parallel-axis theorem). The joint
# spacings are the offsets of Table I ({numref}`tab-modeling-offsets`).

# %% tags=["hide-input"]
view.offsets_against_paper(table)

# %% [markdown]
# {numref}`fig-modeling-geometry` draws the MDH frame origins and the description's joint
# frames at the zero pose (left) and the arm at the nominal posture of the paper's Fig. 1
# (right), in the $x$-$z$ plane of the base; in the hanging mount gravity points along $+z_0$,
# down the page.

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-modeling-geometry", "classes": "paper-1", "caption": "The paper's Fig. 1 on the model: its frames against the manufacturer's description at the zero pose (left) and at the nominal posture of the paper's Fig. 1 (right). Data: the description in `data/`, no recording."}}
view.geometry_figure(table);

# %% [markdown]
# ## The inverse dynamic model, linear in the standard parameters
#
# Per arm link $j$ the standard parameters are the inertia tensor about $O_j$
# ($XX_j, XY_j, XZ_j, YY_j, YZ_j, ZZ_j$), the first moments ($MX_j, MY_j, MZ_j$), the mass
# $M_j$, the rotor inertia $IA_j$ and the viscous and Coulomb friction $FV_j$, $FS_j$; the hand
# axis carries only its rotor inertia and friction. The Newton-Euler recursion, customized to
# the table the way OpenSYMORO does it (every product with an exact zero of the table vanishes
# while the model is built, every remaining intermediate quantity gets a name), gives the torque
# linear in the standard parameters $\boldsymbol\varphi$,
#
# $$
# \boldsymbol\tau = \mathbf W_\varphi(\boldsymbol\theta, \dot{\boldsymbol\theta},
#   \ddot{\boldsymbol\theta})\,\boldsymbol\varphi,
# \qquad \tau_j \mathrel{+}= IA_j\ddot\theta_j + FV_j\dot\theta_j +
#   FS_j\,\mathrm{sign}(\dot\theta_j).
# $$ (eq-modeling-standard)
#
# The derivation names {glue:text}`modeling_n_intermediate:,d` intermediate quantities and
# leaves {glue:text}`modeling_n_entries:d` nonzero regressor entries;
# {glue:text}`modeling_n_columns:d` of the {glue:text}`modeling_n_standard:d` standard
# parameters have a column that is not identically zero; the columns of
# {glue:md}`modeling_vanishing` vanish.

# %% tags=["hide-input"]
program, entries = derive_regressor(table)
group = grouping()                 # derived once by exact elimination, cached
columns = {name for (_, name) in entries}
glue("modeling_n_intermediate", len(program.assignments))
glue("modeling_n_entries", len(entries))
glue("modeling_n_columns", len(columns))
glue("modeling_n_standard", len(group.standard_names))
vanishing = [n for n in group.standard_names if n not in columns]
glue_md("modeling_vanishing", ", ".join(vanishing) or "none")

# %% [markdown]
# ### The symbol $MY_7$ (Appendix A-C)
#
# The paper notes that its OpenSYMORO input entered the $y$ first moment of link 7 under
# the symbol $MZ_7$, that the column is $-\dot v_{x,7}$, that of $MY_j$ in
# $\tau_j = MX_j\dot v_y - MY_j\dot v_x$, and that $MZ_7$ proper is absorbed by the relation
# for $MYR_6$. The derivation says the same by itself: the row-7 entries of the first moments
# of link 7 read off the model (with $VP7\_x$, $VP7\_y$ the acceleration of $O_7$ in frame 7,
# gravity included), and the one base parameter that holds $MZ_7$:

# %%
def holders_of(name):
    """The base parameters whose relation contains the standard parameter `name`."""
    symbol = sympy.Symbol(name)
    return [b for b in group.base_names if symbol in group.relation(b).free_symbols]


row7 = {n: entries.get((6, n), 0) for n in ("MX7", "MY7", "MZ7")}
entries_7 = [f"W_{{7,\\,{n}}} = {sympy.latex(e)}" for n, e in row7.items()]
display(Math(r",\quad ".join(entries_7)))
display(Math(sympy.latex(sympy.Eq(sympy.Symbol("MYR6"), group.relation("MYR6")))))
assert holders_of("MZ7") == ["MYR6"] and group.relation("MYR7") == sympy.Symbol("MY7")

# %% [markdown]
# ## Appendix A: the base parameters in closed form
#
# Which combinations of standard parameters are identifiable is a property of the arm. It is
# derived here, not typed: the regressor program is evaluated in exact rational arithmetic at
# random rational points of the unit circle, and the exact reduced row echelon form of the
# stacked matrix says which columns $p_i$ are independent and how every other column $d$ is a
# combination of them,
#
# $$
# \mathbf W_{\varphi,d} = \sum_i K_{id}\,\mathbf W_{\varphi,p_i}
# \quad\Longrightarrow\quad
# \beta_i = \varphi_{p_i} + \sum_d K_{id}\,\varphi_d,
# \qquad \boldsymbol\beta = \mathbf K\boldsymbol\varphi .
# $$ (eq-modeling-grouping)
#
# The offsets are kept as the symbols $RL_3$, $RL_5$. The relations below are Khalil's grouping
# rules for this arm; the elimination found them without being told. The grouping is checked
# numerically on a random state and random standard parameters: the standard regressor of
# {eq}`eq-modeling-standard` times $\boldsymbol\varphi$ equals the regressor of the full grouped
# set, as the generated numeric code evaluates it, times $\mathbf K\boldsymbol\varphi$, and the
# set has as many parameters as Appendix A-B counts:

# %%
rng = np.random.default_rng(seed)
full = DynamicModel("full", mounting=mounting)           # the full grouped set
q, qd, qdd = rng.uniform(-np.pi, np.pi, 8), rng.normal(0, 2, 8), rng.normal(0, 5, 8)
phi = rng.normal(size=len(group.standard_names))         # any standard parameters
W_phi = exact_regressor_function(table, list(group.standard_names))
w_phi = np.zeros((8, len(phi)))                          # W_phi at (q, qd, qdd)
W_phi(np.cos(q[:7]), np.sin(q[:7]), qd, qdd, np.sign(qd), full.gravity_z, {}, w_phi)
w = full.regressor(q[None], qd[None], qdd[None])[0]
np.testing.assert_allclose(w_phi @ phi, w @ full.base_matrix() @ phi, atol=1e-9)
assert len(group.base_names) == paper("full_model_param_count").value

# %% tags=["hide-input"]
display(Math(view.grouping_relations()))
full_set = group.parameter_set("full")
alone = {CATEGORIES[k] for k in (2, 3, 4, 5)}  # products, rotors, friction, the hand
glue("modeling_alone", sum(1 for n in full_set if category(n) in alone))
absorbed = [f"${n[:2]}_{n[2:]}$ (into {', '.join(holders_of(n))})"
            for n in (f"IA{j}" for j in range(1, 8)) if n not in full_set]
glue_md("modeling_absorbed", " and ".join(absorbed) or "none")

# %% [markdown]
# Of the full grouped set, {glue:text}`modeling_alone:d` base parameters are standard
# parameters that stay alone: the products of inertia, the rotor inertias, the friction
# coefficients and the hand's terms. Rotor inertias that do not survive on their own:
# {glue:md}`modeling_absorbed`.
#
# ## Appendix A-B: the full grouped set and the reduced set (Table II)
#
# The reduced set drops the products of inertia of the links beyond the first and every
# Coulomb coefficient (Sec. III-D gives the reasons; the chapter "OLS and the conditional SDP
# projection" measures them on the twin). {numref}`tab-modeling-categories` counts what the
# derivation leaves per category, and {numref}`tab-modeling-bookkeeping` sets it beside
# Appendix A-B's counts. What the reduction removes from the full grouped set, and the set the
# numeric model fits:

# %%
full_set, reduced_set = group.parameter_set("full"), group.parameter_set("reduced")
removed = Counter(category(n) for n in full_set if n not in reduced_set)
assert removed == {CATEGORIES[2]: paper("removed_poi_count").value,     # products
                   CATEGORIES[4]: paper("removed_coulomb_count").value}  # Coulomb
assert DynamicModel("reduced").names == reduced_set   # what every fit of the book uses
assert len(reduced_set) == paper("reduced_model_param_count").value

# %% tags=["hide-input"]
display(view.categories_table())
view.bookkeeping_against_paper()

# %% [markdown]
# ## The reduced model in Lagrangian form (Sec. III-C)
#
# On the reduced set $\boldsymbol\beta$ of Table II the model is the paper's (3), written both
# in Lagrangian form and as a regressor linear in $\boldsymbol\beta$:
#
# $$
# \boldsymbol\tau = \mathbf M(\boldsymbol\theta)\ddot{\boldsymbol\theta}
#   + \mathbf c(\boldsymbol\theta, \dot{\boldsymbol\theta}) + \mathbf g(\boldsymbol\theta)
#   + \mathbf F_v\dot{\boldsymbol\theta}
#   = \mathbf W(\boldsymbol\theta, \dot{\boldsymbol\theta}, \ddot{\boldsymbol\theta})\,
#   \boldsymbol\beta ,
# $$ (eq-paper-3)
#
# with $\mathbf M$ the inertia matrix (the rotor inertias on its diagonal, the hand axis
# decoupled), $\mathbf c$ the Coriolis and centrifugal torque, quadratic in
# $\dot{\boldsymbol\theta}$, $\mathbf g$ the gravity torque and
# $\mathbf F_v = \mathrm{diag}(FV_j)$. The generated code evaluates $\mathbf M$ by its own
# kernel (the one the audit and CLIE's simulator use) and $\mathbf c$, $\mathbf g$ from the
# regressor with the acceleration, or velocity and acceleration, set to zero. On samples of the
# twin's AG02 at 40 ms, with the OLS estimate the pipeline recorded for it, both sides agree:

# %%
record = read_json_record(condition_record_path("AG02", 0.040))   # the pipeline's OLS fit
bundle, beta = condition_bundle("AG02", 0.040), np.array(record["ols"])
model = DynamicModel("reduced", mounting=mounting)
q, qd, qdd = bundle.theta[::500], bundle.dtheta[::500], bundle.ddtheta[::500]
lagrange = (np.einsum("nij,nj->ni", model.inertia_matrix(q, beta), qdd)
            + model.coriolis_torque(q, qd, beta) + model.gravity_torque(q, beta)
            + model.friction_torque(qd, beta))
np.testing.assert_allclose(model.regressor(q, qd, qdd) @ beta, lagrange, atol=1e-9)

# %% [markdown]
# Over all {glue:text}`modeling_ag02_samples:,d` samples of that bundle the same regressor
# leaves the residual the pipeline recorded, {glue:text}`modeling_ag02_residual:.4f` N·m RMS
# over the eight axes:

# %%
W = model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta)  # (samples, axes, 39)
rms = np.sqrt(np.mean((bundle.tau - W @ beta) ** 2))
np.testing.assert_allclose(rms, record["residual_rms"], rtol=1e-9)
glue("modeling_ag02_samples", len(W))
glue("modeling_ag02_residual", rms)

# %% [markdown]
# The reduced set in the paper's order (Table II and the last panels of Table XII), with the
# values the manufacturer's description implies through the relations above
# ({numref}`tab-modeling-table-ii`). The description has no rotor inertias or friction; those
# entries are the twin's business (chapter "The realization layer, the twin and
# preprocessing").

# %% tags=["hide-input"]
view.reduced_set_values(mounting)

# %% [markdown]
# How large the products of inertia the reduced model drops are in the description
# ({numref}`tab-modeling-poi-share`), against the range the paper quotes for them as a check on
# the geometry, not an input (Sec. III-D, {numref}`tab-modeling-poi-paper`):

# %% tags=["hide-input"]
display(view.poi_shares_table())
view.poi_against_paper()

# %% [markdown]
# ## Checks on the numeric model
#
# The numeric functions are generated from the symbolic model. On random states the stacked
# regressor $\mathbf W_\mathrm{all}$ of the reduced set should have full column rank, as many
# as Table II has parameters:

# %%
shape = (n_random_states, 8)
states = (rng.uniform(-np.pi, np.pi, shape), rng.normal(0, 2, shape),
          rng.normal(0, 5, shape))
w_all = identifiability.stack(model.regressor(*states))
assert identifiability.numerical_rank(w_all) == paper("reduced_model_param_count").value

# %% [markdown]
# So should every set of Table III ({numref}`tab-modeling-ranks`); the inertia matrix should
# not depend on $\theta_1$, the joint-1 gravity torque should vanish identically (joint 1
# turns about the gravity axis), and $\mathbf M$ should be symmetric. On
# {glue:text}`modeling_n_states:,d` random states (seed {glue:text}`modeling_seed:d`) the
# stacked regressor of {glue:md}`modeling_rank_verdict`. With $\theta_1$ redrawn, $\mathbf M$
# changes by at most {glue:text}`modeling_theta1:.2g` kg·m²; the joint-1 row of the gravity
# regressor is at most {glue:text}`modeling_gravity1:.2g` N·m; $\mathbf M$ is symmetric to
# {glue:text}`modeling_asymmetry:.2g` kg·m². The test suite checks the same, and the
# agreement with Pinocchio.

# %% tags=["hide-input"]
checks = view.numeric_checks(mounting, n_random_states, seed)
verdicts = {True: "every set has full column rank",
            False: "**not** every set has full column rank"}
glue_md("modeling_rank_verdict", verdicts[checks.full_rank])
glue("modeling_n_states", n_random_states)
glue("modeling_seed", seed)
glue("modeling_theta1", checks.theta1_change)
glue("modeling_gravity1", checks.gravity_joint1)
glue("modeling_asymmetry", checks.asymmetry)
view.rank_table(checks, n_random_states)

# %% [markdown]
# ## Constants of the platform
#
# The torque record is current × $K_t$; the constants are computed from their sources (the
# catalogue, the correction factor of Sec. III-A, the current unit and each actuator's default
# current limit), not retyped ({numref}`tab-modeling-constants`).

# %% tags=["hide-input"]
view.constants_against_paper()
