"""Benchmarks of OLS and the conditional projection (issue 5).

1. One condition's OLS, regressor and QR included, for AG02 at 10 ms (the largest condition),
   against numpy's lstsq (SVD-based) on the same stacked regressor.
2. One projection on 200 configurations (Theta_c of AG02 at 40 ms) of an estimate made non-PD
   there, against a direct solve that gives the solver all 200 LMIs at once.
3. The OLS/SDP sweep: the quick profile's conditions are timed end to end (papermill, one
   chapter run each); with CRANE_BENCH_FULL_SWEEP=1 the full profile's 160 are run instead
   (needs the full data set: `python -m crane_lib.twin.dataset --profile full`).
Needs the data set's recordings (`python -m crane_lib.reporting.pipeline --profile quick` builds them).
"""

from __future__ import annotations

import os
import time

import numpy as np


def bench_ols() -> None:
    from crane_lib.identification import condition as identify
    from crane_lib.identification.ols import ols, stack
    from crane_lib.model.dynamics import DynamicModel

    model = DynamicModel("reduced")
    bundle = identify.condition_bundle("AG02", 0.010)
    model.regressor(bundle.theta[:5], bundle.dtheta[:5], bundle.ddtheta[:5])
    times = []
    for _ in range(3):
        start = time.perf_counter()
        w_all, y = stack(model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta), bundle.tau)
        result = ols(w_all, y, model.names)
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    np.linalg.lstsq(w_all, y, rcond=None)
    reference = time.perf_counter() - start
    print(f"OLS of AG02 at 10 ms ({result.n_rows:,} x 39, regressor + QR + standard errors + kappa): {min(times):.3f} s "
          f"(best of 3); numpy lstsq alone on the stacked matrix {reference:.3f} s (ratio {min(times) / reference:.1f})")


def bench_projection() -> None:
    from crane_lib.identification import condition as identify
    from crane_lib.identification import projection as sdp
    from crane_lib.model.dynamics import DynamicModel

    model = DynamicModel("reduced")
    bundle = identify.condition_bundle("AG02", 0.040)
    beta = identify.identify_condition(bundle, "AG02", model).ols.parameters.values.copy()
    beta[model.names.index("ZZR6")] -= 0.006  # an estimate non-PD along the record
    poses = bundle.theta[sdp.constraint_poses(bundle.theta, bundle.dtheta)]
    start = time.perf_counter()
    result = sdp.nearest_pd(model, beta, poses, 1e-3)
    lazy = time.perf_counter() - start
    start = time.perf_counter()
    sdp._solve(beta, sdp.inertia_basis(model, poses), 1e-3)
    direct = time.perf_counter() - start
    print(f"projection on {len(poses)} configurations (eps 1e-3): {lazy:.2f} s with lazy activation "
          f"({result.rounds} rounds, {result.n_active} poses carried, status {result.status}); "
          f"all {len(poses)} LMIs at once {direct:.2f} s ({direct / lazy:.1f}x)")


def bench_sweep() -> None:
    from crane_lib.reporting import pipeline, sweep

    profile = "full" if os.environ.get("CRANE_BENCH_FULL_SWEEP") == "1" else "quick"
    conditions = sweep.read_conditions(f"ols_sdp_{profile}.csv")
    start = time.perf_counter()
    outcomes = sweep.run_sweep(pipeline.OLS_SDP_CHAPTER, conditions, f"bench_ols_sdp_{profile}_{time.time_ns()}", workers=2)
    seconds = time.perf_counter() - start
    ran = [o for o in outcomes if o.status == "ran"]
    per_condition = seconds / max(len(ran), 1)
    print(f"OLS/SDP sweep, {profile} profile: {len(ran)} conditions in {seconds:.0f} s on 2 workers "
          f"({per_condition:.1f} s each, wall); the 160 of the full profile at this rate: {160 * per_condition / 60:.1f} min"
          + ("" if profile == "full" else " (extrapolated)"))


if __name__ == "__main__":
    bench_ols()
    bench_projection()
    bench_sweep()
