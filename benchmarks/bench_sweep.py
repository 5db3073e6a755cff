"""Sweep executors and the faithful CLIE study.

1. Executors: the OLS/SDP sweep of the quick profile (16 conditions; `--executors-profile full`:
   the main job's 160, on the full data set) on the local process pool
   (batched kernels, the default), on a 2-worker `distributed.LocalCluster` (ratio: within 10 %
   of the local pool?), and on the local pool with one kernel per condition (the driver before
   batching: the reference the batching gain is measured against). Each prints where the time
   went (`sweep.breakdown`: in-notebook compute, setup cells, kernel start, waiting).
2. `--faithful`: the faithful CLIE study (the CLIE condition notebook, refine = clie) over
   papermill_params/clie_faithful_quick.csv (20 conditions) on a 2-worker LocalCluster, and its
   honest extrapolation to the 160 conditions of the full profile: worker seconds per second
   of record, measured per condition, times the full profile's record seconds (commanded
   durations of the 40 files scaled by the realized/commanded ratio of the measured records).
   `--faithful-shortest N`: the same on the N conditions of clie_faithful_full.csv with the
   shortest records (needs the full data set; the quick set's 20 take hours on 2 cores), with
   a check of that choice: the fast route's worker seconds per record second on those N
   against all the fast records of the build.

Needs the quick data set (`python -m crane_lib.twin.dataset --profile quick`). Writes
results/benchmarks/bench_sweep.json. `--smoke`: one condition of a few seconds' record on the
local pool and on a LocalCluster; no unbatched reference, no faithful study.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import lru_cache

import numpy as np

DASK_TARGET = 0.10  # the Dask run within 10 % of the local pool's wall time
OVERHEAD_TARGET = 0.25  # sweep overhead at most 25 % of its capacity


def _local_cluster(workers: int = 2):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        worker_dashboard_address=None,
    )
    return cluster, Client(cluster, set_as_default=False)


def _sweep(conditions, name, **options):
    from crane_book import pipeline, sweep
    from crane_lib.paths import recording_path

    return sweep.run_sweep(
        pipeline.notebook_of("ols_sdp"),
        conditions,
        f"bench_{name}_{time.time_ns()}",
        show_progress=False,
        inputs_of=lambda p: [recording_path(p["trajectory"], p["run"])],
        **options,
    )


def bench_executors(conditions, smoke: bool, reference: bool = True) -> dict:
    """Local pool against a 2-worker LocalCluster, the sweep's overhead, and (`reference`) the
    unbatched driver (one kernel per condition) as the reference of the batching gain."""
    from crane_book import sweep

    out = {"conditions": len(conditions)}
    local = _sweep(conditions, "local", workers=2, batch_size=1 if smoke else None)
    print(sweep.breakdown(local), flush=True)
    started = time.perf_counter()
    cluster, client = _local_cluster(2)
    cluster_start = time.perf_counter() - started
    try:
        dask = _sweep(conditions, "dask", scheduler=client, batch_size=1 if smoke else None)
    finally:
        client.close()
        cluster.close()
    print(sweep.breakdown(dask), flush=True)
    ratio = dask.wall_s / local.wall_s
    print(
        f"Dask LocalCluster (2 workers) / local pool, wall: {ratio:.3f} (target <= "
        f"{1 + DASK_TARGET:.2f}: "
        f"{'met' if ratio <= 1 + DASK_TARGET else 'MISSED'}); starting the cluster took "
        f"{cluster_start:.1f} s more, not counted"
    )
    out.update(
        local_wall_s=local.wall_s,
        dask_wall_s=dask.wall_s,
        dask_over_local=ratio,
        cluster_start_s=cluster_start,
    )
    if reference and not smoke:
        single = _sweep(conditions, "unbatched", workers=2, batch_size=1, keep_kernels=False)
        print(sweep.breakdown(single), flush=True)
        print(
            "batched / one kernel per condition (the driver before), wall: "
            f"{local.wall_s / single.wall_s:.3f}"
        )
        out.update(
            unbatched_wall_s=single.wall_s, batched_over_unbatched=local.wall_s / single.wall_s
        )
    compute = sum(o.cells_s - o.setup_s for o in local if o.status != "cached")
    overhead = 1 - compute / (local.wall_s * local.workers)
    print(
        f"OLS/SDP sweep overhead on the local pool ({len(conditions)} conditions): "
        f"{100 * overhead:.1f} % of its capacity (target <= {100 * OVERHEAD_TARGET:g} %: "
        f"{'met' if overhead <= OVERHEAD_TARGET else 'MISSED'})"
    )
    out["overhead"] = overhead
    return out


@lru_cache(maxsize=None)
def _record_seconds(trajectory: str, run: int) -> float:
    from crane_lib.paths import recording_path
    from crane_lib.twin.dataset import stored_metadata

    meta = stored_metadata(recording_path(trajectory, run))
    if meta is None:
        raise SystemExit(
            f"no recording of {trajectory} execution {run}: build the data set first (python -m "
            "crane_lib.twin.dataset)"
        )
    return float(meta["record_duration_s"])


def fast_route_rates(conditions) -> dict | None:
    """The fast route's worker seconds per record second (median) on `conditions` and on every fast
    record of the build: whether the conditions measured are representative of the rest."""
    from crane_lib.identification import clie

    records = clie.load_records("fast")
    if not records:
        return None
    rate = {
        (r["trajectory"], round(float(r["ts"]) * 1e3), int(r["run"])): float(r["clie_wall_time_s"])
        / _record_seconds(r["trajectory"], int(r["run"]))
        for r in records
    }
    chosen = [
        rate[k]
        for k in ((c["trajectory"], round(float(c["ts"]) * 1e3), int(c["run"])) for c in conditions)
        if k in rate
    ]
    if not chosen:
        return None
    return {
        "chosen": float(np.median(chosen)),
        "all": float(np.median(list(rate.values()))),
        "n_chosen": len(chosen),
        "n_all": len(rate),
    }


def shortest_conditions(n: int) -> list[dict]:
    """The n conditions of the full faithful study whose records are the shortest (then in file
    order)."""
    from crane_book import sweep

    full = sweep.read_conditions("clie_faithful_full.csv")
    return sorted(full, key=lambda c: _record_seconds(c["trajectory"], c["run"]))[:n]


def faithful_extrapolation(outcomes) -> dict:
    """Worker seconds per record second of each faithful condition, extrapolated to the full
    profile's 160."""
    from crane_book import sweep
    from crane_lib.excitation.commands import commanded_duration, read_command_file
    from crane_lib.paths import TRAJECTORY_DIR, recording_path
    from crane_lib.twin.dataset import stored_metadata

    rates, ratios = [], []
    for o in outcomes:
        if o.status != "ran":
            continue
        meta = stored_metadata(recording_path(o.parameters["trajectory"], o.parameters["run"]))
        record_s = float(meta["record_duration_s"])
        rates.append(o.seconds / record_s)
        ratios.append(record_s / float(meta["commanded_duration_s"]))
    if not rates:
        return {}
    full = sweep.read_conditions("clie_faithful_full.csv")
    commanded = {
        t: commanded_duration(read_command_file(TRAJECTORY_DIR / f"{t}.txt"))
        for t in {c["trajectory"] for c in full}
    }
    record_total = sum(commanded[c["trajectory"]] for c in full) * float(np.median(ratios))
    worker_s = {q: record_total * float(np.quantile(rates, q)) for q in (0.0, 0.5, 1.0)}
    return {
        "conditions_measured": len(rates),
        "worker_s_per_record_s": {
            "min": min(rates),
            "median": float(np.median(rates)),
            "max": max(rates),
        },
        "record_s_full_profile": record_total,
        "worker_h_160": {k: v / 3600 for k, v in zip(("min", "median", "max"), worker_s.values())},
    }


