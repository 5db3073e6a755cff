"""Benchmark of the Kt study: per-axis Kt draws on the accepted condition, each an OLS,
the routing test, the dense all-pose audit over Theta and the held-out MNE.

Target: 200 draws in at most 5 minutes on 2 cores. Measured against a named reference in the same
run: the plain path, which per draw rebuilds the regressor and its QR from the scaled bundle
(`identification.ols`), runs the routing test and audits with `acceptance.audit.audit` (every
pose's eigenvalues). The study path (`acceptance.kt_sensitivity`) reuses the regressor's QR and the
held-out regressors and audits through `acceptance.screen`. Both give the same estimate and the
same audit answer (checked here on every reference draw).

    python -m benchmarks.bench_kt            # AG02 run 1 at 40 ms (needs the quick data set), 200
                                             # draws
    python -m benchmarks.bench_kt --smoke    # a synthetic record and the sparse pose set, seconds

Wall and CPU seconds are printed with the load average: on a shared machine wall time overstates
the cost, and CPU seconds / 2 is what 2 free cores would take.
"""

from __future__ import annotations

import argparse
import os
import time
from types import SimpleNamespace

import numpy as np


def _synthetic(n: int, seed: int):
    from crane_lib.model.dynamics import model
    from tests.conftest import description_model_beta

    beta = description_model_beta(viscous=0.1)
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 0.04
    w = 2 * np.pi * rng.uniform(0.05, 0.3, 8)
    amp = np.deg2rad(rng.uniform(30, 70, 8))
    theta = amp * np.sin(np.outer(t, w))
    dtheta, ddtheta = amp * w * np.cos(np.outer(t, w)), -amp * w**2 * np.sin(np.outer(t, w))
    tau = model("reduced").inverse_dynamics(theta, dtheta, ddtheta, beta) + rng.normal(
        0, 0.02, (n, 8)
    )
    return SimpleNamespace(
        ts=0.04, t=t, theta=theta, dtheta=dtheta, ddtheta=ddtheta, tau=tau, provenance={}
    ), beta


def _clock():
    return time.perf_counter(), time.process_time()


def _since(start) -> tuple[float, float]:
    wall, cpu = _clock()
    return wall - start[0], cpu - start[1]


def main(argv=None) -> int:
    """Time one Kt draw's refit and audit and print the result."""
    from benchmarks._smoke import add_smoke_argument
    from crane_lib.acceptance import audit
    from crane_lib.acceptance import kt_sensitivity as kt
    from crane_lib.identification import condition as identify
    from crane_lib.identification.ols import ols, stack

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_smoke_argument(parser, "synthetic record, sparse pose set, 3 draws: seconds")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--reference-draws", type=int, default=3)
    args = parser.parse_args(argv)
    draws = 3 if args.smoke else args.draws
    reference_draws = 1 if args.smoke else args.reference_draws

    start = _clock()
    if args.smoke:
        bundle, truth = _synthetic(1200, 1)
        heldout = {f"H{i}": _synthetic(400, 10 + i)[0] for i in range(3)}
        kind = "sparse"
        study = kt.prepare_study(
            bundle, heldout, audit.sparse_audit_poses(1), truth, trajectory="synthetic"
        )
    else:
        kind = "dense"
        study = kt.kt_study("AG02", 0.040, 1)
        bundle = identify.condition_bundle("AG02", 0.040, 1)
    setup = _since(start)

    start = _clock()
    records = [kt.evaluate(study, kt.draw_factors(seed), seed) for seed in range(1, draws + 1)]
    ours = _since(start)

    def plain_path(seed):
        """OLS from the scaled bundle (regressor and QR rebuilt), the routing test, the full
        audit."""
        model = study.model
        tau = np.asarray(bundle.tau) * kt.draw_factors(seed)
        fit = ols(
            *stack(model.regressor(bundle.theta, bundle.dtheta, bundle.ddtheta), tau), model.names
        )
        model.arm_min_eigenvalue(bundle.theta, fit.parameters.values).min()
        return fit, audit.audit(fit.parameters.values, 1, kind, model)

    plain_path(
        0
    )  # first calls (compilation, caches) outside the timing, as the study's setup is for ours
    start = _clock()
    for seed in range(1, reference_draws + 1):
        result, plain = plain_path(seed)
        record = records[seed - 1]
        assert np.allclose(result.parameters.values, record["ols"], rtol=1e-10, atol=1e-14)
        assert (plain.passed, plain.lambda_min, plain.n_violations) == (
            record["audit"]["passed"],
            record["audit"]["lambda_min"],
            record["audit"]["n_violations"],
        )
    reference = _since(start)

    per_ours = [x / draws for x in ours]
    per_reference = [x / reference_draws for x in reference]
    load = os.getloadavg()[0]
    print(
        f"Kt draws on {study.trajectory} ({study.n_samples} samples, {kind} audit of "
        f"{len(study.poses):,} poses), "
        f"{os.cpu_count()} cores, load average {load:.1f}"
    )
    print(
        "  study setup (regressor, QR, held-out regressors, unperturbed audit): wall "
        f"{setup[0]:.1f} s, CPU {setup[1]:.1f} s"
    )
    print(
        f"  {draws} draws, this book's path: wall {ours[0]:.1f} s, CPU {ours[1]:.1f} s "
        f"({per_ours[0]:.3f} s wall, {per_ours[1]:.3f} s CPU per draw)"
    )
    print(
        f"  reference, regressor + QR + full audit per draw ({reference_draws} draws): "
        f"{per_reference[0]:.3f} s wall, "
        f"{per_reference[1]:.3f} s CPU per draw; same estimates and audit answers"
    )
    print(
        f"  ratio (reference / ours, per draw): wall {per_reference[0] / per_ours[0]:.1f}x, CPU "
        f"{per_reference[1] / per_ours[1]:.1f}x"
    )
    if not args.smoke:
        print(
            "  200 draws projected on 2 free cores (CPU / 2, setup once): "
            f"{(setup[1] + 200 * per_ours[1]) / 2:.0f} s "
            f"(target 300 s); the reference path: {(setup[1] + 200 * per_reference[1]) / 2:.0f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
