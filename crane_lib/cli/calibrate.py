"""`crane-id calibrate`: each axis's current-to-torque gain from a known weight
(crane_lib.acceptance.torque_scale).

    crane-id calibrate --write-poses CAL.txt [--poses 12] [--robot so101] [--point X Y Z]
    crane-id record CAL.txt --out unloaded.npz ...          # the gripper empty
    crane-id record CAL.txt --out loaded.npz ...            # the weight in the gripper
    crane-id calibrate unloaded.npz loaded.npz --trajectory CAL.txt --mass 0.3 --out gains.csv

The first form writes the command file of static poses (each crossed slowly both ways; the
file suits a current-mode and a position-mode arm alike). The last fits the gains from the two
recordings of it: the weight of mass `--mass` (kg, its centre of mass at the gripper's stated
point, or at `--point`, metres in the last link's frame) adds a gravity torque the kinematics
give, so the difference of the torque records fixes each gravity-loaded axis's gain, with its
standard error. Axes gravity cannot load (a vertical first axis, the gripper) keep the logged
conversion and are marked. `crane-id accept LOG ... --torque-scale gains.csv` uses the gains.
Exit status 0; 2 on bad input (nothing written).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from crane_lib.cli.common import (
    add_force,
    add_robot,
    bounded_float,
    bounded_int,
    output_path,
    robot_of,
)
from crane_lib.errors import InputError

mass_kg = bounded_float(0.0, 5.0, unit="kg", low_open=True, why="the weight in the gripper")
pose_count = bounded_int(1, 200, "static poses of the calibration file", "a pose count")
point_m = bounded_float(-2.0, 2.0, unit="m", why="a point of the last link, in its frame")


def register(subparsers) -> None:
    """Add the `calibrate` subcommand and its options."""
    parser = subparsers.add_parser(
        "calibrate",
        help="per-axis current-to-torque gains from a known weight held at static poses",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "logs",
        metavar="LOG",
        type=Path,
        nargs="*",
        help="the two recordings of the calibration file: without the weight, then with it",
    )
    parser.add_argument(
        "--write-poses",
        type=Path,
        default=None,
        metavar="COMMAND_FILE",
        help="write the calibration command file of static poses, and nothing else",
    )
    parser.add_argument(
        "--poses",
        type=pose_count,
        default=None,
        metavar="N",
        help="static poses of --write-poses (default 12; at least the arm's axes)",
    )
    parser.add_argument(
        "--trajectory",
        type=Path,
        default=None,
        metavar="COMMAND_FILE",
        help="the calibration command file both recordings executed",
    )
    parser.add_argument("--mass", type=mass_kg, default=None, help="the weight's mass, kg")
    parser.add_argument(
        "--point",
        type=point_m,
        nargs=3,
        default=None,
        metavar=("X", "Y", "Z"),
        help="the weight's centre of mass in the last link's frame, m (default: the gripper's "
        "stated point of the arm's description)",
    )
    parser.add_argument("--out", default=None, metavar="GAINS", help="gains file to write (CSV)")
    add_robot(parser)
    add_force(parser)
    parser.set_defaults(handler=run)


def _write_poses(args, robot) -> int:
    from crane_lib.acceptance import torque_scale
    from crane_lib.excitation.commands import commanded_duration, write_command_file

    given = [
        name
        for name, value in (("LOG", args.logs), ("--trajectory", args.trajectory))
        + (("--mass", args.mass), ("--out", args.out))
        if value
    ]
    if given:
        raise InputError(
            " ".join(given), "given with --write-poses", "--write-poses [--poses N] alone"
        )
    arm = _arm(robot)
    n_poses = torque_scale.DEFAULT_POSES if args.poses is None else args.poses
    if n_poses < arm.n_axes:
        raise InputError(
            f"--poses {n_poses}", "fewer poses than axes", f"at least {arm.n_axes} ({arm.name})"
        )
    out = output_path(args.write_poses, force=args.force, option="--write-poses")
    point = _point(args, arm, robot)
    poses = torque_scale.calibration_poses(arm, robot.label, point, n_poses)
    cmd = torque_scale.calibration_command(poses, robot.command_format(), out.stem)
    write_command_file(out, cmd)
    print(
        f"{out}: {n_poses} static poses, {commanded_duration(cmd):.1f} s of commanded motion; "
        f"record it without and with the weight"
    )
    return 0


def _arm(robot):
    if robot.crane_x7:
        from crane_lib.model.arm_description import crane_x7

        return crane_x7()
    return robot.arm


def _point(args, arm, robot):
    from crane_lib.acceptance import torque_scale

    if args.point is not None:
        return np.array(args.point)
    point = torque_scale.tool_point(arm, robot.label)
    if point is None:
        raise InputError(
            f"--robot {robot.label}",
            "states no gripper point",
            "--point X Y Z (the weight's centre of mass in the last link's frame, m)",
        )
    return point


def run(args: argparse.Namespace) -> int:
    """Write the calibration file, or fit the gains from its two recordings."""
    robot = robot_of(args.robot)
    if args.write_poses is not None:
        return _write_poses(args, robot)
    missing = [
        name
        for name, value in (("--trajectory", args.trajectory), ("--mass", args.mass))
        + (("--out", args.out),)
        if value is None
    ]
    if len(args.logs) != 2 or missing:
        raise InputError(
            " ".join(missing) or f"{len(args.logs)} LOG",
            "missing" if missing else "given",
            "two LOGs (without, then with the weight), --trajectory, --mass and --out; or "
            "--write-poses",
        )
    unloaded_path, loaded_path = args.logs
    out = output_path(
        args.out, inputs=[unloaded_path, loaded_path, args.trajectory], force=args.force
    )
    from crane_lib.acceptance import torque_scale
    from crane_lib.cli.common import check_log_robot
    from crane_lib.excitation.commands import read_command_file
    from crane_lib.logs.raw_log import read_raw_log

    arm = _arm(robot)
    cmd = read_command_file(args.trajectory, robot.command_format())
    logs = [read_raw_log(p) for p in (unloaded_path, loaded_path)]
    for log in logs:
        check_log_robot(log, robot)
    torque_scale.check_calibration_inputs(arm, cmd, args.mass, logs)
    point = _point(args, arm, robot)
    scale = torque_scale.fit_gains(arm, robot.label, cmd, *logs, args.mass, point)
    for row in scale.rows():
        error = (
            "" if row["status"] == torque_scale.STATUS_UNLOADED else (f" ± {row['std_error']:.4f}")
        )
        print(
            f"axis {row['axis']} {row['joint']}: gain {row['gain']:.4f}{error}, kt "
            f"{row['kt_calibrated']:.4f} N·m/A ({row['status']})"
        )
    torque_scale.write_torque_scale(out, scale, new=not args.force)
    print(f"{out}: written ({scale.n_poses} poses, mass {scale.mass:g} kg)")
    return 0
