"""`crane-id excite --robot NAME|FOLDER --out DIR [--force]`: the paper's single-joint and
adjacent-pair blocks (S_A, S_B, S_C, PI_ALPHA, PI_BETA, PI_GAMMA) for a described arm, from its
limits and servo speeds (`crane_lib.excitation.arms`), its base regressor's rank checked over the
commanded states before anything is written. The files are written all or none; the rank and
condition number are printed. Exit status 0 when written, 2 on bad input or a rank deficit (the
unexcited base parameters named)."""

from __future__ import annotations

import argparse

from crane_lib.cli.common import add_force, add_robot, output_folder, robot_of
from crane_lib.errors import InputError, atomic_write_folder
from crane_lib.excitation.arms import BLOCK_FILES
from crane_lib.excitation.commands import SUFFIX


def register(subparsers) -> None:
    """Add the `excite` subcommand and its options."""
    parser = subparsers.add_parser(
        "excite", help="single-joint and pair excitation blocks of a described arm, rank checked"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="folder of the command files")
    add_robot(parser)
    add_force(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Check the rank of the arm's blocks, then write them into --out."""
    robot = robot_of(args.robot)
    if robot.crane_x7:
        raise InputError(
            "--robot crane_x7",
            "has the paper's 40 trajectories (trajectories/)",
            "--robot vx300s, so101 or a folder of a described arm",
        )
    names = [f"{name}{SUFFIX}" for name in BLOCK_FILES]
    folder = output_folder(args.out, names, force=args.force)
    from crane_lib.excitation.arms import block_texts  # loads sympy: after the checks

    texts, rank = block_texts(robot.arm)
    atomic_write_folder(folder, {name: text.encode("utf-8") for name, text in texts.items()})
    print(
        f"{robot.arm.name}: {len(texts)} files in {folder}; base rank {rank.rank}/{rank.n_base}, "
        f"kappa {rank.condition_number:.4g} (column-scaled {rank.scaled_condition_number:.4g}), "
        f"{rank.n_samples} samples"
    )
    return 0