def bench_faithful(shortest: int | None = None) -> dict:
    """Time the faithful CLIE route over its conditions (the `shortest` ones when given)."""
    from crane_book import pipeline, sweep
    from crane_lib.paths import recording_path

    conditions = (
        sweep.read_conditions("clie_faithful_quick.csv")
        if shortest is None
        else shortest_conditions(shortest)
    )
    missing = [c for c in conditions if not recording_path(c["trajectory"], c["run"]).exists()]
    if missing:
        raise SystemExit(
            f"the data set lacks {len(missing)} recordings: python -m crane_lib.twin.dataset "
            "--profile "
            f"{'quick' if shortest is None else 'full'}"
        )
    name = "clie_faithful_quick" if shortest is None else f"clie_faithful_shortest{shortest}"
    print(
        f"faithful study on {len(conditions)} conditions ({name}): "
        f"{sum(_record_seconds(c['trajectory'], c['run']) for c in conditions):.0f} s of records",
        flush=True,
    )
    cluster, client = _local_cluster(2)
    try:
        outcomes = sweep.run_sweep(
            pipeline.notebook_of("clie_faithful"),
            conditions,
            name,
            scheduler=client,
            inputs_of=lambda p: [recording_path(p["trajectory"], p["run"])],
        )
    finally:
        client.close()
        cluster.close()
    print(sweep.breakdown(outcomes))
    for o in outcomes:
        print(f"  {o.name}: {o.status}, {o.seconds:.0f} s {o.error}")
    estimate = faithful_extrapolation(outcomes)
    if estimate:
        h = estimate["worker_h_160"]
        print(
            f"faithful study, {estimate['conditions_measured']} conditions measured on a 2-worker "
            "LocalCluster "
            f"({os.cpu_count()} cores): {estimate['worker_s_per_record_s']['median']:.2f} worker-s "
            "per record-s (median; "
            f"{estimate['worker_s_per_record_s']['min']:.2f} to "
            f"{estimate['worker_s_per_record_s']['max']:.2f}); the 160 of the full "
            f"profile ({estimate['record_s_full_profile'] / 3600:.2f} h of records): "
            f"{h['median']:.1f} worker-hours "
            f"({h['min']:.1f} to {h['max']:.1f}), i.e. about {h['median'] / 2:.1f} h on these 2 "
            "workers, "
            f"{h['median'] / 16:.1f} h on 16"
        )
    check = fast_route_rates(conditions)
    if check:
        print(
            "  representative? the fast route's worker-s per record-s (median): "
            f"{check['chosen']:.3f} on these "
            f"{check['n_chosen']} conditions, {check['all']:.3f} on all {check['n_all']} fast "
            "records of this build "
            f"(ratio {check['all'] / check['chosen']:.2f})"
        )
    return {
        "wall_s": outcomes.wall_s,
        "outcomes": [o.__dict__ for o in outcomes],
        "extrapolation": estimate,
        "fast_route_check": check,
    }


