"""Benchmarks of the audit.

1. One dense audit of 221,875 poses (pose construction + M + lambda_min + bookkeeping), against
   a loop of Pinocchio crba + numpy eigvalsh over the same poses, in the same run.
2. The rescue from 2,128 configurations with its enrichment loop (paper: 255 s).
3. The certified check: time and boxes over the whole of Theta at margins 0 and 5e-4 kg·m^2
   (the audit's violation threshold eps/2) for an accepted-like model (the description's
   wrist pushed non-PD, rescued at eps = 1e-3), under a time budget (CRANE_BENCH_CERTIFY_S,
   default 600 s) reporting "undecided" honestly if it runs out; against the earlier Taylor
   bound in the same run, on a +-30 deg box and on Theta (120 s). Run with
   NUMBA_NUM_THREADS=1 for single-core numbers.

`--dense [--out FILE]`: only part 1, and its JSON (one of the build's targets: `python -m
benchmarks --targets`). An --out that cannot be written is refused before any measurement.

`--machine [--out FILE]`: only Pinocchio's loop of part 1, and its JSON: how fast this machine
runs code the project does not touch, against the same loop in the idle targets run
(IDLE_PINOCCHIO_S). A targets run measures it first; with part 1's loop at its end, its table
says how fast the machine ran while its times were taken.

`--smoke`: the audit on 2,000 of its poses, the rescue from 64 configurations checked on 2,000,
the certified check on a +-5 deg box only (Bernstein; the earlier Taylor bound, about 20 s for one
box, is left to tests/test_certified.py); no run over Theta.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

SMOKE_POSES = 2_000
SMOKE_RESCUE_POSES = 64
DENSE_RATIO_TARGET = 20.0
# Pinocchio's loop over the dense audit's 221,875 seed-1 poses in the targets run at commit
# 9de7f17, on a 2-core machine otherwise idle, where every time target was met: the reference a
# targets run states this machine's speed against
IDLE_PINOCCHIO_S = 2.81
IDLE_PINOCCHIO_POSES = 221_875


def dense_poses(seed: int, smoke: bool = False):
    """The dense audit's poses of `seed` (smoke: SMOKE_POSES of them, all three components)."""
    from crane_lib.acceptance import audit

    full = audit.audit_poses(seed)
    if not smoke:
        return full
    every = np.linspace(0, len(full) - 1, SMOKE_POSES).astype(int)
    return audit.PoseSet(
        full.poses[every], full.component[every], full.names, full.seed, full.domain
    )


def machine_reference(smoke: bool = False) -> dict:
    """Seconds of Pinocchio's crba + eigvalsh loop over the dense audit's seed-1 poses now, and
    their ratio to the idle targets run's (full size only): how fast this machine runs code the
    project does not touch."""
    from benchmarks._reference import pinocchio_lambda_min, product_free_arm

    links, phi, _ = product_free_arm()
    poses = dense_poses(1, smoke).poses
    _, seconds = pinocchio_lambda_min(links, phi, poses)
    full = len(poses) == IDLE_PINOCCHIO_POSES
    print(
        f"Pinocchio crba + eigvalsh loop over {len(poses):,} poses: {seconds:.2f} s"
        + (f", {seconds / IDLE_PINOCCHIO_S:.1f}x the idle targets run's" if full else "")
    )
    return {
        "poses": len(poses),
        "pinocchio_s": seconds,
        "idle_pinocchio_s": IDLE_PINOCCHIO_S if full else None,
    }


def bench_audit(smoke: bool = False) -> dict:
    """Seconds of the dense audit (best of seeds 1-3) against Pinocchio's loop on seed 1."""
    from benchmarks._reference import pinocchio_lambda_min, product_free_arm
    from crane_lib.acceptance import audit
    from crane_lib.model.dynamics import DynamicModel

    links, phi, beta = product_free_arm()
    model = DynamicModel("reduced")

    audit.audit_pose_set(beta, dense_poses(1, smoke), model)  # compile / load outside the timing
    times = []
    for seed in (1, 2, 3):
        start = time.perf_counter()
        result = audit.audit_pose_set(
            beta, dense_poses(seed, smoke), model
        )  # = audit.audit(beta, seed) at full size
        times.append(time.perf_counter() - start)
    ours = min(times)
    poses = dense_poses(1, smoke).poses
    reference, pin_time = pinocchio_lambda_min(links, phi, poses)
    agreement = np.abs(audit.arm_lambda_min(beta, poses, model) - reference).max()
    print(
        f"dense audit of {result.n_poses:,} poses (construction included): {ours:.3f} s (best of 3 "
        f"seeds, {os.cpu_count()} cores); "
        f"Pinocchio crba + eigvalsh loop {pin_time:.2f} s: {pin_time / ours:.1f}x faster "
        f"(target >= {DENSE_RATIO_TARGET:g}x); max |difference| {agreement:.1e} kg·m^2"
    )
    return {
        "poses": result.n_poses,
        "ours_s": ours,
        "ours_seeds_s": times,
        "pinocchio_s": pin_time,
        "ratio": pin_time / ours,
        "ratio_target": DENSE_RATIO_TARGET,
        "max_difference": float(agreement),
    }


