"""Benchmark of the dual-metric WLS: AG02 at 40 ms, its target at most 60 s on 2 cores.

The dual-metric SDP is solved on three sizes of the same record, evenly subsampled (about a
sixth, a third and all of AG02 at 40 ms), and each time is printed against OLS (regressor + QR)
on the same samples, measured in the same run, and against the smallest size (how the time
grows with the sample count: the exponent of a power law through the sizes). Each subsampled
estimate's distance to the full-record one, relative to the full one's norm, says what the
subsampling moves. Needs the data set's recordings (`python -m crane_lib.twin.dataset --profile
quick`).

`--smoke`: a few seconds' command file recorded on the twin stands in for AG02, at 80 ms.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

TRAJECTORY = "AG02"
TS = 0.040
FRACTIONS = (1 / 6, 1 / 3, 1.0)


def bench_sizes(ts: float) -> None:
    """Time the dual-metric WLS against OLS on one condition at interval `ts` (s)."""
    from crane_lib.identification import condition as identify
    from crane_lib.identification import weighted
    from crane_lib.model.dynamics import DynamicModel

    model = DynamicModel("reduced")
    bundle = identify.condition_bundle(TRAJECTORY, ts)
    n_record = len(bundle.theta)
    weighted.ols_fit(bundle, model, max_samples=60)  # warm-up: the first call loads the kernels
    rows = []
    for fraction in FRACTIONS:
        size = max(60, int(round(fraction * n_record)))
        start = time.perf_counter()
        reference = weighted.ols_fit(bundle, model, max_samples=size)
        ols_s = time.perf_counter() - start
        start = time.perf_counter()
        fitted = weighted.dual_metric_wls(
            bundle,
            model,
            max_samples=size,
            reference=reference,
            condition=f"{TRAJECTORY} at {ts * 1e3:g} ms",
        )
        rows.append((fitted.n_samples, time.perf_counter() - start, ols_s, fitted))
    full = rows[-1][3].values
    base_n, base_s = rows[0][0], rows[0][1]
    for n, seconds, ols_s, fitted in rows:
        moved = np.linalg.norm(fitted.values - full) / np.linalg.norm(full)
        print(
            f"dual-metric WLS, {TRAJECTORY} at {ts * 1e3:g} ms, {n:,} of {n_record:,} samples "
            f"({8 * n:,} residual rows): "
            f"{seconds:.1f} s ({fitted.info['iterations']} Clarabel iterations, status "
            f"{fitted.status}); "
            f"OLS on the same samples {ols_s:.3f} s (ratio {seconds / ols_s:.0f}); "
            f"{seconds / base_s:.2f}x the {base_n:,}-sample time; estimate moved {moved:.2e} from "
            "the full record's"
        )
    (n0, s0), (n1, s1) = (rows[0][0], rows[0][1]), (rows[-1][0], rows[-1][1])
    print(
        f"growth: time ~ n^{np.log(s1 / s0) / np.log(n1 / n0):.2f} between {n0:,} and {n1:,} "
        "samples"
    )


def main(argv=None) -> int:
    """Run the dual-metric benchmark and print its ratios."""
    from benchmarks._smoke import add_smoke_argument, isolated, smoke_recordings

    global TRAJECTORY
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    ts = TS
    if args.smoke:
        if (code := isolated("benchmarks.bench_dual_metric", ["--smoke"])) is not None:
            return code
        TRAJECTORY, ts = "SMOKE01", 0.080
        smoke_recordings((TRAJECTORY,))
    bench_sizes(ts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
