"""What each chapter shows, formatted from the records: one view module per chapter.

A chapter tells the story of its paper section in its own Markdown, computes its equations in
visible cells that call the stages, and calls its view (`from crane_lib.reporting.chapters
import <chapter> as view`) for the tables and figures over all conditions. A view reads records
and returns DataFrames, styled tables and figures; it writes no prose and computes no science.
Every comparison goes through `crane_lib.reporting.tables`; every figure title says which data
it used; numbers reach the prose through `crane_lib.reporting.glued`.
"""

from __future__ import annotations

import os
import warnings


def profile() -> str:
    """The build's profile (the env var CRANE_PROFILE, "quick" or "full"; "full" by default)."""
    return os.environ.get("CRANE_PROFILE", "full")


def quiet_solver_warnings() -> None:
    """cvxpy warns on Clarabel's inexact exits; the projections check every constraint themselves
    and report the solver status, so the warning says nothing the tables do not."""
    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
