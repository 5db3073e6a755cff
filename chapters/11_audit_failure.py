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
# # What makes an estimate fail the audit
#
# *Beyond the paper, on paper Sec. VI-E, VII-D, Tables V and IX.* The paper's central
# result is an identified model that fits its data, is positive definite at every configuration
# its record visits, and is still indefinite over the audit domain $\Theta$. Whether this book's
# twin shows it for the representative condition is the first row of the ladder below (and the
# subject of chapter "The all-pose PD audit"). This chapter asks the question the paper raises
# and the twin can answer: **what in a real arm makes an
# identified $\mathbf M(\boldsymbol\theta)$ indefinite away from the data, and how much of it
# does it take?**
#
# The method is a ladder. Every nonideality the twin has can be switched off or scaled, and two
# it lacked are added (gear backlash and the encoder's position-dependent error), each with a
# magnitude from a datasheet or the paper's text; the register page
# [the nonideality study and the field twin](../book/register_nonideality.md) fixed the
# magnitudes, the rungs and the rule for a "field" twin before the study ran. Each rung records
# AG02 afresh and identifies it at the four intervals; OLS, the routing test at the visited
# configurations, the dense audit over $\Theta$, the worst pose and the parameter error against
# the twin's truth are kept per interval.
#
# **Data: the digital twin**, recorded once per rung (the study's own recordings, not the
# book's data set), and the condition records of the build's OLS/SDP sweep where the text says so.

# %% tags=["parameters"]
# one study condition (the sweep sets these; the defaults are today's twin on AG02,
# execution 1)
base = "default"
effect = "none"
magnitude = "0"
trajectory = "AG02"
seed = 1011
accept = False

# %% tags=["hide-input"]
import os

import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from crane_lib.acceptance import nonideality as science
from crane_lib.identification import condition as identify
from crane_lib.paths import RESULTS_DIR
from crane_lib.records import read_json_record
from crane_lib.reporting import nonideality as study
from crane_lib.twin import effects

profile = os.environ.get("CRANE_PROFILE", "full")
condition = science.parse_condition(base, effect, magnitude, trajectory, seed, accept,
                                    where="chapter parameters")

# %% [markdown]
# ## The effects and their magnitudes
#
# The effects of kind "the twin had it" are those of the twin before this study (register "The
# realization layer and the digital twin" argues today's values); the candidates are what it lacked. "Today" is the twin every
# other chapter runs on, "off" removes the effect, "nominal" is the sourced magnitude the study
# and the field profile use, "admitted" the physical range a conditions file may ask for.

# %% tags=["hide-input"]
study.effects_frame()

# %% [markdown]
# ## One rung
#
# A rung is one twin profile and one execution. The parameters name it (by default today's
# twin on AG02, the seed of its first execution in the data set); the study's sweep runs the
# condition notebook `crane_book/conditions/nonideality.py` once per row of
# `papermill_params/nonideality_<profile>.csv`, and each run writes that row's record. The rung
# the parameters name, as its record holds it:

# %% tags=["hide-input"]
path = science.record_path(condition, profile)
point = study.points_frame([read_json_record(path)])
display(Markdown(study.record_sentence(path, condition)))
display(study.point_table(point))

# %% tags=["hide-input"]
records = science.read_study(profile)
frame = study.points_frame(records)
table = study.ladder(frame)
order = study.rung_order(table["label"])
context = science.study_context()
truth_margin = science.truth_margin(context)
display(Markdown(study.summary_sentence(profile, records, frame)))

