"""`crane-id identify LOG --trajectory COMMAND_FILE --ts 0.04 --out MODEL [--refine ...] [--force]`:
preprocess one recording, identify it (OLS, routing test, SDP projection), refine it, and
write the model file.

Before any computation the output path is checked (`cli.common.output_path`); before OLS the
identifiability gate (`identification.gate`): the log must have executed COMMAND_FILE (its
recorded sha256), hold enough samples per parameter, move every axis, and give a regressor
whose condition number stays under the bound. Each refusal exits with status 2 and the reason.

`--robot vx300s|so101|FOLDER`: another arm's recording (refused when the log is of another arm);
there the start's estimator is OLS (`refinement.check_arm_options`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from crane_lib.cli.common import (
    add_force,
    add_robot,
    bounded_int,
    check_log_robot,
    interval_seconds,
    output_path,
    robot_model,
    robot_of,
)
from crane_lib.excitation.commands import read_command_file
from crane_lib.identification.refinement import (
    DEFAULT_REFINE,
    REFINE_CHOICES,
    identify_recording,
    stopped_at_start,
    stopped_at_start_note,
)
from crane_lib.identification.weighted import METHODS
from crane_lib.logs.raw_log import read_raw_log
from crane_lib.model.parameters import save_parameters

REFINE_HELP = (
    "refinement after OLS/SDP (default %(default)s): fast = CLIE's objective and solver with the "
    "DIDIM "
    "Jacobian, one closed-loop simulation per iteration (about a minute on a 2-minute record); "
    "clie = Appendix D-F with finite differences, one simulation per parameter per iteration "
    "(tens of minutes); exact = CLIE's objective with its exact Jacobian (forward sensitivities "
    "of the simulation, one per iteration); "
    "didim = DIDIM from its regular initialization (about a minute); none = "
    "stop "
    "at the OLS/SDP start (seconds)"
)
# threads of the finite-difference Jacobian: one per parameter at most (39)
MAX_WORKERS = 39


def register(subparsers) -> None:
    """Add the `identify` subcommand and its options."""
    parser = subparsers.add_parser(
        "identify",
        help="identify a model from one recording: OLS, routing test, SDP projection, refinement",
    )
    parser.add_argument("log", metavar="LOG", type=Path, help="raw log (.npz, .csv or .csv.gz)")
    parser.add_argument(
        "--trajectory",
        required=True,
        type=Path,
        metavar="COMMAND_FILE",
        help="the command file the recording executed (its sha256 must match the log's)",
    )
    parser.add_argument(
        "--ts",
        type=interval_seconds,
        default=0.04,
        help="sampling interval in seconds, whole ms from 0.001 to 0.1 (default 0.04)",
    )
    parser.add_argument(
        "--out",
        required=True,
        metavar="MODEL",
        help="model file to write (CSV: name, value, unit, std_error)",
    )
    parser.add_argument(
        "--repair",
        action="store_true",
        help="repair a truncated last line or repeated stamps (reported)",
    )
    parser.add_argument(
        "--refine", choices=REFINE_CHOICES, default=DEFAULT_REFINE, help=REFINE_HELP
    )
    parser.add_argument(
        "--method",
        choices=METHODS,
        default="ols",
        help="estimator of the start (default %(default)s): ols; wls = per-axis error-covariance "
        "WLS; "
        "dual-metric = residuals weighted by M^-1 (Yang & Hatton), an SDP, tens of seconds on a "
        "2-minute record; the routing test, projection and refinement follow unchanged",
    )
    parser.add_argument(
        "--refine-workers",
        type=bounded_int(1, MAX_WORKERS, "threads, one per parameter at most", "a thread count"),
        default=min(2, os.cpu_count() or 1),
        metavar="N",
        help="threads for the finite-difference Jacobian of --refine clie (1-39, default 2)",
    )
    add_robot(parser)
    add_force(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Identify one recording (OLS, routing, projection, refinement) and write the model."""
    robot = robot_of(args.robot)
    out = output_path(args.out, inputs=[args.log, args.trajectory], force=args.force)
    dynamics = robot_model(robot)
    log = read_raw_log(args.log, repair=args.repair)
    check_log_robot(log, robot)  # before the command file: its format is the arm's
    cmd = read_command_file(args.trajectory, robot.command_format())  # the file it executed
    condition, model, report = identify_recording(
        log,
        cmd.name,
        args.ts,
        args.refine,
        workers=args.refine_workers,
        model=dynamics,
        command_file=args.trajectory,
        command_sha256=cmd.sha256,
        estimator=args.method,
    )
    condition.provenance["command_file"] = str(args.trajectory)
    model.meta["provenance.command_file"] = str(args.trajectory)
    eps = (
        ""
        if condition.projection is None
        else f", projected with eps = {condition.projection.epsilon:g}"
    )
    if condition.estimate is not None:
        print(
            f"{args.method}: {condition.estimate.status}, {condition.estimate.solve_time_s:.1f} s, "
            f"{condition.estimate.n_samples} samples"
        )
    print(
        f"{cmd.name} at {args.ts * 1e3:g} ms: kappa {condition.ols.kappa:.1f}, route "
        f"{condition.route}{eps}"
        f" (lambda_min over the visited configurations {condition.lambda_min_visited:.3g} kg·m^2 "
        f"for {condition.method})"
    )
    if args.refine != "none":
        print(
            f"{args.refine}: objective {report.get('objective_start', float('nan')):.6g} -> "
            f"{report.get('objective_final', float('nan')):.6g}, "
            f"{report.get('iterations')} iterations, {report.get('wall_time_s', float('nan')):.1f} "
            "s"
        )
        note = stopped_at_start_note(report)
        if note is not None:
            print(note)
    stage = "the OLS/SDP start" if args.refine == "none" else args.refine
    if args.refine != "none" and stopped_at_start(report):
        stage += ", which accepted no step: the OLS/SDP start"
    what = (
        "CRANE-X7 39-parameter model"
        if robot.crane_x7
        else f"{robot.arm.name} {len(model.names)}-parameter model"
    )
    save_parameters(
        out, model, comment=f"{what} after {stage}; std_error is the OLS standard error"
    )
    print(f"{out}: written")
    return 0
