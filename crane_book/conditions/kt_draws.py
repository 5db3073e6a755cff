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
# # A block of Kt draws (Appendix E-C)
#
# The condition's regressor and QR factors once, then one OLS, routing test and dense audit per
# draw of per-axis torque-constant errors, seeds `first_seed` to `first_seed + n_draws - 1`,
# one record per draw in `results/kt_draws/`. The Kt sweep runs this notebook once per row of
# `papermill_params/kt_draws_<profile>.csv`; the chapter "Kt sensitivity" reads the records.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1
first_seed = 1
n_draws = 1

# %%
from crane_lib.acceptance import kt_sensitivity as kt

# %%
study = kt.kt_study(trajectory, float(ts), int(run))
draws = kt.run_draws(study, range(int(first_seed), int(first_seed) + int(n_draws)))
print(len(draws), "draws")
