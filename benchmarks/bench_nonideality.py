"""Benchmark of the nonideality study, on one core (numba threads set to 1).

1. One ladder point: record AG02 on today's twin, preprocess, OLS and the routing test, the dense
   audit over Θ (221,875 poses) through the Cholesky screen, the mechanism at the worst pose; per
   interval (one recording serves the four intervals, so its cost is split four ways) and for the
   whole condition. Target: one point (record share, preprocess, OLS, dense audit) at most 10 s.
   Both wall and CPU seconds are printed (a shared machine inflates the wall time).
2. The screened audit against the audit's own eigenvalue-per-pose evaluation of the same poses,
   measured in the same run: the ratio, and that verdict, margin and violations agree.

`--smoke`: a few seconds' command file recorded on the twin stands in for AG02 and 2,000 uniform
poses for the dense audit (seconds; the numbers are not measurements).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def _timed(function, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    out = function(*args, **kwargs)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def bench_point(smoke: bool = False) -> None:
    """Time one rung of the nonideality ladder: record, identify, audit."""
    import numba

    numba.set_num_threads(1)
    from crane_lib.acceptance import audit, nonideality, screen
    from crane_lib.identification.condition import identify_condition
    from crane_lib.logs import preprocessing
    from crane_lib.logs.raw_log import RawLog
    from crane_lib.paths import TRAJECTORY_DIR
    from crane_lib.twin import recorder as twin

    condition = nonideality.parse_condition("default", "none", "0", "AG02", 1011)
    context = nonideality.study_context()
    command, name = TRAJECTORY_DIR / "AG02.txt", "AG02"
    if smoke:
        from benchmarks._smoke import smoke_command_file
        from crane_lib.paths import RESULTS_DIR

        command, name = smoke_command_file("SMOKE01", RESULTS_DIR / "commands"), "SMOKE01"
        poses = audit.uniform_poses(2000, nonideality.AUDIT_SEED)
        pose_set = audit.PoseSet(
            poses,
            np.zeros(len(poses), dtype=np.int8),
            (audit.UNIFORM,),
            nonideality.AUDIT_SEED,
            "smoke",
        )
        prepared = screen.prepare(pose_set, context.model)
        context = nonideality.StudyContext(context.model, context.truth, prepared)
    twin.record(command, 1)  # compile / load the cores outside the timing
    screen.screened_audit(context.truth, context.poses, context.model)
    (samples, metadata), rec_wall, rec_cpu = _timed(
        twin.record, command, condition.seed, effects=condition.effects
    )
    bundles, pre_wall, pre_cpu = _timed(
        preprocessing.preprocess_all, RawLog(samples, metadata), nonideality.INTERVALS_S
    )
    total_wall, total_cpu = rec_wall + pre_wall, rec_cpu + pre_cpu
    print(
        f"record {name} ({metadata['record_duration_s']} s of log): {rec_wall:.2f} s wall, "
        f"{rec_cpu:.2f} s CPU; "
        f"preprocess to {len(bundles)} intervals: {pre_wall:.2f} s wall, {pre_cpu:.2f} s CPU"
    )
    for ts, bundle in bundles.items():
        result, id_wall, id_cpu = _timed(
            identify_condition, bundle, name, context.model, project=False
        )
        found, au_wall, au_cpu = _timed(
            screen.screened_audit, result.ols.parameters.values, context.poses, context.model
        )
        point_wall = (rec_wall + pre_wall) / len(bundles) + id_wall + au_wall
        point_cpu = (rec_cpu + pre_cpu) / len(bundles) + id_cpu + au_cpu
        total_wall, total_cpu = total_wall + id_wall + au_wall, total_cpu + id_cpu + au_cpu
        print(
            f"  {ts * 1e3:3.0f} ms: OLS + routing {id_wall:.2f} s, dense audit {au_wall:.2f} s "
            f"({found.n_exact:,} poses exact); "
            f"one ladder point {point_wall:.2f} s wall, {point_cpu:.2f} s CPU: "
            f"{10.0 / point_cpu:.1f}x inside the 10 s target"
        )
    print(
        f"the whole condition (one recording, four intervals): {total_wall:.2f} s wall, "
        f"{total_cpu:.2f} s CPU"
    )

    # 2. the screen against the eigenvalue per pose, same poses, same run
    beta = result.ols.parameters.values
    pose_set = context.poses.pose_set
    full, full_wall, full_cpu = _timed(audit.audit_pose_set, beta, pose_set, context.model)
    fast, fast_wall, fast_cpu = _timed(screen.screened_audit, beta, context.poses, context.model)
    same = (full.passed, full.lambda_min, full.violations) == (
        fast.passed,
        fast.lambda_min,
        fast.violations,
    )
    print(
        f"dense audit, eigenvalue per pose: {full_cpu:.2f} s CPU; screened: {fast_cpu:.2f} s CPU: "
        f"{full_cpu / fast_cpu:.1f}x faster; "
        f"verdict, margin and violations {'identical' if same else 'DIFFER'}"
    )


def main(argv=None) -> int:
    """Run the nonideality benchmark and print its result."""
    from benchmarks._smoke import add_smoke_argument, isolated

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    if args.smoke and (code := isolated("benchmarks.bench_nonideality", ["--smoke"])) is not None:
        return code
    bench_point(args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
