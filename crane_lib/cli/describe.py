"""`crane-id describe FILE --out FOLDER --servos NAME,NAME,... [--base LINK] [--tip LINK]
[--arm-joints J,J,...] [--gripper JOINT] [--name NAME] [--drive current|position]
[--position-loop FILE] [--force]`: an arm's
description folder (arm.toml, joints.csv, links.csv, actuators.csv) from its URDF or MJCF file
(`crane_lib.model.describe`), read back by the pipeline's reader before it is written, all four
files or none. --servos: one model of data/servo_catalogue.csv per arm joint, then the gripper;
a field the catalogue leaves unknown stays empty in actuators.csv (a line names it) and every
stage reading the folder refuses it by its column's name until it is filled. --drive writes
arm.toml's drive_mode; position needs the servos' loop settings, which no URDF or MJCF holds:
--position-loop names a TOML file whose [position_loop] table is copied (checked by the folder's
schema, `crane_lib.model.arm_schema`). Exit status 0 when
written, 2 on bad input (the file, the element and its line, what was expected; nothing
written)."""

from __future__ import annotations

import argparse
from pathlib import Path

from crane_lib.cli.common import add_force, output_folder
from crane_lib.errors import InputError, atomic_write_folder

FILES = ("arm.toml", "joints.csv", "links.csv", "actuators.csv")


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated names")
    return names


def register(subparsers) -> None:
    """Add the `describe` subcommand and its options."""
    parser = subparsers.add_parser(
        "describe", help="an arm's description folder from its URDF or MJCF file"
    )
    parser.add_argument("file", metavar="FILE", type=Path, help="the arm's URDF or MJCF file")
    parser.add_argument("--out", required=True, metavar="FOLDER", help="the folder to write")
    parser.add_argument(
        "--servos",
        required=True,
        type=_names,
        metavar="NAME,...",
        help="servo models (data/servo_catalogue.csv), one per arm joint, then the gripper",
    )
    parser.add_argument("--base", metavar="LINK", help="the root link (default: the tree's root)")
    parser.add_argument("--tip", metavar="LINK", help="the chain's last link (needed at a branch)")
    parser.add_argument("--arm-joints", type=_names, metavar="J,...", help="the arm's joints")
    parser.add_argument("--gripper", metavar="JOINT", help="the gripper's joint on the chain")
    parser.add_argument("--name", help="the arm's name (default: the file's robot or model name)")
    parser.add_argument(
        "--drive",
        choices=("current", "position"),
        default=None,
        help="drive_mode written to arm.toml (default: none written, i.e. current)",
    )
    parser.add_argument(
        "--position-loop",
        type=Path,
        metavar="FILE",
        help="TOML file with the servos' [position_loop] table (needed with --drive position)",
    )
    add_force(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Describe the arm, read the folder back, write it."""
    from crane_lib.model import describe  # loads MuJoCo and sympy: after the option checks

    if not args.file.is_file():
        raise InputError(str(args.file), "no such file", "a URDF or MJCF file")
    loop = None
    if args.position_loop is not None:
        from crane_lib.model.arm_schema import read_toml

        table = read_toml(args.position_loop)
        if not isinstance(table.get("position_loop"), dict):
            raise InputError(
                str(args.position_loop), "no [position_loop] table", "a TOML [position_loop] table"
            )
        loop = table["position_loop"]
    inputs = [args.file] + ([args.position_loop] if args.position_loop else [])
    folder = output_folder(args.out, FILES, inputs=inputs, force=args.force)
    result = describe.describe(
        args.file,
        base=args.base,
        tip=args.tip,
        arm_joints=args.arm_joints,
        gripper=args.gripper,
        servos=args.servos,
        name=args.name,
        drive=args.drive,
        position_loop=loop,
    )
    atomic_write_folder(folder, {n: result.texts[n].encode("utf-8") for n in FILES})
    gripper = f", gripper {result.gripper}" if result.gripper else ""
    print(
        f"{result.name}: {len(result.arm_joints)} arm joints {result.arm_joints}{gripper}, root "
        f"{result.root}, gravity {list(result.gravity_direction)}; wrote {folder}"
    )
    for field in result.unknown:
        print(
            f"{folder}/actuators.csv: {field} is unknown (data/servo_catalogue.csv); every stage "
            "reading the folder refuses it until you fill it"
        )
    return 0
