"""Benchmarks of the dynamic model (issue: foundation).

1. Symbolic derivation, grouping and code generation of the four base sets: cold (empty cache,
   `make model`) against the cached load; with CRANE_BENCH_SYMPYBOTICS=<checkout> SymPyBotics
   building the same arm in the same run (its code is not part of this project).
2. M(theta) and its smallest eigenvalue over the 221,875 poses of the audit (Sec. VI-E, seed 1):
   ours against a loop of Pinocchio crba + numpy eigvalsh on the same poses; peak memory.
3. Regressor rows per second for a 128 s record at 1 ms, against a loop of Pinocchio's
   computeJointTorqueRegressor on the same states.

4. Every arm (crane_x7, vx300s, so101): the model generation from a cold cache (derivation,
   grouping, code generation, numba compile, in a fresh process with a temporary cache) beside
   Pinocchio building the same description's model plus computeJointTorqueRegressor over the
   same samples (also a fresh process); then the per-sample regressor evaluation, cached kernels
   against Pinocchio's regressor.

`--cached-load [--out FILE]`: only the cached load, best of three fresh processes, and its JSON
(one of the build's targets: `python -m benchmarks --targets`). A temporary file beside FILE is
created and removed before the measurement: an --out that cannot be written is refused in one
line, exit status 2, before any work; FILE appears whole, or not at all.

`--smoke`: the cached load only (no cold generation), 2,000 audit poses, a 2 s record; of the
arms only the SO-101, its kernels generated cold without the numba compile and evaluated by the
uncompiled Python kernel on a few samples.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
# a script run in SymPyBotics' own process, verbatim
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
"""  # noqa: E501


CACHED_LOAD_TARGET_S = 1.0
# a fresh process that loads the reduced model from the cache and evaluates both kernels once
LOAD = [
    sys.executable,
    "-c",
    "from crane_lib.model.dynamics import DynamicModel; import numpy as np; "
    "m = DynamicModel('reduced'); z = np.zeros((1, 8)); m.regressor(z, z, z); "
    "m.arm_min_eigenvalue(z, np.ones(39))",
]


def bench_cached_load(repeats: int = 3) -> dict:
    """Wall seconds of the cached model load in `repeats` fresh processes (target: best <= 1 s)."""
    runs = [_timed_subprocess(LOAD, dict(os.environ)) for _ in range(repeats)]
    best = min(wall for wall, _ in runs)
    print(
        f"cached load of the reduced model in a fresh process: best {best:.2f} s of {repeats} "
        f"({', '.join(f'{wall:.2f}' for wall, _ in runs)} s wall; target <= "
        f"{CACHED_LOAD_TARGET_S:g} s: ratio {best / CACHED_LOAD_TARGET_S:.2f})"
    )
    return {
        "best_s": best,
        "wall_s": [wall for wall, _ in runs],
        "cpu_s": [cpu for _, cpu in runs],
        "target_s": CACHED_LOAD_TARGET_S,
    }


