"""Refinement reports written by hand for the tests that read one (records, tables, claims, the
command line): every field of `clie.RefinementReport` set, the ones a test names as given."""

from __future__ import annotations

import numpy as np

from crane_lib.identification import clie

DEFAULTS = {
    "method": "fast",
    "names": ["ZZR1"],
    "x0": np.array([1.0]),
    "x": np.array([0.9]),
    "objective_start": 2.0,
    "objective_final": 1.0,
    "iterations": 1,
    "simulations": 2,
    "trial_evaluations": 1,
    "jacobian_evaluations": 1,
    "diverged_evaluations": 0,
    "wall_time_s": 1.0,
    "status": 2,
    "message": "`ftol` termination condition is satisfied.",
}


def refinement_report(**fields) -> clie.RefinementReport:
    """A report with `fields` and DEFAULTS for the rest (a fast run of one ZZR1 that moved)."""
    return clie.RefinementReport(**{**DEFAULTS, **fields})
