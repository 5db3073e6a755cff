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
# *Paper Sec. III-A, III-C and Appendix A.* The CRANE-X7 is a serial arm of seven revolute
# joints plus a hand axis, numbered outward from the base, the hand last. This chapter rebuilds
# the model the paper generated with OpenSYMORO: the modified Denavit-Hartenberg table
# ({numref}`tab-modeling-mdh`), the inverse dynamic model linear in the standard parameters, the
# grouping into base parameters in closed form (Appendix A), the bookkeeping from the full
# grouped set down to the reduced one (Appendix A-B, {numref}`tab-modeling-bookkeeping`),
# and a check of
# the geometry against the manufacturer's description ({numref}`fig-modeling-geometry`).
#
# Nothing here is recorded data: the model is pure kinematics and algebra. The parameter
# values shown at the end are those the manufacturer's description implies, which is also
# where the digital twin's truth starts. The code behind every table, figure and generated
# sentence is folded under it ("Show code cell source"); the assembly lives in
# `crane_lib.reporting.chapters.modeling`.

# %% tags=["parameters"]
# papermill parameters: the mounting reading (see the reconstruction register)
mounting = "hanging"
n_random_states = 2000
seed = 1

# %% tags=["remove-cell"]
from IPython.display import Math, display

from crane_lib.model import robot_description
from crane_lib.reporting.chapters import modeling as report

# %% [markdown]
# ## Table I: the modified DH parameters
#
# OpenSYMORO's convention: frame $j$ follows frame $j-1$ by
# $\mathrm{Rot}_x(\alpha_j)\,\mathrm{Trans}_x(d_j)\,\mathrm{Rot}_z(\theta_j)\,\mathrm{Trans}_z(r_j)$.
# The text gives $\alpha_1 = 0$, the other twists $\pm\pi/2$ alternating, and the two equal
# offsets $RL_3 = RL_5$; the signs are our choice, made so that each joint turns the way the
# manufacturer's description turns it (register entry "Table I, the signs of α"). The table is
# read from `data/crane_x7_mdh.csv`:

# %% tags=["hide-input"]
table = robot_description.load_mdh_table()
report.table_i(table)

# %% [markdown]
# What the text states about it, against the file ({numref}`tab-modeling-mdh-paper`):

# %% tags=["hide-input"]
report.table_i_against_paper(table)

# %% [markdown]
# ## The geometry against the manufacturer's description
#
# The description (`data/crane_x7_description/`) places every joint at the zero pose along
# its parent's $z$ axis. Placing MDH frame 0 where the joint-1 axis meets the joint-2 axis,
# each MDH joint axis should coincide with the description's joint axis, as a line and in
# direction. {numref}`tab-modeling-geometry` measures it: the angle between the axes, the
# distance of
# the description's joint origin from the MDH axis, and how far along the axis that origin
# sits from $O_j$. The chapter stops if an axis does not match.

# %% tags=["hide-input"]
display(report.geometry_table(table))
report.geometry_sentence(table)

# %% [markdown]
# Two offsets of the description are not in Table I. The rise from the description's
# `base_link` to $O_0$ lies along the joint-1 axis, parallel to gravity, and so changes no
# torque; the offset along $z_7$ puts the description's joint-7 frame away from $O_7$ and so
# enters only link 7's inertial parameters about $O_7$ (its first moment $MZ_7$, which the
# grouping absorbs into $MYR_6$, and $XX_7$, $YY_7$ by the parallel-axis theorem). The joint
# spacings are the offsets of Table I ({numref}`tab-modeling-offsets`).

# %% tags=["hide-input"]
report.offsets_against_paper(table)

# %% [markdown]
# {numref}`fig-modeling-geometry` draws the MDH frame origins and the description's joint
# frames at the
# zero pose (left) and the arm at the nominal posture of the paper's Fig. 1 (right), in the
# $x$-$z$ plane of the base; in the hanging mount gravity points along $+z_0$, down the page.

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-modeling-geometry", "caption": "The model's frames against the manufacturer's description: zero pose (left), the nominal posture of the paper's Fig. 1 (right). Data: the description in `data/`, no recording."}}
report.geometry_figure(table);

