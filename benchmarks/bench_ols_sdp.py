"""Benchmarks of OLS and the conditional projection.

1. One condition's OLS, regressor and QR included, for AG02 at 10 ms (the largest condition),
   against numpy's lstsq (SVD-based) on the same stacked regressor.
2. One projection on 200 configurations (Theta_c of AG02 at 40 ms) of an estimate made non-PD
   there, against a direct solve that gives the solver all 200 LMIs at once.
3. The OLS/SDP sweep: the quick profile's conditions are timed end to end (papermill, batched
   kernels), with the breakdown of where the time goes; see bench_sweep for the executors.
   With CRANE_BENCH_FULL_SWEEP=1 the full profile's 160 are run instead (needs the full data
   set: `python -m crane_lib.twin.dataset --profile full`).
Needs the data set's recordings (`python -m crane_book.pipeline --profile quick` builds them).

`--smoke`: a few seconds' command file recorded on the twin stands in for AG02; the sweep runs
two of its conditions in one kernel.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

TRAJECTORY = "AG02"


def bench_ols() -> None:
    """Time OLS by QR against the normal equations on one condition at 10 ms."""
    from crane_lib.identification import condition as identify
    from crane_lib.identification.ols import ols, stack
    from crane_lib.model.dynamics import DynamicModel

    model = DynamicModel("reduced")
    bundle = identify.condition_bundle(TRAJECTORY, 0.010)
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
    print(
        f"OLS of {TRAJECTORY} at 10 ms ({result.n_rows:,} x 39, regressor + QR + standard errors + "
        f"kappa): {min(times):.3f} s "
        f"(best of 3); numpy lstsq alone on the stacked matrix {reference:.3f} s (ratio "
        f"{min(times) / reference:.1f})"
    )


def bench_projection() -> None:
    """Time the conditional SDP projection (8) of one condition at 40 ms."""
    from crane_lib.identification import condition as identify
    from crane_lib.identification import projection as sdp
    from crane_lib.model.dynamics import DynamicModel

    model = DynamicModel("reduced")
    bundle = identify.condition_bundle(TRAJECTORY, 0.040)
    beta = identify.identify_condition(bundle, TRAJECTORY, model).ols.parameters.values.copy()
    beta[model.names.index("ZZR6")] -= 0.006  # an estimate non-PD along the record
    poses = bundle.theta[sdp.constraint_poses(bundle.theta, bundle.dtheta)]
    start = time.perf_counter()
    result = sdp.nearest_pd(model, beta, poses, 1e-3)
    lazy = time.perf_counter() - start
    start = time.perf_counter()
    sdp._solve(beta, sdp.inertia_basis(model, poses), 1e-3)
    direct = time.perf_counter() - start
    print(
        f"projection on {len(poses)} configurations (eps 1e-3): {lazy:.2f} s with lazy activation "
        f"({result.rounds} rounds, {result.n_active} poses carried, status {result.status}); "
        f"all {len(poses)} LMIs at once {direct:.2f} s ({direct / lazy:.1f}x)"
    )


def bench_sweep(smoke: bool = False) -> None:
    """Time the OLS/SDP sweep over its conditions on a local pool."""
    from crane_book import pipeline, sweep
    from crane_lib.paths import recording_path

    if smoke:
        profile, conditions = (
            "smoke",
            [{"trajectory": TRAJECTORY, "ts": ts, "run": 1} for ts in (0.04, 0.08)],
        )
    else:
        profile = "full" if os.environ.get("CRANE_BENCH_FULL_SWEEP") == "1" else "quick"
        conditions = sweep.read_conditions(f"ols_sdp_{profile}.csv")
    outcomes = sweep.run_sweep(
        pipeline.notebook_of("ols_sdp"),
        conditions,
        f"bench_ols_sdp_{profile}_{time.time_ns()}",
        workers=2,
        inputs_of=lambda p: [recording_path(p["trajectory"], p["run"])],
        show_progress=not smoke,
        batch_size=len(conditions) if smoke else None,
    )
    print(sweep.breakdown(outcomes))
    ran = [o for o in outcomes if o.status == "ran"]
    per_condition = outcomes.wall_s / max(len(ran), 1)
    print(
        f"OLS/SDP sweep, {profile} profile: {len(ran)} conditions in {outcomes.wall_s:.0f} s on 2 "
        "workers "
        f"({per_condition:.1f} s each, wall); the 160 of the full profile at this rate: "
        f"{160 * per_condition / 60:.1f} min" + ("" if profile == "full" else " (extrapolated)")
    )


def main(argv=None) -> int:
    """Run the OLS/SDP benchmarks and print their ratios."""
    from benchmarks._smoke import add_smoke_argument, isolated, smoke_recordings

    global TRAJECTORY
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        if (code := isolated("benchmarks.bench_ols_sdp", ["--smoke"])) is not None:
            return code
        TRAJECTORY = "SMOKE01"
        smoke_recordings((TRAJECTORY,))
    bench_ols()
    bench_projection()
    bench_sweep(args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
