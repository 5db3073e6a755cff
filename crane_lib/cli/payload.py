"""`crane-id payload LOG --model MODEL --trajectory COMMAND_FILE --out MODEL [--ts 0.04]
[--robot ARM] [--force]`: a payload on the last link identified on an accepted model, the
arm's parameters held fixed (crane_lib.acceptance.payload): its mass, centre of mass and the
inertia the recording excites, physically consistent (the payload's pseudo-inertia positive
definite), with standard errors. The model plus the payload is audited over Θ on seeds 1-5 again
and written either way (its header says whether it was accepted, and names the payload).
A model identified with `--torque-scale` gains has the recording scaled by the same gains.
Exit status: 0 accepted, 1 rejected, 2 bad input (nothing written)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from crane_lib.cli.common import (
    add_force,
    add_robot,
    interval_seconds,
    output_path,
    robot_model,
    robot_of,
)
from crane_lib.errors import InputError


def register(subparsers) -> None:
    """Add the `payload` subcommand and its options."""
    parser = subparsers.add_parser(
        "payload",
        help="a payload's mass, centre of mass and inertia on an accepted model, then the audit",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "log", metavar="LOG", type=Path, help="raw log of the arm carrying the payload"
    )
    parser.add_argument(
        "--model", required=True, type=Path, metavar="MODEL", help="the accepted model file"
    )
    parser.add_argument(
        "--trajectory",
        required=True,
        type=Path,
        metavar="COMMAND_FILE",
        help="the command file the recording executed",
    )
    parser.add_argument(
        "--out", required=True, metavar="MODEL", help="model file with the payload to write"
    )
    parser.add_argument(
        "--ts",
        type=interval_seconds,
        default=0.04,
        help="sampling interval in seconds, whole ms from 0.001 to 0.1 (default 0.04)",
    )
    add_robot(parser)
    add_force(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Identify the payload, add it to the model, audit, write."""
    robot = robot_of(args.robot)
    out = output_path(args.out, inputs=[args.log, args.model, args.trajectory], force=args.force)
    from crane_lib.acceptance import payload
    from crane_lib.identification import gate
    from crane_lib.logs.raw_log import read_raw_log
    from crane_lib.model.parameters import load_parameters, save_parameters

    model = robot_model(robot)
    parameters = load_parameters(args.model, expected_names=model.names)
    log = read_raw_log(args.log)
    arm_name = None if robot.crane_x7 else robot.arm.name
    payload.check_payload_inputs(parameters, str(args.model), log, robot.key, arm_name)
    if not args.trajectory.is_file():
        raise InputError(str(args.trajectory), "no such file", "the command file of the recording")
    from crane_lib.excitation.commands import read_command_file

    command = read_command_file(args.trajectory, robot.command_format())
    gate.check_command_file(log, args.trajectory, command.sha256)
    start = time.perf_counter()
    estimate = payload.identify_payload(log, parameters, model, args.ts)
    com, com_se = estimate.com, estimate.com_std_error
    print(
        f"payload on link {estimate.link}: mass {estimate.mass:.4f} ± "
        f"{estimate.mass_std_error:.4f} kg, centre of mass "
        + ", ".join(f"{c * 1e3:.1f} ± {e * 1e3:.1f}" for c, e in zip(com, com_se))
        + " mm (frame of the last link)"
    )
    excited = estimate.excited()
    inertia = [n for n, e in zip(estimate.names[:6], excited[:6]) if e]
    print(
        "inertia excited: "
        + (", ".join(inertia) if inertia else "none")
        + f"; residual RMS {estimate.residual_rms_before:.4f} -> "
        f"{estimate.residual_rms_after:.4f} N·m over {estimate.n_samples} samples"
    )
    updated = payload.with_payload(parameters, estimate, model)
    accepted, audits = payload.reaudit(updated, model)
    worst = min(audits, key=lambda a: a.lambda_min)
    updated.meta.update(
        stage="accepted with payload" if accepted else "rejected with payload",
        accepted=str(accepted),
        payload_audit_seeds_lambda_min=" ".join(f"{a.seed}:{a.lambda_min:.6g}" for a in audits),
    )
    verdict = "accepted" if accepted else "NOT accepted (see payload_audit_seeds_lambda_min)"
    save_parameters(
        out,
        updated,
        new=not args.force,
        comment=f"the model of {args.model} with the payload of {args.log}, {verdict}",
    )
    pose = ", ".join(f"{v:.1f}" for v in np.rad2deg(worst.worst_pose))
    print(
        ("ACCEPTED" if accepted else "REJECTED")
        + f": smallest lambda_min over Theta {worst.lambda_min:.4g} kg·m^2 (seed {worst.seed}, "
        f"theta = [{pose}] deg)"
    )
    print(f"{out}: written in {time.perf_counter() - start:.0f} s")
    return 0 if accepted else 1
