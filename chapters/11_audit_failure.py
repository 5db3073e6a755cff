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
# *Beyond the paper: issue 14, on paper Sec. VI-E, VII-D, Tables V and IX.* The paper's central
# result is an identified model that fits its data, is positive definite at every configuration
# its record visits, and is still indefinite over the audit domain $\Theta$. On this book's twin
# the representative condition does not show it (chapter "The all-pose PD audit"). This chapter
# asks the question the paper raises and the twin can answer: **what in a real arm makes an
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
# one study condition (the sweep sets these; the defaults are today's twin on AG02, execution 1)
base = "default"
effect = "none"
magnitude = "0"
trajectory = "AG02"
seed = 1011
accept = False
# the sweep runs single conditions with summary = False (the condition's record only)
summary = True

# %% tags=["hide-input"]
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from crane_lib.acceptance import audit, screened
from crane_lib.identification import condition as identify
from crane_lib.paper_numbers import paper
from crane_lib.paths import RESULTS_DIR
from crane_lib.reporting import nonideality as study
from crane_lib.reporting.tables import Comparison, Why, comparison_table, formatted, significant
from crane_lib.twin import effects

profile = os.environ.get("CRANE_PROFILE", "full")
condition = study.parse_condition(base, effect, magnitude, trajectory, seed, accept, where="chapter parameters")

# %% [markdown]
# ## One rung
#
# A rung is one twin profile and one execution. The parameters name it (by default today's
# twin on AG02, the seed of its first execution in the data set); the sweep runs this chapter
# once per row of `papermill_params/nonideality_<profile>.csv`, and this cell computes and
# stores that row's record.

# %% tags=["hide-input"]
if not summary:
    path, timing = study.write_condition(condition, profile)
    stored = study.read_study(profile) and [study.points_frame([__import__("json").loads(path.read_text())])]
    display(Markdown(f"Stored `{path.name}` ({condition.label()}, seed {seed}): recorded in {timing['record_s']:.1f} s, "
                     f"identified and audited at four intervals in {timing['identify_and_audit_s']:.1f} s."))
    display(stored[0][["ts_ms", "pd_visited", "lambda_visited", "pd_theta", "lambda_theta", "worst_component"]])
