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
# # One execution refitted (Table XI)
#
# One execution of a trajectory at one interval through the pipeline's steps (preprocessing,
# OLS, routing, projection, optionally the fast CLIE route), its held-out RMSE on V01-V03 and
# its audit over Θ, written as its record in `results/repeats/`. The repeats sweep runs this
# notebook once per row of `papermill_params/repeats_<profile>.csv`; the chapter
# "Reproducibility" reads the records.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1
refine = "none"

# %%
from crane_lib.acceptance import reproducibility as repro

# %%
record = repro.refit_execution(trajectory, int(run), float(ts), refine)
print(repro.write_record(repro.record_path(trajectory, float(ts), int(run), refine), record))