def bench_generation(smoke: bool = False) -> None:
    """Cold: `python -m crane_lib.model.dynamics` (make model) with an empty cache: the symbolic
    model, the grouping of all base sets and the compiled kernels of the CRANE-X7's four sets and
    of the other shipped arms' reduced and full sets; then the same cached."""
    make_model = [sys.executable, "-m", "crane_lib.model.dynamics"]
    if smoke:
        wall, cpu = _timed_subprocess(LOAD, dict(os.environ))
        print(
            f"cached load of the reduced model in a fresh process: {wall:7.2f} s wall, {cpu:.2f} s "
            "CPU (smoke: no cold generation)"
        )
        return
    symbolic_only = [
        sys.executable,
        "-c",
        "from crane_lib.model import base_parameters; base_parameters.grouping(None)",
    ]
    with tempfile.TemporaryDirectory() as cache:
        symbolic = _timed_subprocess(symbolic_only, dict(os.environ, CRANE_CACHE_DIR=cache))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, CRANE_CACHE_DIR=cache)
        cold = _timed_subprocess(make_model, env)
        warm = _timed_subprocess(LOAD, env)
    print(
        f"symbolic model + base-parameter grouping of every set, cold:   {symbolic[0]:7.2f} s "
        f"wall, {symbolic[1]:7.2f} s CPU "
        "(what SymPyBotics computes)"
    )
    print(
        f"model + grouping + every arm's kernels, cold (make model): {cold[0]:7.2f} s wall, "
        f"{cold[1]:7.2f} s CPU"
    )
    print(
        f"cached load of the reduced model in a fresh process:          {warm[0]:7.2f} s wall, "
        f"{warm[1]:7.2f} s CPU "
        f"(target <= 1 s; cold/cached = {cold[0] / warm[0]:.0f}x)"
    )
    path = os.environ.get("CRANE_BENCH_SYMPYBOTICS")
    if path:
        reference = _timed_subprocess(
            [sys.executable, "-c", SYMPYBOTICS.format(path=path)], dict(os.environ)
        )
        print(
            f"SymPyBotics, same arm's model, code and base parameters:       {reference[0]:7.2f} s "
            f"wall, {reference[1]:7.2f} s CPU; "
            f"ours / SymPyBotics: symbolic part {symbolic[0] / reference[0]:.2f}, with the "
            "compiled kernels "
            f"{cold[0] / reference[0]:.2f} (wall)"
        )


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
    print(
        f"M + lambda_min over {len(poses):,} audit poses: ours {ours_time:.3f} s (best of 3, "
        f"{os.cpu_count()} cores), "
        f"Pinocchio crba + eigvalsh loop {pin_time:.3f} s: {pin_time / ours_time:.1f}x faster"
    )
    print(
        f"  agreement: max |lambda_ours - lambda_pinocchio| = {np.abs(ours - reference).max():.2e} "
        "kg·m^2"
    )
    print(
        f"  peak resident memory of this process: {rss_after / 1024:.0f} MB (before the "
        f"evaluation: {rss_before / 1024:.0f} MB)"
    )


def bench_regressor(smoke: bool = False) -> None:
    """Time the generated regressor against Pinocchio's on a recording-sized batch."""
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
    print(
        f"regressor of a {samples / 1e3:g} s record at 1 ms ({rows:,} rows x 39): ours {ours:.3f} "
        f"s = {rows / ours / 1e6:.2f} M rows/s; "
        f"Pinocchio computeJointTorqueRegressor loop (70 standard columns, timed on {n_ref:,} "
        f"samples) {ref:.2f} s: ours {ref / ours:.1f}x faster"
    )


ARMS = ("crane_x7", "vx300s", "so101")
ARM_SAMPLES = 2_000
SMOKE_ARM_SAMPLES = 20

# one fresh process each: our model from a cold cache, then Pinocchio's from the same description,
# both over the same samples (seeded), both including their imports
ARM_COLD = """
import numpy as np
from crane_lib.model import arm_description, dynamics
arm = arm_description.load_arm({name!r})
rng = np.random.default_rng(3)
q, qd, qdd = (rng.uniform(-1, 1, ({n}, arm.n_axes)) for _ in range(3))
if {compile}:
    model = dynamics.DynamicModel("full", arm=arm, general={general})
    model.regressor(q, qd, qdd)
    model.arm_min_eigenvalue(q[:1], np.ones(model.n_parameters))
else:  # smoke: the kernels' source only, no numba compile
    dynamics.arm_kernels("full", arm)
"""
PINOCCHIO_COLD = """
import numpy as np, pinocchio as pin
from crane_lib.model import arm_description
from tests.arm_cases import pinocchio_model
arm = arm_description.load_arm({name!r})
rng = np.random.default_rng(3)
q, qd, qdd = (rng.uniform(-1, 1, ({n}, arm.n_axes)) for _ in range(3))
model = pinocchio_model({name!r}, arm)
data = model.createData()
n = arm.n_joints
for i in range(len(q)):
    pin.computeJointTorqueRegressor(model, data, q[i, :n], qd[i, :n], qdd[i, :n])
"""


