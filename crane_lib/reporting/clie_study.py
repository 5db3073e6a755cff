"""Moved: the faithful CLIE study beside the fast one lives in the view of the chapter "CLIE"
(`crane_lib.reporting.chapters.clie`). This name re-exports it until the view of the chapter
"Parameter clouds" imports it from there; then this module goes."""

from crane_lib.reporting.chapters.clie import (
    FAITHFUL,
    FAST,
    OBJECTIVE_TOLERANCE,
    FaithfulBesideFast,
    faithful_beside_fast,
    plot_clouds,
)

__all__ = [
    "FAITHFUL",
    "FAST",
    "OBJECTIVE_TOLERANCE",
    "FaithfulBesideFast",
    "faithful_beside_fast",
    "plot_clouds",
]
