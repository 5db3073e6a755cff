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
# # One CLIE condition
#
# The condition's OLS/SDP start refined by CLIE (9) on its raw 1 ms log, by the route named:
# `fast` (the DIDIM Jacobian) or `clie` (the faithful finite-difference route of Appendix D-F),
# written as its record in `results/clie/` (a start whose simulation diverges is written as a
# failure record and fails the notebook). The CLIE sweep runs this notebook once per row of
# `papermill_params/clie_<profile>.csv`; the chapters "CLIE" and "Parameter clouds" read the
# records.

# %% tags=["parameters"]
trajectory = "AG02"
ts = 0.040
run = 1
refine = "fast"

# %%
from crane_lib.identification import refinement

# %%
report = refinement.record_refinement(trajectory, float(ts), int(run), refine)
print(report.method, report.iterations, report.objective_final)
