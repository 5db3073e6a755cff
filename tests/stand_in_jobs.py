"""Stand-in jobs for tests of process pools: spawned workers import this module to unpickle a job,
so it imports nothing heavy (a worker that imported crane_lib's reporting stack spent seconds)."""

from __future__ import annotations

import os
from pathlib import Path


def write_marker(job, representative, profile, path):
    """Stand-in for export.beyond_ols.write_job: <job>.txt beside `path`, with the worker's pid."""
    if job == "FAILS":
        raise ValueError(f"{job} cannot be fitted")
    Path(path).with_suffix(".txt").write_text(
        f"{os.getpid()} {representative} {profile} {Path(path).name}"
    )
    return job


def raise_input_error(where, problem, expected):
    """A job that meets bad input in its worker process."""
    from crane_lib.errors import InputError

    raise InputError(where, problem, expected)
