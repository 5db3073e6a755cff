"""Benchmarks of the dynamic model (issue: foundation).

1. Symbolic derivation, grouping and code generation of the four base sets: cold (empty cache,
   `make model`) against the cached load; with CRANE_BENCH_SYMPYBOTICS=<checkout> SymPyBotics
   building the same arm in the same run (its code is not part of this project).
2. M(theta) and its smallest eigenvalue over the 221,875 poses of the audit (Sec. VI-E, seed 1):
   ours against a loop of Pinocchio crba + numpy eigvalsh on the same poses; peak memory.
3. Regressor rows per second for a 128 s record at 1 ms, against a loop of Pinocchio's
   computeJointTorqueRegressor on the same states.

`--smoke`: the cached load only (no cold generation), 2,000 audit poses, a 2 s record.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

RECORD_SAMPLES = 128_000
SMOKE_RECORD_SAMPLES = 2_000
SMOKE_POSES = 2_000


def _timed_subprocess(command: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU of the child and its children) seconds of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# SymPyBotics building the same arm's model, code and base parameters (its checkout is not part of
# this project: CRANE_BENCH_SYMPYBOTICS=/path/to/SymPyBotics measures it in the same run)
SYMPYBOTICS = """
import sys, numpy, sympy
numpy.mat = getattr(numpy, "mat", numpy.asmatrix)  # SymPyBotics predates NumPy 2, which removed the alias
sys.path.insert(0, {path!r})
import sympybotics
rows = [(r.alpha, r.d, r.r) for r in __import__("crane_lib.model.robot_description", fromlist=["x"]).load_mdh_table()]
rbtdef = sympybotics.RobotDef("CRANE-X7", [(sympy.nsimplify(a), float(d), float(r), "q") for a, d, r in rows], dh_convention="modified")
rbtdef.frictionmodel = {{"Coulomb", "viscous"}}
rbtdef.driveinertiamodel = "simplified"
rbtdef.gravityacc = sympy.Matrix([0.0, 0.0, 9.80665])
rbt = sympybotics.RobotDynCode(rbtdef, verbose=False)
rbt.calc_base_parms()
"""


def bench_generation(smoke: bool = False) -> None:
    """Cold: `python -m crane_lib.model.dynamics` (make model) with an empty cache: the symbolic model,
    the grouping of all base sets and the compiled kernels of the four sets; then the same cached."""
    make_model = [sys.executable, "-m", "crane_lib.model.dynamics"]
    load = [sys.executable, "-c", "from crane_lib.model.dynamics import DynamicModel; import numpy as np; m = DynamicModel('reduced'); "
            "z = np.zeros((1, 8)); m.regressor(z, z, z); m.arm_min_eigenvalue(z, np.ones(39))"]
    if smoke:
        wall, cpu = _timed_subprocess(load, dict(os.environ))
        print(f"cached load of the reduced model in a fresh process: {wall:7.2f} s wall, {cpu:.2f} s CPU (smoke: no cold generation)")
        return
    symbolic_only = [sys.executable, "-c", "from crane_lib.model import base_parameters; base_parameters.grouping(None)"]
    with tempfile.TemporaryDirectory() as cache:
        symbolic = _timed_subprocess(symbolic_only, dict(os.environ, CRANE_CACHE_DIR=cache))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, CRANE_CACHE_DIR=cache)
        cold = _timed_subprocess(make_model, env)
        warm = _timed_subprocess(load, env)
    print(f"symbolic model + base-parameter grouping of every set, cold:   {symbolic[0]:7.2f} s wall, {symbolic[1]:7.2f} s CPU "
          "(what SymPyBotics computes)")
    print(f"model + grouping + kernels of the four sets, cold (make model): {cold[0]:7.2f} s wall, {cold[1]:7.2f} s CPU")
    print(f"cached load of the reduced model in a fresh process:          {warm[0]:7.2f} s wall, {warm[1]:7.2f} s CPU "
          f"(target <= 1 s; cold/cached = {cold[0] / warm[0]:.0f}x)")
    path = os.environ.get("CRANE_BENCH_SYMPYBOTICS")
    if path:
        reference = _timed_subprocess([sys.executable, "-c", SYMPYBOTICS.format(path=path)], dict(os.environ))
        print(f"SymPyBotics, same arm's model, code and base parameters:       {reference[0]:7.2f} s wall, {reference[1]:7.2f} s CPU; "
              f"ours / SymPyBotics: symbolic part {symbolic[0] / reference[0]:.2f}, with the compiled kernels "
              f"{cold[0] / reference[0]:.2f} (wall)")


def bench_audit_scale(smoke: bool = False) -> None:
    """M and its smallest eigenvalue at the 221,875 poses of the audit (seed 1)."""
    from benchmarks._reference import pinocchio_lambda_min, product_free_arm
    from crane_lib.acceptance import audit
    from crane_lib.model.dynamics import DynamicModel

    links, phi, beta = product_free_arm()
    model = DynamicModel("reduced")
    poses = audit.audit_poses(1).poses
    if smoke:
        poses = poses[:SMOKE_POSES]
    model.arm_min_eigenvalue(poses[:10], beta)  # compile / load outside the timing
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    for _ in range(3):
        start = time.perf_counter()
        ours = model.arm_min_eigenvalue(poses, beta)
        times.append(time.perf_counter() - start)
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reference, pin_time = pinocchio_lambda_min(links, phi, poses)
    ours_time = min(times)
    print(f"M + lambda_min over {len(poses):,} audit poses: ours {ours_time:.3f} s (best of 3, {os.cpu_count()} cores), "
          f"Pinocchio crba + eigvalsh loop {pin_time:.3f} s: {pin_time / ours_time:.1f}x faster")
    print(f"  agreement: max |lambda_ours - lambda_pinocchio| = {np.abs(ours - reference).max():.2e} kg·m^2")
    print(f"  peak resident memory of this process: {rss_after / 1024:.0f} MB (before the evaluation: {rss_before / 1024:.0f} MB)")


def bench_regressor(smoke: bool = False) -> None:
    import pinocchio as pin

    from crane_lib.model.dynamics import DynamicModel
    from tests.conftest import pinocchio_arm, random_link_inertials

    samples = SMOKE_RECORD_SAMPLES if smoke else RECORD_SAMPLES
    rng = np.random.default_rng(2)
    t = np.arange(samples) * 1e-3
    freqs = rng.uniform(0.05, 0.5, 8)
    q = np.sin(2 * np.pi * np.outer(t, freqs))
    qd = 2 * np.pi * freqs * np.cos(2 * np.pi * np.outer(t, freqs))
    qdd = -((2 * np.pi * freqs) ** 2) * q
    model = DynamicModel("reduced")
    model.regressor(q[:10], qd[:10], qdd[:10])
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        model.regressor(q, qd, qdd)  # includes input checks, trig and a fresh (n, 8, 39) output
        timings.append(time.perf_counter() - start)
    ours = min(timings)
    arm = pinocchio_arm(random_link_inertials(rng), 9.80665)
    data = arm.createData()
    n_ref = min(20_000, samples)
    start = time.perf_counter()
    for i in range(n_ref):
        pin.computeJointTorqueRegressor(arm, data, q[i, :7], qd[i, :7], qdd[i, :7])
    ref = (time.perf_counter() - start) * samples / n_ref
    rows = samples * 8
    print(f"regressor of a {samples / 1e3:g} s record at 1 ms ({rows:,} rows x 39): ours {ours:.3f} s = {rows / ours / 1e6:.2f} M rows/s; "
          f"Pinocchio computeJointTorqueRegressor loop (70 standard columns, timed on {n_ref:,} samples) {ref:.2f} s: ours {ref / ours:.1f}x faster")


def main(argv=None) -> int:
    import argparse

    from benchmarks._smoke import add_smoke_argument, isolated

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    if args.smoke and (code := isolated("benchmarks.bench_model", ["--smoke"])) is not None:
        return code
    bench_generation(args.smoke)
    bench_audit_scale(args.smoke)
    bench_regressor(args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
