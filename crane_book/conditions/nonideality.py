# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # One rung of the nonideality study
#
# One twin profile (a base profile with one effect at one magnitude) recorded on one execution,
# identified at every interval and audited over Θ (and, with `accept`, taken through Algorithm
# 1), written as its record in `results/nonideality/<profile>/`. The study's sweep runs this
# notebook once per row of `papermill_params/nonideality_<profile>.csv`; the chapter "When the
# audit fails, and why" reads the records.

# %% tags=["parameters"]
base = "default"
effect = "none"
magnitude = "0"
trajectory = "AG02"
seed = 1011
accept = False
profile = "quick"

# %%
from crane_lib.acceptance import nonideality

# %%
condition = nonideality.parse_condition(
    base, effect, magnitude, trajectory, seed, accept, where="notebook parameters"
)
path, timing = nonideality.write_condition(condition, profile)
print(path, timing)
