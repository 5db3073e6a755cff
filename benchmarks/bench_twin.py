"""Benchmarks of the digital twin.

1. Twin simulation speed, as a multiple of real time on one core: recording AG02 (0.25 ms
   integration, 1 ms control loop, everything on), against the same plant step written in
   numpy over the dynamics module's vectorized calls (M, bias torques, solve), timed over a
   short span in the same run. Target: at least 50x real time.
2. The whole default data set (full profile, 2 processes) into a temporary folder.
   Target: at most 10 min. Skip with --no-dataset.

`--smoke`: a few seconds' command file recorded instead of AG02, a 0.02 s numpy span, no data set.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _numpy_reference_speed(span_s: float = 0.2) -> float:
    """Real-time factor of the plant integrated with numpy calls per step (no numba loop)."""
    from crane_lib.model.dynamics import model
    from crane_lib.twin import recorder as twin
    from crane_lib.twin.truth import load_plant_settings, load_truth

    plant = twin.build_plant(load_truth(), load_plant_settings())
    full = model("full")
    h = plant.step
    q = np.radians([0.0, 10.0, 0.0, -90.0, 0.0, 20.0, 0.0, 0.0])
    v, qm, vm = np.zeros(8), q[:7].copy(), np.zeros(7)
    torque = np.zeros(8)
    zeros = np.zeros((1, 8))
    start = time.perf_counter()
    for _ in range(int(round(span_s / h))):
        mass = full.inertia_matrix(q[None], plant.beta_link)[0][:7, :7]
        bias = full.inverse_dynamics(q[None], v[None], zeros, plant.beta_link)[0][:7]
        coupling = 0.5 * h * plant.stiffness + plant.damping
        f0 = plant.stiffness * (qm - q[:7])
        rotor_diag = plant.ia[:7] + h * plant.fv[:7] + h * coupling
        rotor_rhs = plant.ia[:7] * vm + h * (torque[:7] - f0)
        matrix = mass + np.diag(h * coupling - (h * coupling) ** 2 / rotor_diag)
        v[:7] = np.linalg.solve(
            matrix, mass @ v[:7] + h * (f0 - bias) + h * coupling * rotor_rhs / rotor_diag
        )
        vm = (rotor_rhs + h * coupling * v[:7]) / rotor_diag
        qm += h * vm
        q[:7] += h * v[:7]
    return span_s / (time.perf_counter() - start)


def bench_speed(smoke: bool = False) -> None:
    """Time the twin's recorder against real time on one command file."""
    from crane_lib.paths import RESULTS_DIR, TRAJECTORY_DIR
    from crane_lib.twin import recorder as twin

    if smoke:
        from benchmarks._smoke import smoke_command_file

        warm_up = measured = smoke_command_file("SMOKE01", RESULTS_DIR / "commands")
    else:
        warm_up, measured = TRAJECTORY_DIR / "AP01.txt", TRAJECTORY_DIR / "AG02.txt"
    twin.record(warm_up, seed=1)  # compile / load the cached core
    start = time.perf_counter()
    _, metadata = twin.record(measured, seed=1)
    elapsed = time.perf_counter() - start
    simulated = float(metadata["record_duration_s"])
    reference = _numpy_reference_speed(0.02 if smoke else 0.2)
    print(
        f"twin, {measured.stem} ({simulated:.1f} s simulated): {elapsed:6.2f} s = "
        f"{simulated / elapsed:6.1f}x real time (target >= 50x)"
    )
    print(
        f"same plant step in numpy calls, {0.02 if smoke else 0.2:g} s span:           "
        f"{reference:6.2f}x real time"
    )
    print(
        "numba loop / numpy reference:                        "
        f"{simulated / elapsed / reference:6.0f}x"
    )


def bench_dataset() -> None:
    """Time the full profile's data set recorded on two processes."""
    from crane_lib.twin import dataset

    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        dataset.build("full", jobs=2, directory=Path(folder), progress=False)
        elapsed = time.perf_counter() - start
        size = sum(p.stat().st_size for p in Path(folder).glob("*.npz"))
    n = len(dataset.executions("full"))
    print(
        f"full data set, {n} recordings on 2 processes: {elapsed:6.1f} s (target <= 600 s), "
        f"{size / 1e6:.0f} MB"
    )


def main(argv=None) -> int:
    """Run the twin's benchmarks and print their ratios."""
    from benchmarks._smoke import add_smoke_argument, isolated

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-dataset", action="store_true")
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    if args.smoke and (code := isolated("benchmarks.bench_twin", ["--smoke"])) is not None:
        return code
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    bench_speed(args.smoke)
    if not (args.no_dataset or args.smoke):
        bench_dataset()
    return 0


if __name__ == "__main__":
    sys.exit(main())