# %% [markdown]
# ## The inverse dynamic model, linear in the standard parameters
#
# Per arm link $j$ the standard parameters are the inertia tensor about $O_j$
# ($XX_j, XY_j, XZ_j, YY_j, YZ_j, ZZ_j$), the first moments ($MX_j, MY_j, MZ_j$), the mass
# $M_j$, the rotor inertia $IA_j$ and the viscous and Coulomb friction $FV_j$, $FS_j$; the hand
# axis carries only its rotor inertia and friction. The Newton-Euler recursion, customized to
# the table the way OpenSYMORO does it (every product with an exact zero of the table vanishes
# while the model is built, every remaining intermediate quantity gets a name), gives
#
# $$\boldsymbol\tau = \mathbf W(\boldsymbol\theta, \dot{\boldsymbol\theta}, \ddot{\boldsymbol\theta})\,\boldsymbol\varphi,
# \qquad \tau_j \mathrel{+}= IA_j\ddot\theta_j + FV_j\dot\theta_j +
# FS_j\,\mathrm{sign}(\dot\theta_j).$$

# %% tags=["hide-input"]
report.symbolic_sentence(table)

# %% [markdown]
# ### The symbol $MY_7$ (Appendix A-C)
#
# The paper notes that its OpenSYMORO input entered the $y$ first moment of link 7 under
# the symbol $MZ_7$, that the column is $-\dot v_{x,7}$, that of $MY_j$ in
# $\tau_j = MX_j\dot v_y - MY_j\dot v_x$, and that $MZ_7$ proper is absorbed by the relation
# for $MYR_6$. The derivation says the same by itself: the row-7 entries of the first moments
# of link 7 are read off the model (with $VP7\_x$, $VP7\_y$ the acceleration of $O_7$ in
# frame 7, gravity included), and $MZ_7$ appears in exactly one base parameter.

# %% tags=["hide-input"]
display(Math(report.my7_entries(table)))
report.my7_sentence()

# %% [markdown]
# ## Appendix A: the base parameters in closed form
#
# Which combinations of standard parameters are identifiable is a property of the arm. It is
# derived here, not typed: the regressor program is evaluated in exact rational arithmetic
# at random rational points of the unit circle, and the exact reduced row echelon form of
# the stacked matrix says which columns are independent and how every other column is a
# combination of them ($\mathbf W_d = \sum_i K_{id}\mathbf W_{p_i}$, hence
# $\beta_i = \varphi_{p_i} + \sum_d K_{id}\varphi_d$). The offsets are kept as the symbols
# $RL_3$, $RL_5$. The relations below are Khalil's grouping rules for this arm; the
# elimination found them without being told.

# %% tags=["hide-input"]
display(Math(report.grouping_relations()))
report.absorbed_sentence()

# %% [markdown]
# ## Appendix A-B: the full grouped set and the reduced set (Table II)
#
# The reduced set drops the products of inertia of the links beyond the first and every
# Coulomb coefficient (Sec. III-D gives the reasons; the chapter "OLS and the conditional SDP
# projection" measures them on the twin). {numref}`tab-modeling-categories` counts what the
# derivation
# leaves per category, and {numref}`tab-modeling-bookkeeping` sets it beside Appendix A-B's
# counts.

# %% tags=["hide-input"]
display(report.categories_table())
report.bookkeeping_against_paper()

# %% [markdown]
# The reduced set in the paper's order (Table II and the last panels of Table XII), with the
# values the manufacturer's description implies through the relations above
# ({numref}`tab-modeling-table-ii`). The description has no rotor inertias or friction;
# those entries
# are the twin's business (chapter "The realization layer, the twin and preprocessing").

# %% tags=["hide-input"]
report.reduced_set_values(mounting)

# %% [markdown]
# How large the products of inertia the reduced model drops are in the description
# ({numref}`tab-modeling-poi-share`), against the range the paper quotes for them as a check on
# the geometry, not an input (Sec. III-D, {numref}`tab-modeling-poi-paper`):

# %% tags=["hide-input"]
display(report.poi_shares_table())
report.poi_against_paper()

# %% [markdown]
# ## Checks on the numeric model
#
# The numeric functions are generated from the symbolic model. On random states the stacked
# regressors should have full column rank in each set of Table III, the inertia matrix should
# not depend on $\theta_1$, the joint-1 gravity torque should vanish identically (joint 1
# turns about the gravity axis), and $\mathbf M$ should be symmetric:

# %% tags=["hide-input"]
ranks, checked = report.rank_table(mounting, n_random_states, seed)
display(ranks)
checked

# %% [markdown]
# ## Constants of the platform
#
# The torque record is current × $K_t$; the constants are computed from their sources (the
# catalogue, the correction factor of Sec. III-A, the current unit and each actuator's default
# current limit), not retyped ({numref}`tab-modeling-constants`).

# %% tags=["hide-input"]
report.constants_against_paper()
