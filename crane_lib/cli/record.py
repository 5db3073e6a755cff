"""`crane-id record COMMAND_FILE --out LOG [--truth PARAMS_FILE] [--seed N]`: execute a command
file on the digital twin and write its raw log (Appendix D-C)."""

from __future__ import annotations

import argparse
from pathlib import Path

from crane_lib.cli.common import checked_output, seed
from crane_lib.errors import InputError
from crane_lib.excitation.commands import read_command_file
from crane_lib.logs.raw_log import write_raw_log
from crane_lib.twin import recorder
from crane_lib.twin.truth import load_truth


def register(subparsers) -> None:
    parser = subparsers.add_parser("record", help="run a command file on the digital twin and write its raw log")
    parser.add_argument("command_file", metavar="COMMAND_FILE", type=Path, help="command file (Appendix B-B format)")
    parser.add_argument("--out", required=True, metavar="LOG", help="raw log to write (.npz, .csv or .csv.gz)")
    parser.add_argument("--truth", type=Path, default=None, metavar="PARAMS_FILE", help="truth parameter file (default data/twin_truth.csv)")
    parser.add_argument("--seed", type=seed, default=1, metavar="N", help="seed of this execution (default 1)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    out = checked_output(args.out)
    if out.suffix not in (".npz", ".csv", ".gz"):
        raise InputError(str(out), f"unknown log container {out.suffix!r}", "a .npz, .csv or .csv.gz file name")
    cmd = read_command_file(args.command_file)  # checked before any simulation
    truth = load_truth(args.truth) if args.truth is not None else None
    samples, metadata = recorder.record(cmd, seed=args.seed, truth=truth)
    metadata["command_file"] = str(args.command_file)
    metadata["truth_file"] = str(args.truth) if args.truth is not None else metadata["truth_file"]
    write_raw_log(out, samples, metadata)
    print(f"{out}: {len(samples)} samples, {metadata['record_duration_s']} s (motion {metadata['realized_motion_s']} s of {metadata['commanded_duration_s']} s commanded)")
    return 0
