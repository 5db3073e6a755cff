"""Wall time and CPU time of the main job's steps, recorded for the build-time benchmark.

CPU time is this process's and that of every child process it has reaped (a sweep's pool and
its kernels are reaped when the sweep ends, the side-by-side steps' processes when they end),
so CPU-minutes by step can be read for any core count: wall time on two cores is bounded below
by CPU time / 2. The record (`results/timings/pipeline_<profile>.json`) is the one file of the
results that must differ between two builds; `tools/determinism.py` leaves its folder out.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager

from crane_lib.paths import TIMINGS_DIR
from crane_lib.records import write_json_record


def cpu_seconds() -> float:
    """User + system CPU time of this process and of its reaped children (s)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class BuildClock:
    """The steps of one pipeline run in order, each with its wall and CPU seconds."""

    def __init__(self, profile: str, jobs: int):
        self.profile, self.jobs = profile, jobs
        self.steps: list[dict] = []
        self._started = time.perf_counter()
        self._cpu_started = cpu_seconds()

    @contextmanager
    def step(self, name: str):
        """Time the enclosed work as step `name` (recorded even when it raises)."""
        wall, cpu = time.perf_counter(), cpu_seconds()
        try:
            yield
        finally:
            self.steps.append(
                {"step": name, "wall_s": time.perf_counter() - wall, "cpu_s": cpu_seconds() - cpu}
            )

    def record(self) -> dict:
        """The run so far: profile, jobs, total wall and CPU seconds, the steps."""
        return {
            "profile": self.profile,
            "jobs": self.jobs,
            "wall_s": time.perf_counter() - self._started,
            "cpu_s": cpu_seconds() - self._cpu_started,
            "steps": list(self.steps),
        }

    def write(self):
        """Write the record to results/timings/pipeline_<profile>.json; returns the path."""
        return write_json_record(TIMINGS_DIR / f"pipeline_{self.profile}.json", self.record())