def main(argv=None) -> int:
    """Run the sweep benchmarks and print their ratios."""
    from benchmarks._smoke import add_smoke_argument, isolated, smoke_recordings
    from crane_lib.paths import RESULTS_DIR

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--faithful",
        action="store_true",
        help="also run the faithful CLIE study on 20 conditions (hours on 2 cores)",
    )
    parser.add_argument("--faithful-only", action="store_true", help="only the faithful study")
    parser.add_argument(
        "--faithful-shortest",
        type=int,
        metavar="N",
        help="the faithful study on the N shortest conditions of the full profile instead (full "
        "data set)",
    )
    parser.add_argument(
        "--executors-profile",
        choices=("quick", "full"),
        default="quick",
        help="the OLS/SDP sweep the executors run: the quick profile's 16 conditions (default, "
        "with the "
        "unbatched reference) or the full profile's 160, the main job's sweep (full data set; no "
        "reference)",
    )
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    if args.faithful_shortest is not None and (
        args.faithful_shortest < 1 or not (args.faithful or args.faithful_only)
    ):
        parser.error(
            "--faithful-shortest N: N >= 1, with --faithful or --faithful-only"
        )  # exit 2, nothing run
    if args.executors_profile != "quick" and (args.smoke or args.faithful_only):
        parser.error(
            f"--executors-profile {args.executors_profile}: the executors do not run with --smoke "
            "or --faithful-only"
        )
    if args.smoke and (code := isolated("benchmarks.bench_sweep", ["--smoke"])) is not None:
        return code
    summary = {}
    if args.smoke:
        smoke_recordings(("SMOKE01",))
        conditions = [{"trajectory": "SMOKE01", "ts": 0.08, "run": 1}]
    else:
        from crane_book import sweep
        from crane_lib.paths import recording_path

        conditions = sweep.read_conditions(f"ols_sdp_{args.executors_profile}.csv")
        missing = next(
            (
                recording_path(c["trajectory"], c["run"])
                for c in conditions
                if not recording_path(c["trajectory"], c["run"]).is_file()
            ),
            None,
        )
        if (
            missing is not None and not args.faithful_only
        ):  # before any work: a sweep of failing conditions measures nothing
            parser.error(
                f"{missing}: no recording; build the {args.executors_profile} data set first "
                f"(python -m crane_lib.twin.dataset --profile {args.executors_profile})"
            )
    if not args.faithful_only:
        summary["executors"] = bench_executors(
            conditions, args.smoke, reference=args.executors_profile == "quick"
        )
    if (args.faithful or args.faithful_only) and not args.smoke:
        summary["faithful"] = bench_faithful(args.faithful_shortest)
    out = RESULTS_DIR / "benchmarks" / "bench_sweep.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1, default=str), encoding="utf-8")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