def bench_arms(smoke: bool = False) -> None:
    """Per arm: cold model generation against Pinocchio's build + regressor, then per sample."""
    import pinocchio as pin

    from crane_lib.model import arm_description, dynamics
    from tests.arm_cases import pinocchio_model

    samples = SMOKE_ARM_SAMPLES if smoke else ARM_SAMPLES
    runs = [("so101", False)] if smoke else [(a, False) for a in ARMS] + [("crane_x7", True)]
    if smoke:
        print(
            "arms (smoke): the SO-101 only; its cold generation without the numba compile, "
            "its evaluation by the uncompiled Python kernel: the ratios are not measurements"
        )
    for name, general in runs:
        label = f"{name}{' (chain recursion)' if general else ''}"
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, CRANE_CACHE_DIR=cache)
            ours, ours_cpu = _timed_subprocess(
                [
                    sys.executable,
                    "-c",
                    ARM_COLD.format(name=name, n=samples, compile=not smoke, general=general),
                ],
                env,
            )
        reference, _ = _timed_subprocess(
            [sys.executable, "-c", PINOCCHIO_COLD.format(name=name, n=samples)], dict(os.environ)
        )
        what = "kernel source, no compile" if smoke else f"model + {samples:,} regressor samples"
        print(
            f"{label:>30}: cold {what}: ours "
            f"{ours:7.2f} s wall ({ours_cpu:.2f} s CPU), Pinocchio build + "
            f"computeJointTorqueRegressor {reference:5.2f} s: "
            f"ours / Pinocchio {ours / reference:.0f}"
        )
        if general:
            continue
        arm = arm_description.load_arm(name)
        rng = np.random.default_rng(4)
        q, qd, qdd = (rng.uniform(-1, 1, (samples, arm.n_axes)) for _ in range(3))
        model = dynamics.DynamicModel("full", arm=arm)
        if smoke:
            kernel = model._module.regressor_kernel.py_func
            c, s = np.cos(q[:, : arm.n_joints]), np.sin(q[:, : arm.n_joints])
            out = np.zeros((arm.n_axes, model.n_parameters))
            start = time.perf_counter()
            for i in range(samples):
                kernel(c[i], s[i], qd[i], qdd[i], np.sign(qd[i]), model.gravity_z, out)
            ours_each = (time.perf_counter() - start) / samples
        else:
            model.regressor(q[:10], qd[:10], qdd[:10])  # compile / load outside the timing
            timings = []
            for _ in range(3):
                start = time.perf_counter()
                model.regressor(q, qd, qdd)
                timings.append(time.perf_counter() - start)
            ours_each = min(timings) / samples
        reference_model = pinocchio_model(name, arm)
        data, n = reference_model.createData(), arm.n_joints
        start = time.perf_counter()
        for i in range(samples):
            pin.computeJointTorqueRegressor(reference_model, data, q[i, :n], qd[i, :n], qdd[i, :n])
        reference_each = (time.perf_counter() - start) / samples
        print(
            f"{'':>30}  regressor per sample ({model.n_parameters} base columns"
            f"{', uncompiled' if smoke else f', {os.cpu_count()} cores'}): ours "
            f"{ours_each * 1e6:8.2f} us, Pinocchio ({10 * n} standard columns, one core) "
            f"{reference_each * 1e6:6.2f} us: Pinocchio / ours {reference_each / ours_each:.2f}"
        )


def main(argv=None) -> int:
    """Run the model benchmarks (generation, regressor, cached load) and print ratios."""
    from benchmarks._out import json_out
    from benchmarks._smoke import add_smoke_argument, isolated
    from crane_book.options import Parser

    parser = Parser(prog="python -m benchmarks.bench_model", description=__doc__.splitlines()[0])
    add_smoke_argument(parser)
    parser.add_argument(
        "--cached-load", action="store_true", help="only the cached load, in three fresh processes"
    )
    parser.add_argument("--out", type=Path, help="write the cached load's JSON here")
    args = parser.parse_args(argv)
    if args.out is not None and not args.cached_load:
        parser.error("--out FILE: only with --cached-load (the JSON of the cached load)")
    argv = sys.argv[1:] if argv is None else list(argv)
    if args.smoke and (code := isolated("benchmarks.bench_model", argv)) is not None:
        return code
    if args.cached_load:
        with json_out(parser, args.out) as write:  # checked first: a bad --out measures nothing
            write(bench_cached_load(1 if args.smoke else 3))
        return 0
    bench_generation(args.smoke)
    bench_audit_scale(args.smoke)
    bench_regressor(args.smoke)
    bench_arms(args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
