"""Benchmark of the nonideality study (issue 14), on one core (numba threads set to 1).

1. One ladder point: record AG02 on today's twin, preprocess, OLS and the routing test, the dense
   audit over Θ (221,875 poses) through the Cholesky screen, the mechanism at the worst pose; per
   interval (one recording serves the four intervals, so its cost is split four ways) and for the
   whole condition. Target: one point (record share, preprocess, OLS, dense audit) at most 10 s.
   Both wall and CPU seconds are printed (a shared machine inflates the wall time).
2. The screened audit against the audit's own eigenvalue-per-pose evaluation of the same poses,
   measured in the same run: the ratio, and that verdict, margin and violations agree.
"""

from __future__ import annotations

import time


def _timed(function, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    out = function(*args, **kwargs)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    import numba

    numba.set_num_threads(1)
    from crane_lib.acceptance import audit, screened
    from crane_lib.identification.condition import identify_condition
    from crane_lib.logs import preprocessing
    from crane_lib.logs.raw_log import RawLog
    from crane_lib.paths import TRAJECTORY_DIR
    from crane_lib.reporting import nonideality
    from crane_lib.twin import recorder as twin

    condition = nonideality.parse_condition("default", "none", "0", "AG02", 1011)
    context = nonideality.study_context()
    twin.record(TRAJECTORY_DIR / "AP01.txt", 1)  # compile / load the cores outside the timing
    screened.screened_audit(context.truth, context.trig, context.model)
    (samples, metadata), rec_wall, rec_cpu = _timed(twin.record, TRAJECTORY_DIR / "AG02.txt", condition.seed, effects=condition.effects)
    bundles, pre_wall, pre_cpu = _timed(preprocessing.preprocess_all, RawLog(samples, metadata), nonideality.INTERVALS_S)
    total_wall, total_cpu = rec_wall + pre_wall, rec_cpu + pre_cpu
    print(f"record AG02 ({metadata['record_duration_s']} s of log): {rec_wall:.2f} s wall, {rec_cpu:.2f} s CPU; "
          f"preprocess to {len(bundles)} intervals: {pre_wall:.2f} s wall, {pre_cpu:.2f} s CPU")
    for ts, bundle in bundles.items():
        result, id_wall, id_cpu = _timed(identify_condition, bundle, "AG02", context.model, project=False)
        found, au_wall, au_cpu = _timed(screened.screened_audit, result.ols.parameters.values, context.trig, context.model)
        point_wall = (rec_wall + pre_wall) / len(bundles) + id_wall + au_wall
        point_cpu = (rec_cpu + pre_cpu) / len(bundles) + id_cpu + au_cpu
        total_wall, total_cpu = total_wall + id_wall + au_wall, total_cpu + id_cpu + au_cpu
        print(f"  {ts * 1e3:3.0f} ms: OLS + routing {id_wall:.2f} s, dense audit {au_wall:.2f} s ({found.exact:,} poses exact); "
              f"one ladder point {point_wall:.2f} s wall, {point_cpu:.2f} s CPU: {10.0 / point_cpu:.1f}x inside the 10 s target")
    print(f"the whole condition (one recording, four intervals): {total_wall:.2f} s wall, {total_cpu:.2f} s CPU")

    # 2. the screen against the eigenvalue per pose, same poses, same run
    beta = result.ols.parameters.values
    pose_set = audit.audit_poses(1)
    full, full_wall, full_cpu = _timed(audit.audit_pose_set, beta, pose_set, context.model)
    fast, fast_wall, fast_cpu = _timed(screened.screened_audit, beta, context.trig, context.model)
    same = (full.passed, full.lambda_min, full.violations) == (fast.passed, fast.lambda_min, fast.violations)
    print(f"dense audit, eigenvalue per pose: {full_cpu:.2f} s CPU; screened: {fast_cpu:.2f} s CPU: {full_cpu / fast_cpu:.1f}x faster; "
          f"verdict, margin and violations {'identical' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
