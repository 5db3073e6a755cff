"""CLIE speed: one closed-loop simulation of a 128 s record at 0.25 ms (target <= 2 s),
and CLIE of AG02 at 40 ms by the faithful finite-difference route and the fast route
(target: fast >= 10x faster, objective within 0.5 %), with DIDIM beside them.

Run from the repository root: `.venv/bin/python -m benchmarks.bench_clie [--skip-faithful]`.

Records: the twin's quick data set (results/recordings, `python -m crane_lib.twin.dataset quick`).
The 128 s record is PB01 (129.1 s, the longest quick record). The reference measured in the
same run is the same closed loop written in numpy (RealizationController + the vectorized
DynamicModel.direct_dynamics, same Heun steps) on the first 0.5 s, scaled to the record.
Every stage is scored on V01-V03 at 40 ms with crane_lib.identification.metrics (pooled RMSE, mean MNE).

`--smoke`: two few-seconds command files recorded on the twin stand in for PB01/AG02 and for
V01-V03; the fast route and DIDIM run two iterations each, the faithful route (81 simulations
per iteration) is left out as with --skip-faithful.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crane_lib.constants import KT  # noqa: E402
from crane_lib.identification import clie, metrics  # noqa: E402
from crane_lib.identification.condition import identify_condition  # noqa: E402
from crane_lib.logs.preprocessing import preprocess  # noqa: E402
from crane_lib.logs.raw_log import read_raw_log  # noqa: E402
from crane_lib.model.controller import RealizationController  # noqa: E402
from crane_lib.model.dynamics import model as dynamic_model  # noqa: E402
from crane_lib.paths import RESULTS_DIR  # noqa: E402

RECORDINGS = RESULTS_DIR / "recordings"
SIMULATION_TARGET_S = 2.0
SPEEDUP_TARGET = 10.0
OBJECTIVE_TOLERANCE = 0.005
REFERENCE_SPAN_S = 0.5


def numpy_reference(problem: clie.CLIEProblem, beta: np.ndarray, span_s: float) -> float:
    """Seconds per simulated second of the same loop in numpy (vectorized per call, looped per step)."""
    model = problem.model
    law = RealizationController(problem.constants)
    law._arguments = problem.law_arguments()
    law.reset(problem.theta_start)
    law.integral[:] = problem.integral_start
    q, v = problem.theta_start.copy(), np.zeros(8)
    n = int(np.searchsorted(problem.t, problem.t[0] + span_s))
    start = time.perf_counter()
    for k in range(n):
        units = law.step(problem.theta_ref[k], problem.dtheta_ref[k], problem.ddtheta_ref[k], q, problem.t[k] - problem.t[k - 1] if k else 1e-3)
        tau = units * clie.SIMULATED_CURRENT_RESOLUTION_A * KT
        span = problem.t[k + 1] - problem.t[k]
        steps = max(1, int(np.ceil(span / problem.max_step - 1e-9)))
        h = span / steps
        for _ in range(steps):
            a1 = model.direct_dynamics(q[None], v[None], tau[None], beta)[0]
            qp, vp = q + h * v, v + h * a1
            a2 = model.direct_dynamics(qp[None], vp[None], tau[None], beta)[0]
            q, v = q + 0.5 * h * (v + vp), v + 0.5 * h * (a1 + a2)
    return (time.perf_counter() - start) / (problem.t[n] - problem.t[0])


def start_point(log_path: Path, trajectory: str):
    log = read_raw_log(log_path)
    condition = identify_condition(preprocess(log, clie.RESIDUAL_INTERVAL_S), trajectory)
    return log, condition


def main(argv=None) -> int:
    from benchmarks._smoke import add_smoke_argument, isolated, smoke_recordings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-faithful", action="store_true", help="run the fast route and DIDIM only")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "benchmarks" / "bench_clie.json")
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    if args.smoke and (code := isolated("benchmarks.bench_clie", ["--smoke"] + (["--skip-faithful"] if args.skip_faithful else []))) is not None:
        return code
    model = dynamic_model("reduced")
    summary: dict = {}
    if args.smoke:
        smoke = smoke_recordings(("SMOKE01", "SMOKE02"))
        long_record, identification, heldout = ("SMOKE01", smoke["SMOKE01"]), ("SMOKE01", smoke["SMOKE01"]), [smoke["SMOKE02"]]
        iterations = {"fast": 2, "didim": 2}
        args.skip_faithful = True
    else:
        long_record, identification = ("PB01", RECORDINGS / "PB01_run1.npz"), ("AG02", RECORDINGS / "AG02_run1.npz")
        heldout = [RECORDINGS / f"{name}_run1.npz" for name in ("V01", "V02", "V03")]
        iterations = {"fast": clie.MAX_ITERATIONS, "didim": 30, "clie": clie.MAX_ITERATIONS}

    # 1. one closed-loop simulation of a 128 s record
    log = read_raw_log(long_record[1])
    problem = clie.build_problem(log)
    _, condition = start_point(long_record[1], long_record[0])
    beta = condition.start.values
    problem.simulate(beta)  # compile or load the numba cache
    times = []
    for _ in range(3):
        started = time.perf_counter()
        simulation = problem.simulate(beta)
        times.append(time.perf_counter() - started)
    record_s = float(problem.t[-1] - problem.t[0])
    reference_span_s = 0.05 if args.smoke else REFERENCE_SPAN_S
    per_second = numpy_reference(problem, beta, reference_span_s)
    summary["simulation"] = {
        "record": long_record[1].stem, "record_s": record_s, "cycles": int(problem.t.size), "ok": simulation.ok,
        "best_s": min(times), "target_s": SIMULATION_TARGET_S,
        "numpy_reference_s_scaled": per_second * record_s, "speedup_vs_numpy": per_second * record_s / min(times),
    }
    print(f"closed-loop simulation of {record_s:.1f} s ({problem.t.size} stamps, 0.25 ms Heun): best {min(times):.2f} s "
          f"(target {SIMULATION_TARGET_S} s); numpy loop scaled from {reference_span_s} s: {per_second * record_s:.0f} s "
          f"({per_second * record_s / min(times):.0f}x)", flush=True)

    # 2. CLIE of AG02 at 40 ms from its OLS/SDP start
    log, condition = start_point(identification[1], identification[0])
    problem = clie.build_problem(log)
    x0 = condition.start.values
    validation = [preprocess(read_raw_log(path), clie.RESIDUAL_INTERVAL_S) for path in heldout]

    def score(x):
        return {"pooled_rmse": metrics.pooled_rmse(model, x, validation),
                "mean_mne": float(np.mean([metrics.prediction_error(model, x, b).mne for b in validation]))}

    summary["AG02"] = {"route": condition.route, "start": {"objective": problem.objective(x0), **score(x0)}}
    runs = {"fast": lambda: clie.refine_fast(problem, x0, max_iterations=iterations["fast"]),
            "didim": lambda: clie.didim(problem, max_iterations=iterations["didim"])}
    if not args.skip_faithful:
        runs["clie"] = lambda: clie.refine_faithful(problem, x0, max_iterations=iterations["clie"])
    for name, run in runs.items():
        cpu_started = time.process_time()  # every thread of the process: the faithful route uses two
        report = run()
        entry = {k: v for k, v in report.as_dict().items() if k not in ("x", "names")}
        entry["cpu_s"] = time.process_time() - cpu_started
        entry.update(score(report.x))
        summary["AG02"][name] = entry
        print(f"{identification[0]} 40 ms {name:6s}: objective {report.objective_start:.4g} -> {report.objective_final:.6g}, "
              f"{report.iterations} iterations, {report.simulations} simulations, {report.wall_time_s:.1f} s, "
              f"held-out RMSE {entry['pooled_rmse']:.5f} N·m ({report.message})", flush=True)
    if "clie" in summary["AG02"]:
        faithful, fast = summary["AG02"]["clie"], summary["AG02"]["fast"]
        ratio = faithful["wall_time_s"] / fast["wall_time_s"]
        cpu_ratio = faithful["cpu_s"] / fast["cpu_s"]
        simulation_ratio = faithful["simulations"] / fast["simulations"]
        gap = (fast["objective_final"] - faithful["objective_final"]) / faithful["objective_final"]
        summary["AG02"]["comparison"] = {"speedup": ratio, "cpu_speedup": cpu_ratio, "simulation_ratio": simulation_ratio,
                                         "objective_gap": gap, "speedup_target": SPEEDUP_TARGET,
                                         "objective_tolerance": OBJECTIVE_TOLERANCE}
        # the faithful route runs its Jacobian columns on two threads, the fast route is sequential:
        # wall time on 2 cores and CPU time answer different questions, so both are printed
        print(f"fast vs faithful: {ratio:.1f}x faster in wall time on 2 cores, {cpu_ratio:.1f}x in CPU time, "
              f"{simulation_ratio:.1f}x fewer closed-loop simulations (target {SPEEDUP_TARGET:g}x), objective "
              f"{100 * gap:+.3f} % (tolerance {100 * OBJECTIVE_TOLERANCE:g} %)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=1, default=float), encoding="utf-8")
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
