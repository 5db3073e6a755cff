"""A short identifiable command file for the tests of the arm's path (recorder, emulator,
accept), and a recording command run in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from contextlib import contextmanager

import numpy as np
import pytest

from crane_lib.excitation.commands import CommandFile
from crane_lib.model.robot_description import joint_limits_rad
from crane_lib.paths import REPO_ROOT


@contextmanager
def recording_process(argv: list[str], cwd=None, stderr=subprocess.PIPE, timeout_s=600.0):
    """`crane-id ARGV` (a recording over a port) in a process of its own, yielded once it has
    printed its "logging:" line (the test fails if it ends before, or prints none in
    `timeout_s`); killed on the way out if it still runs."""
    run = subprocess.Popen(
        [sys.executable, "-m", "crane_lib.cli", *argv],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )
    try:
        _wait_for_logging(run, timeout_s)
        yield run
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()


def _wait_for_logging(run: subprocess.Popen, timeout_s: float) -> None:
    """Read `run`'s stdout up to its "logging:" line in a thread that stops there, so that no
    reader is left beside a later `communicate` (which closes the pipe under it)."""
    seen: list[str] = []
    logging = threading.Event()

    def read() -> None:
        for line in run.stdout:
            if line.startswith("logging:"):
                logging.set()
                return
            seen.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout_s)
    if reader.is_alive():
        run.kill()
        reader.join()
        pytest.fail(f"no 'logging:' line in {timeout_s:.0f} s: {seen}")
    if not logging.is_set():
        err = run.communicate()[1] if run.stderr is not None else ""
        pytest.fail(f"the recorder ended before logging: {run.returncode} {seen} {err}")


def short_command() -> CommandFile:
    """Five multi-joint moves at full speed, about 5 s: identifiable at 40 ms (kappa near AP01's)
    in a fraction of AP01's time."""
    rng = np.random.default_rng(3)
    limits = np.degrees(joint_limits_rad())
    rows = []
    for _ in range(5):
        row = rng.uniform(
            np.maximum(0.6 * limits[:, 0], -80.0), np.minimum(0.6 * limits[:, 1], 80.0)
        )
        row[3], row[7] = rng.uniform(-140.0, -20.0), rng.uniform(0.0, 60.0)
        rows.append(row)
    waypoints = np.radians(np.vstack(rows + [np.zeros(8), np.zeros(8)]))
    return CommandFile("SHORT", waypoints, np.array([100.0] * 6 + [20.0]))


def short_so101_command() -> CommandFile:
    """Three multi-joint moves of the SO-101 and its closing rows, about 3 s of motion."""
    from crane_lib.twin.recorder import command_format

    fmt = command_format("so101")
    start = np.array(fmt.start_posture_deg)
    moves = [
        start + [25.0, -20.0, 20.0, 25.0, 40.0, 10.0],
        start + [-25.0, 15.0, -15.0, -20.0, -40.0, 0.0],
        start,
    ]
    final = np.array(fmt.final_posture_deg)
    waypoints = np.radians(np.vstack(moves + [final, final]))
    return CommandFile("SO_SHORT", waypoints, np.array([75.0] * 4 + [20.0]), command_format=fmt)
