"""Smoke mode of the benchmarks: the smallest size, seconds, no prebuilt data set.

Every benchmark's `main(argv)` takes `--smoke`. In smoke mode it runs the same code paths at
the smallest size on data it records itself: `smoke_recordings()` executes a few seconds'
command file on the digital twin into the results folder, which in smoke mode is always a
throwaway one (`isolated` re-runs the benchmark in a subprocess with CRANE_RESULTS_DIR set to a
temporary folder unless the caller already did that), so a smoke run never touches results/.
`tests/test_benchmarks.py` runs every benchmarks/bench_*.py this way under `make benchmarks
SMOKE=1` (the suite itself leaves them out); the numbers a smoke run prints are not measurements.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
# set by `isolated` (or by the test) when CRANE_RESULTS_DIR already points to a throwaway folder
ISOLATED_ENV = "CRANE_BENCH_ISOLATED"
# the smoke command files: a handful of multi-axis moves from q̄A and back to q̄0 (degrees, percent)
SMOKE_WAYPOINTS_DEG = {
    "SMOKE01": [
        ([30.0, 25.0, 20.0, -60.0, 20.0, 30.0, 25.0, 10.0], 90.0),
        ([-20.0, 40.0, -25.0, -100.0, -30.0, -20.0, -30.0, 0.0], 90.0),
        ([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 90.0),
        ([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 20.0),
    ],
    "SMOKE02": [
        ([-25.0, 30.0, 30.0, -80.0, -25.0, 25.0, 35.0, 15.0], 90.0),
        ([25.0, 15.0, -20.0, -40.0, 30.0, -30.0, -20.0, 0.0], 90.0),
        ([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 90.0),
        ([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 20.0),
    ],
}


def add_smoke_argument(
    parser,
    help: str = "smallest size, seconds, on a few seconds recorded on the twin into a temporary "
    "results folder",
) -> None:
    parser.add_argument("--smoke", action="store_true", help=help)


def isolated(module: str, argv) -> int | None:
    """In smoke mode, make sure the results folder is a throwaway one.

    Returns None when this process already runs in one (go on), else the exit code of the
    same benchmark re-run in a subprocess with CRANE_RESULTS_DIR set to a temporary folder."""
    if os.environ.get(ISOLATED_ENV) == "1":
        return None
    with tempfile.TemporaryDirectory(prefix="crane-bench-smoke-") as folder:
        env = dict(os.environ, CRANE_RESULTS_DIR=folder, **{ISOLATED_ENV: "1"})
        return subprocess.run(
            [sys.executable, "-m", module, *argv], env=env, cwd=REPO_ROOT
        ).returncode


def smoke_command_file(name: str, folder: Path) -> Path:
    from crane_lib.excitation.commands import CommandFile, write_command_file

    rows = SMOKE_WAYPOINTS_DEG[name]
    cmd = CommandFile(
        name,
        np.radians([q for q, _ in rows]),
        np.array([f for _, f in rows]),
        ("smoke benchmark: a few seconds of motion",),
    )
    return write_command_file(Path(folder) / f"{name}.txt", cmd)


def smoke_recordings(names=("SMOKE01",), seed: int = 1) -> dict[str, Path]:
    """Record the smoke command files on the twin as <name>_run1.npz in the (throwaway) recordings
    folder."""
    from crane_lib import paths
    from crane_lib.twin import recorder

    if os.environ.get(ISOLATED_ENV) != "1":
        raise RuntimeError(
            "smoke recordings are written only into a throwaway results folder (run through "
            "benchmarks._smoke.isolated)"
        )
    out = {}
    for offset, name in enumerate(names):
        command = smoke_command_file(name, paths.RESULTS_DIR / "commands")
        target = paths.recording_path(name, 1)
        if not target.exists():
            recorder.record_to_file(command, target, seed=seed + offset)
        out[name] = target
    return out