def bench_certified(smoke: bool = False) -> None:
    """Time and boxes of the certified check over all of Theta, Bernstein bound against the earlier
    Taylor bound."""
    import numba

    from crane_lib.acceptance import audit, certified
    from crane_lib.acceptance import rescue as rescue_stage
    from crane_lib.model.dynamics import DynamicModel
    from tests.audit_cases import description_beta

    model = DynamicModel("reduced")
    threads = numba.get_num_threads()
    # the accepted-like model: the description's wrist pushed non-PD, rescued at eps = 1e-3
    pushed = description_beta().copy()
    pushed[model.names.index("ZZR6")] -= 0.0058
    if smoke:
        accepted = rescue_stage.rescue(
            model,
            pushed,
            audit.uniform_poses(SMOKE_RESCUE_POSES, rescue_stage.RESCUE_INITIAL_SEED),
            audit.uniform_poses(SMOKE_POSES, rescue_stage.RESCUE_CHECK_SEED),
            epsilon=1e-3,
            max_passes=2,
        ).result.parameters.values
    else:
        accepted = rescue_stage.rescue_over_theta(
            model, pushed, epsilon=1e-3
        ).result.parameters.values
    lam = audit.audit(accepted, seed=1, model=model).lambda_min
    print(
        f"certified check on the rescued (eps 1e-3) model, audit lambda_min {lam:.3g} kg·m^2 (seed "
        f"1); numba threads {threads}"
    )
    certified.certify(accepted, 0.0, model=model, max_boxes=10)  # compile outside the timing
    # the earlier bound against the new one on a +-30 deg box around a folded pose (margin 1e-3)
    beta = description_beta()
    half = 5 if smoke else 30
    centre = np.deg2rad([0.0, 60.0, 30.0, -120.0, 45.0, 70.0, 10.0])
    box = audit.intersect_boxes(
        np.column_stack([centre - np.deg2rad(half), centre + np.deg2rad(half)]),
        audit.audit_domain(),
    )
    new = certified.certify(beta, margin=1e-3, box=box)
    print(f"  +-{half} deg box, description model, margin 1e-3: Bernstein {new.summary()}")
    if smoke:
        # one Taylor box takes about 20 s whatever its budget; tests/test_certified.py runs it
        print("  the earlier Taylor bound: not in smoke mode")
        return
    old = certified.certify(beta, margin=1e-3, box=box, method="taylor", time_limit_s=120)
    print(f"  +-{half} deg box, description model, margin 1e-3: Taylor    {old.summary()}")
    budget = float(os.environ.get("CRANE_BENCH_CERTIFY_S", "600"))
    for margin in (0.0, 5e-4):
        result = certified.certify(accepted, margin, model=model, time_limit_s=budget)
        print(f"  all of Theta, margin {margin:g}, budget {budget:.0f} s: {result.summary()}")
    old = certified.certify(
        accepted, 0.0, model=model, method="taylor", time_limit_s=min(budget, 120.0)
    )
    print(f"  all of Theta, margin 0, earlier Taylor bound: {old.summary()}")


def bench_rescue(smoke: bool = False) -> None:
    """The rescue from 2,128 configurations (2,000 uniform + 128 corners) with its enrichment
    loop."""
    from crane_lib.acceptance import rescue as rescue_stage
    from crane_lib.model.dynamics import DynamicModel
    from tests.audit_cases import description_beta

    model = DynamicModel("reduced")
    beta = description_beta().copy()
    beta[model.names.index("ZZR6")] -= 0.0058  # the wrist loses PD over much of Theta
    start = time.perf_counter()
    if smoke:  # the same loop from a few uniform configurations, checked on 2,000
        from crane_lib.acceptance import audit

        outcome = rescue_stage.rescue(
            model,
            beta,
            audit.uniform_poses(SMOKE_RESCUE_POSES, rescue_stage.RESCUE_INITIAL_SEED),
            audit.uniform_poses(SMOKE_POSES, rescue_stage.RESCUE_CHECK_SEED),
            max_passes=2,
        )
    else:
        outcome = rescue_stage.rescue_over_theta(model, beta)
    seconds = time.perf_counter() - start
    passes = "; ".join(
        f"pass {p['pass']}: {p['violators']} violators, {p['appended']} appended"
        for p in outcome.passes
    )
    print(
        f"rescue from {SMOKE_RESCUE_POSES if smoke else '2,128'} configurations: {seconds:.1f} s, "
        f"converged {outcome.converged} ({passes}), "
        f"status {outcome.result.status}, |change| {outcome.result.change_norm:.2e}"
    )


def main(argv=None) -> int:
    """Time the audit against Pinocchio's loop and print the ratios."""
    from benchmarks._out import json_out
    from benchmarks._smoke import add_smoke_argument, isolated

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_smoke_argument(parser)
    parser.add_argument(
        "--dense", action="store_true", help="only the dense audit and its reference"
    )
    parser.add_argument(
        "--machine",
        action="store_true",
        help="only Pinocchio's loop over the dense audit's poses: this machine's speed now",
    )
    parser.add_argument("--out", type=Path, help="write the dense audit's (or --machine's) JSON")
    args = parser.parse_args(argv)
    if args.dense and args.machine:
        parser.error("--dense and --machine: one of them (--dense times Pinocchio's loop too)")
    argv = sys.argv[1:] if argv is None else list(argv)
    if args.smoke and (code := isolated("benchmarks.bench_audit", argv)) is not None:
        return code
    with json_out(parser, args.out) as write:  # checked first: a bad --out measures nothing
        write(machine_reference(args.smoke) if args.machine else bench_audit(args.smoke))
    if args.machine or args.dense:
        return 0
    bench_rescue(args.smoke)
    bench_certified(args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
