"""The CLIE stage of `crane-id identify`: the `--refine {clie,fast,didim,none}` option and the
function the subcommand calls after OLS/SDP.

    add_refine_option(identify_parser)
    parameters, report = refine_model(args.log, condition_result, args.refine)

clie  : CLIE as Appendix D-F (finite-difference trust-region reflective; minutes to tens of
        minutes on a 2 min record);
fast  : the same objective, solver, bounds and tolerance with the DIDIM Jacobian (one
        simulation per iteration; reaches the faithful objective within 0.5 %);
didim : DIDIM from its regular initialization (the OLS/SDP start is not used);
none  : stop at the OLS/SDP start.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import clie
from .errors import InputError
from .parameters import ParameterSet
from .raw_log import read_raw_log

REFINE_CHOICES = ("clie", "fast", "didim", "none")
DEFAULT_REFINE = "fast"


def add_refine_option(parser: argparse.ArgumentParser, default: str = DEFAULT_REFINE) -> None:
    parser.add_argument(
        "--refine", choices=REFINE_CHOICES, default=default,
        help="refinement after OLS/SDP: clie (Appendix D-F, finite differences), fast (same objective, "
             "DIDIM Jacobian), didim (regular initialization), none (default %(default)s)",
    )
    parser.add_argument("--refine-workers", type=int, default=2, metavar="N",
                        help="threads for the finite-difference Jacobian of --refine clie (default 2)")


def refine_model(log_path, condition_result, method: str, workers: int = 2, log=None) -> tuple[ParameterSet, dict]:
    """Refine the condition's start on the raw log it came from; returns (parameters, report).

    The report holds the method, objectives (sum of squares), iterations, simulations, wall
    time and the solver's exit message; the parameters carry the stage in their meta.
    `log`: the RawLog already read, to skip reading `log_path` again.
    """
    if method not in REFINE_CHOICES:
        raise InputError("--refine", repr(method), f"one of {', '.join(REFINE_CHOICES)}")
    start = condition_result.start
    if method == "none":
        if start is None:
            raise InputError(str(log_path), f"no OLS/SDP model ({condition_result.failure})", "an identifiable condition")
        return start, {"method": "none", "route": condition_result.route}
    raw = read_raw_log(Path(log_path)) if log is None else log
    problem = clie.build_problem(raw)
    if method == "didim":
        report = clie.didim(problem)
    else:
        if start is None:
            raise InputError(str(log_path), f"no OLS/SDP start for CLIE ({condition_result.failure})", "an identifiable condition")
        try:
            report = clie.refine_faithful(problem, start, workers=workers) if method == "clie" else clie.refine_fast(problem, start)
        except clie.CLIEError as error:
            raise InputError(str(log_path), str(error), "a start whose closed-loop simulation stays bounded") from None
    parameters = report.parameters()
    std_errors = getattr(start, "std_errors", None) if start is not None else None
    meta = {**(start.meta if start is not None else {}), "stage": method, "route": condition_result.route or "",
            "objective": f"{report.objective_final:.9g}", "iterations": str(report.iterations)}
    summary = {k: v for k, v in report.as_dict().items() if k not in ("x", "names")}
    summary["route"] = condition_result.route
    return ParameterSet(parameters.names, parameters.values, std_errors, meta), summary
