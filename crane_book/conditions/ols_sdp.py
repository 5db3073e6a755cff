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
# # One OLS/SDP condition
#
# OLS by QR, the routing test at the visited configurations and, on route O-S-C, the
# conditional SDP projection of one condition (trajectory, sampling interval, execution),
# written as its record in `results/conditions/`. The OLS/SDP sweep runs this notebook once
# per row of `papermill_params/ols_sdp_<profile>.csv`; the chapter "OLS and the conditional
# SDP projection" reads the records. By hand:
# `papermill ols_sdp.ipynb out.ipynb -p trajectory AP01 -p ts 0.08`.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1

# %%
from crane_lib.identification import condition

# %%
result = condition.record_condition(trajectory, float(ts), int(run))
print(condition.condition_record_path(trajectory, float(ts), int(run)), result.route)
