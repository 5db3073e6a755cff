"""The claim chapter 05 (CLIE) computes: the iterations CLIE takes (Sec. IV-C, Appendix D-E).

Each function is one claim (`registry.claim`); the verdict's rule is in its docstring.
"""

from __future__ import annotations

import numpy as np

from crane_book.claims.registry import Outcome, claim, reason_of
from crane_book.claims.results import ACCEPTED_FILES, CLIE_FILES, Results, pct
from crane_lib.paper_numbers import paper
from crane_lib.verdicts import CONTRADICTED, REPRODUCED


@claim(
    "clie_iterations",
    "Sec. IV-C and Appendix D-E",
    "CLIE refinement takes tens of iterations: half of the refinements finish within the median "
    "count, and the representative condition takes a few dozen from each of its projections.",
    ("clie_iters_median", "clie_iters_range_eps"),
    "chapters/05_clie",
    "clie-iterations-and-function-evaluations-sec-iv",
    (CLIE_FILES, ACCEPTED_FILES),
    reason=("book/register_clie", "reg-clie-why-clie-takes-fewer-iterations-on"),
)
def _clie_iterations(results: Results) -> Outcome:
    """Iterations of the CLIE sweep's runs (first executions) and of the accepted record's
    refinement. Reproduced when the median is within a factor of two of the paper's median
    (the same order), contradicted otherwise; the detail counts which tolerance stopped them."""
    if not results.clie_records:
        return Outcome.missing("this build has no CLIE records")
    iterations = np.array([r["clie_iterations"] for r in results.clie_records])
    median, wanted = float(np.median(iterations)), paper("clie_iters_median").value
    stops: dict[str, int] = {}
    for r in results.clie_records:
        message = r["clie_message"]
        key = (
            "both"
            if "Both" in message
            else "xtol"
            if "xtol" in message
            else "ftol"
            if "ftol" in message
            else message
        )
        stops[key] = stops.get(key, 0) + 1
    own = results.accepted["refinement"]["iterations"] if results.accepted else None
    same_order = wanted / 2 <= median <= 2 * wanted
    return Outcome(
        REPRODUCED if same_order else CONTRADICTED,
        f"median {median:g} iterations over {len(iterations)} runs (largest "
        f"{int(iterations.max())})"
        + (f"; the representative condition {own}" if own is not None else ""),
        f"Route: {results.clie_records[0]['clie_method']}. Stopped by "
        + ", ".join(f"{k} {n}" for k, n in sorted(stops.items()))
        + ".",
        "" if same_order else reason_of(_iterations_why, results, stops),
    )


def _iterations_why(results: Results, stops: dict) -> str:
    """What the records show about the iteration count: every run stopped on a tolerance, and
    how far CLIE moved its objective from the start."""
    drop = np.array(
        [
            100.0 * (1.0 - r["clie_objective_final"] / r["clie_objective_start"])
            for r in results.clie_records
        ]
    )
    from crane_lib.identification import clie, refinement  # where used, as results.py does

    capped = sum(n for k, n in stops.items() if k not in ("ftol", "xtol", "both"))
    no_step = [
        r
        for r in results.clie_records
        if refinement.stopped_at_start(clie.report_from_record(r).as_dict())
    ]
    intervals = ", ".join(f"{ts * 1e3:g} ms" for ts in sorted({r["ts"] for r in no_step}))
    stuck = (
        f" On {len(no_step)} runs (at {intervals}) it accepted no step at all: every trial step "
        "from the OLS/SDP start raised the objective, so their end is the start."
        if no_step
        else ""
    )
    return (
        f"{len(results.clie_records) - capped} of {len(results.clie_records)} runs stopped on a "
        "tolerance, not on a cap, after lowering the closed-loop objective by a median of "
        f"{pct(float(np.median(drop)))} from their start. The sweep runs the fast route, whose "
        "Jacobian is DIDIM's and ignores how the simulated trajectory responds to β: the trust "
        "region stops where that Jacobian is orthogonal to the residual, near but before the "
        "faithful optimum, and the step tolerance (lsqnonlin's default) ends it within a "
        f"handful of iterations.{stuck} The paper's count is of the faithful route, "
        "finite-difference Jacobians, which this profile does not run."
    )