# %% [markdown]
# ## The ladder
#
# Each row of the map is a rung, each column an interval. The colour is the smallest margin
# $\lambda_\mathrm{min}$ of $\mathbf M(\boldsymbol\theta;\hat{\boldsymbol\beta}_\mathrm{OLS})$ over
# $\Theta$ among the executions (red: indefinite somewhere in $\Theta$), the text the verdict, and
# a dagger marks an estimate that passes the routing test (PD at every configuration its record
# visits) and fails over $\Theta$: the paper's phenomenon.

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-nonideality-ladder", "caption": "The ladder: one row per rung, one column per interval; look for red cells (indefinite over Θ) and daggers (PD where the data were taken, indefinite over Θ: the paper's phenomenon). Data: the study's twin recordings."}}
study.ladder_figure(table, order)
plt.show()

# %% tags=["hide-input"]
display(Markdown(study.ladder_sentences(frame, table, truth_margin)))

# %% [markdown]
# ## How much of it does it take
#
# Each candidate, and several effects the twin already had, is scaled alone on today's twin up
# to the end of its admitted range; the dotted line marks today's value. A curve crossing zero
# is an estimate that has become indefinite somewhere in $\Theta$.

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-nonideality-magnitudes", "caption": "Each effect scaled alone on today's twin: the margin over Θ against the effect's magnitude, per interval; look for a curve that crosses zero, and where it does against the dotted line (today's value). Data: the study's twin recordings."}}
scaled = study.scaled_effects(frame)
if scaled:
    study.magnitudes_figure(frame, scaled)
    plt.show()

# %% tags=["hide-input"]
if scaled:
    display(Markdown(study.magnitude_sentences(frame, scaled)))
else:
    display(Markdown(f"The {profile} profile runs no magnitude ladder "
                     "(the full profile does)."))

# %% [markdown]
# ## The spread between executions
#
# Two executions of the same trajectory on the same twin differ in every random draw: the host's
# timing, the sensors' noise, the run-to-run drift. The full profile's conditions run the rungs
# that decide the answer on eight executions; every difference the ladder shows has to be read
# against this spread.

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-nonideality-spread", "caption": "The margin over Θ of each rung run on several executions: its range (bar) and median (dot) per interval; a difference between rungs smaller than these bars says nothing. Data: the study's twin recordings."}}
spread = study.seed_spread(frame)
if len(spread):
    study.spread_figure(spread)
    plt.show()

# %% tags=["hide-input"]
if len(spread):
    display(Markdown(study.spread_sentences(spread)))
else:
    display(Markdown("This build's study runs no rung on three or more executions; "
                     "the full profile runs the deciding rungs on eight."))

# %% [markdown]
# ## The mechanism
#
# At the worst pose $\boldsymbol\theta^*$ of an estimate, let $\mathbf v$ be the eigenvector of
# $\lambda_\mathrm{min}$. Because $\mathbf M$ is linear in the base parameters,
# $\mathbf v^\top\mathbf M(\boldsymbol\theta^*;\hat{\boldsymbol\beta})\mathbf v-\mathbf v^\top\mathbf M(\boldsymbol\theta^*;\boldsymbol\beta)\mathbf v
# =\sum_k g_k(\hat\beta_k-\beta_k)$ with $g_k=\mathbf v^\top\mathbf B_k(\boldsymbol\theta^*)\mathbf v$: each base
# parameter's error has an exact share in the drop from the truth's quotient to $\lambda_\mathrm{min}$.
# The figure splits it for today's twin at 10 ms (execution 1); the table follows the parameters
# that carry the drop across the rungs that remove one effect at a time.

# %% tags=["hide-input"] mystnb={"figure": {"name": "fig-nonideality-mechanism", "caption": "Where the margin goes at the worst pose: each base parameter's share of the drop from the truth's quotient (left; the longest bars carry it) and the worst eigenvector by joint (right). Data: the study's twin recording named in the panel."}}
shares, names = study.share_frame(frame, records)
dominant = study.dominant_parameters(shares, names, truth_margin)
point = study.mechanism_point(records, seed)
title = study.mechanism_title(point, seed, profile)
study.mechanism_figure(point, names, context.truth, title)
plt.show()

# %% tags=["hide-input"]
followed = dominant + [study.largest_standardized_error(records)]
errors = study.error_table(records, study.removal_rungs(order), followed)
display(study.errors_frame(errors))
sentences = study.mechanism_sentences(shares, names, dominant, errors, truth_margin)
display(Markdown(sentences))

# %% [markdown]
# ## The field profile
#
# The register fixed, before the study ran, the rule that builds the field twin: a candidate
# joins it at its nominal magnitude when, added alone to today's twin, it lowers AG02's margin
# over $\Theta$ at some interval, in both executions, by more than twice the two executions'
# difference on today's twin. The table evaluates it; the build stops if the committed profile
# (`effects.FIELD_CHANGES`) is not what the rule selects.

# %% tags=["hide-input"]
rule, chosen, committed = study.field_check(frame)
if len(rule):
    display(study.rule_frame(rule))
else:
    display(Markdown(f"The {profile} profile has one execution per rung: "
                     "the rule needs two (full profile)."))
display(Markdown(study.field_sentence(rule, chosen, committed)))

# %% [markdown]
# ### Table V and Sec. VI-E on this build's data set
#
# The population counts of the paper, the routing test's verdict (PD at the visited
# configurations) against the audit's (PD over $\Theta$), over every condition of the data set
# this build ran on (recorded on the twin profile the caption names; `make book TWIN=field` runs
# the whole book on the field profile). Each OLS estimate of the build's OLS/SDP sweep (chapter
# "OLS and the conditional SDP projection") is audited with the first seed by the main job
# (`results/audits/`, the record the audit chapter reads too); where violations lie is counted
# on the uniform draw, which samples $\Theta$ without the folded region's emphasis.
# The accepted model of the same data set, with the seed spread of its margin, is in chapter
# "Validation".

# %% tags=["hide-input"]
conditions = identify.load_condition_records(RESULTS_DIR / "conditions")
population = study.audited_condition_records(conditions)
display(study.population_table(population, profile, effects.active_profile()))

# %% [markdown]
# ### The representative condition through Algorithm 1
#
# The paper's accepted model needed the rescue. Whether today's twin's own AG02 at 40 ms needs it
# is shown in chapter "The all-pose PD audit"; here Algorithm 1 runs on a rung whose AG02 estimate
# failed over $\Theta$ in the study's first executions: today's twin with exact torque constants,
# chosen because it failed (register). It shows the path on an estimate a physical twin
# produced: the first audit's verdict, the rescue if needed, the re-audit on five seeds and
# their spread.

# %% tags=["hide-input"]
runs = study.accepted_summary(records)
if runs:
    display(study.accepted_runs_frame(runs))
    display(study.accepted_table(runs[0], frame))
    display(Markdown(study.accepted_sentence(runs[0], frame)))
else:
    display(Markdown(study.accepted_missing(profile)))

# %% [markdown]
# ## What the ladder answers

# %% tags=["hide-input"]
display(Markdown(study.conclusion(frame, table, spread, dominant, errors, chosen,
                                  truth_margin, runs=runs)))
