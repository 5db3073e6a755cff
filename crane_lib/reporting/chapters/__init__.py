"""What each chapter shows, assembled from the stages' results: one module per chapter.

A chapter tells the story of its paper section and calls one function per table, figure or
generated sentence; the assembly lives here so that it is tested code, not notebook cells.
Every comparison goes through `crane_lib.reporting.tables`; every result sentence is generated
from the numbers it states (`tables.Prose`); every figure title says which data it used.
"""

from __future__ import annotations

import os
import time
import warnings

from crane_lib.reporting.tables import Prose


def profile() -> str:
    """The build's profile (the env var CRANE_PROFILE, "quick" or "full"; "full" by default)."""
    return os.environ.get("CRANE_PROFILE", "full")


def run_time_sentence(started: float, what: str) -> Prose:
    """'*Chapter computed in N s (what).*', from a time.perf_counter() taken at the start."""
    return Prose(f"*Chapter computed in {time.perf_counter() - started:.0f} s ({what}).*")


def quiet_solver_warnings() -> None:
    """cvxpy warns on Clarabel's inexact exits; the projections check every constraint themselves
    and report the solver status, so the warning says nothing the tables do not."""
    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
